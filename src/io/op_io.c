/* op_io.c — operations to and from text (contract §1): the full form
 * (tensors + attrs) and each kind's short form, validated with errors that
 * point at file, line and column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "../ops/kind.h"
#include "doc.h"
#include "io_internal.h"

static const char *const full_keys[] = {"name", "kind", "phase", "tensors", "attrs", NULL};
static const char *const tensor_keys[] = {"role", "shape", "dtype", "layout", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(s, list[i]) == 0) return 1;
    return 0;
}

static int fail_at(const doc *d, const doc_node *n, opm_error *err, const char *field, const char *fmt,
                   const char *a, const char *b)
{
    opm_err(err, OPM_EINVAL, field, fmt, a, b);
    doc_error_at(d, n, err);
    return OPM_EINVAL;
}

static int unknown_key(const doc *d, const doc_node *key, const char *prefix, const char *const *valid,
                       const char *where, opm_error *err)
{
    const char *hint = opm_closest(key->text, valid);
    char tail[128] = "", field[OPM_ERROR_FIELD_MAX];
    if (hint) snprintf(tail, sizeof tail, " (did you mean '%s'?)", hint);
    snprintf(field, sizeof field, "%s%.60s", prefix, key->text);
    opm_err(err, OPM_EINVAL, field, "unknown key in %s%s", where, tail);
    doc_error_at(d, key, err);
    return OPM_EINVAL;
}

static int scalar_string(const doc *d, const doc_node *n, const char *field, const char **out,
                         opm_error *err)
{
    if (n->type != DOC_SCALAR || doc_is_null(n)) {
        char got[80];
        doc_describe(n, got, sizeof got);
        return fail_at(d, n, err, field, "expected a string, got %s%s", got, "");
    }
    *out = n->text;
    return 0;
}

static int read_name(const doc *d, const doc_node *n, const char *field, const char *const *names,
                     const char *what, const char **out, opm_error *err)
{
    if (scalar_string(d, n, field, out, err)) return OPM_EINVAL;
    for (size_t i = 0; names[i]; i++)
        if (strcmp(names[i], *out) == 0) return 0;
    const char *hint = opm_closest(*out, names);
    char tail[128] = "";
    if (hint) snprintf(tail, sizeof tail, " (did you mean '%s'?)", hint);
    opm_err(err, OPM_EINVAL, field, "expected %s, got '%s'%s", what, *out, tail);
    doc_error_at(d, n, err);
    return OPM_EINVAL;
}

/* A list of non-negative dims; `positive` rejects zeros too. */
static int read_ints(const doc *d, const doc_node *n, const char *field, int64_t *v, size_t cap,
                     size_t *count, int positive, opm_error *err)
{
    char got[80];
    if (n->type != DOC_SEQ) {
        doc_describe(n, got, sizeof got);
        return fail_at(d, n, err, field, "expected a list of integers, got %s%s", got, "");
    }
    if (n->n > cap) {
        opm_err(err, OPM_EINVAL, field, "expected at most %zu entries, got %zu", cap, n->n);
        doc_error_at(d, n, err);
        return OPM_EINVAL;
    }
    for (size_t i = 0; i < n->n; i++) {
        const doc_node *e = n->kids[i];
        if (doc_int(e, &v[i]) || (positive && v[i] <= 0)) {
            doc_describe(e, got, sizeof got);
            return fail_at(d, e, err, field, "expected %s, got %s",
                           positive ? "positive integer dimensions" : "integers", got);
        }
    }
    *count = n->n;
    return 0;
}

