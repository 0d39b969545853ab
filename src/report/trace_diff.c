/* trace_diff.c — two trace reports of one model side by side (contract §8):
 * the pairing of their groups, and the diff as JSON, CSV and a terminal
 * table.
 *
 * Pairing runs in three passes, each only over groups still alone:
 *   1. args:   same op name and the same recorded call arguments (Input
 *              Dims, types, strides, Concrete Inputs) — the report's own
 *              group key, so this is exact;
 *   2. params: same name and the same model parameters (the arguments may
 *              differ in what the model ignores, e.g. strides after a
 *              software update);
 *   3. place:  names differ (another vendor's kernel behind a synthetic
 *              op, flash vs. efficient attention): groups whose first
 *              instance sits at the same place in the GPU execution order,
 *              counted from the last instance of an already-paired group.
 *              The GPU order is used, not the host call tree, because
 *              synthetic groups (GPU work no CPU op launched) have no host
 *              event and are exactly the groups whose names differ most.
 * Anything left is reported on its side alone.  Every group of each
 * report is in exactly one entry, with that report's own count and kernel
 * time (the entries point at the report's groups), which is the
 * contract's invariant by construction.
 *
 * Sorting is by merging sorted index arrays (n log n) rather than hashing:
 * reports have at most some thousands of groups, and the same comparators
 * then also give a deterministic order for equal keys. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "opmodel/trace_diff.h"
#include "report_internal.h"

struct opm_trace_diff {
    const opm_trace_report *a, *b;
    opm_trace_diff_entry *groups;
    size_t n_groups;
    opm_trace_diff_cat cats[OPM_TCAT_COUNT];
    size_t n_cats;
};

const char *opm_trace_diff_match_name(opm_trace_diff_match m)
{
    static const char *const names[] = {"args", "params", "place", "a_only", "b_only"};
    return (unsigned)m < sizeof names / sizeof *names ? names[m] : "b_only";
}

/* ---- Pairing ---- */

/* One side while pairing: its report, the partner of each group (index on
 * the other side, SIZE_MAX: none yet) and how the pair was made. */
typedef struct side {
    const opm_trace_report *r;
    size_t *partner;
    opm_trace_diff_match *how;
    /* Place of each group's first instance (pass 3): the A-side index of
     * the last paired group before it, which instance of that group it
     * was, and how many instances came between. */
    size_t *anchor;
    uint64_t *anchor_occ, *offset;
    int *placed;
} side;

/* qsort has no context argument, so the comparators see the groups
 * through the index arrays' element type instead: each element carries
 * a pointer to its group. */
typedef struct gref {
    const opm_trace_group *g;
    size_t index;
    const side *s;
} gref;

static int cmp_s(const char *x, const char *y) { return strcmp(opm_report_str(x), opm_report_str(y)); }

static int cmp_args(const gref *x, const gref *y)
{
    int c;
    if ((c = cmp_s(x->g->name, y->g->name))) return c;
    if ((c = cmp_s(x->g->input_dims, y->g->input_dims))) return c;
    if ((c = cmp_s(x->g->input_types, y->g->input_types))) return c;
    if ((c = cmp_s(x->g->input_strides, y->g->input_strides))) return c;
    return cmp_s(x->g->concrete_inputs, y->g->concrete_inputs);
}

static int cmp_params(const gref *x, const gref *y)
{
    int c = cmp_s(x->g->name, y->g->name);
    return c ? c : cmp_s(x->g->params_json, y->g->params_json);
}

static int cmp_u64(uint64_t x, uint64_t y) { return x < y ? -1 : x > y; }

/* Place keys start with the category: a memset and a GEMM at one place
 * are two different things that happened there, not one renamed. */
static int cmp_place(const gref *x, const gref *y)
{
    int c;
    if ((c = cmp_u64((uint64_t)x->g->category, (uint64_t)y->g->category))) return c;
    if ((c = cmp_u64(x->s->anchor[x->index], y->s->anchor[y->index]))) return c;
    if ((c = cmp_u64(x->s->anchor_occ[x->index], y->s->anchor_occ[y->index]))) return c;
    return cmp_u64(x->s->offset[x->index], y->s->offset[y->index]);
}

