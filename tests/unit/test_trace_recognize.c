/* test_trace_recognize.c — op recognition (src/trace/recognize.c and its
 * table op_table.def): name lookup with exact and prefix rows and their
 * claims; every row with a perf model of every TraceLens reference report
 * (tests/data/traces/<trace>/unified_perf_summary.csv) rebuilt from its
 * recorded call arguments and compared with the reference's FLOPs and bytes
 * (equal at 1e-6, or a documented deviation asserted exactly on both sides);
 * the families without reference rows from real trace events or by hand;
 * malformed, absent and nested arguments; kernel categories. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "golden.h"
#include "testutil.h"
#include "trace/recognize_args.h"
#include "trace/trace_internal.h"

/* ---- helpers ---- */

/* A Python literal cell ("((512,), (141, 512))", "('c10::BFloat16', '')")
 * as the canonical compact JSON the reader stores. */
static void py_to_json(const char *s, char *o, size_t cap)
{
    size_t n = 0;
    while (*s) {
        cr_assert_lt(n + 4, cap, "cell too long: %s", s);
        char ch = *s;
        if (ch == '\'' || ch == '"') {
            char q = ch;
            o[n++] = '"';
            for (s++; *s && *s != q; s++) {
                cr_assert_lt(n + 4, cap);
                if (*s == '"' || *s == '\\') o[n++] = '\\';
                o[n++] = *s;
            }
            if (*s) s++;
            o[n++] = '"';
            continue;
        }
        s++;
        if (ch == ' ') continue;
        if (ch == ',') { /* Python's one-tuple "(512,)" */
            const char *p = s;
            while (*p == ' ') p++;
            if (*p == ')' || *p == ']') continue;
        }
        o[n++] = ch == '(' ? '[' : ch == ')' ? ']' : ch;
    }
    o[n] = '\0';
}

typedef struct rec {
    const opm_trace_op_entry *entry;
    opm_op *op;
    char *params;
    opm_counts k;
} rec;

/* Looks `name` up and recognises the call; counts the op when it has one. */
static rec run(const char *name, const char *dims, const char *types, const char *conc, int training)
{
    rec r = {opm_trace_op_lookup(name), NULL, NULL, {0}};
    opm_trace_call call = {name, dims, types, "", conc, training};
    opm_trace_recog out;
    opm_error err;
    cr_assert_eq(opm_trace_recognize(r.entry, &call, &out, &err), 0, "%s: %s", name, err.message);
    cr_assert_not_null(out.params_json, "%s: no params", name);
    r.op = out.op;
    r.params = out.params_json;
    if (r.op) {
        cr_assert_eq(opm_op_validate(r.op, &err), 0, "%s: %s", name, err.message);
        cr_assert_eq(opm_op_count(r.op, &r.k, &err), 0, "%s: %s", name, err.message);
    }
    return r;
}

static void done(rec *r)
{
    opm_op_free(r->op);
    free(r->params);
}

static uint64_t flops(opm_counts k) { return k.matrix_flops + k.vector_flops; }
static uint64_t bytes(opm_counts k) { return k.read_bytes + k.write_bytes; }

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_INT_AS_REAL, &e);
    cr_assert_not_null(j, "not JSON (%s): %s", e.text, text);
    return j;
}

static int64_t jint(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    cr_assert(json_is_number(v), "no number '%s'", key);
    return (int64_t)json_number_value(v);
}

static void same_counts(opm_counts a, opm_counts b, const char *what)
{
    cr_assert_eq(a.matrix_flops, b.matrix_flops, "%s: matrix %llu vs %llu", what,
                 (unsigned long long)a.matrix_flops, (unsigned long long)b.matrix_flops);
    cr_assert_eq(a.vector_flops, b.vector_flops, "%s: vector", what);
    cr_assert_eq(a.read_bytes, b.read_bytes, "%s: read %llu vs %llu", what, (unsigned long long)a.read_bytes,
                 (unsigned long long)b.read_bytes);
    cr_assert_eq(a.write_bytes, b.write_bytes, "%s: write %llu vs %llu", what, (unsigned long long)a.write_bytes,
                 (unsigned long long)b.write_bytes);
}

/* ---- the table ---- */

#define OPM_TRACE_OP(name, cat, claim, build, detail) {name, 1, 0},
#define OPM_TRACE_CAT(name, cat, claim) {name, 0, 0},
#define OPM_TRACE_PREFIX(name, cat, claim) {name, 0, 1},
static const struct { const char *name; int has_build, prefix; } table_rows[] = {
#include "trace/op_table.def"
};
#undef OPM_TRACE_OP
#undef OPM_TRACE_CAT
#undef OPM_TRACE_PREFIX

Test(trace_recognize, table_is_sorted_and_found)
{
    size_t n = sizeof table_rows / sizeof table_rows[0], exact = 0, prefixes = 0;
    const char *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name = table_rows[i].name;
        if (table_rows[i].prefix) {
            size_t len = strlen(name);
            cr_assert(len > 1 && name[len - 1] == '*', "prefix row %s must end in '*'", name);
            char probe[256];
            snprintf(probe, sizeof probe, "%.*szz_no_such_op", (int)(len - 1), name);
            const opm_trace_op_entry *e = opm_trace_op_lookup(probe);
            cr_assert_not_null(e, "%s", probe);
            cr_assert_str_eq(e->name, name);
            cr_assert_null(e->build, "prefix rows have no model");
            prefixes++;
            continue;
        }
        if (prev)
            cr_assert_lt(strcmp(prev, name), 0, "op_table.def: \"%s\" must come before \"%s\" (strcmp order)", name,
                         prev);
        prev = name;
        const opm_trace_op_entry *e = opm_trace_op_lookup(name);
        cr_assert_not_null(e, "%s not found", name);
        cr_assert_str_eq(e->name, name);
        cr_assert_eq(e->build != NULL, table_rows[i].has_build, "%s: builder", name);
        cr_assert_lt((int)e->category, OPM_TCAT_COUNT);
        exact++;
    }
    cr_assert_eq(exact, 211);
    cr_assert_eq(prefixes, 16);
}

Test(trace_recognize, unknown_names)
{
    const char *unknown[] = {"aten::view", "aten::empty_strided", "", "aten::m", "aten::mm ", "ATEN::MM",
                             "aten::mmx", "cudaLaunchKernel", "flash_attn:", "triton_",
                             "autograd::engine::evaluate_function: AddmmBackward0"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        cr_assert_null(opm_trace_op_lookup(unknown[i]), "'%s' found", unknown[i]);
    cr_assert_null(opm_trace_op_lookup(NULL));
    /* recognising with no entry lists the raw arguments */
    opm_trace_call call = {"aten::view", "[[2,3],[]]", "[\"float\",\"ScalarList\"]", "", "[\"\",\"[6]\"]", 0};
    opm_trace_recog out;
    opm_error err;
    cr_assert_eq(opm_trace_recognize(NULL, &call, &out, &err), 0);
    cr_assert_null(out.op);
    cr_assert_str_eq(out.params_json,
                     "{\"input_dims\":[[2,3],[]],\"input_types\":[\"float\",\"ScalarList\"],"
                     "\"concrete_inputs\":[\"\",\"[6]\"]}");
    free(out.params_json);
}

Test(trace_recognize, prefix_rows)
{
    static const struct { const char *name, *row; opm_trace_category cat; } cases[] = {
        {"flash_attn::_flash_attn_forward_kvcache", "flash_attn::*", OPM_TCAT_ATTENTION},
        {"flash_attn_3::fwd", "flash_attn_3::*", OPM_TCAT_ATTENTION},
        {"triton_poi_fused__unsafe_view_add_3", "triton_poi_*", OPM_TCAT_ELEMENTWISE},
        {"triton_red_fused_add_mean_mul_pow_rsqrt_0", "triton_red_*", OPM_TCAT_REDUCE},
        {"triton_per_fused__softmax_0", "triton_per_*", OPM_TCAT_REDUCE},
        {"triton_tem_fused_mm_0", "triton_tem_*", OPM_TCAT_GEMM},
        {"c10d::allreduce_", "c10d::*", OPM_TCAT_COMM},
        {"nccl:all_reduce", "nccl:*", OPM_TCAT_COMM},
        {"aiter::mha_varlen_fwd", "aiter::mha_*", OPM_TCAT_ATTENTION},
        {"aiter::gemm_a8w8_bpreshuffle", "aiter::gemm_*", OPM_TCAT_GEMM},
        {"vllm::unified_attention_with_kv", "vllm::unified_attention*", OPM_TCAT_ATTENTION},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const opm_trace_op_entry *e = opm_trace_op_lookup(cases[i].name);
        cr_assert_not_null(e, "%s", cases[i].name);
        cr_assert_str_eq(e->name, cases[i].row, "%s", cases[i].name);
        cr_assert_eq(e->category, cases[i].cat, "%s", cases[i].name);
        cr_assert_eq(e->claim, OPM_CLAIM_INNER, "%s: prefix rows yield to recognised ops", cases[i].name);
    }
    /* exact rows win over prefixes */
    cr_assert_str_eq(opm_trace_op_lookup("flash_attn::_flash_attn_forward")->name, "flash_attn::_flash_attn_forward");
    cr_assert_eq(opm_trace_op_lookup("vllm::unified_attention")->claim, OPM_CLAIM_OUTER);
    cr_assert_str_eq(opm_trace_op_lookup("aiter::gemm_a16w16")->name, "aiter::gemm_a16w16");
    /* a prefix row has no model: the raw arguments are the parameters */
    rec r = run("triton_poi_fused__unsafe_view_add_3", "[[8,4096,2048],[8,4096,2048],[32768,2048],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]", "[\"\",\"\",\"\",\"67108864\"]",
                0);
    cr_assert_null(r.op);
    json_t *j = parse(r.params);
    cr_assert_eq(json_array_size(json_object_get(j, "input_dims")), 4);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "concrete_inputs"), 3)), "67108864");
    json_decref(j);
    done(&r);
}