static int add_tensor(const doc *d, const doc_node *t, size_t idx, opm_op *op, opm_error *err)
{
    char field[OPM_ERROR_FIELD_MAX], f2[OPM_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "tensors[%zu]", idx);
    snprintf(f2, sizeof f2, "tensors[%zu].", idx);
    if (t->type != DOC_MAP) {
        char got[80];
        doc_describe(t, got, sizeof got);
        return fail_at(d, t, err, field, "expected a mapping with role, shape and dtype, got %s%s", got, "");
    }
    for (size_t i = 0; i < t->n; i++)
        if (!in_list(t->kids[2 * i]->text, tensor_keys))
            return unknown_key(d, t->kids[2 * i], f2, tensor_keys, "a tensor", err);
    const char *need[3] = {"role", "shape", "dtype"};
    for (int i = 0; i < 3; i++)
        if (!doc_get(t, need[i])) {
            snprintf(f2, sizeof f2, "%s.%s", field, need[i]);
            return fail_at(d, t, err, f2, "missing; every tensor needs role, shape and dtype%s%s", "", "");
        }
    const char *role_s, *dt_s, *layout = NULL;
    snprintf(f2, sizeof f2, "%s.role", field);
    if (read_name(d, doc_get(t, "role"), f2, opm_role_name_list, "a role (input, weight, output, grad, workspace)", &role_s, err))
        return OPM_EINVAL;
    snprintf(f2, sizeof f2, "%s.dtype", field);
    if (read_name(d, doc_get(t, "dtype"), f2, opm_dtype_name_list,
                  "a dtype (fp64 fp32 tf32 fp16 bf16 fp8_e4m3 fp8_e5m2 int8 int4 fp4_e2m1 int32 int64 bool)", &dt_s, err))
        return OPM_EINVAL;
    if (doc_get(t, "layout")) {
        snprintf(f2, sizeof f2, "%s.layout", field);
        if (scalar_string(d, doc_get(t, "layout"), f2, &layout, err)) return OPM_EINVAL;
    }
    int64_t shape[OPM_MAX_RANK];
    size_t rank;
    snprintf(f2, sizeof f2, "%s.shape", field);
    if (read_ints(d, doc_get(t, "shape"), f2, shape, OPM_MAX_RANK, &rank, 1, err)) return OPM_EINVAL;
    opm_role role;
    opm_dtype dt;
    opm_role_parse(role_s, &role);
    opm_dtype_parse(dt_s, &dt);
    if (opm_op_add_tensor(op, role, shape, (int)rank, dt, layout, err)) {
        doc_error_at(d, t, err);
        return OPM_EINVAL;
    }
    return 0;
}

/* A setter's status, its error (an unknown key, say) given the position of
 * the field it names. */
static int located(const doc *d, int rc, opm_error *err)
{
    if (rc) doc_locate_error(d, err);
    return rc;
}

/* Stores one attribute value with its natural type; lists of lists become
 * key[0], key[1], ... so short forms can name each entry. */
static int add_attr(const doc *d, const char *key, const doc_node *v, opm_op *op, opm_error *err)
{
    char field[OPM_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "attrs.%s", key);
    if (v->type == DOC_MAP) return fail_at(d, v, err, field, "expected a scalar or a list, got a mapping%s%s", "", "");
    if (v->type == DOC_SEQ) {
        if (v->n && v->kids[0]->type == DOC_SEQ) {
            for (size_t i = 0; i < v->n; i++) {
                char sub[64];
                int64_t vals[OPM_MAX_RANK];
                size_t n;
                snprintf(sub, sizeof sub, "%s[%zu]", key, i);
                if (read_ints(d, v->kids[i], sub, vals, OPM_MAX_RANK, &n, 0, err) ||
                    located(d, opm_op_set_ints(op, sub, vals, n, err), err))
                    return OPM_EINVAL;
            }
            return 0;
        }
        int64_t *vals = malloc((v->n ? v->n : 1) * sizeof *vals);
        size_t n;
        if (!vals) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        int rc = read_ints(d, v, key, vals, v->n, &n, 0, err) || located(d, opm_op_set_ints(op, key, vals, n, err), err);
        free(vals);
        return rc ? OPM_EINVAL : 0;
    }
    int b;
    int64_t i;
    double x;
    if (doc_is_null(v)) return fail_at(d, v, err, key, "expected a value, got nothing%s%s", "", "");
    if (doc_bool(v, &b) == 0) return located(d, opm_op_set_bool(op, key, b, err), err);
    if (!strchr(v->text, '.') && !strchr(v->text, 'e') && !strchr(v->text, 'E') && doc_int(v, &i) == 0)
        return located(d, opm_op_set_int(op, key, i, err), err);
    if (doc_double(v, &x) == 0) return located(d, opm_op_set_double(op, key, x, err), err);
    return located(d, opm_op_set_string(op, key, v->text, err), err);
}

