/* trace_table.c — the trace report as aligned terminal tables for people:
 * a header (trace, hardware, GPU busy/idle/wall), the GPU timeline, the
 * category breakdown, the top groups by kernel time and the groups with
 * the most time lost to the roofline.
 *
 * Cells are collected first and the columns sized afterwards, so widths
 * fit the data instead of guessing; widths count UTF-8 characters, not
 * bytes, because the unit headers say "µs".  A "#" column is the group's
 * index in the JSON and CSV outputs (instances.csv refers to groups by
 * it), so a row seen here can be looked up there.  Values that do not
 * apply print as "-"; the last column, the call parameters flattened
 * ("m:141 n:512 dtype:bf16"), tells apart groups of the same op. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "report_internal.h"

/* Op and kernel names can be hundreds of characters (triton kernels). */
enum { NAME_WIDTH = 56 };

typedef struct table {
    size_t ncols;
    unsigned left;      /* bit i: column i is left-aligned */
    strbuf text;        /* every cell, each NUL-terminated */
    size_t *at;         /* offset of each cell in text */
    size_t n, cap;
    int oom;
} table;

static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void cell(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cell(table *t, const char *fmt, ...)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        size_t *at = realloc(t->at, cap * sizeof *at);
        if (!at) {
            t->oom = 1;
            return;
        }
        t->at = at;
        t->cap = cap;
    }
    char tmp[512]; /* a name cell is at most NAME_WIDTH characters of 4 bytes */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    t->at[t->n++] = t->text.n;
    sb_puts(&t->text, tmp);
    sb_putn(&t->text, "", 1);
    if (t->text.oom) t->oom = 1;
}

static void cell_dash(table *t) { cell(t, "-"); }

/* Control characters (a line break in a name) would tear the row apart. */
static void put_line_text(strbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        sb_putc(b, c < 0x20 || c == 0x7f ? ' ' : (char)c);
    }
}

/* The name cut to NAME_WIDTH characters on a character boundary. */
static void cell_name(table *t, const char *name)
{
    const char *s = opm_report_str(name);
    size_t bytes = strlen(s);
    int cut = text_width(s) > NAME_WIDTH;
    if (cut) {
        size_t chars = 0;
        bytes = 0;
        while (s[bytes] && chars < NAME_WIDTH - 3) {
            bytes++;
            while (((unsigned char)s[bytes] & 0xC0) == 0x80) bytes++;
            chars++;
        }
    }
    strbuf clean = {0};
    put_line_text(&clean, s, bytes);
    if (cut) sb_puts(&clean, "...");
    if (clean.oom) t->oom = 1;
    cell(t, "%s", clean.p ? clean.p : "");
    free(clean.p);
}

/* The params object as "m:141 n:512 dtype:bf16": the column that tells
 * apart groups of the same op name. */
static void cell_params(table *t, const char *json)
{
    strbuf flat = {0};
    const char *s = opm_report_str(json);
    size_t len = strlen(s);
    if (len >= 2 && s[0] == '{' && s[len - 1] == '}') s++, len -= 2;
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\' && i + 1 < len) sb_putc(&flat, s[++i]);
            else if (c == '"') in_str = 0;
            else sb_putc(&flat, c);
            continue;
        }
        if (c == '"') in_str = 1;
        else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        else if (c == '[' || c == '{') depth++;
        else if (c == ']' || c == '}') depth--;
        if (c == '"') continue;
        sb_putc(&flat, c == ',' && depth == 0 ? ' ' : c);
    }
    if (flat.oom) t->oom = 1;
    cell_name(t, flat.p ? flat.p : "");
    free(flat.p);
}

static void cell_num(table *t, const char *fmt, double v)
{
    if (isfinite(v)) cell(t, fmt, v);
    else cell_dash(t);
}

static void pad(strbuf *b, size_t n)
{
    while (n-- > 0) sb_putc(b, ' ');
}

static void table_render(table *t, strbuf *b)
{
    if (t->oom) {
        b->oom = 1;
        return;
    }
    size_t width[32] = {0};
    size_t nc = t->ncols < 32 ? t->ncols : 32;
    for (size_t i = 0; i < t->n; i++) {
        size_t w = text_width(t->text.p + t->at[i]);
        if (w > width[i % nc]) width[i % nc] = w;
    }
    for (size_t i = 0; i < t->n; i++) {
        size_t c = i % nc;
        const char *s = t->text.p + t->at[i];
        size_t gap = width[c] - text_width(s);
        int last = c == nc - 1 || i == t->n - 1;
        sb_puts(b, "  ");
        if (t->left >> c & 1) {
            sb_puts(b, s);
            if (!last) pad(b, gap);
        } else {
            pad(b, gap);
            sb_puts(b, s);
        }
        if (last) sb_putc(b, '\n');
    }
}

