/* opmodel/registry.h — a set of models, the built-in ones plus the
 * caller's, without global state.
 *
 *     opm_registry *reg = opm_registry_new(&err);
 *     opm_model mine = {"my_model", "what it models", my_predict};
 *     opm_model_register(reg, &mine, &err);
 *     opm_predict_with(reg, "my_model", op, hw, &profile, &err);
 *     opm_trace_report *r = opm_trace_report_new_with(reg, trace, hw, "my_model", &err);
 *     opm_registry_free(reg);
 *
 * The registry copies what it is given (the name and description strings
 * too), so the caller's opm_model may be a temporary.  Pointers it returns
 * stay valid until opm_registry_free.  Register every model before the
 * registry is shared: lookups and predictions may then run from many
 * threads at once; opm_model_register must not run concurrently with
 * anything else on the same registry.  A user model's predict has the
 * contract of a built-in one (model.h): fill the whole profile (start with
 * opm_profile_init, or with a built-in model's prediction), return 0 or a
 * status with err filled.
 *
 * The registry also holds user op kinds (kind.h): opm_registry_add_kind,
 * then opm_registry_op_new makes ops of them (or of a built-in kind, by
 * name).  Such ops point into the registry, which must outlive them. */
#ifndef OPMODEL_REGISTRY_H
#define OPMODEL_REGISTRY_H

#include "kind.h"
#include "model.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opm_registry opm_registry;

/* A registry holding the built-in models (opm_model_at order). */
OPM_API opm_registry *opm_registry_new(opm_error *err);
OPM_API void opm_registry_free(opm_registry *r);

/* Adds a model.  Its name is 1 to OPM_PROFILE_MODEL_MAX - 1 bytes of
 * [a-z0-9_], not already in the registry; predict is not NULL. */
OPM_API int opm_model_register(opm_registry *r, const opm_model *model, opm_error *err);

/* NULL r means the built-in models alone (as opm_model_find). */
OPM_API const opm_model *opm_registry_find_model(const opm_registry *r, const char *name);
OPM_API size_t opm_registry_model_count(const opm_registry *r);
OPM_API const opm_model *opm_registry_model_at(const opm_registry *r, size_t i);

/* opm_predict with the models of r (NULL: the built-in ones).  The
 * profile's model field is the registered name whatever predict wrote. */
OPM_API int opm_predict_with(const opm_registry *r, const char *model, const opm_op *op, const opm_hardware *hw,
                             opm_profile *out, opm_error *err);

/* Adds a user op kind.  def->kind must be OPM_KIND_USER, def->name 1 to
 * 31 characters of [a-z0-9_] that no built-in or registered kind has,
 * def->count and def->validate not NULL, def->from_short NULL (user kinds
 * have no short form). */
OPM_API int opm_registry_add_kind(opm_registry *r, const opm_kind_def *def, opm_error *err);
/* A registered user kind by name, NULL if none (built-in kinds are not
 * listed: see opm_kind_parse). */
OPM_API const opm_kind_def *opm_registry_find_kind(const opm_registry *r, const char *name);
/* A new op of kind `kind` (a built-in kind's name or a registered user
 * kind's), as opm_op_new; OPM_ENOTFOUND for an unknown name. */
OPM_API opm_op *opm_registry_op_new(const opm_registry *r, const char *kind, const char *name, opm_phase phase,
                                    opm_error *err);

/* opm_trace_report_new whose roofline columns come from a model of r. */
OPM_API opm_trace_report *opm_trace_report_new_with(const opm_registry *r, const opm_trace *t,
                                                    const opm_hardware *hw, const char *model, opm_error *err);

/* For a user model: clears p and fills what every model copies from the op
 * and hardware (names, kind, phase, FLOPs, footprint from opm_op_count).
 * Returns 0 or the status of counting the op. */
OPM_API int opm_profile_init(opm_profile *p, const opm_op *op, const opm_hardware *hw, const char *model,
                             opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