static int key_in(const char *key, const opm_attr_def *defs)
{
    for (const opm_attr_def *a = defs; a && a->key; a++)
        if (strcmp(a->key, key) == 0) return 1;
    return 0;
}

opm_op *opm_op_from_doc(const doc *d, opm_error *err)
{
    const doc_node *root = doc_root(d);
    if (root->type != DOC_MAP) {
        char got[80];
        doc_describe(root, got, sizeof got);
        fail_at(d, root, err, NULL, "expected an operation (a mapping with kind and tensors), got %s%s", got, "");
        return NULL;
    }
    const doc_node *kn = doc_get(root, "kind");
    if (!kn) {
        fail_at(d, root, err, "kind", "missing; every operation needs a kind (see `opmodel ops`)%s%s", "", "");
        return NULL;
    }
    const char *kind_s, *name = NULL, *phase_s = "inference";
    if (read_name(d, kn, "kind", opm_kind_name_list, "a known op kind (see `opmodel ops`)", &kind_s, err)) return NULL;
    if (doc_get(root, "name") && scalar_string(d, doc_get(root, "name"), "name", &name, err)) return NULL;
    if (doc_get(root, "phase") &&
        read_name(d, doc_get(root, "phase"), "phase", opm_phase_name_list,
                  "a phase (train_fwd, train_bwd, prefill, decode, inference)", &phase_s, err))
        return NULL;
    opm_kind kind;
    opm_phase phase;
    opm_kind_parse(kind_s, &kind);
    opm_phase_parse(phase_s, &phase);
    const opm_kind_def *def = opm_kind_def_get(kind);
    opm_op *op = opm_op_new(name ? name : kind_s, kind, phase, err);
    if (!op) return NULL;

    const doc_node *tensors = doc_get(root, "tensors");
    if (tensors) {
        for (size_t i = 0; i < root->n; i++) {
            const doc_node *k = root->kids[2 * i];
            if (!in_list(k->text, full_keys)) {
                unknown_key(d, k, "", full_keys, "an operation", err);
                goto fail;
            }
        }
        if (tensors->type != DOC_SEQ || tensors->n == 0) {
            fail_at(d, tensors, err, "tensors", "expected a non-empty list of tensors%s%s", "", "");
            goto fail;
        }
        for (size_t i = 0; i < tensors->n; i++)
            if (add_tensor(d, tensors->kids[i], i, op, err)) goto fail;
        const doc_node *attrs = doc_get(root, "attrs");
        if (attrs && !doc_is_null(attrs)) {
            if (attrs->type != DOC_MAP) {
                fail_at(d, attrs, err, "attrs", "expected a mapping of attribute names to values%s%s", "", "");
                goto fail;
            }
            for (size_t i = 0; i < attrs->n; i++)
                if (add_attr(d, attrs->kids[2 * i]->text, attrs->kids[2 * i + 1], op, err)) goto fail;
        }
    } else {
        if (!def->from_short) {
            fail_at(d, root, err, "tensors", "missing; kind %s has no short form, give its tensors%s", kind_s, "");
            goto fail;
        }
        const char *valid[96];
        size_t nv = 0;
        static const char *const base[] = {"name", "kind", "phase", "dtype", "out_dtype", "tensors", "attrs"};
        for (size_t i = 0; i < sizeof base / sizeof *base; i++) valid[nv++] = base[i];
        for (const opm_attr_def *a = def->short_keys; a && a->key && nv < 94; a++) valid[nv++] = a->key;
        for (const opm_attr_def *a = def->attrs; a && a->key && nv < 94; a++) valid[nv++] = a->key;
        valid[nv] = NULL;
        for (size_t i = 0; i < root->n; i++) {
            const doc_node *k = root->kids[2 * i], *v = root->kids[2 * i + 1];
            if (!strcmp(k->text, "name") || !strcmp(k->text, "kind") || !strcmp(k->text, "phase"))
                continue;
            if (!strcmp(k->text, "attrs")) {
                /* Attributes may also be grouped under attrs, as in the full form. */
                if (doc_is_null(v)) continue;
                if (v->type != DOC_MAP) {
                    fail_at(d, v, err, "attrs", "expected a mapping of attribute names to values%s%s", "", "");
                    goto fail;
                }
                for (size_t j = 0; j < v->n; j++)
                    if (add_attr(d, v->kids[2 * j]->text, v->kids[2 * j + 1], op, err)) goto fail;
                continue;
            }
            if (strcmp(k->text, "dtype") && strcmp(k->text, "out_dtype") && !key_in(k->text, def->short_keys) &&
                !key_in(k->text, def->attrs)) {
                char where[96];
                snprintf(where, sizeof where, "the short form of %s", kind_s);
                unknown_key(d, k, "", valid, where, err);
                goto fail;
            }
            if (add_attr(d, k->text, v, op, err)) goto fail;
        }
        if (def->from_short(op, err)) {
            doc_locate_error(d, err);
            goto fail;
        }
    }
    if (opm_op_finalize(op, err)) {
        doc_locate_error(d, err);
        goto fail;
    }
    return op;
fail:
    opm_op_free(op);
    return NULL;
}

