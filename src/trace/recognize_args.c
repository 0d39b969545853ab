/* recognize_args.c — reading a profiled op's call arguments from their
 * canonical JSON texts (see recognize_args.h), and the JSON object the
 * recognizer reports parameters in (a thin layer over strbuf).
 *
 * The texts come from a trace file, so nothing here trusts them: every
 * read is bounded by the terminating NUL, nesting is capped, numbers are
 * checked for overflow, and what does not fit the expected shapes becomes
 * an argument of kind OPM_TARG_OTHER rather than an error. */
#include "recognize_args.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"

#define MAX_DEPTH 256

/* ---- JSON scanning ---- */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Scans the string starting at p (on the opening quote); decodes it into
 * `out` (NUL-terminated; never longer than the source) when out is not
 * NULL.  Returns the position after the closing quote, NULL if malformed. */
static const char *scan_string(const char *p, char *out)
{
    if (*p != '"') return NULL;
    p++;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '\0' || c < 0x20) return NULL;
        if (c == '"') break;
        if (c != '\\') {
            if (out) *out++ = (char)c;
            p++;
            continue;
        }
        char e = p[1];
        char d = 0;
        switch (e) {
        case '"': d = '"'; break;
        case '\\': d = '\\'; break;
        case '/': d = '/'; break;
        case 'b': d = '\b'; break;
        case 'f': d = '\f'; break;
        case 'n': d = '\n'; break;
        case 'r': d = '\r'; break;
        case 't': d = '\t'; break;
        case 'u': {
            unsigned v = 0;
            for (int i = 2; i < 6; i++) {
                int h = hexval(p[i]);
                if (h < 0) return NULL;
                v = v * 16 + (unsigned)h;
            }
            /* Type names and scalar texts are ASCII; anything else is kept
             * as one '?' (the decoded text only feeds comparisons). */
            if (out) *out++ = v < 0x80 ? (char)v : '?';
            p += 6;
            continue;
        }
        default: return NULL;
        }
        if (out) *out++ = d;
        p += 2;
    }
    if (out) *out = '\0';
    return p + 1;
}

static const char *scan_number(const char *p)
{
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return NULL;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    return p;
}

/* Skips one value at p (white space before it already skipped); returns
 * the position after it, NULL when malformed or nested too deep. */
static const char *skip_value(const char *p, int depth)
{
    if (depth > MAX_DEPTH) return NULL;
    switch (*p) {
    case '"': return scan_string(p, NULL);
    case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
    case '[':
    case '{': {
        char close = *p == '[' ? ']' : '}';
        int obj = *p == '{';
        p = ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (obj) {
                p = scan_string(p, NULL);
                if (!p) return NULL;
                p = ws(p);
                if (*p != ':') return NULL;
                p = ws(p + 1);
            }
            p = skip_value(p, depth + 1);
            if (!p) return NULL;
            p = ws(p);
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p = ws(p + 1);
        }
    }
    default: return scan_number(p);
    }
}

int opm_json_is_value(const char *text, size_t len)
{
    if (!text || memchr(text, '\0', len)) return 0;
    /* The scanners stop at a NUL: they run on a terminated copy, never
     * reading text[len]. */
    char *copy = malloc(len + 1);
    if (!copy) return 0;
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *p = skip_value(ws(copy), 0);
    int ok = p && *ws(p) == '\0';
    free(copy);
    return ok;
}

/* ---- the argument texts ---- */

