/* trace_iterations.c — the iterations of a run (iterations.c) as a JSON
 * object and a terminal table: how they were found, their statistics, the
 * iteration farthest from the median (the warm-up, usually), and one entry
 * per iteration.  Keys: docs/trace.md, "Iterations". */
#include <stdint.h>
#include <stdio.h>
#include "report_internal.h"
#include "opmodel/trace_analysis.h"

/* Farther than this from the median marks the iteration as an outlier
 * (a reporting threshold, not a fitted constant). */
#define OUTLIER_FRACTION 0.10

static const char *method_name(opm_trace_iter_method m)
{
    return m == OPM_ITER_PROFILER_STEP ? "profiler_step" : m == OPM_ITER_KERNEL_SEQUENCE ? "kernel_sequence" : "none";
}

char *opm_trace_iterations_to_json(const opm_trace_iterations *it, opm_error *err)
{
    strbuf b = {0};
    size_t n = opm_trace_iterations_count(it);
    sb_puts(&b, "{\"method\": ");
    sb_json_string(&b, method_name(opm_trace_iterations_method(it)));
    sb_printf(&b, ", \"count\": %zu, \"period_gpu_events\": ", n);
    if (opm_trace_iterations_method(it) == OPM_ITER_KERNEL_SEQUENCE) sb_u64(&b, opm_trace_iterations_period(it));
    else sb_puts(&b, "null");
    double mean, med, mn, mx, ratio;
    size_t out;
    if (!opm_trace_iterations_stats(it, &mean, &med, &mn, &mx, &out, &ratio)) {
        sb_puts(&b, ", \"mean_s\": ");
        sb_num(&b, mean);
        sb_puts(&b, ", \"median_s\": ");
        sb_num(&b, med);
        sb_puts(&b, ", \"min_s\": ");
        sb_num(&b, mn);
        sb_puts(&b, ", \"max_s\": ");
        sb_num(&b, mx);
        sb_puts(&b, ", \"outlier\": ");
        if (out != SIZE_MAX) {
            sb_printf(&b, "{\"index\": %zu, \"name\": ", out);
            sb_json_string(&b, opm_trace_iterations_at(it, out)->name);
            sb_puts(&b, ", \"vs_median\": ");
            sb_num(&b, ratio);
            sb_printf(&b, ", \"is_outlier\": %s}", ratio > OUTLIER_FRACTION ? "true" : "false");
        } else {
            sb_puts(&b, "null");
        }
    } else {
        sb_puts(&b, ", \"mean_s\": null, \"median_s\": null, \"min_s\": null, \"max_s\": null, \"outlier\": null");
    }
    sb_puts(&b, ", \"iterations\": [");
    for (size_t i = 0; i < n; i++) {
        const opm_trace_iteration *x = opm_trace_iterations_at(it, i);
        sb_puts(&b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        sb_json_string(&b, x->name);
        sb_puts(&b, ", \"start_s\": ");
        sb_num(&b, x->start_s);
        sb_puts(&b, ", \"duration_s\": ");
        sb_num(&b, x->duration_s);
        sb_puts(&b, ", \"busy_s\": ");
        sb_num(&b, x->busy_s);
        sb_printf(&b, ", \"gpu_events\": %llu}", (unsigned long long)x->gpu_events);
    }
    sb_puts(&b, n ? "\n  ]}" : "]}");
    return opm_report_finish(&b, "iterations JSON", err);
}

char *opm_trace_iterations_to_table(const opm_trace_iterations *it, opm_error *err)
{
    strbuf b = {0};
    size_t n = opm_trace_iterations_count(it);
    opm_trace_iter_method m = opm_trace_iterations_method(it);
    if (m == OPM_ITER_NONE) {
        sb_puts(&b, "Iterations: none found (no two ProfilerStep# ranges, no repeating kernel sequence)\n");
        return opm_report_finish(&b, "iterations table", err);
    }
    sb_printf(&b, "Iterations: %zu, by %s", n, m == OPM_ITER_PROFILER_STEP ? "ProfilerStep# annotations" : "kernel sequence");
    if (m == OPM_ITER_KERNEL_SEQUENCE)
        sb_printf(&b, " (period %llu GPU events)", (unsigned long long)opm_trace_iterations_period(it));
    sb_putc(&b, '\n');
    double mean, med, mn, mx, ratio;
    size_t out;
    if (!opm_trace_iterations_stats(it, &mean, &med, &mn, &mx, &out, &ratio)) {
        sb_printf(&b, "  per iteration: mean %.3f ms, median %.3f ms, min %.3f ms, max %.3f ms\n", mean * 1e3,
                  med * 1e3, mn * 1e3, mx * 1e3);
        if (out != SIZE_MAX)
            sb_printf(&b, "  farthest from the median: #%zu %s, %+.1f%%%s\n", out, opm_trace_iterations_at(it, out)->name,
                      100.0 * (opm_trace_iterations_at(it, out)->duration_s >= med ? ratio : -ratio),
                      ratio > OUTLIER_FRACTION ? " (outlier: warm-up or a different step)" : "");
    }
    sb_printf(&b, "  %4s  %-20s %12s %12s %12s %10s\n", "#", "iteration", "start_ms", "duration_ms", "busy_ms", "gpu_events");
    for (size_t i = 0; i < n; i++) {
        const opm_trace_iteration *x = opm_trace_iterations_at(it, i);
        sb_printf(&b, "  %4zu  %-20s %12.3f %12.3f %12.3f %10llu\n", i, x->name, x->start_s * 1e3, x->duration_s * 1e3,
                  x->busy_s * 1e3, (unsigned long long)x->gpu_events);
    }
    return opm_report_finish(&b, "iterations table", err);
}
