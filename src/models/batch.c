/* batch.c — opm_predict_many (include/opmodel/batch.h): a table of rows, each
 * one op of a kind in its short form, predicted in one call.  Every row is
 * built through the kind's own short form (from_short + validate), so it is
 * the op a file with the same keys gives.  Plain GEMM and batched-GEMM rows
 * with their default columns skip the rebuild: one op built from the first
 * row has its three shapes rewritten in place for each later row (the same
 * op the short form builds; checked on the first row). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "../ops/kind.h"
#include "models.h"

static const char *const field_names[OPM_FIELD_COUNT + 1] = {
    "latency_s", "flops", "matrix_flops", "vector_flops", "hbm_read_bytes", "hbm_write_bytes",
    "arithmetic_intensity", "energy_j", "compute_time_s", "overhead_s", "bound", "engine",
    "input_bytes", "weight_bytes", "output_bytes", "workspace_bytes", NULL,
};

const char *opm_batch_field_name(opm_batch_field f)
{
    return (unsigned)f < OPM_FIELD_COUNT ? field_names[f] : "?";
}

int opm_batch_field_parse(const char *name, opm_batch_field *out)
{
    for (int i = 0; i < OPM_FIELD_COUNT; i++)
        if (strcmp(name, field_names[i]) == 0) {
            *out = (opm_batch_field)i;
            return 0;
        }
    return OPM_ENOTFOUND;
}

static const char *const keys_gemm[] = {"m", "n", "k", NULL};
static const char *const keys_bgemm[] = {"batch", "m", "n", "k", NULL};
static const char *const keys_grouped[] = {"groups", "m", "n", "k", NULL};
static const char *const keys_attention[] = {"batch", "seq_q", "seq_kv", "heads", "kv_heads", "head_dim", NULL};
static const char *const keys_conv[] = {"input[0]", "input[1]", "input[2]", "input[3]",
                                        "weight[0]", "weight[1]", "weight[2]", "weight[3]", NULL};
static const char *const keys_shape[] = {"shape", NULL};
static const char *const keys_ce[] = {"tokens", "vocab", NULL};
static const char *const keys_embedding[] = {"tokens", "vocab", "dim", NULL};
static const char *const keys_rope[] = {"batch", "seq", "heads", "kv_heads", "head_dim", NULL};
static const char *const keys_cconv[] = {"batch", "dim", "seqlen", "width", NULL};
static const char *const keys_ssd[] = {"batch", "seqlen", "heads", "head_dim", "state_dim", "groups", NULL};
static const char *const keys_dispatch[] = {"tokens", "hidden", "top_k", "experts", NULL};
static const char *const keys_combine[] = {"tokens", "hidden", "top_k", NULL};
static const char *const keys_moe[] = {"tokens", "hidden", "intermediate", "experts", "top_k", NULL};
static const char *const keys_none[] = {NULL};

const char *const *opm_batch_default_keys(opm_kind kind)
{
    switch (kind) {
    case OPM_KIND_GEMM: return keys_gemm;
    case OPM_KIND_BATCHED_GEMM: return keys_bgemm;
    case OPM_KIND_GROUPED_GEMM: return keys_grouped;
    case OPM_KIND_ATTENTION:
    case OPM_KIND_ATTENTION_PREFILL:
    case OPM_KIND_ATTENTION_DECODE: return keys_attention;
    case OPM_KIND_CONV: return keys_conv;
    case OPM_KIND_SOFTMAX:
    case OPM_KIND_LAYERNORM:
    case OPM_KIND_RMSNORM:
    case OPM_KIND_BATCHNORM:
    case OPM_KIND_GROUPNORM:
    case OPM_KIND_INSTANCENORM:
    case OPM_KIND_ELEMENTWISE:
    case OPM_KIND_REDUCTION:
    case OPM_KIND_COPY: return keys_shape;
    case OPM_KIND_CROSS_ENTROPY: return keys_ce;
    case OPM_KIND_EMBEDDING: return keys_embedding;
    case OPM_KIND_ROPE: return keys_rope;
    case OPM_KIND_CAUSAL_CONV1D: return keys_cconv;
    case OPM_KIND_MAMBA_SSD: return keys_ssd;
    case OPM_KIND_MOE_DISPATCH: return keys_dispatch;
    case OPM_KIND_MOE_COMBINE: return keys_combine;
    case OPM_KIND_FUSED_MOE: return keys_moe;
    case OPM_KIND_COUNT: break;
    }
    return keys_none;
}

#define MAX_COLS 64
#define MAX_LISTS 4

/* The columns resolved once per call: scalar keys, and list keys with the
 * column of each entry. */
