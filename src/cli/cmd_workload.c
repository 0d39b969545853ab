/* cmd_workload.c — `opmodel workload` (a whole op sequence predicted and
 * summed, include/opmodel/workload.h) and `opmodel validate-artifact` (the
 * EnergAIzer end-to-end runs against it, src/workload/artifact.c): argument
 * parsing and printing as table, JSON, CSV and SVG. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "io/io_internal.h"
#include "validate_report.h"
#include "workload/artifact.h"

static const char workload_help[] =
    "usage: opmodel workload FILE --hardware NAME|FILE [--clock-mhz F] [--model M] [--mode eager|graph]\n"
    "                        [--launch-interval-us X | --host NAME] [--as-listed] [--format table|json|csv]\n"
    "\n"
    "Predicts every op of a workload and sums them: latency, energy, average power, FLOPs and DRAM\n"
    "bytes, with the breakdown by kind and by op, largest latency first.  FILE (- reads stdin) is\n"
    "detected by content: JSONL of ops (contract §1, full or short form, an optional \"count\" per\n"
    "line, what `opmodel llm --emit-workload` writes), an EnergAIzer kernel-list JSON\n"
    "([query, [op, engine, precision]] entries), or a PyTorch profiler trace (its recognised ops in\n"
    "host launch order; ops without a model are skipped and counted).  A kernel list whose file name\n"
    "starts with MODEL_ for a model it knows (resnet18, resnet34, resnet50, resnet101, resnet152,\n"
    "mobilevitmodel, gpt2model: the artifact's naming) also gets the kernels that model runs and the\n"
    "list leaves out (batch norms, pooling, residual adds, GPT-2's causal-mask select), counted as\n"
    "implied (docs/workload.md).\n"
    "\n"
    "  --hardware NAME|FILE    a built-in name or a hardware YAML file\n"
    "  --clock-mhz F           run at F MHz (compute and on-chip bandwidth scale; DRAM bandwidth\n"
    "                          does not, the L2 part of DRAM latency does)\n"
    "  --model M               per-op model (default extended_roofline; see `opmodel models`)\n"
    "  --mode eager|graph      eager (default): each kernel takes max(device time, launch interval),\n"
    "                          idle power charged in the gaps; graph: kernels back to back\n"
    "  --launch-interval-us X  eager host time between two launches, in microseconds\n"
    "  --host NAME             take the interval from a measured host (default pytorch_eager):\n"
    "%s"
    "  --as-listed             read a kernel list as it is: no implied kernels\n"
    "  --format table|json|csv the report (default table)\n"
    "\n"
    "Exit status: 0 ok, 2 usage or input error.\n";

static const char artifact_help[] =
    "usage: opmodel validate-artifact [--data-dir DIR] [--model M] [--output-csv F] [--output-plot F.svg]\n"
    "                                 [--as-listed] [--no-harness-startup] [--format table|json]\n"
    "\n"
    "Scores whole-workload predictions on the EnergAIzer end-to-end runs (DIR, default data/energaizer:\n"
    "measurements/<hardware>*_e2e.csv, workloads/all/*.json, workloads/dvfs/*.json).  Each run is\n"
    "matched to its kernel list by the artifact's rule {model}_{config}_p{prec}_b{batch}_s{seq}_mode{mode}\n"
    "(vision models without _s and _mode, their lists naming the clock), predicted in eager mode at the\n"
    "run's avg_freq; per hardware only the host launch interval is calibrated, on at most 4 runs (the\n"
    "most host-bound), which are not scored.  Reports time, energy and power (energy / time) errors,\n"
    "calibrated and uncalibrated (default host), overall, by hardware, by measurement file, by model\n"
    "family and by clock (contract §5 keys), and the runs left unmatched or out of memory.  Kernel lists\n"
    "get the kernels their model's architecture runs and the list leaves out (see `opmodel workload\n"
    "--help`) unless --as-listed.  A run's time is the artifact harness's sampling window divided by\n"
    "its iterations (_iter{n}), and the window holds the harness's start-up: each prediction adds\n"
    "start-up / n, idle, the start-up measured per file on its unmatched runs (n x time - 30 s - time/2,\n"
    "median); unless --no-harness-startup.\n"
    "\n"
    "  --data-dir DIR     the artifact folder (default data/energaizer)\n"
    "  --model M          per-op model (default extended_roofline)\n"
    "  --output-csv F     one row per run: file,workload,hardware,family,clock_mhz,avg_freq_mhz,status,\n"
    "                     measured_time_s,predicted_time_s,uncalibrated_time_s,measured_energy_j,\n"
    "                     predicted_energy_j,uncalibrated_energy_j,predicted_device_time_s,iterations\n"
    "  --output-plot F    SVG: predicted vs measured time and energy (log-log, a colour per hardware,\n"
    "                     y = x and a ±10%% band) and per-family predicted/measured bars\n"
    "  --as-listed        score the kernel lists as shipped (no implied kernels)\n"
    "  --no-harness-startup  predict the iterations alone, without the harness start-up's share\n"
    "  --format table|json  the report (default table)\n"
    "\n"
    "Exit status: 0 ok, 2 usage or input error.\n";

/* ---- workload ---- */

