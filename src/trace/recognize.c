/* recognize.c — from a profiled op's name and call arguments to what the
 * report needs: its category, how it claims the GPU work below it, and,
 * where the op library counts it, an opm_op with the key parameters as a
 * JSON object.  The names live in one table, op_table.def; this file holds
 * the lookup and one builder per op family (b_gemm, b_attn, b_norm, ...),
 * each reading the arguments at the positions its table row gives.
 *
 * A builder declines (the op is listed without a model, its raw arguments
 * as parameters) whenever the arguments are absent or not what it expects;
 * only out-of-memory is an error.  Also here: the category of GPU kernels
 * no recognised op owns, from their names. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "trace_internal.h"
#include "recognize_args.h"
#include "../ops/flop_weights.h"
#include "../ops/kind.h"

/* The builder's view of one call. */
typedef struct bctx {
    const opm_trace_call *call;
    const opm_targs *a;
    const char *detail;
    opm_phase fwd;          /* phase of a forward op: train_fwd or inference */
    opm_op *op;             /* what the builder made (freed by the caller on failure) */
    opm_jbuf *params;
    opm_error *err;
} bctx;

/* Returns 0 with c->op set, OPM_EINVAL to decline, OPM_ENOMEM. */
typedef int (*opm_tbuild)(bctx *c);

typedef struct op_row {
    opm_trace_op_entry entry;   /* first: a row's address is its entry's */
    opm_tbuild fn;
    const char *detail;
} op_row;

static int b_gemm(bctx *c);
static int b_matmul(bctx *c);
static int b_grouped_mm(bctx *c);
static int b_attn(bctx *c);
static int b_rope(bctx *c);
static int b_norm(bctx *c);
static int b_ew(bctx *c);
static int b_red(bctx *c);
static int b_softmax(bctx *c);
static int b_xent(bctx *c);
static int b_embed(bctx *c);
static int b_conv(bctx *c);
static int b_kvstore(bctx *c);
static int b_fused_moe(bctx *c);
static int b_upsample(bctx *c);
static int run_row(const opm_trace_call *call, opm_trace_recog *out, opm_error *err);

#define OPM_TRACE_OP(name, cat, claim, build, detail) \
    {{name, OPM_TCAT_##cat, OPM_CLAIM_##claim, run_row}, b_##build, detail},
#define OPM_TRACE_CAT(name, cat, claim) {{name, OPM_TCAT_##cat, OPM_CLAIM_##claim, NULL}, NULL, NULL},
#define OPM_TRACE_PREFIX(name, cat, claim)
static const op_row op_rows[] = {
#include "op_table.def"
};
#undef OPM_TRACE_OP
#undef OPM_TRACE_CAT
#undef OPM_TRACE_PREFIX

#define OPM_TRACE_OP(name, cat, claim, build, detail)
#define OPM_TRACE_CAT(name, cat, claim)
#define OPM_TRACE_PREFIX(name, cat, claim) {{name, OPM_TCAT_##cat, OPM_CLAIM_##claim, NULL}, NULL, NULL},
static const op_row prefixes[] = {
#include "op_table.def"
};
#undef OPM_TRACE_OP
#undef OPM_TRACE_CAT
#undef OPM_TRACE_PREFIX

#define N_ROWS (sizeof op_rows / sizeof op_rows[0])
#define N_PREFIXES (sizeof prefixes / sizeof prefixes[0])

/* ---- lookup ---- */

static const op_row *find_exact(const char *name)
{
    size_t lo = 0, hi = N_ROWS;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, op_rows[mid].entry.name);
        if (c == 0) return &op_rows[mid];
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return NULL;
}

const opm_trace_op_entry *opm_trace_op_lookup(const char *name)
{
    if (!name) return NULL;
    const op_row *r = find_exact(name);
    if (r) return &r->entry;
    const op_row *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < N_PREFIXES; i++) {
        size_t len = strlen(prefixes[i].entry.name) - 1; /* without the '*' */
        if (len > best_len && strncmp(name, prefixes[i].entry.name, len) == 0) {
            best = &prefixes[i];
            best_len = len;
        }
    }
    return best ? &best->entry : NULL;
}

/* ---- detail words ---- */

/* The value of `key=N` among the detail's words, dflt when absent. */
static int dnum(const char *d, const char *key, int dflt)
{
    size_t k = strlen(key);
    for (const char *p = d; p && *p;) {
        while (*p == ' ') p++;
        if (!strncmp(p, key, k) && p[k] == '=') return atoi(p + k + 1);
        while (*p && *p != ' ') p++;
    }
    return dflt;
}

/* Whether `word` is one of the detail's words. */
static int dflag(const char *d, const char *word)
{
    size_t k = strlen(word);
    for (const char *p = d; p && *p;) {
        while (*p == ' ') p++;
        if (!strncmp(p, word, k) && (p[k] == ' ' || p[k] == '\0')) return 1;
        while (*p && *p != ' ') p++;
    }
    return 0;
}

/* The i-th bare word (no '=') of the detail into buf; "" when none. */
static const char *dword(const char *d, int i, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (const char *p = d; p && *p;) {
        while (*p == ' ') p++;
        const char *s = p;
        while (*p && *p != ' ') p++;
        size_t n = (size_t)(p - s);
        if (!n || memchr(s, '=', n)) continue;
        if (i-- == 0) {
            if (n >= cap) n = cap - 1;
            memcpy(buf, s, n);
            buf[n] = '\0';
            return buf;
        }
    }
    return buf;
}

/* ---- argument helpers ---- */

#define DECLINE OPM_EINVAL

static int is_t(const bctx *c, int i) { return i >= 0 && opm_targ_is_tensor(c->a, (size_t)i); }
static const opm_targ *arg(const bctx *c, int i) { return &c->a->arg[i]; }
static const char *value(const bctx *c, int i)
{
    return i >= 0 && (size_t)i < c->a->n ? c->a->arg[i].value : "";
}

static uint64_t elems(const int64_t *s, int r)
{
    uint64_t n = 1;
    for (int i = 0; i < r; i++) n *= (uint64_t)s[i];
    return n;
}

/* An integer argument (a dim, a group count); declines when unreadable. */
static int need_int(const bctx *c, int i, int64_t *v)
{
    return i >= 0 && opm_targ_int(c->a, (size_t)i, v) == 0 ? 0 : DECLINE;
}

/* A Python bool argument; `dflt` when the position is not given or the
 * value is None (""), declines when it is something else. */
static int opt_bool(const bctx *c, int i, int dflt, int *v)
{
    *v = dflt;
    if (i < 0 || !value(c, i)[0]) return 0;
    return opm_targ_bool(c->a, (size_t)i, v) ? DECLINE : 0;
}

/* A dtype given as a ScalarType code at position i; 0 when found. */
static int dtype_arg(const bctx *c, int i, opm_dtype *dt)
{
    int64_t code;
    return i >= 0 && opm_targ_int(c->a, (size_t)i, &code) == 0 ? opm_scalar_type_dtype(code, dt) : -1;
}

static int is_float(opm_dtype d)
{
    return d == OPM_FP64 || d == OPM_FP32 || d == OPM_TF32 || d == OPM_FP16 || d == OPM_BF16 ||
           d == OPM_FP8_E4M3 || d == OPM_FP8_E5M2 || d == OPM_FP4_E2M1;
}
static int is_int(opm_dtype d) { return d == OPM_INT8 || d == OPM_INT4 || d == OPM_INT32 || d == OPM_INT64; }

/* ---- building ---- */

static int new_op(bctx *c, opm_kind kind, opm_phase phase)
{
    c->op = opm_op_new(c->call->name, kind, phase, c->err);
    return c->op ? 0 : (int)c->err->code;
}

static int add_t(bctx *c, opm_role role, const int64_t *shape, int rank, opm_dtype dt, const char *layout)
{
    return opm_op_add_tensor(c->op, role, shape, rank, dt, layout, c->err);
}

static int add_arg(bctx *c, opm_role role, int i, const char *layout)
{
    const opm_targ *t = arg(c, i);
    return add_t(c, role, t->shape, t->rank, t->dtype, layout);
}

static void p_dtype(bctx *c, const char *key, opm_dtype dt) { opm_jbuf_str(c->params, key, opm_dtype_name(dt)); }

/* ---- GEMM family ----
 * b_gemm keys: a, b (operands), bias, beta (bias skipped when beta is 0),
 * out (an out= tensor: the output dtype), odt (output dtype as a ScalarType
 * code), sa, sb (fp8 scales); flags tb (B stored [N, K]), batched. */

typedef struct gemm_cfg {
    const opm_targ *A, *B, *bias;
    int64_t ash[OPM_MAX_RANK];
    int ar;
    int tb, batched;
    opm_dtype odt;
    const char *sa, *sb;           /* scale kinds, NULL when none */
    int64_t blk_a[2], blk_b[2];    /* block scales' block shapes */
} gemm_cfg;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Scale granularity of one fp8 operand with `rows` rows (M for A, N for B)
 * and inner size k, from its scale tensor's shape: one value (tensor), one
 * per row (row), or a [rows/bo, k/bk] grid (block). */
static const char *scale_kind(const opm_targ *s, int64_t rows, int64_t k, int64_t *blk)
{
    uint64_t n = elems(s->shape, s->rank);
    if (n == 1) return "tensor";
    if (n == (uint64_t)rows && (s->rank == 1 || (s->rank == 2 && (s->shape[0] == 1 || s->shape[1] == 1))))
        return "row";
    if (s->rank == 2 && s->shape[0] > 0 && s->shape[1] > 0) {
        int64_t bo = cdiv(rows, s->shape[0]), bk = cdiv(k, s->shape[1]);
        if (cdiv(rows, bo) == s->shape[0] && cdiv(k, bk) == s->shape[1]) {
            blk[0] = bo;
            blk[1] = bk;
            return "block";
        }
    }
    return NULL;
}

