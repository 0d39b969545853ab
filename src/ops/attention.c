/* attention.c — scaled dot-product attention as flash-attention runs it:
 * `attention` (the generic name), `attention_prefill` and `attention_decode`.
 * All three count the same way; the names say where the op sits in a model
 * (decode only changes the short form's default seq_q to 1).
 *
 * Tensors, dense: q [B, Sq, H, Dqk], k [B, Skv, Hkv, Dqk], v [B, Skv, Hkv, Dv],
 * o [B, Sq, H, Dv] (layout "bhsd" on a tensor swaps S and H).  The full form
 * may also state the dims as attrs batch, seq_q, seq_kv, heads, kv_heads and
 * head_dim (the original opmodel's form, whose tensors are [B, H, S, D]): each
 * dense tensor without a bhsd/bshd layout is then read as [B, S, H, D] or
 * [B, H, S, D], whichever agrees with them, and one that agrees with neither
 * is an error.  flash_attention: true says what is counted; false (a kernel
 * that materialises the scores) is refused.  Packed
 * (variable-length batch, as flash_attn_varlen takes it): q [Tq, H, Dqk],
 * k [Tkv, Hkv, Dqk], v [Tkv, Hkv, Dv], o [Tq, H, Dv] with the per-sequence
 * lengths in attrs seq_lens (both sides), seq_lens_q, seq_lens_kv.  Hkv
 * divides H (GQA/MQA); Dqk ≠ Dv is MLA.
 *
 * Sequence b has sq queries and sk keys.  Query i sees the keys j with
 *     i + sk − sq − L  ≤  j  ≤  i + sk − sq + R          (bottom-right aligned)
 * with L = window_left, R = window_right (unbounded unless set; `causal`
 * makes R = 0; sliding_window W sets L = W − 1, and R = W − 1 unless
 * window_right is given).  The unmasked scores are
 *     n_b = Σ_{i<sq} [clamp(i + sk − sq + R + 1, 0, sk) − clamp(i + sk − sq − L, 0, sk)]
 * (piecewise linear in i with four kinks: at most five closed-form segment
 * sums, O(1) per sequence), n = Σ_b n_b,
 * Tq = Σ sq, Tkv = Σ kv_b with kv_b = sk, or ⌈sk/P⌉·P with page_size P.
 *
 *   forward   matrix 2·H·n·(Dqk + Dv)  (QKᵀ and PV)
 *             vector 5·H·n            (scale, row max, subtract, exp, row sum)
 *             reads Tq·H·Dqk of q, Tkv·Hkv·Dqk of k, Tkv·Hkv·Dv of v, each in
 *             its own dtype, + Σ⌈sk/P⌉ block-table entries + fp32 K/V scales
 *             (kv_scale tensor: 8 bytes, head: 8·Hkv, token: 8·Tkv·Hkv);
 *             writes Tq·H·Dv of o
 *   train_bwd matrix 2·H·n·(2·Dqk + 2·Dv), + 2·H·n·Dqk when the backward
 *             recomputes QKᵀ (`flash_recompute`, default true);
 *             vector 5·H·n with recompute (scale, − LSE, exp, dP − D, × P), 2·H·n
 *             without, + 2·H·Tq·Dv for D = rowsum(dO∘O);
 *             reads q, k, v, o, dO (+ P, H·n elements in q's dtype, without
 *             recompute) and the K/V scales; writes dq, dk, dv. */
#include <stdio.h>
#include <string.h>
#include "kind.h"

enum { SCALE_NONE, SCALE_TENSOR, SCALE_HEAD, SCALE_TOKEN };

typedef struct attn_dims {
    /* b sequences; sq/skv: the per-sequence lengths when uniform (dense: the
     * padded S; packed: T/B), used where lq/lkv is NULL. */
    int64_t b, sq, skv, h, hkv, dqk, dv;
    int packed;
    const int64_t *lq, *lkv;
    int causal, recompute, scale;
    int64_t wl, wr;       /* window; -1 = unbounded */
    int64_t page;         /* 0 = KV not paged */
    opm_dtype bt_dtype;
    const opm_tensor *q, *k, *v, *o;
    int hs[4];            /* q, k, v, o read as [B, H, S, D] */
    /* Dims stated in attrs (0: not given): batch, seq_q, seq_kv, heads,
     * kv_heads, head_dim. */
    int64_t given[6];
} attn_dims;

/* clamp(i + s, 0, kmax) without leaving 64 bits (i, |s| < 2^63). */
static uint64_t clampv(uint64_t i, int64_t s, uint64_t kmax)
{
    uint64_t v;
    if (s >= 0) {
        v = i + (uint64_t)s;
    } else {
        uint64_t neg = (uint64_t)0 - (uint64_t)s;
        v = i > neg ? i - neg : 0;
    }
    return v < kmax ? v : kmax;
}

/* First i ≥ 0 with i + s ≥ target, capped at n: a kink of clampv. */
static uint64_t kink(int64_t s, uint64_t target, uint64_t n)
{
    uint64_t x = s >= 0 ? ((uint64_t)s >= target ? 0 : target - (uint64_t)s)
                        : target + ((uint64_t)0 - (uint64_t)s);
    return x < n ? x : n;
}

