/* softmax.c — `softmax` along one dimension, and `cross_entropy` over a
 * (large) vocabulary.  Per-element FLOP weights live in flop_weights.h.
 *
 * softmax, n = x elements:
 *   forward   vector 8·n (max 1, subtract 1, exp 4, sum 1, divide 1);
 *             reads x, writes y.
 *   train_bwd vector 4·n (dx = y·(dy − Σ dy·y): mul, sum, sub, mul);
 *             reads y and dy, writes dx.
 *
 * cross_entropy: logits [N, V], targets [N] (int64/int32 class indices),
 * loss [] for reduction mean/sum or [N] for none; label_smoothing ε.
 * Fused (default, `fused: true`): log_softmax and nll in one kernel, the
 * [N, V] log-probabilities never stored; train_fwd also writes the per-row
 * log-sum-exp (fp32) that the backward reads to rebuild softmax:
 *   forward   vector N·V·(7 + s) + N·(6 + 6s) + R, s = [ε > 0],
 *             R = N (sum), N + 1 (mean), 0 (none);
 *             reads logits + targets, writes loss (+ N fp32 lse in train_fwd).
 *   train_bwd vector N·V·(6 + s) + 2·N  (dlogits = (softmax − onehot_ε)·g);
 *             reads logits, targets, lse, dy; writes dlogits [N, V].
 * Unfused (`fused: false`, PyTorch eager log_softmax + nll_loss): the [N, V]
 * log-probabilities are written and kept (workspace), nll reads N of them:
 *   forward   vector N·V·(8 + s) + N·(5 + 6s) + R; reads logits, targets,
 *             N gathered log-probs; writes logp [N, V] and the loss.
 *   train_bwd vector N·V·(7 + s) + 2·N; nll backward writes a dense dlogp
 *             [N, V] (zero fill + scatter), log_softmax backward reads dlogp
 *             and logp and writes dlogits: reads dy, targets, 2·N·V;
 *             writes 2·N·V. */
#include <string.h>
#include "flop_weights.h"
#include "kind.h"

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    const opm_tensor *x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 1, OPM_MAX_RANK, "input x", err);
    const opm_tensor *y = x ? opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 1, OPM_MAX_RANK, "output y", err) : NULL;
    if (!y) return OPM_EINVAL;
    int64_t dim = opm_op_get_int(op, "dim", -1);
    if (dim < -x->rank || dim >= x->rank)
        return opm_err(err, OPM_EINVAL, "attrs.dim", "expected a dimension in [%d, %d), got %lld",
                       -x->rank, x->rank, (long long)dim);
    return opm_expect_shape(op, y, x->shape, x->rank, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    if (validate(op, err)) return OPM_EINVAL;
    const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    int ok = 1;
    uint64_t n = opm_tensor_elems(x, &ok), xb = opm_tensor_bytes(x, &ok), yb = opm_tensor_bytes(y, &ok);
    c->compute_dtype = x->dtype;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->vector_flops = opm_mul(n, OPM_FLOPS_SOFTMAX_BWD, &ok);
        c->read_bytes = opm_add(yb, yb, &ok);
        c->write_bytes = xb;
        c->input_bytes = c->read_bytes;
        c->output_bytes = xb;
    } else {
        c->vector_flops = opm_mul(n, OPM_FLOPS_SOFTMAX_FWD, &ok);
        c->read_bytes = c->input_bytes = xb;
        c->write_bytes = c->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static const opm_attr_def attrs[] = {
    {"dim", OPM_ATTR_INT, 0, "dimension normalised over (default -1)"},
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of x"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_softmax = {
    OPM_KIND_SOFTMAX, "softmax", "softmax along one dimension",
    "input x [...], output y (same shape)", attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 0, 1, 0, -1},
};

/* ---- cross_entropy ---- */

enum { CE_MEAN, CE_SUM, CE_NONE };

typedef struct ce {
    const opm_tensor *logits, *targets, *loss;
    uint64_t n, v;
    int reduction, smooth, fused;
} ce;

static int ce_dims(const opm_op *op, ce *d, opm_error *err)
{
    memset(d, 0, sizeof *d);
    if (!(d->logits = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 2, 2, "logits [N, V]", err)) ||
        !(d->targets = opm_need_tensor(op, OPM_ROLE_INPUT, 1, 1, 1, "targets [N]", err)) ||
        !(d->loss = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 0, 1, "output loss", err)))
        return OPM_EINVAL;
    const char *red = opm_op_get_string(op, "reduction", "mean");
    if (strcmp(red, "mean") == 0) d->reduction = CE_MEAN;
    else if (strcmp(red, "sum") == 0) d->reduction = CE_SUM;
    else if (strcmp(red, "none") == 0) d->reduction = CE_NONE;
    else {
        static const char *const names[] = {"mean", "sum", "none", NULL};
        return opm_choice_err(err, "attrs.reduction", red, names, "expected mean, sum or none");
    }
    double eps = opm_op_get_double(op, "label_smoothing", 0.0);
    if (!(eps >= 0.0 && eps <= 1.0))
        return opm_err(err, OPM_EINVAL, "attrs.label_smoothing", "expected a number in [0, 1], got %g", eps);
    d->smooth = eps > 0.0;
    d->fused = opm_op_get_bool(op, "fused", 1);
    char f[OPM_ERROR_FIELD_MAX];
    opm_dtype td = d->targets->dtype;
    if (td != OPM_INT64 && td != OPM_INT32) {
        opm_tensor_field(op, d->targets, ".dtype", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected int64 (or int32) class indices, got %s", opm_dtype_name(td));
    }
    int64_t n = d->logits->shape[0];
    if (opm_expect_shape(op, d->targets, &n, 1, err)) return OPM_EINVAL;
    if (opm_expect_shape(op, d->loss, &n, d->reduction == CE_NONE ? 1 : 0, err)) return OPM_EINVAL;
    d->n = (uint64_t)n;
    d->v = (uint64_t)d->logits->shape[1];
    return 0;
}

