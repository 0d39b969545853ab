/* ssm.c — sequence-model kernels: `causal_conv1d` (the depthwise causal
 * convolution of Mamba blocks, Dao-AILab causal-conv1d) and `mamba_ssd` (the
 * Mamba-2 chunked state-space-duality scan, Dao & Gu 2024, "Transformers are
 * SSMs", §6 and Listing 1, as mamba_ssm's mamba_chunk_scan_combined computes
 * it).  Per-element weights: A = 1 (add, mul), E = 4 (exp) and the silu /
 * silu_mul entries of the one table, flop_weights.h (s_f, s_b: forward and
 * backward of silu; g_f, g_b: of silu_mul).  docs/ops.md has every term.
 *
 * causal_conv1d: x [B, D, L], weight [D, W] (or [D, 1, W]), optional bias [D],
 * optional initial_states [B, D, W−1] in and final_states out; y [B, D, L];
 * attr activation none | silu | swish.  n = B·D·L.  All vector FLOPs.
 *   forward   2·n·W + n (bias) + s_f·n (activation);
 *             reads x, initial states, weight, bias; writes y, final states.
 *   train_bwd 2·n·W (dx) + 2·n·W (dw) + n (dbias) and, with an activation,
 *             2·n·W + n (the pre-activation recomputed) + s_b·n; reads dy,
 *             d(final states), x, initial states, weight, bias (only to
 *             recompute); writes dx, d(initial states), dw, dbias.
 *
 * mamba_ssd: x [B, L, H, P], dt [B, L, H], B and C [B, L, G, N], weight A [H];
 * optional input z (layout z, [B, L, H, P]) and initial states (layout
 * initial_states, [B, H, P, N]); optional weights D (layout D, [H] or [H, P])
 * and dt_bias (layout dt_bias, [H]); output y [B, L, H, P] and optionally the
 * final states [B, H, P, N] or every chunk's states [B, c, H, P, N].  Chunk
 * size Q (attr chunk_size, default 256), c = ⌈L/Q⌉ chunks, and
 * n = ⌊L/Q⌋·Q(Q+1)/2 + r(r+1)/2 (r = L mod Q) the causal (lower-triangular)
 * score pairs of the chunks of one sequence.  Per sequence (× B):
 *   forward matrix  2·G·n·N        CB = C·Bᵀ within chunks (per group)
 *                 + 2·H·n·P        Y_diag = (CB ∘ decay mask)·X
 *                 + 2·H·L·N·P      chunk states = (B ∘ decay)ᵀ·X
 *                 + 2·H·L·N·P      Y_off = C·(state entering the chunk)
 *           vector (2 + dt_bias + 9·softplus)·L·H   dA = dt·A, cumsum
 *                 + 7·H·n          exp(cum_l − cum_s)·dt_s·CB per score
 *                 + 6·L·H + L·H·P  exp(cum_last − cum_l)·dt_l, scale X
 *                 + (4 + 2·P·N)·c·H   chunk decay, s = decay·s + state
 *                 + 4·L·H + 2·L·H·P   exp(cum_l), scale, add to Y_diag
 *                 + 2·L·H·P (D skip) + g_f·L·H·P (z gate)
 *   train_bwd matrix: each forward product has two gradient products of its
 *                 size (dC, dB from dCB; dX, dCB from Y_diag; dX, dB from the
 *                 chunk states; dC, dstates from Y_off), and with `recompute`
 *                 (default, as mamba_ssm) CB and the chunk states again:
 *                 6·G·n·N + 4·H·n·P + 10·H·L·N·P (without: 4·G·n·N + 4·H·n·P
 *                 + 8·H·L·N·P, and the saved fp32 CB and chunk states read)
 *           vector (2 + dt_bias + 9·softplus)·L·H            dA, cumsum again
 *                 + [recompute] 6·L·H + L·H·P + (4 + 2·P·N)·c·H
 *                 + 12·H·n + (H − G)·n   mask 7, dCB 2, ddA 3; dCB per group
 *                 + 10·L·H + 2·L·H·P     dstates and dx-from-states scalings
 *                 + (4 + 4·P·N)·c·H      state passing backward
 *                 + 2·L·H·P              ddt = Σ_p dx·x
 *                 + (3 + dt_bias + 5·softplus)·L·H   dt chain
 *                 + 2·L·(H − G)·N        dB, dC summed per group
 *                 + 4·L·H·P (D) + g_b·L·H·P (z)
 *   bytes: forward reads every input and weight, writes the outputs; the
 *   backward reads dy, d(states), the inputs, weights and (with z) the
 *   un-gated y the forward saved, and writes one gradient per input and
 *   weight.  The fp32 intermediates the 5-kernel implementation passes
 *   through memory (dA cumsum, CB, chunk states) are not counted. */