static void print_workload_help(void)
{
    char hosts[2048] = "";
    for (size_t i = 0; i < opm_workload_host_count(); i++) {
        const opm_workload_host *h = opm_workload_host_at(i);
        char line[512];
        snprintf(line, sizeof line, "                            %-14s %5.1f us  %s\n", h->name, h->launch_interval_s * 1e6,
                 h->source);
        strncat(hosts, line, sizeof hosts - strlen(hosts) - 1);
    }
    printf(workload_help, hosts);
}

static void entry_json(strbuf *b, const opm_workload_entry *e)
{
    sb_puts(b, "{\"name\": ");
    sb_json_string(b, e->name);
    sb_printf(b, ", \"kind\": \"%s\", \"count\": %llu, \"latency_s\": ", opm_kind_name(e->kind),
              (unsigned long long)e->count);
    sb_num(b, e->latency_s);
    sb_puts(b, ", \"device_time_s\": ");
    sb_num(b, e->device_time_s);
    sb_puts(b, ", \"energy_j\": ");
    sb_num(b, e->energy_j);
    sb_puts(b, ", \"flops\": ");
    sb_num(b, e->flops);
    sb_puts(b, ", \"bytes\": ");
    sb_num(b, e->bytes);
    sb_putc(b, '}');
}

static void workload_json(strbuf *b, const opm_workload_result *r, const char *hw, const char *model, const char *mode,
                          uint64_t skipped, uint64_t implied)
{
    const opm_workload_totals *t = opm_workload_result_totals(r);
    sb_puts(b, "{\"hardware\": ");
    sb_json_string(b, hw);
    sb_puts(b, ", \"model\": ");
    sb_json_string(b, model);
    sb_printf(b, ", \"mode\": \"%s\", \"kernels\": %llu, \"skipped\": %llu, \"implied\": %llu", mode,
              (unsigned long long)t->kernels, (unsigned long long)skipped, (unsigned long long)implied);
    const struct {
        const char *k;
        double v;
    } f[] = {{"latency_s", t->latency_s},         {"energy_j", t->energy_j},
             {"average_power_w", t->average_power_w}, {"flops", t->flops},
             {"bytes", t->bytes},                 {"device_time_s", t->device_time_s},
             {"idle_s", t->idle_s},               {"op_energy_j", t->op_energy_j},
             {"idle_energy_j", t->idle_energy_j}, {"idle_power_w", t->idle_power_w},
             {"launch_interval_s", t->launch_interval_s}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        sb_printf(b, ", \"%s\": ", f[i].k);
        sb_num(b, f[i].v);
    }
    /* A missing coefficient is said, not silently 0. */
    sb_puts(b, ",\n \"warnings\": [");
    if (t->idle_power_w <= 0 && t->idle_s > 0)
        sb_puts(b, "\"the hardware gives no idle (static) power: host gaps are charged 0 W\"");
    sb_puts(b, "]");
    sb_puts(b, ",\n \"by_kind\": [");
    for (size_t i = 0; i < opm_workload_result_kind_count(r); i++) {
        sb_puts(b, i ? ",\n  " : "\n  ");
        entry_json(b, opm_workload_result_kind(r, i));
    }
    sb_puts(b, "],\n \"by_op\": [");
    for (size_t i = 0; i < opm_workload_result_op_count(r); i++) {
        sb_puts(b, i ? ",\n  " : "\n  ");
        entry_json(b, opm_workload_result_op(r, i));
    }
    sb_puts(b, "]}\n");
}

static void entry_csv(strbuf *b, const char *what, const opm_workload_entry *e)
{
    sb_printf(b, "%s,", what);
    sb_csv_field(b, e->name);
    sb_printf(b, ",%s,%llu,%.9g,%.9g,%.9g,%.9g,%.9g\n", opm_kind_name(e->kind), (unsigned long long)e->count,
              e->latency_s, e->device_time_s, e->energy_j, e->flops, e->bytes);
}

