/* gemm_effective.c — the `effective_roofline` model: the same problem,
 * catalog, selection, tiling, occupancy and traffic as extended_roofline
 * (gemm_tiled.c), but each wave (all full waves alike, then the tail) is one
 * constant-time phase-aware ceiling instead of a K-loop timeline:
 *
 *   wave = max(local body, memory body)
 *   local body  = max(math / R_math, SMEM bytes / R_smem) on the busiest SM
 *                 + issuing its output tiles
 *   memory body = max(L2 bytes / R_l2, DRAM loads / R_dram + output stores)
 *
 * with concurrency-limited rates: R_math = per-SM peak × issue share (warps
 * resident vs one per scheduler, SIMT FFMA share); R_l2 = min(L2 bandwidth,
 * busy SMs × L2 port); R_dram = min(DRAM bandwidth, bytes in flight /
 * latency) — Little's law with every resident CTA keeping `stages` K tiles
 * in flight.  Exposed once: the prologue (one DRAM latency plus one K tile
 * per CTA) and the last stores' L2 latency.  The power cap and the kernel
 * selection, and the grouped GEMM and conv (implicit GEMM) problems, are
 * gemm_tiled.c's.  Other kinds use the roofline.
 *
 * Diagnostics of the wave class that takes the most time (full waves or
 * the tail): raw rates (every busy SM at its peak, L2 at its bandwidth or
 * the busy SMs' ports, DRAM at its bandwidth) against the effective,
 * concurrency-limited ones; the occupancy class and the exact warps per
 * scheduler of a busy SM for each wave class; and the tied limiting
 * resources, the phases within GEMM_TIE_FRAC of the longest.  The wave
 * body is effective_class in gemm_waves.c, run by the loop both models
 * share; the diagnostics are in gemm_diags.c. */
#include <math.h>
#include "gemm_tiled.h"
#include "models.h"

int opm_effective_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err)
{
    return opm_gemm_predict(op, hw, p, "effective_roofline", opm_gemm_wave_effective, err);
}
