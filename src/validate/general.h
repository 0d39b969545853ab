/* general.h — validation of any op kind against the contract §4 general
 * measurement JSONL (one {"hardware", "clock_mhz"?, "op", "measured",
 * "source"?, "timing"?, "kernel"?} object per line) for `opmodel validate`:
 * streaming the lines through the model, an optional per-(hardware,
 * source) fixed-overhead calibration, and the contract §5 error statistics
 * overall, by hardware, by kind, by source and (GEMM kinds) by size class,
 * for latency and for energy.  Computes only; the CLI
 * (src/cli/cmd_validate.c) prints.
 *
 * Use: opm_general_init, then opm_general_add_path for each --data FILE or
 * DIR (each line is read, predicted and kept as one small record, never as
 * an op), then opm_general_score, then opm_general_free.
 *
 * Ownership: the validation owns every array and string it holds; strings
 * it hands out stay valid until opm_general_free. */
#ifndef OPM_VALIDATE_GENERAL_H
#define OPM_VALIDATE_GENERAL_H

#include <stddef.h>
#include <stdint.h>
#include "opmodel/opmodel.h"
#include "../core/internal.h"
#include "gemm_latency.h"

/* Calibration lines per (hardware, source) group: the first
 * min(OPM_GENERAL_CAL_PER_GROUP, half the group, rounded down) by
 * (predicted latency, file order). */
#define OPM_GENERAL_CAL_PER_GROUP 8
/* by_class value of a line whose kind has no size class (not gemm or
 * batched_gemm). */
#define OPM_GENERAL_NO_CLASS 255
/* limiting value of a line whose prediction names no limiting resource. */
#define OPM_GENERAL_NONE UINT32_MAX

/* One predicted line: a few doubles and indices (64 bytes), so 100,000
 * lines cost 6.4 MB whatever their ops were. */
typedef struct opm_general_line {
    double measured_s;           /* measured.latency_s */
    double predicted_s;          /* the model's latency_s (plus events_host_s on an events line), before any
                                  * calibrated overhead */
    double measured_j;           /* measured.energy_j, NaN when the line has none */
    double predicted_j;          /* the model's energy_j */
    uint32_t file;               /* index into files */
    uint32_t line;               /* line number in that file, from 1 */
    uint32_t hw;                 /* index into hw_names */
    uint32_t source;             /* index into source_names ("unknown" when the line has no source) */
    uint32_t group;              /* (hardware, source) calibration group */
    uint32_t limiting;           /* index into limiting_names, OPM_GENERAL_NONE */
    uint8_t kind;                /* opm_kind */
    uint8_t bound;               /* opm_bound */
    uint8_t cls;                 /* GC_* of a gemm / batched_gemm line, else OPM_GENERAL_NO_CLASS */
    uint8_t is_cal;              /* set by opm_general_score: a calibration line, not scored */
} opm_general_line;

/* Error statistics along every breakdown; the arrays have one entry per
 * hardware, source and kind (n = 0 where no line was scored). */
typedef struct opm_general_scores {
    opm_err_stats overall;
    opm_err_stats *by_hw;        /* n_hw */
    opm_err_stats *by_source;    /* n_sources */
    opm_err_stats by_kind[OPM_KIND_COUNT];
    opm_err_stats by_class[GC_COUNT];
} opm_general_scores;

/* A (hardware, source) calibration group. */
typedef struct opm_general_group {
    uint32_t hw, source;
    size_t cal_rows;             /* its calibration lines (opm_general_score) */
    double overhead_s;           /* the overhead its scored lines get (0 without calibration) */
} opm_general_group;

