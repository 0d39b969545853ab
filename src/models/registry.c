/* registry.c — the models addressed by name: the built-in table (static
 * and immutable) and opm_registry, a caller-owned set of the built-in
 * models plus the caller's; opm_predict and the profile accessors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "../ops/kind.h"
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

/* A user model: the opm_model the registry hands out, with the strings it
 * points to. */
typedef struct user_model {
    opm_model m;
    char name[OPM_PROFILE_MODEL_MAX];
    char *description;
} user_model;

/* A user kind: the caller's table, with its own copy of the name. */
typedef struct user_kind {
    opm_kind_def def;
    char name[32];
} user_kind;

struct opm_registry {
    size_t n, cap;
    user_model **user;
    size_t n_kinds, cap_kinds;
    user_kind **kinds;
};

/* 1 to cap - 1 characters of [a-z0-9_]. */
static int valid_name(const char *name, size_t cap)
{
    size_t len = name ? strlen(name) : 0;
    int ok = len > 0 && len < cap;
    for (size_t i = 0; ok && i < len; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_';
    return ok;
}

/* Room for one more pointer in *arr (doubling). */
static int grow(void ***arr, size_t n, size_t *cap)
{
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 4;
    void **p = realloc(*arr, c * sizeof *p);
    if (!p) return -1;
    *arr = p;
    *cap = c;
    return 0;
}

opm_registry *opm_registry_new(opm_error *err)
{
    opm_error_clear(err);
    opm_registry *r = calloc(1, sizeof *r);
    if (!r) opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    return r;
}

void opm_registry_free(opm_registry *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->user[i]->description);
        free(r->user[i]);
    }
    free(r->user);
    for (size_t i = 0; i < r->n_kinds; i++) free(r->kinds[i]);
    free(r->kinds);
    free(r);
}

const opm_kind_def *opm_registry_find_kind(const opm_registry *r, const char *name)
{
    for (size_t i = 0; r && name && i < r->n_kinds; i++)
        if (strcmp(r->kinds[i]->name, name) == 0) return &r->kinds[i]->def;
    return NULL;
}

