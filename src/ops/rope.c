/* rope.c — `rope`: rotary position embedding of q (and k) as one kernel
 * (vLLM/SGLang `rotary_embedding`, flash-attn `apply_rotary`, HF
 * `apply_rotary_pos_emb`).
 *
 * Tensors: input q [B, S, Hq, D] (layout bhsd: [B, Hq, S, D]), [T, Hq, D] or
 * packed [T, Hq·D] (then attr head_dim); optional input k with the same token
 * dims and its own Hk; optional integer input positions (T elements); weight
 * cos/sin table(s): one combined table [R, rotary_dim] (cos half, sin half)
 * or separate cos and sin tables [R, rotary_dim or rotary_dim/2]; one output
 * per rotated input, of its shape.  T = B·S tokens, r = rotary_dim (attr,
 * default D; partial rotary when r < D).  `interleaved` (GPT-J pairs) versus
 * the default half rotation (NeoX) changes no count.
 *
 *   forward   vector 3·T·(Hq + Hk)·r   (x·cos, x_pair·sin, one add per
 *             rotated element; the D − r pass-through dims cost nothing)
 *             reads q, k, positions, and the table rows: with positions
 *             min(T, R) gathered rows of each table, without positions the
 *             whole table (already one row per position); writes the outputs.
 *             `in_place` (the vLLM/SGLang kernels): q and k are read and
 *             written only on their r rotated dims, and the outputs alias
 *             the inputs (no output footprint).
 *   train_bwd the rotation's transpose: same FLOPs; reads dq_out, dk_out,
 *             positions and table rows; writes dq, dk. */
#include <string.h>
#include "kind.h"

typedef struct rope_dims {
    const opm_tensor *q, *k, *pos, *tab[2], *qo, *ko;
    int ntab;
    uint64_t tokens, hq, hk, d, rot, tab_el[2], tab_w[2];
} rope_dims;

static int is_int(opm_dtype dt) { return dt == OPM_INT32 || dt == OPM_INT64; }

/* Token dims (everything but heads and head dim) and heads of a q/k tensor. */
static void split(const opm_tensor *t, int64_t hd, int64_t *b, int64_t *s, int64_t *h)
{
    if (t->rank == 4) {
        int hs = strcmp(t->layout, "bhsd") == 0;
        *b = t->shape[0];
        *s = hs ? t->shape[2] : t->shape[1];
        *h = hs ? t->shape[1] : t->shape[2];
    } else {
        *b = 1;
        *s = t->shape[0];
        *h = t->rank == 3 ? t->shape[1] : t->shape[1] / hd;
    }
}

