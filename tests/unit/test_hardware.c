/* test_hardware.c — the built-in database (names other tools address,
 * internal consistency, a source on every figure), round trips through
 * YAML and JSON, and the original opmodel schema keys. */
#include <criterion/criterion.h>
#include <math.h>
#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "hardware/builtin_data.h"
#include "hardware/hw_internal.h"

static const char *const required[] = {
    "gpu_generic", "tpu_generic", "a10", "a100_40gb_pcie", "a100_80gb_pcie", "a100_80gb_sxm", "h100_sxm",
    "h100_pcie", "h200_sxm", "b200", "l4", "l40s", "v100_pcie_32gb", "v100_sxm2", "t4", "p100_pcie_16gb",
    "p4", "mi250x", "mi300x", "mi325x", "mi350x", "mi355x", "tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e",
    "gaudi2", "gaudi3", NULL,
};

Test(hardware, builtin_names_exact)
{
    size_t n = 0;
    for (; required[n]; n++) {
        opm_error err;
        opm_hardware *hw = opm_hardware_builtin(required[n], &err);
        cr_assert_not_null(hw, "%s: %s", required[n], err.message);
        cr_assert_str_eq(opm_hardware_name(hw), required[n]);
        opm_hardware_free(hw);
    }
    cr_assert_eq(opm_hardware_builtin_count(), n);
    opm_error err;
    cr_assert_null(opm_hardware_builtin("h100", &err));
    cr_assert_eq(err.code, OPM_ENOTFOUND);
}

Test(hardware, every_builtin_predicts_a_gemm)
{
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        opm_error err;
        opm_hardware *hw = opm_hardware_builtin(opm_hardware_builtin_name(i), &err);
        cr_assert_not_null(hw, "%s", err.message);
        opm_dtype dt = opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, OPM_BF16) > 0 ? OPM_BF16 : OPM_FP32;
        opm_op *op = opm_op_gemm(1024, 1024, 1024, dt, &err);
        opm_profile p;
        cr_assert_eq(opm_predict("roofline", op, hw, &p, &err), 0, "%s: %s", opm_hardware_name(hw), err.message);
        cr_assert_gt(p.latency_s, 0);
        cr_assert_geq(p.energy_j, 0);
        opm_op_free(op);
        opm_hardware_free(hw);
    }
}

/* SMs × FLOP per clock per SM × clock must give the quoted peak within 2%. */
Test(hardware, peaks_consistent_with_per_sm_rates)
{
    int checked = 0;
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        opm_error err;
        opm_hardware *hw = opm_hardware_builtin(opm_hardware_builtin_name(i), &err);
        for (int e = 0; e < 2; e++) {
            opm_engine eng = e ? OPM_ENGINE_TENSOR : OPM_ENGINE_VECTOR;
            double clock = e ? opm_hardware_tensor_clock_hz(hw) : opm_hardware_clock_hz(hw);
            for (int d = 0; d < OPM_DTYPE_COUNT; d++) {
                double fpc = opm_hardware_flops_per_clock_per_sm(hw, eng, (opm_dtype)d);
                double peak = opm_hardware_peak_flops(hw, eng, (opm_dtype)d);
                if (fpc == 0) continue;
                cr_assert_gt(peak, 0, "%s: per-SM rate without a peak for %s", opm_hardware_name(hw),
                             opm_dtype_name((opm_dtype)d));
                double derived = opm_hardware_num_sms(hw) * fpc * clock;
                cr_assert_leq(rel_diff(derived, peak), 0.02, "%s %s %s: %g vs %g", opm_hardware_name(hw),
                              opm_engine_name(eng), opm_dtype_name((opm_dtype)d), derived, peak);
                checked++;
            }
        }
        opm_hardware_free(hw);
    }
    cr_assert_gt(checked, 50);
}

/* Every line of a built-in file that holds a number carries a source. */
Test(hardware, every_figure_has_a_source)
{
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        const char *t = opm_hardware_builtin_text(i);
        int line = 1;
        for (const char *p = t; *p; line++) {
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            const char *hash = memchr(p, '#', len);
            size_t code = hash ? (size_t)(hash - p) : len;
            int has_number = 0;
            for (size_t k = 0; k < code; k++)
                if (isdigit((unsigned char)p[k]) && (k == 0 || !isalpha((unsigned char)p[k - 1])) &&
                    (k == 0 || p[k - 1] != '_'))
                    has_number = 1;
            int is_name = !strncmp(p, "name:", 5);
            if (has_number && !is_name)
                cr_assert(hash && (strstr(hash, "[") || strstr(hash, "derived")),
                          "%s line %d has a figure without a source: %.*s", opm_hardware_builtin_name(i), line,
                          (int)len, p);
            p = e ? e + 1 : p + len;
        }
    }
}

