/* types.c — names of the small vocabularies (dtypes, kinds, phases, roles,
 * engines, bounds) and dtype sizes. */
#include <string.h>
#include "internal.h"

/* NULL-terminated, with the "fp8" alias last, for parsers and suggestions. */
const char *const opm_dtype_name_list[OPM_DTYPE_COUNT + 2] = {
    "fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "int4", "fp4_e2m1",
    "int32", "int64", "bool", "fp8", NULL,
};
#define dtype_names opm_dtype_name_list
/* tf32 is stored as 32-bit floats; only the tensor math is reduced. */
static const unsigned dtype_bits[OPM_DTYPE_COUNT] = {64, 32, 32, 16, 16, 8, 8, 8, 4, 4, 32, 64, 8};

unsigned opm_dtype_bits(opm_dtype dt) { return (unsigned)dt < OPM_DTYPE_COUNT ? dtype_bits[dt] : 0; }
double opm_dtype_bytes(opm_dtype dt) { return opm_dtype_bits(dt) / 8.0; }
const char *opm_dtype_name(opm_dtype dt)
{
    return (unsigned)dt < OPM_DTYPE_COUNT ? dtype_names[dt] : "?";
}

int opm_dtype_parse(const char *name, opm_dtype *out)
{
    /* The first byte before strcmp: every short-form line parses a dtype. */
    for (int i = 0; i < OPM_DTYPE_COUNT; i++)
        if (name[0] == dtype_names[i][0] && strcmp(name, dtype_names[i]) == 0) { *out = (opm_dtype)i; return 0; }
    if (strcmp(name, "fp8") == 0) { *out = OPM_FP8_E4M3; return 0; }
    return -1;
}

const char *const opm_kind_name_list[OPM_KIND_COUNT + 1] = {
    "gemm", "batched_gemm", "attention_prefill", "attention_decode", "softmax", "layernorm",
    "rmsnorm", "elementwise", "reduction", "embedding", "copy", "grouped_gemm", "conv", "attention",
    "batchnorm", "groupnorm", "instancenorm", "cross_entropy", "rope", "causal_conv1d", "mamba_ssd",
    "moe_dispatch", "moe_combine", "fused_moe", NULL,
};
#define kind_names opm_kind_name_list
const char *opm_kind_name(opm_kind k)
{
    return (unsigned)k < OPM_KIND_COUNT ? kind_names[k] : k == OPM_KIND_USER ? "user" : "?";
}
int opm_kind_parse(const char *name, opm_kind *out)
{
    for (int i = 0; i < OPM_KIND_COUNT; i++)
        if (strcmp(name, kind_names[i]) == 0) { *out = (opm_kind)i; return 0; }
    return -1;
}

const char *const opm_phase_name_list[OPM_PHASE_COUNT + 1] = {
    "inference", "train_fwd", "train_bwd", "prefill", "decode", NULL,
};
#define phase_names opm_phase_name_list
const char *opm_phase_name(opm_phase p) { return (unsigned)p < OPM_PHASE_COUNT ? phase_names[p] : "?"; }
int opm_phase_parse(const char *name, opm_phase *out)
{
    for (int i = 0; i < OPM_PHASE_COUNT; i++)
        if (strcmp(name, phase_names[i]) == 0) { *out = (opm_phase)i; return 0; }
    return -1;
}

const char *const opm_role_name_list[OPM_ROLE_COUNT + 1] = {"input", "weight", "output", "grad", "workspace", NULL};
#define role_names opm_role_name_list
const char *opm_role_name(opm_role r) { return (unsigned)r < OPM_ROLE_COUNT ? role_names[r] : "?"; }
int opm_role_parse(const char *name, opm_role *out)
{
    for (int i = 0; i < OPM_ROLE_COUNT; i++)
        if (strcmp(name, role_names[i]) == 0) { *out = (opm_role)i; return 0; }
    return -1;
}

const char *opm_engine_name(opm_engine e)
{
    switch (e) {
    case OPM_ENGINE_VECTOR: return "vector";
    case OPM_ENGINE_TENSOR: return "tensor";
    default: return "none";
    }
}

const char *opm_bound_name(opm_bound b)
{
    switch (b) {
    case OPM_BOUND_COMPUTE: return "compute";
    case OPM_BOUND_MEMORY: return "memory";
    default: return "overhead";
    }
}

const char *opm_version(void) { return OPM_VERSION_STRING; }
long opm_version_number(void) { return OPM_VERSION_NUMBER; }