int opm_registry_add_kind(opm_registry *r, const opm_kind_def *def, opm_error *err)
{
    opm_error_clear(err);
    if (!r || !def) return opm_err(err, OPM_EINVAL, "kind", "expected a registry and a kind, got NULL");
    opm_kind builtin;
    if (!valid_name(def->name, sizeof r->kinds[0]->name))
        return opm_err(err, OPM_EINVAL, "kind.name", "expected 1 to 31 characters of [a-z0-9_], got '%.40s'",
                       def->name ? def->name : "(null)");
    if (opm_kind_parse(def->name, &builtin) == 0 || opm_registry_find_kind(r, def->name))
        return opm_err(err, OPM_EINVAL, "kind.name", "expected a new kind name, '%s' is taken", def->name);
    if (def->kind != OPM_KIND_USER)
        return opm_err(err, OPM_EINVAL, "kind.kind", "expected OPM_KIND_USER for a user kind, got %d", (int)def->kind);
    if (!def->count || !def->validate)
        return opm_err(err, OPM_EINVAL, def->count ? "kind.validate" : "kind.count", "expected a function, got NULL");
    if (def->from_short || def->short_keys)
        return opm_err(err, OPM_EINVAL, "kind.from_short", "expected NULL: user kinds have no short form");
    for (int i = 0; i < OPM_ROLE_COUNT; i++)
        if (def->max_tensors[i] < -1)
            return opm_err(err, OPM_EINVAL, "kind.max_tensors", "expected -1 (no limit) or a count, got %d",
                           def->max_tensors[i]);
    user_kind *k = calloc(1, sizeof *k);
    if (!k || grow((void ***)&r->kinds, r->n_kinds, &r->cap_kinds)) {
        free(k);
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    k->def = *def;
    strcpy(k->name, def->name);
    k->def.name = k->name;
    r->kinds[r->n_kinds++] = k;
    return 0;
}

opm_op *opm_registry_op_new(const opm_registry *r, const char *kind, const char *name, opm_phase phase,
                            opm_error *err)
{
    opm_error_clear(err);
    opm_kind k;
    const opm_kind_def *def = kind && opm_kind_parse(kind, &k) == 0 ? opm_kind_def_get(k)
                                                                    : opm_registry_find_kind(r, kind);
    if (!def) {
        opm_err(err, OPM_ENOTFOUND, "kind", "no op kind named '%.40s' (see `opmodel ops`)", kind ? kind : "(null)");
        return NULL;
    }
    return opm_op_new_def(def, name, phase, err);
}

size_t opm_registry_model_count(const opm_registry *r) { return opm_model_count() + (r ? r->n : 0); }

const opm_model *opm_registry_model_at(const opm_registry *r, size_t i)
{
    size_t nb = opm_model_count();
    if (i < nb) return &models[i];
    return r && i - nb < r->n ? &r->user[i - nb]->m : NULL;
}

const opm_model *opm_registry_find_model(const opm_registry *r, const char *name)
{
    if (!name) return NULL;
    const opm_model *m = opm_model_find(name);
    for (size_t i = 0; !m && r && i < r->n; i++)
        if (strcmp(r->user[i]->name, name) == 0) m = &r->user[i]->m;
    return m;
}

int opm_model_register(opm_registry *r, const opm_model *model, opm_error *err)
{
    opm_error_clear(err);
    if (!r || !model) return opm_err(err, OPM_EINVAL, "model", "expected a registry and a model, got NULL");
    const char *name = model->name ? model->name : "";
    size_t len = strlen(name);
    if (!valid_name(name, OPM_PROFILE_MODEL_MAX))
        return opm_err(err, OPM_EINVAL, "model.name", "expected 1 to %d characters of [a-z0-9_], got '%.40s'",
                       OPM_PROFILE_MODEL_MAX - 1, name);
    if (!model->predict) return opm_err(err, OPM_EINVAL, "model.predict", "expected a predict function, got NULL");
    if (opm_registry_find_model(r, name))
        return opm_err(err, OPM_EINVAL, "model.name", "expected a new name, '%s' is already registered", name);
    if (grow((void ***)&r->user, r->n, &r->cap)) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    user_model *u = calloc(1, sizeof *u);
    const char *desc = model->description ? model->description : "";
    if (!u || !(u->description = malloc(strlen(desc) + 1))) {
        free(u);
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    memcpy(u->name, name, len + 1);
    strcpy(u->description, desc);
    u->m.name = u->name;
    u->m.description = u->description;
    u->m.predict = model->predict;
    r->user[r->n++] = u;
    return 0;
}

int opm_predict_with(const opm_registry *r, const char *model, const opm_op *op, const opm_hardware *hw,
                     opm_profile *out, opm_error *err)
{
    opm_error_clear(err);
    const opm_model *m = model ? opm_model_find(model) : NULL;
    const opm_model *user = m ? NULL : opm_registry_find_model(r, model);
    if (user) m = user;
    if (!m)
        return opm_err(err, OPM_ENOTFOUND, "model", "no model named '%s' (see `opmodel models`)",
                       model ? model : "(null)");
    int rc = m->predict(op, hw, out, err);
    if (rc) return rc;
    if (user) /* whatever the user's predict wrote there */
        opm_profile_copy_name(out->model, sizeof out->model, m->name);
    return opm_profile_check_finite(out, err);
}

int opm_predict(const char *model, const opm_op *op, const opm_hardware *hw, opm_profile *out, opm_error *err)
{
    return opm_predict_with(NULL, model, op, hw, out, err);
}

int opm_profile_init(opm_profile *p, const opm_op *op, const opm_hardware *hw, const char *model, opm_error *err)
{
    opm_error_clear(err);
    opm_counts c;
    memset(p, 0, sizeof *p);
    int rc = opm_op_count(op, &c, err);
    if (rc) return rc;
    opm_profile_head(p, op, hw, model, &c);
    if (p->flops < c.matrix_flops) return opm_err(err, OPM_EOVERFLOW, NULL, "FLOP count overflows 64 bits");
    return 0;
}


const opm_diag *opm_profile_diag(const opm_profile *p, const char *key)
{
    for (size_t i = 0; i < p->diag_count && i < OPM_MAX_DIAGS; i++)
        if (strcmp(p->diags[i].key, key) == 0) return &p->diags[i];
    return NULL;
}

size_t opm_profile_diag_count(const opm_profile *p) { return p->diag_count < OPM_MAX_DIAGS ? p->diag_count : OPM_MAX_DIAGS; }

const opm_diag *opm_profile_diag_at(const opm_profile *p, size_t i)
{
    return i < opm_profile_diag_count(p) ? &p->diags[i] : NULL;
}

size_t opm_profile_diags_dropped(const opm_profile *p) { return p->diags_dropped; }

const opm_gemm_details *opm_profile_gemm(const opm_profile *p) { return p->has_gemm ? &p->gemm : NULL; }

size_t opm_profile_size(void) { return sizeof(opm_profile); }
