/* analyze.c — from linked op instances to the report: instances grouped by
 * (name, Input Dims, Input type, Input Strides, Concrete Inputs), each group
 * recognised and counted once, predicted on the hardware once, then ordered
 * by measured kernel time; the category breakdown, the timeline the linker
 * measured, and the groups ordered by time lost to the roofline.
 *
 * Everything the report hands out is copied into it (the trace may be freed
 * first), and the report is never modified after opm_trace_report_new, so
 * any number of threads may read it.  Kernel times are summed as integer
 * nanoseconds and turned into seconds once, so sums do not depend on order. */
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "trace_internal.h"

static const char *const category_names[OPM_TCAT_COUNT] = {
    "gemm", "attention", "conv", "norm", "elementwise", "reduce", "comm", "memcpy", "other",
};

const char *opm_trace_category_name(opm_trace_category c)
{
    return (unsigned)c < OPM_TCAT_COUNT ? category_names[c] : "?";
}

/* ---- opm_u64map: a 64-bit key → dense index map (trace_internal.h) ---- */

void opm_u64map_free(opm_u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static int u64map_rehash(opm_u64map *m, size_t nslots)
{
    uint64_t *keys = malloc(nslots * sizeof *keys);
    uint32_t *vals = calloc(nslots, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->nslots; i++) {
        if (!m->vals[i])
            continue;
        size_t j = (size_t)opm_hash_mix64(m->keys[i]) & (nslots - 1);
        while (vals[j])
            j = (j + 1) & (nslots - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->nslots = nslots;
    return 0;
}

int opm_u64map_get_or_add(opm_u64map *m, uint64_t key, uint32_t fresh, uint32_t *index, int *added)
{
    if ((m->count + 1) * 2 > m->nslots && u64map_rehash(m, m->nslots ? m->nslots * 2 : 64))
        return -1;
    size_t j = (size_t)opm_hash_mix64(key) & (m->nslots - 1);
    while (m->vals[j]) {
        if (m->keys[j] == key) {
            *index = m->vals[j] - 1;
            *added = 0;
            return 0;
        }
        j = (j + 1) & (m->nslots - 1);
    }
    m->keys[j] = key;
    m->vals[j] = fresh + 1;
    m->count++;
    *index = fresh;
    *added = 1;
    return 0;
}

/* ---- Groups under construction ---- */

/* Synthetic instances (GPU work no CPU op launched) are kept apart from a
 * CPU op that happens to carry the same name and no arguments, and by the
 * name of the launch that queued them (part of the name they are shown
 * under). */
typedef struct group_key {
    uint32_t name, dims, types, strides, concrete, synthetic, launch;
    uint32_t pseudo;            /* opm_trace_pseudo_op index, 0 for none */
} group_key;

typedef struct group_acc {
    group_key key;
    const opm_trace_op_entry *entry;
    uint64_t count;
    uint64_t training;          /* instances autograd recorded in a forward pass */
    int64_t busy_ns;
} group_acc;

/* One (group, GPU event name) pair with the summed duration of its events. */
typedef struct kernel_acc {
    uint32_t group;
    uint32_t name;
    const char *text;
    int cls;
    int64_t dur_ns;
} kernel_acc;

/* One (group, forward op name) pair: how many instances link to it. */
typedef struct fwd_acc {
    uint32_t group;
    const char *text;
    uint64_t count;
} fwd_acc;

typedef struct builder {
    const opm_trace *t;
    const opm_trace_link *link;
    opm_trace_report *r;
    group_acc *groups;
    size_t n_groups, cap_groups;
    uint32_t *slots;            /* group index + 1, open addressing on group_key */
    size_t nslots;
    uint32_t *inst_group;       /* per link instance */
    kernel_acc *kern;
    size_t n_kern, cap_kern;
    fwd_acc *fwd;
    size_t n_fwd, cap_fwd;
    opm_u64map owned_ids;       /* trace string id → index in r->owned */
} builder;

static uint64_t key_hash(const group_key *k)
{
    uint64_t h = opm_hash_mix64(((uint64_t)k->name << 32) | k->dims);
    h = opm_hash_mix64(h ^ (((uint64_t)k->types << 32) | k->strides));
    h = opm_hash_mix64(h ^ (((uint64_t)k->concrete << 32) | k->synthetic));
    return opm_hash_mix64(h ^ k->launch ^ ((uint64_t)k->pseudo << 32));
}

static int key_equal(const group_key *a, const group_key *b)
{
    return a->name == b->name && a->dims == b->dims && a->types == b->types &&
           a->strides == b->strides && a->concrete == b->concrete &&
           a->synthetic == b->synthetic && a->launch == b->launch && a->pseudo == b->pseudo;
}

static int slots_rehash(builder *b, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t g = 0; g < b->n_groups; g++) {
        size_t j = (size_t)key_hash(&b->groups[g].key) & (nslots - 1);
        while (slots[j])
            j = (j + 1) & (nslots - 1);
        slots[j] = (uint32_t)g + 1;
    }
    free(b->slots);
    b->slots = slots;
    b->nslots = nslots;
    return 0;
}

static int find_group(builder *b, const group_key *k, const opm_trace_op_entry *entry,
                      uint32_t *index, opm_error *err)
{
    if ((b->n_groups + 1) * 2 > b->nslots && slots_rehash(b, b->nslots ? b->nslots * 2 : 64))
        return opm_err(err, OPM_ENOMEM, "", "out of memory grouping op instances");
    size_t j = (size_t)key_hash(k) & (b->nslots - 1);
    while (b->slots[j]) {
        uint32_t g = b->slots[j] - 1;
        if (key_equal(&b->groups[g].key, k)) {
            *index = g;
            return 0;
        }
        j = (j + 1) & (b->nslots - 1);
    }
    if (b->n_groups >= OPM_NONE32 - 1)
        return opm_err(err, OPM_EOVERFLOW, "", "more than 2^32 op groups");
    if (opm_array_grow((void **)&b->groups, &b->cap_groups, b->n_groups + 1, sizeof *b->groups))
        return opm_err(err, OPM_ENOMEM, "", "out of memory grouping op instances");
    group_acc *g = &b->groups[b->n_groups];
    memset(g, 0, sizeof *g);
    g->key = *k;
    g->entry = entry;
    b->slots[j] = (uint32_t)b->n_groups + 1;
    *index = (uint32_t)b->n_groups++;
    return 0;
}

static void instance_key(const opm_trace *t, const opm_link_instance *li, group_key *k)
{
    memset(k, 0, sizeof *k);
    k->name = li->name;
    k->launch = OPM_NONE32;
    k->pseudo = li->pseudo;
    if (li->cpu_ev == OPM_NONE32 || li->cpu_ev >= t->n_ev) {
        k->synthetic = 1;
        if (li->launch_ev != OPM_NONE32 && li->launch_ev < t->n_ev)
            k->launch = t->ev[li->launch_ev].name;
        return;
    }
    uint32_t a = t->ev[li->cpu_ev].args;
    if (a == OPM_NONE32 || a >= t->n_args)
        return;
    k->dims = t->call_args[a].input_dims;
    k->types = t->call_args[a].input_types;
    k->strides = t->call_args[a].input_strides;
    k->concrete = t->call_args[a].concrete_inputs;
}

/* ---- Step 1: instances into groups; kernel and forward tallies ---- */

/* An op autograd recorded (it carries a Sequence number) that is not a
 * backward op (not linked to a forward op): a training forward, whose
 * norms write their saved statistics.  Ops recomputed inside backward by
 * activation checkpointing carry their own number and count as forward,
 * as link.c treats them. */
static int is_training(const opm_trace *t, const opm_link_instance *li)
{
    if (li->cpu_ev == OPM_NONE32 || li->cpu_ev >= t->n_ev)
        return 0;
    return t->ev[li->cpu_ev].seq != OPM_NO_ID && li->fwd_cpu_ev == OPM_NONE32;
}

/* Sum of durations that may overlap (events of one kernel name, instances
 * of one group): each fits in int64, their sum need not; it saturates. */
static int64_t add_ns(int64_t sum, int64_t d)
{
    if (d <= 0)
        return sum;
    return sum > INT64_MAX - d ? INT64_MAX : sum + d;
}

static int tally_kernels(builder *b, uint32_t g, const opm_link_instance *li, opm_u64map *kmap,
                         opm_error *err)
{
    const opm_trace *t = b->t;
    for (uint32_t j = 0; j < li->gpu_count; j++) {
        size_t gi = (size_t)li->gpu_first + j;
        if (gi >= b->link->n_gpu || b->link->gpu[gi] >= t->n_ev)
            continue;
        const opm_tev *e = &t->ev[b->link->gpu[gi]];
        uint32_t k;
        int added;
        if (opm_u64map_get_or_add(kmap, ((uint64_t)g << 32) | e->name, (uint32_t)b->n_kern, &k, &added))
            return opm_err(err, OPM_ENOMEM, "", "out of memory summing kernel times");
        if (added) {
            if (opm_array_grow((void **)&b->kern, &b->cap_kern, b->n_kern + 1, sizeof *b->kern))
                return opm_err(err, OPM_ENOMEM, "", "out of memory summing kernel times");
            b->kern[b->n_kern++] = (kernel_acc){ g, e->name, opm_trace_str(t, e->name), e->cls, 0 };
        }
        b->kern[k].dur_ns = add_ns(b->kern[k].dur_ns, e->dur_ns);
    }
    return 0;
}

static int tally_forward(builder *b, uint32_t g, const opm_link_instance *li, opm_u64map *fmap,
                         opm_error *err)
{
    const opm_trace *t = b->t;
    if (li->fwd_cpu_ev == OPM_NONE32 || li->fwd_cpu_ev >= t->n_ev)
        return 0;
    uint32_t name = t->ev[li->fwd_cpu_ev].name;
    uint32_t k;
    int added;
    if (opm_u64map_get_or_add(fmap, ((uint64_t)g << 32) | name, (uint32_t)b->n_fwd, &k, &added))
        return opm_err(err, OPM_ENOMEM, "", "out of memory linking backward ops");
    if (added) {
        if (opm_array_grow((void **)&b->fwd, &b->cap_fwd, b->n_fwd + 1, sizeof *b->fwd))
            return opm_err(err, OPM_ENOMEM, "", "out of memory linking backward ops");
        b->fwd[b->n_fwd++] = (fwd_acc){ g, opm_trace_str(t, name), 0 };
    }
    b->fwd[k].count++;
    return 0;
}

static int group_instances(builder *b, opm_error *err)
{
    const opm_trace_link *link = b->link;
    opm_u64map kmap = {0}, fmap = {0};
    int rc = 0;
    if (link->n_inst) {
        b->inst_group = malloc(link->n_inst * sizeof *b->inst_group);
        if (!b->inst_group)
            return opm_err(err, OPM_ENOMEM, "", "out of memory for %zu op instances", link->n_inst);
    }
    for (size_t i = 0; i < link->n_inst && rc == 0; i++) {
        const opm_link_instance *li = &link->inst[i];
        group_key k;
        uint32_t g = 0;
        instance_key(b->t, li, &k);
        rc = find_group(b, &k, li->entry, &g, err);
        if (rc)
            break;
        b->inst_group[i] = g;
        b->groups[g].count++;
        b->groups[g].training += is_training(b->t, li);
        b->groups[g].busy_ns = add_ns(b->groups[g].busy_ns, li->busy_ns);
        rc = tally_kernels(b, g, li, &kmap, err);
        if (rc == 0)
            rc = tally_forward(b, g, li, &fmap, err);
    }
    opm_u64map_free(&kmap);
    opm_u64map_free(&fmap);
    return rc;
}

/* ---- Step 2: each group recognised, counted and predicted once ---- */

static int own(opm_trace_report *r, void *p)
{
    if (!p)
        return -1;
    if (opm_array_grow((void **)&r->owned, &r->cap_owned, r->n_owned + 1, sizeof *r->owned)) {
        free(p);
        return -1;
    }
    r->owned[r->n_owned++] = p;
    return 0;
}

/* The report's copy of trace string `id`, made once however many groups
 * use it. */
static const char *own_trace_str(builder *b, uint32_t id)
{
    opm_trace_report *r = b->r;
    uint32_t k;
    int added;
    if (opm_u64map_get_or_add(&b->owned_ids, id, (uint32_t)r->n_owned, &k, &added))
        return NULL;
    if (!added)
        return r->owned[k];
    if (own(r, strdup(opm_trace_str(b->t, id)))) {
        /* Forget the id: the slot would point past the owned list. */
        opm_u64map_free(&b->owned_ids);
        return NULL;
    }
    return r->owned[k];
}

static int cmp_kernel(const void *pa, const void *pb)
{
    const kernel_acc *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->dur_ns != b->dur_ns)
        return a->dur_ns > b->dur_ns ? -1 : 1;
    return strcmp(a->text, b->text);
}

static int cmp_fwd(const void *pa, const void *pb)
{
    const fwd_acc *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return strcmp(a->text, b->text);
}

/* Kernel names of every group, most time first (b->kern sorted by group). */
static int fill_kernel_names(builder *b, opm_error *err)
{
    opm_trace_report *r = b->r;
    size_t i = 0;
    while (i < b->n_kern) {
        size_t end = i;
        while (end < b->n_kern && b->kern[end].group == b->kern[i].group)
            end++;
        const char **names = malloc((end - i) * sizeof *names);
        if (own(r, (void *)names))
            return opm_err(err, OPM_ENOMEM, "", "out of memory listing kernel names");
        for (size_t j = i; j < end; j++) {
            names[j - i] = own_trace_str(b, b->kern[j].name);
            if (!names[j - i])
                return opm_err(err, OPM_ENOMEM, "", "out of memory listing kernel names");
        }
        opm_trace_group *g = &r->groups[b->kern[i].group];
        g->kernel_names = names;
        g->kernel_name_count = end - i;
        i = end;
    }
    return 0;
}

static int fill_forward_names(builder *b, opm_error *err)
{
    for (size_t i = 0; i < b->n_fwd; i++) {
        if (i > 0 && b->fwd[i].group == b->fwd[i - 1].group)
            continue;   /* sorted: the first of each group is the most common */
        opm_trace_group *g = &b->r->groups[b->fwd[i].group];
        char *s = strdup(b->fwd[i].text);
        if (own(b->r, s))
            return opm_err(err, OPM_ENOMEM, "", "out of memory naming forward ops");
        g->forward_name = s;
    }
    return 0;
}

/* Category of an op no table entry describes: that of its dominant kernel. */
static opm_trace_category dominant_category(const builder *b, uint32_t group)
{
    /* b->kern is sorted by group, then time: binary search the first. */
    size_t lo = 0, hi = b->n_kern;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->kern[mid].group < group)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < b->n_kern && b->kern[lo].group == group)
        return opm_trace_kernel_category(b->kern[lo].text, b->kern[lo].cls);
    return OPM_TCAT_OTHER;
}

