/* golden.c — see golden.h. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "golden.h"
#include "testutil.h"

struct csv {
    size_t ncols, nrows;   /* nrows excludes the header */
    char **cells;          /* (nrows + 1) × ncols */
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

csv *csv_load(const char *path)
{
    size_t len;
    char *t = slurp(path, &len);
    size_t cap = 1024, n = 0, cols = 0, row_cells = 0;
    char **cells = malloc(cap * sizeof *cells);
    size_t i = 0;
    if (len >= 3 && (unsigned char)t[0] == 0xEF) i = 3; /* UTF-8 BOM */
    while (i < len) {
        /* one cell */
        size_t cell_cap = 64, cl = 0;
        char *cell = malloc(cell_cap);
        int quoted = t[i] == '"';
        if (quoted) i++;
        for (; i < len; i++) {
            char ch = t[i];
            if (quoted) {
                if (ch == '"') {
                    if (i + 1 < len && t[i + 1] == '"') { i++; }
                    else { quoted = 0; continue; }
                }
            } else if (ch == ',' || ch == '\n' || ch == '\r') {
                break;
            }
            if (cl + 2 > cell_cap) cell = realloc(cell, cell_cap *= 2);
            cell[cl++] = ch;
        }
        cell[cl] = '\0';
        if (n == cap) cells = realloc(cells, (cap *= 2) * sizeof *cells);
        cells[n++] = cell;
        row_cells++;
        int end_row = i >= len || t[i] != ',';
        if (i < len && t[i] == ',') i++;
        if (end_row) {
            while (i < len && (t[i] == '\r' || t[i] == '\n')) i++;
            if (cols == 0) cols = row_cells;
            cr_assert_eq(row_cells, cols, "%s: row with %zu cells, header has %zu", path, row_cells, cols);
            row_cells = 0;
        }
    }
    free(t);
    csv *c = malloc(sizeof *c);
    c->ncols = cols;
    c->nrows = cols ? n / cols - 1 : 0;
    c->cells = cells;
    return c;
}

void csv_free(csv *c)
{
    if (!c) return;
    for (size_t i = 0; i < (c->nrows + 1) * c->ncols; i++) free(c->cells[i]);
    free(c->cells);
    free(c);
}

size_t csv_rows(const csv *c) { return c->nrows; }

static long col_of(const csv *c, const char *name)
{
    for (size_t j = 0; j < c->ncols; j++)
        if (strcmp(c->cells[j], name) == 0) return (long)j;
    return -1;
}

int csv_has(const csv *c, const char *name) { return col_of(c, name) >= 0; }

const char *csv_get(const csv *c, size_t row, const char *name)
{
    long j = col_of(c, name);
    if (j < 0 || row >= c->nrows) return NULL;
    return c->cells[(row + 1) * c->ncols + (size_t)j];
}

double csv_num(const csv *c, size_t row, const char *name)
{
    const char *s = csv_get(c, row, name);
    cr_assert_not_null(s, "no column %s", name);
    char *end;
    double v = strtod(s, &end);
    cr_assert(*s && !*end, "column %s row %zu: not a number: '%s'", name, row, s);
    return v;
}

int csv_bool(const csv *c, size_t row, const char *name)
{
    const char *s = csv_get(c, row, name);
    if (!s) return -1;
    if (!strcmp(s, "True") || !strcmp(s, "true") || !strcmp(s, "1")) return 1;
    if (!strcmp(s, "False") || !strcmp(s, "false") || !strcmp(s, "0")) return 0;
    return -1;
}

int py_int_lists(const char *s, int64_t dims[][8], int *lens, int max_lists)
{
    while (isspace((unsigned char)*s)) s++;
    if (*s != '[' && *s != '(') return -1;
    s++;
    int n = 0;
    for (;;) {
        while (isspace((unsigned char)*s) || *s == ',') s++;
        if (*s == ']' || *s == ')') return n;
        if (n >= max_lists) return -1;
        if (*s != '[' && *s != '(') {
            /* a bare scalar entry counts as a list of one */
            char *end;
            long long v = strtoll(s, &end, 10);
            if (end == s) return -1;
            dims[n][0] = v;
            lens[n++] = 1;
            s = end;
            continue;
        }
        s++;
        int r = 0;
        for (;;) {
            while (isspace((unsigned char)*s) || *s == ',') s++;
            if (*s == ']' || *s == ')') { s++; break; }
            char *end;
            long long v = strtoll(s, &end, 10);
            if (end == s || r >= 8) return -1;
            dims[n][r++] = v;
            s = end;
        }
        lens[n++] = r;
    }
}

int py_strings(const char *s, char out[][64], int max_items)
{
    while (isspace((unsigned char)*s)) s++;
    if (*s != '[' && *s != '(') return -1;
    s++;
    int n = 0;
    for (;;) {
        while (isspace((unsigned char)*s) || *s == ',') s++;
        if (*s == ']' || *s == ')' || !*s) return n;
        if (n >= max_items) return -1;
        char q = *s;
        if (q != '\'' && q != '"') return -1;
        s++;
        int k = 0;
        while (*s && *s != q) {
            if (k < 63) out[n][k++] = *s;
            s++;
        }
        out[n][k] = '\0';
        if (*s) s++;
        n++;
    }
}

const char *torch_dtype(const char *t)
{
    static const struct { const char *torch, *ours; } map[] = {
        {"c10::BFloat16", "bf16"}, {"c10::Half", "fp16"}, {"float", "fp32"}, {"double", "fp64"},
        {"c10::Float8_e4m3fn", "fp8_e4m3"}, {"c10::Float8_e4m3fnuz", "fp8_e4m3"}, {"c10::Float8_e5m2", "fp8_e5m2"},
        {"c10::Float8_e5m2fnuz", "fp8_e5m2"}, {"signed char", "int8"}, {"int", "int32"}, {"long int", "int64"},
        {"long", "int64"}, {"bool", "bool"}, {"unsigned char", "int8"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i].torch, t)) return map[i].ours;
    return NULL;
}

const char *tracelens_path(const char *rel, char *buf, size_t cap)
{
    char r[512];
    snprintf(r, sizeof r, "tests/data/tracelens/%s", rel);
    return src_path(r, buf, cap);
}
