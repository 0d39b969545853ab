/* doc.c — YAML (libyaml events) and JSON (yajl callbacks) into the positioned
 * document tree of doc.h, with an arena so a whole tree is freed at once. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include <yajl/yajl_parse.h>
#include "../core/internal.h"
#include "doc.h"

#define MAX_DEPTH 64

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
} chunk;

struct doc {
    chunk *chunks;
    doc_node *root;
    char *source;
};

static void *arena(doc *d, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    chunk *c = d->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 8192 ? n : 8192;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = d->chunks;
        c->used = 0;
        c->cap = cap;
        d->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

static char *arena_str(doc *d, const char *s, size_t n)
{
    char *p = arena(d, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static doc *doc_new(const char *source)
{
    doc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    size_t n = strlen(source ? source : "<input>");
    d->source = malloc(n + 1);
    if (!d->source) {
        free(d);
        return NULL;
    }
    memcpy(d->source, source ? source : "<input>", n + 1);
    return d;
}

void doc_free(doc *d)
{
    if (!d) return;
    for (chunk *c = d->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(d->source);
    free(d);
}

const doc_node *doc_root(const doc *d) { return d->root; }
const char *doc_source(const doc *d) { return d->source; }

/* Growable list of children while a collection is open. */
typedef struct kids {
    doc_node **v;
    size_t n, cap;
} kids;

static int kids_push(kids *k, doc_node *n)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 8;
        doc_node **p = realloc(k->v, cap * sizeof *p);
        if (!p) return -1;
        k->v = p;
        k->cap = cap;
    }
    k->v[k->n++] = n;
    return 0;
}

/* Duplicate keys, found in linear time: a map's first SMALL_MAP keys are
 * compared pairwise; from then on every key goes through an open-addressing
 * hash set of key nodes (an 80,000-key map costs 80,000 probes, not 3.2e9
 * strcmp calls). */
#define SMALL_MAP 16

typedef struct keyset {
    const doc_node **slot;
    size_t cap, n;
} keyset;

static size_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

/* Adds `key`; 1 (and *first) when an equal key is already there, 0 when it
 * was added, -1 when out of memory. */
static int keyset_add(keyset *s, const doc_node *key, const doc_node **first)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4 * SMALL_MAP;
        const doc_node **slot = calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) {
                size_t j = key_hash(s->slot[i]->text) & (cap - 1);
                while (slot[j]) j = (j + 1) & (cap - 1);
                slot[j] = s->slot[i];
            }
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    size_t j = key_hash(key->text) & (s->cap - 1);
    for (; s->slot[j]; j = (j + 1) & (s->cap - 1))
        if (strcmp(s->slot[j]->text, key->text) == 0) {
            *first = s->slot[j];
            return 1;
        }
    s->slot[j] = key;
    s->n++;
    return 0;
}

/* Whether key i of the pairs kv[0..2i] (key, value, key, value, ...)
 * repeats an earlier one: 1 with *first set, 0, or -1 when out of memory.
 * Called for i = 0, 1, 2, ... in order with the same set. */
static int key_repeats(keyset *s, doc_node *const *kv, size_t i, const doc_node **first)
{
    if (i < SMALL_MAP) {
        for (size_t b = 0; b < i; b++)
            if (strcmp(kv[2 * b]->text, kv[2 * i]->text) == 0) {
                *first = kv[2 * b];
                return 1;
            }
        return 0;
    }
    if (i == SMALL_MAP)
        for (size_t b = 0; b < i; b++)
            if (keyset_add(s, kv[2 * b], first) < 0) return -1;
    return keyset_add(s, kv[2 * i], first);
}

typedef struct yctx {
    yaml_parser_t p;
    doc *d;
    int first_line;
    int json;              /* the text looks like JSON: say so in syntax errors */
    const char *key;       /* the mapping key whose value is being built */
    opm_error *err;
} yctx;

static int yerr_at(yctx *y, size_t line, size_t col, const char *what)
{
    opm_err(y->err, OPM_EINVAL, NULL, "%s:%zu:%zu: %s", y->d->source, line + (size_t)y->first_line,
            col + 1, what);
    return -1;
}

static int parse_err(yctx *y)
{
    char msg[256];
    snprintf(msg, sizeof msg, "invalid %s: %s%s%s", y->json ? "JSON" : "YAML",
             y->p.problem ? y->p.problem : "syntax error",
             y->p.context ? " " : "", y->p.context ? y->p.context : "");
    return yerr_at(y, y->p.problem_mark.line, y->p.problem_mark.column, msg);
}

