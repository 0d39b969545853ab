/* test_hw_builder.c — opm_hardware_builder: an H100 SXM built in code from
 * the figures of configs/hardware/h100_sxm.yaml equals the built-in entry
 * and predicts the same for several ops and every model; each setter
 * refuses what the loader refuses, and _build runs the loader's
 * whole-object checks (hbm present, levels innermost first, per-SM rates
 * against peaks). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static opm_memory_level level(const char *name, double size, double bw, double lat_cycles, double line,
                              double sector, double partitions)
{
    opm_memory_level l;
    memset(&l, 0, sizeof l);
    strcpy(l.name, name);
    l.size_bytes = size;
    l.bandwidth_bytes_per_s = bw;
    l.latency_cycles = lat_cycles;
    l.line_size_bytes = line;
    l.sector_size_bytes = sector;
    l.partitions = partitions;
    return l;
}

/* The `idle_power:` block of configs/hardware/h100_sxm.yaml: lines
 * "  MHz: W  # source" up to the next unindented key. */
static size_t h100_idle_table(double *clk, double *watts, size_t cap)
{
    const char *root = getenv("OPM_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/configs/hardware/h100_sxm.yaml", root ? root : ".");
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[1024];
    size_t n = 0;
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "idle_power:", 11)) { in = 1; continue; }
        if (!in) continue;
        if (line[0] != ' ') break;
        double mhz, w;
        if (sscanf(line, " %lf: %lf", &mhz, &w) == 2 && n < cap) {
            clk[n] = mhz * 1e6;
            watts[n++] = w;
        }
    }
    fclose(f);
    return n;
}

#define OK(call) cr_assert_eq((call), 0, "%s: %s", #call, err.message)

static opm_hardware_builder *h100_builder(void)
{
    opm_error err;
    opm_hardware_builder *b = opm_hardware_builder_new("h100_sxm", &err);
    cr_assert_not_null(b, "%s", err.message);
    OK(opm_hardware_builder_set_kind(b, "gpu", &err));
    OK(opm_hardware_builder_set_power(b, 120.14, 700, &err));
    static const struct { const char *key; double v; } cp[] = {
        {"clock_hz", 1.98e9}, {"tensor_clock_hz", 1.83e9}, {"sm_max_clock_hz", 1.98e9}, {"warp_size", 32},
        {"device_fixed_overhead_cycles", 3030}, {"num_sms", 132}, {"max_warps_per_sm", 64},
        {"max_ctas_per_sm", 32}, {"registers_per_sm", 65536}, {"shared_memory_bytes_per_sm", 233472}};
    for (size_t i = 0; i < sizeof cp / sizeof cp[0]; i++) OK(opm_hardware_builder_set_compute(b, cp[i].key, cp[i].v, &err));
    OK(opm_hardware_builder_set_matrix_instruction(b, "wgmma", &err));
    static const struct { opm_dtype dt; double v; } tp[] = {
        {OPM_FP64, 66.9e12}, {OPM_TF32, 494.7e12}, {OPM_BF16, 989.4e12}, {OPM_FP16, 989.4e12},
        {OPM_FP8_E4M3, 1978.9e12}, {OPM_FP8_E5M2, 1978.9e12}, {OPM_INT8, 1978.9e12}},
      vp[] = {{OPM_FP64, 33.5e12}, {OPM_FP32, 66.9e12}, {OPM_FP16, 133.8e12}, {OPM_BF16, 133.8e12}},
      ach[] = {{OPM_BF16, 0.803}, {OPM_FP16, 0.803}, {OPM_FP8_E4M3, 0.709}, {OPM_FP8_E5M2, 0.709}, {OPM_INT8, 0.709}},
      tfpc[] = {{OPM_TF32, 2048}, {OPM_BF16, 4096}, {OPM_FP16, 4096}, {OPM_FP8_E4M3, 8192}, {OPM_FP8_E5M2, 8192},
                {OPM_INT8, 8192}},
      vfpc[] = {{OPM_FP64, 128}, {OPM_FP32, 256}};
    for (size_t i = 0; i < 7; i++) OK(opm_hardware_builder_set_peak(b, OPM_ENGINE_TENSOR, tp[i].dt, tp[i].v, &err));
    for (size_t i = 0; i < 4; i++) OK(opm_hardware_builder_set_peak(b, OPM_ENGINE_VECTOR, vp[i].dt, vp[i].v, &err));
    for (size_t i = 0; i < 5; i++)
        OK(opm_hardware_builder_set_dtype_param(b, "tensor_achievable_fraction", ach[i].dt, ach[i].v, &err));
    for (size_t i = 0; i < 6; i++)
        OK(opm_hardware_builder_set_dtype_param(b, "tensor_flops_per_clock_per_sm", tfpc[i].dt, tfpc[i].v, &err));
    for (size_t i = 0; i < 2; i++)
        OK(opm_hardware_builder_set_dtype_param(b, "vector_flops_per_clock_per_sm", vfpc[i].dt, vfpc[i].v, &err));
    OK(opm_hardware_builder_set_dtype_param(b, "tensor_energy_j_per_flop", OPM_BF16, 5.86e-13, &err));
    OK(opm_hardware_builder_set_dtype_param(b, "vector_energy_j_per_flop", OPM_FP32, 8.67e-12, &err));
    OK(opm_hardware_builder_set_fma_dims(b, 64, 8, 16, &err));
    opm_memory_level l2 = level("l2", 52428800, 0, 291, 128, 32, 2), hbm = level("hbm", 80e9, 3.35e12, 700, 0, 0, 0);
    l2.energy_j_per_byte = 1.389e-12;
    hbm.energy_j_per_byte = 3.120e-11;
    OK(opm_hardware_builder_add_level(b, &l2, &err));
    OK(opm_hardware_builder_add_level(b, &hbm, &err));
    OK(opm_hardware_builder_set_level_utilization(b, "hbm", 0.949, &err));
    opm_interconnect nv = {"nvlink4", 450e9, 0.47e-6, 8};
    OK(opm_hardware_builder_set_interconnect(b, &nv, &err));
    /* The measured idle table: ~110 points, read from the shipped file's
     * idle_power block rather than copied here. */
    double clk[160], watts[160];
    size_t n = h100_idle_table(clk, watts, 160);
    cr_assert(n > 100, "idle_power table of h100_sxm.yaml: %zu points", n);
    OK(opm_hardware_builder_set_table(b, "idle_power", n, clk, watts, &err));
    return b;
}

