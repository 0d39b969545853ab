/* models.h — the predict entries of the built-in models. */
#ifndef OPM_MODELS_H
#define OPM_MODELS_H

#include <stddef.h>
#include "opmodel/opmodel.h"

int opm_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);
/* Tile-, wave- and cache-aware GEMM models (gemm_tiled.c, gemm_effective.c);
 * other kinds fall back to the roofline. */
int opm_extended_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);
int opm_effective_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);

#endif
