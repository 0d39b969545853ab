/* test_roofline.c — golden numbers of the roofline model: the worked
 * example of the per-op perf-model seed (Llama-3-70B q_proj on MI300X at
 * 708 TFLOPS bf16 and 5300 GB/s), bound selection, overhead, utilization,
 * energy accounting and clock rescaling. */
#include <criterion/criterion.h>
#include <string.h>
#include "testutil.h"

static opm_hardware *golden_hw(void)
{
    char p[512];
    opm_error err;
    opm_hardware *hw = opm_hardware_load_file(src_path("tests/data/mi300x_golden.yaml", p, sizeof p), &err);
    cr_assert_not_null(hw, "%s", err.message);
    return hw;
}

static opm_profile predict_gemm(opm_hardware *hw, int64_t m, int64_t n, int64_t k)
{
    opm_error err;
    opm_op *op = opm_op_gemm(m, n, k, OPM_BF16, &err);
    cr_assert_not_null(op, "%s", err.message);
    opm_profile p;
    cr_assert_eq(opm_model_find("roofline")->predict(op, hw, &p, &err), 0, "%s", err.message);
    opm_op_free(op);
    return p;
}

Test(roofline, seed_gemm_formulas)
{
    opm_hardware *hw = golden_hw();
    opm_profile p = predict_gemm(hw, 40960, 6144, 1536);
    cr_assert_eq(p.flops, 2ull * 40960 * 6144 * 1536);
    cr_assert_eq(p.levels[0].read_bytes + p.levels[0].write_bytes, (40960ull * 1536 + 1536ull * 6144 + 40960ull * 6144) * 2);
    opm_hardware_free(hw);
}

Test(roofline, seed_q_proj_m1_memory_bound)
{
    opm_hardware *hw = golden_hw();
    opm_profile p = predict_gemm(hw, 1, 8192, 8192);
    cr_assert_float_eq(p.latency_s * 1e6, 25.3, 0.05);
    cr_assert_eq(p.bound, OPM_BOUND_MEMORY);
    const opm_diag *d = opm_profile_diag(&p, "limiting_level");
    cr_assert(d && d->is_text && !strcmp(d->text, "hbm"));
    opm_hardware_free(hw);
}

Test(roofline, seed_q_proj_m128_memory_bound)
{
    opm_hardware *hw = golden_hw();
    opm_profile p = predict_gemm(hw, 128, 8192, 8192);
    cr_assert_float_eq(p.latency_s * 1e6, 26.1, 0.05);
    cr_assert_eq(p.bound, OPM_BOUND_MEMORY);
    opm_hardware_free(hw);
}

Test(roofline, seed_q_proj_m2048_compute_bound)
{
    opm_hardware *hw = golden_hw();
    opm_profile p = predict_gemm(hw, 2048, 8192, 8192);
    cr_assert_float_eq(p.latency_s * 1e6, 388.2, 0.05);
    cr_assert_eq(p.bound, OPM_BOUND_COMPUTE);
    cr_assert_eq(p.engine, OPM_ENGINE_TENSOR);
    opm_hardware_free(hw);
}

Test(roofline, seed_knee)
{
    opm_hardware *hw = golden_hw();
    opm_profile p = predict_gemm(hw, 1, 8192, 8192);
    const opm_diag *d = opm_profile_diag(&p, "knee_flops_per_byte");
    cr_assert_not_null(d);
    cr_assert_float_eq(d->number, 133.58, 0.01);
    cr_assert_float_eq(d->number, 134, 0.5);
    opm_hardware_free(hw);
}

static opm_hardware *hw_text(const char *t)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string(t, strlen(t), "<test>", &err);
    cr_assert_not_null(hw, "%s", err.message);
    return hw;
}

