/* llm.h — whole-model step rollups (library-internal, not installed): model
 * architecture configs (configs/models/NAME.yaml, embedded, or a user's file or
 * a HuggingFace config.json), the ordered op list of one prefill, decode or
 * training step after tensor/pipeline/expert-parallel sharding, and its
 * prediction summed with a per-op model.  The CLI's `opmodel llm` prints it.
 *
 * Nothing here prints or keeps global state; errors come back in opm_error
 * with "file:line:col: field: ..." where a config field is at fault. */
#ifndef OPM_LLM_H
#define OPM_LLM_H

#include <stddef.h>
#include <stdint.h>
#include "opmodel/opmodel.h"

/* ---- model configs (config.c) ---- */

typedef struct llm_config llm_config; /* opaque */

/* Built-in name (file stem of configs/models/NAME.yaml; '.' reads as '_', so
 * "qwen2.5_7b" finds qwen2_5_7b) or a path to YAML or JSON. */
llm_config *llm_config_open(const char *name_or_path, opm_error *err);
llm_config *llm_config_load_string(const char *text, size_t len, const char *source, opm_error *err);
void llm_config_free(llm_config *c);
size_t llm_config_builtin_count(void);
const char *llm_config_builtin_name(size_t i);

const char *llm_config_name(const llm_config *c);
/* Total parameters computed from the architecture (embeddings, every layer,
 * final norm, untied head; MoE: all experts). */
uint64_t llm_config_params(const llm_config *c);
/* The published total the config file cites (0 when it gives none). */
double llm_config_published_params(const llm_config *c);
int64_t llm_config_layers(const llm_config *c);

/* ---- one step (build.c) ---- */

typedef enum llm_phase { LLM_PREFILL, LLM_DECODE, LLM_TRAIN } llm_phase;

typedef struct llm_step_spec {
    llm_phase phase;
    int64_t batch;          /* sequences */
    int64_t seq;            /* new tokens per sequence (prefill, train); decode: 1 */
    int64_t context;        /* decode: tokens already in the KV cache; prefill: cached prefix */
    opm_dtype dtype;        /* weights and activations */
    opm_dtype kv_dtype;
    int64_t tp, pp, ep;
    const char *model;      /* per-op model name */
    unsigned kinds_mask;    /* bit per LLM_KIND_* group kept; 0: all */
} llm_step_spec;

/* Kind groups that --only selects. */
enum {
    LLM_K_GEMM = 1u << 0, LLM_K_ATTENTION = 1u << 1, LLM_K_NORM = 1u << 2,
    LLM_K_ELEMENTWISE = 1u << 3, LLM_K_ROPE = 1u << 4, LLM_K_EMBEDDING = 1u << 5,
    LLM_K_MOE = 1u << 6, LLM_K_COMM = 1u << 7, LLM_K_OPTIMIZER = 1u << 8,
    LLM_K_SSM = 1u << 9
};
/* Parses "gemm,attention" into a mask; 0 or OPM_EINVAL naming the word. */
int llm_kinds_parse(const char *list, unsigned *mask, opm_error *err);

/* ---- communication (comm.c) ---- */

typedef enum llm_collective {
    LLM_ALL_REDUCE, LLM_ALL_GATHER, LLM_REDUCE_SCATTER, LLM_ALL_TO_ALL, LLM_P2P
} llm_collective;
/* Seconds for one collective over `n` devices of buffer `bytes` (NCCL-tests'
 * sizing: all-reduce the buffer, all-gather its output, reduce-scatter its
 * input, all-to-all what one device sends, p2p what is sent) on the link;
 * 0 when ic is NULL or n < 2.  The formulas are in comm.c and docs/llm.md. */
double llm_collective_time_s(llm_collective kind, double bytes, int64_t n, const opm_interconnect *ic);

/* One distinct op of the step, run `count` times per step on one device. */
typedef struct llm_step_op {
    opm_op *op;              /* NULL for a communication op */
    char name[48];
    char kind[24];           /* opm kind name, or all_reduce / all_to_all / p2p */
    int group;               /* layer group index, -1 outside the layers */
    int64_t count;           /* instances per step on one device */
    int64_t shards;          /* devices that split it (model totals = per-device × shards) */
    uint64_t comm_bytes;     /* communication ops: the collective's buffer (see llm_collective_time_s) */
    llm_collective collective;
    int64_t comm_devices;    /* devices taking part */
    int timed;               /* communication: 1 when timed from the interconnect fields */
    opm_profile prof;        /* filled by llm_step_predict */
} llm_step_op;

/* What one layer is made of: its token mixer and its feed-forward block. */
enum { LLM_MIX_ATTN, LLM_MIX_SWA, LLM_MIX_SSM };
enum { LLM_FFN_DENSE, LLM_FFN_MOE, LLM_FFN_NONE };

/* The layers of one type (mixer × feed-forward); in a hybrid they need not be
 * contiguous: `first` is the first of them, `count` how many. */
typedef struct llm_layer_group {
    int64_t first, count;
    int mixer, ffn;          /* LLM_MIX_* (attention, sliding-window attention, SSM), LLM_FFN_* */
    char label[24];          /* "dense", "moe", "encoder", "swa_dense", "ssm_moe", "ssm", ... */
} llm_layer_group;
#define LLM_MAX_GROUPS 12

typedef struct llm_step {
    llm_step_op *ops;
    size_t n_ops;
    llm_layer_group groups[LLM_MAX_GROUPS];
    size_t n_groups;
    int64_t tokens;          /* tokens processed per step (all sequences) */
    int64_t out_tokens;      /* tokens generated or trained on per step */
    /* Memory per device, bytes. */
    uint64_t weights_bytes, kv_cache_bytes, activation_bytes, optimizer_bytes;
    uint64_t params;         /* whole model */
    uint64_t params_per_device;
    int has_link;            /* 1: every communication op was timed from the hardware's interconnect */
} llm_step;

/* Builds the op list.  0 or a status; on failure *step is empty. */
/* The spec checks alone (llm_step_build runs them first): 0 or a status. */
int llm_spec_check(const llm_config *c, const llm_step_spec *spec, opm_error *err);
int llm_step_build(const llm_config *c, const llm_step_spec *spec, llm_step *step, opm_error *err);
/* Predicts every op on hw with spec->model. */
int llm_step_predict(llm_step *step, const llm_step_spec *spec, const opm_hardware *hw, opm_error *err);
void llm_step_free(llm_step *step);

/* ---- charts (svg.c) ---- */

/* Time per kind as stacked bars, one bar per layer type (× forward/backward
 * in a training step) and one for the ops outside the layers.  A malloc'd
 * standalone SVG document, or NULL with err set (out of memory). */
char *llm_svg_kinds(const llm_step *step, const char *title, opm_error *err);
/* Every predicted op (communication excluded) as one <circle class="op">
 * on the hardware's roofline: FLOP per HBM byte against achieved FLOP/s,
 * log-log, with the tensor and vector roofs of `dtype` and a slope per
 * memory level that has a bandwidth.  An op with no FLOPs or no bytes is
 * drawn on the axis edge with data-clamped="1". */
char *llm_svg_roofline(const llm_step *step, const opm_hardware *hw, opm_dtype dtype, const char *title, opm_error *err);

#endif
