/* trace_svg.c — placeholder, being written. */
typedef int opm_placeholder_trace_svg;
