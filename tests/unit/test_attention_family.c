/* test_attention_family.c — `attention`, `attention_prefill`,
 * `attention_decode`: counts written out by hand for every variant (MHA,
 * GQA/MQA, MLA head dims, bottom-right causal, sliding window, variable-length
 * batches dense and packed, paged decode with block table and fp8 KV scales,
 * backward with and without the flash recompute); the masked-score closed form
 * against brute force; properties (monotone in every dimension, backward ≥
 * forward, causal ≤ full, window ≤ full); rejected inputs; and the golden
 * rows: every SDPA_fwd.csv under tests/data/tracelens/ and the sglang_decode
 * InferenceAttention_fwd.csv. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "golden.h"
#include "testutil.h"

static int same_counts(opm_counts a, opm_counts b)
{
    return a.matrix_flops == b.matrix_flops && a.vector_flops == b.vector_flops &&
           a.read_bytes == b.read_bytes && a.write_bytes == b.write_bytes &&
           a.input_bytes == b.input_bytes && a.output_bytes == b.output_bytes &&
           a.weight_bytes == b.weight_bytes && a.compute_dtype == b.compute_dtype;
}

/* Parse + validate + count must fail with `want` in the message. */
static void expect_error(const char *yaml, const char *want)
{
    opm_error err;
    opm_error_clear(&err);
    opm_op *op = opm_op_parse_string(yaml, strlen(yaml), OPM_FORMAT_YAML, "<test>", 1, &err);
    if (op) {
        opm_counts c;
        int rc = opm_op_count(op, &c, &err);
        opm_op_free(op);
        cr_assert_neq(rc, 0, "accepted:\n%s", yaml);
    }
    cr_assert(strstr(err.message, want), "expected '%s' in '%s'", want, err.message);
}

/* ---- forward, by hand ---- */

Test(attention_family, forward_mha_by_hand)
{
    /* B=2, Sq=3, Skv=5, H=4, D=8, bf16: 15 scores per (b, h). */
    opm_counts c = counts_of("kind: attention\nbatch: 2\nseq_q: 3\nseq_kv: 5\nheads: 4\nhead_dim: 8\ndtype: bf16\n");
    cr_assert_eq(c.matrix_flops, 3840);  /* 2·2·4·15·(8+8) */
    cr_assert_eq(c.vector_flops, 600);   /* 5·2·4·15 */
    cr_assert_eq(c.read_bytes, 1664);    /* q 384 + k 640 + v 640 */
    cr_assert_eq(c.write_bytes, 384);
    cr_assert_eq(c.input_bytes, 1664);
    cr_assert_eq(c.output_bytes, 384);
    cr_assert_eq(c.weight_bytes, 0);
    cr_assert_eq(c.compute_dtype, OPM_BF16);
}

Test(attention_family, three_names_count_alike)
{
    const char *body = "batch: 2\nseq_q: 7\nseq_kv: 19\nheads: 8\nkv_heads: 2\nhead_dim: 64\ncausal: true\n"
                       "window_left: 5\ndtype: fp16\n";
    char y[512];
    snprintf(y, sizeof y, "kind: attention\n%s", body);
    opm_counts a = counts_of(y);
    snprintf(y, sizeof y, "kind: attention_prefill\n%s", body);
    cr_assert(same_counts(a, counts_of(y)));
    snprintf(y, sizeof y, "kind: attention_decode\n%s", body);
    cr_assert(same_counts(a, counts_of(y)));
    /* decode's short form defaults seq_q to 1, as does phase decode for `attention` */
    opm_counts d1 = counts_of("kind: attention_decode\nbatch: 4\nseq_kv: 33\nheads: 4\nhead_dim: 16\ndtype: bf16\n");
    opm_counts d2 = counts_of("kind: attention\nphase: decode\nbatch: 4\nseq_kv: 33\nheads: 4\nhead_dim: 16\ndtype: bf16\n");
    cr_assert(same_counts(d1, d2));
    cr_assert_eq(d1.matrix_flops, 2ull * 4 * 4 * 33 * 32);
    /* the C builder gives the same op */
    opm_error err;
    opm_op *op = opm_op_attention(2, 64, 64, 8, 2, 32, 1, OPM_BF16, &err);
    cr_assert_not_null(op, "%s", err.message);
    opm_counts b;
    cr_assert_eq(opm_op_count(op, &b, &err), 0);
    opm_op_free(op);
    cr_assert(same_counts(b, counts_of("kind: attention\nbatch: 2\nseq_q: 64\nseq_kv: 64\nheads: 8\nkv_heads: 2\n"
                                       "head_dim: 32\ncausal: true\ndtype: bf16\n")));
}

Test(attention_family, gqa_mla_bytes_in_own_dtypes)
{
    /* MLA-like: Dqk 192, Dv 128; 16 query heads over 2 KV heads; q fp32,
     * k/v fp8, o bf16.  B=1, Sq=4, Skv=10. */
    opm_counts c = counts_of("kind: attention\nbatch: 1\nseq_q: 4\nseq_kv: 10\nheads: 16\nkv_heads: 2\n"
                             "head_dim_qk: 192\nhead_dim_v: 128\ndtype: fp32\nout_dtype: bf16\nkv_dtype: fp8_e4m3\n");
    cr_assert_eq(c.matrix_flops, 2ull * 16 * 40 * (192 + 128));
    cr_assert_eq(c.read_bytes, 4ull * 16 * 192 * 4 + 10ull * 2 * 192 * 1 + 10ull * 2 * 128 * 1);
    cr_assert_eq(c.write_bytes, 4ull * 16 * 128 * 2);
    cr_assert_eq(c.compute_dtype, OPM_FP32);
    /* 4-bit KV: half a byte per element, rounded up per tensor (10·1·3 = 30 elements → 15 bytes) */
    opm_counts f4 = counts_of("kind: attention\nbatch: 1\nseq_q: 1\nseq_kv: 10\nheads: 1\nhead_dim: 3\n"
                              "dtype: bf16\nkv_dtype: int4\n");
    cr_assert_eq(f4.read_bytes, 6 + 15 + 15);
    /* MQA: one KV head */
    opm_counts m = counts_of("kind: attention\nbatch: 3\nseq_q: 2\nseq_kv: 6\nheads: 8\nkv_heads: 1\nhead_dim: 16\ndtype: bf16\n");
    cr_assert_eq(m.read_bytes, (3ull * 2 * 8 * 16 + 2 * 3 * 6 * 1 * 16) * 2);
    cr_assert_eq(m.matrix_flops, 2ull * 3 * 8 * 12 * 32);
}

