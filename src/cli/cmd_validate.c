/* cmd_validate.c — `opmodel validate-gemm-latency`: scores GEMM latency
 * models on measured CSVs (contract §4) with the fixed overhead calibrated
 * on a small deterministic split (then the power-capped rows predicted
 * again with the calibrated overheads, see gemm_latency.c), and prints the
 * contract §5 summary as a table or JSON, optionally with a
 * leave-one-hardware-out summary; optional per-row CSV and
 * calibrated-parameter outputs.  Also the contract §5 statistics printers
 * `opmodel validate` (cmd_validate_general.c) shares (validate_report.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "io/io_internal.h"
#include "validate/gemm_latency.h"
#include "validate_report.h"

#define OPM_STR(x) #x
#define OPM_XSTR(x) OPM_STR(x)

static const char help[] =
    "usage: opmodel validate-gemm-latency --data-dir DIR [--model M] [--compare-rooflines]\n"
    "         [--no-calibrate-fixed-overhead] [--ignore-kernel-column] [--leave-one-hardware-out]\n"
    "         [--host-overlap F] [--output-csv F] [--output-params F] [--format table|json]\n"
    "\n"
    "Reads every *.csv under DIR (contract §4 GEMM latency format), predicts each row with the model\n"
    "(default extended_roofline), calibrates only the fixed overhead per (hardware, source tag) on a\n"
    "small deterministic set of small and vector_like rows, and reports the error on every other row\n"
    "overall, by hardware and by size class (contract §5).  Rows of unknown hardware are skipped and\n"
    "counted.  A row with a clock_mhz value is predicted at that SM clock.\n"
    "\n"
    "  --compare-rooflines            run roofline (calibrated overhead added after), extended_roofline\n"
    "                                 and effective_roofline on the same split; MAPE deltas vs roofline\n"
    "  --no-calibrate-fixed-overhead  use each hardware's device_fixed_overhead_cycles as given\n"
    "  --host-overlap F               with calibration, the fraction of each group's floor (median\n"
    "                                 measured time of its calibration rows) that runs while the\n"
    "                                 kernel does: rows are predicted as overhead + max(F x floor,\n"
    "                                 kernel) (default " OPM_XSTR(OPM_GEMM_HOST_OVERLAP) "; 0: the overhead simply adds)\n"
    "  --ignore-kernel-column         predict every row with automatic kernel selection; by default a\n"
    "                                 row whose kernel column names a cuBLAS sgemm kernel is predicted\n"
    "                                 with that kernel's tile as hints (its warps from threads_per_cta,\n"
    "                                 its K slices from split_k, when the row has them), a row whose\n"
    "                                 kernel column names a Composable Kernel instance (aiter's\n"
    "                                 BlockSize x M x N x K labels) with that tile, and a row whose\n"
    "                                 kernel column names vLLM's cutlass scaled_mm on a wgmma (mma_sync)\n"
    "                                 part with the tile vLLM's sm90 (sm89, e4m3) fp8 dispatch runs for\n"
    "                                 its shape, unsplit\n"
    "  --leave-one-hardware-out       also score each hardware with all its rows held out and its\n"
    "                                 overhead taken from the others (median of their calibrated\n"
    "                                 overheads, same source tag): per hardware, pooled and by class;\n"
    "                                 and refit the fitted constants of the fp8 activation-quantisation\n"
    "                                 kernels (atomic cycles, back-to-back fraction) without each\n"
    "                                 hardware: the values per fold and the held-out error\n"
    "  --output-csv F                 per-row measured and predicted latency, and each model's kernel and\n"
    "                                 limiting resource (the diagnostics kernel, limiting_resource)\n"
    "  --output-params F              calibrated overheads and the calibration rows (JSON)\n"
    "  --format table|json            the report: a table (default) or one JSON object (contract §5)\n"
    "\n"
    "Output files are written all or none (a failure leaves every target as it was) and never\n"
    "overwrite a CSV read from DIR; F = - (or /dev/stdout) writes on stdout (one output at\n"
    "most), the report then going to stderr.  Rows with a field that cannot be read are skipped and counted; no row\n"
    "left to score is an error (exit 2).\n";

static double num(double x) { return isfinite(x) ? x : 0; }

void cli_json_stats(strbuf *b, const opm_err_stats *s)
{
    sb_printf(b, "{\"rows\": %zu, \"mape\": %.4f, \"median_ape\": %.4f, \"p90_ape\": %.4f, \"geomean_ratio\": %.5f, "
                 "\"signed_mean_error\": %.4f}",
              s->n, num(s->mape), num(s->median_ape), num(s->p90_ape), s->n ? num(s->geomean_ratio) : 1.0,
              num(s->signed_mean_error));
}

/* Hardware and group names come from the CSVs' text columns, so they go
 * through sb_json_string: any bytes in, valid JSON out. */
