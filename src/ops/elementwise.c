/* elementwise.c — `elementwise`: a pointwise function of one or more inputs
 * broadcast together with numpy rules into one output.  A rank-0 input is a
 * 0-dim tensor operand (read once, one element in its dtype); a Python
 * scalar that the kernel receives as an argument is no tensor and is left
 * out.  Fused gated activations (`silu_mul`, `gelu_mul`, ...) take either
 * two inputs g and u, or one input [..., 2H] split in halves → [..., H].
 *
 * With w_f, w_b the forward and backward weights of `op` in flop_weights.h
 * (`op_count_per_element` overrides both), n = output elements:
 *   forward   vector n·w_f; reads every input, writes y.
 *   train_bwd vector n·w_b; reads dy and (unless the gradient is dy itself:
 *             add, sub, neg, copy, cast) every input; writes one gradient per
 *             input at that input's shape (a broadcast input's is reduced). */
#include <stdio.h>
#include <string.h>
#include "flop_weights.h"
#include "kind.h"

/* The table entry of `op`, NULL when absent or unknown; an error when the
 * name is unknown and no op_count_per_element gives the weight. */
static int entry(const opm_op *op, const opm_flop_weight **w, opm_error *err)
{
    *w = NULL;
    const char *name = opm_op_get_string(op, "op", NULL);
    if (!name) return 0;
    *w = opm_flop_weight_find(name);
    if (*w || opm_op_has(op, "op_count_per_element")) return 0;
    const char *names[64];
    char list[512];
    size_t n = 0;
    for (const opm_flop_weight *t = opm_flop_weights; t->op && n < 63; t++) names[n++] = t->op;
    names[n] = NULL;
    opm_names_text(names, list, sizeof list);
    return opm_choice_err(err, "attrs.op", name, names,
                          "expected a function of the FLOP-weight table (%s) or op_count_per_element", list);
}

/* Output shape: the broadcast of the inputs, or for a gated function with
 * one input that input with its last dimension halved. */
static int out_shape(const opm_op *op, const opm_flop_weight *w, int64_t *shape, int *rank,
                     opm_error *err)
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
    if (w && w->gated && n == 1) {
        const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0);
        if (x->rank == 0 || x->shape[x->rank - 1] % 2) {
            char f[OPM_ERROR_FIELD_MAX];
            opm_tensor_field(op, x, ".shape", f, sizeof f);
            return opm_err(err, OPM_EINVAL, f,
                           "expected a last dimension of even size (gate and up halves) for the one input of %s",
                           w->op);
        }
        shape[*rank - 1] /= 2;
    }
    return 0;
}

