/* trace_internal.h — what the trace stages hand each other.
 *
 *   reader.c     file bytes ──► events in an opm_trace (the store, store.c)
 *   link.c       events ──► call tree, launches, GPU events ──► op instances
 *   recognize.c  op name + call arguments ──► kind, category, opm_op, params
 *                (the name table is data: op_table.def)
 *   analyze.c    instances ──► groups, categories, timeline, predictions
 *   ../report/   report ──► JSON / CSV / table / SVG
 *   beside the report (opmodel/trace_analysis.h): iterations.c (repeated
 *   iterations), kernel_names.c (GEMM kernel names as hints), ranks.c
 *   (one trace per rank: collectives, exposed communication)
 *
 * Times are exact integer nanoseconds: the profiler writes microseconds with
 * three decimals, and a double cannot hold an epoch-sized ns count exactly,
 * so interval unions stay exact.  Strings are interned once per trace and
 * referred to by a dense 32-bit id (0 is the empty string). */
#ifndef OPM_TRACE_INTERNAL_H
#define OPM_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "opmodel/opmodel.h"
#include "opmodel/trace.h"
#include "../core/internal.h"

#define OPM_NONE32 UINT32_MAX
#define OPM_NO_ID INT64_MIN

/* ---- Event store (store.c) ---- */

typedef enum opm_ev_class {
    OPM_EV_CPU_OP,          /* cat cpu_op, operator */
    OPM_EV_ANNOTATION,      /* user_annotation: tree nodes, never ops (python_function events are not kept) */
    OPM_EV_LAUNCH,          /* cuda_runtime, cuda_driver (hip likewise) */
    OPM_EV_KERNEL,          /* kernel */
    OPM_EV_MEMCPY,          /* gpu_memcpy */
    OPM_EV_MEMSET,          /* gpu_memset */
    OPM_EV_GPU_ANNOTATION,  /* gpu_user_annotation: not GPU work, kept out of busy time */
    OPM_EV_CLASS_COUNT
} opm_ev_class;

static inline int opm_ev_is_gpu(int cls)
{
    return cls == OPM_EV_KERNEL || cls == OPM_EV_MEMCPY || cls == OPM_EV_MEMSET;
}

/* Call arguments of a cpu_op, each the canonical compact JSON text of the
 * arg ("[[512],[141,512],[]]", "[\"c10::BFloat16\",\"Scalar\"]"), interned;
 * 0 (the empty string) when the arg is absent. */
typedef struct opm_call_args {
    uint32_t input_dims;
    uint32_t input_types;
    uint32_t input_strides;
    uint32_t concrete_inputs;
} opm_call_args;

/* 64 bytes: a multi-GB trace keeps millions of these. */
typedef struct opm_tev {
    int64_t ts_ns;
    int64_t dur_ns;
    int64_t correlation;    /* args.correlation, OPM_NO_ID when absent */
    int64_t external_id;    /* args["External id"], OPM_NO_ID when absent */
    int64_t seq;            /* args["Sequence number"], OPM_NO_ID when absent */
    int32_t pid;            /* numeric pid; a string pid (or one beyond int32) */
    int32_t tid;            /*   is -(1 + its interned string id) */
    uint32_t name;          /* string id */
    uint32_t args;          /* cpu_ops: index into opm_trace.call_args, OPM_NONE32 if none;
                             * launches: string id of args.kernel (captured launches
                             * name their kernel there), OPM_NONE32 if none */
    int32_t stream;         /* GPU events: args.stream, -1 otherwise */
    int16_t device;         /* GPU events: args.device, -1 otherwise */
    uint8_t cls;            /* opm_ev_class */
} opm_tev;

/* One ac2g flow end: ph 's' at the launch, 'f' at the GPU event. */
typedef struct opm_tflow {
    int64_t id;
    int64_t ts_ns;
    int32_t pid;            /* as in opm_tev */
    int32_t tid;
    uint8_t is_start;       /* 's' = 1, 'f' = 0 */
} opm_tflow;

typedef struct opm_tdevice {
    int64_t id;
    uint32_t name;          /* string id */
    int64_t num_sms;        /* -1 when absent */
    int64_t total_global_mem; /* bytes, -1 when absent */
} opm_tdevice;

/* The collective a `record_param_comms` cpu_op describes (PyTorch's c10d
 * records it around each collective): kept by its host range, not by an
 * event index, so --window and --capture (which rewrite the events) leave
 * it valid.  ranks.c reads it. */
typedef struct opm_tcomm {
    int64_t ts_ns, dur_ns;
    int32_t pid, tid;       /* as in opm_tev */
    uint32_t collective;    /* string id of args["Collective name"], 0 when absent */
    uint32_t dtype;         /* string id of args.dtype ("BFloat16"), 0 when absent */
    uint32_t pg_ranks;      /* string id of args["Process Group Ranks"] ("[0, 1, 2, 3]"), 0 when absent */
    int64_t in_nelems, out_nelems, group_size;   /* -1 when absent */
} opm_tcomm;

