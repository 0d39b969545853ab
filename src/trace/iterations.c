/* iterations.c — the steady-state iterations of a run: ProfilerStep#N
 * annotations when the profiler wrote two or more, else the period of the
 * GPU kernel-name sequence; per iteration its span and busy time, and the
 * JSON and table of them (docs/trace.md, "Iterations").
 *
 * The period search: an iteration repeats the same kernels in the same
 * order, so at the true period p the name sequence s satisfies
 * s[i] == s[i + p] almost everywhere.  Candidate periods are the gaps
 * between consecutive launches of one kernel name (the most frequent
 * MAX_CANDIDATES of them), each scored by the fraction of positions that
 * match one period later; a model's repeated layers match at their own
 * period too, but break at every iteration boundary, so the highest score
 * wins and, among scores within TIE_FRACTION of it, the shortest period
 * (multiples of the period score the same).  Iterations then start at the
 * phase whose starts follow the longest GPU idle gaps (the host-side step
 * boundary), and only whole periods are iterations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_internal.h"
#include "opmodel/trace_analysis.h"

/* How many distinct gaps are scored: each costs one pass over the kernels. */
#define MAX_CANDIDATES 64
/* A period must match this share of positions to count as repetition. */
#define MIN_MATCH_FRACTION 0.9
/* Scores this close to the best are ties, broken by the shorter period. */
#define TIE_FRACTION 0.005

struct opm_trace_iterations {
    opm_trace_iter_method method;
    uint64_t period;
    opm_trace_iteration *it;
    char (*names)[48];
    size_t n;
};

typedef struct gpu_ref {
    int64_t ts, end;
    uint32_t ev;
} gpu_ref;

