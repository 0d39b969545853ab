/* norm.c — row normalisations: `layernorm` and `rmsnorm` over the trailing
 * `normalized_shape` dims (default the last one), with an optional affine
 * scale (gamma) and, for layernorm, shift (beta).  Per element:
 *   layernorm forward   6 (mean 1, variance 3, normalise 2) + 1 scale + 1 shift
 *   rmsnorm   forward   3 (square 1, sum 1, normalise 1) + 1 scale
 *   layernorm train_bwd 7 + 2 for dgamma + 1 for dbeta
 *   rmsnorm   train_bwd 5 + 2 for dgamma
 * Bytes: x, gamma, beta read and y written once; train_fwd also writes the
 * per-row statistics (fp32 mean and rstd; rstd only for rmsnorm) that the
 * backward reads back with x and dy, writing dx, dgamma, dbeta. */
#include "kind.h"

typedef struct norm {
    const opm_tensor *x, *y;
    uint64_t n, rows, cols;
    int affine, bias, rms;
} norm;

static int dims(const opm_op *op, norm *s, opm_error *err)
{
    s->rms = opm_op_kind(op) == OPM_KIND_RMSNORM;
    if (!(s->x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 1, OPM_MAX_RANK, "input x", err)) ||
        !(s->y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 1, OPM_MAX_RANK, "output y", err)))
        return OPM_EINVAL;
    if (opm_expect_shape(op, s->y, s->x->shape, s->x->rank, err)) return OPM_EINVAL;
    const int64_t *ns;
    size_t nn = opm_op_get_ints(op, "normalized_shape", &ns);
    int ok = 1;
    s->cols = 1;
    if (nn == 0) {
        s->cols = (uint64_t)s->x->shape[s->x->rank - 1];
    } else {
        if (nn > (size_t)s->x->rank)
            return opm_err(err, OPM_EINVAL, "attrs.normalized_shape",
                           "expected at most %d trailing dims of x", s->x->rank);
        for (size_t i = 0; i < nn; i++) {
            if (ns[i] != s->x->shape[(size_t)s->x->rank - nn + i])
                return opm_err(err, OPM_EINVAL, "attrs.normalized_shape",
                               "expected the trailing dims of x, got %lld at position %zu",
                               (long long)ns[i], i);
            s->cols = opm_mul(s->cols, (uint64_t)ns[i], &ok);
        }
    }
    s->n = opm_tensor_elems(s->x, &ok);
    s->rows = s->n / s->cols;
    s->affine = opm_op_get_bool(op, "affine", 1);
    s->bias = !s->rms && s->affine && opm_op_get_bool(op, "bias", 1);
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "dimensions overflow 64 bits");
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    norm s = {0};
    return dims(op, &s, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    norm s = {0};
    if (dims(op, &s, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t xb = opm_tensor_bytes(s.x, &ok), yb = opm_tensor_bytes(s.y, &ok);
    /* Affine parameters: explicit weight tensors when given, else one
     * normalized-shape vector each in x's dtype. */
    uint64_t params = opm_role_bytes(op, OPM_ROLE_WEIGHT, &ok);
    if (!opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 0))
        params = opm_mul(opm_bytes(s.cols, s.x->dtype, &ok), (uint64_t)(s.affine + s.bias), &ok);
    uint64_t stats = opm_mul(s.rows, s.rms ? 4 : 8, &ok);
    c->compute_dtype = s.x->dtype;
    c->weight_bytes = params;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        uint64_t per = (s.rms ? 5 : 7) + (s.affine ? 2 : 0) + (s.bias ? 1 : 0);
        c->vector_flops = opm_mul(s.n, per, &ok);
        c->read_bytes = opm_add(opm_add(opm_add(xb, yb, &ok), params, &ok), stats, &ok);
        c->write_bytes = opm_add(xb, params, &ok);
        c->input_bytes = opm_add(opm_add(xb, yb, &ok), stats, &ok);
        c->output_bytes = c->write_bytes;
    } else {
        uint64_t per = (s.rms ? 3 : 6) + (s.affine ? 1 : 0) + (s.bias ? 1 : 0);
        c->vector_flops = opm_mul(s.n, per, &ok);
        c->read_bytes = opm_add(xb, params, &ok);
        c->write_bytes = opm_add(yb, opm_op_phase(op) == OPM_PHASE_TRAIN_FWD ? stats : 0, &ok);
        c->input_bytes = xb;
        c->output_bytes = c->write_bytes;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static const opm_attr_def ln_attrs[] = {
    {"normalized_shape", OPM_ATTR_INTS, 0, "trailing dims normalised over (default the last)"},
    {"affine", OPM_ATTR_BOOL, 0, "learned scale gamma (default true)"},
    {"bias", OPM_ATTR_BOOL, 0, "learned shift beta (default true when affine)"},
    {"eps", OPM_ATTR_DOUBLE, 0, "epsilon (does not change the counts)"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def rms_attrs[] = {
    {"normalized_shape", OPM_ATTR_INTS, 0, "trailing dims normalised over (default the last)"},
    {"affine", OPM_ATTR_BOOL, 0, "learned scale gamma (default true)"},
    {"eps", OPM_ATTR_DOUBLE, 0, "epsilon (does not change the counts)"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of x"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_layernorm = {
    OPM_KIND_LAYERNORM, "layernorm", "layer normalisation over trailing dims",
    "input x [...], output y (same shape), optional weights gamma and beta",
    ln_attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 2, 1, 0, -1},
};

const opm_kind_def opm_kind_rmsnorm = {
    OPM_KIND_RMSNORM, "rmsnorm", "RMS normalisation over trailing dims",
    "input x [...], output y (same shape), optional weight gamma",
    rms_attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 1, 1, 0, -1},
};

OPM_KIND_PENDING(opm_kind_batchnorm, OPM_KIND_BATCHNORM, "batchnorm");
OPM_KIND_PENDING(opm_kind_groupnorm, OPM_KIND_GROUPNORM, "groupnorm");
OPM_KIND_PENDING(opm_kind_instancenorm, OPM_KIND_INSTANCENORM, "instancenorm");
