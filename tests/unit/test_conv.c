/* test_conv.c — the `conv` kind: hand-computed FLOP and byte counts of every
 * variant (1-D/2-D/3-D, stride, padding, dilation, groups, depthwise,
 * transposed with output_padding and groups, bias as a tensor or an
 * attribute, mixed dtypes), forward and train_bwd (with PyTorch's output
 * mask), using shapes from the MI300X ResNet training trace; output-shape
 * validation against a brute-force enumeration; properties (monotone in
 * every dimension, backward >= forward, transposed = the data gradient of
 * the normal conv); overflow; and the golden rows of every CONV_fwd.csv
 * under tests/data/tracelens/. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "golden.h"
#include "testutil.h"

/* The output shape the short form computed. */
static void out_shape(const char *yaml, int64_t *shape, int *rank)
{
    opm_op *op = op_yaml(yaml);
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    cr_assert_not_null(y);
    *rank = y->rank;
    memcpy(shape, y->shape, sizeof y->shape);
    opm_op_free(op);
}

/* ---- ResNet shapes from the MI300X trace (resnet_act_checkpoint), bf16 ---- */

Test(conv, resnet_stem_7x7_stride2_forward)
{
    /* aten::convolution [[10, 3, 224, 224], [64, 3, 7, 7]] stride [2, 2] padding [3, 3]:
     * out = floor((224 + 6 - 6 - 1) / 2) + 1 = 112. */
    const char *y = "kind: conv\ninput: [10, 3, 224, 224]\nweight: [64, 3, 7, 7]\nstride: [2, 2]\n"
                    "padding: [3, 3]\ndilation: [1, 1]\ngroups: 1\ndtype: bf16\n";
    int64_t s[8];
    int r;
    out_shape(y, s, &r);
    cr_assert_eq(r, 4);
    cr_assert(s[0] == 10 && s[1] == 64 && s[2] == 112 && s[3] == 112);
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2ull * 10 * 64 * 112 * 112 * 3 * 7 * 7);
    cr_assert_eq(c.matrix_flops, 2360279040ull);
    cr_assert_eq(c.vector_flops, 0);
    cr_assert_eq(c.read_bytes, (10ull * 3 * 224 * 224 + 64 * 3 * 7 * 7) * 2);
    cr_assert_eq(c.write_bytes, 10ull * 64 * 112 * 112 * 2);
    cr_assert_eq(c.input_bytes, 10ull * 3 * 224 * 224 * 2);
    cr_assert_eq(c.weight_bytes, 64ull * 3 * 7 * 7 * 2);
    cr_assert_eq(c.output_bytes, 10ull * 64 * 112 * 112 * 2);
    cr_assert_eq(c.compute_dtype, OPM_BF16);
}

Test(conv, resnet_stem_backward_weight_only)
{
    /* aten::convolution_backward [[10, 64, 112, 112], [10, 3, 224, 224], [64, 3, 7, 7]]
     * output_mask [False, True, False]: the image needs no gradient, so only dW:
     * reads dY and x, writes dW. */
    opm_counts c = counts_of("kind: conv\nphase: train_bwd\ninput: [10, 3, 224, 224]\nweight: [64, 3, 7, 7]\n"
                             "stride: 2\npadding: 3\ngrad_input: false\ndtype: bf16\n");
    cr_assert_eq(c.matrix_flops, 2ull * 10 * 64 * 112 * 112 * 3 * 49);
    cr_assert_eq(c.vector_flops, 0);
    cr_assert_eq(c.read_bytes, (10ull * 64 * 112 * 112 + 10ull * 3 * 224 * 224) * 2);
    cr_assert_eq(c.write_bytes, 64ull * 3 * 49 * 2);
    cr_assert_eq(c.input_bytes, (10ull * 64 * 112 * 112 + 10ull * 3 * 224 * 224) * 2);
    cr_assert_eq(c.output_bytes, 64ull * 3 * 49 * 2);
}

Test(conv, resnet_downsample_3x3_stride2_forward_and_backward)
{
    /* [[10, 128, 28, 28], [256, 128, 3, 3]] stride 2 padding 1: out = floor(27/2) + 1 = 14;
     * backward [[10, 256, 14, 14], [10, 128, 28, 28], [256, 128, 3, 3]] mask [True, True, False]. */
    const char *base = "kind: conv\ninput: [10, 128, 28, 28]\nweight: [256, 128, 3, 3]\nstride: [2, 2]\n"
                       "padding: [1, 1]\ndtype: bf16\n";
    uint64_t macs = 10ull * 256 * 14 * 14 * 128 * 9;
    uint64_t x = 10ull * 128 * 28 * 28 * 2, w = 256ull * 128 * 9 * 2, y = 10ull * 256 * 14 * 14 * 2;
    opm_counts f = counts_of(base);
    cr_assert_eq(f.matrix_flops, 2 * macs);
    cr_assert_eq(f.matrix_flops, 1156055040ull);
    cr_assert_eq(f.read_bytes, x + w);
    cr_assert_eq(f.write_bytes, y);
    char b[512];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", base);
    opm_counts g = counts_of(b);
    cr_assert_eq(g.matrix_flops, 4 * macs); /* dX and dW, each a conv-sized product */
    cr_assert_eq(g.vector_flops, 0);
    cr_assert_eq(g.read_bytes, y + x + w);   /* dY, x, w */
    cr_assert_eq(g.write_bytes, x + w);      /* dX, dW */
    cr_assert_eq(g.input_bytes, y + x);
    cr_assert_eq(g.weight_bytes, w);
}

