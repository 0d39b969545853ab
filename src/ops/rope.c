/* rope.c — rotary position embedding (in progress). */
#include "kind.h"

OPM_KIND_PENDING(opm_kind_rope, OPM_KIND_ROPE, "rope");
