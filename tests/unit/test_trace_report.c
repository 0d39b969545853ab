/* test_trace_report.c — placeholder, being written. */
#include <criterion/criterion.h>