Test(conv, resnet_1x1_projection_and_3x3_same)
{
    /* [[10, 64, 56, 56], [128, 64, 1, 1]] stride 2 padding 0: out = floor(55/2) + 1 = 28. */
    opm_counts p = counts_of("kind: conv\ninput: [10, 64, 56, 56]\nweight: [128, 64, 1, 1]\nstride: 2\ndtype: bf16\n");
    cr_assert_eq(p.matrix_flops, 2ull * 10 * 128 * 28 * 28 * 64);
    cr_assert_eq(p.write_bytes, 10ull * 128 * 28 * 28 * 2);
    /* [[10, 512, 7, 7], [512, 512, 3, 3]] stride 1 padding 1: out = 7. */
    opm_counts s = counts_of("kind: conv\ninput: [10, 512, 7, 7]\nweight: [512, 512, 3, 3]\npadding: 1\ndtype: bf16\n");
    cr_assert_eq(s.matrix_flops, 2ull * 10 * 512 * 49 * 512 * 9);
    cr_assert_eq(s.matrix_flops, 2312110080ull);
    cr_assert_eq(s.read_bytes, (10ull * 512 * 49 + 512ull * 512 * 9) * 2);
    cr_assert_eq(s.write_bytes, 10ull * 512 * 49 * 2);
}

/* ---- 1-D and 3-D, dilation, per-dim lists ---- */

Test(conv, conv1d_dilated_padded)
{
    /* x [4, 16, 100], w [32, 16, 5], stride 3, padding 4, dilation 2:
     * out = floor((100 + 8 - 2*4 - 1) / 3) + 1 = floor(99/3) + 1 = 34. */
    const char *y = "kind: conv\ninput: [4, 16, 100]\nweight: [32, 16, 5]\nstride: 3\npadding: 4\n"
                    "dilation: 2\ndtype: fp32\n";
    int64_t s[8];
    int r;
    out_shape(y, s, &r);
    cr_assert(r == 3 && s[0] == 4 && s[1] == 32 && s[2] == 34);
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2ull * 4 * 32 * 34 * 16 * 5);
    cr_assert_eq(c.read_bytes, (4ull * 16 * 100 + 32 * 16 * 5) * 4);
    cr_assert_eq(c.write_bytes, 4ull * 32 * 34 * 4);
    char b[256];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", y);
    opm_counts g = counts_of(b);
    cr_assert_eq(g.matrix_flops, 4ull * 4 * 32 * 34 * 16 * 5);
    cr_assert_eq(g.read_bytes, (4ull * 32 * 34 + 4 * 16 * 100 + 32 * 16 * 5) * 4);
    cr_assert_eq(g.write_bytes, (4ull * 16 * 100 + 32 * 16 * 5) * 4);
}

Test(conv, conv3d_per_dim_stride_padding)
{
    /* x [2, 4, 8, 16, 16], w [8, 4, 3, 3, 3], stride [1, 2, 2], padding [1, 1, 0]:
     * out = [8, floor(15/2)+1 = 8, floor(13/2)+1 = 7]. */
    const char *y = "kind: conv\ninput: [2, 4, 8, 16, 16]\nweight: [8, 4, 3, 3, 3]\nstride: [1, 2, 2]\n"
                    "padding: [1, 1, 0]\ndtype: fp16\n";
    int64_t s[8];
    int r;
    out_shape(y, s, &r);
    cr_assert(r == 5 && s[1] == 8 && s[2] == 8 && s[3] == 8 && s[4] == 7, "[%lld %lld %lld]",
              (long long)s[2], (long long)s[3], (long long)s[4]);
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2ull * 2 * 8 * (8 * 8 * 7) * 4 * 27);
    cr_assert_eq(c.read_bytes, (2ull * 4 * 8 * 16 * 16 + 8 * 4 * 27) * 2);
    cr_assert_eq(c.write_bytes, 2ull * 8 * 8 * 8 * 7 * 2);
}

/* ---- groups and depthwise ---- */

Test(conv, grouped_conv)
{
    /* x [2, 12, 10, 10], w [24, 3, 3, 3], groups 4: each output channel reads 3 inputs. */
    const char *y = "kind: conv\ninput: [2, 12, 10, 10]\nweight: [24, 3, 3, 3]\ngroups: 4\npadding: 1\ndtype: bf16\n";
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2ull * 2 * 24 * 100 * 3 * 9);
    cr_assert_eq(c.read_bytes, (2ull * 12 * 100 + 24 * 3 * 9) * 2);
    char b[256];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", y);
    /* dW of a grouped conv is as large as the forward too (C_out·(C_in/g)·Πk weights, each
     * summed over N·Πout positions), not g times larger. */
    cr_assert_eq(counts_of(b).matrix_flops, 4ull * 2 * 24 * 100 * 3 * 9);
}

Test(conv, depthwise)
{
    /* x [2, 32, 17, 17], w [32, 1, 3, 3], groups 32, stride 2, padding 1:
     * out = floor((17 + 2 - 2 - 1) / 2) + 1 = 9. */
    const char *y = "kind: conv\ninput: [2, 32, 17, 17]\nweight: [32, 1, 3, 3]\ngroups: 32\nstride: 2\n"
                    "padding: 1\nbias: true\ndtype: bf16\n";
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2ull * 2 * 32 * 81 * 1 * 9);
    cr_assert_eq(c.vector_flops, 2ull * 32 * 81);
    cr_assert_eq(c.read_bytes, (2ull * 32 * 289 + 32 * 9 + 32) * 2);
    cr_assert_eq(c.write_bytes, 2ull * 32 * 81 * 2);
    cr_assert_eq(c.weight_bytes, (32ull * 9 + 32) * 2);
    rejected("kind: conv\ninput: [2, 32, 17, 17]\nweight: [32, 2, 3, 3]\ngroups: 32\ndtype: bf16\n",
             "C_in/groups = 1, got 2");
    rejected("kind: conv\ninput: [2, 30, 17, 17]\nweight: [32, 1, 3, 3]\ngroups: 32\ndtype: bf16\n",
             "divisible by groups");
    rejected("kind: conv\ninput: [2, 32, 17, 17]\nweight: [30, 2, 3, 3]\ngroups: 16\ndtype: bf16\n",
             "output channels (30) divisible by groups = 16");
}

