/* gemm.c — the GEMM family: `gemm` (C = A·B, A may carry leading dims that
 * fold into M, as nn.Linear does), `batched_gemm` (batch on both sides, or a
 * weight broadcast over the batch) and `grouped_gemm` (G experts: expert g
 * multiplies its M_g rows of X by its own weight W_g, as MoE layers do);
 * and the low-precision variants of all three: fp8/int8 GEMM with per-tensor,
 * per-row or block scales, mxfp4/nvfp4 block-scaled GEMM, and int8/int4
 * weight-only GEMM with group-wise scales and zero points.
 *
 * Counts, with b = batch (gemm: 1; grouped: 1 and M = ΣM_g), bias as given or
 * a vector of N in the output dtype, every tensor touched once in its own
 * dtype (4-bit operands packed two per byte along K, rounded up per row):
 *   forward   matrix 2·b·M·N·K; vector b·M·N (bias add) + scale work (below);
 *             reads A, B (grouped: the weights of groups with rows), bias,
 *             scales; writes C.
 *   train_bwd matrix 4·b·M·N·K (dA = dC·Bᵀ and dB = Aᵀ·dC); vector b·M·N
 *             (dbias) + the same scale work; reads dC, A, B, scales; writes
 *             dA, dB (grouped: all G weight gradients), dbias.
 * Scales (attrs; bytes read with the operand, footprint with its role):
 *   scale_a/scale_b tensor: one fp32 per tensor (grouped weight: per expert);
 *   row: one fp32 per row of A / per output column of B;
 *   block [bo, bk]: ceil(outer/bo)·ceil(K/bk) fp32 per matrix;
 *   scale_format mx: one E8M0 byte per 32 K-elements of every fp8/fp4 operand;
 *   nv: one E4M3 byte per 16 K-elements of every fp4 operand + one fp32 each;
 *   int weights narrower than the activations (weight-only): N·ceil(K/g)
 *   scales per matrix in the activation dtype (+ as many zero points in the
 *   weight dtype with weight_zero_point), g = weight_group_size (default K).
 * Scale work (vector FLOPs): a tensor/row scale multiplies every output once
 * (b·M·N each); block scales rescale and accumulate each K-block partial sum
 * (b·M·N·ceil(K/bk)·(1 + block-scaled operands)); mx/nv scales are applied
 * inside the MMA (0); a weight narrower than the activations is converted
 * once per element read (1, or 2 with zero points).  The compute dtype is the
 * wider of A's and B's (A's on a tie). */
#include <stdio.h>
#include <string.h>
#include "kind.h"

/* ---- quantisation: scale layouts shared by the three kinds ---- */

enum { SC_NONE, SC_TENSOR, SC_ROW, SC_BLOCK, SC_MX, SC_NV, SC_GROUP };

typedef struct qside {
    int kind;
    uint64_t bo, bk;    /* SC_BLOCK: block rows (M or N) and depth (K) */
} qside;

typedef struct quant {
    qside a, b;
    int dequant_b;      /* B is converted to the compute dtype in the kernel */
    int zero;           /* SC_GROUP: zero points */
    uint64_t group;     /* SC_GROUP: group size along K */
    opm_dtype compute;
} quant;

static int low_float(opm_dtype d) { return d == OPM_FP8_E4M3 || d == OPM_FP8_E5M2 || d == OPM_FP4_E2M1; }
static int int_weight(opm_dtype d) { return d == OPM_INT8 || d == OPM_INT4; }
/* ceil(a / b), b >= 1; block and group sizes are usually powers of two, and
 * a shift keeps count() fast. */
static uint64_t cdiv(uint64_t a, uint64_t b)
{
    if ((b & (b - 1)) == 0) {
        unsigned sh = (unsigned)__builtin_ctzll(b);
        return (a >> sh) + ((a & (b - 1)) != 0);
    }
    return a / b + (a % b != 0);
}

/* The attributes the family reads, gathered in one pass over the op's
 * attributes (count() must stay fast: no lookup per absent key). */
enum { BLK, BLK_A, BLK_B };

typedef struct gattrs {
    int ta, tb, bias, zero, has_group, has_zero, has_gm;
    int64_t group;
    const char *fmt, *sa, *sb;
    const int64_t *blk[3], *gm;
    size_t nblk[3], ngm;
    int has_blk[3];
} gattrs;

/* The rest of a after the prefix, or NULL. */
static inline const char *after(const char *a, const char *prefix)
{
    while (*prefix && *a == *prefix) a++, prefix++;
    return *prefix ? NULL : a;
}

