/* test_trace_graph.c — CUDA/HIP-graph traces (src/trace/graph.c) on small
 * traces written as JSON: replayed kernels attributed to the captured ops
 * by order and name (positional, per-name occurrence, greedy scan, several
 * streams), the GPU time left under graph launches, captures that cannot be
 * matched (no window, a launch count that is not a multiple), --window, and
 * the reader keeping a launch's args.kernel. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace_internal.h"

static opm_trace *read_json(const char *text)
{
    opm_error err;
    opm_trace *t = opm_trace_read_buffer(text, strlen(text), "test", &err);
    cr_assert_not_null(t, "%s", err.message);
    return t;
}

/* A capture trace: BeginCapture, then per captured op a cpu_op with one
 * launch call of kernel names[i] (NULL: a call without args.kernel), then
 * EndCapture. */
static char *capture_json(const char *const *names, size_t n)
{
    size_t cap = 4096 + n * 512;
    char *b = malloc(cap);
    cr_assert_not_null(b);
    size_t o = (size_t)snprintf(b, cap,
                                "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
                                "\"hipStreamBeginCapture\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":1,\"args\":{}}");
    for (size_t i = 0; i < n; i++) {
        double ts = 200 + 10.0 * (double)i;
        o += (size_t)snprintf(b + o, cap - o,
                              ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%zu\",\"pid\":1,\"tid\":1,\"ts\":%g,"
                              "\"dur\":5,\"args\":{\"Input Dims\":[[%zu]]}}",
                              i % 3, ts, i % 3 + 1);
        if (names[i])
            o += (size_t)snprintf(b + o, cap - o,
                                  ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,"
                                  "\"tid\":1,\"ts\":%g,\"dur\":1,\"args\":{\"correlation\":%zu,\"kernel\":\"%s\"}}",
                                  ts + 1, 900 + i, names[i]);
        else
            o += (size_t)snprintf(b + o, cap - o,
                                  ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,"
                                  "\"tid\":1,\"ts\":%g,\"dur\":1,\"args\":{\"correlation\":%zu}}",
                                  ts + 1, 900 + i);
    }
    snprintf(b + o, cap - o,
             ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipStreamEndCapture\",\"pid\":1,\"tid\":1,"
             "\"ts\":%g,\"dur\":1,\"args\":{}}]}",
             300 + 10.0 * (double)n);
    return b;
}

/* A run: `launches` hipGraphLaunch calls, each replaying kernels names[i]
 * (1 µs each, on stream streams[i] or 0). */
static char *run_json(const char *const *names, const int *streams, size_t n, int launches)
{
    size_t cap = 4096 + (size_t)launches * n * 256;
    char *b = malloc(cap);
    cr_assert_not_null(b);
    size_t o = (size_t)snprintf(b, cap, "{\"traceEvents\":[");
    for (int l = 0; l < launches; l++) {
        double t0 = 10000.0 * (l + 1);
        o += (size_t)snprintf(b + o, cap - o,
                              "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipGraphLaunch\",\"pid\":7,"
                              "\"tid\":7,\"ts\":%g,\"dur\":3,\"args\":{\"correlation\":%d}}",
                              l ? "," : "", t0, 50 + l);
        for (size_t i = 0; i < n; i++)
            o += (size_t)snprintf(b + o, cap - o,
                                  ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":0,\"ts\":%g,"
                                  "\"dur\":1,\"args\":{\"correlation\":%d,\"stream\":%d,\"device\":0}}",
                                  names[i], t0 + 10 + 2.0 * (double)i, 50 + l, streams ? streams[i] : 0);
    }
    snprintf(b + o, cap - o, "]}");
    return b;
}

/* Merges and reports; checks the stats. */
static opm_trace_report *merge_report(const char *run, const char *cap, uint64_t want_matched,
                                      opm_trace_graph_stats *st)
{
    opm_trace *x = read_json(run), *c = read_json(cap);
    opm_error err;
    cr_assert_eq(opm_trace_merge_capture(x, c, st, &err), 0, "%s", err.message);
    cr_assert_eq(st->gpu_events_matched, want_matched, "matched %llu, want %llu",
                 (unsigned long long)st->gpu_events_matched, (unsigned long long)want_matched);
    opm_trace_report *r = opm_trace_report_new(x, NULL, NULL, &err);
    cr_assert_not_null(r, "%s", err.message);
    opm_trace_free(x);
    opm_trace_free(c);
    return r;
}

