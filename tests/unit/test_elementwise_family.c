/* test_elementwise_family.c — kinds elementwise, reduction, softmax and
 * cross_entropy: counts written out by hand for every variant, forward and
 * train_bwd; the FLOP-weight table; errors; properties (monotone in every
 * dimension); and the golden rows of TraceLens's BinaryElementwise.csv,
 * UnaryElementwise.csv and Reduce_fwd.csv in every trace under
 * tests/data/tracelens/, each equal at 1e-6 or a documented deviation
 * (docs/ops_parts/elementwise.md) whose size is asserted exactly. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "golden.h"
#include "testutil.h"

/* The op must be refused (at parse/validate or count) with `field` and a
 * message containing `needle`. */
static void refused(const char *yaml, opm_status code, const char *field, const char *needle)
{
    opm_error err;
    opm_error_clear(&err);
    opm_op *op = opm_op_parse_string(yaml, strlen(yaml), OPM_FORMAT_YAML, "<test>", 1, &err);
    if (op) {
        opm_counts c;
        int rc = opm_op_count(op, &c, &err);
        opm_op_free(op);
        cr_assert_neq(rc, 0, "accepted: %s", yaml);
    }
    cr_assert_eq(err.code, code, "%s: code %d, message %s", yaml, (int)err.code, err.message);
    cr_assert_str_eq(err.field, field, "%s: %s", yaml, err.message);
    cr_assert(strstr(err.message, needle), "%s: '%s' lacks '%s'", yaml, err.message, needle);
}

/* ------------------------------------------------------------------ */
/* elementwise                                                          */

Test(elementwise, unary_exp_forward_and_backward)
{
    opm_counts f = counts_of("kind: elementwise\nshape: [8, 16]\ndtype: bf16\nop: exp\n");
    cr_assert_eq(f.vector_flops, 128 * 4);
    cr_assert_eq(f.matrix_flops, 0);
    cr_assert_eq(f.read_bytes, 256);
    cr_assert_eq(f.write_bytes, 256);
    cr_assert_eq(f.compute_dtype, OPM_BF16);
    opm_counts b = counts_of("kind: elementwise\nphase: train_bwd\nshape: [8, 16]\ndtype: bf16\nop: exp\n");
    cr_assert_eq(b.vector_flops, 128 * 1); /* dy·y */
    cr_assert_eq(b.read_bytes, 256 + 256);
    cr_assert_eq(b.write_bytes, 256);
}

Test(elementwise, binary_broadcast_forward_and_backward)
{
    /* [4, 1, 8] + [3, 1] → [4, 3, 8] = 96 elements */
    opm_counts f = counts_of("kind: elementwise\ninputs: [[4, 1, 8], [3, 1]]\ndtype: fp32\nop: add\n");
    cr_assert_eq(f.vector_flops, 96);
    cr_assert_eq(f.read_bytes, (32 + 3) * 4);
    cr_assert_eq(f.write_bytes, 96 * 4);
    /* add's gradient is dy (reduced for the broadcast operand): x is not read */
    opm_counts b = counts_of("kind: elementwise\nphase: train_bwd\ninputs: [[4, 1, 8], [3, 1]]\ndtype: fp32\nop: add\n");
    cr_assert_eq(b.vector_flops, 96);
    cr_assert_eq(b.read_bytes, 96 * 4);
    cr_assert_eq(b.write_bytes, (32 + 3) * 4);
    /* mul's gradients need both operands */
    opm_counts m = counts_of("kind: elementwise\nphase: train_bwd\ninputs: [[4, 1, 8], [3, 1]]\ndtype: fp32\nop: mul\n");
    cr_assert_eq(m.vector_flops, 96 * 2);
    cr_assert_eq(m.read_bytes, (96 + 32 + 3) * 4);
    cr_assert_eq(m.write_bytes, (32 + 3) * 4);
    /* train_fwd counts as the forward */
    opm_counts t = counts_of("kind: elementwise\nphase: train_fwd\ninputs: [[4, 1, 8], [3, 1]]\ndtype: fp32\nop: mul\n");
    cr_assert_eq(t.vector_flops, 96);
    cr_assert_eq(t.read_bytes, f.read_bytes);
}

Test(elementwise, scalar_operands)
{
    /* A 0-dim fp64 tensor times an fp32 tensor: one element of 8 bytes read. */
    opm_counts z = counts_of("kind: elementwise\ntensors:\n"
                             "  - {role: input, shape: [16, 559, 1], dtype: fp32}\n"
                             "  - {role: input, shape: [], dtype: fp64}\n"
                             "  - {role: output, shape: [16, 559, 1], dtype: fp32}\n"
                             "attrs: {op: add}\n");
    cr_assert_eq(z.vector_flops, 8944);
    cr_assert_eq(z.read_bytes, 8944 * 4 + 8);
    cr_assert_eq(z.write_bytes, 8944 * 4);
    /* A Python scalar is a kernel argument: x * 2.0 has one tensor input. */
    opm_counts p = counts_of("kind: elementwise\nshape: [10]\ndtype: fp16\nop: mul\n");
    cr_assert_eq(p.vector_flops, 10);
    cr_assert_eq(p.read_bytes, 20);
    cr_assert_eq(p.write_bytes, 20);
    /* Short form: [] in inputs is a 0-dim tensor; everything 0-dim gives a 0-dim output. */
    opm_counts s = counts_of("kind: elementwise\ninputs: [[], []]\ndtype: int64\nop: add\n");
    cr_assert_eq(s.vector_flops, 1);
    cr_assert_eq(s.read_bytes, 16);
    cr_assert_eq(s.write_bytes, 8);
}

Test(elementwise, gated_two_inputs)
{
    /* silu(g)·u, g and u [32, 12288] bf16; n = 393216 */
    opm_counts f = counts_of("kind: elementwise\ninputs: [[32, 12288], [32, 12288]]\ndtype: bf16\nop: silu_mul\n");
    cr_assert_eq(f.vector_flops, 393216ull * 5);
    cr_assert_eq(f.read_bytes, 2 * 786432);
    cr_assert_eq(f.write_bytes, 786432);
    opm_counts b = counts_of("kind: elementwise\nphase: train_bwd\ninputs: [[32, 12288], [32, 12288]]\ndtype: bf16\nop: silu_mul\n");
    cr_assert_eq(b.vector_flops, 393216ull * 11);
    cr_assert_eq(b.read_bytes, 786432 + 2 * 786432);
    cr_assert_eq(b.write_bytes, 2 * 786432);
    opm_counts g = counts_of("kind: elementwise\ninputs: [[4, 8], [4, 8]]\ndtype: fp32\nop: gelu_mul\n");
    cr_assert_eq(g.vector_flops, 32 * 9);
    opm_counts gb = counts_of("kind: elementwise\nphase: train_bwd\ninputs: [[4, 8], [4, 8]]\ndtype: fp32\nop: gelu_mul\n");
    cr_assert_eq(gb.vector_flops, 32 * 20);
}