/* Wrappers yield (INNER) to the op TraceLens reports (OUTER), so that our
 * groups are the reference's; the outermost OUTER op owns the kernels. */
Test(trace_recognize, claims)
{
    static const struct { const char *name; opm_claim claim; opm_trace_category cat; } cases[] = {
        {"aten::linear", OPM_CLAIM_INNER, OPM_TCAT_GEMM},
        {"aten::matmul", OPM_CLAIM_INNER, OPM_TCAT_GEMM},
        {"aten::addmm", OPM_CLAIM_OUTER, OPM_TCAT_GEMM},
        {"aten::mm", OPM_CLAIM_OUTER, OPM_TCAT_GEMM},
        {"aten::bmm", OPM_CLAIM_OUTER, OPM_TCAT_GEMM},
        {"aten::layer_norm", OPM_CLAIM_OUTER, OPM_TCAT_NORM},
        {"aten::native_layer_norm", OPM_CLAIM_OUTER, OPM_TCAT_NORM},
        {"aten::batch_norm", OPM_CLAIM_OUTER, OPM_TCAT_NORM},
        {"aten::_batch_norm_impl_index", OPM_CLAIM_OUTER, OPM_TCAT_NORM},
        {"aten::rms_norm", OPM_CLAIM_INNER, OPM_TCAT_NORM},
        {"aten::_fused_rms_norm", OPM_CLAIM_OUTER, OPM_TCAT_NORM},
        {"aten::scaled_dot_product_attention", OPM_CLAIM_INNER, OPM_TCAT_ATTENTION},
        {"aten::_scaled_dot_product_flash_attention", OPM_CLAIM_OUTER, OPM_TCAT_ATTENTION},
        {"aten::_flash_attention_forward", OPM_CLAIM_OUTER, OPM_TCAT_ATTENTION},
        {"aten::conv2d", OPM_CLAIM_INNER, OPM_TCAT_CONV},
        {"aten::convolution", OPM_CLAIM_OUTER, OPM_TCAT_CONV},
        {"aten::_convolution", OPM_CLAIM_OUTER, OPM_TCAT_CONV},
        {"aten::cudnn_convolution", OPM_CLAIM_OUTER, OPM_TCAT_CONV},
        {"aten::convolution_backward", OPM_CLAIM_OUTER, OPM_TCAT_CONV},
        {"aten::embedding", OPM_CLAIM_INNER, OPM_TCAT_OTHER},
        /* INNER: on ROCm it calls aten::gather, which TraceLens reports (xDiT). */
        {"aten::index_select", OPM_CLAIM_INNER, OPM_TCAT_OTHER},
        {"aten::gather", OPM_CLAIM_OUTER, OPM_TCAT_OTHER},
        /* INNER: the fill_ of a scalar operand's scalar_tensor is its own row. */
        {"aten::where", OPM_CLAIM_INNER, OPM_TCAT_ELEMENTWISE},
        {"aten::linalg_norm", OPM_CLAIM_OUTER, OPM_TCAT_REDUCE},   /* over linalg_vector_norm */
        {"aten::upsample_nearest2d", OPM_CLAIM_OUTER, OPM_TCAT_ELEMENTWISE},   /* .vec over the base */
        {"aiter::_groupnorm_run", OPM_CLAIM_OUTER, OPM_TCAT_NORM},
        /* INNER: the triton_kernels TopK and SortTokens below it are rows of
         * their own in TraceLens (vllm_decode_full); it keeps its direct kernels. */
        {"vllm::moe_forward", OPM_CLAIM_INNER, OPM_TCAT_GEMM},
        {"TopK", OPM_CLAIM_OUTER, OPM_TCAT_REDUCE},
        {"SortTokens", OPM_CLAIM_OUTER, OPM_TCAT_OTHER},
        /* INNER over the aiter op TraceLens reports (vllm_decode_full). */
        {"vllm::rocm_aiter_rmsnorm2d_fwd_with_add", OPM_CLAIM_INNER, OPM_TCAT_NORM},
        {"aiter::rmsnorm2d_fwd_with_add_ck", OPM_CLAIM_OUTER, OPM_TCAT_NORM},
        {"vllm::unified_kv_cache_update", OPM_CLAIM_INNER, OPM_TCAT_ATTENTION},
        {"vllm::all_reduce", OPM_CLAIM_OUTER, OPM_TCAT_COMM},
        {"aten::relu_", OPM_CLAIM_INNER, OPM_TCAT_ELEMENTWISE},
        {"aten::clamp_min_", OPM_CLAIM_OUTER, OPM_TCAT_ELEMENTWISE},
        {"aten::softmax", OPM_CLAIM_INNER, OPM_TCAT_REDUCE},
        {"aten::rsub", OPM_CLAIM_INNER, OPM_TCAT_ELEMENTWISE},  /* over aten::sub */
        {"aten::_softmax", OPM_CLAIM_OUTER, OPM_TCAT_REDUCE},
        {"sglang::store_cache", OPM_CLAIM_OUTER, OPM_TCAT_ATTENTION},
        {"record_param_comms", OPM_CLAIM_INNER, OPM_TCAT_COMM},
        {"FlashAttnFunc", OPM_CLAIM_INNER, OPM_TCAT_ATTENTION},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const opm_trace_op_entry *e = opm_trace_op_lookup(cases[i].name);
        cr_assert_not_null(e, "%s", cases[i].name);
        cr_assert_eq(e->claim, cases[i].claim, "%s: claim", cases[i].name);
        cr_assert_eq(e->category, cases[i].cat, "%s: category", cases[i].name);
    }
}

/* ---- every reference row with a perf model ----
 *
 * Rows are rebuilt from their recorded Input Dims / Input type / Concrete
 * Inputs exactly as the reader stores them.  FLOPs compared are our
 * matrix + vector FLOPs, except for attention, where TraceLens counts QKᵀ
 * and PV only and is compared with our matrix FLOPs (docs/ops.md, "Comparing
 * with TraceLens" in the attention family).  Bytes are read + write against
 * "Data Moved (MB)" in MiB.  The forward ops of the `normalization` trace
 * carry Sequence numbers (a training run): they are recognised with
 * training = 1, as the report does. */

typedef struct dev {
    const char *trace;
    int row;
    const char *name;
    uint64_t flops, bytes;   /* ours, by hand */
    int64_t dflops, dbytes;  /* reference − ours */
    const char *why;         /* the docs/ops.md deviation */
} dev;

/* Layernorm inference (docs/ops.md normalisation, L1 L2): N elements, R rows, P normalised size, bf16. */
#define LN_INF(trace, row, N, R, P) \
    {trace, row, "aten::layer_norm", 7 * (N) + 3 * (R), 4 * (N) + 4 * (P), -2 * (N) + 6 * (P) - 3 * (R), 8 * (P), \
     "norm L1 L2"}
/* ViT patch embedding: x [4, 3, 224, 224], w [768, 3, 16, 16], bias [768], stride 16 → 14×14
 * (conv: bias never detected). */
#define VIT_CONV(trace, row) \
    {trace, row, "aten::convolution", 2ull * 4 * 768 * 196 * 3 * 256 + 4 * 768 * 196, \
     (4ull * 3 * 224 * 224 + 768 * 3 * 256 + 768 + 4 * 768 * 196) * 2, -4 * 768 * 196, -768 * 2, "conv bias"}
/* Qwen causal SDPA B = H = 16, S = 559, D = 64: the exact triangle S(S+1)/2, TraceLens S²/2 (causal FLOPs). */
#define QWEN_SDPA(trace, row) \
    {trace, row, "aten::_scaled_dot_product_flash_attention", 2ull * 16 * 16 * (559 * 560 / 2) * 128, \
     4ull * 16 * 16 * 559 * 64 * 2, -16ll * 16 * 559 * 128, 0, "attention causal FLOPs"}
/* copy_ / cast of n elements, in and out bytes per element: 0 FLOPs, TraceLens 1 per element. */
#define COPY(trace, row, n, in, out) {trace, row, "aten::copy_", 0, (n) * ((in) + (out)), (n), 0, "copy/cast FLOPs"}
/* A unary transcendental (silu, rsqrt) of n elements, b bytes each: weight 4, TraceLens 1. */
#define TRANS(trace, row, name, n, b) {trace, row, name, 4 * (n), 2 * (n) * (b), -3 * (n), 0, "transcendental weights"}
/* Qwen RMS statistic: mean over the last dim of [16, 559, 1024] fp32, keepdim, y [16, 559, 1]:
 * one divide per output, and y not one element. */
#define QWEN_MEAN(trace, row) \
    {trace, row, "aten::mean", 9158656 + 8944, 4 * (9158656 + 8944), -8944, 4 - 4 * 8944, "mean divide, reduce output"}
#define QWEN_DEVS(t, sdpa, c1, c2, c3, c4, c5, c6, silu, mean, rsqrt)                                          \
    QWEN_SDPA(t, sdpa), COPY(t, c1, 9158656ll, 2, 2), COPY(t, c2, 9158656ll, 2, 4), COPY(t, c3, 9158656ll, 4, 2), \
    COPY(t, c4, 9158656ll, 2, 2), COPY(t, c5, 35776ll, 4, 2), COPY(t, c6, 559ll, 8, 4),                          \
    TRANS(t, silu, "aten::silu", 25186304ll, 2), QWEN_MEAN(t, mean), TRANS(t, rsqrt, "aten::rsqrt", 8944ll, 4)

/* normalization trace, fp32: N = 131072 elements ([8, 16, 32, 32] or [1, 128, 32, 32]), X = N·4 bytes */
#define NX 131072ll
#define X4 (NX * 4)