/* Reads one Input Dims entry into `a` (kind, shape, list length). */
static const char *dims_entry(const char *p, opm_targ *a)
{
    a->kind = OPM_TARG_OTHER;
    if (*p != '[') return skip_value(p, 1);
    const char *q = ws(p + 1);
    if (*q == ']') {               /* [] */
        a->kind = OPM_TARG_NONE;
        a->rank = 0;
        return q + 1;
    }
    if (*q == '[') {               /* a TensorList */
        size_t n = 0;
        for (;;) {
            q = skip_value(q, 2);
            if (!q) return NULL;
            n++;
            q = ws(q);
            if (*q == ']') break;
            if (*q != ',') return NULL;
            q = ws(q + 1);
        }
        a->kind = OPM_TARG_LIST;
        a->list_len = n;
        return q + 1;
    }
    /* a list of dims: integers, at most OPM_MAX_RANK of them to be usable */
    int rank = 0, usable = 1;
    for (;;) {
        const char *end = scan_number(q);
        if (!end) return skip_value(p, 1);
        int integral = 1;
        for (const char *c = q; c < end; c++)
            if (*c == '.' || *c == 'e' || *c == 'E') integral = 0;
        errno = 0;
        long long v = integral ? strtoll(q, NULL, 10) : 0;
        if (!integral || errno == ERANGE || v < 0 || rank >= OPM_MAX_RANK) usable = 0;
        else a->shape[rank] = v;
        rank++;
        q = ws(end);
        if (*q == ']') break;
        if (*q != ',') return NULL;
        q = ws(q + 1);
    }
    if (usable) {
        a->kind = OPM_TARG_TENSOR;  /* until the type says otherwise */
        a->rank = rank;
    }
    return q + 1;
}

/* Reads a JSON array of strings into arg[i].type or .value (decoded into
 * *store); entries that are not strings read as "".  Returns the count, -1
 * when `text` is not an array. */
static long string_list(const char *text, opm_targs *a, int values, char **store)
{
    const char *p = ws(text);
    if (*p != '[') return -1;
    p = ws(p + 1);
    long n = 0;
    if (*p == ']') return 0;
    for (;;) {
        const char *s = "";
        if (*p == '"') {
            const char *end = scan_string(p, *store);
            if (!end) return -1;
            s = *store;
            *store += strlen(*store) + 1;
            p = end;
        } else {
            p = skip_value(p, 1);
            if (!p) return -1;
        }
        if ((size_t)n < a->n) {
            if (values) a->arg[n].value = s;
            else a->arg[n].type = s;
        }
        n++;
        p = ws(p);
        if (*p == ']') return n;
        if (*p != ',') return -1;
        p = ws(p + 1);
    }
}

/* Number of entries of a JSON array (0 for "[]"); -1 when not an array. */
static long array_len(const char *text)
{
    const char *p = ws(text);
    if (*p != '[') return -1;
    p = ws(p + 1);
    if (*p == ']') return *ws(p + 1) ? -1 : 0;
    long n = 0;
    for (;;) {
        p = skip_value(p, 1);
        if (!p) return -1;
        n++;
        p = ws(p);
        if (*p == ']') return *ws(p + 1) ? -1 : n;
        if (*p != ',') return -1;
        p = ws(p + 1);
    }
}

void opm_targs_free(opm_targs *a)
{
    if (!a) return;
    free(a->arg);
    free(a->text);
    memset(a, 0, sizeof *a);
}

int opm_targs_parse(const char *dims, const char *types, const char *concrete, opm_targs *out,
                    opm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!dims) dims = "";
    if (!types) types = "";
    if (!concrete) concrete = "";
    long n = array_len(dims);
    if (n < 0) return opm_err(err, OPM_EINVAL, "Input Dims", "expected a JSON array");
    long nt = array_len(types);
    if (nt != n) return opm_err(err, OPM_EINVAL, "Input type", "expected %ld entries, got %ld", n, nt);
    long nc = *ws(concrete) ? array_len(concrete) : 0;
    if (nc < 0) nc = 0; /* values are optional: unreadable ones are absent */
    opm_targs a = {(size_t)n, NULL, NULL};
    a.arg = calloc(n ? (size_t)n : 1, sizeof *a.arg);
    a.text = malloc(strlen(types) + strlen(concrete) + 2);
    if (!a.arg || !a.text) {
        opm_targs_free(&a);
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    a.text[0] = '\0';
    for (size_t i = 0; i < a.n; i++) a.arg[i].type = a.arg[i].value = a.text;
    char *store = a.text + 1;
    const char *p = ws(ws(dims) + 1);
    for (size_t i = 0; i < a.n; i++) {
        p = dims_entry(p, &a.arg[i]);
        p = p ? ws(p) : NULL;
        if (!p || (*p != ',' && *p != ']')) {
            opm_targs_free(&a);
            return opm_err(err, OPM_EINVAL, "Input Dims", "malformed entry %zu", i);
        }
        p = ws(p + 1);
    }
    if (string_list(types, &a, 0, &store) != n ||
        (nc > 0 && string_list(concrete, &a, 1, &store) < 0)) {
        opm_targs_free(&a);
        return opm_err(err, OPM_EINVAL, "Input type", "expected a list of strings");
    }
    for (size_t i = 0; i < a.n; i++) {
        opm_targ *t = &a.arg[i];
        opm_dtype dt;
        int known = opm_torch_type_dtype(t->type, &dt) == 0;
        if (t->kind == OPM_TARG_TENSOR || t->kind == OPM_TARG_NONE) {
            /* [] of a non-tensor type is a scalar or an absent optional; a
             * list of dims of an unmodelled type is a tensor we cannot count. */
            if (known) {
                t->kind = OPM_TARG_TENSOR;
                t->dtype = dt;
            } else {
                t->kind = t->kind == OPM_TARG_NONE ? OPM_TARG_NONE : OPM_TARG_OTHER;
            }
        }
    }
    *out = a;
    return 0;
}

