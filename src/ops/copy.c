/* copy.c — `copy`: move (and optionally convert) a tensor.  No FLOPs; the
 * input read once, the output written once.  The backward of a copy is the
 * same copy of the gradient, so train_bwd counts the same bytes reversed. */
#include "kind.h"

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    const opm_tensor *x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 0, OPM_MAX_RANK, "input x", err);
    const opm_tensor *y = x ? opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 0, OPM_MAX_RANK, "output y", err) : NULL;
    if (!y) return OPM_EINVAL;
    int ok = 1;
    if (opm_tensor_elems(x, &ok) != opm_tensor_elems(y, &ok)) {
        char f[OPM_ERROR_FIELD_MAX];
        opm_tensor_field(op, y, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected as many elements as the input");
    }
    return 0;
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    if (validate(op, err)) return OPM_EINVAL;
    const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    int ok = 1;
    uint64_t xb = opm_tensor_bytes(x, &ok), yb = opm_tensor_bytes(y, &ok);
    int bwd = opm_op_phase(op) == OPM_PHASE_TRAIN_BWD;
    c->compute_dtype = x->dtype;
    c->read_bytes = c->input_bytes = bwd ? yb : xb;
    c->write_bytes = c->output_bytes = bwd ? xb : yb;
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "byte count overflows 64 bits");
    return 0;
}

static const opm_attr_def attrs[] = {
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of the tensor"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_copy = {
    OPM_KIND_COPY, "copy", "tensor copy or dtype conversion",
    "input x [...], output y (same element count; dtype may differ)",
    attrs, short_keys, opm_short_same_shape, validate, count,
    {1, 0, 1, 0, -1},
};
