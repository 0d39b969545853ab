/* workload_internal.h — what the workload files share (not installed): the
 * workload object's layout, the keyed append the readers use so that a
 * kernel repeated in a file is one op predicted once, and the readers of
 * each input format. */
#ifndef OPM_WORKLOAD_INTERNAL_H
#define OPM_WORKLOAD_INTERNAL_H

#include <stdint.h>
#include "opmodel/opmodel.h"
#include "opmodel/workload.h"
#include "../core/internal.h"

typedef struct wl_launch {
    uint32_t op;                 /* index into ops */
    uint64_t count;
} wl_launch;

struct opm_workload {
    opm_op **ops;                /* distinct ops, owned */
    uint32_t *op_name;           /* per op: id in names */
    size_t n_ops, ops_cap, names_cap;
    wl_launch *seq;              /* launches in order */
    size_t n_seq, seq_cap;
    uint64_t kernels, skipped;
    uint64_t implied;            /* launches the kernel-list architecture rules added */
    int as_listed;               /* 1: kernel lists read as they are (no implied kernels) */
    opm_strtab names;            /* op names for the by-op breakdown */
    opm_strtab keys;             /* reader keys (an op's text) → key_op */
    uint32_t *key_op;            /* per key id: op index, UINT32_MAX when dropped */
    size_t key_cap;
};

/* Where a file's additions start, to drop them all when the file fails. */
typedef struct wl_mark {
    size_t n_ops, n_seq, n_keys;
    uint64_t kernels, skipped, implied;
    uint64_t last_count; /* the last launch's count: a repeat of its op merges into it */
} wl_mark;

void wl_mark_get(const opm_workload *w, wl_mark *m);
void wl_rollback(opm_workload *w, const wl_mark *m);
/* The op index of `key` (an op's defining text), UINT32_MAX when new. */
uint32_t wl_find_key(opm_workload *w, const char *key, size_t len);
/* Takes `op` (freed on error too), adds it as a distinct op named `name`
 * and remembers it under `key` (NULL: none); *index gets its index. */
int wl_add_owned(opm_workload *w, opm_op *op, const char *name, const char *key, size_t key_len,
                 uint32_t *index, opm_error *err);
/* Appends count launches of op `index`. */
int wl_launch_op(opm_workload *w, uint32_t index, uint64_t count, opm_error *err);

/* Readers (energaizer.c, load.c).  Each appends to w and returns 0 or a
 * status; the caller rolls back on error. */
int wl_read_energaizer(opm_workload *w, const char *text, size_t len, const char *source, opm_error *err);
int wl_read_jsonl(opm_workload *w, const char *text, size_t len, const char *source, opm_error *err);
/* 1 when text looks like an EnergAIzer kernel list (it opens an array). */
int wl_is_energaizer(const char *text, size_t len);

/* For validate-artifact (artifact.c), which re-sums one workload at many
 * launch intervals: each distinct op's device time, energy and the active
 * base energy its per-op TDP limit took off (cut_j) on hw, and the
 * sequence's eager time and energy with those costs at interval_s (0:
 * graph), idle_w in the gaps and tdp_w's limit over the whole run (as
 * opm_workload_evaluate). */
int wl_costs(const opm_workload *w, const opm_hardware *hw, const opm_model *m, double *dev_s, double *energy_j,
             double *cut_j, opm_error *err);
void wl_sum(const opm_workload *w, const double *dev_s, const double *energy_j, const double *cut_j,
            double interval_s, double idle_w, double tdp_w, double *time_s, double *energy_out_j);

#endif
