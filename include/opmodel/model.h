/* opmodel/model.h — predictions: the profile record and the model registry.
 *
 * A model is a static, immutable table entry: `opm_model_find("roofline")`
 * returns a pointer that lives as long as the program and needs no freeing.
 * `model->predict(op, hw, &profile, &err)` fills a caller-owned profile; it
 * does not allocate, keeps no state between calls and is safe to call from
 * many threads at once on shared op and hardware objects. */
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

/* The prediction for one op on one hardware (contract §3).  A plain value:
 * its string pointers borrow from the op, hardware and model it came from. */
typedef struct opm_profile {
    const char *name;
    opm_kind kind;
    opm_phase phase;
    const char *model;
    const char *hardware;
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

#ifdef __cplusplus
}
#endif
#endif