static void read_attrs(const opm_op *op, gattrs *g)
{
    /* Copies of zero values, not memset: gcc makes these memsets a
     * `rep stos`, slow to start, on every validation and count. */
    static const gattrs zero;
    *g = zero;
    size_t n = opm_op_attr_count(op);
    for (size_t i = 0; i < n; i++) {
        const char *k = opm_op_attr_key(op, i);
        switch (k[0]) {
        case 't':
            if (opm_str_equals(k, "transpose_a")) g->ta = opm_op_attr_bool_at(op, i, 0);
            else if (opm_str_equals(k, "transpose_b")) g->tb = opm_op_attr_bool_at(op, i, 0);
            break;
        case 'b':
            if (opm_str_equals(k, "bias")) g->bias = opm_op_attr_bool_at(op, i, 0);
            break;
        case 'g':
            if (opm_str_equals(k, "group_m")) {
                g->has_gm = 1;
                g->ngm = opm_op_attr_ints_at(op, i, &g->gm);
            }
            break;
        case 'w':
            if (opm_str_equals(k, "weight_group_size")) {
                g->has_group = 1;
                g->group = opm_op_attr_int_at(op, i, 0);
            } else if (opm_str_equals(k, "weight_zero_point")) {
                g->has_zero = 1;
                g->zero = opm_op_attr_bool_at(op, i, 0);
            }
            break;
        case 's': {
            const char *r = after(k, "scale_");
            if (!r) break;
            const char *blk = after(r, "block");
            if (r[0] == 'a' && !r[1]) g->sa = opm_op_attr_string_at(op, i, "?");
            else if (r[0] == 'b' && !r[1]) g->sb = opm_op_attr_string_at(op, i, "?");
            else if (r[0] == 'f' && opm_str_equals(r, "format")) g->fmt = opm_op_attr_string_at(op, i, "?");
            else if (blk) {
                int w = !blk[0] ? BLK
                        : opm_str_equals(blk, "_a") ? BLK_A
                        : opm_str_equals(blk, "_b") ? BLK_B : -1;
                if (w >= 0) {
                    g->has_blk[w] = 1;
                    g->nblk[w] = opm_op_attr_ints_at(op, i, &g->blk[w]);
                }
            }
            break;
        }
        default: break;
        }
    }
}

static int scale_kind(const char *s, const char *key, int *kind, opm_error *err)
{
    if (!s) {
        *kind = SC_NONE;
        return 0;
    }
    int k = s[0] == 'n' ? SC_NONE : s[0] == 't' ? SC_TENSOR : s[0] == 'r' ? SC_ROW : s[0] == 'b' ? SC_BLOCK : -1;
    static const char *const names[] = {"none", "tensor", "row", "block"};
    if (k >= 0 && opm_str_equals(s, names[k])) {
        *kind = k;
        return 0;
    }
    return opm_err(err, OPM_EINVAL, key, "expected none, tensor, row or block, got '%.40s'", s);
}

/* Block shape of one operand: scale_block_<x>, else scale_block, else 128×128;
 * one integer is a square block, two are [rows, depth]. */
static int block_shape(const gattrs *at, int own, qside *s, opm_error *err)
{
    static const char *const keys[3] = {"attrs.scale_block", "attrs.scale_block_a", "attrs.scale_block_b"};
    int w = at->has_blk[own] ? own : BLK;
    s->bo = s->bk = 128;
    if (!at->has_blk[w]) return 0;
    size_t n = at->nblk[w];
    const int64_t *v = at->blk[w];
    if (n < 1 || n > 2) return opm_err(err, OPM_EINVAL, keys[w], "expected one block size or two ([rows, depth])");
    for (size_t i = 0; i < n; i++)
        if (v[i] < 1) return opm_err(err, OPM_EINVAL, keys[w], "expected positive block sizes, got %lld", (long long)v[i]);
    s->bo = (uint64_t)v[0];
    s->bk = (uint64_t)v[n - 1];
    return 0;
}