static void workload_csv(strbuf *b, const opm_workload_result *r)
{
    const opm_workload_totals *t = opm_workload_result_totals(r);
    sb_puts(b, "row,name,kind,count,latency_s,device_time_s,energy_j,flops,bytes\n");
    sb_printf(b, "total,total,,%llu,%.9g,%.9g,%.9g,%.9g,%.9g\n", (unsigned long long)t->kernels, t->latency_s,
              t->device_time_s, t->energy_j, t->flops, t->bytes);
    for (size_t i = 0; i < opm_workload_result_kind_count(r); i++) entry_csv(b, "kind", opm_workload_result_kind(r, i));
    for (size_t i = 0; i < opm_workload_result_op_count(r); i++) entry_csv(b, "op", opm_workload_result_op(r, i));
}

static void workload_table(strbuf *b, const opm_workload_result *r, const char *hw, const char *model, const char *mode,
                           uint64_t skipped, uint64_t implied)
{
    const opm_workload_totals *t = opm_workload_result_totals(r);
    sb_printf(b, "workload on %s, %s, %s mode: %llu kernels", hw, model, mode, (unsigned long long)t->kernels);
    if (skipped) sb_printf(b, " (%llu trace ops without a model skipped)", (unsigned long long)skipped);
    if (implied) sb_printf(b, " (%llu implied by the model's architecture)", (unsigned long long)implied);
    sb_printf(b, "\n%-18s %.6g s (device %.6g s, host gaps %.6g s; launch interval %.3g us)\n", "latency", t->latency_s,
              t->device_time_s, t->idle_s, t->launch_interval_s * 1e6);
    sb_printf(b, "%-18s %.6g J (ops %.6g J, idle %.6g J at %.4g W)\n", "energy", t->energy_j, t->op_energy_j,
              t->idle_energy_j, t->idle_power_w);
    if (t->idle_power_w <= 0 && t->idle_s > 0)
        sb_puts(b, "warning            the hardware gives no idle (static) power: host gaps are charged 0 W\n");
    sb_printf(b, "%-18s %.5g W\n%-18s %.6g\n%-18s %.6g\n", "average power", t->average_power_w, "flops", t->flops,
              "dram bytes", t->bytes);
    for (int part = 0; part < 2; part++) {
        size_t n = part ? opm_workload_result_op_count(r) : opm_workload_result_kind_count(r);
        sb_printf(b, "\nby %s:\n%-44s %8s %12s %7s %12s %12s\n", part ? "op" : "kind", part ? "op" : "kind", "count",
                  "latency_s", "share", "energy_j", "flops");
        for (size_t i = 0; i < n; i++) {
            const opm_workload_entry *e = part ? opm_workload_result_op(r, i) : opm_workload_result_kind(r, i);
            sb_printf(b, "%-44.44s %8llu %12.6g %6.1f%% %12.6g %12.6g\n", e->name, (unsigned long long)e->count,
                      e->latency_s, t->latency_s > 0 ? 100 * e->latency_s / t->latency_s : 0, e->energy_j, e->flops);
        }
    }
}