/* m·(m−1)/2 without overflowing before the halving. */
static uint64_t tri(uint64_t m, int *ok)
{
    if (m < 2) return 0;
    return m % 2 ? opm_mul(m, (m - 1) / 2, ok) : opm_mul(m / 2, m - 1, ok);
}

/* Unmasked scores of one (sequence, head) pair: Σ_{i<sq} w(i) with
 * w(i) = clamp(i + s1, 0, sk) − clamp(i + s2, 0, sk), s1 = sk − sq + R + 1,
 * s2 = sk − sq − L.  w is linear (slope −1, 0 or 1) between the four kinks
 * 0 ≤ a1 ≤ {b1, a2} ≤ b2 ≤ sq (a: where a clamp leaves 0, b: where it reaches
 * sk), so each of the five segments sums in closed form from its end values;
 * every term added is at most the result, so overflow is reported only when
 * the count itself overflows. */
static uint64_t scores(int64_t sq, int64_t sk, int causal, int64_t wl, int64_t wr, int *ok)
{
    uint64_t n = (uint64_t)sq, k = (uint64_t)sk;
    if (wl < 0 || wl >= sk - 1) {
        if (!causal && (wr < 0 || wr >= sq - 1)) return opm_mul(n, k, ok);
        if (causal) /* plain bottom-right triangle */
            return k >= n ? opm_add(opm_mul(n, k - n, ok), tri(n + 1, ok), ok) : tri(k + 1, ok);
    }
    /* Bounds at or past these are the same as no bound. */
    int64_t l = wl < 0 || wl > sk - 1 ? sk - 1 : wl;
    int64_t r = causal ? 0 : wr < 0 || wr > sq - 1 ? sq - 1 : wr;
    int64_t s1 = sk - sq + r + 1, s2 = sk - sq - l;
    uint64_t a1 = kink(s1, 0, n), b1 = kink(s1, k, n), a2 = kink(s2, 0, n), b2 = kink(s2, k, n);
    uint64_t p[6] = {0, a1, b1 < a2 ? b1 : a2, b1 < a2 ? a2 : b1, b2, n};
    uint64_t total = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t lo = p[i], hi = p[i + 1];
        if (hi == lo) continue;
        uint64_t m = hi - lo;
        uint64_t x = clampv(lo, s1, k) - clampv(lo, s2, k);
        uint64_t z = clampv(hi - 1, s1, k) - clampv(hi - 1, s2, k);
        total = opm_add(total, opm_add(opm_mul(m, x < z ? x : z, ok), x == z ? 0 : tri(m, ok), ok), ok);
    }
    return total;
}

static int is_bhsd(const opm_tensor *t) { return t->layout[0] == 'b' && strcmp(t->layout, "bhsd") == 0; }

static void bshd(const opm_tensor *t, int hs, int64_t *b, int64_t *s, int64_t *h, int64_t *d)
{
    if (t->rank == 3) { /* packed [T, H, D] */
        *b = 1;
        *s = t->shape[0];
        *h = t->shape[1];
        *d = t->shape[2];
        return;
    }
    *b = t->shape[0];
    *s = hs ? t->shape[2] : t->shape[1];
    *h = hs ? t->shape[1] : t->shape[2];
    *d = t->shape[3];
}

/* seq_lens, seq_lens_q, seq_lens_kv: lists found on the op (n = 0: absent). */
static const char *const list_keys[3] = {"seq_lens", "seq_lens_q", "seq_lens_kv"};

/* seq_lens (both sides) or seq_lens_q / seq_lens_kv, with equal lengths. */
static int resolve_lists(const int64_t *const v[3], const size_t n[3], const int64_t **lq, size_t *nq,
                         const int64_t **lkv, size_t *nkv, opm_error *err)
{
    *lq = v[1];
    *nq = n[1];
    *lkv = v[2];
    *nkv = n[2];
    if (n[0]) {
        if (n[1] || n[2])
            return opm_err(err, OPM_EINVAL, "attrs.seq_lens",
                           "give seq_lens (the same lengths for queries and keys) or seq_lens_q/seq_lens_kv, not both");
        *lq = *lkv = v[0];
        *nq = *nkv = n[0];
    }
    if (*nq && *nkv && *nq != *nkv)
        return opm_err(err, OPM_EINVAL, "attrs.seq_lens_kv", "expected %zu sequence lengths as in seq_lens_q, got %zu",
                       *nq, *nkv);
    return 0;
}

/* "attrs.<key>" in buf[32], for error fields. */
static const char *list_field(char *buf, const char *key)
{
    strcpy(buf, "attrs.");
    opm_strlcpy(buf + 6, key, 32 - 6);
    return buf;
}

static int bad_list(opm_error *err, const char *key)
{
    char f[32];
    return opm_err(err, OPM_EINVAL, list_field(f, key), "expected a non-empty list of sequence lengths");
}

