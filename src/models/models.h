/* models.h — the predict entries of the built-in models. */
#ifndef OPM_MODELS_H
#define OPM_MODELS_H

#include <stddef.h>
#include <string.h>
#include "../core/internal.h"
#include "opmodel/opmodel.h"
#include "energy.h"

/* Appends a diagnostic to a profile (past OPM_MAX_DIAGS, counted in
 * diags_dropped).  Keys
 * must be string literals: their size is known at compile time, so the copy
 * is a few moves — predict() runs millions of times a second. */
#define opm_diag_num(p, key, v) opm_diag_num_n(p, "" key "", sizeof(key), v)
#define opm_diag_text(p, key, v) opm_diag_text_n(p, "" key "", sizeof(key), v)

static inline void opm_diag_num_n(opm_profile *p, const char *key, size_t size, double v)
{
    if (p->diag_count >= OPM_MAX_DIAGS) {
        p->diags_dropped++;
        return;
    }
    opm_diag *d = &p->diags[p->diag_count++];
    memcpy(d->key, key, size < sizeof d->key ? size : sizeof d->key);
    d->key[sizeof d->key - 1] = '\0';
    d->is_text = 0;
    d->number = v;
    d->text[0] = '\0';
}

/* The next diagnostic, keyed and marked as text; NULL (and counted as
 * dropped) once the profile is full. */
static inline opm_diag *opm_diag_text_slot(opm_profile *p, const char *key, size_t size)
{
    if (p->diag_count >= OPM_MAX_DIAGS) {
        p->diags_dropped++;
        return NULL;
    }
    opm_diag *d = &p->diags[p->diag_count++];
    memcpy(d->key, key, size < sizeof d->key ? size : sizeof d->key);
    d->key[sizeof d->key - 1] = '\0';
    d->is_text = 1;
    d->number = 0;
    return d;
}

static inline void opm_diag_text_n(opm_profile *p, const char *key, size_t size, const char *v)
{
    opm_diag *d = opm_diag_text_slot(p, key, size);
    if (!d) return;
    size_t n = strnlen(v, sizeof d->text - 1);
    memcpy(d->text, v, n);
    d->text[n] = '\0';
}

/* Text diagnostics whose copy needs no strnlen + memcpy (two library calls
 * that cost more than the few bytes they move, ten times a prediction):
 * opm_diag_text_lit takes a string literal (its size known at compile
 * time), opm_diag_text_block a buffer of sizeof(opm_diag.text) bytes, all
 * initialised and terminated within (the bytes after its end are copied
 * too). */
#define opm_diag_text_lit(p, key, lit) opm_diag_text_fixed(p, "" key "", sizeof(key), "" lit "", sizeof(lit))
#define opm_diag_text_block(p, key, buf) opm_diag_text_fixed(p, "" key "", sizeof(key), buf, OPM_DIAG_TEXT_BYTES)
#define OPM_DIAG_TEXT_BYTES sizeof(((opm_diag *)0)->text)

static inline void opm_diag_text_fixed(opm_profile *p, const char *key, size_t size, const char *v, size_t vsize)
{
    opm_diag *d = opm_diag_text_slot(p, key, size);
    if (!d) return;
    memcpy(d->text, v, vsize < sizeof d->text ? vsize : sizeof d->text);
    d->text[sizeof d->text - 1] = '\0';
}

/* Copies a name into a profile's fixed buffer, cut to fit: the profile owns
 * its strings so it outlives the op and hardware. */
static inline void opm_profile_copy_name(char *dst, size_t cap, const char *src)
{
    /* A byte loop, not strnlen + memcpy: the names are a few bytes and two
     * library calls per name cost more than the copy (predict runs
     * millions of times a second). */
    size_t n = 0;
    if (src)
        for (; n + 1 < cap && src[n]; n++) dst[n] = src[n];
    dst[n] = '\0';
}

/* The fields after diags[] (appended since 0.2), which the models' partial
 * clears do not reach. */