Test(hardware, dense_peaks_plausible)
{
    /* Sparse figures are 2× dense; catch the most common datasheet slip. */
    opm_error err;
    opm_hardware *h = opm_hardware_builtin("h100_sxm", &err);
    cr_assert_float_eq(opm_hardware_peak_flops(h, OPM_ENGINE_TENSOR, OPM_BF16), 989.4e12, 1e12);
    opm_hardware_free(h);
    opm_hardware *l4 = opm_hardware_builtin("l4", &err);
    cr_assert_float_eq(opm_hardware_find_level(l4, "hbm")->bandwidth_bytes_per_s, 300e9, 1e9);
    cr_assert_eq(opm_hardware_num_sms(l4), 58);
    opm_hardware_free(l4);
}

Test(hardware, yaml_and_json_round_trip_every_builtin)
{
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        opm_error err;
        opm_hardware *hw = opm_hardware_builtin(opm_hardware_builtin_name(i), &err);
        for (int json = 0; json < 2; json++) {
            char *text = json ? opm_hardware_to_json(hw, &err) : opm_hardware_to_yaml(hw, &err);
            cr_assert_not_null(text, "%s", err.message);
            opm_hardware *back = opm_hardware_load_string(text, strlen(text), "<emitted>", &err);
            cr_assert_not_null(back, "%s: %s\n%s", opm_hardware_name(hw), err.message, text);
            cr_assert(opm_hardware_equal(hw, back), "%s differs after %s round trip", opm_hardware_name(hw),
                      json ? "JSON" : "YAML");
            opm_hardware_free(back);
            free(text);
        }
        opm_hardware_free(hw);
    }
}

/* Every key of the original Python opmodel schema loads with its meaning. */
Test(hardware, original_schema_keys)
{
    const char *t =
        "name: legacy\nkind: gpu\nstatic_power_w: 50\n"
        "compute:\n  clock_hz: 1.41e9\n  num_sms: 108\n  fma_dims: [16, 8, 16]\n  dataflow: output_stationary\n"
        "  vector_flops_per_s: {fp32: 1.95e13}\n  tensor_flops_per_s: {bf16: 3.12e14, fp16: 3.12e+14}\n"
        "  vector_energy_j_per_flop: {fp32: 2.0e-11}\n  tensor_energy_j_per_flop: {bf16: 0.7e-12}\n"
        "  max_ctas_per_sm: 32\n  max_warps_per_sm: 64\n  registers_per_sm: 65536\n"
        "  shared_memory_bytes_per_sm: 167936\n  max_async_copy_groups: 8\n  tensor_latency_cycles: 32\n"
        "  device_fixed_overhead_cycles: 4000\n"
        "memory:\n  levels:\n"
        "    - {name: register, size_bytes: 27648000, bandwidth_bytes_per_s: 1e14}\n"
        "    - {name: sram, size_bytes: 18137088, bandwidth_bytes_per_s: 1.9e13, energy_j_per_byte: 1.3e-11,"
        " latency_cycles: 30, bank_count: 32, bank_width_bytes: 4}\n"
        "    - {name: l2, size_bytes: 41943040, bandwidth_bytes_per_s: 7.2e12, energy_j_per_byte: 3.8e-11,"
        " energy_j_per_sector: 1.2e-9, line_size_bytes: 128, sector_size_bytes: 32, latency_s: 2e-7}\n"
        "    - {name: hbm, size_bytes: 42949672960, bandwidth_bytes_per_s: 1.555e12, energy_j_per_byte: 1.0e-10}\n"
        "utilization: {vector: 0.9, tensor: 0.8, memory: {hbm: 0.85, l2: 1.0}}\n"
        "energy_model:\n  level: E2\n  power_coefficients: {base_power_w: 50, sm_resident_power_w: 0.1,"
        " tc_active_power_w: 100, dram_active_power_w: 30, dram_exposed_power_w: 5, l2_active_power_w: 10,"
        " smem_active_power_w: 8}\n  feature_order: [base, sm, tc]\n";
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string(t, strlen(t), "<legacy>", &err);
    cr_assert_not_null(hw, "%s", err.message);
    cr_assert_float_eq(opm_hardware_utilization(hw, OPM_ENGINE_TENSOR), 0.8, 0);
    cr_assert_float_eq(opm_hardware_find_level(hw, "hbm")->utilization, 0.85, 0);
    cr_assert_float_eq(opm_hardware_compute_param(hw, "device_fixed_overhead_cycles"), 4000, 0);
    cr_assert_float_eq(opm_hardware_energy_j_per_flop(hw, OPM_ENGINE_TENSOR, OPM_BF16), 0.7e-12, 0);
    cr_assert_eq(opm_hardware_level_count(hw), 4);
    char *y = opm_hardware_to_yaml(hw, &err);
    opm_hardware *back = opm_hardware_load_string(y, strlen(y), "<y>", &err);
    cr_assert_not_null(back, "%s\n%s", err.message, y);
    cr_assert(opm_hardware_equal(hw, back), "%s", y);
    opm_hardware_free(back);
    free(y);
    opm_hardware_free(hw);
}