static int bad_len(opm_error *err, const char *key, int64_t v, size_t i)
{
    char f[32];
    return opm_err(err, OPM_EINVAL, list_field(f, key), "expected sequence lengths >= 1, got %lld at index %zu",
                   (long long)v, i);
}

/* The attributes, in one pass over the op's keys (counting is on the hot
 * path: one lookup per attribute present, none per attribute absent). */
static int read_attrs(const opm_op *op, attn_dims *a, const int64_t *lv[3], size_t ln[3], opm_error *err)
{
    a->wl = a->wr = -1;
    a->recompute = 1;
    a->bt_dtype = OPM_INT32;
    int64_t sw = 0;
    int has_wl = 0, has_wr = 0, has_bt = 0;
    size_t na = opm_op_attr_count(op);
    for (size_t i = 0; i < na; i++) {
        const char *key = opm_op_attr_key(op, i);
        switch (key[0]) {
        case 'c':
            if (!strcmp(key, "causal")) a->causal = opm_op_attr_bool_at(op, i, 0);
            break;
        case 'f':
            if (!strcmp(key, "flash_recompute")) a->recompute = opm_op_attr_bool_at(op, i, 1);
            else if (!strcmp(key, "flash_attention") && !opm_op_attr_bool_at(op, i, 1))
                return opm_err(err, OPM_EINVAL, "attrs.flash_attention",
                               "expected true: only fused (flash) attention is modelled, got false");
            break;
        case 'h':
            if (!strcmp(key, "heads")) a->given[3] = opm_op_attr_int_at(op, i, 0);
            else if (!strcmp(key, "head_dim")) a->given[5] = opm_op_attr_int_at(op, i, 0);
            break;
        case 'w':
            if (!strcmp(key, "window_left") || !strcmp(key, "window_right")) {
                int64_t w = opm_op_attr_int_at(op, i, -1);
                if (w < -1) {
                    char f[32];
                    return opm_err(err, OPM_EINVAL, list_field(f, key), "expected -1 (unbounded) or a window >= 0, got %lld",
                                   (long long)w);
                }
                if (key[7] == 'l') { a->wl = w; has_wl = 1; }
                else { a->wr = w; has_wr = 1; }
            }
            break;
        case 's':
            if (!strcmp(key, "seq_q") || !strcmp(key, "seq_kv")) {
                a->given[key[4] == 'q' ? 1 : 2] = opm_op_attr_int_at(op, i, 0);
                break;
            }
            if (!strcmp(key, "sliding_window")) {
                sw = opm_op_attr_int_at(op, i, 0);
                break;
            }
            for (int j = 0; j < 3; j++)
                if (!strcmp(key, list_keys[j])) {
                    ln[j] = opm_op_attr_ints_at(op, i, &lv[j]);
                    if (!ln[j]) return bad_list(err, key);
                }
            break;
        case 'p':
            if (!strcmp(key, "page_size")) a->page = opm_op_attr_int_at(op, i, 0);
            break;
        case 'b':
            if (!strcmp(key, "batch")) a->given[0] = opm_op_attr_int_at(op, i, 0);
            else if (!strcmp(key, "block_table_dtype")) {
                const char *s = opm_op_attr_string_at(op, i, "");
                if (opm_dtype_parse(s, &a->bt_dtype) || (a->bt_dtype != OPM_INT32 && a->bt_dtype != OPM_INT64))
                    return opm_err(err, OPM_EINVAL, "attrs.block_table_dtype", "expected int32 or int64, got '%s'", s);
                has_bt = 1;
            }
            break;
        case 'k':
            if (!strcmp(key, "kv_heads")) a->given[4] = opm_op_attr_int_at(op, i, 0);
            else if (!strcmp(key, "kv_scale")) {
                static const char *const names[] = {"none", "tensor", "head", "token"};
                const char *s = opm_op_attr_string_at(op, i, "");
                a->scale = -1;
                for (int j = 0; j < 4; j++)
                    if (!strcmp(s, names[j])) a->scale = j;
                if (a->scale < 0)
                    return opm_err(err, OPM_EINVAL, "attrs.kv_scale", "expected none, tensor, head or token, got '%s'", s);
            }
            break;
        default:
            break;
        }
    }
    if (sw) {
        if (has_wl)
            return opm_err(err, OPM_EINVAL, "attrs.sliding_window", "give sliding_window or window_left, not both");
        a->wl = sw - 1;
        if (!has_wr) a->wr = sw - 1;
    }
    if (has_bt && a->page <= 0)
        return opm_err(err, OPM_EINVAL, "attrs.block_table_dtype", "a block table needs page_size (a paged KV cache)");
    if (a->page < 0) a->page = 0;
    if (a->page && opm_op_phase(op) == OPM_PHASE_TRAIN_BWD)
        return opm_err(err, OPM_EINVAL, "attrs.page_size",
                       "a paged KV cache is an inference layout; train_bwd takes dense or packed k and v");
    return 0;
}

/* Tensor i (q, k, v, o) read as [B, S, H, D] or [B, H, S, D]: its layout when
 * it says bhsd or bshd, else whichever agrees with the dims given in attrs
 * ([B, S, H, D] when both do or none is given); an error when the chosen
 * one disagrees with them. */
