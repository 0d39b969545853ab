/* gemm_latency.h — validation of GEMM latency models against measured
 * GEMM latency CSVs (contract §4): loading a data directory, size classes
 * (contract §5), calibrating only the fixed overhead on a small
 * deterministic set of small / vector_like rows, held-out error statistics
 * and leave-one-hardware-out.  Computes only; the CLI
 * (src/cli/cmd_validate.c) prints.
 *
 * Ownership: a dataset and a validation result own their arrays and are
 * released with their _free functions. */
#ifndef OPM_GEMM_LATENCY_H
#define OPM_GEMM_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include "opmodel/opmodel.h"
#include "../core/internal.h"

/* The clock_mhz a row may give: outside [1, 100000] MHz a value is a typo,
 * not an SM clock (and would predict times of 1e300 µs). */
#define OPM_GEMM_MIN_CLOCK_MHZ 1.0
#define OPM_GEMM_MAX_CLOCK_MHZ 100000.0

enum { GC_VECTOR_LIKE, GC_SMALL, GC_SKINNY, GC_SMALL_K, GC_LARGE, GC_REGULAR, GC_COUNT };
extern const char *const opm_gemm_class_names[GC_COUNT];
/* Contract §5 size class, tested in the order of the enum. */
int opm_gemm_size_class(double batch, double m, double n, double k);

typedef struct opm_gemm_row {
    int hw;                      /* index into the dataset's hardware list, -1 unknown */
    opm_dtype dtype;
    int64_t batch, m, n, k;
    int ta, tb, bias;
    double latency_s;
    int cls;                     /* GC_* */
    int group;                   /* calibration group (hardware × source tag) */
    /* The kernel column, when it names a cuBLAS SIMT sgemm or a Composable
     * Kernel XDL instance: its CTA tile in our m/n terms, K depth, warps,
     * warp tile, sliced-K and whether a split-K reduction ran; kern_stages
     * the pipeline depth the name implies (0: the model's default).
     * kern_tm = 0 when unknown. */
    int16_t kern_tm, kern_tn, kern_tk, kern_warps, kern_wm, kern_wn, kern_stages;
    unsigned char kern_splitk;
    /* The split_k column: the K slices the launch grid shows (its z over
     * the batch), 0 when not given; with the kernel, a split_k hint. */
    int16_t split_k;
    /* The clock_mhz column in Hz, 0 when empty: the row is predicted on
     * the hardware at that SM clock (opm_hardware_with_clock). */
    double clock_hz;
    /* The harness columns (data/README.md, gemm_tc): activation_quant
     * (OPM_GAQ_*: quantisation kernels inside the timed op), l2_warm
     * (OPM_GWARM_*: operands resident in L2 when it starts) and timing
     * (OPM_GTIME_*: how the time was taken; eager rows are host-launch
     * bound and scored only with a calibrated overhead). */
    unsigned char act_quant, l2_warm, timing;
    /* The operand_copies column: copies of the operands the harness runs
     * the GEMM over in turn (attrs.operand_copies), 0 when empty. */
    int16_t copies;
    /* The kernel column names a library that never splits K (a split_k 1
     * hint with automatic tile selection). */
    unsigned char no_split;
    /* The energy_j column (J per GEMM), 0 when empty. */
    double energy_j;
} opm_gemm_row;

enum { OPM_GAQ_NONE, OPM_GAQ_STATIC, OPM_GAQ_DYNAMIC, OPM_GAQ_DYNAMIC_BLOCK, OPM_GAQ_BLOCK };
enum { OPM_GWARM_NONE, OPM_GWARM_INPUT, OPM_GWARM_WEIGHT, OPM_GWARM_ALL };
enum { OPM_GTIME_UNKNOWN, OPM_GTIME_GRAPH, OPM_GTIME_EAGER, OPM_GTIME_KERNEL, OPM_GTIME_EVENTS };

