/* energy_fit.h — `opmodel calibrate-energy`: fits the few energy
 * coefficients of one hardware to measured energies (contract §4 JSONL
 * lines with measured.energy_j).  Computes only; src/cli/
 * cmd_calibrate_energy.c prints and writes.
 *
 * The fit is four bounded non-negative multipliers, one per term of the
 * energy model (docs/energy.md): compute (every J/FLOP), DRAM (hbm J/byte
 * or J/sector), L2 and static (idle power, its table too).  Each line's
 * terms come from the model's prediction, static power over the measured
 * latency; the objective is the sum of squared relative errors over the
 * training lines; a quarter of the lines, chosen by a hash of file name and
 * line number, are held out and only scored.
 *
 * Ownership: opm_energy_fit_free releases what opm_energy_fit_run filled. */
#ifndef OPM_VALIDATE_ENERGY_FIT_H
#define OPM_VALIDATE_ENERGY_FIT_H

#include <stddef.h>
#include "opmodel/opmodel.h"
#include "general.h"

enum { OPM_EFIT_COMPUTE, OPM_EFIT_DRAM, OPM_EFIT_L2, OPM_EFIT_STATIC, OPM_EFIT_N };
extern const char *const opm_efit_names[OPM_EFIT_N];
/* Bounds of every multiplier: a coefficient may fall to 0 or grow 10×. */
#define OPM_EFIT_MAX 10.0

typedef struct opm_efit_row {
    double measured_j;
    double term[OPM_EFIT_N];     /* the prediction's energy per term (static over the measured time) */
    double fixed_j;              /* terms not fitted (other levels) */
    int held_out;
} opm_efit_row;

typedef struct opm_energy_fit {
    opm_general g;
    const char *hw_name;         /* borrowed from the hardware */
    opm_efit_row *rows;
    size_t n_rows, cap, n_train, n_held;
    size_t rows_no_energy;       /* lines of this hardware without measured.energy_j */
    size_t rows_other_hw;        /* lines of other hardware (not used) */
    size_t rows_at_tdp;          /* predicted at tdp_w (the TDP took active power): not used */
    double alpha[OPM_EFIT_N];    /* fitted multipliers (1 where not fitted) */
    int fitted[OPM_EFIT_N];      /* 0: no training line has that term */
    double train_before, train_after, held_before, held_after;   /* energy MAPE, % */
} opm_energy_fit;

/* Reads every path (files or folders of *.jsonl) with `model`, keeps the
 * lines of hardware `hw` (by name) that carry measured.energy_j, fits and
 * scores.  OPM_EINVAL when no line qualifies or the hardware gives module
 * power_coefficients (not this form).  Free with opm_energy_fit_free
 * whatever it returns. */
int opm_energy_fit_run(const opm_hardware *hw, const char *const *paths, size_t n_paths, const char *model,
                       opm_energy_fit *f, opm_error *err);
/* A copy of hw with the multipliers applied (J/FLOP from the TDP rule
 * written out as figures). */
opm_hardware *opm_energy_fit_apply(const opm_hardware *hw, const opm_energy_fit *f, opm_error *err);
void opm_energy_fit_free(opm_energy_fit *f);

#endif