/* ---- transposed ---- */

Test(conv, transposed_forward_and_backward)
{
    /* x [2, 16, 7, 7], w [16, 8, 4, 4] (C_in, C_out, k), stride 2, padding 1:
     * out = (7-1)*2 - 2 + 3 + 0 + 1 = 14; the work is the data gradient of the normal
     * conv y -> x: N·C_in·Π in·C_out·Π k MACs. */
    const char *y = "kind: conv\ninput: [2, 16, 7, 7]\nweight: [16, 8, 4, 4]\ntransposed: true\nstride: 2\n"
                    "padding: 1\ndtype: bf16\n";
    int64_t s[8];
    int r;
    out_shape(y, s, &r);
    cr_assert(r == 4 && s[0] == 2 && s[1] == 8 && s[2] == 14 && s[3] == 14);
    uint64_t macs = 2ull * 16 * 49 * 8 * 16;
    opm_counts c = counts_of(y);
    cr_assert_eq(c.matrix_flops, 2 * macs);
    cr_assert_eq(c.read_bytes, (2ull * 16 * 49 + 16 * 8 * 16) * 2);
    cr_assert_eq(c.write_bytes, 2ull * 8 * 196 * 2);
    char b[256];
    snprintf(b, sizeof b, "%sphase: train_bwd\n", y);
    opm_counts g = counts_of(b);
    cr_assert_eq(g.matrix_flops, 4 * macs);
    cr_assert_eq(g.read_bytes, (2ull * 8 * 196 + 2 * 16 * 49 + 16 * 8 * 16) * 2);
    cr_assert_eq(g.write_bytes, (2ull * 16 * 49 + 16 * 8 * 16) * 2);
}

Test(conv, transposed_grouped_channels_and_output_padding)
{
    /* Reference defect: it takes C_out = w[1] for a transposed conv, which is C_out/groups.
     * x [2, 8, 5, 5], w [8, 3, 3, 3], groups 4, stride 2, padding 1, output_padding 1:
     * C_out = 3·4 = 12 (not 3), out = (5-1)*2 - 2 + 2 + 1 + 1 = 10. */
    const char *y = "kind: conv\ninput: [2, 8, 5, 5]\nweight: [8, 3, 3, 3]\ngroups: 4\ntransposed: true\n"
                    "stride: 2\npadding: 1\noutput_padding: 1\nbias: true\ndtype: fp32\n";
    int64_t s[8];
    int r;
    out_shape(y, s, &r);
    cr_assert(r == 4 && s[0] == 2 && s[1] == 12 && s[2] == 10 && s[3] == 10, "[%lld, %lld, %lld, %lld]",
              (long long)s[0], (long long)s[1], (long long)s[2], (long long)s[3]);
    opm_counts c = counts_of(y);
    /* each input element scatters into C_out/g = 3 channels × 9 taps */
    cr_assert_eq(c.matrix_flops, 2ull * 2 * 8 * 25 * 3 * 9);
    cr_assert_eq(c.vector_flops, 2ull * 12 * 100);                   /* bias adds over 12 channels */
    cr_assert_eq(c.read_bytes, (2ull * 8 * 25 + 8 * 3 * 9 + 12) * 4); /* bias of 12, not 3 */
    cr_assert_eq(c.write_bytes, 2ull * 12 * 100 * 4);                 /* y of 12 channels */
    /* The reference's shape (3 channels) is rejected, naming the right one. */
    rejected("kind: conv\ntensors:\n"
             "  - {role: input, shape: [2, 8, 5, 5], dtype: fp32}\n"
             "  - {role: weight, shape: [8, 3, 3, 3], dtype: fp32}\n"
             "  - {role: output, shape: [2, 3, 10, 10], dtype: fp32}\n"
             "attrs: {groups: 4, transposed: true, stride: 2, padding: 1, output_padding: 1}\n",
             "expected output shape [2, 12, 10, 10], got [2, 3, 10, 10]");
    rejected("kind: conv\ninput: [2, 8, 5, 5]\nweight: [4, 3, 3, 3]\ngroups: 4\ntransposed: true\ndtype: fp32\n",
             "with C_in = 8, got 4");
}