typedef struct plan {
    size_t n_scalar;
    const char *scalar_key[MAX_COLS];
    size_t scalar_col[MAX_COLS];
    size_t n_lists;
    char list_key[MAX_LISTS][48];
    size_t list_len[MAX_LISTS];
    size_t list_col[MAX_LISTS][MAX_COLS];
} plan;

static const opm_attr_def *find_def(const opm_attr_def *defs, const char *key)
{
    for (const opm_attr_def *a = defs; a && a->key; a++)
        if (strcmp(a->key, key) == 0) return a;
    return NULL;
}

static int bad_key(opm_error *err, size_t j, const char *key, const opm_kind_def *def, const char *why)
{
    char field[32];
    snprintf(field, sizeof field, "keys[%zu]", j);
    return opm_err(err, OPM_EINVAL, field, "'%.60s': %s of kind %s (see `opmodel ops %s`)", key, why, def->name,
                   def->name);
}

/* The list-key slot for `key` (added when new); NULL when too many. */
static size_t *list_slot(plan *p, const char *key, size_t len, size_t *li)
{
    for (size_t i = 0; i < p->n_lists; i++)
        if (strlen(p->list_key[i]) == len && strncmp(p->list_key[i], key, len) == 0) {
            *li = i;
            return &p->list_len[i];
        }
    if (p->n_lists == MAX_LISTS) return NULL;
    *li = p->n_lists;
    memcpy(p->list_key[p->n_lists], key, len);
    p->list_key[p->n_lists][len] = '\0';
    p->list_len[p->n_lists] = 0;
    return &p->list_len[p->n_lists++];
}

static int make_plan(const opm_kind_def *def, const char *const *keys, size_t n_cols, plan *p, opm_error *err)
{
    memset(p, 0, sizeof *p);
    if (n_cols > MAX_COLS) return opm_err(err, OPM_EINVAL, "n_cols", "expected at most %d columns, got %zu", MAX_COLS, n_cols);
    const char *const *dflt = opm_batch_default_keys(def->kind);
    size_t n_keys = 0;
    if (!keys) { /* the first n_cols defaults (a list key among them takes the rest) */
        keys = dflt;
        while (keys[n_keys] && n_keys < n_cols) n_keys++;
    } else {
        while (keys[n_keys] && n_keys <= MAX_COLS) n_keys++;
    }
    /* Which entries of each list have a column, to find gaps and repeats. */
    unsigned char have[MAX_LISTS][MAX_COLS] = {{0}};
    size_t used = 0; /* columns given a key */
    for (size_t j = 0; j < n_keys; j++) {
        const char *key = keys[j];
        const char *br = strchr(key, '[');
        size_t len = br ? (size_t)(br - key) : strlen(key);
        char base[48];
        if (len >= sizeof base) return bad_key(err, j, key, def, "not a key");
        memcpy(base, key, len);
        base[len] = '\0';
        const opm_attr_def *ad = find_def(def->short_keys, base);
        if (!ad) ad = find_def(def->attrs, base);
        if (!ad) return bad_key(err, j, key, def, "not a short-form key or attribute");
        if (j >= n_cols) break;
        if (ad->type == OPM_ATTR_INT && !br) {
            for (size_t i = 0; i < p->n_scalar; i++)
                if (strcmp(p->scalar_key[i], key) == 0) return bad_key(err, j, key, def, "given twice");
            p->scalar_key[p->n_scalar] = key;
            p->scalar_col[p->n_scalar++] = j;
            used++;
            continue;
        }
        if (ad->type != OPM_ATTR_INTS) return bad_key(err, j, key, def, "not an integer key");
        size_t li, *n = list_slot(p, base, len, &li);
        if (!n) return bad_key(err, j, key, def, "one list key too many");
        if (!br) { /* a whole list: every remaining column */
            if (*n || j + 1 != n_keys) return bad_key(err, j, key, def, "a whole list key, not the last key");
            for (size_t c = j; c < n_cols; c++) {
                have[li][*n] = 1;
                p->list_col[li][(*n)++] = c;
            }
            used = n_cols;
            break;
        }
        char *end;
        unsigned long idx = strtoul(br + 1, &end, 10);
        if (end == br + 1 || strcmp(end, "]") != 0 || idx >= MAX_COLS)
            return bad_key(err, j, key, def, "not KEY[INDEX] with a small index");
        if (have[li][idx]) return bad_key(err, j, key, def, "given twice");
        have[li][idx] = 1;
        p->list_col[li][idx] = j;
        if (idx + 1 > *n) *n = idx + 1;
        used++;
    }
    if (used != n_cols || n_keys > n_cols)
        return opm_err(err, OPM_EINVAL, "keys", "expected one key per column: %zu columns, %zu keys%s", n_cols,
                       n_keys, keys == dflt ? " by default for this kind (pass keys)" : "");
    for (size_t li = 0; li < p->n_lists; li++)
        for (size_t i = 0; i < p->list_len[li]; i++)
            if (!have[li][i])
                return opm_err(err, OPM_EINVAL, "keys", "list %s has no column for entry %zu (give %s[0] .. %s[%zu])",
                               p->list_key[li], i, p->list_key[li], p->list_key[li], p->list_len[li] - 1);
    return 0;
}