int cmd_workload(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        print_workload_help();
        return EXIT_OK;
    }
    const char *file = NULL, *hw_name = NULL, *model = "extended_roofline", *mode = "eager", *fmt = "table";
    const char *clock = NULL, *interval = NULL, *host = NULL;
    int as_listed = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--as-listed")) as_listed = 1;
        else if ((v = cli_opt_value(argc, argv, &i, "--hardware"))) hw_name = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--clock-mhz"))) clock = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--model"))) model = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--mode"))) mode = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--launch-interval-us"))) interval = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--host"))) host = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--format"))) fmt = v;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("workload: unknown option '%s' (see `opmodel workload --help`)", argv[i]);
        else if (file) return cli_usage("workload: unexpected argument '%s' (one FILE)", argv[i]);
        else file = argv[i];
        if (v && !v[0]) return cli_usage("workload: %s: missing value", argv[i]);
    }
    if (!file) return cli_usage("workload: FILE: missing (see `opmodel workload --help`)");
    if (!hw_name) return cli_usage("workload: --hardware: missing; expected a built-in name or a hardware file");
    opm_workload_options o;
    opm_workload_options_init(&o);
    o.model = model;
    if (!strcmp(mode, "graph")) o.mode = OPM_WORKLOAD_GRAPH;
    else if (strcmp(mode, "eager")) return cli_usage("workload: --mode: expected eager or graph, got '%s'", mode);
    if (strcmp(fmt, "table") && strcmp(fmt, "json") && strcmp(fmt, "csv"))
        return cli_usage("workload: --format: expected table, json or csv, got '%s'", fmt);
    if (interval && host) return cli_usage("workload: --launch-interval-us and --host: give one");
    if (interval) {
        char *end;
        double us = strtod(interval, &end);
        if (end == interval || *end || !(us >= 0) || us > 1e6)
            return cli_usage("workload: --launch-interval-us: expected a number of microseconds in [0, 1e6], got '%s'",
                             interval);
        o.launch_interval_s = us * 1e-6;
    }
    if (host) {
        const opm_workload_host *h = opm_workload_host_find(host);
        if (!h) return cli_usage("workload: --host: no measured host named '%s' (see `opmodel workload --help`)", host);
        o.launch_interval_s = h->launch_interval_s;
    }
    opm_error err;
    opm_hardware *hw = opm_hardware_open(hw_name, &err);
    if (!hw) return cli_fail(&err);
    if (clock) {
        char *end;
        double mhz = strtod(clock, &end);
        if (end == clock || *end || !(mhz > 0) || !isfinite(mhz)) {
            opm_hardware_free(hw);
            return cli_usage("workload: --clock-mhz: expected a positive number, got '%s'", clock);
        }
        opm_hardware *c = opm_hardware_with_clock(hw, mhz * 1e6, &err);
        opm_hardware_free(hw);
        if (!c) return cli_fail(&err);
        hw = c;
    }
    int rc = EXIT_OK;
    opm_workload *w = opm_workload_new(&err);
    opm_workload_result *r = NULL;
    if (w) opm_workload_set_implied_kernels(w, !as_listed);
    if (!w || opm_workload_add_file(w, file, &err)) {
        rc = cli_fail(&err);
    } else if (!opm_workload_kernel_count(w)) {
        rc = cli_usage("workload: %s: expected at least one op%s", file,
                       opm_workload_skipped(w) ? " with a model (every trace op was skipped)" : "");
    } else if (!(r = opm_workload_evaluate(w, hw, &o, &err))) {
        rc = cli_fail(&err);
    } else {
        strbuf b = {0};
        if (!strcmp(fmt, "json"))
            workload_json(&b, r, opm_hardware_name(hw), model, mode, opm_workload_skipped(w), opm_workload_implied(w));
        else if (!strcmp(fmt, "csv")) workload_csv(&b, r);
        else workload_table(&b, r, opm_hardware_name(hw), model, mode, opm_workload_skipped(w), opm_workload_implied(w));
        if (b.oom) rc = cli_usage("workload: out of memory");
        else fwrite(b.p, 1, b.n, stdout);
        free(b.p);
    }
    opm_workload_result_free(r);
    opm_workload_free(w);
    opm_hardware_free(hw);
    return rc;
}

/* ---- validate-artifact ---- */

static const char *const status_names[] = {"scored", "calibration", "unmatched", "out_of_memory"};

static void json_stats3(strbuf *b, const art_stats3 *s)
{
    sb_puts(b, "{\"time\": ");
    cli_json_stats(b, &s->time);
    sb_puts(b, ", \"energy\": ");
    cli_json_stats(b, &s->energy);
    sb_puts(b, ", \"power\": ");
    cli_json_stats(b, &s->power);
    sb_putc(b, '}');
}

static void json_map3(strbuf *b, const char *key, char **names, const art_stats3 *s, size_t n)
{
    sb_printf(b, ",\n  \"%s\": {", key);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (!s[i].time.n) continue;
        sb_puts(b, first ? "\n    " : ",\n    ");
        sb_json_string(b, names[i]);
        sb_puts(b, ": ");
        json_stats3(b, &s[i]);
        first = 0;
    }
    sb_puts(b, "}");
}

/* {"name": number, ...} over n names; a count when nums is NULL. */
static void json_name_map(strbuf *b, char **names, const double *nums, const size_t *counts, size_t n)
{
    sb_putc(b, '{');
    for (size_t i = 0; i < n; i++) {
        sb_puts(b, i ? ", " : "");
        sb_json_string(b, names[i]);
        sb_puts(b, ": ");
        if (nums) sb_num(b, nums[i]);
        else sb_printf(b, "%zu", counts[i]);
    }
    sb_putc(b, '}');
}