Test(hardware, open_by_name_or_path)
{
    char p[512];
    opm_error err;
    opm_hardware *a = opm_hardware_open("a10", &err);
    cr_assert_not_null(a);
    opm_hardware *b = opm_hardware_open(src_path("configs/hardware/a10.yaml", p, sizeof p), &err);
    cr_assert_not_null(b, "%s", err.message);
    cr_assert(opm_hardware_equal(a, b));
    opm_hardware_free(a);
    opm_hardware_free(b);
    cr_assert_null(opm_hardware_open("h100sxm", &err));
    cr_assert(strstr(err.message, "did you mean 'h100_sxm'"), "%s", err.message);
}

/* Inputs the fuzzer once crashed or hung on: each must load (or fail
 * cleanly), emit and reload to an equal object, and a GEMM predicted on it
 * by every model must end (hw_swizzle_huge_tiles: a tensor-core wave whose
 * swizzle candidate r0 + 1 equalled r0 looped forever). */
Test(hardware, fuzz_regressions, .timeout = 30)
{
    const char *files[] = {"tests/data/fuzz_regressions/hw_huge_peak.yaml",
                           "tests/data/fuzz_regressions/hw_swizzle_huge_tiles.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[512];
        opm_error err;
        opm_hardware *hw = opm_hardware_load_file(src_path(files[i], p, sizeof p), &err);
        if (!hw) continue;
        opm_op *op = opm_op_gemm(8192, 8192, 8192, OPM_BF16, &err);
        cr_assert_not_null(op);
        for (size_t m = 0; m < opm_model_count(); m++) {
            opm_profile prof;
            if (opm_predict(opm_model_at(m)->name, op, hw, &prof, &err) == 0) cr_assert(isfinite(prof.latency_s));
        }
        opm_op_free(op);
        char *y = opm_hardware_to_yaml(hw, &err);
        cr_assert_not_null(y);
        opm_hardware *back = opm_hardware_load_string(y, strlen(y), "<y>", &err);
        cr_assert_not_null(back, "%s", err.message);
        cr_assert(opm_hardware_equal(hw, back));
        opm_hardware_free(back);
        free(y);
        opm_hardware_free(hw);
    }
}

/* Whole-object checks of a loaded file, reported at the offending line:
 * levels innermost first, per-SM rates against the peaks. */
Test(hardware, levels_order_and_per_sm_rates_checked)
{
    static const char *const cases[][2] = {
        {"name: x\ncompute:\n  clock_hz: 1e9\n  num_sms: 10\n  vector_flops_per_s: {fp32: 2.56e12}\n"
         "memory:\n  levels:\n    - {name: hbm, bandwidth_bytes_per_s: 1e12}\n    - {name: l2, size_bytes: 1e6}\n",
         "x.yaml:9:"},
        {"name: x\ncompute:\n  clock_hz: 1e9\n  num_sms: 10\n  vector_flops_per_s: {fp32: 2.56e12}\n"
         "  vector_flops_per_clock_per_sm: {fp32: 128}\n"
         "memory:\n  levels:\n    - {name: hbm, bandwidth_bytes_per_s: 1e12}\n",
         "compute.vector_flops_per_clock_per_sm.fp32: expected num_sms x this x clock_hz (1.28e+12 FLOP/s) within 2%"},
        {"name: x\ncompute:\n  clock_hz: 1e9\n  num_sms: 10\n  vector_flops_per_s: {fp32: 2.56e12}\n"
         "  tensor_flops_per_clock_per_sm: {bf16: 1024}\n"
         "memory:\n  levels:\n    - {name: hbm, bandwidth_bytes_per_s: 1e12}\n",
         "expected a peak in tensor_flops_per_s.bf16"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        opm_error err;
        opm_hardware *hw = opm_hardware_load_string(cases[i][0], strlen(cases[i][0]), "x.yaml", &err);
        cr_assert_null(hw, "case %zu accepted", i);
        cr_assert(strstr(err.message, cases[i][1]), "case %zu: %s", i, err.message);
        cr_assert(strchr(err.message, '\n') == NULL);
    }
    /* Every built-in lists its levels innermost first (it loads). */
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        opm_error err;
        opm_hardware *hw = opm_hardware_builtin(opm_hardware_builtin_name(i), &err);
        cr_assert_not_null(hw, "%s", err.message);
        opm_hardware_free(hw);
    }
}

