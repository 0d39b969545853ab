/* link.c — from a flat event store to op instances: the host call tree per
 * (pid, tid), each GPU event tied to the launch that queued it and to the
 * CPU op that owns it, one instance per owning op with the busy time (union)
 * of its GPU work, backward ops tied to their forward op, and the GPU
 * timeline.
 *
 *   GPU event ──correlation / ac2g flow──► launch ──call tree──► owner op
 *
 * 1. Call tree: cpu_op, annotation and launch events of one (pid, tid),
 *    sorted by (ts, longer first, file order), nested with a stack
 *    (build_tree: half-open intervals; an event overrunning its parent is
 *    cut at the parent's end).
 * 2. Launch of a GPU event: the launch with its correlation id; failing
 *    that, the ac2g 'f' flow at the event's (pid, tid, ts) gives a flow id
 *    whose 's' end lies on the launch.  A graph launch shares its
 *    correlation id with every kernel it replays, so it needs nothing more.
 * 3. Owner: the outermost ancestor op whose table entry claims OUTER; else
 *    the innermost recognised one; else the innermost cpu_op (owner_below).
 *    No launch found: the cpu_op with the GPU event's External id, as if the
 *    launch sat right under it.  No op: a synthetic instance per GPU event,
 *    named after it (launch_ev kept for "<launch>-><kernel>" naming).
 * 4. Instances in order of their op's start, GPU events grouped and by
 *    start; busy time the union of [ts, ts+dur).  Ops owning no GPU work
 *    get no instance.
 * 5. Backward: see forward_of and note_forward.
 * 6. Timeline: see build_timeline.
 *
 * Everything is indices into t->ev: a few 4-byte arrays per event while
 * linking (parent, owner, sequence node, sort buffers), all freed before
 * returning; recogniser lookups are done once per distinct name. */
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "trace_internal.h"

/* ---- Interval unions ---- */

static int iv_cmp(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    if (x != y)
        return (x > y) - (x < y);
    x = ((const int64_t *)a)[1];
    y = ((const int64_t *)b)[1];
    return (x > y) - (x < y);
}

/* Sorts the n pairs by start and merges overlapping or touching ones in
 * place; empty and reversed intervals are dropped.  Returns the number of
 * disjoint intervals left at the front of iv. */
static size_t iv_merge(int64_t *iv, size_t n)
{
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = iv[2 * i] >= iv[2 * i - 2];
    if (!sorted)
        qsort(iv, n, 2 * sizeof *iv, iv_cmp);   /* n > 1 here */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t s = iv[2 * i], e = iv[2 * i + 1];
        if (e <= s)
            continue;
        if (m > 0 && s <= iv[2 * m - 1]) {
            if (e > iv[2 * m - 1])
                iv[2 * m - 1] = e;
        } else {
            iv[2 * m] = s;
            iv[2 * m + 1] = e;
            m++;
        }
    }
    return m;
}

static int64_t iv_total(const int64_t *iv, size_t m)
{
    int64_t sum = 0;
    for (size_t i = 0; i < m; i++)
        sum += iv[2 * i + 1] - iv[2 * i];
    return sum;
}

/* Length of the overlap of two merged (disjoint, sorted) lists. */
static int64_t iv_overlap(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    int64_t sum = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t s = a[2 * i] > b[2 * j] ? a[2 * i] : b[2 * j];
        int64_t e = a[2 * i + 1] < b[2 * j + 1] ? a[2 * i + 1] : b[2 * j + 1];
        if (e > s)
            sum += e - s;
        if (a[2 * i + 1] < b[2 * j + 1])
            i++;
        else
            j++;
    }
    return sum;
}

/* Union length of intervals fed in order of start. */
typedef struct sweep {
    int64_t sum, cs, ce;
    int open;
} sweep;

static void sweep_add(sweep *w, int64_t s, int64_t e)
{
    if (e <= s)
        return;
    if (w->open && s <= w->ce) {
        if (e > w->ce)
            w->ce = e;
        return;
    }
    if (w->open)
        w->sum += w->ce - w->cs;
    w->cs = s;
    w->ce = e;
    w->open = 1;
}

static int64_t sweep_total(const sweep *w)
{
    return w->open ? w->sum + w->ce - w->cs : w->sum;
}

int64_t opm_interval_union_ns(int64_t *iv, size_t n)
{
    /* Sorts only (iv_merge would also compact the caller's array). */
    if (n > 1)
        qsort(iv, n, 2 * sizeof *iv, iv_cmp);
    sweep w = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++)
        sweep_add(&w, iv[2 * i], iv[2 * i + 1]);
    return sweep_total(&w);
}

/* ---- Small helpers ---- */

static int64_t ev_end(const opm_tev *e)
{
    int64_t d = e->dur_ns > 0 ? e->dur_ns : 0;
    return e->ts_ns > INT64_MAX - d ? INT64_MAX : e->ts_ns + d;
}

static size_t pow2_at_least(size_t n)
{
    size_t p = 16;
    while (p < n)
        p *= 2;
    return p;
}

/* ---- int64 id → event index map ---- */

