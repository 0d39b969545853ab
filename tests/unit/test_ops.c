/* test_ops.c — FLOP and byte counts of every kind, forward and backward,
 * written out by hand; property checks (monotone in every dimension,
 * backward ≥ forward, causal ≤ full); overflow detection. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"

Test(ops, gemm_forward_and_backward)
{
    opm_counts f = counts_of("kind: gemm\nm: 100\nn: 30\nk: 70\ndtype: bf16\nbias: true\n");
    cr_assert_eq(f.matrix_flops, 2ull * 100 * 30 * 70);
    cr_assert_eq(f.vector_flops, 100ull * 30);
    cr_assert_eq(f.read_bytes, (100ull * 70 + 70 * 30 + 30) * 2);
    cr_assert_eq(f.write_bytes, 100ull * 30 * 2);
    cr_assert_eq(f.weight_bytes, (70ull * 30 + 30) * 2);
    opm_counts b = counts_of("kind: gemm\nphase: train_bwd\nm: 100\nn: 30\nk: 70\ndtype: bf16\nbias: true\n");
    cr_assert_eq(b.matrix_flops, 4ull * 100 * 30 * 70);
    cr_assert_eq(b.read_bytes, (100ull * 30 + 100 * 70 + 70 * 30) * 2);
    cr_assert_eq(b.write_bytes, (100ull * 70 + 70 * 30 + 30) * 2);
}

Test(ops, gemm_leading_dims_fold_into_m_and_out_dtype)
{
    opm_counts c = counts_of("kind: gemm\ntensors:\n"
                             "  - {role: input, shape: [4, 16, 32], dtype: fp8_e4m3}\n"
                             "  - {role: weight, shape: [64, 32], dtype: fp8_e4m3}\n"
                             "  - {role: output, shape: [4, 16, 64], dtype: bf16}\n"
                             "attrs: {transpose_b: true}\n");
    cr_assert_eq(c.matrix_flops, 2ull * 64 * 64 * 32);
    cr_assert_eq(c.read_bytes, 64ull * 32 + 64 * 32);
    cr_assert_eq(c.write_bytes, 64ull * 64 * 2);
    cr_assert_eq(c.compute_dtype, OPM_FP8_E4M3);
}

Test(ops, sub_byte_dtypes_round_up)
{
    cr_assert_eq(opm_dtype_bits(OPM_INT4), 4);
    cr_assert_float_eq(opm_dtype_bytes(OPM_FP4_E2M1), 0.5, 0);
    opm_counts c = counts_of("kind: copy\nshape: [3, 5]\ndtype: int4\nout_dtype: fp16\n");
    cr_assert_eq(c.read_bytes, 8); /* 15 × 4 bits = 60 bits → 8 bytes */
    cr_assert_eq(c.write_bytes, 30);
}

Test(ops, batched_gemm_broadcast_weight)
{
    opm_counts c = counts_of("kind: batched_gemm\ntensors:\n"
                             "  - {role: input, shape: [8, 16, 32], dtype: fp16}\n"
                             "  - {role: weight, shape: [32, 24], dtype: fp16}\n"
                             "  - {role: output, shape: [8, 16, 24], dtype: fp16}\n");
    cr_assert_eq(c.matrix_flops, 2ull * 8 * 16 * 24 * 32);
    cr_assert_eq(c.read_bytes, (8ull * 16 * 32 + 32 * 24) * 2);
}

/* Unmasked scores of a bottom-right causal mask, by brute force. */
static uint64_t brute_causal(int64_t sq, int64_t skv)
{
    uint64_t n = 0;
    for (int64_t i = 0; i < sq; i++)
        for (int64_t j = 0; j < skv; j++) n += j <= i + skv - sq;
    return n;
}

