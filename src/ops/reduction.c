/* reduction.c — `reduction`: `op` (sum, mean, max, min, norm, var, std,
 * logsumexp, argmax, argmin; default sum) over `dim` (an int or a list;
 * absent or [] = every dim), with `keepdim`; and the cumulative `cumsum`
 * along one `dim`, whose output has x's shape.  argmax/argmin write indices
 * (int64 in PyTorch; int32 accepted).  The output is whatever the dims leave:
 * its element count is never assumed to be one.
 *
 * With (f_in, f_out, b_in, b_out) the op's row of opm_reduce_costs in
 * flop_weights.h, n = x elements, m = y elements:
 *   forward   vector f_in·n + f_out·m; reads x, writes y (in y's dtype).
 *   train_bwd vector b_in·n + b_out·m; reads dy (y-sized, y's dtype) and,
 *             per op, x and y; writes dx (x-sized).  argmax/argmin have no
 *             gradient and refuse train_bwd. */
#include <string.h>
#include "flop_weights.h"
#include "kind.h"

static const opm_reduce_cost *cost_of(const opm_op *op, opm_error *err)
{
    const char *name = opm_op_get_string(op, "op", "sum");
    const opm_reduce_cost *r = opm_reduce_cost_find(name);
    if (r) return r;
    const char *names[32];
    char list[256];
    size_t n = 0;
    for (const opm_reduce_cost *t = opm_reduce_costs; t->op && n < 31; t++) names[n++] = t->op;
    names[n] = NULL;
    opm_names_text(names, list, sizeof list);
    opm_choice_err(err, "attrs.op", name, names, "expected one of %s", list);
    return NULL;
}

/* Shape of y for x under the op's dims: reduced dims removed (or kept as 1),
 * or x's shape for a scan. */
static int reduced_shape(const opm_op *op, const opm_reduce_cost *rc, const opm_tensor *x, int64_t *s,
                         int *r, opm_error *err)
{
    int keep = opm_op_get_bool(op, "keepdim", 0);
    int mask[OPM_MAX_RANK] = {0};
    const int64_t *dims;
    size_t nd = opm_op_get_ints(op, "dim", &dims);
    if (rc->scan) {
        if (nd != 1)
            return opm_err(err, OPM_EINVAL, "attrs.dim", "expected one dimension for %s, got %zu", rc->op, nd);
        if (keep) return opm_err(err, OPM_EINVAL, "attrs.keepdim", "expected no keepdim for %s: its output has x's shape", rc->op);
    }
    if (nd == 0)
        for (int i = 0; i < x->rank; i++) mask[i] = 1;
    for (size_t i = 0; i < nd; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + x->rank : dims[i];
        if (d < 0 || d >= x->rank)
            return opm_err(err, OPM_EINVAL, "attrs.dim", "expected dimensions in [%d, %d), got %lld",
                           -x->rank, x->rank, (long long)dims[i]);
        if (mask[d])
            return opm_err(err, OPM_EINVAL, "attrs.dim", "expected each dimension once, got %lld twice",
                           (long long)d);
        mask[d] = 1;
    }
    *r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (rc->scan || !mask[i]) s[(*r)++] = x->shape[i];
        else if (keep) s[(*r)++] = 1;
    }
    return 0;
}

typedef struct red {
    const opm_reduce_cost *rc;
    const opm_tensor *x, *y;
} red;