static void table_free(table *t)
{
    free(t->text.p);
    free(t->at);
}

static void put_header(strbuf *b, const opm_trace_report *r)
{
    const opm_trace_timeline *tl = &r->timeline;
    const char *src = opm_report_str(r->source);
    sb_puts(b, "trace     ");
    put_line_text(b, src, strlen(src));
    if (r->hardware) {
        sb_puts(b, "\nhardware  ");
        put_line_text(b, r->hardware, strlen(r->hardware));
        sb_printf(b, " (model %s)\n", r->model ? r->model : "roofline");
    } else {
        sb_putc(b, '\n');
        sb_puts(b, "hardware  none (no roofline columns; give --hardware)\n");
    }
    sb_printf(b, "GPU       busy %.3f ms, idle %.3f ms, wall %.3f ms", tl->busy_s * 1e3, tl->idle_s * 1e3,
              tl->wall_s * 1e3);
    if (tl->wall_s > 0) sb_printf(b, " (%.1f%% busy)", 100 * tl->busy_s / tl->wall_s);
    sb_printf(b, "\nops       %zu groups, %zu instances\n", r->n_groups, r->n_inst);
}

static void put_timeline(strbuf *b, const opm_trace_report *r)
{
    const opm_trace_timeline *tl = &r->timeline;
    const struct {
        const char *what;
        double s;
    } rows[] = {
        {"busy", tl->busy_s},       {"idle", tl->idle_s},
        {"compute", tl->compute_s}, {"communication", tl->comm_s},
        {"memcpy/memset", tl->memcpy_s}, {"exposed communication", tl->exposed_comm_s},
        {"exposed memcpy/memset", tl->exposed_memcpy_s}, {"wall", tl->wall_s},
    };
    table t = {.ncols = 3, .left = 1};
    cell(&t, "GPU timeline");
    cell(&t, "time (µs)");
    cell(&t, "%% of wall");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cell(&t, "%s", rows[i].what);
        cell_num(&t, "%.3f", rows[i].s * 1e6);
        if (tl->wall_s > 0) cell_num(&t, "%.1f", 100 * rows[i].s / tl->wall_s);
        else cell_dash(&t);
    }
    if (r->graph.launches) {
        /* Replayed work not attributed to captured ops (give --capture). */
        double s = (double)r->graph.busy_ns * 1e-9;
        cell(&t, "in graph launches (%llu)", (unsigned long long)r->graph.launches);
        cell_num(&t, "%.3f", s * 1e6);
        if (tl->wall_s > 0) cell_num(&t, "%.1f", 100 * s / tl->wall_s);
        else cell_dash(&t);
    }
    sb_putc(b, '\n');
    table_render(&t, b);
    table_free(&t);
}

static void put_categories(strbuf *b, const opm_trace_report *r)
{
    table t = {.ncols = 4, .left = 1};
    cell(&t, "category");
    cell(&t, "time (µs)");
    cell(&t, "share (%%)");
    cell(&t, "instances");
    double total_s = 0, share = 0;
    uint64_t count = 0;
    for (size_t i = 0; i < opm_report_ncats(r); i++) {
        const opm_trace_category_time *c = &r->cats[i];
        cell(&t, "%s", opm_report_category(c->category));
        cell_num(&t, "%.3f", c->kernel_time_s * 1e6);
        cell_num(&t, "%.1f", 100 * c->share);
        cell(&t, "%llu", (unsigned long long)c->count);
        total_s += c->kernel_time_s;
        share += c->share;
        count += c->count;
    }
    cell(&t, "total");
    cell_num(&t, "%.3f", total_s * 1e6);
    cell_num(&t, "%.1f", 100 * share);
    cell(&t, "%llu", (unsigned long long)count);
    sb_putc(b, '\n');
    table_render(&t, b);
    table_free(&t);
}

typedef struct ranked {
    double key;
    size_t i;
} ranked;

static int by_key_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static size_t shown(size_t n, size_t top) { return top && top < n ? top : n; }

