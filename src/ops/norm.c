/* norm.c — the normalisation family: `layernorm` and `rmsnorm` (per row,
 * over the trailing `normalized_shape` dims), and `batchnorm`, `groupnorm`,
 * `instancenorm` (x [B, C, spatial...], statistics per C, per (B, group) and
 * per (B, C)).  docs/ops.md (from docs/ops_parts/norm.md) has the
 * derivations, a worked number each and the deviations from TraceLens.
 *
 * N = elements of x, P = parameter length (normalised size, or C), S =
 * statistic groups (rows; C; B·G; B·C), F = folded (scale, shift) pairs of
 * the channel norms (C; B·C, or B·G for groupnorm without affine; B·C), a/b =
 * affine/bias as 0/1.  "Batch statistics" = computed from x (always for
 * layer/rms/group; batchnorm and instancenorm with `training`), else the
 * running statistics are used (eval).
 *
 * Forward vector FLOPs:
 *   layernorm  3N (Σx, Σx²) + (2 + a + b)·N (normalise, scale, shift) + 3S
 *   rmsnorm    2N (Σx²) + (1 + a)·N + 2S
 *   channel    3N when batch statistics + 2N (y = x·α + β′ with per-pair
 *              α = γ·invstd, β′ = β − mean·α) + 3S (invstd: +eps, sqrt,
 *              reciprocal) + 3F (the pair) + running-stat update when
 *              training with running stats: 3 per running element (6C),
 *              instancenorm also 2·B·C to average the instances;
 *   `residual` (layer/rms: a fused x + r before the norm) adds N.
 * Forward bytes: reads x, γ, β (each tensor's dtype, else P elements of the
 * parameter dtype), the running statistics (2C) when kept; writes y, the
 * running statistics when updated, and in train_fwd with batch statistics
 * the fp32 statistics the backward reads (mean and invstd: 2S; rms: S).
 *
 * train_bwd, per requested gradient (`grad_input`, `grad_weight`,
 * `grad_bias`; dγ/dβ only where γ/β exist):
 *   layernorm  2N x̂ (if dx or dγ) + dx: (a + 7)·N + dγ: N (+N to sum rows
 *              when S > 1) + dβ: N when S > 1
 *   rmsnorm    N x̂ (if dx or dγ) + dx: (a + 6)·N + dγ: N (+N when S > 1)
 *   channel    batch statistics: 3N Σ(x−mean)·dy (if dx or dγ) + N Σdy (if
 *              dx or dβ) + 5N dx; dγ, dβ then cost O(B·C) (not counted);
 *              eval: 2N dx (dy·invstd·γ) + 3N dγ + N dβ + 3C invstd (for
 *              dx or dγ).
 *   Reads dy, x (when a requested gradient needs it), the saved statistics
 *   (or running ones in eval), γ when dx is requested; writes dx, dγ, dβ. */
#include <string.h>
#include "kind.h"

typedef struct norm {
    const opm_tensor *x, *y, *gamma, *beta;
    uint64_t n, p, c, b, s, pairs;
    int rowwise, rms, inst, affine, bias, running, batch, residual;
    int gi, gw, gb; /* gradients asked of train_bwd, after affine/bias */
    opm_dtype pdt;  /* parameter and running-statistic dtype */
} norm;

static int train_phase(const opm_op *op)
{
    return opm_op_phase(op) == OPM_PHASE_TRAIN_FWD || opm_op_phase(op) == OPM_PHASE_TRAIN_BWD;
}

