/* csv.h — reading contract §4 CSV files, shared by the two GEMM latency
 * loaders (validate-gemm-latency's in gemm_latency.c, calibrate's in
 * calibrate.c) so that both accept the same files: lines up to 1 MiB, a
 * UTF-8 byte order mark, CRLF line ends, blank lines, one field-splitting
 * rule (RFC 4180 quoting within a line: a quoted field keeps its commas,
 * "" is a quote), the header's column lookup, and the *.csv files under a
 * directory.
 * Internal to the library; errors are returned in an opm_error, never
 * printed. */
#ifndef OPM_VALIDATE_CSV_H
#define OPM_VALIDATE_CSV_H

#include <stddef.h>
#include <stdio.h>
#include "opmodel/opmodel.h"
#include "../core/internal.h"

/* A line's fields past the 64th are dropped. */
#define OPM_CSV_MAX_FIELDS 64
/* Caps on what one file may make the reader hold and read (a CSV named
 * /dev/zero, or a stream that never ends): a line of at most 1 MiB (the
 * shipped rows are under 200 bytes), a file of at most 1 GiB (the largest
 * shipped file is 3 MB).  Past either, opm_csv_read fails with a message
 * naming the file and line. */
#define OPM_CSV_MAX_LINE_BYTES ((size_t)1 << 20)
#define OPM_CSV_MAX_FILE_BYTES ((size_t)1 << 30)

/* One open file.  After each opm_csv_read, fld[0 .. nf) are the fields of
 * line number `line` (from 1), pointing into a buffer the next read reuses. */
typedef struct opm_csv {
    const char *path;            /* as given to opm_csv_open, not copied */
    const char *field;           /* the option I/O errors name ("--data") */
    size_t line;
    int nf;
    char *fld[OPM_CSV_MAX_FIELDS];
    FILE *f;
    char *buf;
    size_t cap;
    size_t bytes;                /* read so far, for OPM_CSV_MAX_FILE_BYTES */
} opm_csv;

/* Opens path; an error names `field` and the file. */
int opm_csv_open(opm_csv *c, const char *path, const char *field, opm_error *err);
/* Reads the next line that is not blank (only spaces, tabs and line ends)
 * and splits it in place at commas, stripping line ends, spaces around a
 * field and the quotes around a whole field (the format has no quoted
 * commas); a byte order mark opening the file is dropped.  Returns 0 with
 * nf >= 1, 0 with nf = 0 at the end of the file, or an error code. */
int opm_csv_read(opm_csv *c, opm_error *err);
/* Safe on a zeroed or failed-to-open reader. */
void opm_csv_close(opm_csv *c);

/* For each of the n names, the index of the first field of the current
 * line equal to it, -1 when none is. */
void opm_csv_columns(const opm_csv *c, const char *const *names, int n, int *col);
/* An OPM_EINVAL error about the current line: "PATH:LINE: column: text".
 * Returns OPM_EINVAL. */
int opm_csv_error(const opm_csv *c, opm_error *err, const char *column, const char *fmt, ...) OPM_PRINTF(4, 5);

/* Appends the path of every *.csv under dir to *paths (malloc'ed strings,
 * *n used of *cap), depth first, each directory in sorted order — the order
 * that numbers the rows.  Links to folders are not followed (no loops), and
 * only regular files are listed (a FIFO named *.csv would block the read).
 * `field` names the option in errors. */
int opm_csv_list_dir(const char *dir, const char *field, char ***paths, size_t *n, size_t *cap,
                     opm_error *err);
/* The same for the files whose names end in ext (".jsonl" for `opmodel
 * validate`'s measurement lines), with the same order and link rules. */
int opm_list_dir_ext(const char *dir, const char *ext, const char *field, char ***paths, size_t *n, size_t *cap,
                     opm_error *err);

#endif
