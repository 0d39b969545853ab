/* opmodel/trace.h — measured kernels beside the model: reading PyTorch
 * profiler traces (Chrome-trace JSON, plain or gzip) and reporting, for
 * every operation that ran, its measured GPU time next to the FLOPs and
 * bytes the op library counts and the time a model predicts.
 *
 *     opm_error err;
 *     opm_trace *t = opm_trace_read_file("step.pt.trace.json.gz", &err);
 *     opm_trace_report *r = opm_trace_report_new(t, hw_or_NULL, NULL, &err);
 *     for (size_t i = 0; i < opm_trace_report_group_count(r); i++) {
 *         const opm_trace_group *g = opm_trace_report_group(r, i);
 *         printf("%s %llu %g\n", g->name, (unsigned long long)g->count, g->kernel_time_s);
 *     }
 *     opm_trace_report_free(r);
 *     opm_trace_free(t);
 *
 * Ownership: opm_trace_read_* and opm_trace_report_new return objects the
 * caller releases with the matching *_free.  A report borrows nothing from
 * the trace or hardware it was made from: every string it hands out lives
 * as long as the report.  Both objects are immutable after construction and
 * may be read from many threads at once.  Emitters return malloc'ed text
 * released with opm_free() (or free()). */
#ifndef OPMODEL_TRACE_H
#define OPMODEL_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "hardware.h"
#include "model.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Reading ---- */

typedef struct opm_trace opm_trace;

/* Reads a torch.profiler trace: `.json`, `.json.gz` (detected by content,
 * not by name) or "-" for stdin.  The file is streamed: memory grows with
 * the events kept (operators, launches, GPU activity, flows), not with the
 * file.  A truncated or malformed file gives OPM_EINVAL with the byte offset
 * (in the uncompressed stream) where reading stopped, and no trace. */
OPM_API opm_trace *opm_trace_read_file(const char *path, opm_error *err);
/* Same, from memory (plain JSON or gzip bytes).  `source` names it in errors. */
OPM_API opm_trace *opm_trace_read_buffer(const void *data, size_t len, const char *source,
                                         opm_error *err);
OPM_API void opm_trace_free(opm_trace *t);

/* What was read: uncompressed bytes parsed, and events kept by class. */
typedef struct opm_trace_stats {
    uint64_t json_bytes;
    uint64_t events;          /* every entry of traceEvents */
    uint64_t cpu_ops;         /* cat cpu_op (and user_annotation) */
    uint64_t launches;        /* cuda_runtime / cuda_driver */
    uint64_t gpu_events;      /* kernel, gpu_memcpy, gpu_memset */
    uint64_t flows;           /* ac2g s/f */
} opm_trace_stats;
OPM_API void opm_trace_get_stats(const opm_trace *t, opm_trace_stats *out);

/* GPU names recorded in the trace's deviceProperties (the first is the one
 * hardware auto-detection uses); 0 when the trace has none. */
OPM_API size_t opm_trace_device_count(const opm_trace *t);
OPM_API const char *opm_trace_device_name(const opm_trace *t, size_t i);

/* Built-in hardware entry for a device name as torch reports it
 * ("NVIDIA H100 80GB HBM3" → "h100_sxm", "AMD Instinct MI300X" → "mi300x");
 * NULL when the name is not recognised. */
OPM_API const char *opm_hardware_detect(const char *device_name);

/* ---- CUDA/HIP graphs and windows ---- */

/* What opm_trace_merge_capture did. */
typedef struct opm_trace_graph_stats {
    uint64_t windows;             /* captured graphs found in the capture trace */
    uint64_t launches;            /* graph launches (cudaGraphLaunch/hipGraphLaunch) in the run */
    uint64_t launches_matched;    /* launches whose kernels were attributed */
    uint64_t gpu_events;          /* GPU events those launches replayed */
    uint64_t gpu_events_matched;  /* of them, paired with a captured launch call */
} opm_trace_graph_stats;