/* The op of one row, built and validated like its short form in a file. */
static opm_op *build_row(const opm_kind_def *def, const opm_batch *spec, const plan *p, const int64_t *row,
                         opm_error *err)
{
    opm_op *op = spec->attrs ? opm_op_clone(spec->attrs, err) : opm_op_new(NULL, def->kind, spec->phase, err);
    if (!op) return NULL;
    opm_op_set_phase(op, spec->phase);
    if (opm_op_set_string(op, "dtype", opm_dtype_name(spec->dtype), err)) goto fail;
    for (size_t i = 0; i < p->n_scalar; i++)
        if (opm_op_set_int(op, p->scalar_key[i], row[p->scalar_col[i]], err)) goto fail;
    for (size_t li = 0; li < p->n_lists; li++) {
        int64_t v[MAX_COLS];
        for (size_t i = 0; i < p->list_len[li]; i++) v[i] = row[p->list_col[li][i]];
        if (opm_op_set_ints(op, p->list_key[li], v, p->list_len[li], err)) goto fail;
    }
    if (def->from_short(op, err) || opm_op_finalize(op, err)) goto fail;
    return op;
fail:
    opm_op_free(op);
    return NULL;
}

static double hbm_bytes(const opm_profile *pr, int write)
{
    for (size_t i = 0; i < pr->level_count; i++)
        if (strcmp(pr->levels[i].name, "hbm") == 0)
            return (double)(write ? pr->levels[i].write_bytes : pr->levels[i].read_bytes);
    return 0;
}

static double field_value(const opm_profile *pr, opm_batch_field f)
{
    switch (f) {
    case OPM_FIELD_LATENCY_S: return pr->latency_s;
    case OPM_FIELD_FLOPS: return (double)pr->flops;
    case OPM_FIELD_MATRIX_FLOPS: return (double)pr->matrix_flops;
    case OPM_FIELD_VECTOR_FLOPS: return (double)pr->vector_flops;
    case OPM_FIELD_HBM_READ_BYTES: return hbm_bytes(pr, 0);
    case OPM_FIELD_HBM_WRITE_BYTES: return hbm_bytes(pr, 1);
    case OPM_FIELD_ARITHMETIC_INTENSITY: return pr->arithmetic_intensity;
    case OPM_FIELD_ENERGY_J: return pr->energy_j;
    case OPM_FIELD_COMPUTE_TIME_S: return pr->compute_time_s;
    case OPM_FIELD_OVERHEAD_S: return pr->overhead_s;
    case OPM_FIELD_BOUND: return (double)pr->bound;
    case OPM_FIELD_ENGINE: return (double)pr->engine;
    case OPM_FIELD_INPUT_BYTES: return (double)pr->input_bytes;
    case OPM_FIELD_WEIGHT_BYTES: return (double)pr->weight_bytes;
    case OPM_FIELD_OUTPUT_BYTES: return (double)pr->output_bytes;
    case OPM_FIELD_WORKSPACE_BYTES: return (double)pr->workspace_bytes;
    case OPM_FIELD_COUNT: break;
    }
    return NAN;
}

/* The in-place GEMM path applies: default columns, no attributes. */
static int gemm_fast(const opm_batch *spec, const plan *p, size_t n_cols)
{
    size_t want = spec->kind == OPM_KIND_GEMM ? 3 : spec->kind == OPM_KIND_BATCHED_GEMM ? 4 : 0;
    if (!want || spec->keys || n_cols != want || p->n_lists) return 0;
    return !spec->attrs || opm_op_attr_count(spec->attrs) == 0;
}

/* Shapes of A, B, C for one row (batch, m, n, k or m, n, k). */
static void gemm_shapes(const int64_t *row, int batched, int64_t s[3][3], int *rank)
{
    int o = batched;
    int64_t m = row[o], n = row[o + 1], k = row[o + 2];
    *rank = 2 + batched;
    for (int t = 0; t < 3; t++) s[t][0] = row[0];
    s[0][o] = m, s[0][o + 1] = k;
    s[1][o] = k, s[1][o + 1] = n;
    s[2][o] = m, s[2][o + 1] = n;
}