/* Trailing normalised dims of layernorm/rmsnorm → s->p. */
static int normalized(const opm_op *op, norm *s, int *ok, opm_error *err)
{
    const int64_t *ns;
    size_t nn = opm_op_get_ints(op, "normalized_shape", &ns);
    if (nn == 0) {
        s->p = (uint64_t)s->x->shape[s->x->rank - 1];
        return 0;
    }
    if (nn > (size_t)s->x->rank)
        return opm_err(err, OPM_EINVAL, "attrs.normalized_shape", "expected at most %d trailing dims of x",
                       s->x->rank);
    s->p = 1;
    for (size_t i = 0; i < nn; i++) {
        if (ns[i] != s->x->shape[(size_t)s->x->rank - nn + i])
            return opm_err(err, OPM_EINVAL, "attrs.normalized_shape",
                           "expected the trailing dims of x, got %lld at position %zu", (long long)ns[i], i);
        s->p = opm_mul(s->p, (uint64_t)ns[i], ok);
    }
    return 0;
}

/* γ/β as tensors or attributes: tensors given decide, attributes must agree. */
static int params(const opm_op *op, norm *s, int *ok, opm_error *err)
{
    s->gamma = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 0);
    s->beta = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 1);
    const opm_tensor *w[2] = {s->gamma, s->beta};
    for (int i = 0; i < 2 && w[i]; i++)
        if (opm_tensor_elems(w[i], ok) != s->p) {
            char f[OPM_ERROR_FIELD_MAX];
            opm_tensor_field(op, w[i], ".shape", f, sizeof f);
            return opm_err(err, OPM_EINVAL, f, "expected %s with %llu elements (%s)", i ? "beta" : "gamma",
                           (unsigned long long)s->p, s->rowwise ? "the normalised size" : "C");
        }
    int nw = s->beta ? 2 : s->gamma ? 1 : 0;
    if (nw) {
        if (opm_op_has(op, "affine") && !opm_op_get_bool(op, "affine", 1))
            return opm_err(err, OPM_EINVAL, "attrs.affine", "expected true (or none): weight tensors are given");
        s->affine = 1;
        s->bias = nw == 2;
        if (!s->rms && opm_op_has(op, "bias") && opm_op_get_bool(op, "bias", 0) != s->bias)
            return opm_err(err, OPM_EINVAL, "attrs.bias",
                           s->bias ? "expected true (or none): beta is given as the second weight"
                                   : "expected false (or none): only gamma is given; add beta as a second weight");
    } else {
        s->affine = opm_op_get_bool(op, "affine", !s->inst);
        s->bias = !s->rms && opm_op_get_bool(op, "bias", s->affine);
        if (s->bias && !s->affine)
            return opm_err(err, OPM_EINVAL, "attrs.bias", "expected affine: true for a learned shift");
    }
    s->pdt = s->gamma ? s->gamma->dtype : s->x->dtype;
    return 0;
}