static int resolve_layout(const opm_op *op, attn_dims *a, int i, const opm_tensor *t, opm_error *err)
{
    a->hs[i] = is_bhsd(t);
    if (t->rank != 4 || !(a->given[0] | a->given[1] | a->given[2] | a->given[3] | a->given[4] | a->given[5]))
        return 0;
    int kv = i == 1 || i == 2;
    int64_t s = a->given[kv ? 2 : 1], h = a->given[kv ? 4 : 3];
    const int64_t *x = t->shape;
    int fits_shd = (!s || x[1] == s) && (!h || x[2] == h), fits_hsd = (!s || x[2] == s) && (!h || x[1] == h);
    int fixed = a->hs[i] || strcmp(t->layout, "bshd") == 0;
    if (!fixed && !fits_shd && fits_hsd) a->hs[i] = 1;
    if ((a->hs[i] ? fits_hsd : fits_shd) && (!a->given[0] || x[0] == a->given[0]) &&
        (!a->given[5] || x[3] == a->given[5]))
        return 0;
    static const char *const names[6] = {"batch", "seq_q", "seq_kv", "heads", "kv_heads", "head_dim"};
    char said[160] = "", got[96], f[OPM_ERROR_FIELD_MAX];
    size_t used = 0;
    for (int j = 0; j < 6; j++) {
        if (!a->given[j] || (kv && (j == 1 || j == 3)) || (!kv && (j == 2 || j == 4))) continue;
        int n = snprintf(said + used, sizeof said - used, "%s%s %lld", used ? ", " : "", names[j],
                         (long long)a->given[j]);
        if (n < 0 || (size_t)n >= sizeof said - used) break;
        used += (size_t)n;
    }
    opm_shape_text(x, t->rank, got, sizeof got);
    opm_tensor_field(op, t, ".shape", f, sizeof f);
    return opm_err(err, OPM_EINVAL, f, "expected %s agreeing with attrs %s, got %s",
                   !fixed ? "[B, S, H, D] or [B, H, S, D]"
                   : a->hs[i] ? "[B, H, S, D] (layout bhsd)" : "[B, S, H, D] (layout bshd)",
                   said, got);
}