static void artifact_json(strbuf *b, const art_result *r)
{
    sb_puts(b, "{\"model\": ");
    sb_json_string(b, r->model);
    sb_printf(b, ", \"runs\": %zu, \"runs_matched\": %zu, \"calibration_runs\": %zu, \"runs_out_of_memory\": %zu, "
                 "\"runs_scored\": %zu,\n",
              r->n_runs, r->runs_matched, r->calibration_runs, r->runs_oom, r->overall.time.n);
    sb_printf(b, "  \"kernel_lists\": \"%s\", \"implied_kernels\": %llu,\n  \"launch_interval_s\": ",
              r->as_listed ? "as_listed" : "with_implied", (unsigned long long)r->implied_kernels);
    json_name_map(b, r->hw_names, r->launch_interval_s, NULL, r->n_hw);
    sb_puts(b, ", \"default_launch_interval_s\": ");
    sb_num(b, r->default_interval_s);
    sb_printf(b, ",\n  \"harness_startup\": %s, \"harness_startup_s\": ", r->no_harness ? "false" : "true");
    json_name_map(b, r->files, r->startup_s, NULL, r->n_files);
    sb_puts(b, ", \"harness_startup_runs\": ");
    json_name_map(b, r->files, NULL, r->startup_runs, r->n_files);
    sb_puts(b, ",\n  \"overall\": ");
    json_stats3(b, &r->overall);
    json_map3(b, "by_hardware", r->hw_names, r->by_hw, r->n_hw);
    sb_puts(b, ",\n  \"by_file\": {");
    int firstf = 1;
    for (size_t f = 0; f < r->n_files; f++) {
        if (!r->by_file[f].time.n) continue;
        sb_puts(b, firstf ? "\n    " : ",\n    ");
        sb_json_string(b, r->files[f]);
        sb_puts(b, ": ");
        json_stats3(b, &r->by_file[f]);
        size_t nc = 0;
        for (size_t c = 0; c < r->n_clocks; c++) nc += r->by_file_clock[f * r->n_clocks + c].time.n > 0;
        if (nc > 1) {
            b->n--; /* reopen the object for its by_clock */
            sb_puts(b, ", \"by_clock\": {");
            int fc = 1;
            for (size_t c = 0; c < r->n_clocks; c++) {
                const art_stats3 *s3 = &r->by_file_clock[f * r->n_clocks + c];
                if (!s3->time.n) continue;
                sb_printf(b, "%s\n      \"%d\": ", fc ? "" : ",", r->clocks[c]);
                json_stats3(b, s3);
                fc = 0;
            }
            sb_puts(b, "}}");
        }
        firstf = 0;
    }
    sb_puts(b, "}");
    json_map3(b, "by_family", r->families, r->by_family, r->n_families);
    sb_puts(b, ",\n  \"by_clock\": {");
    for (size_t c = 0; c < r->n_clocks; c++) {
        sb_printf(b, "%s\n    \"%d\": ", c ? "," : "", r->clocks[c]);
        json_stats3(b, &r->by_clock[c]);
    }
    sb_puts(b, "},\n  \"uncalibrated\": {\"overall\": ");
    json_stats3(b, &r->unc_overall);
    {
        strbuf tmp = {0};
        json_map3(&tmp, "by_hardware", r->hw_names, r->unc_by_hw, r->n_hw);
        json_map3(&tmp, "by_file", r->files, r->unc_by_file, r->n_files);
        if (tmp.p) sb_putn(b, tmp.p, tmp.n);
        b->oom |= tmp.oom;
        free(tmp.p);
    }
    sb_puts(b, "},\n  \"unmatched\": [");
    int first = 1;
    for (size_t i = 0; i < r->n_runs; i++) {
        const art_run *u = &r->runs[i];
        if (u->status != ART_UNMATCHED && u->status != ART_OUT_OF_MEMORY) continue;
        sb_puts(b, first ? "\n    {\"workload\": " : ",\n    {\"workload\": ");
        sb_json_string(b, u->name);
        sb_puts(b, ", \"file\": ");
        sb_json_string(b, r->files[u->file]);
        sb_printf(b, ", \"why\": \"%s\"}", u->status == ART_UNMATCHED ? "no kernel list" : "out of memory");
        first = 0;
    }
    sb_puts(b, "]}\n");
}

static void table3(strbuf *b, const char *label, const art_stats3 *s)
{
    sb_printf(b, "%-34s %5zu %9.2f %9.2f %9.2f %8.3f %8.3f\n", label, s->time.n, s->time.mape, s->energy.mape,
              s->power.mape, s->time.geomean_ratio, s->energy.geomean_ratio);
}