static int dims(const opm_op *op, norm *s, opm_error *err)
{
    memset(s, 0, sizeof *s);
    opm_kind k = opm_op_kind(op);
    s->rms = k == OPM_KIND_RMSNORM;
    s->rowwise = s->rms || k == OPM_KIND_LAYERNORM;
    s->inst = k == OPM_KIND_INSTANCENORM;
    int min_rank = s->rowwise ? 1 : s->inst ? 3 : 2;
    if (!(s->x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, min_rank, OPM_MAX_RANK,
                                 s->rowwise ? "input x" : s->inst ? "input x [B, C, spatial...]" : "input x [B, C, ...]",
                                 err)) ||
        !(s->y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 1, OPM_MAX_RANK, "output y", err)))
        return OPM_EINVAL;
    if (opm_expect_shape(op, s->y, s->x->shape, s->x->rank, err)) return OPM_EINVAL;
    int ok = 1;
    s->n = opm_tensor_elems(s->x, &ok);
    if (s->rowwise) {
        if (normalized(op, s, &ok, err)) return OPM_EINVAL;
    } else {
        s->b = (uint64_t)s->x->shape[0];
        s->c = s->p = (uint64_t)s->x->shape[1];
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "tensors", "dimensions overflow 64 bits");
    if (params(op, s, &ok, err)) return OPM_EINVAL;

    s->batch = 1;
    if (k == OPM_KIND_BATCHNORM || s->inst) {
        s->running = opm_op_get_bool(op, "running_stats", !s->inst);
        if (opm_op_has(op, "training")) {
            s->batch = opm_op_get_bool(op, "training", 1);
            if (!s->batch && !s->running)
                return opm_err(err, OPM_EINVAL, "attrs.training",
                               "expected true: without running_stats the %s normalises with batch statistics",
                               s->inst ? "instance norm" : "batch norm");
        } else {
            s->batch = train_phase(op) || !s->running;
        }
    }
    if (s->rowwise) {
        s->s = s->n / s->p;
    } else if (k == OPM_KIND_GROUPNORM) {
        if (!opm_op_has(op, "num_groups"))
            return opm_err(err, OPM_EINVAL, "num_groups", "missing; groupnorm needs num_groups (dividing C)");
        int64_t g = opm_op_get_int(op, "num_groups", 0);
        if (g < 1 || s->c % (uint64_t)g)
            return opm_err(err, OPM_EINVAL, "attrs.num_groups", "expected a divisor of C = %llu, got %lld",
                           (unsigned long long)s->c, (long long)g);
        s->s = opm_mul(s->b, (uint64_t)g, &ok);
        s->pairs = s->affine ? opm_mul(s->b, s->c, &ok) : s->s;
    } else if (s->inst && s->batch) {
        s->s = s->pairs = opm_mul(s->b, s->c, &ok);
    } else {
        s->s = s->pairs = s->c;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "tensors", "dimensions overflow 64 bits");

    if (s->rowwise) {
        s->residual = opm_op_get_bool(op, "residual", 0);
        if (s->residual && opm_op_phase(op) == OPM_PHASE_TRAIN_BWD)
            return opm_err(err, OPM_EINVAL, "attrs.residual",
                           "expected false in train_bwd: the fused residual add is forward-only; count its "
                           "gradient with the norm's dx");
    }
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        s->gi = opm_op_get_bool(op, "grad_input", 1);
        s->gw = s->affine && opm_op_get_bool(op, "grad_weight", 1);
        s->gb = s->bias && opm_op_get_bool(op, "grad_bias", 1);
        if (!s->gi && !s->gw && !s->gb)
            return opm_err(err, OPM_EINVAL, "attrs.grad_input",
                           "expected grad_input, or grad_weight/grad_bias of an affine norm: this backward "
                           "computes nothing");
    }
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    norm s;
    return dims(op, &s, err);
}

static uint64_t forward_flops(const norm *s, int *ok)
{
    uint64_t n = s->n, f;
    if (s->rms) {
        f = opm_add(opm_mul(n, 3 + (uint64_t)s->affine, ok), opm_mul(2, s->s, ok), ok);
    } else if (s->rowwise) {
        f = opm_add(opm_mul(n, 5 + (uint64_t)s->affine + (uint64_t)s->bias, ok), opm_mul(3, s->s, ok), ok);
    } else {
        f = opm_mul(n, s->batch ? 5 : 2, ok);
        f = opm_add(f, opm_mul(3, opm_add(s->s, s->pairs, ok), ok), ok);
        if (s->batch && s->running) {
            f = opm_add(f, opm_mul(6, s->c, ok), ok);
            if (s->inst) f = opm_add(f, opm_mul(2, opm_mul(s->b, s->c, ok), ok), ok);
        }
    }
    return s->residual ? opm_add(f, n, ok) : f;
}

