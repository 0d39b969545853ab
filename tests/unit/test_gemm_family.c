/* test_gemm_family.c — gemm, batched_gemm and grouped_gemm: FLOPs and bytes
 * of every variant (bias, transposes, fp8 scales, mxfp4/nvfp4, weight-only
 * int8/int4, grouped with row lists) written out by hand, forward and
 * train_bwd; property checks (monotone in every dimension, backward ≥
 * forward); rejected inputs; and the golden comparison with every row of
 * the TraceLens GEMM reports under tests/data/tracelens/. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "golden.h"
#include "testutil.h"

static uint64_t flops(opm_counts c) { return c.matrix_flops + c.vector_flops; }
static uint64_t bytes(opm_counts c) { return c.read_bytes + c.write_bytes; }

/* Parses and validates `yaml`; expects failure with `field` and `needle` in
 * the message. */
static void rejects(const char *yaml, const char *needle)
{
    opm_error err;
    opm_error_clear(&err);
    opm_op *op = opm_op_parse_string(yaml, strlen(yaml), OPM_FORMAT_YAML, "<test>", 1, &err);
    cr_assert_null(op, "accepted: %s", yaml);
    cr_assert(strstr(err.message, needle), "message '%s' lacks '%s'", err.message, needle);
}

/* ---- gemm ---- */

Test(gemm_family, gemm_bias_forward_backward)
{
    opm_counts f = counts_of("kind: gemm\nm: 141\nn: 512\nk: 512\ndtype: bf16\nbias: true\n");
    cr_assert_eq(f.matrix_flops, 2ull * 141 * 512 * 512);
    cr_assert_eq(f.vector_flops, 141ull * 512);
    cr_assert_eq(f.read_bytes, (141ull * 512 + 512 * 512 + 512) * 2);
    cr_assert_eq(f.write_bytes, 141ull * 512 * 2);
    cr_assert_eq(f.input_bytes, 141ull * 512 * 2);
    cr_assert_eq(f.weight_bytes, (512ull * 512 + 512) * 2);
    cr_assert_eq(f.compute_dtype, OPM_BF16);
    opm_counts b = counts_of("kind: gemm\nphase: train_bwd\nm: 141\nn: 512\nk: 512\ndtype: bf16\nbias: true\n");
    cr_assert_eq(b.matrix_flops, 4ull * 141 * 512 * 512);
    cr_assert_eq(b.vector_flops, 141ull * 512);
    /* dC, A, B read once each; dA, dB and a dbias of N elements written. */
    cr_assert_eq(b.read_bytes, (141ull * 512 + 141 * 512 + 512 * 512) * 2);
    cr_assert_eq(b.write_bytes, (141ull * 512 + 512 * 512 + 512) * 2);
}

Test(gemm_family, gemm_transposes_and_leading_dims)
{
    /* A stored [K, M], B stored [N, K]: same counts as the plain product. */
    opm_counts t = counts_of("kind: gemm\ntensors:\n"
                             "  - {role: input, shape: [70, 100], dtype: fp16}\n"
                             "  - {role: weight, shape: [30, 70], dtype: fp16}\n"
                             "  - {role: output, shape: [100, 30], dtype: fp32}\n"
                             "attrs: {transpose_a: true, transpose_b: true}\n");
    cr_assert_eq(t.matrix_flops, 2ull * 100 * 30 * 70);
    cr_assert_eq(t.read_bytes, (100ull * 70 + 70 * 30) * 2);
    cr_assert_eq(t.write_bytes, 100ull * 30 * 4);
    opm_counts s = counts_of("kind: gemm\nm: 100\nn: 30\nk: 70\ndtype: fp16\nout_dtype: fp32\n"
                             "transpose_a: true\ntranspose_b: true\n");
    cr_assert_eq(s.read_bytes, t.read_bytes);
    cr_assert_eq(s.matrix_flops, t.matrix_flops);
    /* [2, 3, 5, 8] · [8, 4]: M = 30. */
    opm_counts l = counts_of("kind: gemm\ntensors:\n"
                             "  - {role: input, shape: [2, 3, 5, 8], dtype: fp32}\n"
                             "  - {role: weight, shape: [8, 4], dtype: fp32}\n"
                             "  - {role: output, shape: [2, 3, 5, 4], dtype: fp32}\n");
    cr_assert_eq(l.matrix_flops, 2ull * 30 * 4 * 8);
    cr_assert_eq(l.read_bytes, (30ull * 8 + 8 * 4) * 4);
}

Test(gemm_family, gemm_bias_tensor_shapes)
{
    /* addmm with a bias vector [N] in fp32 and with a full [M, N] input C. */
    opm_counts v = counts_of("kind: gemm\ntensors:\n"
                             "  - {role: input, shape: [16, 32], dtype: bf16}\n"
                             "  - {role: weight, shape: [32, 64], dtype: bf16}\n"
                             "  - {role: weight, shape: [64], dtype: fp32}\n"
                             "  - {role: output, shape: [16, 64], dtype: bf16}\n");
    cr_assert_eq(v.vector_flops, 16ull * 64);
    cr_assert_eq(v.read_bytes, (16ull * 32 + 32 * 64) * 2 + 64 * 4);
    cr_assert_eq(v.weight_bytes, 32ull * 64 * 2 + 64 * 4);
    opm_counts full = counts_of("kind: gemm\ntensors:\n"
                                "  - {role: input, shape: [16, 32], dtype: bf16}\n"
                                "  - {role: weight, shape: [32, 64], dtype: bf16}\n"
                                "  - {role: weight, shape: [16, 64], dtype: bf16}\n"
                                "  - {role: output, shape: [16, 64], dtype: bf16}\n");
    cr_assert_eq(full.vector_flops, 16ull * 64);
    cr_assert_eq(full.read_bytes, (16ull * 32 + 32 * 64 + 16 * 64) * 2);
    opm_counts fb = counts_of("kind: gemm\nphase: train_bwd\ntensors:\n"
                              "  - {role: input, shape: [16, 32], dtype: bf16}\n"
                              "  - {role: weight, shape: [32, 64], dtype: bf16}\n"
                              "  - {role: weight, shape: [1, 64], dtype: bf16}\n"
                              "  - {role: output, shape: [16, 64], dtype: bf16}\n");
    cr_assert_eq(fb.write_bytes, (16ull * 32 + 32 * 64 + 64) * 2);
    rejects("kind: gemm\ntensors:\n"
            "  - {role: input, shape: [16, 32], dtype: bf16}\n"
            "  - {role: weight, shape: [32, 64], dtype: bf16}\n"
            "  - {role: weight, shape: [32], dtype: bf16}\n"
            "  - {role: output, shape: [16, 64], dtype: bf16}\n",
            "expected a bias of shape [64]");
}

