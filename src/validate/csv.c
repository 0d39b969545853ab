/* csv.c — the contract §4 CSV reader both GEMM latency loaders use
 * (validate-gemm-latency and calibrate): bounded lines and files, a
 * spreadsheet's byte order mark and CRLF line ends, blank lines skipped,
 * the field split, header column lookup, located row errors, and listing
 * the *.csv (or, for validate's JSONL, *.jsonl) files of a directory.
 * csv.h states the rules. */
#include "csv.h"
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int opm_csv_open(opm_csv *c, const char *path, const char *field, opm_error *err)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->field = field;
    if (!(c->f = fopen(path, "r")))
        return opm_err(err, OPM_EIO, field, "cannot read '%s': %s", path, strerror(errno));
    return 0;
}

void opm_csv_close(opm_csv *c)
{
    if (c->f) fclose(c->f);
    free(c->buf);
    c->f = NULL;
    c->buf = NULL;
    c->cap = 0;
    c->nf = 0;
}

/* Splits one line in place into at most max fields (RFC 4180 on one line):
 * a field may be quoted, and then holds commas and doubled quotes ("" for
 * "); text after a closing quote is dropped, an unclosed quote runs to the
 * end of the line.  Unquoted fields lose surrounding spaces and the line
 * end.  The fields are written over the line, never past what was read. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *r = line, *w = line;
    while (n < max) {
        while (*r == ' ') r++;
        f[n++] = w;
        if (*r == '"') {
            for (r++; *r; r++) {
                if (*r == '"' && r[1] != '"') { r++; break; }
                if (*r == '"') r++;
                *w++ = *r;
            }
            while (*r && *r != ',') r++;
            int more = *r == ',';
            *w++ = '\0';
            if (!more) break;
            r++;
            continue;
        }
        char *start = w;
        while (*r && *r != ',') *w++ = *r++;
        int more = *r == ',';
        while (w > start && (w[-1] == '\n' || w[-1] == '\r' || w[-1] == ' ')) w--;
        *w++ = '\0';
        if (!more) break;
        r++;
    }
    return n;
}

/* One line with its newline into c->buf, NUL-terminated: 1, 0 at the end,
 * -1 past OPM_CSV_MAX_LINE_BYTES, -2 past OPM_CSV_MAX_FILE_BYTES, -3 out of
 * memory.  Byte by byte (as getline) but bounded: an endless line ends. */
static int read_line(opm_csv *c)
{
    size_t n = 0;
    int ch;
    while ((ch = getc_unlocked(c->f)) != EOF) {
        if (n >= OPM_CSV_MAX_LINE_BYTES) return -1;
        if (++c->bytes > OPM_CSV_MAX_FILE_BYTES) return -2;
        if (n + 2 > c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 256;
            if (cap > OPM_CSV_MAX_LINE_BYTES + 2) cap = OPM_CSV_MAX_LINE_BYTES + 2;
            char *p = realloc(c->buf, cap);
            if (!p) return -3;
            c->buf = p;
            c->cap = cap;
        }
        c->buf[n++] = (char)ch;
        if (ch == '\n') break;
    }
    if (n == 0) return 0;
    c->buf[n] = '\0';
    return 1;
}

int opm_csv_read(opm_csv *c, opm_error *err)
{
    c->nf = 0;
    for (;;) {
        int got = read_line(c);
        if (got == -1)
            return opm_err(err, OPM_EINVAL, c->field, "%s:%zu: expected a line of at most %zu MiB, got a longer one",
                           c->path, c->line + 1, OPM_CSV_MAX_LINE_BYTES >> 20);
        if (got == -2)
            return opm_err(err, OPM_EINVAL, c->field, "%s:%zu: expected a file of at most %zu MiB, got a longer one",
                           c->path, c->line + 1, OPM_CSV_MAX_FILE_BYTES >> 20);
        if (got == -3) return opm_err(err, OPM_ENOMEM, NULL, "out of memory reading '%s'", c->path);
        if (got == 0) {
            if (ferror(c->f)) return opm_err(err, OPM_EIO, c->field, "error reading '%s'", c->path);
            return 0;
        }
        c->line++;
        char *s = c->buf;
        /* A byte order mark is only one at the very start of the file;
         * left there it would hide the first column's name. */
        if (c->line == 1 && !strncmp(s, "\xEF\xBB\xBF", 3)) s += 3;
        if (s[strspn(s, " \t\r\n")] == '\0') continue;
        c->nf = split(s, c->fld, OPM_CSV_MAX_FIELDS);
        return 0;
    }
}

void opm_csv_columns(const opm_csv *c, const char *const *names, int n, int *col)
{
    for (int k = 0; k < n; k++) col[k] = -1;
    for (int i = 0; i < c->nf; i++)
        for (int k = 0; k < n; k++)
            if (col[k] < 0 && !strcmp(c->fld[i], names[k])) col[k] = i;
}

int opm_csv_error(const opm_csv *c, opm_error *err, const char *column, const char *fmt, ...)
{
    char body[OPM_ERROR_MESSAGE_MAX], where[OPM_ERROR_MESSAGE_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    opm_err(err, OPM_EINVAL, column, "%s", body);
    snprintf(where, sizeof where, "%s:%zu", c->path, c->line);
    opm_err_prefix(err, where);
    return OPM_EINVAL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int opm_csv_list_dir(const char *dir, const char *field, char ***paths, size_t *n, size_t *cap, opm_error *err)
{
    return opm_list_dir_ext(dir, ".csv", field, paths, n, cap, err);
}

int opm_list_dir_ext(const char *dir, const char *ext, const char *field, char ***paths, size_t *n, size_t *cap,
                     opm_error *err)
{
    size_t ext_len = strlen(ext);
    DIR *d = opendir(dir);
    if (!d) return opm_err(err, OPM_EIO, field, "cannot open directory '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t nn = 0, nc = 0;
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (opm_array_grow((void **)&names, &nc, nn + 1, sizeof *names)) {
            rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
            break;
        }
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        if (!(names[nn] = malloc(len))) { rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory"); break; }
        snprintf(names[nn++], len, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (!rc && nn) /* names is NULL for an empty directory */
        qsort(names, nn, sizeof *names, cmp_str);
    for (size_t i = 0; !rc && i < nn; i++) {
        struct stat st;
        size_t len = strlen(names[i]);
        /* Folders are entered only when they are folders, not links to
         * one (a link to "." would loop); a *.csv (*ext) is read only when
         * it is a regular file or a link to one (a FIFO or /dev/zero would
         * hang). */
        if (lstat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = opm_list_dir_ext(names[i], ext, field, paths, n, cap, err);
        } else if (len > ext_len && strcmp(names[i] + len - ext_len, ext) == 0 && stat(names[i], &st) == 0 &&
                   S_ISREG(st.st_mode)) {
            if (opm_array_grow((void **)paths, cap, *n + 1, sizeof **paths)) {
                rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
                break;
            }
            (*paths)[(*n)++] = names[i];
            names[i] = NULL;
        }
    }
    for (size_t i = 0; i < nn; i++) free(names[i]);
    free(names);
    return rc;
}