static int recognise(const builder *b, const group_acc *ga, const char *name, opm_trace_recog *rec,
                     opm_error *err)
{
    const opm_trace *t = b->t;
    opm_trace_call call = {
        .name = name,
        .input_dims = opm_trace_str(t, ga->key.dims),
        .input_types = opm_trace_str(t, ga->key.types),
        .input_strides = opm_trace_str(t, ga->key.strides),
        .concrete_inputs = opm_trace_str(t, ga->key.concrete),
        /* One op for the whole group: as most of its instances ran. */
        .training = ga->training * 2 >= ga->count && ga->training > 0,
    };
    memset(rec, 0, sizeof *rec);
    if (ga->entry) {
        int rc = opm_trace_recognize(ga->entry, &call, rec, err);
        if ((rc == 0 && rec->params_json) || rc == OPM_ENOMEM)
            return rc;
        /* A count that overflows: list the op without a model rather than
         * lose the report. */
        opm_op_free(rec->op);
        free(rec->params_json);
        memset(rec, 0, sizeof *rec);
    }
    /* An entry with no builder gives the raw call arguments as params, in
     * the recogniser's own format. */
    const opm_trace_op_entry raw = { call.name, OPM_TCAT_OTHER, OPM_CLAIM_INNER, NULL };
    int rc = opm_trace_recognize(&raw, &call, rec, err);
    if (rc == 0 && !rec->params_json)
        rc = opm_err(err, OPM_ENOMEM, "", "out of memory");
    return rc;
}