Test(conv, transposed_is_the_data_gradient_of_the_normal_conv)
{
    /* For output_padding < stride the normal conv y -> x with the same weight storage
     * has the same MACs as the transposed conv x -> y. */
    const int cases[][6] = {/* C_in, C_out/g... : cin, coutg, groups, k, stride, pad */
                            {16, 8, 1, 4, 2, 1}, {8, 3, 4, 3, 2, 1}, {6, 5, 2, 5, 3, 2}, {4, 4, 4, 1, 1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int cin = cases[i][0], coutg = cases[i][1], g = cases[i][2], k = cases[i][3], st = cases[i][4],
            pd = cases[i][5];
        char t[512], n[512];
        snprintf(t, sizeof t,
                 "kind: conv\ninput: [3, %d, 9, 11]\nweight: [%d, %d, %d, %d]\ngroups: %d\ntransposed: true\n"
                 "stride: %d\npadding: %d\ndtype: bf16\n",
                 cin, cin, coutg, k, k, g, st, pd);
        int64_t ys[8];
        int r;
        out_shape(t, ys, &r);
        snprintf(n, sizeof n,
                 "kind: conv\ninput: [3, %lld, %lld, %lld]\nweight: [%d, %d, %d, %d]\ngroups: %d\nstride: %d\n"
                 "padding: %d\ndtype: bf16\n",
                 (long long)ys[1], (long long)ys[2], (long long)ys[3], cin, coutg, k, k, g, st, pd);
        int64_t xs[8];
        out_shape(n, xs, &r);
        cr_assert(xs[1] == cin && xs[2] == 9 && xs[3] == 11, "case %zu: the normal conv maps back", i);
        opm_counts a = counts_of(t), b = counts_of(n);
        cr_assert_eq(a.matrix_flops, b.matrix_flops, "case %zu", i);
        cr_assert_eq(a.matrix_flops, 2ull * 3 * cin * 99 * coutg * k * k, "case %zu", i);
    }
}

/* ---- bias ---- */

Test(conv, bias_tensor_and_attr_forward)
{
    /* A bias tensor [C_out] in its own dtype, or bias: true (C_out in y's dtype). */
    opm_counts t = counts_of("kind: conv\ntensors:\n"
                             "  - {role: input, shape: [2, 4, 6, 6], dtype: bf16}\n"
                             "  - {role: weight, shape: [8, 4, 3, 3], dtype: bf16}\n"
                             "  - {role: weight, shape: [8], dtype: fp32}\n"
                             "  - {role: output, shape: [2, 8, 4, 4], dtype: bf16}\n");
    cr_assert_eq(t.matrix_flops, 2ull * 2 * 8 * 16 * 4 * 9);
    cr_assert_eq(t.vector_flops, 2ull * 8 * 16);
    cr_assert_eq(t.read_bytes, (2ull * 4 * 36 + 8 * 4 * 9) * 2 + 8 * 4);
    cr_assert_eq(t.weight_bytes, 8ull * 4 * 9 * 2 + 8 * 4);
    opm_counts a = counts_of("kind: conv\ninput: [2, 4, 6, 6]\nweight: [8, 4, 3, 3]\nbias: true\ndtype: bf16\n");
    cr_assert_eq(a.vector_flops, 2ull * 8 * 16);
    cr_assert_eq(a.read_bytes, (2ull * 4 * 36 + 8 * 4 * 9 + 8) * 2);
    opm_counts none = counts_of("kind: conv\ninput: [2, 4, 6, 6]\nweight: [8, 4, 3, 3]\ndtype: bf16\n");
    cr_assert_eq(none.vector_flops, 0);
    cr_assert_eq(none.read_bytes, (2ull * 4 * 36 + 8 * 4 * 9) * 2);
    rejected("kind: conv\ntensors:\n"
             "  - {role: input, shape: [2, 4, 6, 6], dtype: bf16}\n"
             "  - {role: weight, shape: [8, 4, 3, 3], dtype: bf16}\n"
             "  - {role: weight, shape: [4], dtype: bf16}\n"
             "  - {role: output, shape: [2, 8, 4, 4], dtype: bf16}\n",
             "expected weight shape [8], got [4]");
    rejected("kind: conv\ntensors:\n"
             "  - {role: input, shape: [2, 4, 6, 6], dtype: bf16}\n"
             "  - {role: weight, shape: [8, 4, 3, 3], dtype: bf16}\n"
             "  - {role: weight, shape: [8], dtype: bf16}\n"
             "  - {role: output, shape: [2, 8, 4, 4], dtype: bf16}\n"
             "attrs: {bias: false}\n",
             "bias tensor");
}

Test(conv, bias_gradient_bytes_are_bytes)
{
    /* Reference defect: dbias counted as prod(y) + C_out *elements*.  Here dbias is a sum
     * of dY (N·C_out·Π out vector FLOPs, dY read once with the products) and writes C_out
     * values in the bias dtype: fp32 → 4 bytes each. */
    const char *y = "kind: conv\nphase: train_bwd\ninput: [3, 5, 9, 9]\nweight: [7, 5, 3, 3]\nbias: true\n"
                    "dtype: fp32\n";
    opm_counts c = counts_of(y);
    uint64_t x = 3ull * 5 * 81 * 4, w = 7ull * 5 * 9 * 4, dy = 3ull * 7 * 49 * 4, db = 7ull * 4;
    cr_assert_eq(c.matrix_flops, 4ull * 3 * 7 * 49 * 5 * 9);
    cr_assert_eq(c.vector_flops, 3ull * 7 * 49);
    cr_assert_eq(c.read_bytes, dy + x + w);
    cr_assert_eq(c.write_bytes, x + w + db);
    cr_assert_eq(c.write_bytes, 4860ull + 1260 + 28);
}

Test(conv, backward_output_mask)
{
    /* PyTorch's output_mask: dX only reads dY and w; dW only reads dY and x. */
    const char *base = "kind: conv\nphase: train_bwd\ninput: [2, 6, 8, 8]\nweight: [4, 6, 3, 3]\npadding: 1\n"
                       "dtype: bf16\n";
    uint64_t macs = 2ull * 4 * 64 * 6 * 9, x = 2ull * 6 * 64 * 2, w = 4ull * 6 * 9 * 2, dy = 2ull * 4 * 64 * 2;
    char b[512];
    snprintf(b, sizeof b, "%sgrad_weight: false\n", base);
    opm_counts gi = counts_of(b);
    cr_assert_eq(gi.matrix_flops, 2 * macs);
    cr_assert_eq(gi.read_bytes, dy + w);
    cr_assert_eq(gi.write_bytes, x);
    snprintf(b, sizeof b, "%sgrad_input: false\n", base);
    opm_counts gw = counts_of(b);
    cr_assert_eq(gw.matrix_flops, 2 * macs);
    cr_assert_eq(gw.read_bytes, dy + x);
    cr_assert_eq(gw.write_bytes, w);
    snprintf(b, sizeof b, "%sgrad_input: false\ngrad_weight: false\nbias: true\n", base);
    opm_counts bo = counts_of(b); /* only dbias */
    cr_assert_eq(bo.matrix_flops, 0);
    cr_assert_eq(bo.vector_flops, 2ull * 4 * 64);
    cr_assert_eq(bo.read_bytes, dy);
    cr_assert_eq(bo.write_bytes, 4ull * 2);
    snprintf(b, sizeof b, "%sgrad_input: false\ngrad_weight: false\n", base);
    rejected(b, "computes nothing");
}

Test(conv, bytes_in_each_tensors_dtype)
{
    /* fp8 input and weight, bf16 output; int4 weight rounds up per tensor. */
    opm_counts c = counts_of("kind: conv\ntensors:\n"
                             "  - {role: input, shape: [1, 8, 5, 5], dtype: fp8_e4m3}\n"
                             "  - {role: weight, shape: [3, 8, 1, 1], dtype: fp8_e4m3}\n"
                             "  - {role: output, shape: [1, 3, 5, 5], dtype: bf16}\n");
    cr_assert_eq(c.read_bytes, 200ull + 24);
    cr_assert_eq(c.write_bytes, 75ull * 2);
    cr_assert_eq(c.compute_dtype, OPM_FP8_E4M3);
    opm_counts i4 = counts_of("kind: conv\ntensors:\n"
                              "  - {role: input, shape: [1, 3, 5], dtype: bf16}\n"
                              "  - {role: weight, shape: [3, 3, 1], dtype: int4}\n"
                              "  - {role: output, shape: [1, 3, 5], dtype: bf16}\n");
    cr_assert_eq(i4.read_bytes, 30ull + 5); /* 9 × 4 bits = 36 bits → 5 bytes */
    /* short form out_dtype */
    opm_counts o = counts_of("kind: conv\ninput: [1, 8, 5, 5]\nweight: [3, 8, 1, 1]\ndtype: fp8\nout_dtype: fp32\n");
    cr_assert_eq(o.write_bytes, 75ull * 4);
}

Test(conv, short_form_equals_full_form)
{
    const char *s = "kind: conv\nphase: train_bwd\ninput: [2, 6, 9, 9]\nweight: [6, 3, 3, 3]\ngroups: 2\n"
                    "stride: [2, 1]\npadding: [1, 0]\ndilation: [1, 2]\nbias: true\ndtype: fp16\n";
    /* H: floor((9 + 2 - 2 - 1)/2) + 1 = 5; W: floor((9 - 4 - 1)/1) + 1 = 5 */
    const char *f = "kind: conv\nphase: train_bwd\ntensors:\n"
                    "  - {role: input, shape: [2, 6, 9, 9], dtype: fp16}\n"
                    "  - {role: weight, shape: [6, 3, 3, 3], dtype: fp16}\n"
                    "  - {role: output, shape: [2, 6, 5, 5], dtype: fp16}\n"
                    "attrs: {groups: 2, stride: [2, 1], padding: [1, 0], dilation: [1, 2], bias: true}\n";
    opm_counts a = counts_of(s), b = counts_of(f);
    cr_assert(memcmp(&a, &b, sizeof a) == 0);
    cr_assert_eq(a.matrix_flops, 4ull * 2 * 6 * 25 * 3 * 9);
}

/* ---- validation ---- */

Test(conv, output_shape_validated)
{
    const char *head = "kind: conv\ntensors:\n"
                       "  - {role: input, shape: [1, 4, 10, 10], dtype: bf16}\n"
                       "  - {role: weight, shape: [8, 4, 3, 3], dtype: bf16}\n";
    char y[512];
    snprintf(y, sizeof y, "%s  - {role: output, shape: [1, 8, 5, 5], dtype: bf16}\nattrs: {stride: 2, padding: 1}\n", head);
    opm_op_free(op_yaml(y));
    snprintf(y, sizeof y, "%s  - {role: output, shape: [1, 8, 4, 4], dtype: bf16}\nattrs: {stride: 2, padding: 1}\n", head);
    rejected(y, "expected output shape [1, 8, 5, 5], got [1, 8, 4, 4]");
    snprintf(y, sizeof y, "%s  - {role: output, shape: [1, 8, 8, 8], dtype: bf16}\n", head);
    opm_op_free(op_yaml(y));
    snprintf(y, sizeof y, "%s  - {role: output, shape: [1, 4, 8, 8], dtype: bf16}\n", head);
    rejected(y, "expected output shape [1, 8, 8, 8]");
    snprintf(y, sizeof y, "%s  - {role: output, shape: [1, 8, 8, 8], dtype: bf16}\nattrs: {stride: [1, 1, 1]}\n", head);
    rejected(y, "one integer or 2 (one per spatial dim), got 3");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3, 3]\ndilation: 2\ndtype: bf16\n",
             "to cover the dilated kernel");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3, 3]\nstride: 0\ndtype: bf16\n", "expected values >= 1");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3, 3]\npadding: -1\ndtype: bf16\n", "expected values >= 0");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3, 3]\noutput_padding: 1\ndtype: bf16\n",
             "without transposed");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [4, 8, 3, 3]\ntransposed: true\nstride: 2\n"
             "output_padding: 2\ndtype: bf16\n",
             "smaller than stride or dilation");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [4, 8, 3, 3]\ntransposed: true\npadding: 3\ndtype: bf16\n",
             "expected a positive output size");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3]\ndtype: bf16\n", "expected 4 entries like input");
    rejected("kind: conv\ninput: [1, 4]\nweight: [8, 4]\ndtype: bf16\n", "1 to 3 spatial dims");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3, 3]\ngroups: 0\ndtype: bf16\n", "positive integer");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3, 3]\nstrides: 2\ndtype: bf16\n", "stride");
    rejected("kind: conv\ninput: [1, 4, 4, 4]\nweight: [8, 4, 3, 3]\n", "dtype");
    rejected("kind: conv\nweight: [8, 4, 3, 3]\ndtype: bf16\n", "input");
    rejected("kind: conv\ntensors:\n  - {role: input, shape: [1, 4, 4, 4], dtype: bf16}\n"
             "  - {role: output, shape: [1, 4, 4, 4], dtype: bf16}\n",
             "needs weight");
}