Test(roofline, overhead_utilization_and_energy)
{
    opm_hardware *hw = hw_text(
        "name: toy\ncompute:\n  clock_hz: 1e9\n  num_sms: 1\n  device_fixed_overhead_cycles: 2000\n"
        "  tensor_flops_per_s: {bf16: 1e12}\n  vector_flops_per_s: {fp32: 1e11}\n"
        "  tensor_energy_j_per_flop: {bf16: 1e-12}\n  vector_energy_j_per_flop: {fp32: 1e-11}\n"
        "static_power_w: 10\n"
        "memory:\n  levels:\n    - {name: l2, size_bytes: 1e6, bandwidth_bytes_per_s: 4e11, energy_j_per_byte: 1e-11}\n"
        "    - {name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e11, energy_j_per_byte: 1e-10}\n"
        "utilization: {tensor: 0.5, memory: {hbm: 0.5}}\n");
    /* 2·64·64·64 = 524288 FLOPs at 0.5e12 → 1.048576 µs; bytes 3·64·64·2 = 24576 at 0.5e11 → 0.49152 µs. */
    opm_profile p = predict_gemm(hw, 64, 64, 64);
    cr_assert_float_eq(p.compute_time_s, 524288 / 0.5e12, 1e-15);
    cr_assert_float_eq(p.overhead_s, 2e-6, 1e-15);
    cr_assert_float_eq(p.latency_s, 524288 / 0.5e12 + 2e-6, 1e-15);
    cr_assert_eq(p.bound, OPM_BOUND_OVERHEAD);
    cr_assert_float_eq(p.compute_energy_j, 524288 * 1e-12, 1e-20);
    cr_assert_eq(p.level_count, 2);
    cr_assert_float_eq(p.levels[1].energy_j, 24576 * 1e-10, 1e-20);
    cr_assert_float_eq(p.levels[0].energy_j, 24576 * 1e-11, 1e-20);
    cr_assert_float_eq(p.static_energy_j, 10 * p.latency_s, 1e-18);
    cr_assert_float_eq(p.energy_j, p.compute_energy_j + p.levels[0].energy_j + p.levels[1].energy_j + p.static_energy_j, 1e-18);
    opm_hardware_free(hw);
}

Test(roofline, vector_fallback_and_limiting_level)
{
    /* No tensor bf16 peak: the GEMM runs on vector units at the fp32 rate;
     * the slow l2 is the limit for a streaming op. */
    opm_hardware *hw = hw_text(
        "name: toy\ncompute: {clock_hz: 1e9, num_sms: 1, vector_flops_per_s: {fp32: 1e12}}\n"
        "memory:\n  levels:\n    - {name: l2, bandwidth_bytes_per_s: 1e10}\n"
        "    - {name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e11}\n");
    opm_profile p = predict_gemm(hw, 512, 512, 512);
    cr_assert_eq(p.engine, OPM_ENGINE_VECTOR);
    cr_assert_float_eq(p.compute_time_s, 2.0 * 512 * 512 * 512 / 1e12, 1e-15);
    opm_error err;
    int64_t s[2] = {1 << 20, 64};
    opm_op *ew = opm_op_elementwise(s, 2, 2, 1, OPM_BF16, &err);
    cr_assert_not_null(ew);
    cr_assert_eq(opm_predict("roofline", ew, hw, &p, &err), 0, "%s", err.message);
    cr_assert_eq(p.bound, OPM_BOUND_MEMORY);
    cr_assert_str_eq(opm_profile_diag(&p, "limiting_level")->text, "l2");
    opm_op_free(ew);
    opm_hardware_free(hw);
}

Test(roofline, no_vector_peak_is_an_error)
{
    opm_hardware *hw = hw_text("name: t\ncompute: {clock_hz: 1e9, num_sms: 1, tensor_flops_per_s: {bf16: 1e12}}\n"
                               "memory: {levels: [{name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e11}]}\n");
    opm_op *op = op_yaml("kind: softmax\nshape: [4, 4]\ndtype: bf16\n");
    opm_profile p;
    opm_error err;
    cr_assert_eq(opm_predict("roofline", op, hw, &p, &err), OPM_EUNSUPPORTED);
    cr_assert(strstr(err.message, "no vector peak"), "%s", err.message);
    opm_op_free(op);
    opm_hardware_free(hw);
}