static void fill_counts(opm_trace_group *g, const opm_op *op, opm_counts *counts, int *ok)
{
    opm_error cerr;
    *ok = op && opm_op_count(op, counts, &cerr) == 0;
    if (!*ok)
        return;
    int fits = 1;
    g->has_kind = 1;
    g->kind = opm_op_kind(op);
    g->phase = opm_op_phase(op);
    g->flops = opm_add(counts->matrix_flops, counts->vector_flops, &fits);
    g->bytes = opm_add(counts->read_bytes, counts->write_bytes, &fits);
    if (!fits) {
        /* Not representable as one number: report the op without counts. */
        g->has_kind = 0;
        g->flops = g->bytes = 0;
        *ok = 0;
        return;
    }
    g->flops_per_byte = g->bytes ? (double)g->flops / (double)g->bytes : 0.0;
    if (g->kernel_time_s > 0) {
        g->tflops_per_s = (double)g->flops * (double)g->count / g->kernel_time_s / 1e12;
        g->tb_per_s = (double)g->bytes * (double)g->count / g->kernel_time_s / 1e12;
    }
}

static void fill_roofline(opm_trace_group *g, const opm_op *op, const opm_counts *counts,
                          const opm_hardware *hw, const opm_model *model, double *peak)
{
    opm_profile prof;
    opm_error perr;
    /* A hardware without a peak for this dtype (or a model that does not
     * cover the kind) leaves the group without roofline columns. */
    if (model->predict(op, hw, &prof, &perr) != 0)
        return;
    g->has_roofline = 1;
    g->roofline_time_s = prof.latency_s;
    g->bound = prof.bound;
    g->pct_roofline = g->kernel_time_mean_s > 0 ? 100.0 * prof.latency_s / g->kernel_time_mean_s : 0.0;
    *peak = prof.engine == OPM_ENGINE_NONE
                ? 0.0
                : opm_hardware_peak_flops(hw, prof.engine, counts->compute_dtype);
}