Test(elementwise, gated_one_input_split_in_halves)
{
    /* sgl_kernel::silu_and_mul: input [32, 24576] → output [32, 12288] */
    opm_op *op = op_yaml("kind: elementwise\nshape: [32, 24576]\ndtype: bf16\nop: silu_mul\n");
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    cr_assert_eq(y->rank, 2);
    cr_assert_eq(y->shape[1], 12288);
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), 0, "%s", err.message);
    cr_assert_eq(c.vector_flops, 1966080);             /* 32·12288·5 */
    cr_assert_eq(c.read_bytes + c.write_bytes, 2359296); /* 2.25 MiB */
    opm_op_free(op);
    opm_counts b = counts_of("kind: elementwise\nphase: train_bwd\nshape: [32, 24576]\ndtype: bf16\nop: silu_mul\n");
    cr_assert_eq(b.vector_flops, 393216ull * 11);
    cr_assert_eq(b.read_bytes, 786432 + 1572864);
    cr_assert_eq(b.write_bytes, 1572864);
    refused("kind: elementwise\nshape: [4, 7]\ndtype: bf16\nop: gelu_mul\n", OPM_EINVAL, "tensors[0].shape",
            "even size");
    refused("kind: elementwise\ntensors:\n  - {role: input, shape: [4, 7], dtype: bf16}\n"
            "  - {role: output, shape: [4, 3], dtype: bf16}\nattrs: {op: silu_mul}\n",
            OPM_EINVAL, "tensors[0].shape", "even size");
}

