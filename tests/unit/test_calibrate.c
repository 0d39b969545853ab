/* test_calibrate.c — `opmodel calibrate` and its library part: recovery of
 * known efficiencies and overhead from latencies the model itself generated
 * with a modified T4, bounds when the data ask for values outside them, the
 * written YAML (loads, predicts, re-emits identically, deterministic), the
 * train / held-out split, row selection, spreadsheet CSVs (a byte order
 * mark, CRLF, a line over 4 KiB) read alike by calibrate's and
 * validate-gemm-latency's loaders, a fit on the shipped NeuSight T4 rows,
 * and the CLI's error paths (exit 2, one line on stderr, nothing on
 * stdout). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"
#include "validate/calibrate.h"
#include "validate/gemm_latency.h"

/* ---- helpers ---- */

static char tmp_root[256];

static void make_tmp(void)
{
    tmp_dir(tmp_root, sizeof tmp_root, "opm_calibrate_");
}

static void remove_tmp(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    cr_assert_eq(system(cmd), 0);
}

static const char *tmp_path(const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", tmp_root, name);
    return buf;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void write_all(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static opm_hardware *builtin(const char *name)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin(name, &err);
    cr_assert_not_null(hw, "%s", err.message);
    return hw;
}

/* The T4 description as text, without its board power (tdp_w) and energy
 * per FLOP: with them the models' power cap holds long compute-bound
 * kernels to ~45% of the peaks whatever the efficiency, so efficiencies
 * above that would leave no trace in the latencies and could not be
 * recovered.  Its utilization block goes too: the tests set their own.
 * Everything else is the stock entry. */
static char *t4_uncapped_yaml(void)
{
    opm_error err;
    opm_hardware *stock = builtin("t4");
    char *yaml = opm_hardware_to_yaml(stock, &err);
    cr_assert_not_null(yaml);
    opm_hardware_free(stock);
    char *w = yaml;
    int in_util = 0;
    for (char *line = yaml; *line;) {
        size_t len = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
        const char *hit = strstr(line, "energy_j_per_flop");
        if (line[0] != ' ') in_util = !strncmp(line, "utilization:", 12);
        int drop = in_util || !strncmp(line, "tdp_w:", 6) || (hit && hit < line + len) ||
                   !strncmp(line, "  device_fixed_overhead_cycles:", 31);
        if (!drop) {
            memmove(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = '\0';
    return yaml;
}

/* The uncapped T4 as given: every efficiency 1, no fixed overhead. */
static opm_hardware *t4_base(void)
{
    opm_error err;
    char *yaml = t4_uncapped_yaml();
    opm_hardware *hw = opm_hardware_load_string(yaml, strlen(yaml), "<t4 base>", &err);
    cr_assert_not_null(hw, "%s", err.message);
    cr_assert_eq(opm_hardware_tdp_w(hw), 0);
    free(yaml);
    return hw;
}

/* The uncapped T4 with a fixed overhead and utilizations written into its
 * text: "a T4 whose kernels reach these efficiencies". */
static opm_hardware *t4_with(double tensor, double vector, double hbm, double overhead_s)
{
    opm_error err;
    char *yaml = t4_uncapped_yaml();
    const char *at = strstr(yaml, "compute:\n");
    cr_assert_not_null(at);
    size_t head = (size_t)(at - yaml) + strlen("compute:\n");
    char *text = malloc(strlen(yaml) + 512);
    cr_assert_not_null(text);
    memcpy(text, yaml, head);
    sprintf(text + head, "  device_fixed_overhead_cycles: %.17g\n%sutilization:\n  tensor: %.17g\n  vector: %.17g\n"
                         "  memory: {hbm: %.17g}\n",
            overhead_s * 1.59e9, yaml + head, tensor, vector, hbm);
    opm_hardware *hw = opm_hardware_load_string(text, strlen(text), "<t4 truth>", &err);
    cr_assert_not_null(hw, "%s\n%s", err.message, text);
    cr_assert_float_eq(opm_hardware_utilization(hw, OPM_ENGINE_VECTOR), vector, 1e-15);
    cr_assert_float_eq(opm_hardware_clock_hz(hw), 1.59e9, 1);
    free(text);
    free(yaml);
    return hw;
}

/* Writes a contract §4 CSV of GEMMs on `hw` named `name`, latencies from
 * `model` times `scale`.  The shapes mix compute-bound, DRAM-bound and
 * overhead-bound GEMMs in fp32 (SIMT) and fp16 (tensor cores) so every
 * parameter is identifiable. */
static size_t synth_csv_at(const char *path, const opm_hardware *hw, const char *name, const char *model,
                           double scale, double clock_mhz)
{
    static const int64_t ms[] = {1, 16, 128, 1024, 4096};
    static const int64_t ns[] = {64, 1024, 8192};
    static const int64_t ks[] = {64, 1024, 8192};
    static const opm_dtype dts[] = {OPM_FP32, OPM_FP16};
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,clock_mhz\n");
    size_t rows = 0;
    const opm_model *mdl = opm_model_find(model);
    cr_assert_not_null(mdl);
    opm_error err;
    opm_hardware *run = clock_mhz > 0 ? opm_hardware_with_clock(hw, clock_mhz * 1e6, &err) : opm_hardware_clone(hw, &err);
    cr_assert_not_null(run, "%s", err.message);
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 3; j++)
                for (size_t l = 0; l < 3; l++) {
                    opm_op *op = opm_op_gemm(ms[i], ns[j], ks[l], dts[d], &err);
                    cr_assert_not_null(op, "%s", err.message);
                    opm_profile p;
                    cr_assert_eq(mdl->predict(op, run, &p, &err), 0, "%s", err.message);
                    fprintf(f, "%s,%s,1,%lld,%lld,%lld,0,0,0,%.17g,", name, opm_dtype_name(dts[d]), (long long)ms[i],
                            (long long)ns[j], (long long)ks[l], p.latency_s * 1e6 * scale);
                    if (clock_mhz > 0) fprintf(f, "%g", clock_mhz);
                    fputc('\n', f);
                    opm_op_free(op);
                    rows++;
                }
    fclose(f);
    opm_hardware_free(run);
    return rows;
}

static size_t synth_csv(const char *path, const opm_hardware *hw, const char *name, const char *model, double scale)
{
    return synth_csv_at(path, hw, name, model, scale, 0);
}

static void calibrate_ok(const opm_hardware *start, const opm_cal_options *o, opm_calibration *c)
{
    opm_error err;
    opm_error_clear(&err);
    cr_assert_eq(opm_calibrate(start, o, c, &err), 0, "%s", err.message);
    cr_assert_not_null(c->hw);
}

static double cycles(double s) { return s * 1.59e9; }

/* ---- (a) recovery ---- */

Test(calibrate, recovers_known_efficiencies_and_overhead, .init = make_tmp, .fini = remove_tmp)
{
    char csv[512];
    opm_hardware *truth = t4_with(0.71, 0.62, 0.83, 7e-6);
    size_t n = synth_csv(tmp_path("synthetic.csv", csv, sizeof csv), truth, "t4", "extended_roofline", 1.0);
    opm_hardware *stock = t4_base();
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    cr_assert_eq(c.rows, n);
    cr_assert_eq(c.files, 1);
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) cr_assert_eq(c.param[p].status, OPM_CAL_FITTED, "param %d", p);
    cr_log_info("fitted tensor %g vector %g hbm %g overhead %g cycles; held-out MAPE %.3f -> %.3f", c.param[0].after,
                c.param[1].after, c.param[2].after, c.param[3].after, c.heldout_before.mape, c.heldout_after.mape);
    /* Starting from the description as given (all 1, no overhead). */
    cr_assert_eq(c.param[OPM_CAL_VECTOR].before, 1.0);
    cr_assert_eq(c.param[OPM_CAL_OVERHEAD].before, 0.0);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_TENSOR].after, 0.71), 0.02, "tensor %g", c.param[OPM_CAL_TENSOR].after);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_VECTOR].after, 0.62), 0.02, "vector %g", c.param[OPM_CAL_VECTOR].after);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_HBM].after, 0.83), 0.02, "hbm %g", c.param[OPM_CAL_HBM].after);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_OVERHEAD].after, cycles(7e-6)), 0.02, "overhead %g cycles",
                 c.param[OPM_CAL_OVERHEAD].after);
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) cr_assert_not(c.param[p].at_bound);
    /* The calibrated description is the one the parameters say. */
    cr_assert_eq(opm_hardware_utilization(c.hw, OPM_ENGINE_VECTOR), c.param[OPM_CAL_VECTOR].after);
    cr_assert_eq(opm_hardware_fixed_overhead_cycles(c.hw), c.param[OPM_CAL_OVERHEAD].after);
    cr_assert_eq(opm_hardware_find_level(c.hw, "hbm")->utilization, c.param[OPM_CAL_HBM].after);
    /* Noise-free data: the error nearly vanishes on rows the fit never saw. */
    cr_assert_gt(c.heldout_before.mape, 20);
    cr_assert_lt(c.heldout_after.mape, 1.0, "held-out MAPE after %g", c.heldout_after.mape);
    cr_assert_lt(c.train_after.msle, c.train_before.msle);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

