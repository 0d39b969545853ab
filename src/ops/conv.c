/* conv.c — `conv`: 1-D, 2-D and 3-D convolution as PyTorch's
 * aten::convolution computes it: stride, padding, dilation, groups
 * (depthwise when groups = C_in), transposed with output_padding, and an
 * optional bias.
 *
 * Tensors: input x [N, C_in, in...], weight w [C_out, C_in/g, k...]
 * ([C_in, C_out/g, k...] when transposed, as PyTorch stores it), optional
 * second weight bias [C_out] (or `bias: true`: C_out elements in y's dtype),
 * output y [N, C_out, out...].  Per spatial dim, with s, p, d, op:
 *   out = floor((in + 2p − d·(k − 1) − 1) / s) + 1            (normal)
 *   out = (in − 1)·s − 2p + d·(k − 1) + op + 1                 (transposed)
 * The multiply-accumulates of the one conv-sized product, padding taps
 * included (the implicit-GEMM size every library reports):
 *   MACs = N·C_out·Π out·(C_in/g)·Π k                         (normal)
 *   MACs = N·C_in·Π in·(C_out/g)·Π k                          (transposed: the
 *          data gradient of the normal conv that maps y back to x)
 * Counts:
 *   forward   matrix 2·MACs, vector N·C_out·Π out (bias add);
 *             reads x, w, bias; writes y — each once, in its own dtype.
 *   train_bwd matrix 2·MACs for dX (`grad_input`, default true) plus 2·MACs
 *             for dW (`grad_weight`, default true), each a conv-sized
 *             product; vector N·C_out·Π out for dbias (a sum of dY);
 *             reads dY, plus w when dX is computed and x when dW is;
 *             writes dX, dW, dbias — each once, in its tensor's dtype. */
#include <stdio.h>
#include <string.h>
#include "kind.h"

#define CONV_MAX_SP 3

typedef struct conv_params {
    int nsp, transposed;
    int bias_set, bias, grad_input, grad_weight; /* bias_set: `bias` given at all */
    int64_t groups;
    int64_t stride[CONV_MAX_SP], pad[CONV_MAX_SP], dil[CONV_MAX_SP], opad[CONV_MAX_SP];
} conv_params;

typedef struct conv_dims {
    conv_params p;
    int64_t n, cin, cout;
    const opm_tensor *x, *w, *y, *bias;
    int bias_attr;
} conv_dims;

/* Where a shape error points: the tensors of the full form, or the short
 * form's `input` and `weight` keys (op NULL).  Field names are formatted
 * only when an error is reported, so counting never pays for them. */
typedef struct conv_where {
    const opm_op *op;
    const opm_tensor *x, *w;
    char buf[OPM_ERROR_FIELD_MAX];
} conv_where;

static const char *xfield(conv_where *at)
{
    if (!at->op) return "input";
    opm_tensor_field(at->op, at->x, ".shape", at->buf, sizeof at->buf);
    return at->buf;
}

static const char *wfield(conv_where *at)
{
    if (!at->op) return "weight";
    opm_tensor_field(at->op, at->w, ".shape", at->buf, sizeof at->buf);
    return at->buf;
}

/* A per-spatial-dim attribute that is present (attribute idx, named key): one integer (every dim) or
 * one per spatial dim, each >= min. */
static int spatial_attr(const opm_op *op, size_t idx, const char *key, int nsp, int64_t min, int64_t *out,
                        opm_error *err)
{
    const int64_t *v;
    size_t n = opm_op_attr_ints_at(op, idx, &v);
    char f[OPM_ERROR_FIELD_MAX];
    if (n != 1 && n != (size_t)nsp) {
        snprintf(f, sizeof f, "attrs.%s", key);
        if (n == 0)
            return opm_err(err, OPM_EINVAL, f, "expected an integer or a list of %d integer%s", nsp,
                           nsp == 1 ? "" : "s");
        return opm_err(err, OPM_EINVAL, f, "expected one integer or %d (one per spatial dim), got %zu",
                       nsp, n);
    }
    for (int i = 0; i < nsp; i++) {
        int64_t x = v[n == 1 ? 0 : i];
        if (x < min) {
            snprintf(f, sizeof f, "attrs.%s", key);
            return opm_err(err, OPM_EINVAL, f, "expected values >= %lld, got %lld", (long long)min,
                           (long long)x);
        }
        out[i] = x;
    }
    return 0;
}

