/* energy.h — the shared energy model (energy.c) the prediction models call
 * once their latency and per-level traffic are set. */
#ifndef OPM_ENERGY_H
#define OPM_ENERGY_H

#include "opmodel/opmodel.h"

/* The work the energy is charged for: matrix FLOPs on `matrix_engine` at
 * `matrix_dtype` (the vector engine when a matrix op has no tensor path),
 * vector FLOPs at `vector_dtype` (fp32's figure when the dtype has none). */
typedef struct opm_energy_in {
    double matrix_flops;
    opm_engine matrix_engine;
    opm_dtype matrix_dtype;
    double vector_flops;
    opm_dtype vector_dtype;
    int capped;          /* the model applied its own power cap (GEMMs): skip the shared one */
} opm_energy_in;

/* Fills compute_energy_j, every level's energy_j (from its read and write
 * bytes), static_energy_j, energy_j and average_power_w; applies the power
 * cap (may lengthen latency_s, compute_time_s and overhead_s); appends the
 * diagnostics energy_missing and power_capped_clock_hz when they apply.
 * latency_s, compute_time_s, engine and the levels must be set. */
void opm_energy_apply(opm_profile *p, const opm_hardware *hw, const opm_energy_in *in);
/* The power cap alone, on a profile whose energy is filled: when the
 * average power exceeds tdp_w, the clock that brings it to tdp_w (energy.c)
 * lengthens the times and rescales the energies. */
void opm_energy_cap(opm_profile *p, const opm_hardware *hw);
/* The active base power at the description's clock, in W: what a busy GPU
 * draws beyond its idle power that no FLOP or byte explains (energy.c,
 * docs/energy.md "Active base power"); 0 without tdp_w. */
double opm_energy_active_power_w(const opm_hardware *hw);

#endif
