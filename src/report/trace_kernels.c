/* trace_kernels.c — GEMM groups predicted with the kernel that ran: the
 * kernel name's tile, stages and split-K (kernel_names.c) passed to the
 * tiled GEMM model as its kernel-hint attributes (docs/gemm_models.md),
 * next to the model's own choice; and the JSON array and table of the
 * comparison.
 *
 * The op is rebuilt from the group's recorded call arguments through the
 * same table entry the report used, so the hinted and the automatic
 * prediction are of exactly the op the report counted. */
#include <stdio.h>
#include <string.h>
#include "report_internal.h"
#include "../hardware/hw_internal.h"
#include "../models/gemm_tiled.h"
#include "opmodel/trace_analysis.h"

#define DEFAULT_MODEL "extended_roofline"
/* Pipeline depths tried when a name gives none: the range the models' own
 * catalogs choose from (gemm_tiled.c: 2 for MFMA/SIMT up to 8 for wgmma). */
#define MIN_STAGES 2
#define MAX_STAGES 8

struct opm_trace_kernel_checks {
    char *model;
    opm_trace_kernel_check *c;
    char (*auto_kernel)[96];
    char **kernel;
    size_t n;
};

static int is_gemm_kind(const opm_trace_group *g)
{
    return g->has_kind && (g->kind == OPM_KIND_GEMM || g->kind == OPM_KIND_BATCHED_GEMM);
}

static double diag_num(const opm_profile *p, const char *k)
{
    const opm_diag *d = opm_profile_diag(p, k);
    return d && !d->is_text ? d->number : 0.0;
}

/* The op of group g as the report built it; NULL when it cannot be
 * rebuilt (no table entry, or the builder declines). */
static opm_op *rebuild(const opm_trace_group *g, opm_error *err)
{
    const opm_trace_op_entry *e = opm_trace_op_lookup(g->name);
    if (!e) return NULL;
    opm_trace_call call = {g->name, opm_report_str(g->input_dims), opm_report_str(g->input_types),
                           opm_report_str(g->input_strides), opm_report_str(g->concrete_inputs),
                           g->phase == OPM_PHASE_TRAIN_FWD};
    opm_trace_recog rec;
    memset(&rec, 0, sizeof rec);
    if (opm_trace_recognize(e, &call, &rec, err)) {
        opm_op_free(rec.op);
        free(rec.params_json);
        return NULL;
    }
    free(rec.params_json);
    return rec.op;
}

static int set_hints(opm_op *op, const opm_trace_kernel_hint *h, opm_error *err)
{
    if (opm_op_set_int(op, "cta_tile_m", h->tile_m, err) || opm_op_set_int(op, "cta_tile_n", h->tile_n, err))
        return -1;
    if (h->tile_k && opm_op_set_int(op, "cta_tile_k", h->tile_k, err)) return -1;
    if (h->stages && opm_op_set_int(op, "pipeline_stages", h->stages, err)) return -1;
    if (h->split_k && opm_op_set_int(op, "split_k", h->split_k, err)) return -1;
    if (h->warps && opm_op_set_int(op, "warps_per_cta", h->warps, err)) return -1;
    return 0;
}

/* The hardware's matrix instruction family, NULL when not described. */
static const char *hw_family(const opm_hardware *hw)
{
    int mi = gemm_hw_named_family(hw);
    return mi >= 0 ? opm_hw_matrix_names[mi] : NULL;
}

static int family_differs(const char *kernel, const char *hw)
{
    if (!kernel || !hw) return 0;
    /* wmma compiles to the same warp-level mma instructions. */
    if (!strcmp(kernel, "wmma")) kernel = "mma_sync";
    return strcmp(kernel, hw) != 0;
}

