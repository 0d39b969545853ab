/* graph.c — CUDA/HIP-graph traces: the kernels a cudaGraphLaunch /
 * hipGraphLaunch replays, attributed to the ops recorded when the graph was
 * captured (TraceLens's capture merge, ../../docs/trace.md "Graph traces"),
 * the GPU time still under graph launches, and the --window filter.
 *
 * A replayed kernel carries only the graph launch's correlation id: no node
 * id, no shapes.  The capture trace has, between the end of each
 * StreamBeginCapture and the start of the next StreamEndCapture on that
 * thread, the ops and the launch calls (args.kernel names the kernel) that
 * built the graph, but no GPU events.  So the only link is order and name:
 * the replayed GPU events in start order are paired with the window's
 * launch calls in host order.  The merge then copies the window's ops and
 * launches into the execution trace, once per graph launch, on a thread of
 * their own, and rewrites each paired kernel's correlation to its copied
 * launch: link.c and analyze.c then treat the result exactly as an eager
 * trace, so groups, counts and kernel times are what an eager run gives.
 *
 * Copied host events are shifted by (graph launch start − window start):
 * their nesting is kept, their absolute host times mean nothing (a graph
 * replay has no host side per op).  They get a thread of their own per
 * launch so they can never interleave with the execution trace's ops.
 *
 * Every loop here is linear (or n log n) in the events of the two traces;
 * all memory is freed before returning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_internal.h"

static int is_graph_launch(const opm_trace *t, const opm_tev *e)
{
    return e->cls == OPM_EV_LAUNCH && strstr(opm_trace_str(t, e->name), "GraphLaunch") != NULL;
}

/* ---- GPU time under graph launches ---- */

int opm_trace_graph_time(const opm_trace *t, opm_trace_graph_time_out *out, opm_error *err)
{
    memset(out, 0, sizeof *out);
    opm_u64map corr = {0};
    int rc = 0;
    for (size_t i = 0; i < t->n_ev && !rc; i++) {
        const opm_tev *e = &t->ev[i];
        if (!is_graph_launch(t, e) || e->correlation == OPM_NO_ID)
            continue;
        uint32_t idx;
        int added;
        if (opm_u64map_get_or_add(&corr, (uint64_t)e->correlation, 0, &idx, &added) < 0)
            rc = opm_err(err, OPM_ENOMEM, "", "out of memory indexing graph launches");
        else
            out->launches++;
    }
    if (rc || corr.count == 0) {
        opm_u64map_free(&corr);
        return rc;
    }
    size_t n = 0, cap = 0;
    int64_t *iv = NULL;
    for (size_t i = 0; i < t->n_ev; i++) {
        const opm_tev *e = &t->ev[i];
        if (!opm_ev_is_gpu(e->cls) || e->correlation == OPM_NO_ID)
            continue;
        uint32_t idx;
        int added;
        /* Graph launches' ids hold index 0; any other id seen is stored
         * with 1, so each GPU event costs one probe. */
        if (opm_u64map_get_or_add(&corr, (uint64_t)e->correlation, 1, &idx, &added) < 0) {
            rc = opm_err(err, OPM_ENOMEM, "", "out of memory indexing graph launches");
            break;
        }
        if (added || idx != 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            int64_t *p = realloc(iv, nc * 2 * sizeof *iv);
            if (!p) {
                rc = opm_err(err, OPM_ENOMEM, "", "out of memory measuring graph launches");
                break;
            }
            iv = p;
            cap = nc;
        }
        iv[2 * n] = e->ts_ns;
        iv[2 * n + 1] = e->ts_ns + e->dur_ns;
        n++;
    }
    if (!rc) {
        out->gpu_events = n;
        out->busy_ns = n ? opm_interval_union_ns(iv, n) : 0;
    }
    free(iv);
    opm_u64map_free(&corr);
    return rc;
}

/* ---- --window ---- */