/* Reads every attribute in one pass over the op's attributes (an absent key
 * costs nothing; kernel hints are skipped).  With `spatial` 0 the stride,
 * padding, dilation and output_padding lists are not read: counting an op
 * that validate() accepted needs only the channels and flags. */
static int read_params(const opm_op *op, int nsp, int spatial, conv_params *p, opm_error *err)
{
    p->nsp = nsp;
    p->transposed = p->bias_set = p->bias = 0;
    p->grad_input = p->grad_weight = 1;
    p->groups = 1;
    for (int i = 0; i < nsp; i++) {
        p->stride[i] = p->dil[i] = 1;
        p->pad[i] = p->opad[i] = 0;
    }
    size_t na = opm_op_attr_count(op);
    for (size_t a = 0; a < na; a++) {
        const char *k = opm_op_attr_key(op, a);
        int rc = 0;
        if (!spatial && (k[0] == 's' || k[0] == 'p' || k[0] == 'd' || k[0] == 'o')) continue;
        switch (k[0]) {
        case 's':
            if (opm_str_equals(k, "stride")) rc = spatial_attr(op, a, k, nsp, 1, p->stride, err);
            break;
        case 'p':
            if (opm_str_equals(k, "padding")) rc = spatial_attr(op, a, k, nsp, 0, p->pad, err);
            break;
        case 'd':
            if (opm_str_equals(k, "dilation")) rc = spatial_attr(op, a, k, nsp, 1, p->dil, err);
            break;
        case 'o':
            if (opm_str_equals(k, "output_padding")) rc = spatial_attr(op, a, k, nsp, 0, p->opad, err);
            break;
        case 't':
            if (opm_str_equals(k, "transposed")) p->transposed = opm_op_attr_bool_at(op, a, 0);
            break;
        case 'b':
            if (opm_str_equals(k, "bias")) {
                p->bias_set = 1;
                p->bias = opm_op_attr_bool_at(op, a, 0);
            }
            break;
        case 'g':
            if (opm_str_equals(k, "groups")) {
                p->groups = opm_op_attr_int_at(op, a, 1);
                if (p->groups < 1)
                    return opm_err(err, OPM_EINVAL, "attrs.groups", "expected a positive integer, got %lld",
                                   (long long)p->groups);
            } else if (opm_str_equals(k, "grad_input")) {
                p->grad_input = opm_op_attr_bool_at(op, a, 1);
            } else if (opm_str_equals(k, "grad_weight")) {
                p->grad_weight = opm_op_attr_bool_at(op, a, 1);
            }
            break;
        default: break;
        }
        if (rc) return rc;
    }
    for (int i = 0; spatial && i < nsp; i++) {
        if (p->opad[i] == 0) continue;
        if (!p->transposed)
            return opm_err(err, OPM_EINVAL, "attrs.output_padding",
                           "expected 0 without transposed: true (output_padding only shapes a transposed conv)");
        if (p->opad[i] >= p->stride[i] && p->opad[i] >= p->dil[i])
            return opm_err(err, OPM_EINVAL, "attrs.output_padding",
                           "expected output_padding smaller than stride or dilation in spatial dim %d, got %lld "
                           "(stride %lld, dilation %lld)",
                           i, (long long)p->opad[i], (long long)p->stride[i], (long long)p->dil[i]);
    }
    return 0;
}