/* Correlation ids, sequence numbers and External ids are mostly dense runs
 * of integers: when the keys span little more than their count the map is
 * a plain array indexed by key - base (lookups in event order then walk
 * memory in order); otherwise it is an open-addressing hash table. */
typedef struct idmap {
    int64_t *keys;      /* hashed mode only */
    uint32_t *vals;     /* OPM_NONE32 = empty */
    size_t mask;        /* hashed mode: table size - 1 */
    int64_t base;       /* dense mode: key of vals[0] */
    size_t span;        /* dense mode: entries in vals */
    uint32_t spare;     /* target for keys outside a dense map's range */
} idmap;

/* Sizes the map for n keys in [lo, hi]. */
static int idmap_init(idmap *m, size_t n, int64_t lo, int64_t hi)
{
    memset(m, 0, sizeof *m);
    uint64_t range = n == 0 ? 0 : (uint64_t)hi - (uint64_t)lo;
    size_t cap;
    if (n > 0 && range < 4 * (uint64_t)n + 1024) {
        m->base = lo;
        m->span = (size_t)range + 1;
        cap = m->span;
    } else {
        cap = pow2_at_least(2 * n + 1);
        m->mask = cap - 1;
        m->keys = malloc(cap * sizeof *m->keys);
        if (!m->keys)
            return -1;
    }
    m->vals = malloc(cap * sizeof *m->vals);
    if (!m->vals)
        return -1;
    memset(m->vals, 0xff, cap * sizeof *m->vals);
    return 0;
}

static void idmap_free(idmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
}

/* Where key's value lives (OPM_NONE32 there when the key is absent); the
 * caller stores into it to insert. */
static uint32_t *idmap_put(idmap *m, int64_t key)
{
    if (!m->keys) {
        uint64_t off = (uint64_t)key - (uint64_t)m->base;
        if (key < m->base || off >= m->span) {
            m->spare = OPM_NONE32;
            return &m->spare;
        }
        return &m->vals[off];
    }
    size_t i = (size_t)opm_hash_mix64((uint64_t)key) & m->mask;
    while (m->vals[i] != OPM_NONE32 && m->keys[i] != key)
        i = (i + 1) & m->mask;
    m->keys[i] = key;
    return &m->vals[i];
}

static uint32_t idmap_get(const idmap *m, int64_t key)
{
    if (!m->vals)
        return OPM_NONE32;
    if (!m->keys) {
        uint64_t off = (uint64_t)key - (uint64_t)m->base;
        return key < m->base || off >= m->span ? OPM_NONE32 : m->vals[off];
    }
    size_t i = (size_t)opm_hash_mix64((uint64_t)key) & m->mask;
    while (m->vals[i] != OPM_NONE32 && m->keys[i] != key)
        i = (i + 1) & m->mask;
    return m->vals[i];
}

/* Running count and range of the keys a map will hold. */
typedef struct keyrange {
    size_t n;
    int64_t lo, hi;
} keyrange;

static void keyrange_add(keyrange *r, int64_t key)
{
    if (r->n == 0 || key < r->lo)
        r->lo = key;
    if (r->n == 0 || key > r->hi)
        r->hi = key;
    r->n++;
}

/* ---- Linking state ---- */

enum {
    /* per event (flag[]) */
    EVF_IN_BWD = 1,         /* inside autograd backward */
    EVF_COUNTED = 2,        /* launch already counted in launches_without_op */
    /* per string id (nflag[]) */
    NMF_TEXT = 1,           /* BWD and COMM below are computed */
    NMF_BWD = 2,            /* a backward node name */
    NMF_COMM = 4,           /* a communication kernel name */
    NMF_ENTRY = 8,          /* entry[] is looked up */
    NMF_PSEUDO_KNOWN = 16,  /* PSEUDO below is computed */
    NMF_PSEUDO = 32         /* an op TraceLens splits into pseudo ops (recognize.c) */
};

#define EVAL_PREFIX "autograd::engine::evaluate_function: "

typedef struct link_ctx {
    const opm_trace *t;
    const opm_tev *ev;
    size_t n;
    uint32_t *parent;       /* call tree parent, OPM_NONE32 for roots */
    uint32_t *own;          /* host nodes: owner of GPU work launched under them */
    uint32_t *seqnode;      /* host nodes: nearest cpu_op (self included) with a seq */
    uint8_t *flag;
    uint32_t *host;         /* host nodes sorted by (pid, tid, ts, -dur, index) */
    size_t n_host;
    size_t n_gpu;               /* GPU events (kernels, memcpys, memsets) */
    const opm_trace_op_entry **entry;   /* per string id */
    uint8_t *nflag;                     /* per string id */
    idmap launch_by_corr;
    idmap fwd_by_seq;
    /* Built only when some GPU event needs them. */
    int fallbacks_ready;
    idmap op_by_ext;
    idmap sflow_by_id;
    uint32_t *fflow_slots;  /* (pid, tid, ts) of 'f' flows → flow index + 1 */
    size_t fflow_mask;
} link_ctx;