static const dev devs[] = {
    LN_INF("h100_bert", 4, 72192ll, 141ll, 512ll),
    LN_INF("mi300_bert", 2, 72192ll, 141ll, 512ll),
    VIT_CONV("h100_falcon", 3),
    LN_INF("h100_falcon", 5, 605184ll, 788ll, 768ll),
    LN_INF("mi300_falcon", 4, 605184ll, 788ll, 768ll),
    VIT_CONV("mi300_falcon", 7),
    QWEN_DEVS("h100_qwen", 1, 3, 9, 15, 19, 28, 29, 14, 18, 22),
    QWEN_DEVS("mi300_qwen", 1, 6, 7, 17, 20, 31, 30, 14, 18, 22),
    /* norm deviations by their docs/ops.md ids (normalisation, "Deviations from the TraceLens reference") */
    {"normalization", 0, "aten::native_layer_norm_backward", 13 * NX, 3 * X4 + 3 * 16384 * 4 + 2 * 8 * 4, -4 * NX,
     16384 * 4 - 2 * 8 * 4, "norm L3 L4"},
    {"normalization", 1, "aten::native_layer_norm_backward", 9 * NX, 3 * X4 + 2 * 8 * 4, 0, 16384 * 4 - 2 * 8 * 4,
     "norm L4"},
    {"normalization", 2, "aten::batch_norm", 5 * NX + 12 * 16, 2 * X4 + 8 * 16 * 4, -6 * 16, -2 * 16 * 4,
     "norm B1 S1"},
    {"normalization", 3, "aten::native_group_norm_backward", 9 * NX, 3 * X4 + 2 * 32 * 4 + 3 * 16 * 4, 0,
     4 * 4 * 4 - 2 * 32 * 4 - 3 * 16 * 4, "norm G2"},
    {"normalization", 4, "aten::batch_norm", 5 * NX + 12 * 16, 2 * X4 + 6 * 16 * 4, -6 * 16, 0, "norm B1 A1 S1"},
    /* instance norm without γ β: the reference's phantom γ β (A1) and running statistics (B2) */
    {"normalization", 5, "aten::instance_norm", 5 * NX + 6 * 128, 2 * X4 + 2 * 128 * 4, 6 * 16 - 6 * 128,
     2 * 16 * 4 + 4 * 16 * 4 - 2 * 128 * 4, "norm I1 A1 B2 S1"},
    {"normalization", 6, "aten::_fused_rms_norm_backward", 10 * NX, 3 * X4 + 2 * 1024 * 4 + 128 * 4, 0, -128 * 4,
     "norm R1"},
    {"normalization", 7, "aten::group_norm", 5 * NX + 3 * 32 + 3 * 128, 2 * X4 + 2 * 16 * 4 + 2 * 32 * 4,
     6 * 16 - 3 * 32 - 3 * 128, 0, "norm G1 B2 S1"},
    {"normalization", 8, "aten::layer_norm", 7 * NX + 3 * 8, 2 * X4 + 2 * 16384 * 4 + 2 * 8 * 4,
     -2 * NX + 6 * 16384 - 3 * 8, 4 * 16384 * 4 - 2 * 8 * 4, "norm L1 L2 S1"},
    {"normalization", 9, "aten::native_group_norm_backward", 9 * NX, 3 * X4 + 2 * 32 * 4, 0, 4 * 4 * 4 - 2 * 32 * 4,
     "norm G2 A1 M1"},
    /* layer norm without γ β: the reference still applies them (A1) besides L1 L2 */
    {"normalization", 10, "aten::layer_norm", 5 * NX + 3 * 8, 2 * X4 + 2 * 8 * 4, 6 * 16384 - 3 * 8,
     2 * 16384 * 4 + 4 * 16384 * 4 - 2 * 8 * 4, "norm L1 L2 A1 S1"},
    {"normalization", 11, "aten::native_batch_norm_backward", 9 * NX, 3 * X4 + 2 * 16 * 4, 0, 4 * 16 * 4 - 2 * 16 * 4,
     "norm B3 A1 M1"},
    {"normalization", 12, "aten::instance_norm", 5 * NX + 6 * 128, 2 * X4 + 2 * 16 * 4 + 2 * 128 * 4,
     6 * 16 - 6 * 128, 4 * 16 * 4 - 2 * 128 * 4, "norm I1 B2 S1"},
    /* group norm without γ β: pairs per (sample, group) (G1); phantom γ β (A1) and running stats (B2) */
    {"normalization", 13, "aten::group_norm", 5 * NX + 3 * 32 + 3 * 32, 2 * X4 + 2 * 32 * 4, 6 * 16 - 6 * 32,
     2 * 16 * 4 + 4 * 16 * 4 - 2 * 32 * 4, "norm G1 A1 B2 S1"},
    {"normalization", 14, "aten::mean", NX + 1, X4 + 4, -1, 0, "mean divide"},
    {"normalization", 15, "aten::sum", 128, 128 * 4 + 16 * 4, 0, 4 - 16 * 4, "reduce output"},
    {"normalization", 18, "aten::native_batch_norm_backward", 9 * NX, 3 * X4 + 2 * 128 * 4, 0,
     4 * 128 * 4 - 2 * 128 * 4, "norm B3 A1 M1"},
    {"normalization", 19, "aten::_fused_rms_norm_backward", 7 * NX, 3 * X4 + 128 * 4, NX, 2 * 1024 * 4 - 128 * 4,
     "norm A1 R1"},
    {"normalization", 21, "aten::miopen_batch_norm_backward", 9 * NX, 3 * X4 + 5 * 16 * 4, -5 * NX + 3 * 16,
     -X4 - 4 * 16 * 4, "norm T1"},
    {"normalization", 22, "aten::_fused_rms_norm", 4 * NX + 2 * 128, 2 * X4 + 1024 * 4 + 128 * 4, 0, -128 * 4,
     "norm S1"},
    {"normalization", 23, "aten::miopen_batch_norm_backward", 9 * NX, 3 * X4 + 5 * 128 * 4, -5 * NX + 3 * 128,
     -X4 - 4 * 128 * 4, "norm T1"},
    /* RMS norm without γ: the reference charges γ·x (A1) */
    {"normalization", 24, "aten::_fused_rms_norm", 3 * NX + 2 * 128, 2 * X4 + 128 * 4, NX, 1024 * 4 - 128 * 4,
     "norm A1 S1"},
    /* SGLang Qwen3-8B decode */
    {"sglang_decode", 8, "sgl_kernel::rotary_embedding", 3 * 32 * (32 + 8) * 128,
     4 * 32 * (4096 + 1024) + 32 * 128 * 2 + 32 * 8, 0, -(32 * 128 * 2 + 32 * 8), "RoPE bytes"},
    COPY("sglang_decode", 9, 131072ll, 2, 2),
    COPY("sglang_decode", 11, 32768ll, 2, 2),
    {"sglang_decode", 16, "aten::cumsum", 32, 32 * 4 + 32 * 8, 0, -32 * 4, "integer cumsum writes int64"},
    COPY("sglang_decode", 17, 32ll, 8, 4),
    COPY("sglang_decode", 18, 4861952ll, 2, 4),
    COPY("sglang_decode", 26, 32ll, 8, 8),
    COPY("sglang_decode", 28, 32ll, 8, 8),
};
#undef NX
#undef X4

typedef struct tally {
    int rows, recognised, equal, deviations, unrecognised;
} tally;

/* Per trace: rows with a reference perf model; recognised with a model;
 * equal; documented deviations; unrecognised (see `why_not`). */
static const struct { const char *trace; tally want; } expected[] = {
    {"h100_bert", {8, 8, 7, 1, 0}},       {"mi300_bert", {8, 8, 7, 1, 0}},
    {"h100_falcon", {9, 9, 7, 2, 0}},     {"mi300_falcon", {9, 9, 7, 2, 0}},
    {"h100_qwen", {26, 26, 16, 10, 0}},   {"mi300_qwen", {26, 26, 16, 10, 0}},
    {"normalization", {26, 26, 4, 22, 0}}, {"sglang_decode", {21, 20, 12, 8, 1}},
    {"torch_compile", {8, 4, 4, 0, 4}},
};

/* Rows we list without a model, and why. */
static const struct { const char *prefix, *why; } why_not[] = {
    /* its per-request KV lengths are not in the arguments (TraceLens reads
     * them from the step's annotation, sq32sk32785) */
    {"sglang_profiler::attention_paged_attention_ragged", "KV lengths not recorded"},
    /* torch.compile fused Triton kernels: no op of the library describes them */
    {"triton_", "fused Triton kernel"},
};

static const dev *find_dev(const char *trace, int row)
{
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        if (!strcmp(devs[i].trace, trace) && devs[i].row == row) return &devs[i];
    return NULL;
}

