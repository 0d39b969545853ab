/* opmodel/workload.h — a whole workload: an ordered sequence of ops (a
 * model step, one inference iteration) predicted op by op and summed into
 * latency, energy, average power, FLOPs and bytes, with the breakdown by
 * op kind and by op.
 *
 *     opm_error err;
 *     opm_workload *w = opm_workload_new(&err);
 *     opm_workload_add_file(w, "step.jsonl", &err);      // or add ops one by one
 *     opm_workload_options o;
 *     opm_workload_options_init(&o);                       // eager, default host
 *     opm_workload_result *r = opm_workload_evaluate(w, hw, &o, &err);
 *     printf("%g s %g J\n", opm_workload_result_totals(r)->latency_s,
 *            opm_workload_result_totals(r)->energy_j);
 *     opm_workload_result_free(r);
 *     opm_workload_free(w);
 *
 * Timing.  Graph mode (a CUDA/HIP graph replay): the kernels run back to
 * back, the workload takes the sum of their device times.  Eager mode (every
 * kernel launched from the host, as PyTorch eager does): a kernel cannot
 * start before the host has issued it, so each kernel takes
 * max(device time, launch interval), the launch interval being the host
 * time between two launches (opm_workload_host_* lists measured ones).  While
 * the GPU waits for the host it draws idle power, which is charged to the gap.
 * Energy is each op's predicted energy_j (dynamic plus static over its
 * device time) plus idle power × the gaps.
 *
 * Ownership: opm_workload_new and opm_workload_evaluate return objects the
 * caller releases with opm_workload_free / opm_workload_result_free.  A
 * workload owns copies of the ops added; a result borrows nothing (its
 * names live as long as it).  Neither keeps global state; one workload may
 * be evaluated from many threads at once once it is no longer modified. */
#ifndef OPMODEL_WORKLOAD_H
#define OPMODEL_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "hardware.h"
#include "op.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most kernels one workload holds (counts included): a bound, so a
 * malformed file cannot ask for unbounded memory or time. */
#define OPM_WORKLOAD_MAX_KERNELS ((uint64_t)1 << 32)

typedef struct opm_workload opm_workload;

OPM_API opm_workload *opm_workload_new(opm_error *err);
OPM_API void opm_workload_free(opm_workload *w);

/* Appends `count` (≥ 1) back-to-back launches of a copy of `op`, which must
 * be valid (opm_op_validate).  `name` names it in the by-op breakdown (NULL:
 * the op's name).  Returns 0 or a status. */
OPM_API int opm_workload_add_op(opm_workload *w, const opm_op *op, const char *name, uint64_t count,
                                opm_error *err);
/* Appends every op of a file, detected by content:
 *  - JSONL: one contract §1 op per line (full or short form), optionally with
 *    an integer "count" member (what `opmodel llm --emit-workload` writes);
 *  - an EnergAIzer kernel-list JSON: one array of [query, [op, engine,
 *    precision]] entries (gemm, conv2d, elementwise, layernorm, softmax);
 *  - a PyTorch profiler trace (JSON or gzip): its recognised ops in host
 *    launch order; ops without a model are skipped and counted
 *    (opm_workload_skipped).
 * "-" reads stdin (JSONL or kernel list).  Errors name FILE:LINE (JSONL) or
 * FILE:ENTRY:FIELD (kernel list: entry index from 0); on error nothing of
 * the file is kept. */
OPM_API int opm_workload_add_file(opm_workload *w, const char *path, opm_error *err);
/* Same for text in memory; `source` names it in errors. */
OPM_API int opm_workload_add_text(opm_workload *w, const char *text, size_t len, const char *source,
                                  opm_error *err);

