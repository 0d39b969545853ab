/* gemm.c — the GEMM family: `gemm` (C = A·B, A may carry leading dims that
 * fold into M, as nn.Linear does) and `batched_gemm` (batch on both sides, or
 * a weight broadcast over the batch).
 *
 * Counts, with b = batch, bias as a vector of N in the output dtype:
 *   forward   matrix 2·b·M·N·K, vector b·M·N (bias add);
 *             reads A, B, bias; writes C.
 *   train_bwd matrix 4·b·M·N·K (dA = dC·Bᵀ and dB = Aᵀ·dC), vector b·M·N (dbias);
 *             reads dC, A, B; writes dA, dB, dbias. */
#include <string.h>
#include "kind.h"

typedef struct gemm_dims {
    uint64_t batch, m, n, k;
    const opm_tensor *a, *b, *c, *bias;
    int bias_attr;
} gemm_dims;

static int dims(const opm_op *op, int batched, gemm_dims *g, opm_error *err)
{
    memset(g, 0, sizeof *g);
    int min_rank = batched ? 3 : 2;
    if (!(g->a = opm_need_tensor(op, OPM_ROLE_INPUT, 0, min_rank, OPM_MAX_RANK, "input A", err)))
        return OPM_EINVAL;
    if (!(g->b = opm_need_tensor(op, OPM_ROLE_WEIGHT, 0, 2, batched ? OPM_MAX_RANK : 2, "weight B", err)))
        return OPM_EINVAL;
    if (!(g->c = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 1, OPM_MAX_RANK, "output C", err)))
        return OPM_EINVAL;
    int ta = opm_op_get_bool(op, "transpose_a", 0), tb = opm_op_get_bool(op, "transpose_b", 0);
    const opm_tensor *a = g->a, *b = g->b;
    int64_t m = ta ? a->shape[a->rank - 1] : a->shape[a->rank - 2];
    int64_t ka = ta ? a->shape[a->rank - 2] : a->shape[a->rank - 1];
    int64_t kb = tb ? b->shape[b->rank - 1] : b->shape[b->rank - 2];
    int64_t n = tb ? b->shape[b->rank - 2] : b->shape[b->rank - 1];
    char f[OPM_ERROR_FIELD_MAX];
    if (ka != kb) {
        opm_tensor_field(op, b, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f,
                       "expected the weight's inner dimension to equal the input's K = %lld, got %lld",
                       (long long)ka, (long long)kb);
    }
    int ok = 1;
    uint64_t lead = 1;
    for (int d = 0; d < a->rank - 2; d++) lead = opm_mul(lead, (uint64_t)a->shape[d], &ok);
    if (batched && b->rank > 2) {
        int same = b->rank == a->rank;
        for (int d = 0; same && d < a->rank - 2; d++) same = a->shape[d] == b->shape[d];
        if (!same) {
            opm_tensor_field(op, b, ".shape", f, sizeof f);
            return opm_err(err, OPM_EINVAL, f,
                           "expected the weight's batch dimensions to equal the input's (or none, to broadcast)");
        }
    }
    int64_t want[OPM_MAX_RANK];
    for (int d = 0; d < a->rank - 2; d++) want[d] = a->shape[d];
    want[a->rank - 2] = m;
    want[a->rank - 1] = n;
    if (opm_expect_shape(op, g->c, want, a->rank, err)) return OPM_EINVAL;
    g->bias = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 1);
    if (g->bias && !(g->bias->rank == 1 && g->bias->shape[0] == n)) {
        int64_t bs = n;
        return opm_expect_shape(op, g->bias, &bs, 1, err);
    }
    g->bias_attr = opm_op_get_bool(op, "bias", 0) && !g->bias;
    if (batched) {
        g->batch = lead;
        g->m = (uint64_t)m;
    } else {
        g->batch = 1;
        g->m = opm_mul(lead, (uint64_t)m, &ok);
    }
    g->n = (uint64_t)n;
    g->k = (uint64_t)ka;
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "tensors", "dimensions overflow 64 bits");
    return 0;
}