#include <string.h>
#include "kind.h"
#include "flop_weights.h"

/* Per-element weights come from the one table (flop_weights.h): the silu of
 * causal_conv1d and the y·silu(z) gate of mamba_ssd, forward and backward,
 * and the building blocks A (add/mul) and E (exp) of the SSD terms. */
#define A_ OPM_FLOPS_ARITH
#define E_ OPM_FLOPS_EXP
#define SOFTPLUS_FWD (E_ + A_ + E_) /* log(1 + exp(x)) */
#define SOFTPLUS_BWD (E_ + A_)      /* dy·sigmoid(x) */
/* mamba_ssd vector terms, each per the unit named */
#define DT_FWD (2 * A_)                  /* per (l, h): dA = dt·A, cumsum add          */
#define MASK_PER_SCORE (A_ + E_ + 2 * A_) /* per (score, head): cum_l − cum_s, exp, ·dt_s, ·CB */
#define DECAY_DT (A_ + E_ + A_)          /* per (l, h): cum_last − cum_l, exp, ·dt_l   */
#define DCB_PER_SCORE (2 * A_)           /* per (score, head): dCB ∘ decay ∘ dt         */
#define DDA_PER_SCORE (3 * A_)           /* per (score, head): ddA from dCB·CB·decay, reverse cumsum */
#define DT_BWD (3 * A_)                  /* per (l, h): ddt += ddA·A, dA += ddA·dt       */

static int fw(const char *f) { return opm_flop_weight_find(f)->fwd; }
static int bw(const char *f) { return opm_flop_weight_find(f)->bwd; }

static const opm_tensor *need_rank(const opm_op *op, const opm_tensor *t, opm_role role, size_t nth, int rank,
                                   const char *what, opm_error *err)
{
    if (t && t->rank == rank) return t;
    return opm_need_tensor(op, role, nth, rank, rank, what, err);
}
/* Bytes of an optional tensor (0 for none). */
static uint64_t tb(const opm_tensor *t, int *ok)
{
    return t ? opm_tensor_bytes(t, ok) : 0;
}
#define OPM_MAX_TENSORS_SSD 8

/* ---------------------------- causal_conv1d ---------------------------- */

typedef struct conv_dims {
    uint64_t b, d, l, w;
    int act;
    const opm_tensor *x, *init, *wt, *bias, *y, *fin;
} conv_dims;

static int act_kind(const opm_op *op, opm_error *err)
{
    const char *a = opm_op_get_string(op, "activation", NULL);
    if (!a || !strcmp(a, "none")) return 0;
    if (!strcmp(a, "silu") || !strcmp(a, "swish")) return 1;
    opm_err(err, OPM_EINVAL, "attrs.activation", "expected none, silu or swish, got '%.40s'", a);
    return -1;
}