/* ---- batched_gemm ---- */

Test(gemm_family, batched_gemm_both_sides_and_broadcast)
{
    opm_counts f = counts_of("kind: batched_gemm\nbatch: 64\nm: 1024\nn: 1024\nk: 128\ndtype: fp16\n");
    cr_assert_eq(f.matrix_flops, 17179869184ull);
    cr_assert_eq(bytes(f), 167772160ull);
    cr_assert_eq(f.read_bytes, 64ull * (1024 * 128 + 128 * 1024) * 2);
    opm_counts b = counts_of("kind: batched_gemm\nphase: train_bwd\nbatch: 64\nm: 1024\nn: 1024\nk: 128\n"
                             "dtype: fp16\n");
    cr_assert_eq(b.matrix_flops, 2 * 17179869184ull);
    cr_assert_eq(b.read_bytes, 64ull * (1024 * 1024 + 1024 * 128 + 128 * 1024) * 2);
    cr_assert_eq(b.write_bytes, 64ull * (1024 * 128 + 128 * 1024) * 2);
    /* One weight for the whole batch: read once, one gradient written. */
    opm_counts w = counts_of("kind: batched_gemm\nphase: train_bwd\ntensors:\n"
                             "  - {role: input, shape: [4, 2, 16, 32], dtype: bf16}\n"
                             "  - {role: weight, shape: [32, 24], dtype: bf16}\n"
                             "  - {role: output, shape: [4, 2, 16, 24], dtype: bf16}\n");
    cr_assert_eq(w.matrix_flops, 4ull * 8 * 16 * 24 * 32);
    cr_assert_eq(w.read_bytes, (8ull * 16 * 24 + 8 * 16 * 32 + 32 * 24) * 2);
    cr_assert_eq(w.write_bytes, (8ull * 16 * 32 + 32 * 24) * 2);
    rejects("kind: batched_gemm\ntensors:\n"
            "  - {role: input, shape: [4, 16, 32], dtype: bf16}\n"
            "  - {role: weight, shape: [3, 32, 24], dtype: bf16}\n"
            "  - {role: output, shape: [4, 16, 24], dtype: bf16}\n",
            "batch dimensions");
}

/* ---- grouped_gemm ---- */

Test(gemm_family, grouped_gemm_even_split)
{
    /* 8 experts, 1000 rows: 125 each; N=2048, K=512. */
    opm_counts f = counts_of("kind: grouped_gemm\ngroups: 8\nm: 1000\nn: 2048\nk: 512\ndtype: bf16\n");
    cr_assert_eq(f.matrix_flops, 2ull * 1000 * 2048 * 512);
    cr_assert_eq(f.vector_flops, 0);
    cr_assert_eq(f.read_bytes, (1000ull * 512 + 8ull * 512 * 2048) * 2);
    cr_assert_eq(f.write_bytes, 1000ull * 2048 * 2);
    cr_assert_eq(f.weight_bytes, 8ull * 512 * 2048 * 2);
    /* M = 5 < G = 8: rows 1,1,1,1,1,0,0,0 — five weights read, eight held. */
    opm_counts s = counts_of("kind: grouped_gemm\ngroups: 8\nm: 5\nn: 64\nk: 32\ndtype: bf16\n");
    cr_assert_eq(s.matrix_flops, 2ull * 5 * 64 * 32);
    cr_assert_eq(s.read_bytes, (5ull * 32 + 5ull * 32 * 64) * 2);
    cr_assert_eq(s.weight_bytes, 8ull * 32 * 64 * 2);
    /* The remainder does not change the totals: 10 rows over 4 groups is 3,3,2,2. */
    opm_counts r = counts_of("kind: grouped_gemm\ngroups: 4\nm: 10\nn: 64\nk: 32\ndtype: bf16\n");
    opm_counts l = counts_of("kind: grouped_gemm\ngroup_m: [3, 3, 2, 2]\nn: 64\nk: 32\ndtype: bf16\n");
    cr_assert_eq(r.matrix_flops, l.matrix_flops);
    cr_assert_eq(r.read_bytes, l.read_bytes);
    cr_assert_eq(r.write_bytes, l.write_bytes);
}