static const opm_trace_group *find(const opm_trace_report *r, const char *name)
{
    for (size_t i = 0; i < opm_trace_report_group_count(r); i++)
        if (!strcmp(opm_trace_report_group(r, i)->name, name)) return opm_trace_report_group(r, i);
    return NULL;
}

Test(trace_graph, reader_keeps_launch_kernel_name)
{
    const char *names[] = {"kA"};
    char *cj = capture_json(names, 1);
    opm_trace *c = read_json(cj);
    int found = 0;
    for (size_t i = 0; i < c->n_ev; i++)
        if (c->ev[i].cls == OPM_EV_LAUNCH && c->ev[i].args != OPM_NONE32) {
            cr_assert_str_eq(opm_trace_str(c, c->ev[i].args), "kA");
            found++;
        }
    cr_assert_eq(found, 1);
    opm_trace_free(c);
    free(cj);
}

Test(trace_graph, positional_match_two_replays)
{
    const char *names[] = {"kA", "kB", "kC", "kA"};
    char *cj = capture_json(names, 4), *rj = run_json(names, NULL, 4, 2);
    opm_trace_graph_stats st;
    opm_trace_report *r = merge_report(rj, cj, 8, &st);
    cr_assert_eq(st.windows, 1);
    cr_assert_eq(st.launches, 2);
    cr_assert_eq(st.launches_matched, 2);
    /* op0 owns kA (twice per replay: ops 0 and 3), op1 kB, op2 kC; two replays. */
    const opm_trace_group *g = find(r, "op1");
    cr_assert_not_null(g);
    cr_assert_eq(g->count, 2);
    cr_assert_float_eq(g->kernel_time_s, 2e-6, 1e-12);
    g = find(r, "op0");
    cr_assert_not_null(g);
    cr_assert_eq(g->count, 4);       /* i = 0 and i = 3 are both op0 [[1]]: two per replay */
    uint64_t launches, events;
    double s = opm_trace_report_graph_time(r, &launches, &events);
    cr_assert_eq(launches, 2);
    cr_assert_eq(events, 0);
    cr_assert_float_eq(s, 0, 1e-15);
    opm_trace_report_free(r);
    free(cj);
    free(rj);
}

Test(trace_graph, without_capture_time_is_reported)
{
    const char *names[] = {"kA", "kB"};
    char *rj = run_json(names, NULL, 2, 3);
    opm_trace *x = read_json(rj);
    opm_error err;
    opm_trace_report *r = opm_trace_report_new(x, NULL, NULL, &err);
    cr_assert_not_null(r);
    uint64_t launches, events;
    double s = opm_trace_report_graph_time(r, &launches, &events);
    cr_assert_eq(launches, 3);
    cr_assert_eq(events, 6);
    cr_assert_float_eq(s, 6e-6, 1e-12);
    opm_trace_report_free(r);
    opm_trace_free(x);
    free(rj);
}

Test(trace_graph, reordered_names_pair_by_occurrence)
{
    const char *cap[] = {"kA", "kB", "kC"}, *rep[] = {"kB", "kA", "kC"};
    char *cj = capture_json(cap, 3), *rj = run_json(rep, NULL, 3, 1);
    opm_trace_graph_stats st;
    opm_trace_report *r = merge_report(rj, cj, 3, &st);
    const opm_trace_group *g = find(r, "op0");
    cr_assert_not_null(g);
    cr_assert_eq(g->kernel_name_count, 1);
    cr_assert_str_eq(g->kernel_names[0], "kA");
    opm_trace_report_free(r);
    free(cj);
    free(rj);
}

Test(trace_graph, extra_capture_calls_greedy_scan)
{
    const char *cap[] = {"kA", "kX", "kB", "kC"}, *rep[] = {"kA", "kB", "kC"};
    char *cj = capture_json(cap, 4), *rj = run_json(rep, NULL, 3, 1);
    opm_trace_graph_stats st;
    opm_trace_report *r = merge_report(rj, cj, 3, &st);
    const opm_trace_group *g = find(r, "op2");   /* i = 2: kB */
    cr_assert_not_null(g);
    cr_assert_str_eq(g->kernel_names[0], "kB");
    cr_assert_null(find(r, "hipGraphLaunch->kB (Synthetic Op)"));
    opm_trace_report_free(r);
    free(cj);
    free(rj);
}

