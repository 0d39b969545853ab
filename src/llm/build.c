/* build.c — the ordered op list of one whole-model step (prefill, decode or
 * training) after tensor, pipeline and expert parallel sharding, its memory
 * per device, and its prediction with a per-op model.
 *
 * Ops are built as short-form JSON text and parsed by the op reader, so each
 * one is exactly what `opmodel predict` would read (and what
 * --emit-workload writes back).  One layer's ops are built once per layer
 * group (dense, MoE) and carry a count, which keeps a 126-layer model at a
 * few dozen predictions.
 *
 * Conventions (documented in docs/llm.md):
 *  - `count` is the op's instances along the step's critical path: with one
 *    micro-batch the pipeline stages run one after another, so every layer
 *    is on it; per-device memory divides the layers by pp.
 *  - `shards` is how many devices split the op; model totals (FLOPs) are
 *    per-device × shards, so they do not depend on tp/pp/ep.  Replicated ops
 *    (norms, residual adds, the router) have shards 1 and count once.
 *  - prefill runs the LM head over every token (the seed's rollup does). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llm_internal.h"
#include "../core/internal.h"

typedef struct builder {
    llm_step *s;
    size_t cap;
    const llm_step_spec *spec;
    unsigned mask;
    opm_phase phase;
    int group;
    int64_t count;
    opm_error *err;
    int failed;
} builder;

static int keep(const builder *b, unsigned kind) { return !b->mask || (b->mask & kind); }

static llm_step_op *push(builder *b, const char *name, const char *kind, int64_t shards)
{
    if (b->failed) return NULL;
    if (opm_array_grow((void **)&b->s->ops, &b->cap, b->s->n_ops + 1, sizeof *b->s->ops)) {
        b->failed = opm_err(b->err, OPM_ENOMEM, "", "out of memory");
        return NULL;
    }
    llm_step_op *o = &b->s->ops[b->s->n_ops++];
    memset(o, 0, sizeof *o);
    opm_strlcpy(o->name, name, sizeof o->name);
    opm_strlcpy(o->kind, kind, sizeof o->kind);
    o->group = b->group;
    o->count = b->count;
    o->shards = shards;
    return o;
}

/* An op from short-form JSON fields (without name, kind, phase). */
static void add_op(builder *b, unsigned kgroup, const char *name, const char *kind, int64_t shards,
                   const char *fmt, ...) OPM_PRINTF(6, 7);
static void add_op(builder *b, unsigned kgroup, const char *name, const char *kind, int64_t shards,
                   const char *fmt, ...)
{
    if (b->failed || !keep(b, kgroup)) return;
    char fields[512], text[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fields, sizeof fields, fmt, ap);
    va_end(ap);
    snprintf(text, sizeof text, "{\"name\": \"%s\", \"kind\": \"%s\", \"phase\": \"%s\", %s}", name, kind,
             opm_phase_name(b->phase), fields);
    opm_op *op = opm_op_parse_string(text, strlen(text), OPM_FORMAT_JSON, name, 1, b->err);
    if (!op) {
        b->failed = b->err ? (int)b->err->code : OPM_EINVAL;
        if (!b->failed) b->failed = OPM_EINVAL;
        return;
    }
    llm_step_op *o = push(b, name, kind, shards);
    if (!o) {
        opm_op_free(op);
        return;
    }
    o->op = op;
}