static doc_node *node_new(yctx *y, doc_type t, const yaml_mark_t *m)
{
    doc_node *n = arena(y->d, sizeof *n);
    if (!n) return NULL;
    memset(n, 0, sizeof *n);
    n->type = t;
    n->line = (int)m->line + y->first_line;
    n->col = (int)m->column + 1;
    return n;
}

/* Builds the node that starts with event `ev` (already parsed). */
static doc_node *build(yctx *y, yaml_event_t *ev, int depth)
{
    if (depth > MAX_DEPTH) {
        yerr_at(y, ev->start_mark.line, ev->start_mark.column, "document nested too deeply");
        return NULL;
    }
    if (ev->type == YAML_ALIAS_EVENT) {
        char msg[160];
        snprintf(msg, sizeof msg, "%.60s%sYAML aliases are not supported; expected a plain value",
                 y->key ? y->key : "", y->key ? ": " : "");
        yerr_at(y, ev->start_mark.line, ev->start_mark.column, msg);
        return NULL;
    }
    if (ev->type == YAML_SCALAR_EVENT) {
        if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length)) {
            /* "gemm\0xyz" must not read as gemm. */
            char msg[160];
            snprintf(msg, sizeof msg, "%.60s%sexpected text without NUL characters, got a string holding one",
                     y->key ? y->key : "", y->key ? ": " : "");
            yerr_at(y, ev->start_mark.line, ev->start_mark.column, msg);
            return NULL;
        }
        doc_node *n = node_new(y, DOC_SCALAR, &ev->start_mark);
        if (!n || !(n->text = arena_str(y->d, (const char *)ev->data.scalar.value, ev->data.scalar.length))) {
            opm_err(y->err, OPM_ENOMEM, NULL, "out of memory");
            return NULL;
        }
        n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE ||
                    ev->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
                    ev->data.scalar.style == YAML_FOLDED_SCALAR_STYLE;
        return n;
    }
    int is_map = ev->type == YAML_MAPPING_START_EVENT;
    if (!is_map && ev->type != YAML_SEQUENCE_START_EVENT) {
        yerr_at(y, ev->start_mark.line, ev->start_mark.column, "unexpected YAML event");
        return NULL;
    }
    doc_node *n = node_new(y, is_map ? DOC_MAP : DOC_SEQ, &ev->start_mark);
    if (!n) {
        opm_err(y->err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    kids k = {0};
    keyset keys = {0};
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&y->p, &e)) {
            parse_err(y);
            goto fail;
        }
        if (e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&e);
            break;
        }
        y->key = is_map && k.n % 2 == 1 ? k.v[k.n - 1]->text : NULL;
        doc_node *c = build(y, &e, depth + 1);
        if (c && is_map && k.n % 2 == 0 && c->type != DOC_SCALAR) {
            yerr_at(y, e.start_mark.line, e.start_mark.column, "mapping keys must be plain scalars");
            c = NULL;
        }
        yaml_event_delete(&e);
        if (!c) goto fail;
        if (kids_push(&k, c)) {
            opm_err(y->err, OPM_ENOMEM, NULL, "out of memory");
            goto fail;
        }
        const doc_node *first = NULL;
        int rep = is_map && k.n % 2 == 1 ? key_repeats(&keys, k.v, k.n / 2, &first) : 0;
        if (rep < 0) {
            opm_err(y->err, OPM_ENOMEM, NULL, "out of memory");
            goto fail;
        }
        if (rep) {
            char msg[200];
            snprintf(msg, sizeof msg, "%.60s: duplicate key; expected each key once (first at %d:%d)",
                     c->text, first->line, first->col);
            yerr_at(y, (size_t)(c->line - y->first_line), (size_t)(c->col - 1), msg);
            goto fail;
        }
    }
    n->n = is_map ? k.n / 2 : k.n;
    n->kids = arena(y->d, (k.n ? k.n : 1) * sizeof *n->kids);
    if (!n->kids) {
        opm_err(y->err, OPM_ENOMEM, NULL, "out of memory");
        goto fail;
    }
    if (k.n) memcpy(n->kids, k.v, k.n * sizeof *k.v);
    free(k.v);
    free(keys.slot);
    return n;
fail:
    free(k.v);
    free(keys.slot);
    return NULL;
}

