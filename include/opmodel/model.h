/* opmodel/model.h — predictions: the profile record, its accessors and the
 * model registry.
 *
 * A model is a static, immutable table entry: `opm_model_find("roofline")`
 * returns a pointer that lives as long as the program and needs no freeing.
 * `model->predict(op, hw, &profile, &err)` fills a caller-owned profile; it
 * does not allocate, keeps no state between calls and is safe to call from
 * many threads at once on shared op and hardware objects.  Prefer
 * `opm_predict(name, ...)`, which reports an unknown name as an error and
 * refuses non-finite results. */
#ifndef OPMODEL_MODEL_H
#define OPMODEL_MODEL_H

#include <stdint.h>
#include "error.h"
#include "hardware.h"
#include "op.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPM_MAX_DIAGS 32
/* Sizes of the profile's own copies of the op, model and hardware names.
 * An op name longer than OPM_PROFILE_NAME_MAX - 1 bytes is cut there
 * (hardware names are at most 63 bytes, model names at most 31). */
#define OPM_PROFILE_NAME_MAX 128
#define OPM_PROFILE_MODEL_MAX 32
#define OPM_PROFILE_HARDWARE_MAX 64

typedef struct opm_level_access {
    char name[16];
    uint64_t read_bytes;
    uint64_t write_bytes;
    double energy_j;
    double time_s;           /* bytes / (bandwidth × utilization) */
} opm_level_access;

/* One diagnostic: a number or a short text, keyed. */
typedef struct opm_diag {
    char key[40];
    int is_text;
    double number;
    char text[64];
} opm_diag;

/* Typed details of a tile-modelled GEMM prediction (gemm, batched_gemm,
 * grouped_gemm, the implicit GEMMs of a conv) by extended_roofline or
 * effective_roofline: the same figures the text diagnostics carry, as
 * numbers.  For a backward pass or a conv with several implicit GEMMs they
 * describe the first kernel; times and rates are of the whole op. */
typedef struct opm_gemm_details {
    char kernel[64];            /* the chosen kernel's name, as diagnostics.kernel */
    char kernel_family[16];     /* the catalog's matrix-instruction family: simt, mma_sync, wgmma,
                                 * tcgen05, mfma */
    int64_t tile_m, tile_n, tile_k;   /* CTA tile */
    int64_t split_k;
    int64_t pipeline_stages;
    int64_t warps_per_cta;
    double ctas_per_sm;
    double tiles;               /* output tiles × split_k */
    double waves;               /* tiles / (SMs × CTAs per SM) */
    double wave_efficiency, tile_efficiency;
    /* Per resource: [0] math FLOP/s, [1] shared memory, [2] L2, [3] DRAM
     * bytes/s; the concurrency-limited ones (effective_roofline) or 0. */
    double raw_rates_per_s[4];
    double effective_rates_per_s[4];
} opm_gemm_details;

/* The prediction for one op on one hardware (contract §3).  A plain value
 * that owns everything in it: the names are copies, so the profile stays
 * valid after the op, hardware and model it came from are freed. */
typedef struct opm_profile {
    char name[OPM_PROFILE_NAME_MAX];
    opm_kind kind;
    opm_phase phase;
    char model[OPM_PROFILE_MODEL_MAX];
    char hardware[OPM_PROFILE_HARDWARE_MAX];
    double latency_s;
    uint64_t flops;
    uint64_t matrix_flops;
    uint64_t vector_flops;
    opm_engine engine;
    opm_bound bound;
    double arithmetic_intensity;       /* FLOPs per byte of hbm traffic */
    double compute_time_s;
    double overhead_s;
    size_t level_count;
    opm_level_access levels[OPM_MAX_LEVELS];
    uint64_t input_bytes, weight_bytes, output_bytes, workspace_bytes;
    double energy_j;
    double compute_energy_j;
    double static_energy_j;
    double average_power_w;            /* energy_j / latency_s */
    size_t diag_count;
    opm_diag diags[OPM_MAX_DIAGS];
    /* Appended after 0.1.0.  Diagnostics the model produced past OPM_MAX_DIAGS: not in
     * diags[], counted here and reported as "diagnostics_dropped" in the
     * JSON, so none is lost silently. */
    size_t diags_dropped;
    /* 1 when the requested model has no kernel model for this op and the
     * roofline answered (model still names the requested model; the
     * reason is diagnostics.fallback). */
    int fell_back;
    /* 1 when `gemm` holds the typed details of a tile-modelled GEMM. */
    int has_gemm;
    opm_gemm_details gemm;
} opm_profile;

typedef struct opm_model {
    const char *name;
    const char *description;
    int (*predict)(const opm_op *op, const opm_hardware *hw, opm_profile *out, opm_error *err);
} opm_model;

/* NULL (and OPM_ENOTFOUND in err if given) for an unknown name. */
OPM_API const opm_model *opm_model_find(const char *name);
OPM_API size_t opm_model_count(void);
OPM_API const opm_model *opm_model_at(size_t i);

/* Convenience: find + predict.  Returns 0 or a status. */
OPM_API int opm_predict(const char *model, const opm_op *op, const opm_hardware *hw, opm_profile *out,
                        opm_error *err);

/* Diagnostics lookup: the entry with `key`, NULL if none. */
OPM_API const opm_diag *opm_profile_diag(const opm_profile *p, const char *key);
/* The diagnostics kept in the profile and the i-th of them (NULL past the
 * end); opm_profile_diags_dropped() counts those that did not fit. */
OPM_API size_t opm_profile_diag_count(const opm_profile *p);
OPM_API const opm_diag *opm_profile_diag_at(const opm_profile *p, size_t i);
OPM_API size_t opm_profile_diags_dropped(const opm_profile *p);
/* The typed GEMM details, NULL when the prediction has none (not a GEMM,
 * the roofline model, or a fallback). */
OPM_API const opm_gemm_details *opm_profile_gemm(const opm_profile *p);
/* sizeof(opm_profile) in the library: a program compares it with its own
 * sizeof to detect headers of another layout (see docs/abi.md). */
OPM_API size_t opm_profile_size(void);

#ifdef __cplusplus
}
#endif
#endif