Test(calibrate, recovery_with_the_plain_roofline, .init = make_tmp, .fini = remove_tmp)
{
    /* The roofline has no tiling: the compute-bound rows pin the engine
     * efficiencies, the skinny ones the DRAM efficiency. */
    char csv[512];
    opm_hardware *truth = t4_with(0.55, 0.8, 0.45, 12e-6);
    synth_csv(tmp_path("synthetic.csv", csv, sizeof csv), truth, "t4", "roofline", 1.0);
    opm_hardware *stock = t4_base();
    opm_cal_options o = {.data = csv, .model = "roofline"};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    cr_assert_str_eq(c.model, "roofline");
    cr_assert_lt(rel_diff(c.param[OPM_CAL_TENSOR].after, 0.55), 0.02);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_VECTOR].after, 0.8), 0.02);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_HBM].after, 0.45), 0.02);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_OVERHEAD].after, cycles(12e-6)), 0.02);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

Test(calibrate, rows_measured_at_a_locked_clock, .init = make_tmp, .fini = remove_tmp)
{
    /* Rows with clock_mhz are predicted at that clock, the overhead being
     * cycles at that clock: data measured at 1200 MHz recover the same
     * efficiencies and cycle count. */
    char csv[512];
    opm_hardware *truth = t4_with(0.71, 0.62, 0.83, 7e-6);
    synth_csv_at(tmp_path("clocked.csv", csv, sizeof csv), truth, "t4", "extended_roofline", 1.0, 1200);
    opm_hardware *stock = t4_base();
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    cr_assert_eq(c.rows_failed, 0);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_TENSOR].after, 0.71), 0.02);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_VECTOR].after, 0.62), 0.02);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_HBM].after, 0.83), 0.02);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_OVERHEAD].after, cycles(7e-6)), 0.02);
    cr_assert_lt(c.heldout_after.mape, 1.0);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

