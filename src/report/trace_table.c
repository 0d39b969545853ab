/* trace_table.c — placeholder, being written. */
typedef int opm_placeholder_trace_table;