static int check(const opm_op *op, const opm_flop_weight **w, opm_error *err)
{
    if (entry(op, w, err)) return OPM_EINVAL;
    int64_t s[OPM_MAX_RANK];
    int r;
    if (out_shape(op, *w, s, &r, err)) return OPM_EINVAL;
    const opm_tensor *y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 0, OPM_MAX_RANK, "output y", err);
    if (!y || opm_expect_shape(op, y, s, r, err)) return OPM_EINVAL;
    if (opm_op_get_int(op, "op_count_per_element", 0) < 0)
        return opm_err(err, OPM_EINVAL, "attrs.op_count_per_element", "expected a non-negative integer");
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    const opm_flop_weight *w;
    return check(op, &w, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    const opm_flop_weight *w;
    if (check(op, &w, err)) return OPM_EINVAL;
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    int bwd = opm_op_phase(op) == OPM_PHASE_TRAIN_BWD;
    int64_t per = 1;
    int reads_x = 1;
    if (opm_op_has(op, "op_count_per_element")) per = opm_op_get_int(op, "op_count_per_element", 1);
    else if (w) per = bwd ? w->bwd : w->fwd;
    if (w && bwd) reads_x = w->bwd_reads_x;
    int ok = 1;
    uint64_t n = opm_tensor_elems(y, &ok), yb = opm_tensor_bytes(y, &ok);
    uint64_t in = opm_role_bytes(op, OPM_ROLE_INPUT, &ok);
    c->compute_dtype = y->dtype;
    c->vector_flops = opm_mul(n, (uint64_t)per, &ok);
    if (bwd) {
        c->read_bytes = c->input_bytes = opm_add(yb, reads_x ? in : 0, &ok);
        c->write_bytes = c->output_bytes = in;
    } else {
        c->read_bytes = c->input_bytes = in;
        c->write_bytes = c->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

/* Whether `op` is a gated function given as one [..., 2H] input. */
static int gated_one_input(opm_op *op, int n_inputs)
{
    const char *name = opm_op_get_string(op, "op", NULL);
    const opm_flop_weight *w = name ? opm_flop_weight_find(name) : NULL;
    return w && w->gated && n_inputs == 1;
}

/* "inputs[i]" into key (at least 32 bytes), without snprintf: the short
 * form reads one per input on every line of a batch. */
static void input_key(char *key, size_t i)
{
    char d[24];
    size_t n = 0;
    do d[n++] = (char)('0' + i % 10), i /= 10;
    while (i);
    memcpy(key, "inputs[", 7);
    for (size_t j = 0; j < n; j++) key[7 + j] = d[n - 1 - j];
    key[7 + n] = ']';
    key[8 + n] = '\0';
}

static int from_short(opm_op *op, opm_error *err)
{
    opm_dtype dt, odt;
    if (opm_short_dtypes(op, &dt, &odt, err)) return err ? (int)err->code : OPM_EINVAL;
    int64_t s[OPM_MAX_RANK], out[OPM_MAX_RANK];
    int r, ro = 0, n_in = 0;
    if (opm_op_has(op, "shape")) {
        if (opm_short_shape(op, "shape", s, &r, err) ||
            opm_op_add_tensor(op, OPM_ROLE_INPUT, s, r, dt, NULL, err))
            return err ? (int)err->code : OPM_EINVAL;
        for (int i = 0; i < r; i++) out[i] = s[i];
        ro = r;
        n_in = 1;
    } else {
        size_t i = 0;
        for (;; i++) {
            char key[32];
            input_key(key, i);
            size_t at = opm_op_attr_index(op, key);
            if (at == OPM_NO_ATTR) break;
            const int64_t *v;
            size_t n = opm_op_attr_ints_at(op, at, &v);
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
            opm_op_unset_at(op, at);
        }
        if (i == 0)
            return opm_err(err, OPM_EINVAL, "inputs", "missing; the short form of elementwise needs inputs or shape");
        n_in = (int)i;
    }
    /* A gated function of one input: the output is half its last dim (an odd
     * or missing one is left for validate to report). */
    if (gated_one_input(op, n_in) && ro > 0 && out[ro - 1] % 2 == 0) out[ro - 1] /= 2;
    return opm_op_add_tensor(op, OPM_ROLE_OUTPUT, out, ro, odt, NULL, err);
}

static const opm_attr_def attrs[] = {
    {"op", OPM_ATTR_STRING, 0,
     "function name (add, mul, exp, gelu, silu_mul, ...; the table in docs/ops.md); sets the FLOP weights"},
    {"op_count_per_element", OPM_ATTR_INT, 0,
     "FLOPs per output element, forward and backward (overrides op; default 1 without op)"},
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"shape", OPM_ATTR_INTS, 0, "shape of the single input"},
    {"inputs", OPM_ATTR_INTS, 0, "list of input shapes, broadcast together ([] is a 0-dim tensor)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_elementwise = {
    OPM_KIND_ELEMENTWISE, "elementwise", "pointwise function of broadcast inputs",
    "input x... (one or more, broadcastable; one [..., 2H] for a gated op), output y [broadcast shape]",
    attrs, short_keys, from_short, validate, count,
    {-1, 0, 1, 0, -1},
};

opm_op *opm_op_elementwise(const int64_t *shape, int rank, int n_inputs,
                           int64_t op_count_per_element, opm_dtype dtype, opm_error *err)
{
    opm_error_clear(err);
    opm_op *op = opm_op_new("elementwise", OPM_KIND_ELEMENTWISE, OPM_PHASE_INFERENCE, err);
    if (!op) return NULL;
    for (int i = 0; i < n_inputs; i++)
        if (opm_op_add_tensor(op, OPM_ROLE_INPUT, shape, rank, dtype, NULL, err)) goto fail;
    if (opm_op_add_tensor(op, OPM_ROLE_OUTPUT, shape, rank, dtype, NULL, err) ||
        opm_op_set_int(op, "op_count_per_element", op_count_per_element, err) ||
        opm_op_finalize(op, err))
        goto fail;
    return op;
fail:
    opm_op_free(op);
    return NULL;
}