/* ---- (b) bounds ---- */

Test(calibrate, lower_bounds_hold_when_data_ask_for_less, .init = make_tmp, .fini = remove_tmp)
{
    /* Efficiencies of 0.15 and 0.2 and a 150 µs overhead are outside the
     * bounds: the fit stops at 0.3 and 100 µs. */
    char csv[512];
    opm_hardware *truth = t4_with(0.2, 0.15, 0.6, 150e-6);
    synth_csv(tmp_path("slow.csv", csv, sizeof csv), truth, "t4", "extended_roofline", 1.0);
    opm_hardware *stock = t4_base();
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    cr_assert_eq(c.param[OPM_CAL_TENSOR].after, OPM_CAL_EFF_MIN);
    cr_assert_eq(c.param[OPM_CAL_VECTOR].after, OPM_CAL_EFF_MIN);
    cr_assert(c.param[OPM_CAL_TENSOR].at_bound && c.param[OPM_CAL_VECTOR].at_bound);
    cr_assert_eq(c.param[OPM_CAL_OVERHEAD].after, floor(OPM_CAL_OVERHEAD_MAX_S * 1.59e9));
    cr_assert_eq(c.param[OPM_CAL_OVERHEAD].hi, floor(OPM_CAL_OVERHEAD_MAX_S * 1.59e9));
    cr_assert(c.param[OPM_CAL_OVERHEAD].at_bound);
    cr_assert_geq(c.param[OPM_CAL_HBM].after, OPM_CAL_EFF_MIN);
    cr_assert_leq(c.param[OPM_CAL_HBM].after, OPM_CAL_EFF_MAX);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

Test(calibrate, upper_bounds_hold_when_data_beat_the_peaks, .init = make_tmp, .fini = remove_tmp)
{
    /* Latencies at 40% of what the T4 as given (every efficiency 1, no
     * overhead) predicts would need efficiencies of 2.5 and a negative
     * overhead: the fit stops at 1 and 0. */
    char csv[512];
    opm_hardware *stock = t4_base();
    synth_csv(tmp_path("fast.csv", csv, sizeof csv), stock, "t4", "extended_roofline", 0.4);
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    for (int p = OPM_CAL_TENSOR; p <= OPM_CAL_HBM; p++) {
        cr_assert_eq(c.param[p].after, OPM_CAL_EFF_MAX, "param %d: %g", p, c.param[p].after);
        cr_assert(c.param[p].at_bound);
    }
    cr_assert_eq(c.param[OPM_CAL_OVERHEAD].after, 0.0);
    cr_assert(c.param[OPM_CAL_OVERHEAD].at_bound);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
}

/* ---- (c) the written description ---- */

Test(calibrate, yaml_loads_predicts_and_round_trips, .init = make_tmp, .fini = remove_tmp)
{
    char csv[512], out[512];
    opm_hardware *truth = t4_with(0.71, 0.62, 0.83, 7e-6);
    synth_csv(tmp_path("synthetic.csv", csv, sizeof csv), truth, "t4", "extended_roofline", 1.0);
    opm_hardware *stock = t4_base();
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    opm_error err;
    char *text = opm_calibration_to_yaml(&c, "opmodel calibrate --data x.csv --hardware t4 -o -", &err);
    cr_assert_not_null(text, "%s", err.message);

    /* A comment header, then exactly the emitter's text of c.hw. */
    const char *body = text;
    while (*body == '#') {
        body = strchr(body, '\n');
        cr_assert_not_null(body);
        body++;
    }
    cr_assert_gt(body - text, 0);
    char *emitted = opm_hardware_to_yaml(c.hw, &err);
    cr_assert_str_eq(body, emitted);
    cr_assert(strstr(text, "# command: opmodel calibrate --data x.csv --hardware t4 -o -\n"));
    cr_assert(strstr(text, csv), "the header names the data file");
    cr_assert(strstr(text, "utilization.vector: 1 -> "));
    cr_assert(strstr(text, "held-out"));
    cr_assert(strstr(text, "every 5th row"));

    /* Loads from a file, equals the calibrated object, re-emits identically. */
    write_all(tmp_path("calibrated.yaml", out, sizeof out), text);
    opm_hardware *back = opm_hardware_load_file(out, &err);
    cr_assert_not_null(back, "%s", err.message);
    cr_assert(opm_hardware_equal(back, c.hw));
    char *again = opm_hardware_to_yaml(back, &err);
    cr_assert_str_eq(again, emitted);
    cr_assert_str_eq(opm_hardware_name(back), "t4");

    /* It predicts like the description the data came from (the fit is
     * within 2% of it), unlike the starting one (no 7 µs overhead). */
    opm_op *op = opm_op_gemm(256, 256, 256, OPM_FP32, &err);
    opm_profile p_cal, p_stock, p_truth;
    cr_assert_eq(opm_predict("extended_roofline", op, back, &p_cal, &err), 0, "%s", err.message);
    cr_assert_eq(opm_predict("extended_roofline", op, stock, &p_stock, &err), 0);
    cr_assert_eq(opm_predict("extended_roofline", op, truth, &p_truth, &err), 0);
    cr_assert_lt(rel_diff(p_cal.latency_s, p_truth.latency_s), 0.02, "%g vs %g", p_cal.latency_s, p_truth.latency_s);
    cr_assert_gt(rel_diff(p_stock.latency_s, p_truth.latency_s), 0.1);
    cr_assert_float_eq(p_cal.overhead_s, c.param[OPM_CAL_OVERHEAD].after / 1.59e9, 1e-15);

    /* Deterministic: the same inputs give the same text. */
    opm_calibration c2;
    calibrate_ok(stock, &o, &c2);
    char *text2 = opm_calibration_to_yaml(&c2, "opmodel calibrate --data x.csv --hardware t4 -o -", &err);
    cr_assert_str_eq(text2, text);
    cr_assert_eq(c2.evaluations, c.evaluations);

    free(text2);
    opm_calibration_free(&c2);
    opm_op_free(op);
    free(again);
    opm_hardware_free(back);
    free(emitted);
    free(text);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

Test(calibrate, fit_subset_and_unexercised_engines_are_kept, .init = make_tmp, .fini = remove_tmp)
{
    /* fp32-only rows never touch the T4's tensor cores, so its tensor
     * efficiency is not fitted; --fit overhead leaves the others as given. */
    char csv[512];
    opm_hardware *truth = t4_with(0.5, 0.62, 0.83, 7e-6);
    synth_csv(tmp_path("synthetic.csv", csv, sizeof csv), truth, "t4", "extended_roofline", 1.0);
    char *all = read_all(csv);
    /* Keep the header and the fp32 rows. */
    char *w = all, *line = all;
    while (*line) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (line == all || (strstr(line, ",fp32,") && strstr(line, ",fp32,") < line + len)) {
            memmove(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = '\0';
    write_all(csv, all);
    free(all);
    opm_hardware *stock = t4_base();
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    cr_assert_eq(c.rows, 45);
    cr_assert_eq(c.param[OPM_CAL_TENSOR].status, OPM_CAL_NO_ROWS);
    cr_assert_eq(c.param[OPM_CAL_TENSOR].after, c.param[OPM_CAL_TENSOR].before);
    cr_assert_lt(rel_diff(c.param[OPM_CAL_VECTOR].after, 0.62), 0.02);
    opm_error err;
    char *text = opm_calibration_to_yaml(&c, NULL, &err);
    cr_assert_not_null(text);
    cr_assert(strstr(text, "utilization.tensor: 1, kept: no training row runs on this engine"));
    cr_assert_null(strstr(text, "  tensor:"), "an unfitted utilization is not written");
    free(text);
    opm_calibration_free(&c);

    o.fit = 1u << OPM_CAL_OVERHEAD;
    calibrate_ok(stock, &o, &c);
    cr_assert_eq(c.param[OPM_CAL_VECTOR].status, OPM_CAL_NOT_ASKED);
    cr_assert_eq(c.param[OPM_CAL_HBM].status, OPM_CAL_NOT_ASKED);
    cr_assert_eq(opm_hardware_utilization(c.hw, OPM_ENGINE_VECTOR), 1.0);
    cr_assert_eq(c.param[OPM_CAL_OVERHEAD].status, OPM_CAL_FITTED);
    cr_assert_gt(c.param[OPM_CAL_OVERHEAD].after, 0);
    opm_calibration_free(&c);

    o.fit = 1u << OPM_CAL_TENSOR;
    opm_error_clear(&err);
    cr_assert_neq(opm_calibrate(stock, &o, &c, &err), 0);
    cr_assert(strstr(err.message, "--fit"), "%s", err.message);
    cr_assert_null(c.hw);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

/* ---- split and row selection ---- */

Test(calibrate, every_fifth_row_is_held_out_and_rows_are_chosen_by_name, .init = make_tmp, .fini = remove_tmp)
{
    char dir[512], a[512], b[512], sub[512];
    opm_hardware *truth = t4_with(0.71, 0.62, 0.83, 7e-6);
    tmp_path("data", dir, sizeof dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(sub, sizeof sub, "%s/more", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(a, sizeof a, "%s/a.csv", dir);
    snprintf(b, sizeof b, "%s/b.csv", sub);
    size_t na = synth_csv(a, truth, "my_t4", "extended_roofline", 1.0);
    size_t nb = synth_csv(b, truth, "other_gpu", "extended_roofline", 1.0);
    opm_hardware *stock = t4_base();
    opm_cal_options o = {.data = dir, .rows_for = "my_t4"};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    cr_assert_eq(c.files, 2);
    cr_assert_eq(c.rows_read, na + nb);
    cr_assert_eq(c.rows, na);
    cr_assert_eq(c.rows_failed, 0);
    cr_assert_eq(c.heldout_before.n, na / 5);
    cr_assert_eq(c.train_before.n, na - na / 5);
    cr_assert_eq(c.train_after.n, c.train_before.n);
    cr_assert_str_eq(c.rows_for, "my_t4");
    opm_calibration_free(&c);

    /* Without --rows-for the hardware's own name is used: none here. */
    o.rows_for = NULL;
    opm_error err;
    opm_error_clear(&err);
    cr_assert_neq(opm_calibrate(stock, &o, &c, &err), 0);
    cr_assert(strstr(err.message, "'t4'") && strstr(err.message, "my_t4") && strstr(err.message, "other_gpu"),
              "%s", err.message);
    cr_assert_null(strchr(err.message, '\n'));
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

/* Rewrites the CSV with the latency of every 5th data row (the held-out
 * ones) multiplied by factor. */
static void scale_held_rows(const char *path, double factor)
{
    char *all = read_all(path);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    long row = -1; /* the header */
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n"), row++) {
        if (row >= 0 && row % 5 == 4) {
            /* latency_us is the 10th field. */
            char *lat = line;
            for (int i = 0; i < 9; i++) lat = strchr(lat, ',') + 1;
            char *end;
            double v = strtod(lat, &end);
            *lat = '\0';
            fprintf(f, "%s%.17g%s\n", line, v * factor, end);
        } else {
            fprintf(f, "%s\n", line);
        }
    }
    fclose(f);
    free(all);
}

Test(calibrate, held_out_rows_do_not_influence_the_fit, .init = make_tmp, .fini = remove_tmp)
{
    char a[512], b[512];
    opm_hardware *truth = t4_with(0.71, 0.62, 0.83, 7e-6);
    synth_csv(tmp_path("a.csv", a, sizeof a), truth, "t4", "extended_roofline", 1.0);
    synth_csv(tmp_path("b.csv", b, sizeof b), truth, "t4", "extended_roofline", 1.0);
    scale_held_rows(b, 10.0);
    opm_hardware *stock = t4_base();
    opm_cal_options oa = {.data = a}, ob = {.data = b};
    opm_calibration ca, cb;
    calibrate_ok(stock, &oa, &ca);
    calibrate_ok(stock, &ob, &cb);
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) cr_assert_eq(ca.param[p].after, cb.param[p].after, "param %d", p);
    cr_assert_eq(ca.train_after.mape, cb.train_after.mape);
    cr_assert_eq(ca.evaluations, cb.evaluations);
    /* ... while the held-out score sees the change (measured 10x: the
     * predictions are 90% low). */
    cr_assert_lt(ca.heldout_after.mape, 1.0);
    cr_assert_gt(cb.heldout_after.mape, 89.0);
    opm_calibration_free(&ca);
    opm_calibration_free(&cb);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}

Test(calibrate, malformed_data_names_file_and_line)
{
    char path[512];
    opm_hardware *stock = builtin("t4");
    opm_calibration c;
    opm_error err;
    opm_cal_options o = {.data = src_path("tests/data/calibrate/bad_row.csv", path, sizeof path)};
    cr_assert_neq(opm_calibrate(stock, &o, &c, &err), 0);
    cr_assert(strstr(err.message, "bad_row.csv:3: latency_us:"), "%s", err.message);
    cr_assert(strstr(err.message, "'fast'"), "%s", err.message);
    o.data = src_path("tests/data/calibrate/missing_column.csv", path, sizeof path);
    cr_assert_neq(opm_calibrate(stock, &o, &c, &err), 0);
    cr_assert(strstr(err.message, "missing_column.csv:1: header:") && strstr(err.message, "'latency_us'"), "%s",
              err.message);
    o.data = src_path("tests/data/calibrate/bad_clock.csv", path, sizeof path);
    cr_assert_neq(opm_calibrate(stock, &o, &c, &err), 0);
    cr_assert(strstr(err.message, "bad_clock.csv:3: clock_mhz:") && strstr(err.message, "'1.2GHz'"), "%s",
              err.message);
    o.data = src_path("tests/data/calibrate/nonexistent.csv", path, sizeof path);
    cr_assert_eq(opm_calibrate(stock, &o, &c, &err), OPM_EIO);
    o.data = src_path("tests/data/calibrate/other_hardware.csv", path, sizeof path);
    o.model = "no_such_model";
    cr_assert_eq(opm_calibrate(stock, &o, &c, &err), OPM_ENOTFOUND);
    cr_assert(strstr(err.message, "no_such_model"));
    opm_hardware_free(stock);
}

Test(calibrate, spreadsheet_csv_with_bom_crlf_quotes_and_blank_lines)
{
    char path[512];
    opm_hardware *p4 = builtin("p4");
    opm_cal_options o = {.data = src_path("tests/data/calibrate/crlf_bom_quotes.csv", path, sizeof path)};
    opm_calibration c;
    calibrate_ok(p4, &o, &c);
    cr_assert_eq(c.rows_read, 6);
    cr_assert_eq(c.rows, 6);
    cr_assert_eq(c.heldout_before.n, 1);
    cr_assert_eq(c.train_before.n, 5);
    opm_calibration_free(&c);
    opm_hardware_free(p4);
}

/* Writes six P4 rows (contract §4, a kernel and a source column) to
 * dir/gemm.csv, with a byte order mark and CRLF line ends when asked, and
 * with `pad` bytes added to the source of the second row: past the 4 KiB a
 * fixed line buffer would hold, with latency_us and kernel after it so a
 * split line would lose them. */
static void write_spreadsheet_csv(const char *dir, int bom, int crlf, size_t pad)
{
    static const char *const rows[] = {
        "p4,fixture/a,fp32,1,128,128,128,0,0,0,31.5,maxwell_sgemm_128x64_nn",
        "p4,fixture/b,fp32,1,256,256,256,0,0,0,38.0,maxwell_sgemm_128x128_nn",
        "p4,fixture/c,fp32,1,512,512,512,0,1,1,75.5,",
        "p4,fixture/d,fp32,4,512,512,512,0,0,0,190.0,",
        "p4,fixture/e,fp32,1,1024,1024,1024,0,0,0,480.0,maxwell_sgemm_128x64_nn",
        "p4,fixture/f,fp32,1,2048,2048,2048,0,0,0,3500.0,",
    };
    char path[600];
    snprintf(path, sizeof path, "%s/gemm.csv", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    const char *eol = crlf ? "\r\n" : "\n";
    if (bom) fputs("\xEF\xBB\xBF", f);
    fprintf(f, "hardware,source,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel%s", eol);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const char *comma = strchr(rows[i] + 3, ',');
        fwrite(rows[i], 1, (size_t)(comma - rows[i]), f);
        for (size_t j = 0; i == 1 && j < pad; j++) fputc("0123456789abcdef"[j % 16], f);
        fprintf(f, "%s%s", comma, eol);
    }
    cr_assert_eq(fclose(f), 0);
}

Test(calibrate, both_loaders_read_bom_crlf_and_long_lines, .init = make_tmp, .fini = remove_tmp)
{
    static const struct {
        const char *name;
        int bom, crlf;
        size_t pad;
    } v[] = {{"plain", 0, 0, 0}, {"bom", 1, 0, 0}, {"crlf", 0, 1, 0}, {"long", 0, 0, 6000},
             {"all", 1, 1, 6000}};
    opm_hardware *p4 = builtin("p4");
    opm_gemm_dataset plain;
    memset(&plain, 0, sizeof plain);
    opm_calibration plain_cal;
    memset(&plain_cal, 0, sizeof plain_cal);
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char dir[512], csv[600];
        tmp_path(v[i].name, dir, sizeof dir);
        cr_assert_eq(mkdir(dir, 0700), 0);
        write_spreadsheet_csv(dir, v[i].bom, v[i].crlf, v[i].pad);
        snprintf(csv, sizeof csv, "%s/gemm.csv", dir);

        /* validate-gemm-latency's loader: every row kept, none bad. */
        opm_error err;
        opm_gemm_dataset ds;
        cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), 0, "%s: %s", v[i].name, err.message);
        cr_assert_eq(ds.files, 1, "%s", v[i].name);
        cr_assert_eq(ds.n_rows, 6, "%s: %zu rows", v[i].name, ds.n_rows);
        cr_assert_eq(ds.rows_bad, 0, "%s", v[i].name);
        cr_assert_eq(ds.rows_unknown_hw, 0, "%s", v[i].name);
        cr_assert_eq(ds.n_hw, 1, "%s", v[i].name);
        cr_assert_str_eq(ds.hw_names[0], "p4", "%s", v[i].name);
        cr_assert_eq(ds.n_groups, 1, "%s", v[i].name);
        cr_assert_str_eq(ds.group_names[0], "p4|fixture", "%s", v[i].name);
        /* The long row's fields after its source survive. */
        cr_assert_eq(ds.rows[1].m, 256, "%s", v[i].name);
        cr_assert_float_eq(ds.rows[1].latency_s, 38e-6, 1e-18, "%s", v[i].name);
        cr_assert_eq(ds.rows[1].kern_tm, 128, "%s: the kernel column read", v[i].name);
        if (i == 0) {
            plain = ds;
        } else {
            for (size_t r = 0; r < ds.n_rows; r++) {
                const opm_gemm_row *a = &plain.rows[r], *b = &ds.rows[r];
                cr_assert(a->batch == b->batch && a->m == b->m && a->n == b->n && a->k == b->k && a->ta == b->ta &&
                              a->tb == b->tb && a->bias == b->bias && a->dtype == b->dtype &&
                              a->latency_s == b->latency_s && a->kern_tm == b->kern_tm && a->kern_tn == b->kern_tn &&
                              a->cls == b->cls && a->group == b->group,
                          "%s: row %zu differs from the plain file's", v[i].name, r);
            }
            opm_gemm_dataset_free(&ds);
        }

        /* calibrate's loader: every row read and kept; the same fit. */
        opm_cal_options o = {.data = csv};
        opm_calibration c;
        calibrate_ok(p4, &o, &c);
        cr_assert_eq(c.files, 1, "%s", v[i].name);
        cr_assert_eq(c.rows_read, 6, "%s", v[i].name);
        cr_assert_eq(c.rows, 6, "%s", v[i].name);
        cr_assert_eq(c.rows_failed, 0, "%s", v[i].name);
        if (i == 0) {
            plain_cal = c;
        } else {
            for (int p = 0; p < OPM_CAL_NPARAMS; p++)
                cr_assert_eq(c.param[p].after, plain_cal.param[p].after, "%s: param %d", v[i].name, p);
            cr_assert_eq(c.heldout_after.mape, plain_cal.heldout_after.mape, "%s", v[i].name);
            opm_calibration_free(&c);
        }
    }
    opm_gemm_dataset_free(&plain);
    opm_calibration_free(&plain_cal);
    opm_hardware_free(p4);
}

/* Errors and line numbers through the shared reader: blank lines count,
 * a byte order mark is dropped only where it opens the file, and a bad row
 * is named by file, line and column (calibrate) or counted (validation). */
Test(calibrate, shared_reader_lines_and_errors, .init = make_tmp, .fini = remove_tmp)
{
    char dir[512], csv[600];
    tmp_path("bad", dir, sizeof dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(csv, sizeof csv, "%s/bad.csv", dir);
    write_all(csv, "\xEF\xBB\xBFhardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us\r\n"
                   "p4,fp32,1,128,128,128,0,0,0,31.5\r\n"
                   " \t\r\n"
                   "p4,fp32,1,256,256,256,0,0,0,slow\r\n");
    opm_hardware *p4 = builtin("p4");
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    opm_error err;
    cr_assert_eq(opm_calibrate(p4, &o, &c, &err), OPM_EINVAL);
    cr_assert(strstr(err.message, "bad.csv:4: latency_us:") && strstr(err.message, "'slow'"), "%s", err.message);
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.n_rows, 1);
    cr_assert_eq(ds.rows_bad, 1);
    opm_gemm_dataset_free(&ds);

    /* A byte order mark after a blank first line is data, not a mark. */
    write_all(csv, "\n\xEF\xBB\xBFhardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us\n");
    cr_assert_eq(opm_calibrate(p4, &o, &c, &err), OPM_EINVAL);
    cr_assert(strstr(err.message, "bad.csv:2: header:") && strstr(err.message, "'hardware'"), "%s", err.message);
    cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), OPM_EINVAL);
    cr_assert(strstr(err.message, "bad.csv:2: expected a 'hardware' column"), "%s", err.message);
    opm_hardware_free(p4);
}

/* ---- (d) real data ---- */

Test(calibrate, shipped_neusight_t4_rows_improve_held_out_error)
{
    /* NeuSight nn.Linear fp32 on a T4 (cuBLAS SIMT sgemm): the stock T4
     * has no overhead and full efficiency, while every call carries a
     * ~50 µs PyTorch floor, so the calibrated file must do better on rows
     * the fit did not see. */
    char path[512];
    opm_hardware *stock = builtin("t4");
    opm_cal_options o = {.data = src_path("data/gemm/neusight_linear_t4.csv", path, sizeof path)};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    cr_assert_eq(c.rows, 6458);
    cr_assert_eq(c.rows_failed, 0);
    cr_assert_eq(c.heldout_before.n, 6458 / 5);
    cr_assert_lt(c.heldout_after.mape, c.heldout_before.mape, "held-out MAPE %.2f -> %.2f", c.heldout_before.mape,
                 c.heldout_after.mape);
    cr_assert_lt(c.train_after.msle, c.train_before.msle);
    cr_assert_eq(c.param[OPM_CAL_TENSOR].status, OPM_CAL_NO_ROWS, "fp32 rows run on the CUDA cores");
    /* The measured floor is ~51 µs; the model's own body of the smallest
     * GEMMs takes part of it, so the overhead lands inside its range, below
     * the floor. */
    double ovh_us = c.param[OPM_CAL_OVERHEAD].after / 1.59e9 * 1e6;
    cr_assert(ovh_us > 10 && ovh_us < 51, "overhead %.2f us", ovh_us);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
}

/* ---- (e) the CLI ---- */

typedef struct run_result {
    int status;
    char *out, *err;
} run_result;

static run_result run_cli(const char *args)
{
    const char *bin = getenv("OPMODEL_BIN");
    cr_assert_not_null(bin, "OPMODEL_BIN not set");
    char out[512], errp[512], cmd[4096];
    tmp_path("stdout.txt", out, sizeof out);
    tmp_path("stderr.txt", errp, sizeof errp);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >'%s' 2>'%s'", getenv("OPM_SOURCE_DIR") ? getenv("OPM_SOURCE_DIR") : ".",
             bin, args, out, errp);
    int st = system(cmd);
    cr_assert(WIFEXITED(st), "%s", cmd);
    run_result r = {WEXITSTATUS(st), read_all(out), read_all(errp)};
    return r;
}