/* Every entry of the one table, forward and backward FLOPs per element. */
Test(elementwise, flop_weight_table)
{
    static const struct { const char *op; unsigned fwd, bwd; } t[] = {
        {"add", 1, 1}, {"sub", 1, 1}, {"mul", 1, 2}, {"div", 1, 3}, {"neg", 1, 1}, {"abs", 1, 2},
        {"max", 1, 3}, {"min", 1, 3}, {"relu", 1, 2}, {"where", 1, 2}, {"clamp", 2, 3}, {"square", 1, 2},
        {"reciprocal", 1, 2}, {"fma", 2, 2}, {"exp", 4, 1}, {"log", 4, 1}, {"sqrt", 4, 2}, {"rsqrt", 4, 4},
        {"tanh", 4, 3}, {"sigmoid", 4, 3}, {"silu", 4, 9}, {"gelu", 8, 17}, {"gelu_tanh", 8, 17},
        {"erf", 8, 7}, {"pow", 8, 10}, {"silu_mul", 5, 11}, {"sigmoid_mul", 5, 9}, {"gelu_mul", 9, 20},
        {"gelu_tanh_mul", 9, 20}, {"copy", 0, 0}, {"cast", 0, 0}, {"fill", 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char y[160];
        snprintf(y, sizeof y, "kind: elementwise\ninputs: [[6, 10], [6, 10]]\ndtype: fp32\nop: %s\n", t[i].op);
        cr_assert_eq(counts_of(y).vector_flops, 60 * t[i].fwd, "%s forward", t[i].op);
        snprintf(y, sizeof y, "kind: elementwise\nphase: train_bwd\ninputs: [[6, 10], [6, 10]]\ndtype: fp32\nop: %s\n",
                 t[i].op);
        cr_assert_eq(counts_of(y).vector_flops, 60 * t[i].bwd, "%s backward", t[i].op);
    }
}

Test(elementwise, override_and_errors)
{
    opm_counts o = counts_of("kind: elementwise\nshape: [10]\ndtype: fp32\nop: my_kernel\nop_count_per_element: 3\n");
    cr_assert_eq(o.vector_flops, 30);
    opm_counts ob = counts_of("kind: elementwise\nphase: train_bwd\nshape: [10]\ndtype: fp32\nop: exp\nop_count_per_element: 3\n");
    cr_assert_eq(ob.vector_flops, 30);
    cr_assert_eq(ob.read_bytes, 80);
    opm_counts d = counts_of("kind: elementwise\nshape: [10]\ndtype: fp32\n");
    cr_assert_eq(d.vector_flops, 10);
    refused("kind: elementwise\nshape: [10]\ndtype: fp32\nop: slu\n", OPM_EINVAL, "attrs.op", "did you mean 'silu'");
    refused("kind: elementwise\nshape: [10]\ndtype: fp32\nop_count_per_element: -1\n", OPM_EINVAL,
            "attrs.op_count_per_element", "non-negative");
    refused("kind: elementwise\ninputs: [[4, 3], [5]]\ndtype: fp32\n", OPM_EINVAL, "inputs[1]", "broadcasts with [4, 3]");
    refused("kind: elementwise\ntensors:\n  - {role: input, shape: [4, 3], dtype: bf16}\n"
            "  - {role: output, shape: [4], dtype: bf16}\n",
            OPM_EINVAL, "tensors[1].shape", "expected output shape [4, 3]");
    refused("kind: elementwise\ntensors:\n  - {role: output, shape: [4], dtype: bf16}\n", OPM_EINVAL, "tensors",
            "at least one input");
    refused("kind: elementwise\nshape: [4294967296, 4294967296, 16]\ndtype: fp32\n", OPM_EOVERFLOW, "", "overflows");
}

/* ------------------------------------------------------------------ */
/* reduction                                                           */

/* x [6, 7, 8] fp32 (n = 336, 1344 bytes) reduced over [0, -1] → y [7] (m = 7, 28 bytes). */
static opm_counts red(const char *op, int bwd)
{
    char y[200];
    snprintf(y, sizeof y, "kind: reduction\n%sshape: [6, 7, 8]\ndim: [0, -1]\ndtype: fp32\nop: %s\n",
             bwd ? "phase: train_bwd\n" : "", op);
    return counts_of(y);
}

Test(reduction, every_op_forward_and_backward)
{
    static const struct {
        const char *op;
        uint64_t ff, bf, br; /* forward FLOPs, backward FLOPs, backward read bytes */
    } t[] = {
        {"sum", 336, 0, 28},                     /* bwd reads dy only */
        {"mean", 336 + 7, 336, 28},              /* + 1 divide per y; bwd dy/n per x */
        {"max", 336, 2 * 336, 28 + 1344 + 28},   /* bwd: x == y select; reads dy, x, y */
        {"min", 336, 2 * 336, 28 + 1344 + 28},
        {"norm", 2 * 336 + 4 * 7, 336 + 7, 28 + 1344 + 28},
        {"var", 4 * 336 + 2 * 7, 3 * 336 + 3 * 7, 28 + 1344},
        {"std", 4 * 336 + 6 * 7, 3 * 336 + 5 * 7, 28 + 1344 + 28},
        {"logsumexp", 7 * 336 + 5 * 7, 6 * 336, 28 + 1344 + 28},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        opm_counts f = red(t[i].op, 0), b = red(t[i].op, 1);
        cr_assert_eq(f.vector_flops, t[i].ff, "%s", t[i].op);
        cr_assert_eq(f.read_bytes, 1344, "%s", t[i].op);
        cr_assert_eq(f.write_bytes, 28, "%s", t[i].op);
        cr_assert_eq(b.vector_flops, t[i].bf, "%s", t[i].op);
        cr_assert_eq(b.read_bytes, t[i].br, "%s", t[i].op);
        cr_assert_eq(b.write_bytes, 1344, "%s", t[i].op);
    }
    cr_assert_eq(counts_of("kind: reduction\nshape: [6, 7, 8]\ndim: [0, -1]\ndtype: fp32\n").vector_flops, 336,
                 "default op is sum");
}

Test(reduction, output_is_not_one_element)
{
    /* Qwen's RMSNorm statistic: mean over the last dim, keepdim → [16, 559, 1]. */
    opm_counts m = counts_of("kind: reduction\nshape: [16, 559, 1024]\ndim: -1\nkeepdim: true\nop: mean\ndtype: fp32\n");
    cr_assert_eq(m.vector_flops, 9158656ull + 8944);
    cr_assert_eq(m.read_bytes, 9158656ull * 4);
    cr_assert_eq(m.write_bytes, 8944 * 4);
    opm_counts k = counts_of("kind: reduction\nshape: [6, 7, 8]\ndim: 1\nkeepdim: true\ndtype: bf16\n");
    cr_assert_eq(k.write_bytes, 48 * 2);
    opm_counts all = counts_of("kind: reduction\nshape: [6, 8]\ndim: []\ndtype: bf16\n");
    cr_assert_eq(all.write_bytes, 2);
}

Test(reduction, argmax_writes_int64_indices)
{
    opm_op *op = op_yaml("kind: reduction\nshape: [6, 7, 8]\ndim: 1\nkeepdim: true\ndtype: fp32\nop: argmax\n");
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    cr_assert_eq(y->dtype, OPM_INT64);
    cr_assert_eq(y->rank, 3);
    cr_assert_eq(y->shape[1], 1);
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), 0, "%s", err.message);
    cr_assert_eq(c.vector_flops, 2 * 336);
    cr_assert_eq(c.read_bytes, 1344);
    cr_assert_eq(c.write_bytes, 48 * 8);
    opm_op_free(op);
    opm_counts a = counts_of("kind: reduction\nshape: [6, 7, 8]\ndtype: bf16\nop: argmin\n");
    cr_assert_eq(a.vector_flops, 2 * 336);
    cr_assert_eq(a.write_bytes, 8);
    opm_counts i32 = counts_of("kind: reduction\nshape: [6, 7, 8]\ndim: 0\ndtype: bf16\nout_dtype: int32\nop: argmax\n");
    cr_assert_eq(i32.write_bytes, 56 * 4);
    refused("kind: reduction\ntensors:\n  - {role: input, shape: [6, 7], dtype: fp32}\n"
            "  - {role: output, shape: [6], dtype: fp32}\nattrs: {op: argmax, dim: 1}\n",
            OPM_EINVAL, "tensors[1].dtype", "expected int64");
    refused("kind: reduction\nphase: train_bwd\nshape: [6, 7]\ndtype: fp32\nop: argmax\n", OPM_EINVAL, "phase",
            "no gradient");
}

Test(reduction, cumsum_writes_an_x_sized_output)
{
    opm_counts f = counts_of("kind: reduction\nshape: [6, 7, 8]\ndim: 1\ndtype: fp32\nop: cumsum\n");
    cr_assert_eq(f.vector_flops, 336);
    cr_assert_eq(f.read_bytes, 1344);
    cr_assert_eq(f.write_bytes, 1344);
    opm_counts b = counts_of("kind: reduction\nphase: train_bwd\nshape: [6, 7, 8]\ndim: 1\ndtype: fp32\nop: cumsum\n");
    cr_assert_eq(b.vector_flops, 336);
    cr_assert_eq(b.read_bytes, 1344);
    cr_assert_eq(b.write_bytes, 1344);
    /* PyTorch promotes an integer cumsum (and sum) to int64 */
    opm_op *op = op_yaml("kind: reduction\nshape: [32]\ndim: 0\ndtype: int32\nop: cumsum\n");
    cr_assert_eq(opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0)->dtype, OPM_INT64);
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), 0, "%s", err.message);
    cr_assert_eq(c.read_bytes + c.write_bytes, 32 * 4 + 32 * 8);
    opm_op_free(op);
    opm_counts s = counts_of("kind: reduction\nshape: [4, 5]\ndim: 1\ndtype: int32\n");
    cr_assert_eq(s.write_bytes, 4 * 8);
    opm_counts keep = counts_of("kind: reduction\nshape: [32]\ndim: 0\ndtype: int32\nout_dtype: int32\nop: cumsum\n");
    cr_assert_eq(keep.write_bytes, 32 * 4);
    opm_counts mx = counts_of("kind: reduction\nshape: [32]\ndtype: int32\nop: max\n");
    cr_assert_eq(mx.write_bytes, 4);
}

