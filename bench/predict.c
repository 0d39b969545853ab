/* bench/predict.c — in-process speed of the roofline model, of op counting
 * and of parse + predict, on one core.  A benchmark, not a test: it prints
 * figures (a table, or one JSON object with --json) and always exits 0 unless
 * it cannot set itself up.
 *
 *   (a) roofline predictions/s for a bf16 4096×4096×4096 GEMM on h100_sxm:
 *       op and hardware built once, one profile reused, latency accumulated;
 *   (b) the same for attention_prefill, elementwise and batched_gemm;
 *   (c) opm_op_count() alone, ns per call, for every kind: the median of
 *       --runs runs of --count-calls calls each;
 *   (d) one JSON short-form gemm line through opm_op_parse_string + predict
 *       (+ opm_op_free) per second — and, to show where a `--batch` line's
 *       time goes, parse alone, opm_profile_to_json alone, and all three;
 *   (e) the tile-aware GEMM models (extended_roofline, effective_roofline):
 *       predictions/s for 4096³ GEMMs on h100_sxm (bf16) and t4 (fp32),
 *       with kernel hints and with automatic selection, and for the
 *       grouped_gemm and conv ops of (c) on h100_sxm (--gemm-iterations).
 *
 * Timing uses clock_gettime(CLOCK_MONOTONIC); the process pins itself to the
 * CPU it starts on (--no-pin to skip). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "opmodel/opmodel.h"

#define TARGET_PREDICTIONS_PER_S 10e6
#define TARGET_COUNT_NS 100.0
#define TARGET_EXTENDED_HINTED_PER_S 1e6
#define TARGET_EFFECTIVE_PER_S 2e6

static const char usage[] =
    "usage: bench_predict [--iterations N] [--count-calls N] [--runs R]\n"
    "                     [--parse-iterations N] [--gemm-iterations N] [--json] [--no-pin]\n"
    "\n"
    "  --iterations N        predict calls per timed loop in (a) and (b) (default 10000000)\n"
    "  --count-calls N       opm_op_count calls per run in (c) (default 1000000)\n"
    "  --runs R              runs per kind in (c); the median is reported (default 7)\n"
    "  --parse-iterations N  calls per stage in (d) (default 100000)\n"
    "  --gemm-iterations N   predict calls per case in (e) (default 1000000)\n"
    "  --json                print one JSON object instead of a table\n"
    "  --no-pin              do not pin the process to its current CPU\n";

/* Sinks: results are accumulated into these so no loop can be dropped. */
static volatile double sink_d;
static volatile uint64_t sink_u;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const opm_error *err)
{
    fprintf(stderr, "bench_predict: %s: %s\n", what, err ? err->message : "failed");
    exit(2);
}

static long long parse_count(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < 1) {
        fprintf(stderr, "bench_predict: %s: expected a positive integer, got '%s'\n", opt, s);
        exit(2);
    }
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- the ops ---- */

typedef struct bench_op {
    const char *label;
    const char *json;     /* JSON short form, or NULL when built with a builder */
    opm_op *op;
} bench_op;

/* One op per kind.  The first four come from the builders (and are the ones
 * (a) and (b) time); the rest are parsed from their JSON short forms. */
enum { OP_GEMM, OP_ATTN_PREFILL, OP_ELEMENTWISE, OP_BATCHED_GEMM, N_PREDICT_OPS };