static int dims(const opm_op *op, attn_dims *a, opm_error *err)
{
    /* Field by field: a memset of the struct costs more than the rest here. */
    a->lq = a->lkv = NULL;
    a->causal = a->scale = 0;
    a->page = 0;
    a->o = NULL;
    for (int i = 0; i < 6; i++) a->given[i] = 0;
    /* One pass over the tensors; opm_need_tensor words the error if any is
     * missing or of the wrong rank. */
    const opm_tensor *in[3] = {NULL, NULL, NULL};
    int nin = 0;
    size_t nt = opm_op_tensor_count(op);
    for (size_t i = 0; i < nt; i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        if (t->role == OPM_ROLE_INPUT && nin < 3) in[nin++] = t;
        else if (t->role == OPM_ROLE_OUTPUT && !a->o) a->o = t;
    }
    a->q = in[0];
    a->k = in[1];
    a->v = in[2];
    int rank_ok = nin == 3 && a->o;
    for (int i = 0; rank_ok && i < 3; i++) rank_ok = in[i]->rank >= 3 && in[i]->rank <= 4;
    if (!rank_ok || a->o->rank < 3 || a->o->rank > 4) {
        if (!(a->q = opm_need_tensor(op, OPM_ROLE_INPUT, 0, 3, 4, "query q", err)) ||
            !(a->k = opm_need_tensor(op, OPM_ROLE_INPUT, 1, 3, 4, "key k", err)) ||
            !(a->v = opm_need_tensor(op, OPM_ROLE_INPUT, 2, 3, 4, "value v", err)) ||
            !(a->o = opm_need_tensor(op, OPM_ROLE_OUTPUT, 0, 3, 4, "output o", err)))
            return OPM_EINVAL;
    }
    char f[OPM_ERROR_FIELD_MAX];
    const opm_tensor *all[4] = {a->q, a->k, a->v, a->o};
    for (int i = 1; i < 4; i++)
        if (all[i]->rank != a->q->rank) {
            opm_tensor_field(op, all[i], ".shape", f, sizeof f);
            return opm_err(err, OPM_EINVAL, f, "expected %d dimensions like q (4: dense [B, S, H, D]; 3: packed [T, H, D]), got %d",
                           a->q->rank, all[i]->rank);
        }
    a->packed = a->q->rank == 3;
    if (a->packed)
        for (int i = 0; i < 4; i++)
            if (is_bhsd(all[i])) {
                opm_tensor_field(op, all[i], ".layout", f, sizeof f);
                return opm_err(err, OPM_EINVAL, f, "expected a packed [T, H, D] tensor; layout bhsd needs 4 dimensions");
            }
    const int64_t *lv[3] = {NULL, NULL, NULL};
    size_t ln[3] = {0, 0, 0}, nq, nkv;
    if (read_attrs(op, a, lv, ln, err)) return OPM_EINVAL;
    for (int i = 0; i < 4; i++)
        if (resolve_layout(op, a, i, all[i], err)) return OPM_EINVAL;
    int64_t b2, d2, b3, s3, h3;
    bshd(a->q, a->hs[0], &a->b, &a->sq, &a->h, &a->dqk);
    bshd(a->k, a->hs[1], &b2, &a->skv, &a->hkv, &d2);
    bshd(a->v, a->hs[2], &b3, &s3, &h3, &a->dv);
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
    if (a->packed) {
        want[0] = a->sq;
        want[1] = a->h;
        want[2] = a->dv;
    } else if (a->hs[3]) {
        want[1] = a->h;
        want[2] = a->sq;
    }
    const opm_tensor *o = a->o;
    int r = a->packed ? 3 : 4, same = 1;
    for (int i = 0; i < r; i++) same &= o->shape[i] == want[i];
    if (!same && opm_expect_shape(op, o, want, r, err)) return OPM_EINVAL;

    if (resolve_lists(lv, ln, &a->lq, &nq, &a->lkv, &nkv, err)) return OPM_EINVAL;
    if (!nq && !nkv) {
        if (a->packed)
            return opm_err(err, OPM_EINVAL, "attrs.seq_lens",
                           "missing; packed [T, H, D] tensors need seq_lens, seq_lens_q or seq_lens_kv");
        return 0;
    }
    /* Dense: one valid length per batch entry, within the padded length.
     * Packed: the lists split the T tokens into sequences (summing to T); a
     * side without a list splits evenly. */
    if (a->packed) a->b = (int64_t)(nq ? nq : nkv);
    const int64_t *l[2] = {a->lq, a->lkv};
    size_t n[2] = {nq, nkv};
    int64_t *per[2] = {&a->sq, &a->skv};
    const opm_tensor *t[2] = {a->q, a->k};
    int both = a->lq == a->lkv;
    for (int s = 0; s < 2; s++) {
        const char *key = both ? list_keys[0] : list_keys[1 + s];
        if (!n[s]) {
            if (!a->packed) continue;
            if (*per[s] % a->b) {
                opm_tensor_field(op, t[s], ".shape", f, sizeof f);
                return opm_err(err, OPM_EINVAL, f,
                               "expected %s tokens divisible by the %lld sequences (or give %s), got %lld",
                               s ? "kv" : "query", (long long)a->b, s ? "seq_lens_kv" : "seq_lens_q", (long long)*per[s]);
            }
            *per[s] /= a->b;
            continue;
        }
        char lf[32];
        if (!a->packed && n[s] != (size_t)a->b)
            return opm_err(err, OPM_EINVAL, list_field(lf, key), "expected %lld lengths (the batch of q), got %zu",
                           (long long)a->b, n[s]);
        int64_t cap = *per[s];
        uint64_t sum = 0;
        int ok = 1;
        for (size_t i = 0; i < n[s]; i++) {
            int64_t x = l[s][i];
            if (x < 1) return bad_len(err, key, x, i);
            if (!a->packed && x > cap)
                return opm_err(err, OPM_EINVAL, list_field(lf, key),
                               "expected lengths <= %lld (the %s length of the tensors), got %lld at index %zu",
                               (long long)cap, s ? "kv" : "query", (long long)x, i);
            sum = opm_add(sum, (uint64_t)x, &ok);
        }
        if (a->packed && (!ok || sum != (uint64_t)cap))
            return opm_err(err, OPM_EINVAL, list_field(lf, key), "expected lengths summing to %lld (the tokens of %s), got %llu",
                           (long long)cap, s ? "k and v" : "q", ok ? (unsigned long long)sum : 0ull);
    }
    return 0;
}

static int validate(const opm_op *op, opm_error *err)
{
    if (opm_check_l2_warm(op, err)) return OPM_EINVAL;
    static const char *const libs[] = {"flash_attention_2", "flash_attention_3", NULL};
    const char *lib = opm_op_get_string(op, "attention_kernel", NULL);
    if (lib && !opm_str_equals(lib, libs[0]) && !opm_str_equals(lib, libs[1]))
        return opm_choice_err(err, "attrs.attention_kernel", lib, libs,
                              "expected flash_attention_2 or flash_attention_3");
    attn_dims a;
    return dims(op, &a, err);
}