static uint8_t name_flags(link_ctx *c, uint32_t id)
{
    if (id >= c->t->strings.count)
        return 0;
    if (!(c->nflag[id] & NMF_TEXT)) {
        const char *s = opm_trace_str(c->t, id);
        uint8_t f = NMF_TEXT;
        if (strncmp(s, EVAL_PREFIX, sizeof EVAL_PREFIX - 1) == 0 || strstr(s, "Backward"))
            f |= NMF_BWD;
        /* The same test as the category table's, so that every group the
         * report files under comm also counts in the timeline's comm_s
         * (symm_mem multimem all-reduce, vLLM's custom all-reduce). */
        if (opm_trace_kernel_category(s, OPM_EV_KERNEL) == OPM_TCAT_COMM)
            f |= NMF_COMM;
        c->nflag[id] |= f;
    }
    return c->nflag[id];
}

/* The recogniser's entry for an op name, looked up once per distinct name. */
static const opm_trace_op_entry *entry_of(link_ctx *c, uint32_t id)
{
    if (id >= c->t->strings.count)
        return NULL;
    if (!(c->nflag[id] & NMF_ENTRY)) {
        c->entry[id] = opm_trace_op_lookup(opm_trace_str(c->t, id));
        c->nflag[id] |= NMF_ENTRY;
    }
    return c->entry[id];
}

static int has_pseudo(link_ctx *c, uint32_t id)
{
    if (id >= c->t->strings.count)
        return 0;
    if (!(c->nflag[id] & NMF_PSEUDO_KNOWN))
        c->nflag[id] |= NMF_PSEUDO_KNOWN | (opm_trace_has_pseudo_ops(opm_trace_str(c->t, id)) ? NMF_PSEUDO : 0);
    return (c->nflag[id] & NMF_PSEUDO) != 0;
}

static int is_outer(link_ctx *c, uint32_t op)
{
    const opm_trace_op_entry *e = entry_of(c, c->ev[op].name);
    return e && e->claim == OPM_CLAIM_OUTER;
}

static int is_host(int cls)
{
    return cls == OPM_EV_CPU_OP || cls == OPM_EV_ANNOTATION || cls == OPM_EV_LAUNCH;
}

/* ---- Host call tree ---- */

/* (pid, tid, ts ascending, dur descending); the merge sort is stable, so
 * equal keys keep file order and the earlier event becomes the parent. */
static int host_less(const opm_tev *ev, uint32_t a, uint32_t b)
{
    const opm_tev *x = &ev[a], *y = &ev[b];
    if (x->pid != y->pid)
        return x->pid < y->pid;
    if (x->tid != y->tid)
        return x->tid < y->tid;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns;
    return x->dur_ns > y->dur_ns;
}

static void sort_host(const opm_tev *ev, uint32_t *a, uint32_t *tmp, size_t n)
{
    enum { RUN = 32 };
    /* Profiler files are mostly in time order already: insertion sort on
     * short runs, then bottom-up merges that skip runs already in order. */
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            uint32_t v = a[i];
            size_t j = i;
            while (j > lo && host_less(ev, v, a[j - 1])) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
    }
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo + w < n; lo += 2 * w) {
            size_t mid = lo + w, hi = mid + w < n ? mid + w : n;
            if (!host_less(ev, a[mid], a[mid - 1]))
                continue;
            memcpy(tmp, a + lo, (mid - lo) * sizeof *a);
            size_t i = 0, j = mid, k = lo, nl = mid - lo;
            while (i < nl && j < hi)
                a[k++] = host_less(ev, a[j], tmp[i]) ? a[j++] : tmp[i++];
            while (i < nl)
                a[k++] = tmp[i++];
        }
    }
}

typedef struct thread_key {
    int32_t pid, tid;
    uint32_t id;
} thread_key;