static int gemm_core(bctx *c, const gemm_cfg *g)
{
    const opm_targ *B = g->B;
    int ar = g->ar, br = B->rank;
    if (g->batched ? (ar != 3 || br != 3 || g->ash[0] != B->shape[0]) : (ar < 2 || br != 2)) return DECLINE;
    int64_t K = g->ash[ar - 1];
    int64_t bk = g->tb ? B->shape[br - 1] : B->shape[br - 2], N = g->tb ? B->shape[br - 2] : B->shape[br - 1];
    if (bk != K) return DECLINE;
    int64_t cs[OPM_MAX_RANK];
    for (int i = 0; i < ar - 1; i++) cs[i] = g->ash[i];
    cs[ar - 1] = N;
    int64_t batch = g->batched ? g->ash[0] : 1, m = 1;
    for (int i = g->batched; i < ar - 1; i++) m *= g->ash[i];
    int rc;
    if ((rc = new_op(c, g->batched ? OPM_KIND_BATCHED_GEMM : OPM_KIND_GEMM, c->fwd)) ||
        (rc = add_t(c, OPM_ROLE_INPUT, g->ash, ar, g->A->dtype, NULL)) ||
        (rc = add_t(c, OPM_ROLE_WEIGHT, B->shape, br, B->dtype, NULL)) ||
        (g->bias && (rc = add_t(c, OPM_ROLE_WEIGHT, g->bias->shape, g->bias->rank, g->bias->dtype, NULL))) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, cs, ar, g->odt, NULL)) ||
        (g->tb && (rc = opm_op_set_bool(c->op, "transpose_b", 1, c->err))) ||
        (g->sa && (rc = opm_op_set_string(c->op, "scale_a", g->sa, c->err))) ||
        (g->sb && (rc = opm_op_set_string(c->op, "scale_b", g->sb, c->err))) ||
        (g->sa && !strcmp(g->sa, "block") && (rc = opm_op_set_ints(c->op, "scale_block_a", g->blk_a, 2, c->err))) ||
        (g->sb && !strcmp(g->sb, "block") && (rc = opm_op_set_ints(c->op, "scale_block_b", g->blk_b, 2, c->err))))
        return rc;
    opm_jbuf_int(c->params, "m", m);
    opm_jbuf_int(c->params, "n", N);
    opm_jbuf_int(c->params, "k", K);
    opm_jbuf_int(c->params, "batch", batch);
    opm_jbuf_bool(c->params, "bias", g->bias != NULL);
    p_dtype(c, "dtype", g->A->dtype);
    if (B->dtype != g->A->dtype) p_dtype(c, "weight_dtype", B->dtype);
    if (g->odt != g->A->dtype) p_dtype(c, "out_dtype", g->odt);
    if (g->sa) opm_jbuf_str(c->params, "scale_a", g->sa);
    if (g->sb) opm_jbuf_str(c->params, "scale_b", g->sb);
    return 0;
}

static int b_gemm(bctx *c)
{
    const char *d = c->detail;
    int ia = dnum(d, "a", -1), ib = dnum(d, "b", -1), ibias = dnum(d, "bias", -1), iout = dnum(d, "out", -1);
    int iodt = dnum(d, "odt", -1), ibeta = dnum(d, "beta", -1), isa = dnum(d, "sa", -1), isb = dnum(d, "sb", -1);
    if (!is_t(c, ia) || !is_t(c, ib)) return DECLINE;
    gemm_cfg g;
    memset(&g, 0, sizeof g);
    g.A = arg(c, ia);
    g.B = arg(c, ib);
    g.tb = dflag(d, "tb");
    g.batched = dflag(d, "batched");
    g.ar = g.A->rank;
    memcpy(g.ash, g.A->shape, sizeof g.ash);
    if (g.ar == 1 && !g.batched) { /* linear of a vector: one row */
        g.ash[1] = g.ash[0];
        g.ash[0] = 1;
        g.ar = 2;
    }
    if (g.ar < 2) return DECLINE;
    double beta = 1;
    if (is_t(c, ibias) && !(ibeta >= 0 && opm_targ_double(c->a, (size_t)ibeta, &beta) == 0 && beta == 0))
        g.bias = arg(c, ibias);
    if (dtype_arg(c, iodt, &g.odt) != 0) g.odt = is_t(c, iout) ? arg(c, iout)->dtype : g.A->dtype;
    int64_t k = g.ash[g.ar - 1], m = g.ash[g.ar - 2];
    int64_t n = g.B->rank >= 2 ? (g.tb ? g.B->shape[g.B->rank - 2] : g.B->shape[g.B->rank - 1]) : 0;
    if (isa >= 0 || isb >= 0) {
        if (!is_t(c, isa) || !is_t(c, isb)) return DECLINE;
        g.sa = scale_kind(arg(c, isa), m, k, g.blk_a);
        g.sb = scale_kind(arg(c, isb), n, k, g.blk_b);
        if (!g.sa || !g.sb) return DECLINE;
    }
    return gemm_core(c, &g);
}

/* aten::matmul(a, b): [.., M, K]·[K, N] is a gemm, equal batch dims a
 * batched_gemm; vectors and broadcast batches decline. */
static int b_matmul(bctx *c)
{
    if (!is_t(c, 0) || !is_t(c, 1)) return DECLINE;
    gemm_cfg g;
    memset(&g, 0, sizeof g);
    g.A = arg(c, 0);
    g.B = arg(c, 1);
    g.ar = g.A->rank;
    g.odt = g.A->dtype;
    memcpy(g.ash, g.A->shape, sizeof g.ash);
    if (g.ar >= 2 && g.B->rank == 2) return gemm_core(c, &g);
    if (g.ar != 3 || g.B->rank != 3) return DECLINE;
    g.batched = 1;
    return gemm_core(c, &g);
}

/* aten::_grouped_mm(self [M, K], mat2 [G, K, N], offs, bias, out_dtype):
 * the group sizes (offs) are values the profiler does not record, so the
 * rows are split evenly, the grouped_gemm kind's default.  Keys x, w, odt. */
static int b_grouped_mm(bctx *c)
{
    int ix = dnum(c->detail, "x", 0), iw = dnum(c->detail, "w", 1);
    if (!is_t(c, ix) || !is_t(c, iw)) return DECLINE;
    const opm_targ *X = arg(c, ix), *W = arg(c, iw);
    if (X->rank != 2 || W->rank != 3 || W->shape[1] != X->shape[1]) return DECLINE;
    opm_dtype odt;
    if (dtype_arg(c, dnum(c->detail, "odt", -1), &odt) != 0) odt = X->dtype;
    int64_t ys[2] = {X->shape[0], W->shape[2]};
    int rc;
    if ((rc = new_op(c, OPM_KIND_GROUPED_GEMM, c->fwd)) || (rc = add_arg(c, OPM_ROLE_INPUT, ix, NULL)) ||
        (rc = add_arg(c, OPM_ROLE_WEIGHT, iw, NULL)) || (rc = add_t(c, OPM_ROLE_OUTPUT, ys, 2, odt, NULL)))
        return rc;
    opm_jbuf_int(c->params, "groups", W->shape[0]);
    opm_jbuf_int(c->params, "m", X->shape[0]);
    opm_jbuf_int(c->params, "n", W->shape[2]);
    opm_jbuf_int(c->params, "k", X->shape[1]);
    opm_jbuf_str(c->params, "group_m", "even");
    p_dtype(c, "dtype", X->dtype);
    if (W->dtype != X->dtype) p_dtype(c, "weight_dtype", W->dtype);
    if (odt != X->dtype) p_dtype(c, "out_dtype", odt);
    return 0;
}

/* ---- attention ----
 * b_attn keys: q (q, k, v follow it), causal (a bool), mask (instead of
 * causal: xformers' custom_mask_type 0 none, 1 top-left causal, 2
 * bottom-right), wl, wr (window sizes, -1 unbounded), cuq, cuk (cu_seqlens:
 * a packed variable-length batch), mq, mk (max_seqlen); flags bwd, bhsd
 * (q, k, v stored [B, H, S, D]; else [B, S, H, D]), topleft (causal is
 * aligned to the top left, PyTorch SDPA's is_causal).
 *
 * Varlen: the per-sequence lengths are tensor values the profiler does not
 * record.  We split the tokens evenly over the sequences (exact when the
 * total is the number of sequences times max_seqlen); the params say which. */

static int set_even_lens(bctx *c, const char *key, int64_t nseq, int64_t len)
{
    int64_t *v = malloc((size_t)nseq * sizeof *v);
    if (!v) return opm_err(c->err, OPM_ENOMEM, NULL, "out of memory");
    for (int64_t i = 0; i < nseq; i++) v[i] = len;
    int rc = opm_op_set_ints(c->op, key, v, (size_t)nseq, c->err);
    free(v);
    return rc;
}