/* Output length by enumeration: normal conv — the windows whose last tap
 * o·s + d·(k−1) stays inside the padded input; transposed — every input i
 * scatters to i·s + j·d, the full length is the last index + 1, cropped by p
 * on both sides and extended by output_padding. */
static int64_t brute_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int64_t op, int transposed)
{
    if (transposed) {
        int64_t last = 0;
        for (int64_t i = 0; i < in; i++)
            for (int64_t j = 0; j < k; j++)
                if (i * s + j * d > last) last = i * s + j * d;
        return last + 1 - 2 * p + op;
    }
    int64_t n = 0;
    for (int64_t o = 0; o * s + d * (k - 1) <= in + 2 * p - 1; o++) n++;
    return n;
}

Test(conv, output_length_matches_enumeration)
{
    int checked = 0;
    for (int tr = 0; tr < 2; tr++)
        for (int64_t in = 1; in <= 9; in += 2)
            for (int64_t k = 1; k <= 4; k++)
                for (int64_t s = 1; s <= 3; s++)
                    for (int64_t p = 0; p <= 2; p++)
                        for (int64_t d = 1; d <= 2; d++)
                            for (int64_t op = 0; op <= (tr ? 1 : 0); op++) {
                                if (op && op >= s && op >= d) continue;
                                int64_t want = brute_len(in, k, s, p, d, op, tr);
                                if (want < 1) continue;
                                if (!tr && in + 2 * p < d * (k - 1) + 1) continue;
                                char y[512];
                                snprintf(y, sizeof y,
                                         "kind: conv\ninput: [1, 2, %lld]\nweight: [2, 2, %lld]\nstride: %lld\n"
                                         "padding: %lld\ndilation: %lld\ntransposed: %s\noutput_padding: %lld\n"
                                         "dtype: bf16\n",
                                         (long long)in, (long long)k, (long long)s, (long long)p, (long long)d,
                                         tr ? "true" : "false", (long long)op);
                                int64_t sh[8];
                                int r;
                                out_shape(y, sh, &r);
                                cr_assert_eq(sh[2], want, "%s", y);
                                checked++;
                            }
    cr_assert_gt(checked, 300);
}