static int thread_cmp(const void *a, const void *b)
{
    const thread_key *x = a, *y = b;
    if (x->pid != y->pid)
        return (x->pid > y->pid) - (x->pid < y->pid);
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Dense number of a (pid, tid), in order of first appearance, appended to
 * *thr when new; OPM_NONE32 when out of memory. */
static uint32_t thread_id(opm_u64map *ids, thread_key **thr, size_t *cap_thr, int32_t pid, int32_t tid)
{
    uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
    size_t n = ids->count;
    uint32_t id;
    int added;
    if (opm_u64map_get_or_add(ids, key, (uint32_t)n, &id, &added))
        return OPM_NONE32;
    if (added) {
        if (opm_array_grow((void **)thr, cap_thr, n + 1, sizeof **thr))
            return OPM_NONE32;
        (*thr)[n] = (thread_key){pid, tid, id};
    }
    return id;
}

/* Fills c->host in (pid, tid, ts, -dur, index) order: a counting sort by
 * thread (threads in (pid, tid) order, file order kept within each), then a
 * sort of each thread's run, which costs one comparison per event when the
 * file is already in time order, as profiler output nearly is. */
static int order_host(link_ctx *c, opm_error *err)
{
    opm_u64map ids = {0};
    thread_key *thr = NULL;
    size_t n_thr = 0, cap_thr = 0;
    uint32_t *tmp = malloc((c->n_host ? c->n_host : 1) * sizeof *tmp);
    size_t *start = NULL;
    uint32_t *rank = NULL;
    int rc = 0;
    if (!tmp)
        goto oom;
    for (size_t i = 0, k = 0; i < c->n; i++) {
        if (!is_host(c->ev[i].cls))
            continue;
        tmp[k] = thread_id(&ids, &thr, &cap_thr, c->ev[i].pid, c->ev[i].tid);
        if (tmp[k++] == OPM_NONE32)
            goto oom;
    }
    n_thr = ids.count;
    if (n_thr) /* thr is NULL when the trace has no host events */
        qsort(thr, n_thr, sizeof *thr, thread_cmp);
    start = calloc(n_thr + 1, sizeof *start);
    rank = malloc((n_thr ? n_thr : 1) * sizeof *rank);
    if (!start || !rank)
        goto oom;
    for (size_t r = 0; r < n_thr; r++)
        rank[thr[r].id] = (uint32_t)r;
    for (size_t k = 0; k < c->n_host; k++)
        start[rank[tmp[k]] + 1]++;
    for (size_t r = 0; r < n_thr; r++)
        start[r + 1] += start[r];
    for (size_t i = 0, k = 0; i < c->n; i++)
        if (is_host(c->ev[i].cls))
            c->host[start[rank[tmp[k++]]]++] = (uint32_t)i;
    /* start[r] is now the end of thread r's run. */
    for (size_t r = 0, lo = 0; r < n_thr; lo = start[r++])
        sort_host(c->ev, c->host + lo, tmp, start[r] - lo);
    goto done;
oom:
    rc = opm_err(err, OPM_ENOMEM, "", "out of memory sorting %zu host events", c->n_host);
done:
    opm_u64map_free(&ids);
    free(thr);
    free(tmp);
    free(start);
    free(rank);
    return rc;
}

/* Owner of GPU work launched directly under node i, given its parent's:
 * the outermost OUTER op above wins; else the innermost recognised op; else
 * the innermost cpu_op.  Annotations and launches pass their parent's on. */
static uint32_t owner_below(link_ctx *c, uint32_t i, uint32_t p)
{
    uint32_t po = p == OPM_NONE32 ? OPM_NONE32 : c->own[p];
    if (c->ev[i].cls != OPM_EV_CPU_OP)
        return po;
    if (po != OPM_NONE32 && is_outer(c, po))
        return po;
    if (entry_of(c, c->ev[i].name))
        return i;
    if (po != OPM_NONE32 && entry_of(c, c->ev[po].name))
        return po;
    return i;
}

/* A forward op for its Sequence number: a cpu_op outside backward whose
 * nearest seq-carrying ancestor has another number (the outermost of a
 * nested run that shares one).  Several such ops share a number when the
 * earlier ones created no autograd node (they record the thread's next
 * number without taking it, e.g. num_batches_tracked.add_ before
 * batch_norm); the op that took it is the last of them, so the latest
 * start wins. */
static void note_forward(link_ctx *c, uint32_t i, uint32_t p)
{
    const opm_tev *e = &c->ev[i];
    if (e->cls != OPM_EV_CPU_OP || e->seq == OPM_NO_ID || (c->flag[i] & EVF_IN_BWD))
        return;
    uint32_t ps = p == OPM_NONE32 ? OPM_NONE32 : c->seqnode[p];
    if (ps != OPM_NONE32 && c->ev[ps].seq == e->seq)
        return;
    uint32_t *v = idmap_put(&c->fwd_by_seq, e->seq);
    if (*v == OPM_NONE32 || c->ev[*v].ts_ns <= e->ts_ns)
        *v = i;
}

/* Nests host events per (pid, tid) with a stack.  An event is a child of
 * the innermost open event it starts inside ([ts, ts+dur) half-open, so a
 * zero-duration event contains nothing and an event starting exactly at
 * another's end is its sibling).  One that starts inside its parent but ends
 * after it is treated as closed at the parent's end: events after the
 * parent's end are never nested under it.  Fills parent, own, seqnode, the
 * in-backward flag and the forward map in the same pass. */
static int build_tree(link_ctx *c, opm_error *err)
{
    size_t cap = 64, sp = 0;
    uint32_t *st = malloc(cap * sizeof *st);
    int64_t *st_end = malloc(cap * sizeof *st_end);
    if (!st || !st_end) {
        free(st);
        free(st_end);
        return opm_err(err, OPM_ENOMEM, "", "out of memory building the call tree");
    }
    for (size_t k = 0; k < c->n_host; k++) {
        uint32_t i = c->host[k];
        const opm_tev *e = &c->ev[i];
        if (k == 0 || e->pid != c->ev[c->host[k - 1]].pid || e->tid != c->ev[c->host[k - 1]].tid)
            sp = 0;
        while (sp > 0 && e->ts_ns >= st_end[sp - 1])
            sp--;
        uint32_t p = sp > 0 ? st[sp - 1] : OPM_NONE32;
        int64_t end = ev_end(e);
        if (sp > 0 && end > st_end[sp - 1])
            end = st_end[sp - 1];
        c->parent[i] = p;
        c->own[i] = owner_below(c, i, p);
        c->seqnode[i] = (e->cls == OPM_EV_CPU_OP && e->seq != OPM_NO_ID) ? i
                        : p == OPM_NONE32 ? OPM_NONE32 : c->seqnode[p];
        if ((p != OPM_NONE32 && (c->flag[p] & EVF_IN_BWD)) ||
            (e->cls == OPM_EV_CPU_OP && (name_flags(c, e->name) & NMF_BWD)))
            c->flag[i] |= EVF_IN_BWD;
        note_forward(c, i, p);
        if (sp == cap) {
            cap *= 2;
            uint32_t *s2 = realloc(st, cap * sizeof *st);
            if (s2)
                st = s2;
            int64_t *e2 = s2 ? realloc(st_end, cap * sizeof *st_end) : NULL;
            if (!e2) {
                free(st);
                free(st_end);
                return opm_err(err, OPM_ENOMEM, "", "out of memory building the call tree");
            }
            st_end = e2;
        }
        st[sp] = i;
        st_end[sp] = end;
        sp++;
    }
    free(st);
    free(st_end);
    return 0;
}

/* ---- GPU event → launch ---- */

static size_t fflow_hash(int32_t pid, int32_t tid, int64_t ts)
{
    uint64_t h = opm_hash_mix64((uint64_t)ts ^ ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid));
    return (size_t)h;
}