static tally sweep(const char *trace, int *devs_met)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "tests/data/traces/%s/unified_perf_summary.csv", trace);
    csv *c = csv_load(src_path(rel, path, sizeof path));
    tally t = {0, 0, 0, 0, 0};
    for (size_t r = 0; r < csv_rows(c); r++) {
        const char *g = csv_get(c, r, "GFLOPS");
        if (!g[0]) continue;
        cr_assert_eq(csv_bool(c, r, "has_perf_model"), 1);
        t.rows++;
        const char *name = csv_get(c, r, "name");
        char dims[4096], types[4096], conc[4096];
        py_to_json(csv_get(c, r, "Input Dims"), dims, sizeof dims);
        py_to_json(csv_get(c, r, "Input type"), types, sizeof types);
        py_to_json(csv_get(c, r, "Concrete Inputs"), conc, sizeof conc);
        rec x = run(name, dims, types, conc, !strcmp(trace, "normalization"));
        const dev *d = find_dev(trace, (int)r);
        if (!x.op) {
            size_t k = 0;
            size_t nw = sizeof why_not / sizeof why_not[0];
            while (k < nw && strncmp(name, why_not[k].prefix, strlen(why_not[k].prefix))) k++;
            cr_assert_lt(k, nw, "%s row %zu %s: not recognised\n%s", trace, r, name, x.params);
            cr_assert_null(d);
            t.unrecognised++;
            done(&x);
            continue;
        }
        t.recognised++;
        double ref_f = csv_num(c, r, "GFLOPS") * 1e9, ref_b = csv_num(c, r, "Data Moved (MB)") * 1048576.0;
        int attention = opm_op_kind(x.op) == OPM_KIND_ATTENTION;
        uint64_t f = attention ? x.k.matrix_flops : flops(x.k), b = bytes(x.k);
        if (d) {
            cr_assert_str_eq(d->name, name, "%s row %zu", trace, r);
            cr_assert_eq(f, d->flops, "%s row %zu %s: FLOPs %llu, by hand %llu", trace, r, name,
                         (unsigned long long)f, (unsigned long long)d->flops);
            cr_assert_eq(b, d->bytes, "%s row %zu %s: bytes %llu, by hand %llu", trace, r, name,
                         (unsigned long long)b, (unsigned long long)d->bytes);
            cr_assert_leq(rel_diff(ref_f, (double)((int64_t)f + d->dflops)), 1e-6,
                          "%s row %zu %s: reference FLOPs %.0f, ours %llu + documented %lld (%s)", trace, r, name,
                          ref_f, (unsigned long long)f, (long long)d->dflops, d->why);
            cr_assert_leq(rel_diff(ref_b, (double)((int64_t)b + d->dbytes)), 1e-6,
                          "%s row %zu %s: reference bytes %.0f, ours %llu + documented %lld (%s)", trace, r, name,
                          ref_b, (unsigned long long)b, (long long)d->dbytes, d->why);
            cr_assert(d->dflops || d->dbytes, "%s row %zu: a deviation of 0", trace, r);
            t.deviations++;
            (*devs_met)++;
        } else {
            cr_assert_leq(rel_diff((double)f, ref_f), 1e-6, "%s row %zu %s: FLOPs %llu, reference %.0f\n%s", trace,
                          r, name, (unsigned long long)f, ref_f, x.params);
            cr_assert_leq(rel_diff((double)b, ref_b), 1e-6, "%s row %zu %s: bytes %llu, reference %.0f\n%s", trace,
                          r, name, (unsigned long long)b, ref_b, x.params);
            t.equal++;
        }
        done(&x);
    }
    csv_free(c);
    return t;
}

Test(trace_recognize, golden_unified_every_row)
{
    int met = 0;
    tally all = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        tally t = sweep(expected[i].trace, &met), w = expected[i].want;
        cr_assert(t.rows == w.rows && t.recognised == w.recognised && t.equal == w.equal &&
                      t.deviations == w.deviations && t.unrecognised == w.unrecognised,
                  "%s: rows %d recognised %d equal %d deviations %d unrecognised %d", expected[i].trace, t.rows,
                  t.recognised, t.equal, t.deviations, t.unrecognised);
        all.rows += t.rows, all.recognised += t.recognised, all.equal += t.equal;
        all.deviations += t.deviations, all.unrecognised += t.unrecognised;
    }
    cr_assert_eq(met, (int)(sizeof devs / sizeof devs[0]), "every documented deviation was met");
    cr_assert_eq(all.rows, 141);
    cr_assert_eq(all.recognised, 136);
    cr_assert_eq(all.equal, 80);
    cr_assert_eq(all.deviations, 56);
    cr_assert_eq(all.unrecognised, 5);
}

/* The attention FLOPs the report shows are matrix + vector: the softmax's
 * 5·H·n on top of the products TraceLens counts (BERT SDPA row). */
Test(trace_recognize, attention_total_flops_include_softmax)
{
    rec r = run("aten::_scaled_dot_product_flash_attention",
                "[[1,8,141,64],[1,8,141,64],[1,8,141,64],[],[],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"\",\"0.\",\"False\",\"False\",\"0.125\"]", 0);
    cr_assert_not_null(r.op);
    cr_assert_eq(r.k.matrix_flops, 2ull * 8 * 141 * 141 * 128); /* = reference 0.040716288 GFLOP */
    cr_assert_eq(r.k.vector_flops, 5ull * 8 * 141 * 141);
    json_t *j = parse(r.params);
    cr_assert_eq(jint(j, "batch"), 1);
    cr_assert_eq(jint(j, "seq_q"), 141);
    cr_assert_eq(jint(j, "heads"), 8);
    cr_assert_eq(jint(j, "head_dim_qk"), 64);
    cr_assert(json_is_false(json_object_get(j, "causal")));
    cr_assert_str_eq(json_string_value(json_object_get(j, "dtype")), "bf16");
    json_decref(j);
    done(&r);
}

/* ---- families from real trace events without a reference row ---- */

#define BF3 "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]"

/* aten::linear and aten::matmul (h100_qwen trace) count what the addmm/mm/bmm
 * they wrap count in the reference rows. */
Test(trace_recognize, wrappers_match_the_ops_they_wrap)
{
    rec l = run("aten::linear", "[[16,559,1024],[1024,1024],[1024]]", BF3, "[\"\",\"\",\"\"]", 0);
    cr_assert_eq(opm_op_kind(l.op), OPM_KIND_GEMM);
    cr_assert_eq(flops(l.k), 18766086144ull); /* h100_qwen aten::addmm row 2 */
    cr_assert_eq(bytes(l.k), 38733824ull);
    json_t *j = parse(l.params);
    cr_assert_eq(jint(j, "m"), 8944);
    cr_assert_eq(jint(j, "n"), 1024);
    cr_assert_eq(jint(j, "k"), 1024);
    cr_assert(json_is_true(json_object_get(j, "bias")));
    json_decref(j);
    done(&l);
    rec m = run("aten::matmul", "[[16,559,1024],[1024,1024]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]",
                "[\"\",\"\"]", 0);
    cr_assert_eq(flops(m.k), 18756927488ull); /* aten::mm row 17 */
    cr_assert_eq(bytes(m.k), 38731776ull);
    done(&m);
    rec b = run("aten::matmul", "[[1,32,1],[1,1,559]]", "[\"float\",\"float\"]", "[\"\",\"\"]", 0);
    cr_assert_eq(opm_op_kind(b.op), OPM_KIND_BATCHED_GEMM);
    cr_assert_eq(flops(b.k), 35776ull); /* aten::bmm row 25 */
    cr_assert_eq(bytes(b.k), 73916ull);
    done(&b);
    /* SDPA (bhsd, is_causal at 5) and PyTorch's flash kernel (bshd, is_causal at 8) = row 1 */
    rec s = run("aten::scaled_dot_product_attention",
                "[[16,16,559,64],[16,16,559,64],[16,16,559,64],[],[],[],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"Scalar\",\"Scalar\",\"Scalar\","
                "\"Scalar\"]",
                "[\"\",\"\",\"\",\"\",\"0.\",\"True\",\"0.125\",\"False\"]", 0);
    rec f = run("aten::_flash_attention_forward",
                "[[16,559,16,64],[16,559,16,64],[16,559,16,64],[],[],[],[],[],[],[],[],[],[],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\",\"Scalar\",\"Scalar\",\"Scalar\","
                "\"Scalar\",\"Scalar\",\"Scalar\",\"\",\"\",\"\",\"\"]",
                "[\"\",\"\",\"\",\"\",\"\",\"559\",\"559\",\"0.\",\"True\",\"False\",\"0.125\",\"\",\"\",\"\",\"\"]",
                0);
    cr_assert_eq(s.k.matrix_flops, 2ull * 16 * 16 * (559 * 560 / 2) * 128);
    same_counts(s.k, f.k, "sdpa vs _flash_attention_forward");
    cr_assert_eq(bytes(f.k), 73269248ull);
    done(&s);
    done(&f);
}

/* index_select of a table by row ids is the embedding gather (h100_bert);
 * aten::embedding above it counts the same. */
Test(trace_recognize, embedding_from_index_select)
{
    rec i = run("aten::index_select", "[[30522,512],[],[141]]", "[\"c10::BFloat16\",\"Scalar\",\"long int\"]",
                "[\"\",\"0\",\"\"]", 0);
    cr_assert_eq(opm_op_kind(i.op), OPM_KIND_EMBEDDING);
    cr_assert_eq(flops(i.k), 0);
    cr_assert_eq(i.k.read_bytes, 141ull * 8 + 141ull * 512 * 2);
    cr_assert_eq(i.k.write_bytes, 141ull * 512 * 2);
    rec e = run("aten::embedding", "[[30522,512],[1,141],[],[],[]]",
                "[\"c10::BFloat16\",\"long int\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"0\",\"False\",\"False\"]", 0);
    same_counts(i.k, e.k, "index_select vs embedding");
    done(&i);
    done(&e);
    /* another dim is not a row gather */
    rec o = run("aten::index_select", "[[30522,512],[],[141]]", "[\"c10::BFloat16\",\"Scalar\",\"long int\"]",
                "[\"\",\"1\",\"\"]", 0);
    cr_assert_null(o.op);
    done(&o);
    /* backward: the dense gradient of the [V, D] table */
    rec b = run("aten::embedding_dense_backward", "[[1,141,512],[1,141],[],[],[]]",
                "[\"c10::BFloat16\",\"long int\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"30522\",\"0\",\"False\"]", 0);
    cr_assert_eq(opm_op_phase(b.op), OPM_PHASE_TRAIN_BWD);
    same_counts(b.k, counts_of("kind: embedding\nphase: train_bwd\ntokens: 141\nvocab: 30522\ndim: 512\ndtype: bf16\n"),
                "embedding backward");
    done(&b);
}

/* Convolutions of the MI300X ResNet trace (mi300_resnet_ckpt): conv2d, its
 * MIOpen kernel op (padding before stride) and convolution_backward with
 * its output mask; the numbers of tests/unit/test_conv.c. */