Test(attention_family, full_form_bhsd_equals_short_form)
{
    opm_counts s = counts_of("kind: attention\nbatch: 2\nseq_q: 5\nseq_kv: 9\nheads: 4\nkv_heads: 2\n"
                             "head_dim_qk: 24\nhead_dim_v: 16\ncausal: true\ndtype: bf16\n");
    opm_counts f = counts_of("kind: attention\ntensors:\n"
                             "  - {role: input, shape: [2, 4, 5, 24], dtype: bf16, layout: bhsd}\n"
                             "  - {role: input, shape: [2, 2, 9, 24], dtype: bf16, layout: bhsd}\n"
                             "  - {role: input, shape: [2, 2, 9, 16], dtype: bf16, layout: bhsd}\n"
                             "  - {role: output, shape: [2, 4, 5, 16], dtype: bf16, layout: bhsd}\n"
                             "attrs: {causal: true}\n");
    cr_assert(same_counts(s, f));
}

Test(attention_family, causal_bottom_right_by_hand)
{
    /* Sq=3, Skv=5: rows see 3, 4, 5 keys = 12.  Sq=5, Skv=3: 0, 0, 1, 2, 3 = 6. */
    opm_counts a = counts_of("kind: attention\nbatch: 1\nseq_q: 3\nseq_kv: 5\nheads: 1\nhead_dim: 4\ncausal: true\ndtype: bf16\n");
    cr_assert_eq(a.matrix_flops, 2ull * 12 * 8);
    opm_counts b = counts_of("kind: attention\nbatch: 1\nseq_q: 5\nseq_kv: 3\nheads: 1\nhead_dim: 4\ncausal: true\ndtype: bf16\n");
    cr_assert_eq(b.matrix_flops, 2ull * 6 * 8);
    cr_assert_eq(b.vector_flops, 5ull * 6);
    /* a query with no visible key still reads q and writes o */
    cr_assert_eq(b.read_bytes, (5ull * 4 + 2 * 3 * 4) * 2);
    cr_assert_eq(b.write_bytes, 5ull * 4 * 2);
}

Test(attention_family, sliding_window_by_hand)
{
    /* causal, sliding_window 3, S=6: rows see 1, 2, 3, 3, 3, 3 = 15 */
    opm_counts a = counts_of("kind: attention\nbatch: 1\nseq_q: 6\nseq_kv: 6\nheads: 1\nhead_dim: 1\ncausal: true\n"
                             "sliding_window: 3\ndtype: bf16\n");
    cr_assert_eq(a.matrix_flops, 2ull * 15 * 2);
    /* window_left 2 is the same window */
    opm_counts a2 = counts_of("kind: attention\nbatch: 1\nseq_q: 6\nseq_kv: 6\nheads: 1\nhead_dim: 1\ncausal: true\n"
                              "window_left: 2\ndtype: bf16\n");
    cr_assert(same_counts(a, a2));
    /* not causal, window (1, 2), S=5: rows see [i-1, i+2]: 3, 4, 4, 3, 2 = 16 */
    opm_counts b = counts_of("kind: attention\nbatch: 1\nseq_q: 5\nseq_kv: 5\nheads: 1\nhead_dim: 1\n"
                             "window_left: 1\nwindow_right: 2\ndtype: bf16\n");
    cr_assert_eq(b.matrix_flops, 2ull * 16 * 2);
    /* sliding_window 3 without causal is symmetric (2, 2): 3, 4, 5, 4, 3 = 19 */
    opm_counts c = counts_of("kind: attention\nbatch: 1\nseq_q: 5\nseq_kv: 5\nheads: 1\nhead_dim: 1\n"
                             "sliding_window: 3\ndtype: bf16\n");
    cr_assert_eq(c.matrix_flops, 2ull * 19 * 2);
    /* chunk of 2 queries at the end of 6 keys, causal, window_left 2: keys 2..4 and 3..5 = 6 */
    opm_counts d = counts_of("kind: attention\nbatch: 1\nseq_q: 2\nseq_kv: 6\nheads: 1\nhead_dim: 1\ncausal: true\n"
                             "window_left: 2\ndtype: bf16\n");
    cr_assert_eq(d.matrix_flops, 2ull * 6 * 2);
    /* causal caps window_right at 0 */
    opm_counts e = counts_of("kind: attention\nbatch: 1\nseq_q: 6\nseq_kv: 6\nheads: 1\nhead_dim: 1\ncausal: true\n"
                             "window_left: 2\nwindow_right: 4\ndtype: bf16\n");
    cr_assert(same_counts(a, e));
    /* -1 is unbounded */
    opm_counts f = counts_of("kind: attention\nbatch: 1\nseq_q: 6\nseq_kv: 6\nheads: 1\nhead_dim: 1\n"
                             "window_left: -1\nwindow_right: -1\ndtype: bf16\n");
    cr_assert_eq(f.matrix_flops, 2ull * 36 * 2);
}

/* Unmasked scores of one (sequence, head), by brute force. */
static uint64_t brute(int64_t sq, int64_t sk, int causal, int64_t wl, int64_t wr)
{
    uint64_t n = 0;
    for (int64_t i = 0; i < sq; i++)
        for (int64_t j = 0; j < sk; j++) {
            int64_t c = i + sk - sq;
            int vis = 1;
            if (causal && j > c) vis = 0;
            if (wl >= 0 && j < c - wl) vis = 0;
            if (wr >= 0 && j > c + wr) vis = 0;
            n += (uint64_t)vis;
        }
    return n;
}

Test(attention_family, window_closed_form_matches_brute_force)
{
    const int64_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33};
    const int64_t wins[] = {-1, 0, 1, 2, 5, 40};
    const size_t nl = sizeof lens / sizeof *lens, nw = sizeof wins / sizeof *wins;
    int checked = 0;
    for (size_t a = 0; a < nl; a++)
        for (size_t b = 0; b < nl; b++)
            for (size_t l = 0; l < nw; l++)
                for (size_t r = 0; r < nw; r++)
                    for (int causal = 0; causal < 2; causal++) {
                        if (causal && r) continue; /* causal fixes window_right at 0 */
                        char y[400];
                        snprintf(y, sizeof y,
                                 "kind: attention\nbatch: 1\nseq_q: %lld\nseq_kv: %lld\nheads: 1\nhead_dim: 1\n"
                                 "causal: %s\nwindow_left: %lld\nwindow_right: %lld\ndtype: bf16\n",
                                 (long long)lens[a], (long long)lens[b], causal ? "true" : "false",
                                 (long long)wins[l], (long long)wins[r]);
                        uint64_t n = brute(lens[a], lens[b], causal, wins[l], wins[r]);
                        opm_counts c = counts_of(y);
                        cr_assert_eq(c.matrix_flops, 4 * n, "%s", y);
                        cr_assert_eq(c.vector_flops, 5 * n, "%s", y);
                        checked++;
                    }
    cr_assert_gt(checked, 2000);
}