Test(gemm_family, grouped_gemm_row_list_forward_backward)
{
    /* Rows [3, 0, 5, 8]: 16 rows, the empty expert's weight is not read in
     * forward; backward writes all four weight gradients. */
    const char *y = "kind: grouped_gemm\nphase: %s\ntensors:\n"
                    "  - {role: input, shape: [16, 256], dtype: bf16}\n"
                    "  - {role: weight, shape: [4, 128, 256], dtype: bf16}\n"
                    "  - {role: output, shape: [16, 128], dtype: bf16}\n"
                    "attrs: {group_m: [3, 0, 5, 8], transpose_b: true}\n";
    char buf[512];
    snprintf(buf, sizeof buf, y, "inference");
    opm_counts f = counts_of(buf);
    cr_assert_eq(f.matrix_flops, 2ull * 16 * 128 * 256);
    cr_assert_eq(f.read_bytes, (16ull * 256 + 3ull * 128 * 256) * 2);
    cr_assert_eq(f.write_bytes, 16ull * 128 * 2);
    cr_assert_eq(f.weight_bytes, 4ull * 128 * 256 * 2);
    snprintf(buf, sizeof buf, y, "train_bwd");
    opm_counts b = counts_of(buf);
    cr_assert_eq(b.matrix_flops, 4ull * 16 * 128 * 256);
    cr_assert_eq(b.read_bytes, (16ull * 128 + 16ull * 256 + 3ull * 128 * 256) * 2);
    cr_assert_eq(b.write_bytes, (16ull * 256 + 4ull * 128 * 256) * 2);
    cr_assert_eq(b.input_bytes, (16ull * 256 + 16ull * 128) * 2);
}

/* TraceLens takes a grouped GEMM's output dtype from the weight: with fp8
 * experts and a bf16 output it would count 1 byte per output element.  We
 * count the output in its own dtype. */
Test(gemm_family, grouped_gemm_output_dtype_is_its_own)
{
    opm_counts c = counts_of("kind: grouped_gemm\ngroups: 4\nm: 512\nn: 1024\nk: 256\ndtype: fp8_e4m3\n"
                             "out_dtype: bf16\n");
    cr_assert_eq(c.write_bytes, 512ull * 1024 * 2);
    cr_assert_neq(c.write_bytes, 512ull * 1024 * 1); /* the reference's figure */
    cr_assert_eq(c.read_bytes, 512ull * 256 + 4ull * 256 * 1024);
    cr_assert_eq(c.compute_dtype, OPM_FP8_E4M3);
}

Test(gemm_family, grouped_gemm_quantised_experts)
{
    /* DeepSeek-style fp8 MoE: activations 1×128 blocks, weights 128×128
     * blocks, fp32 scales; rows [100, 28], N = 256, K = 384. */
    opm_counts c = counts_of("kind: grouped_gemm\ngroup_m: [100, 28]\nn: 256\nk: 384\ndtype: fp8_e4m3\n"
                             "out_dtype: bf16\nscale_a: block\nscale_b: block\nscale_block_a: [1, 128]\n");
    uint64_t sx = 128ull * 3 * 4, sw = 2ull * 2 * 3 * 4;
    cr_assert_eq(c.read_bytes, 128ull * 384 + 2ull * 256 * 384 + sx + sw);
    cr_assert_eq(c.write_bytes, 128ull * 256 * 2);
    cr_assert_eq(c.weight_bytes, 2ull * 256 * 384 + sw);
    /* each of 3 K-blocks: two scale multiplies and one add per output */
    cr_assert_eq(c.vector_flops, 128ull * 256 * 3 * 3);
    /* Per-expert tensor scales: one fp32 per expert with rows (2 of 3). */
    opm_counts t = counts_of("kind: grouped_gemm\ngroup_m: [100, 0, 28]\nn: 256\nk: 384\ndtype: fp8_e4m3\n"
                             "out_dtype: bf16\nscale_a: tensor\nscale_b: tensor\n");
    cr_assert_eq(t.read_bytes, 128ull * 384 + 2ull * 256 * 384 + 4 + 2 * 4);
    cr_assert_eq(t.weight_bytes, 3ull * 256 * 384 + 3 * 4);
    cr_assert_eq(t.vector_flops, 2ull * 128 * 256);
    /* gpt-oss-style: bf16 activations, mxfp4 experts (dequantised). */
    opm_counts m = counts_of("kind: grouped_gemm\ngroups: 4\nm: 64\nn: 128\nk: 96\ndtype: bf16\n"
                             "weight_dtype: fp4_e2m1\nscale_format: mx\n");
    cr_assert_eq(m.read_bytes, 64ull * 96 * 2 + 4ull * 128 * 48 + 4ull * 128 * 3);
    cr_assert_eq(m.vector_flops, 4ull * 128 * 96);
    cr_assert_eq(m.compute_dtype, OPM_BF16);
}

/* Row counts of 2^32 and more take the checked summation path. */
Test(gemm_family, grouped_gemm_huge_groups)
{
    opm_counts c = counts_of("kind: grouped_gemm\ntensors:\n"
                             "  - {role: input, shape: [4294967299, 2], dtype: bf16}\n"
                             "  - {role: weight, shape: [3, 2, 4], dtype: bf16}\n"
                             "  - {role: output, shape: [4294967299, 4], dtype: bf16}\n"
                             "attrs: {group_m: [4294967296, 0, 3]}\n");
    cr_assert_eq(c.matrix_flops, 2ull * 4294967299ull * 4 * 2);
    cr_assert_eq(c.read_bytes, 4294967299ull * 2 * 2 + 2ull * 2 * 4 * 2);
    cr_assert_eq(c.weight_bytes, 3ull * 2 * 4 * 2);
}