static int b_attn(bctx *c)
{
    const char *d = c->detail;
    int iq = dnum(d, "q", 0), icq = dnum(d, "cuq", -1), ick = dnum(d, "cuk", -1);
    int bhsd = dflag(d, "bhsd"), bwd = dflag(d, "bwd");
    if (!is_t(c, iq) || !is_t(c, iq + 1) || !is_t(c, iq + 2)) return DECLINE;
    const opm_targ *Q = arg(c, iq), *K = arg(c, iq + 1), *V = arg(c, iq + 2);
    int varlen = is_t(c, icq) && Q->rank == 3;
    int64_t b, sq, skv, h, hkv, dqk, dv, nseq = 0;
    int exact = 0;
    if (varlen) {
        const opm_targ *cq = arg(c, icq);
        if (K->rank != 3 || V->rank != 3 || bhsd || cq->rank != 1 || cq->shape[0] < 2) return DECLINE;
        if (is_t(c, ick) && (arg(c, ick)->rank != 1 || arg(c, ick)->shape[0] != cq->shape[0])) return DECLINE;
        nseq = cq->shape[0] - 1;
        h = Q->shape[1], dqk = Q->shape[2], hkv = K->shape[1], dv = V->shape[2];
        if (K->shape[2] != dqk || V->shape[0] != K->shape[0] || V->shape[1] != hkv) return DECLINE;
        if (Q->shape[0] % nseq || K->shape[0] % nseq) return DECLINE;
        b = nseq, sq = Q->shape[0] / nseq, skv = K->shape[0] / nseq;
        int64_t mq, mk;
        exact = need_int(c, dnum(d, "mq", -1), &mq) == 0 && need_int(c, dnum(d, "mk", -1), &mk) == 0 &&
                mq == sq && mk == skv;
    } else {
        if (Q->rank != 4 || K->rank != 4 || V->rank != 4) return DECLINE;
        int si = bhsd ? 2 : 1, hi = bhsd ? 1 : 2;
        b = Q->shape[0], sq = Q->shape[si], h = Q->shape[hi], dqk = Q->shape[3];
        skv = K->shape[si], hkv = K->shape[hi], dv = V->shape[3];
        if (K->shape[0] != b || V->shape[0] != b || K->shape[3] != dqk || V->shape[si] != skv || V->shape[hi] != hkv)
            return DECLINE;
    }
    int causal = 0, topleft = dflag(d, "topleft");
    int imask = dnum(d, "mask", -1);
    if (imask >= 0) {
        int64_t mt;
        if (need_int(c, imask, &mt) || mt < 0 || mt > 2) return DECLINE;
        causal = mt != 0;
        topleft = mt == 1;
    } else if (dnum(d, "causal", -1) >= 0) {
        if (opm_targ_bool(c->a, (size_t)dnum(d, "causal", -1), &causal)) return DECLINE;
    }
    /* Our mask is aligned to the bottom right; top-left differs when Sq ≠ Skv. */
    if (causal && topleft && sq != skv) return DECLINE;
    int64_t wl = -1, wr = -1;
    if (dnum(d, "wl", -1) >= 0 && value(c, dnum(d, "wl", -1))[0] && need_int(c, dnum(d, "wl", -1), &wl)) return DECLINE;
    if (dnum(d, "wr", -1) >= 0 && value(c, dnum(d, "wr", -1))[0] && need_int(c, dnum(d, "wr", -1), &wr)) return DECLINE;
    if (causal) wr = -1;
    const char *lay = bhsd ? "bhsd" : NULL;
    int64_t os[OPM_MAX_RANK];
    memcpy(os, Q->shape, sizeof os);
    os[Q->rank - 1] = dv;
    int rc;
    if ((rc = new_op(c, OPM_KIND_ATTENTION, bwd ? OPM_PHASE_TRAIN_BWD : c->fwd)) ||
        (rc = add_arg(c, OPM_ROLE_INPUT, iq, lay)) || (rc = add_arg(c, OPM_ROLE_INPUT, iq + 1, lay)) ||
        (rc = add_arg(c, OPM_ROLE_INPUT, iq + 2, lay)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, os, Q->rank, Q->dtype, lay)) ||
        (causal && (rc = opm_op_set_bool(c->op, "causal", 1, c->err))) ||
        (wl >= 0 && (rc = opm_op_set_int(c->op, "window_left", wl, c->err))) ||
        (wr >= 0 && (rc = opm_op_set_int(c->op, "window_right", wr, c->err))) ||
        (varlen && ((rc = set_even_lens(c, "seq_lens_q", nseq, sq)) ||
                    (rc = set_even_lens(c, "seq_lens_kv", nseq, skv)))))
        return rc;
    opm_jbuf_int(c->params, "batch", b);
    opm_jbuf_int(c->params, "seq_q", sq);
    opm_jbuf_int(c->params, "seq_kv", skv);
    opm_jbuf_int(c->params, "heads", h);
    opm_jbuf_int(c->params, "kv_heads", hkv);
    opm_jbuf_int(c->params, "head_dim_qk", dqk);
    opm_jbuf_int(c->params, "head_dim_v", dv);
    opm_jbuf_bool(c->params, "causal", causal);
    if (wl >= 0) opm_jbuf_int(c->params, "window_left", wl);
    if (wr >= 0) opm_jbuf_int(c->params, "window_right", wr);
    if (varlen) opm_jbuf_str(c->params, "seq_lens", exact ? "even" : "assumed_even");
    p_dtype(c, "dtype", Q->dtype);
    if (K->dtype != Q->dtype) p_dtype(c, "kv_dtype", K->dtype);
    return 0;
}

/* KV-cache store (sglang::store_cache, vLLM reshape_and_cache): the new
 * tokens' K and V copied into the cache, as one copy of [2, T, width] in
 * the cache's dtype; the slot indices are not counted (nor by TraceLens).
 * Keys k, v, kc (the K cache: its dtype). */
static int b_kvstore(bctx *c)
{
    int ik = dnum(c->detail, "k", 0), iv = dnum(c->detail, "v", 1), ikc = dnum(c->detail, "kc", -1);
    if (!is_t(c, ik) || !is_t(c, iv)) return DECLINE;
    const opm_targ *K = arg(c, ik), *V = arg(c, iv);
    if (K->rank < 1 || K->rank != V->rank || K->dtype != V->dtype ||
        memcmp(K->shape, V->shape, (size_t)K->rank * sizeof K->shape[0]))
        return DECLINE;
    opm_dtype cdt = is_t(c, ikc) ? arg(c, ikc)->dtype : K->dtype;
    int64_t s[3] = {2, K->shape[0], (int64_t)elems(K->shape + 1, K->rank - 1)};
    int rc;
    if ((rc = new_op(c, OPM_KIND_COPY, c->fwd)) || (rc = add_t(c, OPM_ROLE_INPUT, s, 3, K->dtype, NULL)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, s, 3, cdt, NULL)))
        return rc;
    opm_jbuf_int(c->params, "tokens", s[1]);
    opm_jbuf_int(c->params, "width", s[2]);
    p_dtype(c, "dtype", K->dtype);
    if (cdt != K->dtype) p_dtype(c, "cache_dtype", cdt);
    return 0;
}

/* ---- RoPE: (positions, query, key, head_size, cos_sin_cache, is_neox) of
 * vLLM and sgl-kernel: q and k rotated in place, one cache row gathered per
 * position; q and k may be packed [T, H·D]. */
static int b_rope(bctx *c)
{
    int64_t head;
    int neox = 1;
    if (!is_t(c, 0) || !is_t(c, 1) || !is_t(c, 4) || need_int(c, 3, &head) || head < 1 ||
        opt_bool(c, 5, 1, &neox))
        return DECLINE;
    const opm_targ *P = arg(c, 0), *Q = arg(c, 1), *C = arg(c, 4);
    int has_k = is_t(c, 2);
    if (Q->rank < 2 || Q->rank > 3 || C->rank != 2 || !is_int(P->dtype)) return DECLINE;
    int64_t hq = Q->rank == 3 ? Q->shape[1] : Q->shape[1] / head;
    int64_t hk = has_k ? (arg(c, 2)->rank == 3 ? arg(c, 2)->shape[1] : arg(c, 2)->shape[1] / head) : 0;
    int64_t rot = C->shape[1];
    int rc;
    if ((rc = new_op(c, OPM_KIND_ROPE, c->fwd)) || (rc = add_arg(c, OPM_ROLE_INPUT, 0, "positions")) ||
        (rc = add_arg(c, OPM_ROLE_INPUT, 1, "q")) || (has_k && (rc = add_arg(c, OPM_ROLE_INPUT, 2, "k"))) ||
        (rc = add_arg(c, OPM_ROLE_WEIGHT, 4, "cos_sin")) || (rc = add_arg(c, OPM_ROLE_OUTPUT, 1, "q")) ||
        (has_k && (rc = add_arg(c, OPM_ROLE_OUTPUT, 2, "k"))) ||
        (Q->rank == 2 && (rc = opm_op_set_int(c->op, "head_dim", head, c->err))) ||
        (rot < head && (rc = opm_op_set_int(c->op, "rotary_dim", rot, c->err))) ||
        (rc = opm_op_set_bool(c->op, "in_place", 1, c->err)) ||
        (rc = opm_op_set_bool(c->op, "interleaved", !neox, c->err)))
        return rc;
    opm_jbuf_int(c->params, "tokens", (int64_t)elems(P->shape, P->rank));
    opm_jbuf_int(c->params, "heads", hq);
    opm_jbuf_int(c->params, "kv_heads", hk);
    opm_jbuf_int(c->params, "head_dim", head);
    opm_jbuf_int(c->params, "rotary_dim", rot);
    opm_jbuf_int(c->params, "max_position", C->shape[0]);
    opm_jbuf_bool(c->params, "interleaved", !neox);
    p_dtype(c, "dtype", Q->dtype);
    return 0;
}

/* ---- normalisations ----
 * b_norm: first word the kind (layer, rms, batch, group, instance); keys x,
 * dy (backward), g, b (γ, β), ns (normalized_shape), G (num_groups), rm
 * (running_mean: running statistics kept when present), tr (training /
 * use_input_stats), mask (output_mask); flags bwd, residual (fused
 * residual add), bfromg (no β argument: β exists when γ does), trainbwd
 * (a training backward with all three gradients: MIOpen, cuDNN). */