struct opm_trace {
    char *source;
    opm_strtab strings;
    opm_tev *ev;
    size_t n_ev, cap_ev;
    opm_tflow *flows;
    size_t n_flows, cap_flows;
    opm_call_args *call_args;
    size_t n_args, cap_args;
    opm_tdevice *devices;
    size_t n_devices, cap_devices;
    opm_tcomm *comms;
    size_t n_comms, cap_comms;
    opm_trace_stats stats;
};

/* An empty trace named `source` (copied; may be NULL). */
opm_trace *opm_trace_new_empty(const char *source, opm_error *err);
/* Interns `len` bytes (need not be terminated); returns the id or
 * OPM_NONE32 when out of memory.  intern("") is always 0. */
uint32_t opm_trace_intern(opm_trace *t, const char *s, size_t len);
const char *opm_trace_str(const opm_trace *t, uint32_t id);
size_t opm_trace_strlen(const opm_trace *t, uint32_t id);
/* Appends; each returns 0 or OPM_ENOMEM (err filled). */
int opm_trace_add_event(opm_trace *t, const opm_tev *e, opm_error *err);
int opm_trace_add_flow(opm_trace *t, const opm_tflow *f, opm_error *err);
/* Returns the new args index in *index. */
int opm_trace_add_args(opm_trace *t, const opm_call_args *a, uint32_t *index, opm_error *err);
int opm_trace_add_device(opm_trace *t, const opm_tdevice *d, opm_error *err);
int opm_trace_add_comm(opm_trace *t, const opm_tcomm *c, opm_error *err);
/* A blank event: every id field OPM_NO_ID, args OPM_NONE32, stream/device -1. */
void opm_tev_init(opm_tev *e);

/* ---- Hashing 64-bit keys (the map: analyze.c) ---- */

/* splitmix64's finaliser.  Ids, string ids and thread ids are mostly dense
 * runs of small integers, and the tables index by the low bits, so the keys
 * must be spread first.  Inline: link.c hashes once per event. */
static inline uint64_t opm_hash_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* 64-bit keys to dense indices: open addressing, kept at most half full.
 * Zero-initialise; free with opm_u64map_free. */
typedef struct opm_u64map {
    uint64_t *keys;
    uint32_t *vals;         /* index + 1; 0 = empty slot */
    size_t nslots, count;
} opm_u64map;

/* The index stored for `key`, or `fresh` (stored now) when absent; *added
 * says which.  -1 when out of memory. */
int opm_u64map_get_or_add(opm_u64map *m, uint64_t key, uint32_t fresh, uint32_t *index, int *added);
/* Frees the table and leaves the map empty, ready for reuse. */
void opm_u64map_free(opm_u64map *m);

/* ---- Op recognition (recognize.c, table in op_table.def) ---- */

/* How a recognised op claims GPU work below it in the call tree:
 * OUTER ops own everything under them (aten::layer_norm over
 * native_layer_norm); INNER ops yield to any recognised op below them
 * (aten::linear over aten::addmm). */
typedef enum opm_claim { OPM_CLAIM_INNER, OPM_CLAIM_OUTER } opm_claim;

typedef struct opm_trace_call {
    const char *name;
    /* Canonical JSON texts as stored (see opm_call_args); "" when absent. */
    const char *input_dims;
    const char *input_types;
    const char *input_strides;
    const char *concrete_inputs;
    /* (Added by recognize.c.)  1 when autograd recorded the op — it carries
     * a `Sequence number` and is not under backward: a training forward,
     * built as train_fwd (norms then write their saved statistics); 0
     * otherwise (inference).  Backward ops are train_bwd by their name. */
    int training;
} opm_trace_call;

typedef struct opm_trace_recog {
    opm_op *op;             /* owned by the caller; NULL when no model applies */
    char *params_json;      /* malloc'ed JSON object, never NULL on success */
} opm_trace_recog;

typedef struct opm_trace_op_entry {
    const char *name;       /* exact op name, or a prefix ending in '*' */
    opm_trace_category category;
    opm_claim claim;
    /* Builds the op from the call; NULL for ops listed only for their
     * category.  Returns 0 with out->op NULL when the arguments are absent
     * or not understood (the op is then reported without a model); a
     * non-zero status only for out-of-memory or overflow. */
    int (*build)(const opm_trace_call *call, opm_trace_recog *out, opm_error *err);
} opm_trace_op_entry;

/* The table entry for an op name, NULL when the name is not listed. */
const opm_trace_op_entry *opm_trace_op_lookup(const char *name);
/* Runs entry->build (or only the raw-args params when it has none). */
int opm_trace_recognize(const opm_trace_op_entry *entry, const opm_trace_call *call,
                        opm_trace_recog *out, opm_error *err);
