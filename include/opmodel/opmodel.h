/* opmodel/opmodel.h — the one header to include.
 *
 * opmodel predicts how an accelerator executes one operation (latency,
 * FLOPs, bytes per memory level, bound, energy, footprint) from shapes,
 * dtypes and a hardware description, without running anything.
 *
 *     opm_error err;
 *     opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
 *     opm_op *op = opm_op_gemm(4096, 4096, 4096, OPM_BF16, &err);
 *     opm_profile p;
 *     if (opm_predict("roofline", op, hw, &p, &err) == 0)
 *         printf("%g s, %s-bound\n", p.latency_s, opm_bound_name(p.bound));
 *     opm_op_free(op);
 *     opm_hardware_free(hw);
 *
 * Rules that hold everywhere: objects from *_new / builders / loaders are
 * owned by the caller and released with the matching *_free; nothing is
 * global and mutable, every function is reentrant, and immutable objects
 * (ops, hardware, models) may be shared across threads.  Errors are values
 * (error.h); the library never prints, never aborts. */
#ifndef OPMODEL_OPMODEL_H
#define OPMODEL_OPMODEL_H

#include "error.h"
#include "types.h"
#include "op.h"
#include "hardware.h"
#include "model.h"
#include "io.h"
#include "trace.h"
#include "trace_diff.h"
#include "batch.h"
#include "kind.h"
#include "registry.h"
#include "workload.h"
/* Generated from the meson project version (OPM_VERSION_MAJOR/MINOR/PATCH,
 * OPM_VERSION_STRING, OPM_VERSION_NUMBER). */
#include <opmodel/version.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The library's version, OPM_VERSION_STRING when it was built ("0.1.0"). */
OPM_API const char *opm_version(void);
/* The library's OPM_VERSION_NUMBER (0.1.0 is 100).  A program compiled
 * against other headers can compare it with its own OPM_VERSION_NUMBER. */
OPM_API long opm_version_number(void);
#ifdef __cplusplus
}
#endif
#endif
