/* embedding.c — `embedding`: gather rows of a table [V, D] by integer
 * indices [...] into an output [..., D].
 *   forward   no FLOPs; reads the indices and min(T, V) rows (a row is read
 *             once however often it repeats, T = number of indices), writes
 *             the output.
 *   train_bwd dense gradient as PyTorch computes it: zero the [V, D] grad,
 *             then scatter-add T rows: vector T·D; reads dy and indices,
 *             reads and writes the touched rows, writes the whole table once. */
#include "kind.h"

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    const opm_tensor *idx = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 0, OPM_MAX_RANK - 1, "indices", err);
    const opm_tensor *w = idx ? opm_need_tensor(op, OPM_ROLE_WEIGHT, 0, 2, 2, "table [V, D]", err) : NULL;
    const opm_tensor *y = w ? opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 1, OPM_MAX_RANK, "output", err) : NULL;
    if (!y) return OPM_EINVAL;
    if (idx->dtype != OPM_INT32 && idx->dtype != OPM_INT64) {
        char f[OPM_ERROR_FIELD_MAX];
        opm_tensor_field(op, idx, ".dtype", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected an integer index dtype (int32 or int64), got %s",
                       opm_dtype_name(idx->dtype));
    }
    int64_t s[OPM_MAX_RANK];
    for (int i = 0; i < idx->rank; i++) s[i] = idx->shape[i];
    s[idx->rank] = w->shape[1];
    return opm_expect_shape(op, y, s, idx->rank + 1, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    if (validate(op, err)) return OPM_EINVAL;
    const opm_tensor *idx = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0);
    const opm_tensor *w = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 0);
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    int ok = 1;
    uint64_t t = opm_tensor_elems(idx, &ok), v = (uint64_t)w->shape[0], d = (uint64_t)w->shape[1];
    uint64_t rows = t < v ? t : v;
    uint64_t ib = opm_tensor_bytes(idx, &ok), yb = opm_tensor_bytes(y, &ok), wb = opm_tensor_bytes(w, &ok);
    uint64_t touched = opm_bytes(opm_mul(rows, d, &ok), w->dtype, &ok);
    c->compute_dtype = w->dtype;
    c->weight_bytes = wb;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        c->vector_flops = opm_mul(t, d, &ok);
        c->read_bytes = opm_add(opm_add(yb, ib, &ok), touched, &ok);
        c->write_bytes = opm_add(wb, touched, &ok);
        c->input_bytes = opm_add(yb, ib, &ok);
        c->output_bytes = wb;
    } else {
        c->read_bytes = opm_add(ib, touched, &ok);
        c->write_bytes = yb;
        c->input_bytes = ib;
        c->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int from_short(opm_op *op, opm_error *err)
{
    int64_t t, v, d;
    opm_dtype dt, odt, it;
    if (opm_short_int(op, "tokens", 1, 1, &t, err) || opm_short_int(op, "vocab", 1, 1, &v, err) ||
        opm_short_int(op, "dim", 1, 1, &d, err) || opm_short_dtypes(op, &dt, &odt, err) ||
        opm_short_dtype_key(op, "index_dtype", OPM_INT64, &it, err))
        return err ? (int)err->code : OPM_EINVAL;
    int64_t ws[2] = {v, d}, ys[2] = {t, d};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, &t, 1, it, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, ws, 2, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, ys, 2, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def attrs[] = {
    {"padding_idx", OPM_ATTR_INT, 0, "row excluded from the gradient (does not change the counts)"},
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"tokens", OPM_ATTR_INT, 1, "number of indices looked up"},
    {"vocab", OPM_ATTR_INT, 1, "rows of the table"},
    {"dim", OPM_ATTR_INT, 1, "row width"},
    {"index_dtype", OPM_ATTR_STRING, 0, "dtype of the indices (default int64)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_embedding = {
    OPM_KIND_EMBEDDING, "embedding", "row gather from a table by integer indices",
    "input indices [...] (int32/int64), weight table [V, D], output [..., D]",
    attrs, short_keys, from_short, validate, count,
    {1, 1, 1, 0, -1},
};
