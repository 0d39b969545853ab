/* softmax.c — softmax along one dimension.
 *   forward   vector 8 per element (max 1, subtract 1, exp 4, sum 1, divide 1);
 *             reads x, writes y.
 *   train_bwd vector 4 per element (dx = y·(dy − Σ dy·y): mul, sum, sub, mul);
 *             reads y and dy, writes dx. */
#include "flop_weights.h"
#include "kind.h"

static int validate(const opm_op *op, opm_error *err)
{
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
        c->vector_flops = opm_mul(n, 4, &ok);
        c->read_bytes = opm_add(yb, yb, &ok);
        c->write_bytes = xb;
        c->input_bytes = c->read_bytes;
        c->output_bytes = xb;
    } else {
        c->vector_flops = opm_mul(n, 3 * OPM_FLOPS_ARITH + OPM_FLOPS_EXP + OPM_FLOPS_ARITH, &ok);
        c->read_bytes = c->input_bytes = xb;
        c->write_bytes = c->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static const opm_attr_def attrs[] = {
    {"dim", OPM_ATTR_INT, 0, "dimension normalised over (default -1)"},
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

OPM_KIND_PENDING(opm_kind_cross_entropy, OPM_KIND_CROSS_ENTROPY, "cross_entropy");