static int count(const opm_op *op, opm_counts *c, opm_error *err)
{
    attn_dims a;
    if (dims(op, &a, err)) return err ? (int)err->code : OPM_EINVAL;
    int ok = 1;
    /* n: scores per head; tq: query tokens; tkv: KV tokens read; pages */
    uint64_t n = 0, tq = 0, tkv = 0, pages = 0;
    uint64_t page = (uint64_t)a.page;
    int shift = page && (page & (page - 1)) == 0 ? __builtin_ctzll(page) : -1;
    int64_t nseq = a.lq || a.lkv ? a.b : 1;
    uint64_t times = a.lq || a.lkv ? 1 : (uint64_t)a.b;
    int plain = !a.causal && a.wl < 0 && a.wr < 0; /* every score unmasked */
    for (int64_t i = 0; i < nseq; i++) {
        int64_t sq = a.lq ? a.lq[i] : a.sq, sk = a.lkv ? a.lkv[i] : a.skv;
        uint64_t kv = (uint64_t)sk;
        if (page) {
            uint64_t pg = shift >= 0 ? (kv + page - 1) >> shift : kv / page + (kv % page != 0);
            kv = opm_mul(pg, page, &ok);
            pages += pg; /* pg ≤ kv: bounded by tkv */
        }
        n = opm_add(n, plain ? opm_mul((uint64_t)sq, (uint64_t)sk, &ok) : scores(sq, sk, a.causal, a.wl, a.wr, &ok), &ok);
        tq = opm_add(tq, (uint64_t)sq, &ok);
        tkv = opm_add(tkv, kv, &ok);
    }
    if (times != 1) {
        n = opm_mul(n, times, &ok);
        tq = opm_mul(tq, times, &ok);
        tkv = opm_mul(tkv, times, &ok);
        pages = opm_mul(pages, times, &ok);
    }
    uint64_t h = (uint64_t)a.h, hkv = (uint64_t)a.hkv, dqk = (uint64_t)a.dqk, dv = (uint64_t)a.dv;
    uint64_t hn = opm_mul(h, n, &ok);
    uint64_t q = opm_bytes(opm_mul(opm_mul(tq, h, &ok), dqk, &ok), a.q->dtype, &ok);
    uint64_t o = opm_bytes(opm_mul(opm_mul(tq, h, &ok), dv, &ok), a.o->dtype, &ok);
    uint64_t k = opm_bytes(opm_mul(opm_mul(tkv, hkv, &ok), dqk, &ok), a.k->dtype, &ok);
    uint64_t v = opm_bytes(opm_mul(opm_mul(tkv, hkv, &ok), dv, &ok), a.v->dtype, &ok);
    uint64_t sc = a.scale == SCALE_TENSOR ? 2 * 4
                : a.scale == SCALE_HEAD   ? opm_mul(8, hkv, &ok)
                : a.scale == SCALE_TOKEN  ? opm_mul(8, opm_mul(tkv, hkv, &ok), &ok) : 0;
    uint64_t qkv = opm_add(opm_add(q, k, &ok), opm_add(v, sc, &ok), &ok);
    c->compute_dtype = a.q->dtype;
    c->weight_bytes = 0;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        uint64_t per = 2 * dqk + 2 * dv + (a.recompute ? dqk : 0);
        c->matrix_flops = opm_mul(opm_mul(2, hn, &ok), per, &ok);
        c->vector_flops = opm_add(opm_mul(a.recompute ? 5 : 2, hn, &ok),
                                  opm_mul(opm_mul(2, opm_mul(h, tq, &ok), &ok), dv, &ok), &ok);
        uint64_t p = a.recompute ? 0 : opm_bytes(hn, a.q->dtype, &ok);
        c->read_bytes = opm_add(opm_add(qkv, o, &ok), opm_add(o, p, &ok), &ok);
        c->write_bytes = opm_add(opm_add(q, k, &ok), v, &ok);
        c->input_bytes = c->read_bytes;
        c->output_bytes = c->write_bytes;
    } else {
        c->matrix_flops = opm_mul(opm_mul(2, hn, &ok), dqk + dv, &ok);
        c->vector_flops = opm_mul(5, hn, &ok);
        c->read_bytes = opm_add(qkv, opm_bytes(pages, a.bt_dtype, &ok), &ok);
        c->write_bytes = o;
        c->input_bytes = c->read_bytes;
        c->output_bytes = o;
        if (opm_op_get_bool(op, "kv_cache_write", 0)) {
            /* The Tq new tokens' K and V, read once more and stored into
             * the cache (with one slot index each). */
            uint64_t nkv = opm_add(opm_bytes(opm_mul(opm_mul(tq, hkv, &ok), dqk, &ok), a.k->dtype, &ok),
                                   opm_bytes(opm_mul(opm_mul(tq, hkv, &ok), dv, &ok), a.v->dtype, &ok), &ok);
            c->read_bytes = opm_add(c->read_bytes, opm_add(nkv, opm_mul(tq, 8, &ok), &ok), &ok);
            c->write_bytes = opm_add(c->write_bytes, nkv, &ok);
            c->input_bytes = c->read_bytes;
            c->output_bytes = c->write_bytes;
        }
    }
    if (!ok) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP or byte count overflows 64 bits");
    return 0;
}

/* Short form: the length lists, checked, and their sums — taken before any
 * key is removed (a one-element list may live inside the attribute array). */