Test(reduction, errors)
{
    refused("kind: reduction\nshape: [6, 7]\ndtype: fp32\nop: cumsum\n", OPM_EINVAL, "attrs.dim", "one dimension");
    refused("kind: reduction\nshape: [6, 7]\ndim: [0, 1]\ndtype: fp32\nop: cumsum\n", OPM_EINVAL, "attrs.dim",
            "one dimension");
    refused("kind: reduction\nshape: [6, 7]\ndim: 0\nkeepdim: true\ndtype: fp32\nop: cumsum\n", OPM_EINVAL,
            "attrs.keepdim", "x's shape");
    refused("kind: reduction\nshape: [6, 7, 8]\ndim: [1, -2]\ndtype: fp32\n", OPM_EINVAL, "attrs.dim", "twice");
    refused("kind: reduction\nshape: [6, 7]\ndim: 2\ndtype: fp32\n", OPM_EINVAL, "attrs.dim", "[-2, 2)");
    refused("kind: reduction\nshape: [6, 7]\ndtype: fp32\nop: sun\n", OPM_EINVAL, "attrs.op", "did you mean 'sum'");
    refused("kind: reduction\ntensors:\n  - {role: input, shape: [6, 7], dtype: fp32}\n"
            "  - {role: output, shape: [1], dtype: fp32}\nattrs: {dim: 1}\n",
            OPM_EINVAL, "tensors[1].shape", "expected output shape [6]");
}

/* ------------------------------------------------------------------ */
/* softmax                                                             */

Test(softmax, forward_and_backward)
{
    opm_counts f = counts_of("kind: softmax\nshape: [4, 100]\ndtype: fp32\n");
    cr_assert_eq(f.vector_flops, 400 * 8);
    cr_assert_eq(f.read_bytes, 1600);
    cr_assert_eq(f.write_bytes, 1600);
    opm_counts b = counts_of("kind: softmax\nphase: train_bwd\nshape: [4, 100]\ndtype: fp32\n");
    cr_assert_eq(b.vector_flops, 400 * 4);
    cr_assert_eq(b.read_bytes, 3200);
    cr_assert_eq(b.write_bytes, 1600);
    opm_counts h = counts_of("kind: softmax\nshape: [4, 100]\ndtype: bf16\nout_dtype: fp32\n");
    cr_assert_eq(h.read_bytes, 800);
    cr_assert_eq(h.write_bytes, 1600);
    refused("kind: softmax\nshape: [4, 100]\ndim: 2\ndtype: fp32\n", OPM_EINVAL, "attrs.dim", "[-2, 2)");
}

/* ------------------------------------------------------------------ */
/* cross_entropy                                                       */

/* N = 4 rows, V = 10 classes, bf16 logits (80 bytes), int64 targets (32), bf16 loss. */
static opm_counts ce(const char *phase, const char *extra)
{
    char y[256];
    snprintf(y, sizeof y, "kind: cross_entropy\nphase: %s\ntokens: 4\nvocab: 10\ndtype: bf16\n%s", phase, extra);
    return counts_of(y);
}

Test(cross_entropy, fused_mean_sum_none)
{
    opm_counts f = ce("inference", "");
    cr_assert_eq(f.vector_flops, 40 * 7 + 4 * 6 + 4 + 1);
    cr_assert_eq(f.read_bytes, 80 + 32);
    cr_assert_eq(f.write_bytes, 2);
    cr_assert_eq(f.workspace_bytes, 0);
    opm_counts t = ce("train_fwd", "");
    cr_assert_eq(t.vector_flops, f.vector_flops);
    cr_assert_eq(t.write_bytes, 2 + 4 * 4); /* + fp32 lse per row */
    opm_counts b = ce("train_bwd", "");
    cr_assert_eq(b.vector_flops, 40 * 6 + 4 * 2);
    cr_assert_eq(b.read_bytes, 80 + 32 + 16 + 2);
    cr_assert_eq(b.write_bytes, 80);
    opm_counts s = ce("inference", "reduction: sum\n");
    cr_assert_eq(s.vector_flops, 40 * 7 + 4 * 6 + 4);
    opm_counts n = ce("inference", "reduction: none\n");
    cr_assert_eq(n.vector_flops, 40 * 7 + 4 * 6);
    cr_assert_eq(n.write_bytes, 4 * 2);
    opm_counts nb = ce("train_bwd", "reduction: none\n");
    cr_assert_eq(nb.read_bytes, 80 + 32 + 16 + 8);
}

Test(cross_entropy, label_smoothing_and_unfused)
{
    opm_counts f = ce("inference", "label_smoothing: 0.1\n");
    cr_assert_eq(f.vector_flops, 40 * 8 + 4 * 12 + 5);
    cr_assert_eq(f.read_bytes, 112);
    opm_counts b = ce("train_bwd", "label_smoothing: 0.1\n");
    cr_assert_eq(b.vector_flops, 40 * 7 + 8);
    opm_counts z = ce("inference", "label_smoothing: 0\n");
    cr_assert_eq(z.vector_flops, 309);
    opm_counts u = ce("inference", "fused: false\n");
    cr_assert_eq(u.vector_flops, 40 * 8 + 4 * 5 + 5);
    cr_assert_eq(u.read_bytes, 112 + 8);      /* + the N gathered log-probs */
    cr_assert_eq(u.write_bytes, 80 + 2);      /* logp [N, V] and the loss */
    cr_assert_eq(u.workspace_bytes, 80);
    opm_counts ub = ce("train_bwd", "fused: false\n");
    cr_assert_eq(ub.vector_flops, 40 * 7 + 8);
    cr_assert_eq(ub.read_bytes, 2 + 32 + 80 + 80); /* dy, targets, dlogp, logp */
    cr_assert_eq(ub.write_bytes, 160);             /* dlogp, dlogits */
    cr_assert_eq(ub.workspace_bytes, 80);
}

