/* attention.c — scaled dot-product attention as flash-attention runs it:
 * `attention_prefill` and `attention_decode` (decode reads a KV cache; the
 * arithmetic is the same, the shapes differ).
 *
 * Tensors q [B, Sq, H, Dqk], k [B, Skv, Hkv, Dqk], v [B, Skv, Hkv, Dv],
 * output [B, Sq, H, Dv] (layout "bhsd" on a tensor swaps S and H).  GQA/MQA
 * when Hkv divides H.  With `causal`, the mask is aligned to the bottom
 * right (query i sees keys j ≤ i + Skv − Sq), and n below counts exactly the
 * unmasked scores per (batch, head).
 *
 *   forward   matrix 2·B·H·n·(Dqk + Dv)  (QKᵀ and PV)
 *             vector 5·B·H·n            (scale, max, subtract, exp, sum; see docs/ops.md)
 *             reads q, k, v; writes o — each once, in its own dtype
 *   train_bwd matrix 2·B·H·n·(2·Dqk + 2·Dv) plus 2·B·H·n·Dqk when the
 *             flash backward recomputes QKᵀ (`flash_recompute`, default true);
 *             vector 5·B·H·n; reads q, k, v, o, dO (+ P when not recomputed);
 *             writes dq, dk, dv. */
#include <string.h>
#include "kind.h"

typedef struct attn_dims {
    int64_t b, sq, skv, h, hkv, dqk, dv;
    const opm_tensor *q, *k, *v, *o;
} attn_dims;

/* Unmasked score count of one (batch, head) pair. */
static uint64_t scores(int64_t sq, int64_t skv, int causal, int *ok)
{
    if (!causal) return opm_mul((uint64_t)sq, (uint64_t)skv, ok);
    uint64_t q = (uint64_t)sq, kv = (uint64_t)skv;
    if (kv >= q) /* every row sees Skv−Sq keys plus a triangle */
        return opm_add(opm_mul(q, kv - q, ok), opm_mul(q, q + 1, ok) / 2, ok);
    /* the first Sq−Skv rows see nothing; the last Skv rows form a triangle */
    return opm_mul(kv, kv + 1, ok) / 2;
}

static void bshd(const opm_tensor *t, int64_t *b, int64_t *s, int64_t *h, int64_t *d)
{
    int hs = strcmp(t->layout, "bhsd") == 0;
    *b = t->shape[0];
    *s = hs ? t->shape[2] : t->shape[1];
    *h = hs ? t->shape[1] : t->shape[2];
    *d = t->shape[3];
}

static int dims(const opm_op *op, attn_dims *a, opm_error *err)
{
    memset(a, 0, sizeof *a);
    if (!(a->q = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 4, 4, "query q", err)) ||
        !(a->k = opm_need_tensor(op, OPM_ROLE_INPUT, 1, 4, 4, "key k", err)) ||
        !(a->v = opm_need_tensor(op, OPM_ROLE_INPUT, 2, 4, 4, "value v", err)) ||
        !(a->o = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 4, 4, "output o", err)))
        return OPM_EINVAL;
    int64_t b2, d2, b3, s3, h3;
    bshd(a->q, &a->b, &a->sq, &a->h, &a->dqk);
    bshd(a->k, &b2, &a->skv, &a->hkv, &d2);
    bshd(a->v, &b3, &s3, &h3, &a->dv);
    char f[OPM_ERROR_FIELD_MAX];
    if (b2 != a->b || d2 != a->dqk) {
        opm_tensor_field(op, a->k, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected batch %lld and head dim %lld to match q, got batch %lld and head dim %lld",
                       (long long)a->b, (long long)a->dqk, (long long)b2, (long long)d2);
    }
    if (a->h % a->hkv != 0) {
        opm_tensor_field(op, a->k, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected kv heads dividing the %lld query heads, got %lld",
                       (long long)a->h, (long long)a->hkv);
    }
    if (b3 != a->b || s3 != a->skv || h3 != a->hkv) {
        opm_tensor_field(op, a->v, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f,
                       "expected batch %lld, kv length %lld and kv heads %lld to match k, got %lld, %lld and %lld",
                       (long long)a->b, (long long)a->skv, (long long)a->hkv, (long long)b3, (long long)s3,
                       (long long)h3);
    }
    int64_t want[4] = {a->b, a->sq, a->h, a->dv};
    if (strcmp(a->o->layout, "bhsd") == 0) {
        want[1] = a->h;
        want[2] = a->sq;
    }
    return opm_expect_shape(op, a->o, want, 4, err);
}