typedef struct opm_gemm_dataset {
    opm_gemm_row *rows;
    size_t n_rows, cap;
    size_t files;
    size_t rows_unknown_hw;      /* rows whose hardware could not be opened (skipped) */
    size_t rows_bad;             /* rows with an unparsable field (skipped) */
    char first_bad[256];         /* "file:line: column: expected ..., got '...'" of the first; "" when none */
    size_t n_hw;
    char **hw_names;             /* as the rows give them (hw_tab's strings) */
    opm_hardware **hw;           /* opened hardware, NULL for unknown names */
    size_t n_groups;
    char **group_names;          /* "hardware|source tag" (owned) */
    int *group_hw;
    /* Loading: the hardware names and the (hardware index, tag) keys of
     * the groups, interned (ids are the hw and group indexes), so that many
     * distinct names load in linear time; the arrays' capacities. */
    opm_strtab hw_tab, group_tab;
    size_t hw_cap, group_names_cap, group_hw_cap;
} opm_gemm_dataset;

/* Reads every *.csv under dir (recursively, in sorted order; csv.h says
 * how a line is read).  Files whose header lacks the contract's required
 * columns are an error naming the file.  Rows of unknown hardware and rows
 * with an unparsable field are counted and skipped. */
int opm_gemm_dataset_load(const char *dir, opm_gemm_dataset *ds, opm_error *err);
void opm_gemm_dataset_free(opm_gemm_dataset *ds);

typedef struct opm_err_stats {
    size_t n;
    double mape, median_ape, p90_ape, geomean_ratio, signed_mean_error;
} opm_err_stats;

typedef struct opm_gemm_validation {
    const char *model;
    size_t rows;                 /* held-out rows scored */
    size_t rows_failed;          /* the model returned an error */
    size_t rows_eager_skipped;   /* eagerly timed rows left out without calibration */
    size_t calibration_rows;
    opm_err_stats overall;
    opm_err_stats *by_hw;        /* ds->n_hw entries (n = 0 when none held out) */
    opm_err_stats by_class[GC_COUNT];
    double *group_overhead_s;    /* ds->n_groups: the overhead used per group */
    size_t *group_cal_rows;      /* calibration rows per group (0: fallback used) */
    double *pred_s;              /* per row: prediction (NaN when failed / skipped) */
    unsigned char *is_cal;       /* per row: 1 when used for calibration */
    double *group_overlap_s;     /* ds->n_groups: host time overlapping the kernel */
    double host_overlap;         /* the overlap fraction used (0 without calibration) */
    /* Energy error of the held-out rows with an energy_j column, each
     * predicted on its hardware carrying its group's overhead (n = 0: no
     * such row); energy_by_hw has ds->n_hw entries. */
    opm_err_stats energy;
    opm_err_stats *energy_by_hw;
} opm_gemm_validation;

/* Host time that overlaps the kernel in a timed eager call, as a fraction
 * of the call's floor.  A PyTorch timing loop measures, per call, host
 * dispatch before the launch reaches the GPU, the kernel, and host work
 * after the launch returns (the rest of the call, the loop, the event or
 * synchronisation); that last part runs while the kernel does, so a kernel
 * shorter than it leaves the measured time at the floor.  The shipped data
 * show it on all five NeuSight GPUs: measured time minus the additive
 * overhead stays at 1–4 µs while the predicted kernel time goes from 2 to
 * 16 µs, then grows one for one.  The hidden time scales with the host
 * path, so it is a fraction of the floor (the median measured time of a
 * group's calibration rows): 0.25 of the NeuSight floors (30–100 µs) is
 * 8–24 µs, of DeepBench's back-to-back floors (~5 µs) 1.25 µs.  One
 * constant for every group, bounded [0, 0.5]; chosen on the shipped data,
 * so docs/gemm_models.md reports leave-one-hardware-out figures for it. */
#define OPM_GEMM_HOST_OVERLAP 0.25

