/* moe.c — mixture-of-experts kernels: `moe_dispatch` (permute tokens into
 * expert order), `moe_combine` (gather expert outputs back, weighted by the
 * router) and `fused_moe` (the whole expert MLP of a MoE layer in one op, as
 * vLLM/SGLang fused_moe runs it).  T tokens, hidden H, top-k k, E experts.
 *
 * moe_dispatch: input x [T, H], integer input topk_ids [T, k]; output the
 * permuted rows [T·k, H] (its dtype may differ: fp8 dispatch), then any
 * number of extra outputs (row map, tokens per expert, quantisation scales).
 *   forward   no FLOPs (integer sort/histogram work is not FLOPs); reads x
 *             and the ids, writes every output.
 *   train_bwd the un-weighted k-way sum back: vector T·k·H; reads d(rows), the
 *             ids and the extra outputs (the maps); writes dx.
 *
 * moe_combine: input expert rows [T·k, H], routing weights [T, k] (float),
 * integer ids or row map (T·k elements); output y [T, H].
 *   forward   vector 2·T·k·H (one multiply and one add per routed row
 *             element); reads the rows, weights and ids, writes y.
 *   train_bwd vector 3·T·k·H (d(rows) = w·dy: 1; dw = Σ_h dy·row: 2); reads
 *             dy, the rows, weights and ids; writes d(rows) and dw.
 *
 * fused_moe: input x [T, H], routing weights [T, k] (float), topk_ids [T, k]
 * (integer); weight w1 [E, N1, H] (N1 = 2·I gated, up and gate; N1 = I plain),
 * w2 [E, H, I], then optional per-expert weights with leading dim E (block
 * scales); output y [T, H].  Attrs activation (silu, gelu), active_experts.
 *   forward   matrix 2·T·k·H·(N1 + I) = 2·T·k·H·I·(gated ? 3 : 2);
 *             vector a·T·k·I (a = the forward weight of silu_mul / gelu_mul
 *             gated, silu / gelu plain, from flop_weights.h) + 2·T·k·H (the
 *             weighted sum of the k outputs);
 *             reads x, the routing weights and ids and the weights of the A
 *             ACTIVE experts only (each per-expert tensor × A/E), writes y.
 *             A = active_experts, else the expected count under uniform
 *             routing E·(1 − ((E−k)/E)^T), rounded up (after removing 1e-9·E
 *             of floating-point noise) and clamped to [k, min(E, T·k)].
 *   train_bwd matrix 2× forward (dX and dW of each GEMM), + 1× forward with
 *             `recompute` (default false: the pre-activation [T·k, N1] and
 *             the expert outputs [T·k, H] saved by the forward are read, in
 *             x's dtype); vector b·T·k·I (b the table's backward weight of
 *             the same activation) + 3·T·k·H (d(outputs) = w·dy, dw = Σ dy·out);
 *             reads dy, x, routing weights and ids, active weights;
 *             writes dx, d(routing weights), dW1 and dW2 of the active
 *             experts.  Per-expert extras are constants (no gradient). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "kind.h"
#include "flop_weights.h"

static int is_int(opm_dtype dt) { return dt == OPM_INT32 || dt == OPM_INT64; }

/* The nth input of integer (want_int) or floating-point dtype. */
static const opm_tensor *nth_input(const opm_op *op, int want_int, int nth)
{
    for (size_t i = 0, nt = opm_op_tensor_count(op); i < nt; i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        if (t->role == OPM_ROLE_INPUT && is_int(t->dtype) == want_int && nth-- == 0) return t;
    }
    return NULL;
}

static int need(const opm_tensor *t, const opm_op *op, const char *what, opm_error *err)
{
    if (t) return 0;
    return opm_err(err, OPM_EINVAL, "tensors", "kind %s needs %s", opm_kind_name(opm_op_kind(op)), what);
}

static int shape_err(const opm_op *op, const opm_tensor *t, opm_error *err, const char *fmt, ...)
    OPM_PRINTF(4, 5);
static int shape_err(const opm_op *op, const opm_tensor *t, opm_error *err, const char *fmt, ...)
{
    char f[OPM_ERROR_FIELD_MAX], msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    opm_tensor_field(op, t, ".shape", f, sizeof f);
    return opm_err(err, OPM_EINVAL, f, "%s", msg);
}