/* The op built from the first row is the plain three-tensor GEMM whose
 * shapes gemm_shapes gives (so rewriting them builds later rows). */
static int gemm_template_ok(const opm_op *op, const int64_t *row, int batched)
{
    int64_t s[3][3];
    int r;
    gemm_shapes(row, batched, s, &r);
    if (opm_op_tensor_count(op) != 3 || opm_op_attr_count(op) != 0) return 0;
    for (size_t t = 0; t < 3; t++) {
        const opm_tensor *x = opm_op_tensor(op, t);
        if (x->rank != r || memcmp(x->shape, s[t], (size_t)r * sizeof s[t][0]) != 0) return 0;
    }
    return 1;
}

int opm_predict_many(const opm_model *model, const opm_hardware *hw, const opm_batch *spec,
                     const int64_t *rows, size_t n_rows, size_t n_cols,
                     const opm_batch_field *fields, size_t n_fields, double *out,
                     size_t *n_failed, opm_error *err)
{
    opm_error_clear(err);
    if (n_failed) *n_failed = 0;
    if (!hw || !spec || (n_rows && (!rows || (n_fields && !out))) || (n_fields && !fields))
        return opm_err(err, OPM_EINVAL, NULL, "expected hardware, a spec, rows, fields and an output array");
    if ((unsigned)spec->kind >= OPM_KIND_COUNT) return opm_err(err, OPM_EINVAL, "kind", "expected a known op kind");
    if ((unsigned)spec->phase >= OPM_PHASE_COUNT) return opm_err(err, OPM_EINVAL, "phase", "expected a known phase");
    if ((unsigned)spec->dtype >= OPM_DTYPE_COUNT) return opm_err(err, OPM_EINVAL, "dtype", "expected a known dtype");
    for (size_t j = 0; j < n_fields; j++)
        if ((unsigned)fields[j] >= OPM_FIELD_COUNT)
            return opm_err(err, OPM_EINVAL, "fields", "expected known fields, got %d at %zu", (int)fields[j], j);
    const opm_kind_def *def = opm_kind_def_get(spec->kind);
    if (!def->from_short)
        return opm_err(err, OPM_EUNSUPPORTED, "kind", "kind %s has no short form to build rows from", def->name);
    if (spec->attrs && (opm_op_kind(spec->attrs) != spec->kind || opm_op_tensor_count(spec->attrs)))
        return opm_err(err, OPM_EINVAL, "attrs", "expected an op of kind %s without tensors, holding attributes only",
                       def->name);
    if (!model) model = opm_model_find("roofline");
    plan p;
    if (make_plan(def, spec->keys, n_cols, &p, err)) return err ? (int)err->code : OPM_EINVAL;

    int batched = spec->kind == OPM_KIND_BATCHED_GEMM;
    opm_op *tmpl = NULL;
    if (gemm_fast(spec, &p, n_cols) && n_rows) {
        opm_error e0;
        tmpl = build_row(def, spec, &p, rows, &e0);
        if (tmpl && !gemm_template_ok(tmpl, rows, batched)) {
            opm_op_free(tmpl);
            tmpl = NULL;
        }
    }
    int rc = 0;
    opm_profile pr;
    for (size_t i = 0; i < n_rows; i++) {
        const int64_t *row = rows + i * n_cols;
        double *o = out + i * n_fields;
        opm_op *op = NULL;
        const opm_op *use = NULL;
        if (tmpl) {
            int positive = 1;
            for (size_t c = 0; c < n_cols; c++) positive &= row[c] > 0;
            if (positive) {
                int64_t s[3][3];
                int r;
                gemm_shapes(row, batched, s, &r);
                for (size_t t = 0; t < 3; t++) {
                    opm_tensor *x = opm_op_tensor_mut(tmpl, t); /* never NULL: gemm_template_ok */
                    for (int d = 0; x && d < r; d++) x->shape[d] = s[t][d];
                }
                opm_op_cache_counts(tmpl);
                use = tmpl;
            }
        }
        if (!use) use = op = build_row(def, spec, &p, row, err);
        int r = use ? model->predict(use, hw, &pr, err) : err ? (int)err->code : OPM_EINVAL;
        opm_op_free(op);
        if (r == 0) {
            for (size_t j = 0; j < n_fields; j++) o[j] = field_value(&pr, fields[j]);
            continue;
        }
        if (!spec->nan_on_error) {
            char where[40];
            snprintf(where, sizeof where, "row %zu", i);
            opm_err_prefix(err, where);
            rc = r;
            break;
        }
        for (size_t j = 0; j < n_fields; j++) o[j] = NAN;
        if (n_failed) (*n_failed)++;
    }
    opm_op_free(tmpl);
    return rc;
}