static void add_comm(builder *b, const char *name, llm_collective coll, int64_t devices, uint64_t bytes)
{
    static const char *const kinds[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p"};
    if (b->failed || !keep(b, LLM_K_COMM) || !bytes) return;
    llm_step_op *o = push(b, name, kinds[coll], 1);
    if (!o) return;
    o->comm_bytes = bytes;
    o->collective = coll;
    o->comm_devices = devices;
}

static const char *dt(opm_dtype d) { return opm_dtype_name(d); }

static void gemm(builder *b, const char *name, int64_t m, int64_t n, int64_t k, int bias, int64_t shards)
{
    add_op(b, LLM_K_GEMM, name, "gemm", shards, "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtype\": \"%s\"%s",
           (long long)m, (long long)n, (long long)k, dt(b->spec->dtype), bias ? ", \"bias\": true" : "");
}

static void norm(builder *b, const llm_config *c, const char *name, int64_t rows, int64_t width)
{
    add_op(b, LLM_K_NORM, name, c->layernorm ? "layernorm" : "rmsnorm", 1,
           "\"shape\": [%lld, %lld], \"dtype\": \"%s\"", (long long)rows, (long long)width, dt(b->spec->dtype));
}

static void residual(builder *b, const char *name, int64_t t, int64_t h)
{
    add_op(b, LLM_K_ELEMENTWISE, name, "elementwise", 1,
           "\"op\": \"add\", \"inputs\": [[%lld, %lld], [%lld, %lld]], \"dtype\": \"%s\"", (long long)t, (long long)h,
           (long long)t, (long long)h, dt(b->spec->dtype));
}

static void mlp(builder *b, const llm_config *c, const char *prefix, int64_t t, int64_t inter_local, int64_t tp)
{
    char n1[48], n2[48], n3[48], n4[48];
    snprintf(n1, sizeof n1, "%sgate", prefix);
    snprintf(n2, sizeof n2, "%sup", prefix);
    snprintf(n3, sizeof n3, "%sact", prefix);
    snprintf(n4, sizeof n4, "%sdown", prefix);
    int64_t h = c->hidden;
    if (c->gated) gemm(b, n1, t, inter_local, h, 0, tp);
    gemm(b, n2, t, inter_local, h, c->all_bias, tp);
    if (c->gated)
        add_op(b, LLM_K_ELEMENTWISE, n3, "elementwise", tp,
               "\"op\": \"silu_mul\", \"inputs\": [[%lld, %lld], [%lld, %lld]], \"dtype\": \"%s\"", (long long)t,
               (long long)inter_local, (long long)t, (long long)inter_local, dt(b->spec->dtype));
    else
        add_op(b, LLM_K_ELEMENTWISE, n3, "elementwise", tp, "\"op\": \"gelu\", \"shape\": [%lld, %lld], \"dtype\": \"%s\"",
               (long long)t, (long long)inter_local, dt(b->spec->dtype));
    gemm(b, n4, t, h, inter_local, c->all_bias, tp);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Byte counts are computed in double; a config or flag absurd enough to
 * exceed 64 bits saturates (and then cannot fit any device) instead of
 * converting out of range. */
static uint64_t u64(double v) { return v >= 18446744073709549568.0 ? UINT64_MAX : v > 0 ? (uint64_t)v : 0; }

/* A state-space mixer, per device (heads, channels and the projections
 * split by tp as Megatron's Mamba layers split them).  Mamba-2: in_proj to
 * z, x, B, C, dt; the causal conv over x, B, C; the SSD scan; the gated
 * RMSNorm (y·silu(z), then the norm); out_proj.  Mamba-1 (Jamba): in_proj to
 * x, z; the conv over x; x_proj to dt, B, C (Jamba: their RMSNorms);
 * dt_proj; the selective scan as mamba_ssd with one channel per head and
 * chunk 1 (the per-token recurrence: h = exp(dt·A)·h + dt·B·x, y = C·h,
 * gated by silu(z) in the scan kernel as selective_scan_fn does); out_proj.
 * Decode is the recurrent update (seqlen 1) reading and writing the state,
 * whose bytes are the layer's "KV cache". */
static void ssm_mixer(builder *b, const llm_config *c, int64_t bsz, int64_t sq)
{
    const llm_step_spec *sp = b->spec;
    int64_t tp = sp->tp, t = bsz * sq, h = c->hidden, di = llm_ssm_inner(c) / tp, n = c->ssm_state;
    int init = sp->phase == LLM_DECODE || sp->context > 0, fin = sp->phase != LLM_TRAIN;
    const char *d = dt(sp->dtype), *sd = dt(sp->kv_dtype);
    if (c->ssm == 2) {
        /* B/C groups split by tp, or replicated when there are fewer groups
         * than devices (vLLM's MambaMixer2 does so for n_groups 1) */
        int64_t nh = c->ssm_heads / tp, g = c->ssm_groups >= tp ? c->ssm_groups / tp : 1;
        if (c->ssm_groups >= tp) {
            gemm(b, "in_proj", t, 2 * di + 2 * g * n + nh, h, c->ssm_proj_bias, tp);
        } else {
            /* the B/C columns are the same on every device: a replicated
             * GEMM (shards 1, like the norms), so model FLOPs stay those of
             * one copy */
            gemm(b, "in_proj", t, 2 * di + nh, h, c->ssm_proj_bias, tp);
            gemm(b, "bc_proj", t, 2 * g * n, h, c->ssm_proj_bias, 1);
        }
        add_op(b, LLM_K_SSM, "conv1d", "causal_conv1d", tp,
               "\"batch\": %lld, \"dim\": %lld, \"seqlen\": %lld, \"width\": %lld, \"bias\": %s, "
               "\"activation\": \"silu\", \"dtype\": \"%s\"",
               (long long)bsz, (long long)(di + 2 * g * n), (long long)sq, (long long)c->ssm_conv,
               c->ssm_conv_bias ? "true" : "false", d);
        add_op(b, LLM_K_SSM, "ssd_scan", "mamba_ssd", tp,
               "\"batch\": %lld, \"seqlen\": %lld, \"heads\": %lld, \"head_dim\": %lld, \"state_dim\": %lld, "
               "\"groups\": %lld, \"chunk_size\": %lld, \"dt_bias\": true, \"dt_softplus\": true, "
               "\"initial_states\": %s, \"final_states\": %s, \"dtype\": \"%s\", \"state_dtype\": \"%s\"",
               (long long)bsz, (long long)sq, (long long)nh, (long long)c->ssm_head_dim, (long long)n, (long long)g,
               (long long)c->ssm_chunk, init ? "true" : "false", fin ? "true" : "false", d, sd);
        add_op(b, LLM_K_ELEMENTWISE, "ssm_gate", "elementwise", tp,
               "\"op\": \"silu_mul\", \"inputs\": [[%lld, %lld], [%lld, %lld]], \"dtype\": \"%s\"", (long long)t,
               (long long)di, (long long)t, (long long)di, d);
        add_op(b, LLM_K_NORM, "ssm_norm", "rmsnorm", tp, "\"shape\": [%lld, %lld], \"dtype\": \"%s\"", (long long)t,
               (long long)di, d);
    } else {
        int64_t r = c->ssm_dt_rank;
        gemm(b, "in_proj", t, 2 * di, h, c->ssm_proj_bias, tp);
        add_op(b, LLM_K_SSM, "conv1d", "causal_conv1d", tp,
               "\"batch\": %lld, \"dim\": %lld, \"seqlen\": %lld, \"width\": %lld, \"bias\": %s, "
               "\"activation\": \"silu\", \"dtype\": \"%s\"",
               (long long)bsz, (long long)di, (long long)sq, (long long)c->ssm_conv, c->ssm_conv_bias ? "true" : "false",
               d);
        gemm(b, "x_proj", t, r + 2 * n, di, 0, tp);
        if (!strcmp(c->model_type, "jamba"))
            add_op(b, LLM_K_NORM, "dt_bc_norm", "rmsnorm", 1, "\"shape\": [%lld, %lld], \"dtype\": \"%s\"",
                   (long long)t, (long long)(r + 2 * n), d);
        gemm(b, "dt_proj", t, di, r, 0, tp);
        add_op(b, LLM_K_SSM, "selective_scan", "mamba_ssd", tp,
               "\"batch\": %lld, \"seqlen\": %lld, \"heads\": %lld, \"head_dim\": 1, \"state_dim\": %lld, "
               "\"groups\": 1, \"chunk_size\": 1, \"z_gate\": true, \"dt_bias\": true, \"dt_softplus\": true, "
               "\"initial_states\": %s, \"final_states\": %s, \"dtype\": \"%s\", \"state_dtype\": \"%s\"",
               (long long)bsz, (long long)sq, (long long)di, (long long)n, init ? "true" : "false",
               fin ? "true" : "false", d, sd);
    }
    gemm(b, "out_proj", t, h, di, c->ssm_proj_bias, tp);
}

/* One decoder (or encoder) layer of the given type, per device. */
static void layer(builder *b, const llm_config *c, int mixer, int ffn)
{
    const llm_step_spec *sp = b->spec;
    int64_t tp = sp->tp, ep = sp->ep, h = c->hidden;
    int64_t bsz = sp->batch, sq = sp->phase == LLM_DECODE ? 1 : sp->seq;
    int64_t t = bsz * sq;
    int64_t skv = sp->phase == LLM_DECODE ? sp->context : sp->context + sp->seq;
    int64_t nh = c->heads / tp;
    double ab = opm_dtype_bytes(sp->dtype);
    const char *kvd = dt(sp->kv_dtype);

    int64_t sw = mixer == LLM_MIX_SWA ? c->sliding_window : 0;
    norm(b, c, mixer == LLM_MIX_SSM ? "ssm_norm_in" : "attn_norm", t, h);
    if (mixer == LLM_MIX_SSM) {
        ssm_mixer(b, c, bsz, sq);
    } else if (c->mla) {
        int64_t qk = c->qk_nope + c->qk_rope;
        if (c->q_lora) {
            gemm(b, "q_a", t, c->q_lora, h, 0, 1);
            norm(b, c, "q_a_norm", t, c->q_lora);
            gemm(b, "q_b", t, nh * qk, c->q_lora, 0, tp);
        } else {
            gemm(b, "q", t, nh * qk, h, 0, tp);
        }
        gemm(b, "kv_a", t, c->kv_lora + c->qk_rope, h, 0, 1);
        norm(b, c, "kv_a_norm", t, c->kv_lora);
        add_op(b, LLM_K_ROPE, "rope", "rope", tp,
               "\"batch\": %lld, \"seq\": %lld, \"heads\": %lld, \"kv_heads\": 1, \"head_dim\": %lld, \"dtype\": \"%s\"",
               (long long)bsz, (long long)sq, (long long)nh, (long long)c->qk_rope, dt(sp->dtype));
        if (sp->phase == LLM_DECODE) {
            /* Absorbed MLA (FlashMLA, vLLM/SGLang decode): queries move into
             * the latent space, attention is MQA over the cached latents
             * (kv_lora + rope wide), and the values come back per head. */
            add_op(b, LLM_K_GEMM, "q_absorb", "batched_gemm", tp,
                   "\"batch\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtype\": \"%s\"", (long long)nh,
                   (long long)t, (long long)c->kv_lora, (long long)c->qk_nope, dt(sp->dtype));
            add_op(b, LLM_K_ATTENTION, "attention", "attention_decode", tp,
                   "\"batch\": %lld, \"seq_kv\": %lld, \"heads\": %lld, \"kv_heads\": 1, \"head_dim_qk\": %lld, "
                   "\"head_dim_v\": %lld, \"dtype\": \"%s\", \"kv_dtype\": \"%s\"",
                   (long long)bsz, (long long)skv, (long long)nh, (long long)(c->kv_lora + c->qk_rope),
                   (long long)c->kv_lora, dt(sp->dtype), kvd);
            add_op(b, LLM_K_GEMM, "v_up", "batched_gemm", tp,
                   "\"batch\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtype\": \"%s\"", (long long)nh,
                   (long long)t, (long long)c->v_head, (long long)c->kv_lora, dt(sp->dtype));
        } else {
            gemm(b, "kv_b", skv * bsz, nh * (c->qk_nope + c->v_head), c->kv_lora, 0, tp);
            add_op(b, LLM_K_ATTENTION, "attention", sp->phase == LLM_PREFILL ? "attention_prefill" : "attention", tp,
                   "\"batch\": %lld, \"seq_q\": %lld, \"seq_kv\": %lld, \"heads\": %lld, \"head_dim_qk\": %lld, "
                   "\"head_dim_v\": %lld, \"causal\": true, \"dtype\": \"%s\"",
                   (long long)bsz, (long long)sq, (long long)skv, (long long)nh, (long long)qk, (long long)c->v_head,
                   dt(sp->dtype));
        }
        gemm(b, "o", t, h, nh * c->v_head, 0, tp);
    } else {
        int64_t nkv = c->kv_heads >= tp ? c->kv_heads / tp : 1, hd = c->head_dim;
        int64_t kv_shards = c->kv_heads >= tp ? tp : c->kv_heads;
        int bias = c->qkv_bias || c->all_bias;
        gemm(b, "q", t, nh * hd, h, bias, tp);
        gemm(b, "k", t, nkv * hd, h, bias, kv_shards);
        gemm(b, "v", t, nkv * hd, h, bias, kv_shards);
        if (c->qk_norm) add_op(b, LLM_K_NORM, "qk_norm", "rmsnorm", tp, "\"shape\": [%lld, %lld], \"dtype\": \"%s\"",
                               (long long)(t * (nh + nkv)), (long long)hd, dt(sp->dtype));
        if (!c->learned_pos && !c->no_rope)
            add_op(b, LLM_K_ROPE, "rope", "rope", tp,
                   "\"batch\": %lld, \"seq\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"head_dim\": %lld, \"dtype\": \"%s\"",
                   (long long)bsz, (long long)sq, (long long)nh, (long long)nkv, (long long)hd, dt(sp->dtype));
        /* A sliding window of W keys: decode reads the W newest cached
         * tokens (a rolling cache holds only those); prefill and train mask
         * the scores outside the window. */
        if (sp->phase == LLM_DECODE)
            add_op(b, LLM_K_ATTENTION, "attention", "attention_decode", tp,
                   "\"batch\": %lld, \"seq_kv\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"head_dim\": %lld, "
                   "\"dtype\": \"%s\", \"kv_dtype\": \"%s\"",
                   (long long)bsz, (long long)(sw && sw < skv ? sw : skv), (long long)nh, (long long)nkv, (long long)hd,
                   dt(sp->dtype), kvd);
        else if (sw)
            add_op(b, LLM_K_ATTENTION, "attention", sp->phase == LLM_PREFILL ? "attention_prefill" : "attention", tp,
                   "\"batch\": %lld, \"seq_q\": %lld, \"seq_kv\": %lld, \"heads\": %lld, \"kv_heads\": %lld, "
                   "\"head_dim\": %lld, \"causal\": true, \"sliding_window\": %lld, \"dtype\": \"%s\"",
                   (long long)bsz, (long long)sq, (long long)skv, (long long)nh, (long long)nkv, (long long)hd,
                   (long long)sw, dt(sp->dtype));
        else
            add_op(b, LLM_K_ATTENTION, "attention", sp->phase == LLM_PREFILL ? "attention_prefill" : "attention", tp,
                   "\"batch\": %lld, \"seq_q\": %lld, \"seq_kv\": %lld, \"heads\": %lld, \"kv_heads\": %lld, "
                   "\"head_dim\": %lld, \"causal\": %s, \"dtype\": \"%s\"",
                   (long long)bsz, (long long)sq, (long long)skv, (long long)nh, (long long)nkv, (long long)hd,
                   c->encoder ? "false" : "true", dt(sp->dtype));
        gemm(b, "o", t, h, nh * hd, c->all_bias, tp);
    }
    uint64_t act = u64((double)t * (double)h * ab);
    if (tp > 1) add_comm(b, mixer == LLM_MIX_SSM ? "ssm_all_reduce" : "attn_all_reduce", LLM_ALL_REDUCE, tp, act);
    residual(b, mixer == LLM_MIX_SSM ? "ssm_residual" : "attn_residual", t, h);
    if (ffn == LLM_FFN_NONE) return;
    norm(b, c, "mlp_norm", t, h);
    if (ffn == LLM_FFN_MOE) {
        gemm(b, "router", t, c->experts, h, 0, 1);
        /* Each device holds experts/ep experts and gets the tokens routed to
         * them: on average t·k/ep (token, expert) pairs, so the FLOPs over
         * the ep group stay those of the whole batch. */
        uint64_t routed = u64((double)t * (double)c->top_k * (double)h * ab);
        uint64_t a2a = routed / (uint64_t)ep * (uint64_t)(ep - 1);
        if (ep > 1) add_comm(b, "moe_dispatch_all_to_all", LLM_ALL_TO_ALL, ep, a2a);
        /* t·k/ep pairs as tokens with k_local ≤ experts/ep choices each */
        int64_t e_local = c->experts / ep, k_local = c->top_k < e_local ? c->top_k : e_local;
        add_op(b, LLM_K_MOE, "experts", "fused_moe", tp * ep,
               "\"tokens\": %lld, \"hidden\": %lld, \"intermediate\": %lld, \"experts\": %lld, \"top_k\": %lld, "
               "\"gated\": %s, \"dtype\": \"%s\"",
               (long long)ceil_div(t * c->top_k, ep * k_local), (long long)h, (long long)(c->moe_inter / tp),
               (long long)e_local, (long long)k_local, c->gated ? "true" : "false", dt(sp->dtype));
        if (ep > 1) add_comm(b, "moe_combine_all_to_all", LLM_ALL_TO_ALL, ep, a2a);
        if (c->shared_experts) mlp(b, c, "shared_", t, c->shared_experts * c->moe_inter / tp, tp);
    } else {
        mlp(b, c, "", t, c->intermediate / tp, tp);
    }
    if (tp > 1) add_comm(b, "mlp_all_reduce", LLM_ALL_REDUCE, tp, act);
    residual(b, "mlp_residual", t, h);
}

int llm_kinds_parse(const char *list, unsigned *mask, opm_error *err)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        {"gemm", LLM_K_GEMM}, {"attention", LLM_K_ATTENTION}, {"norm", LLM_K_NORM},
        {"elementwise", LLM_K_ELEMENTWISE}, {"rope", LLM_K_ROPE}, {"embedding", LLM_K_EMBEDDING},
        {"moe", LLM_K_MOE}, {"comm", LLM_K_COMM}, {"optimizer", LLM_K_OPTIMIZER}, {"ssm", LLM_K_SSM},
    };
    *mask = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        size_t i = 0;
        for (; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && !strncmp(names[i].name, p, n)) break;
        if (i == sizeof names / sizeof names[0])
            return opm_err(err, OPM_EINVAL, "only",
                           "unknown kind '%.*s' (gemm, attention, norm, elementwise, rope, embedding, moe, comm, "
                           "optimizer, ssm)",
                           (int)n, p);
        *mask |= names[i].bit;
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

void llm_step_free(llm_step *s)
{
    for (size_t i = 0; i < s->n_ops; i++) opm_op_free(s->ops[i].op);
    free(s->ops);
    memset(s, 0, sizeof *s);
}

/* Weights on one device: layers split by pp (the largest stage), matrices
 * by tp, experts by ep; norms and the router replicated; the embedding and
 * head split by tp (vocabulary parallel) and counted on every stage, which
 * over-states a middle stage by at most one table. */
static uint64_t layer_params_per_device(const llm_config *c, const llm_step_spec *sp, int64_t l)
{
    uint64_t tp = (uint64_t)sp->tp, ep = (uint64_t)sp->ep, h = (uint64_t)c->hidden;
    int f = llm_layer_ffn(c, l);
    uint64_t p = (llm_layer_mixer(c, l) == LLM_MIX_SSM ? llm_ssm_params(c) : llm_attn_params(c)) / tp +
                 (f == LLM_FFN_NONE ? 1 : 2) * llm_norm_params(c);
    if (llm_layer_mixer(c, l) == LLM_MIX_SSM && c->ssm == 2 && c->ssm_groups < sp->tp) {
        /* B/C groups replicated: their projection and conv weights on every device */
        uint64_t bc = 2 * (uint64_t)c->ssm_groups * (uint64_t)c->ssm_state;
        uint64_t w = bc * (h + (uint64_t)c->ssm_proj_bias + (uint64_t)c->ssm_conv + (uint64_t)c->ssm_conv_bias);
        p += w - w / tp;
    }
    if (f == LLM_FFN_DENSE) p += llm_mlp_params(c, c->intermediate) / tp;
    if (f == LLM_FFN_MOE)
        p += h * (uint64_t)c->experts + (uint64_t)c->experts * llm_mlp_params(c, c->moe_inter) / (tp * ep) +
             (uint64_t)c->shared_experts * llm_mlp_params(c, c->moe_inter) / tp;
    return p;
}

static uint64_t params_per_device(const llm_config *c, const llm_step_spec *sp)
{
    uint64_t tp = (uint64_t)sp->tp, h = (uint64_t)c->hidden, v = (uint64_t)c->vocab;
    int64_t per_stage = ceil_div(c->layers, sp->pp);
    uint64_t p = 0;
    /* the last stage: the one with the most MoE layers when they follow dense ones */
    for (int64_t l = c->layers - per_stage; l < c->layers; l++) p += layer_params_per_device(c, sp, l);
    p += (v * h + (c->tied ? 0 : v * h)) / tp + llm_norm_params(c);
    if (c->learned_pos) p += (uint64_t)(c->max_pos + c->type_vocab) * h;
    return p;
}

/* Cached state per device of the last stage's layers: attention keeps K and
 * V of every cached token (a sliding-window layer at most W of them), an
 * SSM layer its fixed recurrent state (heads × head_dim × state, in the
 * kv dtype, as vLLM's mamba cache keeps it) and the conv's last W − 1 inputs,
 * whatever the context. */
static uint64_t cache_bytes(const llm_config *c, const llm_step_spec *sp, int64_t cached)
{
    int64_t per_stage = ceil_div(c->layers, sp->pp), tp = sp->tp;
    double kb = opm_dtype_bytes(sp->kv_dtype), total = 0;
    double per_tok = c->mla ? (double)(c->kv_lora + c->qk_rope)
                            : 2.0 * (double)(c->kv_heads >= tp ? c->kv_heads / tp : 1) * (double)c->head_dim;
    double di = c->ssm ? (double)(llm_ssm_inner(c) / tp) : 0, n = (double)c->ssm_state;
    double conv_dim = c->ssm == 2 ? di + 2.0 * (double)(c->ssm_groups >= tp ? c->ssm_groups / tp : 1) * n : di;
    double ssm = di * n + (double)(c->ssm_conv - 1) * conv_dim; /* Mamba-2: heads·head_dim = d_inner */
    for (int64_t l = c->layers - per_stage; l < c->layers; l++) {
        int m = llm_layer_mixer(c, l);
        int64_t tok = m == LLM_MIX_SWA && c->sliding_window < cached ? c->sliding_window : cached;
        total += m == LLM_MIX_SSM ? ssm : (double)tok * per_tok;
    }
    return u64((double)sp->batch * total * kb);
}

/* The checks llm_step_build makes before building: a sweep runs them on
 * every point first, so it fails before printing anything. */
int llm_spec_check(const llm_config *c, const llm_step_spec *sp, opm_error *err)
{
    opm_error_clear(err);
    if (sp->batch < 1 || sp->seq < 1 || sp->context < 0 || sp->tp < 1 || sp->pp < 1 || sp->ep < 1)
        return opm_err(err, OPM_EINVAL, "batch", "batch, seq, tp, pp and ep must be at least 1 and context at least 0");
    /* bounds that keep every size product below 2^63 (configs cap their sizes at 2^24) */
    if (sp->batch > (1 << 24) || sp->seq > (1 << 24) || sp->batch * sp->seq > (INT64_C(1) << 36))
        return opm_err(err, OPM_EINVAL, sp->seq > (1 << 24) ? "seq" : "batch",
                       "expected batch and seq at most 2^24 (batch x seq at most 2^36), got %lld and %lld",
                       (long long)sp->batch, (long long)sp->seq);
    if (sp->context > (INT64_C(1) << 32))
        return opm_err(err, OPM_EINVAL, "context", "expected at most 2^32, got %lld", (long long)sp->context);
    if (sp->tp > (1 << 20) || sp->pp > (1 << 20) || sp->ep > (1 << 20))
        return opm_err(err, OPM_EINVAL, sp->tp > (1 << 20) ? "tp" : sp->pp > (1 << 20) ? "pp" : "ep",
                       "expected tp, pp and ep at most 2^20");
    if (sp->phase == LLM_DECODE && sp->context < 1)
        return opm_err(err, OPM_EINVAL, "context", "decode needs --context ≥ 1 (the tokens attended to)");
    if (c->encoder && sp->phase == LLM_DECODE)
        return opm_err(err, OPM_EUNSUPPORTED, "phase", "%s is an encoder: it has no decode step", c->name);
    int attention = !c->ssm || c->attn_period > 0;
    if ((attention && (c->heads % sp->tp || (c->kv_heads > sp->tp ? c->kv_heads % sp->tp : sp->tp % c->kv_heads))) ||
        (!c->no_mlp && c->intermediate % sp->tp) || (c->experts && c->moe_inter % sp->tp))
        return opm_err(err, OPM_EINVAL, "tp",
                       "%lld does not divide the heads (%lld), kv heads (%lld) and intermediate sizes (%lld, %lld)",
                       (long long)sp->tp, (long long)c->heads, (long long)c->kv_heads, (long long)c->intermediate,
                       (long long)c->moe_inter);
    if (c->ssm && (llm_ssm_inner(c) % sp->tp || (c->ssm == 2 && (c->ssm_heads % sp->tp ||
                                                                   (c->ssm_groups >= sp->tp ? c->ssm_groups % sp->tp
                                                                                            : sp->tp % c->ssm_groups)))))
        return opm_err(err, OPM_EINVAL, "tp",
                       "%lld does not divide the SSM's channels (%lld), heads (%lld) and groups (%lld)",
                       (long long)sp->tp, (long long)llm_ssm_inner(c), (long long)c->ssm_heads,
                       (long long)c->ssm_groups);
    if (sp->pp > c->layers)
        return opm_err(err, OPM_EINVAL, "pp", "%lld stages for %lld layers", (long long)sp->pp, (long long)c->layers);
    if (sp->ep > 1 && (!c->experts || c->experts % sp->ep))
        return opm_err(err, OPM_EINVAL, "ep", "%lld does not divide the experts (%lld)", (long long)sp->ep,
                       (long long)c->experts);

    return 0;
}

int llm_step_build(const llm_config *c, const llm_step_spec *sp, llm_step *s, opm_error *err)
{
    memset(s, 0, sizeof *s);
    int bad = llm_spec_check(c, sp, err);
    if (bad) return bad;

    builder b = {s, 0, sp, sp->kinds_mask, OPM_PHASE_INFERENCE, -1, 1, err, 0};
    b.phase = sp->phase == LLM_PREFILL ? OPM_PHASE_PREFILL : sp->phase == LLM_DECODE ? OPM_PHASE_DECODE
                                                                                       : OPM_PHASE_TRAIN_FWD;
    int64_t sq = sp->phase == LLM_DECODE ? 1 : sp->seq, t = sp->batch * sq, h = c->hidden;
    s->tokens = t;
    s->out_tokens = sp->phase == LLM_DECODE ? sp->batch : t;
    double ab = opm_dtype_bytes(sp->dtype);

    /* Layer groups: one per (mixer, feed-forward) type, in order of first
     * appearance (dense then MoE for DeepSeek; Jamba's three kinds). */
    for (int64_t l = 0; l < c->layers; l++) {
        int m = llm_layer_mixer(c, l), f = llm_layer_ffn(c, l);
        size_t g = 0;
        while (g < s->n_groups && (s->groups[g].mixer != m || s->groups[g].ffn != f)) g++;
        if (g == s->n_groups) {
            static const char *const mix[] = {"", "swa_", "ssm_"}, *const ff[] = {"dense", "moe", ""};
            llm_layer_group *gr = &s->groups[s->n_groups++]; /* at most 3 × 3 types */
            *gr = (llm_layer_group){l, 0, m, f, ""};
            if (c->encoder) opm_strlcpy(gr->label, "encoder", sizeof gr->label);
            else if (f == LLM_FFN_NONE)
                opm_strlcpy(gr->label, m == LLM_MIX_SSM ? "ssm" : m == LLM_MIX_SWA ? "swa" : "attn", sizeof gr->label);
            else snprintf(gr->label, sizeof gr->label, "%s%s", mix[m], ff[f]);
        }
        s->groups[g].count++;
    }

    {
        b.group = -1;
        b.count = 1;
        add_op(&b, LLM_K_EMBEDDING, "embed", "embedding", 1,
               "\"tokens\": %lld, \"vocab\": %lld, \"dim\": %lld, \"dtype\": \"%s\"", (long long)t, (long long)c->vocab,
               (long long)h, dt(sp->dtype));
        for (size_t g = 0; g < s->n_groups; g++) {
            b.group = (int)g;
            b.count = s->groups[g].count;
            layer(&b, c, s->groups[g].mixer, s->groups[g].ffn);
        }
        b.group = -1;
        b.count = 1;
        b.count = sp->pp - 1; /* one activation send per stage boundary */
        if (sp->pp > 1) add_comm(&b, "pipeline_send", LLM_P2P, 2, u64((double)t * (double)h * ab));
        b.count = 1;
        if (!c->encoder) {
            norm(&b, c, "final_norm", t, h);
            int64_t head_rows = sp->phase == LLM_DECODE ? sp->batch : t;
            gemm(&b, "lm_head", head_rows, ceil_div(c->vocab, sp->tp), h, 0, sp->tp);
        }
    }
    if (sp->phase == LLM_TRAIN && !b.failed) {
        /* Backward: every forward op again in train_bwd, in reverse order. */
        size_t nf = s->n_ops;
        for (size_t i = nf; i-- > 0 && !b.failed;) {
            opm_op *op = NULL;
            if (s->ops[i].op && !(op = opm_op_clone(s->ops[i].op, err))) {
                b.failed = OPM_ENOMEM;
                break;
            }
            if (op) opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD);
            char name[48], kind[24];
            snprintf(name, sizeof name, "%.38s_bwd", s->ops[i].name);
            opm_strlcpy(kind, s->ops[i].kind, sizeof kind);
            b.group = s->ops[i].group;
            b.count = s->ops[i].count;
            int64_t shards = s->ops[i].shards;
            uint64_t cb = s->ops[i].comm_bytes;
            llm_collective coll = s->ops[i].collective;
            int64_t devices = s->ops[i].comm_devices;
            llm_step_op *o = push(&b, name, kind, shards); /* may move s->ops */
            if (!o) {
                opm_op_free(op);
                break;
            }
            o->op = op;
            o->comm_bytes = cb;
            o->collective = coll;
            o->comm_devices = devices;
        }
    }

    s->params = llm_config_params(c);
    s->params_per_device = params_per_device(c, sp);
    double wb = opm_dtype_bytes(sp->dtype);
    s->weights_bytes = u64((double)s->params_per_device * wb);
    if (sp->phase != LLM_TRAIN) {
        int64_t cached = sp->phase == LLM_DECODE ? sp->context : sp->context + sp->seq;
        s->kv_cache_bytes = cache_bytes(c, sp, cached);
        /* Working set: a layer's widest activations twice (in and out) and
         * the logits. */
        double width = (double)h;
        double inter = (double)(c->gated ? 2 : 1) * (double)(c->experts ? c->moe_inter * c->top_k : c->intermediate) /
                       (double)sp->tp;
        if (inter > width) width = inter;
        double ssm_in = c->ssm ? (double)(2 * llm_ssm_inner(c) + 2 * c->ssm_groups * c->ssm_state + c->ssm_heads) /
                                     (double)sp->tp
                               : 0;
        if (c->no_mlp) width = (double)h;
        if (ssm_in > width) width = ssm_in;
        double logits = (double)(sp->phase == LLM_DECODE ? sp->batch : t) * (double)ceil_div(c->vocab, sp->tp);
        s->activation_bytes = u64((2.0 * (double)t * width + logits) * ab);
    } else {
        /* Saved activations with flash attention (Korthikanti et al. 2022,
         * "Reducing Activation Recomputation", 34·s·b·h bytes per layer at
         * 16-bit without the s² term), split by tp, layers by pp. */
        s->activation_bytes = u64(34.0 * (double)t * (double)h / (double)sp->tp *
                                         (double)ceil_div(c->layers, sp->pp) * ab / 2.0);
        /* Mixed-precision Adam: fp32 master weights, two fp32 moments and the
         * gradient in the training dtype. */
        s->optimizer_bytes = u64((double)s->params_per_device * (12.0 + wb));
        if (keep(&b, LLM_K_OPTIMIZER) && !b.failed) {
            b.group = -1;
            b.count = 1;
            b.phase = OPM_PHASE_INFERENCE;
            /* Adam's update reads weight, grad, m, v and writes them back; as
             * one elementwise pass over the device's parameters in fp32
             * (reads counted; the three extra writes are not). */
            uint64_t n = s->params_per_device;
            add_op(&b, LLM_K_OPTIMIZER, "adam_update", "elementwise", (int64_t)(sp->tp * sp->pp * sp->ep),
                   "\"op\": \"adam\", \"op_count_per_element\": 12, \"inputs\": [[%llu], [%llu], [%llu], [%llu]], \"dtype\": \"fp32\"",
                   (unsigned long long)n, (unsigned long long)n, (unsigned long long)n, (unsigned long long)n);
        }
    }
    if (b.failed) {
        int rc = b.failed;
        llm_step_free(s);
        return rc;
    }
    return 0;
}