/* Place without the offset: the second, looser place pass. */
static int cmp_anchor(const gref *x, const gref *y)
{
    int c;
    if ((c = cmp_u64((uint64_t)x->g->category, (uint64_t)y->g->category))) return c;
    if ((c = cmp_u64(x->s->anchor[x->index], y->s->anchor[y->index]))) return c;
    return cmp_u64(x->s->anchor_occ[x->index], y->s->anchor_occ[y->index]);
}

typedef int (*gcmp)(const gref *, const gref *);

/* Ties broken by index so every sort is deterministic. */
#define SORTER(fn, key)                                                    \
    static int fn(const void *pa, const void *pb)                          \
    {                                                                      \
        const gref *x = pa, *y = pb;                                       \
        int c = key(x, y);                                                 \
        return c ? c : cmp_u64(x->index, y->index);                        \
    }
SORTER(sort_args, cmp_args)
SORTER(sort_params, cmp_params)
SORTER(sort_place, cmp_place)
SORTER(sort_anchor, cmp_anchor)

/* The still-unpaired groups of s (with a place when need_place). */
static size_t collect(const side *s, gref *out, int need_place)
{
    size_t n = 0;
    for (size_t i = 0; i < s->r->n_groups; i++)
        if (s->partner[i] == SIZE_MAX && (!need_place || s->placed[i]))
            out[n++] = (gref){&s->r->groups[i], i, s};
    return n;
}

/* One pass: sorts the unpaired groups of both sides by `key` and pairs
 * equal keys in order.  unique_only: pair only a key held by exactly one
 * group on each side (a loose key must not pair by luck of order). */
static void pair_pass(side *a, side *b, gref *ga, gref *gb, int (*sorter)(const void *, const void *), gcmp key,
                      int need_place, int unique_only, opm_trace_diff_match how)
{
    size_t na = collect(a, ga, need_place), nb = collect(b, gb, need_place);
    qsort(ga, na, sizeof *ga, sorter);
    qsort(gb, nb, sizeof *gb, sorter);
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int c = key(&ga[i], &gb[j]);
        if (c < 0) { i++; continue; }
        if (c > 0) { j++; continue; }
        size_t ei = i, ej = j;
        while (ei < na && !key(&ga[i], &ga[ei])) ei++;
        while (ej < nb && !key(&gb[j], &gb[ej])) ej++;
        if (!unique_only || (ei - i == 1 && ej - j == 1)) {
            for (size_t k = 0; i + k < ei && j + k < ej; k++) {
                size_t x = ga[i + k].index, y = gb[j + k].index;
                a->partner[x] = y, b->partner[y] = x;
                a->how[x] = b->how[y] = how;
            }
        }
        i = ei, j = ej;
    }
}

typedef struct iref {
    double gpu_start, cpu_start;
    size_t index;
} iref;

static int cmp_inst(const void *pa, const void *pb)
{
    const iref *x = pa, *y = pb;
    if (x->gpu_start != y->gpu_start) return x->gpu_start < y->gpu_start ? -1 : 1;
    if (x->cpu_start != y->cpu_start) return x->cpu_start < y->cpu_start ? -1 : 1;
    return cmp_u64(x->index, y->index);
}

/* Places of the unpaired groups of s: instances in GPU start order; an
 * anchor is an instance of a paired group, named by the pair's A index so
 * that both sides name it alike. */
static int find_places(side *s, int is_a, opm_error *err)
{
    const opm_trace_report *r = s->r;
    iref *order = r->n_inst ? malloc(r->n_inst * sizeof *order) : NULL;
    uint64_t *seen = calloc(r->n_groups ? r->n_groups : 1, sizeof *seen);
    if ((r->n_inst && !order) || !seen) {
        free(order);
        free(seen);
        return opm_err(err, OPM_ENOMEM, "", "trace diff: out of memory ordering %zu instances", r->n_inst);
    }
    size_t n = 0;
    for (size_t i = 0; i < r->n_inst; i++)
        if (r->inst[i].group < r->n_groups)
            order[n++] = (iref){r->inst[i].gpu_start_s, r->inst[i].cpu_start_s, i};
    qsort(order, n, sizeof *order, cmp_inst);
    size_t anchor = SIZE_MAX;
    /* The offset counts only unpaired instances of the same category, so
     * that one side's extra memset between anchor and kernel does not
     * move the kernel's place. */
    uint64_t anchor_occ = 0, offset[OPM_TCAT_COUNT] = {0};
    for (size_t k = 0; k < n; k++) {
        size_t g = r->inst[order[k].index].group;
        if (s->partner[g] != SIZE_MAX) {
            anchor = is_a ? g : s->partner[g];
            anchor_occ = seen[g]++;
            memset(offset, 0, sizeof offset);
            continue;
        }
        unsigned c = (unsigned)r->groups[g].category < OPM_TCAT_COUNT ? (unsigned)r->groups[g].category : OPM_TCAT_OTHER;
        if (!s->placed[g]) {
            s->placed[g] = 1;
            s->anchor[g] = anchor;
            s->anchor_occ[g] = anchor_occ;
            s->offset[g] = offset[c];
        }
        offset[c]++;
    }
    free(order);
    free(seen);
    return 0;
}