Test(gemm_family, grouped_gemm_rejects)
{
    rejects("kind: grouped_gemm\nm: 10\nn: 4\nk: 4\ndtype: bf16\n", "groups: missing");
    rejects("kind: grouped_gemm\ngroups: 2\nn: 4\nk: 4\ndtype: bf16\n", "m (total rows) or group_m");
    rejects("kind: grouped_gemm\ngroups: 3\ngroup_m: [1, 2]\nn: 4\nk: 4\ndtype: bf16\n",
            "expected 3 row counts");
    rejects("kind: grouped_gemm\nm: 4\ngroup_m: [1, 2]\nn: 4\nk: 4\ndtype: bf16\n", "the sum of group_m");
    rejects("kind: grouped_gemm\ngroup_m: [0, 0]\nn: 4\nk: 4\ndtype: bf16\n", "at least one row");
    rejects("kind: grouped_gemm\ngroup_m: [2, -1, 3]\nn: 4\nk: 4\ndtype: bf16\n", "row counts >= 0");
    const char *full = "kind: grouped_gemm\ntensors:\n"
                       "  - {role: input, shape: [16, 256], dtype: bf16}\n"
                       "  - {role: weight, shape: [4, 256, 128], dtype: bf16}\n"
                       "  - {role: output, shape: [16, 128], dtype: bf16}\n"
                       "attrs: {group_m: %s}\n";
    char buf[512];
    snprintf(buf, sizeof buf, full, "[3, 0, 5, 7]");
    rejects(buf, "summing to the input's M = 16");
    snprintf(buf, sizeof buf, full, "[8, 8]");
    rejects(buf, "expected 4 row counts");
    snprintf(buf, sizeof buf, full, "[8, -1, 9, 0]");
    rejects(buf, "row counts >= 0");
    snprintf(buf, sizeof buf, full, "[4, 4, 4, 4], transpose_b: true");
    rejects(buf, "inner dimension");
}

/* ---- fp8 / int8 with scales ---- */

Test(gemm_family, fp8_per_tensor_and_row_scales)
{
    /* torch._scaled_mm: fp8 A, B, bf16 out, one fp32 scale each. */
    opm_counts t = counts_of("kind: gemm\nm: 128\nn: 256\nk: 512\ndtype: fp8_e4m3\nout_dtype: bf16\n"
                             "transpose_b: true\nscale_a: tensor\nscale_b: tensor\n");
    cr_assert_eq(t.matrix_flops, 2ull * 128 * 256 * 512);
    cr_assert_eq(t.vector_flops, 2ull * 128 * 256);
    cr_assert_eq(t.read_bytes, 128ull * 512 + 512 * 256 + 8);
    cr_assert_eq(t.write_bytes, 128ull * 256 * 2);
    cr_assert_eq(t.input_bytes, 128ull * 512 + 4);
    cr_assert_eq(t.weight_bytes, 512ull * 256 + 4);
    cr_assert_eq(t.compute_dtype, OPM_FP8_E4M3);
    /* Row-wise: M scales for A, N for B. */
    opm_counts r = counts_of("kind: gemm\nm: 128\nn: 256\nk: 512\ndtype: fp8_e4m3\nout_dtype: bf16\n"
                             "scale_a: row\nscale_b: row\n");
    cr_assert_eq(r.read_bytes, 128ull * 512 + 512 * 256 + (128 + 256) * 4);
    /* int8 × int8 (W8A8) with row scales, int32 output. */
    opm_counts i = counts_of("kind: gemm\nm: 64\nn: 64\nk: 64\ndtype: int8\nout_dtype: int32\n"
                             "scale_a: row\nscale_b: row\n");
    cr_assert_eq(i.read_bytes, 64ull * 64 * 2 + 128 * 4);
    cr_assert_eq(i.write_bytes, 64ull * 64 * 4);
    cr_assert_eq(i.compute_dtype, OPM_INT8);
    /* Backward reads the scales too and keeps the same scale work. */
    opm_counts b = counts_of("kind: gemm\nphase: train_bwd\nm: 128\nn: 256\nk: 512\ndtype: fp8_e4m3\n"
                             "out_dtype: bf16\nscale_a: tensor\nscale_b: tensor\n");
    cr_assert_eq(b.matrix_flops, 4ull * 128 * 256 * 512);
    cr_assert_eq(b.vector_flops, 2ull * 128 * 256);
    cr_assert_eq(b.read_bytes, 128ull * 256 * 2 + 128 * 512 + 512 * 256 + 8);
    cr_assert_eq(b.write_bytes, 128ull * 512 + 512 * 256);
}

Test(gemm_family, fp8_block_scales)
{
    /* M=300, N=1000, K=700, square 128 blocks: A ceil(300/128)·ceil(700/128)
     * = 3·6, B ceil(1000/128)·6 = 8·6. */
    opm_counts c = counts_of("kind: gemm\nm: 300\nn: 1000\nk: 700\ndtype: fp8_e4m3\nout_dtype: bf16\n"
                             "scale_a: block\nscale_b: block\n");
    cr_assert_eq(c.read_bytes, 300ull * 700 + 700 * 1000 + (3 * 6 + 8 * 6) * 4);
    cr_assert_eq(c.vector_flops, 300ull * 1000 * 6 * 3);
    /* [1, 128] activation blocks, 64×64 weight blocks: the finer K block
     * (64) sets the promotion interval: ceil(700/64) = 11. */
    opm_counts d = counts_of("kind: gemm\nm: 300\nn: 1000\nk: 700\ndtype: fp8_e4m3\nout_dtype: bf16\n"
                             "scale_a: block\nscale_b: block\nscale_block_a: [1, 128]\nscale_block_b: 64\n");
    cr_assert_eq(d.read_bytes, 300ull * 700 + 700 * 1000 + (300 * 6 + 16 * 11) * 4);
    cr_assert_eq(d.vector_flops, 300ull * 1000 * 11 * 3);
    /* Block A with a tensor-scaled B: block work for A, an epilogue for B. */
    opm_counts e = counts_of("kind: gemm\nm: 300\nn: 1000\nk: 700\ndtype: fp8_e4m3\nout_dtype: bf16\n"
                             "scale_a: block\nscale_b: tensor\nscale_block: [1, 128]\n");
    cr_assert_eq(e.read_bytes, 300ull * 700 + 700 * 1000 + (300 * 6 + 1) * 4);
    cr_assert_eq(e.vector_flops, 300ull * 1000 * 6 * 2 + 300ull * 1000);
    /* batched: per-matrix block scales, one per-tensor scale for all. */
    opm_counts bb = counts_of("kind: batched_gemm\nbatch: 3\nm: 128\nn: 256\nk: 256\ndtype: fp8_e5m2\n"
                              "out_dtype: bf16\nscale_a: tensor\nscale_b: block\n");
    cr_assert_eq(bb.read_bytes, 3ull * (128 * 256 + 256 * 256) + 4 + 3ull * 2 * 2 * 4);
}