/* The worked number of the docs: 8192 tokens over Qwen's 151,936-entry vocabulary. */
Test(cross_entropy, large_vocabulary_worked_number)
{
    opm_counts f = counts_of("kind: cross_entropy\ntokens: 8192\nvocab: 151936\ndtype: bf16\nout_dtype: fp32\n");
    cr_assert_eq(f.vector_flops, 8712675329ull);
    cr_assert_eq(f.read_bytes, 2489384960ull);
    cr_assert_eq(f.write_bytes, 4);
    opm_counts b = counts_of("kind: cross_entropy\nphase: train_bwd\ntokens: 8192\nvocab: 151936\ndtype: bf16\nout_dtype: fp32\n");
    cr_assert_eq(b.vector_flops, 7467974656ull);
    cr_assert_eq(b.read_bytes, 2489417732ull);
    cr_assert_eq(b.write_bytes, 2489319424ull);
    refused("kind: cross_entropy\ntokens: 1099511627776\nvocab: 1073741824\ndtype: bf16\n", OPM_EOVERFLOW, "",
            "overflows");
}

Test(cross_entropy, full_form_and_errors)
{
    opm_counts f = counts_of("kind: cross_entropy\ntensors:\n"
                             "  - {role: input, shape: [4, 10], dtype: fp32}\n"
                             "  - {role: input, shape: [4], dtype: int32}\n"
                             "  - {role: output, shape: [], dtype: fp32}\n");
    cr_assert_eq(f.read_bytes, 160 + 16);
    cr_assert_eq(f.write_bytes, 4);
    refused("kind: cross_entropy\ntokens: 4\nvocab: 10\ndtype: bf16\nreduction: avg\n", OPM_EINVAL,
            "attrs.reduction", "mean, sum or none");
    refused("kind: cross_entropy\ntokens: 4\nvocab: 10\ndtype: bf16\nlabel_smoothing: 1.5\n", OPM_EINVAL,
            "attrs.label_smoothing", "[0, 1]");
    refused("kind: cross_entropy\ntokens: 4\nvocab: 10\ndtype: bf16\ntarget_dtype: fp32\n", OPM_EINVAL,
            "tensors[1].dtype", "int64");
    refused("kind: cross_entropy\ntensors:\n  - {role: input, shape: [4, 10], dtype: fp32}\n"
            "  - {role: input, shape: [5], dtype: int64}\n  - {role: output, shape: [], dtype: fp32}\n",
            OPM_EINVAL, "tensors[1].shape", "expected input shape [4]");
    refused("kind: cross_entropy\ntensors:\n  - {role: input, shape: [4, 10], dtype: fp32}\n"
            "  - {role: input, shape: [4], dtype: int64}\n  - {role: output, shape: [4], dtype: fp32}\n",
            OPM_EINVAL, "tensors[2].shape", "expected output shape []");
    refused("kind: cross_entropy\ntensors:\n  - {role: input, shape: [2, 4, 10], dtype: fp32}\n"
            "  - {role: input, shape: [2], dtype: int64}\n  - {role: output, shape: [], dtype: fp32}\n",
            OPM_EINVAL, "tensors[0].shape", "logits [N, V]");
    refused("kind: cross_entropy\ntensors:\n  - {role: input, shape: [4, 10], dtype: fp32}\n"
            "  - {role: output, shape: [], dtype: fp32}\n",
            OPM_EINVAL, "tensors", "targets [N]");
    refused("kind: cross_entropy\nvocab: 10\ndtype: bf16\n", OPM_EINVAL, "tokens", "missing");
}

/* ------------------------------------------------------------------ */
/* properties: counts monotone (non-decreasing) in every dimension       */

/* base has 3 dims; the first `vary` of them are grown one at a time. */
static void monotone_in_shape(const char *fmt_fwd, int vary, const int64_t *base)
{
    for (int phase = 0; phase < 2; phase++)
        for (int d = 0; d < vary; d++) {
            opm_counts prev = {0};
            for (int64_t step = 0; step < 4; step++) {
                int64_t s[3];
                for (int i = 0; i < 3; i++) s[i] = base[i] + (i == d ? step : 0);
                char shape[96], y[320];
                snprintf(shape, sizeof shape, "[%lld, %lld, %lld]", (long long)s[0], (long long)s[1], (long long)s[2]);
                snprintf(y, sizeof y, fmt_fwd, phase ? "train_bwd" : "inference", shape);
                opm_counts c = counts_of(y);
                if (step) {
                    cr_assert_geq(c.vector_flops, prev.vector_flops, "%s", y);
                    cr_assert_geq(c.read_bytes, prev.read_bytes, "%s", y);
                    cr_assert_geq(c.write_bytes, prev.write_bytes, "%s", y);
                }
                prev = c;
            }
        }
}

Test(properties, monotone_in_every_dimension)
{
    const int64_t base[3] = {2, 3, 4}, even[3] = {2, 3, 4};
    static const char *const ew[] = {"add", "mul", "div", "exp", "silu", "gelu", "gelu_mul", "copy"};
    for (size_t i = 0; i < sizeof ew / sizeof ew[0]; i++) {
        char f[200];
        snprintf(f, sizeof f, "kind: elementwise\nphase: %%s\ninputs: [%%s, [1, 1, 4]]\ndtype: bf16\nop: %s\n", ew[i]);
        /* the second operand broadcasts while the last dim stays 4; vary the first two only */
        monotone_in_shape(f, 2, base);
    }
    /* one-input gated: the last dim moves in steps of 2 */
    for (int64_t last = 2; last <= 10; last += 2) {
        char a[160], b[160];
        snprintf(a, sizeof a, "kind: elementwise\nshape: [3, %lld]\ndtype: bf16\nop: silu_mul\n", (long long)last);
        snprintf(b, sizeof b, "kind: elementwise\nshape: [3, %lld]\ndtype: bf16\nop: silu_mul\n", (long long)last + 2);
        opm_counts x = counts_of(a), z = counts_of(b);
        cr_assert_lt(x.vector_flops, z.vector_flops);
        cr_assert_lt(x.read_bytes, z.read_bytes);
    }
    static const char *const rd[] = {"sum", "mean", "max", "min", "norm", "var", "std", "logsumexp", "cumsum"};
    for (size_t i = 0; i < sizeof rd / sizeof rd[0]; i++) {
        char f[200];
        snprintf(f, sizeof f, "kind: reduction\nphase: %%s\nshape: %%s\ndim: 1\ndtype: fp32\nop: %s\n", rd[i]);
        monotone_in_shape(f, 3, even);
    }
    monotone_in_shape("kind: reduction\nphase: %s\nshape: %s\ndim: [0, 2]\nkeepdim: true\ndtype: fp32\nop: mean\n", 3, even);
    monotone_in_shape("kind: softmax\nphase: %s\nshape: %s\ndtype: fp32\n", 3, base);
    for (int phase = 0; phase < 3; phase++)
        for (int fused = 0; fused < 2; fused++)
            for (int smooth = 0; smooth < 2; smooth++) {
                opm_counts prev_n = {0}, prev_v = {0};
                static const char *const ph[] = {"inference", "train_fwd", "train_bwd"};
                for (int k = 1; k <= 5; k++) {
                    char a[256], b[256];
                    snprintf(a, sizeof a, "kind: cross_entropy\nphase: %s\ntokens: %d\nvocab: 7\ndtype: bf16\nfused: %s\nlabel_smoothing: %s\n",
                             ph[phase], k, fused ? "true" : "false", smooth ? "0.1" : "0");
                    snprintf(b, sizeof b, "kind: cross_entropy\nphase: %s\ntokens: 3\nvocab: %d\ndtype: bf16\nfused: %s\nlabel_smoothing: %s\n",
                             ph[phase], k, fused ? "true" : "false", smooth ? "0.1" : "0");
                    opm_counts cn = counts_of(a), cv = counts_of(b);
                    cr_assert_gt(cn.vector_flops, prev_n.vector_flops, "%s", a);
                    cr_assert_gt(cn.read_bytes, prev_n.read_bytes, "%s", a);
                    cr_assert_gt(cv.vector_flops, prev_v.vector_flops, "%s", b);
                    cr_assert_gt(cv.read_bytes, prev_v.read_bytes, "%s", b);
                    cr_assert_geq(cv.write_bytes, prev_v.write_bytes, "%s", b);
                    prev_n = cn;
                    prev_v = cv;
                }
            }
}