Test(trace_recognize, resnet_convolutions)
{
    const char *ty7 =
        "[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\"]";
    rec c2 = run("aten::conv2d", "[[10,512,7,7],[512,512,3,3],[],[],[],[],[]]", ty7,
                 "[\"\",\"\",\"\",\"[1, 1]\",\"[1, 1]\",\"[1, 1]\",\"1\"]", 1);
    cr_assert_eq(opm_op_kind(c2.op), OPM_KIND_CONV);
    cr_assert_eq(c2.k.matrix_flops, 2312110080ull);
    cr_assert_eq(c2.k.read_bytes, (10ull * 512 * 49 + 512ull * 512 * 9) * 2);
    cr_assert_eq(c2.k.write_bytes, 10ull * 512 * 49 * 2);
    done(&c2);
    /* stride 2 padding 1: miopen_convolution(self, weight, bias, padding, stride, dilation, groups, ...) */
    rec mi = run("aten::miopen_convolution", "[[10,256,14,14],[512,256,3,3],[],[],[],[],[],[],[]]",
                 "[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\","
                 "\"Scalar\",\"Scalar\"]",
                 "[\"\",\"\",\"\",\"[1, 1]\",\"[2, 2]\",\"[1, 1]\",\"1\",\"False\",\"False\"]", 0);
    rec cv = run("aten::_convolution", "[[10,256,14,14],[512,256,3,3],[],[],[],[],[],[],[],[],[],[],[]]",
                 "[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\","
                 "\"ScalarList\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                 "[\"\",\"\",\"\",\"[2, 2]\",\"[1, 1]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"1\",\"False\",\"False\","
                 "\"True\",\"True\"]",
                 0);
    cr_assert_eq(mi.k.matrix_flops, 2ull * 10 * 512 * 49 * 256 * 9);
    same_counts(mi.k, cv.k, "miopen_convolution vs _convolution");
    done(&mi);
    done(&cv);
    const char *tyb = "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"ScalarList\",\"ScalarList\","
                      "\"ScalarList\",\"ScalarList\",\"Scalar\",\"ScalarList\",\"Scalar\",\"ScalarList\"]";
    rec b = run("aten::convolution_backward", "[[10,512,7,7],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]", tyb,
                "[\"\",\"\",\"\",\"[0]\",\"[1, 1]\",\"[1, 1]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"1\","
                "\"[True, True, False]\"]",
                0);
    cr_assert_eq(opm_op_phase(b.op), OPM_PHASE_TRAIN_BWD);
    cr_assert_eq(b.k.matrix_flops, 2 * 2312110080ull); /* dX and dW */
    uint64_t x = 10ull * 512 * 49 * 2, w = 512ull * 512 * 9 * 2;
    cr_assert_eq(b.k.read_bytes, x + x + w); /* dY, x, w */
    cr_assert_eq(b.k.write_bytes, x + w);    /* dX, dW */
    done(&b);
    /* a first layer: output_mask [False, True, False], weight gradient only */
    rec s = run("aten::convolution_backward", "[[10,64,112,112],[10,3,224,224],[64,3,7,7],[],[],[],[],[],[],[],[]]",
                tyb,
                "[\"\",\"\",\"\",\"[0]\",\"[2, 2]\",\"[3, 3]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"1\","
                "\"[False, True, False]\"]",
                0);
    cr_assert_eq(s.k.matrix_flops, 2ull * 10 * 64 * 112 * 112 * 3 * 49);
    cr_assert_eq(s.k.write_bytes, 64ull * 3 * 49 * 2);
    json_t *j = parse(s.params);
    cr_assert(json_is_false(json_object_get(j, "grad_input")));
    cr_assert_eq(json_number_value(json_array_get(json_object_get(j, "stride"), 1)), 2);
    json_decref(j);
    done(&s);
    /* ViT patch embedding through cuDNN's op: no bias argument */
    rec cu = run("aten::cudnn_convolution", "[[4,3,224,224],[768,3,16,16],[],[],[],[],[],[],[]]",
                 "[\"c10::BFloat16\",\"c10::BFloat16\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\","
                 "\"Scalar\",\"Scalar\",\"Scalar\"]",
                 "[\"\",\"\",\"[0, 0]\",\"[16, 16]\",\"[1, 1]\",\"1\",\"False\",\"False\",\"True\"]", 0);
    cr_assert_eq(flops(cu.k), 924844032ull); /* the reference's figure: no bias here */
    done(&cu);
}

/* ResNet batch norm, ReLU and pooling-side ops (mi300_resnet_ckpt), training. */
Test(trace_recognize, resnet_norm_and_elementwise)
{
    uint64_t n = 10ull * 512 * 49, C = 512;
    rec bn = run("aten::batch_norm", "[[10,512,7,7],[512],[512],[512],[512],[],[],[],[]]",
                 "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
                 "\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                 "[\"\",\"\",\"\",\"\",\"\",\"True\",\"0.10000000000000001\",\"1.0000000000000001e-05\",\"True\"]", 1);
    cr_assert_eq(opm_op_phase(bn.op), OPM_PHASE_TRAIN_FWD);
    cr_assert_eq(flops(bn.k), 5 * n + 12 * C);
    /* reads x, γ β, running mean/var; writes y, running mean/var, fp32 saved statistics */
    cr_assert_eq(bn.k.read_bytes, 2 * n + 8 * C);
    cr_assert_eq(bn.k.write_bytes, 2 * n + 4 * C + 8 * C);
    done(&bn);
    rec bb = run("aten::native_batch_norm_backward",
                 "[[10,512,7,7],[10,512,7,7],[512],[512],[512],[512],[512],[],[],[]]",
                 "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
                 "\"float\",\"float\",\"Scalar\",\"Scalar\",\"ScalarList\"]",
                 "[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"True\",\"1.0000000000000001e-05\",\"[True, True, True]\"]", 0);
    cr_assert_eq(flops(bb.k), 9 * n);
    cr_assert_eq(bb.k.read_bytes, 4 * n + 8 * C + 2 * C); /* dy, x, saved mean/invstd, γ */
    cr_assert_eq(bb.k.write_bytes, 2 * n + 4 * C);        /* dx, dγ, dβ */
    done(&bb);
    rec cm = run("aten::clamp_min_", "[[10,512,7,7],[]]", "[\"c10::BFloat16\",\"Scalar\"]", "[\"\",\"0\"]", 1);
    cr_assert_eq(flops(cm.k), n);
    cr_assert_eq(bytes(cm.k), 4 * n);
    rec re = run("aten::relu_", "[[10,512,7,7]]", "[\"c10::BFloat16\"]", "[\"\"]", 1);
    same_counts(cm.k, re.k, "clamp_min_ vs relu_");
    done(&cm);
    done(&re);
    rec tb = run("aten::threshold_backward", "[[10,512,7,7],[10,512,7,7],[]]",
                 "[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]", "[\"\",\"\",\"0\"]", 0);
    cr_assert_eq(opm_op_phase(tb.op), OPM_PHASE_TRAIN_BWD);
    cr_assert_eq(flops(tb.k), 2 * n); /* compare, select */
    cr_assert_eq(bytes(tb.k), 6 * n); /* dy, x; dx */
    done(&tb);
    rec mn = run("aten::mean", "[[10,512,7,7],[],[],[]]", "[\"c10::BFloat16\",\"ScalarList\",\"Scalar\",\"\"]",
                 "[\"\",\"[-1, -2]\",\"True\",\"\"]", 1);
    cr_assert_eq(flops(mn.k), n + 5120);
    cr_assert_eq(bytes(mn.k), 2 * n + 2 * 5120);
    done(&mn);
    rec sm = run("aten::sum", "[[10,1000],[],[],[]]", "[\"c10::BFloat16\",\"ScalarList\",\"Scalar\",\"\"]",
                 "[\"\",\"[0]\",\"True\",\"\"]", 0);
    cr_assert_eq(flops(sm.k), 10000);
    cr_assert_eq(bytes(sm.k), 20000 + 2000);
    done(&sm);
    /* div by a Python scalar, and by a 0-dim int64 tensor (8 bytes read) */
    rec d1 = run("aten::div", "[[10,512,7,7],[]]", "[\"c10::BFloat16\",\"Scalar\"]", "[\"\",\"49\"]", 0);
    rec d2 = run("aten::div", "[[10,512,7,7],[]]", "[\"c10::BFloat16\",\"long int\"]", "[\"\",\"\"]", 0);
    cr_assert_eq(bytes(d1.k), 4 * n);
    cr_assert_eq(bytes(d2.k), 4 * n + 8);
    cr_assert_eq(flops(d2.k), n);
    json_t *j = parse(d2.params);
    cr_assert_str_eq(json_string_value(json_object_get(j, "dtype")), "bf16"); /* a 0-dim int does not promote */
    json_decref(j);
    done(&d1);
    done(&d2);
}

/* Ops the reference lists without a model, from the BERT and ViT traces. */
Test(trace_recognize, ops_the_reference_leaves_unmodelled)
{
    uint64_t n = 141ull * 2048;
    rec g = run("aten::gelu", "[[1,141,2048],[]]", "[\"c10::BFloat16\",\"\"]", "[\"\",\"\"]", 0);
    cr_assert_eq(flops(g.k), 8 * n);
    cr_assert_eq(bytes(g.k), 4 * n);
    done(&g);
    rec gt = run("aten::gelu", "[[1,141,2048],[]]", "[\"c10::BFloat16\",\"Scalar\"]", "[\"\",\"tanh\"]", 0);
    cr_assert_str_eq(opm_op_get_string(gt.op, "op", ""), "gelu_tanh");
    done(&gt);
    rec t = run("aten::tanh", "[[4,768]]", "[\"c10::BFloat16\"]", "[\"\"]", 0);
    cr_assert_eq(flops(t.k), 4 * 4 * 768);
    done(&t);
    rec e = run("aten::eq", "[[1,141],[]]", "[\"long int\",\"Scalar\"]", "[\"\",\"1\"]", 0);
    cr_assert_eq(flops(e.k), 141);
    cr_assert_eq(bytes(e.k), 141 * 8 + 141); /* int64 in, bool out */
    done(&e);
    rec a = run("aten::all", "[[1,141]]", "[\"bool\"]", "[\"\"]", 0);
    cr_assert_eq(opm_op_kind(a.op), OPM_KIND_REDUCTION);
    cr_assert_eq(bytes(a.k), 141 + 1);
    done(&a);
    rec am = run("aten::argmax", "[[32,151936],[],[]]", "[\"float\",\"Scalar\",\"Scalar\"]",
                 "[\"\",\"-1\",\"False\"]", 0);
    cr_assert_eq(am.k.write_bytes, 32 * 8); /* int64 indices */
    cr_assert_eq(flops(am.k), 2ull * 32 * 151936);
    done(&am);
}

/* ---- families by hand (no traced row): worked numbers of docs/ops.md ---- */

Test(trace_recognize, scaled_mm_fp8)
{
    /* _scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype = 15 (bf16), use_fast_accum):
     * docs/ops.md, low-precision GEMM: 33,554,432 + 65,536 FLOPs, reads 196,616, writes 65,536. */
    rec s = run("aten::_scaled_mm", "[[128,512],[512,256],[],[],[],[],[],[]]",
                "[\"c10::Float8_e4m3fn\",\"c10::Float8_e4m3fn\",\"float\",\"float\",\"\",\"\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"\",\"\",\"\",\"\",\"15\",\"False\"]", 0);
    cr_assert_eq(s.k.matrix_flops, 33554432ull);
    cr_assert_eq(s.k.vector_flops, 65536ull);
    cr_assert_eq(s.k.read_bytes, 196616ull);
    cr_assert_eq(s.k.write_bytes, 65536ull);
    cr_assert_eq(s.k.compute_dtype, OPM_FP8_E4M3);
    json_t *j = parse(s.params);
    cr_assert_str_eq(json_string_value(json_object_get(j, "out_dtype")), "bf16");
    cr_assert_str_eq(json_string_value(json_object_get(j, "scale_a")), "tensor");
    json_decref(j);
    done(&s);
    /* row-wise scales [M, 1] and [1, N] */
    rec r = run("aten::_scaled_mm", "[[128,512],[512,256],[128,1],[1,256],[],[],[],[]]",
                "[\"c10::Float8_e4m3fn\",\"c10::Float8_e4m3fn\",\"float\",\"float\",\"\",\"\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"\",\"\",\"\",\"\",\"15\",\"False\"]", 0);
    cr_assert_str_eq(opm_op_get_string(r.op, "scale_a", ""), "row");
    cr_assert_str_eq(opm_op_get_string(r.op, "scale_b", ""), "row");
    cr_assert_eq(r.k.read_bytes, 128ull * 512 + 512ull * 256 + (128 + 256) * 4);
    done(&r);
}

Test(trace_recognize, grouped_mm_even_split)
{
    rec g = run("aten::_grouped_mm", "[[1000,512],[8,512,2048],[8],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"int\",\"\",\"\"]", "[\"\",\"\",\"\",\"\",\"\"]", 0);
    cr_assert_eq(opm_op_kind(g.op), OPM_KIND_GROUPED_GEMM);
    same_counts(g.k, counts_of("kind: grouped_gemm\ngroups: 8\nm: 1000\nn: 2048\nk: 512\ndtype: bf16\n"), "grouped");
    done(&g);
}

Test(trace_recognize, softmax_and_cross_entropy)
{
    rec s = run("aten::_softmax", "[[4,100],[],[]]", "[\"float\",\"Scalar\",\"Scalar\"]", "[\"\",\"-1\",\"False\"]", 0);
    cr_assert_eq(flops(s.k), 3200); /* docs/ops.md softmax worked numbers */
    cr_assert_eq(s.k.read_bytes, 1600);
    cr_assert_eq(s.k.write_bytes, 1600);
    done(&s);
    rec b = run("aten::_softmax_backward_data", "[[4,100],[4,100],[],[]]",
                "[\"float\",\"float\",\"Scalar\",\"Scalar\"]", "[\"\",\"\",\"-1\",\"6\"]", 0);
    cr_assert_eq(opm_op_phase(b.op), OPM_PHASE_TRAIN_BWD);
    cr_assert_eq(flops(b.k), 1600);
    cr_assert_eq(b.k.read_bytes, 3200);
    cr_assert_eq(b.k.write_bytes, 1600);
    done(&b);
    rec h = run("aten::_softmax", "[[4,100],[],[]]", "[\"c10::Half\",\"Scalar\",\"Scalar\"]", "[\"\",\"-1\",\"True\"]",
                0);
    cr_assert_eq(h.k.write_bytes, 1600); /* half_to_float: fp32 out */
    cr_assert_eq(h.k.read_bytes, 800);
    done(&h);
    /* PyTorch eager cross-entropy: log_softmax then nll_loss, the unfused count */
    rec x = run("aten::cross_entropy_loss", "[[8192,151936],[8192],[],[],[],[]]",
                "[\"c10::BFloat16\",\"long int\",\"\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"\",\"1\",\"-100\",\"0.\"]", 1);
    cr_assert_eq(opm_op_kind(x.op), OPM_KIND_CROSS_ENTROPY);
    same_counts(x.k, counts_of("kind: cross_entropy\nphase: train_fwd\ntokens: 8192\nvocab: 151936\ndtype: bf16\n"
                               "fused: false\n"),
                "cross_entropy");
    done(&x);
}

Test(trace_recognize, varlen_flash_attention)
{
    /* flash_attn varlen: 4 sequences, 4096 query tokens, max_seqlen 1024: exactly even */
    const char *types = "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\",\"int\",\"Scalar\",\"Scalar\","
                        "\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]";
    const char *dims = "[[4096,32,128],[4096,8,128],[4096,8,128],[5],[5],[],[],[],[],[],[],[]]";
    rec v = run("flash_attn::_flash_attn_varlen_forward", dims, types,
                "[\"\",\"\",\"\",\"\",\"\",\"1024\",\"1024\",\"0.\",\"0.088\",\"True\",\"-1\",\"-1\"]", 0);
    cr_assert_not_null(v.op);
    same_counts(v.k, counts_of("kind: attention\nseq_lens: [1024, 1024, 1024, 1024]\nheads: 32\nkv_heads: 8\n"
                               "head_dim: 128\ncausal: true\ndtype: bf16\n"),
                "varlen");
    json_t *j = parse(v.params);
    cr_assert_str_eq(json_string_value(json_object_get(j, "seq_lens")), "even");
    json_decref(j);
    done(&v);
    /* max_seqlen 2000: the lengths are unknown, split evenly and said so */
    rec a = run("flash_attn::_flash_attn_varlen_forward", dims, types,
                "[\"\",\"\",\"\",\"\",\"\",\"2000\",\"2000\",\"0.\",\"0.088\",\"True\",\"-1\",\"-1\"]", 0);
    j = parse(a.params);
    cr_assert_str_eq(json_string_value(json_object_get(j, "seq_lens")), "assumed_even");
    json_decref(j);
    same_counts(a.k, v.k, "even split");
    done(&a);
    /* sliding window and the dense flash_attn op (bshd) */
    rec w = run("flash_attn::_flash_attn_forward", "[[1,8192,32,128],[1,8192,8,128],[1,8192,8,128],[],[],[],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\","
                "\"Scalar\"]",
                "[\"\",\"\",\"\",\"0.\",\"0.088\",\"True\",\"4095\",\"0\"]", 0);
    cr_assert_eq(w.k.matrix_flops, 412350414848ull); /* docs/ops.md examples/attention.yaml */
    done(&w);
    /* top-left causal SDPA with Sq ≠ Skv is not our bottom-right mask: no model */
    rec t = run("aten::_scaled_dot_product_flash_attention", "[[1,8,16,64],[1,8,128,64],[1,8,128,64],[],[],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"\",\"0.\",\"True\",\"False\",\"0.125\"]", 0);
    cr_assert_null(t.op);
    done(&t);
}

Test(trace_recognize, attention_backward)
{
    rec b = run("aten::_scaled_dot_product_flash_attention_backward",
                "[[1,8,141,64],[1,8,141,64],[1,8,141,64],[1,8,141,64],[1,8,141,64],[1,8,141],"
                "[],[],[],[],[],[],[],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"float\","
                "\"\",\"\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"long int\",\"long int\",\"Scalar\"]",
                "[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"141\",\"141\",\"0.\",\"False\",\"\",\"\",\"0.125\"]", 0);
    cr_assert_eq(opm_op_phase(b.op), OPM_PHASE_TRAIN_BWD);
    same_counts(b.k, counts_of("kind: attention\nphase: train_bwd\nbatch: 1\nseq_q: 141\nseq_kv: 141\nheads: 8\n"
                               "head_dim: 64\ndtype: bf16\n"),
                "sdpa backward");
    done(&b);
}

Test(trace_recognize, fused_moe_mixtral)
{
    /* vLLM fused_experts: one decode token of Mixtral-8x7B (docs/ops.md fused_moe worked numbers) */
    rec m = run("vllm::outplace_fused_experts", "[[1,4096],[8,28672,4096],[8,4096,14336],[1,2],[1,2],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"int\",\"\"]",
                "[\"\",\"\",\"\",\"\",\"\",\"silu\"]", 0);
    cr_assert_eq(opm_op_kind(m.op), OPM_KIND_FUSED_MOE);
    cr_assert_eq(m.k.matrix_flops, 704643072ull);
    cr_assert_eq(m.k.vector_flops, 159744ull);
    cr_assert_eq(m.k.read_bytes, 704651280ull);
    cr_assert_eq(m.k.write_bytes, 8192ull);
    json_t *j = parse(m.params);
    cr_assert_eq(jint(j, "experts"), 8);
    cr_assert_eq(jint(j, "top_k"), 2);
    cr_assert(json_is_true(json_object_get(j, "gated")));
    json_decref(j);
    done(&m);
}

/* vLLM's kernels count what SGLang's do on the same shapes (reference rows
 * of sglang_decode): RoPE, fused residual RMSNorm, SiLU·mul, the KV store. */
Test(trace_recognize, vllm_kernels_match_sglang_rows)
{
    const char *rope_t = "[\"long int\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"]";
    const char *rope_c = "[\"\",\"\",\"\",\"128\",\"\",\"True\"]";
    rec a = run("sgl_kernel::rotary_embedding", "[[32],[32,4096],[32,1024],[],[41216,128],[]]", rope_t, rope_c, 0);
    rec b = run("_C::rotary_embedding", "[[32],[32,32,128],[32,8,128],[],[41216,128],[]]", rope_t, rope_c, 0);
    same_counts(a.k, b.k, "rotary");
    done(&a);
    done(&b);
    rec n = run("_C::fused_add_rms_norm", "[[32,4096],[32,4096],[4096],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]", "[\"\",\"\",\"\",\"1e-06\"]", 0);
    cr_assert_eq(flops(n.k), 655424ull); /* = aiter::add_rmsnorm row 6 */
    cr_assert_eq(bytes(n.k), 1056768ull);
    done(&n);
    rec s = run("_C::silu_and_mul", "[[32,12288],[32,24576]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]",
                "[\"\",\"\"]", 0);
    cr_assert_eq(flops(s.k), 1966080ull);
    cr_assert_eq(bytes(s.k), 2359296ull);
    done(&s);
    rec k = run("_C_cache_ops::reshape_and_cache_flash",
                "[[32,8,128],[32,8,128],[52243,16,8,128],[52243,16,8,128],[32],[],[],[]]",
                "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"long int\",\"\",\"float\","
                "\"float\"]",
                "[\"\",\"\",\"\",\"\",\"\",\"auto\",\"\",\"\"]", 0);
    cr_assert_eq(bytes(k.k), 262144ull); /* = sglang::store_cache row 10 */
    done(&k);
}

/* The training flag decides forward phases; backward ops are train_bwd by name. */
Test(trace_recognize, training_flag_sets_the_forward_phase)
{
    const char *d = "[[8,16,32,32],[],[16,32,32],[16,32,32],[],[]]";
    const char *t = "[\"float\",\"ScalarList\",\"float\",\"float\",\"Scalar\",\"Scalar\"]";
    const char *c = "[\"\",\"[16, 32, 32]\",\"\",\"\",\"1e-05\",\"True\"]";
    rec inf = run("aten::layer_norm", d, t, c, 0), tr = run("aten::layer_norm", d, t, c, 1);
    cr_assert_eq(opm_op_phase(inf.op), OPM_PHASE_INFERENCE);
    cr_assert_eq(opm_op_phase(tr.op), OPM_PHASE_TRAIN_FWD);
    cr_assert_eq(bytes(tr.k) - bytes(inf.k), 2 * 8 * 4); /* saved mean and rstd */
    done(&inf);
    done(&tr);
}

/* ---- arguments that are absent, malformed or not understood ---- */

static void raw_only(const char *name, const char *dims, const char *types, const char *conc, const char *want_dims)
{
    rec r = run(name, dims, types, conc, 0);
    cr_assert_null(r.op, "%s %s: got a model", name, dims ? dims : "(null)");
    json_t *j = parse(r.params);
    cr_assert_eq(json_object_size(j), 3, "%s", r.params);
    json_t *dj = json_object_get(j, "input_dims");
    if (!want_dims) cr_assert(json_is_null(dj), "%s", r.params);
    else if (!strcmp(want_dims, "string")) cr_assert_str_eq(json_string_value(dj), dims);
    else cr_assert(json_is_array(dj), "%s", r.params);
    json_decref(j);
    done(&r);
}

Test(trace_recognize, malformed_or_absent_args)
{
    const char *t2 = "[\"c10::BFloat16\",\"c10::BFloat16\"]", *c2 = "[\"\",\"\"]";
    raw_only("aten::mm", NULL, NULL, NULL, NULL);
    raw_only("aten::mm", "", "", "", NULL);
    raw_only("aten::mm", "[[141,512],[512", t2, c2, "string");       /* truncated */
    raw_only("aten::mm", "not json", t2, c2, "string");
    raw_only("aten::mm", "[[141,512],[512,512]] x", t2, c2, "string"); /* trailing garbage */
    raw_only("aten::mm", "[[141,512],[512,512]]", "[\"c10::BFloat16\"]", c2, "array"); /* types do not pair */
    raw_only("aten::mm", "[[141,512],[256,512]]", t2, c2, "array");    /* inner dims differ */
    raw_only("aten::mm", "[[0,512],[512,512]]", t2, c2, "array");      /* an empty tensor */
    raw_only("aten::mm", "[[141,512],[512,512]]", "[\"c10::complex<float>\",\"c10::BFloat16\"]", c2, "array");
    raw_only("aten::mm", "[[99999999999999999999,2],[2,2]]", t2, c2, "array"); /* a dim beyond int64 */
    raw_only("aten::mm", "[[1.5,2],[2,2]]", t2, c2, "array");
    raw_only("aten::mm", "[[1,2,3,4,5,6,7,8,9],[9,2]]", t2, c2, "array"); /* rank beyond OPM_MAX_RANK */
    raw_only("aten::mm", "[{\"a\":1},null]", t2, c2, "array");
    /* counts that overflow 64 bits: listed without a model, not an error */
    raw_only("aten::mm", "[[4000000000,4000000000],[4000000000,4000000000]]", t2, c2, "array");
    raw_only("aten::layer_norm", "[[8,16],[],[16],[16],[],[]]",
             "[\"float\",\"ScalarList\",\"float\",\"float\",\"Scalar\",\"Scalar\"]",
             "[\"\",\"[oops]\",\"\",\"\",\"1e-05\",\"True\"]", "array");
    raw_only("aten::batch_norm", "[[8,16,4],[16],[16],[],[],[],[],[],[]]",
             "[\"float\",\"float\",\"float\",\"\",\"\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]",
             "[\"\",\"\",\"\",\"\",\"\",\"maybe\",\"0.1\",\"1e-05\",\"True\"]", "array");
    /* nesting deeper than the reader allows: kept as a string, still valid JSON */
    char deep[700];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    deep[600] = '\0';
    raw_only("aten::mm", deep, t2, c2, "string");
    /* concrete inputs absent: the builder still reads the tensors */
    rec r = run("aten::mm", "[[141,512],[512,512]]", t2, "", 0);
    cr_assert_not_null(r.op);
    json_t *j = parse(r.params);
    cr_assert_eq(jint(j, "m"), 141);
    json_decref(j);
    done(&r);
}

Test(trace_recognize, nested_list_args)
{
    /* aten::cat's TensorList (h100_falcon): not listed, the raw arguments keep their nesting */
    const char *dims = "[[[4,1,768],[4,196,768]],[]]";
    const char *types = "[\"TensorList\",\"Scalar\"]", *conc = "[\"\",\"1\"]";
    cr_assert_null(opm_trace_op_lookup("aten::cat"));
    opm_trace_call call = {"aten::cat", dims, types, "", conc, 0};
    opm_trace_recog out;
    opm_error err;
    cr_assert_eq(opm_trace_recognize(NULL, &call, &out, &err), 0);
    json_t *j = parse(out.params_json);
    json_t *list = json_array_get(json_object_get(j, "input_dims"), 0);
    cr_assert_eq(json_array_size(list), 2);
    cr_assert_eq(json_number_value(json_array_get(json_array_get(list, 1), 1)), 196);
    json_decref(j);
    free(out.params_json);
    /* the argument reader sees a list of two tensors, then a scalar */
    opm_targs a;
    cr_assert_eq(opm_targs_parse(dims, types, conc, &a, &err), 0);
    cr_assert_eq(a.n, 2);
    cr_assert_eq(a.arg[0].kind, OPM_TARG_LIST);
    cr_assert_eq(a.arg[0].list_len, 2);
    cr_assert_eq(a.arg[1].kind, OPM_TARG_NONE);
    cr_assert_str_eq(a.arg[1].value, "1");
    opm_targs_free(&a);
    /* a listed op given a TensorList where it wants a tensor declines */
    rec r = run("aten::add", dims, types, conc, 0);
    cr_assert_null(r.op);
    done(&r);
    rec f = run("aten::_foreach_copy_", "[[[32]],[[32]],[]]", "[\"TensorList\",\"TensorList\",\"Scalar\"]",
                "[\"\",\"\",\"False\"]", 0);
    cr_assert_null(f.entry);
    cr_assert_null(f.op);
    done(&f);
}

Test(trace_recognize, argument_reader)
{
    opm_targs a;
    opm_error err;
    cr_assert_eq(opm_targs_parse("[[512],[141,512],[],[],[]]",
                                 "[\"c10::BFloat16\",\"long int\",\"double\",\"Scalar\",\"\"]",
                                 "[\"\",\"\",\"\",\"a\\\"b\\u00e9\",\"[True, False]\"]", &a, &err),
                 0, "%s", err.message);
    cr_assert_eq(a.arg[0].kind, OPM_TARG_TENSOR);
    cr_assert_eq(a.arg[0].dtype, OPM_BF16);
    cr_assert_eq(a.arg[1].dtype, OPM_INT64);
    cr_assert_eq(a.arg[1].shape[1], 512);
    cr_assert_eq(a.arg[2].kind, OPM_TARG_TENSOR); /* a 0-dim double tensor */
    cr_assert_eq(a.arg[2].rank, 0);
    cr_assert_eq(a.arg[3].kind, OPM_TARG_NONE);
    cr_assert_str_eq(a.arg[3].value, "a\"b?");
    int bv[4], nb;
    cr_assert_eq(opm_targ_bools(&a, 4, bv, 4, &nb), 0);
    cr_assert(nb == 2 && bv[0] == 1 && bv[1] == 0);
    int64_t iv[4];
    int ni;
    cr_assert_neq(opm_targ_ints(&a, 4, iv, 4, &ni), 0);
    cr_assert_neq(opm_targ_int(&a, 9, iv), 0); /* out of range */
    opm_targs_free(&a);
    static const struct { const char *t; opm_dtype d; } dt[] = {
        {"c10::BFloat16", OPM_BF16}, {"c10::Half", OPM_FP16}, {"float", OPM_FP32}, {"double", OPM_FP64},
        {"c10::Float8_e4m3fn", OPM_FP8_E4M3}, {"c10::Float8_e4m3fnuz", OPM_FP8_E4M3},
        {"c10::Float8_e5m2", OPM_FP8_E5M2}, {"long int", OPM_INT64}, {"int", OPM_INT32}, {"bool", OPM_BOOL},
        {"unsigned char", OPM_INT8}, {"signed char", OPM_INT8},
    };
    for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++) {
        opm_dtype d;
        cr_assert_eq(opm_torch_type_dtype(dt[i].t, &d), 0, "%s", dt[i].t);
        cr_assert_eq(d, dt[i].d, "%s", dt[i].t);
    }
    opm_dtype d;
    cr_assert_neq(opm_torch_type_dtype("Scalar", &d), 0);
    cr_assert_neq(opm_torch_type_dtype("", &d), 0);
    cr_assert_neq(opm_torch_type_dtype("c10::complex<float>", &d), 0);
    cr_assert_eq(opm_scalar_type_dtype(15, &d), 0);
    cr_assert_eq(d, OPM_BF16);
    cr_assert_neq(opm_scalar_type_dtype(99, &d), 0);
    cr_assert(opm_json_is_value("[[1,2],{\"a\":[true,null]}]", 25));
    cr_assert(!opm_json_is_value("[1,]", 4));
    cr_assert(!opm_json_is_value("\"\\x\"", 4));
}