static int conv_dims_of(const opm_op *op, conv_dims *g, opm_error *err)
{
    memset(g, 0, sizeof *g);
    size_t nin = 0, nw = 0, nout = 0;
    for (size_t i = 0, nt = opm_op_tensor_count(op); i < nt; i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        if (t->role == OPM_ROLE_INPUT) *(nin++ ? &g->init : &g->x) = t;
        else if (t->role == OPM_ROLE_WEIGHT) *(nw++ ? &g->bias : &g->wt) = t;
        else if (t->role == OPM_ROLE_OUTPUT) *(nout++ ? &g->fin : &g->y) = t;
    }
    if (!(g->x = need_rank(op, g->x, OPM_ROLE_INPUT, 0, 3, "input x [B, D, L]", err)) ||
        !(g->wt = g->wt && (g->wt->rank == 2 || g->wt->rank == 3)
                      ? g->wt : opm_need_tensor(op, OPM_ROLE_WEIGHT, 0, 2, 3, "weight [D, W]", err)) ||
        !(g->y = need_rank(op, g->y, OPM_ROLE_OUTPUT, 0, 3, "output y [B, D, L]", err)))
        return OPM_EINVAL;
    const opm_tensor *x = g->x, *w = g->wt;
    int64_t b = x->shape[0], d = x->shape[1], l = x->shape[2], k = w->shape[w->rank - 1];
    if (w->shape[0] != d || (w->rank == 3 && w->shape[1] != 1)) {
        char f[OPM_ERROR_FIELD_MAX];
        opm_tensor_field(op, w, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected a depthwise weight [%lld, W] or [%lld, 1, W]",
                       (long long)d, (long long)d);
    }
    if (opm_expect_shape(op, g->y, x->shape, 3, err) || (g->bias && opm_expect_shape(op, g->bias, &d, 1, err))) return OPM_EINVAL;
    int64_t st[3] = {b, d, k - 1};
    if ((g->init || g->fin) && k < 2)
        return opm_err(err, OPM_EINVAL, "tensors", "expected no conv states with a kernel width of 1");
    if ((g->init && opm_expect_shape(op, g->init, st, 3, err)) || (g->fin && opm_expect_shape(op, g->fin, st, 3, err)))
        return OPM_EINVAL;
    if ((g->act = act_kind(op, err)) < 0) return OPM_EINVAL;
    g->b = (uint64_t)b;
    g->d = (uint64_t)d;
    g->l = (uint64_t)l;
    g->w = (uint64_t)k;
    return 0;
}

static int conv_validate(const opm_op *op, opm_error *err)
{
    conv_dims g;
    return conv_dims_of(op, &g, err);
}

