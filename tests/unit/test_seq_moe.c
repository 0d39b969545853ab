/* test_seq_moe.c — sequence-model and MoE kinds: rope, causal_conv1d,
 * mamba_ssd, moe_dispatch, moe_combine, fused_moe.  Hand-computed counts of
 * every kind and variant, forward and train_bwd (worked Mamba-2 2.7B and
 * Mixtral-8x7B numbers among them); property checks (monotone in every
 * dimension, backward ≥ forward); bad inputs; and the golden comparison with
 * every row of every RoPE_fwd.csv under tests/data/tracelens/. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/ops/flop_weights.h"
#include "golden.h"
#include "testutil.h"

/* The one table's weights (flop_weights.h), forward and backward. */
static uint64_t wf(const char *f) { return (uint64_t)opm_flop_weight_find(f)->fwd; }
static uint64_t wb(const char *f) { return (uint64_t)opm_flop_weight_find(f)->bwd; }

/* ================================ rope ================================ */

Test(seq_moe, rope_short_form_forward_and_backward)
{
    const char *y = "kind: rope\nbatch: 2\nseq: 16\nheads: 8\nkv_heads: 2\nhead_dim: 128\nrotary_dim: 64\n"
                    "dtype: bf16\n";
    opm_counts f = counts_of(y);
    /* 3 FLOPs per rotated element: 32 tokens × (8 + 2) heads × 64 dims */
    cr_assert_eq(f.vector_flops, 3ull * 32 * 10 * 64);
    cr_assert_eq(f.matrix_flops, 0);
    uint64_t q = 32ull * 8 * 128 * 2, k = 32ull * 2 * 128 * 2, tab = 16ull * 64 * 2;
    cr_assert_eq(f.read_bytes, q + k + tab);
    cr_assert_eq(f.write_bytes, q + k);
    cr_assert_eq(f.weight_bytes, tab);
    cr_assert_eq(f.output_bytes, q + k);
    char b[512];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", y);
    opm_counts g = counts_of(b);
    cr_assert_eq(g.vector_flops, f.vector_flops); /* the transpose rotation */
    cr_assert_eq(g.read_bytes, q + k + tab);      /* dq_out, dk_out, table */
    cr_assert_eq(g.write_bytes, q + k);           /* dq, dk */
}

Test(seq_moe, rope_packed_in_place_partial_with_positions)
{
    /* vLLM-style: packed [T, H·D] q and k, int32 positions gathering rows of
     * a [1000, 32] fp32 cos/sin cache, rotary_dim 32 of head_dim 64, in place */
    opm_counts c = counts_of("kind: rope\ntensors:\n"
                             "  - {role: input, shape: [10], dtype: int32}\n"
                             "  - {role: input, shape: [10, 256], dtype: fp16}\n"
                             "  - {role: input, shape: [10, 64], dtype: fp16}\n"
                             "  - {role: weight, shape: [1000, 32], dtype: fp32}\n"
                             "  - {role: output, shape: [10, 256], dtype: fp16}\n"
                             "  - {role: output, shape: [10, 64], dtype: fp16}\n"
                             "attrs: {head_dim: 64, rotary_dim: 32, in_place: true}\n");
    cr_assert_eq(c.vector_flops, 3ull * 10 * 5 * 32);
    /* rotated slices only: q 10·4·32·2, k 10·1·32·2; positions 40; 10 table rows 10·32·4 */
    cr_assert_eq(c.read_bytes, 2560ull + 640 + 40 + 1280);
    cr_assert_eq(c.write_bytes, 2560ull + 640);
    cr_assert_eq(c.input_bytes, 10ull * 256 * 2 + 10 * 64 * 2 + 40);
    cr_assert_eq(c.weight_bytes, 1000ull * 32 * 4);
    cr_assert_eq(c.output_bytes, 0); /* the outputs alias q and k */
}

Test(seq_moe, rope_separate_tables_bhsd_no_k_and_short_cache)
{
    /* HF-style: q [B, H, S, D] (bhsd), separate cos and sin [S, D], no k */
    opm_counts c = counts_of("kind: rope\ntensors:\n"
                             "  - {role: input, shape: [2, 4, 8, 16], dtype: bf16, layout: bhsd}\n"
                             "  - {role: weight, shape: [8, 16], dtype: bf16}\n"
                             "  - {role: weight, shape: [8, 16], dtype: bf16}\n"
                             "  - {role: output, shape: [2, 4, 8, 16], dtype: bf16, layout: bhsd}\n");
    cr_assert_eq(c.vector_flops, 3ull * 16 * 4 * 16);
    cr_assert_eq(c.read_bytes, 2048ull + 256 + 256);
    cr_assert_eq(c.write_bytes, 2048);
    /* a 4-row cache gathered by 10 positions: min(10, 4) rows read */
    opm_counts s = counts_of("kind: rope\nseq: 10\nheads: 1\nhead_dim: 8\nmax_position: 4\ndtype: fp32\n");
    cr_assert_eq(s.vector_flops, 3ull * 10 * 2 * 8);
    cr_assert_eq(s.read_bytes, 10ull * 8 * 4 * 2 + 10 * 8 + 4 * 8 * 4);
    cr_assert_eq(s.weight_bytes, 4ull * 8 * 4);
}

