/* cmd_validate_general.c — `opmodel validate`: scores a model on measured
 * latencies (and energies) of any op kind, the contract §4 general
 * measurement JSONL, and prints the contract §5 summary (plus by_kind and
 * by_source) as a table or JSON; an optional per-line CSV.  The reading,
 * predicting, calibrating and statistics are the library's
 * (src/validate/general.c); this file parses arguments and prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "io/io_internal.h"
#include "validate/general.h"
#include "validate_report.h"

static const char help[] =
    "usage: opmodel validate --data FILE.jsonl|DIR [--data ...] [--model M] [--calibrate-fixed-overhead]\n"
    "         [--launch-interval-us X | --host NAME] [--output-csv F] [--format table|json]\n"
    "\n"
    "Reads measurements of any op kind (contract §4 general JSONL), one object per line:\n"
    "  {\"hardware\": NAME|PATH, \"clock_mhz\"?: F, \"op\": {...full or short form...},\n"
    "   \"measured\": {\"latency_s\": F, \"energy_j\"?: F}, \"source\"?: S, \"timing\"?: graph|eager|kernel|events,\n"
    "   \"kernel\"?: S}\n"
    "predicts each line with the model (default extended_roofline), at the line's clock when it gives\n"
    "clock_mhz, and reports MAPE, median and p90 APE, geomean predicted/measured and signed mean error\n"
    "(percent) overall, by hardware, by kind, by source (lines without one: \"unknown\") and, for gemm and\n"
    "batched_gemm lines, by size class (contract §5); the same for energy over the lines that carry\n"
    "measured.energy_j.  Uncalibrated unless asked.\n"
    "\n"
    "  --data FILE|DIR             a JSONL file, or a folder whose *.jsonl files are read (recursively,\n"
    "                              sorted); may be given more than once\n"
    "  --model M                   any model of `opmodel models` (default extended_roofline)\n"
    "  --calibrate-fixed-overhead  per (hardware, source) group, the first min(8, half the group) lines\n"
    "                              by (predicted latency, file order) calibrate an overhead,\n"
    "                              max(0, median(measured - predicted)) over them; they are not scored,\n"
    "                              and every other line of the group is scored as predicted + overhead\n"
    "  --launch-interval-us X      host dispatch inside a \"timing\": \"events\" line (CUDA events around one\n"
    "                              eager call), added to its prediction, in microseconds\n"
    "  --host NAME                 that dispatch from a measured host of `opmodel workload --help`\n"
    "                              (default pytorch_eager); other timings get none\n"
    "  --output-csv F              per line: file,line,hardware,kind,source,measured_latency_s,\n"
    "                              predicted_latency_s,ape,bound,limiting,calibration,measured_energy_j,\n"
    "                              predicted_energy_j (ape in percent; limiting is the prediction's\n"
    "                              limiting_resource or limiting_level)\n"
    "  --format table|json         the report: a table (default) or one JSON object (contract §5)\n"
    "\n"
    "A hardware path is opened relative to the current folder.  Blank lines are skipped.  A bad line\n"
    "(invalid JSON, an unknown or invalid key, an op that does not validate, a prediction error, a\n"
    "latency that is not a positive number) is counted in rows_failed, the first named\n"
    "FILE:LINE: field: ...; a line whose hardware does not open is counted in rows_unknown_hw.  Neither\n"
    "stops the run.  Output files are written all or none and never overwrite an input; F = - writes\n"
    "on stdout, the report then going to stderr.  Exit status 2 on a usage or input error, or when no\n"
    "line is left to score; 0 otherwise.\n";

static void json_str_or_null(strbuf *b, const char *s)
{
    if (s[0]) sb_json_string(b, s);
    else sb_puts(b, "null");
}

/* by_hardware, by_kind, by_source and by_class of one set of scores,
 * entries with no scored line left out. */