Test(ops, attention_causal_counts_exact)
{
    const int64_t cases[][2] = {{1, 1}, {7, 7}, {5, 13}, {13, 5}, {1, 100}, {100, 1}, {64, 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char y[512];
        snprintf(y, sizeof y,
                 "kind: attention_prefill\nbatch: 2\nseq_q: %lld\nseq_kv: %lld\nheads: 4\nkv_heads: 2\n"
                 "head_dim_qk: 24\nhead_dim_v: 16\ncausal: true\ndtype: bf16\n",
                 (long long)cases[i][0], (long long)cases[i][1]);
        opm_counts c = counts_of(y);
        uint64_t n = brute_causal(cases[i][0], cases[i][1]);
        cr_assert_eq(c.matrix_flops, 2ull * 2 * 4 * n * (24 + 16), "case %zu", i);
        cr_assert_eq(c.vector_flops, 5ull * 2 * 4 * n);
    }
}

Test(ops, attention_bytes_in_own_dtypes_gqa_decode)
{
    opm_counts c = counts_of("kind: attention_decode\nbatch: 3\nseq_kv: 100\nheads: 8\nkv_heads: 2\n"
                             "head_dim: 64\ndtype: bf16\nkv_dtype: fp8_e4m3\n");
    uint64_t q = 3 * 1 * 8 * 64 * 2, kv = 3 * 100 * 2 * 64 * 1;
    cr_assert_eq(c.read_bytes, q + 2 * kv);
    cr_assert_eq(c.write_bytes, q);
    cr_assert_eq(c.matrix_flops, 2ull * 3 * 8 * 100 * 128);
}

Test(ops, attention_backward)
{
    const char *base = "kind: attention_prefill\nbatch: 1\nseq_q: 32\nseq_kv: 32\nheads: 2\nhead_dim: 16\ndtype: fp16\n";
    char y[512];
    snprintf(y, sizeof y, "%sphase: train_bwd\n", base);
    opm_counts b = counts_of(y);
    uint64_t n = 2 * 32 * 32;
    cr_assert_eq(b.matrix_flops, 2 * n * (3 * 16 + 2 * 16));
    uint64_t t = 32 * 2 * 16 * 2;
    cr_assert_eq(b.read_bytes, 5 * t);
    cr_assert_eq(b.write_bytes, 3 * t);
    snprintf(y, sizeof y, "%sphase: train_bwd\nflash_recompute: false\n", base);
    opm_counts nr = counts_of(y);
    cr_assert_eq(nr.matrix_flops, 2 * n * (2 * 16 + 2 * 16));
    cr_assert_eq(nr.read_bytes, 5 * t + n * 2);
}

Test(ops, norms)
{
    opm_counts ln = counts_of("kind: layernorm\nshape: [10, 20]\ndtype: fp32\n");
    /* Statistics cost 3 per element (Σx, Σx², centre) plus 3 per row, as the
     * reference reports pin down; see docs/ops.md. */
    cr_assert_eq(ln.vector_flops, 200 * 7 + 10 * 3);
    cr_assert_eq(ln.read_bytes, (200 + 2 * 20) * 4);
    cr_assert_eq(ln.write_bytes, 200 * 4);
    opm_counts lnt = counts_of("kind: layernorm\nphase: train_fwd\nshape: [10, 20]\ndtype: fp32\naffine: false\n");
    cr_assert_eq(lnt.vector_flops, 200 * 5 + 10 * 3);
    cr_assert_eq(lnt.read_bytes, 200 * 4);
    cr_assert_eq(lnt.write_bytes, 200 * 4 + 10 * 8);
    opm_counts rms = counts_of("kind: rmsnorm\nshape: [10, 20]\ndtype: bf16\n");
    cr_assert_eq(rms.vector_flops, 200 * 4 + 10 * 2);
    cr_assert_eq(rms.read_bytes, (200 + 20) * 2);
    opm_counts rb = counts_of("kind: rmsnorm\nphase: train_bwd\nshape: [10, 20]\ndtype: bf16\n");
    cr_assert_eq(rb.vector_flops, 200 * 10);
    cr_assert_eq(rb.read_bytes, 200 * 2 * 2 + 20 * 2 + 10 * 4);
    cr_assert_eq(rb.write_bytes, 200 * 2 + 20 * 2);
    opm_counts ns = counts_of("kind: layernorm\nshape: [2, 3, 4]\ndtype: fp32\nnormalized_shape: [3, 4]\n");
    cr_assert_eq(ns.read_bytes, (24 + 2 * 12) * 4);
}

Test(ops, elementwise_broadcast_and_weights)
{
    opm_counts c = counts_of("kind: elementwise\ninputs: [[4, 1, 8], [3, 1], []]\ndtype: fp16\nop: gelu\n");
    cr_assert_eq(c.vector_flops, 4ull * 3 * 8 * 8);
    cr_assert_eq(c.read_bytes, (32 + 3 + 1) * 2);
    cr_assert_eq(c.write_bytes, 96 * 2);
    opm_counts n = counts_of("kind: elementwise\nshape: [10]\ndtype: fp32\nop_count_per_element: 3\n");
    cr_assert_eq(n.vector_flops, 30);
    opm_counts d = counts_of("kind: elementwise\nshape: [10]\ndtype: fp32\n");
    cr_assert_eq(d.vector_flops, 10);
    opm_counts b = counts_of("kind: elementwise\nphase: train_bwd\ninputs: [[10], [10]]\ndtype: fp32\nop: mul\n");
    cr_assert_eq(b.read_bytes, 3 * 40);
    cr_assert_eq(b.write_bytes, 2 * 40);
}

Test(ops, reductions)
{
    opm_counts c = counts_of("kind: reduction\nshape: [6, 7, 8]\ndim: [0, -1]\ndtype: fp32\n");
    cr_assert_eq(c.vector_flops, 336);
    cr_assert_eq(c.read_bytes, 336 * 4);
    cr_assert_eq(c.write_bytes, 7 * 4);
    opm_counts m = counts_of("kind: reduction\nshape: [6, 8]\ndim: 1\nkeepdim: true\nop: mean\ndtype: fp32\n");
    cr_assert_eq(m.vector_flops, 48 + 6);
    opm_counts all = counts_of("kind: reduction\nshape: [6, 8]\ndtype: bf16\n");
    cr_assert_eq(all.write_bytes, 2);
}

Test(ops, softmax_embedding_copy)
{
    opm_counts s = counts_of("kind: softmax\nshape: [4, 100]\ndtype: fp32\n");
    cr_assert_eq(s.vector_flops, 400 * 8);
    cr_assert_eq(s.read_bytes, 1600);
    opm_counts sb = counts_of("kind: softmax\nphase: train_bwd\nshape: [4, 100]\ndtype: fp32\n");
    cr_assert_eq(sb.vector_flops, 400 * 4);
    cr_assert_eq(sb.read_bytes, 3200);
    opm_counts e = counts_of("kind: embedding\ntokens: 10\nvocab: 1000\ndim: 16\ndtype: bf16\n");
    cr_assert_eq(e.read_bytes, 10 * 8 + 10 * 16 * 2);
    cr_assert_eq(e.write_bytes, 10 * 16 * 2);
    opm_counts few = counts_of("kind: embedding\ntokens: 100\nvocab: 4\ndim: 16\ndtype: bf16\n");
    cr_assert_eq(few.read_bytes, 100 * 8 + 4 * 16 * 2);
    opm_counts eb = counts_of("kind: embedding\nphase: train_bwd\ntokens: 10\nvocab: 1000\ndim: 16\ndtype: bf16\n");
    cr_assert_eq(eb.vector_flops, 160);
    cr_assert_eq(eb.write_bytes, 1000 * 16 * 2 + 10 * 16 * 2);
    opm_counts cp = counts_of("kind: copy\nphase: train_bwd\nshape: [5]\ndtype: fp32\nout_dtype: bf16\n");
    cr_assert_eq(cp.read_bytes, 10);
    cr_assert_eq(cp.write_bytes, 20);
    cr_assert_eq(cp.matrix_flops + cp.vector_flops, 0);
}

Test(ops, overflow_is_reported_not_wrapped)
{
    opm_op *op = op_yaml("kind: gemm\nm: 4000000000\nn: 4000000000\nk: 4000000000\ndtype: bf16\n");
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), OPM_EOVERFLOW);
    cr_assert(strstr(err.message, "overflow"));
    opm_op_free(op);
}