static int conv_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    conv_dims g;
    if (conv_dims_of(op, &g, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1, act = g.act, has_bias = g.bias != NULL;
    uint64_t n = opm_mul(opm_mul(g.b, g.d, &ok), g.l, &ok);
    uint64_t conv = opm_mul(opm_mul(2, n, &ok), g.w, &ok);
    const opm_flop_weight *silu = act ? opm_flop_weight_find("silu") : NULL;
    uint64_t aw = silu ? (uint64_t)silu->fwd : 0, ab = silu ? (uint64_t)silu->bwd : 0;
    uint64_t x = tb(g.x, &ok), y = tb(g.y, &ok), w = tb(g.wt, &ok);
    uint64_t bias = tb(g.bias, &ok);
    uint64_t init = tb(g.init, &ok), fin = tb(g.fin, &ok);
    uint64_t fwd = opm_add(opm_add(conv, has_bias ? n : 0, &ok), act ? opm_mul(aw, n, &ok) : 0, &ok);
    c->compute_dtype = g.x->dtype;
    c->weight_bytes = opm_add(w, bias, &ok);
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        uint64_t v = opm_add(opm_mul(2, conv, &ok), has_bias ? n : 0, &ok);
        if (act) /* the pre-activation is recomputed, then the silu backward */
            v = opm_add(opm_add(v, opm_add(conv, has_bias ? n : 0, &ok), &ok), opm_mul(ab, n, &ok), &ok);
        c->vector_flops = v;
        c->input_bytes = opm_add(opm_add(y, x, &ok), opm_add(init, fin, &ok), &ok);
        c->read_bytes = opm_add(opm_add(c->input_bytes, w, &ok), act ? bias : 0, &ok);
        c->write_bytes = opm_add(opm_add(x, w, &ok), opm_add(bias, init, &ok), &ok);
        c->output_bytes = c->write_bytes;
    } else {
        c->vector_flops = fwd;
        c->input_bytes = opm_add(x, init, &ok);
        c->read_bytes = opm_add(c->input_bytes, c->weight_bytes, &ok);
        c->write_bytes = opm_add(y, fin, &ok);
        c->output_bytes = c->write_bytes;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int conv_short(opm_op *op, opm_error *err)
{
    int64_t b, d, l, w;
    opm_dtype dt, odt;
    if (opm_short_int(op, "batch", 0, 1, &b, err) || opm_short_int(op, "dim", 1, 1, &d, err) ||
        opm_short_int(op, "seqlen", 1, 1, &l, err) || opm_short_int(op, "width", 1, 1, &w, err) ||
        opm_short_dtypes(op, &dt, &odt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int bias = opm_op_get_bool(op, "bias", 0);
    opm_op_unset(op, "bias");
    int64_t xs[3] = {b, d, l}, ws[2] = {d, w};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, 3, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, ws, 2, dt, NULL, err) ||
        (bias && opm_op_add_tensor(op, OPM_ROLE_WEIGHT, &d, 1, dt, "bias", err)) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, xs, 3, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def conv_attrs[] = {
    {"activation", OPM_ATTR_STRING, 0, "none (default), silu or swish after the convolution"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def conv_short_keys[] = {
    {"batch", OPM_ATTR_INT, 1, "batch B (default 1)"},
    {"dim", OPM_ATTR_INT, 1, "channels D"},
    {"seqlen", OPM_ATTR_INT, 1, "sequence length L"},
    {"width", OPM_ATTR_INT, 1, "kernel width W"},
    {"bias", OPM_ATTR_BOOL, 0, "add a bias vector [D] in dtype (default false)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_causal_conv1d = {
    OPM_KIND_CAUSAL_CONV1D, "causal_conv1d", "depthwise causal 1-D convolution (+ bias, + silu) of Mamba blocks",
    "input x [B, D, L], optional input initial_states [B, D, W-1], weight [D, W] (or [D, 1, W]), optional "
    "weight bias [D], output y [B, D, L], optional output final_states [B, D, W-1]",
    conv_attrs, conv_short_keys, conv_short, conv_validate, conv_count,
    {2, 2, 2, 0, -1},
};

/* ------------------------------ mamba_ssd ------------------------------ */

typedef struct ssd_dims {
    uint64_t b, l, h, p, g, n, q, chunks, tri;
    uint64_t sq_full;          /* Σ over chunks of (chunk length)², for saved CB */
    const opm_tensor *x, *dt, *bm, *cm, *z, *init, *a, *d, *dtb, *y, *st;
} ssd_dims;

static int ssd_dims_of(const opm_op *op, ssd_dims *s, opm_error *err)
{
    memset(s, 0, sizeof *s);
    char f[OPM_ERROR_FIELD_MAX];
    /* one pass: the first four inputs are x, dt, B, C, the first weight A,
     * the first output y; the rest are the optional tensors */
    const opm_tensor *in[4] = {NULL, NULL, NULL, NULL}, *extra[OPM_MAX_TENSORS_SSD];
    size_t nin = 0, nw = 0, nout = 0, nx = 0;
    for (size_t i = 0, nt = opm_op_tensor_count(op); i < nt; i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        if (t->role == OPM_ROLE_INPUT && nin < 4) in[nin++] = t;
        else if (t->role == OPM_ROLE_WEIGHT && nw++ == 0) s->a = t;
        else if (t->role == OPM_ROLE_OUTPUT && nout++ == 0) s->y = t;
        else if (t->role != OPM_ROLE_WORKSPACE && nx < OPM_MAX_TENSORS_SSD) extra[nx++] = t;
    }
    if (!(s->x = need_rank(op, in[0], OPM_ROLE_INPUT, 0, 4, "input x [B, L, H, P]", err)) ||
        !(s->dt = need_rank(op, in[1], OPM_ROLE_INPUT, 1, 3, "input dt [B, L, H]", err)) ||
        !(s->bm = need_rank(op, in[2], OPM_ROLE_INPUT, 2, 4, "input B [B, L, G, N]", err)) ||
        !(s->cm = need_rank(op, in[3], OPM_ROLE_INPUT, 3, 4, "input C [B, L, G, N]", err)) ||
        !(s->a = need_rank(op, s->a, OPM_ROLE_WEIGHT, 0, 1, "weight A [H]", err)) ||
        !(s->y = need_rank(op, s->y, OPM_ROLE_OUTPUT, 0, 4, "output y [B, L, H, P]", err)))
        return OPM_EINVAL;
    const int64_t *xs = s->x->shape, *bs = s->bm->shape;
    int64_t b = xs[0], l = xs[1], h = xs[2], p = xs[3], g = bs[2], n = bs[3];
    int64_t dts[3] = {b, l, h}, bcs[4] = {b, l, g, n}, st[4] = {b, h, p, n};
    if (opm_expect_shape(op, s->dt, dts, 3, err) || opm_expect_shape(op, s->cm, bcs, 4, err) || opm_expect_shape(op, s->a, &h, 1, err) ||
        opm_expect_shape(op, s->y, xs, 4, err))
        return OPM_EINVAL;
    if (bs[0] != b || bs[1] != l || h % g != 0) {
        opm_tensor_field(op, s->bm, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected B [%lld, %lld, G, N] with G dividing the %lld heads",
                       (long long)b, (long long)l, (long long)h);
    }
    for (size_t i = 0; i < nx; i++) {
        const opm_tensor *t = extra[i], **slot = NULL;
        const char *lay = t->layout;
        int rc = 0;
        if (t->role == OPM_ROLE_INPUT) {
            if (lay[0] == 'z' && !lay[1]) {
                slot = &s->z;
                rc = opm_expect_shape(op, t, xs, 4, err);
            } else if (lay[0] == 'i' && !strcmp(lay, "initial_states")) {
                slot = &s->init;
                rc = opm_expect_shape(op, t, st, 4, err);
            }
        } else if (t->role == OPM_ROLE_WEIGHT) {
            if (lay[0] == 'D' && !lay[1]) {
                int64_t hp[2] = {h, p};
                slot = &s->d;
                if (!(t->rank == 1 && t->shape[0] == h)) rc = opm_expect_shape(op, t, hp, 2, err);
            } else if (lay[0] == 'd' && !strcmp(lay, "dt_bias")) {
                slot = &s->dtb;
                rc = opm_expect_shape(op, t, &h, 1, err);
            }
        } else if (t->role == OPM_ROLE_OUTPUT) {
            slot = &s->st;
            if (t->rank != 5) {
                rc = opm_expect_shape(op, t, st, 4, err);
            } else if (t->shape[0] != b || t->shape[2] != h || t->shape[3] != p || t->shape[4] != n) {
                opm_tensor_field(op, t, ".shape", f, sizeof f);
                return opm_err(err, OPM_EINVAL, f,
                               "expected the states [B, H, P, N] = [%lld, %lld, %lld, %lld] or [B, chunks, H, P, N]",
                               (long long)b, (long long)h, (long long)p, (long long)n);
            }
        } else {
            continue; /* grads are refused before validate */
        }
        if (rc) return rc;
        if (!slot || *slot) {
            opm_tensor_field(op, t, ".layout", f, sizeof f);
            return opm_err(err, OPM_EINVAL, f,
                           t->role == OPM_ROLE_INPUT    ? "expected an extra input with layout z or initial_states, once each"
                           : t->role == OPM_ROLE_WEIGHT ? "expected an extra weight with layout D or dt_bias, once each"
                                                        : "expected at most one states output");
        }
        *slot = t;
    }
    uint64_t q = (uint64_t)opm_op_get_int(op, "chunk_size", 256), ul = (uint64_t)l;
    uint64_t full = ul / q, r = ul % q;
    s->chunks = full + (r != 0);
    if (s->st && s->st->rank == 5 && (uint64_t)s->st->shape[1] != s->chunks) {
        opm_tensor_field(op, s->st, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected %llu chunks (seqlen %lld, chunk_size %llu), got %lld",
                       (unsigned long long)s->chunks, (long long)l, (unsigned long long)q,
                       (long long)s->st->shape[1]);
    }
    int ok = 1;
    s->tri = opm_add(opm_mul(full, opm_mul(q, q + 1, &ok) / 2, &ok), opm_mul(r, r + 1, &ok) / 2, &ok);
    s->sq_full = opm_add(opm_mul(full, opm_mul(q, q, &ok), &ok), opm_mul(r, r, &ok), &ok);
    s->b = (uint64_t)b;
    s->l = ul;
    s->h = (uint64_t)h;
    s->p = (uint64_t)p;
    s->g = (uint64_t)g;
    s->n = (uint64_t)n;
    s->q = q;
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "attrs.chunk_size", "chunk sizes overflow 64 bits");
    return 0;
}

static int ssd_validate(const opm_op *op, opm_error *err)
{
    ssd_dims s;
    return ssd_dims_of(op, &s, err);
}

/* a·b·c·d with overflow checks */
static uint64_t m4(uint64_t a, uint64_t b, uint64_t c, uint64_t d, int *ok)
{
    return opm_mul(opm_mul(a, b, ok), opm_mul(c, d, ok), ok);
}

static int ssd_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    ssd_dims s;
    if (ssd_dims_of(op, &s, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1, bwd = opm_op_phase(op) == OPM_PHASE_TRAIN_BWD;
    int recompute = bwd && opm_op_get_bool(op, "recompute", 1), softplus = opm_op_get_bool(op, "dt_softplus", 0);
    uint64_t B = s.b, H = s.h, P = s.p, N = s.n, G = s.g, L = s.l;
    uint64_t gn = m4(2, G, s.tri, N, &ok);         /* CB = C·Bᵀ           */
    uint64_t hp = m4(2, H, s.tri, P, &ok);         /* (CB ∘ mask)·X       */
    uint64_t lnp = opm_mul(m4(2, H, L, N, &ok), P, &ok); /* one state product */
    uint64_t lh = opm_mul(L, H, &ok), lhp = opm_mul(lh, P, &ok), ch = opm_mul(s.chunks, H, &ok);
    uint64_t pn = opm_mul(P, N, &ok), ht = opm_mul(H, s.tri, &ok);
    /* vector terms of the forward, per sequence (see the table at the top) */
    uint64_t v_dt = opm_mul(lh, DT_FWD + (s.dtb ? A_ : 0) + (softplus ? SOFTPLUS_FWD : 0), &ok);
    uint64_t v_mask = opm_mul(MASK_PER_SCORE, ht, &ok);
    uint64_t v_states = opm_add(opm_mul(lh, DECAY_DT, &ok), opm_mul(A_, lhp, &ok), &ok);
    uint64_t v_pass = opm_mul(ch, opm_add(E_, opm_mul(2 * A_, pn, &ok), &ok), &ok);
    uint64_t v_out = opm_add(opm_mul(lh, E_, &ok), opm_mul(2 * A_, lhp, &ok), &ok);
    uint64_t mat, vec;
    if (!bwd) {
        mat = opm_add(opm_add(gn, hp, &ok), opm_mul(2, lnp, &ok), &ok);
        vec = opm_add(opm_add(v_dt, v_mask, &ok), opm_add(opm_add(v_states, v_pass, &ok), v_out, &ok), &ok);
        if (s.d) vec = opm_add(vec, opm_mul(2 * A_, lhp, &ok), &ok);
        if (s.z) vec = opm_add(vec, opm_mul((uint64_t)fw("silu_mul"), lhp, &ok), &ok);
    } else {
        /* each forward product has two gradient products of its size; with
         * recompute, CB and the chunk states (and their vector work) again */
        mat = opm_add(opm_add(opm_mul(2, gn, &ok), opm_mul(2, hp, &ok), &ok), opm_mul(4, lnp, &ok), &ok);
        vec = v_dt;
        if (recompute) {
            mat = opm_add(mat, opm_add(gn, lnp, &ok), &ok);
            vec = opm_add(vec, opm_add(v_states, v_pass, &ok), &ok);
        }
        uint64_t hg = H - G; /* heads summed into their group's dB, dC, dCB */
        vec = opm_add(vec, opm_mul(MASK_PER_SCORE + DCB_PER_SCORE + DDA_PER_SCORE, ht, &ok), &ok);
        vec = opm_add(vec, opm_mul(opm_mul(A_, hg, &ok), s.tri, &ok), &ok);
        vec = opm_add(vec, opm_add(opm_mul(lh, E_ + DECAY_DT, &ok), opm_mul(2 * A_, lhp, &ok), &ok), &ok);
        vec = opm_add(vec, opm_mul(ch, opm_add(E_, opm_mul(4 * A_, pn, &ok), &ok), &ok), &ok);
        vec = opm_add(vec, opm_mul(2 * A_, lhp, &ok), &ok);
        vec = opm_add(vec, opm_mul(lh, DT_BWD + (s.dtb ? A_ : 0) + (softplus ? SOFTPLUS_BWD : 0), &ok), &ok);
        vec = opm_add(vec, opm_mul(2 * A_, opm_mul(L, opm_mul(hg, N, &ok), &ok), &ok), &ok);
        if (s.d) vec = opm_add(vec, opm_mul(4 * A_, lhp, &ok), &ok);
        if (s.z) vec = opm_add(vec, opm_mul((uint64_t)bw("silu_mul"), lhp, &ok), &ok);
    }
    c->matrix_flops = opm_mul(B, mat, &ok);
    c->vector_flops = opm_mul(B, vec, &ok);
    c->compute_dtype = s.x->dtype;
    /* bytes from the element counts the shapes already gave */
    uint64_t xe = opm_mul(B, lhp, &ok), bce = opm_mul(opm_mul(B, L, &ok), opm_mul(G, N, &ok), &ok);
    uint64_t se = opm_mul(opm_mul(B, H, &ok), pn, &ok), ye = opm_bytes(xe, s.y->dtype, &ok);
    uint64_t in = opm_add(opm_add(opm_bytes(xe, s.x->dtype, &ok), opm_bytes(opm_mul(B, lh, &ok), s.dt->dtype, &ok), &ok),
                          opm_add(opm_bytes(bce, s.bm->dtype, &ok), opm_bytes(bce, s.cm->dtype, &ok), &ok), &ok);
    if (s.z) in = opm_add(in, opm_bytes(xe, s.z->dtype, &ok), &ok);
    if (s.init) in = opm_add(in, opm_bytes(se, s.init->dtype, &ok), &ok);
    uint64_t w = opm_bytes(H, s.a->dtype, &ok);
    if (s.d) w = opm_add(w, opm_bytes(s.d->rank == 1 ? H : opm_mul(H, P, &ok), s.d->dtype, &ok), &ok);
    if (s.dtb) w = opm_add(w, opm_bytes(H, s.dtb->dtype, &ok), &ok);
    uint64_t out = ye;
    if (s.st) out = opm_add(out, opm_bytes(s.st->rank == 5 ? opm_mul(se, s.chunks, &ok) : se, s.st->dtype, &ok), &ok);
    c->weight_bytes = w;
    if (bwd) {
        /* dy, d(states) and the inputs; with z the un-gated output saved by
         * the forward; without recompute the fp32 CB and chunk states */
        uint64_t saved = s.z ? ye : 0;
        if (!recompute) {
            uint64_t cb = opm_mul(opm_mul(B, G, &ok), s.sq_full, &ok);
            uint64_t st = opm_mul(opm_mul(B, ch, &ok), pn, &ok);
            saved = opm_add(saved, opm_bytes(opm_add(cb, st, &ok), OPM_FP32, &ok), &ok);
        }
        c->input_bytes = opm_add(opm_add(out, in, &ok), saved, &ok);
        c->read_bytes = opm_add(c->input_bytes, w, &ok);
        c->write_bytes = opm_add(in, w, &ok);
        c->output_bytes = c->write_bytes;
    } else {
        c->input_bytes = in;
        c->read_bytes = opm_add(in, w, &ok);
        c->write_bytes = out;
        c->output_bytes = out;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int ssd_short(opm_op *op, opm_error *err)
{
    int64_t b, l, h, p, n, g;
    opm_dtype dt, odt, pdt, sdt;
    if (opm_short_int(op, "batch", 0, 1, &b, err) || opm_short_int(op, "seqlen", 1, 1, &l, err) ||
        opm_short_int(op, "heads", 1, 1, &h, err) || opm_short_int(op, "head_dim", 1, 1, &p, err) ||
        opm_short_int(op, "state_dim", 1, 1, &n, err) || opm_short_int(op, "groups", 0, 1, &g, err) ||
        opm_short_dtypes(op, &dt, &odt, err) || opm_short_dtype_key(op, "param_dtype", OPM_FP32, &pdt, err) ||
        opm_short_dtype_key(op, "state_dtype", OPM_FP32, &sdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int d_skip = opm_op_get_bool(op, "d_skip", 1), z = opm_op_get_bool(op, "z_gate", 0);
    int dtb = opm_op_get_bool(op, "dt_bias", 0), init = opm_op_get_bool(op, "initial_states", 0);
    int fin = opm_op_get_bool(op, "final_states", 0);
    static const char *const flags[] = {"d_skip", "z_gate", "dt_bias", "initial_states", "final_states"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) opm_op_unset(op, flags[i]);
    int64_t xs[4] = {b, l, h, p}, dts[3] = {b, l, h}, bcs[4] = {b, l, g, n}, st[4] = {b, h, p, n};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, 4, dt, "x", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, dts, 3, dt, "dt", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, bcs, 4, dt, "B", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, bcs, 4, dt, "C", err) ||
        (z && opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, 4, dt, "z", err)) ||
        (init && opm_op_add_tensor(op, OPM_ROLE_INPUT, st, 4, sdt, "initial_states", err)) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, &h, 1, pdt, "A", err) ||
        (d_skip && opm_op_add_tensor(op, OPM_ROLE_WEIGHT, &h, 1, pdt, "D", err)) ||
        (dtb && opm_op_add_tensor(op, OPM_ROLE_WEIGHT, &h, 1, pdt, "dt_bias", err)) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, xs, 4, odt, "y", err) ||
        (fin && opm_op_add_tensor(op, OPM_ROLE_OUTPUT, st, 4, sdt, "final_states", err)))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def ssd_attrs[] = {
    {"chunk_size", OPM_ATTR_INT, 1, "chunk length Q (default 256)"},
    {"dt_softplus", OPM_ATTR_BOOL, 0, "dt goes through softplus first (default false)"},
    {"recompute", OPM_ATTR_BOOL, 0, "backward recomputes CB and the chunk states instead of reading them (default true)"},
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def ssd_short_keys[] = {
    {"batch", OPM_ATTR_INT, 1, "batch B (default 1)"},
    {"seqlen", OPM_ATTR_INT, 1, "sequence length L"},
    {"heads", OPM_ATTR_INT, 1, "heads H"},
    {"head_dim", OPM_ATTR_INT, 1, "head dim P"},
    {"state_dim", OPM_ATTR_INT, 1, "state size N"},
    {"groups", OPM_ATTR_INT, 1, "B/C groups G dividing H (default 1)"},
    {"param_dtype", OPM_ATTR_STRING, 0, "dtype of A, D, dt_bias (default fp32)"},
    {"state_dtype", OPM_ATTR_STRING, 0, "dtype of initial/final states (default fp32)"},
    {"d_skip", OPM_ATTR_BOOL, 0, "D skip connection [H] (default true)"},
    {"z_gate", OPM_ATTR_BOOL, 0, "gate y·silu(z) (default false)"},
    {"dt_bias", OPM_ATTR_BOOL, 0, "dt_bias [H] added to dt (default false)"},
    {"initial_states", OPM_ATTR_BOOL, 0, "read initial states [B, H, P, N] (default false)"},
    {"final_states", OPM_ATTR_BOOL, 0, "write the final states [B, H, P, N] (default false)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_mamba_ssd = {
    OPM_KIND_MAMBA_SSD, "mamba_ssd", "Mamba-2 chunked SSD scan (intra-chunk, chunk states, state passing, output)",
    "inputs x [B, L, H, P], dt [B, L, H], B [B, L, G, N], C [B, L, G, N], optional z (layout z) and "
    "initial_states (layout initial_states, [B, H, P, N]); weight A [H], optional D (layout D, [H] or "
    "[H, P]) and dt_bias (layout dt_bias, [H]); output y [B, L, H, P], optional states [B, H, P, N] or "
    "[B, chunks, H, P, N]",
    ssd_attrs, ssd_short_keys, ssd_short, ssd_validate, ssd_count,
    {6, 3, 2, 0, -1},
};