static int check(const opm_op *op, red *d, opm_error *err)
{
    if (!(d->rc = cost_of(op, err))) return OPM_EINVAL;
    d->x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 1, OPM_MAX_RANK, "input x", err);
    d->y = d->x ? opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 0, OPM_MAX_RANK, "output y", err) : NULL;
    if (!d->y) return OPM_EINVAL;
    int64_t s[OPM_MAX_RANK];
    int r;
    if (reduced_shape(op, d->rc, d->x, s, &r, err) || opm_expect_shape(op, d->y, s, r, err)) return OPM_EINVAL;
    char f[OPM_ERROR_FIELD_MAX];
    if (d->rc->index_out && d->y->dtype != OPM_INT64 && d->y->dtype != OPM_INT32) {
        opm_tensor_field(op, d->y, ".dtype", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected int64 (or int32) indices for %s, got %s", d->rc->op,
                       opm_dtype_name(d->y->dtype));
    }
    if (!d->rc->has_grad && opm_op_phase(op) == OPM_PHASE_TRAIN_BWD)
        return opm_err(err, OPM_EINVAL, "phase", "expected a forward phase: %s returns indices and has no gradient",
                       d->rc->op);
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    red d;
    return check(op, &d, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    red d;
    if (check(op, &d, err)) return OPM_EINVAL;
    const opm_reduce_cost *rc = d.rc;
    int ok = 1;
    uint64_t n = opm_tensor_elems(d.x, &ok), m = opm_tensor_elems(d.y, &ok);
    uint64_t xb = opm_tensor_bytes(d.x, &ok), yb = opm_tensor_bytes(d.y, &ok);
    c->compute_dtype = d.x->dtype;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->vector_flops = opm_add(opm_mul(n, (uint64_t)rc->bwd_in, &ok), opm_mul(m, (uint64_t)rc->bwd_out, &ok), &ok);
        uint64_t rd = yb; /* dy */
        if (rc->bwd_reads_x) rd = opm_add(rd, xb, &ok);
        if (rc->bwd_reads_y) rd = opm_add(rd, yb, &ok);
        c->read_bytes = c->input_bytes = rd;
        c->write_bytes = c->output_bytes = xb;
    } else {
        c->vector_flops = opm_add(opm_mul(n, (uint64_t)rc->fwd_in, &ok), opm_mul(m, (uint64_t)rc->fwd_out, &ok), &ok);
        c->read_bytes = c->input_bytes = xb;
        c->write_bytes = c->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int is_integer(opm_dtype dt)
{
    return dt == OPM_INT8 || dt == OPM_INT4 || dt == OPM_INT32 || dt == OPM_INT64 || dt == OPM_BOOL;
}

static int from_short(opm_op *op, opm_error *err)
{
    int64_t s[OPM_MAX_RANK], o[OPM_MAX_RANK];
    int r, ro;
    opm_dtype dt, odt;
    int explicit_out = opm_op_has(op, "out_dtype");
    const opm_reduce_cost *rc = cost_of(op, err);
    if (!rc || opm_short_shape(op, "shape", s, &r, err) || opm_short_dtypes(op, &dt, &odt, err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, s, r, dt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (!explicit_out) {
        /* PyTorch's output dtypes: indices are int64; sum and cumsum of an
         * integer or bool tensor promote to int64. */
        if (rc->index_out) odt = OPM_INT64;
        else if (is_integer(dt) && (rc->scan || strcmp(rc->op, "sum") == 0)) odt = OPM_INT64;
    }
    if (reduced_shape(op, rc, opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), o, &ro, err)) return OPM_EINVAL;
    return opm_op_add_tensor(op, OPM_ROLE_OUTPUT, o, ro, odt, NULL, err);
}

static const opm_attr_def attrs[] = {
    {"dim", OPM_ATTR_INTS, 0, "dimension(s) reduced (default all; exactly one for cumsum)"},
    {"keepdim", OPM_ATTR_BOOL, 0, "keep reduced dims as size 1 (default false)"},
    {"op", OPM_ATTR_STRING, 0, "sum, mean, max, min, norm, var, std, logsumexp, cumsum, argmax, argmin (default sum)"},
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of x"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_reduction = {
    OPM_KIND_REDUCTION, "reduction", "reduce over dims (sum, mean, max, ..., argmax) or scan one (cumsum)",
    "input x [...], output y [x with dims removed or kept as 1; x's shape for cumsum]",
    attrs, short_keys, from_short, validate, count,
    {1, 0, 1, 0, -1},
};