Test(conv, overflow_detected)
{
    opm_op *op = op_yaml("kind: conv\ninput: [4194304, 4194304, 4194304]\nweight: [4194304, 4194304, 1]\n"
                         "dtype: bf16\n");
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), OPM_EOVERFLOW);
    opm_op_free(op);
    rejected("kind: conv\ninput: [1, 1, 9223372036854775807]\nweight: [1, 1, 1]\npadding: 9223372036854775807\n"
             "dtype: bf16\n",
             "overflows");
}

/* ---- properties ---- */

typedef struct cfg {
    int64_t n, cin, cout, h, w, k, d, s, g;
    int transposed, bias, bwd;
} cfg;

static opm_counts cfg_counts(const cfg *c)
{
    /* odd k with "same" padding d·(k−1)/2, so the kernel and dilation do not shrink
     * the output of a stride-1 conv */
    char y[512];
    int64_t wa = c->transposed ? c->cin : c->cout, wb = c->transposed ? c->cout / c->g : c->cin / c->g;
    snprintf(y, sizeof y,
             "kind: conv\nphase: %s\ninput: [%lld, %lld, %lld, %lld]\nweight: [%lld, %lld, %lld, %lld]\n"
             "stride: %lld\npadding: %lld\ndilation: %lld\ngroups: %lld\ntransposed: %s\nbias: %s\ndtype: bf16\n",
             c->bwd ? "train_bwd" : "inference", (long long)c->n, (long long)c->cin, (long long)c->h,
             (long long)c->w, (long long)wa, (long long)wb, (long long)c->k, (long long)c->k, (long long)c->s,
             (long long)(c->d * (c->k - 1) / 2), (long long)c->d, (long long)c->g, c->transposed ? "true" : "false",
             c->bias ? "true" : "false");
    return counts_of(y);
}

static void assert_geq(const opm_counts *a, const opm_counts *b, const char *what)
{
    cr_assert_geq(a->matrix_flops, b->matrix_flops, "%s: matrix", what);
    cr_assert_geq(a->vector_flops, b->vector_flops, "%s: vector", what);
    cr_assert_geq(a->read_bytes, b->read_bytes, "%s: read", what);
    cr_assert_geq(a->write_bytes, b->write_bytes, "%s: write", what);
}