static int count(const opm_op *op, int batched, opm_counts *c, opm_error *err)
{
    gemm_dims g;
    if (dims(op, batched, &g, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t mnk = opm_mul(opm_mul(opm_mul(g.batch, g.m, &ok), g.n, &ok), g.k, &ok);
    uint64_t mn = opm_mul(opm_mul(g.batch, g.m, &ok), g.n, &ok);
    uint64_t a = opm_tensor_bytes(g.a, &ok), b = opm_tensor_bytes(g.b, &ok);
    uint64_t cb = opm_tensor_bytes(g.c, &ok);
    uint64_t bias = g.bias ? opm_tensor_bytes(g.bias, &ok)
                   : g.bias_attr ? opm_bytes(g.n, g.c->dtype, &ok) : 0;
    int has_bias = g.bias || g.bias_attr;
    c->compute_dtype = g.a->dtype;
    c->weight_bytes = opm_add(b, bias, &ok);
    c->vector_flops = has_bias ? mn : 0;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->matrix_flops = opm_mul(4, mnk, &ok);
        c->read_bytes = opm_add(opm_add(cb, a, &ok), b, &ok);
        c->write_bytes = opm_add(opm_add(a, b, &ok), bias, &ok);
        c->input_bytes = opm_add(a, cb, &ok);
        c->output_bytes = c->write_bytes;
    } else {
        c->matrix_flops = opm_mul(2, mnk, &ok);
        c->read_bytes = opm_add(opm_add(a, b, &ok), bias, &ok);
        c->write_bytes = cb;
        c->input_bytes = a;
        c->output_bytes = cb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int gemm_validate(const opm_op *op, opm_error *err) { gemm_dims g; return dims(op, 0, &g, err); }
static int bgemm_validate(const opm_op *op, opm_error *err) { gemm_dims g; return dims(op, 1, &g, err); }
static int gemm_count(const opm_op *op, opm_counts *c, opm_error *err) { return count(op, 0, c, err); }
static int bgemm_count(const opm_op *op, opm_counts *c, opm_error *err) { return count(op, 1, c, err); }

static int from_short(opm_op *op, int batched, opm_error *err)
{
    int64_t batch = 1, m, n, k;
    opm_dtype dt, odt;
    if ((batched && opm_short_int(op, "batch", 1, 1, &batch, err)) ||
        opm_short_int(op, "m", 1, 0, &m, err) || opm_short_int(op, "n", 1, 0, &n, err) ||
        opm_short_int(op, "k", 1, 0, &k, err) || opm_short_dtypes(op, &dt, &odt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int ta = opm_op_get_bool(op, "transpose_a", 0), tb = opm_op_get_bool(op, "transpose_b", 0);
    int64_t a[3], b[3], c[3];
    int r = batched ? 3 : 2, o = batched ? 1 : 0;
    a[0] = b[0] = c[0] = batch;
    a[o] = ta ? k : m;
    a[o + 1] = ta ? m : k;
    b[o] = tb ? n : k;
    b[o + 1] = tb ? k : n;
    c[o] = m;
    c[o + 1] = n;
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, a, r, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, b, r, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, c, r, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}
static int gemm_short(opm_op *op, opm_error *err) { return from_short(op, 0, err); }
static int bgemm_short(opm_op *op, opm_error *err) { return from_short(op, 1, err); }

static const opm_attr_def gemm_attrs[] = {
    {"transpose_a", OPM_ATTR_BOOL, 0, "A is stored [K, M] (default false)"},
    {"transpose_b", OPM_ATTR_BOOL, 0, "B is stored [N, K] (default false)"},
    {"bias", OPM_ATTR_BOOL, 0, "add a bias vector of N in the output dtype (default false)"},
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def gemm_short_keys[] = {
    {"m", OPM_ATTR_INT, 1, "rows of A and C"},
    {"n", OPM_ATTR_INT, 1, "columns of B and C"},
    {"k", OPM_ATTR_INT, 1, "inner dimension"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def bgemm_short_keys[] = {
    {"batch", OPM_ATTR_INT, 1, "number of independent products"},
    {"m", OPM_ATTR_INT, 1, "rows of A and C"},
    {"n", OPM_ATTR_INT, 1, "columns of B and C"},
    {"k", OPM_ATTR_INT, 1, "inner dimension"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_gemm = {
    OPM_KIND_GEMM, "gemm", "matrix product C[M,N] = A[M,K]·B[K,N] (+ bias)",
    "input A [..., M, K] (leading dims fold into M), weight B [K, N], output C [..., M, N], "
    "optional weight bias [N]",
    gemm_attrs, gemm_short_keys, gemm_short, gemm_validate, gemm_count,
    {1, 2, 1, 0, -1},
};

const opm_kind_def opm_kind_batched_gemm = {
    OPM_KIND_BATCHED_GEMM, "batched_gemm", "batch of independent matrix products",
    "input A [B..., M, K], weight B [B..., K, N] or [K, N] (broadcast), output C [B..., M, N]",
    gemm_attrs, bgemm_short_keys, bgemm_short, bgemm_validate, bgemm_count,
    {1, 1, 1, 0, -1},
};

opm_op *opm_op_batched_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, opm_dtype dtype,
                            opm_error *err)
{
    opm_op *op = opm_op_new("batched_gemm", OPM_KIND_BATCHED_GEMM, OPM_PHASE_INFERENCE, err);
    if (!op) return NULL;
    int64_t a[3] = {batch, m, k}, b[3] = {batch, k, n}, c[3] = {batch, m, n};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, a, 3, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, b, 3, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, c, 3, dtype, NULL, err) || opm_op_validate(op, err)) {
        opm_op_free(op);
        return NULL;
    }
    return op;
}

opm_op *opm_op_gemm(int64_t m, int64_t n, int64_t k, opm_dtype dtype, opm_error *err)
{
    opm_op *op = opm_op_new("gemm", OPM_KIND_GEMM, OPM_PHASE_INFERENCE, err);
    if (!op) return NULL;
    int64_t a[2] = {m, k}, b[2] = {k, n}, c[2] = {m, n};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, a, 2, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, b, 2, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, c, 2, dtype, NULL, err) || opm_op_validate(op, err)) {
        opm_op_free(op);
        return NULL;
    }
    return op;
}

OPM_KIND_PENDING(opm_kind_grouped_gemm, OPM_KIND_GROUPED_GEMM, "grouped_gemm");