static int b_norm(bctx *c)
{
    const char *d = c->detail;
    char kw[16];
    dword(d, 0, kw, sizeof kw);
    int bwd = dflag(d, "bwd");
    int ix = dnum(d, "x", 0), idy = dnum(d, "dy", -1), ig = dnum(d, "g", -1), ib = dnum(d, "b", -1);
    int ins = dnum(d, "ns", -1), iG = dnum(d, "G", -1), irm = dnum(d, "rm", -1), itr = dnum(d, "tr", -1);
    int imask = dnum(d, "mask", -1);
    static const struct { const char *w; opm_kind k; } kinds[] = {
        {"layer", OPM_KIND_LAYERNORM}, {"rms", OPM_KIND_RMSNORM}, {"batch", OPM_KIND_BATCHNORM},
        {"group", OPM_KIND_GROUPNORM}, {"instance", OPM_KIND_INSTANCENORM},
    };
    size_t ki = 0;
    while (ki < sizeof kinds / sizeof kinds[0] && strcmp(kinds[ki].w, kw)) ki++;
    if (ki == sizeof kinds / sizeof kinds[0]) return DECLINE;
    opm_kind kind = kinds[ki].k;
    int rms = kind == OPM_KIND_RMSNORM, channel = kind == OPM_KIND_BATCHNORM || kind == OPM_KIND_INSTANCENORM;
    if (!is_t(c, ix) || arg(c, ix)->rank < 1 || (bwd && !is_t(c, idy))) return DECLINE;
    int mask[3] = {1, 1, 1};
    if (imask >= 0) {
        int n;
        if (opm_targ_bools(c->a, (size_t)imask, mask, 3, &n) || n != (rms ? 2 : 3)) return DECLINE;
        if (rms) mask[2] = 0;
    }
    int has_g = is_t(c, ig) && arg(c, ig)->rank >= 1;
    int bi = dflag(d, "bfromg") ? (has_g ? ig : -1) : ib;
    if (bwd && !mask[2]) bi = -1; /* β does not matter when its gradient is not asked for */
    int has_b = !rms && has_g && is_t(c, bi) && arg(c, bi)->rank >= 1;
    if (!has_g && is_t(c, bi) && arg(c, bi)->rank >= 1) return DECLINE; /* β without γ */
    int64_t ns[OPM_MAX_RANK], G = 0;
    int nns = 0, train = 0;
    if (ins >= 0 && opm_targ_ints(c->a, (size_t)ins, ns, OPM_MAX_RANK, &nns)) return DECLINE;
    if (kind == OPM_KIND_GROUPNORM && need_int(c, iG, &G)) return DECLINE;
    if (channel) {
        if (dflag(d, "trainbwd")) train = 1;
        else if (itr < 0 || opm_targ_bool(c->a, (size_t)itr, &train)) return DECLINE;
    }
    const opm_targ *X = arg(c, ix);
    opm_dtype ydt = bwd ? arg(c, idy)->dtype : X->dtype;
    int running = channel && is_t(c, irm);
    int rc;
    if ((rc = new_op(c, kind, bwd ? OPM_PHASE_TRAIN_BWD : c->fwd)) || (rc = add_arg(c, OPM_ROLE_INPUT, ix, NULL)) ||
        (has_g && (rc = add_arg(c, OPM_ROLE_WEIGHT, ig, NULL))) ||
        (has_b && (rc = add_arg(c, OPM_ROLE_WEIGHT, bi, NULL))) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, X->shape, X->rank, ydt, NULL)) ||
        (!has_g && (rc = opm_op_set_bool(c->op, "affine", 0, c->err))) ||
        (nns && (rc = opm_op_set_ints(c->op, "normalized_shape", ns, (size_t)nns, c->err))) ||
        (G && (rc = opm_op_set_int(c->op, "num_groups", G, c->err))) ||
        (channel && (rc = opm_op_set_bool(c->op, "running_stats", running, c->err))) ||
        (channel && (rc = opm_op_set_bool(c->op, "training", train, c->err))) ||
        (dflag(d, "residual") && (rc = opm_op_set_bool(c->op, "residual", 1, c->err))))
        return rc;
    if (bwd && ((rc = opm_op_set_bool(c->op, "grad_input", mask[0], c->err)) ||
                (rc = opm_op_set_bool(c->op, "grad_weight", mask[1], c->err)) ||
                (!rms && (rc = opm_op_set_bool(c->op, "grad_bias", mask[2], c->err)))))
        return rc;
    opm_jbuf_ints(c->params, "shape", X->shape, X->rank);
    if (nns) opm_jbuf_ints(c->params, "normalized_shape", ns, nns);
    if (G) opm_jbuf_int(c->params, "num_groups", G);
    opm_jbuf_bool(c->params, "affine", has_g);
    if (!rms) opm_jbuf_bool(c->params, "bias", has_b);
    if (channel) {
        opm_jbuf_bool(c->params, "running_stats", running);
        opm_jbuf_bool(c->params, "training", train);
    }
    if (dflag(d, "residual")) opm_jbuf_bool(c->params, "residual", 1);
    p_dtype(c, "dtype", X->dtype);
    if (bwd) {
        opm_jbuf_bool(c->params, "grad_input", mask[0]);
        opm_jbuf_bool(c->params, "grad_weight", mask[1]);
        if (!rms) opm_jbuf_bool(c->params, "grad_bias", mask[2]);
    }
    return 0;
}

/* ---- elementwise ----
 * b_ew: the first word says how the arguments are laid out, the second
 * names the function of the FLOP-weight table (src/ops/flop_weights.h):
 *   unary FN        x = argument 0, the rest are scalars
 *   binary FN       operands 0 and 1 (tensors or Python scalars; alpha ignored)
 *   gated FN        (out, input [..., 2H]): vLLM / sgl-kernel act_and_mul
 *   bwd FN x=K      (grad_output, ..., K: the forward's input or output):
 *                   the train_bwd of FN
 *   copy            copy_(self, src): copy, or cast when the dtypes differ
 *   pow, clamp, where, gelu: their own argument rules
 * Flags: compare (a comparison or logical op: bool output, one FLOP per
 * element), exp_weight (a transcendental outside the table, priced as one
 * exp).  Tensor operands are read at their own shapes; a Python scalar is a
 * kernel argument and moves no memory; an in-place op (name ending '_')
 * writes its first operand. */

static int dtype_rank(opm_dtype d)
{
    switch (d) {
    case OPM_BOOL: return 0;
    case OPM_INT8: case OPM_INT4: return 1;
    case OPM_INT32: return 2;
    case OPM_INT64: return 3;
    case OPM_FP8_E4M3: case OPM_FP8_E5M2: case OPM_FP4_E2M1: return 4;
    case OPM_FP16: case OPM_BF16: return 5;
    case OPM_FP32: case OPM_TF32: return 6;
    default: return 7;
    }
}

static int category(opm_dtype d) { return d == OPM_BOOL ? 0 : is_float(d) ? 2 : 1; }

/* PyTorch's type promotion of two dtypes of the same priority class. */
static opm_dtype promote2(opm_dtype a, opm_dtype b)
{
    if (a == b) return a;
    if (category(a) != category(b)) return category(a) > category(b) ? a : b;
    if ((a == OPM_FP16 && b == OPM_BF16) || (a == OPM_BF16 && b == OPM_FP16)) return OPM_FP32;
    return dtype_rank(a) >= dtype_rank(b) ? a : b;
}

/* Result dtype of an op over the operands ops[0..n): dimensioned tensors
 * decide, a 0-dim tensor or a Python scalar only when it is of a higher
 * class (bool < int < float), as torch.result_type. */
static opm_dtype result_type(const bctx *c, const int *ops, int n)
{
    int have_dim = 0, have_zero = 0, scal = -1;
    opm_dtype dim = OPM_BOOL, zero = OPM_BOOL;
    for (int i = 0; i < n; i++) {
        const opm_targ *t = arg(c, ops[i]);
        if (t->kind == OPM_TARG_TENSOR && t->rank > 0) {
            dim = have_dim ? promote2(dim, t->dtype) : t->dtype;
            have_dim = 1;
        } else if (t->kind == OPM_TARG_TENSOR) {
            zero = have_zero ? promote2(zero, t->dtype) : t->dtype;
            have_zero = 1;
        } else if (t->value[0]) {
            int64_t iv;
            int bv;
            int cat = opm_targ_bool(c->a, (size_t)ops[i], &bv) == 0  ? 0
                      : opm_targ_int(c->a, (size_t)ops[i], &iv) == 0 ? 1
                                                                       : 2;
            if (cat > scal) scal = cat;
        }
    }
    opm_dtype r = have_dim ? dim : zero;
    if (have_dim && have_zero && category(zero) > category(dim)) r = zero;
    if (scal > category(r)) r = scal == 2 ? OPM_FP32 : OPM_INT64;
    return r;
}


#define EW_INPLACE 1   /* writes its first operand: that shape and dtype */
#define EW_GATED 2     /* act(g)·u of one [..., 2H] input: the output is [..., H] */

/* An in-place aten op (add_, mul_, ...) writes its first operand. */
static int ew_flags(const bctx *c)
{
    size_t n = strlen(c->call->name);
    return n > 1 && c->call->name[n - 1] == '_' ? EW_INPLACE : 0;
}

/* Builds an elementwise op of function `fn` over the tensor operands among
 * ops[0..n) into an output of dtype ydt, shaped as their broadcast unless
 * `flags` say otherwise. */
static int ew_build(bctx *c, const char *fn, const int *ops, int n, opm_dtype ydt, opm_phase ph, int per_elem,
                    int flags)
{
    int64_t ys[OPM_MAX_RANK], tmp[OPM_MAX_RANK];
    int yr = 0, nt = 0;
    for (int i = 0; i < n; i++) {
        if (!is_t(c, ops[i])) {
            if (arg(c, ops[i])->kind != OPM_TARG_NONE) return DECLINE;
            continue;
        }
        const opm_targ *t = arg(c, ops[i]);
        int r;
        if (opm_broadcast(ys, yr, t->shape, t->rank, tmp, &r)) return DECLINE;
        memcpy(ys, tmp, sizeof ys);
        yr = r;
        nt++;
    }
    if (!nt) return DECLINE;
    if (flags & EW_GATED) {
        if (yr < 1 || ys[yr - 1] % 2) return DECLINE;
        ys[yr - 1] /= 2;
    }
    if (flags & EW_INPLACE) {
        const opm_targ *s = arg(c, ops[0]);
        if (!is_t(c, ops[0]) || s->rank != yr || memcmp(s->shape, ys, (size_t)yr * sizeof ys[0])) return DECLINE;
        ydt = s->dtype;
    }
    int rc;
    if ((rc = new_op(c, OPM_KIND_ELEMENTWISE, ph))) return rc;
    const int64_t *shapes[8];
    int ranks[8], ns = 0;
    for (int i = 0; i < n; i++) {
        if (!is_t(c, ops[i])) continue;
        if ((rc = add_arg(c, OPM_ROLE_INPUT, ops[i], NULL))) return rc;
        if (ns < 8) {
            shapes[ns] = arg(c, ops[i])->shape;
            ranks[ns++] = arg(c, ops[i])->rank;
        }
    }
    if ((rc = add_t(c, OPM_ROLE_OUTPUT, ys, yr, ydt, NULL)) || (rc = opm_op_set_string(c->op, "op", fn, c->err)) ||
        (per_elem >= 0 && (rc = opm_op_set_int(c->op, "op_count_per_element", per_elem, c->err))))
        return rc;
    opm_jbuf_str(c->params, "op", fn);
    opm_jbuf_ints(c->params, "shape", ys, yr);
    opm_jbuf_shapes(c->params, "inputs", shapes, ranks, ns);
    p_dtype(c, "dtype", ydt);
    opm_dtype in = arg(c, ops[0])->kind == OPM_TARG_TENSOR ? arg(c, ops[0])->dtype : ydt;
    if (in != ydt) p_dtype(c, "in_dtype", in);
    return 0;
}