/* GPU work no CPU op launched is shown as TraceLens shows it,
 * "<launch>-><kernel> (Synthetic Op)", so the two reports' rows line up;
 * "<kernel> (Synthetic Op)" when not even a launch was found. */
static const char *synthetic_name(builder *b, const group_key *k)
{
    static const char suffix[] = " (Synthetic Op)";
    const char *kernel = opm_trace_str(b->t, k->name);
    const char *launch = k->launch == OPM_NONE32 ? "" : opm_trace_str(b->t, k->launch);
    size_t ll = strlen(launch), kl = strlen(kernel);
    char *s = malloc(ll + 2 + kl + sizeof suffix);
    if (!s)
        return NULL;
    char *o = s;
    if (ll) {
        memcpy(o, launch, ll);
        memcpy(o + ll, "->", 2);
        o += ll + 2;
    }
    memcpy(o, kernel, kl);
    memcpy(o + kl, suffix, sizeof suffix);
    return own(b->r, s) ? NULL : s;
}

static int fill_group(builder *b, size_t gi, const opm_hardware *hw, const opm_model *model,
                      opm_error *err)
{
    const group_acc *ga = &b->groups[gi];
    opm_trace_group *g = &b->r->groups[gi];
    g->name = ga->key.synthetic ? synthetic_name(b, &ga->key)
            : ga->key.pseudo ? opm_trace_pseudo_op_name((int)ga->key.pseudo)   /* static */
            : own_trace_str(b, ga->key.name);
    g->input_dims = own_trace_str(b, ga->key.dims);
    g->input_types = own_trace_str(b, ga->key.types);
    g->input_strides = own_trace_str(b, ga->key.strides);
    g->concrete_inputs = own_trace_str(b, ga->key.concrete);
    if (!g->name || !g->input_dims || !g->input_types || !g->input_strides || !g->concrete_inputs)
        return opm_err(err, OPM_ENOMEM, "", "out of memory copying op names");
    g->count = ga->count;
    g->kernel_time_s = (double)ga->busy_ns / 1e9;
    g->kernel_time_mean_s = g->count ? g->kernel_time_s / (double)g->count : 0.0;
    g->phase = OPM_PHASE_INFERENCE;
    g->category = ga->entry ? ga->entry->category : dominant_category(b, (uint32_t)gi);

    opm_trace_recog rec;
    int rc = recognise(b, ga, g->name, &rec, err);
    if (rc)
        return rc;
    if (own(b->r, rec.params_json)) {
        opm_op_free(rec.op);
        return opm_err(err, OPM_ENOMEM, "", "out of memory");
    }
    g->params_json = rec.params_json;
    opm_counts counts;
    int counted;
    fill_counts(g, rec.op, &counts, &counted);
    if (counted && hw)
        fill_roofline(g, rec.op, &counts, hw, model, &b->r->group_peak_flops_per_s[gi]);
    opm_op_free(rec.op);
    return 0;
}

