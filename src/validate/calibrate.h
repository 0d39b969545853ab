/* calibrate.h — fitting the few efficiency and overhead parameters of one
 * hardware description to measured GEMM latencies (contract §4 CSVs), for
 * `opmodel calibrate`.  Computes only; the CLI (src/cli/cmd_calibrate.c)
 * prints.  docs/calibrate.md has the user-facing description.
 *
 * Parameters (each bounded; only those some training row exercises are
 * fitted, the others are written back as given):
 *   utilization.tensor                    [0.3, 1]   matrix-engine efficiency
 *   utilization.vector                    [0.3, 1]   SIMT (CUDA-core) efficiency
 *   utilization.memory.hbm                [0.3, 1]   DRAM bandwidth efficiency
 *   compute.device_fixed_overhead_cycles  [0, 100 µs × clock_hz]
 * They are the hardware schema's own knobs: every model reads them, and
 * everything else in a description is a published figure, not a fit.  The
 * lower bound 0.3 keeps a fit from explaining a wrong kernel or a wrong
 * peak by a nonsense efficiency; 100 µs covers the measured per-call floors
 * of the shipped data (up to ~90 µs for PyTorch nn.Linear on P100).
 *
 * Objective: mean over the training rows of log(predicted / measured)²
 * (relative, so a 10 µs row and a 10 ms row count alike).  The overhead adds
 * to every prediction without changing the rest, so for given efficiencies
 * it is solved exactly on the cached bodies (grid, then golden section);
 * the efficiencies are fitted by cyclic coordinate descent, each a bounded
 * line search (coarse grid, then golden section), until no parameter moves
 * by more than 1e-4 in a sweep.  No randomness: the same inputs give the
 * same bits.
 *
 * Rows: the hardware column must equal `rows_for` (default: the starting
 * hardware's name).  Selected rows are numbered in file order (files in
 * sorted path order); every 5th (numbers 4, 9, 14, … from 0) is held out
 * and only scored, the rest are the training rows the fit sees.  Rows the
 * model cannot predict are excluded from both and counted.  A row with a
 * clock_mhz is predicted on the hardware at that clock, as validation does,
 * and its overhead is the fitted cycle count at that clock.
 *
 * Ownership: opm_calibrate fills a caller-owned opm_calibration whose
 * hardware and strings are released by opm_calibration_free. */
#ifndef OPM_CALIBRATE_H
#define OPM_CALIBRATE_H

#include <stddef.h>
#include "opmodel/opmodel.h"

enum { OPM_CAL_TENSOR, OPM_CAL_VECTOR, OPM_CAL_HBM, OPM_CAL_OVERHEAD, OPM_CAL_NPARAMS };
/* Schema paths ("utilization.tensor", ...) and short names for --fit
 * ("tensor", "vector", "hbm", "overhead"), indexed by OPM_CAL_*. */
extern const char *const opm_cal_param_paths[OPM_CAL_NPARAMS];
extern const char *const opm_cal_param_keys[OPM_CAL_NPARAMS];

#define OPM_CAL_EFF_MIN 0.3
#define OPM_CAL_EFF_MAX 1.0
#define OPM_CAL_OVERHEAD_MAX_S 100e-6
#define OPM_CAL_HOLDOUT_EVERY 5

typedef struct opm_cal_options {
    const char *data;         /* a CSV file, or a directory: every *.csv below it */
    const char *rows_for;     /* hardware column value to keep; NULL: the hardware's name */
    const char *model;        /* NULL: "extended_roofline" */
    int ignore_kernel_column; /* else a cuBLAS sgemm kernel column gives the tile as hints */
    unsigned fit;             /* bits 1u << OPM_CAL_*; 0: all of them */
} opm_cal_options;

/* Why a parameter was not fitted. */
enum { OPM_CAL_FITTED, OPM_CAL_NOT_ASKED, OPM_CAL_NO_ROWS };

typedef struct opm_cal_param {
    int status;               /* OPM_CAL_FITTED / NOT_ASKED / NO_ROWS */
    double before, after;     /* schema units: a fraction, or cycles */
    double lo, hi;            /* bounds, same units */
    int at_bound;             /* the fitted value is a bound */
} opm_cal_param;

typedef struct opm_cal_score {
    size_t n;
    double mape;              /* percent */
    double msle;              /* mean log(pred/meas)² */
} opm_cal_score;

typedef struct opm_calibration {
    opm_hardware *hw;         /* the calibrated description */
    char hardware[64];        /* the starting description's name */
    char rows_for[64];
    char model[32];
    char *data;               /* options.data, copied */
    size_t files;
    size_t rows_read;         /* every data row of every file */
    size_t rows;              /* rows of this hardware */
    size_t rows_failed;       /* of those, rows the model could not predict */
    opm_cal_param param[OPM_CAL_NPARAMS];
    opm_cal_score train_before, train_after, heldout_before, heldout_after;
    size_t evaluations;       /* predictions of the whole training set */
    int sweeps;
} opm_calibration;

/* Reads the data, fits, and fills *c (zeroed first).  Errors: unreadable
 * file or malformed row (FILE:LINE: field), no rows for the hardware (the
 * message lists the hardware names the data has), unknown model, no row the
 * model can predict. */
int opm_calibrate(const opm_hardware *start, const opm_cal_options *o, opm_calibration *c, opm_error *err);

/* The calibrated description as YAML, preceded by a comment header: what
 * was fitted, from which data and rows, before/after MAPE and
 * `command_line` (may be NULL).  No timestamps: the same calibration gives
 * the same text.  Loading it gives a description equal to c->hw. */
char *opm_calibration_to_yaml(const opm_calibration *c, const char *command_line, opm_error *err);

void opm_calibration_free(opm_calibration *c);

#endif