/* ---- mxfp4 / nvfp4 ---- */

Test(gemm_family, mxfp4_and_nvfp4)
{
    /* MXFP4: both operands fp4, packed two per byte; one E8M0 byte per 32. */
    opm_counts mx = counts_of("kind: gemm\nm: 256\nn: 512\nk: 1024\ndtype: fp4_e2m1\nout_dtype: bf16\n"
                              "scale_format: mx\n");
    cr_assert_eq(mx.matrix_flops, 2ull * 256 * 512 * 1024);
    cr_assert_eq(mx.vector_flops, 0);
    cr_assert_eq(mx.read_bytes, 256ull * 512 + 512ull * 512 + (256 + 512) * 32);
    cr_assert_eq(mx.write_bytes, 256ull * 512 * 2);
    cr_assert_eq(mx.weight_bytes, 512ull * 512 + 512 * 32);
    cr_assert_eq(mx.compute_dtype, OPM_FP4_E2M1);
    /* NVFP4: one E4M3 byte per 16 plus a per-tensor fp32 each. */
    opm_counts nv = counts_of("kind: gemm\nm: 256\nn: 512\nk: 1024\ndtype: fp4_e2m1\nout_dtype: bf16\n"
                              "scale_format: nv\n");
    cr_assert_eq(nv.read_bytes, 256ull * 512 + 512ull * 512 + (256 + 512) * 64 + 8);
    /* Mixed MXFP8 × MXFP4: native, compute at fp8. */
    opm_counts mixed = counts_of("kind: gemm\nm: 256\nn: 512\nk: 1024\ndtype: fp8_e4m3\nweight_dtype: fp4_e2m1\n"
                                 "out_dtype: bf16\nscale_format: mx\n");
    cr_assert_eq(mixed.read_bytes, 256ull * 1024 + 512ull * 512 + (256 + 512) * 32);
    cr_assert_eq(mixed.vector_flops, 0);
    cr_assert_eq(mixed.compute_dtype, OPM_FP8_E4M3);
    /* Odd K: fp4 rows are packed per row, ceil(33/2) = 17 bytes each; 2 mx
     * scales per row. */
    opm_counts odd = counts_of("kind: gemm\nm: 3\nn: 5\nk: 33\ndtype: fp4_e2m1\nout_dtype: fp16\n"
                               "transpose_b: true\nscale_format: mx\n");
    cr_assert_eq(odd.read_bytes, 3ull * 17 + 5 * 17 + (3 + 5) * 2);
}

/* ---- weight-only int8 / int4 ---- */

Test(gemm_family, weight_only_int4_int8)
{
    /* W4A16, group 128 with zero points: 4096·32 groups, bf16 scales, int4 zeros. */
    opm_counts g = counts_of("kind: gemm\nm: 16\nn: 4096\nk: 4096\ndtype: bf16\nweight_dtype: int4\n"
                             "weight_group_size: 128\nweight_zero_point: true\n");
    cr_assert_eq(g.matrix_flops, 2ull * 16 * 4096 * 4096);
    cr_assert_eq(g.vector_flops, 2ull * 4096 * 4096);
    cr_assert_eq(g.read_bytes, 16ull * 4096 * 2 + 4096ull * 4096 / 2 + 4096ull * 32 * 2 + 4096ull * 32 / 2);
    cr_assert_eq(g.write_bytes, 16ull * 4096 * 2);
    cr_assert_eq(g.weight_bytes, 4096ull * 4096 / 2 + 4096ull * 32 * 2 + 4096ull * 32 / 2);
    cr_assert_eq(g.compute_dtype, OPM_BF16);
    /* W8A16 per channel (the default group is K): N fp16 scales. */
    opm_counts c = counts_of("kind: gemm\nm: 8\nn: 1024\nk: 512\ndtype: fp16\nweight_dtype: int8\n");
    cr_assert_eq(c.vector_flops, 1024ull * 512);
    cr_assert_eq(c.read_bytes, 8ull * 512 * 2 + 512ull * 1024 + 1024 * 2);
    cr_assert_eq(c.compute_dtype, OPM_FP16);
    /* Odd K, int4 with group 64: ceil(100/2) = 50 bytes per row, ceil(100/64) = 2 groups. */
    opm_counts o = counts_of("kind: gemm\nm: 2\nn: 3\nk: 100\ndtype: bf16\nweight_dtype: int4\n"
                             "transpose_b: true\nweight_group_size: 64\n");
    cr_assert_eq(o.read_bytes, 2ull * 100 * 2 + 3 * 50 + 3 * 2 * 2);
    /* Backward: same dequantisation, scales read again. */
    opm_counts b = counts_of("kind: gemm\nphase: train_bwd\nm: 8\nn: 1024\nk: 512\ndtype: fp16\n"
                             "weight_dtype: int8\n");
    cr_assert_eq(b.matrix_flops, 4ull * 8 * 1024 * 512);
    cr_assert_eq(b.vector_flops, 1024ull * 512);
    cr_assert_eq(b.read_bytes, 8ull * 1024 * 2 + 8 * 512 * 2 + 512ull * 1024 + 1024 * 2);
    /* fp8 weights with bf16 activations (W8A16 fp8): converted, row scales. */
    opm_counts f = counts_of("kind: gemm\nm: 8\nn: 1024\nk: 512\ndtype: bf16\nweight_dtype: fp8_e4m3\n"
                             "scale_b: row\n");
    cr_assert_eq(f.vector_flops, 1024ull * 512);
    cr_assert_eq(f.read_bytes, 8ull * 512 * 2 + 512ull * 1024 + 1024 * 4);
    cr_assert_eq(f.compute_dtype, OPM_BF16);
}

