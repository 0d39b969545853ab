/* registry.c — the table of models, addressed by name.  Static and
 * immutable: nothing here changes at run time. */
#include <math.h>
#include <string.h>
#include "../core/internal.h"
#include "models.h"

static const opm_model models[] = {
    {"roofline", "max over engines and memory levels of work / (peak × utilization), plus fixed overhead",
     opm_roofline_predict},
    {"extended_roofline",
     "GEMM: CTA tiles, waves over SMs, occupancy, K-loop pipeline, L2 reuse, split-K and epilogue; "
     "other kinds as roofline",
     opm_extended_roofline_predict},
    {"effective_roofline",
     "GEMM: same tiling and traffic, one concurrency-limited phase-aware ceiling per wave; "
     "other kinds as roofline",
     opm_effective_roofline_predict},
};

size_t opm_model_count(void) { return sizeof models / sizeof models[0]; }
const opm_model *opm_model_at(size_t i) { return i < opm_model_count() ? &models[i] : NULL; }

const opm_model *opm_model_find(const char *name)
{
    for (size_t i = 0; i < opm_model_count(); i++)
        if (strcmp(models[i].name, name) == 0) return &models[i];
    return NULL;
}

/* Refuses a prediction holding a non-finite number (hardware figures such
 * as a 1e-320 peak make it inf or NaN): an error, not a printed null. */
static int opm_profile_check_finite(const opm_profile *p, opm_error *err)
{
    const char *bad = !isfinite(p->latency_s) ? "latency_s"
                    : !isfinite(p->arithmetic_intensity) ? "arithmetic_intensity"
                    : !isfinite(p->compute_time_s) ? "compute_time_s"
                    : !isfinite(p->overhead_s) ? "overhead_s"
                    : !isfinite(p->energy_j) ? "energy_j"
                    : !isfinite(p->compute_energy_j) ? "energy_breakdown.compute_j"
                    : !isfinite(p->static_energy_j) ? "energy_breakdown.static_j"
                    : !isfinite(p->average_power_w) ? "average_power_w" : NULL;
    for (size_t i = 0; !bad && i < p->level_count && i < OPM_MAX_LEVELS; i++)
        if (!isfinite(p->levels[i].energy_j) || !isfinite(p->levels[i].time_s)) bad = p->levels[i].name;
    if (bad)
        return opm_err(err, OPM_EINVAL, bad,
                       "the prediction is not a finite number: the hardware's figures (peaks, bandwidths, "
                       "energies, clocks) are out of range for this op");
    return 0;
}

int opm_predict(const char *model, const opm_op *op, const opm_hardware *hw, opm_profile *out, opm_error *err)
{
    opm_error_clear(err);
    const opm_model *m = opm_model_find(model);
    if (!m) return opm_err(err, OPM_ENOTFOUND, "model", "no model named '%s' (see `opmodel models`)", model);
    int rc = m->predict(op, hw, out, err);
    return rc ? rc : opm_profile_check_finite(out, err);
}


const opm_diag *opm_profile_diag(const opm_profile *p, const char *key)
{
    for (size_t i = 0; i < p->diag_count; i++)
        if (strcmp(p->diags[i].key, key) == 0) return &p->diags[i];
    return NULL;
}