/* pow(self, exponent): PyTorch computes small constant exponents as
 * products and roots (x² = x·x, x^0.5 = sqrt, ...), so those map to the
 * matching table function; anything else is a general pow. */
static int ew_pow(bctx *c)
{
    int ops[2] = {0, 1};
    if (is_t(c, 0) && is_t(c, 1)) return ew_build(c, "pow", ops, 2, result_type(c, ops, 2), c->fwd, -1, ew_flags(c));
    if (!is_t(c, 0)) return is_t(c, 1) ? ew_build(c, "pow", ops + 1, 1, arg(c, 1)->dtype, c->fwd, -1, 0) : DECLINE;
    double e;
    const char *fn = "pow";
    if (opm_targ_double(c->a, 1, &e) == 0)
        fn = e == 2      ? "square"
             : e == 0.5  ? "sqrt"
             : e == -0.5 ? "rsqrt"
             : e == -1   ? "reciprocal"
             : e == 1    ? "copy"
                         : "pow";
    return ew_build(c, fn, ops, 1, result_type(c, ops, 2), c->fwd, -1, ew_flags(c));
}

static int b_ew(bctx *c)
{
    const char *d = c->detail;
    char form[16], fn[32];
    dword(d, 0, form, sizeof form);
    dword(d, 1, fn, sizeof fn);
    int cmp = dflag(d, "compare");
    int per = cmp ? OPM_FLOPS_ARITH : dflag(d, "exp_weight") ? OPM_FLOPS_EXP : -1;
    if (!strcmp(form, "unary")) {
        int ops[1] = {0};
        if (!is_t(c, 0)) return DECLINE;
        return ew_build(c, fn, ops, 1, cmp ? OPM_BOOL : arg(c, 0)->dtype, c->fwd, per, ew_flags(c));
    }
    if (!strcmp(form, "binary")) {
        int ops[2] = {0, 1};
        if (c->a->n < 2) return DECLINE;
        return ew_build(c, fn, ops, 2, cmp ? OPM_BOOL : result_type(c, ops, 2), c->fwd, per, ew_flags(c));
    }
    if (!strcmp(form, "gated")) { /* (out, input) */
        int ops[1] = {1};
        if (!is_t(c, 0) || !is_t(c, 1)) return DECLINE;
        return ew_build(c, fn, ops, 1, arg(c, 0)->dtype, c->fwd, -1, EW_GATED);
    }
    if (!strcmp(form, "bwd")) { /* (grad_output, x, ...) */
        int ix = dnum(d, "x", 1), ops[1];
        ops[0] = ix;
        if (!is_t(c, 0) || !is_t(c, ix)) return DECLINE;
        if (!strcmp(fn, "gelu") && !strcmp(value(c, 2), "tanh")) strcpy(fn, "gelu_tanh");
        const opm_targ *dy = arg(c, 0), *x = arg(c, ix);
        if (dy->rank != x->rank || memcmp(dy->shape, x->shape, (size_t)x->rank * sizeof x->shape[0])) return DECLINE;
        return ew_build(c, fn, ops, 1, dy->dtype, OPM_PHASE_TRAIN_BWD, -1, 0);
    }
    if (!strcmp(form, "copy")) { /* copy_(self, src, non_blocking) */
        int ops[1] = {1};
        if (!is_t(c, 0) || !is_t(c, 1)) return DECLINE;
        const opm_targ *self = arg(c, 0), *src = arg(c, 1);
        if (self->rank != src->rank || memcmp(self->shape, src->shape, (size_t)src->rank * sizeof src->shape[0]))
            return DECLINE; /* a broadcasting copy: not one elementwise op of ours */
        return ew_build(c, self->dtype == src->dtype ? "copy" : "cast", ops, 1, self->dtype, c->fwd, -1, 0);
    }
    if (!strcmp(form, "gelu")) { /* gelu(self, approximate) */
        int ops[1] = {0};
        if (!is_t(c, 0)) return DECLINE;
        return ew_build(c, strcmp(value(c, 1), "tanh") ? "gelu" : "gelu_tanh", ops, 1, arg(c, 0)->dtype, c->fwd, -1,
                        ew_flags(c));
    }
    if (!strcmp(form, "pow")) return ew_pow(c);
    if (!strcmp(form, "clamp")) { /* clamp(self, min, max): either bound may be None */
        int ops[3] = {0, 1, 2};
        int lo = is_t(c, 1) || value(c, 1)[0], hi = is_t(c, 2) || value(c, 2)[0];
        if (!is_t(c, 0) || (!lo && !hi)) return DECLINE;
        return ew_build(c, lo && hi ? "clamp" : lo ? "max" : "min", ops, c->a->n < 3 ? 2 : 3,
                        result_type(c, ops, c->a->n < 3 ? 2 : 3), c->fwd, -1, ew_flags(c));
    }
    if (!strcmp(form, "where")) { /* where(condition, self, other) */
        int ops[3] = {0, 1, 2};
        if (c->a->n < 3 || !is_t(c, 0)) return DECLINE;
        return ew_build(c, "where", ops, 3, result_type(c, ops + 1, 2), c->fwd, -1, 0);
    }
    return DECLINE;
}

/* ---- reductions ----
 * b_red: first word the reduction of the table (sum, mean, max, min, norm,
 * var, std, logsumexp, cumsum, argmax, argmin); keys dim, keep, dtype (a
 * ScalarType), p (norm order: only 2); flags bool (all/any: min/max over
 * a bool output), dimlist (dims are an int list: anything else at `dim` is
 * a whole-tensor overload).  An out= tensor after x gives the output dtype;
 * aten::max/min with a tensor second operand are the elementwise ops. */
static int b_red(bctx *c)
{
    const char *d = c->detail;
    char fn[16];
    dword(d, 0, fn, sizeof fn);
    int idim = dnum(d, "dim", -1), ikeep = dnum(d, "keep", -1), idt = dnum(d, "dtype", -1), ip = dnum(d, "p", -1);
    if ((!strcmp(fn, "max") || !strcmp(fn, "min")) && is_t(c, 1)) {
        int ops[2] = {0, 1};
        return ew_build(c, fn, ops, 2, result_type(c, ops, 2), c->fwd, -1, 0);
    }
    if (!is_t(c, 0) || arg(c, 0)->rank < 1) return DECLINE;
    const opm_targ *X = arg(c, 0);
    int64_t dims[OPM_MAX_RANK];
    int nd = 0, keep = 0, all = 1;
    const char *dv = value(c, idim);
    int listed = idim >= 0 && (!dflag(d, "dimlist") || !strcmp(arg(c, idim)->type, "ScalarList"));
    if (listed && dv[0]) {
        if (opm_targ_ints(c->a, (size_t)idim, dims, OPM_MAX_RANK, &nd)) return DECLINE;
        all = nd == 0;
    }
    if (opt_bool(c, ikeep, 0, &keep)) return DECLINE;
    if (ip >= 0 && value(c, ip)[0]) {
        double p;
        if (opm_targ_double(c->a, (size_t)ip, &p) || p != 2) return DECLINE; /* only the L2 norm is modelled */
        /* linalg_norm with an ord over two dims (or a 2-D input and no dim)
         * is a matrix norm: ord=2 is the largest singular value, not L2. */
        if (dflag(d, "vector_ord") && (nd == 2 || (all && X->rank == 2))) return DECLINE;
    }
    int scan = !strcmp(fn, "cumsum");
    if (scan && (nd != 1 || keep)) return DECLINE;
    int mask[OPM_MAX_RANK] = {0};
    for (int i = 0; i < nd; i++) {
        int64_t k = dims[i] < 0 ? dims[i] + X->rank : dims[i];
        if (k < 0 || k >= X->rank || mask[k]) return DECLINE;
        mask[k] = 1;
    }
    int64_t ys[OPM_MAX_RANK];
    int yr = 0;
    for (int i = 0; i < X->rank; i++) {
        if (scan || !(all || mask[i])) ys[yr++] = X->shape[i];
        else if (keep) ys[yr++] = 1;
    }
    opm_dtype ydt = X->dtype;
    int out = -1;
    for (size_t i = 1; i < c->a->n; i++)
        if (is_t(c, (int)i)) out = (int)i;
    if (out >= 0) ydt = arg(c, out)->dtype;
    else if (dtype_arg(c, idt, &ydt) == 0) {}
    else if (!strcmp(fn, "argmax") || !strcmp(fn, "argmin")) ydt = OPM_INT64;
    else if (dflag(d, "bool")) ydt = OPM_BOOL;
    else if ((scan || !strcmp(fn, "sum")) && !is_float(X->dtype)) ydt = OPM_INT64;
    int rc;
    if ((rc = new_op(c, OPM_KIND_REDUCTION, c->fwd)) || (rc = add_arg(c, OPM_ROLE_INPUT, 0, NULL)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, ys, yr, ydt, NULL)) || (rc = opm_op_set_string(c->op, "op", fn, c->err)) ||
        (nd && (rc = opm_op_set_ints(c->op, "dim", dims, (size_t)nd, c->err))) ||
        (keep && (rc = opm_op_set_bool(c->op, "keepdim", 1, c->err))))
        return rc;
    opm_jbuf_str(c->params, "op", fn);
    opm_jbuf_ints(c->params, "shape", X->shape, X->rank);
    opm_jbuf_ints(c->params, "dim", dims, nd);
    opm_jbuf_bool(c->params, "keepdim", keep);
    p_dtype(c, "dtype", X->dtype);
    if (ydt != X->dtype) p_dtype(c, "out_dtype", ydt);
    return 0;
}