/* Flow and External id tables, only for traces where some GPU event has no
 * correlation that matches a launch. */
static int build_fallbacks(link_ctx *c, opm_error *err)
{
    const opm_trace *t = c->t;
    size_t n_f = 0;
    keyrange rs = {0, 0, 0}, rx = {0, 0, 0};
    for (size_t i = 0; i < t->n_flows; i++) {
        if (t->flows[i].is_start)
            keyrange_add(&rs, t->flows[i].id);
        else
            n_f++;
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->ev[i].cls == OPM_EV_CPU_OP && c->ev[i].external_id != OPM_NO_ID)
            keyrange_add(&rx, c->ev[i].external_id);
    size_t fcap = pow2_at_least(2 * n_f + 1);
    c->fflow_slots = calloc(fcap, sizeof *c->fflow_slots);
    c->fflow_mask = fcap - 1;
    if (!c->fflow_slots || idmap_init(&c->sflow_by_id, rs.n, rs.lo, rs.hi) ||
        idmap_init(&c->op_by_ext, rx.n, rx.lo, rx.hi))
        return opm_err(err, OPM_ENOMEM, "", "out of memory indexing %zu flows", t->n_flows);
    for (size_t i = 0; i < t->n_flows; i++) {
        const opm_tflow *f = &t->flows[i];
        if (f->is_start) {
            uint32_t *v = idmap_put(&c->sflow_by_id, f->id);
            if (*v == OPM_NONE32)
                *v = (uint32_t)i;
            continue;
        }
        size_t s = fflow_hash(f->pid, f->tid, f->ts_ns) & c->fflow_mask;
        while (c->fflow_slots[s])
            s = (s + 1) & c->fflow_mask;
        c->fflow_slots[s] = (uint32_t)i + 1;
    }
    for (size_t i = 0; i < c->n; i++) {
        const opm_tev *e = &c->ev[i];
        if (e->cls != OPM_EV_CPU_OP || e->external_id == OPM_NO_ID)
            continue;
        uint32_t *v = idmap_put(&c->op_by_ext, e->external_id);
        if (*v == OPM_NONE32)
            *v = (uint32_t)i;
    }
    c->fallbacks_ready = 1;
    return 0;
}

/* The launch on (pid, tid) that starts at ts, or else contains it. */
static uint32_t launch_at(const link_ctx *c, int32_t pid, int32_t tid, int64_t ts)
{
    /* First host node after (pid, tid, ts). */
    size_t lo = 0, hi = c->n_host;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const opm_tev *m = &c->ev[c->host[mid]];
        int after = m->pid != pid ? m->pid > pid : m->tid != tid ? m->tid > tid : m->ts_ns > ts;
        if (after)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (size_t k = lo; k-- > 0;) {
        const opm_tev *m = &c->ev[c->host[k]];
        if (m->pid != pid || m->tid != tid || m->ts_ns != ts)
            break;
        if (m->cls == OPM_EV_LAUNCH)
            return c->host[k];
    }
    if (lo == 0)
        return OPM_NONE32;
    uint32_t i = c->host[lo - 1];
    if (c->ev[i].pid != pid || c->ev[i].tid != tid)
        return OPM_NONE32;
    for (; i != OPM_NONE32; i = c->parent[i])
        if (c->ev[i].cls == OPM_EV_LAUNCH && c->ev[i].ts_ns <= ts && ts < ev_end(&c->ev[i]))
            return i;
    return OPM_NONE32;
}