static int short_lists(opm_op *op, size_t *nseq, int has[2], int64_t tot[2], opm_error *err)
{
    const int64_t *lv[3] = {NULL, NULL, NULL}, *lq, *lkv;
    size_t ln[3] = {0, 0, 0}, nq, nkv;
    for (int j = 0; j < 3; j++) {
        if (!opm_op_has(op, list_keys[j])) continue;
        ln[j] = opm_op_get_ints(op, list_keys[j], &lv[j]);
        if (!ln[j] || opm_op_get_string(op, list_keys[j], NULL)) return bad_list(err, list_keys[j]);
        for (size_t i = 0; i < ln[j]; i++)
            if (lv[j][i] < 1) return bad_len(err, list_keys[j], lv[j][i], i);
    }
    if (resolve_lists(lv, ln, &lq, &nq, &lkv, &nkv, err)) return OPM_EINVAL;
    const int64_t *l[2] = {lq, lkv};
    size_t n[2] = {nq, nkv};
    *nseq = nq ? nq : nkv;
    for (int s = 0; s < 2; s++) {
        has[s] = n[s] > 0;
        uint64_t sum = 0;
        int ok = 1;
        for (size_t i = 0; i < n[s]; i++) sum = opm_add(sum, (uint64_t)l[s][i], &ok);
        if (!ok || sum > (uint64_t)INT64_MAX)
            return opm_err(err, OPM_EOVERFLOW, s ? "seq_lens_kv" : "seq_lens_q", "total tokens overflow 64 bits");
        tot[s] = (int64_t)sum;
    }
    return 0;
}