Test(seq_moe, rope_bad_inputs)
{
    rejected("kind: rope\nseq: 4\nheads: 2\nhead_dim: 8\nrotary_dim: 5\ndtype: bf16\n", "even rotary dim");
    rejected("kind: rope\nseq: 4\nheads: 2\nhead_dim: 8\nrotary_dim: 16\ndtype: bf16\n", "no larger than");
    rejected("kind: rope\ntensors:\n  - {role: input, shape: [4, 64], dtype: bf16}\n"
             "  - {role: weight, shape: [4, 16], dtype: bf16}\n  - {role: output, shape: [4, 64], dtype: bf16}\n",
             "head_dim");
    rejected("kind: rope\ntensors:\n  - {role: input, shape: [4, 2, 16], dtype: bf16}\n"
             "  - {role: weight, shape: [4, 12], dtype: bf16}\n  - {role: output, shape: [4, 2, 16], dtype: bf16}\n",
             "rotary_dim 16");
    rejected("kind: rope\ntensors:\n  - {role: input, shape: [4, 2, 16], dtype: bf16}\n"
             "  - {role: weight, shape: [5, 16], dtype: bf16}\n  - {role: output, shape: [4, 2, 16], dtype: bf16}\n",
             "one row per position");
    rejected("kind: rope\ntensors:\n  - {role: input, shape: [4, 2, 16], dtype: bf16}\n"
             "  - {role: input, shape: [4, 1, 8], dtype: bf16}\n  - {role: weight, shape: [4, 16], dtype: bf16}\n"
             "  - {role: output, shape: [4, 2, 16], dtype: bf16}\n  - {role: output, shape: [4, 1, 8], dtype: bf16}\n",
             "expected k");
}

/* Golden: every row of every RoPE_fwd.csv.  The reference counts 3 FLOPs
 * per element of q and k (we agree: every dim rotates in these rows) and
 * bytes = read + write of q and k only; it omits the cos/sin cache rows the
 * kernel gathers and the positions it reads (docs: deviation). */
Test(seq_moe, golden_rope_every_row)
{
    char dir[512];
    DIR *d = opendir(src_path("tests/data/tracelens", dir, sizeof dir));
    cr_assert_not_null(d);
    int files = 0, rows = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char rel[600], path[1024];
        snprintf(rel, sizeof rel, "%s/RoPE_fwd.csv", e->d_name);
        tracelens_path(rel, path, sizeof path);
        FILE *probe = fopen(path, "r");
        if (!probe) continue;
        fclose(probe);
        files++;
        csv *c = csv_load(path);
        for (size_t r = 0; r < csv_rows(c); r++, rows++) {
            int64_t dims[8][8];
            int lens[8];
            char types[8][64], conc[8][64];
            cr_assert_eq(py_int_lists(csv_get(c, r, "Input Dims_first"), dims, lens, 8), 6, "row %zu", r);
            cr_assert_eq(py_strings(csv_get(c, r, "Input type_first"), types, 8), 6);
            cr_assert_eq(py_strings(csv_get(c, r, "Concrete Inputs_first"), conc, 8), 6);
            /* sgl_kernel::rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox) */
            int64_t head = atoll(conc[3]);
            opm_dtype pdt, qdt, kdt, cdt;
            cr_assert_eq(opm_dtype_parse(torch_dtype(types[0]), &pdt), 0);
            cr_assert_eq(opm_dtype_parse(torch_dtype(types[1]), &qdt), 0);
            cr_assert_eq(opm_dtype_parse(torch_dtype(types[2]), &kdt), 0);
            cr_assert_eq(opm_dtype_parse(torch_dtype(types[4]), &cdt), 0);
            opm_error err;
            opm_op *op = opm_op_new("rope", OPM_KIND_ROPE, OPM_PHASE_DECODE, &err);
            cr_assert_not_null(op);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, dims[0], lens[0], pdt, "positions", &err), 0);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, dims[1], lens[1], qdt, "q", &err), 0);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, dims[2], lens[2], kdt, "k", &err), 0);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_WEIGHT, dims[4], lens[4], cdt, "cos_sin", &err), 0);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_OUTPUT, dims[1], lens[1], qdt, "q", &err), 0);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_OUTPUT, dims[2], lens[2], kdt, "k", &err), 0);
            cr_assert_eq(opm_op_set_int(op, "head_dim", head, &err), 0);
            cr_assert_eq(opm_op_set_bool(op, "in_place", 1, &err), 0);
            cr_assert_eq(opm_op_set_bool(op, "interleaved", strcmp(conc[5], "True") != 0, &err), 0);
            cr_assert_eq(opm_op_validate(op, &err), 0, "row %zu: %s", r, err.message);
            opm_counts n;
            cr_assert_eq(opm_op_count(op, &n, &err), 0, "%s", err.message);
            opm_op_free(op);
            /* FLOPs: equal to the reference */
            double ref_flops = csv_num(c, r, "GFLOPS_first") * 1e9;
            cr_assert_lt(rel_diff((double)n.vector_flops, ref_flops), 1e-6, "row %zu: %llu vs %.17g", r,
                         (unsigned long long)n.vector_flops, ref_flops);
            uint64_t tokens = (uint64_t)dims[1][0], qe = tokens * (uint64_t)dims[1][1],
                     ke = tokens * (uint64_t)dims[2][1];
            cr_assert_eq((double)(qe + ke), csv_num(c, r, "param: num_elements"));
            cr_assert_eq(n.vector_flops, 3 * (qe + ke));
            /* bytes: ours = q, k read and written + the gathered cache rows
             * (one [rotary_dim] row per token, the whole head here) + positions */
            uint64_t qk = (qe + ke) * 2; /* bf16 in these rows */
            uint64_t ours = 2 * qk + tokens * (uint64_t)dims[4][1] * 2 + tokens * 8;
            cr_assert_eq(n.read_bytes + n.write_bytes, ours, "row %zu", r);
            double ref_bytes = csv_num(c, r, "Data Moved (MB)_first") * 1048576.0;
            cr_assert_lt(rel_diff((double)(2 * qk), ref_bytes), 1e-6, "row %zu: reference bytes are q+k only", r);
            cr_assert_gt((double)(n.read_bytes + n.write_bytes), ref_bytes);
        }
        csv_free(c);
    }
    closedir(d);
    cr_assert_geq(files, 1);
    cr_assert_geq(rows, 1);
}