static uint32_t launch_by_flow(const link_ctx *c, const opm_tev *g)
{
    const opm_trace *t = c->t;
    size_t s = fflow_hash(g->pid, g->tid, g->ts_ns) & c->fflow_mask;
    for (; c->fflow_slots[s]; s = (s + 1) & c->fflow_mask) {
        const opm_tflow *f = &t->flows[c->fflow_slots[s] - 1];
        if (f->pid != g->pid || f->tid != g->tid || f->ts_ns != g->ts_ns)
            continue;
        uint32_t si = idmap_get(&c->sflow_by_id, f->id);
        if (si == OPM_NONE32)
            continue;
        const opm_tflow *st = &t->flows[si];
        uint32_t l = launch_at(c, st->pid, st->tid, st->ts_ns);
        if (l != OPM_NONE32)
            return l;
    }
    return OPM_NONE32;
}

/* ---- Instances ---- */

typedef struct gpu_rec {
    int64_t key_ts;         /* owner's host start: orders the instances */
    int64_t gpu_ts;
    uint32_t owner;         /* owning cpu_op, or the GPU event itself when synthetic */
    uint32_t gpu;
    uint32_t launch;
    uint32_t pseudo;        /* the owner's pseudo op taking this event, 0 for none */
} gpu_rec;