/* Attributes the kernels that graph launches in `run` replayed to the ops
 * recorded in `capture` while the graphs were captured (the capture trace of
 * the same process), by matching the captured launch calls' kernel names
 * and order to the replayed kernels (docs/trace.md, "Graph traces"); a
 * report of `run` then groups them as an eager trace would.  One captured
 * graph serves every launch; several are paired with the launches in time
 * order (launch i replays graph i mod their count), and when the launch
 * count is not a multiple of theirs nothing is attributed.  Modifies `run`:
 * call it before sharing the trace.  After an error `run` must only be
 * freed.  Returns 0 (stats filled; launches left unmatched are not an
 * error) or OPM_ENOMEM / OPM_EINVAL. */
OPM_API int opm_trace_merge_capture(opm_trace *run, const opm_trace *capture, opm_trace_graph_stats *stats,
                                    opm_error *err);

/* Keeps only the events that lie wholly inside [start_s, end_s], seconds
 * from the trace's earliest event (flows: their time point inside).
 * OPM_EINVAL unless 0 <= start_s < end_s. */
OPM_API int opm_trace_keep_window(opm_trace *t, double start_s, double end_s, opm_error *err);

/* ---- Reporting ---- */

typedef enum opm_trace_category {
    OPM_TCAT_GEMM,
    OPM_TCAT_ATTENTION,
    OPM_TCAT_CONV,
    OPM_TCAT_NORM,
    OPM_TCAT_ELEMENTWISE,
    OPM_TCAT_REDUCE,
    OPM_TCAT_COMM,
    OPM_TCAT_MEMCPY,
    OPM_TCAT_OTHER,
    OPM_TCAT_COUNT
} opm_trace_category;

/* "gemm", "attention", ... "other". */
OPM_API const char *opm_trace_category_name(opm_trace_category c);

/* One group: every instance of an op with the same name and the same call
 * parameters (Input Dims, Input type, Input Strides, Concrete Inputs). */
typedef struct opm_trace_group {
    const char *name;
    int has_kind;                 /* 0: no model for this op (kind null) */
    opm_kind kind;
    opm_phase phase;
    opm_trace_category category;
    /* The parameters as one JSON object ("{\"m\":141,...}"); for ops without
     * a model, the raw call arguments. Never NULL. */
    const char *params_json;
    /* The raw call arguments as recorded (JSON text; "" when absent). */
    const char *input_dims;
    const char *input_types;
    const char *input_strides;
    const char *concrete_inputs;
    /* Name of the forward op this backward op was linked to through its
     * Sequence number; NULL when not a linked backward op. */
    const char *forward_name;
    uint64_t count;
    double kernel_time_s;         /* sum over instances of each one's busy time */
    double kernel_time_mean_s;
    /* Per instance; valid when has_kind. */
    uint64_t flops;
    uint64_t bytes;
    double flops_per_byte;
    double tflops_per_s;          /* achieved: flops·count / kernel_time_s / 1e12 */
    double tb_per_s;
    /* Valid when has_roofline (a hardware was given and the op has a model
     * the hardware supports). */
    int has_roofline;
    double roofline_time_s;       /* per instance */
    double pct_roofline;          /* 100 · roofline_time_s / kernel_time_mean_s */
    opm_bound bound;
    /* Distinct GPU kernel (or memcpy/memset) names, most time first. */
    size_t kernel_name_count;
    const char *const *kernel_names;
} opm_trace_group;

/* One op instance (one call of a CPU op, or one GPU event no op launched). */
typedef struct opm_trace_instance {
    size_t group;                 /* index into the report's groups */
    double cpu_start_s;           /* host timestamp, trace clock */
    double cpu_dur_s;
    double gpu_start_s;           /* first GPU event under it */
    double kernel_time_s;         /* busy time (union) of its GPU events */
    uint32_t gpu_event_count;
    int64_t sequence_number;      /* -1 when none */
} opm_trace_instance;