/* ============================ causal_conv1d ============================ */

Test(seq_moe, causal_conv1d_bias_silu_forward_and_backward)
{
    const char *y = "kind: causal_conv1d\nbatch: 2\ndim: 3\nseqlen: 5\nwidth: 4\nbias: true\nactivation: silu\n"
                    "dtype: fp32\n";
    opm_counts f = counts_of(y);
    uint64_t n = 2 * 3 * 5;
    cr_assert_eq(f.vector_flops, 2 * n * 4 + n + wf("silu") * n);
    cr_assert_eq(f.matrix_flops, 0);
    cr_assert_eq(f.read_bytes, n * 4 + 12 * 4 + 3 * 4);
    cr_assert_eq(f.write_bytes, n * 4);
    cr_assert_eq(f.weight_bytes, 12 * 4 + 3 * 4);
    char b[512];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", y);
    opm_counts g = counts_of(b);
    /* dx 2nW + dw 2nW + dbias n; recompute the pre-activation 2nW + n; silu backward */
    cr_assert_eq(g.vector_flops, 4 * n * 4 + n + (2 * n * 4 + n) + wb("silu") * n);
    cr_assert_eq(g.read_bytes, n * 4 + n * 4 + 12 * 4 + 3 * 4); /* dy, x, w, bias */
    cr_assert_eq(g.write_bytes, n * 4 + 12 * 4 + 3 * 4);        /* dx, dw, dbias */
}

Test(seq_moe, causal_conv1d_states_no_activation)
{
    const char *t = "kind: causal_conv1d\n%stensors:\n"
                    "  - {role: input, shape: [2, 3, 5], dtype: bf16}\n"
                    "  - {role: input, shape: [2, 3, 3], dtype: bf16}\n"
                    "  - {role: weight, shape: [3, 1, 4], dtype: bf16}\n"
                    "  - {role: output, shape: [2, 3, 5], dtype: bf16}\n"
                    "  - {role: output, shape: [2, 3, 3], dtype: bf16}\n";
    char y[1024];
    snprintf(y, sizeof y, t, "");
    opm_counts f = counts_of(y);
    cr_assert_eq(f.vector_flops, 2ull * 30 * 4);
    cr_assert_eq(f.read_bytes, 60ull + 36 + 24);
    cr_assert_eq(f.write_bytes, 60ull + 36);
    snprintf(y, sizeof y, t, "phase: train_bwd\n");
    opm_counts g = counts_of(y);
    cr_assert_eq(g.vector_flops, 4ull * 30 * 4);          /* dx, dw; no recompute, no bias */
    cr_assert_eq(g.read_bytes, 60ull + 36 + 60 + 36 + 24); /* dy, d(final), x, initial, w */
    cr_assert_eq(g.write_bytes, 60ull + 36 + 24);          /* dx, d(initial), dw */
    rejected("kind: causal_conv1d\ndim: 3\nseqlen: 5\nwidth: 4\nactivation: gelu\ndtype: bf16\n", "silu");
    rejected("kind: causal_conv1d\ntensors:\n  - {role: input, shape: [2, 3, 5], dtype: bf16}\n"
             "  - {role: weight, shape: [4, 4], dtype: bf16}\n  - {role: output, shape: [2, 3, 5], dtype: bf16}\n",
             "depthwise");
}

/* ============================== mamba_ssd ============================== */

/* Causal score pairs of the chunks of one sequence, by brute force. */
static uint64_t brute_tri(uint64_t l, uint64_t q)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < l; i++)
        for (uint64_t j = 0; j < l; j++) n += j <= i && i / q == j / q;
    return n;
}

#define SSD_27B                                                                 \
    "kind: mamba_ssd\ntensors:\n"                                               \
    "  - {role: input,  shape: [1, 4096, 80, 64], dtype: bf16}\n"               \
    "  - {role: input,  shape: [1, 4096, 80],     dtype: bf16}\n"               \
    "  - {role: input,  shape: [1, 4096, 1, 128], dtype: bf16}\n"               \
    "  - {role: input,  shape: [1, 4096, 1, 128], dtype: bf16}\n"               \
    "  - {role: weight, shape: [80], dtype: fp32}\n"                            \
    "  - {role: weight, shape: [80], dtype: fp32, layout: D}\n"                 \
    "  - {role: weight, shape: [80], dtype: fp32, layout: dt_bias}\n"           \
    "  - {role: output, shape: [1, 4096, 80, 64], dtype: bf16}\n"               \
    "  - {role: output, shape: [1, 80, 64, 128], dtype: fp32}\n"                \
    "attrs: {chunk_size: 256, dt_softplus: true}\n"