static bench_op ops[] = {
    {"gemm", NULL, NULL},
    {"attention_prefill", NULL, NULL},
    {"elementwise", NULL, NULL},
    {"batched_gemm", NULL, NULL},
    {"attention_decode",
     "{\"name\": \"decode_attn\", \"kind\": \"attention_decode\", \"phase\": \"decode\", \"batch\": 16,"
     " \"seq_kv\": 8192, \"heads\": 64, \"kv_heads\": 8, \"head_dim\": 128, \"dtype\": \"bf16\","
     " \"kv_dtype\": \"fp8_e4m3\"}",
     NULL},
    {"softmax", "{\"name\": \"sm\", \"kind\": \"softmax\", \"shape\": [16, 32000], \"dtype\": \"fp32\", \"dim\": -1}",
     NULL},
    {"layernorm",
     "{\"name\": \"ln\", \"kind\": \"layernorm\", \"phase\": \"train_fwd\", \"shape\": [8, 2048, 4096],"
     " \"dtype\": \"bf16\"}",
     NULL},
    {"rmsnorm", "{\"name\": \"norm\", \"kind\": \"rmsnorm\", \"shape\": [2048, 8192], \"dtype\": \"bf16\"}", NULL},
    {"reduction",
     "{\"name\": \"row_sum\", \"kind\": \"reduction\", \"shape\": [1024, 4096], \"dim\": [1],"
     " \"keepdim\": true, \"dtype\": \"fp32\", \"op\": \"sum\"}",
     NULL},
    {"embedding",
     "{\"name\": \"tok_embed\", \"kind\": \"embedding\", \"tokens\": 8192, \"vocab\": 128256, \"dim\": 4096,"
     " \"dtype\": \"bf16\"}",
     NULL},
    {"copy", "{\"name\": \"cast\", \"kind\": \"copy\", \"shape\": [8192, 8192], \"dtype\": \"fp32\", \"out_dtype\": \"bf16\"}",
     NULL},
    /* The op-library kinds, as `opmodel expand --format json examples/<file>` prints them. */
    {"grouped_gemm", "{\"name\": \"moe_w1\", \"kind\": \"grouped_gemm\", \"phase\": \"prefill\", \"tensors\": [{\"role\": \"input\", \"shape\": [4096, 4096], \"dtype\": \"bf16\"}, {\"role\": \"weight\", \"shape\": [8, 4096, 14336], \"dtype\": \"bf16\"}, {\"role\": \"output\", \"shape\": [4096, 14336], \"dtype\": \"bf16\"}]}", NULL},
    {"gemm_fp8_block", "{\"name\": \"fp8_block_linear\", \"kind\": \"gemm\", \"phase\": \"prefill\", \"tensors\": [{\"role\": \"input\", \"shape\": [4096, 2048], \"dtype\": \"fp8_e4m3\"}, {\"role\": \"weight\", \"shape\": [7168, 2048], \"dtype\": \"fp8_e4m3\"}, {\"role\": \"output\", \"shape\": [4096, 7168], \"dtype\": \"bf16\"}], \"attrs\": {\"transpose_b\": true, \"scale_a\": \"block\", \"scale_b\": \"block\", \"scale_block_a\": [1, 128], \"scale_block_b\": [128, 128]}}", NULL},
    {"gemm_w4a16", "{\"name\": \"w4a16_down_proj\", \"kind\": \"gemm\", \"phase\": \"decode\", \"tensors\": [{\"role\": \"input\", \"shape\": [16, 14336], \"dtype\": \"bf16\"}, {\"role\": \"weight\", \"shape\": [14336, 4096], \"dtype\": \"int4\"}, {\"role\": \"output\", \"shape\": [16, 4096], \"dtype\": \"bf16\"}], \"attrs\": {\"weight_group_size\": 128, \"weight_zero_point\": true}}", NULL},
    {"conv", "{\"name\": \"layer2_0_conv1\", \"kind\": \"conv\", \"phase\": \"train_fwd\", \"tensors\": [{\"role\": \"input\", \"shape\": [10, 128, 28, 28], \"dtype\": \"bf16\"}, {\"role\": \"weight\", \"shape\": [256, 128, 3, 3], \"dtype\": \"bf16\"}, {\"role\": \"output\", \"shape\": [10, 256, 14, 14], \"dtype\": \"bf16\"}], \"attrs\": {\"stride\": 2, \"padding\": 1}}", NULL},
    {"conv_transposed", "{\"name\": \"decoder_up\", \"kind\": \"conv\", \"phase\": \"inference\", \"tensors\": [{\"role\": \"input\", \"shape\": [8, 64, 16, 16], \"dtype\": \"fp16\"}, {\"role\": \"weight\", \"shape\": [64, 32, 3, 3], \"dtype\": \"fp16\"}, {\"role\": \"weight\", \"shape\": [128], \"dtype\": \"fp16\"}, {\"role\": \"output\", \"shape\": [8, 128, 32, 32], \"dtype\": \"fp16\"}], \"attrs\": {\"transposed\": true, \"groups\": 4, \"stride\": 2, \"padding\": 1, \"output_padding\": 1}}", NULL},
    {"attention_paged", "{\"name\": \"paged_decode\", \"kind\": \"attention_decode\", \"phase\": \"decode\", \"tensors\": [{\"role\": \"input\", \"shape\": [4, 64, 128], \"dtype\": \"bf16\", \"layout\": \"q\"}, {\"role\": \"input\", \"shape\": [13364, 8, 128], \"dtype\": \"fp8_e4m3\", \"layout\": \"k\"}, {\"role\": \"input\", \"shape\": [13364, 8, 128], \"dtype\": \"fp8_e4m3\", \"layout\": \"v\"}, {\"role\": \"output\", \"shape\": [4, 64, 128], \"dtype\": \"bf16\"}], \"attrs\": {\"seq_lens_kv\": [8191, 1000, 77, 4096], \"page_size\": 16, \"kv_scale\": \"tensor\"}}", NULL},
    {"attention_varlen", "{\"name\": \"varlen_prefill\", \"kind\": \"attention\", \"phase\": \"prefill\", \"tensors\": [{\"role\": \"input\", \"shape\": [1536, 16, 64], \"dtype\": \"fp16\", \"layout\": \"q\"}, {\"role\": \"input\", \"shape\": [1536, 16, 64], \"dtype\": \"fp16\", \"layout\": \"k\"}, {\"role\": \"input\", \"shape\": [1536, 16, 64], \"dtype\": \"fp16\", \"layout\": \"v\"}, {\"role\": \"output\", \"shape\": [1536, 16, 64], \"dtype\": \"fp16\"}], \"attrs\": {\"causal\": true, \"seq_lens\": [1024, 384, 128]}}", NULL},
    {"batchnorm", "{\"name\": \"resnet_bn2\", \"kind\": \"batchnorm\", \"phase\": \"train_fwd\", \"tensors\": [{\"role\": \"input\", \"shape\": [32, 256, 56, 56], \"dtype\": \"bf16\"}, {\"role\": \"output\", \"shape\": [32, 256, 56, 56], \"dtype\": \"bf16\"}]}", NULL},
    {"groupnorm", "{\"name\": \"unet_gn\", \"kind\": \"groupnorm\", \"phase\": \"inference\", \"tensors\": [{\"role\": \"input\", \"shape\": [2, 320, 64, 64], \"dtype\": \"fp16\"}, {\"role\": \"output\", \"shape\": [2, 320, 64, 64], \"dtype\": \"fp16\"}], \"attrs\": {\"num_groups\": 32}}", NULL},
    {"instancenorm", "{\"name\": \"style_in_bwd\", \"kind\": \"instancenorm\", \"phase\": \"train_bwd\", \"tensors\": [{\"role\": \"input\", \"shape\": [4, 128, 128, 128], \"dtype\": \"fp32\"}, {\"role\": \"output\", \"shape\": [4, 128, 128, 128], \"dtype\": \"fp32\"}], \"attrs\": {\"affine\": true}}", NULL},
    {"cross_entropy", "{\"name\": \"lm_loss\", \"kind\": \"cross_entropy\", \"phase\": \"inference\", \"tensors\": [{\"role\": \"input\", \"shape\": [8192, 151936], \"dtype\": \"bf16\"}, {\"role\": \"input\", \"shape\": [8192], \"dtype\": \"int64\"}, {\"role\": \"output\", \"shape\": [], \"dtype\": \"fp32\"}], \"attrs\": {\"reduction\": \"mean\"}}", NULL},
    {"rope", "{\"name\": \"rope_prefill\", \"kind\": \"rope\", \"phase\": \"prefill\", \"tensors\": [{\"role\": \"input\", \"shape\": [1, 4096, 32, 128], \"dtype\": \"bf16\", \"layout\": \"q\"}, {\"role\": \"input\", \"shape\": [1, 4096, 8, 128], \"dtype\": \"bf16\", \"layout\": \"k\"}, {\"role\": \"weight\", \"shape\": [4096, 128], \"dtype\": \"bf16\", \"layout\": \"cos_sin\"}, {\"role\": \"output\", \"shape\": [1, 4096, 32, 128], \"dtype\": \"bf16\", \"layout\": \"q\"}, {\"role\": \"output\", \"shape\": [1, 4096, 8, 128], \"dtype\": \"bf16\", \"layout\": \"k\"}]}", NULL},
    {"causal_conv1d", "{\"name\": \"mamba_conv1d\", \"kind\": \"causal_conv1d\", \"phase\": \"prefill\", \"tensors\": [{\"role\": \"input\", \"shape\": [2, 5376, 4096], \"dtype\": \"bf16\"}, {\"role\": \"weight\", \"shape\": [5376, 4], \"dtype\": \"bf16\"}, {\"role\": \"weight\", \"shape\": [5376], \"dtype\": \"bf16\", \"layout\": \"bias\"}, {\"role\": \"output\", \"shape\": [2, 5376, 4096], \"dtype\": \"bf16\"}], \"attrs\": {\"activation\": \"silu\"}}", NULL},
    {"mamba_ssd", "{\"name\": \"mamba2_ssd\", \"kind\": \"mamba_ssd\", \"phase\": \"prefill\", \"tensors\": [{\"role\": \"input\", \"shape\": [1, 4096, 80, 64], \"dtype\": \"bf16\", \"layout\": \"x\"}, {\"role\": \"input\", \"shape\": [1, 4096, 80], \"dtype\": \"bf16\", \"layout\": \"dt\"}, {\"role\": \"input\", \"shape\": [1, 4096, 1, 128], \"dtype\": \"bf16\", \"layout\": \"B\"}, {\"role\": \"input\", \"shape\": [1, 4096, 1, 128], \"dtype\": \"bf16\", \"layout\": \"C\"}, {\"role\": \"weight\", \"shape\": [80], \"dtype\": \"fp32\", \"layout\": \"A\"}, {\"role\": \"weight\", \"shape\": [80], \"dtype\": \"fp32\", \"layout\": \"D\"}, {\"role\": \"weight\", \"shape\": [80], \"dtype\": \"fp32\", \"layout\": \"dt_bias\"}, {\"role\": \"output\", \"shape\": [1, 4096, 80, 64], \"dtype\": \"bf16\", \"layout\": \"y\"}, {\"role\": \"output\", \"shape\": [1, 80, 64, 128], \"dtype\": \"fp32\", \"layout\": \"final_states\"}], \"attrs\": {\"chunk_size\": 256, \"dt_softplus\": true}}", NULL},
    {"moe_dispatch", "{\"name\": \"moe_permute\", \"kind\": \"moe_dispatch\", \"phase\": \"inference\", \"tensors\": [{\"role\": \"input\", \"shape\": [4096, 7168], \"dtype\": \"bf16\", \"layout\": \"x\"}, {\"role\": \"input\", \"shape\": [4096, 8], \"dtype\": \"int32\", \"layout\": \"topk_ids\"}, {\"role\": \"output\", \"shape\": [32768, 7168], \"dtype\": \"bf16\", \"layout\": \"rows\"}, {\"role\": \"output\", \"shape\": [32768], \"dtype\": \"int32\", \"layout\": \"row_map\"}, {\"role\": \"output\", \"shape\": [256], \"dtype\": \"int32\", \"layout\": \"expert_counts\"}]}", NULL},
    {"moe_combine", "{\"name\": \"moe_unpermute\", \"kind\": \"moe_combine\", \"phase\": \"inference\", \"tensors\": [{\"role\": \"input\", \"shape\": [32768, 7168], \"dtype\": \"bf16\", \"layout\": \"rows\"}, {\"role\": \"input\", \"shape\": [4096, 8], \"dtype\": \"fp32\", \"layout\": \"topk_weights\"}, {\"role\": \"input\", \"shape\": [4096, 8], \"dtype\": \"int32\", \"layout\": \"row_map\"}, {\"role\": \"output\", \"shape\": [4096, 7168], \"dtype\": \"bf16\", \"layout\": \"y\"}]}", NULL},
    {"fused_moe", "{\"name\": \"mixtral_moe\", \"kind\": \"fused_moe\", \"phase\": \"decode\", \"tensors\": [{\"role\": \"input\", \"shape\": [16, 4096], \"dtype\": \"bf16\", \"layout\": \"x\"}, {\"role\": \"input\", \"shape\": [16, 2], \"dtype\": \"fp32\", \"layout\": \"topk_weights\"}, {\"role\": \"input\", \"shape\": [16, 2], \"dtype\": \"int32\", \"layout\": \"topk_ids\"}, {\"role\": \"weight\", \"shape\": [8, 28672, 4096], \"dtype\": \"bf16\", \"layout\": \"w1\"}, {\"role\": \"weight\", \"shape\": [8, 4096, 14336], \"dtype\": \"bf16\", \"layout\": \"w2\"}, {\"role\": \"output\", \"shape\": [16, 4096], \"dtype\": \"bf16\", \"layout\": \"y\"}]}", NULL},
};
#define N_OPS (sizeof ops / sizeof ops[0])