static void artifact_table(strbuf *b, const art_result *r)
{
    sb_printf(b, "validate-artifact %s, model %s: %zu runs, %zu matched, %zu out of memory, %zu calibration, %zu scored\n",
              r->data_dir, r->model, r->n_runs, r->runs_matched, r->runs_oom, r->calibration_runs, r->overall.time.n);
    sb_printf(b, "kernel lists: %s (%llu implied kernels over the lists)\n",
              r->as_listed ? "as listed" : "with the kernels their model's architecture implies",
              (unsigned long long)r->implied_kernels);
    sb_printf(b, "launch interval: default %.2f us;", r->default_interval_s * 1e6);
    for (size_t h = 0; h < r->n_hw; h++) sb_printf(b, " %s %.2f us", r->hw_names[h], r->launch_interval_s[h] * 1e6);
    sb_printf(b, "\nharness start-up%s:",
              r->no_harness ? " (measured, not added: --no-harness-startup)" : " (added as start-up / iterations)");
    for (size_t f = 0; f < r->n_files; f++)
        sb_printf(b, " %s %.3f s (%zu runs)", r->files[f], r->startup_s[f], r->startup_runs[f]);
    const char *hdr = "%-34s %5s %9s %9s %9s %8s %8s\n";
    sb_printf(b, "\n\nuncalibrated (default host interval)\n");
    sb_printf(b, hdr, "", "runs", "time%", "energy%", "power%", "t-ratio", "e-ratio");
    table3(b, "overall", &r->unc_overall);
    for (size_t h = 0; h < r->n_hw; h++) table3(b, r->hw_names[h], &r->unc_by_hw[h]);
    for (size_t f = 0; f < r->n_files; f++) table3(b, r->files[f], &r->unc_by_file[f]);
    sb_printf(b, "\ncalibrated launch interval (MAPE %%; ratio = geomean predicted/measured)\n");
    sb_printf(b, hdr, "", "runs", "time%", "energy%", "power%", "t-ratio", "e-ratio");
    table3(b, "overall", &r->overall);
    for (size_t h = 0; h < r->n_hw; h++) table3(b, r->hw_names[h], &r->by_hw[h]);
    for (size_t f = 0; f < r->n_files; f++) table3(b, r->files[f], &r->by_file[f]);
    for (size_t f = 0; f < r->n_families; f++)
        if (r->by_family[f].time.n) table3(b, r->families[f], &r->by_family[f]);
    for (size_t f = 0; f < r->n_files; f++) {
        size_t nc = 0;
        for (size_t c = 0; c < r->n_clocks; c++) nc += r->by_file_clock[f * r->n_clocks + c].time.n > 0;
        if (nc < 2) continue;
        for (size_t c = 0; c < r->n_clocks; c++) {
            const art_stats3 *s3 = &r->by_file_clock[f * r->n_clocks + c];
            if (!s3->time.n) continue;
            char l[96];
            snprintf(l, sizeof l, "%.24s %d MHz", r->files[f], r->clocks[c]);
            table3(b, l, s3);
        }
    }
    size_t un = 0;
    for (size_t i = 0; i < r->n_runs; i++) un += r->runs[i].status == ART_UNMATCHED;
    sb_printf(b, "\nunmatched runs (no kernel list): %zu; out of memory: %zu (see --format json)\n", un, r->runs_oom);
}

static void artifact_csv(strbuf *b, const art_result *r)
{
    sb_puts(b, "file,workload,hardware,family,clock_mhz,avg_freq_mhz,status,measured_time_s,predicted_time_s,"
               "uncalibrated_time_s,measured_energy_j,predicted_energy_j,uncalibrated_energy_j,predicted_device_time_s,"
               "iterations\n");
    for (size_t i = 0; i < r->n_runs; i++) {
        const art_run *u = &r->runs[i];
        sb_csv_field(b, r->files[u->file]);
        sb_putc(b, ',');
        sb_csv_field(b, u->name);
        sb_printf(b, ",%s,", r->hw_names[u->hw]);
        sb_csv_field(b, r->families[u->family]);
        int pred = u->status == ART_SCORED || u->status == ART_CALIBRATION;
        sb_printf(b, ",%d,%.6g,%s,%.9g,", u->clock_mhz, u->avg_freq_mhz, status_names[u->status], u->time_s);
        if (pred) sb_printf(b, "%.9g,%.9g", u->pred_time_s, u->unc_time_s);
        else sb_puts(b, ",");
        sb_printf(b, ",%.9g,", u->energy_j);
        if (pred) sb_printf(b, "%.9g,%.9g", u->pred_energy_j, u->unc_energy_j);
        else sb_puts(b, ",");
        sb_putc(b, ',');
        if (u->workload >= 0 && u->status != ART_UNMATCHED) sb_printf(b, "%.9g", u->device_s);
        sb_printf(b, ",%ld\n", u->iterations);
    }
}

