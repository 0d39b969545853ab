/* cmd_calibrate.c — `opmodel calibrate`: fits one hardware's efficiency
 * and overhead parameters to measured GEMM latencies (src/validate/
 * calibrate.c computes), writes the calibrated description and prints what
 * moved and the before/after error.  docs/calibrate.md describes it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "validate/calibrate.h"

static const char help[] =
    "usage: opmodel calibrate --data FILE|DIR --hardware NAME|FILE -o OUT.yaml|-\n"
    "         [--model M] [--rows-for NAME] [--fit LIST] [--ignore-kernel-column]\n"
    "\n"
    "Fits the hardware's efficiency and overhead parameters to measured GEMM latencies (contract §4\n"
    "CSV; a directory means every *.csv below it) and writes a hardware description that --hardware\n"
    "accepts.  Fitted, each bounded: utilization.tensor, utilization.vector, utilization.memory.hbm\n"
    "[0.3, 1] and compute.device_fixed_overhead_cycles [0, 100 us]; an engine is fitted only when\n"
    "some row runs on it.  Objective: mean squared log(predicted/measured) over the training rows;\n"
    "every 5th row (in file order) is held out and only scored.  The report goes to stdout (stderr\n"
    "with -o -).\n"
    "\n"
    "  -o, --output OUT        the calibrated YAML (- for stdout); written only when everything succeeded\n"
    "  --model M               prediction model (default extended_roofline; roofline,\n"
    "                          effective_roofline)\n"
    "  --rows-for NAME         use the rows whose hardware column is NAME (default: the hardware's name)\n"
    "  --fit LIST              comma-separated subset of tensor,vector,hbm,overhead (default: all)\n"
    "  --ignore-kernel-column  automatic kernel selection for every row; by default a cuBLAS sgemm\n"
    "                          kernel column gives the row's tile as hints, as validate-gemm-latency does\n";

/* The command line for the file header: arguments joined by spaces, any
 * with a space or a shell metacharacter single-quoted. */
static char *command_line(int argc, char **argv)
{
    size_t len = strlen("opmodel calibrate") + 1;
    for (int i = 1; i < argc; i++) len += 4 * strlen(argv[i]) + 3;
    char *s = malloc(len), *p = s;
    if (!s) return NULL;
    p += sprintf(p, "opmodel calibrate");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int quote = !*a || strpbrk(a, " \t'\"\\$`;&|<>()*?[]#~") != NULL;
        *p++ = ' ';
        if (quote) *p++ = '\'';
        for (; *a; a++) {
            if (*a == '\'') p += sprintf(p, "'\\''");
            else *p++ = *a;
        }
        if (quote) *p++ = '\'';
    }
    *p = '\0';
    return s;
}

static int parse_fit(const char *list, unsigned *mask)
{
    *mask = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < OPM_CAL_NPARAMS; i++)
            if (strlen(opm_cal_param_keys[i]) == n && !strncmp(p, opm_cal_param_keys[i], n)) {
                *mask |= 1u << i;
                found = 1;
            }
        if (!found)
            return cli_usage("--fit: expected a comma-separated list of tensor, vector, hbm, overhead; got '%.*s'",
                             (int)n, p);
        p += n;
        if (*p == ',') p++;
    }
    if (!*mask) return cli_usage("--fit: expected at least one of tensor, vector, hbm, overhead");
    return 0;
}