/* (d): one short line like those of examples/ops.jsonl. */
static const char parse_line[] =
    "{\"name\": \"q_proj\", \"kind\": \"gemm\", \"m\": 128, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\"}";

static void build_ops(void)
{
    opm_error err;
    opm_error_clear(&err);
    static const int64_t ew_shape[2] = {4096, 8192};
    ops[OP_GEMM].op = opm_op_gemm(4096, 4096, 4096, OPM_BF16, &err);
    if (!ops[OP_GEMM].op) die("opm_op_gemm", &err);
    ops[OP_ATTN_PREFILL].op = opm_op_attention(1, 2048, 2048, 64, 8, 128, 1, OPM_BF16, &err);
    if (!ops[OP_ATTN_PREFILL].op) die("opm_op_attention", &err);
    ops[OP_ELEMENTWISE].op = opm_op_elementwise(ew_shape, 2, 2, 1, OPM_BF16, &err);
    if (!ops[OP_ELEMENTWISE].op) die("opm_op_elementwise", &err);
    ops[OP_BATCHED_GEMM].op = opm_op_batched_gemm(64, 1024, 1024, 128, OPM_FP16, &err);
    if (!ops[OP_BATCHED_GEMM].op) die("opm_op_batched_gemm", &err);
    for (size_t i = N_PREDICT_OPS; i < N_OPS; i++) {
        ops[i].op = opm_op_parse_string(ops[i].json, strlen(ops[i].json), OPM_FORMAT_JSON, "bench", 1, &err);
        if (!ops[i].op) die(ops[i].label, &err);
    }
}

