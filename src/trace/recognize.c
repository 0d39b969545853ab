/* recognize.c — placeholder, being written. */
typedef int opm_placeholder_recognize;
