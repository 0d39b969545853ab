/* test_trace_link.c — placeholder, being written. */
#include <criterion/criterion.h>