static const char *const table_hw =
    "name: tabled\nstatic_power_w: 60\n"
    "idle_power: {900: 47.35, 210: 44.47, 1410: 67.34}\n"
    "supply_voltage: {210: 693.75, 900: 693.75, 1410: 893.75, 1500: null}\n"
    "compute:\n  clock_hz: 1.41e9\n  num_sms: 108\n  tensor_flops_per_s: {bf16: 312e12}\n"
    "  tensor_energy_j_per_flop: {bf16: 1e-12}\n"
    "memory:\n  levels:\n    - {name: l2, size_bytes: 4e7, bandwidth_bytes_per_s: 7e12, energy_j_per_byte: 5e-12}\n"
    "    - {name: hbm, size_bytes: 4e10, bandwidth_bytes_per_s: 1.555e12, energy_j_per_byte: 3e-11}\n";

/* Idle power: interpolated in the table (in any key order), flat past its
 * ends, the current clock for clock_hz <= 0; the table wins over
 * static_power_w.  Round trips through YAML. */
Test(hardware, idle_power_table)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string(table_hw, strlen(table_hw), "<t>", &err);
    cr_assert_not_null(hw, "%s", err.message);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 900e6), 47.35, 1e-12);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 1155e6), (47.35 + 67.34) / 2, 1e-9);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 0), 67.34, 1e-12);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 100e6), 44.47, 1e-12);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 3e9), 67.34, 1e-12);
    opm_hardware *slow = opm_hardware_with_clock(hw, 900e6, &err);
    cr_assert_float_eq(opm_hardware_idle_power_w(slow, 0), 47.35, 1e-12);
    /* C·V²: J/FLOP and on-chip J/byte follow the voltage, DRAM does not. */
    double s = (693.75 / 893.75) * (693.75 / 893.75);
    cr_assert_float_eq(opm_hardware_energy_j_per_flop(slow, OPM_ENGINE_TENSOR, OPM_BF16), 1e-12 * s, 1e-24);
    cr_assert_float_eq(opm_hardware_find_level(slow, "l2")->energy_j_per_byte, 5e-12 * s, 1e-24);
    cr_assert_float_eq(opm_hardware_find_level(slow, "hbm")->energy_j_per_byte, 3e-11, 0);
    char *y = opm_hardware_to_yaml(slow, &err);
    opm_hardware *back = opm_hardware_load_string(y, strlen(y), "<y>", &err);
    cr_assert_not_null(back, "%s\n%s", err.message, y);
    cr_assert(opm_hardware_equal(slow, back), "%s", y);
    opm_hardware_free(back);
    free(y);
    opm_hardware_free(slow);
    opm_hardware_free(hw);
}

/* Without a table: static_power_w at the clock it was measured at, falling
 * toward 0.66 of it as f³; a clocked copy keeps its anchor. */