typedef struct opm_gemm_validate_opts {
    const char *model;           /* a model name; "roofline" gets the overhead added after */
    int calibrate;               /* calibrate the fixed overhead (default 1) */
    /* Leave-one-hardware-out: when >= 0, that hardware's rows are all held
     * out and its overhead is the median of the other hardwares'
     * calibrated overheads of the same source tag. */
    int holdout_hw;
    /* With calibration, the fraction of a group's floor that runs while
     * the kernel does (OPM_GEMM_HOST_OVERLAP; 0: the overhead simply
     * adds): a row is predicted as overhead + max(overlap, base). */
    double host_overlap;
    /* For the energy predictions: leave the kernel column out (as
     * opm_gemm_base_predictions' use_kernel_column = 0). */
    int ignore_kernel_column;
} opm_gemm_validate_opts;

/* Base latencies (without the model's own fixed overhead) for every row,
 * NaN where the model fails; `base` has ds->n_rows entries.  A row with a
 * clock is predicted on its hardware at that clock (NaN when the clock is
 * above the hardware's sm_max_clock_hz).  With
 * use_kernel_column, rows whose kernel column names a known kernel are
 * predicted with that kernel's tile as hints; split-K is left to the model
 * even when no separate reduction kernel ran (the NeuSight data show
 * cuBLAS sgemm kernels faster than their unsplit tile grid allows, i.e.
 * splitting K inside the kernel). */
int opm_gemm_base_predictions(const opm_gemm_dataset *ds, const char *model, int use_kernel_column, double *base,
                              opm_error *err);
/* What the model chose for one row: the kernel it timed (the typed GEMM
 * details' name) and the resource it names as limiting (the
 * limiting_resource diagnostic); "" where the model gives none (the
 * roofline, a fallback, a failed row). */
typedef struct opm_gemm_row_label {
    char kernel[64];
    char limit[32];
} opm_gemm_row_label;
/* opm_gemm_base_predictions that also fills labels (ds->n_rows entries)
 * from the same predictions, for the per-row CSV. */
int opm_gemm_base_predictions_labelled(const opm_gemm_dataset *ds, const char *model, int use_kernel_column,
                                       double *base, opm_gemm_row_label *labels, opm_error *err);
/* Re-predicts, into base, the rows of hardware only_hw (-1: all) that a
 * power cap may limit (their hardware has tdp_w and an energy per FLOP),
 * each on its hardware carrying its group's overhead group_overhead_s[g]
 * as device_fixed_overhead_cycles: the models' power cap credits a call's
 * fixed overhead as idle time, so a capped kernel's body depends on it.
 * Base values stay latency − overhead; other rows are left as they are. */
int opm_gemm_repredict_with_overhead(const opm_gemm_dataset *ds, const char *model, int use_kernel_column,
                                     const double *group_overhead_s, int only_hw, double *base, opm_error *err);
/* opm_gemm_repredict_with_overhead that also refills the labels of the
 * rows it predicts again (labels: ds->n_rows entries, or NULL), so a row's
 * label is that of its final prediction. */
int opm_gemm_repredict_with_overhead_labelled(const opm_gemm_dataset *ds, const char *model, int use_kernel_column,
                                              const double *group_overhead_s, int only_hw, double *base,
                                              opm_gemm_row_label *labels, opm_error *err);
/* Parses a cuBLAS SIMT kernel name ("ampere_sgemm_128x64_tn",
 * "volta_sgemm_32x32_sliced1x4_nn", "sgemm_32x32x32_NN", "+splitkreduce_kernel"
 * suffix) and its recorded launch block (threads, the threads_per_cta
 * column; 0 when unknown), or a Composable Kernel XDL instance name
 * ("a8w8_blockscale:ck:256x16x64x256": BlockSize x MPerBlock x NPerBlock x
 * KPerBlock), into r's kern_* fields; returns 1 when recognised. */
int opm_gemm_parse_kernel(const char *name, long threads, opm_gemm_row *r);
/* The contract §4 columns both loaders read (validate's and calibrate's):
 * hardware through latency_us are required, the rest optional. */