Test(attention_family, window_closed_form_at_scale)
{
    /* S = 2^40, causal, sliding window 4: 1 + 2 + 3 + 4·(S − 3) scores — no loop could count these */
    const uint64_t s = 1ull << 40;
    char y[300];
    snprintf(y, sizeof y, "kind: attention\nbatch: 1\nseq_q: %llu\nseq_kv: %llu\nheads: 1\nhead_dim: 1\n"
             "causal: true\nsliding_window: 4\ndtype: fp8_e4m3\n", (unsigned long long)s, (unsigned long long)s);
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 4 * (6 + 4 * (s - 3)));
    /* the same with 2^32 × 2^32 unmasked scores and 2^10 heads · 2^10 dims overflows */
    expect_error("kind: attention\nbatch: 1\nseq_q: 4294967296\nseq_kv: 4294967296\nheads: 1024\nhead_dim: 1024\n"
                 "dtype: bf16\n", "overflows");
}

/* The worked numbers of docs/ops_parts/attention.md. */
Test(attention_family, documented_worked_numbers)
{
    /* Llama-3-8B causal GQA prefill: n = 4096·4097/2 = 8,390,656 per head */
    opm_counts l = counts_of("kind: attention_prefill\nbatch: 1\nseq_q: 4096\nseq_kv: 4096\nheads: 32\nkv_heads: 8\n"
                             "head_dim: 128\ncausal: true\ndtype: bf16\n");
    cr_assert_eq(l.matrix_flops, 137472507904ull);
    cr_assert_eq(l.vector_flops, 1342504960ull);
    cr_assert_eq(l.read_bytes, 50331648ull);
    cr_assert_eq(l.write_bytes, 33554432ull);
    /* examples/attention.yaml: 8k causal prefill, 4096-key sliding window:
     * n = 4096·4097/2 + 4096·4096 = 25,167,872 */
    char p[1024];
    opm_error err;
    opm_op *op = opm_op_parse_file(src_path("examples/attention.yaml", p, sizeof p), &err);
    cr_assert_not_null(op, "%s", err.message);
    opm_counts w;
    cr_assert_eq(opm_op_count(op, &w, &err), 0);
    opm_op_free(op);
    cr_assert_eq(w.matrix_flops, 412350414848ull);
    cr_assert_eq(w.vector_flops, 4026859520ull);
    /* examples/attention_paged_decode.yaml: pages 512 + 63 + 5 + 256 = 836 of 16 tokens */
    op = opm_op_parse_file(src_path("examples/attention_paged_decode.yaml", p, sizeof p), &err);
    cr_assert_not_null(op, "%s", err.message);
    cr_assert_eq(opm_op_count(op, &w, &err), 0);
    opm_op_free(op);
    cr_assert_eq(w.read_bytes, 4ull * 64 * 128 * 2 + 2ull * 836 * 16 * 8 * 128 + 836 * 4 + 8);
    cr_assert_eq(w.matrix_flops, 2ull * 64 * (8191 + 1000 + 77 + 4096) * 256);
}

/* ---- variable-length batches ---- */

Test(attention_family, varlen_packed_by_hand)
{
    /* seq_lens [3, 5], causal: 6 + 15 = 21 scores per head; 8 tokens */
    opm_counts c = counts_of("kind: attention\nseq_lens: [3, 5]\nheads: 2\nhead_dim: 4\ncausal: true\ndtype: fp16\n");
    cr_assert_eq(c.matrix_flops, 2ull * 2 * 21 * 8);
    cr_assert_eq(c.vector_flops, 5ull * 2 * 21);
    cr_assert_eq(c.read_bytes, 3 * 8ull * 2 * 4 * 2);
    cr_assert_eq(c.write_bytes, 8ull * 2 * 4 * 2);
    /* the bound (B · max²) would be 2·15 = 30 scores per head; exact is 21 */
    opm_counts padded = counts_of("kind: attention\nbatch: 2\nseq_q: 5\nseq_kv: 5\nheads: 2\nhead_dim: 4\ncausal: true\n"
                                  "dtype: fp16\n");
    cr_assert_eq(padded.matrix_flops, 2ull * 2 * 30 * 8);
    /* padded dense tensors with the valid lengths count only valid tokens: same as packed */
    opm_counts dense = counts_of("kind: attention\ntensors:\n"
                                 "  - {role: input, shape: [2, 5, 2, 4], dtype: fp16}\n"
                                 "  - {role: input, shape: [2, 5, 2, 4], dtype: fp16}\n"
                                 "  - {role: input, shape: [2, 5, 2, 4], dtype: fp16}\n"
                                 "  - {role: output, shape: [2, 5, 2, 4], dtype: fp16}\n"
                                 "attrs: {causal: true, seq_lens: [3, 5]}\n");
    cr_assert(same_counts(c, dense));
    /* chunked prefill + decode in one batch: q [1, 2], kv [4, 6], causal → 4 + (5 + 6) = 15 */
    opm_counts m = counts_of("kind: attention\nseq_lens_q: [1, 2]\nseq_lens_kv: [4, 6]\nheads: 1\nhead_dim: 2\n"
                             "causal: true\ndtype: bf16\n");
    cr_assert_eq(m.matrix_flops, 2ull * 15 * 4);
    cr_assert_eq(m.read_bytes, (3ull * 2 + 2 * 10 * 2) * 2);
    cr_assert_eq(m.write_bytes, 3ull * 2 * 2);
    /* one list with a scalar for the other side: decode, kv lengths [10, 20, 30] */
    opm_counts d = counts_of("kind: attention_decode\nseq_lens_kv: [10, 20, 30]\nheads: 4\nkv_heads: 2\nhead_dim: 8\n"
                             "dtype: bf16\n");
    cr_assert_eq(d.matrix_flops, 2ull * 4 * 60 * 16);
    cr_assert_eq(d.read_bytes, (3ull * 4 * 8 + 2 * 60 * 2 * 8) * 2);
}

Test(attention_family, varlen_short_form_expands_to_packed_tensors)
{
    opm_op *op = op_yaml("kind: attention\nseq_lens_q: [2, 3]\nseq_kv: 7\nheads: 4\nkv_heads: 1\nhead_dim_qk: 8\n"
                         "head_dim_v: 4\ndtype: bf16\n");
    cr_assert_eq(opm_op_tensor_count(op), 4);
    const opm_tensor *q = opm_op_tensor(op, 0), *k = opm_op_tensor(op, 1), *o = opm_op_tensor(op, 3);
    cr_assert_eq(q->rank, 3);
    cr_assert_eq(q->shape[0], 5);
    cr_assert_eq(q->shape[1], 4);
    cr_assert_eq(k->shape[0], 14); /* 2 sequences × 7 keys */
    cr_assert_eq(k->shape[1], 1);
    cr_assert_eq(o->shape[2], 4);
    cr_assert(!opm_op_has(op, "seq_kv"));
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), 0, "%s", err.message);
    cr_assert_eq(c.matrix_flops, 2ull * 4 * (2 + 3) * 7 * 12);
    opm_op_free(op);
}