static void side_free(side *s)
{
    free(s->partner);
    free(s->how);
    free(s->anchor);
    free(s->anchor_occ);
    free(s->offset);
    free(s->placed);
}

static int side_init(side *s, const opm_trace_report *r)
{
    size_t n = r->n_groups ? r->n_groups : 1;
    *s = (side){.r = r};
    s->partner = malloc(n * sizeof *s->partner);
    s->how = malloc(n * sizeof *s->how);
    s->anchor = malloc(n * sizeof *s->anchor);
    s->anchor_occ = malloc(n * sizeof *s->anchor_occ);
    s->offset = malloc(n * sizeof *s->offset);
    s->placed = calloc(n, sizeof *s->placed);
    if (!s->partner || !s->how || !s->anchor || !s->anchor_occ || !s->offset || !s->placed) return -1;
    for (size_t i = 0; i < r->n_groups; i++) s->partner[i] = SIZE_MAX;
    return 0;
}

static double side_time(const opm_trace_group *g) { return g ? g->kernel_time_s : 0.0; }

/* Largest regression first; equal deltas: more time first, then by name,
 * so the order does not depend on the reports' own order of ties. */
static int cmp_entry(const void *pa, const void *pb)
{
    const opm_trace_diff_entry *x = pa, *y = pb;
    if (x->delta_s != y->delta_s) return x->delta_s > y->delta_s ? -1 : 1;
    double tx = fmax(side_time(x->a), side_time(x->b)), ty = fmax(side_time(y->a), side_time(y->b));
    if (tx != ty) return tx > ty ? -1 : 1;
    int c = cmp_s(x->a ? x->a->name : x->b->name, y->a ? y->a->name : y->b->name);
    if (c) return c;
    if (x->a_index != y->a_index) return x->a_index < y->a_index ? -1 : 1;
    return cmp_u64(x->b_index, y->b_index);
}

static void fill_categories(opm_trace_diff *d)
{
    double a_s[OPM_TCAT_COUNT] = {0}, b_s[OPM_TCAT_COUNT] = {0};
    int has[OPM_TCAT_COUNT] = {0};
    for (size_t i = 0; i < opm_report_ncats(d->a); i++)
        if ((unsigned)d->a->cats[i].category < OPM_TCAT_COUNT) {
            a_s[d->a->cats[i].category] = d->a->cats[i].kernel_time_s;
            has[d->a->cats[i].category] = 1;
        }
    for (size_t i = 0; i < opm_report_ncats(d->b); i++)
        if ((unsigned)d->b->cats[i].category < OPM_TCAT_COUNT) {
            b_s[d->b->cats[i].category] = d->b->cats[i].kernel_time_s;
            has[d->b->cats[i].category] = 1;
        }
    d->n_cats = 0;
    for (size_t c = 0; c < OPM_TCAT_COUNT; c++)
        if (has[c]) d->cats[d->n_cats++] = (opm_trace_diff_cat){(opm_trace_category)c, a_s[c], b_s[c]};
}