Test(properties, fusion_and_smoothing_orderings)
{
    for (int phase = 0; phase < 2; phase++) {
        const char *p = phase ? "train_bwd" : "train_fwd";
        opm_counts fu = ce(p, ""), un = ce(p, "fused: false\n"), sm = ce(p, "label_smoothing: 0.2\n");
        cr_assert_lt(fu.read_bytes + fu.write_bytes, un.read_bytes + un.write_bytes, "%s", p);
        cr_assert_lt(fu.vector_flops, sm.vector_flops, "%s", p);
    }
    /* the backward of every gradient-carrying elementwise function reads at least dy */
    opm_counts b = counts_of("kind: elementwise\nphase: train_bwd\nshape: [5]\ndtype: fp32\nop: copy\n");
    cr_assert_eq(b.read_bytes, 20);
    cr_assert_eq(b.write_bytes, 20);
}

/* ------------------------------------------------------------------ */
/* golden rows from TraceLens                                          */

typedef struct tally {
    int rows, equal, deviations;
} tally;

/* "(16, 559, 1)", "(1024,)", "()", "[-1]", "0" → dims; returns the count. */
static int ints_of(const char *s, int64_t *d, int cap)
{
    int r = 0;
    while (s && *s) {
        if ((*s >= '0' && *s <= '9') || *s == '-') {
            char *end;
            long long v = strtoll(s, &end, 10);
            cr_assert(r < cap, "too many numbers in '%s'", s);
            d[r++] = v;
            s = end;
        } else {
            s++;
        }
    }
    return r;
}

/* "('float', 'double', None)" → items ("None" for None); returns the count. */
static int items_of(const char *s, char out[][64], int cap)
{
    int n = 0;
    while (*s) {
        if (*s == '\'' || *s == '"') {
            char q = *s++;
            int k = 0;
            while (*s && *s != q) {
                if (k < 63) out[n][k++] = *s;
                s++;
            }
            out[n++][k] = '\0';
            if (*s) s++;
        } else if (!strncmp(s, "None", 4)) {
            strcpy(out[n++], "None");
            s += 4;
        } else {
            s++;
        }
        cr_assert(n <= cap, "too many items");
    }
    return n;
}

static opm_dtype dtype_of(const char *torch)
{
    const char *ours = torch_dtype(torch);
    cr_assert_not_null(ours, "unknown torch dtype '%s'", torch);
    opm_dtype dt;
    cr_assert_eq(opm_dtype_parse(ours, &dt), 0);
    return dt;
}

static uint64_t elems(const int64_t *s, int r)
{
    uint64_t n = 1;
    for (int i = 0; i < r; i++) n *= (uint64_t)s[i];
    return n;
}

static uint64_t nbytes(uint64_t n, opm_dtype dt) { return n * opm_dtype_bits(dt) / 8; }

/* Counts of `op` (validated) and the row's reference FLOPs and bytes. */
static void ours_and_ref(opm_op *op, const csv *c, size_t row, double *flops, double *bytes, double *rf, double *rb)
{
    opm_error err;
    cr_assert_eq(opm_op_validate(op, &err), 0, "%s", err.message);
    opm_counts k;
    cr_assert_eq(opm_op_count(op, &k, &err), 0, "%s", err.message);
    *flops = (double)(k.matrix_flops + k.vector_flops);
    *bytes = (double)(k.read_bytes + k.write_bytes);
    *rf = csv_num(c, row, "GFLOPS_first") * 1e9;
    *rb = csv_num(c, row, "Data Moved (MB)_first") * 1048576.0;
}

typedef void (*row_fn)(const char *trace, const csv *c, size_t row, tally *t);

/* Runs fn on every row of `file` in every trace directory that has it. */
static int each_trace(const char *file, row_fn fn, tally *t)
{
    char dir[512];
    DIR *d = opendir(tracelens_path("", dir, sizeof dir));
    cr_assert_not_null(d, "no %s", dir);
    int traces = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char rel[300], path[1024];
        snprintf(rel, sizeof rel, "%s/%s", e->d_name, file);
        tracelens_path(rel, path, sizeof path);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        fclose(f);
        csv *c = csv_load(path);
        for (size_t r = 0; r < csv_rows(c); r++) {
            t->rows++;
            fn(e->d_name, c, r, t);
        }
        csv_free(c);
        traces++;
    }
    closedir(d);
    return traces;
}

static void expect_equal(const char *what, double ours, double ref)
{
    cr_assert_leq(rel_diff(ours, ref), 1e-6, "%s: ours %.17g, reference %.17g", what, ours, ref);
}