/* Channels and (with `spatial`) the output shape from the input and weight
 * shapes: the checks PyTorch makes, with errors on the input or weight field
 * of `at`. */
static int geometry(const int64_t *xs, const int64_t *ws, const conv_params *p, int spatial,
                    int64_t *ys, int64_t *cin, int64_t *cout, conv_where *at, opm_error *err)
{
    int64_t g = p->groups;
    *cin = xs[1];
    if (*cin % g)
        return opm_err(err, OPM_EINVAL, xfield(at), "expected input channels (%lld) divisible by groups = %lld",
                       (long long)*cin, (long long)g);
    if (p->transposed) {
        if (ws[0] != *cin)
            return opm_err(err, OPM_EINVAL, wfield(at),
                           "expected a transposed-conv weight [C_in, C_out/groups, k...] with C_in = %lld, got %lld",
                           (long long)*cin, (long long)ws[0]);
        if (__builtin_mul_overflow(ws[1], g, cout))
            return opm_err(err, OPM_EOVERFLOW, wfield(at), "output channels overflow 64 bits");
    } else {
        *cout = ws[0];
        if (ws[1] != *cin / g)
            return opm_err(err, OPM_EINVAL, wfield(at),
                           "expected weight [C_out, C_in/groups, k...] with C_in/groups = %lld, got %lld",
                           (long long)(*cin / g), (long long)ws[1]);
        if (*cout % g)
            return opm_err(err, OPM_EINVAL, wfield(at),
                           "expected output channels (%lld) divisible by groups = %lld", (long long)*cout,
                           (long long)g);
    }
    ys[0] = xs[0];
    ys[1] = *cout;
    for (int i = 0; spatial && i < p->nsp; i++) {
        int64_t in = xs[2 + i], k = ws[2 + i], s = p->stride[i], pd = p->pad[i], d = p->dil[i], o;
        int64_t ext, pin, t;
        int bad = __builtin_mul_overflow(d, k - 1, &ext) || __builtin_mul_overflow(pd, 2, &pin);
        if (p->transposed) {
            bad = bad || __builtin_mul_overflow(in - 1, s, &t) || __builtin_sub_overflow(t, pin, &t) ||
                  __builtin_add_overflow(t, ext, &t) || __builtin_add_overflow(t, p->opad[i] + 1, &o);
            if (bad) return opm_err(err, OPM_EOVERFLOW, xfield(at), "output size overflows 64 bits");
            if (o < 1)
                return opm_err(err, OPM_EINVAL, xfield(at),
                               "expected a positive output size in spatial dim %d, got (%lld-1)*%lld - 2*%lld + "
                               "%lld*(%lld-1) + %lld + 1 = %lld",
                               i, (long long)in, (long long)s, (long long)pd, (long long)d, (long long)k,
                               (long long)p->opad[i], (long long)o);
        } else {
            bad = bad || __builtin_add_overflow(in, pin, &t);
            if (bad) return opm_err(err, OPM_EOVERFLOW, xfield(at), "output size overflows 64 bits");
            if (t - 1 < ext)
                return opm_err(err, OPM_EINVAL, xfield(at),
                               "expected the padded input (%lld + 2*%lld = %lld) to cover the dilated kernel "
                               "(%lld*(%lld-1) + 1 = %lld) in spatial dim %d",
                               (long long)in, (long long)pd, (long long)t, (long long)d, (long long)k,
                               (long long)(ext + 1), i);
            o = (t - ext - 1) / s + 1;
        }
        ys[2 + i] = o;
    }
    return 0;
}

/* Tensors, attributes and shape checks.  validate() runs them all (full);
 * count() may assume a valid op (opm_op_count's contract) and skips the
 * spatial attributes, checking only that y has x's rank, batch and C_out —
 * when that fails it reruns the full checks for the precise error. */