/* Every input of an op besides the ones named must not exist. */
static int only_inputs(const opm_op *op, const opm_tensor *a, const opm_tensor *b, const opm_tensor *c,
                       opm_error *err)
{
    for (size_t i = 0, nt = opm_op_tensor_count(op); i < nt; i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        if (t->role != OPM_ROLE_INPUT || t == a || t == b || t == c) continue;
        char f[OPM_ERROR_FIELD_MAX];
        opm_tensor_field(op, t, ".dtype", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected no further %s input for kind %s",
                       is_int(t->dtype) ? "integer" : "floating-point", opm_kind_name(opm_op_kind(op)));
    }
    return 0;
}

/* ----------------------------- moe_dispatch ----------------------------- */

typedef struct route_dims {
    uint64_t t, h, k;
    const opm_tensor *x, *w, *ids, *y;
} route_dims;

static int dispatch_dims(const opm_op *op, route_dims *r, opm_error *err)
{
    memset(r, 0, sizeof *r);
    r->x = nth_input(op, 0, 0);
    r->ids = nth_input(op, 1, 0);
    if (need(r->x, op, "input x [T, H] (floating point)", err) ||
        need(r->ids, op, "the integer input topk_ids [T, k]", err) || only_inputs(op, r->x, r->ids, NULL, err))
        return OPM_EINVAL;
    if (r->x->rank != 2) return shape_err(op, r->x, err, "expected x [T, H], got %d dimensions", r->x->rank);
    if (r->ids->rank != 2 || r->ids->shape[0] != r->x->shape[0])
        return shape_err(op, r->ids, err, "expected topk_ids [%lld, k]", (long long)r->x->shape[0]);
    if (!(r->y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 2, 2, "output rows [T·k, H]", err))) return OPM_EINVAL;
    int ok = 1;
    r->t = (uint64_t)r->x->shape[0];
    r->h = (uint64_t)r->x->shape[1];
    r->k = (uint64_t)r->ids->shape[1];
    int64_t want[2] = {(int64_t)opm_mul(r->t, r->k, &ok), r->x->shape[1]};
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "tensors", "T·k overflows 64 bits");
    return opm_expect_shape(op, r->y, want, 2, err);
}

static int dispatch_validate(const opm_op *op, opm_error *err)
{
    route_dims r;
    return dispatch_dims(op, &r, err);
}