int opm_targ_is_tensor(const opm_targs *a, size_t i)
{
    return i < a->n && a->arg[i].kind == OPM_TARG_TENSOR;
}

/* ---- concrete values ---- */

static const char *value_of(const opm_targs *a, size_t i)
{
    return i < a->n ? a->arg[i].value : "";
}

/* Strict integer parse of [s, end). */
static int parse_int(const char *s, const char **end, int64_t *v)
{
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (e == s || errno == ERANGE) return -1;
    *v = x;
    *end = e;
    return 0;
}

int opm_targ_int(const opm_targs *a, size_t i, int64_t *v)
{
    const char *s = value_of(a, i), *end;
    if (parse_int(s, &end, v)) return -1;
    return *end ? -1 : 0;
}

int opm_targ_double(const opm_targs *a, size_t i, double *v)
{
    const char *s = value_of(a, i);
    char *e;
    if (!*s) return -1;
    errno = 0;
    double x = strtod(s, &e);
    if (*e || e == s || !isfinite(x)) return -1;
    *v = x;
    return 0;
}

static int bool_word(const char *s, const char **end, int *v)
{
    if (!strncmp(s, "True", 4)) { *v = 1; *end = s + 4; return 0; }
    if (!strncmp(s, "False", 5)) { *v = 0; *end = s + 5; return 0; }
    return -1;
}

int opm_targ_bool(const opm_targs *a, size_t i, int *v)
{
    const char *s = value_of(a, i), *end;
    if (bool_word(s, &end, v)) return -1;
    return *end ? -1 : 0;
}

/* "[a, b]" or "(a, b)" or "a" with items read by `item`. */
static int list_of(const char *s, void *vals, int cap, int *n, int bools)
{
    *n = 0;
    int bracket = *s == '[' || *s == '(';
    if (!*s) return -1;
    const char *p = s + bracket;
    for (;;) {
        while (*p == ' ') p++;
        if (bracket && (*p == ']' || *p == ')')) { p++; break; }
        if (*n >= cap) return -1;
        const char *end;
        if (bools) {
            if (bool_word(p, &end, (int *)vals + *n)) return -1;
        } else if (parse_int(p, &end, (int64_t *)vals + *n)) {
            return -1;
        }
        (*n)++;
        p = end;
        while (*p == ' ') p++;
        if (!bracket) break;
        if (*p == ',') p++;
        else if (*p != ']' && *p != ')') return -1;
    }
    return *p ? -1 : 0;
}

int opm_targ_ints(const opm_targs *a, size_t i, int64_t *v, int cap, int *n)
{
    return list_of(value_of(a, i), v, cap, n, 0);
}

int opm_targ_bools(const opm_targs *a, size_t i, int *v, int cap, int *n)
{
    return list_of(value_of(a, i), v, cap, n, 1);
}

/* ---- dtypes ---- */