static int dims(const opm_op *op, conv_dims *c, int full, opm_error *err)
{
    if (!(c->x = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 3, 2 + CONV_MAX_SP, "input x [N, C_in, spatial...]",
                                 err)) ||
        !(c->w = opm_need_tensor(op, OPM_ROLE_WEIGHT, 0, c->x->rank, c->x->rank,
                                 "weight w [C_out, C_in/groups, kernel...]", err)) ||
        !(c->y = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 1, OPM_MAX_RANK, "output y", err)))
        return OPM_EINVAL;
    if (read_params(op, c->x->rank - 2, full, &c->p, err)) return OPM_EINVAL;
    conv_where at = {op, c->x, c->w, ""};
    int64_t ys[2 + CONV_MAX_SP];
    int rc = geometry(c->x->shape, c->w->shape, &c->p, full, ys, &c->cin, &c->cout, &at, err);
    if (rc) return rc;
    if (full) {
        if (opm_expect_shape(op, c->y, ys, c->x->rank, err)) return OPM_EINVAL;
    } else if (c->y->rank != c->x->rank || c->y->shape[0] != ys[0] || c->y->shape[1] != ys[1]) {
        return dims(op, c, 1, err);
    }
    c->n = c->x->shape[0];
    c->bias = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 1);
    if (c->bias) {
        if (opm_expect_shape(op, c->bias, &c->cout, 1, err)) return OPM_EINVAL;
        if (c->p.bias_set && !c->p.bias)
            return opm_err(err, OPM_EINVAL, "attrs.bias", "expected true (or absent) with a bias tensor, got false");
    }
    c->bias_attr = !c->bias && c->p.bias;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD && !c->p.grad_input && !c->p.grad_weight && !c->bias &&
        !c->bias_attr)
        return opm_err(err, OPM_EINVAL, "attrs.grad_weight",
                       "expected grad_input, grad_weight or a bias: this backward computes nothing");
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    conv_dims c;
    return dims(op, &c, 1, err);
}