Test(hardware, idle_power_without_table)
{
    const char *t = "name: plain\nstatic_power_w: 100\ncompute: {clock_hz: 2e9, num_sms: 10, vector_flops_per_s: {fp32: 1e13}}\n"
                    "memory: {levels: [{name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e12}]}\n";
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string(t, strlen(t), "<t>", &err);
    cr_assert_not_null(hw, "%s", err.message);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 0), 100, 1e-12);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 1e9), 100 * (0.66 + 0.34 / 8), 1e-9);
    opm_hardware *slow = opm_hardware_with_clock(hw, 1e9, &err);
    cr_assert_float_eq(opm_hardware_idle_power_w(slow, 0), 100 * (0.66 + 0.34 / 8), 1e-9);
    cr_assert_float_eq(opm_hardware_idle_power_w(slow, 2e9), 100, 1e-9);
    cr_assert(opm_hardware_has_idle_power(slow));
    char *y = opm_hardware_to_yaml(slow, &err);
    opm_hardware *back = opm_hardware_load_string(y, strlen(y), "<y>", &err);
    cr_assert(back && opm_hardware_equal(slow, back), "%s", y);
    opm_hardware_free(back);
    free(y);
    opm_hardware_free(slow);
    opm_hardware_free(hw);
    const char *none = "name: none\ncompute: {clock_hz: 2e9, num_sms: 10, vector_flops_per_s: {fp32: 1e13}}\n"
                       "memory: {levels: [{name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e12}]}\n";
    hw = opm_hardware_load_string(none, strlen(none), "<n>", &err);
    cr_assert_eq(opm_hardware_idle_power_w(hw, 0), 0);
    cr_assert(!opm_hardware_has_idle_power(hw));
    opm_hardware_free(hw);
}

/* The seed package's calibrated files: energy_model.model_level and
 * energy_model.calibration; gemm_selection_objective. */
Test(hardware, seed_energy_model_keys)
{
    const char *t =
        "name: seed_a100\nstatic_power_w: 47\ngemm_selection_objective: edp\n"
        "compute: {clock_hz: 1.41e9, num_sms: 108, tensor_flops_per_s: {bf16: 312e12}}\n"
        "memory: {levels: [{name: l2, size_bytes: 4e7, bandwidth_bytes_per_s: 7e12, energy_j_per_sector: 2e-10},"
        " {name: hbm, size_bytes: 4e10, bandwidth_bytes_per_s: 1.555e12, energy_j_per_byte: 3e-11}]}\n"
        "energy_model:\n  model_level: E3\n  calibration: {method: nnls, rows: 120, mape: 0.081}\n"
        "  power_coefficients: {base_power_w: 47, tc_active_power_w: 120}\n";
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string(t, strlen(t), "<seed>", &err);
    cr_assert_not_null(hw, "%s", err.message);
    cr_assert_str_eq(opm_hardware_gemm_selection_objective(hw), "edp");
    char *y = opm_hardware_to_yaml(hw, &err);
    opm_hardware *back = opm_hardware_load_string(y, strlen(y), "<y>", &err);
    cr_assert(back && opm_hardware_equal(hw, back), "%s", y);
    opm_hardware_free(back);
    free(y);
    opm_hardware_free(hw);
    const char *badlvl = "name: x\ncompute: {clock_hz: 1e9, num_sms: 1, vector_flops_per_s: {fp32: 1e12}}\n"
                         "memory: {levels: [{name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e12}]}\n"
                         "energy_model: {model_level: E7}\n";
    cr_assert_null(opm_hardware_load_string(badlvl, strlen(badlvl), "<b>", &err));
    cr_assert_str_eq(err.field, "energy_model.model_level");
    const char *badtab = "name: x\nidle_power: {fast: 3}\ncompute: {clock_hz: 1e9, num_sms: 1, vector_flops_per_s: {fp32: 1e12}}\n"
                         "memory: {levels: [{name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e12}]}\n";
    cr_assert_null(opm_hardware_load_string(badtab, strlen(badtab), "<b>", &err));
    cr_assert_str_eq(err.field, "idle_power.fast");
    const char *badobj = "name: x\ngemm_selection_objective: speed\ncompute: {clock_hz: 1e9, num_sms: 1, vector_flops_per_s: {fp32: 1e12}}\n"
                         "memory: {levels: [{name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e12}]}\n";
    cr_assert_null(opm_hardware_load_string(badobj, strlen(badobj), "<b>", &err));
    cr_assert_str_eq(err.field, "gemm_selection_objective");
}

/* The optional interconnect block: read, checked like other fields, written
 * back by the emitter (and so by `hardware show`). */
