/* trace_bench.c — throughput and peak memory of the trace pipeline on one
 * trace file: reading alone (opm_trace_read_file), and reading + the report
 * (opm_trace_report_new: link, recognise, group) + its JSON emission.
 *
 *     bench_trace [--mode read|report|all] [--reps N] TRACE
 *
 * Each measurement prints one line: the uncompressed JSON size, the best wall
 * time of N runs, MB/s of uncompressed JSON (10^6 bytes) by wall time and by
 * the process's CPU time, and the peak RSS so far (getrusage ru_maxrss) with
 * its share of the uncompressed size.  Peak RSS is per process and never
 * goes down, so bench/trace.sh runs each mode in its own process.  A
 * benchmark, not a test: it reports figures and does not judge them (the
 * exit status is non-zero only when the trace cannot be read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "opmodel/opmodel.h"

static double now_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

typedef struct sample {
    double wall_s, cpu_s;
    double read_wall_s;     /* the read part of an end-to-end run */
    uint64_t json_bytes;
    opm_trace_stats stats;
    size_t groups, instances;
    size_t json_out_bytes;
} sample;

/* One run; 0 or -1 (message printed). */
static int run_once(const char *path, int with_report, sample *s)
{
    opm_error err;
    double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    opm_trace *t = opm_trace_read_file(path, &err);
    if (!t) {
        fprintf(stderr, "bench_trace: %s\n", err.message);
        return -1;
    }
    s->read_wall_s = now_s(CLOCK_MONOTONIC) - w0;
    opm_trace_get_stats(t, &s->stats);
    s->json_bytes = s->stats.json_bytes;
    int rc = 0;
    if (with_report) {
        opm_trace_report *r = opm_trace_report_new(t, NULL, NULL, &err);
        char *json = r ? opm_trace_report_to_json(r, &err) : NULL;
        if (!json) {
            fprintf(stderr, "bench_trace: report: %s\n", err.message);
            rc = -1;
        } else {
            s->groups = opm_trace_report_group_count(r);
            s->instances = opm_trace_report_instance_count(r);
            s->json_out_bytes = strlen(json);
        }
        free(json);
        opm_trace_report_free(r);
    }
    opm_trace_free(t);
    s->wall_s = now_s(CLOCK_MONOTONIC) - w0;
    s->cpu_s = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    return rc;
}

static int measure(const char *path, const char *what, int with_report, int reps)
{
    sample best = {0};
    for (int i = 0; i < reps; i++) {
        sample s = {0};
        if (run_once(path, with_report, &s))
            return -1;
        if (i == 0 || s.wall_s < best.wall_s)
            best = s;
    }
    double mb = (double)best.json_bytes / 1e6;
    long rss = max_rss_kib();
    printf("%-7s %10.1f MB  wall %7.3f s  %7.1f MB/s  cpu %7.3f s  %7.1f MB/s  max_rss %8ld KiB  "
           "(%.1f%% of the JSON)",
           what, mb, best.wall_s, mb / best.wall_s, best.cpu_s, mb / best.cpu_s, rss,
           100.0 * (double)rss * 1024.0 / (double)best.json_bytes);
    if (with_report)
        printf("  read %.3f s, report+json %.3f s, %zu groups, %zu instances, %zu bytes of JSON",
               best.read_wall_s, best.wall_s - best.read_wall_s, best.groups, best.instances,
               best.json_out_bytes);
    else
        printf("  events %llu: %llu cpu ops, %llu launches, %llu gpu, %llu flows",
               (unsigned long long)best.stats.events, (unsigned long long)best.stats.cpu_ops,
               (unsigned long long)best.stats.launches, (unsigned long long)best.stats.gpu_events,
               (unsigned long long)best.stats.flows);
    printf("\n");
    fflush(stdout);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_trace [--mode read|report|all] [--reps N] TRACE\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *mode = "all", *path = NULL;
    int reps = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
            mode = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return usage();
        else
            path = argv[i];
    }
    int read = strcmp(mode, "read") == 0 || strcmp(mode, "all") == 0;
    int report = strcmp(mode, "report") == 0 || strcmp(mode, "all") == 0;
    if (!path || reps < 1 || (!read && !report))
        return usage();
    if (read && measure(path, "read", 0, reps))
        return 1;
    if (report && measure(path, "report", 1, reps))
        return 1;
    return 0;
}