/* Kernel launches held (counts included), and the distinct ops. */
OPM_API uint64_t opm_workload_kernel_count(const opm_workload *w);
OPM_API size_t opm_workload_op_count(const opm_workload *w);
OPM_API const opm_op *opm_workload_op(const opm_workload *w, size_t i);
/* Trace ops without a model that opm_workload_add_file left out. */
OPM_API uint64_t opm_workload_skipped(const opm_workload *w);
/* An EnergAIzer kernel list holds only the layer types its generator
 * records (GEMMs, convolutions, softmax, layer norm and a fixed set of
 * elementwise functions), so the batch norms, pooling and residual adds of a
 * convolutional network and GPT-2's causal-mask select are not in it.  When
 * the list's name (the file's base name, or `source`) starts with a model the
 * reader knows (`resnet18` ... `resnet152`, `mobilevitmodel`, `gpt2model`:
 * the artifact's naming), those kernels are added where that architecture
 * runs them and counted here (they are in opm_workload_kernel_count too);
 * docs/workload.md lists the rules.  on = 0 (before adding files) reads
 * kernel lists as they are; the default is on. */
OPM_API void opm_workload_set_implied_kernels(opm_workload *w, int on);
OPM_API uint64_t opm_workload_implied(const opm_workload *w);

/* ---- Hosts: measured launch intervals ---- */

typedef struct opm_workload_host {
    const char *name;
    double launch_interval_s;     /* host time from one kernel launch to the next */
    const char *source;           /* where the figure comes from */
} opm_workload_host;

OPM_API size_t opm_workload_host_count(void);
/* Entry i (0 is the default); NULL past the end. */
OPM_API const opm_workload_host *opm_workload_host_at(size_t i);
/* The entry named `name`, NULL when none. */
OPM_API const opm_workload_host *opm_workload_host_find(const char *name);

/* ---- Evaluation ---- */

typedef enum opm_workload_mode { OPM_WORKLOAD_EAGER, OPM_WORKLOAD_GRAPH } opm_workload_mode;

typedef struct opm_workload_options {
    const char *model;            /* per-op model; NULL: "extended_roofline" */
    opm_workload_mode mode;
    /* Eager mode's launch interval; < 0: the default host's. */
    double launch_interval_s;
} opm_workload_options;

/* Eager, the default host, extended_roofline. */
OPM_API void opm_workload_options_init(opm_workload_options *o);

typedef struct opm_workload_totals {
    uint64_t kernels;
    double latency_s;             /* wall time of the sequence */
    double device_time_s;         /* sum of the kernels' predicted device times */
    double idle_s;                /* latency_s - device_time_s: the GPU waits for the host */
    double energy_j;              /* op energies + idle_energy_j */
    double op_energy_j;           /* sum of the ops' predicted energy_j, with the active base energy
                                   * the per-op TDP limit took off given back while the run's
                                   * average power stays at most tdp_w (docs/energy.md) */
    double idle_energy_j;         /* idle power × idle_s */
    double idle_power_w;          /* at the hardware's clock */
    double average_power_w;       /* energy_j / latency_s (0 when latency is 0) */
    double launch_interval_s;     /* used (0 in graph mode) */
    double flops;
    double bytes;                 /* DRAM (hbm level) read + write */
} opm_workload_totals;

/* One line of a breakdown: every launch of one op (by_op) or of one kind. */
typedef struct opm_workload_entry {
    const char *name;             /* op name, or the kind's name */
    opm_kind kind;
    uint64_t count;               /* launches */
    double latency_s;             /* wall time it accounts for, gaps included */
    double device_time_s;
    double energy_j;              /* its ops' energy plus the idle energy of its gaps */
    double flops;
    double bytes;
} opm_workload_entry;

typedef struct opm_workload_result opm_workload_result;

/* Predicts every op on `hw` (at hw's clock; opm_hardware_with_clock gives
 * another) and sums.  An op the model cannot predict is an error naming it. */
OPM_API opm_workload_result *opm_workload_evaluate(const opm_workload *w, const opm_hardware *hw,
                                                   const opm_workload_options *o, opm_error *err);
OPM_API void opm_workload_result_free(opm_workload_result *r);
OPM_API const opm_workload_totals *opm_workload_result_totals(const opm_workload_result *r);
/* Breakdowns, largest latency first (ties: first seen first). */
OPM_API size_t opm_workload_result_kind_count(const opm_workload_result *r);
OPM_API const opm_workload_entry *opm_workload_result_kind(const opm_workload_result *r, size_t i);
OPM_API size_t opm_workload_result_op_count(const opm_workload_result *r);
OPM_API const opm_workload_entry *opm_workload_result_op(const opm_workload_result *r, size_t i);

#ifdef __cplusplus
}
#endif
#endif