typedef struct opm_general opm_general;
struct opm_general {
    const char *model;           /* as given to opm_general_init, not copied */
    const opm_model *m;
    const opm_registry *reg;     /* where `model` was found (NULL: the built-in models) */
    int calibrate;
    /* Host dispatch inside a `timing: events` line's figure (CUDA events
     * around one eager call), added to its prediction: the launch interval
     * of a host of the workload table (opm_workload_host_at(0) unless the
     * caller sets it after opm_general_init). */
    double events_host_s;
    /* Counts over every line read (blank lines excepted). */
    size_t files;
    size_t rows_failed;          /* bad lines: unreadable, invalid field, bad op, prediction error */
    size_t rows_unknown_hw;      /* lines whose hardware could not be opened (skipped) */
    /* "FILE:LINE: field: expected ..., got ..." of the first bad line, and
     * "FILE:LINE: hardware: <why it did not open>" of the first line of
     * unknown hardware; "" when none. */
    char first_bad[OPM_ERROR_MESSAGE_MAX];
    char first_unknown_hw[OPM_ERROR_MESSAGE_MAX];
    /* The predicted lines, in file order. */
    opm_general_line *lines;
    size_t n_lines, lines_cap;
    /* Names the lines index: files as given or listed, hardware as the
     * lines write it (a path is one entry however many lines name it),
     * source strings, limiting resources; interned, so many lines cost one
     * copy each. */
    opm_strtab file_tab, hw_tab, source_tab, limiting_tab;
    size_t n_hw;                 /* hw_tab.count, with hw[] that long */
    opm_hardware **hw;           /* opened hardware, NULL for an unknown name */
    size_t hw_cap;
    /* Hardware at a line's clock_mhz, made once per (hardware, clock). */
    opm_strtab clock_tab;
    opm_hardware **clocked;      /* NULL: that clock is not valid for the hardware */
    size_t clocked_cap;
    /* Calibration groups: (hardware, source) index pairs interned; ids
     * index groups[]. */
    opm_strtab group_tab;
    opm_general_group *groups;
    size_t groups_cap;
    /* Set by opm_general_score. */
    size_t rows;                 /* lines scored */
    size_t calibration_rows;
    size_t energy_rows;          /* scored lines with a measured energy */
    opm_general_scores time, energy;
    /* Optional, set after opm_general_init: called with each kept line,
     * its prediction and the hardware it was predicted on (calibrate-energy
     * reads the energy terms); a nonzero return is an error (out of memory). */
    int (*on_line)(void *ctx, const opm_general *v, const opm_general_line *l, const opm_profile *p,
                   const opm_hardware *hw);
    void *on_line_ctx;
};

/* A validation with `model` (a registered name; OPM_ENOTFOUND otherwise),
 * calibrating the fixed overhead when `calibrate`.  Free it with
 * opm_general_free whatever this returns. */
int opm_general_init(opm_general *v, const char *model, int calibrate, opm_error *err);
/* The same with the models of `reg` (NULL: the built-in ones). */
int opm_general_init_with(opm_general *v, const opm_registry *reg, const char *model, int calibrate,
                          opm_error *err);
/* Reads path: a file (any name), or a folder whose *.jsonl files are read,
 * recursively, each folder in sorted order.  Blank lines are skipped; a bad
 * line is counted in rows_failed (the first kept in first_bad) and a line of
 * hardware that does not open in rows_unknown_hw; neither stops the read.
 * Errors (returned): a path that cannot be read, a folder without *.jsonl,
 * a line longer than OPM_DOCUMENT_MAX_BYTES, out of memory; `field` names
 * the option in them ("--data"). */
int opm_general_add_path(opm_general *v, const char *path, const char *field, opm_error *err);
/* Calibrates (when asked) and fills rows, calibration_rows, energy_rows,
 * the groups' cal_rows and overhead_s, time and energy.  Called once. */
int opm_general_score(opm_general *v, opm_error *err);
void opm_general_free(opm_general *v);

/* The latency a line is scored against: the model's prediction plus its
 * group's calibrated overhead (0 without calibration). */
double opm_general_line_predicted_s(const opm_general *v, const opm_general_line *l);

/* Contract §5 statistics of n (predicted, measured) pairs, measured > 0,
 * predicted > 0: the formulas `validate` uses, for callers with their own
 * rows (validate-artifact); scratch holds n doubles. */
void opm_err_stats_of(const double *pred, const double *meas, size_t n, double *scratch, opm_err_stats *s);

#endif