static int from_short(opm_op *op, opm_error *err)
{
    int64_t b, sq = 0, skv = 0, h, hkv, d, dqk, dv;
    opm_dtype dt, odt, kvdt;
    int q1 = opm_op_kind(op) == OPM_KIND_ATTENTION_DECODE || opm_op_phase(op) == OPM_PHASE_DECODE;
    if (!opm_op_has(op, "head_dim") && !opm_op_has(op, "head_dim_qk"))
        return opm_err(err, OPM_EINVAL, "head_dim",
                       "missing; the short form of %s needs head_dim (or head_dim_qk and head_dim_v)",
                       opm_kind_name(opm_op_kind(op)));
    size_t nseq = 0;
    int has[2];
    int64_t tot[2];
    if (short_lists(op, &nseq, has, tot, err)) return err ? (int)err->code : OPM_EINVAL;
    int lists = has[0] || has[1], has_batch = opm_op_has(op, "batch");
    static const char *const scalar[2] = {"seq_q", "seq_kv"}, *const list[2] = {"seq_lens_q", "seq_lens_kv"};
    for (int s = 0; s < 2; s++)
        if (has[s] && opm_op_has(op, scalar[s]))
            return opm_err(err, OPM_EINVAL, scalar[s], "give %s or %s (or seq_lens), not both", scalar[s], list[s]);
    if (opm_short_int(op, "batch", !lists, 1, &b, err) ||
        (!has[0] && opm_short_int(op, "seq_q", !q1, 1, &sq, err)) ||
        (!has[1] && opm_short_int(op, "seq_kv", 1, 1, &skv, err)) || opm_short_int(op, "heads", 1, 1, &h, err) ||
        opm_short_int(op, "kv_heads", 0, h, &hkv, err) ||
        opm_short_int(op, "head_dim", 0, 0, &d, err) ||
        opm_short_int(op, "head_dim_qk", d == 0, d, &dqk, err) ||
        opm_short_int(op, "head_dim_v", 0, dqk, &dv, err) || opm_short_dtypes(op, &dt, &odt, err) ||
        opm_short_dtype_key(op, "kv_dtype", dt, &kvdt, err))
        return err ? (int)err->code : OPM_EINVAL;
    if (h % hkv)
        return opm_err(err, OPM_EINVAL, "kv_heads", "expected kv heads dividing the %lld query heads, got %lld",
                       (long long)h, (long long)hkv);
    if (lists) {
        if (has_batch && (size_t)b != nseq)
            return opm_err(err, OPM_EINVAL, "batch", "expected %zu (the number of sequence lengths), got %lld",
                           nseq, (long long)b);
        int ok = 1;
        int64_t per[2] = {sq, skv};
        for (int s = 0; s < 2; s++)
            if (!has[s]) {
                uint64_t t = opm_mul((uint64_t)nseq, (uint64_t)per[s], &ok);
                if (!ok || t > (uint64_t)INT64_MAX)
                    return opm_err(err, OPM_EOVERFLOW, scalar[s], "total tokens overflow 64 bits");
                tot[s] = (int64_t)t;
            }
        int64_t qs[3] = {tot[0], h, dqk}, ks[3] = {tot[1], hkv, dqk}, vs[3] = {tot[1], hkv, dv},
                os[3] = {tot[0], h, dv};
        if (opm_op_add_tensor(op, OPM_ROLE_INPUT, qs, 3, dt, "q", err) ||
            opm_op_add_tensor(op, OPM_ROLE_INPUT, ks, 3, kvdt, "k", err) ||
            opm_op_add_tensor(op, OPM_ROLE_INPUT, vs, 3, kvdt, "v", err) ||
            opm_op_add_tensor(op, OPM_ROLE_OUTPUT, os, 3, odt, NULL, err))
            return err ? (int)err->code : OPM_EINVAL;
        return 0;
    }
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
    {"window_left", OPM_ATTR_INT, 0, "keys a query sees before its diagonal (-1 or absent: unbounded)"},
    {"window_right", OPM_ATTR_INT, 0, "keys a query sees after its diagonal (-1 or absent: unbounded; causal: 0)"},
    {"sliding_window", OPM_ATTR_INT, 1, "window of W keys: window_left = W - 1 (and window_right = W - 1 unless set)"},
    {"seq_lens", OPM_ATTR_INTS, 0, "per-sequence lengths of queries and keys alike (variable-length batch)"},
    {"seq_lens_q", OPM_ATTR_INTS, 0, "per-sequence query lengths"},
    {"seq_lens_kv", OPM_ATTR_INTS, 0, "per-sequence key/value lengths"},
    {"page_size", OPM_ATTR_INT, 1, "paged KV cache: tokens per page; whole pages are read, plus the block table"},
    {"block_table_dtype", OPM_ATTR_STRING, 0, "dtype of the block-table entries, int32 (default) or int64"},
    {"kv_scale", OPM_ATTR_STRING, 0, "fp32 K and V dequantisation scales read: none (default), tensor, head or token"},
    {"batch", OPM_ATTR_INT, 1, "batch B, checked against the dense tensors (which may then be [B, H, S, D])"},
    {"seq_q", OPM_ATTR_INT, 1, "query length, checked against q and o"},
    {"seq_kv", OPM_ATTR_INT, 1, "key/value length, checked against k and v"},
    {"heads", OPM_ATTR_INT, 1, "query heads, checked against q and o"},
    {"kv_heads", OPM_ATTR_INT, 1, "key/value heads, checked against k and v"},
    {"head_dim", OPM_ATTR_INT, 1, "head dimension, checked against every tensor"},
    {"flash_attention", OPM_ATTR_BOOL, 0, "fused attention (true, what is counted; false is refused)"},
    {"kv_cache_write", OPM_ATTR_BOOL, 0,
     "forward also stores the Tq new tokens' K and V into the cache, as vLLM's reshape_and_cache kernel "
     "does before the attention kernel (default false)"},
    {"l2_warm", OPM_ATTR_STRING, 0,
     "q, k and v resident in L2 at the start (a benchmark re-running the same cache): none (default), "
     "input, all"},
    {"attention_kernel", OPM_ATTR_STRING, 0,
     "kernel hint: the library that runs it, flash_attention_2 or flash_attention_3 (default: FA3 on "
     "warpgroup-MMA GPUs, FA2 elsewhere)"},
    OPM_GEMM_HINT_ATTRS,
    {NULL, 0, 0, NULL},
};
static const opm_attr_def short_keys[] = {
    {"batch", OPM_ATTR_INT, 1, "batch size B (default: the number of sequence lengths)"},
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
    "output o [B, Sq, H, Dv] (layout bhsd swaps S and H); or packed q [Tq, H, Dqk], "  \
    "k [Tkv, Hkv, Dqk], v [Tkv, Hkv, Dv], o [Tq, H, Dv] with seq_lens"

const opm_kind_def opm_kind_attention = {
    OPM_KIND_ATTENTION, "attention",
    "fused (flash) attention: GQA/MQA, MLA head dims, causal, sliding window, varlen, paged KV",
    TENSORS_HELP, attrs, short_keys, from_short, validate, count,
    {3, 0, 1, 0, -1},
};

const opm_kind_def opm_kind_attention_prefill = {
    OPM_KIND_ATTENTION_PREFILL, "attention_prefill",
    "fused (flash) attention over a whole sequence; GQA, causal with Sq != Skv",
    TENSORS_HELP, attrs, short_keys, from_short, validate, count,
    {3, 0, 1, 0, -1},
};

const opm_kind_def opm_kind_attention_decode = {
    OPM_KIND_ATTENTION_DECODE, "attention_decode",
    "attention of a few new tokens against a (paged) KV cache",
    TENSORS_HELP, attrs, short_keys, from_short, validate, count,
    {3, 0, 1, 0, -1},
};

opm_op *opm_op_attention(int64_t batch, int64_t seq_q, int64_t seq_kv, int64_t heads,
                         int64_t kv_heads, int64_t head_dim, int causal, opm_dtype dtype,
                         opm_error *err)
{
    opm_error_clear(err);
    opm_kind kind = seq_q > 1 ? OPM_KIND_ATTENTION_PREFILL : OPM_KIND_ATTENTION_DECODE;
    opm_op *op = opm_op_new(opm_kind_name(kind), kind,
                            seq_q > 1 ? OPM_PHASE_PREFILL : OPM_PHASE_DECODE, err);
    if (!op) return NULL;
    int64_t qs[4] = {batch, seq_q, heads, head_dim}, ks[4] = {batch, seq_kv, kv_heads, head_dim};
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, qs, 4, dtype, "q", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ks, 4, dtype, "k", err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, ks, 4, dtype, "v", err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, qs, 4, dtype, NULL, err) ||
        (causal && opm_op_set_bool(op, "causal", 1, err)) || opm_op_finalize(op, err)) {
        opm_op_free(op);
        return NULL;
    }
    return op;
}
