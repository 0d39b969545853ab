/* bench/kernel_models.c — in-process speed of the attention and
 * memory-streaming kernel models (extended_roofline, effective_roofline)
 * on one core: op and hardware built once, one profile reused.  A
 * benchmark, not a test: it prints predictions/s per case and exits 0
 * unless it cannot set itself up.  Usage: bench_kernel_models [N]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "opmodel/opmodel.h"

static const char *const cases[][2] = {
    {"prefill causal 1x4096 32/8 hd128",
     "{\"kind\": \"attention_prefill\", \"batch\": 1, \"seq_q\": 4096, \"seq_kv\": 4096, \"heads\": 32, "
     "\"kv_heads\": 8, \"head_dim\": 128, \"causal\": true, \"dtype\": \"bf16\"}"},
    {"prefill causal 1x16384 1/1 hd128 (long causal walk)",
     "{\"kind\": \"attention_prefill\", \"batch\": 1, \"seq_q\": 16384, \"seq_kv\": 16384, \"heads\": 1, "
     "\"kv_heads\": 1, \"head_dim\": 128, \"causal\": true, \"dtype\": \"bf16\"}"},
    {"prefill chunk 1x512 of 65536 keys 8/1 hd128 (split-KV)",
     "{\"kind\": \"attention_prefill\", \"batch\": 1, \"seq_q\": 512, \"seq_kv\": 65536, \"heads\": 8, "
     "\"kv_heads\": 1, \"head_dim\": 128, \"causal\": true, \"dtype\": \"bf16\"}"},
    {"decode paged 64x4096 32/8 hd128",
     "{\"kind\": \"attention_decode\", \"batch\": 64, \"seq_kv\": 4096, \"heads\": 32, \"kv_heads\": 8, "
     "\"head_dim\": 128, \"dtype\": \"bf16\", \"page_size\": 64, \"kv_cache_write\": true}"},
    {"decode 1x65536 32/8 hd128 (split-KV)",
     "{\"kind\": \"attention_decode\", \"batch\": 1, \"seq_kv\": 65536, \"heads\": 32, \"kv_heads\": 8, "
     "\"head_dim\": 128, \"dtype\": \"bf16\"}"},
    {"rmsnorm 4096x8192", "{\"kind\": \"rmsnorm\", \"shape\": [4096, 8192], \"dtype\": \"bf16\"}"},
    {"softmax 8192x4096", "{\"kind\": \"softmax\", \"shape\": [8192, 4096], \"dtype\": \"fp32\"}"},
    {"quantise 4096x8192 bf16->fp8",
     "{\"kind\": \"copy\", \"shape\": [4096, 8192], \"dtype\": \"bf16\", \"out_dtype\": \"fp8_e4m3\"}"},
    {"silu_mul 4096x28672", "{\"kind\": \"elementwise\", \"op\": \"silu_mul\", \"shape\": [4096, 28672], \"dtype\": \"bf16\"}"},
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long long n = argc > 1 ? atoll(argv[1]) : 1000000;
    if (n < 1) n = 1;
    opm_error err;
    opm_error_clear(&err);
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    if (!hw) {
        fprintf(stderr, "bench_kernel_models: %s\n", err.message);
        return 1;
    }
    static const char *const models[] = {"extended_roofline", "effective_roofline"};
    volatile double sink = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        opm_op *op = opm_op_parse_string(cases[c][1], strlen(cases[c][1]), OPM_FORMAT_JSON, "bench", 1, &err);
        if (!op) {
            fprintf(stderr, "bench_kernel_models: %s\n", err.message);
            return 1;
        }
        for (int m = 0; m < 2; m++) {
            const opm_model *model = opm_model_find(models[m]);
            opm_profile p;
            double acc = 0, t0 = now_s();
            for (long long i = 0; i < n; i++) {
                if (model->predict(op, hw, &p, &err)) {
                    fprintf(stderr, "bench_kernel_models: %s\n", err.message);
                    return 1;
                }
                acc += p.latency_s;
            }
            double dt = now_s() - t0;
            sink += acc;
            printf("%-48s %-19s %10.0f predictions/s\n", cases[c][0], models[m], n / dt);
        }
        opm_op_free(op);
    }
    opm_hardware_free(hw);
    return sink < 0;
}
