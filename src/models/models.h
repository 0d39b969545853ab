/* models.h — the predict entries of the built-in models. */
#ifndef OPM_MODELS_H
#define OPM_MODELS_H

#include <stddef.h>
#include <string.h>
#include "../core/internal.h"
#include "opmodel/opmodel.h"

/* Appends a diagnostic to a profile (ignored past OPM_MAX_DIAGS).  Keys
 * must be string literals: their size is known at compile time, so the copy
 * is a few moves — predict() runs millions of times a second. */
#define opm_diag_num(p, key, v) opm_diag_num_n(p, "" key "", sizeof(key), v)
#define opm_diag_text(p, key, v) opm_diag_text_n(p, "" key "", sizeof(key), v)

static inline void opm_diag_num_n(opm_profile *p, const char *key, size_t size, double v)
{
    if (p->diag_count >= OPM_MAX_DIAGS) return;
    opm_diag *d = &p->diags[p->diag_count++];
    memcpy(d->key, key, size < sizeof d->key ? size : sizeof d->key);
    d->key[sizeof d->key - 1] = '\0';
    d->is_text = 0;
    d->number = v;
    d->text[0] = '\0';
}

static inline void opm_diag_text_n(opm_profile *p, const char *key, size_t size, const char *v)
{
    if (p->diag_count >= OPM_MAX_DIAGS) return;
    opm_diag *d = &p->diags[p->diag_count++];
    memcpy(d->key, key, size < sizeof d->key ? size : sizeof d->key);
    d->key[sizeof d->key - 1] = '\0';
    d->is_text = 1;
    d->number = 0;
    size_t n = strnlen(v, sizeof d->text - 1);
    memcpy(d->text, v, n);
    d->text[n] = '\0';
}

/* Clears a profile's head and fills what every model copies from the op
 * and its counts (name, kind, phase, model, hardware, FLOPs, footprint);
 * the caller fills the times, levels, energy and diagnostics. */
static inline void opm_profile_head(opm_profile *p, const opm_op *op, const opm_hardware *hw, const char *model,
                                    const opm_counts *c)
{
    memset(p, 0, offsetof(opm_profile, diags));
    p->name = opm_op_name(op);
    p->kind = opm_op_kind(op);
    p->phase = opm_op_phase(op);
    p->model = model;
    p->hardware = opm_hardware_name(hw);
    p->matrix_flops = c->matrix_flops;
    p->vector_flops = c->vector_flops;
    p->flops = c->matrix_flops + c->vector_flops;
    p->input_bytes = c->input_bytes;
    p->weight_bytes = c->weight_bytes;
    p->output_bytes = c->output_bytes;
    p->workspace_bytes = c->workspace_bytes;
}

int opm_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);
/* Tile-, wave- and cache-aware GEMM models (gemm_tiled.c, gemm_effective.c);
 * other kinds fall back to the roofline. */
int opm_extended_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);
int opm_effective_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);

#endif
