/* flop_weights.h — the one place where FLOPs per element are set: for each
 * elementwise function (forward and backward), for each reduction, for
 * softmax and for cross-entropy.  Transcendentals are charged more than one
 * FLOP because they cost several instructions on every vector unit we model;
 * the figures are conventions (docs/ops.md lists them with their reasoning),
 * not measurements.  Building blocks:
 *
 *   A = 1   one add, sub, mul, div, compare, select, max or min
 *   E = 4   one exp, log, sqrt, rsqrt, tanh or sigmoid
 *   G = 8   one erf-based GELU (or its tanh approximation), erf, or a general pow
 */
#ifndef OPM_FLOP_WEIGHTS_H
#define OPM_FLOP_WEIGHTS_H

#include <string.h>

#define OPM_FLOPS_ARITH 1   /* A: add, sub, mul, div, max, min, compare, select */
#define OPM_FLOPS_EXP 4     /* E: exp, log, sqrt, rsqrt, tanh, sigmoid */
#define OPM_FLOPS_GELU 8    /* G: gelu, gelu_tanh, erf, pow */

/* ---- elementwise functions ----
 * fwd: FLOPs per output element of the forward.
 * bwd: FLOPs per output element of the backward (every input's gradient
 *      together), derived in the comment beside each entry.
 * bwd_reads_x: the backward reads the forward inputs (or the forward output,
 *      the same size for a unary function) besides dy; 0 when the gradient
 *      is dy itself, negated or reduced (add, sub, neg, copy, cast).
 * gated: an activation of one half times the other (act(g)·u).  With two
 *      inputs they are g and u; with one input [..., 2H] its last dimension
 *      is split in two halves and the output is [..., H]. */
typedef struct opm_flop_weight {
    const char *op;
    int fwd, bwd;
    int bwd_reads_x, gated;
} opm_flop_weight;

static const opm_flop_weight opm_flop_weights[] = {
    /* arithmetic */
    {"add", 1, 1, 0, 0},        /* bwd: a broadcast operand's grad is a sum: ≤ 1 add */
    {"sub", 1, 1, 0, 0},        /* bwd: negate (or reduce) dy */
    {"mul", 1, 2, 1, 0},        /* bwd: dy·b, dy·a */
    {"div", 1, 3, 1, 0},        /* bwd: da = dy/b; db = −da·a/b */
    {"neg", 1, 1, 0, 0},        /* bwd: −dy */
    {"abs", 1, 2, 1, 0},        /* bwd: sign(x)·dy */
    {"max", 1, 3, 1, 0},        /* bwd: compare, one select per input */
    {"min", 1, 3, 1, 0},
    {"relu", 1, 2, 1, 0},       /* bwd: compare, select */
    {"where", 1, 2, 1, 0},      /* bwd: one select per branch */
    {"clamp", 2, 3, 1, 0},      /* fwd: max, min; bwd: two compares, a select */
    {"square", 1, 2, 1, 0},     /* bwd: 2·x·dy */
    {"reciprocal", 1, 2, 1, 0}, /* bwd: −dy·y·y */
    {"fma", 2, 2, 1, 0},        /* a·b + c; bwd: dy·b, dy·a (dc = dy) */
    /* transcendental (E = 4, G = 8) */
    {"exp", 4, 1, 1, 0},        /* bwd: dy·y */
    {"log", 4, 1, 1, 0},        /* bwd: dy/x */
    {"sqrt", 4, 2, 1, 0},       /* bwd: dy/(2·y) */
    {"rsqrt", 4, 4, 1, 0},      /* bwd: −0.5·dy·y·y·y */
    {"tanh", 4, 3, 1, 0},       /* bwd: dy·(1 − y·y) */
    {"sigmoid", 4, 3, 1, 0},    /* bwd: dy·y·(1 − y) */
    {"silu", 4, 9, 1, 0},       /* x·σ(x) ≈ σ; bwd: σ recomputed (4) + dy·σ·(1 + x·(1 − σ)) (5) */
    {"gelu", 8, 17, 1, 0},      /* bwd: Φ recomputed (7), φ = c·exp(−x²/2) (7), dy·(Φ + x·φ) (3) */
    {"gelu_tanh", 8, 17, 1, 0}, /* same count as the erf form */
    {"erf", 8, 7, 1, 0},        /* bwd: dy·c·exp(−x²) */
    {"pow", 8, 10, 1, 0},       /* x^p, scalar p; bwd: dy·p·x^(p−1) (pow 8 + 2) */
    /* fused gated activations: act(g)·u = act + 1 mul */
    {"silu_mul", 5, 11, 1, 1},      /* bwd: du = dy·silu(g) (5); dg = dy·u·silu'(g) given σ (6) */
    {"sigmoid_mul", 5, 9, 1, 1},    /* GLU; bwd: du = dy·σ (5); dg = dy·u·σ·(1 − σ) (4) */
    {"gelu_mul", 9, 20, 1, 1},      /* bwd: du = dy·gelu(g) (9); dg = dy·u·(Φ + g·φ), Φ shared (11) */
    {"gelu_tanh_mul", 9, 20, 1, 1},
    /* data movement: no arithmetic */
    {"copy", 0, 0, 0, 0},
    {"cast", 0, 0, 0, 0},
    {"fill", 0, 0, 0, 0},
    {NULL, 0, 0, 0, 0},
};

/* The entry of a named elementwise function, NULL if unknown.  The first
 * character is compared inline so a lookup stays a few nanoseconds. */