/* One group: fills *c and returns 1 when both predictions ran. */
static int check_group(const opm_trace_report *r, size_t gi, const opm_hardware *hw, const char *model,
                       opm_trace_kernel_check *c, char *auto_kernel, size_t cap)
{
    const opm_trace_group *g = &r->groups[gi];
    if (!is_gemm_kind(g)) return 0;
    size_t k;
    opm_trace_kernel_hint h;
    for (k = 0; k < g->kernel_name_count; k++)
        if (opm_trace_parse_kernel_name(g->kernel_names[k], &h)) break;
    if (k == g->kernel_name_count) return 0;
    opm_error err;
    opm_op *op = rebuild(g, &err);
    if (!op) return 0;
    opm_op *hinted = opm_op_clone(op, &err);
    opm_profile pa, ph;
    int ok = hinted && !set_hints(hinted, &h, &err) && !opm_predict(model, op, hw, &pa, &err);
    /* MFMA and SIMT kernels double-buffer: the depth the model's own
     * catalog gives those families (gemm_tiled.c). */
    int fixed = h.stages ? h.stages : h.instruction && (!strcmp(h.instruction, "mfma") || !strcmp(h.instruction, "simt")) ? 2 : 0;
    if (ok && fixed) {
        ok = !opm_op_set_int(hinted, "pipeline_stages", fixed, &err) && !opm_predict(model, hinted, hw, &ph, &err);
    } else if (ok) {
        /* The name does not say its pipeline depth: the fastest the model
         * finds for the named tile, as its own catalog picks a depth. */
        ok = 0;
        for (int st = MIN_STAGES; st <= MAX_STAGES; st++) {
            opm_profile p;
            if (opm_op_set_int(hinted, "pipeline_stages", st, &err) || opm_predict(model, hinted, hw, &p, &err))
                continue;
            if (!ok || p.latency_s < ph.latency_s) ph = p;
            ok = 1;
        }
    }
    opm_op_free(op);
    opm_op_free(hinted);
    if (!ok) return 0;
    memset(c, 0, sizeof *c);
    c->group = gi;
    c->kernel = g->kernel_names[k];
    c->hint = h;
    c->measured_mean_s = g->kernel_time_mean_s;
    c->hinted_time_s = ph.latency_s;
    c->auto_time_s = pa.latency_s;
    c->hinted_tile_efficiency = diag_num(&ph, "tile_efficiency");
    c->hinted_wave_efficiency = diag_num(&ph, "wave_efficiency");
    c->auto_tile_efficiency = diag_num(&pa, "tile_efficiency");
    c->auto_wave_efficiency = diag_num(&pa, "wave_efficiency");
    const opm_diag *tile = opm_profile_diag(&pa, "tile");
    c->hinted_stages = (int)diag_num(&ph, "pipeline_stages");
    c->hinted_split_k = (int)diag_num(&ph, "split_k");
    c->hinted_warps = (int)diag_num(&ph, "warps_per_cta");
    c->auto_warps = (int)diag_num(&pa, "warps_per_cta");
    snprintf(auto_kernel, cap, "%s, %g stages, split %g", tile && tile->is_text ? tile->text : "?",
             diag_num(&pa, "pipeline_stages"), diag_num(&pa, "split_k"));
    c->instruction_differs = family_differs(h.instruction, hw_family(hw));
    return 1;
}

opm_trace_kernel_checks *opm_trace_kernel_checks_new(const opm_trace_report *r, const opm_hardware *hw,
                                                     const char *model, opm_error *err)
{
    if (!r || !hw) {
        opm_err(err, OPM_EINVAL, r ? "hardware" : "report", "kernel checks need a report and a hardware");
        return NULL;
    }
    if (!model) model = DEFAULT_MODEL;
    if (!opm_model_find(model)) {
        opm_err(err, OPM_ENOTFOUND, "model", "no model named '%s'", model);
        return NULL;
    }
    opm_trace_kernel_checks *cs = calloc(1, sizeof *cs);
    size_t n = r->n_groups;
    if (cs) {
        cs->model = strdup(model);
        cs->c = calloc(n + 1, sizeof *cs->c);
        cs->auto_kernel = calloc(n + 1, sizeof *cs->auto_kernel);
        cs->kernel = calloc(n + 1, sizeof *cs->kernel);
    }
    if (!cs || !cs->model || !cs->c || !cs->auto_kernel || !cs->kernel) {
        opm_trace_kernel_checks_free(cs);
        opm_err(err, OPM_ENOMEM, NULL, "kernel checks: out of memory");
        return NULL;
    }
    for (size_t gi = 0; gi < n; gi++) {
        opm_trace_kernel_check *c = &cs->c[cs->n];
        if (!check_group(r, gi, hw, model, c, cs->auto_kernel[cs->n], sizeof cs->auto_kernel[0])) continue;
        /* The strings must outlive the report. */
        if (!(cs->kernel[cs->n] = strdup(c->kernel))) {
            opm_trace_kernel_checks_free(cs);
            opm_err(err, OPM_ENOMEM, NULL, "kernel checks: out of memory");
            return NULL;
        }
        c->kernel = cs->kernel[cs->n];
        c->auto_kernel = cs->auto_kernel[cs->n];
        cs->n++;
    }
    return cs;
}

void opm_trace_kernel_checks_free(opm_trace_kernel_checks *c)
{
    if (!c) return;
    for (size_t i = 0; c->kernel && i < c->n; i++) free(c->kernel[i]);
    free(c->kernel);
    free(c->auto_kernel);
    free(c->c);
    free(c->model);
    free(c);
}

size_t opm_trace_kernel_check_count(const opm_trace_kernel_checks *c) { return c ? c->n : 0; }

const opm_trace_kernel_check *opm_trace_kernel_check_at(const opm_trace_kernel_checks *c, size_t i)
{
    return c && i < c->n ? &c->c[i] : NULL;
}

const char *opm_trace_kernel_checks_model(const opm_trace_kernel_checks *c) { return c ? c->model : NULL; }

static void put_opt_str(strbuf *b, const char *s)
{
    if (s) sb_json_string(b, s);
    else sb_puts(b, "null");
}

static void put_opt_int(strbuf *b, int v)
{
    if (v) sb_printf(b, "%d", v);
    else sb_puts(b, "null");
}

