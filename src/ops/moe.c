/* moe.c — mixture-of-experts kernels (in progress). */
#include "kind.h"

OPM_KIND_PENDING(opm_kind_moe_dispatch, OPM_KIND_MOE_DISPATCH, "moe_dispatch");
OPM_KIND_PENDING(opm_kind_moe_combine, OPM_KIND_MOE_COMBINE, "moe_combine");
OPM_KIND_PENDING(opm_kind_fused_moe, OPM_KIND_FUSED_MOE, "fused_moe");