/* BinaryElementwise: aten::add/add_/mul with two operands; the second may be
 * a 0-dim tensor ('double' with shape ()) or a Python scalar ('Scalar').
 * Reference conventions matched: 1 FLOP per output element for add and mul,
 * every tensor operand read at its own (broadcast-free) size and dtype, the
 * output written in the first operand's dtype.  Deviation (1 row): a Python
 * scalar is charged 4 bytes by the reference; it is a kernel argument, not
 * memory traffic, and we charge 0. */
static void binary_row(const char *trace, const csv *c, size_t row, tally *t)
{
    const char *name = csv_get(c, row, "name");
    char fn[32];
    cr_assert(!strncmp(name, "aten::", 6), "%s: unexpected op %s", trace, name);
    snprintf(fn, sizeof fn, "%s", name + 6);
    size_t L = strlen(fn);
    if (L && fn[L - 1] == '_') fn[L - 1] = '\0'; /* in-place variant */
    int64_t s1[8], s2[8], so[8];
    int r1 = ints_of(csv_get(c, row, "param: shape_in1"), s1, 8);
    int r2 = ints_of(csv_get(c, row, "param: shape_in2"), s2, 8);
    char dt[3][64];
    cr_assert_eq(items_of(csv_get(c, row, "param: dtype_in1_in2_out"), dt, 3), 3);
    opm_dtype d1 = dtype_of(dt[0]);
    int python_scalar = !strcmp(dt[1], "Scalar");
    opm_dtype dout = strcmp(dt[2], "None") ? dtype_of(dt[2]) : d1;
    int ro = r1 > r2 ? r1 : r2;
    for (int i = 0; i < ro; i++) {
        int64_t a = i < ro - r1 ? 1 : s1[i - (ro - r1)], b = i < ro - r2 ? 1 : s2[i - (ro - r2)];
        so[i] = a > b ? a : b;
    }
    opm_error err;
    opm_op *op = opm_op_new(name, OPM_KIND_ELEMENTWISE, OPM_PHASE_INFERENCE, &err);
    cr_assert_not_null(op);
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, s1, r1, d1, NULL, &err), 0, "%s", err.message);
    if (!python_scalar)
        cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, s2, r2, dtype_of(dt[1]), NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_OUTPUT, so, ro, dout, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_set_string(op, "op", fn, &err), 0);
    double f, b, rf, rb;
    ours_and_ref(op, c, row, &f, &b, &rf, &rb);
    opm_op_free(op);
    char what[160];
    snprintf(what, sizeof what, "%s BinaryElementwise row %zu %s", trace, row, name);
    expect_equal(what, f, rf); /* add, mul: 1 FLOP per element, as the reference */
    cr_assert(!strcmp(fn, "add") || !strcmp(fn, "mul"), "%s: no hand formula for %s", what, fn);
    uint64_t n = elems(so, ro);
    uint64_t hand = nbytes(elems(s1, r1), d1) + (python_scalar ? 0 : nbytes(elems(s2, r2), dtype_of(dt[1]))) +
                    nbytes(n, dout);
    cr_assert_eq((uint64_t)b, hand, "%s", what);
    if (python_scalar) {
        cr_assert_eq((uint64_t)rb, hand + 4, "%s: the reference charges the Python scalar 4 bytes", what);
        t->deviations++;
    } else {
        expect_equal(what, b, rb);
        t->equal++;
    }
}

Test(golden, binary_elementwise)
{
    tally t = {0};
    int traces = each_trace("BinaryElementwise.csv", binary_row, &t);
    cr_assert_eq(traces, 7);
    cr_assert_eq(t.rows, 34);
    cr_assert_eq(t.equal, 33);
    cr_assert_eq(t.deviations, 1);
}

/* UnaryElementwise: aten::copy_ (copy, or cast when the dtypes differ),
 * aten::neg, aten::rsqrt, aten::silu, aten::pow(x, 2) (computed by PyTorch
 * as x·x: our `square`), and sgl_kernel::silu_and_mul (one [N, 2H] input,
 * [N, H] output: our `silu_mul`).  Bytes match the reference on every row
 * (input and output each once in their own dtype).  FLOPs: the reference
 * charges 1 per element for every function except silu_and_mul (5); we
 * charge the table's weights: copy/cast 0, rsqrt 4, silu 4 — deviations. */
static void unary_row(const char *trace, const csv *c, size_t row, tally *t)
{
    const char *name = csv_get(c, row, "name");
    int64_t s[8];
    int r = ints_of(csv_get(c, row, "param: op_shape"), s, 8);
    char dt[2][64];
    cr_assert_eq(items_of(csv_get(c, row, "param: dtype_in_out"), dt, 2), 2);
    opm_dtype din = dtype_of(dt[0]), dout = strcmp(dt[1], "None") ? dtype_of(dt[1]) : din;
    const char *fn = NULL;
    int64_t xs[8];
    int xr = r;
    memcpy(xs, s, sizeof xs);
    char what[200];
    snprintf(what, sizeof what, "%s UnaryElementwise row %zu %s", trace, row, name);
    if (!strcmp(name, "aten::copy_")) {
        /* copy_(self, src): dtype_in_out lists (self, src); bytes are symmetric */
        opm_dtype t0 = din;
        din = dout;
        dout = t0;
        fn = din == dout ? "copy" : "cast";
    } else if (!strcmp(name, "aten::pow")) {
        char conc[4][64];
        cr_assert_eq(items_of(csv_get(c, row, "Concrete Inputs_first"), conc, 4), 2);
        cr_assert_str_eq(conc[1], "2", "%s: only pow(x, 2) is mapped", what);
        fn = "square";
    } else if (!strcmp(name, "sgl_kernel::silu_and_mul")) {
        int64_t dims[4][8];
        int lens[4];
        cr_assert_eq(py_int_lists(csv_get(c, row, "Input Dims_first"), dims, lens, 4), 2);
        cr_assert_eq(elems(dims[0], lens[0]), elems(s, r)); /* (out, input) */
        memcpy(xs, dims[1], sizeof xs);
        xr = lens[1];
        fn = "silu_mul";
    } else {
        cr_assert(!strncmp(name, "aten::", 6), "%s: unexpected op", what);
        fn = name + 6;
    }
    opm_error err;
    opm_op *op = opm_op_new(name, OPM_KIND_ELEMENTWISE, OPM_PHASE_INFERENCE, &err);
    cr_assert_not_null(op);
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, xs, xr, din, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_OUTPUT, s, r, dout, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_set_string(op, "op", fn, &err), 0);
    double f, b, rf, rb;
    ours_and_ref(op, c, row, &f, &b, &rf, &rb);
    opm_op_free(op);
    uint64_t n = elems(s, r);
    cr_assert_eq((uint64_t)b, nbytes(elems(xs, xr), din) + nbytes(n, dout), "%s", what);
    expect_equal(what, b, rb);
    /* our weights, by hand */
    static const struct { const char *fn; uint64_t w; int ref_w; } wt[] = {
        {"copy", 0, 1}, {"cast", 0, 1}, {"neg", 1, 1}, {"square", 1, 1},
        {"rsqrt", 4, 1}, {"silu", 4, 1}, {"silu_mul", 5, 5},
    };
    size_t k = 0;
    while (k < sizeof wt / sizeof wt[0] && strcmp(wt[k].fn, fn)) k++;
    cr_assert(k < sizeof wt / sizeof wt[0], "%s: no hand weight for %s", what, fn);
    cr_assert_eq((uint64_t)f, n * wt[k].w, "%s", what);
    expect_equal(what, rf, (double)n * wt[k].ref_w); /* the reference's own convention, pinned */
    if (wt[k].w == (uint64_t)wt[k].ref_w) t->equal++;
    else t->deviations++;
}