Test(gemm_family, quantisation_rejects)
{
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: bf16\nscale_a: tensor\n", "A is bf16");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: fp8\nscale_b: rows\n", "expected none, tensor, row or block");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: fp4_e2m1\nscale_format: mx\nscale_a: tensor\n",
            "drop scale_a and scale_b");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: fp8\nscale_format: nv\n", "needs fp4_e2m1 operands");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: bf16\nscale_format: mx\n", "needs an fp8 or fp4_e2m1");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: bf16\nweight_dtype: int4\nscale_format: mx\n",
            "needs fp8 or fp4_e2m1 operands, but B is int4");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: fp8\nscale_format: fx\n", "expected mx or nv");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: bf16\nweight_group_size: 128\n", "applies to weight-only");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: bf16\nweight_dtype: int4\nscale_b: row\n",
            "set weight_group_size");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: int8\nweight_dtype: int4\n", "not modelled");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: fp8\nscale_a: tensor\nscale_block: 64\n",
            "applies only with scale_a or scale_b: block");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: fp8\nscale_a: block\nscale_block: [1, 2, 3]\n",
            "one block size or two");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: fp8\nscale_a: block\nscale_block_a: [0, 128]\n",
            "positive block sizes");
    rejects("kind: gemm\nm: 4\nn: 4\nk: 4\ndtype: bf16\nweight_dtype: int4\nweight_group_size: 0\n",
            "expected an integer >= 1");
}

/* ---- properties ---- */

typedef struct variant {
    const char *kind, *extra;
} variant;

static const variant variants[] = {
    {"gemm", "dtype: bf16\n"},
    {"gemm", "dtype: bf16\nbias: true\n"},
    {"gemm", "dtype: fp8_e4m3\nout_dtype: bf16\nscale_a: tensor\nscale_b: row\n"},
    {"gemm", "dtype: fp8_e4m3\nout_dtype: bf16\nscale_a: block\nscale_b: block\nscale_block_a: [1, 128]\n"},
    {"gemm", "dtype: fp4_e2m1\nout_dtype: bf16\nscale_format: mx\n"},
    {"gemm", "dtype: fp4_e2m1\nout_dtype: bf16\nscale_format: nv\n"},
    {"gemm", "dtype: bf16\nweight_dtype: int4\nweight_group_size: 64\nweight_zero_point: true\n"},
    {"batched_gemm", "dtype: fp16\nbatch: 3\n"},
    {"grouped_gemm", "dtype: bf16\ngroups: 6\n"},
    {"grouped_gemm", "dtype: fp8_e4m3\nout_dtype: bf16\ngroups: 4\nscale_a: block\nscale_b: block\n"},
};

static opm_counts variant_counts(const variant *v, int64_t m, int64_t n, int64_t k, const char *phase)
{
    char y[512];
    snprintf(y, sizeof y, "kind: %s\nphase: %s\nm: %lld\nn: %lld\nk: %lld\n%s", v->kind, phase, (long long)m,
             (long long)n, (long long)k, v->extra);
    return counts_of(y);
}

static int leq(opm_counts a, opm_counts b)
{
    return flops(a) <= flops(b) && a.read_bytes <= b.read_bytes && a.write_bytes <= b.write_bytes &&
           a.input_bytes <= b.input_bytes && a.weight_bytes <= b.weight_bytes && a.output_bytes <= b.output_bytes;
}

Test(gemm_family, monotone_and_backward_at_least_forward)
{
    const int64_t v[] = {1, 3, 64, 129, 300};
    const size_t nv = sizeof v / sizeof v[0];
    for (size_t t = 0; t < sizeof variants / sizeof variants[0]; t++)
        for (size_t i = 0; i < nv; i++)
            for (size_t j = 0; j < nv; j++)
                for (size_t l = 0; l < nv; l++) {
                    opm_counts base = variant_counts(&variants[t], v[i], v[j], v[l], "inference");
                    if (i + 1 < nv)
                        cr_assert(leq(base, variant_counts(&variants[t], v[i + 1], v[j], v[l], "inference")),
                                  "%s %s: not monotone in m", variants[t].kind, variants[t].extra);
                    if (j + 1 < nv)
                        cr_assert(leq(base, variant_counts(&variants[t], v[i], v[j + 1], v[l], "inference")),
                                  "%s %s: not monotone in n", variants[t].kind, variants[t].extra);
                    if (l + 1 < nv)
                        cr_assert(leq(base, variant_counts(&variants[t], v[i], v[j], v[l + 1], "inference")),
                                  "%s %s: not monotone in k", variants[t].kind, variants[t].extra);
                    opm_counts bwd = variant_counts(&variants[t], v[i], v[j], v[l], "train_bwd");
                    cr_assert(flops(bwd) >= flops(base) && bytes(bwd) >= bytes(base),
                              "%s %s: backward below forward", variants[t].kind, variants[t].extra);
                    cr_assert(bwd.matrix_flops == 2 * base.matrix_flops);
                }
}