Test(attention_family, varlen_backward)
{
    /* seq_lens [2, 4], H=1, D=4, bf16, causal: n = 3 + 10 = 13; Tq = Tkv = 6 */
    opm_counts b = counts_of("kind: attention\nphase: train_bwd\nseq_lens: [2, 4]\nheads: 1\nhead_dim: 4\ncausal: true\n"
                             "dtype: bf16\n");
    cr_assert_eq(b.matrix_flops, 2ull * 13 * (3 * 4 + 2 * 4));
    cr_assert_eq(b.vector_flops, 5ull * 13 + 2ull * 6 * 4);
    cr_assert_eq(b.read_bytes, 5ull * 6 * 4 * 2);
    cr_assert_eq(b.write_bytes, 3ull * 6 * 4 * 2);
}

/* ---- paged decode, fp8 KV cache ---- */

Test(attention_family, paged_decode_by_hand)
{
    /* kv [1025, 1024, 7], page 16: pages 65 + 64 + 1 = 130, tokens read 2080;
     * H=32, Hkv=8, D=128, q bf16, KV fp8 with per-tensor scales */
    const char *base = "kind: attention_decode\nseq_lens_kv: [1025, 1024, 7]\nheads: 32\nkv_heads: 8\nhead_dim: 128\n"
                       "dtype: bf16\nkv_dtype: fp8_e4m3\npage_size: 16\n";
    char y[512];
    snprintf(y, sizeof y, "%skv_scale: tensor\n", base);
    opm_counts c = counts_of(y);
    uint64_t q = 3ull * 32 * 128 * 2, kv = 2080ull * 8 * 128 * 1;
    cr_assert_eq(c.matrix_flops, 2ull * 32 * 2056 * 256);
    cr_assert_eq(c.vector_flops, 5ull * 32 * 2056);
    cr_assert_eq(c.read_bytes, q + 2 * kv + 130 * 4 + 8);
    cr_assert_eq(c.write_bytes, q);
    cr_assert_eq(c.read_bytes, 4284944);
    /* int64 block table, per-head and per-token scales */
    snprintf(y, sizeof y, "%sblock_table_dtype: int64\nkv_scale: head\n", base);
    cr_assert_eq(counts_of(y).read_bytes, q + 2 * kv + 130 * 8 + 2 * 8 * 4);
    snprintf(y, sizeof y, "%skv_scale: token\n", base);
    cr_assert_eq(counts_of(y).read_bytes, q + 2 * kv + 130 * 4 + 2ull * 2080 * 8 * 4);
    /* page size 1 reads exactly the tokens, plus one entry per token */
    opm_counts p1 = counts_of("kind: attention_decode\nseq_lens_kv: [5, 3]\nheads: 2\nhead_dim: 4\ndtype: bf16\npage_size: 1\n");
    cr_assert_eq(p1.read_bytes, (2ull * 2 * 4 + 2 * 8 * 2 * 4) * 2 + 8 * 4);
    /* dense (uniform) paged decode: B=4, Skv=100, page 64 → 128 tokens, 2 pages each */
    opm_counts u = counts_of("kind: attention_decode\nbatch: 4\nseq_kv: 100\nheads: 2\nhead_dim: 4\ndtype: bf16\npage_size: 64\n");
    cr_assert_eq(u.read_bytes, (4ull * 2 * 4 + 2 * 4 * 128 * 2 * 4) * 2 + 8 * 4);
    cr_assert_eq(u.matrix_flops, 2ull * 4 * 2 * 100 * 8);
}

Test(attention_family, fp8_kv_scales_dense)
{
    const char *base = "kind: attention_decode\nbatch: 3\nseq_kv: 100\nheads: 8\nkv_heads: 2\nhead_dim: 64\n"
                       "dtype: bf16\nkv_dtype: fp8_e4m3\n";
    uint64_t q = 3 * 8 * 64 * 2, kv = 3 * 100 * 2 * 64;
    char y[400];
    cr_assert_eq(counts_of(base).read_bytes, q + 2 * kv); /* kv_scale none by default */
    snprintf(y, sizeof y, "%skv_scale: tensor\n", base);
    cr_assert_eq(counts_of(y).read_bytes, q + 2 * kv + 8);
    snprintf(y, sizeof y, "%skv_scale: head\n", base);
    cr_assert_eq(counts_of(y).read_bytes, q + 2 * kv + 2 * 2 * 4);
    snprintf(y, sizeof y, "%skv_scale: token\n", base);
    cr_assert_eq(counts_of(y).read_bytes, q + 2 * kv + 2ull * 300 * 2 * 4);
    cr_assert_eq(counts_of(y).compute_dtype, OPM_BF16);
}

/* ---- backward ---- */

Test(attention_family, backward_by_hand)
{
    /* B=1, S=4, H=2, D=8, causal, fp16: n = 10 per head, H·n = 20; one tensor = 128 bytes */
    const char *base = "kind: attention\nphase: train_bwd\nbatch: 1\nseq_q: 4\nseq_kv: 4\nheads: 2\nhead_dim: 8\n"
                       "causal: true\ndtype: fp16\n";
    opm_counts r = counts_of(base);
    cr_assert_eq(r.matrix_flops, 2ull * 20 * (3 * 8 + 2 * 8));
    cr_assert_eq(r.vector_flops, 5ull * 20 + 2ull * 2 * 4 * 8);
    cr_assert_eq(r.read_bytes, 5 * 128);
    cr_assert_eq(r.write_bytes, 3 * 128);
    char y[400];
    snprintf(y, sizeof y, "%sflash_recompute: false\n", base);
    opm_counts n = counts_of(y);
    cr_assert_eq(n.matrix_flops, 2ull * 20 * (2 * 8 + 2 * 8));
    cr_assert_eq(n.vector_flops, 2ull * 20 + 2ull * 2 * 4 * 8);
    cr_assert_eq(n.read_bytes, 5 * 128 + 20 * 2);
    cr_assert_eq(n.write_bytes, 3 * 128);
    /* MLA backward: Dqk 12, Dv 4, B=1, Sq=Skv=3, H=1, not causal, bf16 */
    opm_counts m = counts_of("kind: attention\nphase: train_bwd\nbatch: 1\nseq_q: 3\nseq_kv: 3\nheads: 1\n"
                             "head_dim_qk: 12\nhead_dim_v: 4\ndtype: bf16\n");
    cr_assert_eq(m.matrix_flops, 2ull * 9 * (3 * 12 + 2 * 4));
    cr_assert_eq(m.read_bytes, (3ull * 12 * 2 + 3 * 4 + 2 * 3 * 4) * 2);
    cr_assert_eq(m.write_bytes, (3ull * 12 * 2 + 3 * 4) * 2);
}