Test(hw_builder, h100_from_code_predicts_as_the_builtin)
{
    opm_error err;
    opm_hardware_builder *b = h100_builder();
    opm_hardware *built = opm_hardware_builder_build(b, &err);
    cr_assert_not_null(built, "%s", err.message);
    opm_hardware_builder_free(b);
    opm_hardware *ref = builtin_hw("h100_sxm");
    /* Not asserted equal field by field first: the predictions are what matters. */
    const char *ops[] = {
        "kind: gemm\nm: 4096\nn: 4096\nk: 4096\ndtype: bf16\n",
        "kind: gemm\nm: 16\nn: 8192\nk: 8192\ndtype: fp8_e4m3\nout_dtype: bf16\n",
        "kind: batched_gemm\nbatch: 32\nm: 512\nn: 512\nk: 64\ndtype: fp16\n",
        "kind: softmax\nshape: [64, 4096]\ndtype: bf16\n",
        "kind: rmsnorm\nshape: [8192, 4096]\ndtype: bf16\n",
        "kind: attention_prefill\nbatch: 2\nseq_q: 2048\nseq_kv: 2048\nheads: 32\nkv_heads: 8\nhead_dim: 128\ndtype: bf16\n",
    };
    const char *models[] = {"roofline", "extended_roofline", "effective_roofline"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        opm_op *op = op_yaml(ops[o]);
        for (size_t m = 0; m < 3; m++) {
            opm_profile a = predict_ok(models[m], op, built), r = predict_ok(models[m], op, ref);
            cr_assert_eq(a.latency_s, r.latency_s, "%s %s: %g vs %g", models[m], ops[o], a.latency_s, r.latency_s);
            cr_assert_eq(a.energy_j, r.energy_j, "%s %s", models[m], ops[o]);
            cr_assert_eq(a.bound, r.bound);
            cr_assert_eq(a.diag_count, r.diag_count);
        }
        opm_op_free(op);
    }
    cr_assert(opm_hardware_equal(built, ref), "the built object equals the built-in one");
    opm_hardware_free(built);
    opm_hardware_free(ref);
}