typedef struct opm_trace_category_time {
    opm_trace_category category;
    uint64_t count;               /* instances */
    double kernel_time_s;
    double share;                 /* of the summed kernel time of all groups */
} opm_trace_category_time;

/* GPU timeline, each a union of intervals over every GPU event in the
 * trace.  wall_s spans the first GPU event's start to the last one's end. */
typedef struct opm_trace_timeline {
    double wall_s;
    double busy_s;
    double idle_s;                /* wall_s - busy_s */
    double compute_s;             /* busy with kernels other than communication */
    double comm_s;                /* communication kernels (nccl, rccl, ...) */
    double memcpy_s;              /* memcpy and memset */
    double exposed_comm_s;        /* comm not overlapped by compute */
    double exposed_memcpy_s;      /* memcpy not overlapped by compute or comm */
} opm_trace_timeline;

typedef struct opm_trace_report opm_trace_report;

/* Links, recognises, groups and (with `hw`) predicts.  `hw` may be NULL: no
 * roofline columns then.  `model` names the model for the roofline columns
 * (NULL: "roofline").  The report's source is the trace's (its path, or
 * the `source` given to opm_trace_read_buffer).  Groups are ordered by
 * kernel time, largest first. */
OPM_API opm_trace_report *opm_trace_report_new(const opm_trace *t, const opm_hardware *hw,
                                               const char *model, opm_error *err);
OPM_API void opm_trace_report_free(opm_trace_report *r);

OPM_API const char *opm_trace_report_source(const opm_trace_report *r);
/* Name of the hardware used, NULL when none. */
OPM_API const char *opm_trace_report_hardware(const opm_trace_report *r);
OPM_API size_t opm_trace_report_group_count(const opm_trace_report *r);
OPM_API const opm_trace_group *opm_trace_report_group(const opm_trace_report *r, size_t i);
OPM_API size_t opm_trace_report_instance_count(const opm_trace_report *r);
OPM_API const opm_trace_instance *opm_trace_report_instance(const opm_trace_report *r, size_t i);
/* One entry per category with time, in opm_trace_category order. */
OPM_API size_t opm_trace_report_category_count(const opm_trace_report *r);
OPM_API const opm_trace_category_time *opm_trace_report_category(const opm_trace_report *r, size_t i);
OPM_API const opm_trace_timeline *opm_trace_report_timeline(const opm_trace_report *r);
/* Group indices ordered by time lost to the roofline,
 * count · (kernel_time_mean_s − roofline_time_s), largest first; only groups
 * with has_roofline.  Returns the count and sets *order (owned by r). */
OPM_API size_t opm_trace_report_gap_order(const opm_trace_report *r, const size_t **order);

/* GPU work that graph launches replayed and no captured op was found for
 * (all replayed work when no capture was merged): the number of graph
 * launches, of such GPU events, and their busy time in seconds. */
OPM_API double opm_trace_report_graph_time(const opm_trace_report *r, uint64_t *launches, uint64_t *gpu_events);

/* ---- Emitting ---- */

/* Contract §6, one JSON document. */
OPM_API char *opm_trace_report_to_json(const opm_trace_report *r, opm_error *err);
/* CSV with a header row: one row per group (what = 0) or per instance (1). */
OPM_API char *opm_trace_report_to_csv(const opm_trace_report *r, int what, opm_error *err);
/* Terminal tables for people: timeline, categories, the `top` groups by
 * time and by gap to roofline (top = 0: all). */
OPM_API char *opm_trace_report_to_table(const opm_trace_report *r, size_t top, opm_error *err);
/* SVG roofline chart: groups as points at achieved FLOP/s against FLOPs per
 * byte, under the hardware's roofs, area by kernel time.  Needs a hardware. */
OPM_API char *opm_trace_report_to_svg(const opm_trace_report *r, opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
