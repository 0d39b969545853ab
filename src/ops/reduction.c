/* reduction.c — `reduction` over `dim` (an int or a list; default every
 * dim), with `keepdim`.  One FLOP per input element (a sum's add, a max's
 * compare; mean adds one divide per output element).
 *   forward   reads x, writes the reduced y.
 *   train_bwd reads dy (y-sized), writes dx (x-sized): one FLOP per x element. */
#include "kind.h"

static int reduced_shape(const opm_op *op, const opm_tensor *x, int64_t *s, int *r, opm_error *err)
{
    int keep = opm_op_get_bool(op, "keepdim", 0);
    int mask[OPM_MAX_RANK] = {0};
    const int64_t *dims;
    size_t nd = opm_op_get_ints(op, "dim", &dims);
    if (nd == 0)
        for (int i = 0; i < x->rank; i++) mask[i] = 1;
    for (size_t i = 0; i < nd; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + x->rank : dims[i];
        if (d < 0 || d >= x->rank)
            return opm_err(err, OPM_EINVAL, "attrs.dim", "expected dimensions in [%d, %d), got %lld",
                           -x->rank, x->rank, (long long)dims[i]);
        mask[d] = 1;
    }
    *r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!mask[i]) s[(*r)++] = x->shape[i];
        else if (keep) s[(*r)++] = 1;
    }
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    const opm_tensor *x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 1, OPM_MAX_RANK, "input x", err);
    const opm_tensor *y = x ? opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 0, OPM_MAX_RANK, "output y", err) : NULL;
    if (!y) return OPM_EINVAL;
    int64_t s[OPM_MAX_RANK];
    int r;
    if (reduced_shape(op, x, s, &r, err)) return OPM_EINVAL;
    return opm_expect_shape(op, y, s, r, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    if (validate(op, err)) return OPM_EINVAL;
    const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    int ok = 1;
    uint64_t n = opm_tensor_elems(x, &ok), xb = opm_tensor_bytes(x, &ok), yb = opm_tensor_bytes(y, &ok);
    const char *fn = opm_op_get_string(op, "op", "sum");
    uint64_t extra = fn[0] == 'm' && fn[1] == 'e' ? opm_tensor_elems(y, &ok) : 0; /* mean's divide */
    c->compute_dtype = x->dtype;
    c->vector_flops = opm_add(n, extra, &ok);
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->read_bytes = c->input_bytes = yb;
        c->write_bytes = c->output_bytes = xb;
    } else {
        c->read_bytes = c->input_bytes = xb;
        c->write_bytes = c->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int from_short(opm_op *op, opm_error *err)
{
    int64_t s[OPM_MAX_RANK], o[OPM_MAX_RANK];
    int r, ro;
    opm_dtype dt, odt;
    if (opm_short_shape(op, "shape", s, &r, err) || opm_short_dtypes(op, &dt, &odt, err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, s, r, dt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (reduced_shape(op, opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), o, &ro, err))
        return OPM_EINVAL;
    return opm_op_add_tensor(op, OPM_ROLE_OUTPUT, o, ro, odt, NULL, err);
}

static const opm_attr_def attrs[] = {
    {"dim", OPM_ATTR_INTS, 0, "dimension(s) reduced (default all)"},
    {"keepdim", OPM_ATTR_BOOL, 0, "keep reduced dims as size 1 (default false)"},
    {"op", OPM_ATTR_STRING, 0, "sum, mean, max, min, ... (default sum)"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of x"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_reduction = {
    OPM_KIND_REDUCTION, "reduction", "reduce over dims (sum, mean, max, ...)",
    "input x [...], output y [x with dims removed or kept as 1]",
    attrs, short_keys, from_short, validate, count,
    {1, 0, 1, 0, -1},
};
