/* trace_csv.c — the trace report as CSV for spreadsheets and scripts: one
 * row per group (name and call parameters) or one row per op instance.
 *
 * Quoting follows RFC 4180 (sb_csv_field: a cell with a comma, quote or
 * line break, or a leading or trailing space, is quoted, quotes doubled);
 * rows end in "\n".  A value that does not apply
 * (no model, no hardware, no sequence number) is an empty cell, never 0,
 * so averages over a column are not polluted.  Durations and rates have 12
 * significant digits; trace-clock timestamps are written in full (shortest
 * round trip) because they are epoch-sized and 12 digits would round them
 * to tens of microseconds. */
#include <math.h>
#include <string.h>
#include "report_internal.h"

static void cell_text(strbuf *b, const char *s) { sb_csv_field(b, opm_report_str(s)); }

static void sep(strbuf *b) { sb_putc(b, ','); }

static void cell_num(strbuf *b, double v)
{
    sep(b);
    if (isfinite(v)) sb_num(b, v);
}

static void cell_time(strbuf *b, double v)
{
    sep(b);
    if (isfinite(v)) sb_double(b, v);
}

static void cell_u64(strbuf *b, uint64_t v)
{
    sep(b);
    sb_u64(b, v);
}

static void cell_str(strbuf *b, const char *s)
{
    sep(b);
    cell_text(b, s);
}

static void cell_empty(strbuf *b, int n)
{
    while (n-- > 0) sep(b);
}

static const char group_header[] =
    "name,kind,phase,category,count,kernel_time_s,kernel_time_mean_s,flops,bytes,flops_per_byte,"
    "tflops_per_s,tb_per_s,roofline_time_s,pct_roofline,bound,forward,params,input_dims,input_types,"
    "input_strides,concrete_inputs,kernels\n";

static void group_row(strbuf *b, const opm_trace_group *g)
{
    const char *kind = opm_report_kind(g);
    cell_text(b, g->name);
    cell_str(b, kind);
    cell_str(b, kind ? opm_phase_name(g->phase) : NULL);
    cell_str(b, opm_report_category(g->category));
    cell_u64(b, g->count);
    cell_num(b, g->kernel_time_s);
    cell_num(b, g->kernel_time_mean_s);
    if (kind) {
        cell_u64(b, g->flops);
        cell_u64(b, g->bytes);
        cell_num(b, g->flops_per_byte);
        cell_num(b, g->tflops_per_s);
        cell_num(b, g->tb_per_s);
    } else {
        cell_empty(b, 5);
    }
    if (kind && g->has_roofline) {
        cell_num(b, g->roofline_time_s);
        cell_num(b, g->pct_roofline);
        cell_str(b, opm_bound_name(g->bound));
    } else {
        cell_empty(b, 3);
    }
    cell_str(b, g->forward_name);
    cell_str(b, g->params_json);
    cell_str(b, g->input_dims);
    cell_str(b, g->input_types);
    cell_str(b, g->input_strides);
    cell_str(b, g->concrete_inputs);
    /* Joined first so the list is quoted as one cell. */
    strbuf k = {0};
    for (size_t i = 0; i < g->kernel_name_count; i++) {
        if (i) sb_puts(&k, " | ");
        sb_puts(&k, opm_report_str(g->kernel_names[i]));
    }
    if (k.oom) b->oom = 1;
    cell_str(b, k.p);
    free(k.p);
    sb_putc(b, '\n');
}

static const char instance_header[] =
    "group,name,cpu_start_s,cpu_dur_s,gpu_start_s,kernel_time_s,gpu_events,sequence_number,kind,category\n";

static void instance_row(strbuf *b, const opm_trace_report *r, const opm_trace_instance *in)
{
    const opm_trace_group *g = in->group < r->n_groups ? &r->groups[in->group] : NULL;
    sb_u64(b, in->group);
    cell_str(b, g ? g->name : NULL);
    cell_time(b, in->cpu_start_s);
    cell_num(b, in->cpu_dur_s);
    cell_time(b, in->gpu_start_s);
    cell_num(b, in->kernel_time_s);
    cell_u64(b, in->gpu_event_count);
    sep(b);
    if (in->sequence_number >= 0) sb_u64(b, (uint64_t)in->sequence_number);
    cell_str(b, g ? opm_report_kind(g) : NULL);
    cell_str(b, g ? opm_report_category(g->category) : NULL);
    sb_putc(b, '\n');
}

char *opm_trace_report_to_csv(const opm_trace_report *r, int what, opm_error *err)
{
    opm_error_clear(err);
    if (!r || (what != 0 && what != 1)) {
        opm_err(err, OPM_EINVAL, NULL, "csv: %s", r ? "expected 0 (groups) or 1 (instances)" : "no report");
        return NULL;
    }
    strbuf b = {0};
    if (what == 0) {
        sb_puts(&b, group_header);
        for (size_t i = 0; i < r->n_groups; i++) group_row(&b, &r->groups[i]);
    } else {
        sb_puts(&b, instance_header);
        for (size_t i = 0; i < r->n_inst; i++) instance_row(&b, r, &r->inst[i]);
    }
    return opm_report_finish(&b, "csv", err);
}