static int validate(const opm_op *op, opm_error *err)
{
    attn_dims a;
    return dims(op, &a, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    attn_dims a;
    if (dims(op, &a, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    uint64_t n = scores(a.sq, a.skv, opm_op_get_bool(op, "causal", 0), &ok);
    uint64_t bhn = opm_mul(opm_mul((uint64_t)a.b, (uint64_t)a.h, &ok), n, &ok);
    uint64_t q = opm_tensor_bytes(a.q, &ok), k = opm_tensor_bytes(a.k, &ok);
    uint64_t v = opm_tensor_bytes(a.v, &ok), o = opm_tensor_bytes(a.o, &ok);
    uint64_t dqk = (uint64_t)a.dqk, dv = (uint64_t)a.dv;
    c->compute_dtype = a.q->dtype;
    c->vector_flops = opm_mul(5, bhn, &ok);
    c->weight_bytes = 0;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        int recompute = opm_op_get_bool(op, "flash_recompute", 1);
        uint64_t per = 2 * dqk + 2 * dv + (recompute ? dqk : 0);
        c->matrix_flops = opm_mul(opm_mul(2, bhn, &ok), per, &ok);
        uint64_t p = recompute ? 0 : opm_bytes(bhn, a.q->dtype, &ok);
        c->read_bytes = opm_add(opm_add(opm_add(q, k, &ok), opm_add(v, o, &ok), &ok),
                                opm_add(o, p, &ok), &ok);
        c->write_bytes = opm_add(opm_add(q, k, &ok), v, &ok);
        c->input_bytes = c->read_bytes;
        c->output_bytes = c->write_bytes;
    } else {
        c->matrix_flops = opm_mul(opm_mul(2, bhn, &ok), dqk + dv, &ok);
        c->read_bytes = opm_add(opm_add(q, k, &ok), v, &ok);
        c->write_bytes = o;
        c->input_bytes = c->read_bytes;
        c->output_bytes = o;
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int from_short(opm_op *op, opm_error *err)
{
    int64_t b, sq, skv, h, hkv, d, dqk, dv;
    opm_dtype dt, odt, kvdt;
    int is_decode = opm_op_kind(op) == OPM_KIND_ATTENTION_DECODE;
    if (!opm_op_has(op, "head_dim") && !opm_op_has(op, "head_dim_qk"))
        return opm_err(err, OPM_EINVAL, "head_dim",
                       "missing; the short form of %s needs head_dim (or head_dim_qk and head_dim_v)",
                       opm_kind_name(opm_op_kind(op)));
    if (opm_short_int(op, "batch", 1, 1, &b, err) ||
        opm_short_int(op, "seq_q", !is_decode, 1, &sq, err) ||
        opm_short_int(op, "seq_kv", 1, 1, &skv, err) || opm_short_int(op, "heads", 1, 1, &h, err) ||
        opm_short_int(op, "kv_heads", 0, h, &hkv, err) ||
        opm_short_int(op, "head_dim", 0, 0, &d, err) ||
        opm_short_int(op, "head_dim_qk", d == 0, d, &dqk, err) ||
        opm_short_int(op, "head_dim_v", 0, dqk, &dv, err) || opm_short_dtypes(op, &dt, &odt, err) ||
        opm_short_dtype_key(op, "kv_dtype", dt, &kvdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (h % hkv)
        return opm_err(err, OPM_EINVAL, "kv_heads", "expected kv heads dividing the %lld query heads, got %lld",
                       (long long)h, (long long)hkv);
    int64_t qs[4] = {b, sq, h, dqk}, ks[4] = {b, skv, hkv, dqk}, vs[4] = {b, skv, hkv, dv},
            os[4] = {b, sq, h, dv};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, qs, 4, dt, "q", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ks, 4, kvdt, "k", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, vs, 4, kvdt, "v", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, os, 4, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def attrs[] = {
    {"causal", OPM_ATTR_BOOL, 0, "causal mask aligned to the bottom right (default false)"},
    {"flash_recompute", OPM_ATTR_BOOL, 0, "backward recomputes QKᵀ instead of reading P (default true)"},
    {"softmax_scale", OPM_ATTR_DOUBLE, 0, "score scale (does not change the counts)"},
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"batch", OPM_ATTR_INT, 1, "batch size B"},
    {"seq_q", OPM_ATTR_INT, 1, "query length (decode: default 1)"},
    {"seq_kv", OPM_ATTR_INT, 1, "key/value length (the KV cache length in decode)"},
    {"heads", OPM_ATTR_INT, 1, "query heads H"},
    {"kv_heads", OPM_ATTR_INT, 1, "key/value heads (default heads; fewer is GQA/MQA)"},
    {"head_dim", OPM_ATTR_INT, 1, "head dimension of q, k and v"},
    {"head_dim_qk", OPM_ATTR_INT, 1, "head dimension of q and k"},
    {"head_dim_v", OPM_ATTR_INT, 1, "head dimension of v and o (default head_dim_qk)"},
    {"kv_dtype", OPM_ATTR_STRING, 0, "dtype of k and v (default dtype)"},
    {NULL, 0, 0, NULL},
};

#define TENSORS_HELP                                                                     \
    "input q [B, Sq, H, Dqk], input k [B, Skv, Hkv, Dqk], input v [B, Skv, Hkv, Dv], " \
    "output o [B, Sq, H, Dv] (layout bhsd swaps S and H)"

const opm_kind_def opm_kind_attention_prefill = {
    OPM_KIND_ATTENTION_PREFILL, "attention_prefill",
    "fused (flash) attention over a whole sequence; GQA, causal with Sq != Skv",
    TENSORS_HELP, attrs, short_keys, from_short, validate, count,
    {3, 0, 1, 0, -1},
};

const opm_kind_def opm_kind_attention_decode = {
    OPM_KIND_ATTENTION_DECODE, "attention_decode",
    "attention of a few new tokens against a KV cache",
    TENSORS_HELP, attrs, short_keys, from_short, validate, count,
    {3, 0, 1, 0, -1},
};

opm_op *opm_op_attention(int64_t batch, int64_t seq_q, int64_t seq_kv, int64_t heads,
                         int64_t kv_heads, int64_t head_dim, int causal, opm_dtype dtype,
                         opm_error *err)
{
    opm_kind kind = seq_q > 1 ? OPM_KIND_ATTENTION_PREFILL : OPM_KIND_ATTENTION_DECODE;
    opm_op *op = opm_op_new(opm_kind_name(kind), kind,
                            seq_q > 1 ? OPM_PHASE_PREFILL : OPM_PHASE_DECODE, err);
    if (!op) return NULL;
    int64_t qs[4] = {batch, seq_q, heads, head_dim}, ks[4] = {batch, seq_kv, kv_heads, head_dim};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, qs, 4, dtype, "q", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ks, 4, dtype, "k", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ks, 4, dtype, "v", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, qs, 4, dtype, NULL, err) ||
        (causal && opm_op_set_bool(op, "causal", 1, err)) || opm_op_validate(op, err)) {
        opm_op_free(op);
        return NULL;
    }
    return op;
}

OPM_KIND_PENDING(opm_kind_attention, OPM_KIND_ATTENTION, "attention");
