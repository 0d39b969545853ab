/* roofline.c — the roofline model: an op takes as long as its slowest
 * resource, each engine at its dense peak × utilization and each memory
 * level at its bandwidth × utilization, plus a fixed per-op overhead; energy
 * from the shared energy model (energy.c).
 * Every level sees each tensor once (no reuse, no re-reads).  Also the
 * kernel models' fallback on parts without a GPU kernel model (TPU MXUs,
 * Gaudi MMEs): the same bound with the tensor peak at the hardware's
 * published achievable fraction. */
#include <stddef.h>
#include <string.h>
#include "../core/internal.h"
#include "energy.h"
#include "gemm_tiled.h"
#include "models.h"

/* achievable: time the tensor engine at the hardware's own
 * tensor_achievable_fraction for the dtype (or its sibling: fp16/bf16,
 * e4m3/e5m2) when it gives one; *applied is
 * the fraction used (0 when none was: no figure, or no tensor work). */
static int roofline(const opm_op *op, const opm_hardware *hw, opm_profile *p, int achievable, double *applied,
                    opm_error *err)
{
    *applied = 0;
    opm_counts c;
    int rc = opm_op_count(op, &c, err);
    if (rc) return rc;
    /* Only the numbers of the head are cleared (the names are copied over
     * whole): every field after them is assigned below. */
    memset((char *)p + offsetof(opm_profile, latency_s), 0,
           offsetof(opm_profile, levels) - offsetof(opm_profile, latency_s));
    p->diag_count = 0;
    opm_profile_clear_tail(p);
    opm_profile_names(p, op, hw, "roofline");
    p->matrix_flops = c.matrix_flops;
    p->vector_flops = c.vector_flops;
    p->flops = c.matrix_flops + c.vector_flops;
    if (p->flops < c.matrix_flops) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP count overflows 64 bits");
    p->input_bytes = c.input_bytes;
    p->weight_bytes = c.weight_bytes;
    p->output_bytes = c.output_bytes;
    p->workspace_bytes = c.workspace_bytes;

    /* A matrix op runs on the tensor engine when it has the dtype; anything
     * else runs on the vector units, which compute narrow types in fp32
     * when no narrower peak is listed. */
    opm_dtype dt = c.compute_dtype;
    double tpeak = opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, dt);
    int on_tensor = c.matrix_flops > 0 && tpeak > 0;
    double vflops = (double)c.vector_flops + (on_tensor ? 0 : (double)c.matrix_flops);
    opm_dtype vdt = dt;
    double vpeak = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, dt);
    if (vpeak <= 0) {
        vdt = OPM_FP32;
        vpeak = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32);
    }
    if (vflops > 0 && vpeak <= 0)
        return opm_err(err, OPM_EUNSUPPORTED, "hardware",
                       "%s lists no vector peak for %s or fp32, needed for %.0f vector FLOPs",
                       opm_hardware_name(hw), opm_dtype_name(dt), vflops);
    /* A fallback for a part whose kernels no model covers: what its best
     * library GEMM sustains, when that was published for the dtype or its
     * sibling (the GPU-derived default and the 8-bit scaling of a 16-bit
     * figure that stand in for it on GPUs were derived from GPUs: not
     * applied). */
    double frac = 1;
    if (achievable && on_tensor) {
        double f = opm_gemm_tensor_achievable_listed(hw, dt);
        if (f > 0) frac = *applied = f;
    }
    double t_tensor =
        on_tensor ? (double)c.matrix_flops / (tpeak * opm_hardware_utilization(hw, OPM_ENGINE_TENSOR) * frac) : 0;
    double t_vector = vflops > 0 ? vflops / (vpeak * opm_hardware_utilization(hw, OPM_ENGINE_VECTOR)) : 0;
    p->engine = on_tensor ? OPM_ENGINE_TENSOR : p->flops ? OPM_ENGINE_VECTOR : OPM_ENGINE_NONE;
    p->compute_time_s = t_tensor > t_vector ? t_tensor : t_vector;

    double t_mem = 0, hbm_bytes = 0, hbm_bw = 0;
    const char *limiting = "hbm";
    size_t nl = opm_hardware_level_count(hw);
    for (size_t i = 0; i < nl; i++) {
        const opm_memory_level *l = opm_hardware_level(hw, i);
        if (l->name[0] == 'r' && strcmp(l->name, "register") == 0) continue;
        opm_level_access *a = &p->levels[p->level_count++];
        memcpy(a->name, l->name, sizeof a->name);
        a->read_bytes = c.read_bytes;
        a->write_bytes = c.write_bytes;
        double bytes = (double)c.read_bytes + (double)c.write_bytes;
        a->time_s = l->bandwidth_bytes_per_s > 0 ? bytes / (l->bandwidth_bytes_per_s * l->utilization) : 0;
        if (a->time_s > t_mem) {
            t_mem = a->time_s;
            limiting = l->name;
        }
        if (l->name[0] == 'h' && strcmp(l->name, "hbm") == 0) {
            hbm_bytes = bytes;
            hbm_bw = l->bandwidth_bytes_per_s;
        }
    }
    p->overhead_s = opm_hardware_fixed_overhead_cycles(hw) / opm_hardware_clock_hz(hw);
    double body = p->compute_time_s > t_mem ? p->compute_time_s : t_mem;
    p->latency_s = body + p->overhead_s;
    p->bound = p->overhead_s > body ? OPM_BOUND_OVERHEAD
             : p->compute_time_s >= t_mem && p->flops ? OPM_BOUND_COMPUTE : OPM_BOUND_MEMORY;
    p->arithmetic_intensity = hbm_bytes > 0 ? (double)p->flops / hbm_bytes : 0;
    /* The roofline is the ideal bound: no power cap (the kernel models,
     * and their roofline fallback, apply it). */
    opm_energy_in ein = {on_tensor ? (double)c.matrix_flops : 0, OPM_ENGINE_TENSOR, dt, vflops, vdt, 1};
    opm_energy_apply(p, hw, &ein);

    double peak = on_tensor ? tpeak : vpeak;
    if (p->bound == OPM_BOUND_MEMORY) opm_diag_text(p, "limiting_level", limiting);
    opm_diag_num(p, "compute_time_s", p->compute_time_s);
    opm_diag_num(p, "memory_time_s", t_mem);
    opm_diag_num(p, "overhead_s", p->overhead_s);
    opm_diag_num(p, "peak_flops_per_s", peak);
    /* The knee of the roofline the time was taken on: at the achievable
     * fraction where the fallback applied one. */
    if (hbm_bw > 0) opm_diag_num(p, "knee_flops_per_byte", peak * frac / hbm_bw);
    if (*applied > 0) {
        opm_diag_num(p, "tensor_achievable_fraction", frac);
        opm_diag_text_lit(p, "tensor_achievable_source", "hardware");
    }
    return 0;
}

int opm_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err)
{
    double applied;
    return roofline(op, hw, p, 0, &applied, err);
}

int opm_roofline_fallback_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, double *applied,
                                  opm_error *err)
{
    return roofline(op, hw, p, 1, applied, err);
}
