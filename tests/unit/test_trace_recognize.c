/* test_trace_recognize.c — placeholder, being written. */
#include <criterion/criterion.h>