static int build(opm_trace_diff *d, side *a, side *b, opm_error *err)
{
    size_t na = a->r->n_groups, nb = b->r->n_groups;
    gref *ga = malloc((na ? na : 1) * sizeof *ga), *gb = malloc((nb ? nb : 1) * sizeof *gb);
    d->groups = malloc((na + nb ? na + nb : 1) * sizeof *d->groups);
    if (!ga || !gb || !d->groups) {
        free(ga);
        free(gb);
        return opm_err(err, OPM_ENOMEM, "", "trace diff: out of memory for %zu + %zu groups", na, nb);
    }
    pair_pass(a, b, ga, gb, sort_args, cmp_args, 0, 0, OPM_TDIFF_ARGS);
    pair_pass(a, b, ga, gb, sort_params, cmp_params, 0, 0, OPM_TDIFF_PARAMS);
    int rc = find_places(a, 1, err);
    if (!rc) rc = find_places(b, 0, err);
    if (!rc) {
        pair_pass(a, b, ga, gb, sort_place, cmp_place, 1, 0, OPM_TDIFF_PLACE);
        pair_pass(a, b, ga, gb, sort_anchor, cmp_anchor, 1, 1, OPM_TDIFF_PLACE);
    }
    free(ga);
    free(gb);
    if (rc) return rc;
    size_t n = 0;
    for (size_t i = 0; i < na; i++) {
        size_t j = a->partner[i];
        const opm_trace_group *gb_ = j == SIZE_MAX ? NULL : &b->r->groups[j];
        d->groups[n++] = (opm_trace_diff_entry){&a->r->groups[i], gb_, i, j,
                                                j == SIZE_MAX ? OPM_TDIFF_A_ONLY : a->how[i],
                                                side_time(gb_) - a->r->groups[i].kernel_time_s};
    }
    for (size_t j = 0; j < nb; j++)
        if (b->partner[j] == SIZE_MAX)
            d->groups[n++] = (opm_trace_diff_entry){NULL, &b->r->groups[j], SIZE_MAX, j, OPM_TDIFF_B_ONLY,
                                                    b->r->groups[j].kernel_time_s};
    d->n_groups = n;
    qsort(d->groups, n, sizeof *d->groups, cmp_entry);
    fill_categories(d);
    return 0;
}

opm_trace_diff *opm_trace_diff_new(const opm_trace_report *ra, const opm_trace_report *rb, opm_error *err)
{
    opm_error_clear(err);
    if (!ra || !rb) {
        opm_err(err, OPM_EINVAL, NULL, "trace diff: no report for %s", ra ? "B" : "A");
        return NULL;
    }
    opm_trace_diff *d = calloc(1, sizeof *d);
    side a, b;
    int ok_a = side_init(&a, ra) == 0, ok_b = side_init(&b, rb) == 0;
    if (!d || !ok_a || !ok_b) {
        opm_err(err, OPM_ENOMEM, NULL, "trace diff: out of memory");
        side_free(&a);
        side_free(&b);
        free(d);
        return NULL;
    }
    d->a = ra;
    d->b = rb;
    int rc = build(d, &a, &b, err);
    side_free(&a);
    side_free(&b);
    if (rc) {
        opm_trace_diff_free(d);
        return NULL;
    }
    return d;
}

void opm_trace_diff_free(opm_trace_diff *d)
{
    if (!d) return;
    free(d->groups);
    free(d);
}

size_t opm_trace_diff_group_count(const opm_trace_diff *d) { return d ? d->n_groups : 0; }

const opm_trace_diff_entry *opm_trace_diff_group(const opm_trace_diff *d, size_t i)
{
    return d && i < d->n_groups ? &d->groups[i] : NULL;
}

size_t opm_trace_diff_category_count(const opm_trace_diff *d) { return d ? d->n_cats : 0; }

const opm_trace_diff_cat *opm_trace_diff_category(const opm_trace_diff *d, size_t i)
{
    return d && i < d->n_cats ? &d->cats[i] : NULL;
}

const opm_trace_report *opm_trace_diff_report_a(const opm_trace_diff *d) { return d ? d->a : NULL; }
const opm_trace_report *opm_trace_diff_report_b(const opm_trace_diff *d) { return d ? d->b : NULL; }

/* ---- JSON (contract §8) ---- */

/* The group's params object as the report writes it; null when empty. */
static void put_params(strbuf *b, const char *params_json)
{
    const char *p = opm_report_str(params_json);
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) {
        sb_puts(b, "null");
        return;
    }
    strbuf tmp = {0};
    sb_puts(b, opm_report_utf8(params_json, &tmp));
    if (tmp.oom) b->oom = 1;
    free(tmp.p);
}