/* Properties over a grid: every count is monotone in every dimension, and
 * backward ≥ forward, causal ≤ full. */
static opm_counts gemm_c(int64_t m, int64_t n, int64_t k, const char *phase)
{
    char y[256];
    snprintf(y, sizeof y, "kind: gemm\nphase: %s\nm: %lld\nn: %lld\nk: %lld\ndtype: bf16\n", phase,
             (long long)m, (long long)n, (long long)k);
    return counts_of(y);
}

static opm_counts attn_c(int64_t b, int64_t sq, int64_t skv, int64_t h, int64_t d, int causal, const char *phase)
{
    char y[400];
    snprintf(y, sizeof y, "kind: attention_prefill\nphase: %s\nbatch: %lld\nseq_q: %lld\nseq_kv: %lld\n"
             "heads: %lld\nhead_dim: %lld\ncausal: %s\ndtype: bf16\n", phase, (long long)b, (long long)sq,
             (long long)skv, (long long)h, (long long)d, causal ? "true" : "false");
    return counts_of(y);
}

static int leq(opm_counts a, opm_counts b)
{
    return a.matrix_flops + a.vector_flops <= b.matrix_flops + b.vector_flops &&
           a.read_bytes + a.write_bytes <= b.read_bytes + b.write_bytes;
}

