/* elementwise.c — `elementwise`: one or more inputs broadcast together
 * (numpy rules; a rank-0 input is a scalar operand) into one output.
 *   forward   vector out_elems · w, where w = op_count_per_element, else the
 *             weight of `op` in flop_weights.h, else 1; reads every input,
 *             writes the output.
 *   train_bwd vector out_elems · w; reads dy and every input, writes one
 *             gradient per input (broadcast inputs receive reduced grads). */
#include <stdio.h>
#include "flop_weights.h"
#include "kind.h"

static int out_shape(const opm_op *op, int64_t *shape, int *rank, opm_error *err)
{
    *rank = 0;
    size_t n = 0;
    for (const opm_tensor *t; (t = opm_op_find_tensor(op, OPM_ROLE_INPUT, n)); n++) {
        int64_t tmp[OPM_MAX_RANK];
        int r;
        if (opm_broadcast(shape, *rank, t->shape, t->rank, tmp, &r)) {
            char f[OPM_ERROR_FIELD_MAX], sofar[160], got[160];
            opm_tensor_field(op, t, ".shape", f, sizeof f);
            opm_shape_text(shape, *rank, sofar, sizeof sofar);
            opm_shape_text(t->shape, t->rank, got, sizeof got);
            return opm_err(err, OPM_EINVAL, f, "expected a shape that broadcasts with %s, got %s", sofar, got);
        }
        for (int i = 0; i < r; i++) shape[i] = tmp[i];
        *rank = r;
    }
    if (n == 0) return opm_err(err, OPM_EINVAL, "tensors", "kind elementwise needs at least one input tensor");
    return 0;
}

static int64_t weight(const opm_op *op)
{
    if (opm_op_has(op, "op_count_per_element")) return opm_op_get_int(op, "op_count_per_element", 1);
    const char *name = opm_op_get_string(op, "op", NULL);
    int w = name ? opm_flop_weight_of(name) : -1;
    return w >= 0 ? w : 1;
}

static int validate(const opm_op *op, opm_error *err)
{
    int64_t s[OPM_MAX_RANK];
    int r;
    if (out_shape(op, s, &r, err)) return OPM_EINVAL;
    const opm_tensor *y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 0, OPM_MAX_RANK, "output y", err);
    if (!y || opm_expect_shape(op, y, s, r, err)) return OPM_EINVAL;
    if (opm_op_get_int(op, "op_count_per_element", 0) < 0)
        return opm_err(err, OPM_EINVAL, "attrs.op_count_per_element", "expected a non-negative integer");
    return 0;
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    if (validate(op, err)) return OPM_EINVAL;
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    int ok = 1;
    uint64_t n = opm_tensor_elems(y, &ok), yb = opm_tensor_bytes(y, &ok);
    uint64_t in = opm_role_bytes(op, OPM_ROLE_INPUT, &ok);
    c->compute_dtype = y->dtype;
    c->vector_flops = opm_mul(n, (uint64_t)weight(op), &ok);
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->read_bytes = c->input_bytes = opm_add(yb, in, &ok);
        c->write_bytes = c->output_bytes = in;
    } else {
        c->read_bytes = c->input_bytes = in;
        c->write_bytes = c->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int from_short(opm_op *op, opm_error *err)
{
    opm_dtype dt, odt;
    if (opm_short_dtypes(op, &dt, &odt, err)) return err ? (int)err->code : OPM_EINVAL;
    int64_t s[OPM_MAX_RANK], out[OPM_MAX_RANK];
    int r, ro = 0;
    if (opm_op_has(op, "shape")) {
        if (opm_short_shape(op, "shape", s, &r, err) ||
            opm_op_add_tensor(op, OPM_ROLE_INPUT, s, r, dt, NULL, err))
            return err ? (int)err->code : OPM_EINVAL;
        for (int i = 0; i < r; i++) out[i] = s[i];
        ro = r;
    } else {
        size_t i = 0;
        for (;; i++) {
            char key[32];
            snprintf(key, sizeof key, "inputs[%zu]", i);
            if (!opm_op_has(op, key)) break;
            const int64_t *v;
            size_t n = opm_op_get_ints(op, key, &v);
            if (n > OPM_MAX_RANK)
                return opm_err(err, OPM_EINVAL, key, "expected at most %d dimensions", OPM_MAX_RANK);
            for (size_t d = 0; d < n; d++) {
                if (v[d] <= 0)
                    return opm_err(err, OPM_EINVAL, key, "expected positive dimensions, got %lld",
                                   (long long)v[d]);
                s[d] = v[d];
            }
            int64_t tmp[OPM_MAX_RANK];
            int rt;
            if (opm_broadcast(out, ro, s, (int)n, tmp, &rt)) {
                char sofar[160], got[160];
                opm_shape_text(out, ro, sofar, sizeof sofar);
                opm_shape_text(s, (int)n, got, sizeof got);
                return opm_err(err, OPM_EINVAL, key, "expected a shape that broadcasts with %s, got %s", sofar, got);
            }
            for (int d = 0; d < rt; d++) out[d] = tmp[d];
            ro = rt;
            if (opm_op_add_tensor(op, OPM_ROLE_INPUT, s, (int)n, dt, NULL, err))
                return err ? (int)err->code : OPM_EINVAL;
            opm_op_unset(op, key);
        }
        if (i == 0)
            return opm_err(err, OPM_EINVAL, "inputs", "missing; the short form of elementwise needs inputs or shape");
    }
    return opm_op_add_tensor(op, OPM_ROLE_OUTPUT, out, ro, odt, NULL, err);
}

static const opm_attr_def attrs[] = {
    {"op", OPM_ATTR_STRING, 0, "function name (add, mul, exp, gelu, silu_mul, ...); sets the FLOP weight"},
    {"op_count_per_element", OPM_ATTR_INT, 0, "FLOPs per output element (overrides op; default 1)"},
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of the single input"},
    {"inputs", OPM_ATTR_INTS, 0, "list of input shapes, broadcast together"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_elementwise = {
    OPM_KIND_ELEMENTWISE, "elementwise", "pointwise function of broadcast inputs",
    "input x... (one or more, broadcastable), output y [broadcast shape]",
    attrs, short_keys, from_short, validate, count,
    {-1, 0, 1, 0, -1},
};

opm_op *opm_op_elementwise(const int64_t *shape, int rank, int n_inputs,
                           int64_t op_count_per_element, opm_dtype dtype, opm_error *err)
{
    opm_op *op = opm_op_new("elementwise", OPM_KIND_ELEMENTWISE, OPM_PHASE_INFERENCE, err);
    if (!op) return NULL;
    for (int i = 0; i < n_inputs; i++)
        if (opm_op_add_tensor(op, OPM_ROLE_INPUT, shape, rank, dtype, NULL, err)) goto fail;
    if (opm_op_add_tensor(op, OPM_ROLE_OUTPUT, shape, rank, dtype, NULL, err) ||
        opm_op_set_int(op, "op_count_per_element", op_count_per_element, err) ||
        opm_op_validate(op, err))
        goto fail;
    return op;
fail:
    opm_op_free(op);
    return NULL;
}
