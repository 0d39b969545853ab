/* whatif.c — a what-if without YAML: an H100 SXM with twice its HBM
 * bandwidth, made with the hardware builder from the built-in entry, and a
 * small accelerator described from scratch; the same ops predicted on each.
 * Exits 0 when the faster memory makes the memory-bound op faster. */
#include <opmodel/opmodel.h>
#include <stdio.h>
#include <string.h>

static int fail(const opm_error *err)
{
    fprintf(stderr, "whatif: %s\n", err->message);
    return 2;
}

int main(void)
{
    opm_error err;
    opm_hardware *h100 = opm_hardware_builtin("h100_sxm", &err);
    if (!h100) return fail(&err);

    /* 1. Change one figure of an existing description. */
    opm_hardware_builder *b = opm_hardware_builder_from(h100, &err);
    if (!b) return fail(&err);
    opm_memory_level hbm = *opm_hardware_find_level(h100, "hbm");
    hbm.bandwidth_bytes_per_s *= 2;
    if (opm_hardware_builder_add_level(b, &hbm, &err) || opm_hardware_builder_set_name(b, "h100_2x_hbm", &err))
        return fail(&err);
    opm_hardware *fast = opm_hardware_builder_build(b, &err);
    opm_hardware_builder_free(b);
    if (!fast) return fail(&err);

    /* 2. A part from scratch: every setter checks its value, _build checks
     * the whole (a clock, SMs, a peak, an hbm level, levels innermost first). */
    b = opm_hardware_builder_new("toy_npu", &err);
    opm_memory_level l2, dram;
    memset(&l2, 0, sizeof l2);
    memset(&dram, 0, sizeof dram);
    strcpy(l2.name, "l2");
    l2.size_bytes = 8e6;
    l2.bandwidth_bytes_per_s = 2e12;
    strcpy(dram.name, "hbm");
    dram.size_bytes = 16e9;
    dram.bandwidth_bytes_per_s = 400e9;
    if (!b || opm_hardware_builder_set_kind(b, "npu", &err) ||
        opm_hardware_builder_set_compute(b, "clock_hz", 1.2e9, &err) ||
        opm_hardware_builder_set_compute(b, "num_sms", 16, &err) ||
        opm_hardware_builder_set_peak(b, OPM_ENGINE_TENSOR, OPM_BF16, 100e12, &err) ||
        opm_hardware_builder_set_peak(b, OPM_ENGINE_VECTOR, OPM_FP32, 5e12, &err) ||
        opm_hardware_builder_add_level(b, &l2, &err) || opm_hardware_builder_add_level(b, &dram, &err))
        return fail(&err);
    opm_hardware *toy = opm_hardware_builder_build(b, &err);
    opm_hardware_builder_free(b);
    if (!toy) return fail(&err);

    opm_op *ops[2] = {opm_op_gemm(8192, 8192, 8192, OPM_BF16, &err), NULL};
    const int64_t shape[2] = {16384, 8192};
    ops[1] = opm_op_new("rmsnorm", OPM_KIND_RMSNORM, OPM_PHASE_INFERENCE, &err);
    if (!ops[0] || !ops[1] || opm_op_add_tensor(ops[1], OPM_ROLE_INPUT, shape, 2, OPM_BF16, NULL, &err) ||
        opm_op_add_tensor(ops[1], OPM_ROLE_OUTPUT, shape, 2, OPM_BF16, NULL, &err))
        return fail(&err);
    const opm_hardware *hws[3] = {h100, fast, toy};
    double lat[2][3];
    for (int o = 0; o < 2; o++)
        for (int h = 0; h < 3; h++) {
            opm_profile p;
            if (opm_predict("extended_roofline", ops[o], hws[h], &p, &err)) return fail(&err);
            lat[o][h] = p.latency_s;
            printf("%-8s on %-12s %10.2f us  %s-bound%s\n", p.name, p.hardware, p.latency_s * 1e6,
                   opm_bound_name(p.bound), p.fell_back ? " (roofline)" : "");
        }
    for (int o = 0; o < 2; o++) opm_op_free(ops[o]);
    opm_hardware_free(h100);
    opm_hardware_free(fast);
    opm_hardware_free(toy);
    return lat[1][1] < 0.75 * lat[1][0] ? 0 : 1;
}