static int count(const opm_op *op, opm_counts *cnt, opm_error *err)
{
    conv_dims c;
    if (dims(op, &c, 0, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    const opm_tensor *x = c.x, *w = c.w, *y = c.y;
    uint64_t g = (uint64_t)c.p.groups, ksz = 1, outsp = 1, insp = 1;
    for (int i = 0; i < c.p.nsp; i++) {
        ksz = opm_mul(ksz, (uint64_t)w->shape[2 + i], &ok);
        outsp = opm_mul(outsp, (uint64_t)y->shape[2 + i], &ok);
        insp = opm_mul(insp, (uint64_t)x->shape[2 + i], &ok);
    }
    uint64_t n = (uint64_t)c.n, cin = (uint64_t)c.cin, cout = (uint64_t)c.cout;
    /* One conv-sized product: the side that is reduced over is C/g·Πk. */
    uint64_t macs = c.p.transposed
                        ? opm_mul(opm_mul(opm_mul(n, cin, &ok), insp, &ok), opm_mul(cout / g, ksz, &ok), &ok)
                        : opm_mul(opm_mul(opm_mul(n, cout, &ok), outsp, &ok), opm_mul(cin / g, ksz, &ok), &ok);
    uint64_t yelems = opm_mul(opm_mul(n, cout, &ok), outsp, &ok);
    uint64_t xb = opm_tensor_bytes(x, &ok), wb = opm_tensor_bytes(w, &ok), yb = opm_tensor_bytes(y, &ok);
    int has_bias = c.bias || c.bias_attr;
    uint64_t bb = c.bias ? opm_tensor_bytes(c.bias, &ok) : c.bias_attr ? opm_bytes(cout, y->dtype, &ok) : 0;
    cnt->compute_dtype = x->dtype;
    cnt->vector_flops = has_bias ? yelems : 0;
    cnt->weight_bytes = opm_add(wb, bb, &ok);
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        int gi = c.p.grad_input, gw = c.p.grad_weight;
        cnt->matrix_flops = opm_mul(opm_mul(2, macs, &ok), (uint64_t)(gi + gw), &ok);
        uint64_t xin = gw ? xb : 0;
        cnt->read_bytes = opm_add(opm_add(yb, xin, &ok), gi ? wb : 0, &ok);
        cnt->write_bytes = opm_add(opm_add(gi ? xb : 0, gw ? wb : 0, &ok), bb, &ok);
        cnt->input_bytes = opm_add(yb, xin, &ok);
        cnt->output_bytes = cnt->write_bytes;
    } else {
        cnt->matrix_flops = opm_mul(2, macs, &ok);
        cnt->read_bytes = opm_add(opm_add(xb, wb, &ok), bb, &ok);
        cnt->write_bytes = yb;
        cnt->input_bytes = xb;
        cnt->output_bytes = yb;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int from_short(opm_op *op, opm_error *err)
{
    int64_t xs[OPM_MAX_RANK], ws[OPM_MAX_RANK], ys[2 + CONV_MAX_SP], cin, cout;
    int xr, wr;
    opm_dtype dt, odt;
    if (opm_short_shape(op, "input", xs, &xr, err) || opm_short_shape(op, "weight", ws, &wr, err) ||
        opm_short_dtypes(op, &dt, &odt, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (xr < 3 || xr > 2 + CONV_MAX_SP)
        return opm_err(err, OPM_EINVAL, "input",
                       "expected [N, C_in, spatial...] with 1 to %d spatial dims (3 to %d entries), got %d entries",
                       CONV_MAX_SP, 2 + CONV_MAX_SP, xr);
    if (wr != xr)
        return opm_err(err, OPM_EINVAL, "weight",
                       "expected %d entries like input ([C_out, C_in/groups, kernel...]), got %d", xr, wr);
    conv_params p;
    conv_where at = {NULL, NULL, NULL, ""};
    if (read_params(op, xr - 2, 1, &p, err) || geometry(xs, ws, &p, 1, ys, &cin, &cout, &at, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, xr, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, ws, wr, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, ys, xr, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def attrs[] = {
    {"stride", OPM_ATTR_INTS, 0, "stride: one integer or one per spatial dim (default 1)"},
    {"padding", OPM_ATTR_INTS, 0, "zero padding on each side: one integer or one per spatial dim (default 0)"},
    {"dilation", OPM_ATTR_INTS, 0, "kernel dilation: one integer or one per spatial dim (default 1)"},
    {"groups", OPM_ATTR_INT, 1, "channel groups; groups = C_in is depthwise (default 1)"},
    {"transposed", OPM_ATTR_BOOL, 0, "transposed conv; weight [C_in, C_out/groups, kernel...] (default false)"},
    {"output_padding", OPM_ATTR_INTS, 0, "extra output size of a transposed conv, per spatial dim (default 0)"},
    {"bias", OPM_ATTR_BOOL, 0,
     "add a bias of C_out in the output dtype (default false; a second weight [C_out] also adds one)"},
    {"grad_input", OPM_ATTR_BOOL, 0, "train_bwd computes dX (default true; false for a first layer)"},
    {"grad_weight", OPM_ATTR_BOOL, 0, "train_bwd computes dW (default true)"},
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"input", OPM_ATTR_INTS, 0, "input shape [N, C_in, spatial...] (1 to 3 spatial dims)"},
    {"weight", OPM_ATTR_INTS, 0,
     "weight shape [C_out, C_in/groups, kernel...] ([C_in, C_out/groups, kernel...] when transposed)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_conv = {
    OPM_KIND_CONV, "conv",
    "1-D/2-D/3-D convolution: stride, padding, dilation, groups, transposed, bias",
    "input x [N, C_in, spatial...], weight w [C_out, C_in/groups, kernel...] "
    "([C_in, C_out/groups, kernel...] when transposed), output y [N, C_out, out...], "
    "optional weight bias [C_out]",
    attrs, short_keys, from_short, validate, count,
    {1, 2, 1, 0, -1},
};
