/* op_line.c — one JSONL line of `predict --batch` into an op, fast: a flat
 * short form (plain strings, integers, booleans, lists of integers and lists
 * of such lists) is scanned in place and set on the op directly, without the
 * yajl parse, the document tree and the text lookups of opm_op_from_doc.
 * Anything else — the full form, escapes, non-ASCII text, fractions,
 * exponents, null, nested maps, repeated keys, long lines — and every line
 * that fails anywhere goes through opm_op_parse_string, so a line gives the
 * same op, or the same error message, either way. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "../ops/kind.h"
#include "io_internal.h"

enum { MAX_PAIRS = 32, MAX_INTS = 64, MAX_TEXT = 255 };

typedef enum { V_STRING, V_INT, V_BOOL, V_INTS, V_LISTS } vtype;

typedef struct pair {
    const char *key;
    size_t key_len;
    vtype type;
    const char *s; /* V_STRING: the text, s_len bytes, not terminated */
    size_t s_len;
    int64_t i;     /* V_INT, V_BOOL */
    size_t first, count;   /* V_INTS: ints[first..+count]; V_LISTS: lists[first..+count] */
} pair;

typedef struct scan {
    const char *p, *end;
    size_t n_pairs;
    pair pairs[MAX_PAIRS];
    size_t n_ints;
    int64_t ints[MAX_INTS];
    size_t n_lists;
    size_t list_first[OPM_MAX_RANK * 2], list_count[OPM_MAX_RANK * 2];
} scan;

static void ws(scan *s)
{
    /* Most calls find no space or one: the bytes above ' ' leave at once. */
    while (s->p < s->end && (unsigned char)*s->p <= ' ' &&
           (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
        s->p++;
}

/* A string of printable ASCII without escapes (the bytes the JSON writer
 * passes as they are, but DEL, which the full parser words); its text stays
 * in the line. */
static int str(scan *s, const char **out, size_t *len)
{
    if (s->p >= s->end || *s->p != '"') return -1;
    const char *b = ++s->p;
    while (s->p < s->end && opm_json_plain[(unsigned char)*s->p] && *s->p != 0x7f) s->p++;
    if (s->p >= s->end || *s->p != '"' || s->p - b > MAX_TEXT) return -1;
    *out = b;
    *len = (size_t)(s->p - b);
    s->p++;
    return 0;
}

/* A JSON integer (-?(0|[1-9][0-9]*)) that fits in int64 and is not followed
 * by a fraction or an exponent. */
static int integer(scan *s, int64_t *out)
{
    int neg = s->p < s->end && *s->p == '-';
    if (neg) s->p++;
    if (s->p >= s->end || *s->p < '0' || *s->p > '9') return -1;
    if (*s->p == '0' && s->p + 1 < s->end && s->p[1] >= '0' && s->p[1] <= '9') return -1;
    uint64_t v = 0;
    const char *d0 = s->p;
    for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++) {
        if (s->p - d0 >= 18) return -1; /* 19 digits or more: let strtoll judge */
        v = v * 10 + (uint64_t)(*s->p - '0');
    }
    if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E')) return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* After a list element: 0 at the closing ']' (consumed), 1 after a ',',
 * -1 on anything else. */
static int list_next(scan *s)
{
    ws(s);
    if (s->p >= s->end) return -1;
    if (*s->p == ']') {
        s->p++;
        return 0;
    }
    return *s->p++ == ',' ? 1 : -1;
}

static int int_list(scan *s, size_t *first, size_t *count)
{
    s->p++; /* '[' */
    *first = s->n_ints;
    *count = 0;
    ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return 0;
    }
    for (;;) {
        ws(s);
        if (s->n_ints == MAX_INTS || integer(s, &s->ints[s->n_ints])) return -1;
        s->n_ints++;
        (*count)++;
        int more = list_next(s);
        if (more <= 0) return more;
    }
}

static int value(scan *s, pair *v)
{
    if (s->p >= s->end) return -1;
    char c = *s->p;
    if (c == '"') {
        v->type = V_STRING;
        return str(s, &v->s, &v->s_len);
    }
    if (c == 't' || c == 'f') {
        size_t n = c == 't' ? 4 : 5;
        if ((size_t)(s->end - s->p) < n || memcmp(s->p, c == 't' ? "true" : "false", n)) return -1;
        s->p += n;
        v->type = V_BOOL;
        v->i = c == 't';
        return 0;
    }
    if (c == '[') {
        const char *q = s->p + 1;
        while (q < s->end && (*q == ' ' || *q == '\t')) q++;
        if (q < s->end && *q == '[') { /* a list of lists of integers */
            s->p = q;
            v->type = V_LISTS;
            v->first = s->n_lists;
            v->count = 0;
            for (;;) {
                ws(s);
                if (s->p >= s->end || *s->p != '[' || s->n_lists == OPM_MAX_RANK * 2) return -1;
                size_t f, n;
                if (int_list(s, &f, &n) || n > OPM_MAX_RANK) return -1;
                s->list_first[s->n_lists] = f;
                s->list_count[s->n_lists++] = n;
                v->count++;
                int more = list_next(s);
                if (more <= 0) return more;
            }
        }
        v->type = V_INTS;
        return int_list(s, &v->first, &v->count);
    }
    v->type = V_INT;
    return integer(s, &v->i);
}