Test(conv, monotone_in_every_dimension_and_backward_geq_forward)
{
    const cfg bases[] = {
        {2, 8, 8, 9, 11, 3, 1, 1, 1, 0, 0, 0}, {2, 8, 8, 9, 11, 3, 1, 2, 2, 0, 1, 0},
        {2, 8, 8, 9, 11, 3, 1, 2, 4, 1, 1, 0}, {1, 4, 4, 5, 5, 1, 2, 1, 4, 1, 0, 0},
    };
    for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++)
        for (int bwd = 0; bwd < 2; bwd++) {
            cfg b = bases[bi];
            b.bwd = bwd;
            opm_counts base = cfg_counts(&b);
            cr_assert_gt(base.matrix_flops, 0);
            char what[64];
            /* grow each dimension in turn (channels by a multiple of g) */
            for (int dim = 0; dim < 9; dim++) {
                cfg u = b;
                switch (dim) {
                case 0: u.n += 1; break;
                case 1: u.cin += u.g; break;
                case 2: u.cout += u.g; break;
                case 3: u.h += 1; break;
                case 4: u.w += 3; break;
                case 5: u.k += 2; break;
                case 6: u.d += 1; break;
                case 7: u.bias = 1; break;
                default: u.s += u.transposed ? 1 : 0; break; /* transposed output grows with stride */
                }
                opm_counts up = cfg_counts(&u);
                snprintf(what, sizeof what, "base %zu bwd %d dim %d", bi, bwd, dim);
                assert_geq(&up, &base, what);
            }
            /* more groups or a larger stride (normal conv) never add work */
            cfg m = b;
            m.g *= 2;
            if (m.cin % m.g == 0 && m.cout % m.g == 0) {
                opm_counts mg = cfg_counts(&m);
                cr_assert_leq(mg.matrix_flops, base.matrix_flops);
            }
            if (!b.transposed) {
                cfg s = b;
                s.s += 1;
                cr_assert_leq(cfg_counts(&s).matrix_flops, base.matrix_flops);
            }
            if (!bwd) {
                cfg k = b;
                k.bwd = 1;
                opm_counts bk = cfg_counts(&k);
                cr_assert_geq(bk.matrix_flops, base.matrix_flops);
                cr_assert_eq(bk.matrix_flops, 2 * base.matrix_flops);
                cr_assert_geq(bk.vector_flops, base.vector_flops);
                cr_assert_geq(bk.read_bytes + bk.write_bytes, base.read_bytes + base.write_bytes);
            }
        }
}

/* ---- golden: every row of every CONV_fwd.csv ---- */

/* "(4, 3, 224, 224)" → ints; returns the count. */
static int tuple_ints(const char *s, int64_t *out, int cap)
{
    int64_t d[8][8];
    int lens[8];
    int n = py_int_lists(s, d, lens, 8);
    cr_assert(n >= 1 && n <= cap, "cannot parse '%s'", s);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(lens[i], 1, "expected a flat tuple: '%s'", s);
        out[i] = d[i][0];
    }
    return n;
}

static void set_list(opm_op *op, const char *key, const csv *c, size_t row, const char *col)
{
    int64_t v[8];
    int n = tuple_ints(csv_get(c, row, col), v, 8);
    opm_error err;
    cr_assert_eq(opm_op_set_ints(op, key, v, (size_t)n, &err), 0, "%s", err.message);
}