static uint64_t backward_flops(const norm *s, int *ok)
{
    uint64_t n = s->n, per = 0, fixed = 0;
    if (s->rowwise) {
        uint64_t rows = s->s > 1;
        if (s->gi || s->gw) per += s->rms ? 1 : 2;
        if (s->gi) per += (uint64_t)s->affine + (s->rms ? 6 : 7);
        if (s->gw) per += 1 + rows;
        if (s->gb) per += rows;
    } else if (s->batch) {
        if (s->gi || s->gw) per += 3;
        if (s->gi || s->gb) per += 1;
        if (s->gi) per += 5;
    } else {
        per = (s->gi ? 2u : 0u) + (s->gw ? 3u : 0u) + (s->gb ? 1u : 0u);
        fixed = s->gi || s->gw ? opm_mul(3, s->c, ok) : 0;
    }
    return opm_add(opm_mul(n, per, ok), fixed, ok);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    norm s;
    if (dims(op, &s, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t xb = opm_tensor_bytes(s.x, &ok), yb = opm_tensor_bytes(s.y, &ok);
    uint64_t gb = s.gamma ? opm_tensor_bytes(s.gamma, &ok) : s.affine ? opm_bytes(s.p, s.pdt, &ok) : 0;
    uint64_t bb = s.beta ? opm_tensor_bytes(s.beta, &ok) : s.bias ? opm_bytes(s.p, s.pdt, &ok) : 0;
    uint64_t run = s.running ? opm_bytes(s.c, s.pdt, &ok) : 0; /* one running statistic */
    uint64_t saved = opm_mul(s.s, s.rms ? 4 : 8, &ok);          /* fp32 mean and invstd */
    c->compute_dtype = s.x->dtype;
    c->weight_bytes = opm_add(opm_add(gb, bb, &ok), opm_mul(2, run, &ok), &ok);
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->vector_flops = backward_flops(&s, &ok);
        int need_x = s.gi || s.gw;
        uint64_t stats = need_x ? saved : 0;
        if (!s.batch) { /* eval: dx needs the running var, dγ also the mean */
            need_x = s.gw;
            stats = opm_mul(run, (uint64_t)(s.gi || s.gw) + (uint64_t)s.gw, &ok);
        }
        uint64_t in = opm_add(opm_add(yb, need_x ? xb : 0, &ok), stats, &ok);
        c->read_bytes = opm_add(in, s.gi ? gb : 0, &ok);
        c->write_bytes = opm_add(opm_add(s.gi ? xb : 0, s.gw ? gb : 0, &ok), s.gb ? bb : 0, &ok);
        c->input_bytes = in;
        c->output_bytes = c->write_bytes;
    } else {
        c->vector_flops = forward_flops(&s, &ok);
        uint64_t res = s.residual ? xb : 0;
        uint64_t upd = s.batch && s.running ? opm_mul(2, run, &ok) : 0;
        uint64_t st = opm_op_phase(op) == OPM_PHASE_TRAIN_FWD && s.batch ? saved : 0;
        c->read_bytes = opm_add(opm_add(xb, res, &ok), c->weight_bytes, &ok);
        c->output_bytes = opm_add(opm_add(yb, res, &ok), st, &ok);
        c->write_bytes = opm_add(c->output_bytes, upd, &ok);
        c->input_bytes = opm_add(xb, res, &ok);
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

#define GRAD_ATTRS                                                                               \
    {"grad_input", OPM_ATTR_BOOL, 0, "train_bwd computes dx (default true)"},                    \
    {"grad_weight", OPM_ATTR_BOOL, 0, "train_bwd computes dgamma when affine (default true)"}
#define GRAD_BIAS_ATTR {"grad_bias", OPM_ATTR_BOOL, 0, "train_bwd computes dbeta when bias (default true)"}

static const opm_attr_def ln_attrs[] = {
    {"normalized_shape", OPM_ATTR_INTS, 0, "trailing dims normalised over (default the last)"},
    {"affine", OPM_ATTR_BOOL, 0, "learned scale gamma (default true)"},
    {"bias", OPM_ATTR_BOOL, 0, "learned shift beta (default true when affine)"},
    {"eps", OPM_ATTR_DOUBLE, 0, "epsilon (does not change the counts)"},
    {"residual", OPM_ATTR_BOOL, 0, "fused residual add before the norm: reads r, writes x + r (default false)"},
    GRAD_ATTRS, GRAD_BIAS_ATTR,
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def rms_attrs[] = {
    {"normalized_shape", OPM_ATTR_INTS, 0, "trailing dims normalised over (default the last)"},
    {"affine", OPM_ATTR_BOOL, 0, "learned scale gamma (default true)"},
    {"eps", OPM_ATTR_DOUBLE, 0, "epsilon (does not change the counts)"},
    {"residual", OPM_ATTR_BOOL, 0, "fused residual add before the norm: reads r, writes x + r (default false)"},
    GRAD_ATTRS,
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def bn_attrs[] = {
    {"affine", OPM_ATTR_BOOL, 0, "learned per-channel scale gamma (default true)"},
    {"bias", OPM_ATTR_BOOL, 0, "learned per-channel shift beta (default true when affine)"},
    {"running_stats", OPM_ATTR_BOOL, 0, "keeps running mean and var of C (default true)"},
    {"training", OPM_ATTR_BOOL, 0,
     "normalise with batch statistics and update the running ones (default true in train_fwd and "
     "train_bwd, otherwise true only without running_stats)"},
    {"momentum", OPM_ATTR_DOUBLE, 0, "running-statistic momentum (does not change the counts)"},
    {"eps", OPM_ATTR_DOUBLE, 0, "epsilon (does not change the counts)"},
    GRAD_ATTRS, GRAD_BIAS_ATTR,
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def gn_attrs[] = {
    {"num_groups", OPM_ATTR_INT, 1, "channel groups sharing statistics (required; divides C)"},
    {"affine", OPM_ATTR_BOOL, 0, "learned per-channel scale gamma (default true)"},
    {"bias", OPM_ATTR_BOOL, 0, "learned per-channel shift beta (default true when affine)"},
    {"eps", OPM_ATTR_DOUBLE, 0, "epsilon (does not change the counts)"},
    GRAD_ATTRS, GRAD_BIAS_ATTR,
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def in_attrs[] = {
    {"affine", OPM_ATTR_BOOL, 0, "learned per-channel scale gamma (default false, as PyTorch)"},
    {"bias", OPM_ATTR_BOOL, 0, "learned per-channel shift beta (default true when affine)"},
    {"running_stats", OPM_ATTR_BOOL, 0, "keeps running mean and var of C (default false)"},
    {"training", OPM_ATTR_BOOL, 0,
     "normalise with per-instance statistics (PyTorch's use_input_stats; default true in train_fwd "
     "and train_bwd, otherwise true only without running_stats)"},
    {"momentum", OPM_ATTR_DOUBLE, 0, "running-statistic momentum (does not change the counts)"},
    {"eps", OPM_ATTR_DOUBLE, 0, "epsilon (does not change the counts)"},
    GRAD_ATTRS, GRAD_BIAS_ATTR,
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of x"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_layernorm = {
    OPM_KIND_LAYERNORM, "layernorm", "layer normalisation over trailing dims",
    "input x [...], output y (same shape), optional weights gamma and beta (normalised size)",
    ln_attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 2, 1, 0, -1},
};

const opm_kind_def opm_kind_rmsnorm = {
    OPM_KIND_RMSNORM, "rmsnorm", "RMS normalisation over trailing dims",
    "input x [...], output y (same shape), optional weight gamma (normalised size)",
    rms_attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 1, 1, 0, -1},
};

const opm_kind_def opm_kind_batchnorm = {
    OPM_KIND_BATCHNORM, "batchnorm", "batch normalisation: statistics per channel over batch and space",
    "input x [B, C, ...], output y (same shape), optional weights gamma [C] and beta [C]",
    bn_attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 2, 1, 0, -1},
};

const opm_kind_def opm_kind_groupnorm = {
    OPM_KIND_GROUPNORM, "groupnorm", "group normalisation: statistics per (sample, channel group)",
    "input x [B, C, ...], output y (same shape), optional weights gamma [C] and beta [C]",
    gn_attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 2, 1, 0, -1},
};

const opm_kind_def opm_kind_instancenorm = {
    OPM_KIND_INSTANCENORM, "instancenorm", "instance normalisation: statistics per (sample, channel) over space",
    "input x [B, C, spatial...], output y (same shape), optional weights gamma [C] and beta [C]",
    in_attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 2, 1, 0, -1},
};