/* a[0..na) == b[0..nb), inline: keys are a few bytes. */
static int same_text(const char *a, size_t na, const char *b, size_t nb)
{
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static int scan_line(scan *s)
{
    ws(s);
    if (s->p >= s->end || *s->p++ != '{') return -1;
    ws(s);
    if (s->p < s->end && *s->p == '}') return -1; /* {}: the full path says what is missing */
    /* A bit per (first byte, length) class of the keys so far: keys are
     * compared only with the earlier ones of their class. */
    uint64_t classes = 0;
    for (;;) {
        ws(s);
        if (s->n_pairs == MAX_PAIRS) return -1;
        pair *v = &s->pairs[s->n_pairs];
        if (str(s, &v->key, &v->key_len)) return -1;
        uint64_t bit = 1ULL << (((unsigned char)(v->key_len ? v->key[0] : 0) + 3 * v->key_len) & 63);
        if (classes & bit) {
            for (size_t i = 0; i < s->n_pairs; i++)
                if (same_text(s->pairs[i].key, s->pairs[i].key_len, v->key, v->key_len)) return -1;
        }
        classes |= bit;
        ws(s);
        if (s->p >= s->end || *s->p++ != ':') return -1;
        ws(s);
        if (value(s, v)) return -1;
        s->n_pairs++;
        ws(s);
        if (s->p >= s->end) return -1;
        if (*s->p == '}') {
            s->p++;
            break;
        }
        if (*s->p++ != ',') return -1;
    }
    ws(s);
    return s->p == s->end ? 0 : -1;
}

#define key_is(v, lit) same_text((v)->key, (v)->key_len, "" lit, sizeof(lit) - 1)

/* The NUL-terminated k equals key[0..n). */
static int key_eq(const char *k, const char *key, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (k[i] != key[i]) return 0; /* a shorter k stops at its NUL */
    return k[n] == '\0';
}

static int in_defs(const char *key, size_t n, const opm_attr_def *defs)
{
    for (const opm_attr_def *a = defs; a && a->key; a++)
        if (a->key[0] == key[0] && key_eq(a->key, key, n)) return 1;
    return 0;
}

/* A flat GEMM line's keys besides kind, name and phase: exactly m, n, k
 * (positive integers) and dtype (a name opm_dtype_parse knows), what most
 * --batch lines are.  0 with them, or -1 for the generic short-form route
 * (any other key, type or value: that route decides, and words any error).
 * Repeated keys never get here (the scan refuses them). */
static int flat_gemm(const scan *s, const pair *kind_p, const pair *name_p, const pair *phase_p, int64_t mnk[3],
                     opm_dtype *dt)
{
    unsigned seen = 0;
    for (size_t i = 0; i < s->n_pairs; i++) {
        const pair *v = &s->pairs[i];
        if (v == kind_p || v == name_p || v == phase_p) continue;
        if (v->key_len == 1 && (v->key[0] == 'm' || v->key[0] == 'n' || v->key[0] == 'k')) {
            if (v->type != V_INT || v->i <= 0) return -1;
            int at = v->key[0] == 'm' ? 0 : v->key[0] == 'n' ? 1 : 2;
            mnk[at] = v->i;
            seen |= 1u << at;
        } else if (key_is(v, "dtype") && v->type == V_STRING && v->s_len < 16) {
            char text[16];
            memcpy(text, v->s, v->s_len);
            text[v->s_len] = '\0';
            if (opm_dtype_parse(text, dt)) return -1;
            seen |= 8;
        } else {
            return -1;
        }
    }
    return seen == 15 ? 0 : -1;
}

/* The op of a scanned line, or NULL when the careful path must decide.
 * reuse, when given, is rebuilt (and returned) instead of a new op; on
 * NULL it is left to the caller. */
static opm_op *build(const scan *s, opm_op *reuse)
{
    const pair *kind_p = NULL, *name_p = NULL, *phase_p = NULL;
    for (size_t i = 0; i < s->n_pairs; i++) {
        const pair *v = &s->pairs[i];
        if (key_is(v, "kind")) kind_p = v;
        else if (key_is(v, "name")) name_p = v;
        else if (key_is(v, "phase")) phase_p = v;
        else if (key_is(v, "tensors") || key_is(v, "attrs")) return NULL;
    }
    if (!kind_p || kind_p->type != V_STRING || (name_p && name_p->type != V_STRING) ||
        (phase_p && phase_p->type != V_STRING))
        return NULL;
    char text[MAX_TEXT + 1];
    opm_kind kind;
    opm_phase phase = OPM_PHASE_INFERENCE;
    for (kind = 0; kind < OPM_KIND_COUNT; kind++) /* canonical names only, as opm_op_from_doc */
        if (key_eq(opm_kind_name(kind), kind_p->s, kind_p->s_len)) break;
    if (kind == OPM_KIND_COUNT) return NULL;
    if (phase_p) {
        memcpy(text, phase_p->s, phase_p->s_len);
        text[phase_p->s_len] = '\0';
        if (opm_phase_parse(text, &phase) || strcmp(opm_phase_name(phase), text)) return NULL;
    }
    const opm_kind_def *def = opm_kind_def_get(kind);
    if (!def->from_short) return NULL;
    if (name_p) {
        memcpy(text, name_p->s, name_p->s_len);
        text[name_p->s_len] = '\0';
    }
    opm_error scratch;
    const char *name = name_p ? text : opm_kind_name(kind);
    opm_op *op = reuse;
    if (reuse ? opm_op_reset(reuse, def, name, phase, &scratch) != 0
              : !(op = opm_op_new(name, kind, phase, &scratch)))
        return NULL;
    /* What the GEMM's short form would read, set without making its keys
     * attributes first: the same tensors from the same function. */
    int64_t mnk[3];
    opm_dtype dt;
    if (kind == OPM_KIND_GEMM && flat_gemm(s, kind_p, name_p, phase_p, mnk, &dt) == 0) {
        if (opm_gemm_short_tensors(op, 0, 1, mnk[0], mnk[1], mnk[2], dt, dt, dt, 0, 0, &scratch) ||
            opm_op_finalize(op, &scratch))
            goto fail;
        return op;
    }
    for (size_t i = 0; i < s->n_pairs; i++) {
        const pair *v = &s->pairs[i];
        if (v == kind_p || v == name_p || v == phase_p) continue;
        /* The setters' key check: the kind's short-form keys, dtype,
         * out_dtype and its attributes (repeats are refused by the scan). */
        if (!key_is(v, "dtype") && !key_is(v, "out_dtype") && !in_defs(v->key, v->key_len, def->short_keys) &&
            !in_defs(v->key, v->key_len, def->attrs))
            goto fail;
        if (v->key_len >= 48) goto fail; /* the setters' limit: the careful path says so */
        /* The fields each type reads, no more: a {0} initializer here is
         * a `rep stos` per attribute. */
        opm_attr_value a;
        int rc = 0;
        switch (v->type) {
        case V_STRING:
            a.type = OPM_ATTR_STRING;
            a.s = v->s;
            a.n = v->s_len;
            break;
        case V_INT: a.type = OPM_ATTR_INT, a.i = v->i; break;
        case V_BOOL: a.type = OPM_ATTR_BOOL, a.i = v->i; break;
        case V_INTS: a.type = OPM_ATTR_INTS, a.ints = s->ints + v->first, a.n = v->count; break;
        case V_LISTS:
            for (size_t j = 0; j < v->count && !rc; j++) {
                char sub[80];
                size_t l = v->first + j, n = v->key_len;
                memcpy(sub, v->key, n);
                sub[n++] = '[';
                if (j >= 10) sub[n++] = (char)('0' + j / 10);
                sub[n++] = (char)('0' + j % 10);
                sub[n++] = ']';
                if (n >= 48) goto fail;
                opm_attr_value e;
                e.type = OPM_ATTR_INTS;
                e.ints = s->ints + s->list_first[l];
                e.n = s->list_count[l];
                rc = opm_op_append_attr(op, sub, n, &e, &scratch);
            }
            if (rc) goto fail;
            continue;
        }
        if (opm_op_append_attr(op, v->key, v->key_len, &a, &scratch)) goto fail;
    }
    if (def->from_short(op, &scratch) || opm_op_finalize(op, &scratch)) goto fail;
    return op;
fail:
    if (op != reuse) opm_op_free(op);
    return NULL;
}

opm_op *opm_op_parse_json_line(const char *text, size_t len, const char *source, int line, opm_op *reuse,
                               opm_error *err)
{
    if (len <= 4096) {
        scan s;
        s.p = text;
        s.end = text + len;
        s.n_pairs = s.n_ints = s.n_lists = 0;
        if (scan_line(&s) == 0) {
            opm_op *op = build(&s, reuse);
            if (op) {
                opm_error_clear(err);
                return op;
            }
        }
    }
    opm_op_free(reuse);
    return opm_op_parse_string(text, len, OPM_FORMAT_JSON, source, line, err);
}