Test(gemm_family, monotone_in_batch_groups_and_group_rows)
{
    for (int64_t g = 1; g < 12; g++) {
        char a[256], b[256];
        snprintf(a, sizeof a, "kind: grouped_gemm\ngroups: %lld\nm: 7\nn: 16\nk: 8\ndtype: bf16\n", (long long)g);
        snprintf(b, sizeof b, "kind: grouped_gemm\ngroups: %lld\nm: 7\nn: 16\nk: 8\ndtype: bf16\n",
                 (long long)g + 1);
        cr_assert(leq(counts_of(a), counts_of(b)));
        snprintf(a, sizeof a, "kind: batched_gemm\nbatch: %lld\nm: 7\nn: 16\nk: 8\ndtype: bf16\n", (long long)g);
        snprintf(b, sizeof b, "kind: batched_gemm\nbatch: %lld\nm: 7\nn: 16\nk: 8\ndtype: bf16\n",
                 (long long)g + 1);
        cr_assert(leq(counts_of(a), counts_of(b)));
    }
    /* One more row in any group, empty or not, never lowers a count. */
    const char *lists[][2] = {{"[0, 0, 4]", "[1, 0, 4]"}, {"[1, 0, 4]", "[2, 0, 4]"}, {"[2, 0, 4]", "[2, 1, 4]"}};
    for (size_t i = 0; i < 3; i++) {
        char a[256], b[256];
        snprintf(a, sizeof a, "kind: grouped_gemm\ngroup_m: %s\nn: 16\nk: 8\ndtype: bf16\n", lists[i][0]);
        snprintf(b, sizeof b, "kind: grouped_gemm\ngroup_m: %s\nn: 16\nk: 8\ndtype: bf16\n", lists[i][1]);
        cr_assert(leq(counts_of(a), counts_of(b)), "%s -> %s", lists[i][0], lists[i][1]);
    }
}

Test(gemm_family, overflow_is_reported)
{
    opm_op *op = op_yaml("kind: grouped_gemm\ngroups: 2\nm: 4000000000\nn: 4000000000\nk: 4000000000\n"
                         "dtype: bf16\n");
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), OPM_EOVERFLOW);
    opm_op_free(op);
}

/* ---- golden: every row of every TraceLens GEMM.csv ---- */

typedef struct golden_file {
    const char *trace;
    size_t rows;
} golden_file;

static const golden_file golden_files[] = {
    {"h100_bert", 4}, {"h100_falcon", 4}, {"h100_qwen", 5}, {"mi300_bert", 4},
    {"mi300_falcon", 4}, {"mi300_qwen", 5}, {"sglang_decode", 9}, {"torch_compile", 3},
};

static void shape_yaml(char *buf, size_t cap, const int64_t *d, int r)
{
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < r; i++) o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? ", " : "", (long long)d[i]);
    snprintf(buf + o, cap - o, "]");
}

/* Builds our op for one report row from its Input Dims / Input type cells
 * (the tensors exactly as the profiler recorded them) and checks it against
 * the row's M, N, K, B and bias parameters.  Returns the YAML in `y`. */
static void row_yaml(const csv *c, size_t row, char *y, size_t cap)
{
    const char *name = csv_get(c, row, "name");
    int64_t d[8][8];
    int len[8];
    char types[8][64], abt[4][64];
    int nd = py_int_lists(csv_get(c, row, "Input Dims_first"), d, len, 8);
    int nt = py_strings(csv_get(c, row, "Input type_first"), types, 8);
    int nab = py_strings(csv_get(c, row, "param: dtype_A_B"), abt, 4);
    cr_assert(nd >= 2 && nt >= 2 && nab >= 2, "row %zu: unreadable Input Dims/Input type", row);
    int ia = 0, ib = 1, ibias = -1, tb = 0;
    const char *kind = "gemm";
    if (!strcmp(name, "aten::addmm")) {
        ibias = 0, ia = 1, ib = 2;
    } else if (!strcmp(name, "aten::bmm")) {
        kind = "batched_gemm";
    } else if (!strcmp(name, "aiter::gemm_a16w16")) {
        tb = 1; /* weight stored [N, K] */
    } else {
        cr_assert_str_eq(name, "aten::mm", "row %zu: unmapped GEMM op", row);
    }
    const int64_t *a = d[ia], *b = d[ib];
    int ra = len[ia], rb = len[ib];
    int64_t m = a[ra - 2], k = a[ra - 1], n = tb ? b[rb - 2] : b[rb - 1], batch = ra == 3 ? a[0] : 1;
    cr_assert_eq(tb ? b[rb - 1] : b[rb - 2], k, "row %zu: inner dims differ", row);
    cr_assert_eq(m, (int64_t)csv_num(c, row, "param: M"), "row %zu: M", row);
    cr_assert_eq(n, (int64_t)csv_num(c, row, "param: N"), "row %zu: N", row);
    cr_assert_eq(k, (int64_t)csv_num(c, row, "param: K"), "row %zu: K", row);
    cr_assert_eq(batch, (int64_t)csv_num(c, row, "param: B"), "row %zu: B", row);
    cr_assert_eq(ibias >= 0, csv_bool(c, row, "param: bias"), "row %zu: bias", row);
    const char *adt = torch_dtype(types[ia]), *bdt = torch_dtype(types[ib]);
    /* The output dtype: the third dtype_A_B entry where the report has one
     * (aiter), else the out= tensor's (torch.compile's mm), else A's. */
    const char *odt = nab >= 3 ? torch_dtype(abt[2]) : nd >= 3 && ibias < 0 && len[2] ? torch_dtype(types[2]) : adt;
    cr_assert(adt && bdt && odt, "row %zu: unknown dtype", row);
    int64_t cs[3] = {batch, m, n};
    char sa[64], sb[64], sc[64], sbias[64];
    shape_yaml(sa, sizeof sa, a, ra);
    shape_yaml(sb, sizeof sb, b, rb);
    shape_yaml(sc, sizeof sc, ra == 3 ? cs : cs + 1, ra == 3 ? 3 : 2);
    size_t o = (size_t)snprintf(y, cap,
                                "kind: %s\ntensors:\n  - {role: input, shape: %s, dtype: %s}\n"
                                "  - {role: weight, shape: %s, dtype: %s}\n",
                                kind, sa, adt, sb, bdt);
    if (ibias >= 0) {
        const char *bias_dt = torch_dtype(types[ibias]);
        cr_assert(bias_dt);
        shape_yaml(sbias, sizeof sbias, d[ibias], len[ibias]);
        o += (size_t)snprintf(y + o, cap - o, "  - {role: weight, shape: %s, dtype: %s}\n", sbias, bias_dt);
    }
    o += (size_t)snprintf(y + o, cap - o, "  - {role: output, shape: %s, dtype: %s}\n", sc, odt);
    if (tb) snprintf(y + o, cap - o, "attrs: {transpose_b: true}\n");
}

