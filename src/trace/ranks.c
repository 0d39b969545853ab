/* ranks.c — a distributed run, one trace per rank: the collectives matched
 * across ranks (the i-th communication kernel of every rank), each with its
 * message bytes from PyTorch's record_param_comms, time, NCCL bus
 * bandwidth, arrival skew and slowest rank; and per rank the communication
 * time its compute kernels did not hide (docs/trace.md, "Multi-rank").
 *
 * Times across ranks are compared as they are: the ranks' traces must share
 * one clock (the processes of one host do; torch.profiler writes the host's
 * clock), or the skew is the clocks' offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_internal.h"
#include "opmodel/trace_analysis.h"

/* One communication kernel of one rank. */
typedef struct comm_k {
    int64_t ts, dur;
    uint32_t name;              /* kernel name id */
    const opm_tcomm *rec;       /* its record_param_comms, NULL when none */
} comm_k;

typedef struct rank_acc {
    const opm_trace *t;
    comm_k *k;
    size_t n;
} rank_acc;

struct opm_trace_ranks {
    opm_trace_rank *rank;
    size_t n_rank;
    opm_trace_collective *coll;
    size_t n_coll;
    char **owned;
    size_t n_owned, cap_owned;
};

static const char *own(opm_trace_ranks *r, const char *s)
{
    if (!s) return NULL;
    if (opm_array_grow((void **)&r->owned, &r->cap_owned, r->n_owned + 1, sizeof *r->owned)) return NULL;
    char *c = strdup(s);
    if (!c) return NULL;
    r->owned[r->n_owned++] = c;
    return c;
}