int opm_trace_keep_window(opm_trace *t, double start_s, double end_s, opm_error *err)
{
    if (!(start_s >= 0) || !(end_s > start_s) || end_s > 9.2e9)
        return opm_err(err, OPM_EINVAL, "window", "%s: expected 0 <= start < end (seconds), got %g:%g",
                       t->source ? t->source : "trace", start_s, end_s);
    int have = 0;
    int64_t lo = 0;
    for (size_t i = 0; i < t->n_ev; i++)
        if (!have || t->ev[i].ts_ns < lo)
            lo = t->ev[i].ts_ns, have = 1;
    if (!have)
        return 0;
    /* Both bounds fit: end_s < 9.2e9 s < 2^63 ns, and the reader keeps every
     * event within 2^63 ns of the others. */
    int64_t a = lo + (int64_t)(start_s * 1e9 + 0.5);
    int64_t b = lo + (int64_t)(end_s * 1e9 + 0.5);
    size_t k = 0;
    for (size_t i = 0; i < t->n_ev; i++) {
        const opm_tev *e = &t->ev[i];
        if (e->ts_ns >= a && e->ts_ns - b <= -e->dur_ns)
            t->ev[k++] = *e;
    }
    t->n_ev = k;
    k = 0;
    for (size_t i = 0; i < t->n_flows; i++)
        if (t->flows[i].ts_ns >= a && t->flows[i].ts_ns <= b)
            t->flows[k++] = t->flows[i];
    t->n_flows = k;
    return 0;
}

/* ---- the capture merge ---- */

/* A captured graph: the host events between StreamBeginCapture's end and
 * the next StreamEndCapture on the same thread. */
typedef struct window {
    int64_t start_ns, end_ns;
    int32_t pid, tid;
    uint32_t first, count;          /* range in mg.win_ev (capture event indices, host order) */
    uint32_t lfirst, lcount;        /* range in mg.win_launch: the launch calls */
} window;

typedef struct merger {
    opm_trace *x;                   /* execution trace, modified */
    const opm_trace *c;             /* capture trace */
    opm_error *err;
    uint32_t *str_map;              /* capture string id → exec id + 1 (0: not yet) */
    uint32_t *args_map;             /* capture args index → exec args index + 1 */
    uint32_t *host;                 /* capture host events sorted by ts */
    size_t n_host;
    window *win;
    size_t n_win, cap_win;
    uint32_t *win_ev, *win_launch;
    size_t n_win_ev, cap_win_ev, n_win_launch, cap_win_launch;
} merger;

static int grow(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*(void **)pp, nc * elem);
    if (!p)
        return -1;
    *(void **)pp = p;
    *cap = nc;
    return 0;
}

static int oom(merger *m)
{
    return opm_err(m->err, OPM_ENOMEM, "", "out of memory merging the capture trace");
}

/* The execution trace's id for a capture string. */
static uint32_t map_str(merger *m, uint32_t id)
{
    if (id == 0)
        return 0;
    if (m->str_map[id])
        return m->str_map[id] - 1;
    uint32_t x = opm_trace_intern(m->x, opm_trace_str(m->c, id), opm_trace_strlen(m->c, id));
    if (x != OPM_NONE32)
        m->str_map[id] = x + 1;
    return x;
}

static int map_args(merger *m, uint32_t a, uint32_t *out)
{
    if (a == OPM_NONE32 || a >= m->c->n_args) {
        *out = OPM_NONE32;
        return 0;
    }
    if (m->args_map[a]) {
        *out = m->args_map[a] - 1;
        return 0;
    }
    const opm_call_args *s = &m->c->call_args[a];
    opm_call_args d = {map_str(m, s->input_dims), map_str(m, s->input_types), map_str(m, s->input_strides),
                       map_str(m, s->concrete_inputs)};
    if (d.input_dims == OPM_NONE32 || d.input_types == OPM_NONE32 || d.input_strides == OPM_NONE32 ||
        d.concrete_inputs == OPM_NONE32)
        return oom(m);
    if (opm_trace_add_args(m->x, &d, out, m->err))
        return -1;
    m->args_map[a] = *out + 1;
    return 0;
}

typedef struct ts_idx {
    int64_t ts;
    uint32_t idx;
} ts_idx;