static void json_summary(strbuf *b, const opm_gemm_dataset *ds, const opm_gemm_validation *v)
{
    sb_puts(b, "{\"model\": ");
    sb_json_string(b, v->model);
    sb_printf(b, ", \"rows\": %zu, \"rows_failed\": %zu, \"calibration_rows\": %zu, "
                 "\"rows_skipped_unknown_hardware\": %zu, \"rows_skipped_bad\": %zu, \"rows_skipped_eager\": %zu, "
                 "\"files\": %zu,\n",
              v->rows, v->rows_failed, v->calibration_rows, ds->rows_unknown_hw, ds->rows_bad, v->rows_eager_skipped,
              ds->files);
    if (ds->first_bad[0]) {
        sb_puts(b, "  \"first_bad_row\": ");
        sb_json_string(b, ds->first_bad);
        sb_puts(b, ",\n");
    }
    sb_puts(b, "  \"overall\": ");
    cli_json_stats(b, &v->overall);
    sb_puts(b, ",\n  \"by_hardware\": {");
    int first = 1;
    for (size_t h = 0; h < ds->n_hw; h++) {
        if (!v->by_hw[h].n) continue;
        sb_printf(b, "%s\n    ", first ? "" : ",");
        sb_json_string(b, ds->hw_names[h]);
        sb_puts(b, ": ");
        cli_json_stats(b, &v->by_hw[h]);
        first = 0;
    }
    sb_puts(b, "},\n  \"by_class\": {");
    first = 1;
    for (int c = 0; c < GC_COUNT; c++) {
        if (!v->by_class[c].n) continue;
        sb_printf(b, "%s\n    \"%s\": ", first ? "" : ",", opm_gemm_class_names[c]);
        cli_json_stats(b, &v->by_class[c]);
        first = 0;
    }
    sb_printf(b, "},\n  \"host_overlap_fraction\": %.3f,\n  \"host_overlap_us\": {", v->host_overlap);
    for (size_t g = 0; g < ds->n_groups; g++) {
        sb_puts(b, g ? ", " : "");
        sb_json_string(b, ds->group_names[g]);
        sb_printf(b, ": %.3f", v->group_overlap_s[g] * 1e6);
    }
    sb_puts(b, "},\n  \"fixed_overhead_us\": {");
    for (size_t g = 0; g < ds->n_groups; g++) {
        sb_puts(b, g ? ", " : "");
        sb_json_string(b, ds->group_names[g]);
        sb_printf(b, ": %.3f", v->group_overhead_s[g] * 1e6);
    }
    sb_putc(b, '}');
    if (v->energy.n) {
        sb_printf(b, ",\n  \"energy\": {\"rows\": %zu, \"overall\": ", v->energy.n);
        cli_json_stats(b, &v->energy);
        sb_puts(b, ", \"by_hardware\": {");
        int f = 1;
        for (size_t h = 0; h < ds->n_hw; h++) {
            if (!v->energy_by_hw[h].n) continue;
            sb_puts(b, f ? "" : ", ");
            sb_json_string(b, ds->hw_names[h]);
            sb_puts(b, ": ");
            cli_json_stats(b, &v->energy_by_hw[h]);
            f = 0;
        }
        sb_puts(b, "}}");
    }
}

void cli_table_stats_line(strbuf *b, const char *label, const opm_err_stats *s)
{
    sb_printf(b, "  %-22s %7zu %8.2f %8.2f %8.2f %8.3f %8.2f\n", label, s->n, num(s->mape), num(s->median_ape),
           num(s->p90_ape), s->n ? num(s->geomean_ratio) : 1.0, num(s->signed_mean_error));
}