int llm_step_predict(llm_step *s, const llm_step_spec *sp, const opm_hardware *hw, opm_error *err)
{
    const opm_model *m = opm_model_find(sp->model);
    if (!m) return opm_err(err, OPM_ENOTFOUND, "model", "no model named '%s' (see `opmodel models`)", sp->model);
    /* Communication is timed from the hardware's interconnect fields; a
     * description without them, or a group larger than its scale-up domain
     * (the scale-out network is not described), leaves it at 0 s and says so. */
    const opm_interconnect *ic = opm_hardware_interconnect(hw);
    s->has_link = 1;
    for (size_t i = 0; i < s->n_ops; i++) {
        llm_step_op *o = &s->ops[i];
        if (!o->op) {
            memset(&o->prof, 0, sizeof o->prof);
            o->timed = ic && (ic->domain_devices <= 0 || (double)o->comm_devices <= ic->domain_devices);
            if (o->timed)
                o->prof.latency_s = llm_collective_time_s(o->collective, (double)o->comm_bytes, o->comm_devices, ic);
            s->has_link &= o->timed;
            continue;
        }
        int rc = opm_predict(m->name, o->op, hw, &o->prof, err);
        if (rc) {
            opm_err_prefix(err, o->name);
            return rc;
        }
    }
    return 0;
}
