/* test_bad_inputs.c — the table of malformed op and hardware files
 * (tests/data/bad/expected.tsv): every file is rejected with one error line
 * that starts with the file's path and names the place (LINE:COL), the field
 * and what was expected.
 *
 * Each line of expected.tsv is `FILE<TAB>SUBSTRING`.  Files named op_* go
 * through opm_op_parse_file, hw_* through opm_hardware_load_file.  Blank
 * lines and lines starting with '#' are ignored. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "validate/csv.h"
#include "validate/general.h"

#define TABLE_REL "tests/data/bad/expected.tsv"
#define DIR_REL "tests/data/bad"
#define MAX_ROWS 256

typedef struct bad_row {
    char file[96];
    char expect[OPM_ERROR_MESSAGE_MAX];
    int line; /* line of expected.tsv, for messages */
} bad_row;

/* Reads the table into rows[cap].  Returns the number of rows, or -1 when the
 * file cannot be opened; a malformed line sets *bad_line to its number. */
static int read_table(bad_row *rows, size_t cap, int *bad_line)
{
    char path[1024];
    src_path(TABLE_REL, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char buf[2048];
    int n = 0, lineno = 0;
    *bad_line = 0;
    while (fgets(buf, sizeof buf, f)) {
        lineno++;
        size_t len = strlen(buf);
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        if (len == 0 || buf[0] == '#') continue;
        char *tab = strchr(buf, '\t');
        if (!tab || tab == buf || !tab[1] || strchr(tab + 1, '\t') ||
            (size_t)(tab - buf) >= sizeof rows[0].file || strlen(tab + 1) >= sizeof rows[0].expect) {
            if (!*bad_line) *bad_line = lineno;
            continue;
        }
        if ((size_t)n >= cap) break;
        *tab = '\0';
        memset(&rows[n], 0, sizeof rows[n]);
        snprintf(rows[n].file, sizeof rows[n].file, "%s", buf);
        snprintf(rows[n].expect, sizeof rows[n].expect, "%s", tab + 1);
        rows[n].line = lineno;
        n++;
    }
    fclose(f);
    return n;
}

static int is_op(const char *file) { return strncmp(file, "op_", 3) == 0; }
static int is_hw(const char *file) { return strncmp(file, "hw_", 3) == 0; }

/* 1 when s starts with ":LINE:COL: " (both numbers positive). */
static int has_location(const char *s)
{
    for (int part = 0; part < 2; part++) {
        if (*s++ != ':') return 0;
        if (!isdigit((unsigned char)*s) || *s == '0') return 0;
        while (isdigit((unsigned char)*s)) s++;
    }
    return s[0] == ':' && s[1] == ' ';
}

static void free_rows(struct criterion_test_params *p) { cr_free(p->params); }

ParameterizedTestParameters(bad_inputs, rejected)
{
    static bad_row tmp[MAX_ROWS];
    int bad_line;
    int n = read_table(tmp, MAX_ROWS, &bad_line);
    size_t count = n > 0 ? (size_t)n : 1;
    bad_row *rows = cr_malloc(count * sizeof *rows);
    if (!rows) return cr_make_param_array(bad_row, NULL, 0);
    if (n > 0) {
        memcpy(rows, tmp, count * sizeof *rows);
    } else {
        /* An unreadable or empty table still yields one (failing) case. */
        memset(rows, 0, sizeof *rows);
    }
    return cr_make_param_array(bad_row, rows, count, free_rows);
}

ParameterizedTest(bad_row *row, bad_inputs, rejected)
{
    cr_assert(row->file[0], "%s is missing, unreadable or empty", TABLE_REL);
    cr_assert(is_op(row->file) || is_hw(row->file),
              "%s:%d: file name '%s' must start with op_ or hw_", TABLE_REL, row->line, row->file);

    char rel[256], path[1024];
    snprintf(rel, sizeof rel, DIR_REL "/%s", row->file);
    src_path(rel, path, sizeof path);

    opm_error err;
    opm_error_clear(&err);
    int accepted;
    if (is_op(row->file)) {
        opm_op *op = opm_op_parse_file(path, &err);
        accepted = op != NULL;
        opm_op_free(op);
    } else {
        opm_hardware *hw = opm_hardware_load_file(path, &err);
        accepted = hw != NULL;
        opm_hardware_free(hw);
    }

    cr_assert(!accepted, "%s was ACCEPTED; expected an error containing \"%s\"", row->file, row->expect);
    cr_expect_neq(err.code, OPM_OK, "%s: rejected but err.code is OPM_OK (message \"%s\")", row->file,
                  err.message);
    cr_expect_null(strchr(err.message, '\n'), "%s: message is not one line: \"%s\"", row->file, err.message);
    size_t plen = strlen(path);
    cr_expect(strncmp(err.message, path, plen) == 0 && err.message[plen] == ':',
              "%s: message does not start with \"%s:\": \"%s\"", row->file, path, err.message);
    cr_expect(has_location(row->expect), "%s:%d: expected text must start with :LINE:COL: , got \"%s\"",
              TABLE_REL, row->line, row->expect);
    cr_expect_not_null(strstr(err.message, row->expect),
                       "%s: message lacks the expected text\n    expected: ...%s\n    actual:   %s", row->file,
                       row->expect, err.message);
}

/* The table is big enough, names only files that exist, and lists every
 * op_ and hw_ file of the directory. */
Test(bad_inputs, table_complete)
{
    static bad_row rows[MAX_ROWS];
    int bad_line;
    int n = read_table(rows, MAX_ROWS, &bad_line);
    cr_assert_geq(n, 0, "cannot open %s", TABLE_REL);
    cr_expect_eq(bad_line, 0, "%s:%d: expected FILE<TAB>SUBSTRING", TABLE_REL, bad_line);
    cr_expect_lt(n, MAX_ROWS, "table has %d rows or more; raise MAX_ROWS", MAX_ROWS);

    int ops = 0, hws = 0;
    for (int i = 0; i < n; i++) {
        ops += is_op(rows[i].file);
        hws += is_hw(rows[i].file);
        for (int j = 0; j < i; j++)
            cr_expect_str_neq(rows[i].file, rows[j].file, "%s listed twice (lines %d and %d)", rows[i].file,
                              rows[j].line, rows[i].line);
        char rel[256], path[1024];
        snprintf(rel, sizeof rel, DIR_REL "/%s", rows[i].file);
        FILE *f = fopen(src_path(rel, path, sizeof path), "rb");
        cr_expect_not_null(f, "%s:%d: no file %s", TABLE_REL, rows[i].line, path);
        if (f) fclose(f);
    }
    cr_expect_geq(ops, 25, "expected at least 25 op rows, got %d", ops);
    cr_expect_geq(hws, 12, "expected at least 12 hardware rows, got %d", hws);

    char dpath[1024];
    DIR *dir = opendir(src_path(DIR_REL, dpath, sizeof dpath));
    cr_assert_not_null(dir, "cannot list %s", dpath);
    for (struct dirent *e; (e = readdir(dir));) {
        if (!is_op(e->d_name) && !is_hw(e->d_name)) continue;
        int listed = 0;
        for (int i = 0; i < n && !listed; i++) listed = strcmp(rows[i].file, e->d_name) == 0;
        cr_expect(listed, "%s/%s has no line in %s", DIR_REL, e->d_name, TABLE_REL);
    }
    closedir(dir);
}

/* The contract §4 CSV reader holds at most one 1 MiB line: /dev/zero (no
 * line end ever) and a 2 MiB line end with an error naming file and line,
 * and the lines before a long one are still read. */
Test(bad_inputs, csv_line_cap)
{
    opm_csv c;
    opm_error err;
    cr_assert_eq(opm_csv_open(&c, "/dev/zero", "--data", &err), 0, "%s", err.message);
    cr_assert_eq(opm_csv_read(&c, &err), OPM_EINVAL);
    cr_assert_not_null(strstr(err.message, "/dev/zero:1: expected a line of at most 1 MiB"), "%s", err.message);
    cr_assert_str_eq(err.field, "--data");
    cr_assert_leq(c.cap, OPM_CSV_MAX_LINE_BYTES + 2);
    opm_csv_close(&c);

    char path[4096];
    FILE *f = fdopen(tmp_file(path, sizeof path, "opm_csv_cap_"), "w");
    fputs("hardware,m\nt4,1\n", f);
    for (size_t i = 0; i < 2 * OPM_CSV_MAX_LINE_BYTES; i++) fputc('x', f);
    fputs("\nt4,2\n", f);
    fclose(f);
    cr_assert_eq(opm_csv_open(&c, path, "--data", &err), 0);
    cr_assert_eq(opm_csv_read(&c, &err), 0);
    cr_assert_eq(c.nf, 2);
    cr_assert_eq(opm_csv_read(&c, &err), 0);
    cr_assert_str_eq(c.fld[1], "1");
    cr_assert_eq(opm_csv_read(&c, &err), OPM_EINVAL);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: expected a line of at most 1 MiB", path);
    cr_assert_not_null(strstr(err.message, want), "%s", err.message);
    cr_assert_null(strchr(err.message, '\n'));
    opm_csv_close(&c);
    remove(path);
}

/* validate's JSONL reader (found by fuzz_validate_general): a key holding an
 * escaped newline ("lat\ncy_s") made a two-line first_bad; it is one line
 * with the control character written as \n. */
Test(bad_inputs, validate_general_first_bad_is_one_line)
{
    char path[4096];
    FILE *f = fdopen(tmp_file(path, sizeof path, "opm_general_nl_"), "w");
    fputs("{\"hardware\": \"a100_40gb_pcie\", \"op\": {\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, "
          "\"dtype\": \"bf16\"}, \"measured\": {\"lat\\ncy_s\": 5.2e-4}}\n",
          f);
    fclose(f);
    opm_general v;
    opm_error err;
    cr_assert_eq(opm_general_init(&v, "roofline", 0, &err), 0, "%s", err.message);
    opm_general_add_path(&v, path, "--data", &err);
    cr_assert_eq(v.rows_failed, 1);
    for (const char *c = v.first_bad; *c; c++) cr_assert_geq((unsigned char)*c, 0x20, "%s", v.first_bad);
    cr_assert_not_null(strstr(v.first_bad, "measured.lat\\ncy_s"), "%s", v.first_bad);
    opm_general_free(&v);
    remove(path);
}