static void report(FILE *f, const opm_calibration *c, const char *out)
{
    double clock = opm_hardware_clock_hz(c->hw);
    fprintf(f, "calibrated %s (model %s) on %s: %zu file%s, %zu rows with hardware '%s' of %zu read; "
               "%zu train, %zu held out, %zu not predictable; %zu evaluations, %d sweep%s\n",
            c->hardware, c->model, c->data, c->files, c->files == 1 ? "" : "s", c->rows, c->rows_for, c->rows_read,
            c->train_before.n, c->heldout_before.n, c->rows_failed, c->evaluations, c->sweeps,
            c->sweeps == 1 ? "" : "s");
    fprintf(f, "  %-38s %12s %12s   %s\n", "parameter", "before", "after", "bounds");
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) {
        const opm_cal_param *pp = &c->param[p];
        fprintf(f, "  %-38s %12.6g ", opm_cal_param_paths[p], pp->before);
        if (pp->status == OPM_CAL_FITTED)
            fprintf(f, "%12.6g   [%g, %g]%s", pp->after, pp->lo, pp->hi, pp->at_bound ? " at a bound" : "");
        else
            fprintf(f, "%12s   kept: %s", "-",
                    pp->status == OPM_CAL_NOT_ASKED ? "not in --fit" : "no training row runs on this engine");
        if (p == OPM_CAL_OVERHEAD)
            fprintf(f, "  (%.3f -> %.3f us)", pp->before / clock * 1e6, pp->after / clock * 1e6);
        fputc('\n', f);
    }
    fprintf(f, "  %-38s %12s %12s\n", "MAPE %", "before", "after");
    fprintf(f, "  %-38s %12.2f %12.2f\n", "train", c->train_before.mape, c->train_after.mape);
    if (c->heldout_before.n)
        fprintf(f, "  %-38s %12.2f %12.2f\n", "held-out", c->heldout_before.mape, c->heldout_after.mape);
    else
        fprintf(f, "  %-38s %12s %12s   (no held-out row)\n", "held-out", "-", "-");
    if (strcmp(out, "-")) fprintf(f, "wrote %s\n", out);
}

int cmd_calibrate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(help, stdout);
        return EXIT_OK;
    }
    opm_cal_options o;
    memset(&o, 0, sizeof o);
    const char *hw_name = NULL, *out = NULL, *fit = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v, *opt = argv[i];
        if ((v = cli_opt_value(argc, argv, &i, "--data"))) o.data = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--hardware"))) hw_name = v;
        else if ((v = cli_opt_value(argc, argv, &i, "-o")) || (v = cli_opt_value(argc, argv, &i, "--output"))) out = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--model"))) o.model = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--rows-for"))) o.rows_for = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--fit"))) fit = v;
        else if (!strcmp(argv[i], "--ignore-kernel-column")) o.ignore_kernel_column = 1;
        else if (argv[i][0] == '-') return cli_usage("calibrate: unknown option '%s' (see `opmodel calibrate --help`)", argv[i]);
        else return cli_usage("calibrate: unexpected argument '%s' (see `opmodel calibrate --help`)", argv[i]);
        if (v && !*v) return cli_usage("calibrate: %.*s expects a value", (int)strcspn(opt, "="), opt);
    }
    if (!o.data) return cli_usage("calibrate: --data FILE|DIR is required (measured GEMM latencies, contract §4)");
    if (!hw_name) return cli_usage("calibrate: --hardware NAME|FILE is required");
    if (!out) return cli_usage("calibrate: -o OUT.yaml is required (- for stdout)");
    if (fit && parse_fit(fit, &o.fit)) return EXIT_USAGE;

    opm_error err;
    opm_error_clear(&err);
    opm_hardware *hw = opm_hardware_open(hw_name, &err);
    if (!hw) return cli_fail(&err);
    opm_calibration c;
    int rc = opm_calibrate(hw, &o, &c, &err);
    opm_hardware_free(hw);
    if (rc) return cli_fail(&err);
    char *cmd = command_line(argc, argv);
    if (!cmd) {
        opm_calibration_free(&c);
        return cli_usage("out of memory");
    }
    char *text = opm_calibration_to_yaml(&c, cmd, &err);
    free(cmd);
    if (!text) {
        opm_calibration_free(&c);
        return cli_fail(&err);
    }
    const cli_output o_yaml = {"-o", out, text, strlen(text)};
    int report_to_stderr = cli_is_stdout(out);
    /* The measurements are not overwritten; a hardware file may be
     * calibrated in place (it has been read whole by now). */
    const char *inputs[1] = {o.data};
    rc = cli_write_outputs(&o_yaml, 1, inputs, 1);
    free(text);
    if (rc == EXIT_OK) report(report_to_stderr ? stderr : stdout, &c, out);
    opm_calibration_free(&c);
    return rc;
}