Test(hw_builder, what_if_from_an_existing_description)
{
    opm_error err;
    opm_hardware *ref = builtin_hw("h100_sxm");
    opm_hardware_builder *b = opm_hardware_builder_from(ref, &err);
    cr_assert_not_null(b);
    opm_memory_level hbm = *opm_hardware_find_level(ref, "hbm");
    hbm.bandwidth_bytes_per_s *= 2;
    OK(opm_hardware_builder_add_level(b, &hbm, &err)); /* same name: replaced in place */
    OK(opm_hardware_builder_set_name(b, "h100_2x_hbm", &err));
    opm_hardware *fast = opm_hardware_builder_build(b, &err);
    cr_assert_not_null(fast, "%s", err.message);
    cr_assert_eq(opm_hardware_level_count(fast), opm_hardware_level_count(ref));
    opm_op *op = op_yaml("kind: rmsnorm\nshape: [8192, 8192]\ndtype: bf16\n");
    opm_profile a = predict_ok("roofline", op, fast), r = predict_ok("roofline", op, ref);
    cr_assert_lt(a.latency_s, 0.6 * r.latency_s, "twice the bandwidth: %g vs %g", a.latency_s, r.latency_s);
    cr_assert_str_eq(a.hardware, "h100_2x_hbm");
    /* The YAML of a built object loads back equal. */
    char *yaml = opm_hardware_to_yaml(fast, &err);
    opm_hardware *back = opm_hardware_load_string(yaml, strlen(yaml), "built", &err);
    cr_assert_not_null(back, "%s", err.message);
    cr_assert(opm_hardware_equal(back, fast));
    opm_free(yaml);
    opm_hardware_free(back);
    opm_op_free(op);
    opm_hardware_free(fast);
    opm_hardware_builder_free(b);
    opm_hardware_free(ref);
}

static void setter_refuses(int rc, const opm_error *err, const char *field, const char *needle)
{
    cr_assert_neq(rc, 0, "accepted (%s)", field);
    cr_assert_str_eq(err->field, field, "%s", err->message);
    cr_assert(strstr(err->message, needle), "%s", err->message);
}

Test(hw_builder, setters_refuse_what_the_loader_refuses)
{
    opm_error err;
    opm_hardware_builder *b = opm_hardware_builder_new("x", &err);
    setter_refuses(opm_hardware_builder_set_compute(b, "num_sms", 0, &err), &err, "compute.num_sms", "positive");
    setter_refuses(opm_hardware_builder_set_compute(b, "num_sms", 1.5, &err), &err, "compute.num_sms", "integer");
    setter_refuses(opm_hardware_builder_set_compute(b, "num_sm", 8, &err), &err, "compute.num_sm", "did you mean 'num_sms'");
    setter_refuses(opm_hardware_builder_set_peak(b, OPM_ENGINE_TENSOR, OPM_BF16, -1, &err), &err,
                   "compute.tensor_flops_per_s", "positive");
    setter_refuses(opm_hardware_builder_set_dtype_param(b, "tensor_flops_per_sec", OPM_BF16, 1, &err), &err,
                   "compute.tensor_flops_per_sec", "did you mean");
    setter_refuses(opm_hardware_builder_set_kind(b, "fpga", &err), &err, "kind", "gpu, tpu");
    setter_refuses(opm_hardware_builder_set_matrix_instruction(b, "xmx", &err), &err, "compute.matrix_instruction", "wgmma");
    setter_refuses(opm_hardware_builder_set_utilization(b, OPM_ENGINE_TENSOR, 1.5, &err), &err, "utilization.tensor", "(0, 1]");
    setter_refuses(opm_hardware_builder_set_level_utilization(b, "hbm", 0.5, &err), &err, "utilization.memory.hbm", "added");
    opm_memory_level l = level("l3", 1, 1, 0, 0, 0, 0);
    setter_refuses(opm_hardware_builder_add_level(b, &l, &err), &err, "memory.levels[0].name", "level name");
    l = level("l2", 1, 1, 0, 0, 0, 65);
    setter_refuses(opm_hardware_builder_add_level(b, &l, &err), &err, "memory.levels[0].partitions", "1 to 64");
    l = level("hbm", -5, 1, 0, 0, 0, 0);
    setter_refuses(opm_hardware_builder_add_level(b, &l, &err), &err, "memory.levels[0].size_bytes", "non-negative");
    double clk[2] = {1e9, 0.9e9}, w[2] = {50, 60};
    setter_refuses(opm_hardware_builder_set_table(b, "idle_power", 2, clk, w, &err), &err, "idle_power", "above the previous");
    clk[1] = 1.5e9;
    w[1] = -1;
    setter_refuses(opm_hardware_builder_set_table(b, "supply_voltage", 2, clk, w, &err), &err, "supply_voltage", "positive value");
    setter_refuses(opm_hardware_builder_set_table(b, "idle", 2, clk, w, &err), &err, "table", "idle_power or supply_voltage");
    opm_interconnect link = {"nvlink", 0, 0, 8};
    setter_refuses(opm_hardware_builder_set_interconnect(b, &link, &err), &err, "interconnect.bandwidth_bytes_per_s",
                   "positive");
    link.bandwidth_bytes_per_s = 1e11;
    link.domain_devices = 2.5;
    setter_refuses(opm_hardware_builder_set_interconnect(b, &link, &err), &err, "interconnect.domain_devices", "whole");
    opm_hardware_builder_free(b);
}