static int rec_cmp(const void *a, const void *b)
{
    const gpu_rec *x = a, *y = b;
    if (x->key_ts != y->key_ts)
        return (x->key_ts > y->key_ts) - (x->key_ts < y->key_ts);
    if (x->owner != y->owner)
        return (x->owner > y->owner) - (x->owner < y->owner);
    if (x->pseudo != y->pseudo)
        return (x->pseudo > y->pseudo) - (x->pseudo < y->pseudo);
    if (x->gpu_ts != y->gpu_ts)
        return (x->gpu_ts > y->gpu_ts) - (x->gpu_ts < y->gpu_ts);
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/* Resolves one GPU event: its launch (correlation, else ac2g flows) and the
 * op owning it (the launch's owner in the call tree; with no launch, the
 * cpu_op with the event's External id, as if the launch sat right under it). */
static int resolve_gpu(link_ctx *c, uint32_t g, gpu_rec *r, opm_trace_link *l, opm_error *err)
{
    const opm_tev *e = &c->ev[g];
    uint32_t launch = e->correlation == OPM_NO_ID ? OPM_NONE32
                                                   : idmap_get(&c->launch_by_corr, e->correlation);
    uint32_t owner = OPM_NONE32;
    if (launch == OPM_NONE32) {
        if (!c->fallbacks_ready && build_fallbacks(c, err))
            return -1;
        launch = launch_by_flow(c, e);
    }
    if (launch != OPM_NONE32) {
        owner = c->own[launch];
        if (owner == OPM_NONE32 && !(c->flag[launch] & EVF_COUNTED)) {
            c->flag[launch] |= EVF_COUNTED;
            l->launches_without_op++;
        }
    } else {
        l->gpu_without_launch++;
        uint32_t op = e->external_id == OPM_NO_ID ? OPM_NONE32 : idmap_get(&c->op_by_ext, e->external_id);
        if (op != OPM_NONE32)
            owner = c->own[op];
    }
    r->gpu = g;
    r->gpu_ts = e->ts_ns;
    r->launch = launch;
    r->pseudo = 0;
    if (owner != OPM_NONE32) {
        r->owner = owner;
        r->key_ts = c->ev[owner].ts_ns;
        if (has_pseudo(c, c->ev[owner].name))
            r->pseudo = (uint32_t)opm_trace_pseudo_op(opm_trace_str(c->t, c->ev[owner].name),
                                                      opm_trace_str(c->t, e->name));
    } else {
        /* Synthetic: each GPU event is its own instance. */
        r->owner = g;
        r->key_ts = launch != OPM_NONE32 ? c->ev[launch].ts_ns : e->ts_ns;
    }
    return 0;
}

/* Backward ops: the nearest cpu_op at or above the owner that carries a
 * Sequence number decides.  If it is a backward node (named
 * "autograd::engine::evaluate_function: ..." or "...Backward...") the
 * instance links to the forward op with that number; if it is any other op
 * (a forward op, including one recomputed inside backward by activation
 * checkpointing, which carries its own number) the instance is not a
 * backward op. */
static uint32_t forward_of(link_ctx *c, uint32_t op)
{
    uint32_t s = c->seqnode[op];
    if (s == OPM_NONE32 || !(name_flags(c, c->ev[s].name) & NMF_BWD))
        return OPM_NONE32;
    return idmap_get(&c->fwd_by_seq, c->ev[s].seq);
}

static int build_instances(link_ctx *c, gpu_rec *rec, size_t n_gpu, opm_trace_link *l,
                           opm_error *err)
{
    qsort(rec, n_gpu, sizeof *rec, rec_cmp);
    size_t n_inst = 0;
    for (size_t k = 0; k < n_gpu; k++)
        n_inst += k == 0 || rec[k].owner != rec[k - 1].owner || rec[k].pseudo != rec[k - 1].pseudo;
    l->gpu = malloc((n_gpu ? n_gpu : 1) * sizeof *l->gpu);
    l->inst = malloc((n_inst ? n_inst : 1) * sizeof *l->inst);
    if (!l->gpu || !l->inst)
        return opm_err(err, OPM_ENOMEM, "", "out of memory for %zu op instances", n_inst);
    l->n_gpu = n_gpu;
    l->n_inst = 0;
    for (size_t k = 0; k < n_gpu;) {
        size_t end = k + 1;
        while (end < n_gpu && rec[end].owner == rec[k].owner && rec[end].pseudo == rec[k].pseudo)
            end++;
        opm_link_instance *in = &l->inst[l->n_inst++];
        int synthetic = rec[k].owner == rec[k].gpu;
        in->cpu_ev = synthetic ? OPM_NONE32 : rec[k].owner;
        in->name = c->ev[rec[k].owner].name;
        /* A pseudo op is not the owner's op: no table entry, no model. */
        in->entry = synthetic || rec[k].pseudo ? NULL : entry_of(c, in->name);
        in->pseudo = rec[k].pseudo;
        in->gpu_first = (uint32_t)k;
        in->gpu_count = (uint32_t)(end - k);
        in->gpu_start_ns = rec[k].gpu_ts;
        in->fwd_cpu_ev = synthetic ? OPM_NONE32 : forward_of(c, rec[k].owner);
        in->launch_ev = synthetic ? rec[k].launch : OPM_NONE32;
        sweep w = {0, 0, 0, 0};     /* the records are in start order */
        for (size_t j = k; j < end; j++) {
            l->gpu[j] = rec[j].gpu;
            sweep_add(&w, c->ev[rec[j].gpu].ts_ns, ev_end(&c->ev[rec[j].gpu]));
        }
        in->busy_ns = sweep_total(&w);
        k = end;
    }
    return 0;
}

/* ---- Timeline ---- */

static int gpu_kind(link_ctx *c, const opm_tev *e)
{
    if (e->cls != OPM_EV_KERNEL)
        return 2;
    return (name_flags(c, e->name) & NMF_COMM) ? 1 : 0;
}

/* Over every kernel, memcpy and memset in the trace (not gpu_user_annotation):
 * comm = kernels the category table files under comm, memcpy = memcpy and memset, compute =
 * every other kernel; wall = first start to last end; exposed comm = comm
 * not under compute; exposed memcpy = memcpy under neither.  (TraceLens
 * counts memsets as computation and leaves out GPU events it could not tie
 * to a launch through ac2g flows.) */
static int build_timeline(link_ctx *c, size_t n_gpu, opm_trace_timeline *tl, opm_error *err)
{
    memset(tl, 0, sizeof *tl);
    if (n_gpu == 0)
        return 0;
    int64_t *all = malloc(2 * n_gpu * sizeof *all);
    int64_t *part = malloc(2 * n_gpu * sizeof *part);
    if (!all || !part) {
        free(all);
        free(part);
        return opm_err(err, OPM_ENOMEM, "", "out of memory for the GPU timeline");
    }
    /* part holds three lists back to back: compute, comm, memcpy. */
    size_t cnt[3] = {0, 0, 0}, at[3];
    for (size_t i = 0; i < c->n; i++)
        if (opm_ev_is_gpu(c->ev[i].cls))
            cnt[gpu_kind(c, &c->ev[i])]++;
    at[0] = 0;
    at[1] = cnt[0];
    at[2] = cnt[0] + cnt[1];
    size_t n_all = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < c->n; i++) {
        const opm_tev *e = &c->ev[i];
        if (!opm_ev_is_gpu(e->cls))
            continue;
        int64_t s = e->ts_ns, end = ev_end(e);
        first = s < first ? s : first;
        last = end > last ? end : last;
        all[2 * n_all] = s;
        all[2 * n_all + 1] = end;
        n_all++;
        size_t k = at[gpu_kind(c, e)]++;
        part[2 * k] = s;
        part[2 * k + 1] = end;
    }
    int64_t *cp = part, *cm = part + 2 * cnt[0], *mc = cm + 2 * cnt[1];
    size_t n_cp = iv_merge(cp, cnt[0]), n_cm = iv_merge(cm, cnt[1]), n_mc = iv_merge(mc, cnt[2]);
    int64_t busy = iv_total(all, iv_merge(all, n_all));
    int64_t compute = iv_total(cp, n_cp), comm = iv_total(cm, n_cm), mem = iv_total(mc, n_mc);
    int64_t exposed_comm = comm - iv_overlap(cm, n_cm, cp, n_cp);
    /* compute ∪ comm, reusing `all` (its busy total is taken). */
    memcpy(all, cp, 2 * n_cp * sizeof *all);
    memcpy(all + 2 * n_cp, cm, 2 * n_cm * sizeof *all);
    size_t n_cc = iv_merge(all, n_cp + n_cm);
    int64_t exposed_mem = mem - iv_overlap(mc, n_mc, all, n_cc);
    int64_t wall = last > first ? last - first : 0;
    tl->wall_s = (double)wall / 1e9;
    tl->busy_s = (double)busy / 1e9;
    tl->idle_s = (double)(wall - busy) / 1e9;
    tl->compute_s = (double)compute / 1e9;
    tl->comm_s = (double)comm / 1e9;
    tl->memcpy_s = (double)mem / 1e9;
    tl->exposed_comm_s = (double)exposed_comm / 1e9;
    tl->exposed_memcpy_s = (double)exposed_mem / 1e9;
    free(all);
    free(part);
    return 0;
}

