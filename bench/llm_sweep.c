/* bench/llm_sweep.c — speed of whole-model rollups (src/llm) in process, one
 * core: (a) a sweep of 1,000 (batch, context) decode points of Llama-3-70B
 * at tp 8 on h100_sxm (batch 1..512 doubling × context 128..12800 step 128),
 * each built, predicted with extended_roofline and freed, as `opmodel llm
 * --sweep` does; (b) one Llama-3-405B decode rollup (tp 8, batch 32,
 * context 2048), build + predict + free.  Each figure is the median and the
 * minimum of `runs` repetitions after an untimed warm-up.  A benchmark, not
 * a test: it prints the figures and the targets (1,000 points < 1 s; 405B
 * rollup < 10 ms) and exits 0 unless it cannot set itself up.
 * Usage: bench_llm_sweep [RUNS] [--json]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "llm/llm.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile double sink;

/* One rollup: 0, or -1 with the error printed. */
static int rollup(const llm_config *c, const llm_step_spec *sp, const opm_hardware *hw)
{
    llm_step s;
    opm_error err;
    if (llm_step_build(c, sp, &s, &err) || llm_step_predict(&s, sp, hw, &err)) {
        fprintf(stderr, "bench_llm_sweep: %s\n", err.message);
        return -1;
    }
    double t = 0;
    for (size_t i = 0; i < s.n_ops; i++) t += s.ops[i].prof.latency_s * (double)s.ops[i].count;
    sink += t;
    llm_step_free(&s);
    return 0;
}

static int sweep(const llm_config *c, llm_step_spec sp, const opm_hardware *hw, int *points)
{
    *points = 0;
    for (int64_t b = 1; b <= 512; b *= 2)
        for (int64_t ctx = 128; ctx <= 12800; ctx += 128) {
            sp.batch = b;
            sp.context = ctx;
            if (rollup(c, &sp, hw)) return -1;
            ++*points;
        }
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 7, json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else runs = atoi(argv[i]);
    }
    if (runs < 1 || runs > 1000) runs = 7;
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    llm_config *c70 = llm_config_open("llama3_70b", &err), *c405 = llm_config_open("llama3_405b", &err);
    if (!hw || !c70 || !c405) {
        fprintf(stderr, "bench_llm_sweep: %s\n", err.message);
        return 1;
    }
    llm_step_spec sp = {LLM_DECODE, 1, 1, 2048, OPM_BF16, OPM_BF16, 8, 1, 1, "extended_roofline", 0};
    double *a = calloc((size_t)runs, sizeof *a), *b = calloc((size_t)runs, sizeof *b);
    int points = 0, rc = 0;
    if (!a || !b || sweep(c70, sp, hw, &points)) rc = 1; /* warm-up */
    for (int r = 0; r < runs && !rc; r++) {
        double t0 = now_s();
        if (sweep(c70, sp, hw, &points)) rc = 1;
        a[r] = now_s() - t0;
    }
    llm_step_spec s405 = sp;
    s405.batch = 32;
    enum { REPS = 50 };
    if (!rc && rollup(c405, &s405, hw)) rc = 1;
    for (int r = 0; r < runs && !rc; r++) {
        double t0 = now_s();
        for (int i = 0; i < REPS && !rc; i++)
            if (rollup(c405, &s405, hw)) rc = 1;
        b[r] = (now_s() - t0) / REPS;
    }
    if (!rc) {
        qsort(a, (size_t)runs, sizeof *a, cmp);
        qsort(b, (size_t)runs, sizeof *b, cmp);
        double am = a[runs / 2], bm = b[runs / 2];
        if (json)
            printf("{\"sweep_points\": %d, \"sweep_s_median\": %.6g, \"sweep_s_min\": %.6g, \"us_per_point\": %.4g, "
                   "\"rollup_405b_ms_median\": %.6g, \"rollup_405b_ms_min\": %.6g, \"runs\": %d}\n",
                   points, am, a[0], am / points * 1e6, bm * 1e3, b[0] * 1e3, runs);
        else {
            printf("(a) sweep: %d Llama-3-70B decode points (tp 8, h100_sxm, extended_roofline): median %.4f s, min %.4f s "
                   "(%.1f us per point); target < 1 s\n",
                   points, am, a[0], am / points * 1e6);
            printf("(b) Llama-3-405B decode rollup (tp 8, batch 32, context 2048): median %.4f ms, min %.4f ms; "
                   "target < 10 ms\n",
                   bm * 1e3, b[0] * 1e3);
        }
    }
    free(a);
    free(b);
    llm_config_free(c70);
    llm_config_free(c405);
    opm_hardware_free(hw);
    return rc;
}