static int quant_parse(const gattrs *at, opm_dtype adt, opm_dtype bdt, uint64_t k, quant *q, opm_error *err)
{
    memset(q, 0, sizeof *q);
    unsigned abits = opm_dtype_bits(adt), bbits = opm_dtype_bits(bdt);
    q->compute = bbits > abits ? bdt : adt;
    const char *fmt = at->fmt;
    if (!fmt && !at->sa && !at->sb && !at->has_group && !at->has_zero && !at->has_blk[BLK] &&
        !at->has_blk[BLK_A] && !at->has_blk[BLK_B] && abits <= bbits)
        return 0; /* the plain GEMM */
    int mx = fmt && opm_str_equals(fmt, "mx"), nv = fmt && opm_str_equals(fmt, "nv");
    if (fmt && !mx && !nv)
        return opm_err(err, OPM_EINVAL, "attrs.scale_format", "expected mx or nv, got '%.40s'", fmt);
    if (scale_kind(at->sa, "attrs.scale_a", &q->a.kind, err) || scale_kind(at->sb, "attrs.scale_b", &q->b.kind, err))
        return OPM_EINVAL;
    /* Weight-only: a weight narrower than the activations is converted in the
     * kernel, except fp8 × fp4 under mx, which block-scaled MMAs take as is. */
    q->dequant_b = bbits < abits && !(mx && low_float(adt));
    int int_only = q->dequant_b && int_weight(bdt);
    if (fmt) {
        if (q->a.kind || q->b.kind)
            return opm_err(err, OPM_EINVAL, q->a.kind ? "attrs.scale_a" : "attrs.scale_b",
                           "scale_format sets the scales of both operands; drop scale_a and scale_b");
        const opm_dtype dts[2] = {adt, bdt};
        qside *sides[2] = {&q->a, &q->b};
        int any = 0;
        for (int i = 0; i < 2; i++) {
            if (opm_dtype_bits(dts[i]) > 8) continue;
            if (nv ? dts[i] != OPM_FP4_E2M1 : !low_float(dts[i]))
                return opm_err(err, OPM_EINVAL, "attrs.scale_format",
                               "scale_format %s needs %s operands, but %s is %s", fmt,
                               nv ? "fp4_e2m1" : "fp8 or fp4_e2m1", i ? "B" : "A", opm_dtype_name(dts[i]));
            sides[i]->kind = nv ? SC_NV : SC_MX;
            any = 1;
        }
        if (!any)
            return opm_err(err, OPM_EINVAL, "attrs.scale_format", "scale_format %s needs an %s operand", fmt,
                           nv ? "fp4_e2m1" : "fp8 or fp4_e2m1");
    }
    if (q->a.kind && abits > 8 && !fmt)
        return opm_err(err, OPM_EINVAL, "attrs.scale_a", "scales apply to 8-bit or narrower operands; A is %s",
                       opm_dtype_name(adt));
    if (q->b.kind && bbits > 8 && !fmt)
        return opm_err(err, OPM_EINVAL, "attrs.scale_b", "scales apply to 8-bit or narrower operands; B is %s",
                       opm_dtype_name(bdt));
    if (int_only) {
        if (q->b.kind)
            return opm_err(err, OPM_EINVAL, "attrs.scale_b",
                           "a weight-only %s GEMM has group-wise scales: set weight_group_size (and "
                           "weight_zero_point) instead", opm_dtype_name(bdt));
        if (abits < 16)
            return opm_err(err, OPM_EINVAL, "tensors",
                           "%s weights with %s activations are not modelled; weight-only GEMM needs 16-bit or "
                           "wider activations", opm_dtype_name(bdt), opm_dtype_name(adt));
        q->b.kind = SC_GROUP;
        if (at->has_group && at->group < 1)
            return opm_err(err, OPM_EINVAL, "attrs.weight_group_size", "expected an integer >= 1, got %lld",
                           (long long)at->group);
        q->group = at->has_group ? (uint64_t)at->group : k;
        q->zero = at->zero;
    } else {
        const char *bad = at->has_group ? "attrs.weight_group_size"
                        : at->has_zero ? "attrs.weight_zero_point" : NULL;
        if (bad)
            return opm_err(err, OPM_EINVAL, bad,
                           "applies to weight-only GEMM (int8/int4 weight, 16-bit or wider input); B is %s, A is %s",
                           opm_dtype_name(bdt), opm_dtype_name(adt));
    }
    if (q->a.kind == SC_BLOCK && block_shape(at, BLK_A, &q->a, err)) return OPM_EINVAL;
    if (q->b.kind == SC_BLOCK && block_shape(at, BLK_B, &q->b, err)) return OPM_EINVAL;
    if (q->a.kind != SC_BLOCK && q->b.kind != SC_BLOCK) {
        static const char *const keys[3] = {"attrs.scale_block", "attrs.scale_block_a", "attrs.scale_block_b"};
        for (int i = 0; i < 3; i++)
            if (at->has_blk[i])
                return opm_err(err, OPM_EINVAL, keys[i], "applies only with scale_a or scale_b: block");
    }
    return 0;
}

/* Scale bytes of one operand: `mats` matrices of outer × k, in `tensors`
 * separate tensors (for per-tensor scales); sdt is the activation dtype and
 * wdt the operand's (for group scales and zero points). */
static uint64_t side_bytes(const qside *s, const quant *q, uint64_t mats, uint64_t outer, uint64_t k,
                           uint64_t tensors, opm_dtype sdt, opm_dtype wdt, int *ok)
{
    uint64_t rows = opm_mul(mats, outer, ok), g;
    switch (s->kind) {
    case SC_TENSOR: return opm_mul(4, tensors, ok);
    case SC_ROW: return opm_mul(4, rows, ok);
    case SC_BLOCK: return opm_mul(opm_mul(4, mats, ok), opm_mul(cdiv(outer, s->bo), cdiv(k, s->bk), ok), ok);
    case SC_MX: return opm_mul(rows, cdiv(k, 32), ok);
    case SC_NV: return opm_add(opm_mul(rows, cdiv(k, 16), ok), opm_mul(4, tensors, ok), ok);
    case SC_GROUP:
        g = opm_mul(rows, cdiv(k, q->group), ok);
        return opm_add(opm_bytes(g, sdt, ok), q->zero ? opm_bytes(g, wdt, ok) : 0, ok);
    default: return 0;
    }
}

/* Vector FLOPs of applying the scales: out = output elements, b_elems = the
 * weight elements read. */