/* ---- Entry points ---- */

static void ctx_free(link_ctx *c)
{
    free(c->parent);
    free(c->own);
    free(c->seqnode);
    free(c->flag);
    free(c->host);
    free(c->entry);
    free(c->nflag);
    idmap_free(&c->launch_by_corr);
    idmap_free(&c->fwd_by_seq);
    idmap_free(&c->op_by_ext);
    idmap_free(&c->sflow_by_id);
    free(c->fflow_slots);
}

void opm_trace_link_free(opm_trace_link *l)
{
    if (!l)
        return;
    free(l->inst);
    free(l->gpu);
    free(l);
}

static int ctx_init(link_ctx *c, const opm_trace *t, opm_error *err)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->ev = t->ev;
    c->n = t->n_ev;
    size_t n = c->n ? c->n : 1, ns = t->strings.count ? t->strings.count : 1;
    keyrange rl = {0, 0, 0}, rq = {0, 0, 0};
    for (size_t i = 0; i < c->n; i++) {
        const opm_tev *e = &c->ev[i];
        c->n_host += is_host(e->cls);
        c->n_gpu += opm_ev_is_gpu(e->cls);
        if (e->cls == OPM_EV_LAUNCH && e->correlation != OPM_NO_ID)
            keyrange_add(&rl, e->correlation);
        if (e->cls == OPM_EV_CPU_OP && e->seq != OPM_NO_ID)
            keyrange_add(&rq, e->seq);
    }
    c->parent = malloc(n * sizeof *c->parent);
    c->own = malloc(n * sizeof *c->own);
    c->seqnode = malloc(n * sizeof *c->seqnode);
    c->flag = calloc(n, sizeof *c->flag);
    c->host = malloc((c->n_host ? c->n_host : 1) * sizeof *c->host);
    c->entry = calloc(ns, sizeof *c->entry);
    c->nflag = calloc(ns, sizeof *c->nflag);
    if (!c->parent || !c->own || !c->seqnode || !c->flag || !c->host || !c->entry ||
        !c->nflag || idmap_init(&c->launch_by_corr, rl.n, rl.lo, rl.hi) ||
        idmap_init(&c->fwd_by_seq, rq.n, rq.lo, rq.hi))
        return opm_err(err, OPM_ENOMEM, "", "out of memory linking %zu events", c->n);
    memset(c->parent, 0xff, n * sizeof *c->parent);
    memset(c->own, 0xff, n * sizeof *c->own);
    memset(c->seqnode, 0xff, n * sizeof *c->seqnode);
    for (size_t i = 0; i < c->n; i++) {
        const opm_tev *e = &c->ev[i];
        /* Correlation ids are unique per launch; on a clash the first
         * launch in the file keeps the id. */
        if (e->cls == OPM_EV_LAUNCH && e->correlation != OPM_NO_ID) {
            uint32_t *v = idmap_put(&c->launch_by_corr, e->correlation);
            if (*v == OPM_NONE32)
                *v = (uint32_t)i;
        }
    }
    return 0;
}

opm_trace_link *opm_trace_link_build(const opm_trace *t, opm_error *err)
{
    if (!t) {
        opm_err(err, OPM_EINVAL, "", "no trace to link");
        return NULL;
    }
    if (t->n_ev >= OPM_NONE32) {
        opm_err(err, OPM_EOVERFLOW, "", "%zu events: linking handles at most %u", t->n_ev,
                (unsigned)(OPM_NONE32 - 1));
        return NULL;
    }
    opm_trace_link *l = calloc(1, sizeof *l);
    link_ctx c;
    gpu_rec *rec = NULL;
    int rc = ctx_init(&c, t, err);
    if (!l && !rc)
        rc = opm_err(err, OPM_ENOMEM, "", "out of memory");
    if (!rc)
        rc = order_host(&c, err);
    if (!rc)
        rc = build_tree(&c, err);
    size_t n_gpu = c.n_gpu;
    if (!rc) {
        rec = malloc((n_gpu ? n_gpu : 1) * sizeof *rec);
        if (!rec)
            rc = opm_err(err, OPM_ENOMEM, "", "out of memory for %zu GPU events", n_gpu);
    }
    for (size_t i = 0, k = 0; !rc && i < c.n; i++)
        if (opm_ev_is_gpu(c.ev[i].cls))
            rc = resolve_gpu(&c, (uint32_t)i, &rec[k++], l, err);
    if (!rc)
        rc = build_instances(&c, rec, n_gpu, l, err);
    if (!rc)
        rc = build_timeline(&c, n_gpu, &l->timeline, err);
    free(rec);
    ctx_free(&c);
    if (rc) {
        opm_trace_link_free(l);
        return NULL;
    }
    return l;
}