Test(seq_moe, mamba2_27b_worked_forward)
{
    /* Mamba-2 2.7B layer, 4096 tokens: H=80, P=64, N=128, G=1, Q=256 → 16
     * chunks, n = 16·256·257/2 = 526,336 score pairs. */
    cr_assert_eq(brute_tri(4096, 256), 526336);
    opm_counts c = counts_of(SSD_27B);
    uint64_t n = 526336, L = 4096, H = 80, P = 64, N = 128;
    uint64_t cb = 2 * 1 * n * N, diag = 2 * H * n * P, st = 2 * H * L * N * P;
    cr_assert_eq(cb, 134742016);
    cr_assert_eq(diag, 5389680640);
    cr_assert_eq(st, 5368709120);
    cr_assert_eq(c.matrix_flops, cb + diag + 2 * st);
    cr_assert_eq(c.matrix_flops, 16261840896);
    /* dt (2 + dt_bias 1 + softplus 9)·LH, mask 7·H·n, states-in (6 + P)·LH,
     * passing (4 + 2PN)·cH, output (4 + 2P)·LH, D skip 2·LHP */
    uint64_t lh = L * H;
    uint64_t v = 12 * lh + 7 * H * n + (6 + P) * lh + (4 + 2 * P * N) * 16 * H + (4 + 2 * P) * lh + 2 * lh * P;
    cr_assert_eq(v, 427791360);
    cr_assert_eq(c.vector_flops, v);
    uint64_t x = L * H * P * 2, dt = L * H * 2, bc = L * N * 2, w = 3 * H * 4, fin = H * P * N * 4;
    cr_assert_eq(c.read_bytes, x + dt + 2 * bc + w);
    cr_assert_eq(c.read_bytes, 44696512);
    cr_assert_eq(c.write_bytes, x + fin);
    cr_assert_eq(c.weight_bytes, w);
}

Test(seq_moe, mamba2_27b_worked_backward)
{
    opm_counts c = counts_of(SSD_27B "phase: train_bwd\n");
    uint64_t n = 526336, L = 4096, H = 80, P = 64, N = 128, lh = L * H, lhp = lh * P;
    uint64_t cb = 2 * n * N, diag = 2 * H * n * P, st = 2 * H * L * N * P;
    /* dC, dB from dCB (2·cb); dX, dCB (2·diag); dX, dB from the chunk states
     * and dC, dstates from Y_off (4·st); recomputed CB and states (cb + st) */
    cr_assert_eq(c.matrix_flops, 3 * cb + 2 * diag + 5 * st);
    cr_assert_eq(c.matrix_flops, 38027132928);
    uint64_t v = 12 * lh                       /* dA, cumsum again (+ dt_bias, softplus) */
                 + (6 + P) * lh + (4 + 2 * P * N) * 16 * H /* recomputed state inputs, passing */
                 + 12 * H * n                  /* mask 7, dCB 2, ddA 3 per score */
                 + (H - 1) * n                 /* dCB of the 80 heads summed into 1 group */
                 + 10 * lh + 2 * lhp            /* dstates and dx-from-states scalings */
                 + (4 + 4 * P * N) * 16 * H    /* passing backward */
                 + 2 * lhp                      /* ddt */
                 + (3 + 1 + 5) * lh             /* dt chain, ddt_bias, softplus backward */
                 + 2 * L * (H - 1) * N          /* dB, dC of the heads summed into the group */
                 + 4 * lhp;                     /* D: dx += D·dy, dD */
    cr_assert_eq(v, 893493248);
    cr_assert_eq(c.vector_flops, v);
    uint64_t in = L * H * P * 2 + L * H * 2 + 2 * L * N * 2, w = 3 * H * 4, out = L * H * P * 2 + H * P * N * 4;
    cr_assert_eq(c.read_bytes, out + in + w);
    cr_assert_eq(c.write_bytes, in + w);
    opm_counts f = counts_of(SSD_27B);
    cr_assert_gt(c.matrix_flops, 2 * f.matrix_flops); /* a real backward, not a copy */
    cr_assert_gt(c.vector_flops, f.vector_flops);
}

