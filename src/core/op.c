/* op.c — the operation object: storage of name, kind, phase, tensors and
 * typed attributes, with their accessors.  Knows nothing of any one kind;
 * validation and counting dispatch to src/ops/ through the kind table. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "../ops/kind.h"

typedef struct attr {
    char key[48];
    opm_attr_type type;
    int b;
    int64_t i;
    double d;
    char *s;
    int64_t *ints;
    size_t n;
} attr;

static const attr zero_attr;

struct opm_op {
    char *name;
    size_t name_cap;             /* bytes allocated for name (opm_op_reset reuses them) */
    opm_kind kind;
    const opm_kind_def *def;     /* the kind's table: built-in, or a registry's user kind */
    opm_phase phase;
    opm_tensor *tensors;
    size_t n_tensors, cap_tensors;
    attr *attrs;
    size_t n_attrs, cap_attrs;
    /* Counts computed once when a builder finishes the op (opm_op_finalize):
     * a roofline prediction is otherwise half counting.  Written only by
     * functions that take a non-const op, so concurrent predictions on one
     * finished op only read it; every mutator clears it. */
    opm_counts counts;
    int counts_ok;
};

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

opm_op *opm_op_new_def(const opm_kind_def *def, const char *name, opm_phase phase, opm_error *err)
{
    opm_error_clear(err);
    if (!def) {
        opm_err(err, OPM_EINVAL, "kind", "expected a known op kind");
        return NULL;
    }
    if ((unsigned)phase >= OPM_PHASE_COUNT) {
        opm_err(err, OPM_EINVAL, "phase", "expected a known phase");
        return NULL;
    }
    opm_op *op = calloc(1, sizeof *op);
    if (!op || !(op->name = dupstr(name ? name : def->name))) {
        free(op);
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    op->name_cap = strlen(op->name) + 1;
    op->kind = def->kind;
    op->def = def;
    op->phase = phase;
    return op;
}

opm_op *opm_op_new(const char *name, opm_kind kind, opm_phase phase, opm_error *err)
{
    /* Built-in kinds only: a user kind's ops come from its registry. */
    return opm_op_new_def((unsigned)kind < OPM_KIND_COUNT ? opm_kind_def_get(kind) : NULL, name, phase, err);
}

static void attr_clear(attr *a)
{
    /* Most attributes are numbers: no call for them. */
    if (a->s) free(a->s);
    if (a->ints) free(a->ints);
    a->s = NULL;
    a->ints = NULL;
    a->n = 0;
}

int opm_op_reset(opm_op *op, const opm_kind_def *def, const char *name, opm_phase phase, opm_error *err)
{
    opm_error_clear(err);
    if (!def) return opm_err(err, OPM_EINVAL, "kind", "expected a known op kind");
    if ((unsigned)phase >= OPM_PHASE_COUNT) return opm_err(err, OPM_EINVAL, "phase", "expected a known phase");
    if (!name) name = def->name;
    size_t n = strlen(name) + 1;
    if (n > op->name_cap) {
        char *p = realloc(op->name, n);
        if (!p) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        op->name = p;
        op->name_cap = n;
    }
    memcpy(op->name, name, n);
    for (size_t i = 0; i < op->n_attrs; i++) attr_clear(&op->attrs[i]);
    op->n_attrs = 0;
    op->n_tensors = 0;
    op->counts_ok = 0;
    op->kind = def->kind;
    op->def = def;
    op->phase = phase;
    return 0;
}

void opm_op_free(opm_op *op)
{
    if (!op) return;
    for (size_t i = 0; i < op->n_attrs; i++) attr_clear(&op->attrs[i]);
    free(op->attrs);
    free(op->tensors);
    free(op->name);
    free(op);
}

int opm_op_add_tensor(opm_op *op, opm_role role, const int64_t *shape, int rank,
                      opm_dtype dtype, const char *layout, opm_error *err)
{
    opm_error_clear(err);
    if ((unsigned)role >= OPM_ROLE_COUNT)
        return opm_err(err, OPM_EINVAL, "role", "expected input, weight, output, grad or workspace");
    if ((unsigned)dtype >= OPM_DTYPE_COUNT)
        return opm_err(err, OPM_EINVAL, "dtype", "expected a known dtype");
    if (rank < 0 || rank > OPM_MAX_RANK)
        return opm_err(err, OPM_EINVAL, "shape", "expected at most %d dimensions, got %d",
                       OPM_MAX_RANK, rank);
    for (int d = 0; d < rank; d++)
        if (shape[d] <= 0)
            return opm_err(err, OPM_EINVAL, "shape",
                           "expected positive dimensions, got %lld at position %d",
                           (long long)shape[d], d);
    op->counts_ok = 0;
    if (op->n_tensors == op->cap_tensors) {
        size_t cap = op->cap_tensors ? op->cap_tensors * 2 : 4;
        opm_tensor *t = realloc(op->tensors, cap * sizeof *t);
        if (!t) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        op->tensors = t;
        op->cap_tensors = cap;
    }
    opm_tensor *t = &op->tensors[op->n_tensors++];
    /* A copy of a zero tensor, not memset: gcc makes the 96-byte memset a
     * `rep stos`, whose start-up is most of a short-form line's tensor. */
    static const opm_tensor zero_tensor;
    *t = zero_tensor;
    t->role = role;
    t->dtype = dtype;
    t->rank = rank;
    /* at most OPM_MAX_RANK: a loop, not a memcpy of variable size (a `rep movs`) */
    for (int d = 0; d < rank; d++) t->shape[d] = shape[d];
    if (layout) opm_strlcpy(t->layout, layout, sizeof t->layout);
    return 0;
}

static attr *find_attr(const opm_op *op, const char *key)
{
    /* Counting looks attributes up by name on every call: the first byte,
     * then an inline compare (keys are a few bytes; a strcmp call costs
     * more than the compare). */
    for (size_t i = 0; i < op->n_attrs; i++)
        if (op->attrs[i].key[0] == key[0] && opm_str_equals(op->attrs[i].key, key)) return &op->attrs[i];
    return NULL;
}

/* The error for an attribute key the op's kind does not know, with the
 * closest valid name. */
static int unknown_attr(const opm_kind_def *def, const char *key, opm_error *err)
{
    char field[OPM_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "attrs.%s", key);
    const char *names[64];
    size_t n = opm_kind_attr_names(def, names, 63);
    names[n] = NULL;
    const char *hint = opm_closest(key, names);
    return opm_err(err, OPM_EINVAL, field, "unknown attribute for kind %s%s%s%s", def->name,
                   hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

/* Keys a setter accepts: the kind's attributes, and for a kind with a short
 * form its short-form keys (stored as attributes until from_short expands
 * them), their "key[i]" entries, dtype and out_dtype. */
static int key_known(const opm_kind_def *def, const char *key)
{
    /* The short-form keys first: a short form sets those most (m, n, k). */
    if (def->from_short) {
        size_t n = strcspn(key, "[");
        for (const opm_attr_def *a = def->short_keys; a && a->key; a++)
            if (a->key[0] == key[0] && strncmp(a->key, key, n) == 0 && a->key[n] == '\0') return 1;
        if (strcmp(key, "dtype") == 0 || strcmp(key, "out_dtype") == 0) return 1;
    }
    return opm_kind_find_attr(def, key) != NULL;
}

static attr *slot(opm_op *op, const char *key, opm_error *err)
{
    if (strlen(key) >= sizeof op->attrs[0].key) {
        opm_err(err, OPM_EINVAL, key, "attribute names are at most 47 bytes");
        return NULL;
    }
    const opm_kind_def *def = op->def;
    if (!key_known(def, key)) {
        unknown_attr(def, key, err);
        return NULL;
    }
    opm_error_clear(err);
    op->counts_ok = 0;
    attr *a = find_attr(op, key);
    if (a) {
        attr_clear(a);
        return a;
    }
    if (op->n_attrs == op->cap_attrs) {
        size_t cap = op->cap_attrs ? op->cap_attrs * 2 : 8;
        attr *p = realloc(op->attrs, cap * sizeof *p);
        if (!p) {
            opm_err(err, OPM_ENOMEM, NULL, "out of memory");
            return NULL;
        }
        op->attrs = p;
        op->cap_attrs = cap;
    }
    a = &op->attrs[op->n_attrs++];
    *a = zero_attr; /* not memset: see opm_op_add_tensor */
    opm_strlcpy(a->key, key, sizeof a->key);
    return a;
}

int opm_op_append_attr(opm_op *op, const char *key, size_t key_len, const opm_attr_value *v, opm_error *err)
{
    if (key_len >= sizeof op->attrs[0].key) return opm_err(err, OPM_EINVAL, NULL, "attribute names are at most 47 bytes");
    if (op->n_attrs == op->cap_attrs) {
        size_t cap = op->cap_attrs ? op->cap_attrs * 2 : 8;
        attr *p = realloc(op->attrs, cap * sizeof *p);
        if (!p) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        op->attrs = p;
        op->cap_attrs = cap;
    }
    attr *a = &op->attrs[op->n_attrs];
    *a = zero_attr; /* not memset: see opm_op_add_tensor */
    memcpy(a->key, key, key_len);
    a->key[key_len] = '\0';
    a->type = v->type;
    switch (v->type) {
    case OPM_ATTR_BOOL: a->b = v->i != 0; break;
    case OPM_ATTR_INT: a->i = v->i; break;
    case OPM_ATTR_DOUBLE: a->d = v->d; break;
    case OPM_ATTR_STRING:
        if (!(a->s = malloc(v->n + 1))) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        memcpy(a->s, v->s, v->n);
        a->s[v->n] = '\0';
        break;
    case OPM_ATTR_INTS:
        if (!(a->ints = malloc((v->n ? v->n : 1) * sizeof *a->ints)))
            return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        if (v->n) memcpy(a->ints, v->ints, v->n * sizeof *a->ints);
        a->n = v->n;
        break;
    }
    op->n_attrs++;
    op->counts_ok = 0;
    return 0;
}

/* The end of a mutation that began with counts_ok == had: an op whose
 * counts were kept (opm_op_finalize) keeps them, recounted; one whose
 * counts were not stays uncounted. */
static int recount_if_kept(opm_op *op, int had)
{
    if (had) opm_op_cache_counts(op);
    return 0;
}

int opm_op_set_bool(opm_op *op, const char *key, int value, opm_error *err)
{
    int had = op->counts_ok;
    attr *a = slot(op, key, err);
    if (!a) return err ? (int)err->code : OPM_EINVAL;
    a->type = OPM_ATTR_BOOL;
    a->b = value != 0;
    return recount_if_kept(op, had);
}

int opm_op_set_int(opm_op *op, const char *key, int64_t value, opm_error *err)
{
    int had = op->counts_ok;
    attr *a = slot(op, key, err);
    if (!a) return err ? (int)err->code : OPM_EINVAL;
    a->type = OPM_ATTR_INT;
    a->i = value;
    return recount_if_kept(op, had);
}

int opm_op_set_double(opm_op *op, const char *key, double value, opm_error *err)
{
    int had = op->counts_ok;
    attr *a = slot(op, key, err);
    if (!a) return err ? (int)err->code : OPM_EINVAL;
    a->type = OPM_ATTR_DOUBLE;
    a->d = value;
    return recount_if_kept(op, had);
}

int opm_op_set_string(opm_op *op, const char *key, const char *value, opm_error *err)
{
    int had = op->counts_ok;
    attr *a = slot(op, key, err);
    if (!a) return err ? (int)err->code : OPM_EINVAL;
    a->type = OPM_ATTR_STRING;
    if (!(a->s = dupstr(value))) {
        /* Not set: its slot goes, new or reused (slot freed the old value). */
        opm_op_unset_at(op, (size_t)(a - op->attrs));
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    return recount_if_kept(op, had);
}

int opm_op_set_ints(opm_op *op, const char *key, const int64_t *values, size_t count,
                    opm_error *err)
{
    int had = op->counts_ok;
    attr *a = slot(op, key, err);
    if (!a) return err ? (int)err->code : OPM_EINVAL;
    a->type = OPM_ATTR_INTS;
    a->ints = malloc((count ? count : 1) * sizeof *values);
    if (!a->ints) {
        opm_op_unset_at(op, (size_t)(a - op->attrs)); /* as in opm_op_set_string */
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    if (count) memcpy(a->ints, values, count * sizeof *values);
    a->n = count;
    return recount_if_kept(op, had);
}

void opm_op_unset_at(opm_op *op, size_t i)
{
    if (i >= op->n_attrs) return;
    attr *a = &op->attrs[i];
    op->counts_ok = 0;
    attr_clear(a);
    memmove(a, a + 1, (op->n_attrs - i - 1) * sizeof *a);
    op->n_attrs--;
}

size_t opm_op_attr_index(const opm_op *op, const char *key)
{
    const attr *a = find_attr(op, key);
    return a ? (size_t)(a - op->attrs) : OPM_NO_ATTR;
}

int opm_op_unset(opm_op *op, const char *key)
{
    attr *a = find_attr(op, key);
    if (!a) return 0;
    int had = op->counts_ok;
    opm_op_unset_at(op, (size_t)(a - op->attrs));
    recount_if_kept(op, had);
    return 1;
}

int opm_op_set_phase(opm_op *op, opm_phase phase)
{
    if ((unsigned)phase >= OPM_PHASE_COUNT) return OPM_EINVAL;
    int had = op->counts_ok;
    op->counts_ok = 0;
    op->phase = phase;
    return recount_if_kept(op, had);
}

opm_op *opm_op_clone(const opm_op *op, opm_error *err)
{
    opm_error_clear(err);
    opm_op *c = opm_op_new_def(op->def, op->name, op->phase, err);
    if (!c) return NULL;
    for (size_t i = 0; i < op->n_tensors; i++) {
        const opm_tensor *t = &op->tensors[i];
        if (opm_op_add_tensor(c, t->role, t->shape, t->rank, t->dtype, t->layout, err)) goto fail;
    }
    for (size_t i = 0; i < op->n_attrs; i++) {
        const attr *a = &op->attrs[i];
        int rc = 0;
        switch (a->type) {
        case OPM_ATTR_BOOL: rc = opm_op_set_bool(c, a->key, a->b, err); break;
        case OPM_ATTR_INT: rc = opm_op_set_int(c, a->key, a->i, err); break;
        case OPM_ATTR_DOUBLE: rc = opm_op_set_double(c, a->key, a->d, err); break;
        case OPM_ATTR_STRING: rc = opm_op_set_string(c, a->key, a->s, err); break;
        case OPM_ATTR_INTS: rc = opm_op_set_ints(c, a->key, a->ints, a->n, err); break;
        }
        if (rc) goto fail;
    }
    c->counts = op->counts; /* the same tensors and attributes count the same */
    c->counts_ok = op->counts_ok;
    return c;
fail:
    opm_op_free(c);
    return NULL;
}

const char *opm_op_name(const opm_op *op) { return op->name; }
opm_kind opm_op_kind(const opm_op *op) { return op->kind; }
const char *opm_op_kind_name(const opm_op *op) { return op->def->name; }
opm_phase opm_op_phase(const opm_op *op) { return op->phase; }
size_t opm_op_tensor_count(const opm_op *op) { return op->n_tensors; }
const opm_tensor *opm_op_tensor(const opm_op *op, size_t i)
{
    return i < op->n_tensors ? &op->tensors[i] : NULL;
}

opm_tensor *opm_op_tensor_mut(opm_op *op, size_t i)
{
    op->counts_ok = 0; /* the caller rewrites it; opm_op_cache_counts after */
    return i < op->n_tensors ? &op->tensors[i] : NULL;
}

const opm_tensor *opm_op_find_tensor(const opm_op *op, opm_role role, size_t nth)
{
    for (size_t i = 0; i < op->n_tensors; i++)
        if (op->tensors[i].role == role && nth-- == 0) return &op->tensors[i];
    return NULL;
}

size_t opm_op_attr_count(const opm_op *op) { return op->n_attrs; }
const char *opm_op_attr_key(const opm_op *op, size_t i) { return i < op->n_attrs ? op->attrs[i].key : NULL; }
opm_attr_type opm_op_attr_type(const opm_op *op, size_t i) { return op->attrs[i].type; }
int opm_op_has(const opm_op *op, const char *key) { return find_attr(op, key) != NULL; }

static int attr_bool(const attr *a, int dflt)
{
    if (!a) return dflt;
    if (a->type == OPM_ATTR_BOOL) return a->b;
    if (a->type == OPM_ATTR_INT) return a->i != 0;
    return dflt;
}

static int64_t attr_int(const attr *a, int64_t dflt)
{
    if (!a) return dflt;
    if (a->type == OPM_ATTR_INT) return a->i;
    if (a->type == OPM_ATTR_BOOL) return a->b;
    return dflt;
}

static size_t attr_ints(const attr *a, const int64_t **values)
{
    if (!a) return 0;
    if (a->type == OPM_ATTR_INTS) { *values = a->ints; return a->n; }
    if (a->type == OPM_ATTR_INT) { *values = &a->i; return 1; }
    return 0;
}

static const attr *attr_at(const opm_op *op, size_t i) { return i < op->n_attrs ? &op->attrs[i] : NULL; }
int opm_op_attr_bool_at(const opm_op *op, size_t i, int dflt) { return attr_bool(attr_at(op, i), dflt); }
int64_t opm_op_attr_int_at(const opm_op *op, size_t i, int64_t dflt) { return attr_int(attr_at(op, i), dflt); }
const char *opm_op_attr_string_at(const opm_op *op, size_t i, const char *dflt)
{
    const attr *a = attr_at(op, i);
    return a && a->type == OPM_ATTR_STRING ? a->s : dflt;
}
size_t opm_op_attr_ints_at(const opm_op *op, size_t i, const int64_t **values)
{
    return attr_ints(attr_at(op, i), values);
}

int opm_op_get_bool(const opm_op *op, const char *key, int dflt) { return attr_bool(find_attr(op, key), dflt); }

int64_t opm_op_get_int(const opm_op *op, const char *key, int64_t dflt) { return attr_int(find_attr(op, key), dflt); }

double opm_op_get_double(const opm_op *op, const char *key, double dflt)
{
    const attr *a = find_attr(op, key);
    if (!a) return dflt;
    if (a->type == OPM_ATTR_DOUBLE) return a->d;
    if (a->type == OPM_ATTR_INT) return (double)a->i;
    return dflt;
}

const char *opm_op_get_string(const opm_op *op, const char *key, const char *dflt)
{
    const attr *a = find_attr(op, key);
    return a && a->type == OPM_ATTR_STRING ? a->s : dflt;
}

size_t opm_op_get_ints(const opm_op *op, const char *key, const int64_t **values)
{
    return attr_ints(find_attr(op, key), values);
}

/* Attribute names and types are checked against the kind's table here, so
 * every kind gets the same "unknown key, did you mean" behaviour. */
/* The value of an attribute as text, for "got ..." in messages. */
static void attr_text(const attr *a, char *buf, size_t cap)
{
    switch (a->type) {
    case OPM_ATTR_BOOL: snprintf(buf, cap, "%s", a->b ? "true" : "false"); break;
    case OPM_ATTR_INT: snprintf(buf, cap, "%lld", (long long)a->i); break;
    case OPM_ATTR_DOUBLE: snprintf(buf, cap, "%.17g", a->d); break;
    case OPM_ATTR_STRING: snprintf(buf, cap, "'%.60s'", a->s); break;
    case OPM_ATTR_INTS: snprintf(buf, cap, "a list of %zu integers", a->n); break;
    }
}

/* What opm_op_validate checks for every kind: tensor counts per role,
 * attribute names, types and minimums. */
static int validate_common(const opm_op *op, opm_error *err)
{
    opm_error_clear(err);
    const opm_kind_def *def = op->def;
    size_t seen[OPM_ROLE_COUNT] = {0};
    for (size_t i = 0; i < op->n_tensors; i++) {
        opm_role r = op->tensors[i].role;
        int max = def->max_tensors[r];
        if (max >= 0 && ++seen[r] > (size_t)max) {
            char field[32];
            snprintf(field, sizeof field, "tensors[%zu]", i);
            if (r == OPM_ROLE_GRAD)
                return opm_err(err, OPM_EINVAL, field,
                               "expected no grad tensors for kind %s: gradients follow from the forward "
                               "tensors with phase: train_bwd", def->name);
            if (max == 0)
                return opm_err(err, OPM_EINVAL, field, "expected no %s tensor for kind %s",
                               opm_role_name(r), def->name);
            return opm_err(err, OPM_EINVAL, field, "expected at most %d %s tensor%s for kind %s, got another",
                           max, opm_role_name(r), max == 1 ? "" : "s", def->name);
        }
    }
    for (size_t i = 0; i < op->n_attrs; i++) {
        const attr *a = &op->attrs[i];
        const opm_attr_def *ad = opm_kind_find_attr(def, a->key);
        if (!ad) return unknown_attr(def, a->key, err);
        int okt = a->type == ad->type || (ad->type == OPM_ATTR_DOUBLE && a->type == OPM_ATTR_INT) ||
                  (ad->type == OPM_ATTR_INTS && a->type == OPM_ATTR_INT);
        int low = okt && ad->type == OPM_ATTR_INT && ad->min_int > 0 && a->i < ad->min_int;
        if (!okt || low) { /* the field's name only for the error: every line of a batch validates */
            char field[OPM_ERROR_FIELD_MAX];
            snprintf(field, sizeof field, "attrs.%s", a->key);
            if (low)
                return opm_err(err, OPM_EINVAL, field, "expected an integer >= %lld, got %lld",
                               (long long)ad->min_int, (long long)a->i);
            char got[96];
            attr_text(a, got, sizeof got);
            return opm_err(err, OPM_EINVAL, field, "expected %s, got %s", opm_attr_type_text(ad->type), got);
        }
    }
    return 0;
}

int opm_op_validate(const opm_op *op, opm_error *err)
{
    int rc = validate_common(op, err);
    return rc ? rc : op->def->validate(op, err);
}

static int count_now(const opm_op *op, opm_counts *out, opm_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = op->def->count(op, out, err);
    if (rc) return rc;
    /* Workspace is the kind-independent part of the footprint. */
    for (size_t i = 0; i < op->n_tensors; i++)
        if (op->tensors[i].role == OPM_ROLE_WORKSPACE) {
            int ok = 1;
            out->workspace_bytes = opm_add(out->workspace_bytes, opm_tensor_bytes(&op->tensors[i], &ok), &ok);
            if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "workspace bytes overflow 64 bits");
        }
    return 0;
}

int opm_op_count(const opm_op *op, opm_counts *out, opm_error *err)
{
    opm_error_clear(err);
    if (op->counts_ok) {
        *out = op->counts;
        return 0;
    }
    return count_now(op, out, err);
}

void opm_op_cache_counts(opm_op *op)
{
    opm_error scratch;
    op->counts_ok = 0;
    /* A count that fails is not cached: opm_op_count reports it each time. */
    if (count_now(op, &op->counts, &scratch) == 0) op->counts_ok = 1;
}

int opm_op_finalize(opm_op *op, opm_error *err)
{
    /* A kind whose count() makes every check its validate() makes: a count
     * that succeeds is a validation that succeeds, so the checks run once
     * (the GEMM's dims are a third of a short-form line's build).  Anything
     * that fails takes the path below, which says what validate says. */
    if (opm_kind_count_validates(op->def) && validate_common(op, err) == 0) {
        opm_error scratch;
        if (count_now(op, &op->counts, &scratch) == 0) {
            op->counts_ok = 1;
            return 0;
        }
    }
    int rc = opm_op_validate(op, err);
    if (rc == 0) opm_op_cache_counts(op);
    return rc;
}