/* ---- softmax: keys x (forward input) or y (backward: the forward output),
 * dim, h2f (half_to_float: fp32 output), dtype (a ScalarType), idt (the
 * backward's input_dtype); flags bwd, log (log_softmax, counted as softmax:
 * the same max, subtract, exp and sum per element). */
static int b_softmax(bctx *c)
{
    const char *d = c->detail;
    int bwd = dflag(d, "bwd");
    int it = bwd ? dnum(d, "y", 1) : dnum(d, "x", 0);
    int64_t dim;
    if (!is_t(c, it) || arg(c, it)->rank < 1 || need_int(c, dnum(d, "dim", 1), &dim)) return DECLINE;
    const opm_targ *T = arg(c, it);
    opm_dtype xdt = T->dtype, ydt = T->dtype;
    if (bwd) {
        if (dtype_arg(c, dnum(d, "idt", -1), &xdt)) xdt = T->dtype;
    } else {
        int h2f = 0;
        if (dnum(d, "h2f", -1) >= 0 && opt_bool(c, dnum(d, "h2f", -1), 0, &h2f)) return DECLINE;
        if (h2f) ydt = OPM_FP32;
        else if (dtype_arg(c, dnum(d, "dtype", -1), &ydt)) ydt = T->dtype;
    }
    int rc;
    if ((rc = new_op(c, OPM_KIND_SOFTMAX, bwd ? OPM_PHASE_TRAIN_BWD : c->fwd)) ||
        (rc = add_t(c, OPM_ROLE_INPUT, T->shape, T->rank, xdt, NULL)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, T->shape, T->rank, ydt, NULL)) ||
        (rc = opm_op_set_int(c->op, "dim", dim, c->err)))
        return rc;
    opm_jbuf_str(c->params, "op", dflag(d, "log") ? "log_softmax" : "softmax");
    opm_jbuf_ints(c->params, "shape", T->shape, T->rank);
    opm_jbuf_int(c->params, "dim", dim);
    p_dtype(c, "dtype", xdt);
    if (ydt != xdt) p_dtype(c, "out_dtype", ydt);
    return 0;
}

/* ---- cross_entropy_loss(self [N, V], target [N], weight, reduction,
 * ignore_index, label_smoothing): PyTorch eager runs log_softmax then
 * nll_loss, so the unfused count (fused: false).  Class weights are not
 * counted; probability targets and logits of more than 2 dims decline. */
static int b_xent(bctx *c)
{
    int ix = dnum(c->detail, "x", 0), itg = dnum(c->detail, "t", 1);
    if (!is_t(c, ix) || !is_t(c, itg)) return DECLINE;
    const opm_targ *L = arg(c, ix), *T = arg(c, itg);
    if (L->rank != 2 || T->rank != 1 || T->shape[0] != L->shape[0] || (T->dtype != OPM_INT64 && T->dtype != OPM_INT32))
        return DECLINE;
    int64_t red = 1;
    double ls = 0;
    int ired = dnum(c->detail, "red", -1), ils = dnum(c->detail, "ls", -1);
    if (value(c, ired)[0] && (need_int(c, ired, &red) || red < 0 || red > 2)) return DECLINE;
    if (value(c, ils)[0] && (opm_targ_double(c->a, (size_t)ils, &ls) || ls < 0 || ls > 1)) return DECLINE;
    static const char *const reds[] = {"none", "mean", "sum"};
    int rc;
    if ((rc = new_op(c, OPM_KIND_CROSS_ENTROPY, c->fwd)) || (rc = add_arg(c, OPM_ROLE_INPUT, ix, NULL)) ||
        (rc = add_arg(c, OPM_ROLE_INPUT, itg, NULL)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, L->shape, red == 0 ? 1 : 0, L->dtype, NULL)) ||
        (rc = opm_op_set_string(c->op, "reduction", reds[red], c->err)) ||
        (ls > 0 && (rc = opm_op_set_double(c->op, "label_smoothing", ls, c->err))) ||
        (rc = opm_op_set_bool(c->op, "fused", 0, c->err)))
        return rc;
    opm_jbuf_int(c->params, "tokens", L->shape[0]);
    opm_jbuf_int(c->params, "vocab", L->shape[1]);
    opm_jbuf_str(c->params, "reduction", reds[red]);
    if (ls > 0) opm_jbuf_double(c->params, "label_smoothing", ls);
    p_dtype(c, "dtype", L->dtype);
    return 0;
}

/* ---- embedding: keys w (table [V, D]), i (indices), dim (index_select's
 * dim: a row gather only when 0), dy, V (num_weights) for the backward. */
static int b_embed(bctx *c)
{
    const char *d = c->detail;
    int bwd = dflag(d, "bwd"), ii = dnum(d, "i", 1);
    if (!is_t(c, ii) || (arg(c, ii)->dtype != OPM_INT64 && arg(c, ii)->dtype != OPM_INT32)) return DECLINE;
    const opm_targ *I = arg(c, ii);
    int64_t ws[2], ys[OPM_MAX_RANK];
    opm_dtype wdt;
    if (I->rank >= OPM_MAX_RANK) return DECLINE;
    if (bwd) {
        int idy = dnum(d, "dy", 0);
        int64_t v;
        if (!is_t(c, idy) || need_int(c, dnum(d, "V", 2), &v)) return DECLINE;
        const opm_targ *DY = arg(c, idy);
        if (DY->rank != I->rank + 1 || memcmp(DY->shape, I->shape, (size_t)I->rank * sizeof I->shape[0]))
            return DECLINE;
        ws[0] = v, ws[1] = DY->shape[DY->rank - 1], wdt = DY->dtype;
    } else {
        int iw = dnum(d, "w", 0), idim = dnum(d, "dim", -1);
        if (!is_t(c, iw) || arg(c, iw)->rank != 2) return DECLINE;
        if (idim >= 0) { /* index_select(self, dim, index) */
            int64_t dim;
            if (need_int(c, idim, &dim) || (dim != 0 && dim != -2) || I->rank > 1) return DECLINE;
        }
        ws[0] = arg(c, iw)->shape[0], ws[1] = arg(c, iw)->shape[1], wdt = arg(c, iw)->dtype;
    }
    memcpy(ys, I->shape, (size_t)I->rank * sizeof ys[0]);
    ys[I->rank] = ws[1];
    int rc;
    if ((rc = new_op(c, OPM_KIND_EMBEDDING, bwd ? OPM_PHASE_TRAIN_BWD : c->fwd)) ||
        (rc = add_arg(c, OPM_ROLE_INPUT, ii, NULL)) || (rc = add_t(c, OPM_ROLE_WEIGHT, ws, 2, wdt, NULL)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, ys, I->rank + 1, wdt, NULL)))
        return rc;
    opm_jbuf_int(c->params, "tokens", (int64_t)elems(I->shape, I->rank));
    opm_jbuf_int(c->params, "vocab", ws[0]);
    opm_jbuf_int(c->params, "dim", ws[1]);
    p_dtype(c, "dtype", wdt);
    p_dtype(c, "index_dtype", I->dtype);
    return 0;
}

/* ---- convolution ----
 * b_conv keys: x, w, bias, stride, pad, dil, opad (output_padding), groups,
 * tr (the `transposed` bool); flag transposed (always); backward: bwd, dy,
 * biassz (bias_sizes: a bias gradient when non-empty), mask (output_mask).
 * Lists of one value apply to every spatial dim. */

static int conv_list(const bctx *c, int i, int nsp, int64_t dflt, int64_t *out)
{
    for (int k = 0; k < nsp; k++) out[k] = dflt;
    if (i < 0) return 0;
    int64_t v[3];
    int n;
    if (opm_targ_ints(c->a, (size_t)i, v, 3, &n) || (n != 1 && n != nsp)) return DECLINE;
    for (int k = 0; k < nsp; k++) out[k] = v[n == 1 ? 0 : k];
    return 0;
}