Test(conv, golden_conv_fwd_every_row)
{
    char dir[1024];
    DIR *d = opendir(tracelens_path("", dir, sizeof dir));
    cr_assert_not_null(d, "cannot open %s", dir);
    size_t files = 0, rows = 0, equal = 0, deviations = 0;
    int falcon = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char rel[512], path[1024];
        snprintf(rel, sizeof rel, "%s/CONV_fwd.csv", e->d_name);
        tracelens_path(rel, path, sizeof path);
        FILE *probe = fopen(path, "r");
        if (!probe) continue;
        fclose(probe);
        const char *trace = e->d_name;
        files++;
        falcon += !strcmp(trace, "h100_falcon") || !strcmp(trace, "mi300_falcon");
        csv *c = csv_load(path);
        for (size_t r = 0; r < csv_rows(c); r++, rows++) {
            int64_t xs[8], ws[8], st[8], pd[8], dl[8], opd[8];
            int xr = tuple_ints(csv_get(c, r, "param: input_shape"), xs, 8);
            int wr = tuple_ints(csv_get(c, r, "param: filter_shape"), ws, 8);
            int nsp = xr - 2;
            cr_assert_eq(wr, xr);
            cr_assert_eq(tuple_ints(csv_get(c, r, "param: stride"), st, 8), nsp);
            cr_assert_eq(tuple_ints(csv_get(c, r, "param: padding"), pd, 8), nsp);
            cr_assert_eq(tuple_ints(csv_get(c, r, "param: dilation"), dl, 8), nsp);
            cr_assert_eq(tuple_ints(csv_get(c, r, "param: output_padding"), opd, 8), nsp);
            int64_t g = (int64_t)csv_num(c, r, "param: groups");
            int tr = csv_bool(c, r, "param: transposed_conv");
            int ref_bias = csv_bool(c, r, "param: bias");
            cr_assert(tr >= 0 && ref_bias >= 0);
            char types[4][64];
            cr_assert_eq(py_strings(csv_get(c, r, "param: dtype_input_weight"), types, 4), 2);
            opm_dtype xdt, wdt;
            cr_assert_eq(opm_dtype_parse(torch_dtype(types[0]), &xdt), 0);
            cr_assert_eq(opm_dtype_parse(torch_dtype(types[1]), &wdt), 0);
            /* The bias is the third of aten::convolution's Input Dims: [] when absent. */
            int64_t id[12][8];
            int il[12];
            int nin = py_int_lists(csv_get(c, r, "Input Dims_first"), id, il, 12);
            cr_assert_geq(nin, 3);
            int has_bias = il[2] > 0;
            char itypes[12][64];
            cr_assert_geq(py_strings(csv_get(c, r, "Input type_first"), itypes, 12), 3);

            /* y from the shape formulas, written out here independently of conv.c */
            int64_t ys[8];
            ys[0] = xs[0];
            ys[1] = tr ? ws[1] * g : ws[0];
            for (int i = 0; i < nsp; i++)
                ys[2 + i] = tr ? (xs[2 + i] - 1) * st[i] - 2 * pd[i] + dl[i] * (ws[2 + i] - 1) + opd[i] + 1
                               : (xs[2 + i] + 2 * pd[i] - dl[i] * (ws[2 + i] - 1) - 1) / st[i] + 1;
            opm_error err;
            opm_op *op = opm_op_new("conv", OPM_KIND_CONV, OPM_PHASE_INFERENCE, &err);
            cr_assert_not_null(op);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, xr, xdt, NULL, &err), 0);
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_WEIGHT, ws, wr, wdt, NULL, &err), 0);
            opm_dtype bdt = xdt;
            if (has_bias) {
                cr_assert_eq(opm_dtype_parse(torch_dtype(itypes[2]), &bdt), 0);
                cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_WEIGHT, id[2], il[2], bdt, NULL, &err), 0);
            }
            cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_OUTPUT, ys, xr, xdt, NULL, &err), 0);
            set_list(op, "stride", c, r, "param: stride");
            set_list(op, "padding", c, r, "param: padding");
            set_list(op, "dilation", c, r, "param: dilation");
            if (tr) set_list(op, "output_padding", c, r, "param: output_padding");
            cr_assert_eq(opm_op_set_int(op, "groups", g, &err), 0);
            cr_assert_eq(opm_op_set_bool(op, "transposed", tr, &err), 0);
            cr_assert_eq(opm_op_validate(op, &err), 0, "row %zu: %s", r, err.message);
            opm_counts k;
            cr_assert_eq(opm_op_count(op, &k, &err), 0, "%s", err.message);
            opm_op_free(op);

            double ref_flops = csv_num(c, r, "GFLOPS_first") * 1e9;
            double ref_bytes = csv_num(c, r, "Data Moved (MB)_first") * 1048576.0;
            double our_flops = (double)(k.matrix_flops + k.vector_flops);
            double our_bytes = (double)(k.read_bytes + k.write_bytes);
            if (has_bias && !ref_bias) {
                /* Deviation (reference defect): it never detects the bias, so it omits the
                 * N·C_out·Π out bias adds and the C_out bias values read.  The products and
                 * every other byte agree. */
                uint64_t adds = (uint64_t)ys[0] * (uint64_t)ys[1];
                for (int i = 0; i < nsp; i++) adds *= (uint64_t)ys[2 + i];
                cr_assert_eq(k.vector_flops, adds);
                cr_assert_lt(rel_diff((double)k.matrix_flops, ref_flops), 1e-6, "row %zu", r);
                cr_assert_lt(rel_diff(our_flops, ref_flops + (double)adds), 1e-6);
                cr_assert_lt(rel_diff(our_bytes, ref_bytes + (double)ys[1] * opm_dtype_bytes(bdt)), 1e-6);
                deviations++;
            } else {
                cr_assert_lt(rel_diff(our_flops, ref_flops), 1e-6, "%s row %zu: ours %.0f, reference %.0f",
                             trace, r, our_flops, ref_flops);
                cr_assert_lt(rel_diff(our_bytes, ref_bytes), 1e-6, "%s row %zu: ours %.0f, reference %.0f",
                             trace, r, our_bytes, ref_bytes);
                equal++;
            }
        }
        csv_free(c);
    }
    closedir(d);
    cr_assert_eq(falcon, 2, "expected CONV_fwd.csv in h100_falcon and mi300_falcon");
    cr_assert_geq(files, 2);
    cr_assert_geq(rows, 2);
    cr_assert_eq(equal + deviations, rows);
    /* both ViT patch-embedding rows (one per falcon trace) carry a bias the reference misses */
    cr_assert_geq(deviations, 2);
}

Test(conv, golden_falcon_patch_embedding_by_hand)
{
    /* ViT patch embedding (Falconsai): x [4, 3, 224, 224], w [768, 3, 16, 16], bias [768],
     * stride 16, bf16: out 14×14.  Reference: 0.924844032 GFLOPS, 3.421875 MiB (no bias). */
    opm_counts c = counts_of("kind: conv\ntensors:\n"
                             "  - {role: input, shape: [4, 3, 224, 224], dtype: bf16}\n"
                             "  - {role: weight, shape: [768, 3, 16, 16], dtype: bf16}\n"
                             "  - {role: weight, shape: [768], dtype: bf16}\n"
                             "  - {role: output, shape: [4, 768, 14, 14], dtype: bf16}\n"
                             "attrs: {stride: [16, 16], padding: [0, 0], dilation: [1, 1], groups: 1}\n");
    cr_assert_eq(c.matrix_flops, 924844032ull);              /* 2·4·768·196·3·256: = reference */
    cr_assert_eq(c.vector_flops, 602112ull);                 /* 4·768·196 bias adds: reference 0 */
    cr_assert_eq(c.read_bytes + c.write_bytes, 3589632ull);  /* reference 3,588,096 = 3.421875 MiB */
    cr_assert_eq(c.read_bytes + c.write_bytes - 768 * 2, (uint64_t)(3.421875 * 1048576));
}