static int ts_idx_cmp(const void *pa, const void *pb)
{
    const ts_idx *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Sorts `idx` (event indices of `t`) by (ts, index). */
static int sort_by_ts(const opm_trace *t, uint32_t *idx, size_t n)
{
    if (n < 2)
        return 0;
    ts_idx *k = malloc(n * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < n; i++)
        k[i] = (ts_idx){t->ev[idx[i]].ts_ns, idx[i]};
    qsort(k, n, sizeof *k, ts_idx_cmp);
    for (size_t i = 0; i < n; i++)
        idx[i] = k[i].idx;
    free(k);
    return 0;
}

static int is_capture_launch_call(const opm_trace *t, const opm_tev *e)
{
    if (e->cls != OPM_EV_LAUNCH)
        return 0;
    const char *n = opm_trace_str(t, e->name);
    return strstr(n, "Launch") || strstr(n, "Memcpy") || strstr(n, "Memset");
}

/* Finds the capture windows and their host events. */
static int find_windows(merger *m)
{
    const opm_trace *c = m->c;
    size_t nh = 0;
    for (size_t i = 0; i < c->n_ev; i++)
        nh += c->ev[i].cls == OPM_EV_CPU_OP || c->ev[i].cls == OPM_EV_LAUNCH;
    m->host = malloc((nh + 1) * sizeof *m->host);
    if (!m->host)
        return oom(m);
    for (size_t i = 0; i < c->n_ev; i++)
        if (c->ev[i].cls == OPM_EV_CPU_OP || c->ev[i].cls == OPM_EV_LAUNCH)
            m->host[m->n_host++] = (uint32_t)i;
    if (sort_by_ts(c, m->host, m->n_host))
        return oom(m);
    for (size_t h = 0; h < m->n_host; h++) {
        const opm_tev *b = &c->ev[m->host[h]];
        if (b->cls != OPM_EV_LAUNCH || !strstr(opm_trace_str(c, b->name), "StreamBeginCapture"))
            continue;
        int64_t start = b->ts_ns + b->dur_ns, end = 0;
        size_t j = h + 1;
        for (; j < m->n_host; j++) {
            const opm_tev *e = &c->ev[m->host[j]];
            if (e->pid == b->pid && e->tid == b->tid && e->cls == OPM_EV_LAUNCH &&
                strstr(opm_trace_str(c, e->name), "StreamEndCapture")) {
                end = e->ts_ns;
                break;
            }
        }
        if (j == m->n_host)
            break;                  /* never ended: stop, so unended begins cannot cost n² scans */
        if (grow(&m->win, &m->cap_win, m->n_win + 1, sizeof *m->win))
            return oom(m);
        window *w = &m->win[m->n_win++];
        *w = (window){start, end, b->pid, b->tid, (uint32_t)m->n_win_ev, 0, (uint32_t)m->n_win_launch, 0};
        for (size_t k = h + 1; k < j; k++) {
            uint32_t ei = m->host[k];
            const opm_tev *e = &c->ev[ei];
            if (e->pid != b->pid || e->tid != b->tid || e->ts_ns < start || e->ts_ns + e->dur_ns > end)
                continue;
            if (grow(&m->win_ev, &m->cap_win_ev, m->n_win_ev + 1, sizeof *m->win_ev))
                return oom(m);
            m->win_ev[m->n_win_ev++] = ei;
            w->count++;
            if (is_capture_launch_call(c, e)) {
                if (grow(&m->win_launch, &m->cap_win_launch, m->n_win_launch + 1, sizeof *m->win_launch))
                    return oom(m);
                m->win_launch[m->n_win_launch++] = ei;
                w->lcount++;
            }
        }
        h = j;                      /* windows on one thread do not nest */
    }
    return 0;
}

/* Match key of a replayed GPU event / a capture launch call: the kernel's
 * string id in the execution trace, or a class marker for memcpy/memset
 * (by kind: their GPU names differ from the calls'), or ANY for a call
 * without args.kernel, which TraceLens lets pass unchecked. */
#define KEY_MEMCPY (UINT64_C(1) << 40)
#define KEY_MEMSET (UINT64_C(2) << 40)
#define KEY_ANY (UINT64_C(3) << 40)

static uint64_t gpu_key(const opm_trace *x, const opm_tev *g)
{
    if (g->cls == OPM_EV_MEMCPY)
        return KEY_MEMCPY;
    if (g->cls == OPM_EV_MEMSET || strncmp(opm_trace_str(x, g->name), "fillBuffer", 10) == 0)
        return KEY_MEMSET;
    return g->name;
}

static int call_key(merger *m, const opm_tev *e, uint64_t *key)
{
    const char *n = opm_trace_str(m->c, e->name);
    if (strstr(n, "Memcpy")) {
        *key = KEY_MEMCPY;
        return 0;
    }
    if (strstr(n, "Memset")) {
        *key = KEY_MEMSET;
        return 0;
    }
    if (e->args == OPM_NONE32 || e->args == 0) {
        *key = KEY_ANY;
        return 0;
    }
    uint32_t id = map_str(m, e->args);
    if (id == OPM_NONE32)
        return oom(m);
    *key = id;
    return 0;
}

static int keys_match(uint64_t call, uint64_t gpu)
{
    return call == gpu || (call == KEY_ANY && gpu != KEY_MEMCPY && gpu != KEY_MEMSET);
}

/* Pairs replayed GPU events (gk, start order, one stream) with capture calls
 * (ck, host order): pair[i] = call index for GPU event i, or -1.  Equal
 * counts with every name equal pair by position; equal counts otherwise pair
 * the i-th occurrence of each name with the i-th (when every name's count
 * agrees); anything else is a greedy forward scan that skips calls until one
 * matches. */
static int pair_one_stream(const uint64_t *gk, size_t ng, const uint64_t *ck, size_t nc, int32_t *pair)
{
    for (size_t i = 0; i < ng; i++)
        pair[i] = -1;
    if (ng == nc) {
        size_t i = 0;
        while (i < ng && keys_match(ck[i], gk[i]))
            i++;
        if (i == ng) {
            for (i = 0; i < ng; i++)
                pair[i] = (int32_t)i;
            return 0;
        }
        /* Occurrence pairing: (key, occurrence) of each call, looked up for
         * each GPU event.  Calls without a kernel name have no occurrence
         * identity, so they send this case to the greedy scan. */
        int ok = 1;
        for (size_t j = 0; j < nc && ok; j++)
            ok = ck[j] != KEY_ANY;
        opm_u64map occ = {0}, slot = {0};
        uint32_t *next = NULL;
        int rc = 0;
        if (ok) {
            /* occ: key → dense name index; per name a running count (next). */
            next = calloc(2 * nc + 2, sizeof *next);
            uint32_t *seen = next ? next + nc + 1 : NULL;
            if (!next)
                rc = -1;
            for (size_t j = 0; j < nc && !rc; j++) {
                uint32_t ni;
                int added;
                if (opm_u64map_get_or_add(&occ, ck[j], (uint32_t)occ.count, &ni, &added) < 0) {
                    rc = -1;
                    break;
                }
                uint64_t k = ((uint64_t)ni << 32) | next[ni]++;
                uint32_t si;
                if (opm_u64map_get_or_add(&slot, k, (uint32_t)j, &si, &added) < 0)
                    rc = -1;
            }
            for (size_t q = 0; q < ng && !rc && ok; q++) {
                uint32_t ni;
                int added;
                if (opm_u64map_get_or_add(&occ, gk[q], (uint32_t)occ.count, &ni, &added) < 0) {
                    rc = -1;
                    break;
                }
                if (added || ni > nc) {
                    ok = 0;
                    break;
                }
                uint64_t k = ((uint64_t)ni << 32) | seen[ni]++;
                uint32_t si;
                if (opm_u64map_get_or_add(&slot, k, 0, &si, &added) < 0)
                    rc = -1;
                else if (added)
                    ok = 0;         /* more of this name replayed than captured */
                else
                    pair[q] = (int32_t)si;
            }
            for (size_t n = 0; ok && !rc && n < occ.count && n <= nc; n++)
                ok = next[n] == seen[n];
        }
        free(next);
        opm_u64map_free(&occ);
        opm_u64map_free(&slot);
        if (rc)
            return -1;
        if (ok)
            return 0;
        for (size_t k = 0; k < ng; k++)
            pair[k] = -1;
    }
    size_t j = 0;
    for (size_t i = 0; i < ng && j < nc; i++) {
        size_t k = j;
        while (k < nc && !keys_match(ck[k], gk[i]))
            k++;
        if (k < nc) {
            pair[i] = (int32_t)k;
            j = k + 1;
        }
    }
    return 0;
}

/* Several streams: one FIFO of replayed events per stream; each call, in
 * host order, takes the head of a stream whose head has its kernel (ties:
 * the stream that matches the longest run of following calls, looked at
 * up to LOOKAHEAD ahead to stay linear). */
#define LOOKAHEAD 32
static int pair_streams(const opm_tev *const *gev, const uint64_t *gk, size_t ng, const uint64_t *ck, size_t nc,
                        int32_t *pair)
{
    for (size_t i = 0; i < ng; i++)
        pair[i] = -1;
    for (size_t j = 0; j < nc; j++)
        if (ck[j] == KEY_ANY)
            return 0;               /* TraceLens abandons: every call needs its kernel name */
    /* Streams, and per stream its events in order. */
    int32_t *streams = malloc((ng + 1) * sizeof *streams);
    size_t *order = malloc((ng + 1) * sizeof *order), *head = malloc((ng + 1) * sizeof *head),
           *start = malloc((ng + 2) * sizeof *start);
    if (!streams || !order || !head || !start) {
        free(streams), free(order), free(head), free(start);
        return -1;
    }
    size_t ns = 0;
    for (size_t i = 0; i < ng; i++) {
        size_t s = 0;
        while (s < ns && streams[s] != gev[i]->stream)
            s++;
        if (s == ns) {
            if (ns >= 64)           /* more streams than any graph uses: give up, linear bound */
                break;
            streams[ns++] = gev[i]->stream;
        }
    }
    size_t fill = 0;
    for (size_t s = 0; s < ns; s++) {
        start[s] = fill;
        for (size_t i = 0; i < ng; i++)
            if (gev[i]->stream == streams[s])
                order[fill++] = i;
        head[s] = start[s];
    }
    start[ns] = fill;
    for (size_t j = 0; j < nc; j++) {
        size_t best = ns, best_run = 0;
        for (size_t s = 0; s < ns; s++) {
            if (head[s] >= start[s + 1] || !keys_match(ck[j], gk[order[head[s]]]))
                continue;
            size_t run = 1;
            for (size_t a = 1; a < LOOKAHEAD && j + a < nc && head[s] + a < start[s + 1] &&
                               keys_match(ck[j + a], gk[order[head[s] + a]]);
                 a++)
                run++;
            if (best == ns || run > best_run)
                best = s, best_run = run;
        }
        if (best < ns)
            pair[order[head[best]++]] = (int32_t)j;
    }
    free(streams), free(order), free(head), free(start);
    return 0;
}

typedef struct gl_info {
    uint32_t ev;                    /* the graph launch (exec index) */
    uint32_t first, count;          /* its replayed GPU events in gpu_of */
} gl_info;

static void merger_free(merger *m)
{
    free(m->str_map);
    free(m->args_map);
    free(m->host);
    free(m->win);
    free(m->win_ev);
    free(m->win_launch);
}

/* Copies window w's host events for graph launch `gl` (exec index) and
 * rewrites the paired GPU events' correlations.  `pair[i]` is the window
 * call (index into w's launch range) of GPU event gpu[i]. */
static int apply(merger *m, const window *w, uint32_t gl, const uint32_t *gpu, const int32_t *pair, size_t ng,
                 int64_t *next_corr, uint64_t serial)
{
    opm_trace *x = m->x;
    const opm_tev L = x->ev[gl];
    int64_t shift = L.ts_ns - w->start_ns;
    /* Fresh correlation per paired call: calls are numbered in host order,
     * so call k's id is base + k. */
    int64_t base = *next_corr;
    if (base > INT64_MAX - (int64_t)w->lcount - 1)
        return opm_err(m->err, OPM_EINVAL, "correlation", "%s: correlation ids out of range", x->source);
    *next_corr = base + w->lcount;
    char tname[64];
    snprintf(tname, sizeof tname, "graph replay %llu", (unsigned long long)serial);
    uint32_t tid_str = opm_trace_intern(x, tname, strlen(tname));
    if (tid_str == OPM_NONE32 || tid_str > (uint32_t)INT32_MAX - 1)
        return oom(m);
    uint32_t li = 0;
    for (uint32_t k = 0; k < w->count; k++) {
        const opm_tev *s = &m->c->ev[m->win_ev[w->first + k]];
        opm_tev e = *s;
        /* The shifted times stay within the graph launch's neighbourhood:
         * a window is shorter than the capture trace's span (< 2^63 ns),
         * checked against the execution trace's range by the caller. */
        e.ts_ns = s->ts_ns + shift;
        e.pid = L.pid;
        e.tid = -(1 + (int32_t)tid_str);
        e.name = map_str(m, s->name);
        if (e.name == OPM_NONE32)
            return oom(m);
        e.external_id = OPM_NO_ID;  /* capture ids would collide with the run's */
        e.correlation = OPM_NO_ID;
        if (s->cls == OPM_EV_CPU_OP) {
            if (map_args(m, s->args, &e.args))
                return -1;
        } else {
            e.args = s->args == OPM_NONE32 ? OPM_NONE32 : map_str(m, s->args);
            if (li < w->lcount && m->win_launch[w->lfirst + li] == m->win_ev[w->first + k]) {
                e.correlation = base + li;
                li++;
            }
        }
        if (opm_trace_add_event(x, &e, m->err))
            return -1;
    }
    for (size_t i = 0; i < ng; i++)
        if (pair[i] >= 0)
            x->ev[gpu[i]].correlation = base + pair[i];
    return 0;
}

/* The graph launch (index into the launches found, < n_gl) whose
 * correlation a GPU event carries: 1 and *idx when it was replayed by one,
 * 0 when not, -1 out of memory. */
static int replayed_launch(opm_u64map *by_corr, const opm_tev *e, size_t n_gl, uint32_t *idx)
{
    int added;
    if (!opm_ev_is_gpu(e->cls) || e->correlation == OPM_NO_ID)
        return 0;
    if (opm_u64map_get_or_add(by_corr, (uint64_t)e->correlation, UINT32_MAX - 1, idx, &added) < 0)
        return -1;
    return *idx < n_gl;
}

int opm_trace_merge_capture(opm_trace *x, const opm_trace *c, opm_trace_graph_stats *st, opm_error *err)
{
    memset(st, 0, sizeof *st);
    merger m = {.x = x, .c = c, .err = err};
    int rc = 0;
    gl_info *gl = NULL;
    uint32_t *gpu_of = NULL;
    uint64_t *gk = NULL, *ck = NULL;
    int32_t *pair = NULL;
    const opm_tev **gev = NULL;
    opm_u64map by_corr = {0};
    size_t n_gl = 0;

    m.str_map = calloc(c->strings.count + 1, sizeof *m.str_map);
    m.args_map = calloc(c->n_args + 1, sizeof *m.args_map);
    if (!m.str_map || !m.args_map) {
        rc = oom(&m);
        goto done;
    }
    if ((rc = find_windows(&m)))
        goto done;
    st->windows = m.n_win;

    /* Graph launches of the execution trace, in time order, and the GPU
     * events each replayed (CSR by launch). */
    size_t n_orig = x->n_ev, cap_gl = 0;
    int64_t max_corr = 0, span_lo = INT64_MAX, span_hi = INT64_MIN;
    for (size_t i = 0; i < n_orig; i++) {
        const opm_tev *e = &x->ev[i];
        if (e->ts_ns < span_lo) span_lo = e->ts_ns;
        if (e->ts_ns + e->dur_ns > span_hi) span_hi = e->ts_ns + e->dur_ns;
        if (e->correlation != OPM_NO_ID && e->correlation > max_corr)
            max_corr = e->correlation;
        if (!is_graph_launch(x, e) || e->correlation == OPM_NO_ID)
            continue;
        uint32_t idx;
        int added;
        if (opm_u64map_get_or_add(&by_corr, (uint64_t)e->correlation, (uint32_t)n_gl, &idx, &added) < 0 ||
            (added && grow(&gl, &cap_gl, n_gl + 1, sizeof *gl))) {
            rc = oom(&m);
            goto done;
        }
        if (added)
            gl[n_gl++] = (gl_info){(uint32_t)i, 0, 0};
    }
    st->launches = n_gl;
    if (n_gl == 0)
        goto done;
    size_t n_rep = 0;
    for (size_t i = 0; i < n_orig; i++) {
        uint32_t idx;
        int got = replayed_launch(&by_corr, &x->ev[i], n_gl, &idx);
        if (got < 0) {
            rc = oom(&m);
            goto done;
        }
        if (got) {
            gl[idx].count++;
            n_rep++;
        }
    }
    st->gpu_events = n_rep;
    gpu_of = malloc((n_rep + 1) * sizeof *gpu_of);
    gk = malloc((n_rep + 1) * sizeof *gk);
    pair = malloc((n_rep + 1) * sizeof *pair);
    gev = malloc((n_rep + 1) * sizeof *gev);
    ck = malloc((m.n_win_launch + 1) * sizeof *ck);
    if (!gpu_of || !gk || !pair || !gev || !ck) {
        rc = oom(&m);
        goto done;
    }
    {
        uint32_t acc = 0;
        for (size_t g = 0; g < n_gl; g++) {
            gl[g].first = acc;
            acc += gl[g].count;
            gl[g].count = 0;
        }
        for (size_t i = 0; i < n_orig; i++) {
            uint32_t idx;
            int got = replayed_launch(&by_corr, &x->ev[i], n_gl, &idx);
            if (got < 0) {
                rc = oom(&m);
                goto done;
            }
            if (got)
                gpu_of[gl[idx].first + gl[idx].count++] = (uint32_t)i;
        }
    }
    {
        /* Launches in time order (they were found in file order). */
        uint32_t *ord = malloc((n_gl + 1) * sizeof *ord);
        gl_info *sorted = malloc((n_gl + 1) * sizeof *sorted);
        if (!ord || !sorted) {
            free(ord), free(sorted);
            rc = oom(&m);
            goto done;
        }
        for (size_t g = 0; g < n_gl; g++)
            ord[g] = gl[g].ev;
        if (sort_by_ts(x, ord, n_gl)) {
            free(ord), free(sorted);
            rc = oom(&m);
            goto done;
        }
        /* gl[] is in file order = ascending ev index; map ev → gl by search. */
        for (size_t g = 0; g < n_gl; g++) {
            size_t lo = 0, hi = n_gl;
            while (lo + 1 < hi) {
                size_t mid = (lo + hi) / 2;
                if (gl[mid].ev <= ord[g]) lo = mid;
                else hi = mid;
            }
            sorted[g] = gl[lo];
        }
        free(gl);
        free(ord);
        gl = sorted;
    }
    if (m.n_win == 0 || !(m.n_win == 1 || n_gl % m.n_win == 0))
        goto done;                  /* no way to tell which window a launch replays */
    int64_t next_corr = max_corr + 1;
    for (size_t g = 0; g < n_gl; g++) {
        const window *w = &m.win[m.n_win == 1 ? 0 : g % m.n_win];
        const gl_info *L = &gl[g];
        uint32_t *gpu = gpu_of + L->first;
        if (sort_by_ts(x, gpu, L->count)) {
            rc = oom(&m);
            goto done;
        }
        /* Copies must stay within int64 and 2^63 ns of the run's events. */
        int64_t len = w->end_ns - w->start_ns;
        if (x->ev[L->ev].ts_ns > INT64_MAX - len ||
            (uint64_t)(x->ev[L->ev].ts_ns + len > span_hi ? x->ev[L->ev].ts_ns + len : span_hi) -
                    (uint64_t)span_lo > (uint64_t)INT64_MAX) {
            rc = opm_err(err, OPM_EINVAL, "ts", "%s: capture window of %lld ns does not fit the run's time range",
                         c->source ? c->source : "capture", (long long)len);
            goto done;
        }
        int multi = 0;
        for (uint32_t i = 0; i < L->count; i++) {
            gev[i] = &x->ev[gpu[i]];
            gk[i] = gpu_key(x, gev[i]);
            multi |= gev[i]->stream != gev[0]->stream;
        }
        for (uint32_t j = 0; j < w->lcount; j++)
            if ((rc = call_key(&m, &c->ev[m.win_launch[w->lfirst + j]], &ck[j])))
                goto done;
        rc = multi ? pair_streams(gev, gk, L->count, ck, w->lcount, pair)
                   : pair_one_stream(gk, L->count, ck, w->lcount, pair);
        if (rc) {
            rc = oom(&m);
            goto done;
        }
        uint32_t matched = 0;
        for (uint32_t i = 0; i < L->count; i++)
            matched += pair[i] >= 0;
        if (matched == 0)
            continue;
        if ((rc = apply(&m, w, L->ev, gpu, pair, L->count, &next_corr, g)))
            goto done;
        st->launches_matched++;
        st->gpu_events_matched += matched;
    }
done:
    merger_free(&m);
    free(gl);
    free(gpu_of);
    free(gk);
    free(ck);
    free(pair);
    free(gev);
    opm_u64map_free(&by_corr);
    return rc;
}