/* ---- the timed loops ---- */

typedef struct rate {
    long long calls;
    double seconds;
} rate;

static double per_s(rate r) { return r.seconds > 0 ? (double)r.calls / r.seconds : 0; }
static double ns_per(rate r) { return r.calls > 0 ? r.seconds * 1e9 / (double)r.calls : 0; }

static rate time_predict(const opm_model *model, const opm_op *op, const opm_hardware *hw, long long n)
{
    opm_profile p;
    opm_error err;
    opm_error_clear(&err);
    double acc = 0;
    long long warm = n / 20 + 1;
    for (long long i = 0; i < warm; i++) {
        if (model->predict(op, hw, &p, &err)) die("predict", &err);
        acc += p.latency_s;
    }
    double t0 = now_s();
    for (long long i = 0; i < n; i++) {
        if (model->predict(op, hw, &p, &err)) die("predict", &err);
        acc += p.latency_s;
    }
    double t1 = now_s();
    sink_d = acc;
    return (rate){n, t1 - t0};
}

/* Median ns per opm_op_count call over `runs` runs of `n` calls. */
static double time_count(const opm_op *op, long long n, int runs, double *min_ns)
{
    double *ns = malloc((size_t)runs * sizeof *ns);
    if (!ns) die("out of memory", NULL);
    opm_counts c;
    opm_error err;
    opm_error_clear(&err);
    uint64_t acc = 0;
    for (long long i = 0; i < n / 10 + 1; i++) {
        if (opm_op_count(op, &c, &err)) die("opm_op_count", &err);
        acc += c.read_bytes;
    }
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        for (long long i = 0; i < n; i++) {
            if (opm_op_count(op, &c, &err)) die("opm_op_count", &err);
            acc += c.read_bytes + c.matrix_flops;
        }
        ns[r] = (now_s() - t0) * 1e9 / (double)n;
    }
    sink_u = acc;
    qsort(ns, (size_t)runs, sizeof *ns, cmp_double);
    double med = runs % 2 ? ns[runs / 2] : (ns[runs / 2 - 1] + ns[runs / 2]) / 2;
    *min_ns = ns[0];
    free(ns);
    return med;
}