static void free_run(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* Exit 2, nothing on stdout, one "opmodel: ..." line with `needle`. */
static void cli_rejects(const char *args, const char *needle)
{
    run_result r = run_cli(args);
    cr_assert_eq(r.status, 2, "%s: exit %d", args, r.status);
    cr_assert_str_eq(r.out, "", "%s: stdout not empty", args);
    cr_assert_eq(strncmp(r.err, "opmodel: ", 9), 0, "%s: %s", args, r.err);
    char *nl = strchr(r.err, '\n');
    cr_assert(nl && nl[1] == '\0', "%s: expected one line, got: %s", args, r.err);
    cr_assert(strstr(r.err, needle), "%s: expected '%s' in: %s", args, needle, r.err);
    free_run(&r);
}

Test(calibrate, cli_error_paths, .init = make_tmp, .fini = remove_tmp)
{
    char args[1024], out[512];
    tmp_path("never.yaml", out, sizeof out);
    cli_rejects("calibrate", "--data");
    cli_rejects("calibrate --hardware t4 -o x.yaml", "--data");
    cli_rejects("calibrate --data tests/data/calibrate/bad_row.csv -o x.yaml", "--hardware");
    cli_rejects("calibrate --data tests/data/calibrate/bad_row.csv --hardware t4", "-o");
    cli_rejects("calibrate --data tests/data/calibrate/bad_row.csv --hardware t4 -o x.yaml --bogus", "--bogus");
    cli_rejects("calibrate --data tests/data/calibrate/bad_row.csv --hardware t4 -o x.yaml stray", "stray");
    cli_rejects("calibrate --data tests/data/calibrate/bad_row.csv --hardware t4 -o x.yaml --fit tensor,speed",
                "speed");
    cli_rejects("calibrate --data tests/data/calibrate/bad_row.csv --hardware t4 --model", "--model");
    snprintf(args, sizeof args, "calibrate --data tests/data/calibrate/bad_row.csv --hardware t4 -o '%s'", out);
    cli_rejects(args, "bad_row.csv:3: latency_us:");
    snprintf(args, sizeof args, "calibrate --data tests/data/calibrate/missing_column.csv --hardware t4 -o '%s'", out);
    cli_rejects(args, "missing_column.csv:1:");
    snprintf(args, sizeof args, "calibrate --data tests/data/calibrate/no_such.csv --hardware t4 -o '%s'", out);
    cli_rejects(args, "no_such.csv");
    snprintf(args, sizeof args, "calibrate --data tests/data/calibrate/other_hardware.csv --hardware t4 -o '%s'", out);
    cli_rejects(args, "p4, a100_40gb_pcie");
    snprintf(args, sizeof args, "calibrate --data tests/data/calibrate/other_hardware.csv --hardware t44 -o '%s'", out);
    cli_rejects(args, "t44");
    snprintf(args, sizeof args, "calibrate --data tests/data/calibrate/other_hardware.csv --hardware nowhere/hw.yaml -o '%s'",
             out);
    cli_rejects(args, "nowhere/hw.yaml");
    snprintf(args, sizeof args,
             "calibrate --data tests/data/calibrate/other_hardware.csv --hardware p4 --model nope -o '%s'", out);
    cli_rejects(args, "nope");
    struct stat st;
    cr_assert_neq(stat(out, &st), 0, "no output file on error");
}

Test(calibrate, cli_writes_a_file_predict_accepts, .init = make_tmp, .fini = remove_tmp)
{
    char csv[512], out[512], args[2048];
    opm_hardware *truth = t4_with(0.71, 0.62, 0.83, 7e-6);
    synth_csv(tmp_path("synthetic.csv", csv, sizeof csv), truth, "t4", "extended_roofline", 1.0);
    tmp_path("t4_calibrated.yaml", out, sizeof out);
    snprintf(args, sizeof args, "calibrate --data '%s' --hardware t4 -o '%s'", csv, out);
    run_result r = run_cli(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    cr_assert(strstr(r.out, "utilization.vector") && strstr(r.out, "held-out") && strstr(r.out, "wrote "), "%s", r.out);
    free_run(&r);

    /* The file is what the library writes for the same calibration. */
    char *file = read_all(out);
    opm_hardware *stock = builtin("t4");
    opm_cal_options o = {.data = csv};
    opm_calibration c;
    calibrate_ok(stock, &o, &c);
    char cmdline[2048];
    snprintf(cmdline, sizeof cmdline, "opmodel calibrate --data %s --hardware t4 -o %s", csv, out);
    opm_error err;
    char *text = opm_calibration_to_yaml(&c, cmdline, &err);
    cr_assert_str_eq(file, text);

    snprintf(args, sizeof args, "predict --hardware '%s' --op examples/gemm.yaml", out);
    r = run_cli(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"latency_s\""), "%s", r.out);
    free_run(&r);

    /* -o -: the YAML on stdout, the report on stderr. */
    snprintf(args, sizeof args, "calibrate --data='%s' --hardware=t4 -o -", csv);
    r = run_cli(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(strncmp(r.out, "# t4 calibrated", 15), 0, "%s", r.out);
    cr_assert(strstr(r.out, "\nname: t4\n"));
    cr_assert(strstr(r.err, "held-out"), "%s", r.err);
    cr_assert_null(strstr(r.err, "wrote "));
    free_run(&r);

    free(text);
    free(file);
    opm_calibration_free(&c);
    opm_hardware_free(stock);
    opm_hardware_free(truth);
}