static int cmp_gpu(const void *a, const void *b)
{
    const gpu_ref *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int is_step(const opm_trace *t, const opm_tev *e)
{
    return !strncmp(opm_trace_str(t, e->name), "ProfilerStep#", 13);
}

typedef struct step {
    int64_t ts, end;
    uint32_t name;
} step;

static int cmp_step(const void *a, const void *b)
{
    const step *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int grow_iters(opm_trace_iterations *r, size_t n)
{
    r->it = calloc(n + 1, sizeof *r->it);
    r->names = calloc(n + 1, sizeof *r->names);
    return r->it && r->names ? 0 : -1;
}

/* Fills iteration k from the GPU events g[a, b) (sorted by start); `next`
 * is the next iteration's first start, or INT64_MIN for the last. */
static int fill_iter(opm_trace_iterations *r, size_t k, const gpu_ref *g, size_t a, size_t b, int64_t next,
                     int64_t t0, const char *name)
{
    opm_trace_iteration *it = &r->it[k];
    int64_t *iv = malloc(2 * (b - a) * sizeof *iv + 1);
    if (!iv) return -1;
    int64_t last_end = g[a].end;
    for (size_t i = a; i < b; i++) {
        iv[2 * (i - a)] = g[i].ts;
        iv[2 * (i - a) + 1] = g[i].end;
        if (g[i].end > last_end) last_end = g[i].end;
    }
    it->busy_s = (double)opm_interval_union_ns(iv, b - a) / 1e9;
    free(iv);
    it->start_s = (double)(g[a].ts - t0) / 1e9;
    it->duration_s = (double)((next != INT64_MIN ? next : last_end) - g[a].ts) / 1e9;
    it->gpu_events = b - a;
    snprintf(r->names[k], sizeof r->names[k], "%s", name);
    it->name = r->names[k];
    return 0;
}

/* ProfilerStep ranges of one class (GPU or host), sorted; *n of them. */
static step *collect_steps(const opm_trace *t, int cls, size_t *n)
{
    size_t c = 0;
    for (size_t i = 0; i < t->n_ev; i++)
        c += t->ev[i].cls == cls && is_step(t, &t->ev[i]);
    *n = c;
    if (c < 2) return NULL;
    step *s = malloc(c * sizeof *s);
    if (!s) return NULL;
    c = 0;
    for (size_t i = 0; i < t->n_ev; i++)
        if (t->ev[i].cls == cls && is_step(t, &t->ev[i]))
            s[c++] = (step){t->ev[i].ts_ns, t->ev[i].ts_ns + t->ev[i].dur_ns, t->ev[i].name};
    qsort(s, c, sizeof *s, cmp_step);
    return s;
}

/* The time that places a GPU event in a step: its own start (GPU ranges),
 * or its launch's start (host ranges; INT64_MIN when no launch). */
static int step_times(const opm_trace *t, const gpu_ref *g, size_t n, int host, int64_t *when)
{
    if (!host) {
        for (size_t i = 0; i < n; i++) when[i] = g[i].ts;
        return 0;
    }
    opm_u64map m = {0};
    int64_t *lts = malloc((t->n_ev + 1) * sizeof *lts);
    if (!lts) return -1;
    size_t nl = 0;
    for (size_t i = 0; i < t->n_ev; i++) {
        const opm_tev *e = &t->ev[i];
        if (e->cls != OPM_EV_LAUNCH || e->correlation == OPM_NO_ID) continue;
        uint32_t idx;
        int added;
        if (opm_u64map_get_or_add(&m, (uint64_t)e->correlation, (uint32_t)nl, &idx, &added) < 0) {
            free(lts);
            opm_u64map_free(&m);
            return -1;
        }
        if (added) lts[nl++] = e->ts_ns;
    }
    for (size_t i = 0; i < n; i++) {
        const opm_tev *e = &t->ev[g[i].ev];
        uint32_t idx;
        int added = 0;
        when[i] = INT64_MIN;
        if (e->correlation == OPM_NO_ID) continue;
        if (opm_u64map_get_or_add(&m, (uint64_t)e->correlation, (uint32_t)nl, &idx, &added) < 0) {
            free(lts);
            opm_u64map_free(&m);
            return -1;
        }
        if (!added) when[i] = lts[idx];
        else lts[nl++] = INT64_MIN;   /* no launch: later lookups see "none" */
    }
    free(lts);
    opm_u64map_free(&m);
    return 0;
}

static int by_steps(opm_trace_iterations *r, const opm_trace *t, const gpu_ref *g, size_t n, int64_t t0, int *found)
{
    size_t ns;
    /* Host ranges first: on ROCm the GPU-side ProfilerStep ranges are a
     * few microseconds long and sit in the wrong place (mi300_resnet_ckpt:
     * 16-18 us each, the 15th after the 16th), while every kernel's launch
     * lies inside its host step. */
    int host = 1;
    step *s = collect_steps(t, OPM_EV_ANNOTATION, &ns);
    if (!s) {
        if (ns >= 2) return -1;
        s = collect_steps(t, OPM_EV_GPU_ANNOTATION, &ns);
        if (!s) return ns >= 2 ? -1 : 0;
        host = 0;
    }
    int64_t *when = malloc((n + 1) * sizeof *when);
    size_t *first = calloc(ns + 2, sizeof *first), *slot = malloc((n + 1) * sizeof *slot);
    gpu_ref *sel = malloc((n + 1) * sizeof *sel);
    int rc = -1;
    if (!when || !first || !slot || !sel || step_times(t, g, n, host, when)) goto out;
    /* Each GPU event goes to the step whose range holds its time (binary
     * search over the sorted, non-nested steps), then a counting sort keeps
     * each step's events in start order. */
    for (size_t i = 0; i < n; i++) {
        size_t lo = 0, hi = ns;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid].ts <= when[i]) lo = mid + 1;
            else hi = mid;
        }
        slot[i] = when[i] != INT64_MIN && lo > 0 && when[i] < s[lo - 1].end ? lo - 1 : SIZE_MAX;
        if (slot[i] != SIZE_MAX) first[slot[i] + 1]++;
    }
    for (size_t k = 0; k < ns; k++) first[k + 1] += first[k];
    size_t kept = 0;
    for (size_t k = 0; k < ns; k++) kept += first[k + 1] > first[k];
    rc = 0;
    if (kept < 2) goto out;
    {
        size_t *fill = malloc((ns + 1) * sizeof *fill);
        if (!fill || grow_iters(r, kept)) {
            free(fill);
            rc = -1;
            goto out;
        }
        memcpy(fill, first, ns * sizeof *fill);
        for (size_t i = 0; i < n; i++)
            if (slot[i] != SIZE_MAX) sel[fill[slot[i]]++] = g[i];
        free(fill);
    }
    size_t k2 = 0;
    for (size_t k = 0; k < ns && !rc; k++) {
        if (first[k + 1] == first[k]) continue;
        size_t kn = k + 1;
        while (kn < ns && first[kn + 1] == first[kn]) kn++;
        int64_t next = kn < ns ? sel[first[kn]].ts : INT64_MIN;
        rc = fill_iter(r, k2++, sel, first[k], first[k + 1], next, t0, opm_trace_str(t, s[k].name));
    }
    if (!rc) {
        r->n = kept;
        r->method = OPM_ITER_PROFILER_STEP;
        *found = 1;
    }