Test(roofline, clock_rescaling)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert_not_null(hw, "%s", err.message);
    opm_hardware *slow = opm_hardware_with_clock(hw, 915e6, &err);
    cr_assert_not_null(slow, "%s", err.message);
    /* Tensor peaks are quoted at 1.83 GHz on H100 SXM; vector at 1.98 GHz. */
    cr_assert_float_eq(opm_hardware_peak_flops(slow, OPM_ENGINE_TENSOR, OPM_BF16),
                       opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, OPM_BF16) * 915 / 1830, 1e3);
    cr_assert_float_eq(opm_hardware_peak_flops(slow, OPM_ENGINE_VECTOR, OPM_FP32),
                       opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32) * 915 / 1980, 1e3);
    /* DRAM bandwidth is DRAM's, not the SM clock's: it stays.  The DRAM
     * latency's L2 part (l cycles) runs on the SM clock and the rest
     * (L − l) on DRAM's: in cycles at f it is (L − l)·f/f0 + l.  Quoted at
     * clock_hz (1.98 GHz). */
    double L = opm_hardware_find_level(hw, "hbm")->latency_cycles, l = opm_hardware_find_level(hw, "l2")->latency_cycles;
    cr_assert(L > l && l > 0, "h100_sxm gives both pointer-chase latencies");
    cr_assert_eq(opm_hardware_find_level(slow, "hbm")->bandwidth_bytes_per_s,
                 opm_hardware_find_level(hw, "hbm")->bandwidth_bytes_per_s);
    cr_assert_float_eq(opm_hardware_find_level(slow, "l2")->bandwidth_bytes_per_s,
                       opm_hardware_find_level(hw, "l2")->bandwidth_bytes_per_s * 915 / 1980, 1e-3);
    cr_assert_float_eq(opm_hardware_find_level(slow, "hbm")->latency_cycles, (L - l) * 915 / 1980 + l, 1e-9);
    /* Two clock changes compose into one. */
    opm_hardware *mid = opm_hardware_with_clock(hw, 1400e6, &err), *two = opm_hardware_with_clock(mid, 915e6, &err);
    cr_assert_not_null(two, "%s", err.message);
    cr_assert_float_eq(opm_hardware_find_level(two, "hbm")->latency_cycles,
                       opm_hardware_find_level(slow, "hbm")->latency_cycles, 1e-9);
    cr_assert_eq(opm_hardware_find_level(two, "hbm")->bandwidth_bytes_per_s,
                 opm_hardware_find_level(hw, "hbm")->bandwidth_bytes_per_s);
    opm_hardware_free(two);
    opm_hardware_free(mid);
    /* Without pointer-chase latencies (a10): the kernel models' 500 and 200
     * cycles, quoted at clock_hz (1.695 GHz). */
    opm_hardware *a10 = opm_hardware_builtin("a10", &err), *a10s = opm_hardware_with_clock(a10, 900e6, &err);
    cr_assert_not_null(a10s, "%s", err.message);
    cr_assert_eq(opm_hardware_find_level(a10s, "hbm")->bandwidth_bytes_per_s,
                 opm_hardware_find_level(a10, "hbm")->bandwidth_bytes_per_s);
    cr_assert_float_eq(opm_hardware_find_level(a10s, "hbm")->latency_cycles, 300 * 900 / 1695.0 + 200, 1e-9);
    opm_hardware_free(a10s);
    opm_hardware_free(a10);
    /* The roofline takes the DRAM peak, which no SM clock moves: a
     * DRAM-bound GEMV's memory time is the same at 915 MHz. */
    opm_profile va = predict_gemm(hw, 1, 16384, 16384), vb = predict_gemm(slow, 1, 16384, 16384);
    cr_assert_eq(va.bound, OPM_BOUND_MEMORY);
    cr_assert_eq(vb.bound, OPM_BOUND_MEMORY);
    cr_assert_float_eq(vb.latency_s - vb.overhead_s, va.latency_s - va.overhead_s, 1e-15);
    opm_profile a = predict_gemm(hw, 8192, 8192, 8192), b = predict_gemm(slow, 8192, 8192, 8192);
    /* The fixed time is in SM cycles: it scales with clock_hz (1.98 GHz), not the tensor clock. */
    cr_assert_float_eq((b.latency_s - b.overhead_s) / (a.latency_s - a.overhead_s), 2.0, 1e-9);
    cr_assert_float_eq(b.overhead_s / a.overhead_s, 1980.0 / 915, 1e-9);
    cr_assert_null(opm_hardware_with_clock(hw, -1, &err));
    opm_hardware_free(slow);
    opm_hardware_free(hw);
}

Test(roofline, registry)
{
    cr_assert_geq(opm_model_count(), 1);
    cr_assert_not_null(opm_model_find("roofline"));
    cr_assert_null(opm_model_find("nope"));
    opm_error err;
    opm_profile p;
    cr_assert_eq(opm_predict("nope", NULL, NULL, &p, &err), OPM_ENOTFOUND);
}