static inline void opm_profile_clear_tail(opm_profile *p)
{
    p->diags_dropped = 0;
    p->fell_back = 0;
    p->has_gemm = 0;
}

/* The head every model fills: the names, kind and phase. */
static inline void opm_profile_names(opm_profile *p, const opm_op *op, const opm_hardware *hw, const char *model)
{
    opm_profile_copy_name(p->name, sizeof p->name, opm_op_name(op));
    p->kind = opm_op_kind(op);
    p->phase = opm_op_phase(op);
    opm_profile_copy_name(p->model, sizeof p->model, model);
    opm_profile_copy_name(p->hardware, sizeof p->hardware, opm_hardware_name(hw));
}

/* Clears a profile's head and fills what every model copies from the op
 * and its counts (name, kind, phase, model, hardware, FLOPs, footprint);
 * the caller fills the times, levels, energy and diagnostics. */
static inline void opm_profile_head(opm_profile *p, const opm_op *op, const opm_hardware *hw, const char *model,
                                    const opm_counts *c)
{
    memset((char *)p + offsetof(opm_profile, latency_s), 0,
           offsetof(opm_profile, diags) - offsetof(opm_profile, latency_s));
    opm_profile_clear_tail(p);
    opm_profile_names(p, op, hw, model);
    p->matrix_flops = c->matrix_flops;
    p->vector_flops = c->vector_flops;
    p->flops = c->matrix_flops + c->vector_flops;
    p->input_bytes = c->input_bytes;
    p->weight_bytes = c->weight_bytes;
    p->output_bytes = c->output_bytes;
    p->workspace_bytes = c->workspace_bytes;
}

/* Bytes and time of one memory level in a kernel model's prediction. */
typedef struct opm_level_traffic {
    double read_bytes, write_bytes, time_s;
} opm_level_traffic;

/* Fills the per-level accesses (hbm and l2 from the model's traffic, every
 * other level but registers with the op's own bytes), the energy (the
 * shared model, energy.c, charged for `work`) and the DRAM arithmetic
 * intensity; latency_s, compute_time_s and engine must be set. */
static inline void opm_profile_levels(opm_profile *p, const opm_hardware *hw, const opm_level_traffic *hbm,
                                      const opm_level_traffic *l2, double op_read_bytes, double op_write_bytes,
                                      const opm_energy_in *work)
{
    size_t n = opm_hardware_level_count(hw);
    for (size_t i = 0; i < n && p->level_count < OPM_MAX_LEVELS; i++) {
        const opm_memory_level *l = opm_hardware_level(hw, i);
        if (!strcmp(l->name, "register")) continue;
        opm_level_access *acc = &p->levels[p->level_count++];
        memcpy(acc->name, l->name, sizeof acc->name);
        opm_level_traffic own = {op_read_bytes, op_write_bytes, 0};
        const opm_level_traffic *t = !strcmp(l->name, "hbm") ? hbm : !strcmp(l->name, "l2") ? l2 : &own;
        acc->read_bytes = (uint64_t)t->read_bytes;
        acc->write_bytes = (uint64_t)t->write_bytes;
        acc->time_s = t->time_s;
    }
    opm_energy_apply(p, hw, work);
    double dram = hbm->read_bytes + hbm->write_bytes;
    p->arithmetic_intensity = dram > 0 ? (double)p->flops / dram : 0;
}

int opm_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);
/* The roofline as the kernel models' fallback on parts with no GPU kernel
 * model (MXU, MME): the tensor peak times the hardware's own
 * tensor_achievable_fraction for the op's dtype or its sibling (fp16/bf16,
 * e4m3/e5m2) when it gives one (*applied
 * is that fraction, else 0 and the plain roofline answers); the profile is
 * named "roofline" as opm_roofline_predict names it. */
int opm_roofline_fallback_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, double *applied,
                                  opm_error *err);
/* Tile-, wave- and cache-aware GEMM models (gemm_tiled.c, gemm_effective.c);
 * other kinds fall back to the roofline. */
int opm_extended_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);
int opm_effective_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err);

#endif