/* The parameters object is written with strbuf: numbers in their shortest
 * round-trip text (params are shown to people and compared as text) and
 * strings that are valid JSON whatever bytes the trace held. */
Test(trace_recognize, params_writer)
{
    opm_jbuf b;
    opm_jbuf_init(&b);
    char *s = opm_jbuf_finish(&b);
    cr_assert_str_eq(s, "{}");
    free(s);

    opm_jbuf_init(&b);
    static const int64_t d0[] = {2, 3}, l[] = {1, -2};
    const int64_t *dims[] = {d0, NULL};
    const int ranks[] = {2, 0};
    opm_jbuf_int(&b, "i", INT64_MIN);
    opm_jbuf_bool(&b, "b", 1);
    opm_jbuf_double(&b, "d", 0.1);
    opm_jbuf_double(&b, "e", 1e-5);
    opm_jbuf_double(&b, "inf", INFINITY);
    opm_jbuf_str(&b, "s", "a\xff" "b\n\"q\"\x01\xc3\xa9");
    opm_jbuf_str(&b, "n", NULL);
    opm_jbuf_ints(&b, "l", l, 2);
    opm_jbuf_shapes(&b, "sh", dims, ranks, 2);
    opm_jbuf_raw(&b, "r", "[1,{\"a\":2}]");
    opm_jbuf_raw(&b, "z", NULL);
    cr_assert_eq(b.sb.oom, 0);
    s = opm_jbuf_finish(&b);
    cr_assert_str_eq(s, "{\"i\":-9223372036854775808,\"b\":true,\"d\":0.1,\"e\":1e-05,\"inf\":null,"
                        "\"s\":\"a\xef\xbf\xbd" "b\\n\\\"q\\\"\\u0001\xc3\xa9\",\"n\":null,\"l\":[1,-2],"
                        "\"sh\":[[2,3],[]],\"r\":[1,{\"a\":2}],\"z\":null}");
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    cr_assert_not_null(j, "%s: %s", s, je.text);
    cr_assert_float_eq(json_real_value(json_object_get(j, "d")), 0.1, 0);
    json_decref(j);
    free(s);

    /* A call the recogniser has no row for reports its raw arguments; text
     * that is not JSON becomes a string, its stray bytes U+FFFD. */
    rec r = run("aten::no_such_op_for_params", "not json \xfe", "", "", 0);
    cr_assert_str_eq(r.params, "{\"input_dims\":\"not json \xef\xbf\xbd\",\"input_types\":null,\"concrete_inputs\":null}");
    done(&r);
    rec x = run("aten::cross_entropy_loss", "[[8,16],[8],[],[],[],[]]",
                "[\"float\",\"long int\",\"\",\"Scalar\",\"Scalar\",\"Scalar\"]",
                "[\"\",\"\",\"\",\"1\",\"-100\",\"0.1\"]", 0);
    cr_assert_not_null(strstr(x.params, "\"label_smoothing\":0.1,"), "%s", x.params);
    done(&x);
}