/* ---- properties ---- */

typedef struct shape {
    int64_t b, sq, skv, h, hkv, dqk, dv, wl, wr;
    int causal;
} shape;

static opm_counts sc(shape s, const char *phase)
{
    char y[512];
    snprintf(y, sizeof y,
             "kind: attention\nphase: %s\nbatch: %lld\nseq_q: %lld\nseq_kv: %lld\nheads: %lld\nkv_heads: %lld\n"
             "head_dim_qk: %lld\nhead_dim_v: %lld\ncausal: %s\nwindow_left: %lld\nwindow_right: %lld\ndtype: bf16\n",
             phase, (long long)s.b, (long long)s.sq, (long long)s.skv, (long long)s.h, (long long)s.hkv,
             (long long)s.dqk, (long long)s.dv, s.causal ? "true" : "false", (long long)s.wl, (long long)s.wr);
    return counts_of(y);
}

static int each_leq(opm_counts a, opm_counts b)
{
    return a.matrix_flops <= b.matrix_flops && a.vector_flops <= b.vector_flops && a.read_bytes <= b.read_bytes &&
           a.write_bytes <= b.write_bytes;
}

static int total_leq(opm_counts a, opm_counts b)
{
    return a.matrix_flops <= b.matrix_flops && a.vector_flops <= b.vector_flops &&
           a.read_bytes + a.write_bytes <= b.read_bytes + b.write_bytes;
}

Test(attention_family, properties)
{
    const int64_t lens[] = {1, 2, 5, 64, 129};
    const int64_t wins[] = {-1, 0, 3};
    int n = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            for (int causal = 0; causal < 2; causal++)
                for (int w = 0; w < 3; w++) {
                    shape s = {2, lens[i], lens[j], 4, 2, 16, 8, wins[w], causal ? -1 : wins[2 - w], causal};
                    const char *ph = causal ? "prefill" : "inference";
                    opm_counts base = sc(s, ph);
                    cr_assert_gt(base.matrix_flops, 0);
                    cr_assert_gt(base.read_bytes, 0);
                    cr_assert_gt(base.write_bytes, 0);
                    /* monotone in every dimension */
                    shape t;
                    t = s; t.b++; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.sq = s.sq * 2 + 1; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.skv = s.skv * 2 + 1; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.h = 8; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.hkv = 4; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.dqk = 32; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.dv = 24; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.wl = s.wl < 0 ? -1 : s.wl + 2; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.wr = s.wr < 0 ? -1 : s.wr + 2; cr_assert(each_leq(base, sc(t, ph)));
                    /* causal ≤ full, window ≤ no window */
                    t = s; t.causal = 0; cr_assert(each_leq(base, sc(t, ph)));
                    t = s; t.wl = t.wr = -1; cr_assert(each_leq(base, sc(t, ph)));
                    /* backward ≥ forward, without recompute too */
                    opm_counts bwd = sc(s, "train_bwd");
                    cr_assert(total_leq(base, bwd));
                    n++;
                }
    cr_assert_eq(n, 150);
    /* monotone in each varlen entry; paged ≥ unpaged in bytes, equal FLOPs */
    opm_counts v1 = counts_of("kind: attention\nseq_lens_q: [3, 4]\nseq_lens_kv: [5, 9]\nheads: 2\nhead_dim: 8\ncausal: true\ndtype: bf16\n");
    opm_counts v2 = counts_of("kind: attention\nseq_lens_q: [3, 5]\nseq_lens_kv: [5, 9]\nheads: 2\nhead_dim: 8\ncausal: true\ndtype: bf16\n");
    opm_counts v3 = counts_of("kind: attention\nseq_lens_q: [3, 4]\nseq_lens_kv: [6, 9]\nheads: 2\nhead_dim: 8\ncausal: true\ndtype: bf16\n");
    cr_assert(each_leq(v1, v2));
    cr_assert(each_leq(v1, v3));
    opm_counts pg = counts_of("kind: attention\nseq_lens_q: [3, 4]\nseq_lens_kv: [5, 9]\nheads: 2\nhead_dim: 8\ncausal: true\n"
                              "dtype: bf16\npage_size: 4\n");
    cr_assert_eq(pg.matrix_flops, v1.matrix_flops);
    cr_assert_gt(pg.read_bytes, v1.read_bytes);
}

/* ---- rejected inputs ---- */

