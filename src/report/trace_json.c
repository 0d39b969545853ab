/* trace_json.c — placeholder, being written. */
typedef int opm_placeholder_trace_json;