static uint64_t quant_flops(const quant *q, uint64_t out, uint64_t k, uint64_t b_elems, int *ok)
{
    uint64_t f = 0, bk = 0, nblock = 0;
    const qside *sides[2] = {&q->a, q->dequant_b ? NULL : &q->b};
    for (int i = 0; i < 2; i++) {
        if (!sides[i]) continue;
        if (sides[i]->kind == SC_TENSOR || sides[i]->kind == SC_ROW) f = opm_add(f, out, ok);
        if (sides[i]->kind == SC_BLOCK) {
            nblock++;
            if (!bk || sides[i]->bk < bk) bk = sides[i]->bk;
        }
    }
    if (nblock) f = opm_add(f, opm_mul(opm_mul(out, cdiv(k, bk), ok), nblock + 1, ok), ok);
    if (q->dequant_b) f = opm_add(f, opm_mul(b_elems, 1 + (uint64_t)(q->zero != 0), ok), ok);
    return f;
}

/* Bytes of `rows` rows of `cols` elements, 4-bit types packed per row. */
static uint64_t rows_bytes(uint64_t rows, uint64_t cols, opm_dtype dt, int *ok)
{
    return opm_mul(rows, opm_bytes(cols, dt, ok), ok);
}

/* ---- gemm, batched_gemm ---- */

typedef struct gemm_dims {
    uint64_t batch, m, n, k;
    uint64_t a_mats, a_rows;    /* A as a_mats matrices of a_rows × K (for block scales) */
    uint64_t b_mats;            /* distinct B matrices (1 when broadcast) */
    const opm_tensor *a, *b, *c, *bias;
    int bias_attr;
    quant q;
} gemm_dims;

/* attrs.activation_quant and attrs.l2_warm take one of their names. */
static int context_check(const opm_op *op, opm_error *err)
{
    static const char *const aq[] = {"none", "static", "dynamic", "dynamic_block", NULL};
    static const char *const warm[] = {"none", "input", "weight", "all", NULL};
    const char *const *lists[2] = {aq, warm};
    static const char *const keys[2] = {"activation_quant", "l2_warm"};
    static const char *const want[2] = {"none, static, dynamic or dynamic_block", "none, input, weight or all"};
    for (int i = 0; i < 2; i++) {
        const char *v = opm_op_get_string(op, keys[i], NULL);
        if (!v) continue;
        int ok = 0;
        for (const char *const *l = lists[i]; *l && !ok; l++) ok = !strcmp(v, *l);
        if (!ok) {
            char f[OPM_ERROR_FIELD_MAX];
            snprintf(f, sizeof f, "attrs.%s", keys[i]);
            return opm_err(err, OPM_EINVAL, f, "expected %s, got '%.40s'", want[i], v);
        }
    }
    return 0;
}

static int dims(const opm_op *op, int batched, gemm_dims *g, opm_error *err)
{
    static const gemm_dims zero; /* not memset: see read_attrs */
    *g = zero;
    int min_rank = batched ? 3 : 2;
    if (!(g->a = opm_need_tensor(op, OPM_ROLE_INPUT, 0, min_rank, OPM_MAX_RANK, "input A", err)))
        return OPM_EINVAL;
    if (!(g->b = opm_need_tensor(op, OPM_ROLE_WEIGHT, 0, 2, batched ? OPM_MAX_RANK : 2, "weight B", err)))
        return OPM_EINVAL;
    if (!(g->c = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 1, OPM_MAX_RANK, "output C", err)))
        return OPM_EINVAL;
    gattrs at;
    read_attrs(op, &at);
    int ta = at.ta, tb = at.tb;
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
    /* A bias broadcasts to the output, as addmm's input does: [N] (the
     * nn.Linear bias), [1, N], [M, N] or the output's whole shape. */
    g->bias = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 1);
    if (g->bias) {
        int64_t bs[OPM_MAX_RANK];
        int br;
        int fits = g->bias->rank <= a->rank &&
                   opm_broadcast(g->bias->shape, g->bias->rank, want, a->rank, bs, &br) == 0;
        for (int d = 0; fits && d < br; d++) fits = bs[d] == want[d];
        if (!fits) {
            char wt[160], got[160];
            opm_tensor_field(op, g->bias, ".shape", f, sizeof f);
            opm_shape_text(want, a->rank, wt, sizeof wt);
            opm_shape_text(g->bias->shape, g->bias->rank, got, sizeof got);
            return opm_err(err, OPM_EINVAL, f,
                           "expected a bias of shape [%lld] (or one that broadcasts to the output %s), got %s",
                           (long long)n, wt, got);
        }
    }
    g->bias_attr = at.bias && !g->bias;
    if (batched) {
        g->batch = lead;
        g->m = (uint64_t)m;
        g->a_mats = lead;
        g->a_rows = (uint64_t)m;
        g->b_mats = b->rank > 2 ? lead : 1;
    } else {
        g->batch = 1;
        g->m = opm_mul(lead, (uint64_t)m, &ok);
        g->a_mats = 1;
        g->a_rows = g->m;
        g->b_mats = 1;
    }
    g->n = (uint64_t)n;
    g->k = (uint64_t)ka;
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "tensors", "dimensions overflow 64 bits");
    if (context_check(op, err)) return OPM_EINVAL;
    return quant_parse(&at, a->dtype, b->dtype, g->k, &g->q, err);
}