static void put_side(strbuf *b, const opm_trace_group *g, size_t index)
{
    if (!g) {
        sb_puts(b, "null");
        return;
    }
    sb_puts(b, "{\"count\": ");
    sb_u64(b, g->count);
    sb_puts(b, ", \"kernel_time_s\": ");
    sb_num(b, g->kernel_time_s);
    /* Extra, after the contract's keys: where to find it in that report. */
    sb_puts(b, ", \"index\": ");
    sb_u64(b, index);
    sb_putc(b, '}');
}

static void put_entry(strbuf *b, const opm_trace_diff_entry *e)
{
    const opm_trace_group *g = e->a ? e->a : e->b;
    sb_puts(b, "{\"name\": ");
    sb_json_string(b, opm_report_str(g->name));
    sb_puts(b, ", \"params\": ");
    put_params(b, g->params_json);
    sb_puts(b, ", \"a\": ");
    put_side(b, e->a, e->a_index);
    sb_puts(b, ", \"b\": ");
    put_side(b, e->b, e->b_index);
    sb_puts(b, ", \"delta_s\": ");
    sb_num(b, e->delta_s);
    sb_puts(b, ", \"match\": ");
    sb_json_string(b, opm_trace_diff_match_name(e->match));
    sb_puts(b, ", \"category\": ");
    sb_json_string(b, opm_report_category(g->category));
    /* A pair by place or params: what B calls it, when that differs. */
    if (e->a && e->b && cmp_s(e->a->name, e->b->name)) {
        sb_puts(b, ", \"b_name\": ");
        sb_json_string(b, opm_report_str(e->b->name));
    }
    if (e->a && e->b && cmp_s(e->a->params_json, e->b->params_json)) {
        sb_puts(b, ", \"b_params\": ");
        put_params(b, e->b->params_json);
    }
    sb_putc(b, '}');
}

/* Same keys and order as the report's timeline (contract §6). */
static void put_timeline(strbuf *b, const opm_trace_timeline *t)
{
    sb_puts(b, "{\"busy_s\": ");
    sb_num(b, t->busy_s);
    sb_puts(b, ", \"idle_s\": ");
    sb_num(b, t->idle_s);
    sb_puts(b, ", \"compute_s\": ");
    sb_num(b, t->compute_s);
    sb_puts(b, ", \"comm_s\": ");
    sb_num(b, t->comm_s);
    sb_puts(b, ", \"memcpy_s\": ");
    sb_num(b, t->memcpy_s);
    sb_puts(b, ", \"wall_s\": ");
    sb_num(b, t->wall_s);
    sb_puts(b, ", \"exposed_comm_s\": ");
    sb_num(b, t->exposed_comm_s);
    sb_puts(b, ", \"exposed_memcpy_s\": ");
    sb_num(b, t->exposed_memcpy_s);
    sb_putc(b, '}');
}

static void put_hw(strbuf *b, const opm_trace_report *r)
{
    if (r->hardware) sb_json_string(b, r->hardware);
    else sb_puts(b, "null");
}

char *opm_trace_diff_to_json(const opm_trace_diff *d, opm_error *err)
{
    opm_error_clear(err);
    if (!d) {
        opm_err(err, OPM_EINVAL, NULL, "diff json: no diff");
        return NULL;
    }
    strbuf b = {0};
    sb_puts(&b, "{\"a\": ");
    sb_json_string(&b, opm_report_str(d->a->source));
    sb_puts(&b, ", \"b\": ");
    sb_json_string(&b, opm_report_str(d->b->source));
    sb_puts(&b, ",\n \"groups\": [");
    for (size_t i = 0; i < d->n_groups; i++) {
        sb_puts(&b, i ? ",\n  " : "\n  ");
        put_entry(&b, &d->groups[i]);
    }
    sb_puts(&b, "],\n \"categories\": [");
    for (size_t i = 0; i < d->n_cats; i++) {
        sb_puts(&b, i ? ",\n  " : "\n  ");
        sb_puts(&b, "{\"category\": ");
        sb_json_string(&b, opm_report_category(d->cats[i].category));
        sb_puts(&b, ", \"a_s\": ");
        sb_num(&b, d->cats[i].a_s);
        sb_puts(&b, ", \"b_s\": ");
        sb_num(&b, d->cats[i].b_s);
        sb_putc(&b, '}');
    }
    sb_puts(&b, "],\n \"timeline\": {\"a\": ");
    put_timeline(&b, &d->a->timeline);
    sb_puts(&b, ",\n              \"b\": ");
    put_timeline(&b, &d->b->timeline);
    sb_puts(&b, "},\n \"hardware\": {\"a\": ");
    put_hw(&b, d->a);
    sb_puts(&b, ", \"b\": ");
    put_hw(&b, d->b);
    sb_puts(&b, "}}\n");
    return opm_report_finish(&b, "diff json", err);
}