static void table_summary(strbuf *b, const opm_gemm_dataset *ds, const opm_gemm_validation *v)
{
    sb_printf(b, "model %s: %zu held-out rows, %zu failed, %zu calibration rows, %zu skipped (unknown hardware), "
           "%zu skipped (bad row), %zu skipped (eager timing, uncalibrated), %zu files\n",
           v->model, v->rows, v->rows_failed, v->calibration_rows, ds->rows_unknown_hw, ds->rows_bad,
           v->rows_eager_skipped, ds->files);
    if (ds->first_bad[0]) sb_printf(b, "  first bad row: %s\n", ds->first_bad);
    sb_printf(b, "  %-22s %7s %8s %8s %8s %8s %8s\n", "", "rows", "mape%", "median%", "p90%", "geomean", "signed%");
    cli_table_stats_line(b, "overall", &v->overall);
    for (size_t h = 0; h < ds->n_hw; h++)
        if (v->by_hw[h].n) cli_table_stats_line(b, ds->hw_names[h], &v->by_hw[h]);
    for (int c = 0; c < GC_COUNT; c++)
        if (v->by_class[c].n) cli_table_stats_line(b, opm_gemm_class_names[c], &v->by_class[c]);
    sb_puts(b, "  fixed overhead (us):");
    for (size_t g = 0; g < ds->n_groups; g++)
        sb_printf(b, " %s=%.2f", ds->group_names[g], v->group_overhead_s[g] * 1e6);
    sb_printf(b, "\n  host overlap (us, %.2f of the floor):", v->host_overlap);
    for (size_t g = 0; g < ds->n_groups; g++)
        sb_printf(b, " %s=%.2f", ds->group_names[g], v->group_overlap_s[g] * 1e6);
    sb_putc(b, '\n');
    if (v->energy.n) {
        sb_printf(b, "  %-22s %7s %8s %8s %8s %8s %8s\n", "energy", "rows", "mape%", "median%", "p90%", "geomean",
                  "signed%");
        cli_table_stats_line(b, "overall", &v->energy);
        for (size_t h = 0; h < ds->n_hw; h++)
            if (v->energy_by_hw[h].n) cli_table_stats_line(b, ds->hw_names[h], &v->energy_by_hw[h]);
    }
}

/* The refit of the fitted global constants (opm_gemm_refit_constants):
 * the values each fold chose and the held-out figures. */
static void table_refit(strbuf *b, const opm_gemm_dataset *ds, const opm_gemm_refit *rf)
{
    if (!rf->n_folds) return;
    sb_puts(b, "  refit of the fitted constants without the held-out hardware (activation-quantised rows,\n"
               "  uncalibrated; grid over atomic_cycles [2, 64], back_to_back [0.25, 1]):\n");
    sb_printf(b, "  %-22s %7s %8s %8s %9s %11s %12s\n", "held out", "rows", "atomic", "b2b", "fit mape%",
              "held shipped", "held refit%");
    for (size_t i = 0; i < rf->n_folds; i++) {
        const opm_gemm_refit_fold *f = &rf->folds[i];
        if (f->hw < 0)
            sb_printf(b, "  %-22s %7zu %8.1f %8.2f %9.2f %11s %12s\n", "(none: every hardware)", f->fit_rows,
                      f->atomic_cycles, f->back_to_back, f->fit_mape, "-", "-");
        else
            sb_printf(b, "  %-22s %7zu %8.1f %8.2f %9.2f %11.2f %12.2f\n", ds->hw_names[f->hw], f->held_rows,
                      f->atomic_cycles, f->back_to_back, f->fit_mape, f->held_mape_shipped, f->held_mape_refit);
    }
    sb_printf(b, "  %-22s %7zu %8s %8s %9s %11.2f %12.2f\n", "pooled held out", rf->pooled_rows, "", "", "",
              rf->pooled_shipped, rf->pooled_refit);
}