/* Category of GPU work no recognised op owns, from its kernel name and
 * class (nccl/rccl → comm, memcpy/memset → memcpy, gemm-like names → gemm,
 * ...). */
opm_trace_category opm_trace_kernel_category(const char *kernel_name, int ev_class);
/* Whether `name` contains `needle` (lower-case ASCII), ignoring case: the
 * one substring test for kernel and op names (recognize.c). */
int opm_trace_name_has(const char *name, const char *needle);
/* TraceLens's pseudo ops: an op whose kernels TraceLens reports as several
 * rows named by kernel (vllm::moe_forward's expert GEMMs as
 * pseudo_op::moe_triton_unfused_up/down/...).  Whether the op `owner` is
 * split so, and the 1-based pseudo op that takes its kernel `kernel` (0:
 * the kernel stays the owner's).  Names: opm_trace_pseudo_op_name. */
int opm_trace_has_pseudo_ops(const char *owner);
int opm_trace_pseudo_op(const char *owner, const char *kernel);
const char *opm_trace_pseudo_op_name(int index);

/* ---- Linking (link.c) ---- */

/* One op instance: a CPU op that owns GPU work, or (ev == OPM_NONE32 in
 * cpu_ev) GPU work no CPU op launched, named after its kernel. */
typedef struct opm_link_instance {
    uint32_t cpu_ev;        /* owning cpu_op event, OPM_NONE32 if none */
    uint32_t name;          /* string id: op name, or kernel name */
    const opm_trace_op_entry *entry;  /* NULL when not recognised */
    uint32_t gpu_first;     /* range in opm_trace_link.gpu */
    uint32_t gpu_count;
    int64_t gpu_start_ns;
    int64_t busy_ns;        /* union of its GPU events' intervals */
    uint32_t fwd_cpu_ev;    /* backward ops: the linked forward cpu_op, else OPM_NONE32 */
    /* Added by link.c: for an instance no CPU op owns, the launch that
     * queued its GPU event (OPM_NONE32 when none was found), so the report
     * can name it "<launch>-><kernel> (Synthetic Op)" as TraceLens does. */
    uint32_t launch_ev;
    /* Added by link.c: the pseudo op (opm_trace_pseudo_op) this instance is
     * a part of its owner's kernels under, 0 for the owner itself. */
    uint32_t pseudo;
} opm_link_instance;

typedef struct opm_trace_link {
    opm_link_instance *inst;
    size_t n_inst;
    uint32_t *gpu;          /* GPU event indices, grouped by instance */
    size_t n_gpu;
    opm_trace_timeline timeline;
    /* Diagnostics. */
    uint64_t gpu_without_launch;   /* GPU events whose correlation matched no launch */
    uint64_t launches_without_op;  /* launches with no CPU op above them */
} opm_trace_link;

opm_trace_link *opm_trace_link_build(const opm_trace *t, opm_error *err);
void opm_trace_link_free(opm_trace_link *l);

/* Busy time (union) of n intervals [start, end) in ns; sorts `iv` in place
 * (pairs: iv[2i] start, iv[2i+1] end). */
int64_t opm_interval_union_ns(int64_t *iv, size_t n);

/* ---- Graph launches (graph.c) ---- */

typedef struct opm_trace_graph_time_out {
    uint64_t launches;      /* graph launch calls (cudaGraphLaunch, hipGraphLaunch) */
    uint64_t gpu_events;    /* GPU events still carrying a graph launch's correlation */
    int64_t busy_ns;        /* their busy time (union) */
} opm_trace_graph_time_out;

/* What still sits under graph launches: replayed GPU work no capture was
 * merged for (all of it, without --capture). */
int opm_trace_graph_time(const opm_trace *t, opm_trace_graph_time_out *out, opm_error *err);

/* ---- The report (analyze.c builds it, ../report/ emits it) ---- */

struct opm_trace_report {
    char *source;               /* the trace's source */
    char *hardware;             /* hardware name, NULL when none */
    char *model;                /* model used for the roofline columns */
    /* Roofs for the chart (0 when no hardware): HBM bandwidth and the
     * dense peak of each group's compute dtype and engine. */
    double hbm_bytes_per_s;
    double *group_peak_flops_per_s;   /* n_groups entries */
    opm_trace_group *groups;
    size_t n_groups;
    opm_trace_instance *inst;
    size_t n_inst;
    opm_trace_category_time cats[OPM_TCAT_COUNT];
    size_t n_cats;
    opm_trace_timeline timeline;
    size_t *gap_order;
    size_t n_gap;
    /* GPU work replayed by graph launches and not attributed to captured
     * ops (graph.c). */
    opm_trace_graph_time_out graph;
    /* Everything the groups' strings point into, freed with the report. */
    char **owned;
    size_t n_owned, cap_owned;
};

#endif
