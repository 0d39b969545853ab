/* cmd_calibrate_energy.c — `opmodel calibrate-energy`: fits one hardware's
 * energy coefficients to measured energies (src/validate/energy_fit.c
 * computes), writes the calibrated description and prints the multipliers
 * and the energy error before and after, held-out first.  docs/energy.md
 * describes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "validate/energy_fit.h"

static const char help[] =
    "usage: opmodel calibrate-energy --data FILE|DIR [--data ...] --hardware NAME|FILE -o OUT.yaml|-\n"
    "         [--model M]\n"
    "\n"
    "Fits the energy coefficients of one hardware to measured energies: contract §4 JSONL lines\n"
    "(a directory means every *.jsonl below it) of that hardware with measured.energy_j.  Four\n"
    "multipliers, each bounded to [0, 10], one per energy term: compute (every J/FLOP), dram (hbm\n"
    "J/byte or J/sector), l2 (J/byte) and static (idle power and its table); the idle power is\n"
    "charged over each line's measured latency.  Objective: the sum of squared relative energy\n"
    "errors over the training lines; one line in four, by a hash of file name and line number, is\n"
    "held out and only scored.  Writes a hardware description that --hardware accepts (J/FLOP the\n"
    "TDP rule stood in for are written as figures).  The report goes to stdout (stderr with -o -).\n"
    "\n"
    "  -o, --output OUT   the calibrated YAML (- for stdout); written only when everything succeeded\n"
    "  --model M          prediction model (default extended_roofline)\n";

static void report(FILE *f, const opm_energy_fit *e, const char *model, const char *out)
{
    fprintf(f, "calibrated energy of %s (model %s): %zu line%s with measured energy, %zu train, %zu held out; "
               "%zu of it without energy, %zu of other hardware, %zu bad, %zu predicted at tdp_w (not used)\n",
            e->hw_name, model, e->n_rows, e->n_rows == 1 ? "" : "s", e->n_train, e->n_held, e->rows_no_energy,
            e->rows_other_hw, e->g.rows_failed, e->rows_at_tdp);
    fprintf(f, "  %-10s %12s   bounds\n", "term", "multiplier");
    for (int i = 0; i < OPM_EFIT_N; i++) {
        if (e->fitted[i])
            fprintf(f, "  %-10s %12.6g   [0, %g]%s\n", opm_efit_names[i], e->alpha[i], OPM_EFIT_MAX,
                    e->alpha[i] <= 0 || e->alpha[i] >= OPM_EFIT_MAX ? " at a bound" : "");
        else
            fprintf(f, "  %-10s %12s   kept: no training line has this term\n", opm_efit_names[i], "-");
    }
    fprintf(f, "  %-22s %10s %10s\n", "energy MAPE %", "before", "after");
    if (e->n_held) fprintf(f, "  %-22s %10.2f %10.2f\n", "held-out", e->held_before, e->held_after);
    else fprintf(f, "  %-22s %10s %10s   (no held-out line)\n", "held-out", "-", "-");
    fprintf(f, "  %-22s %10.2f %10.2f\n", "train", e->train_before, e->train_after);
    if (strcmp(out, "-")) fprintf(f, "wrote %s\n", out);
}

int cmd_calibrate_energy(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(help, stdout);
        return EXIT_OK;
    }
    const char *hw_name = NULL, *out = NULL, *model = "extended_roofline";
    const char **data = calloc((size_t)argc + 1, sizeof *data);
    if (!data) return cli_usage("out of memory");
    size_t n_data = 0;
    int rc = EXIT_OK;
    for (int i = 1; i < argc && rc == EXIT_OK; i++) {
        const char *v, *opt = argv[i];
        if ((v = cli_opt_value(argc, argv, &i, "--data"))) data[n_data++] = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--hardware"))) hw_name = v;
        else if ((v = cli_opt_value(argc, argv, &i, "-o")) || (v = cli_opt_value(argc, argv, &i, "--output"))) out = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--model"))) model = v;
        else if (argv[i][0] == '-')
            rc = cli_usage("calibrate-energy: unknown option '%s' (see `opmodel calibrate-energy --help`)", argv[i]);
        else rc = cli_usage("calibrate-energy: unexpected argument '%s' (see `opmodel calibrate-energy --help`)", argv[i]);
        if (rc == EXIT_OK && v && !*v)
            rc = cli_usage("calibrate-energy: %.*s expects a value", (int)strcspn(opt, "="), opt);
    }
    if (rc == EXIT_OK && !n_data)
        rc = cli_usage("calibrate-energy: --data FILE|DIR is required (contract §4 JSONL with measured.energy_j)");
    if (rc == EXIT_OK && !hw_name) rc = cli_usage("calibrate-energy: --hardware NAME|FILE is required");
    if (rc == EXIT_OK && !out) rc = cli_usage("calibrate-energy: -o OUT.yaml is required (- for stdout)");
    if (rc != EXIT_OK) {
        free(data);
        return rc;
    }
    opm_error err;
    opm_error_clear(&err);
    opm_hardware *hw = opm_hardware_open(hw_name, &err);
    if (!hw) {
        free(data);
        return cli_fail(&err);
    }
    opm_energy_fit fit;
    opm_hardware *cal = NULL;
    char *yaml = NULL, *text = NULL;
    if (opm_energy_fit_run(hw, data, n_data, model, &fit, &err) || !(cal = opm_energy_fit_apply(hw, &fit, &err)) ||
        !(yaml = opm_hardware_to_yaml(cal, &err))) {
        rc = cli_fail(&err);
        goto done;
    }
    size_t cap = strlen(yaml) + 1024;
    if (!(text = malloc(cap))) {
        rc = cli_usage("out of memory");
        goto done;
    }
    int n = snprintf(text, cap,
                     "# %s, energy calibrated by opmodel calibrate-energy (model %s) on %zu lines (%zu train):\n"
                     "# multipliers compute %.6g, dram %.6g, l2 %.6g, static %.6g; held-out energy MAPE %.2f%% -> %.2f%%\n",
                     fit.hw_name, model, fit.n_rows, fit.n_train, fit.alpha[0], fit.alpha[1], fit.alpha[2],
                     fit.alpha[3], fit.held_before, fit.held_after);
    memcpy(text + n, yaml, strlen(yaml) + 1);
    const cli_output o_yaml = {"-o", out, text, strlen(text)};
    rc = cli_write_outputs(&o_yaml, 1, data, n_data);
    if (rc == EXIT_OK) report(cli_is_stdout(out) ? stderr : stdout, &fit, model, out);
done:
    free(text);
    free(yaml);
    opm_hardware_free(cal);
    opm_energy_fit_free(&fit);
    opm_hardware_free(hw);
    free(data);
    return rc;
}