out:
    free(s);
    free(when);
    free(first);
    free(slot);
    free(sel);
    return rc;
}

typedef struct gap_count {
    uint32_t gap, count;
} gap_count;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_gap_count(const void *a, const void *b)
{
    const gap_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->gap < y->gap ? -1 : x->gap > y->gap;
}

static int by_sequence(opm_trace_iterations *r, const gpu_ref *g, size_t n, const opm_trace *t, int64_t t0)
{
    if (n < 4 || n > UINT32_MAX) return 0;
    uint32_t *name = malloc(n * sizeof *name), *gaps = malloc(n * sizeof *gaps);
    uint32_t *last = NULL;
    gap_count *gc = NULL;
    int rc = -1;
    if (!name || !gaps) goto out;
    /* Dense per-trace name ids: the last position each was seen at. */
    uint32_t maxid = 0;
    for (size_t i = 0; i < n; i++) {
        name[i] = t->ev[g[i].ev].name;
        if (name[i] > maxid) maxid = name[i];
    }
    last = malloc(((size_t)maxid + 1) * sizeof *last);
    if (!last) goto out;
    memset(last, 0xff, ((size_t)maxid + 1) * sizeof *last);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (last[name[i]] != UINT32_MAX && i - last[name[i]] <= n / 2) gaps[ng++] = (uint32_t)(i - last[name[i]]);
        last[name[i]] = (uint32_t)i;
    }
    rc = 0;
    if (!ng) goto out;
    qsort(gaps, ng, sizeof *gaps, cmp_u32);
    gc = malloc(ng * sizeof *gc);
    if (!gc) {
        rc = -1;
        goto out;
    }
    size_t nc = 0;
    for (size_t i = 0; i < ng;) {
        size_t j = i;
        while (j < ng && gaps[j] == gaps[i]) j++;
        gc[nc++] = (gap_count){gaps[i], (uint32_t)(j - i)};
        i = j;
    }
    qsort(gc, nc, sizeof *gc, cmp_gap_count);
    if (nc > MAX_CANDIDATES) nc = MAX_CANDIDATES;
    double best = -1;
    double score[MAX_CANDIDATES];
    for (size_t c = 0; c < nc; c++) {
        size_t p = gc[c].gap, m = 0;
        for (size_t i = 0; i + p < n; i++) m += name[i] == name[i + p];
        score[c] = (double)m / (double)(n - p);
        if (score[c] > best) best = score[c];
    }
    if (best < MIN_MATCH_FRACTION) goto out;
    size_t p = 0;
    for (size_t c = 0; c < nc; c++)
        if (score[c] >= best - TIE_FRACTION && (!p || gc[c].gap < p)) p = gc[c].gap;
    if (n / p < 2) goto out;
    /* Phase: the offset whose iteration starts follow the most GPU idle
     * time (the gap to everything that ran before). */
    int64_t max_end = INT64_MIN;
    int64_t *phase = calloc(p, sizeof *phase);
    if (!phase) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t gap = i && g[i].ts > max_end ? g[i].ts - max_end : 0;
        phase[i % p] += gap;
        if (g[i].end > max_end) max_end = g[i].end;
    }
    size_t o = 0;
    for (size_t k = 1; k < p; k++)
        if (phase[k] > phase[o]) o = k;
    free(phase);
    size_t whole = (n - o) / p;
    if (whole < 2) goto out;
    if (grow_iters(r, whole)) {
        rc = -1;
        goto out;
    }
    for (size_t k = 0; k < whole && !rc; k++) {
        size_t a = o + k * p, b = a + p;
        char nm[32];
        snprintf(nm, sizeof nm, "iteration %zu", k);
        rc = fill_iter(r, k, g, a, b, b < n ? g[b].ts : INT64_MIN, t0, nm);
    }
    if (!rc) {
        r->n = whole;
        r->period = p;
        r->method = OPM_ITER_KERNEL_SEQUENCE;
    }