Test(seq_moe, mamba_ssd_ragged_chunks_groups_z_states)
{
    /* B=2, L=10, H=4, P=3, N=5, G=2, Q=4: chunks of 4, 4, 2 → n = 10+10+3 */
    cr_assert_eq(brute_tri(10, 4), 23);
    const char *t = "kind: mamba_ssd\n%stensors:\n"
                    "  - {role: input, shape: [2, 10, 4, 3], dtype: bf16}\n"
                    "  - {role: input, shape: [2, 10, 4], dtype: bf16}\n"
                    "  - {role: input, shape: [2, 10, 2, 5], dtype: bf16}\n"
                    "  - {role: input, shape: [2, 10, 2, 5], dtype: bf16}\n"
                    "  - {role: input, shape: [2, 10, 4, 3], dtype: bf16, layout: z}\n"
                    "  - {role: input, shape: [2, 4, 3, 5], dtype: fp32, layout: initial_states}\n"
                    "  - {role: weight, shape: [4], dtype: fp32}\n"
                    "  - {role: weight, shape: [4, 3], dtype: fp32, layout: D}\n"
                    "  - {role: output, shape: [2, 10, 4, 3], dtype: bf16}\n"
                    "  - {role: output, shape: [2, 3, 4, 3, 5], dtype: fp32}\n"
                    "attrs: {chunk_size: 4%s}\n";
    char y[1400];
    snprintf(y, sizeof y, t, "", "");
    opm_counts f = counts_of(y);
    uint64_t lhp = 10 * 4 * 3;
    /* per sequence: CB 2·2·23·5 = 460, diag 2·4·23·3 = 552, states 2·4·10·5·3 = 1200 (×2) */
    cr_assert_eq(f.matrix_flops, 2ull * (460 + 552 + 2 * 1200));
    /* per sequence: dt 2·40, mask 7·92, states-in 6·40 + 120, passing 3·4·(4 + 30),
     * output 4·40 + 240, D 240; z gate silu_mul per element */
    cr_assert_eq(f.vector_flops, 2ull * (80 + 644 + 360 + 408 + 400 + 240) + 2 * lhp * wf("silu_mul"));
    uint64_t in = 480 + 160 + 400 + 400 + 480 + 480, w = 16 + 48, out = 480 + 1440;
    cr_assert_eq(f.read_bytes, in + w);
    cr_assert_eq(f.write_bytes, out);
    snprintf(y, sizeof y, t, "phase: train_bwd\n", ", recompute: false");
    opm_counts g = counts_of(y);
    cr_assert_eq(g.matrix_flops, 2ull * (2 * 460 + 2 * 552 + 4 * 1200));
    /* dt 80; scores 12·92 + (H−G)·23; scalings 10·40 + 2·120; passing 3·4·(4 + 60);
     * ddt 240; dt chain 3·40; group sums of dB, dC 2·10·2·5; D 480; z silu_mul backward */
    cr_assert_eq(g.vector_flops,
                 2ull * (80 + 1104 + 46 + 640 + 768 + 240 + 120 + 200 + 480) + 2 * lhp * wb("silu_mul"));
    /* dy and d(chunk states), the inputs, the saved un-gated y, and fp32
     * CB (2·2·(4² + 4² + 2²)) and chunk states (2·3·4·15) */
    uint64_t saved = 480 + (144 + 360) * 4;
    cr_assert_eq(g.read_bytes, out + in + saved + w);
    cr_assert_eq(g.write_bytes, in + w);
    snprintf(y, sizeof y, t, "phase: train_bwd\n", "");
    opm_counts h = counts_of(y);
    cr_assert_eq(h.matrix_flops, g.matrix_flops + 2ull * (460 + 1200));
    cr_assert_eq(h.vector_flops, g.vector_flops + 2ull * (360 + 408));
    cr_assert_eq(h.read_bytes, out + in + 480 + w);
}

Test(seq_moe, mamba_ssd_short_form_and_bad_inputs)
{
    opm_counts s = counts_of("kind: mamba_ssd\nseqlen: 4096\nheads: 80\nhead_dim: 64\nstate_dim: 128\n"
                             "dt_bias: true\nfinal_states: true\ndt_softplus: true\ndtype: bf16\n");
    opm_counts f = counts_of(SSD_27B);
    cr_assert_eq(s.matrix_flops, f.matrix_flops);
    cr_assert_eq(s.vector_flops, f.vector_flops);
    cr_assert_eq(s.read_bytes, f.read_bytes);
    cr_assert_eq(s.write_bytes, f.write_bytes);
    rejected("kind: mamba_ssd\nseqlen: 64\nheads: 6\nhead_dim: 8\nstate_dim: 16\ngroups: 4\ndtype: bf16\n",
             "G dividing");
    rejected("kind: mamba_ssd\ntensors:\n"
             "  - {role: input, shape: [1, 8, 2, 4], dtype: bf16}\n  - {role: input, shape: [1, 8, 2], dtype: bf16}\n"
             "  - {role: input, shape: [1, 8, 1, 4], dtype: bf16}\n  - {role: input, shape: [1, 8, 1, 4], dtype: bf16}\n"
             "  - {role: input, shape: [1, 8, 2, 4], dtype: bf16}\n"
             "  - {role: weight, shape: [2], dtype: fp32}\n  - {role: output, shape: [1, 8, 2, 4], dtype: bf16}\n",
             "layout z or initial_states");
    rejected("kind: mamba_ssd\ntensors:\n"
             "  - {role: input, shape: [1, 8, 2, 4], dtype: bf16}\n  - {role: input, shape: [1, 8, 2], dtype: bf16}\n"
             "  - {role: input, shape: [1, 8, 1, 4], dtype: bf16}\n  - {role: input, shape: [1, 8, 1, 4], dtype: bf16}\n"
             "  - {role: weight, shape: [2], dtype: fp32}\n  - {role: output, shape: [1, 8, 2, 4], dtype: bf16}\n"
             "  - {role: output, shape: [1, 3, 2, 4, 4], dtype: fp32}\n"
             "attrs: {chunk_size: 4}\n",
             "expected 2 chunks");
}

/* ============================ moe_dispatch ============================ */

Test(seq_moe, moe_dispatch_forward_and_backward)
{
    const char *y = "kind: moe_dispatch\ntokens: 5\nhidden: 7\ntop_k: 2\nexperts: 4\ndtype: bf16\n";
    opm_counts f = counts_of(y);
    cr_assert_eq(f.vector_flops + f.matrix_flops, 0);
    cr_assert_eq(f.read_bytes, 5ull * 7 * 2 + 10 * 4);          /* x, topk_ids */
    cr_assert_eq(f.write_bytes, 10ull * 7 * 2 + 10 * 4 + 4 * 4); /* rows, row map, counts */
    char b[256];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", y);
    opm_counts g = counts_of(b);
    cr_assert_eq(g.vector_flops, 5ull * 2 * 7); /* k-way un-weighted sum back */
    cr_assert_eq(g.read_bytes, 140ull + 40 + 16 + 40);
    cr_assert_eq(g.write_bytes, 70);
    /* fp8 dispatch with per-row-block scales as an extra output */
    opm_counts q = counts_of("kind: moe_dispatch\ntensors:\n"
                             "  - {role: input, shape: [4, 256], dtype: bf16}\n"
                             "  - {role: input, shape: [4, 2], dtype: int64}\n"
                             "  - {role: output, shape: [8, 256], dtype: fp8_e4m3}\n"
                             "  - {role: output, shape: [8, 2], dtype: fp32}\n");
    cr_assert_eq(q.read_bytes, 4ull * 256 * 2 + 8 * 8);
    cr_assert_eq(q.write_bytes, 8ull * 256 + 8 * 2 * 4);
    rejected("kind: moe_dispatch\ntensors:\n  - {role: input, shape: [4, 256], dtype: bf16}\n"
             "  - {role: input, shape: [4, 2], dtype: int64}\n  - {role: output, shape: [4, 256], dtype: bf16}\n",
             "[8, 256]");
}