static inline const opm_flop_weight *opm_flop_weight_find(const char *op)
{
    for (const opm_flop_weight *w = opm_flop_weights; w->op; w++)
        if (w->op[0] == op[0] && strcmp(w->op, op) == 0) return w;
    return NULL;
}

/* Forward FLOPs per element of a named elementwise function, -1 if unknown. */
static inline int opm_flop_weight_of(const char *op)
{
    const opm_flop_weight *w = opm_flop_weight_find(op);
    return w ? w->fwd : -1;
}

/* ---- reductions (kind `reduction`) ----
 * FLOPs = per_in · (input elements) + per_out · (output elements), forward
 * and backward.  The backward reads dy (y-sized) and, where marked, x and y;
 * it writes dx (x-sized). */
typedef struct opm_reduce_cost {
    const char *op;
    int fwd_in, fwd_out;
    int bwd_in, bwd_out;
    int bwd_reads_x, bwd_reads_y;
    int index_out;  /* output holds indices (int64 in PyTorch) */
    int scan;       /* cumulative: one dim, output shaped like x */
    int has_grad;   /* 0: the output is not differentiable */
} opm_reduce_cost;

static const opm_reduce_cost opm_reduce_costs[] = {
    /* op        fwd/in fwd/out bwd/in bwd/out  x  y  idx scan grad */
    {"sum",       1, 0,   0, 0,   0, 0, 0, 0, 1}, /* 1 add per x; bwd: dy broadcast (a copy) */
    {"mean",      1, 1,   1, 0,   0, 0, 0, 0, 1}, /* + 1 divide per y; bwd: dy/n per x */
    {"max",       1, 0,   2, 0,   1, 1, 0, 0, 1}, /* 1 compare per x; bwd: select dy where x == y */
    {"min",       1, 0,   2, 0,   1, 1, 0, 0, 1},
    {"norm",      2, 4,   1, 1,   1, 1, 0, 0, 1}, /* L2: square, add per x; sqrt per y;
                                                     bwd: dy/y per y, x·(dy/y) per x */
    {"var",       4, 2,   3, 3,   1, 0, 0, 0, 1}, /* per x: add (mean), sub, square, add;
                                                     per y: two divides (mean, n − correction);
                                                     bwd: mean again, sub, mul per x; mean, 2·dy/(n − c) per y */
    {"std",       4, 6,   3, 5,   1, 1, 0, 0, 1}, /* var + sqrt per y; bwd: dy/(2·y) per y, then var's */
    {"logsumexp", 7, 5,   6, 0,   1, 1, 0, 0, 1}, /* per x: max, sub, exp, add; per y: log, add max;
                                                     bwd: dy·exp(x − y) per x */
    {"cumsum",    1, 0,   1, 0,   0, 0, 0, 1, 1}, /* 1 add per x; bwd: reverse cumsum of dy */
    {"argmax",    2, 0,   0, 0,   0, 0, 1, 0, 0}, /* compare, select the index */
    {"argmin",    2, 0,   0, 0,   0, 0, 1, 0, 0},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

static inline const opm_reduce_cost *opm_reduce_cost_find(const char *op)
{
    for (const opm_reduce_cost *r = opm_reduce_costs; r->op; r++)
        if (r->op[0] == op[0] && strcmp(r->op, op) == 0) return r;
    return NULL;
}

/* ---- softmax (kind `softmax`), per element ---- */
#define OPM_FLOPS_SOFTMAX_FWD (3 * OPM_FLOPS_ARITH + OPM_FLOPS_EXP + OPM_FLOPS_ARITH) /* max, sub, exp, sum, div = 8 */
#define OPM_FLOPS_SOFTMAX_BWD (4 * OPM_FLOPS_ARITH) /* dx = y·(dy − Σ dy·y): mul, sum, sub, mul = 4 */

/* ---- cross-entropy (kind `cross_entropy`), logits [N, V] ----
 * Fused (log_softmax and nll in one kernel, the [N, V] log-probabilities
 * never stored):
 *   forward   per logit: max, sub, exp, sum = 7; per row: log (4), −(x_t − m − lse) (2) = 6
 *   backward  per logit: exp(x − lse) (5), ·g (1) = 6; per row: −1 at the target, g = dy/N or dy[i] = 2
 * Unfused (PyTorch eager: log_softmax, then nll_loss):
 *   forward   per logit: max, sub, exp, sum, sub lse = 8; per row: log (4), gather and negate (1) = 5
 *   backward  per logit: log_softmax backward dlogp − exp(logp)·Σ dlogp = 7;
 *             per row: scatter −g at the target, g = 2
 * Label smoothing adds, per logit, the sum of the logits (fwd) or the −ε/V
 * term (bwd) = 1, and per row the blend (1 − ε)·nll + ε·(lse + m − Σx/V) = 6 (fwd).
 * Reduction: sum adds 1 per row; mean adds 1 per row and one divide. */
#define OPM_CE_FWD_PER_LOGIT 7
#define OPM_CE_FWD_PER_ROW 6
#define OPM_CE_BWD_PER_LOGIT 6
#define OPM_CE_BWD_PER_ROW 2
#define OPM_CE_UNFUSED_FWD_PER_LOGIT 8
#define OPM_CE_UNFUSED_FWD_PER_ROW 5
#define OPM_CE_UNFUSED_BWD_PER_LOGIT 7
#define OPM_CE_UNFUSED_BWD_PER_ROW 2
#define OPM_CE_SMOOTH_PER_LOGIT 1
#define OPM_CE_SMOOTH_FWD_PER_ROW 6

#endif