out:
    free(name);
    free(gaps);
    free(last);
    free(gc);
    return rc;
}

opm_trace_iterations *opm_trace_iterations_new(const opm_trace *t, opm_error *err)
{
    if (!t) {
        opm_err(err, OPM_EINVAL, "trace", "no trace");
        return NULL;
    }
    opm_trace_iterations *r = calloc(1, sizeof *r);
    size_t n = 0;
    for (size_t i = 0; i < t->n_ev; i++) n += opm_ev_is_gpu(t->ev[i].cls);
    gpu_ref *g = malloc((n + 1) * sizeof *g);
    if (!r || !g) goto oom;
    n = 0;
    for (size_t i = 0; i < t->n_ev; i++)
        if (opm_ev_is_gpu(t->ev[i].cls))
            g[n++] = (gpu_ref){t->ev[i].ts_ns, t->ev[i].ts_ns + t->ev[i].dur_ns, (uint32_t)i};
    qsort(g, n, sizeof *g, cmp_gpu);
    int found = 0;
    int64_t t0 = n ? g[0].ts : 0;
    if (n && by_steps(r, t, g, n, t0, &found)) goto oom;
    if (!found && by_sequence(r, g, n, t, t0)) goto oom;
    free(g);
    return r;
oom:
    free(g);
    opm_trace_iterations_free(r);
    opm_err(err, OPM_ENOMEM, NULL, "iterations: out of memory");
    return NULL;
}

void opm_trace_iterations_free(opm_trace_iterations *it)
{
    if (!it) return;
    free(it->it);
    free(it->names);
    free(it);
}

opm_trace_iter_method opm_trace_iterations_method(const opm_trace_iterations *it)
{
    return it ? it->method : OPM_ITER_NONE;
}

size_t opm_trace_iterations_count(const opm_trace_iterations *it) { return it ? it->n : 0; }

const opm_trace_iteration *opm_trace_iterations_at(const opm_trace_iterations *it, size_t i)
{
    return it && i < it->n ? &it->it[i] : NULL;
}

uint64_t opm_trace_iterations_period(const opm_trace_iterations *it) { return it ? it->period : 0; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int opm_trace_iterations_stats(const opm_trace_iterations *it, double *mean_s, double *median_s, double *min_s,
                               double *max_s, size_t *outlier, double *outlier_ratio)
{
    if (!it || !it->n) return -1;
    double *d = malloc(it->n * sizeof *d), sum = 0;
    if (!d) return -1;
    for (size_t i = 0; i < it->n; i++) sum += d[i] = it->it[i].duration_s;
    qsort(d, it->n, sizeof *d, cmp_double);
    double med = it->n % 2 ? d[it->n / 2] : 0.5 * (d[it->n / 2 - 1] + d[it->n / 2]);
    if (mean_s) *mean_s = sum / (double)it->n;
    if (median_s) *median_s = med;
    if (min_s) *min_s = d[0];
    if (max_s) *max_s = d[it->n - 1];
    free(d);
    size_t o = SIZE_MAX;
    double worst = 0;
    for (size_t i = 0; it->n >= 2 && i < it->n; i++) {
        double rel = med > 0 ? (it->it[i].duration_s > med ? it->it[i].duration_s - med : med - it->it[i].duration_s) / med : 0;
        if (o == SIZE_MAX || rel > worst) o = i, worst = rel;
    }
    if (outlier) *outlier = o;
    if (outlier_ratio) *outlier_ratio = worst;
    return 0;
}
