/* detect.c — placeholder, being written. */
typedef int opm_placeholder_detect;
