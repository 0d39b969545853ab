/* test_trace_emit.c — placeholder, being written. */
#include <criterion/criterion.h>