/* ============================= moe_combine ============================= */

Test(seq_moe, moe_combine_forward_and_backward)
{
    const char *y = "kind: moe_combine\ntokens: 5\nhidden: 7\ntop_k: 2\ndtype: bf16\n";
    opm_counts f = counts_of(y);
    cr_assert_eq(f.vector_flops, 2ull * 5 * 2 * 7);
    cr_assert_eq(f.read_bytes, 140ull + 40 + 40); /* rows, fp32 weights, int32 map */
    cr_assert_eq(f.write_bytes, 70);
    char b[256];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", y);
    opm_counts g = counts_of(b);
    cr_assert_eq(g.vector_flops, 3ull * 5 * 2 * 7);
    cr_assert_eq(g.read_bytes, 70ull + 140 + 40 + 40);
    cr_assert_eq(g.write_bytes, 140ull + 40);
    rejected("kind: moe_combine\ntensors:\n  - {role: input, shape: [9, 7], dtype: bf16}\n"
             "  - {role: input, shape: [5, 2], dtype: fp32}\n  - {role: input, shape: [10], dtype: int32}\n"
             "  - {role: output, shape: [5, 7], dtype: bf16}\n",
             "T·k rows");
}

/* ============================== fused_moe ============================== */

static uint64_t active_of(const char *yaml_fmt, int64_t t)
{
    char y[512];
    snprintf(y, sizeof y, yaml_fmt, (long long)t);
    opm_counts c = counts_of(y);
    /* read = x + routing weights + ids + active·expert bytes */
    uint64_t expert = (2ull * 14336 * 4096 + 4096ull * 14336) * 2;
    uint64_t rest = (uint64_t)t * 4096 * 2 + (uint64_t)t * 2 * 4 + (uint64_t)t * 2 * 4;
    cr_assert_eq((c.read_bytes - rest) % expert, 0);
    return (c.read_bytes - rest) / expert;
}

#define MIXTRAL "kind: fused_moe\ntokens: %lld\nhidden: 4096\nintermediate: 14336\nexperts: 8\ntop_k: 2\ndtype: bf16\n"

Test(seq_moe, fused_moe_mixtral_8x7b_worked)
{
    /* one decode token: 2 experts, each w1 [28672, 4096] + w2 [4096, 14336] bf16 */
    char y[512];
    snprintf(y, sizeof y, MIXTRAL, 1ll);
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2ull * 1 * 2 * 4096 * 14336 * 3);
    cr_assert_eq(c.matrix_flops, 704643072);
    cr_assert_eq(c.vector_flops, wf("silu_mul") * 2 * 14336 + 2ull * 2 * 4096);
    uint64_t expert = (2ull * 14336 * 4096 + 4096ull * 14336) * 2;
    cr_assert_eq(expert, 352321536);
    cr_assert_eq(c.read_bytes, 2 * expert + 8192 + 8 + 8);
    cr_assert_eq(c.write_bytes, 8192);
    cr_assert_eq(c.weight_bytes, 8 * expert); /* all experts resident */
    /* uniform routing: ⌈8·(1 − 0.75^T)⌉ experts: T=2 → 3.5 → 4; T=4 → 5.47 → 6;
     * T=16 → 7.92 → 8; prefill → 8 */
    cr_assert_eq(active_of(MIXTRAL, 2), 4);
    cr_assert_eq(active_of(MIXTRAL, 3), 5); /* 8·(1 − 27/64) = 4.625 */
    cr_assert_eq(active_of(MIXTRAL, 4), 6);
    cr_assert_eq(active_of(MIXTRAL, 16), 8);
    cr_assert_eq(active_of(MIXTRAL, 4096), 8);
    /* backward, one token: dX and dW of both GEMMs; saved pre-activation and
     * expert outputs read; dW of the 2 active experts written */
    snprintf(y, sizeof y, MIXTRAL "phase: train_bwd\n", 1ll);
    opm_counts b = counts_of(y);
    cr_assert_eq(b.matrix_flops, 2 * c.matrix_flops);
    cr_assert_eq(b.vector_flops, wb("silu_mul") * 2 * 14336 + 3ull * 2 * 4096);
    uint64_t saved = (2ull * 28672 + 2 * 4096) * 2;
    cr_assert_eq(b.read_bytes, 8192 + 8192 + 8 + 8 + saved + 2 * expert);
    cr_assert_eq(b.write_bytes, 8192 + 8 + 2 * expert);
    snprintf(y, sizeof y, MIXTRAL "phase: train_bwd\nrecompute: true\n", 1ll);
    opm_counts r = counts_of(y);
    cr_assert_eq(r.matrix_flops, 3 * c.matrix_flops);
    cr_assert_eq(r.read_bytes, b.read_bytes - saved);
}

/* ⌈E·(1 − ((E−k)/E)^T)⌉ by exact integer arithmetic:
 * E·(E^T − (E−k)^T) / E^T, rounded up (E ≤ 128, T ≤ 8: fits in 64 bits). */