static int b_conv(bctx *c)
{
    const char *d = c->detail;
    int bwd = dflag(d, "bwd");
    int ix = dnum(d, "x", 0), iw = dnum(d, "w", 1), idy = dnum(d, "dy", -1);
    if (!is_t(c, ix) || !is_t(c, iw) || (bwd && !is_t(c, idy))) return DECLINE;
    const opm_targ *X = arg(c, ix), *W = arg(c, iw);
    int r = X->rank, nsp = r - 2;
    if (r < 3 || r > 5 || W->rank != r) return DECLINE;
    int64_t st[3], pd[3], dl[3], op[3], g = 1;
    int tr = dflag(d, "transposed");
    if (conv_list(c, dnum(d, "stride", -1), nsp, 1, st) || conv_list(c, dnum(d, "pad", -1), nsp, 0, pd) ||
        conv_list(c, dnum(d, "dil", -1), nsp, 1, dl) || conv_list(c, dnum(d, "opad", -1), nsp, 0, op))
        return DECLINE;
    if (dnum(d, "groups", -1) >= 0 && (need_int(c, dnum(d, "groups", -1), &g) || g < 1)) return DECLINE;
    if (dnum(d, "tr", -1) >= 0 && opt_bool(c, dnum(d, "tr", -1), 0, &tr)) return DECLINE;
    int64_t ys[5];
    opm_dtype ydt = X->dtype;
    int mask[3] = {1, 1, 0}, has_bias = 0, ib = -1;
    int64_t bias_n = tr ? W->shape[1] * g : W->shape[0];
    if (bwd) {
        const opm_targ *DY = arg(c, idy);
        if (DY->rank != r) return DECLINE;
        memcpy(ys, DY->shape, (size_t)r * sizeof ys[0]);
        ydt = DY->dtype;
        int n;
        if (opm_targ_bools(c->a, (size_t)dnum(d, "mask", -1), mask, 3, &n) || n != 3) return DECLINE;
        int64_t bs[4];
        int nb = 0;
        if (mask[2] && opm_targ_ints(c->a, (size_t)dnum(d, "biassz", -1), bs, 4, &nb) == 0 && nb >= 1 && bs[0] > 0)
            has_bias = 1;
    } else {
        ys[0] = X->shape[0];
        ys[1] = bias_n;
        for (int i = 0; i < nsp; i++) {
            int64_t in = X->shape[2 + i], k = W->shape[2 + i];
            if (st[i] < 1 || (!tr && in + 2 * pd[i] < dl[i] * (k - 1) + 1)) return DECLINE;
            ys[2 + i] = tr ? (in - 1) * st[i] - 2 * pd[i] + dl[i] * (k - 1) + op[i] + 1
                           : (in + 2 * pd[i] - dl[i] * (k - 1) - 1) / st[i] + 1;
            if (ys[2 + i] < 1) return DECLINE;
        }
        ib = dnum(d, "bias", -1);
        has_bias = is_t(c, ib) && arg(c, ib)->rank == 1;
    }
    int rc;
    if ((rc = new_op(c, OPM_KIND_CONV, bwd ? OPM_PHASE_TRAIN_BWD : c->fwd)) ||
        (rc = add_arg(c, OPM_ROLE_INPUT, ix, NULL)) || (rc = add_arg(c, OPM_ROLE_WEIGHT, iw, NULL)) ||
        (has_bias && (rc = bwd ? add_t(c, OPM_ROLE_WEIGHT, &bias_n, 1, W->dtype, NULL)
                               : add_arg(c, OPM_ROLE_WEIGHT, ib, NULL))) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, ys, r, ydt, NULL)) ||
        (rc = opm_op_set_ints(c->op, "stride", st, (size_t)nsp, c->err)) ||
        (rc = opm_op_set_ints(c->op, "padding", pd, (size_t)nsp, c->err)) ||
        (rc = opm_op_set_ints(c->op, "dilation", dl, (size_t)nsp, c->err)) ||
        (rc = opm_op_set_int(c->op, "groups", g, c->err)) ||
        (tr && (rc = opm_op_set_bool(c->op, "transposed", 1, c->err))) ||
        (tr && (rc = opm_op_set_ints(c->op, "output_padding", op, (size_t)nsp, c->err))) ||
        (bwd && (rc = opm_op_set_bool(c->op, "grad_input", mask[0], c->err))) ||
        (bwd && (rc = opm_op_set_bool(c->op, "grad_weight", mask[1], c->err))))
        return rc;
    opm_jbuf_ints(c->params, "input", X->shape, r);
    opm_jbuf_ints(c->params, "weight", W->shape, r);
    opm_jbuf_ints(c->params, "stride", st, nsp);
    opm_jbuf_ints(c->params, "padding", pd, nsp);
    opm_jbuf_ints(c->params, "dilation", dl, nsp);
    opm_jbuf_int(c->params, "groups", g);
    opm_jbuf_bool(c->params, "transposed", tr);
    if (tr) opm_jbuf_ints(c->params, "output_padding", op, nsp);
    opm_jbuf_bool(c->params, "bias", has_bias);
    p_dtype(c, "dtype", X->dtype);
    if (W->dtype != X->dtype) p_dtype(c, "weight_dtype", W->dtype);
    if (bwd) {
        opm_jbuf_bool(c->params, "grad_input", mask[0]);
        opm_jbuf_bool(c->params, "grad_weight", mask[1]);
    }
    return 0;
}

/* ---- fused MoE (vLLM/SGLang fused_experts): keys x [T, H], w1 [E, N1, H],
 * w2 [E, H, I], tw (topk_weights [T, k]), ti (topk_ids [T, k]), act (the
 * activation name: silu or gelu).  Gated when N1 = 2·I.  Quantisation
 * scales of fp8/int8 experts are not among the counted tensors. */
static int b_fused_moe(bctx *c)
{
    const char *d = c->detail;
    int ix = dnum(d, "x", 0), i1 = dnum(d, "w1", 1), i2 = dnum(d, "w2", 2);
    int itw = dnum(d, "tw", 3), iti = dnum(d, "ti", 4);
    if (!is_t(c, ix) || !is_t(c, i1) || !is_t(c, i2) || !is_t(c, itw) || !is_t(c, iti)) return DECLINE;
    const opm_targ *X = arg(c, ix), *W1 = arg(c, i1), *W2 = arg(c, i2), *TW = arg(c, itw), *TI = arg(c, iti);
    if (X->rank != 2 || W1->rank != 3 || W2->rank != 3 || TW->rank != 2 || TI->rank != 2) return DECLINE;
    int64_t t = X->shape[0], h = X->shape[1], e = W1->shape[0], n1 = W1->shape[1], in = W2->shape[2];
    if (W1->shape[2] != h || W2->shape[0] != e || W2->shape[1] != h || (n1 != 2 * in && n1 != in)) return DECLINE;
    if (TW->shape[0] != t || TI->shape[0] != t || TW->shape[1] != TI->shape[1] || !is_float(TW->dtype) ||
        !is_int(TI->dtype))
        return DECLINE;
    const char *act = value(c, dnum(d, "act", -1));
    if (!act[0]) act = "silu";
    if (strcmp(act, "silu") && strcmp(act, "gelu")) return DECLINE;
    int rc;
    if ((rc = new_op(c, OPM_KIND_FUSED_MOE, c->fwd)) || (rc = add_arg(c, OPM_ROLE_INPUT, ix, NULL)) ||
        (rc = add_arg(c, OPM_ROLE_INPUT, itw, NULL)) || (rc = add_arg(c, OPM_ROLE_INPUT, iti, NULL)) ||
        (rc = add_arg(c, OPM_ROLE_WEIGHT, i1, NULL)) || (rc = add_arg(c, OPM_ROLE_WEIGHT, i2, NULL)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, X->shape, 2, X->dtype, NULL)) ||
        (rc = opm_op_set_string(c->op, "activation", act, c->err)))
        return rc;
    opm_jbuf_int(c->params, "tokens", t);
    opm_jbuf_int(c->params, "hidden", h);
    opm_jbuf_int(c->params, "intermediate", in);
    opm_jbuf_int(c->params, "experts", e);
    opm_jbuf_int(c->params, "top_k", TW->shape[1]);
    opm_jbuf_bool(c->params, "gated", n1 == 2 * in);
    opm_jbuf_str(c->params, "activation", act);
    p_dtype(c, "dtype", X->dtype);
    if (W1->dtype != X->dtype) p_dtype(c, "weight_dtype", W1->dtype);
    return 0;
}

/* ---- resampling ----
 * b_upsample: aten::upsample_{nearest,bilinear,...}{1,2,3}d, both the
 * `.vec` overload (input, output_size?, [align_corners,] scale_factors?) and
 * the base one (self, output_size, [align_corners,] scales...) that it
 * calls under the same name.  Key sf: the position of scale_factors in the
 * `.vec` overload; the output size is the int list at position 1 when
 * given, else each spatial size times its scale factor (floor, as
 * PyTorch's compute_output_size does).  Flag interp: bilinear, bicubic,
 * trilinear, linear (declined, see below).
 *
 * Counted as what the kernel does: read the input once, write the output
 * once, no arithmetic (nearest only gathers).  The op library has no
 * resampling kind, so it is expressed as an elementwise `copy` over a
 * broadcast: input [N, C, H, 1, W, 1] to output [N, C, H, sh, W, sw], the
 * same bytes read and written as the real [N, C, H, W] -> [N, C, sh·H, sw·W].
 * The elementwise kind takes its output shape from its inputs, so the repeat
 * is a second, 1-byte operand [1, 1, 1, sh, 1, sw]: sh·sw bytes (4 for 2x)
 * more than the kernel reads, nothing next to the tensors.  That needs an integer ratio per spatial dim; other
 * sizes, and interpolating modes (whose FLOPs per output a copy would
 * hide), decline: listed with time and category, no model. */
static int scale_list(const char *s, double *v, int cap)
{
    int n = 0;
    while (*s == ' ' || *s == '[') s++;
    while (*s && *s != ']' && n < cap) {
        char *end;
        double x = strtod(s, &end);
        if (end == s) return -1;
        v[n++] = x;
        s = end;
        while (*s == ' ' || *s == ',') s++;
    }
    return *s == ']' ? n : -1;
}

static int b_upsample(bctx *c)
{
    if (dflag(c->detail, "interp") || !is_t(c, 0)) return DECLINE;
    const opm_targ *x = arg(c, 0);
    int sp = x->rank - 2;
    if (sp < 1 || sp > 3) return DECLINE;
    int64_t out[3];
    int n = 0;
    if (value(c, 1)[0]) {
        if (opm_targ_ints(c->a, 1, out, 3, &n) || n != sp) return DECLINE;
    } else {
        double f[3];
        if (scale_list(value(c, dnum(c->detail, "sf", 2)), f, 3) != sp) return DECLINE;
        for (int i = 0; i < sp; i++) {
            double o = (double)x->shape[2 + i] * f[i];
            if (!(o >= 1 && o < 9.0e15)) return DECLINE;
            out[i] = (int64_t)o;
        }
    }
    int64_t xs[OPM_MAX_RANK], rs[OPM_MAX_RANK], ys[OPM_MAX_RANK];
    int r = 0;
    xs[r] = ys[r] = x->shape[0], rs[r] = 1, r++;
    xs[r] = ys[r] = x->shape[1], rs[r] = 1, r++;
    if (2 + 2 * sp > OPM_MAX_RANK) return DECLINE;
    for (int i = 0; i < sp; i++) {
        int64_t in = x->shape[2 + i];
        if (in <= 0 || out[i] % in) return DECLINE;
        xs[r] = ys[r] = in, rs[r] = 1, r++;
        xs[r] = 1, rs[r] = ys[r] = out[i] / in, r++;
    }
    int rc;
    if ((rc = new_op(c, OPM_KIND_ELEMENTWISE, c->fwd)) || (rc = add_t(c, OPM_ROLE_INPUT, xs, r, x->dtype, NULL)) ||
        (rc = add_t(c, OPM_ROLE_INPUT, rs, r, OPM_BOOL, NULL)) ||
        (rc = add_t(c, OPM_ROLE_OUTPUT, ys, r, x->dtype, NULL)) ||
        (rc = opm_op_set_string(c->op, "op", "copy", c->err)))
        return rc;
    int64_t yreal[5] = {x->shape[0], x->shape[1], 0, 0, 0};
    for (int i = 0; i < sp; i++) yreal[2 + i] = out[i];
    opm_jbuf_str(c->params, "op", "upsample_nearest");
    opm_jbuf_ints(c->params, "input", x->shape, x->rank);
    opm_jbuf_ints(c->params, "output", yreal, 2 + sp);
    p_dtype(c, "dtype", x->dtype);
    return 0;
}