static int ce_validate(const opm_op *op, opm_error *err)
{
    ce d;
    return ce_dims(op, &d, err);
}

static int ce_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    ce d;
    if (ce_dims(op, &d, err)) return OPM_EINVAL;
    int ok = 1;
    uint64_t nv = opm_mul(d.n, d.v, &ok), s = (uint64_t)d.smooth;
    uint64_t lb = opm_tensor_bytes(d.logits, &ok), tb = opm_tensor_bytes(d.targets, &ok);
    uint64_t yb = opm_tensor_bytes(d.loss, &ok);
    uint64_t lse = opm_bytes(d.n, OPM_FP32, &ok);                /* per-row statistics */
    uint64_t gathered = opm_bytes(d.n, d.logits->dtype, &ok);    /* N log-probs read by nll */
    uint64_t red = d.reduction == CE_SUM ? d.n : d.reduction == CE_MEAN ? d.n + 1 : 0;
    c->compute_dtype = d.logits->dtype;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        uint64_t per_logit = (d.fused ? OPM_CE_BWD_PER_LOGIT : OPM_CE_UNFUSED_BWD_PER_LOGIT) + s * OPM_CE_SMOOTH_PER_LOGIT;
        uint64_t per_row = d.fused ? OPM_CE_BWD_PER_ROW : OPM_CE_UNFUSED_BWD_PER_ROW;
        c->vector_flops = opm_add(opm_mul(nv, per_logit, &ok), opm_mul(d.n, per_row, &ok), &ok);
        /* logits' dtype for dlogits and the unfused intermediates */
        if (d.fused) {
            c->read_bytes = opm_add(opm_add(opm_add(lb, tb, &ok), lse, &ok), yb, &ok);
            c->write_bytes = lb;
        } else {
            c->read_bytes = opm_add(opm_add(opm_add(yb, tb, &ok), lb, &ok), lb, &ok); /* dy, t, dlogp, logp */
            c->write_bytes = opm_add(lb, lb, &ok);                                     /* dlogp, dlogits */
            c->workspace_bytes = lb;                                                   /* dlogp */
        }
        c->input_bytes = d.fused ? c->read_bytes : opm_add(opm_add(yb, tb, &ok), lb, &ok); /* dy, t, logp */
        c->output_bytes = lb;
    } else {
        uint64_t per_logit = (d.fused ? OPM_CE_FWD_PER_LOGIT : OPM_CE_UNFUSED_FWD_PER_LOGIT) + s * OPM_CE_SMOOTH_PER_LOGIT;
        uint64_t per_row = (d.fused ? OPM_CE_FWD_PER_ROW : OPM_CE_UNFUSED_FWD_PER_ROW) + s * OPM_CE_SMOOTH_FWD_PER_ROW;
        c->vector_flops = opm_add(opm_add(opm_mul(nv, per_logit, &ok), opm_mul(d.n, per_row, &ok), &ok), red, &ok);
        c->input_bytes = opm_add(lb, tb, &ok);
        if (d.fused) {
            c->read_bytes = c->input_bytes;
            c->write_bytes = c->output_bytes =
                opm_add(yb, opm_op_phase(op) == OPM_PHASE_TRAIN_FWD ? lse : 0, &ok);
        } else {
            c->read_bytes = opm_add(c->input_bytes, gathered, &ok);
            c->write_bytes = opm_add(lb, yb, &ok);
            c->output_bytes = yb;
            c->workspace_bytes = lb; /* logp [N, V], kept for the backward */
        }
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int ce_short(opm_op *op, opm_error *err)
{
    int64_t n, v;
    opm_dtype dt, odt, tdt;
    if (opm_short_int(op, "tokens", 1, 0, &n, err) || opm_short_int(op, "vocab", 1, 0, &v, err) ||
        opm_short_dtypes(op, &dt, &odt, err) || opm_short_dtype_key(op, "target_dtype", OPM_INT64, &tdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int64_t logits[2] = {n, v};
    int none = strcmp(opm_op_get_string(op, "reduction", "mean"), "none") == 0;
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, logits, 2, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, &n, 1, tdt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, &n, none ? 1 : 0, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def ce_attrs[] = {
    {"reduction", OPM_ATTR_STRING, 0, "mean, sum or none (default mean)"},
    {"label_smoothing", OPM_ATTR_DOUBLE, 0, "epsilon in [0, 1] (default 0)"},
    {"fused", OPM_ATTR_BOOL, 0,
     "one kernel, the [N, V] log-probabilities never stored (default true); false: eager log_softmax + nll_loss"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def ce_short_keys[] = {
    {"tokens", OPM_ATTR_INT, 1, "rows N (tokens)"},
    {"vocab", OPM_ATTR_INT, 1, "classes V (vocabulary size)"},
    {"target_dtype", OPM_ATTR_STRING, 0, "dtype of the targets (default int64)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_cross_entropy = {
    OPM_KIND_CROSS_ENTROPY, "cross_entropy", "softmax cross-entropy loss over a vocabulary (log_softmax + nll)",
    "input logits [N, V], input targets [N] (int64), output loss [] (mean/sum) or [N] (none)",
    ce_attrs, ce_short_keys, ce_short, ce_validate, ce_count,
    {2, 0, 1, 0, -1},
};