Test(attention_family, rejects_bad_inputs)
{
    expect_error("kind: attention\nphase: train_bwd\nbatch: 2\nseq_q: 1\nseq_kv: 9\nheads: 2\nhead_dim: 4\ndtype: bf16\n"
                 "page_size: 16\n", "paged KV cache is an inference layout");
    expect_error("kind: attention\nseq_lens: [3, 0]\nheads: 2\nhead_dim: 4\ndtype: bf16\n", "lengths >= 1");
    expect_error("kind: attention\nseq_lens: [3, 4]\nseq_lens_q: [1, 1]\nheads: 2\nhead_dim: 4\ndtype: bf16\n",
                 "not both");
    expect_error("kind: attention\nseq_lens_q: [3, 4]\nseq_lens_kv: [1, 1, 1]\nheads: 2\nhead_dim: 4\ndtype: bf16\n",
                 "expected 2 sequence lengths");
    expect_error("kind: attention\nseq_lens_q: [3, 4]\nseq_q: 4\nseq_kv: 4\nheads: 2\nhead_dim: 4\ndtype: bf16\n",
                 "give seq_q or seq_lens_q");
    expect_error("kind: attention\nbatch: 3\nseq_lens: [3, 4]\nheads: 2\nhead_dim: 4\ndtype: bf16\n",
                 "expected 2 (the number of sequence lengths)");
    expect_error("kind: attention\nbatch: 2\nseq_q: 4\nseq_kv: 4\nheads: 2\nhead_dim: 4\ndtype: bf16\nwindow_left: -2\n",
                 "expected -1 (unbounded)");
    expect_error("kind: attention\nbatch: 2\nseq_q: 4\nseq_kv: 4\nheads: 2\nhead_dim: 4\ndtype: bf16\nwindow_left: 2\n"
                 "sliding_window: 3\n", "sliding_window or window_left");
    expect_error("kind: attention\nbatch: 2\nseq_q: 4\nseq_kv: 4\nheads: 2\nhead_dim: 4\ndtype: bf16\nkv_scale: block\n",
                 "none, tensor, head or token");
    expect_error("kind: attention\nbatch: 2\nseq_q: 4\nseq_kv: 4\nheads: 2\nhead_dim: 4\ndtype: bf16\n"
                 "block_table_dtype: int32\n", "needs page_size");
    expect_error("kind: attention\nbatch: 2\nseq_q: 1\nseq_kv: 4\nheads: 2\nhead_dim: 4\ndtype: bf16\npage_size: 2\n"
                 "block_table_dtype: fp32\n", "int32 or int64");
    expect_error("kind: attention\nbatch: 2\nseq_q: 1\nseq_kv: 4\nheads: 2\nhead_dim: 4\ndtype: bf16\npage_size: 0\n",
                 ">= 1");
    expect_error("kind: attention\nbatch: 2\nseq_q: 4\nseq_kv: 4\nheads: 6\nkv_heads: 4\nhead_dim: 4\ndtype: bf16\n",
                 "kv heads dividing");
    /* dense lists: one length per batch entry, each within the padded length */
    const char *dense = "kind: attention\ntensors:\n"
                        "  - {role: input, shape: [2, 5, 2, 4], dtype: bf16}\n"
                        "  - {role: input, shape: [2, 7, 2, 4], dtype: bf16}\n"
                        "  - {role: input, shape: [2, 7, 2, 4], dtype: bf16}\n"
                        "  - {role: output, shape: [2, 5, 2, 4], dtype: bf16}\n";
    char y[1024];
    snprintf(y, sizeof y, "%sattrs: {seq_lens_kv: [3, 4, 5]}\n", dense);
    expect_error(y, "expected 2 lengths (the batch of q)");
    snprintf(y, sizeof y, "%sattrs: {seq_lens: [3, 6]}\n", dense);
    expect_error(y, "expected lengths <= 5");
    snprintf(y, sizeof y, "%sattrs: {seq_lens_kv: [3, 7]}\n", dense);
    cr_assert_eq(counts_of(y).matrix_flops, 2ull * 2 * 5 * 10 * 8);
    /* packed tensors: need lists that sum to the tokens, or an even split */
    const char *packed = "kind: attention\ntensors:\n"
                         "  - {role: input, shape: [7, 2, 4], dtype: bf16}\n"
                         "  - {role: input, shape: [9, 2, 4], dtype: bf16}\n"
                         "  - {role: input, shape: [9, 2, 4], dtype: bf16}\n"
                         "  - {role: output, shape: [7, 2, 4], dtype: bf16}\n";
    snprintf(y, sizeof y, "%s", packed);
    expect_error(y, "packed [T, H, D] tensors need seq_lens");
    snprintf(y, sizeof y, "%sattrs: {seq_lens_q: [3, 3]}\n", packed);
    expect_error(y, "summing to 7");
    snprintf(y, sizeof y, "%sattrs: {seq_lens_q: [3, 4]}\n", packed);
    expect_error(y, "divisible by the 2 sequences");
    snprintf(y, sizeof y, "%sattrs: {seq_lens_q: [3, 4], seq_lens_kv: [4, 5]}\n", packed);
    cr_assert_eq(counts_of(y).matrix_flops, 2ull * 2 * (12 + 20) * 8);
    /* ranks must agree; bhsd needs 4 dimensions */
    expect_error("kind: attention\ntensors:\n"
                 "  - {role: input, shape: [7, 2, 4], dtype: bf16}\n"
                 "  - {role: input, shape: [1, 9, 2, 4], dtype: bf16}\n"
                 "  - {role: input, shape: [1, 9, 2, 4], dtype: bf16}\n"
                 "  - {role: output, shape: [7, 2, 4], dtype: bf16}\n"
                 "attrs: {seq_lens: [7]}\n", "like q");
    expect_error("kind: attention\ntensors:\n"
                 "  - {role: input, shape: [7, 2, 4], dtype: bf16, layout: bhsd}\n"
                 "  - {role: input, shape: [7, 2, 4], dtype: bf16}\n"
                 "  - {role: input, shape: [7, 2, 4], dtype: bf16}\n"
                 "  - {role: output, shape: [7, 2, 4], dtype: bf16}\n"
                 "attrs: {seq_lens: [7]}\n", "layout bhsd needs 4 dimensions");
}

/* ---- golden: TraceLens SDPA_fwd.csv ---- */

static int64_t inum(const csv *c, size_t r, const char *col)
{
    double v = csv_num(c, r, col);
    cr_assert_eq(v, floor(v), "%s is not an integer", col);
    return (int64_t)v;
}

/* "('c10::BFloat16', 'c10::BFloat16')" (first item) or a bare "c10::BFloat16". */
static const char *dtype_cell(const char *cell)
{
    char items[4][64];
    cr_assert_not_null(cell);
    if (cell[0] != '(' && cell[0] != '[') {
        const char *d = torch_dtype(cell);
        cr_assert_not_null(d, "unknown torch dtype %s", cell);
        return d;
    }
    int n = py_strings(cell, items, 4);
    cr_assert_geq(n, 1, "dtype cell %s", cell);
    const char *d = torch_dtype(items[0]);
    cr_assert_not_null(d, "unknown torch dtype %s", items[0]);
    return d;
}