int opm_torch_type_dtype(const char *type, opm_dtype *out)
{
    static const struct { const char *torch; opm_dtype dt; } map[] = {
        {"c10::BFloat16", OPM_BF16}, {"c10::Half", OPM_FP16}, {"float", OPM_FP32},
        {"double", OPM_FP64}, {"c10::Float8_e4m3fn", OPM_FP8_E4M3},
        {"c10::Float8_e4m3fnuz", OPM_FP8_E4M3}, {"c10::Float8_e5m2", OPM_FP8_E5M2},
        {"c10::Float8_e5m2fnuz", OPM_FP8_E5M2}, {"long int", OPM_INT64}, {"long", OPM_INT64},
        {"int64_t", OPM_INT64}, {"int", OPM_INT32}, {"bool", OPM_BOOL},
        /* 8-bit integers count as int8 whatever their sign (1 byte) */
        {"signed char", OPM_INT8}, {"unsigned char", OPM_INT8},
    };
    if (!type) return -1;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i].torch, type)) {
            *out = map[i].dt;
            return 0;
        }
    return -1;
}

int opm_scalar_type_dtype(int64_t code, opm_dtype *out)
{
    /* c10::ScalarType numbering (c10/core/ScalarType.h) */
    switch (code) {
    case 0: case 1: *out = OPM_INT8; return 0;   /* Byte, Char */
    case 3: *out = OPM_INT32; return 0;
    case 4: *out = OPM_INT64; return 0;
    case 5: *out = OPM_FP16; return 0;
    case 6: *out = OPM_FP32; return 0;
    case 7: *out = OPM_FP64; return 0;
    case 11: *out = OPM_BOOL; return 0;
    case 15: *out = OPM_BF16; return 0;
    case 23: case 25: *out = OPM_FP8_E5M2; return 0;   /* Float8_e5m2, _e5m2fnuz */
    case 24: case 26: *out = OPM_FP8_E4M3; return 0;   /* Float8_e4m3fn, _e4m3fnuz */
    default: return -1;
    }
}

/* ---- JSON object of parameters ---- */

void opm_jbuf_init(opm_jbuf *b) { memset(b, 0, sizeof *b); }

void opm_jbuf_free(opm_jbuf *b)
{
    free(b->sb.p);
    memset(b, 0, sizeof *b);
}

static void key(opm_jbuf *b, const char *k)
{
    sb_putc(&b->sb, b->fields++ ? ',' : '{');
    sb_json_string(&b->sb, k);
    sb_putc(&b->sb, ':');
}


void opm_jbuf_int(opm_jbuf *b, const char *k, int64_t v)
{
    key(b, k);
    sb_printf(&b->sb, "%" PRId64, v);
}

void opm_jbuf_bool(opm_jbuf *b, const char *k, int v)
{
    key(b, k);
    sb_puts(&b->sb, v ? "true" : "false");
}

void opm_jbuf_double(opm_jbuf *b, const char *k, double v)
{
    key(b, k);
    if (isfinite(v)) sb_double(&b->sb, v);
    else sb_puts(&b->sb, "null"); /* JSON has no inf or nan */
}

void opm_jbuf_str(opm_jbuf *b, const char *k, const char *v)
{
    key(b, k);
    if (v) sb_json_string(&b->sb, v);
    else sb_puts(&b->sb, "null");
}

static void put_ints(strbuf *sb, const int64_t *v, int n)
{
    sb_putc(sb, '[');
    for (int i = 0; i < n; i++) sb_printf(sb, i ? ",%" PRId64 : "%" PRId64, v[i]);
    sb_putc(sb, ']');
}

void opm_jbuf_ints(opm_jbuf *b, const char *k, const int64_t *v, int n)
{
    key(b, k);
    put_ints(&b->sb, v, n);
}

void opm_jbuf_shapes(opm_jbuf *b, const char *k, const int64_t *const *dims, const int *ranks, int n)
{
    key(b, k);
    sb_putc(&b->sb, '[');
    for (int i = 0; i < n; i++) {
        if (i) sb_putc(&b->sb, ',');
        put_ints(&b->sb, dims[i], ranks[i]);
    }
    sb_putc(&b->sb, ']');
}

void opm_jbuf_raw(opm_jbuf *b, const char *k, const char *json)
{
    key(b, k);
    sb_puts(&b->sb, json ? json : "null");
}

char *opm_jbuf_finish(opm_jbuf *b)
{
    sb_puts(&b->sb, b->fields ? "}" : "{}");
    char *s = b->sb.oom ? NULL : b->sb.p;
    if (!s) free(b->sb.p);
    memset(b, 0, sizeof *b);
    return s;
}