static void json_refit(strbuf *b, const opm_gemm_dataset *ds, const opm_gemm_refit *rf)
{
    sb_puts(b, ",\n  \"constant_refit\": {\"folds\": [");
    for (size_t i = 0; i < rf->n_folds; i++) {
        const opm_gemm_refit_fold *f = &rf->folds[i];
        sb_puts(b, i ? ",\n    {\"held_out\": " : "\n    {\"held_out\": ");
        if (f->hw < 0) sb_puts(b, "null");
        else sb_json_string(b, ds->hw_names[f->hw]);
        sb_printf(b, ", \"same_address_atomic_cycles\": %.2f, \"back_to_back_kernel_fraction\": %.2f, "
                     "\"fit_rows\": %zu, \"fit_mape\": %.4f, \"held_out_rows\": %zu",
                  f->atomic_cycles, f->back_to_back, f->fit_rows, num(f->fit_mape), f->held_rows);
        if (f->hw >= 0)
            sb_printf(b, ", \"held_out_mape_shipped\": %.4f, \"held_out_mape_refit\": %.4f",
                      num(f->held_mape_shipped), num(f->held_mape_refit));
        sb_putc(b, '}');
    }
    sb_printf(b, "], \"pooled_held_out_rows\": %zu, \"pooled_held_out_mape_shipped\": %.4f, "
                 "\"pooled_held_out_mape_refit\": %.4f}",
              rf->pooled_rows, num(rf->pooled_shipped), num(rf->pooled_refit));
}

/* The per-row CSV, appended to b. */
static void build_csv(strbuf *bp, const opm_gemm_dataset *ds, const opm_gemm_validation *vs,
                      opm_gemm_row_label *const *labels, size_t nv)
{
    strbuf b = *bp;
    sb_puts(&b, "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,class,calibration,measured_us");
    for (size_t j = 0; j < nv; j++) sb_printf(&b, ",%s_us", vs[j].model);
    sb_puts(&b, ",group");
    /* What each model chose, after the figures so that readers by column
     * name see the same file plus columns. */
    for (size_t j = 0; j < nv; j++) sb_printf(&b, ",%s_kernel,%s_limiting_resource", vs[j].model, vs[j].model);
    sb_putc(&b, '\n');
    for (size_t i = 0; i < ds->n_rows; i++) {
        const opm_gemm_row *r = &ds->rows[i];
        sb_csv_field(&b, ds->hw_names[r->hw]);
        sb_printf(&b, ",%s,%lld,%lld,%lld,%lld,%d,%d,%d,%s,%d,%.4f", opm_dtype_name(r->dtype),
                  (long long)r->batch, (long long)r->m, (long long)r->n, (long long)r->k, r->ta, r->tb, r->bias,
                  opm_gemm_class_names[r->cls], vs[0].is_cal[i], r->latency_s * 1e6);
        for (size_t j = 0; j < nv; j++) {
            if (isnan(vs[j].pred_s[i])) sb_putc(&b, ',');
            else sb_printf(&b, ",%.4f", vs[j].pred_s[i] * 1e6);
        }
        sb_putc(&b, ',');
        sb_csv_field(&b, ds->group_names[r->group]);
        for (size_t j = 0; j < nv; j++) {
            sb_putc(&b, ',');
            sb_csv_field(&b, labels[j][i].kernel);
            sb_putc(&b, ',');
            sb_csv_field(&b, labels[j][i].limit);
        }
        sb_putc(&b, '\n');
    }
    *bp = b;
}

/* The calibrated parameters as JSON, appended to b. */
static void build_params(strbuf *bp, const opm_gemm_dataset *ds, const opm_gemm_validation *vs, size_t nv,
                         int calibrate)
{
    strbuf b = *bp;
    sb_printf(&b, "{\"calibrated\": %s, \"groups_are\": \"hardware|source tag (source up to its first '/')\",\n"
                  " \"models\": {",
              calibrate ? "true" : "false");
    for (size_t j = 0; j < nv; j++) {
        sb_puts(&b, j ? ",\n  " : "\n  ");
        sb_json_string(&b, vs[j].model);
        sb_puts(&b, ": [");
        for (size_t g = 0; g < ds->n_groups; g++) {
            opm_hardware *h = ds->hw[ds->group_hw[g]];
            sb_puts(&b, g ? ",\n    {\"group\": " : "\n    {\"group\": ");
            sb_json_string(&b, ds->group_names[g]);
            sb_puts(&b, ", \"hardware\": ");
            sb_json_string(&b, ds->hw_names[ds->group_hw[g]]);
            sb_printf(&b, ", \"device_fixed_overhead_s\": %.9g, \"device_fixed_overhead_cycles\": %.1f, "
                          "\"host_overlap_s\": %.9g, \"calibration_rows\": %zu}",
                      vs[j].group_overhead_s[g], vs[j].group_overhead_s[g] * opm_hardware_clock_hz(h),
                      vs[j].group_overlap_s[g], vs[j].group_cal_rows[g]);
        }
        sb_putc(&b, ']');
    }
    sb_puts(&b, "},\n \"calibration_rows\": [");
    int first = 1;
    for (size_t i = 0; i < ds->n_rows; i++) {
        if (!vs[0].is_cal[i]) continue;
        const opm_gemm_row *r = &ds->rows[i];
        sb_puts(&b, first ? "\n  {\"hardware\": " : ",\n  {\"hardware\": ");
        sb_json_string(&b, ds->hw_names[r->hw]);
        sb_puts(&b, ", \"group\": ");
        sb_json_string(&b, ds->group_names[r->group]);
        sb_printf(&b, ", \"dtype\": \"%s\", \"batch\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, \"latency_us\": %.4f}",
                  opm_dtype_name(r->dtype), (long long)r->batch, (long long)r->m, (long long)r->n, (long long)r->k,
                  r->latency_s * 1e6);
        first = 0;
    }
    sb_puts(&b, "]}\n");
    *bp = b;
}