Test(attention_family, golden_sdpa_fwd)
{
    char dir[1024];
    tracelens_path("", dir, sizeof dir);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    int rows = 0, equal = 0, causal_dev = 0, files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char rel[512], path[1024];
        snprintf(rel, sizeof rel, "%s/SDPA_fwd.csv", e->d_name);
        tracelens_path(rel, path, sizeof path);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        fclose(f);
        files++;
        csv *c = csv_load(path);
        for (size_t r = 0; r < csv_rows(c); r++) {
            int64_t b = inum(c, r, "param: B"), sq = inum(c, r, "param: N_Q"), h = inum(c, r, "param: H_Q");
            int64_t skv = inum(c, r, "param: N_KV"), hkv = inum(c, r, "param: H_KV");
            int64_t dqk = inum(c, r, "param: d_h_qk"), dv = inum(c, r, "param: d_h_v");
            int causal = csv_bool(c, r, "param: causal");
            cr_assert_geq(causal, 0);
            cr_assert_eq(csv_num(c, r, "param: dropout"), 0.0);
            const char *dt = dtype_cell(csv_get(c, r, "param: dtype_A_B"));
            /* short form from the parameter columns */
            char y[1024];
            snprintf(y, sizeof y,
                     "kind: attention\nphase: inference\nbatch: %lld\nseq_q: %lld\nseq_kv: %lld\nheads: %lld\n"
                     "kv_heads: %lld\nhead_dim_qk: %lld\nhead_dim_v: %lld\ncausal: %s\ndtype: %s\n",
                     (long long)b, (long long)sq, (long long)skv, (long long)h, (long long)hkv, (long long)dqk,
                     (long long)dv, causal ? "true" : "false", dt);
            opm_counts ours = counts_of(y);
            /* full form from the traced inputs: q, k, v are [B, H, S, D] (bhsd) */
            int64_t dims[8][8];
            int lens[8];
            char types[8][64];
            cr_assert_geq(py_int_lists(csv_get(c, r, "Input Dims_first"), dims, lens, 8), 3);
            cr_assert_geq(py_strings(csv_get(c, r, "Input type_first"), types, 8), 3);
            for (int t = 0; t < 3; t++) cr_assert_eq(lens[t], 4);
            snprintf(y, sizeof y,
                     "kind: attention\ntensors:\n"
                     "  - {role: input, shape: [%lld, %lld, %lld, %lld], dtype: %s, layout: bhsd}\n"
                     "  - {role: input, shape: [%lld, %lld, %lld, %lld], dtype: %s, layout: bhsd}\n"
                     "  - {role: input, shape: [%lld, %lld, %lld, %lld], dtype: %s, layout: bhsd}\n"
                     "  - {role: output, shape: [%lld, %lld, %lld, %lld], dtype: %s, layout: bhsd}\n"
                     "attrs: {causal: %s}\n",
                     (long long)dims[0][0], (long long)dims[0][1], (long long)dims[0][2], (long long)dims[0][3],
                     torch_dtype(types[0]), (long long)dims[1][0], (long long)dims[1][1], (long long)dims[1][2],
                     (long long)dims[1][3], torch_dtype(types[1]), (long long)dims[2][0], (long long)dims[2][1],
                     (long long)dims[2][2], (long long)dims[2][3], torch_dtype(types[2]), (long long)dims[0][0],
                     (long long)dims[0][1], (long long)dims[0][2], (long long)dims[2][3], torch_dtype(types[0]),
                     causal ? "true" : "false");
            cr_assert(same_counts(ours, counts_of(y)), "%s row %zu: full form differs from the parameters", rel, r);
            double ref_flops = csv_num(c, r, "GFLOPS_first") * 1e9;
            double ref_bytes = csv_num(c, r, "Data Moved (MB)_first") * 1048576.0;
            /* Bytes: q, k, v, o each once; the reference uses 2 bytes per element,
             * which is right for these bf16/fp16 rows. */
            cr_assert_eq(strcmp(dt, "bf16") == 0 || strcmp(dt, "fp16") == 0, 1);
            cr_assert_lt(rel_diff((double)(ours.read_bytes + ours.write_bytes), ref_bytes), 1e-6, "%s row %zu bytes", rel, r);
            rows++;
            if (!causal) {
                /* FLOPs: the reference's QKᵀ + PV = our matrix FLOPs */
                cr_assert_lt(rel_diff((double)ours.matrix_flops, ref_flops), 1e-6, "%s row %zu flops", rel, r);
                equal++;
                continue;
            }
            /* Deviation: causal.  The reference halves Sq·Skv (and rejects Sq ≠ Skv);
             * the unmasked scores are Sq·(Sq+1)/2 — it drops half the diagonal. */
            cr_assert_eq(sq, skv);
            uint64_t exact = 2ull * (uint64_t)(b * h) * ((uint64_t)sq * (uint64_t)(sq + 1) / 2) * (uint64_t)(dqk + dv);
            uint64_t tracelens = (uint64_t)(b * h) * (uint64_t)sq * (uint64_t)sq * (uint64_t)(dqk + dv);
            cr_assert_eq(ours.matrix_flops, exact, "%s row %zu", rel, r);
            cr_assert_lt(rel_diff((double)tracelens, ref_flops), 1e-9, "%s row %zu: reference formula", rel, r);
            cr_assert_eq(ours.matrix_flops - tracelens, (uint64_t)(b * h * sq * (dqk + dv)));
            causal_dev++;
        }
        csv_free(c);
    }
    closedir(d);
    cr_assert_eq(files, 7);
    cr_assert_eq(rows, 7);
    cr_assert_eq(equal, 5);
    cr_assert_eq(causal_dev, 2);
}

/* ---- golden: sglang paged decode, InferenceAttention_fwd.csv ---- */

static uint64_t sglang_row(const csv *c, size_t r, int skew)
{
    cr_assert_eq(inum(c, r, "param: c_sq"), 0, "context (prefill) requests are not in this trace");
    int64_t gsq = inum(c, r, "param: g_sq"), gsk = inum(c, r, "param: g_sk");
    /* generation requests have one query each: Σq² = Σq and Σq·k = Σk */
    cr_assert_eq(inum(c, r, "param: g_sqsq"), gsq);
    cr_assert_eq(inum(c, r, "param: g_sqsk"), gsk);
    int64_t h = inum(c, r, "param: H_Q"), hkv = inum(c, r, "param: H_KV");
    int64_t dqk = inum(c, r, "param: d_h_qk"), dv = inum(c, r, "param: d_h_v");
    int64_t dims[16][8];
    int lens[16];
    char types[16][64];
    cr_assert_geq(py_int_lists(csv_get(c, r, "Input Dims_first"), dims, lens, 16), 5);
    cr_assert_geq(py_strings(csv_get(c, r, "Input type_first"), types, 16), 5);
    /* out [T, H, D], workspace, q [T, H, D], k cache, v cache [pages, page, Hkv, D] */
    cr_assert_eq(lens[2], 3);
    cr_assert_eq(dims[2][0], gsq);
    cr_assert_eq(dims[2][1], h);
    cr_assert_eq(lens[3], 4);
    cr_assert_eq(dims[3][2], hkv);
    int64_t page = dims[3][1];
    const char *qt = torch_dtype(types[2]), *kt = torch_dtype(types[3]), *vt = torch_dtype(types[4]);
    cr_assert(qt && kt && vt);
    cr_assert_str_eq(qt, dtype_cell(csv_get(c, r, "param: dtype_Q")));
    /* Per-request KV lengths are not in the report, only their sum; with
     * one query per request the counts depend on the sum alone (at page
     * size 1), so any split summing to g_sk gives the same answer. */
    char lst[8192];
    size_t o = 0;
    int64_t left = gsk;
    for (int64_t i = 0; i < gsq; i++) {
        int64_t l = skew ? (i + 1 < gsq ? 1 : left) : gsk / gsq + (i < gsk % gsq);
        left -= l;
        o += (size_t)snprintf(lst + o, sizeof lst - o, "%s%lld", i ? ", " : "", (long long)l);
        cr_assert_lt(o, sizeof lst - 32);
    }
    cr_assert_eq(left, 0);
    char y[12000];
    snprintf(y, sizeof y,
             "kind: attention_decode\nphase: decode\ntensors:\n"
             "  - {role: input, shape: [%lld, %lld, %lld], dtype: %s}\n"
             "  - {role: input, shape: [%lld, %lld, %lld], dtype: %s}\n"
             "  - {role: input, shape: [%lld, %lld, %lld], dtype: %s}\n"
             "  - {role: output, shape: [%lld, %lld, %lld], dtype: %s}\n"
             "attrs: {causal: %s, page_size: %lld, seq_lens_kv: [%s]}\n",
             (long long)gsq, (long long)h, (long long)dqk, qt, (long long)gsk, (long long)hkv, (long long)dqk, kt,
             (long long)gsk, (long long)hkv, (long long)dv, vt, (long long)dims[0][0], (long long)dims[0][1],
             (long long)dims[0][2], torch_dtype(types[0]), csv_bool(c, r, "param: causal") ? "true" : "false",
             (long long)page, lst);
    opm_counts ours = counts_of(y);
    double ref_flops = csv_num(c, r, "GFLOPS_first") * 1e9;
    double ref_bytes = csv_num(c, r, "Data Moved (MB)_first") * 1048576.0;
    cr_assert_lt(rel_diff((double)ours.matrix_flops, ref_flops), 1e-6, "row %zu flops", r);
    /* Deviation: the reference omits the block table; we read one int32 page
     * index per page touched (page size 1 here: one per KV token). */
    cr_assert_eq(page, 1);
    uint64_t table = 4 * (uint64_t)gsk;
    cr_assert_lt(rel_diff((double)(ours.read_bytes + ours.write_bytes - table), ref_bytes), 1e-6, "row %zu bytes", r);
    uint64_t want = (uint64_t)((gsq * h * dqk + gsk * hkv * (dqk + dv) + gsq * h * dv) * 2) + table;
    cr_assert_eq(ours.read_bytes + ours.write_bytes, want);
    return ours.read_bytes + ours.write_bytes;
}