Test(golden, unary_elementwise)
{
    tally t = {0};
    int traces = each_trace("UnaryElementwise.csv", unary_row, &t);
    cr_assert_eq(traces, 4);
    cr_assert_eq(t.rows, 30);
    cr_assert_eq(t.equal, 6);       /* neg ×3, pow(x, 2) ×2, silu_and_mul ×1 */
    cr_assert_eq(t.deviations, 24); /* copy_ ×20: 0 FLOPs; rsqrt ×2, silu ×2: weight 4 */
}

/* Reduce_fwd: aten::mean, aten::sum (dim list and keepdim in Concrete
 * Inputs), aten::max (whole tensor), aten::cumsum (one dim).  Reference
 * conventions matched: 1 FLOP per input element for sum, max and cumsum;
 * x read and y written once.  Deviations: the reference writes one output
 * element whatever the dims (fixed: y has the dims' shape); mean's divide per
 * output element is counted (+m FLOPs); an integer cumsum writes int64 as
 * PyTorch does (the reference keeps int32). */
static void reduce_row(const char *trace, const csv *c, size_t row, tally *t)
{
    const char *name = csv_get(c, row, "name");
    int64_t dims[6][8];
    int lens[6];
    int ni = py_int_lists(csv_get(c, row, "Input Dims_first"), dims, lens, 6);
    cr_assert_geq(ni, 1);
    char ty[6][64], conc[6][64];
    items_of(csv_get(c, row, "Input type_first"), ty, 6);
    int nc = items_of(csv_get(c, row, "Concrete Inputs_first"), conc, 6);
    opm_dtype dx = dtype_of(ty[0]);
    const char *fn = name + 6;
    cr_assert(!strncmp(name, "aten::", 6));
    int64_t dl[8];
    int nd = 0, keep = 0;
    if (nc >= 2) nd = ints_of(conc[1], dl, 8);
    if (nc >= 3) keep = !strcmp(conc[2], "True");
    int scan = !strcmp(fn, "cumsum");
    int is_int = dx == OPM_INT32 || dx == OPM_INT64 || dx == OPM_INT8 || dx == OPM_BOOL;
    opm_dtype dy = (is_int && (scan || !strcmp(fn, "sum"))) ? OPM_INT64 : dx;
    /* the output shape, by hand */
    int64_t ys[8];
    int yr = 0, mask[8] = {0};
    for (int i = 0; i < nd; i++) mask[dl[i] < 0 ? dl[i] + lens[0] : dl[i]] = 1;
    for (int i = 0; i < lens[0]; i++) {
        if (scan || !(nd == 0 || mask[i])) ys[yr++] = dims[0][i];
        else if (keep) ys[yr++] = 1;
    }
    opm_error err;
    opm_op *op = opm_op_new(name, OPM_KIND_REDUCTION, OPM_PHASE_INFERENCE, &err);
    cr_assert_not_null(op);
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, dims[0], lens[0], dx, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_OUTPUT, ys, yr, dy, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_set_string(op, "op", fn, &err), 0);
    if (nd) cr_assert_eq(opm_op_set_ints(op, "dim", dl, (size_t)nd, &err), 0);
    if (keep) cr_assert_eq(opm_op_set_bool(op, "keepdim", 1, &err), 0);
    double f, b, rf, rb;
    ours_and_ref(op, c, row, &f, &b, &rf, &rb);
    opm_op_free(op);
    char what[200];
    snprintf(what, sizeof what, "%s Reduce_fwd row %zu %s", trace, row, name);
    uint64_t n = elems(dims[0], lens[0]), m = elems(ys, yr);
    cr_assert_eq((uint64_t)csv_num(c, row, "param: num_input_elems"), n, "%s", what);
    uint64_t hand_f = n + (!strcmp(fn, "mean") ? m : 0);
    uint64_t hand_b = nbytes(n, dx) + nbytes(m, dy);
    cr_assert_eq((uint64_t)f, hand_f, "%s", what);
    cr_assert_eq((uint64_t)b, hand_b, "%s", what);
    /* the reference: n FLOPs, x + one output element (num_output_elems) in x's dtype */
    uint64_t ref_m = (uint64_t)csv_num(c, row, "param: num_output_elems");
    expect_equal(what, rf, (double)n);
    expect_equal(what, rb, (double)(nbytes(n, dx) + nbytes(ref_m, dx)));
    if (rel_diff(f, rf) <= 1e-6 && rel_diff(b, rb) <= 1e-6) t->equal++;
    else t->deviations++;
}

Test(golden, reduce_fwd)
{
    tally t = {0};
    int traces = each_trace("Reduce_fwd.csv", reduce_row, &t);
    cr_assert_eq(traces, 4);
    cr_assert_eq(t.rows, 6);
    cr_assert_eq(t.equal, 1);      /* sglang aten::max over 32 int32 */
    cr_assert_eq(t.deviations, 5); /* mean ×3 (divide; two with keepdim outputs), sum dim 0, cumsum int64 */
}