static int dispatch_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    route_dims r;
    if (dispatch_dims(op, &r, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t x = opm_tensor_bytes(r.x, &ok), ids = opm_tensor_bytes(r.ids, &ok);
    uint64_t outs = opm_role_bytes(op, OPM_ROLE_OUTPUT, &ok);
    c->compute_dtype = r.x->dtype;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->vector_flops = opm_mul(opm_mul(r.t, r.k, &ok), r.h, &ok);
        c->read_bytes = opm_add(outs, ids, &ok); /* d(rows), the maps, the ids */
        c->write_bytes = x;
        c->input_bytes = c->read_bytes;
        c->output_bytes = x;
    } else {
        c->read_bytes = opm_add(x, ids, &ok);
        c->write_bytes = outs;
        c->input_bytes = c->read_bytes;
        c->output_bytes = outs;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

/* Short-form keys shared by the three kinds. */
static int route_short(opm_op *op, int64_t *t, int64_t *h, int64_t *k, opm_dtype *dt, opm_dtype *odt,
                       opm_dtype *idt, opm_error *err)
{
    if (opm_short_int(op, "tokens", 1, 1, t, err) || opm_short_int(op, "hidden", 1, 1, h, err) ||
        opm_short_int(op, "top_k", 1, 1, k, err) || opm_short_dtypes(op, dt, odt, err) ||
        opm_short_dtype_key(op, "index_dtype", OPM_INT32, idt, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (*k > INT64_MAX / *t)
        return opm_err(err, OPM_EOVERFLOW, "top_k", "tokens·top_k overflows 64 bits");
    if (*idt != OPM_INT32 && *idt != OPM_INT64)
        return opm_err(err, OPM_EINVAL, "index_dtype", "expected int32 or int64, got %s", opm_dtype_name(*idt));
    return 0;
}

static int dispatch_short(opm_op *op, opm_error *err)
{
    int64_t t, h, k, e;
    opm_dtype dt, odt, idt;
    if (route_short(op, &t, &h, &k, &dt, &odt, &idt, err) || opm_short_int(op, "experts", 1, 1, &e, err))
        return err ? (int)err->code : OPM_EINVAL;
    int64_t xs[2] = {t, h}, is[2] = {t, k}, ys[2] = {t * k, h}, map = t * k;
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, 2, dt, "x", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, is, 2, idt, "topk_ids", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, ys, 2, odt, "rows", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, &map, 1, idt, "row_map", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, &e, 1, idt, "expert_counts", err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def no_attrs[] = {{NULL, 0, 0, NULL}};
static const opm_attr_def dispatch_short_keys[] = {
    {"tokens", OPM_ATTR_INT, 1, "tokens T"},
    {"hidden", OPM_ATTR_INT, 1, "hidden size H"},
    {"top_k", OPM_ATTR_INT, 1, "experts per token k"},
    {"experts", OPM_ATTR_INT, 1, "experts E (size of the tokens-per-expert output)"},
    {"index_dtype", OPM_ATTR_STRING, 0, "dtype of ids and maps (default int32)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_moe_dispatch = {
    OPM_KIND_MOE_DISPATCH, "moe_dispatch", "permute T·k token rows into expert order",
    "input x [T, H], integer input topk_ids [T, k], output rows [T·k, H], optional further outputs "
    "(row map, tokens per expert, scales)",
    no_attrs, dispatch_short_keys, dispatch_short, dispatch_validate, dispatch_count,
    {2, 0, -1, 0, -1},
};

/* ------------------------------ moe_combine ------------------------------ */

static int combine_dims(const opm_op *op, route_dims *r, opm_error *err)
{
    memset(r, 0, sizeof *r);
    r->x = nth_input(op, 0, 0);
    r->w = nth_input(op, 0, 1);
    r->ids = nth_input(op, 1, 0);
    if (need(r->x, op, "input expert rows [T·k, H]", err) ||
        need(r->w, op, "input routing weights [T, k] (floating point, after the rows)", err) ||
        need(r->ids, op, "the integer input ids or row map (T·k elements)", err) ||
        only_inputs(op, r->x, r->w, r->ids, err))
        return OPM_EINVAL;
    if (r->w->rank != 2) return shape_err(op, r->w, err, "expected routing weights [T, k], got %d dimensions", r->w->rank);
    int ok = 1;
    r->t = (uint64_t)r->w->shape[0];
    r->k = (uint64_t)r->w->shape[1];
    uint64_t tk = opm_mul(r->t, r->k, &ok);
    if (r->x->rank != 2 || (uint64_t)r->x->shape[0] != tk)
        return shape_err(op, r->x, err, "expected expert rows [%llu, H] (T·k rows)", (unsigned long long)tk);
    if (opm_tensor_elems(r->ids, &ok) != tk)
        return shape_err(op, r->ids, err, "expected %llu ids (T·k)", (unsigned long long)tk);
    r->h = (uint64_t)r->x->shape[1];
    if (!(r->y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 2, 2, "output y [T, H]", err))) return OPM_EINVAL;
    int64_t want[2] = {r->w->shape[0], r->x->shape[1]};
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "tensors", "T·k overflows 64 bits");
    return opm_expect_shape(op, r->y, want, 2, err);
}

static int combine_validate(const opm_op *op, opm_error *err)
{
    route_dims r;
    return combine_dims(op, &r, err);
}

static int combine_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    route_dims r;
    if (combine_dims(op, &r, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t tkh = opm_mul(opm_mul(r.t, r.k, &ok), r.h, &ok);
    uint64_t rows = opm_tensor_bytes(r.x, &ok), w = opm_tensor_bytes(r.w, &ok), ids = opm_tensor_bytes(r.ids, &ok);
    uint64_t y = opm_tensor_bytes(r.y, &ok);
    uint64_t in = opm_add(opm_add(rows, w, &ok), ids, &ok);
    c->compute_dtype = r.x->dtype;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->vector_flops = opm_mul(3, tkh, &ok);
        c->read_bytes = opm_add(y, in, &ok);
        c->write_bytes = opm_add(rows, w, &ok);
    } else {
        c->vector_flops = opm_mul(2, tkh, &ok);
        c->read_bytes = in;
        c->write_bytes = y;
    }
    c->input_bytes = c->read_bytes;
    c->output_bytes = c->write_bytes;
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int combine_short(opm_op *op, opm_error *err)
{
    int64_t t, h, k;
    opm_dtype dt, odt, idt, rdt;
    if (route_short(op, &t, &h, &k, &dt, &odt, &idt, err) ||
        opm_short_dtype_key(op, "routing_dtype", OPM_FP32, &rdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int64_t rs[2] = {t * k, h}, ws[2] = {t, k}, ys[2] = {t, h};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, rs, 2, dt, "rows", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ws, 2, rdt, "topk_weights", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ws, 2, idt, "row_map", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, ys, 2, odt, "y", err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def combine_short_keys[] = {
    {"tokens", OPM_ATTR_INT, 1, "tokens T"},
    {"hidden", OPM_ATTR_INT, 1, "hidden size H"},
    {"top_k", OPM_ATTR_INT, 1, "experts per token k"},
    {"index_dtype", OPM_ATTR_STRING, 0, "dtype of the row map (default int32)"},
    {"routing_dtype", OPM_ATTR_STRING, 0, "dtype of the routing weights (default fp32)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_moe_combine = {
    OPM_KIND_MOE_COMBINE, "moe_combine", "k-way router-weighted sum of expert rows back into token order",
    "input expert rows [T·k, H], input routing weights [T, k], integer input ids or row map (T·k), "
    "output y [T, H]",
    no_attrs, combine_short_keys, combine_short, combine_validate, combine_count,
    {3, 0, 1, 0, -1},
};

/* ------------------------------- fused_moe ------------------------------- */

#define MOE_MAX_WEIGHTS 8

typedef struct moe_dims {
    uint64_t t, h, k, e, n1, i, active;
    int gated, gelu;
    size_t nw;
    const opm_tensor *x, *tw, *ids, *y, *w[MOE_MAX_WEIGHTS]; /* w[0] = w1, w[1] = w2 */
} moe_dims;

/* base^t by repeated squaring: log2(t) multiplies, relative error a few ulps
 * times log2(t), far inside the 1e-9 guard below; libm pow costs more than
 * all the rest of a count. */
static double ipow(double base, uint64_t t)
{
    double r = 1.0;
    while (t && base > 0) {
        if (t & 1) r *= base;
        base *= base;
        t >>= 1;
    }
    return t ? 0.0 : r;
}

/* Expected distinct experts hit by t tokens each routed to k of e experts
 * uniformly: e·(1 − ((e−k)/e)^t), rounded up to whole experts (1e-9·e of
 * floating-point noise removed first) and clamped to [k, min(e, t·k)]. */
static uint64_t uniform_active(uint64_t e, uint64_t k, uint64_t t)
{
    double x = (double)e * (1.0 - ipow((double)(e - k) / (double)e, t));
    double up = ceil(x - 1e-9 * (double)e);
    int ok = 1;
    uint64_t tk = opm_mul(t, k, &ok), hi = !ok || tk > e ? e : tk;
    uint64_t n = up <= 0 ? 0 : up >= (double)e ? e : (uint64_t)up;
    if (n < k) n = k;
    return n > hi ? hi : n;
}

static int moe_dims_of(const opm_op *op, moe_dims *m, opm_error *err)
{
    memset(m, 0, sizeof *m);
    size_t nf = 0;
    const opm_tensor *bad = NULL;
    for (size_t j = 0, nt = opm_op_tensor_count(op); j < nt; j++) {
        const opm_tensor *t = opm_op_tensor(op, j);
        if (t->role == OPM_ROLE_INPUT) {
            if (is_int(t->dtype) ? m->ids != NULL : nf == 2) bad = t;
            else if (is_int(t->dtype)) m->ids = t;
            else *(nf++ ? &m->tw : &m->x) = t;
        } else if (t->role == OPM_ROLE_WEIGHT && m->nw < MOE_MAX_WEIGHTS) {
            m->w[m->nw++] = t;
        } else if (t->role == OPM_ROLE_OUTPUT) {
            m->y = t;
        }
    }
    if (bad) return only_inputs(op, m->x, m->tw, m->ids, err);
    if (need(m->x, op, "input x [T, H]", err) ||
        need(m->tw, op, "input routing weights [T, k] (floating point, after x)", err) ||
        need(m->ids, op, "the integer input topk_ids [T, k]", err))
        return OPM_EINVAL;
    const opm_tensor *w1 = m->w[0] && m->w[0]->rank == 3 ? m->w[0] : NULL;
    const opm_tensor *w2 = m->w[1] && m->w[1]->rank == 3 ? m->w[1] : NULL;
    if ((!w1 && !opm_need_tensor(op, OPM_ROLE_WEIGHT, 0, 3, 3, "weight w1 [E, 2·I or I, H]", err)) ||
        (!w2 && !opm_need_tensor(op, OPM_ROLE_WEIGHT, 1, 3, 3, "weight w2 [E, H, I]", err)) ||
        (!(m->y && m->y->rank == 2) && !opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 2, 2, "output y [T, H]", err)))
        return OPM_EINVAL;
    if (m->x->rank != 2) return shape_err(op, m->x, err, "expected x [T, H], got %d dimensions", m->x->rank);
    int64_t t = m->x->shape[0], h = m->x->shape[1], e = w1->shape[0], n1 = w1->shape[1];
    int64_t i = w2->shape[2], k = m->tw->rank == 2 ? m->tw->shape[1] : 0;
    if (m->tw->rank != 2 || m->tw->shape[0] != t || k > e)
        return shape_err(op, m->tw, err, "expected routing weights [%lld, k] with k <= %lld experts", (long long)t,
                         (long long)e);
    int64_t ws[2] = {t, k}, w2s[3] = {e, h, i};
    if (opm_expect_shape(op, m->ids, ws, 2, err) || opm_expect_shape(op, w2, w2s, 3, err) || opm_expect_shape(op, m->y, m->x->shape, 2, err))
        return OPM_EINVAL;
    if (w1->shape[2] != h || (n1 != i && n1 != 2 * i))
        return shape_err(op, w1, err, "expected w1 [E, 2·I or I, %lld] with I = %lld from w2", (long long)h,
                         (long long)i);
    for (size_t j = 2; j < m->nw; j++)
        if (m->w[j]->shape[0] != e)
            return shape_err(op, m->w[j], err, "expected a per-expert tensor with leading dim %lld, got %lld",
                             (long long)e, (long long)m->w[j]->shape[0]);
    const char *act = opm_op_get_string(op, "activation", NULL);
    if (act && strcmp(act, "silu") && strcmp(act, "gelu"))
        return opm_err(err, OPM_EINVAL, "attrs.activation", "expected silu or gelu, got '%.40s'", act);
    int ok = 1;
    m->gelu = act && act[0] == 'g';
    m->t = (uint64_t)t;
    m->h = (uint64_t)h;
    m->k = (uint64_t)k;
    m->e = (uint64_t)e;
    m->n1 = (uint64_t)n1;
    m->i = (uint64_t)i;
    m->gated = n1 == 2 * i;
    int64_t a = opm_op_get_int(op, "active_experts", 0);
    if (a) {
        uint64_t most = opm_mul(m->t, m->k, &ok);
        if (most > m->e || !ok) most = m->e;
        if ((uint64_t)a > most)
            return opm_err(err, OPM_EINVAL, "attrs.active_experts",
                           "expected at most min(E, T·k) = %llu experts, got %lld", (unsigned long long)most,
                           (long long)a);
        m->active = (uint64_t)a;
    } else {
        m->active = uniform_active(m->e, m->k, m->t);
    }
    return 0;
}

static int moe_validate(const opm_op *op, opm_error *err)
{
    moe_dims m;
    return moe_dims_of(op, &m, err);
}

static int moe_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    moe_dims m;
    if (moe_dims_of(op, &m, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1, bwd = opm_op_phase(op) == OPM_PHASE_TRAIN_BWD;
    /* the activation's entry in the one table: gated act(g)·u or plain act */
    const opm_flop_weight *aw =
        opm_flop_weight_find(m.gated ? (m.gelu ? "gelu_mul" : "silu_mul") : (m.gelu ? "gelu" : "silu"));
    uint64_t tk = opm_mul(m.t, m.k, &ok), tkh = opm_mul(tk, m.h, &ok), tki = opm_mul(tk, m.i, &ok);
    uint64_t fwd = opm_mul(opm_mul(2, tkh, &ok), opm_add(m.n1, m.i, &ok), &ok);
    uint64_t x = opm_tensor_bytes(m.x, &ok), tw = opm_tensor_bytes(m.tw, &ok), ids = opm_tensor_bytes(m.ids, &ok), y = opm_tensor_bytes(m.y, &ok);
    /* weights: all experts resident, the active ones read (each [E, ...]
     * tensor × active/E, exact since the leading dim is E) */
    uint64_t wall = 0, wact = 0, w12 = 0;
    for (size_t j = 0; j < m.nw; j++) {
        const opm_tensor *t = m.w[j];
        uint64_t el = 1;
        for (int d = 1; d < t->rank; d++) el = opm_mul(el, (uint64_t)t->shape[d], &ok);
        uint64_t act = opm_bytes(opm_mul(el, m.active, &ok), t->dtype, &ok);
        wall = opm_add(wall, opm_bytes(opm_mul(el, m.e, &ok), t->dtype, &ok), &ok);
        wact = opm_add(wact, act, &ok);
        if (j < 2) w12 = opm_add(w12, act, &ok);
    }
    uint64_t in = opm_add(opm_add(x, tw, &ok), ids, &ok);
    c->compute_dtype = m.x->dtype;
    c->weight_bytes = wall;
    if (bwd) {
        int recompute = opm_op_get_bool(op, "recompute", 0);
        c->matrix_flops = opm_mul(recompute ? 3 : 2, fwd, &ok);
        c->vector_flops = opm_add(opm_mul((uint64_t)aw->bwd, tki, &ok), opm_mul(3, tkh, &ok), &ok);
        uint64_t saved = recompute ? 0 : opm_bytes(opm_add(opm_mul(tk, m.n1, &ok), tkh, &ok), m.x->dtype, &ok);
        c->input_bytes = opm_add(opm_add(y, in, &ok), saved, &ok);
        c->read_bytes = opm_add(c->input_bytes, wact, &ok);
        c->write_bytes = opm_add(opm_add(x, tw, &ok), w12, &ok);
        c->output_bytes = c->write_bytes;
    } else {
        c->matrix_flops = fwd;
        c->vector_flops = opm_add(opm_mul((uint64_t)aw->fwd, tki, &ok), opm_mul(2, tkh, &ok), &ok);
        c->input_bytes = in;
        c->read_bytes = opm_add(in, wact, &ok);
        c->write_bytes = y;
        c->output_bytes = y;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int moe_short(opm_op *op, opm_error *err)
{
    int64_t t, h, k, e, i;
    opm_dtype dt, odt, idt, rdt, wdt;
    if (route_short(op, &t, &h, &k, &dt, &odt, &idt, err) || opm_short_int(op, "experts", 1, 1, &e, err) ||
        opm_short_int(op, "intermediate", 1, 1, &i, err) ||
        opm_short_dtype_key(op, "routing_dtype", OPM_FP32, &rdt, err) ||
        opm_short_dtype_key(op, "weight_dtype", dt, &wdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int gated = opm_op_get_bool(op, "gated", 1);
    opm_op_unset(op, "gated");
    if (i > INT64_MAX / 2) return opm_err(err, OPM_EOVERFLOW, "intermediate", "2·intermediate overflows 64 bits");
    int64_t xs[2] = {t, h}, ws[2] = {t, k}, w1[3] = {e, gated ? 2 * i : i, h}, w2[3] = {e, h, i};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, 2, dt, "x", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ws, 2, rdt, "topk_weights", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ws, 2, idt, "topk_ids", err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, w1, 3, wdt, "w1", err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, w2, 3, wdt, "w2", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, xs, 2, odt, "y", err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def moe_attrs[] = {
    {"activation", OPM_ATTR_STRING, 0, "silu (default) or gelu; gated (w1 holds 2·I rows) multiplies by up"},
    {"active_experts", OPM_ATTR_INT, 1, "experts whose weights are read (default: the uniform-routing estimate)"},
    {"recompute", OPM_ATTR_BOOL, 0, "backward recomputes both GEMMs instead of reading saved activations (default false)"},
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def moe_short_keys[] = {
    {"tokens", OPM_ATTR_INT, 1, "tokens T"},
    {"hidden", OPM_ATTR_INT, 1, "hidden size H"},
    {"intermediate", OPM_ATTR_INT, 1, "expert intermediate size I"},
    {"experts", OPM_ATTR_INT, 1, "experts E"},
    {"top_k", OPM_ATTR_INT, 1, "experts per token k"},
    {"gated", OPM_ATTR_BOOL, 0, "SwiGLU-style up + gate (w1 has 2·I rows; default true)"},
    {"weight_dtype", OPM_ATTR_STRING, 0, "dtype of w1 and w2 (default dtype)"},
    {"routing_dtype", OPM_ATTR_STRING, 0, "dtype of the routing weights (default fp32)"},
    {"index_dtype", OPM_ATTR_STRING, 0, "dtype of topk_ids (default int32)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_fused_moe = {
    OPM_KIND_FUSED_MOE, "fused_moe", "expert MLPs of a MoE layer: up(+gate), activation, down, weighted sum",
    "input x [T, H], input routing weights [T, k], integer input topk_ids [T, k], weight w1 [E, 2·I or I, H], "
    "weight w2 [E, H, I], optional per-expert weights [E, ...] (scales), output y [T, H]",
    moe_attrs, moe_short_keys, moe_short, moe_validate, moe_count,
    {3, MOE_MAX_WEIGHTS, 1, 0, -1},
};
