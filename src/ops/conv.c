/* conv.c — convolution (in progress). */
#include "kind.h"

OPM_KIND_PENDING(opm_kind_conv, OPM_KIND_CONV, "conv");