doc *doc_parse_yaml(const char *text, size_t len, const char *source, int first_line, opm_error *err)
{
    yctx y = {.first_line = first_line > 0 ? first_line : 1, .err = err};
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') {
            y.json = text[i] == '{' || text[i] == '[';
            break;
        }
    if (!(y.d = doc_new(source))) {
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    /* libyaml marks are 0-based; first_line is the 1-based line of text[0]. */
    yaml_parser_initialize(&y.p);
    yaml_parser_set_input_string(&y.p, (const unsigned char *)text, len);
    yaml_event_t e;
    int state = 0; /* 0 before stream, 1 in stream, 2 got doc */
    for (;;) {
        if (!yaml_parser_parse(&y.p, &e)) {
            parse_err(&y);
            goto fail;
        }
        yaml_event_type_t t = e.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&e);
            break;
        }
        if (t == YAML_DOCUMENT_START_EVENT || t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
            if (t == YAML_DOCUMENT_START_EVENT && y.d->root) {
                yerr_at(&y, e.start_mark.line, e.start_mark.column,
                        "expected one document, found a second");
                yaml_event_delete(&e);
                goto fail;
            }
            yaml_event_delete(&e);
            continue;
        }
        doc_node *n = build(&y, &e, 0);
        yaml_event_delete(&e);
        if (!n) goto fail;
        y.d->root = n;
        state = 2;
    }
    (void)state;
    yaml_parser_delete(&y.p);
    if (!y.d->root) {
        opm_err(err, OPM_EINVAL, NULL, "%s:%d:1: expected a document, got empty input", y.d->source,
                y.first_line);
        doc_free(y.d);
        return NULL;
    }
    return y.d;
fail:
    yaml_parser_delete(&y.p);
    doc_free(y.d);
    return NULL;
}

/* ---- JSON through yajl ----
 * One JSONL line per call on the batch path, so this builds the tree
 * straight from yajl's callbacks into the arena: no intermediate objects. */

typedef struct jctx {
    doc *d;
    int line;
    int depth;
    kids pending;          /* children of every open collection, in order */
    size_t starts[MAX_DEPTH + 2];
    doc_node *open[MAX_DEPTH + 2];
    int oom, too_deep, nul;
    char dup[80];
} jctx;

static doc_node *jnode(jctx *j, doc_type t)
{
    doc_node *n = arena(j->d, sizeof *n);
    if (!n) {
        j->oom = 1;
        return NULL;
    }
    memset(n, 0, sizeof *n);
    n->type = t;
    n->line = j->line;
    return n;
}

static int jpush(jctx *j, doc_node *n)
{
    if (!n) return 0;
    if (j->depth == 0) {
        j->d->root = n;
        return 1;
    }
    if (kids_push(&j->pending, n)) {
        j->oom = 1;
        return 0;
    }
    return 1;
}

static int jscalar(jctx *j, const char *s, size_t len, int quoted)
{
    if (memchr(s, '\0', len)) { /* "gemm\u0000xyz" must not read as gemm */
        j->nul = 1;
        return 0;
    }
    doc_node *n = jnode(j, DOC_SCALAR);
    if (!n || !(n->text = arena_str(j->d, s, len))) {
        j->oom = 1;
        return 0;
    }
    n->quoted = quoted;
    return jpush(j, n);
}

static int j_null(void *c) { return jscalar(c, "null", 4, 0); }
static int j_bool(void *c, int b) { return jscalar(c, b ? "true" : "false", b ? 4 : 5, 0); }
static int j_number(void *c, const char *s, size_t len) { return jscalar(c, s, len, 0); }
static int j_string(void *c, const unsigned char *s, size_t len) { return jscalar(c, (const char *)s, len, 1); }

static int j_open(jctx *j, doc_type t)
{
    if (j->depth > MAX_DEPTH) {
        j->too_deep = 1;
        return 0;
    }
    doc_node *n = jnode(j, t);
    if (!n || !jpush(j, n)) return 0;
    j->depth++;
    j->open[j->depth] = n;
    j->starts[j->depth] = j->pending.n;
    return 1;
}

static int j_close(jctx *j)
{
    doc_node *n = j->open[j->depth];
    size_t start = j->starts[j->depth], count = j->pending.n - start;
    n->kids = arena(j->d, (count ? count : 1) * sizeof *n->kids);
    if (!n->kids) {
        j->oom = 1;
        return 0;
    }
    if (count) memcpy(n->kids, j->pending.v + start, count * sizeof *n->kids);
    n->n = n->type == DOC_MAP ? count / 2 : count;
    if (n->type == DOC_MAP) {
        keyset keys = {0};
        const doc_node *first;
        int rep = 0;
        for (size_t a = 0; a < n->n && !rep; a++)
            if ((rep = key_repeats(&keys, n->kids, a, &first)) > 0)
                snprintf(j->dup, sizeof j->dup, "%.60s", n->kids[2 * a]->text);
        free(keys.slot);
        if (rep < 0) j->oom = 1;
        if (rep) return 0;
    }
    j->pending.n = start;
    j->depth--;
    return 1;
}