static int count(const opm_op *op, int batched, opm_counts *c, opm_error *err)
{
    gemm_dims g;
    if (dims(op, batched, &g, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t mn = opm_mul(opm_mul(g.batch, g.m, &ok), g.n, &ok);
    uint64_t mnk = opm_mul(mn, g.k, &ok);
    uint64_t a = rows_bytes(opm_mul(g.a_mats, g.a_rows, &ok), g.k, g.a->dtype, &ok);
    uint64_t b = rows_bytes(opm_mul(g.b_mats, g.n, &ok), g.k, g.b->dtype, &ok);
    uint64_t cb = rows_bytes(opm_mul(g.batch, g.m, &ok), g.n, g.c->dtype, &ok);
    uint64_t bias = g.bias ? opm_tensor_bytes(g.bias, &ok)
                   : g.bias_attr ? opm_bytes(g.n, g.c->dtype, &ok) : 0;
    int has_bias = g.bias || g.bias_attr;
    uint64_t sa = side_bytes(&g.q.a, &g.q, g.a_mats, g.a_rows, g.k, 1, g.a->dtype, g.a->dtype, &ok);
    uint64_t sb = side_bytes(&g.q.b, &g.q, g.b_mats, g.n, g.k, 1, g.a->dtype, g.b->dtype, &ok);
    uint64_t scales = opm_add(sa, sb, &ok);
    uint64_t qf = quant_flops(&g.q, mn, g.k, opm_mul(opm_mul(g.b_mats, g.n, &ok), g.k, &ok), &ok);
    c->compute_dtype = g.q.compute;
    c->weight_bytes = opm_add(opm_add(b, bias, &ok), sb, &ok);
    c->vector_flops = opm_add(has_bias ? mn : 0, qf, &ok);
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->matrix_flops = opm_mul(4, mnk, &ok);
        c->read_bytes = opm_add(opm_add(opm_add(cb, a, &ok), b, &ok), scales, &ok);
        c->write_bytes = opm_add(opm_add(a, b, &ok), bias, &ok);
        c->input_bytes = opm_add(opm_add(a, cb, &ok), sa, &ok);
        c->output_bytes = c->write_bytes;
    } else {
        c->matrix_flops = opm_mul(2, mnk, &ok);
        c->read_bytes = opm_add(opm_add(opm_add(a, b, &ok), bias, &ok), scales, &ok);
        c->write_bytes = cb;
        c->input_bytes = opm_add(a, sa, &ok);
        c->output_bytes = cb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

/* validate() is dims() and count() begins with it: see
 * opm_kind_count_validates. */
static int gemm_validate(const opm_op *op, opm_error *err) { gemm_dims g; return dims(op, 0, &g, err); }
static int bgemm_validate(const opm_op *op, opm_error *err) { gemm_dims g; return dims(op, 1, &g, err); }
static int gemm_count(const opm_op *op, opm_counts *c, opm_error *err) { return count(op, 0, c, err); }
static int bgemm_count(const opm_op *op, opm_counts *c, opm_error *err) { return count(op, 1, c, err); }

static int from_short(opm_op *op, int batched, opm_error *err)
{
    int64_t batch = 1, m, n, k;
    opm_dtype dt, odt, wdt;
    if ((batched && opm_short_int(op, "batch", 1, 1, &batch, err)) ||
        opm_short_int(op, "m", 1, 0, &m, err) || opm_short_int(op, "n", 1, 0, &n, err) ||
        opm_short_int(op, "k", 1, 0, &k, err) || opm_short_dtypes(op, &dt, &odt, err) ||
        opm_short_dtype_key(op, "weight_dtype", dt, &wdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int ta = opm_op_get_bool(op, "transpose_a", 0), tb = opm_op_get_bool(op, "transpose_b", 0);
    return opm_gemm_short_tensors(op, batched, batch, m, n, k, dt, wdt, odt, ta, tb, err);
}

int opm_gemm_short_tensors(opm_op *op, int batched, int64_t batch, int64_t m, int64_t n, int64_t k, opm_dtype dt,
                           opm_dtype wdt, opm_dtype odt, int ta, int tb, opm_error *err)
{
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
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, b, r, wdt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, c, r, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}
static int gemm_short(opm_op *op, opm_error *err) { return from_short(op, 0, err); }
static int bgemm_short(opm_op *op, opm_error *err) { return from_short(op, 1, err); }

#define QUANT_ATTRS                                                                                    \
    {"scale_a", OPM_ATTR_STRING, 0, "scales of A: none (default), tensor, row or block (fp32 each)"},  \
    {"scale_b", OPM_ATTR_STRING, 0,                                                                    \
     "scales of B: none (default), tensor, row (per output column) or block (fp32 each)"},             \
    {"scale_block", OPM_ATTR_INTS, 0, "block of block scales: b (b×b) or [rows, depth]; default 128"}, \
    {"scale_block_a", OPM_ATTR_INTS, 0, "block of A's block scales (default scale_block)"},            \
    {"scale_block_b", OPM_ATTR_INTS, 0, "block of B's block scales (default scale_block)"},            \
    {"scale_format", OPM_ATTR_STRING, 0,                                                               \
     "mx: E8M0 scale per 32 K-elements of fp8/fp4 operands; nv: E4M3 per 16 of fp4 operands + fp32"},  \
    {"weight_group_size", OPM_ATTR_INT, 1,                                                             \
     "weight-only int8/int4: K-elements per scale (default K: one per output column)"},                \
    {"weight_zero_point", OPM_ATTR_BOOL, 0, "weight-only int8/int4: zero points too (default false)"}

/* What the kernels around the GEMM do to its time (the models read them;
 * the counts are the GEMM's own). */
#define GEMM_KERNEL_CONTEXT_ATTRS                                                                     \
    {"activation_quant", OPM_ATTR_STRING, 0,                                                          \
     "fp8: kernels quantising a bf16 activation first: none (default), static, dynamic (per-tensor "   \
     "absmax), dynamic_block (1x128 groups)"},                                                         \
    {"l2_warm", OPM_ATTR_STRING, 0,                                                                   \
     "operands resident in L2 at the start (the previous kernel touched them): none (default), "       \
     "input, weight, all"},                                                                            \
    {"operand_copies", OPM_ATTR_INT, 1,                                                               \
     "the op runs in turn with this many other copies of its weight (and of its input unless "         \
     "l2_warm shares it), as a benchmark rotating buffers does: operands stay in L2 when every "       \
     "copy fits it (default: not rotated)"}

static const opm_attr_def gemm_attrs[] = {
    {"transpose_a", OPM_ATTR_BOOL, 0, "A is stored [K, M] (default false)"},
    {"transpose_b", OPM_ATTR_BOOL, 0, "B is stored [N, K] (default false)"},
    {"bias", OPM_ATTR_BOOL, 0, "add a bias vector of N in the output dtype (default false)"},
    QUANT_ATTRS,
    GEMM_KERNEL_CONTEXT_ATTRS,
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def gemm_short_keys[] = {
    {"m", OPM_ATTR_INT, 1, "rows of A and C"},
    {"n", OPM_ATTR_INT, 1, "columns of B and C"},
    {"k", OPM_ATTR_INT, 1, "inner dimension"},
    {"weight_dtype", OPM_ATTR_STRING, 0, "dtype of B (default dtype; int8/int4 for weight-only)"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def bgemm_short_keys[] = {
    {"batch", OPM_ATTR_INT, 1, "number of independent products"},
    {"m", OPM_ATTR_INT, 1, "rows of A and C"},
    {"n", OPM_ATTR_INT, 1, "columns of B and C"},
    {"k", OPM_ATTR_INT, 1, "inner dimension"},
    {"weight_dtype", OPM_ATTR_STRING, 0, "dtype of B (default dtype)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_gemm = {
    OPM_KIND_GEMM, "gemm", "matrix product C[M,N] = A[M,K]·B[K,N] (+ bias); fp8/fp4/int scales",
    "input A [..., M, K] (leading dims fold into M), weight B [K, N], output C [..., M, N], "
    "optional weight bias [N] (or broadcasting to C)",
    gemm_attrs, gemm_short_keys, gemm_short, gemm_validate, gemm_count,
    {1, 2, 1, 0, -1},
};

const opm_kind_def opm_kind_batched_gemm = {
    OPM_KIND_BATCHED_GEMM, "batched_gemm", "batch of independent matrix products",
    "input A [B..., M, K], weight B [B..., K, N] or [K, N] (broadcast), output C [B..., M, N], "
    "optional weight bias [N] (or broadcasting to C)",
    gemm_attrs, bgemm_short_keys, bgemm_short, bgemm_validate, bgemm_count,
    {1, 2, 1, 0, -1},
};

opm_op *opm_op_batched_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, opm_dtype dtype,
                            opm_error *err)
{
    opm_error_clear(err);
    opm_op *op = opm_op_new("batched_gemm", OPM_KIND_BATCHED_GEMM, OPM_PHASE_INFERENCE, err);
    if (!op) return NULL;
    int64_t a[3] = {batch, m, k}, b[3] = {batch, k, n}, c[3] = {batch, m, n};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, a, 3, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, b, 3, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, c, 3, dtype, NULL, err) || opm_op_finalize(op, err)) {
        opm_op_free(op);
        return NULL;
    }
    return op;
}

opm_op *opm_op_gemm(int64_t m, int64_t n, int64_t k, opm_dtype dtype, opm_error *err)
{
    opm_error_clear(err);
    opm_op *op = opm_op_new("gemm", OPM_KIND_GEMM, OPM_PHASE_INFERENCE, err);
    if (!op) return NULL;
    int64_t a[2] = {m, k}, b[2] = {k, n}, c[2] = {m, n};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, a, 2, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, b, 2, dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, c, 2, dtype, NULL, err) || opm_op_finalize(op, err)) {
        opm_op_free(op);
        return NULL;
    }
    return op;
}

/* ---- grouped_gemm ----
 * Tensors: input X [M, K] (the rows of all groups, group after group),
 * weight W [G, K, N] ([G, N, K] with transpose_b), output Y [M, N]; attr
 * group_m lists the G row counts M_g (each >= 0, summing to M).  Without it
 * the M rows are split evenly: M/G each, the first M mod G groups one more
 * (as torch.tensor_split does), so min(G, M) groups have rows. */

typedef struct grouped_dims {
    uint64_t groups, active, m, n, k;
    const opm_tensor *x, *w, *y;
    quant q;
} grouped_dims;

static int gdims(const opm_op *op, grouped_dims *g, opm_error *err)
{
    memset(g, 0, sizeof *g);
    if (!(g->x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 2, 2, "input X [M, K]", err)) ||
        !(g->w = opm_need_tensor(op, OPM_ROLE_WEIGHT, 0, 3, 3, "weight W [G, K, N]", err)) ||
        !(g->y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 2, 2, "output Y [M, N]", err)))
        return OPM_EINVAL;
    gattrs at;
    read_attrs(op, &at);
    int tb = at.tb;
    int64_t m = g->x->shape[0], k = g->x->shape[1], G = g->w->shape[0];
    int64_t kw = tb ? g->w->shape[2] : g->w->shape[1], n = tb ? g->w->shape[1] : g->w->shape[2];
    char f[OPM_ERROR_FIELD_MAX];
    if (kw != k) {
        opm_tensor_field(op, g->w, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f,
                       "expected the weight's inner dimension to equal the input's K = %lld, got %lld",
                       (long long)k, (long long)kw);
    }
    int64_t want[2] = {m, n};
    if (opm_expect_shape(op, g->y, want, 2, err)) return OPM_EINVAL;
    const int64_t *v = at.gm;
    size_t ng = at.ngm;
    if (at.has_gm) {
        if (ng != (size_t)G)
            return opm_err(err, OPM_EINVAL, "attrs.group_m", "expected %lld row counts (one per group), got %zu",
                           (long long)G, ng);
        /* Fast pass (vectorises): with every count below 2^32 and fewer
         * than 2^31 groups the sum cannot wrap.  Otherwise the checked pass:
         * sum <= M < 2^63 before each add of a count < 2^63. */
        uint64_t sum = 0, active = 0, any = 0;
        for (size_t i = 0; i < ng; i++) {
            uint64_t x = (uint64_t)v[i];
            sum += x;
            any |= x;
            active += (x | (0 - x)) >> 63; /* x != 0, branch-free (vectorises) */
        }
        if ((any >> 32) != 0 || ng >= ((size_t)1 << 31)) {
            sum = active = 0;
            for (size_t i = 0; i < ng; i++) {
                if (v[i] < 0)
                    return opm_err(err, OPM_EINVAL, "attrs.group_m", "expected row counts >= 0, got %lld",
                                   (long long)v[i]);
                if (sum <= (uint64_t)m) sum += (uint64_t)v[i];
                active += v[i] > 0;
            }
        }
        if (sum != (uint64_t)m)
            return opm_err(err, OPM_EINVAL, "attrs.group_m",
                           "expected row counts summing to the input's M = %lld", (long long)m);
        g->active = active;
    } else {
        g->active = (uint64_t)(m < G ? m : G);
    }
    g->groups = (uint64_t)G;
    g->m = (uint64_t)m;
    g->n = (uint64_t)n;
    g->k = (uint64_t)k;
    if (context_check(op, err)) return OPM_EINVAL;
    return quant_parse(&at, g->x->dtype, g->w->dtype, g->k, &g->q, err);
}

static int grouped_validate(const opm_op *op, opm_error *err) { grouped_dims g; return gdims(op, &g, err); }

static int grouped_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    grouped_dims g;
    if (gdims(op, &g, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t mn = opm_mul(g.m, g.n, &ok), mnk = opm_mul(mn, g.k, &ok);
    uint64_t x = rows_bytes(g.m, g.k, g.x->dtype, &ok), y = rows_bytes(g.m, g.n, g.y->dtype, &ok);
    /* Weights (and their scales) are read for the groups with rows only; the
     * footprint and the weight gradient cover all G. */
    uint64_t w_read = rows_bytes(opm_mul(g.active, g.n, &ok), g.k, g.w->dtype, &ok);
    uint64_t w_all = rows_bytes(opm_mul(g.groups, g.n, &ok), g.k, g.w->dtype, &ok);
    uint64_t sx = side_bytes(&g.q.a, &g.q, 1, g.m, g.k, 1, g.x->dtype, g.x->dtype, &ok);
    uint64_t sw_read = side_bytes(&g.q.b, &g.q, g.active, g.n, g.k, g.active, g.x->dtype, g.w->dtype, &ok);
    uint64_t sw_all = side_bytes(&g.q.b, &g.q, g.groups, g.n, g.k, g.groups, g.x->dtype, g.w->dtype, &ok);
    uint64_t qf = quant_flops(&g.q, mn, g.k, opm_mul(opm_mul(g.active, g.n, &ok), g.k, &ok), &ok);
    uint64_t reads = opm_add(opm_add(x, w_read, &ok), opm_add(sx, sw_read, &ok), &ok);
    c->compute_dtype = g.q.compute;
    c->vector_flops = qf;
    c->weight_bytes = opm_add(w_all, sw_all, &ok);
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->matrix_flops = opm_mul(4, mnk, &ok);
        c->read_bytes = opm_add(reads, y, &ok);
        c->write_bytes = opm_add(x, w_all, &ok);
        c->input_bytes = opm_add(opm_add(x, sx, &ok), y, &ok);
        c->output_bytes = c->write_bytes;
    } else {
        c->matrix_flops = opm_mul(2, mnk, &ok);
        c->read_bytes = reads;
        c->write_bytes = y;
        c->input_bytes = opm_add(x, sx, &ok);
        c->output_bytes = y;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int grouped_short(opm_op *op, opm_error *err)
{
    int64_t groups = 0, m = 0, n, k;
    opm_dtype dt, odt, wdt;
    const int64_t *v;
    size_t ng = opm_op_get_ints(op, "group_m", &v);
    int has_list = opm_op_has(op, "group_m");
    if (!has_list && !opm_op_has(op, "m"))
        return opm_err(err, OPM_EINVAL, "m",
                       "missing; the short form of grouped_gemm needs m (total rows) or group_m (rows per group)");
    if (opm_short_int(op, "groups", !has_list, 0, &groups, err) || opm_short_int(op, "m", 0, 0, &m, err) ||
        opm_short_int(op, "n", 1, 0, &n, err) || opm_short_int(op, "k", 1, 0, &k, err) ||
        opm_short_dtypes(op, &dt, &odt, err) || opm_short_dtype_key(op, "weight_dtype", dt, &wdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (has_list) {
        if (ng == 0)
            return opm_err(err, OPM_EINVAL, "group_m", "expected a list of row counts, one per group");
        if (groups && (size_t)groups != ng)
            return opm_err(err, OPM_EINVAL, "group_m", "expected %lld row counts (groups), got %zu",
                           (long long)groups, ng);
        int64_t sum = 0;
        for (size_t i = 0; i < ng; i++) {
            if (v[i] < 0 || v[i] > INT64_MAX - sum)
                return opm_err(err, OPM_EINVAL, "group_m", "expected row counts >= 0, got %lld", (long long)v[i]);
            sum += v[i];
        }
        if (sum == 0) return opm_err(err, OPM_EINVAL, "group_m", "expected at least one row in some group");
        if (m && m != sum)
            return opm_err(err, OPM_EINVAL, "m", "expected m = %lld, the sum of group_m, got %lld",
                           (long long)sum, (long long)m);
        m = sum;
        groups = (int64_t)ng;
    }
    int tb = opm_op_get_bool(op, "transpose_b", 0);
    int64_t x[2] = {m, k}, w[3] = {groups, tb ? n : k, tb ? k : n}, y[2] = {m, n};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, x, 2, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, w, 3, wdt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, y, 2, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def grouped_attrs[] = {
    {"group_m", OPM_ATTR_INTS, 0, "rows of each group, G counts >= 0 summing to M (default: M split evenly)"},
    {"transpose_b", OPM_ATTR_BOOL, 0, "W is stored [G, N, K] (default false)"},
    QUANT_ATTRS,
    GEMM_KERNEL_CONTEXT_ATTRS,
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def grouped_short_keys[] = {
    {"groups", OPM_ATTR_INT, 1, "number of groups (experts) G; optional with group_m"},
    {"m", OPM_ATTR_INT, 1, "total rows, split evenly (the first M mod G groups get one more)"},
    {"group_m", OPM_ATTR_INTS, 0, "rows of each group (instead of m)"},
    {"n", OPM_ATTR_INT, 1, "columns of each weight and of Y"},
    {"k", OPM_ATTR_INT, 1, "inner dimension"},
    {"weight_dtype", OPM_ATTR_STRING, 0, "dtype of W (default dtype)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_grouped_gemm = {
    OPM_KIND_GROUPED_GEMM, "grouped_gemm", "G independent products of row groups with their own weights (MoE experts)",
    "input X [M, K] (rows of every group, in order), weight W [G, K, N] ([G, N, K] with transpose_b), "
    "output Y [M, N]; attr group_m",
    grouped_attrs, grouped_short_keys, grouped_short, grouped_validate, grouped_count,
    {1, 1, 1, 0, -1},
};