/* ---- Step 3: order, instances, categories, gap order ---- */

typedef struct group_rank {
    size_t index;
    int64_t busy_ns;
    const opm_trace_group *g;
} group_rank;

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_rank(const void *pa, const void *pb)
{
    const group_rank *a = pa, *b = pb;
    if (a->busy_ns != b->busy_ns)
        return a->busy_ns > b->busy_ns ? -1 : 1;
    int c = cmp_str(a->g->name, b->g->name);
    if (!c)
        c = cmp_str(a->g->params_json, b->g->params_json);
    if (!c)
        c = cmp_str(a->g->input_dims, b->g->input_dims);
    if (!c)
        c = cmp_str(a->g->input_types, b->g->input_types);
    if (!c)
        c = cmp_str(a->g->input_strides, b->g->input_strides);
    if (!c)
        c = cmp_str(a->g->concrete_inputs, b->g->concrete_inputs);
    if (!c)
        c = a->index < b->index ? -1 : a->index > b->index;   /* synthetic vs CPU op */
    return c;
}

static int sort_groups(builder *b, opm_error *err)
{
    opm_trace_report *r = b->r;
    size_t n = r->n_groups;
    if (n == 0)
        return 0;
    group_rank *rank = malloc(n * sizeof *rank);
    size_t *new_of_old = malloc(n * sizeof *new_of_old);
    opm_trace_group *groups = malloc(n * sizeof *groups);
    double *peaks = malloc(n * sizeof *peaks);
    if (!rank || !new_of_old || !groups || !peaks) {
        free(rank);
        free(new_of_old);
        free(groups);
        free(peaks);
        return opm_err(err, OPM_ENOMEM, "", "out of memory sorting groups");
    }
    for (size_t i = 0; i < n; i++)
        rank[i] = (group_rank){ i, b->groups[i].busy_ns, &r->groups[i] };
    qsort(rank, n, sizeof *rank, cmp_rank);
    for (size_t i = 0; i < n; i++) {
        new_of_old[rank[i].index] = i;
        groups[i] = r->groups[rank[i].index];
        peaks[i] = r->group_peak_flops_per_s[rank[i].index];
    }
    free(r->groups);
    free(r->group_peak_flops_per_s);
    r->groups = groups;
    r->group_peak_flops_per_s = peaks;
    for (size_t i = 0; i < b->link->n_inst; i++)
        b->inst_group[i] = (uint32_t)new_of_old[b->inst_group[i]];
    free(rank);
    free(new_of_old);
    return 0;
}