Test(hardware, interconnect_fields)
{
    static const char base[] = "name: x\ncompute:\n  clock_hz: 1e9\n  num_sms: 1\n  tensor_flops_per_s: {bf16: 1e12}\n"
                               "memory:\n  levels:\n    - {name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e12}\n";
    char text[1024];
    opm_error err;
    snprintf(text, sizeof text, "%sinterconnect:\n  name: nvlink4\n  bandwidth_bytes_per_s: 450e9\n"
             "  latency_s: 0.47e-6\n  domain_devices: 8\n", base);
    opm_hardware *hw = opm_hardware_load_string(text, strlen(text), "ic.yaml", &err);
    cr_assert(hw, "%s", err.message);
    const opm_interconnect *ic = opm_hardware_interconnect(hw);
    cr_assert_not_null(ic);
    cr_expect_str_eq(ic->name, "nvlink4");
    cr_expect_eq(ic->bandwidth_bytes_per_s, 450e9);
    cr_expect_eq(ic->latency_s, 0.47e-6);
    cr_expect_eq(ic->domain_devices, 8);
    char *y = opm_hardware_to_yaml(hw, &err);
    cr_assert(y);
    cr_expect(strstr(y, "interconnect"), "%s", y);
    opm_hardware *back = opm_hardware_load_string(y, strlen(y), "<y>", &err);
    cr_assert(back, "%s", err.message);
    cr_expect(opm_hardware_equal(hw, back));
    opm_hardware_free(back);
    free(y);
    opm_hardware_free(hw);
    hw = opm_hardware_load_string(base, strlen(base), "no.yaml", &err);
    cr_assert(hw);
    cr_expect_null(opm_hardware_interconnect(hw));
    opm_hardware_free(hw);
    static const struct { const char *block, *want; } bad[] = {
        {"interconnect:\n  latency_s: 1e-6\n", "interconnect.bandwidth_bytes_per_s"},
        {"interconnect:\n  bandwidth_bytes_per_s: -5\n", "ic.yaml:10"},
        {"interconnect:\n  bandwidth_bytes_per_s: 1e9\n  domain_devices: 2.5\n", "domain_devices"},
        {"interconnect:\n  bandwidth_bytes_per_s: 1e9\n  bandwith: 3\n", "unknown key"},
        {"interconnect: 5\n", "interconnect"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", base, bad[i].block);
        cr_expect_null(opm_hardware_load_string(text, strlen(text), "ic.yaml", &err), "%s", bad[i].block);
        cr_expect(strstr(err.message, bad[i].want), "%s: %s", bad[i].block, err.message);
    }
}

/* Built-ins are compiled in as the loader's result (tools/hwgen.c): each
 * must be, byte for byte, what loading its YAML text gives now (the struct's
 * padding is zeroed by opm_hw_init in both). */
Test(hardware, compiled_builtins_equal_their_yaml)
{
    size_t n = opm_hardware_builtin_count();
    cr_assert_gt(n, 20);
    for (size_t i = 0; i < n; i++) {
        const char *name = opm_hardware_builtin_name(i), *text = opm_hardware_builtin_text(i);
        cr_assert_not_null(opm_builtin_images[i], "%s: no compiled image in a native build", name);
        opm_error err;
        opm_hardware *a = opm_hardware_builtin(name, &err);
        cr_assert_not_null(a, "%s: %s", name, err.message);
        opm_hardware *b = opm_hardware_load_string(text, strlen(text), name, &err);
        cr_assert_not_null(b, "%s: %s", name, err.message);
        cr_assert_eq(memcmp(a, b, sizeof(struct opm_hardware)), 0, "%s: compiled image differs from its YAML", name);
        cr_assert(opm_hardware_equal(a, b));
        opm_hardware_free(a);
        opm_hardware_free(b);
    }
}

/* far_latency_cycles (an L2 hit in another partition): a non-negative
 * number, kept through YAML; the A100 entries give it, from [B12]. */
Test(hardware, far_latency_cycles_checked)
{
    static const char bad[] = "name: x\nkind: gpu\ncompute: {clock_hz: 1e9, num_sms: 1, vector_flops_per_s: {fp32: 1e12}}\n"
                              "memory:\n  levels:\n    - {name: l2, size_bytes: 1e6, partitions: 2, far_latency_cycles: -3}\n"
                              "    - {name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e11}\n";
    opm_error err;
    cr_assert_null(opm_hardware_load_string(bad, strlen(bad), "<bad>", &err));
    cr_assert(strstr(err.message, "memory.levels[0].far_latency_cycles"), "%s", err.message);
    opm_hardware *a = opm_hardware_builtin("a100_40gb_pcie", &err);
    cr_assert_not_null(a, "%s", err.message);
    const opm_memory_level *l2 = opm_hardware_find_level(a, "l2");
    cr_assert_eq(l2->far_latency_cycles, 368);
    cr_assert_gt(l2->far_latency_cycles, l2->latency_cycles);
    char *y = opm_hardware_to_yaml(a, &err);
    cr_assert(strstr(y, "far_latency_cycles: 368"), "%s", y);
    free(y);
    opm_hardware_free(a);
}