static void json_breakdowns(strbuf *b, const opm_general *v, const opm_general_scores *s, const char *indent)
{
    sb_printf(b, ",\n%s\"by_hardware\": {", indent);
    int first = 1;
    for (size_t h = 0; h < v->n_hw; h++) {
        if (!s->by_hw[h].n) continue;
        sb_printf(b, "%s\n%s  ", first ? "" : ",", indent);
        sb_json_string(b, v->hw_tab.strs[h]);
        sb_puts(b, ": ");
        cli_json_stats(b, &s->by_hw[h]);
        first = 0;
    }
    sb_printf(b, "},\n%s\"by_kind\": {", indent);
    first = 1;
    for (int k = 0; k < OPM_KIND_COUNT; k++) {
        if (!s->by_kind[k].n) continue;
        sb_printf(b, "%s\n%s  \"%s\": ", first ? "" : ",", indent, opm_kind_name((opm_kind)k));
        cli_json_stats(b, &s->by_kind[k]);
        first = 0;
    }
    sb_printf(b, "},\n%s\"by_source\": {", indent);
    first = 1;
    for (size_t i = 0; i < v->source_tab.count; i++) {
        if (!s->by_source[i].n) continue;
        sb_printf(b, "%s\n%s  ", first ? "" : ",", indent);
        sb_json_string(b, v->source_tab.strs[i]);
        sb_puts(b, ": ");
        cli_json_stats(b, &s->by_source[i]);
        first = 0;
    }
    sb_printf(b, "},\n%s\"by_class\": {", indent);
    first = 1;
    for (int c = 0; c < GC_COUNT; c++) {
        if (!s->by_class[c].n) continue;
        sb_printf(b, "%s\n%s  \"%s\": ", first ? "" : ",", indent, opm_gemm_class_names[c]);
        cli_json_stats(b, &s->by_class[c]);
        first = 0;
    }
    sb_putc(b, '}');
}

/* Hardware names, sources and messages come from the data, so they go
 * through sb_json_string: any bytes in, valid JSON out. */
static void json_summary(strbuf *b, const opm_general *v)
{
    sb_puts(b, "{\"model\": ");
    sb_json_string(b, v->model);
    sb_printf(b, ", \"rows\": %zu, \"rows_failed\": %zu, \"calibration_rows\": %zu, \"rows_unknown_hw\": %zu,\n"
                 " \"first_bad\": ",
              v->rows, v->rows_failed, v->calibration_rows, v->rows_unknown_hw);
    json_str_or_null(b, v->first_bad);
    sb_printf(b, ", \"calibrated\": %s, \"files\": %zu,\n \"first_unknown_hw\": ", v->calibrate ? "true" : "false",
              v->files);
    json_str_or_null(b, v->first_unknown_hw);
    sb_puts(b, ",\n \"overall\": ");
    cli_json_stats(b, &v->time.overall);
    json_breakdowns(b, v, &v->time, " ");
    if (v->calibrate) {
        sb_puts(b, ",\n \"fixed_overhead\": [");
        for (size_t g = 0; g < v->group_tab.count; g++) {
            const opm_general_group *gr = &v->groups[g];
            sb_puts(b, g ? ",\n  {\"hardware\": " : "\n  {\"hardware\": ");
            sb_json_string(b, v->hw_tab.strs[gr->hw]);
            sb_puts(b, ", \"source\": ");
            sb_json_string(b, v->source_tab.strs[gr->source]);
            sb_printf(b, ", \"calibration_rows\": %zu, \"overhead_s\": ", gr->cal_rows);
            sb_num(b, gr->overhead_s);
            sb_putc(b, '}');
        }
        sb_putc(b, ']');
    }
    if (v->energy_rows) {
        sb_printf(b, ",\n \"energy\": {\"rows\": %zu, \"overall\": ", v->energy_rows);
        cli_json_stats(b, &v->energy.overall);
        json_breakdowns(b, v, &v->energy, "  ");
        sb_putc(b, '}');
    }
    sb_puts(b, "}\n");
}

/* One set of scores as table rows, grouped by breakdown. */
static void table_breakdowns(strbuf *b, const opm_general *v, const opm_general_scores *s)
{
    char label[64];
    cli_table_stats_line(b, "overall", &s->overall);
    for (size_t h = 0; h < v->n_hw; h++)
        if (s->by_hw[h].n) {
            snprintf(label, sizeof label, "hw %s", v->hw_tab.strs[h]);
            cli_table_stats_line(b, label, &s->by_hw[h]);
        }
    for (int k = 0; k < OPM_KIND_COUNT; k++)
        if (s->by_kind[k].n) {
            snprintf(label, sizeof label, "kind %s", opm_kind_name((opm_kind)k));
            cli_table_stats_line(b, label, &s->by_kind[k]);
        }
    for (size_t i = 0; i < v->source_tab.count; i++)
        if (s->by_source[i].n) {
            snprintf(label, sizeof label, "source %s", v->source_tab.strs[i]);
            cli_table_stats_line(b, label, &s->by_source[i]);
        }
    for (int c = 0; c < GC_COUNT; c++)
        if (s->by_class[c].n) {
            snprintf(label, sizeof label, "class %s", opm_gemm_class_names[c]);
            cli_table_stats_line(b, label, &s->by_class[c]);
        }
}

