/* trace_csv.c — placeholder, being written. */
typedef int opm_placeholder_trace_csv;