Test(attention_family, golden_sglang_inference_attention)
{
    char path[1024];
    csv *c = csv_load(tracelens_path("sglang_decode/InferenceAttention_fwd.csv", path, sizeof path));
    int attn = 0, store = 0;
    for (size_t r = 0; r < csv_rows(c); r++) {
        const char *name = csv_get(c, r, "name");
        if (strstr(name, "paged_attention")) {
            uint64_t even = sglang_row(c, r, 0), skewed = sglang_row(c, r, 1);
            cr_assert_eq(even, skewed);
            attn++;
        } else if (!strcmp(name, "sglang::store_cache")) {
            /* Writes the new tokens' K and V into the cache: two copies of
             * [tokens, Hkv·D], the slot indices not counted (nor by the reference). */
            int64_t dims[8][8];
            int lens[8];
            cr_assert_geq(py_int_lists(csv_get(c, r, "Input Dims_first"), dims, lens, 8), 2);
            cr_assert_eq(lens[0], 2);
            const char *dt = dtype_cell(csv_get(c, r, "param: dtype"));
            char y[512];
            snprintf(y, sizeof y, "kind: copy\ntensors:\n  - {role: input, shape: [%lld, %lld], dtype: %s}\n"
                     "  - {role: output, shape: [%lld, %lld], dtype: %s}\n",
                     (long long)dims[0][0], (long long)dims[0][1], dt, (long long)dims[0][0], (long long)dims[0][1], dt);
            opm_counts one = counts_of(y);
            double ref_bytes = csv_num(c, r, "Data Moved (MB)_first") * 1048576.0;
            cr_assert_lt(rel_diff(2.0 * (double)(one.read_bytes + one.write_bytes), ref_bytes), 1e-6);
            cr_assert_eq(csv_num(c, r, "GFLOPS_first"), 0.0);
            cr_assert_eq(one.matrix_flops + one.vector_flops, 0);
            store++;
        } else {
            cr_assert_fail("unexpected row %s", name);
        }
    }
    csv_free(c);
    cr_assert_eq(attn, 1);
    cr_assert_eq(store, 1);
}

/* ---- the original opmodel's [B, H, S, D] form with dims in attrs ---- */

Test(attention_family, bhsd_form_with_dims_in_attrs)
{
    const char *tensors =
        "kind: attention_prefill\ntensors:\n"
        "  - {role: input, shape: [2, 8, 64, 32], dtype: bf16, layout: q}\n"
        "  - {role: input, shape: [2, 2, 96, 32], dtype: bf16, layout: k}\n"
        "  - {role: input, shape: [2, 2, 96, 32], dtype: bf16, layout: v}\n"
        "  - {role: output, shape: [2, 8, 64, 32], dtype: bf16}\n";
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%sattrs: {batch: 2, seq_q: 64, seq_kv: 96, heads: 8, kv_heads: 2, head_dim: 32, "
             "causal: true, flash_attention: true}\n", tensors);
    opm_counts want = counts_of("kind: attention_prefill\nbatch: 2\nseq_q: 64\nseq_kv: 96\nheads: 8\nkv_heads: 2\n"
                                "head_dim: 32\ncausal: true\ndtype: bf16\n");
    cr_assert(same_counts(counts_of(yaml), want));
    /* seq_q alone already tells [B, H, S, D] from [B, S, H, D] for q and o. */
    snprintf(yaml, sizeof yaml, "%sattrs: {seq_q: 64, seq_kv: 96, causal: true}\n", tensors);
    cr_assert(same_counts(counts_of(yaml), want));
    /* A dim that agrees with neither reading is an error naming the tensor. */
    snprintf(yaml, sizeof yaml, "%sattrs: {heads: 8, seq_q: 65}\n", tensors);
    expect_error(yaml, "tensors[0].shape: expected [B, S, H, D] or [B, H, S, D] agreeing with attrs seq_q 65, heads 8");
    snprintf(yaml, sizeof yaml, "%sattrs: {head_dim: 64}\n", tensors);
    expect_error(yaml, "head_dim 64, got [2, 8, 64, 32]");
    /* An explicit bshd layout is not reinterpreted. */
    expect_error("kind: attention\ntensors:\n"
                 "  - {role: input, shape: [1, 4, 16, 8], dtype: bf16, layout: bshd}\n"
                 "  - {role: input, shape: [1, 16, 4, 8], dtype: bf16}\n"
                 "  - {role: input, shape: [1, 16, 4, 8], dtype: bf16}\n"
                 "  - {role: output, shape: [1, 16, 4, 8], dtype: bf16}\n"
                 "attrs: {seq_q: 16}\n",
                 "expected [B, S, H, D] (layout bshd) agreeing with attrs seq_q 16, got [1, 4, 16, 8]");
    expect_error("kind: attention\nbatch: 1\nseq_q: 4\nseq_kv: 4\nheads: 2\nhead_dim: 8\ndtype: bf16\n"
                 "flash_attention: false\n", "attrs.flash_attention: expected true");
}