static uint64_t exact_active(uint64_t e, uint64_t k, uint64_t t)
{
    uint64_t et = 1, rt = 1;
    for (uint64_t i = 0; i < t; i++) {
        et *= e;
        rt *= e - k;
    }
    uint64_t num = e * (et - rt);
    return (num + et - 1) / et;
}

Test(seq_moe, fused_moe_uniform_active_experts_match_exact_rounding)
{
    const uint64_t es[] = {2, 3, 7, 8, 16, 49, 60, 64, 128}; /* 49, k = 7, T = 2: 13.000000000000004 */
    for (size_t i = 0; i < sizeof es / sizeof *es; i++)
        for (uint64_t k = 1; k <= es[i] && k <= 8; k++)
            for (uint64_t t = 1; t <= 8; t++) {
                char y[512];
                snprintf(y, sizeof y,
                         "kind: fused_moe\ntokens: %llu\nhidden: 8\nintermediate: 4\nexperts: %llu\ntop_k: %llu\n"
                         "gated: false\ndtype: fp16\n",
                         (unsigned long long)t, (unsigned long long)es[i], (unsigned long long)k);
                opm_counts c = counts_of(y);
                uint64_t per = (4ull * 8 + 8 * 4) * 2, rest = t * 8 * 2 + t * k * 4 * 2;
                uint64_t got = (c.read_bytes - rest) / per;
                cr_assert_eq(got, exact_active(es[i], k, t), "E=%llu k=%llu T=%llu", (unsigned long long)es[i],
                             (unsigned long long)k, (unsigned long long)t);
            }
}

Test(seq_moe, fused_moe_plain_gelu_override_and_scales)
{
    const char *t = "kind: fused_moe\ntensors:\n"
                    "  - {role: input, shape: [3, 8], dtype: fp16}\n"
                    "  - {role: input, shape: [3, 2], dtype: fp32}\n"
                    "  - {role: input, shape: [3, 2], dtype: int32}\n"
                    "  - {role: weight, shape: [4, 16, 8], dtype: fp16}\n"
                    "  - {role: weight, shape: [4, 8, 16], dtype: fp16}\n"
                    "  - {role: weight, shape: [4, 2, 2], dtype: fp32}\n"
                    "  - {role: output, shape: [3, 8], dtype: fp16}\n"
                    "attrs: {activation: gelu%s}\n";
    char y[1024];
    snprintf(y, sizeof y, t, "");
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2ull * 6 * 8 * (16 + 16));
    cr_assert_eq(c.vector_flops, wf("gelu") * 6 * 16 + 2ull * 6 * 8);
    /* ⌈4·(1 − 0.5³)⌉ = 4 experts: w1, w2, scales whole */
    cr_assert_eq(c.read_bytes, 48ull + 24 + 24 + 1024 + 1024 + 64);
    snprintf(y, sizeof y, t, ", active_experts: 1");
    opm_counts o = counts_of(y);
    cr_assert_eq(o.read_bytes, 48ull + 24 + 24 + 256 + 256 + 16);
    cr_assert_eq(o.weight_bytes, 1024ull + 1024 + 64);
    rejected("kind: fused_moe\ntokens: 1\nhidden: 8\nintermediate: 4\nexperts: 8\ntop_k: 2\nactive_experts: 3\n"
             "dtype: bf16\n",
             "at most");
    rejected("kind: fused_moe\ntokens: 1\nhidden: 8\nintermediate: 4\nexperts: 2\ntop_k: 3\ndtype: bf16\n",
             "k <= 2");
    rejected("kind: fused_moe\ntokens: 1\nhidden: 8\nintermediate: 4\nexperts: 2\ntop_k: 1\nactivation: relu\n"
             "dtype: bf16\n",
             "silu or gelu");
}

/* ============================== properties ============================== */

typedef void (*yaml_fn)(const int64_t *d, const char *phase, char *buf, size_t cap);

static void y_rope(const int64_t *d, const char *ph, char *b, size_t n)
{
    snprintf(b, n, "kind: rope\nphase: %s\nbatch: %lld\nseq: %lld\nheads: %lld\nkv_heads: %lld\nhead_dim: %lld\n"
             "rotary_dim: %lld\nmax_position: %lld\ndtype: bf16\n", ph, (long long)d[0], (long long)d[1],
             (long long)d[2], (long long)d[3], (long long)d[4], (long long)d[5], (long long)d[6]);
}
static void y_conv(const int64_t *d, const char *ph, char *b, size_t n)
{
    snprintf(b, n, "kind: causal_conv1d\nphase: %s\nbatch: %lld\ndim: %lld\nseqlen: %lld\nwidth: %lld\n"
             "bias: true\nactivation: silu\ndtype: bf16\n", ph, (long long)d[0], (long long)d[1], (long long)d[2],
             (long long)d[3]);
}
static void y_ssd(const int64_t *d, const char *ph, char *b, size_t n)
{
    snprintf(b, n, "kind: mamba_ssd\nphase: %s\nbatch: %lld\nseqlen: %lld\nheads: %lld\nhead_dim: %lld\n"
             "state_dim: %lld\ngroups: %lld\nz_gate: true\nchunk_size: 16\ndtype: bf16\n", ph, (long long)d[0],
             (long long)d[1], (long long)d[2], (long long)d[3], (long long)d[4], (long long)d[5]);
}
static void y_dispatch(const int64_t *d, const char *ph, char *b, size_t n)
{
    snprintf(b, n, "kind: moe_dispatch\nphase: %s\ntokens: %lld\nhidden: %lld\ntop_k: %lld\nexperts: %lld\n"
             "dtype: bf16\n", ph, (long long)d[0], (long long)d[1], (long long)d[2], (long long)d[3]);
}
static void y_combine(const int64_t *d, const char *ph, char *b, size_t n)
{
    snprintf(b, n, "kind: moe_combine\nphase: %s\ntokens: %lld\nhidden: %lld\ntop_k: %lld\ndtype: bf16\n", ph,
             (long long)d[0], (long long)d[1], (long long)d[2]);
}
static void y_moe(const int64_t *d, const char *ph, char *b, size_t n)
{
    snprintf(b, n, "kind: fused_moe\nphase: %s\ntokens: %lld\nhidden: %lld\nintermediate: %lld\nexperts: %lld\n"
             "top_k: %lld\ndtype: bf16\n", ph, (long long)d[0], (long long)d[1], (long long)d[2], (long long)d[3],
             (long long)d[4]);
}