/* ---- CSV ---- */

static void csv_side(strbuf *b, const opm_trace_group *g, size_t index)
{
    if (!g) {
        sb_puts(b, ",,,");
        return;
    }
    sb_putc(b, ',');
    sb_u64(b, g->count);
    sb_putc(b, ',');
    sb_num(b, g->kernel_time_s);
    sb_putc(b, ',');
    sb_u64(b, index);
}

char *opm_trace_diff_to_csv(const opm_trace_diff *d, opm_error *err)
{
    opm_error_clear(err);
    if (!d) {
        opm_err(err, OPM_EINVAL, NULL, "diff csv: no diff");
        return NULL;
    }
    strbuf b = {0};
    sb_puts(&b, "match,name,params,category,a_count,a_kernel_time_s,a_index,b_count,b_kernel_time_s,b_index,"
                "delta_s,b_name,b_params\n");
    for (size_t i = 0; i < d->n_groups; i++) {
        const opm_trace_diff_entry *e = &d->groups[i];
        const opm_trace_group *g = e->a ? e->a : e->b;
        sb_puts(&b, opm_trace_diff_match_name(e->match));
        sb_putc(&b, ',');
        sb_csv_field(&b, opm_report_str(g->name));
        sb_putc(&b, ',');
        sb_csv_field(&b, opm_report_str(g->params_json));
        sb_putc(&b, ',');
        sb_puts(&b, opm_report_category(g->category));
        csv_side(&b, e->a, e->a_index);
        csv_side(&b, e->b, e->b_index);
        sb_putc(&b, ',');
        sb_num(&b, e->delta_s);
        sb_putc(&b, ',');
        if (e->a && e->b && cmp_s(e->a->name, e->b->name)) sb_csv_field(&b, opm_report_str(e->b->name));
        sb_putc(&b, ',');
        if (e->a && e->b && cmp_s(e->a->params_json, e->b->params_json))
            sb_csv_field(&b, opm_report_str(e->b->params_json));
        sb_putc(&b, '\n');
    }
    return opm_report_finish(&b, "diff csv", err);
}

/* ---- Table ---- */

enum { NAME_WIDTH = 56 };

/* The name cut to NAME_WIDTH characters on a UTF-8 boundary and padded,
 * control characters blanked so a row stays one line. */
static void put_name(strbuf *b, const char *s)
{
    s = opm_report_str(s);
    size_t len = strlen(s), chars = 0, i = 0;
    while (i < len && chars < NAME_WIDTH) {
        size_t n = opm_utf8_seq((const unsigned char *)s + i);
        if (n == 0) {
            /* A stray byte: shown as '?' so the cut never splits a character. */
            sb_putc(b, '?');
            i++;
        } else if (n == 1) {
            unsigned char c = (unsigned char)s[i++];
            sb_putc(b, c < 0x20 || c == 0x7f ? ' ' : (char)c);
        } else {
            sb_putn(b, s + i, n);
            i += n;
        }
        chars++;
    }
    /* Cut names end in '~', so a cut one is not mistaken for a full one. */
    sb_putc(b, i < len ? '~' : ' ');
    for (; chars < NAME_WIDTH; chars++) sb_putc(b, ' ');
}

static void put_ms(strbuf *b, double s) { sb_printf(b, " %11.3f", s * 1e3); }

static void put_ratio(strbuf *b, double a, double bb)
{
    if (a > 0 && isfinite(bb / a)) sb_printf(b, " %7.2f", bb / a);
    else sb_printf(b, " %7s", "-");
}

static void timeline_row(strbuf *b, const char *what, double a, double bb)
{
    sb_printf(b, "  %-12s", what);
    put_ms(b, a);
    put_ms(b, bb);
    sb_printf(b, " %+11.3f", (bb - a) * 1e3);
    put_ratio(b, a, bb);
    sb_putc(b, '\n');
}

