/* test_trace_reader.c — placeholder, being written. */
#include <criterion/criterion.h>