static void table_summary(strbuf *b, const opm_general *v)
{
    sb_printf(b, "model %s (%s): %zu lines scored, %zu bad, %zu calibration, %zu unknown hardware, %zu files\n",
              v->model, v->calibrate ? "fixed overhead calibrated per hardware and source" : "uncalibrated", v->rows,
              v->rows_failed, v->calibration_rows, v->rows_unknown_hw, v->files);
    if (v->first_bad[0]) sb_printf(b, "  first bad line: %s\n", v->first_bad);
    if (v->first_unknown_hw[0]) sb_printf(b, "  first line of unknown hardware: %s\n", v->first_unknown_hw);
    sb_printf(b, "  %-22s %7s %8s %8s %8s %8s %8s\n", "latency", "rows", "mape%", "median%", "p90%", "geomean",
              "signed%");
    table_breakdowns(b, v, &v->time);
    if (v->energy_rows) {
        sb_printf(b, "  %-22s %7s %8s %8s %8s %8s %8s\n", "energy", "rows", "mape%", "median%", "p90%", "geomean",
                  "signed%");
        table_breakdowns(b, v, &v->energy);
    }
    if (v->calibrate) {
        sb_puts(b, "  fixed overhead (us, calibration lines):");
        for (size_t g = 0; g < v->group_tab.count; g++) {
            const opm_general_group *gr = &v->groups[g];
            sb_printf(b, " %s|%s=%.3f (%zu)", v->hw_tab.strs[gr->hw], v->source_tab.strs[gr->source],
                      gr->overhead_s * 1e6, gr->cal_rows);
        }
        sb_putc(b, '\n');
    }
}

/* The per-line CSV, every predicted line in file order (bad lines and lines
 * of unknown hardware have no prediction and no row). */
static void build_csv(strbuf *b, const opm_general *v)
{
    sb_puts(b, "file,line,hardware,kind,source,measured_latency_s,predicted_latency_s,ape,bound,limiting,calibration,"
               "measured_energy_j,predicted_energy_j\n");
    for (size_t i = 0; i < v->n_lines && !b->oom; i++) {
        const opm_general_line *l = &v->lines[i];
        double pred = opm_general_line_predicted_s(v, l);
        sb_csv_field(b, v->file_tab.strs[l->file]);
        sb_printf(b, ",%u,", l->line);
        sb_csv_field(b, v->hw_tab.strs[l->hw]);
        sb_printf(b, ",%s,", opm_kind_name((opm_kind)l->kind));
        sb_csv_field(b, v->source_tab.strs[l->source]);
        sb_putc(b, ',');
        sb_num(b, l->measured_s);
        sb_putc(b, ',');
        sb_num(b, pred);
        sb_printf(b, ",%.4f,%s,", fabs(pred - l->measured_s) / l->measured_s * 100, opm_bound_name((opm_bound)l->bound));
        if (l->limiting != OPM_GENERAL_NONE) sb_csv_field(b, v->limiting_tab.strs[l->limiting]);
        sb_printf(b, ",%d,", l->is_cal);
        if (!isnan(l->measured_j)) sb_num(b, l->measured_j);
        sb_putc(b, ',');
        sb_num(b, l->predicted_j);
        sb_putc(b, '\n');
    }
}