/* A table set in code is the one predictions read: idle power interpolates
 * between its points. */
Test(hw_builder, idle_table_set_in_code_is_used)
{
    opm_error err;
    opm_hardware *ref = builtin_hw("h100_sxm");
    opm_hardware_builder *b = opm_hardware_builder_from(ref, &err);
    cr_assert_not_null(b, "%s", err.message);
    double clk[2] = {1e9, 2e9}, w[2] = {50, 150};
    OK(opm_hardware_builder_set_table(b, "idle_power", 2, clk, w, &err));
    opm_hardware *hw = opm_hardware_builder_build(b, &err);
    cr_assert_not_null(hw, "%s", err.message);
    cr_assert_float_eq(opm_hardware_idle_power_w(hw, 1.5e9), 100, 1e-9);
    opm_hardware_builder_free(b);
    opm_hardware_free(hw);
    opm_hardware_free(ref);
}

Test(hw_builder, build_runs_the_loader_checks)
{
    opm_error err;
    opm_hardware_builder *b = opm_hardware_builder_new("x", &err);
    cr_assert_null(opm_hardware_builder_build(b, &err));
    cr_assert_str_eq(err.field, "compute.clock_hz", "%s", err.message);
    OK(opm_hardware_builder_set_compute(b, "clock_hz", 1e9, &err));
    OK(opm_hardware_builder_set_compute(b, "num_sms", 10, &err));
    OK(opm_hardware_builder_set_peak(b, OPM_ENGINE_VECTOR, OPM_FP32, 10 * 256 * 1e9, &err));
    cr_assert_null(opm_hardware_builder_build(b, &err));
    cr_assert(strstr(err.message, "hbm"), "%s", err.message);
    opm_memory_level hbm = level("hbm", 1e9, 1e12, 0, 0, 0, 0), l2 = level("l2", 1e6, 0, 0, 0, 0, 0);
    OK(opm_hardware_builder_add_level(b, &hbm, &err));
    OK(opm_hardware_builder_add_level(b, &l2, &err));
    cr_assert_null(opm_hardware_builder_build(b, &err), "l2 after hbm");
    cr_assert_str_eq(err.field, "memory.levels[1].name", "%s", err.message);
    cr_assert(strstr(err.message, "innermost first"), "%s", err.message);
    opm_hardware_builder_free(b);

    b = opm_hardware_builder_new("x", &err);
    OK(opm_hardware_builder_set_compute(b, "clock_hz", 1e9, &err));
    OK(opm_hardware_builder_set_compute(b, "num_sms", 10, &err));
    OK(opm_hardware_builder_set_peak(b, OPM_ENGINE_VECTOR, OPM_FP32, 10 * 256 * 1e9, &err));
    OK(opm_hardware_builder_add_level(b, &l2, &err));
    OK(opm_hardware_builder_add_level(b, &hbm, &err));
    opm_hardware *hw = opm_hardware_builder_build(b, &err);
    cr_assert_not_null(hw, "%s", err.message);
    /* Derived when not given. */
    cr_assert_float_eq(opm_hardware_flops_per_clock_per_sm(hw, OPM_ENGINE_VECTOR, OPM_FP32), 256, 1e-9);
    opm_hardware_free(hw);
    /* A per-SM rate 2x the peak's is refused, naming both. */
    OK(opm_hardware_builder_set_dtype_param(b, "vector_flops_per_clock_per_sm", OPM_FP32, 512, &err));
    cr_assert_null(opm_hardware_builder_build(b, &err));
    cr_assert_str_eq(err.field, "compute.vector_flops_per_clock_per_sm.fp32", "%s", err.message);
    cr_assert(strstr(err.message, "vector_flops_per_s"), "%s", err.message);
    /* A per-SM rate without a peak. */
    OK(opm_hardware_builder_set_dtype_param(b, "vector_flops_per_clock_per_sm", OPM_FP32, 0, &err));
    OK(opm_hardware_builder_set_dtype_param(b, "tensor_flops_per_clock_per_sm", OPM_BF16, 1024, &err));
    cr_assert_null(opm_hardware_builder_build(b, &err));
    cr_assert(strstr(err.message, "expected a peak in tensor_flops_per_s.bf16"), "%s", err.message);
    opm_hardware_builder_free(b);
}
