/* trace_json.c — the trace report as one JSON document, contract §6.
 *
 * Keys come in the contract's order; the few extra keys this writer adds
 * ("phase", "flops_per_byte", "forward" in a group, "count" in a category,
 * "wall_s", "exposed_comm_s", "exposed_memcpy_s" in the timeline, "model"
 * at the top) always follow the contract's keys of the same object, so a
 * reader that walks the contract's keys in order never meets a surprise
 * between them.  One group or category per line keeps large reports
 * greppable and diffable.  Counts are exact integers; every other number
 * has 12 significant digits, and a non-finite one is null. */
#include "report_internal.h"

static void key(strbuf *b, const char *k)
{
    sb_putc(b, '"');
    sb_puts(b, k);
    sb_puts(b, "\": ");
}

static void num_field(strbuf *b, const char *k, double v)
{
    sb_puts(b, ", ");
    key(b, k);
    sb_num(b, v);
}

static void u64_field(strbuf *b, const char *k, uint64_t v)
{
    sb_puts(b, ", ");
    key(b, k);
    sb_u64(b, v);
}

/* params_json is already a JSON object made by the recogniser; an empty
 * one (never expected) still leaves a valid document, and stray bytes in
 * raw call arguments are mended as in every other string. */
static void put_params(strbuf *b, const char *params_json)
{
    const char *p = params_json;
    while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    if (!p || !*p) {
        sb_puts(b, "{}");
        return;
    }
    strbuf tmp = {0};
    sb_puts(b, opm_report_utf8(params_json, &tmp));
    if (tmp.oom) b->oom = 1;
    free(tmp.p);
}

static void put_group(strbuf *b, const opm_trace_group *g)
{
    const char *kind = opm_report_kind(g);
    sb_puts(b, "{\"name\": ");
    sb_json_string(b, opm_report_str(g->name));
    sb_puts(b, ", \"kind\": ");
    if (kind) sb_json_string(b, kind);
    else sb_puts(b, "null");
    sb_puts(b, ", \"category\": ");
    sb_json_string(b, opm_report_category(g->category));
    sb_puts(b, ", \"params\": ");
    put_params(b, g->params_json);
    u64_field(b, "count", g->count);
    num_field(b, "kernel_time_s", g->kernel_time_s);
    num_field(b, "kernel_time_mean_s", g->kernel_time_mean_s);
    if (kind) {
        u64_field(b, "flops", g->flops);
        u64_field(b, "bytes", g->bytes);
        num_field(b, "tflops_per_s", g->tflops_per_s);
        num_field(b, "tb_per_s", g->tb_per_s);
        if (g->has_roofline) {
            num_field(b, "roofline_time_s", g->roofline_time_s);
            num_field(b, "pct_roofline", g->pct_roofline);
            sb_puts(b, ", \"bound\": ");
            sb_json_string(b, opm_bound_name(g->bound));
        }
    }
    sb_puts(b, ", \"kernels\": [");
    for (size_t i = 0; i < g->kernel_name_count; i++) {
        if (i) sb_puts(b, ", ");
        sb_json_string(b, opm_report_str(g->kernel_names[i]));
    }
    sb_putc(b, ']');
    if (kind) {
        sb_puts(b, ", \"phase\": ");
        sb_json_string(b, opm_phase_name(g->phase));
        num_field(b, "flops_per_byte", g->flops_per_byte);
    }
    if (g->forward_name) {
        sb_puts(b, ", \"forward\": ");
        sb_json_string(b, opm_report_str(g->forward_name));
    }
    sb_putc(b, '}');
}

static void put_category(strbuf *b, const opm_trace_category_time *c)
{
    sb_puts(b, "{\"category\": ");
    sb_json_string(b, opm_report_category(c->category));
    num_field(b, "kernel_time_s", c->kernel_time_s);
    num_field(b, "share", c->share);
    u64_field(b, "count", c->count);
    sb_putc(b, '}');
}

static void put_timeline(strbuf *b, const opm_trace_timeline *t)
{
    sb_puts(b, "{\"busy_s\": ");
    sb_num(b, t->busy_s);
    num_field(b, "idle_s", t->idle_s);
    num_field(b, "compute_s", t->compute_s);
    num_field(b, "comm_s", t->comm_s);
    num_field(b, "memcpy_s", t->memcpy_s);
    num_field(b, "wall_s", t->wall_s);
    num_field(b, "exposed_comm_s", t->exposed_comm_s);
    num_field(b, "exposed_memcpy_s", t->exposed_memcpy_s);
    sb_putc(b, '}');
}

char *opm_trace_report_to_json(const opm_trace_report *r, opm_error *err)
{
    opm_error_clear(err);
    if (!r) {
        opm_err(err, OPM_EINVAL, NULL, "json: no report");
        return NULL;
    }
    strbuf b = {0};
    sb_puts(&b, "{\"trace\": ");
    sb_json_string(&b, opm_report_str(r->source));
    sb_puts(&b, ", \"hardware\": ");
    if (r->hardware) sb_json_string(&b, r->hardware);
    else sb_puts(&b, "null");
    num_field(&b, "gpu_busy_s", r->timeline.busy_s);
    num_field(&b, "wall_s", r->timeline.wall_s);
    sb_puts(&b, ",\n \"groups\": [");
    for (size_t i = 0; i < r->n_groups; i++) {
        sb_puts(&b, i ? ",\n  " : "\n  ");
        put_group(&b, &r->groups[i]);
    }
    sb_puts(&b, "],\n \"categories\": [");
    for (size_t i = 0; i < opm_report_ncats(r); i++) {
        sb_puts(&b, i ? ",\n  " : "\n  ");
        put_category(&b, &r->cats[i]);
    }
    sb_puts(&b, "],\n \"timeline\": ");
    put_timeline(&b, &r->timeline);
    /* GPU work still under graph launches: all replayed kernels without a
     * capture, what the capture did not explain with one. */
    sb_puts(&b, ",\n \"graph_launches\": {\"launches\": ");
    sb_printf(&b, "%llu", (unsigned long long)r->graph.launches);
    u64_field(&b, "gpu_events", r->graph.gpu_events);
    num_field(&b, "kernel_time_s", (double)r->graph.busy_ns * 1e-9);
    sb_putc(&b, '}');
    if (r->hardware) {
        sb_puts(&b, ",\n \"model\": ");
        sb_json_string(&b, r->model ? r->model : "roofline");
    }
    sb_puts(&b, "}\n");
    return opm_report_finish(&b, "json", err);
}