Test(gemm_family, golden_tracelens_gemm_reports)
{
    size_t compared = 0;
    for (size_t f = 0; f < sizeof golden_files / sizeof golden_files[0]; f++) {
        char rel[128], path[1024];
        snprintf(rel, sizeof rel, "%s/GEMM.csv", golden_files[f].trace);
        csv *c = csv_load(tracelens_path(rel, path, sizeof path));
        cr_assert_eq(csv_rows(c), golden_files[f].rows, "%s: %zu rows", rel, csv_rows(c));
        for (size_t r = 0; r < csv_rows(c); r++) {
            char y[1024];
            row_yaml(c, r, y, sizeof y);
            opm_counts got = counts_of(y);
            double want_flops = csv_num(c, r, "GFLOPS_first") * 1e9;
            double want_bytes = csv_num(c, r, "Data Moved (MB)_first") * 1048576.0;
            cr_assert(rel_diff((double)flops(got), want_flops) <= 1e-6, "%s row %zu: FLOPs %llu, reference %.17g\n%s",
                      rel, r, (unsigned long long)flops(got), want_flops, y);
            cr_assert(rel_diff((double)bytes(got), want_bytes) <= 1e-6, "%s row %zu: bytes %llu, reference %.17g\n%s",
                      rel, r, (unsigned long long)bytes(got), want_bytes, y);
            compared++;
        }
        csv_free(c);
    }
    cr_assert_eq(compared, 38);
}

/* The worked numbers of docs/ops_parts/gemm.md. */
Test(gemm_family, worked_examples)
{
    opm_counts g = counts_of("kind: gemm\nm: 1\nn: 8192\nk: 8192\ndtype: bf16\n");
    cr_assert_eq(flops(g), 134217728ull);
    cr_assert_eq(bytes(g), 134250496ull);
    /* Mixtral-style expert up-projection: 8 experts, 4096 rows, N=14336, K=4096. */
    opm_counts e = counts_of("kind: grouped_gemm\ngroups: 8\nm: 4096\nn: 14336\nk: 4096\ndtype: bf16\n");
    cr_assert_eq(flops(e), 481036337152ull);
    cr_assert_eq(bytes(e), 1090519040ull);
    opm_counts eb = counts_of("kind: grouped_gemm\nphase: train_bwd\ngroups: 8\nm: 4096\nn: 14336\nk: 4096\n"
                              "dtype: bf16\n");
    cr_assert_eq(flops(eb), 962072674304ull);
    cr_assert_eq(bytes(eb), 2063597568ull);
    opm_counts s = counts_of("kind: gemm\nm: 128\nn: 256\nk: 512\ndtype: fp8_e4m3\nout_dtype: bf16\n"
                             "scale_a: tensor\nscale_b: tensor\n");
    cr_assert_eq(s.matrix_flops, 33554432ull);
    cr_assert_eq(s.vector_flops, 65536ull);
    cr_assert_eq(s.read_bytes, 196616ull);
    cr_assert_eq(s.write_bytes, 65536ull);
    opm_counts k = counts_of("kind: gemm\nm: 300\nn: 1000\nk: 700\ndtype: fp8_e4m3\nout_dtype: bf16\n"
                             "scale_a: block\nscale_b: block\n");
    cr_assert_eq(k.read_bytes - 300ull * 700 - 700 * 1000, 264);
    cr_assert_eq(k.vector_flops, 5400000ull);
    cr_assert_eq(counts_of("kind: gemm\nm: 256\nn: 512\nk: 1024\ndtype: fp4_e2m1\nout_dtype: bf16\n"
                           "scale_format: mx\n").read_bytes, 417792ull);
    cr_assert_eq(counts_of("kind: gemm\nm: 256\nn: 512\nk: 1024\ndtype: fp4_e2m1\nout_dtype: bf16\n"
                           "scale_format: nv\n").read_bytes, 442376ull);
    opm_counts w = counts_of("kind: gemm\nm: 16\nn: 4096\nk: 4096\ndtype: bf16\nweight_dtype: int4\n"
                             "weight_group_size: 128\nweight_zero_point: true\n");
    cr_assert_eq(w.read_bytes, 8847360ull);
    cr_assert_eq(w.matrix_flops, 536870912ull);
    cr_assert_eq(w.vector_flops, 33554432ull);
    /* The reference row h100_bert addmm 141×512×512 with bias. */
    opm_counts r = counts_of("kind: gemm\nm: 141\nn: 512\nk: 512\ndtype: bf16\nbias: true\n");
    cr_assert_eq(flops(r), 73996800ull);
    cr_assert_eq(bytes(r), 814080ull);
}