/* ---- GPU work no recognised op owns ---- */

Test(trace_recognize, kernel_categories)
{
    static const struct { const char *name; int cls; opm_trace_category cat; } k[] = {
        {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", OPM_EV_KERNEL, OPM_TCAT_COMM},
        {"void rcclGenericKernel<1, false>(ncclDevComm*)", OPM_EV_KERNEL, OPM_TCAT_COMM},
        {"cross_device_reduce_1stage<__hip_bfloat16, 8>", OPM_EV_KERNEL, OPM_TCAT_COMM},
        {"Memcpy DtoD (Device -> Device)", OPM_EV_MEMCPY, OPM_TCAT_MEMCPY},
        {"Memset (Device)", OPM_EV_MEMSET, OPM_TCAT_MEMCPY},
        {"Memcpy HtoD (Pinned -> Device)", OPM_EV_KERNEL, OPM_TCAT_MEMCPY},
        {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
         "false, cutlass::bfloat16_t>>",
         OPM_EV_KERNEL, OPM_TCAT_ATTENTION},
        {"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16>", OPM_EV_KERNEL, OPM_TCAT_ATTENTION},
        {"fmha_fwd_hd128_bf16_causal", OPM_EV_KERNEL, OPM_TCAT_ATTENTION},
        {"void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>",
         OPM_EV_KERNEL, OPM_TCAT_CONV},
        {"sm80_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nchw", OPM_EV_KERNEL, OPM_TCAT_CONV},
        {"naive_conv_fwd_nchw_half", OPM_EV_KERNEL, OPM_TCAT_CONV},
        {"igemm_fwd_gtcx_nhwc_bf16_bx0_ex1", OPM_EV_KERNEL, OPM_TCAT_CONV},
        {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>", OPM_EV_KERNEL,
         OPM_TCAT_GEMM},
        {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_"
         "kernel__5x_cublas",
         OPM_EV_KERNEL, OPM_TCAT_GEMM},
        {"Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1", OPM_EV_KERNEL, OPM_TCAT_GEMM},
        {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>",
         OPM_EV_KERNEL, OPM_TCAT_NORM},
        {"void at::native::batch_norm_collect_statistics_kernel<float, float, float, 512>", OPM_EV_KERNEL,
         OPM_TCAT_NORM},
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>",
         OPM_EV_KERNEL, OPM_TCAT_REDUCE},
        {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>", OPM_EV_KERNEL, OPM_TCAT_REDUCE},
        {"triton_red_fused_add_mean_mul_pow_rsqrt_0", OPM_EV_KERNEL, OPM_TCAT_REDUCE},
        {"triton_poi_fused__unsafe_view_mul_silu_2", OPM_EV_KERNEL, OPM_TCAT_ELEMENTWISE},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>",
         OPM_EV_KERNEL, OPM_TCAT_ELEMENTWISE},
        {"void at::native::normal_kernel<float>", OPM_EV_KERNEL, OPM_TCAT_OTHER},
        {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long>", OPM_EV_KERNEL,
         OPM_TCAT_OTHER},
        {"void convert_fp8_kernel<__nv_bfloat16>", OPM_EV_KERNEL, OPM_TCAT_OTHER},
        {"", OPM_EV_KERNEL, OPM_TCAT_OTHER},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        cr_assert_eq(opm_trace_kernel_category(k[i].name, k[i].cls), k[i].cat, "%s: %s", k[i].name,
                     opm_trace_category_name(opm_trace_kernel_category(k[i].name, k[i].cls)));
    cr_assert_eq(opm_trace_kernel_category(NULL, OPM_EV_KERNEL), OPM_TCAT_OTHER);
}

/* ---- entries used directly ---- */

static int own_build(const opm_trace_call *call, opm_trace_recog *out, opm_error *err)
{
    (void)call;
    out->op = opm_op_gemm(4, 4, 4, OPM_FP32, err);
    return out->op ? 0 : (int)err->code;
}

Test(trace_recognize, entries_used_directly)
{
    /* a row's build function is callable as documented and agrees with recognize */
    const opm_trace_op_entry *e = opm_trace_op_lookup("aten::mm");
    opm_trace_call call = {"aten::mm", "[[8,16],[16,4]]", "[\"float\",\"float\"]", "", "[\"\",\"\"]", 0};
    opm_trace_recog out;
    opm_error err;
    cr_assert_eq(e->build(&call, &out, &err), 0);
    cr_assert_not_null(out.op);
    cr_assert_str_eq(out.params_json, "{\"m\":8,\"n\":4,\"k\":16,\"batch\":1,\"bias\":false,\"dtype\":\"fp32\"}");
    opm_op_free(out.op);
    free(out.params_json);
    /* an entry of the caller's own: its builder runs, raw params are added */
    opm_trace_op_entry own = {"my::op", OPM_TCAT_GEMM, OPM_CLAIM_OUTER, own_build};
    call.name = "my::op";
    cr_assert_eq(opm_trace_recognize(&own, &call, &out, &err), 0);
    cr_assert_not_null(out.op);
    json_t *j = parse(out.params_json);
    cr_assert(json_is_array(json_object_get(j, "input_dims")));
    json_decref(j);
    opm_op_free(out.op);
    free(out.params_json);
    /* a category-only row: raw arguments */
    e = opm_trace_op_lookup("aten::fill_");
    cr_assert_null(e->build);
    call.name = "aten::fill_";
    cr_assert_eq(opm_trace_recognize(e, &call, &out, &err), 0);
    cr_assert_null(out.op);
    cr_assert_not_null(out.params_json);
    free(out.params_json);
}