/* (d) stages of one --batch line, without the I/O.  Each does what its
 * name says, then frees what it made. */
enum { ST_PARSE_PREDICT, ST_PARSE, ST_EMIT, ST_LINE, N_STAGES };
static const char *const stage_label[N_STAGES] = {"parse+predict", "parse", "to_json", "parse+predict+to_json"};
static const char *const stage_key[N_STAGES] = {"parse_predict", "parse", "to_json", "line"};

static double run_stage(int stage, const opm_model *model, const opm_hardware *hw, const opm_profile *fixed,
                        long long iters)
{
    opm_profile p;
    opm_error err;
    opm_error_clear(&err);
    double acc = 0;
    size_t len = strlen(parse_line);
    for (long long i = 0; i < iters; i++) {
        const opm_profile *emit = fixed;
        if (stage != ST_EMIT) {
            opm_op *op = opm_op_parse_string(parse_line, len, OPM_FORMAT_JSON, "bench", 1, &err);
            if (!op) die("opm_op_parse_string", &err);
            if (stage != ST_PARSE) {
                if (model->predict(op, hw, &p, &err)) die("predict", &err);
                acc += p.latency_s;
                emit = &p;
            } else {
                acc += (double)opm_op_tensor_count(op);
            }
            if (stage == ST_LINE) {
                char *json = opm_profile_to_json(emit, &err);
                if (!json) die("opm_profile_to_json", &err);
                acc += (double)(unsigned char)json[1];
                free(json);
            }
            opm_op_free(op);
        } else {
            char *json = opm_profile_to_json(emit, &err);
            if (!json) die("opm_profile_to_json", &err);
            acc += (double)(unsigned char)json[1];
            free(json);
        }
    }
    return acc;
}