/* ---- SVG ---- */

/* Text from the data (file and family names) as XML character data. */
static void svg_text(strbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '&': sb_puts(b, "&amp;"); break;
        case '\'': sb_puts(b, "&apos;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        default:
            if ((unsigned char)*s >= 0x20) sb_putc(b, *s);
        }
    }
}

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

/* One log-log panel at (x0, y0), size s: scored runs, predicted against measured. */
static void svg_scatter(strbuf *b, const art_result *r, int energy, double x0, double y0, double s)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const art_run *u = &r->runs[i];
        if (u->status != ART_SCORED) continue;
        double m = energy ? u->energy_j : u->time_s, p = energy ? u->pred_energy_j : u->pred_time_s;
        if (!(m > 0) || !(p > 0) || !isfinite(m) || !isfinite(p)) continue; /* no place on a log axis */
        lo = fmin(lo, fmin(m, p));
        hi = fmax(hi, fmax(m, p));
    }
    if (!(hi > 0) || !(lo > 0) || !isfinite(hi)) {
        lo = 1;
        hi = 10;
    }
    double a = floor(log10(lo)), z = ceil(log10(hi));
    if (z <= a) z = a + 1;
#define PX(v) (x0 + s * (log10(v) - a) / (z - a))
#define PY(v) (y0 + s - s * (log10(v) - a) / (z - a))
    sb_printf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#444'/>\n", x0, y0, s, s);
    double l0 = pow(10, a), l1 = pow(10, z);
    sb_printf(b, "<polygon points='%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f' fill='#ddd' opacity='0.6'/>\n", PX(l0),
              PY(l0 * 1.1), PX(l1 / 1.1), PY(l1), PX(l1), PY(l1 * 0.9 > l0 ? l1 * 0.9 : l1), PX(l0 / 0.9 < l1 ? l0 / 0.9 : l0),
              PY(l0));
    sb_printf(b, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#000' stroke-dasharray='4 3'/>\n", PX(l0), PY(l0),
              PX(l1), PY(l1));
    for (double d = a; d <= z; d++) {
        double v = pow(10, d);
        sb_printf(b, "<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>1e%g</text>\n", PX(v), y0 + s + 14, d);
        sb_printf(b, "<text x='%.1f' y='%.1f' font-size='10' text-anchor='end'>1e%g</text>\n", x0 - 4, PY(v) + 3, d);
    }
    sb_printf(b, "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle'>measured %s</text>\n", x0 + s / 2,
              y0 + s + 30, energy ? "energy (J)" : "time (s)");
    sb_printf(b, "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle' transform='rotate(-90 %.1f %.1f)'>predicted %s</text>\n",
              x0 - 40, y0 + s / 2, x0 - 40, y0 + s / 2, energy ? "energy (J)" : "time (s)");
    for (size_t i = 0; i < r->n_runs; i++) {
        const art_run *u = &r->runs[i];
        if (u->status != ART_SCORED) continue;
        double m = energy ? u->energy_j : u->time_s, p = energy ? u->pred_energy_j : u->pred_time_s;
        if (!(m > 0) || !(p > 0) || !isfinite(m) || !isfinite(p)) continue;
        sb_printf(b, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s' opacity='0.7'/>\n", PX(m), PY(p),
                  colours[u->file % (sizeof colours / sizeof colours[0])]);
    }
#undef PX
#undef PY
}