int cmd_validate_gemm_latency(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(help, stdout);
        return EXIT_OK;
    }
    const char *dir = NULL, *model = "extended_roofline", *csv = NULL, *params = NULL, *format = "table";
    int compare = 0, calibrate = 1, logo = 0, kernel_col = 1;
    double overlap = OPM_GEMM_HOST_OVERLAP;
    const char *overlap_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if ((v = cli_opt_value(argc, argv, &i, "--data-dir"))) dir = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--model"))) model = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--output-csv"))) csv = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--output-params"))) params = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--format"))) format = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--host-overlap"))) overlap_text = v;
        else if (!strcmp(a, "--compare-rooflines")) compare = 1;
        else if (!strcmp(a, "--no-calibrate-fixed-overhead")) calibrate = 0;
        else if (!strcmp(a, "--ignore-kernel-column")) kernel_col = 0;
        else if (!strcmp(a, "--leave-one-hardware-out")) logo = 1;
        else return cli_usage("validate-gemm-latency: unknown argument '%s' (see --help)", a);
        if (v && !*v) return cli_usage("%.*s: expected a value", (int)strcspn(a, "="), a);
    }
    if (overlap_text) {
        char *end;
        overlap = strtod(overlap_text, &end);
        if (end == overlap_text || *end || !(overlap >= 0 && overlap <= 0.5))
            return cli_usage("--host-overlap: expected a fraction in [0, 0.5], got '%s'", overlap_text);
    }
    if (!dir) return cli_usage("validate-gemm-latency: expected --data-dir DIR");
    int json = !strcmp(format, "json");
    if (!json && strcmp(format, "table")) return cli_usage("--format: expected table or json, got '%s'", format);
    if (!opm_model_find(model)) return cli_usage("--model: no model named '%s' (see `opmodel models`)", model);

    opm_error err;
    opm_gemm_dataset ds;
    if (opm_gemm_dataset_load(dir, &ds, &err)) return cli_fail(&err);
    if (ds.n_rows == 0) {
        /* Nothing to score is an input error, not a perfect score. */
        int rc = ds.first_bad[0]
                     ? cli_usage("--data-dir: no row to score under '%s' (%zu bad rows, %zu of hardware not known; "
                                 "first bad row %s)", dir, ds.rows_bad, ds.rows_unknown_hw, ds.first_bad)
                     : cli_usage("--data-dir: no row to score under '%s' (%zu of hardware not known)", dir,
                                 ds.rows_unknown_hw);
        opm_gemm_dataset_free(&ds);
        return rc;
    }
    const char *models[3] = {model, NULL, NULL};
    size_t nv = 1;
    if (compare) {
        models[0] = "roofline";
        models[1] = "extended_roofline";
        models[2] = "effective_roofline";
        nv = 3;
    }
    /* vs: the report's validation (calibrated unless asked not to); us: the
     * uncalibrated one (each hardware's own fixed time, what a user gets),
     * reported first when vs is calibrated. */
    opm_gemm_validation vs[3], us[3];
    memset(vs, 0, sizeof vs);
    memset(us, 0, sizeof us);
    double *base[3] = {NULL, NULL, NULL};
    /* Per row, what each model chose (only for --output-csv). */
    opm_gemm_row_label *labels[3] = {NULL, NULL, NULL};
    int rc = EXIT_OK;
    for (size_t j = 0; j < nv && rc == EXIT_OK; j++) {
        base[j] = malloc((ds.n_rows + 1) * sizeof *base[j]);
        if (!base[j]) { rc = cli_usage("out of memory"); break; }
        if (csv && !(labels[j] = malloc((ds.n_rows + 1) * sizeof *labels[j]))) { rc = cli_usage("out of memory"); break; }
        opm_gemm_validate_opts o = {models[j], calibrate, -1, overlap, !kernel_col};
        if (opm_gemm_base_predictions_labelled(&ds, models[j], kernel_col, base[j], labels[j], &err) ||
            opm_gemm_validate(&ds, &o, base[j], &vs[j], &err)) {
            rc = cli_fail(&err);
            break;
        }
        if (!calibrate) continue;
        opm_gemm_validate_opts uo = {models[j], 0, -1, overlap, !kernel_col};
        if (opm_gemm_validate(&ds, &uo, base[j], &us[j], &err)) {
            rc = cli_fail(&err);
            break;
        }
        /* Second pass: power-capped rows again with the calibrated
         * overheads (the cap credits the overhead's idle time); the
         * calibration rows are far from the cap, so the overheads stay.
         * Their labels follow, so that the CSV names the kernel and the
         * limit of the prediction it prints. */
        double *first = malloc((ds.n_rows + 1) * sizeof *first);
        if (!first) { rc = cli_usage("out of memory"); break; }
        memcpy(first, base[j], ds.n_rows * sizeof *first);
        if (opm_gemm_repredict_with_overhead_labelled(&ds, models[j], kernel_col, vs[j].group_overhead_s, -1, base[j],
                                                      labels[j], &err)) {
            free(first);
            rc = cli_fail(&err);
            break;
        }
        opm_gemm_validation_free(&vs[j]);
        if (opm_gemm_validate(&ds, &o, base[j], &vs[j], &err)) rc = cli_fail(&err);
        /* Leave-one-out starts again from the first pass. */
        memcpy(base[j], first, ds.n_rows * sizeof *first);
        free(first);
    }
    if (rc == EXIT_OK && vs[0].rows == 0)
        rc = cli_usage("--data-dir: no held-out row to score under '%s': its %zu rows all calibrate the overhead", dir,
                       ds.n_rows);
    /* The report (JSON or table) is built whole and printed only once it and
     * the output files are complete, so a failure part way (an unwritable
     * --output-csv, a leave-one-out error) prints one error line and no
     * partial report. */
    strbuf js = {0};
    if (rc == EXIT_OK) {
        if (json) {
            sb_puts(&js, compare ? "{\"baseline\": \"roofline\", \"models\": [\n" : "");
            for (size_t j = 0; j < nv; j++) {
                json_summary(&js, &ds, &vs[j]);
                if (calibrate) {
                    sb_puts(&js, ",\n  \"uncalibrated\": ");
                    json_summary(&js, &ds, &us[j]);
                    sb_putc(&js, '}');
                }
                sb_puts(&js, compare ? (j + 1 < nv ? "},\n" : "}") : "");
            }
            if (compare) {
                sb_puts(&js, "],\n \"mape_delta_vs_roofline\": {");
                for (size_t j = 1; j < nv; j++) {
                    sb_puts(&js, j > 1 ? ", " : "");
                    sb_json_string(&js, vs[j].model);
                    sb_printf(&js, ": {\"overall\": %.4f, \"ratio\": %.3f, \"by_class\": {",
                              vs[j].overall.mape - vs[0].overall.mape,
                              vs[j].overall.mape > 0 ? vs[0].overall.mape / vs[j].overall.mape : 0);
                    int first = 1;
                    for (int c = 0; c < GC_COUNT; c++) {
                        if (!vs[j].by_class[c].n) continue;
                        sb_printf(&js, "%s\"%s\": %.4f", first ? "" : ", ", opm_gemm_class_names[c],
                                  vs[j].by_class[c].mape - vs[0].by_class[c].mape);
                        first = 0;
                    }
                    sb_puts(&js, "}}");
                }
                sb_putc(&js, '}');
            }
        } else {
            for (size_t j = 0; j < nv; j++) {
                if (calibrate) {
                    sb_puts(&js, "uncalibrated (each hardware's own fixed time; what a user gets):\n");
                    table_summary(&js, &ds, &us[j]);
                    sb_puts(&js, "calibrated (fixed overhead fitted per hardware and source on a few small rows):\n");
                }
                table_summary(&js, &ds, &vs[j]);
            }
            if (compare) {
                sb_puts(&js, "MAPE delta vs roofline (percentage points; ratio = roofline / model):\n");
                for (size_t j = 1; j < nv; j++) {
                    sb_printf(&js, "  %-20s overall %+.2f (ratio %.2fx)", vs[j].model,
                              vs[j].overall.mape - vs[0].overall.mape,
                              vs[j].overall.mape > 0 ? vs[0].overall.mape / vs[j].overall.mape : 0);
                    for (int c = 0; c < GC_COUNT; c++)
                        if (vs[j].by_class[c].n)
                            sb_printf(&js, " %s %+.2f", opm_gemm_class_names[c],
                                      vs[j].by_class[c].mape - vs[0].by_class[c].mape);
                    sb_putc(&js, '\n');
                }
            }
        }
        if (logo) {
            /* Each hardware scored with overheads from the others only. */
            if (json) sb_puts(&js, ",\n \"leave_one_hardware_out\": [");
            else sb_puts(&js, "leave-one-hardware-out: every row of a hardware held out, its fixed overhead the median\n"
                              "of the other hardware's calibrated overheads of the same source tag\n");
            for (size_t j = 0; j < nv && rc == EXIT_OK; j++) {
                opm_gemm_validation lv;
                if (opm_gemm_leave_one_out(&ds, models[j], kernel_col, base[j], overlap, &lv, &err)) {
                    rc = cli_fail(&err);
                    break;
                }
                opm_gemm_refit rf;
                if (opm_gemm_refit_constants(&ds, models[j], kernel_col, base[j], &rf, &err)) {
                    opm_gemm_validation_free(&lv);
                    rc = cli_fail(&err);
                    break;
                }
                if (json) {
                    sb_puts(&js, j ? ",\n  " : "\n  ");
                    json_summary(&js, &ds, &lv);
                    json_refit(&js, &ds, &rf);
                    sb_putc(&js, '}');
                } else {
                    table_summary(&js, &ds, &lv);
                    table_refit(&js, &ds, &rf);
                }
                opm_gemm_refit_free(&rf);
                opm_gemm_validation_free(&lv);
            }
            if (json) sb_putc(&js, ']');
        }
        if (json && rc == EXIT_OK) sb_puts(&js, "}\n");
        /* Every output is built whole, then written all or none; with an
         * output on stdout the report goes to stderr. */
        strbuf cb = {0}, pb = {0};
        if (rc == EXIT_OK && csv) build_csv(&cb, &ds, vs, labels, nv);
        if (rc == EXIT_OK && params) build_params(&pb, &ds, vs, nv, calibrate);
        if (rc == EXIT_OK && (js.oom || cb.oom || pb.oom)) rc = cli_usage("out of memory");
        /* Decided before the outputs replace any file stdout may point at. */
        int report_to_stderr = (csv && cli_is_stdout(csv)) || (params && cli_is_stdout(params));
        if (rc == EXIT_OK) {
            cli_output outs[2];
            size_t no = 0;
            if (csv) outs[no++] = (cli_output){"--output-csv", csv, cb.p ? cb.p : "", cb.n};
            if (params) outs[no++] = (cli_output){"--output-params", params, pb.p ? pb.p : "", pb.n};
            const char *inputs[1] = {dir};
            rc = cli_write_outputs(outs, no, inputs, 1);
        }
        FILE *rf = report_to_stderr ? stderr : stdout;
        if (rc == EXIT_OK && js.n && (fwrite(js.p, 1, js.n, rf) != js.n || fflush(rf)))
            rc = cli_usage("%s: I/O error", report_to_stderr ? "stderr" : "stdout");
        free(cb.p);
        free(pb.p);
    }
    free(js.p);
    for (size_t j = 0; j < nv; j++) {
        free(base[j]);
        free(labels[j]);
        opm_gemm_validation_free(&vs[j]);
        opm_gemm_validation_free(&us[j]);
    }
    opm_gemm_dataset_free(&ds);
    return rc;
}