static const struct {
    const char *name;
    yaml_fn fn;
    int ndims;
    int64_t base[7];
} kinds[] = {
    {"rope", y_rope, 7, {2, 16, 8, 2, 128, 32, 64}},
    {"causal_conv1d", y_conv, 4, {2, 64, 100, 4}},
    {"mamba_ssd", y_ssd, 6, {2, 40, 8, 16, 32, 2}},
    {"moe_dispatch", y_dispatch, 4, {16, 64, 2, 8}},
    {"moe_combine", y_combine, 3, {16, 64, 2}},
    {"fused_moe", y_moe, 5, {3, 64, 32, 8, 2}},
};

Test(seq_moe, counts_monotone_in_every_dimension)
{
    const char *phases[] = {"inference", "train_bwd"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int p = 0; p < 2; p++)
            for (int i = 0; i < kinds[k].ndims; i++) {
                int64_t d[7];
                memcpy(d, kinds[k].base, sizeof d);
                char y[1024];
                kinds[k].fn(d, phases[p], y, sizeof y);
                opm_counts a = counts_of(y);
                d[i] *= 2;
                kinds[k].fn(d, phases[p], y, sizeof y);
                opm_counts b = counts_of(y);
                cr_assert_geq(b.matrix_flops + b.vector_flops, a.matrix_flops + a.vector_flops, "%s %s dim %d",
                              kinds[k].name, phases[p], i);
                cr_assert_geq(b.read_bytes, a.read_bytes, "%s %s dim %d", kinds[k].name, phases[p], i);
                cr_assert_geq(b.write_bytes, a.write_bytes, "%s %s dim %d", kinds[k].name, phases[p], i);
                cr_assert_geq(b.input_bytes + b.weight_bytes + b.output_bytes,
                              a.input_bytes + a.weight_bytes + a.output_bytes, "%s %s dim %d footprint",
                              kinds[k].name, phases[p], i);
                /* every dimension changes something: traffic, FLOPs or footprint */
                cr_assert_gt(b.read_bytes + b.write_bytes + b.matrix_flops + b.vector_flops + b.weight_bytes,
                             a.read_bytes + a.write_bytes + a.matrix_flops + a.vector_flops + a.weight_bytes,
                             "%s %s dim %d strictly", kinds[k].name, phases[p], i);
            }
}

Test(seq_moe, backward_at_least_forward)
{
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        char y[1024];
        kinds[k].fn(kinds[k].base, "inference", y, sizeof y);
        opm_counts f = counts_of(y);
        kinds[k].fn(kinds[k].base, "train_bwd", y, sizeof y);
        opm_counts b = counts_of(y);
        cr_assert_geq(b.matrix_flops, f.matrix_flops, "%s", kinds[k].name);
        cr_assert_geq(b.matrix_flops + b.vector_flops, f.matrix_flops + f.vector_flops, "%s", kinds[k].name);
        if (f.matrix_flops) cr_assert_geq(b.matrix_flops, 2 * f.matrix_flops, "%s", kinds[k].name);
    }
}

Test(seq_moe, overflow_is_reported)
{
    const char *ys[] = {
        "kind: rope\nbatch: 4000000000\nseq: 4000000000\nheads: 4000000\nhead_dim: 128\ndtype: bf16\n",
        "kind: causal_conv1d\nbatch: 4000000000\ndim: 4000000000\nseqlen: 4000000\nwidth: 4\ndtype: bf16\n",
        "kind: mamba_ssd\nbatch: 4000000\nseqlen: 4000000000\nheads: 4000000\nhead_dim: 64\nstate_dim: 128\ndtype: bf16\n",
        "kind: fused_moe\ntokens: 4000000000\nhidden: 4000000000\nintermediate: 4000000\nexperts: 8\ntop_k: 2\ndtype: bf16\n",
        "kind: moe_combine\ntokens: 4000000000\nhidden: 4000000000\ntop_k: 4\ndtype: bf16\n",
    };
    for (size_t i = 0; i < sizeof ys / sizeof *ys; i++) {
        opm_error err;
        opm_op *op = opm_op_parse_string(ys[i], strlen(ys[i]), OPM_FORMAT_YAML, "<test>", 1, &err);
        if (!op) {
            cr_assert_eq(err.code, OPM_EOVERFLOW, "%zu: %s", i, err.message);
            continue;
        }
        opm_counts c;
        cr_assert_eq(opm_op_count(op, &c, &err), OPM_EOVERFLOW, "%zu", i);
        opm_op_free(op);
    }
}