static int j_start_map(void *c) { return j_open(c, DOC_MAP); }
static int j_start_array(void *c) { return j_open(c, DOC_SEQ); }
static int j_end(void *c) { return j_close(c); }
static int j_key(void *c, const unsigned char *s, size_t len) { return jscalar(c, (const char *)s, len, 1); }

static const yajl_callbacks json_callbacks = {
    j_null, j_bool, NULL, NULL, j_number, j_string, j_start_map, j_key, j_end, j_start_array, j_end,
};

static int blank(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '\n') return 0;
    return 1;
}

doc *doc_parse_json(const char *text, size_t len, const char *source, int first_line, opm_error *err)
{
    doc *d = doc_new(source);
    if (!d) {
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    jctx j = {.d = d, .line = first_line};
    yajl_handle h = yajl_alloc(&json_callbacks, NULL, &j);
    if (!h) {
        doc_free(d);
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
    if (st == yajl_status_ok) st = yajl_complete_parse(h);
    if (st != yajl_status_ok || !d->root) {
        size_t off = yajl_get_bytes_consumed(h);
        if (off > len) off = len;
        int line = first_line, col = 1;
        for (size_t i = 0; i < off; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        if (j.oom) {
            opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        } else if (j.too_deep) {
            opm_err(err, OPM_EINVAL, NULL, "%s:%d:%d: JSON nested too deeply", d->source, line, col);
        } else if (j.nul) {
            opm_err(err, OPM_EINVAL, NULL, "%s:%d:%d: expected text without NUL characters, got a string holding one",
                    d->source, line, col);
        } else if (j.dup[0]) {
            opm_err(err, OPM_EINVAL, NULL, "%s:%d:%d: %s: duplicate key; expected each key once", d->source,
                    line, col, j.dup);
        } else if (st == yajl_status_ok || blank(text, len)) {
            opm_err(err, OPM_EINVAL, NULL, "%s:%d:1: expected a document, got empty input", d->source, first_line);
        } else {
            unsigned char *msg = yajl_get_error(h, 0, (const unsigned char *)text, len);
            char *nl = msg ? strchr((char *)msg, '\n') : NULL;
            if (nl) *nl = '\0';
            opm_err(err, OPM_EINVAL, NULL, "%s:%d:%d: invalid JSON: %s", d->source, line, col,
                    msg ? (const char *)msg : "syntax error");
            if (msg) yajl_free_error(h, msg);
        }
        yajl_free(h);
        free(j.pending.v);
        doc_free(d);
        return NULL;
    }
    yajl_free(h);
    free(j.pending.v);
    return d;
}

/* ---- lookup and scalars ---- */

const doc_node *doc_get(const doc_node *map, const char *key)
{
    if (!map || map->type != DOC_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->kids[2 * i]->text, key) == 0) return map->kids[2 * i + 1];
    return NULL;
}

/* Walks as far as the path goes; *complete tells whether it went all the way. */
static const doc_node *walk(const doc_node *n, const char *path, int *complete)
{
    const doc_node *last = n;
    *complete = 0;
    while (*path && n) {
        if (*path == '.') path++;
        if (*path == '[') {
            char *end;
            unsigned long idx = strtoul(path + 1, &end, 10);
            if (*end != ']' || n->type != DOC_SEQ || idx >= n->n) return last;
            n = n->kids[idx];
            path = end + 1;
        } else {
            size_t len = strcspn(path, ".[");
            char key[OPM_ERROR_FIELD_MAX];
            if (len >= sizeof key) return last;
            memcpy(key, path, len);
            key[len] = '\0';
            const doc_node *v = doc_get(n, key);
            if (!v) return last;
            n = v;
            path += len;
        }
        last = n;
    }
    *complete = !*path;
    return last;
}

const doc_node *doc_find(const doc_node *root, const char *path)
{
    int complete;
    const doc_node *n = walk(root, path, &complete);
    return complete ? n : NULL;
}

void doc_error_at(const doc *d, const doc_node *node, opm_error *err)
{
    if (!err) return;
    char pre[600];
    if (node && node->col > 0)
        snprintf(pre, sizeof pre, "%s:%d:%d", d->source, node->line, node->col);
    else
        snprintf(pre, sizeof pre, "%s:%d", d->source, node ? node->line : 1);
    opm_err_prefix(err, pre);
}

void doc_locate_error(const doc *d, opm_error *err)
{
    if (!err) return;
    const doc_node *n = d->root;
    if (err->field[0]) {
        int complete;
        n = walk(d->root, err->field, &complete);
        /* Short forms keep attributes at the top level. */
        if (!complete && strncmp(err->field, "attrs.", 6) == 0) {
            const doc_node *alt = walk(d->root, err->field + 6, &complete);
            if (complete) n = alt;
        }
    }
    doc_error_at(d, n, err);
}

int doc_is_null(const doc_node *n)
{
    return n->type == DOC_SCALAR && !n->quoted &&
           (!*n->text || !strcmp(n->text, "null") || !strcmp(n->text, "~") || !strcmp(n->text, "Null") ||
            !strcmp(n->text, "NULL"));
}

int doc_int(const doc_node *n, int64_t *out)
{
    if (n->type != DOC_SCALAR || n->quoted || !*n->text) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(n->text, &end, 10);
    if (*end == '\0' && errno == 0) {
        *out = v;
        return 0;
    }
    /* 1e6 is an integer too when it is exactly one. */
    double dv;
    if (doc_double(n, &dv) == 0 && dv == floor(dv) && fabs(dv) < 9.2e18) {
        *out = (int64_t)dv;
        return 0;
    }
    return -1;
}

int doc_double(const doc_node *n, double *out)
{
    if (n->type != DOC_SCALAR || n->quoted || !*n->text) return -1;
    char *end;
    errno = 0;
    double v = strtod(n->text, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int doc_bool(const doc_node *n, int *out)
{
    if (n->type != DOC_SCALAR || n->quoted) return -1;
    const char *t = n->text;
    if (!strcmp(t, "true") || !strcmp(t, "True") || !strcmp(t, "TRUE")) { *out = 1; return 0; }
    if (!strcmp(t, "false") || !strcmp(t, "False") || !strcmp(t, "FALSE")) { *out = 0; return 0; }
    return -1;
}

void doc_describe(const doc_node *n, char *buf, size_t cap)
{
    if (n->type == DOC_MAP) snprintf(buf, cap, "a mapping");
    else if (n->type == DOC_SEQ) snprintf(buf, cap, "a list");
    else if (doc_is_null(n)) snprintf(buf, cap, "nothing");
    else snprintf(buf, cap, "'%.60s'", n->text);
}

/* ---- building ---- */

doc *doc_new_empty(const char *source) { return doc_new(source); }
void doc_set_root(doc *d, doc_node *root) { d->root = root; }

doc_node *doc_new_scalar(doc *d, const char *text, int quoted)
{
    doc_node *n = arena(d, sizeof *n);
    if (!n) return NULL;
    memset(n, 0, sizeof *n);
    n->type = DOC_SCALAR;
    n->quoted = quoted;
    n->text = arena_str(d, text, strlen(text));
    return n->text ? n : NULL;
}

doc_node *doc_new_collection(doc *d, doc_type type)
{
    doc_node *n = arena(d, sizeof *n);
    if (!n) return NULL;
    memset(n, 0, sizeof *n);
    n->type = type;
    return n;
}

/* Capacity is kept implicit: kids arrays grow at powers of two. */
static size_t cap_for(size_t n)
{
    size_t c = 4;
    while (c < n) c *= 2;
    return c;
}

int doc_append(doc *d, doc_node *coll, const char *key, doc_node *value)
{
    if (!value) return -1;
    size_t per = coll->type == DOC_MAP ? 2 : 1, used = coll->n * per;
    if (used == 0 || used + per > cap_for(used)) {
        size_t cap = cap_for(used + per);
        doc_node **k = arena(d, cap * sizeof *k);
        if (!k) return -1;
        if (used) memcpy(k, coll->kids, used * sizeof *k);
        coll->kids = k;
    }
    if (coll->type == DOC_MAP) {
        doc_node *kn = doc_new_scalar(d, key, 0);
        if (!kn) return -1;
        coll->kids[used] = kn;
        coll->kids[used + 1] = value;
    } else {
        coll->kids[used] = value;
    }
    coll->n++;
    return 0;
}

int opm_read_line(FILE *f, char **buf, size_t *cap, size_t *len)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (n >= OPM_DOCUMENT_MAX_BYTES) return -1;
        if (n + 1 >= *cap) {
            size_t grown = *cap ? 2 * *cap : 4096;
            char *p = realloc(*buf, grown);
            if (!p) return -2;
            *buf = p;
            *cap = grown;
        }
        (*buf)[n++] = (char)c;
    }
    if (c == EOF && n == 0) return 0;
    if (!*buf && !(*buf = malloc(*cap = 4096))) return -2;
    (*buf)[n] = '\0';
    *len = n;
    return 1;
}
