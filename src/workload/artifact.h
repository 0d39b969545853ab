/* artifact.h — `opmodel validate-artifact` (library-internal): the
 * EnergAIzer end-to-end runs (data/energaizer) against whole-workload
 * predictions.  Reads measurements/<hardware>*_e2e.csv, matches each run to
 * its kernel list in workloads/, predicts it at the run's clock in eager
 * mode, calibrates per hardware only the host launch interval on at most
 * ART_CAL_RUNS runs and scores the rest.  Computes only; the CLI prints. */
#ifndef OPM_WORKLOAD_ARTIFACT_H
#define OPM_WORKLOAD_ARTIFACT_H

#include <stddef.h>
#include "opmodel/opmodel.h"
#include "../core/internal.h"
#include "../validate/gemm_latency.h"

/* Calibration runs per hardware (issue 20: at most 4). */
#define ART_CAL_RUNS 4
/* The launch interval is searched in [0, ART_MAX_INTERVAL_S]. */
#define ART_MAX_INTERVAL_S 200e-6
/* The artifact's harness (test/code/run_model.py) runs ceil(30 s / t1)
 * iterations, t1 one timed iteration, and divides the power-sampling window
 * by that count (parse_result.py); the window also holds the start-up of
 * the process that runs them.  See artifact.c. */
#define ART_HARNESS_WINDOW_S 30.0

/* art_run_all flags. */
#define ART_AS_LISTED 1u        /* kernel lists without their implied kernels */
#define ART_NO_HARNESS 2u       /* score per-iteration time alone, no start-up share */

typedef enum art_status {
    ART_SCORED,            /* matched, predicted, scored */
    ART_CALIBRATION,       /* matched, used to fit the launch interval, not scored */
    ART_UNMATCHED,         /* no kernel list for its configuration */
    ART_OUT_OF_MEMORY,     /* ran out of memory: see artifact.c */
} art_status;

typedef struct art_run {
    char name[200];        /* the CSV's workload column */
    uint32_t file;         /* measurement file index */
    uint32_t hw;           /* hardware index */
    uint32_t family;       /* index into families */
    int clock_mhz;         /* nominal clock from the name */
    long iterations;       /* _iter{n} of the name: what the window was divided by; 0 none */
    double avg_freq_mhz;
    double time_s, energy_j;
    long workload;         /* index into workloads, -1 unmatched */
    art_status status;
    double device_s;       /* predicted graph-mode time */
    double pred_time_s, pred_energy_j;      /* at the calibrated interval */
    double unc_time_s, unc_energy_j;        /* at the default host's interval */
    /* per distinct op of its workload: device time, energy, active energy
     * its per-op TDP limit took off (owned); the board's idle and limit */
    double *dev_s, *op_j, *cut_j;
    double idle_w, tdp_w;
} art_run;

typedef struct art_stats3 {
    opm_err_stats time, energy, power;
} art_stats3;

typedef struct art_result {
    const char *model;
    int as_listed;               /* kernel lists read without implied kernels */
    int no_harness;              /* ART_NO_HARNESS */
    uint64_t implied_kernels;    /* implied kernels over all lists read */
    char data_dir[4096];
    size_t n_runs, runs_matched, calibration_runs, runs_oom;
    art_run *runs;
    char **files;          /* measurement file stems ("a10_e2e") */
    size_t n_files;
    char **hw_names;       /* built-in hardware per file's hardware index */
    size_t n_hw;
    double *launch_interval_s;   /* per hardware, calibrated */
    /* Per measurement file: the harness start-up in its window (s) and the
     * unscored runs that measured it. */
    double *startup_s;
    size_t *startup_runs;
    double default_interval_s;
    char **families;
    size_t n_families;
    opm_workload **workloads;
    char **workload_names;       /* file stem of each kernel list */
    size_t n_workloads;
    int *clocks;                 /* distinct nominal clocks, ascending */
    size_t n_clocks;
    /* Scores of the calibrated prediction and, uncalibrated, at the
     * default interval; over the same scored runs. */
    art_stats3 overall, unc_overall;
    art_stats3 *by_hw, *unc_by_hw;
    art_stats3 *by_file, *unc_by_file;
    art_stats3 *by_family;
    art_stats3 *by_clock;
    art_stats3 *by_file_clock;   /* [file * n_clocks + clock] */
} art_result;

/* Runs the validation; the result is freed with art_free whatever this
 * returns.  model NULL: extended_roofline.  flags: ART_AS_LISTED, the kernel
 * lists as shipped, without the kernels their model's architecture implies
 * (opm_workload_set_implied_kernels); ART_NO_HARNESS, predictions without
 * the harness start-up's share of the window. */
int art_run_all(art_result *r, const char *data_dir, const char *model, unsigned flags, opm_error *err);
void art_free(art_result *r);

#endif