static rate time_stage(int stage, const opm_model *model, const opm_hardware *hw, long long n)
{
    /* The profile that to_json alone emits: the parsed line's own prediction. */
    opm_error err;
    opm_error_clear(&err);
    opm_op *op = opm_op_parse_string(parse_line, strlen(parse_line), OPM_FORMAT_JSON, "bench", 1, &err);
    if (!op) die("opm_op_parse_string", &err);
    opm_profile fixed;
    if (model->predict(op, hw, &fixed, &err)) die("predict", &err);
    double acc = run_stage(stage, model, hw, &fixed, n / 20 + 1);
    double t0 = now_s();
    acc += run_stage(stage, model, hw, &fixed, n);
    double t1 = now_s();
    sink_d = acc;
    opm_op_free(op);
    return (rate){n, t1 - t0};
}

/* ---- (e) the GEMM models ---- */

typedef struct gemm_case {
    const char *model, *hardware, *label;
    int hinted;           /* a plain GEMM with hints: what the extended target is about */
    const opm_op *op;
    rate r;
} gemm_case;

enum { GC_H100_HINTS, GC_H100_AUTO, GC_T4_HINTS, GC_T4_AUTO, GC_CONV, GC_GROUPED, N_GEMM_OPS };
static const char *const gemm_case_label[N_GEMM_OPS] = {
    "bf16 4096^3 hints", "bf16 4096^3 auto", "fp32 4096^3 hints", "fp32 4096^3 auto", "conv (c)", "grouped_gemm (c)"};
static const char *const gemm_case_hw[N_GEMM_OPS] = {"h100_sxm", "h100_sxm", "t4", "t4", "h100_sxm", "h100_sxm"};

/* A 4096³ GEMM with cta_tile_m/n/k, warps_per_cta, pipeline_stages, split_k. */
static opm_op *hinted_gemm(opm_dtype dt, const int64_t v[6])
{
    static const char *const keys[6] = {"cta_tile_m", "cta_tile_n", "cta_tile_k", "warps_per_cta", "pipeline_stages",
                                        "split_k"};
    opm_error err;
    opm_error_clear(&err);
    opm_op *op = opm_op_gemm(4096, 4096, 4096, dt, &err);
    if (!op) die("opm_op_gemm", &err);
    for (int i = 0; i < 6; i++)
        if (opm_op_set_int(op, keys[i], v[i], &err)) die("opm_op_set_int", &err);
    return op;
}

static const opm_op *op_labelled(const char *label)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (!strcmp(ops[i].label, label)) return ops[i].op;
    die(label, NULL);
    return NULL;
}

/* Times every (model, case) pair into cases[2 · N_GEMM_OPS]; the GEMM ops
 * it builds go to built[], for the caller to free. */
static void time_gemm_models(long long n, gemm_case *cases, opm_op *built[4])
{
    static const int64_t h100_hints[6] = {128, 256, 64, 8, 4, 1}, t4_hints[6] = {128, 128, 8, 8, 2, 1};
    opm_error err;
    opm_error_clear(&err);
    built[0] = hinted_gemm(OPM_BF16, h100_hints);
    built[1] = opm_op_gemm(4096, 4096, 4096, OPM_BF16, &err);
    built[2] = hinted_gemm(OPM_FP32, t4_hints);
    built[3] = opm_op_gemm(4096, 4096, 4096, OPM_FP32, &err);
    if (!built[1] || !built[3]) die("opm_op_gemm", &err);
    const opm_op *case_op[N_GEMM_OPS] = {built[0], built[1], built[2], built[3], op_labelled("conv"),
                                         op_labelled("grouped_gemm")};
    opm_hardware *h100 = opm_hardware_builtin("h100_sxm", &err), *t4 = h100 ? opm_hardware_builtin("t4", &err) : NULL;
    if (!t4) die("opm_hardware_builtin", &err);
    static const char *const models[2] = {"extended_roofline", "effective_roofline"};
    for (int m = 0; m < 2; m++) {
        const opm_model *model = opm_model_find(models[m]);
        if (!model) die(models[m], NULL);
        for (int c = 0; c < N_GEMM_OPS; c++) {
            gemm_case *gc = &cases[m * N_GEMM_OPS + c];
            gc->model = models[m];
            gc->hardware = gemm_case_hw[c];
            gc->label = gemm_case_label[c];
            gc->hinted = c == GC_H100_HINTS || c == GC_T4_HINTS;
            gc->op = case_op[c];
            gc->r = time_predict(model, gc->op, strcmp(gc->hardware, "t4") ? h100 : t4, n);
        }
    }
    opm_hardware_free(h100);
    opm_hardware_free(t4);
}