static void put_top_groups(strbuf *b, const opm_trace_report *r, size_t top)
{
    ranked *order = malloc((r->n_groups ? r->n_groups : 1) * sizeof *order);
    if (!order) {
        b->oom = 1;
        return;
    }
    /* Groups come sorted by time; sorting again costs little and keeps this
     * table right whatever order it is handed. */
    for (size_t i = 0; i < r->n_groups; i++) order[i] = (ranked){r->groups[i].kernel_time_s, i};
    qsort(order, r->n_groups, sizeof *order, by_key_desc);
    size_t n = shown(r->n_groups, top);
    table t = {.ncols = 14, .left = 1u << 1 | 1u << 12 | 1u << 13};
    const char *head[] = {"#", "name", "count", "total (µs)", "mean (µs)", "GFLOP", "MB", "FLOP/B",
                          "TFLOP/s", "TB/s", "roofline (µs)", "% roofline", "bound", "params"};
    for (size_t c = 0; c < 14; c++) cell(&t, "%s", head[c]);
    for (size_t k = 0; k < n; k++) {
        const opm_trace_group *g = &r->groups[order[k].i];
        cell(&t, "%zu", order[k].i);
        cell_name(&t, g->name);
        cell(&t, "%llu", (unsigned long long)g->count);
        cell_num(&t, "%.1f", g->kernel_time_s * 1e6);
        cell_num(&t, "%.2f", g->kernel_time_mean_s * 1e6);
        if (g->has_kind) {
            cell_num(&t, "%.4g", (double)g->flops / 1e9);
            cell_num(&t, "%.4g", (double)g->bytes / 1e6);
            cell_num(&t, "%.4g", g->flops_per_byte);
            cell_num(&t, "%.4g", g->tflops_per_s);
            cell_num(&t, "%.4g", g->tb_per_s);
        } else {
            for (int c = 0; c < 5; c++) cell_dash(&t);
        }
        if (g->has_kind && g->has_roofline) {
            cell_num(&t, "%.2f", g->roofline_time_s * 1e6);
            cell_num(&t, "%.1f", g->pct_roofline);
            cell(&t, "%s", opm_bound_name(g->bound));
        } else {
            for (int c = 0; c < 3; c++) cell_dash(&t);
        }
        cell_params(&t, g->params_json);
    }
    free(order);
    sb_printf(b, "\nTop %zu of %zu groups by kernel time (GFLOP and MB per call)\n", n, r->n_groups);
    table_render(&t, b);
    table_free(&t);
}

static void put_gaps(strbuf *b, const opm_trace_report *r, size_t top)
{
    if (!r->hardware) {
        sb_puts(b, "\nLargest gap to roofline: needs a hardware (--hardware)\n");
        return;
    }
    size_t n = shown(r->n_gap, top);
    sb_printf(b, "\nLargest gap to roofline: top %zu of %zu groups with a model (lost = count x (mean - roofline))\n",
              n, r->n_gap);
    if (!n) return;
    table t = {.ncols = 10, .left = 1u << 1 | 1u << 8 | 1u << 9};
    const char *head[] = {"#", "name", "count", "mean (µs)", "roofline (µs)", "% roofline", "lost (µs)",
                          "% of busy", "bound", "params"};
    for (size_t c = 0; c < 10; c++) cell(&t, "%s", head[c]);
    for (size_t k = 0; k < n; k++) {
        size_t i = r->gap_order[k];
        if (i >= r->n_groups) continue;
        const opm_trace_group *g = &r->groups[i];
        double lost_s = (double)g->count * (g->kernel_time_mean_s - g->roofline_time_s);
        cell(&t, "%zu", i);
        cell_name(&t, g->name);
        cell(&t, "%llu", (unsigned long long)g->count);
        cell_num(&t, "%.2f", g->kernel_time_mean_s * 1e6);
        cell_num(&t, "%.2f", g->roofline_time_s * 1e6);
        cell_num(&t, "%.1f", g->pct_roofline);
        cell_num(&t, "%.1f", lost_s * 1e6);
        if (r->timeline.busy_s > 0) cell_num(&t, "%.1f", 100 * lost_s / r->timeline.busy_s);
        else cell_dash(&t);
        cell(&t, "%s", opm_bound_name(g->bound));
        cell_params(&t, g->params_json);
    }
    table_render(&t, b);
    table_free(&t);
}

char *opm_trace_report_to_table(const opm_trace_report *r, size_t top, opm_error *err)
{
    opm_error_clear(err);
    if (!r) {
        opm_err(err, OPM_EINVAL, NULL, "table: no report");
        return NULL;
    }
    strbuf b = {0};
    put_header(&b, r);
    put_timeline(&b, r);
    put_categories(&b, r);
    put_top_groups(&b, r, top);
    put_gaps(&b, r, top);
    return opm_report_finish(&b, "table", err);
}