Test(trace_graph, unknown_replayed_kernel_stays_under_the_launch)
{
    const char *cap[] = {"kA", "kB"}, *rep[] = {"kA", "kZ", "kB"};
    char *cj = capture_json(cap, 2), *rj = run_json(rep, NULL, 3, 1);
    opm_trace_graph_stats st;
    opm_trace_report *r = merge_report(rj, cj, 2, &st);
    uint64_t events;
    double s = opm_trace_report_graph_time(r, NULL, &events);
    cr_assert_eq(events, 1);
    cr_assert_float_eq(s, 1e-6, 1e-12);
    opm_trace_report_free(r);
    free(cj);
    free(rj);
}

Test(trace_graph, several_streams)
{
    const char *cap[] = {"kA", "kB", "kC", "kD"}, *rep[] = {"kB", "kA", "kD", "kC"};
    int streams[] = {1, 0, 1, 0};
    char *cj = capture_json(cap, 4), *rj = run_json(rep, streams, 4, 1);
    opm_trace_graph_stats st;
    opm_trace_report *r = merge_report(rj, cj, 4, &st);
    const opm_trace_group *g = find(r, "op1");
    cr_assert_not_null(g);
    cr_assert_str_eq(g->kernel_names[0], "kB");
    opm_trace_report_free(r);
    free(cj);
    free(rj);
}

Test(trace_graph, several_streams_call_without_kernel_abandons)
{
    const char *cap[] = {"kA", NULL}, *rep[] = {"kA", "kB"};
    int streams[] = {0, 1};
    char *cj = capture_json(cap, 2), *rj = run_json(rep, streams, 2, 1);
    opm_trace_graph_stats st;
    opm_trace_report *r = merge_report(rj, cj, 0, &st);
    cr_assert_eq(st.launches_matched, 0);
    opm_trace_report_free(r);
    free(cj);
    free(rj);
}

Test(trace_graph, no_window_or_mismatched_counts_attribute_nothing)
{
    const char *names[] = {"kA"};
    char *rj = run_json(names, NULL, 1, 3);
    opm_trace_graph_stats st;
    /* No capture window at all. */
    opm_trace_report *r = merge_report(rj, "{\"traceEvents\":[]}", 0, &st);
    cr_assert_eq(st.windows, 0);
    opm_trace_report_free(r);
    /* Two windows, three launches. */
    char *one = capture_json(names, 1);
    size_t n = strlen(one);
    char *two = malloc(2 * n + 64);
    cr_assert_not_null(two);
    /* A second (empty) window appended after the first. */
    snprintf(two, 2 * n + 64, "%.*s,%s", (int)(n - 2), one,
             "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipStreamBeginCapture\",\"pid\":1,\"tid\":1,"
             "\"ts\":5000,\"dur\":1,\"args\":{}},{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
             "\"hipStreamEndCapture\",\"pid\":1,\"tid\":1,\"ts\":6000,\"dur\":1,\"args\":{}}]}");
    r = merge_report(rj, two, 0, &st);
    cr_assert_eq(st.windows, 2);
    cr_assert_eq(st.launches, 3);
    opm_trace_report_free(r);
    free(one);
    free(two);
    free(rj);
}

Test(trace_graph, keep_window)
{
    const char *names[] = {"kA", "kB"};
    char *rj = run_json(names, NULL, 2, 2);
    opm_trace *x = read_json(rj);
    opm_error err;
    /* Trace starts at 10000 µs; the first replay's kernels lie at +10..+13 µs. */
    cr_assert_eq(opm_trace_keep_window(x, 0, 20e-6, &err), 0);
    size_t gpu = 0;
    for (size_t i = 0; i < x->n_ev; i++) gpu += opm_ev_is_gpu(x->ev[i].cls);
    cr_assert_eq(gpu, 2);
    cr_assert_neq(opm_trace_keep_window(x, 1, 0.5, &err), 0);
    cr_assert_neq(opm_trace_keep_window(x, -1, 0.5, &err), 0);
    opm_trace_free(x);
    free(rj);
}
