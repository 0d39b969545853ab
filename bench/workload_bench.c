/* workload_bench.c — speed of whole workloads (bench/README.md): a
 * 10,000-op workload of distinct ops (no repeat to share a prediction)
 * built through opm_workload_add_op and evaluated on a100_40gb_pcie, the
 * same workload read from JSONL text, and validate-artifact's computation
 * on data/energaizer (or the folder given as the first argument).
 * Best-of-runs wall times; prints figures, never fails on a slow one. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "io/io_internal.h"
#include "opmodel/opmodel.h"
#include "workload/artifact.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define N_OPS 10000
#define RUNS 7

/* Op i of the mix: a third gemms, a third elementwise adds, a third
 * layernorms, each of a different size. */
static int op_text(int i, char *buf, size_t cap)
{
    int m = 128 + i;
    switch (i % 3) {
    case 0: return snprintf(buf, cap, "{\"kind\":\"gemm\",\"m\":%d,\"n\":2304,\"k\":768,\"dtype\":\"bf16\"}", m);
    case 1: return snprintf(buf, cap, "{\"kind\":\"elementwise\",\"inputs\":[[%d,768],[%d,768]],\"op\":\"add\",\"dtype\":\"bf16\"}", m, m);
    default: return snprintf(buf, cap, "{\"kind\":\"layernorm\",\"shape\":[%d,768],\"dtype\":\"bf16\"}", m);
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "data/energaizer";
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("a100_40gb_pcie", &err);
    if (!hw) return fprintf(stderr, "%s\n", err.message), 1;
    strbuf text = {0};
    opm_workload *w = opm_workload_new(&err);
    for (int i = 0; i < N_OPS; i++) {
        char buf[256];
        int n = op_text(i, buf, sizeof buf);
        sb_putn(&text, buf, (size_t)n);
        sb_putc(&text, '\n');
        opm_op *op = opm_op_parse_string(buf, (size_t)n, OPM_FORMAT_JSON, "bench", 1, &err);
        if (!op || opm_workload_add_op(w, op, NULL, 1, &err)) return fprintf(stderr, "%s\n", err.message), 1;
        opm_op_free(op);
    }
    opm_workload_options o;
    opm_workload_options_init(&o);
    double best_eval = 1e9, best_load = 1e9, best_art = 1e9, sink = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        opm_workload_result *res = opm_workload_evaluate(w, hw, &o, &err);
        double t1 = now();
        if (!res) return fprintf(stderr, "%s\n", err.message), 1;
        sink += opm_workload_result_totals(res)->latency_s;
        opm_workload_result_free(res);
        if (t1 - t0 < best_eval) best_eval = t1 - t0;

        t0 = now();
        opm_workload *w2 = opm_workload_new(&err);
        if (!w2 || opm_workload_add_text(w2, text.p, text.n, "bench.jsonl", &err))
            return fprintf(stderr, "%s\n", err.message), 1;
        res = opm_workload_evaluate(w2, hw, &o, &err);
        t1 = now();
        if (!res) return fprintf(stderr, "%s\n", err.message), 1;
        sink += opm_workload_result_totals(res)->energy_j;
        opm_workload_result_free(res);
        opm_workload_free(w2);
        if (t1 - t0 < best_load) best_load = t1 - t0;

        art_result a;
        t0 = now();
        int rc = art_run_all(&a, dir, NULL, 0, &err);
        t1 = now();
        if (!rc) sink += a.overall.time.mape;
        art_free(&a);
        if (rc) {
            fprintf(stderr, "validate-artifact: %s\n", err.message);
            best_art = -1;
        } else if (t1 - t0 < best_art) {
            best_art = t1 - t0;
        }
    }
    printf("workload: %d distinct ops, evaluate            %8.3f ms (target < 20 ms)\n", N_OPS, best_eval * 1e3);
    printf("workload: %d ops, JSONL text read + evaluate  %8.3f ms\n", N_OPS, best_load * 1e3);
    if (best_art >= 0) printf("validate-artifact on %s: %8.3f ms (target < 2000 ms)\n", dir, best_art * 1e3);
    printf("(best of %d runs; sink %g)\n", RUNS, sink);
    free(text.p);
    opm_workload_free(w);
    opm_hardware_free(hw);
    return 0;
}