/* ---- recognition ---- */

/* A raw argument text as a JSON value: as is when it is JSON, a JSON
 * string when it is not (a malformed trace), null when absent. */
static void raw_arg(opm_jbuf *b, const char *key, const char *text)
{
    if (!text || !text[0]) opm_jbuf_raw(b, key, NULL);
    else if (opm_json_is_value(text, strlen(text))) opm_jbuf_raw(b, key, text);
    else opm_jbuf_str(b, key, text);
}

static int raw_params(const opm_trace_call *call, opm_trace_recog *out, opm_error *err)
{
    opm_jbuf b;
    opm_jbuf_init(&b);
    raw_arg(&b, "input_dims", call ? call->input_dims : NULL);
    raw_arg(&b, "input_types", call ? call->input_types : NULL);
    raw_arg(&b, "concrete_inputs", call ? call->concrete_inputs : NULL);
    out->params_json = opm_jbuf_finish(&b);
    return out->params_json ? 0 : opm_err(err, OPM_ENOMEM, NULL, "out of memory");
}

/* Runs the row's builder; 0 with out->op NULL when it declined. */
static int run_builder(const op_row *row, const opm_trace_call *call, opm_trace_recog *out, opm_error *err)
{
    opm_error scratch;
    opm_error_clear(&scratch);
    opm_targs a;
    int rc = opm_targs_parse(call->input_dims, call->input_types, call->concrete_inputs, &a, &scratch);
    if (rc == OPM_ENOMEM) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    if (rc) return 0;
    opm_jbuf params;
    opm_jbuf_init(&params);
    bctx c = {call, &a, row->detail, call->training ? OPM_PHASE_TRAIN_FWD : OPM_PHASE_INFERENCE, NULL, &params,
              &scratch};
    rc = row->fn(&c);
    if (rc == 0 && !c.op) rc = OPM_EINVAL;
    opm_counts counts;
    /* What the builder made must be a valid op whose counts fit: an op the
     * library cannot count is reported without a model, not as an error. */
    if (rc == 0 && (opm_op_validate(c.op, &scratch) || opm_op_count(c.op, &counts, &scratch)))
        rc = scratch.code == OPM_ENOMEM ? OPM_ENOMEM : OPM_EINVAL;
    if (rc == 0) {
        out->params_json = opm_jbuf_finish(&params);
        if (!out->params_json) rc = OPM_ENOMEM;
        else out->op = c.op;
    }
    opm_targs_free(&a);
    if (rc == 0) return 0;
    opm_op_free(c.op);
    int oom = rc == OPM_ENOMEM || params.sb.oom;
    opm_jbuf_free(&params);
    return oom ? opm_err(err, OPM_ENOMEM, NULL, "out of memory") : 0;
}

int opm_trace_recognize(const opm_trace_op_entry *entry, const opm_trace_call *call, opm_trace_recog *out,
                        opm_error *err)
{
    out->op = NULL;
    out->params_json = NULL;
    const op_row *row = entry && entry->name ? find_exact(entry->name) : NULL;
    int rc = 0;
    if (row && &row->entry == entry) {
        if (row->fn && call) rc = run_builder(row, call, out, err);
    } else if (entry && entry->build && call) {
        rc = entry->build(call, out, err); /* an entry of the caller's own */
    }
    if (rc) {
        opm_op_free(out->op);
        free(out->params_json);
        out->op = NULL;
        out->params_json = NULL;
        return rc;
    }
    if (!out->params_json && (rc = raw_params(call, out, err))) {
        opm_op_free(out->op);
        out->op = NULL;
    }
    return rc;
}

/* entry->build of every row with a model, for callers that run it directly. */
static int run_row(const opm_trace_call *call, opm_trace_recog *out, opm_error *err)
{
    const op_row *row = call && call->name ? find_exact(call->name) : NULL;
    if (!row) {
        out->op = NULL;
        out->params_json = NULL;
        return raw_params(call, out, err);
    }
    return opm_trace_recognize(&row->entry, call, out, err);
}

/* ---- kernel categories ----
 * GPU work no recognised op owns is categorised by its kernel name, first
 * match wins (case-insensitive substrings):
 *   memcpy/memset events, and kernels named Memcpy.., Memset..  → memcpy
 *   nccl, rccl, all_reduce/allreduce, all_gather/allgather,
 *   reduce_scatter, alltoall, cross_device_reduce (custom AR),
 *   multimem (symmetric-memory collectives)                     → comm
 *   flash, fmha, attention, attn, mha_, paged_                  → attention
 *     (before gemm: flash kernels are cutlass templates)
 *   conv (not "convert"), fprop, dgrad, wgrad, igemm            → conv
 *     (before gemm: implicit-GEMM convolutions say "gemm" too)
 *   gemm, gemv, cutlass, cublas, cijk_ (Tensile), matmul, xmma,
 *   wmma, hipblaslt, and names starting bmm_ (TRT-LLM)           → gemm
 *   norm (not "normal": random numbers)                         → norm
 *   softmax, reduce, triton_red_, triton_per_, cumsum, scan,
 *   argmax, topk                                                → reduce
 *   elementwise, triton_poi_, _and_mul, rotary, rope, copy      → elementwise
 *   anything else                                               → other */

/* ---- TraceLens pseudo ops ----
 * vLLM's GPT-OSS MoE (vllm::moe_forward over triton_kernels' matmul_ogs):
 * TraceLens reports its expert kernels as pseudo ops named by kernel, with
 * moe_forward's arguments (vllm_decode_full's unified_perf_summary.csv):
 * the first matmul (fused SwiGLU) is "up", the second "down", the scatter
 * epilogue its own row.  First matching row wins. */
static const struct {
    const char *owner, *kernel, *and_kernel, *name;
} pseudo_ops[] = {
    {"vllm::moe_forward", "_matmul_ogs_", "_swiglu", "pseudo_op::moe_triton_unfused_up"},
    {"vllm::moe_forward", "_matmul_ogs_", NULL, "pseudo_op::moe_triton_unfused_down"},
    {"vllm::moe_forward", "_finalize_matmul_scatter", NULL, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter"},
};

int opm_trace_has_pseudo_ops(const char *owner)
{
    for (size_t i = 0; owner && i < sizeof pseudo_ops / sizeof pseudo_ops[0]; i++)
        if (!strcmp(owner, pseudo_ops[i].owner)) return 1;
    return 0;
}

int opm_trace_pseudo_op(const char *owner, const char *kernel)
{
    for (size_t i = 0; owner && kernel && i < sizeof pseudo_ops / sizeof pseudo_ops[0]; i++)
        if (!strcmp(owner, pseudo_ops[i].owner) && strstr(kernel, pseudo_ops[i].kernel) &&
            (!pseudo_ops[i].and_kernel || strstr(kernel, pseudo_ops[i].and_kernel)))
            return (int)i + 1;
    return 0;
}

const char *opm_trace_pseudo_op_name(int index)
{
    return index >= 1 && (size_t)index <= sizeof pseudo_ops / sizeof pseudo_ops[0] ? pseudo_ops[index - 1].name : NULL;
}

int opm_trace_name_has(const char *name, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = name; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == needle[i]) i++;
        if (i == n) return 1;
    }
    return 0;
}

static int has_any(const char *name, const char *const *needles)
{
    for (; *needles; needles++)
        if (opm_trace_name_has(name, *needles)) return 1;
    return 0;
}

static int starts_ci(const char *name, const char *prefix)
{
    for (; *prefix; prefix++, name++)
        if (tolower((unsigned char)*name) != *prefix) return 0;
    return 1;
}

opm_trace_category opm_trace_kernel_category(const char *kernel_name, int ev_class)
{
    static const char *const comm[] = {"nccl", "rccl", "all_reduce", "allreduce", "all_gather", "allgather",
                                       "reduce_scatter", "reducescatter", "alltoall", "cross_device_reduce", "multimem",
                                       NULL};
    static const char *const attn[] = {"flash", "fmha", "attention", "attn", "mha_", "paged_", NULL};
    static const char *const conv[] = {"fprop", "dgrad", "wgrad", "igemm", NULL};
    static const char *const gemm[] = {"gemm", "gemv", "cutlass", "cublas", "cijk_", "matmul", "xmma", "wmma",
                                       "hipblaslt", NULL};
    static const char *const reduce[] = {"softmax", "reduce", "triton_red_", "triton_per_", "cumsum", "scan",
                                         "argmax", "topk", NULL};
    static const char *const ew[] = {"elementwise", "triton_poi_", "_and_mul", "rotary", "rope", "copy", NULL};
    if (ev_class == OPM_EV_MEMCPY || ev_class == OPM_EV_MEMSET) return OPM_TCAT_MEMCPY;
    if (!kernel_name) return OPM_TCAT_OTHER;
    if (starts_ci(kernel_name, "memcpy") || starts_ci(kernel_name, "memset")) return OPM_TCAT_MEMCPY;
    if (has_any(kernel_name, comm)) return OPM_TCAT_COMM;
    if (has_any(kernel_name, attn)) return OPM_TCAT_ATTENTION;
    if ((opm_trace_name_has(kernel_name, "conv") && !opm_trace_name_has(kernel_name, "convert")) ||
        has_any(kernel_name, conv))
        return OPM_TCAT_CONV;
    /* TRT-LLM's batched-GEMM kernels (bmm_E4m3_..._sm100a) name no library. */
    if (has_any(kernel_name, gemm) || starts_ci(kernel_name, "bmm_")) return OPM_TCAT_GEMM;
    if (opm_trace_name_has(kernel_name, "norm") && !opm_trace_name_has(kernel_name, "normal")) return OPM_TCAT_NORM;
    if (has_any(kernel_name, reduce)) return OPM_TCAT_REDUCE;
    if (has_any(kernel_name, ew)) return OPM_TCAT_ELEMENTWISE;
    return OPM_TCAT_OTHER;
}