enum { OPM_GCOL_HW, OPM_GCOL_DTYPE, OPM_GCOL_BATCH, OPM_GCOL_M, OPM_GCOL_N, OPM_GCOL_K, OPM_GCOL_TA, OPM_GCOL_TB,
       OPM_GCOL_BIAS, OPM_GCOL_LAT, OPM_GCOL_SOURCE, OPM_GCOL_KERNEL, OPM_GCOL_CLOCK, OPM_GCOL_THREADS,
       OPM_GCOL_SPLIT, OPM_GCOL_ACT_QUANT, OPM_GCOL_L2_WARM, OPM_GCOL_TIMING, OPM_GCOL_ENERGY,
       OPM_GCOL_COPIES, OPM_GCOL_COUNT };
#define OPM_GCOL_REQUIRED OPM_GCOL_SOURCE
extern const char *const opm_gemm_col_names[OPM_GCOL_COUNT];
/* Reads one row's fields, all but hardware and source, into *r (zeroed
 * first; size class and kernel hints included).  col maps OPM_GCOL_* to
 * field indexes (-1: no such column), nf is the row's field count.
 * Returns -1 when every field reads, else the first column that does not,
 * with *want saying what it should hold. */
int opm_gemm_row_read(char *const *fld, int nf, const int *col, opm_gemm_row *r, const char **want);
/* Calibration split (deterministic, independent of the model): marks
 * is_cal (n_rows bytes); OPM_ENOMEM when out of memory. */
int opm_gemm_calibration_split(const opm_gemm_dataset *ds, unsigned char *is_cal, opm_error *err);
/* Calibrates and scores from base predictions (opm_gemm_base_predictions);
 * without calibration each hardware file's device_fixed_overhead_cycles is
 * added instead. */
int opm_gemm_validate(const opm_gemm_dataset *ds, const opm_gemm_validate_opts *o, const double *base,
                      opm_gemm_validation *v, opm_error *err);
void opm_gemm_validation_free(opm_gemm_validation *v);

/* Leave-one-hardware-out: each hardware in turn has all its rows held out
 * and its overhead borrowed from the other hardware (opm_gemm_validate with
 * holdout_hw), its rows predicted again with those overheads
 * (opm_gemm_repredict_with_overhead; base is the first-pass prediction).
 * In the result, by_hw[h] scores hardware h when held out, overall and
 * by_class pool every hardware's held-out rows, pred_s holds each row's
 * prediction from the run that held its hardware out, and group_overhead_s
 * the overhead each group borrowed. */
int opm_gemm_leave_one_out(const opm_gemm_dataset *ds, const char *model, int use_kernel_column, const double *base,
                           double host_overlap, opm_gemm_validation *v, opm_error *err);

/* Refit of the GEMM models' globally fitted constants
 * (SAME_ADDRESS_ATOMIC_CYCLES, BACK_TO_BACK_KERNEL_FRACTION: they time the
 * fp8 activation quantisation kernels) by a grid search over their
 * documented bounds, minimising the uncalibrated MAPE of the rows whose op
 * quantises its activation (static or dynamic, not eager): once on every
 * hardware (fold hw = -1), then once without each hardware that has such
 * rows, scored on that hardware's rows.  Nothing is predicted again: each
 * row's quantisation time is a function of the two constants
 * (opm_gemm_quant_terms_time). */
typedef struct opm_gemm_refit_fold {
    int hw;                          /* held-out hardware index; -1: the fit on every hardware */
    double atomic_cycles, back_to_back;
    size_t fit_rows, held_rows;
    double fit_mape;                 /* on the rows fitted */
    double held_mape_shipped;        /* the held-out rows at the shipped constants */
    double held_mape_refit;          /* ... at this fold's */
} opm_gemm_refit_fold;
typedef struct opm_gemm_refit {
    size_t n_folds;                  /* 0: no row to fit on, or a model without the kernels */
    opm_gemm_refit_fold *folds;
    size_t pooled_rows;              /* every fold's held-out rows together */
    double pooled_shipped, pooled_refit;
} opm_gemm_refit;
int opm_gemm_refit_constants(const opm_gemm_dataset *ds, const char *model, int use_kernel_column, const double *base,
                             opm_gemm_refit *out, opm_error *err);
void opm_gemm_refit_free(opm_gemm_refit *r);

#endif