static void group_rows(strbuf *b, const opm_trace_diff *d, size_t from, size_t to, int step)
{
    sb_printf(b, "  %-7s %-*s %8s %11s %8s %11s %11s %7s\n", "match", NAME_WIDTH + 1, "name", "A count", "A ms",
              "B count", "B ms", "B-A ms", "B/A");
    for (size_t k = from; k != to; k += (size_t)step) {
        const opm_trace_diff_entry *e = &d->groups[k];
        const opm_trace_group *g = e->a ? e->a : e->b;
        sb_printf(b, "  %-7s ", opm_trace_diff_match_name(e->match));
        put_name(b, g->name);
        if (e->a) sb_printf(b, " %8llu", (unsigned long long)e->a->count), put_ms(b, e->a->kernel_time_s);
        else sb_printf(b, " %8s %11s", "-", "-");
        if (e->b) sb_printf(b, " %8llu", (unsigned long long)e->b->count), put_ms(b, e->b->kernel_time_s);
        else sb_printf(b, " %8s %11s", "-", "-");
        sb_printf(b, " %+11.3f", e->delta_s * 1e3);
        put_ratio(b, side_time(e->a), side_time(e->b));
        sb_putc(b, '\n');
        if (e->a && e->b && cmp_s(e->a->name, e->b->name)) {
            sb_printf(b, "  %-7s ", "  B:");
            put_name(b, e->b->name);
            sb_putc(b, '\n');
        }
    }
}

char *opm_trace_diff_to_table(const opm_trace_diff *d, size_t top, opm_error *err)
{
    opm_error_clear(err);
    if (!d) {
        opm_err(err, OPM_EINVAL, NULL, "diff table: no diff");
        return NULL;
    }
    strbuf b = {0};
    sb_printf(&b, "A: %s (%s)\nB: %s (%s)\n\n", opm_report_str(d->a->source),
              d->a->hardware ? d->a->hardware : "no hardware", opm_report_str(d->b->source),
              d->b->hardware ? d->b->hardware : "no hardware");
    sb_printf(&b, "GPU timeline %12s %11s %11s %7s\n", "A ms", "B ms", "B-A ms", "B/A");
    const opm_trace_timeline *ta = &d->a->timeline, *tb = &d->b->timeline;
    timeline_row(&b, "wall", ta->wall_s, tb->wall_s);
    timeline_row(&b, "busy", ta->busy_s, tb->busy_s);
    timeline_row(&b, "idle", ta->idle_s, tb->idle_s);
    timeline_row(&b, "compute", ta->compute_s, tb->compute_s);
    timeline_row(&b, "comm", ta->comm_s, tb->comm_s);
    timeline_row(&b, "memcpy", ta->memcpy_s, tb->memcpy_s);
    sb_printf(&b, "\nCategories   %12s %11s %11s %7s\n", "A ms", "B ms", "B-A ms", "B/A");
    for (size_t i = 0; i < d->n_cats; i++)
        timeline_row(&b, opm_report_category(d->cats[i].category), d->cats[i].a_s, d->cats[i].b_s);
    size_t by[5] = {0};
    for (size_t i = 0; i < d->n_groups; i++) by[(unsigned)d->groups[i].match < 5 ? d->groups[i].match : 4]++;
    sb_printf(&b, "\nGroups: %zu in A, %zu in B; paired %zu by args, %zu by params, %zu by place; "
                  "%zu only in A, %zu only in B\n",
              d->a->n_groups, d->b->n_groups, by[OPM_TDIFF_ARGS], by[OPM_TDIFF_PARAMS], by[OPM_TDIFF_PLACE],
              by[OPM_TDIFF_A_ONLY], by[OPM_TDIFF_B_ONLY]);
    size_t n = d->n_groups;
    if (top == 0 || 2 * top >= n) {
        sb_puts(&b, "\nAll groups, largest regression (B slower) first\n");
        group_rows(&b, d, 0, n, 1);
    } else {
        size_t reg = 0, imp = 0;
        while (reg < top && d->groups[reg].delta_s > 0) reg++;
        while (imp < top && d->groups[n - 1 - imp].delta_s < 0) imp++;
        sb_printf(&b, "\nLargest regressions (B slower), top %zu\n", top);
        group_rows(&b, d, 0, reg, 1);
        sb_printf(&b, "\nLargest improvements (B faster), top %zu\n", top);
        group_rows(&b, d, n - 1, n - 1 - imp, -1);
    }
    return opm_report_finish(&b, "diff table", err);
}