int cmd_validate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(help, stdout);
        return EXIT_OK;
    }
    const char *model = "extended_roofline", *csv = NULL, *format = "table", *interval = NULL, *host = NULL;
    const char **data = calloc((size_t)argc + 1, sizeof *data);
    if (!data) return cli_usage("out of memory");
    size_t n_data = 0;
    int calibrate = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        if ((val = cli_opt_value(argc, argv, &i, "--data"))) data[n_data++] = val;
        else if ((val = cli_opt_value(argc, argv, &i, "--model"))) model = val;
        else if ((val = cli_opt_value(argc, argv, &i, "--output-csv"))) csv = val;
        else if ((val = cli_opt_value(argc, argv, &i, "--format"))) format = val;
        else if ((val = cli_opt_value(argc, argv, &i, "--launch-interval-us"))) interval = val;
        else if ((val = cli_opt_value(argc, argv, &i, "--host"))) host = val;
        else if (!strcmp(a, "--calibrate-fixed-overhead")) calibrate = 1;
        else {
            free(data);
            return cli_usage("validate: unknown argument '%s' (see --help)", a);
        }
        if (val && !*val) {
            free(data);
            return cli_usage("%.*s: expected a value", (int)strcspn(a, "="), a);
        }
    }
    int json = !strcmp(format, "json"), rc = EXIT_OK;
    if (!n_data) rc = cli_usage("validate: expected --data FILE.jsonl|DIR (see --help)");
    else if (!json && strcmp(format, "table")) rc = cli_usage("--format: expected table or json, got '%s'", format);
    else if (interval && host) rc = cli_usage("validate: --launch-interval-us and --host: give one");
    double host_s = opm_workload_host_at(0)->launch_interval_s;
    if (rc == EXIT_OK && interval) {
        char *end;
        double us = strtod(interval, &end);
        if (end == interval || *end || !(us >= 0) || us > 1e6)
            rc = cli_usage("--launch-interval-us: expected a number of microseconds in [0, 1e6], got '%s'", interval);
        host_s = us * 1e-6;
    }
    if (rc == EXIT_OK && host) {
        const opm_workload_host *h = opm_workload_host_find(host);
        if (!h) rc = cli_usage("--host: no measured host named '%s' (see `opmodel workload --help`)", host);
        else host_s = h->launch_interval_s;
    }
    if (rc != EXIT_OK) {
        free(data);
        return rc;
    }

    opm_error err;
    opm_general v;
    if (opm_general_init(&v, model, calibrate, &err)) rc = cli_fail(&err);
    v.events_host_s = host_s;
    for (size_t i = 0; rc == EXIT_OK && i < n_data; i++)
        if (opm_general_add_path(&v, data[i], "--data", &err)) rc = cli_fail(&err);
    if (rc == EXIT_OK && opm_general_score(&v, &err)) rc = cli_fail(&err);
    /* Nothing to score is an input error, not a perfect score. */
    if (rc == EXIT_OK && v.rows == 0) {
        if (v.n_lines)
            rc = cli_usage("--data: no line left to score: its %zu predicted lines all calibrate the overhead",
                           v.n_lines);
        else if (v.first_bad[0])
            rc = cli_usage("--data: no line to score (%zu bad, %zu of hardware not known; first bad line %s)",
                           v.rows_failed, v.rows_unknown_hw, v.first_bad);
        else if (v.rows_unknown_hw)
            rc = cli_usage("--data: no line to score (%zu of hardware not known; first %s)", v.rows_unknown_hw,
                           v.first_unknown_hw);
        else
            rc = cli_usage("--data: no line to score (the input has no measurement lines)");
    }
    /* The report and the CSV are built whole, then the CSV written all or
     * none, then the report printed: a failure prints one error line and no
     * partial report. */
    strbuf rep = {0}, cb = {0};
    if (rc == EXIT_OK) {
        if (json) json_summary(&rep, &v);
        else table_summary(&rep, &v);
        if (csv) build_csv(&cb, &v);
        if (rep.oom || cb.oom) rc = cli_usage("out of memory");
    }
    /* Decided before the CSV replaces any file stdout may point at. */
    int report_to_stderr = csv && cli_is_stdout(csv);
    if (rc == EXIT_OK && csv) {
        cli_output out = {"--output-csv", csv, cb.p ? cb.p : "", cb.n};
        rc = cli_write_outputs(&out, 1, data, n_data);
    }
    FILE *rf = report_to_stderr ? stderr : stdout;
    if (rc == EXIT_OK && rep.n && (fwrite(rep.p, 1, rep.n, rf) != rep.n || fflush(rf)))
        rc = cli_usage("%s: I/O error", report_to_stderr ? "stderr" : "stdout");
    free(rep.p);
    free(cb.p);
    opm_general_free(&v);
    free(data);
    return rc;
}