static void artifact_svg(strbuf *b, const art_result *r)
{
    double W = 1100, H = 820;
    sb_printf(b, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif'>\n", W, H);
    sb_puts(b, "<rect width='100%' height='100%' fill='white'/>\n");
    sb_puts(b, "<text x='20' y='24' font-size='15'>validate-artifact, model ");
    svg_text(b, r->model);
    sb_puts(b, ": predicted vs measured (scored runs; dashed y = x, grey band ±10%)</text>\n");
    svg_scatter(b, r, 0, 90, 60, 380);
    svg_scatter(b, r, 1, 600, 60, 380);
    for (size_t f = 0; f < r->n_files; f++) {
        sb_printf(b, "<circle cx='%zu' cy='488' r='5' fill='%s'/><text x='%zu' y='492' font-size='11'>", 100 + 230 * f,
                  colours[f % (sizeof colours / sizeof colours[0])], 110 + 230 * f);
        svg_text(b, r->files[f]);
        sb_puts(b, "</text>\n");
    }
    /* Per-family bars: geomean predicted/measured of time and energy. */
    double bx = 90, by = 530, bh = 240, bw = 900;
    sb_printf(b, "<text x='%.0f' y='%.0f' font-size='13'>per family: geomean predicted / measured (blue time, orange "
                 "energy; line at 1)</text>\n", bx, by - 8);
    sb_printf(b, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#444'/>\n", bx, by, bw, bh);
    double ymax = 2.0;
#define BY(v) (by + bh - bh * ((v) > ymax ? ymax : (v)) / ymax)
    sb_printf(b, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#000' stroke-dasharray='4 3'/>\n", bx, BY(1.0),
              bx + bw, BY(1.0));
    size_t nf = 0;
    for (size_t f = 0; f < r->n_families; f++) nf += r->by_family[f].time.n > 0;
    double slot = nf ? bw / (double)nf : bw;
    size_t k = 0;
    for (size_t f = 0; f < r->n_families; f++) {
        const art_stats3 *s = &r->by_family[f];
        if (!s->time.n) continue;
        double x = bx + slot * (double)k++;
        double v[2] = {s->time.geomean_ratio, s->energy.geomean_ratio};
        for (int j = 0; j < 2; j++)
            sb_printf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>\n", x + slot * (0.15 + 0.35 * j),
                      BY(v[j]), slot * 0.33, by + bh - BY(v[j]), j ? "#ff7f0e" : "#1f77b4");
        sb_printf(b, "<text x='%.1f' y='%.0f' font-size='10' text-anchor='middle'>", x + slot / 2, by + bh + 14);
        svg_text(b, r->families[f]);
        sb_puts(b, "</text>\n");
    }
    for (double t = 0; t <= ymax + 1e-9; t += 0.5)
        sb_printf(b, "<text x='%.0f' y='%.1f' font-size='10' text-anchor='end'>%.1f</text>\n", bx - 4, BY(t) + 3, t);
#undef BY
    sb_puts(b, "</svg>\n");
}

int cmd_validate_artifact(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(artifact_help, stdout);
        return EXIT_OK;
    }
    const char *dir = "data/energaizer", *model = "extended_roofline", *fmt = "table", *csv = NULL, *svg = NULL;
    unsigned flags = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--as-listed")) {
            flags |= ART_AS_LISTED;
            continue;
        }
        if (!strcmp(argv[i], "--no-harness-startup")) {
            flags |= ART_NO_HARNESS;
            continue;
        }
        if ((v = cli_opt_value(argc, argv, &i, "--data-dir"))) dir = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--model"))) model = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--format"))) fmt = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--output-csv"))) csv = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--output-plot"))) svg = v;
        else return cli_usage("validate-artifact: unknown option '%s' (see `opmodel validate-artifact --help`)", argv[i]);
        if (!v[0]) return cli_usage("validate-artifact: %s: missing value", argv[i]);
    }
    if (strcmp(fmt, "table") && strcmp(fmt, "json"))
        return cli_usage("validate-artifact: --format: expected table or json, got '%s'", fmt);
    art_result r;
    opm_error err;
    int rc = art_run_all(&r, dir, model, flags, &err);
    if (rc) {
        art_free(&r);
        return cli_fail(&err);
    }
    strbuf rep = {0}, c = {0}, s = {0};
    if (!strcmp(fmt, "json")) artifact_json(&rep, &r);
    else artifact_table(&rep, &r);
    if (csv) artifact_csv(&c, &r);
    if (svg) artifact_svg(&s, &r);
    cli_output out[3];
    size_t n = 0;
    if (csv) out[n++] = (cli_output){"--output-csv", csv, c.p ? c.p : "", c.n};
    if (svg) out[n++] = (cli_output){"--output-plot", svg, s.p ? s.p : "", s.n};
    /* The report goes to stdout unless an output file takes it. */
    int report_to_err = (csv && cli_is_stdout(csv)) || (svg && cli_is_stdout(svg));
    if (rep.oom || c.oom || s.oom) rc = cli_usage("validate-artifact: out of memory");
    else if (n && (rc = cli_write_outputs(out, n, NULL, 0))) {
    } else {
        fwrite(rep.p, 1, rep.n, report_to_err ? stderr : stdout);
        rc = EXIT_OK;
    }
    free(rep.p);
    free(c.p);
    free(s.p);
    art_free(&r);
    return rc;
}