char *opm_trace_kernel_checks_to_json(const opm_trace_kernel_checks *c, const opm_trace_report *r, opm_error *err)
{
    strbuf b = {0};
    sb_puts(&b, "[");
    for (size_t i = 0; c && i < c->n; i++) {
        const opm_trace_kernel_check *k = &c->c[i];
        const opm_trace_group *g = r && k->group < r->n_groups ? &r->groups[k->group] : NULL;
        sb_puts(&b, i ? ",\n  " : "\n  ");
        sb_printf(&b, "{\"group\": %zu, \"name\": ", k->group);
        sb_json_string(&b, g ? opm_report_str(g->name) : "");
        sb_puts(&b, ", \"kernel\": ");
        sb_json_string(&b, k->kernel);
        sb_puts(&b, ", \"library\": ");
        put_opt_str(&b, k->hint.library);
        sb_puts(&b, ", \"instruction\": ");
        put_opt_str(&b, k->hint.instruction);
        sb_printf(&b, ", \"tile_m\": %d, \"tile_n\": %d, \"tile_k\": ", k->hint.tile_m, k->hint.tile_n);
        put_opt_int(&b, k->hint.tile_k);
        sb_puts(&b, ", \"stages\": ");
        put_opt_int(&b, k->hint.stages);
        sb_puts(&b, ", \"split_k\": ");
        put_opt_int(&b, k->hint.split_k);
        sb_printf(&b, ", \"column_major\": %s", k->hint.column_major ? "true" : "false");
        sb_puts(&b, ", \"measured_mean_s\": ");
        sb_num(&b, k->measured_mean_s);
        sb_puts(&b, ", \"hinted_time_s\": ");
        sb_num(&b, k->hinted_time_s);
        sb_puts(&b, ", \"auto_time_s\": ");
        sb_num(&b, k->auto_time_s);
        sb_printf(&b, ", \"hinted_stages\": %d, \"hinted_split_k\": %d, \"hinted_warps\": %d, \"auto_warps\": %d",
                  k->hinted_stages, k->hinted_split_k, k->hinted_warps, k->auto_warps);
        sb_puts(&b, ", \"auto_kernel\": ");
        sb_json_string(&b, k->auto_kernel);
        sb_puts(&b, ", \"hinted_tile_efficiency\": ");
        sb_num(&b, k->hinted_tile_efficiency);
        sb_puts(&b, ", \"hinted_wave_efficiency\": ");
        sb_num(&b, k->hinted_wave_efficiency);
        sb_puts(&b, ", \"auto_tile_efficiency\": ");
        sb_num(&b, k->auto_tile_efficiency);
        sb_puts(&b, ", \"auto_wave_efficiency\": ");
        sb_num(&b, k->auto_wave_efficiency);
        sb_printf(&b, ", \"instruction_differs\": %s}", k->instruction_differs ? "true" : "false");
    }
    sb_puts(&b, c && c->n ? "\n]" : "]");
    return opm_report_finish(&b, "kernel checks JSON", err);
}

char *opm_trace_kernel_checks_to_table(const opm_trace_kernel_checks *c, const opm_trace_report *r, opm_error *err)
{
    strbuf b = {0};
    sb_printf(&b, "GEMM groups with the kernel that ran (model %s; times per instance, us)\n",
              c ? c->model : DEFAULT_MODEL);
    sb_printf(&b, "%4s  %-9s %-8s %-15s %9s %9s %9s  %-28s %5s %5s  %s\n", "#", "library", "instr", "tile mxnxk/st/sk",
              "measured", "hinted", "auto", "auto kernel", "tileE", "waveE", "op");
    for (size_t i = 0; c && i < c->n; i++) {
        const opm_trace_kernel_check *k = &c->c[i];
        const opm_trace_group *g = r && k->group < r->n_groups ? &r->groups[k->group] : NULL;
        char tile[48];
        snprintf(tile, sizeof tile, "%dx%dx%d/%d/%d", k->hint.tile_m, k->hint.tile_n, k->hint.tile_k, k->hint.stages,
                 k->hint.split_k);
        sb_printf(&b, "%4zu  %-9s %-8s %-15s %9.2f %9.2f %9.2f  %-28s %5.2f %5.2f  %s%s\n", k->group,
                  k->hint.library ? k->hint.library : "", k->hint.instruction ? k->hint.instruction : "-", tile,
                  k->measured_mean_s * 1e6, k->hinted_time_s * 1e6, k->auto_time_s * 1e6, k->auto_kernel,
                  k->hinted_tile_efficiency, k->hinted_wave_efficiency, g ? opm_report_str(g->name) : "",
                  k->instruction_differs ? " (instruction family differs from the hardware's)" : "");
    }
    if (!c || !c->n) sb_puts(&b, "  (no GEMM group with a parsable kernel name)\n");
    sb_puts(&b, "  tile mxnxk/st/sk: in the op's orientation, 0 = not in the name; tileE, waveE: the hinted kernel's tile and wave efficiency\n");
    return opm_report_finish(&b, "kernel checks table", err);
}