static int fill_instances(builder *b, opm_error *err)
{
    const opm_trace *t = b->t;
    const opm_trace_link *link = b->link;
    opm_trace_report *r = b->r;
    if (link->n_inst == 0)
        return 0;
    r->inst = calloc(link->n_inst, sizeof *r->inst);
    if (!r->inst)
        return opm_err(err, OPM_ENOMEM, "", "out of memory for %zu op instances", link->n_inst);
    r->n_inst = link->n_inst;
    for (size_t i = 0; i < link->n_inst; i++) {
        const opm_link_instance *li = &link->inst[i];
        opm_trace_instance *in = &r->inst[i];
        in->group = b->inst_group[i];
        in->gpu_start_s = (double)li->gpu_start_ns / 1e9;
        in->kernel_time_s = (double)(li->busy_ns > 0 ? li->busy_ns : 0) / 1e9;
        in->gpu_event_count = li->gpu_count;
        in->sequence_number = -1;
        if (li->cpu_ev != OPM_NONE32 && li->cpu_ev < t->n_ev) {
            const opm_tev *e = &t->ev[li->cpu_ev];
            in->cpu_start_s = (double)e->ts_ns / 1e9;
            in->cpu_dur_s = (double)e->dur_ns / 1e9;
            if (e->seq != OPM_NO_ID)
                in->sequence_number = e->seq;
        } else {
            /* No host event launched it: it starts where its GPU work does. */
            in->cpu_start_s = in->gpu_start_s;
        }
    }
    return 0;
}