static int dims(const opm_op *op, rope_dims *r, opm_error *err)
{
    memset(r, 0, sizeof *r);
    char f[OPM_ERROR_FIELD_MAX];
    for (size_t i = 0, nt = opm_op_tensor_count(op); i < nt; i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        if (t->role == OPM_ROLE_INPUT) {
            if (is_int(t->dtype)) {
                if (r->pos) {
                    opm_tensor_field(op, t, ".dtype", f, sizeof f);
                    return opm_err(err, OPM_EINVAL, f, "expected one integer positions tensor, got a second");
                }
                r->pos = t;
            } else if (!r->q) {
                r->q = t;
            } else if (!r->k) {
                r->k = t;
            } else {
                opm_tensor_field(op, t, NULL, f, sizeof f);
                return opm_err(err, OPM_EINVAL, f,
                               "expected at most two rotated inputs (q and k) and one integer positions tensor");
            }
        } else if (t->role == OPM_ROLE_WEIGHT) {
            if (r->ntab < 2) r->tab[r->ntab++] = t; /* at most 2: max_tensors */
        } else if (t->role == OPM_ROLE_OUTPUT) {
            if (!r->qo) r->qo = t;
            else if (!r->ko) r->ko = t; /* at most 2: max_tensors */
        }
    }
    if (!r->q)
        return opm_err(err, OPM_EINVAL, "tensors", "kind rope needs input q (a floating-point tensor with role input)");
    if (r->q->rank < 2 || r->q->rank > 4) {
        opm_tensor_field(op, r->q, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected q [B, S, H, D], [T, H, D] or [T, H·D], got %d dimensions",
                       r->q->rank);
    }
    int64_t hd = r->q->shape[r->q->rank - 1];
    int64_t a = opm_op_get_int(op, "head_dim", 0);
    if (a) {
        if (r->q->rank == 2 ? r->q->shape[1] % a != 0 : a != hd) {
            opm_tensor_field(op, r->q, ".shape", f, sizeof f);
            return opm_err(err, OPM_EINVAL, f, "expected the last dimension %s head_dim %lld, got %lld",
                           r->q->rank == 2 ? "to be a multiple of" : "to equal", (long long)a, (long long)hd);
        }
        hd = a;
    } else if (r->q->rank == 2) {
        return opm_err(err, OPM_EINVAL, "attrs.head_dim",
                       "missing; a packed q [T, H·D] needs head_dim to know its heads");
    }
    int64_t b, s, h;
    split(r->q, hd, &b, &s, &h);
    r->hq = (uint64_t)h;
    if (r->k) {
        int64_t b2, s2, h2;
        int ok_k = r->k->rank == r->q->rank && r->k->shape[r->k->rank - 1] % hd == 0 &&
                   (r->k->rank == 2 || r->k->shape[r->k->rank - 1] == hd);
        if (ok_k) {
            split(r->k, hd, &b2, &s2, &h2);
            ok_k = b2 == b && s2 == s;
        }
        if (!ok_k) {
            opm_tensor_field(op, r->k, ".shape", f, sizeof f);
            return opm_err(err, OPM_EINVAL, f,
                           "expected k with q's rank, token dimensions and head dim %lld (its own heads)",
                           (long long)hd);
        }
        r->hk = (uint64_t)h2;
    }
    int64_t rot = opm_op_get_int(op, "rotary_dim", hd);
    if (rot > hd || rot % 2) {
        return opm_err(err, OPM_EINVAL, "attrs.rotary_dim",
                       "expected an even rotary dim no larger than the head dim %lld, got %lld", (long long)hd,
                       (long long)rot);
    }
    r->d = (uint64_t)hd;
    r->rot = (uint64_t)rot;
    int ok = 1;
    r->tokens = opm_mul((uint64_t)b, (uint64_t)s, &ok);
    if (r->pos && opm_tensor_elems(r->pos, &ok) != r->tokens) {
        opm_tensor_field(op, r->pos, ".shape", f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected one position per token (%llu elements)",
                       (unsigned long long)r->tokens);
    }
    if (!r->ntab)
        return opm_err(err, OPM_EINVAL, "tensors",
                       "kind rope needs the cos/sin table (a tensor with role weight: [R, rotary_dim])");
    for (int i = 0; i < r->ntab; i++) {
        const opm_tensor *t = r->tab[i];
        uint64_t w = (uint64_t)t->shape[t->rank - 1];
        uint64_t rows = (r->tab_el[i] = opm_tensor_elems(t, &ok)) / w;
        r->tab_w[i] = w;
        int wok = w == r->rot || (r->ntab == 2 && 2 * w == r->rot);
        int rok = r->pos || rows == (uint64_t)s || rows == r->tokens;
        if (wok && rok) continue;
        opm_tensor_field(op, t, ".shape", f, sizeof f);
        if (!wok)
            return opm_err(err, OPM_EINVAL, f,
                           "expected a last dimension of rotary_dim %llu (combined cos/sin)%s, got %llu",
                           (unsigned long long)r->rot, r->ntab == 2 ? " or rotary_dim/2 (separate tables)" : "",
                           (unsigned long long)w);
        return opm_err(err, OPM_EINVAL, f,
                       "expected one row per position (%lld or %llu rows) without a positions input, got %llu",
                       (long long)s, (unsigned long long)r->tokens, (unsigned long long)rows);
    }
    if (!r->qo)
        return opm_err(err, OPM_EINVAL, "tensors", "kind rope needs an output, the rotated q");
    if (opm_expect_shape(op, r->qo, r->q->shape, r->q->rank, err)) return OPM_EINVAL;
    if (r->k && !r->ko)
        return opm_err(err, OPM_EINVAL, "tensors", "kind rope needs a second output, the rotated k");
    if (!r->k && r->ko) {
        opm_tensor_field(op, r->ko, NULL, f, sizeof f);
        return opm_err(err, OPM_EINVAL, f, "expected one output per rotated input; there is no k");
    }
    if (r->ko && opm_expect_shape(op, r->ko, r->k->shape, r->k->rank, err)) return OPM_EINVAL;
    if (!ok) return opm_err(err, OPM_EOVERFLOW, "tensors", "dimensions overflow 64 bits");
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    rope_dims r;
    return dims(op, &r, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    rope_dims r;
    if (dims(op, &r, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1, in_place = opm_op_get_bool(op, "in_place", 0);
    uint64_t heads = opm_add(r.hq, r.hk, &ok), th = opm_mul(r.tokens, heads, &ok);
    c->vector_flops = opm_mul(3, opm_mul(th, r.rot, &ok), &ok);
    c->compute_dtype = r.q->dtype;
    /* elements of q and k, whole and (in place) on their rotated dims only */
    uint64_t tq = opm_mul(r.tokens, r.hq, &ok), tk = opm_mul(r.tokens, r.hk, &ok);
    uint64_t qe = opm_mul(tq, r.d, &ok), ke = opm_mul(tk, r.d, &ok);
    uint64_t qm = in_place ? opm_mul(tq, r.rot, &ok) : qe, km = in_place ? opm_mul(tk, r.rot, &ok) : ke;
    uint64_t in = opm_bytes(qm, r.q->dtype, &ok), out = opm_bytes(qm, r.qo->dtype, &ok);
    uint64_t in_all = opm_bytes(qe, r.q->dtype, &ok), out_all = opm_bytes(qe, r.qo->dtype, &ok);
    if (r.k) {
        in = opm_add(in, opm_bytes(km, r.k->dtype, &ok), &ok);
        out = opm_add(out, opm_bytes(km, r.ko->dtype, &ok), &ok);
        in_all = opm_add(in_all, opm_bytes(ke, r.k->dtype, &ok), &ok);
        out_all = opm_add(out_all, opm_bytes(ke, r.ko->dtype, &ok), &ok);
    }
    uint64_t pos = r.pos ? opm_bytes(r.tokens, r.pos->dtype, &ok) : 0, tab = 0, tab_all = 0;
    for (int i = 0; i < r.ntab; i++) {
        uint64_t all = opm_bytes(r.tab_el[i], r.tab[i]->dtype, &ok), rows = r.tab_el[i] / r.tab_w[i];
        if (r.pos && r.tokens < rows) rows = r.tokens;
        tab = opm_add(tab, r.pos ? opm_bytes(opm_mul(rows, r.tab_w[i], &ok), r.tab[i]->dtype, &ok) : all, &ok);
        tab_all = opm_add(tab_all, all, &ok);
    }
    int bwd = opm_op_phase(op) == OPM_PHASE_TRAIN_BWD;
    /* backward: the gradients of the outputs in, the gradients of q and k out */
    c->read_bytes = opm_add(opm_add(bwd ? out : in, pos, &ok), tab, &ok);
    c->write_bytes = bwd ? in : out;
    c->input_bytes = opm_add(bwd ? out_all : in_all, pos, &ok);
    c->weight_bytes = tab_all;
    c->output_bytes = in_place ? 0 : bwd ? in_all : out_all;
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

static int from_short(opm_op *op, opm_error *err)
{
    int64_t b, s, h, hk, d, maxpos;
    opm_dtype dt, odt, tdt;
    if (opm_short_int(op, "batch", 0, 1, &b, err) || opm_short_int(op, "seq", 1, 1, &s, err) ||
        opm_short_int(op, "heads", 1, 1, &h, err) || opm_short_int(op, "kv_heads", 0, h, &hk, err) ||
        opm_short_int(op, "head_dim", 1, 1, &d, err) || opm_short_int(op, "max_position", 0, 0, &maxpos, err) ||
        opm_short_dtypes(op, &dt, &odt, err) || opm_short_dtype_key(op, "table_dtype", dt, &tdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    int64_t rot = opm_op_get_int(op, "rotary_dim", d);
    if (maxpos && s > INT64_MAX / b)
        return opm_err(err, OPM_EOVERFLOW, "seq", "batch·seq positions overflow 64 bits");
    int64_t qs[4] = {b, s, h, d}, ks[4] = {b, s, hk, d}, ts[2] = {maxpos ? maxpos : s, rot}, ps = maxpos ? b * s : 1;
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, qs, 4, dt, "q", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ks, 4, dt, "k", err) ||
        (maxpos && opm_op_add_tensor(op, OPM_ROLE_INPUT, &ps, 1, OPM_INT64, "positions", err)) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, ts, 2, tdt, "cos_sin", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, qs, 4, odt, "q", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, ks, 4, odt, "k", err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

static const opm_attr_def attrs[] = {
    {"rotary_dim", OPM_ATTR_INT, 1, "leading dims of each head that rotate (default the head dim)"},
    {"head_dim", OPM_ATTR_INT, 1, "head dim of a packed q [T, H·D] (default q's last dim)"},
    {"interleaved", OPM_ATTR_BOOL, 0, "rotate adjacent pairs (GPT-J) instead of halves (NeoX); same counts"},
    {"in_place", OPM_ATTR_BOOL, 0, "q and k rotated in place: only the rotated dims move (default false)"},
    OPM_STREAM_CONTEXT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"batch", OPM_ATTR_INT, 1, "batch B (default 1)"},
    {"seq", OPM_ATTR_INT, 1, "tokens per sequence S"},
    {"heads", OPM_ATTR_INT, 1, "query heads"},
    {"kv_heads", OPM_ATTR_INT, 1, "key heads (default heads)"},
    {"head_dim", OPM_ATTR_INT, 1, "head dim D"},
    {"max_position", OPM_ATTR_INT, 1,
     "rows of a cos/sin cache gathered through int64 positions (default: a [seq, rotary_dim] table)"},
    {"table_dtype", OPM_ATTR_STRING, 0, "dtype of the cos/sin table (default dtype)"},
    {NULL, 0, 0, NULL},
};

const opm_kind_def opm_kind_rope = {
    OPM_KIND_ROPE, "rope", "rotary position embedding of q and k (partial rotary, cos/sin tables read)",
    "input q [B, S, H, D] | [T, H, D] | [T, H·D], optional input k (same token dims), optional integer "
    "input positions [T], weight cos/sin table [R, rotary_dim] (or cos and sin tables), one output per "
    "rotated input",
    attrs, short_keys, from_short, validate, count,
    {3, 2, 2, 0, -1},
};