static int cmp_comm(const void *a, const void *b)
{
    const comm_k *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_tcomm(const void *a, const void *b)
{
    const opm_tcomm *x = *(const opm_tcomm *const *)a, *y = *(const opm_tcomm *const *)b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* How far back from the last record starting at or before a launch the
 * search for one holding it goes: records nest only a few deep (c10d's op,
 * its record_param_comms, a coalescing manager's). */
#define RECORD_NEST_MAX 8

/* The innermost record_param_comms on (pid, tid) whose range holds ts;
 * `sorted` holds the n records by (pid, tid, ts). */
static const opm_tcomm *record_at(const opm_tcomm *const *sorted, size_t n, int32_t pid, int32_t tid, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {   /* first record after (pid, tid, ts) */
        size_t mid = lo + (hi - lo) / 2;
        const opm_tcomm *c = sorted[mid];
        int before = c->pid < pid || (c->pid == pid && (c->tid < tid || (c->tid == tid && c->ts_ns <= ts)));
        if (before) lo = mid + 1;
        else hi = mid;
    }
    const opm_tcomm *best = NULL;
    for (size_t k = 0; k < RECORD_NEST_MAX && lo > 0; k++) {
        const opm_tcomm *c = sorted[--lo];
        if (c->pid != pid || c->tid != tid) break;
        if (ts <= c->ts_ns + c->dur_ns && (!best || c->dur_ns < best->dur_ns)) best = c;
    }
    return best;
}

/* A rank's communication kernels in start order, each with its record. */
static int collect(rank_acc *a, const opm_trace *t)
{
    a->t = t;
    size_t n = 0;
    for (size_t i = 0; i < t->n_ev; i++)
        n += t->ev[i].cls == OPM_EV_KERNEL &&
             opm_trace_kernel_category(opm_trace_str(t, t->ev[i].name), t->ev[i].cls) == OPM_TCAT_COMM;
    a->k = malloc((n + 1) * sizeof *a->k);
    if (!a->k) return -1;
    opm_u64map launches = {0};
    const opm_tcomm **sorted = t->n_comms ? malloc(t->n_comms * sizeof *sorted) : NULL;
    int rc = t->n_comms && !sorted ? -1 : 0;
    for (size_t i = 0; sorted && i < t->n_comms; i++) sorted[i] = &t->comms[i];
    if (sorted) qsort(sorted, t->n_comms, sizeof *sorted, cmp_tcomm);
    /* correlation -> launch, only when there are records to find. */
    if (t->n_comms) {
        for (size_t i = 0; i < t->n_ev && !rc; i++) {
            const opm_tev *e = &t->ev[i];
            if (e->cls != OPM_EV_LAUNCH || e->correlation == OPM_NO_ID) continue;
            uint32_t idx;
            int added;
            if (opm_u64map_get_or_add(&launches, (uint64_t)e->correlation, (uint32_t)i, &idx, &added) < 0) rc = -1;
        }
    }
    a->n = 0;
    for (size_t i = 0; i < t->n_ev && !rc; i++) {
        const opm_tev *e = &t->ev[i];
        if (e->cls != OPM_EV_KERNEL || opm_trace_kernel_category(opm_trace_str(t, e->name), e->cls) != OPM_TCAT_COMM)
            continue;
        comm_k *k = &a->k[a->n++];
        *k = (comm_k){e->ts_ns, e->dur_ns, e->name, NULL};
        if (!t->n_comms || e->correlation == OPM_NO_ID) continue;
        uint32_t idx;
        int added;
        /* A fresh index past the events: "no launch" for this id from now on. */
        if (opm_u64map_get_or_add(&launches, (uint64_t)e->correlation, (uint32_t)t->n_ev, &idx, &added) < 0) {
            rc = -1;
            break;
        }
        if (!added && idx < t->n_ev) {
            const opm_tev *l = &t->ev[idx];
            k->rec = record_at(sorted, t->n_comms, l->pid, l->tid, l->ts_ns);
        }
    }
    opm_u64map_free(&launches);
    free(sorted);
    if (!rc) qsort(a->k, a->n, sizeof *a->k, cmp_comm);
    return rc;
}

/* Bytes of one element of a PyTorch scalar type name; 0 when unknown. */
static int dtype_bytes(const char *s)
{
    static const struct {
        const char *name;
        int bytes;
    } tab[] = {{"BFloat16", 2}, {"Half", 2},        {"Float", 4},  {"Double", 8},      {"Int", 4},
               {"Long", 8},     {"Short", 2},       {"Byte", 1},   {"Char", 1},        {"Bool", 1},
               {"ComplexHalf", 4}, {"ComplexFloat", 8}, {"ComplexDouble", 16}, {"Float8_e4m3fn", 1},
               {"Float8_e5m2", 1}, {"Float8_e4m3fnuz", 1}, {"Float8_e5m2fnuz", 1}, {"UInt16", 2},
               {"UInt32", 4},   {"UInt64", 8}};
    for (size_t i = 0; s && i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(s, tab[i].name)) return tab[i].bytes;
    return 0;
}

/* The collective from a kernel name, lower case as c10d names it. */
static const char *collective_from_kernel(const char *k)
{
    static const struct {
        const char *needle, *name;
    } tab[] = {{"allreduce", "allreduce"},         {"all_reduce", "allreduce"},  {"reducescatter", "reduce_scatter"},
               {"reduce_scatter", "reduce_scatter"}, {"allgather", "allgather"}, {"all_gather", "allgather"},
               {"alltoall", "all_to_all"},         {"all_to_all", "all_to_all"}, {"broadcast", "broadcast"},
               {"sendrecv", "send_recv"},          {"reduce", "reduce"}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (opm_trace_name_has(k, tab[i].needle)) return tab[i].name;
    return NULL;
}

/* NCCL's algorithm when the kernel name says it (ncclKernel_AllReduce_RING_LL_Sum_bf16,
 * ncclDevKernel_AllGather_RING_LL); NCCL writes them upper case. */
static const char *algorithm_from_kernel(const char *k)
{
    static const struct {
        const char *token, *name;
    } tab[] = {{"_RING", "ring"}, {"_TREE", "tree"}, {"_NVLS", "nvls"}, {"_COLLNET", "collnet"}, {"_PAT", "pat"}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        const char *p = strstr(k, tab[i].token);
        if (p) {
            char c = p[strlen(tab[i].token)];
            if (c == '_' || c == '\0' || c == '(' || c == '<' || (c >= 'A' && c <= 'Z')) return tab[i].name;
        }
    }
    return NULL;
}

/* nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): what each rank's
 * link carries relative to the message, for n ranks. */
static double busbw_factor(const char *coll, int64_t n)
{
    if (!coll || n < 1) return 0;
    double d = (double)n;
    if (!strcmp(coll, "allreduce") || !strcmp(coll, "allreduce_coalesced")) return 2.0 * (d - 1) / d;
    if (!strcmp(coll, "reduce_scatter") || !strcmp(coll, "_reduce_scatter_base") || !strcmp(coll, "reduce_scatter_tensor") ||
        !strcmp(coll, "allgather") || !strcmp(coll, "_allgather_base") || !strcmp(coll, "all_gather_into_tensor") ||
        !strcmp(coll, "all_to_all") || !strcmp(coll, "all_to_allv") || !strcmp(coll, "alltoall") ||
        !strcmp(coll, "alltoall_base") || !strcmp(coll, "allgather_into_tensor_coalesced") ||
        !strcmp(coll, "reduce_scatter_tensor_coalesced") || !strcmp(coll, "allgather_coalesced") ||
        !strcmp(coll, "gather") || !strcmp(coll, "scatter"))
        return (d - 1) / d; /* nccl-tests: gather and scatter move (n-1)/n of the buffer over the root's link */
    if (!strcmp(coll, "broadcast") || !strcmp(coll, "reduce") || !strcmp(coll, "send") || !strcmp(coll, "recv") ||
        !strcmp(coll, "send_recv"))
        return 1.0;
    return 0;
}

/* Group size from "[0, 1, 2, 3]": the count of its entries; -1 when empty. */
static int64_t ranks_in(const char *s)
{
    if (!s || !*s) return -1;
    int64_t n = 0;
    int digit = 0;
    for (const char *p = s; *p; p++) {
        int d = *p >= '0' && *p <= '9';
        if (d && !digit) n++;
        digit = d;
    }
    return n ? n : -1;
}

static int rank_times(opm_trace_rank *rk, const opm_trace *t, opm_error *err)
{
    opm_trace_report *rep = opm_trace_report_new(t, NULL, NULL, err);
    if (!rep) return -1;
    const opm_trace_timeline *tl = opm_trace_report_timeline(rep);
    rk->comm_s = tl->comm_s;
    rk->exposed_comm_s = tl->exposed_comm_s;
    rk->overlapped_comm_s = tl->comm_s - tl->exposed_comm_s;
    rk->compute_s = tl->compute_s;
    opm_trace_report_free(rep);
    return 0;
}

static int build_collective(opm_trace_ranks *r, const rank_acc *acc, size_t n, size_t i, opm_trace_collective *c)
{
    const comm_k *k0 = &acc[0].k[i];
    const opm_trace *t0 = acc[0].t;
    const opm_tcomm *rec = NULL;
    for (size_t j = 0; j < n && !rec; j++) rec = acc[j].k[i].rec;
    const opm_trace *trec = NULL;
    for (size_t j = 0; j < n; j++)
        if (acc[j].k[i].rec == rec) {
            trec = acc[j].t;
            break;
        }
    const char *kname = opm_trace_str(t0, k0->name);
    const char *coll = rec && rec->collective ? opm_trace_str(trec, rec->collective) : collective_from_kernel(kname);
    memset(c, 0, sizeof *c);
    c->kernel = own(r, kname);
    c->collective = own(r, coll ? coll : "unknown");
    c->algorithm = algorithm_from_kernel(kname);
    c->dtype = rec && rec->dtype ? own(r, opm_trace_str(trec, rec->dtype)) : NULL;
    if (!c->kernel || !c->collective || (rec && rec->dtype && !c->dtype)) return -1;
    c->group_size = rec ? (rec->group_size > 0 ? rec->group_size : ranks_in(rec->pg_ranks ? opm_trace_str(trec, rec->pg_ranks) : NULL)) : -1;
    if (c->group_size < 0 && !rec && n > 1) c->group_size = (int64_t)n;
    if (rec) {
        int64_t ne = rec->in_nelems > rec->out_nelems ? rec->in_nelems : rec->out_nelems;
        int eb = dtype_bytes(c->dtype);
        if (ne > 0 && eb > 0 && (uint64_t)ne <= UINT64_MAX / (uint64_t)eb) c->message_bytes = (uint64_t)ne * (uint64_t)eb;
    }
    int64_t tmin = INT64_MAX, tmax = 0, smin = INT64_MAX, smax = INT64_MIN;
    double sum = 0;
    c->names_agree = 1;
    for (size_t j = 0; j < n; j++) {
        const comm_k *k = &acc[j].k[i];
        if (k->dur < tmin) tmin = k->dur;
        if (k->dur > tmax) tmax = k->dur;
        sum += (double)k->dur;
        if (k->ts < smin) smin = k->ts;
        if (k->ts > smax) {
            smax = k->ts;
            c->slowest_rank = j;
        }
        const char *a = k->rec && k->rec->collective ? opm_trace_str(acc[j].t, k->rec->collective) : NULL;
        const char *b0 = rec && rec->collective ? coll : NULL;
        if (a && b0 ? strcmp(a, b0) != 0 : strcmp(opm_trace_str(acc[j].t, k->name), kname) != 0) c->names_agree = 0;
    }
    c->time_s = (double)tmin / 1e9;
    c->max_time_s = (double)tmax / 1e9;
    c->mean_time_s = sum / (double)n / 1e9;
    c->skew_s = (double)(smax - smin) / 1e9;
    if (c->message_bytes && c->time_s > 0) {
        c->algbw_bytes_per_s = (double)c->message_bytes / c->time_s;
        c->busbw_bytes_per_s = c->algbw_bytes_per_s * busbw_factor(c->collective, c->group_size);
    }
    return 0;
}

opm_trace_ranks *opm_trace_ranks_new(const opm_trace *const *traces, size_t n, opm_error *err)
{
    if (!traces || n == 0) {
        opm_err(err, OPM_EINVAL, "traces", "expected at least one rank's trace");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!traces[i]) {
            opm_err(err, OPM_EINVAL, "traces", "rank %zu: no trace", i);
            return NULL;
        }
    opm_trace_ranks *r = calloc(1, sizeof *r);
    rank_acc *acc = calloc(n, sizeof *acc);
    if (!r || !acc || !(r->rank = calloc(n, sizeof *r->rank))) goto oom;
    r->n_rank = n;
    size_t m = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (collect(&acc[i], traces[i])) goto oom;
        if (acc[i].n < m) m = acc[i].n;
        r->rank[i].source = own(r, traces[i]->source ? traces[i]->source : "");
        if (!r->rank[i].source) goto oom;
        r->rank[i].collectives = acc[i].n;
        if (rank_times(&r->rank[i], traces[i], err)) goto fail;
    }
    r->coll = calloc(m + 1, sizeof *r->coll);
    if (!r->coll) goto oom;
    for (size_t i = 0; i < m; i++)
        if (build_collective(r, acc, n, i, &r->coll[i])) goto oom;
    r->n_coll = m;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) r->rank[j].collective_wait_s += (double)acc[j].k[i].dur / 1e9 - r->coll[i].time_s;
    for (size_t i = 0; i < n; i++) free(acc[i].k);
    free(acc);
    return r;
oom:
    opm_err(err, OPM_ENOMEM, NULL, "ranks: out of memory");
fail:
    for (size_t i = 0; acc && i < n; i++) free(acc[i].k);
    free(acc);
    opm_trace_ranks_free(r);
    return NULL;
}

void opm_trace_ranks_free(opm_trace_ranks *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_owned; i++) free(r->owned[i]);
    free(r->owned);
    free(r->rank);
    free(r->coll);
    free(r);
}

size_t opm_trace_ranks_rank_count(const opm_trace_ranks *r) { return r ? r->n_rank : 0; }

const opm_trace_rank *opm_trace_ranks_rank(const opm_trace_ranks *r, size_t i)
{
    return r && i < r->n_rank ? &r->rank[i] : NULL;
}

size_t opm_trace_ranks_collective_count(const opm_trace_ranks *r) { return r ? r->n_coll : 0; }

const opm_trace_collective *opm_trace_ranks_collective(const opm_trace_ranks *r, size_t i)
{
    return r && i < r->n_coll ? &r->coll[i] : NULL;
}