static void fill_categories(opm_trace_report *r)
{
    opm_trace_category_time all[OPM_TCAT_COUNT];
    double total_s = 0;
    memset(all, 0, sizeof all);
    for (size_t i = 0; i < r->n_groups; i++) {
        const opm_trace_group *g = &r->groups[i];
        size_t c = (unsigned)g->category < OPM_TCAT_COUNT ? (size_t)g->category : OPM_TCAT_OTHER;
        all[c].count += g->count;
        all[c].kernel_time_s += g->kernel_time_s;
        total_s += g->kernel_time_s;
    }
    r->n_cats = 0;
    for (size_t c = 0; c < OPM_TCAT_COUNT; c++) {
        if (all[c].count == 0)
            continue;
        all[c].category = (opm_trace_category)c;
        all[c].share = total_s > 0 ? all[c].kernel_time_s / total_s : 0.0;
        r->cats[r->n_cats++] = all[c];
    }
}

typedef struct gap_rank {
    size_t index;
    double gap_s;
} gap_rank;

static int cmp_gap(const void *pa, const void *pb)
{
    const gap_rank *a = pa, *b = pb;
    if (a->gap_s != b->gap_s)
        return a->gap_s > b->gap_s ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int fill_gap_order(opm_trace_report *r, opm_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_groups; i++)
        n += r->groups[i].has_roofline != 0;
    if (n == 0)
        return 0;
    gap_rank *rank = malloc(n * sizeof *rank);
    r->gap_order = malloc(n * sizeof *r->gap_order);
    if (!rank || !r->gap_order) {
        free(rank);
        return opm_err(err, OPM_ENOMEM, "", "out of memory ordering groups by gap");
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n_groups; i++) {
        const opm_trace_group *g = &r->groups[i];
        if (g->has_roofline)
            rank[k++] = (gap_rank){ i, (double)g->count * (g->kernel_time_mean_s - g->roofline_time_s) };
    }
    qsort(rank, n, sizeof *rank, cmp_gap);
    for (size_t i = 0; i < n; i++)
        r->gap_order[i] = rank[i].index;
    r->n_gap = n;
    free(rank);
    return 0;
}

/* ---- The report ---- */

static int build(builder *b, const opm_hardware *hw, const opm_model *model, opm_error *err)
{
    opm_trace_report *r = b->r;
    int rc = group_instances(b, err);
    if (rc)
        return rc;
    size_t n = b->n_groups;
    /* One spare element: emitters may index these whatever n_groups is. */
    r->groups = calloc(n + 1, sizeof *r->groups);
    r->group_peak_flops_per_s = calloc(n + 1, sizeof *r->group_peak_flops_per_s);
    if (!r->groups || !r->group_peak_flops_per_s)
        return opm_err(err, OPM_ENOMEM, "", "out of memory for %zu op groups", n);
    r->n_groups = n;
    if (b->n_kern)
        qsort(b->kern, b->n_kern, sizeof *b->kern, cmp_kernel);
    if (b->n_fwd)
        qsort(b->fwd, b->n_fwd, sizeof *b->fwd, cmp_fwd);
    for (size_t gi = 0; gi < n; gi++) {
        rc = fill_group(b, gi, hw, model, err);
        if (rc)
            return rc;
    }
    static const char *const no_names[1] = { NULL };
    for (size_t gi = 0; gi < n; gi++)
        r->groups[gi].kernel_names = no_names;
    rc = fill_kernel_names(b, err);
    if (rc == 0)
        rc = fill_forward_names(b, err);
    if (rc == 0)
        rc = sort_groups(b, err);
    if (rc == 0)
        rc = fill_instances(b, err);
    if (rc == 0)
        rc = fill_gap_order(r, err);
    if (rc)
        return rc;
    fill_categories(r);
    r->timeline = b->link->timeline;
    if (hw) {
        const opm_memory_level *hbm = opm_hardware_find_level(hw, "hbm");
        r->hbm_bytes_per_s = hbm ? hbm->bandwidth_bytes_per_s : 0.0;
    }
    return 0;
}

