/* test_calibrate.c — placeholder, being written. */
#include <criterion/criterion.h>