Test(ops, properties_monotone_backward_causal)
{
    const int64_t v[] = {1, 3, 64, 129};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++) {
                opm_counts base = gemm_c(v[i], v[j], v[k], "inference");
                if (i < 3) cr_assert(leq(base, gemm_c(v[i + 1], v[j], v[k], "inference")));
                if (j < 3) cr_assert(leq(base, gemm_c(v[i], v[j + 1], v[k], "inference")));
                if (k < 3) cr_assert(leq(base, gemm_c(v[i], v[j], v[k + 1], "inference")));
                cr_assert(leq(base, gemm_c(v[i], v[j], v[k], "train_bwd")));
            }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int causal = 0; causal < 2; causal++) {
                opm_counts a = attn_c(2, v[i], v[j], 4, 32, causal, "inference");
                if (i < 3) cr_assert(leq(a, attn_c(2, v[i + 1], v[j], 4, 32, causal, "inference")));
                if (j < 3) cr_assert(leq(a, attn_c(2, v[i], v[j + 1], 4, 32, causal, "inference")));
                cr_assert(leq(a, attn_c(3, v[i], v[j], 4, 32, causal, "inference")));
                cr_assert(leq(a, attn_c(2, v[i], v[j], 8, 32, causal, "inference")));
                cr_assert(leq(a, attn_c(2, v[i], v[j], 4, 64, causal, "inference")));
                cr_assert(leq(a, attn_c(2, v[i], v[j], 4, 32, causal, "train_bwd")));
                if (causal) cr_assert(leq(a, attn_c(2, v[i], v[j], 4, 32, 0, "inference")));
            }
}

/* Builders keep the counts on the op; a change after the build must not be
 * answered from the kept counts. */
Test(ops, kept_counts_follow_changes)
{
    opm_error err;
    opm_op *op = opm_op_attention(1, 512, 512, 8, 8, 64, 0, OPM_BF16, &err);
    cr_assert_not_null(op, "%s", err.message);
    opm_counts full, causal, again, phase;
    cr_assert_eq(opm_op_count(op, &full, &err), 0);
    cr_assert_eq(opm_op_set_bool(op, "causal", 1, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_count(op, &causal, &err), 0);
    cr_assert_lt(causal.matrix_flops, full.matrix_flops);
    opm_op *copy = opm_op_clone(op, &err);
    cr_assert_not_null(copy);
    cr_assert_eq(opm_op_count(copy, &again, &err), 0);
    cr_assert_eq(again.matrix_flops, causal.matrix_flops);
    cr_assert_eq(opm_op_unset(op, "causal"), 1);
    cr_assert_eq(opm_op_count(op, &again, &err), 0);
    cr_assert_eq(again.matrix_flops, full.matrix_flops);
    cr_assert_eq(opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD), 0);
    cr_assert_eq(opm_op_count(op, &phase, &err), 0);
    cr_assert_gt(phase.matrix_flops, full.matrix_flops);
    int64_t w[4] = {1, 512, 8, 64};
    cr_assert_eq(opm_op_add_tensor(copy, OPM_ROLE_WORKSPACE, w, 4, OPM_BF16, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_count(copy, &again, &err), 0);
    cr_assert_eq(again.workspace_bytes, 512ull * 8 * 64 * 2);
    opm_op_free(copy);
    opm_op_free(op);
}

/* A finished op changed through the API (an attribute, the phase, an unset)
 * counts exactly like one written that way: the counts it keeps are redone
 * at each change, never left stale. */
Test(ops, counts_kept_through_api_changes)
{
    opm_error err;
    opm_op *op = opm_op_gemm(100, 30, 70, OPM_BF16, &err);
    cr_assert_not_null(op, "%s", err.message);
    cr_assert_eq(opm_op_set_bool(op, "bias", 1, &err), 0, "%s", err.message);
    opm_counts got, want = counts_of("kind: gemm\nm: 100\nn: 30\nk: 70\ndtype: bf16\nbias: true\n");
    cr_assert_eq(opm_op_count(op, &got, &err), 0, "%s", err.message);
    cr_assert_eq(got.read_bytes, want.read_bytes);
    cr_assert_eq(got.vector_flops, want.vector_flops);
    cr_assert_eq(opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD), 0);
    want = counts_of("kind: gemm\nphase: train_bwd\nm: 100\nn: 30\nk: 70\ndtype: bf16\nbias: true\n");
    cr_assert_eq(opm_op_count(op, &got, &err), 0, "%s", err.message);
    cr_assert_eq(got.matrix_flops, want.matrix_flops);
    cr_assert_eq(got.write_bytes, want.write_bytes);
    cr_assert_eq(opm_op_unset(op, "bias"), 1);
    want = counts_of("kind: gemm\nphase: train_bwd\nm: 100\nn: 30\nk: 70\ndtype: bf16\n");
    cr_assert_eq(opm_op_count(op, &got, &err), 0, "%s", err.message);
    cr_assert_eq(got.read_bytes, want.read_bytes);
    cr_assert_eq(got.write_bytes, want.write_bytes);
    /* A kernel hint changes no count and keeps them. */
    cr_assert_eq(opm_op_set_int(op, "cta_tile_m", 128, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_count(op, &got, &err), 0, "%s", err.message);
    cr_assert_eq(got.read_bytes, want.read_bytes);
    opm_op_free(op);
}