static long max_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

int main(int argc, char **argv)
{
    long long iterations = 10000000, count_calls = 1000000, parse_iters = 100000, gemm_iters = 1000000;
    int runs = 7, json = 0, pin = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--no-pin")) pin = 0;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (i + 1 < argc && !strcmp(a, "--iterations")) iterations = parse_count(a, argv[++i]);
        else if (i + 1 < argc && !strcmp(a, "--count-calls")) count_calls = parse_count(a, argv[++i]);
        else if (i + 1 < argc && !strcmp(a, "--parse-iterations")) parse_iters = parse_count(a, argv[++i]);
        else if (i + 1 < argc && !strcmp(a, "--gemm-iterations")) gemm_iters = parse_count(a, argv[++i]);
        else if (i + 1 < argc && !strcmp(a, "--runs")) {
            long long r = parse_count(a, argv[++i]);
            runs = r > 1000 ? 1000 : (int)r;
        } else {
            fprintf(stderr, "bench_predict: unknown or incomplete option '%s'\n%s", a, usage);
            return 2;
        }
    }

    int cpu = -1;
    if (pin) {
        cpu = sched_getcpu();
        cpu_set_t set;
        CPU_ZERO(&set);
        if (cpu >= 0) CPU_SET(cpu, &set);
        if (cpu < 0 || sched_setaffinity(0, sizeof set, &set) != 0) cpu = -1;
    }

    opm_error err;
    opm_error_clear(&err);
    const opm_model *model = opm_model_find("roofline");
    if (!model) die("opm_model_find(roofline)", NULL);
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    if (!hw) die("opm_hardware_builtin(h100_sxm)", &err);
    build_ops();

    rate pred[N_PREDICT_OPS];
    for (size_t i = 0; i < N_PREDICT_OPS; i++) pred[i] = time_predict(model, ops[i].op, hw, iterations);
    double count_med[N_OPS], count_min[N_OPS], count_worst = 0;
    for (size_t i = 0; i < N_OPS; i++) {
        count_med[i] = time_count(ops[i].op, count_calls, runs, &count_min[i]);
        if (count_med[i] > count_worst) count_worst = count_med[i];
    }
    rate stages[N_STAGES];
    for (int i = 0; i < N_STAGES; i++) stages[i] = time_stage(i, model, hw, parse_iters);
    gemm_case gcases[2 * N_GEMM_OPS];
    opm_op *gbuilt[4];
    time_gemm_models(gemm_iters, gcases, gbuilt);
    /* extended_roofline >= 1 M/s on both hinted GEMMs; effective_roofline
     * >= 2 M/s on the hinted bf16 GEMM. */
    int ext_met = 1, eff_met = per_s(gcases[N_GEMM_OPS + GC_H100_HINTS].r) >= TARGET_EFFECTIVE_PER_S;
    for (int c = 0; c < N_GEMM_OPS; c++)
        if (gcases[c].hinted && per_s(gcases[c].r) < TARGET_EXTENDED_HINTED_PER_S) ext_met = 0;
    long rss = max_rss_kib();

    if (json) {
        printf("{\"benchmark\": \"bench_predict\", \"hardware\": \"h100_sxm\", \"model\": \"roofline\", "
               "\"cpu\": %d, \"iterations\": %lld, \"count_calls\": %lld, \"runs\": %d, \"parse_iterations\": %lld, ",
               cpu, iterations, count_calls, runs, parse_iters);
        printf("\"gemm_predictions_per_s\": %.0f, \"predict\": {", per_s(pred[OP_GEMM]));
        for (size_t i = 0; i < N_PREDICT_OPS; i++)
            printf("%s\"%s\": {\"calls\": %lld, \"seconds\": %.6f, \"per_s\": %.0f, \"ns_per_call\": %.2f}",
                   i ? ", " : "", ops[i].label, pred[i].calls, pred[i].seconds, per_s(pred[i]), ns_per(pred[i]));
        printf("}, \"count_ns_median\": {");
        for (size_t i = 0; i < N_OPS; i++) printf("%s\"%s\": %.2f", i ? ", " : "", ops[i].label, count_med[i]);
        printf("}, \"count_ns_min\": {");
        for (size_t i = 0; i < N_OPS; i++) printf("%s\"%s\": %.2f", i ? ", " : "", ops[i].label, count_min[i]);
        printf("}, ");
        for (int i = 0; i < N_STAGES; i++)
            printf("\"%s\": {\"calls\": %lld, \"seconds\": %.6f, \"per_s\": %.0f, \"ns_per_call\": %.1f}, ",
                   stage_key[i], stages[i].calls, stages[i].seconds, per_s(stages[i]), ns_per(stages[i]));
        printf("\"gemm_models\": [");
        for (int i = 0; i < 2 * N_GEMM_OPS; i++)
            printf("%s{\"model\": \"%s\", \"hardware\": \"%s\", \"op\": \"%s\", \"calls\": %lld, \"per_s\": %.0f, "
                   "\"ns_per_call\": %.1f}",
                   i ? ", " : "", gcases[i].model, gcases[i].hardware, gcases[i].label, gcases[i].r.calls,
                   per_s(gcases[i].r), ns_per(gcases[i].r));
        printf("], ");
        printf("\"max_rss_kib\": %ld, \"targets\": {\"predictions_per_s\": %.0f, \"predictions_per_s_met\": %s, "
               "\"count_ns\": %.0f, \"count_ns_met\": %s, \"extended_hinted_per_s\": %.0f, "
               "\"extended_hinted_met\": %s, \"effective_per_s\": %.0f, \"effective_met\": %s}}\n",
               rss, TARGET_PREDICTIONS_PER_S, per_s(pred[OP_GEMM]) >= TARGET_PREDICTIONS_PER_S ? "true" : "false",
               TARGET_COUNT_NS, count_worst < TARGET_COUNT_NS ? "true" : "false", TARGET_EXTENDED_HINTED_PER_S,
               ext_met ? "true" : "false", TARGET_EFFECTIVE_PER_S, eff_met ? "true" : "false");
    } else {
        if (cpu >= 0) printf("bench_predict: roofline on h100_sxm, one thread pinned to cpu %d\n", cpu);
        else printf("bench_predict: roofline on h100_sxm, one thread (not pinned)\n");
        printf("\n(a)+(b) predict, %lld calls each\n", iterations);
        printf("  %-20s %16s %12s\n", "kind", "predictions/s", "ns/call");
        for (size_t i = 0; i < N_PREDICT_OPS; i++)
            printf("  %-20s %16.0f %12.2f\n", ops[i].label, per_s(pred[i]), ns_per(pred[i]));
        printf("\n(c) opm_op_count alone, %d runs x %lld calls\n", runs, count_calls);
        printf("  %-20s %12s %12s\n", "kind", "median ns", "min ns");
        for (size_t i = 0; i < N_OPS; i++)
            printf("  %-20s %12.2f %12.2f\n", ops[i].label, count_med[i], count_min[i]);
        printf("\n(d) one JSON short-form gemm line, %lld calls per stage\n", parse_iters);
        printf("  %-22s %14s %12s\n", "stage", "calls/s", "ns/call");
        for (int i = 0; i < N_STAGES; i++)
            printf("  %-22s %14.0f %12.1f\n", stage_label[i], per_s(stages[i]), ns_per(stages[i]));
        printf("\n(e) GEMM models, %lld calls each\n", gemm_iters);
        printf("  %-20s %-10s %-18s %14s %10s\n", "model", "hardware", "op", "predictions/s", "ns/call");
        for (int i = 0; i < 2 * N_GEMM_OPS; i++)
            printf("  %-20s %-10s %-18s %14.0f %10.1f\n", gcases[i].model, gcases[i].hardware, gcases[i].label,
                   per_s(gcases[i].r), ns_per(gcases[i].r));
        printf("\nmax RSS %ld KiB\n", rss);
        printf("targets: >= %.0f predictions/s (gemm): %s; count < %.0f ns for every kind: %s\n",
               TARGET_PREDICTIONS_PER_S, per_s(pred[OP_GEMM]) >= TARGET_PREDICTIONS_PER_S ? "met" : "MISSED",
               TARGET_COUNT_NS, count_worst < TARGET_COUNT_NS ? "met" : "MISSED");
        printf("targets: extended_roofline >= %.0f/s with hints: %s; effective_roofline >= %.0f/s (bf16 hints): %s\n",
               TARGET_EXTENDED_HINTED_PER_S, ext_met ? "met" : "MISSED", TARGET_EFFECTIVE_PER_S,
               eff_met ? "met" : "MISSED");
    }

    for (int i = 0; i < 4; i++) opm_op_free(gbuilt[i]);
    for (size_t i = 0; i < N_OPS; i++) opm_op_free(ops[i].op);
    opm_hardware_free(hw);
    return 0;
}
