/* opmodel/types.h — the small vocabularies: dtypes, op kinds, phases,
 * tensor roles, engines and bounds, with their canonical text names. */
#ifndef OPMODEL_TYPES_H
#define OPMODEL_TYPES_H

#include <stdint.h>
#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opm_dtype {
    OPM_FP64, OPM_FP32, OPM_TF32, OPM_FP16, OPM_BF16,
    OPM_FP8_E4M3, OPM_FP8_E5M2, OPM_INT8, OPM_INT4, OPM_FP4_E2M1,
    OPM_INT32, OPM_INT64, OPM_BOOL,
    OPM_DTYPE_COUNT
} opm_dtype;

/* Storage size in bits of one element (4 for int4/fp4_e2m1, 32 for tf32). */
OPM_API unsigned opm_dtype_bits(opm_dtype dt);
/* Bytes per element as a double: 0.5 for the 4-bit types. */
OPM_API double opm_dtype_bytes(opm_dtype dt);
/* Canonical name ("bf16"); "?" for an out-of-range value. */
OPM_API const char *opm_dtype_name(opm_dtype dt);
/* Parses a dtype name; "fp8" is accepted as fp8_e4m3.  Returns 0 on success. */
OPM_API int opm_dtype_parse(const char *name, opm_dtype *out);

typedef enum opm_kind {
    OPM_KIND_GEMM,
    OPM_KIND_BATCHED_GEMM,
    OPM_KIND_ATTENTION_PREFILL,
    OPM_KIND_ATTENTION_DECODE,
    OPM_KIND_SOFTMAX,
    OPM_KIND_LAYERNORM,
    OPM_KIND_RMSNORM,
    OPM_KIND_ELEMENTWISE,
    OPM_KIND_REDUCTION,
    OPM_KIND_EMBEDDING,
    OPM_KIND_COPY,
    OPM_KIND_GROUPED_GEMM,
    OPM_KIND_CONV,
    OPM_KIND_ATTENTION,
    OPM_KIND_BATCHNORM,
    OPM_KIND_GROUPNORM,
    OPM_KIND_INSTANCENORM,
    OPM_KIND_CROSS_ENTROPY,
    OPM_KIND_ROPE,
    OPM_KIND_CAUSAL_CONV1D,
    OPM_KIND_MAMBA_SSD,
    OPM_KIND_MOE_DISPATCH,
    OPM_KIND_MOE_COMBINE,
    OPM_KIND_FUSED_MOE,
    OPM_KIND_COUNT
} opm_kind;

OPM_API const char *opm_kind_name(opm_kind k);
OPM_API int opm_kind_parse(const char *name, opm_kind *out);

typedef enum opm_phase {
    OPM_PHASE_INFERENCE,   /* the default */
    OPM_PHASE_TRAIN_FWD,
    OPM_PHASE_TRAIN_BWD,   /* the backward pass: gradients of inputs and weights */
    OPM_PHASE_PREFILL,
    OPM_PHASE_DECODE,
    OPM_PHASE_COUNT
} opm_phase;

OPM_API const char *opm_phase_name(opm_phase p);
OPM_API int opm_phase_parse(const char *name, opm_phase *out);

typedef enum opm_role {
    OPM_ROLE_INPUT, OPM_ROLE_WEIGHT, OPM_ROLE_OUTPUT, OPM_ROLE_GRAD, OPM_ROLE_WORKSPACE,
    OPM_ROLE_COUNT
} opm_role;

OPM_API const char *opm_role_name(opm_role r);
OPM_API int opm_role_parse(const char *name, opm_role *out);

typedef enum opm_engine { OPM_ENGINE_VECTOR, OPM_ENGINE_TENSOR, OPM_ENGINE_NONE } opm_engine;
OPM_API const char *opm_engine_name(opm_engine e);

typedef enum opm_bound { OPM_BOUND_COMPUTE, OPM_BOUND_MEMORY, OPM_BOUND_OVERHEAD } opm_bound;
OPM_API const char *opm_bound_name(opm_bound b);

#ifdef __cplusplus
}
#endif
#endif