opm_format opm_guess_format(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        return c == '{' ? OPM_FORMAT_JSON : OPM_FORMAT_YAML;
    }
    return OPM_FORMAT_YAML;
}

opm_op *opm_op_parse_string(const char *text, size_t len, opm_format format, const char *source,
                            int first_line, opm_error *err)
{
    opm_error_clear(err);
    /* JSON is YAML too; libyaml gives positions for every node, so JSON
     * files go through it as well.  The yajl path serves JSONL streams,
     * where speed matters more than columns. */
    if (len > OPM_DOCUMENT_MAX_BYTES) {
        opm_err(err, OPM_EINVAL, NULL, "%s: expected a document of at most %zu MiB, got %zu bytes",
                source ? source : "<input>", OPM_DOCUMENT_MAX_BYTES >> 20, len);
        return NULL;
    }
    if (format == OPM_FORMAT_AUTO) format = OPM_FORMAT_YAML;
    doc *d = format == OPM_FORMAT_JSON ? doc_parse_json(text, len, source, first_line, err)
                                       : doc_parse_yaml(text, len, source, first_line, err);
    if (!d) return NULL;
    opm_op *op = opm_op_from_doc(d, err);
    doc_free(d);
    if (!op && format == OPM_FORMAT_JSON && err && err->code == OPM_EINVAL) {
        /* Errors are rare: parse the line again through libyaml, whose
         * nodes carry columns, so the message can point into the line. */
        opm_error again;
        doc *y = doc_parse_yaml(text, len, source, first_line, &again);
        if (y) {
            opm_op *op2 = opm_op_from_doc(y, &again);
            doc_free(y);
            if (!op2 && again.code == err->code) *err = again;
            opm_op_free(op2);
        }
    }
    return op;
}

opm_op *opm_op_parse_file(const char *path, opm_error *err)
{
    size_t len;
    char *text = opm_read_file(path, &len, err);
    if (!text) return NULL;
    opm_op *op = opm_op_parse_string(text, len, OPM_FORMAT_YAML, strcmp(path, "-") ? path : "<stdin>", 1, err);
    free(text);
    return op;
}