static void builder_free(builder *b)
{
    free(b->groups);
    free(b->slots);
    free(b->inst_group);
    free(b->kern);
    free(b->fwd);
    opm_u64map_free(&b->owned_ids);
}

opm_trace_report *opm_trace_report_new(const opm_trace *t, const opm_hardware *hw,
                                       const char *model, opm_error *err)
{
    return opm_trace_report_new_with(NULL, t, hw, model, err);
}

opm_trace_report *opm_trace_report_new_with(const opm_registry *reg, const opm_trace *t, const opm_hardware *hw,
                                            const char *model, opm_error *err)
{
    opm_error_clear(err);
    if (!t) {
        opm_err(err, OPM_EINVAL, "trace", "no trace given");
        return NULL;
    }
    const char *model_name = model ? model : "roofline";
    const opm_model *m = opm_registry_find_model(reg, model_name);
    if (!m) {
        opm_err(err, OPM_ENOTFOUND, "model", "no model named '%s' (see `opmodel models`)",
                model_name);
        return NULL;
    }
    opm_trace_report *r = calloc(1, sizeof *r);
    if (!r) {
        opm_err(err, OPM_ENOMEM, "", "out of memory");
        return NULL;
    }
    r->source = strdup(t->source ? t->source : "");
    r->model = strdup(model_name);
    r->hardware = hw ? strdup(opm_hardware_name(hw)) : NULL;
    if (!r->source || !r->model || (hw && !r->hardware)) {
        opm_trace_report_free(r);
        opm_err(err, OPM_ENOMEM, "", "out of memory");
        return NULL;
    }
    opm_trace_link *link = opm_trace_link_build(t, err);
    if (!link) {
        opm_trace_report_free(r);
        return NULL;
    }
    builder b = { .t = t, .link = link, .r = r };
    int rc = build(&b, hw, m, err);
    if (!rc)
        rc = opm_trace_graph_time(t, &r->graph, err);
    builder_free(&b);
    opm_trace_link_free(link);
    if (rc) {
        opm_trace_report_free(r);
        return NULL;
    }
    return r;
}

void opm_trace_report_free(opm_trace_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_owned; i++)
        free(r->owned[i]);
    free(r->owned);
    free(r->source);
    free(r->hardware);
    free(r->model);
    free(r->group_peak_flops_per_s);
    free(r->groups);
    free(r->inst);
    free(r->gap_order);
    free(r);
}

/* ---- Accessors ---- */

double opm_trace_report_graph_time(const opm_trace_report *r, uint64_t *launches, uint64_t *gpu_events)
{
    if (launches)
        *launches = r->graph.launches;
    if (gpu_events)
        *gpu_events = r->graph.gpu_events;
    return (double)r->graph.busy_ns * 1e-9;
}

const char *opm_trace_report_source(const opm_trace_report *r)
{
    return r->source;
}

const char *opm_trace_report_hardware(const opm_trace_report *r)
{
    return r->hardware;
}

size_t opm_trace_report_group_count(const opm_trace_report *r)
{
    return r->n_groups;
}

const opm_trace_group *opm_trace_report_group(const opm_trace_report *r, size_t i)
{
    return i < r->n_groups ? &r->groups[i] : NULL;
}

size_t opm_trace_report_instance_count(const opm_trace_report *r)
{
    return r->n_inst;
}

const opm_trace_instance *opm_trace_report_instance(const opm_trace_report *r, size_t i)
{
    return i < r->n_inst ? &r->inst[i] : NULL;
}

size_t opm_trace_report_category_count(const opm_trace_report *r)
{
    return r->n_cats;
}

const opm_trace_category_time *opm_trace_report_category(const opm_trace_report *r, size_t i)
{
    return i < r->n_cats ? &r->cats[i] : NULL;
}

const opm_trace_timeline *opm_trace_report_timeline(const opm_trace_report *r)
{
    return &r->timeline;
}

size_t opm_trace_report_gap_order(const opm_trace_report *r, const size_t **order)
{
    if (order)
        *order = r->gap_order;
    return r->n_gap;
}
