/* ssm.c — sequence-model kernels (in progress). */
#include "kind.h"

OPM_KIND_PENDING(opm_kind_causal_conv1d, OPM_KIND_CAUSAL_CONV1D, "causal_conv1d");
OPM_KIND_PENDING(opm_kind_mamba_ssd, OPM_KIND_MAMBA_SSD, "mamba_ssd");
