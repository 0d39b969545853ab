/* builder.c — opm_hardware_builder: a hardware description assembled in
 * code.  It fills the same struct the YAML loader fills, runs the same
 * per-value checks (hw_internal.h) in each setter and the loader's
 * whole-object check (opm_hw_check) in _build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "hw_internal.h"

struct opm_hardware_builder {
    opm_hardware hw;
};

static int index_of(const char *s, const char *const *list, int n)
{
    for (int i = 0; i < n && list[i]; i++)
        if (!strcmp(s, list[i])) return i;
    return -1;
}

/* The error for a key none of the n names in `names`, with a "did you
 * mean" hint. */
static int unknown_key(opm_error *err, const char *prefix, const char *key, const char *const *names, int n)
{
    const char *valid[CP_COUNT + HM_COUNT + 1];
    int m = 0;
    for (; m < n && m < CP_COUNT + HM_COUNT; m++) valid[m] = names[m];
    valid[m] = NULL;
    const char *hint = opm_closest(key, valid);
    char f[OPM_ERROR_FIELD_MAX];
    snprintf(f, sizeof f, "%s%.60s", prefix, key);
    return opm_err(err, OPM_EINVAL, f, "unknown key%s%s%s", hint ? " (did you mean '" : "", hint ? hint : "",
                   hint ? "'?)" : "");
}

static opm_hardware_builder *alloc_builder(opm_error *err)
{
    opm_hardware_builder *b = malloc(sizeof *b);
    if (!b) opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    return b;
}

opm_hardware_builder *opm_hardware_builder_new(const char *name, opm_error *err)
{
    opm_error_clear(err);
    opm_hardware_builder *b = alloc_builder(err);
    if (!b) return NULL;
    opm_hw_init(&b->hw);
    strcpy(b->hw.kind, "gpu");
    if (opm_hardware_builder_set_name(b, name, err)) {
        free(b);
        return NULL;
    }
    return b;
}

opm_hardware_builder *opm_hardware_builder_from(const opm_hardware *hw, opm_error *err)
{
    opm_error_clear(err);
    if (!hw) {
        opm_err(err, OPM_EINVAL, "hardware", "expected a hardware object, got NULL");
        return NULL;
    }
    opm_hardware_builder *b = alloc_builder(err);
    if (b) memcpy(&b->hw, hw, sizeof b->hw);
    return b;
}

void opm_hardware_builder_free(opm_hardware_builder *b) { free(b); }

int opm_hardware_builder_set_name(opm_hardware_builder *b, const char *name, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    if (!name || !name[0] || strlen(name) >= sizeof b->hw.name)
        return opm_err(err, OPM_EINVAL, "name", "expected a name of 1 to %zu bytes", sizeof b->hw.name - 1);
    opm_strlcpy(b->hw.name, name, sizeof b->hw.name);
    return 0;
}

int opm_hardware_builder_set_kind(opm_hardware_builder *b, const char *kind, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    if (!kind || index_of(kind, opm_hw_kinds, 4) < 0)
        return opm_err(err, OPM_EINVAL, "kind", "expected gpu, tpu, npu or cpu, got '%.20s'", kind ? kind : "(null)");
    opm_strlcpy(b->hw.kind, kind, sizeof b->hw.kind);
    return 0;
}

static int set_map(opm_hardware_builder *b, int map, opm_dtype dt, double v, opm_error *err)
{
    char f[OPM_ERROR_FIELD_MAX];
    if ((unsigned)dt >= OPM_DTYPE_COUNT)
        return opm_err(err, OPM_EINVAL, opm_hw_map_names[map], "expected a dtype, got %d", (int)dt);
    snprintf(f, sizeof f, "compute.%s.%s", opm_hw_map_names[map], opm_dtype_name(dt));
    const char *e = v == 0 ? NULL : opm_hw_map_expected(map, v);
    if (e) return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, v);
    b->hw.maps[map][dt] = v;
    return 0;
}

int opm_hardware_builder_set_peak(opm_hardware_builder *b, opm_engine engine, opm_dtype dt, double flops_per_s,
                                  opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    if (engine != OPM_ENGINE_TENSOR && engine != OPM_ENGINE_VECTOR)
        return opm_err(err, OPM_EINVAL, "engine", "expected the vector or tensor engine");
    if (!(flops_per_s > 0) || !isfinite(flops_per_s))
        return opm_err(err, OPM_EINVAL, engine == OPM_ENGINE_TENSOR ? "compute.tensor_flops_per_s" : "compute.vector_flops_per_s",
                       "expected a positive number, got %.17g", flops_per_s);
    return set_map(b, engine == OPM_ENGINE_TENSOR ? HM_TENSOR_FLOPS : HM_VECTOR_FLOPS, dt, flops_per_s, err);
}

int opm_hardware_builder_set_dtype_param(opm_hardware_builder *b, const char *key, opm_dtype dt, double value,
                                         opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    int map = key ? index_of(key, opm_hw_map_names, HM_COUNT) : -1;
    if (map < 0) return unknown_key(err, "compute.", key ? key : "(null)", opm_hw_map_names, HM_COUNT);
    return set_map(b, map, dt, value, err);
}

int opm_hardware_builder_set_compute(opm_hardware_builder *b, const char *key, double value, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    int idx = key ? index_of(key, opm_hw_cparam_names, CP_COUNT) : -1;
    if (idx < 0) return unknown_key(err, "compute.", key ? key : "(null)", opm_hw_cparam_names, CP_COUNT);
    const char *e = opm_hw_cparam_expected(idx, value);
    if (e) {
        char f[OPM_ERROR_FIELD_MAX];
        snprintf(f, sizeof f, "compute.%s", key);
        return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, value);
    }
    b->hw.cparam[idx] = value;
    b->hw.cparam_set |= 1u << idx;
    return 0;
}

int opm_hardware_builder_set_matrix_instruction(opm_hardware_builder *b, const char *name, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    int mi = name ? index_of(name, opm_hw_matrix_names, 7) : -1;
    if (mi < 0)
        return opm_err(err, OPM_EINVAL, "compute.matrix_instruction",
                       "expected one of simt, mma_sync, wgmma, tcgen05, mfma, mxu, mme, got '%.20s'",
                       name ? name : "(null)");
    b->hw.matrix_instruction = mi + 1;
    return 0;
}

int opm_hardware_builder_set_fma_dims(opm_hardware_builder *b, int m, int n, int k, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    int d[3] = {m, n, k};
    for (int i = 0; i < 3; i++)
        if (d[i] <= 0 || d[i] > 1 << 20)
            return opm_err(err, OPM_EINVAL, "compute.fma_dims", "expected a positive integer up to 2^20, got %d", d[i]);
    memcpy(b->hw.fma_dims, d, sizeof d);
    b->hw.has_fma = 1;
    return 0;
}

int opm_hardware_builder_add_level(opm_hardware_builder *b, const opm_memory_level *level, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    if (!level) return opm_err(err, OPM_EINVAL, "memory.levels", "expected a level, got NULL");
    opm_memory_level l = *level;
    l.name[sizeof l.name - 1] = '\0';
    if (l.utilization == 0) l.utilization = 1;
    size_t at = b->hw.n_levels;
    for (size_t i = 0; i < b->hw.n_levels; i++)
        if (!strcmp(b->hw.levels[i].name, l.name)) at = i;
    char f[OPM_ERROR_FIELD_MAX];
    snprintf(f, sizeof f, "memory.levels[%zu].name", at);
    if (opm_hw_level_rank(l.name) < 0)
        return opm_err(err, OPM_EINVAL, f, "expected a level name (register, sram, l1, l2, llc, hbm), got '%s'", l.name);
    if (at == OPM_MAX_LEVELS)
        return opm_err(err, OPM_EINVAL, "memory.levels", "expected a list of 1 to %d levels", OPM_MAX_LEVELS);
    for (int k = 1; k < LK_COUNT; k++) {
        double v = opm_hw_level_value(&l, k);
        const char *e = v == 0 ? NULL : opm_hw_level_expected(k, v);
        if (e) {
            snprintf(f, sizeof f, "memory.levels[%zu].%s", at, opm_hw_level_keys[k]);
            return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, v);
        }
    }
    const char *e = opm_hw_fraction_expected(l.utilization);
    if (e) {
        snprintf(f, sizeof f, "utilization.memory.%s", l.name);
        return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, l.utilization);
    }
    b->hw.levels[at] = l;
    if (at == b->hw.n_levels) b->hw.n_levels++;
    return 0;
}

int opm_hardware_builder_set_utilization(opm_hardware_builder *b, opm_engine engine, double fraction, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    const char *f = engine == OPM_ENGINE_TENSOR ? "utilization.tensor" : "utilization.vector";
    if (engine != OPM_ENGINE_TENSOR && engine != OPM_ENGINE_VECTOR)
        return opm_err(err, OPM_EINVAL, "utilization", "expected the vector or tensor engine");
    const char *e = opm_hw_fraction_expected(fraction);
    if (e) return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, fraction);
    if (engine == OPM_ENGINE_TENSOR) {
        b->hw.util_tensor = fraction;
        b->hw.has_util_tensor = 1;
    } else {
        b->hw.util_vector = fraction;
        b->hw.has_util_vector = 1;
    }
    return 0;
}

int opm_hardware_builder_set_level_utilization(opm_hardware_builder *b, const char *level, double fraction,
                                               opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    char f[OPM_ERROR_FIELD_MAX];
    snprintf(f, sizeof f, "utilization.memory.%.16s", level ? level : "(null)");
    for (size_t i = 0; level && i < b->hw.n_levels; i++)
        if (!strcmp(b->hw.levels[i].name, level)) {
            const char *e = opm_hw_fraction_expected(fraction);
            if (e) return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, fraction);
            b->hw.levels[i].utilization = fraction;
            return 0;
        }
    return opm_err(err, OPM_EINVAL, f, "expected the name of a level added before");
}

int opm_hardware_builder_set_power(opm_hardware_builder *b, double static_power_w, double tdp_w, opm_error *err)
{
    if (!b) return opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
    opm_error_clear(err);
    if (!(static_power_w < 0) && !isfinite(static_power_w))
        return opm_err(err, OPM_EINVAL, "static_power_w", "expected a non-negative number, got %.17g", static_power_w);
    if (tdp_w == 0 || (!(tdp_w < 0) && !isfinite(tdp_w)))
        return opm_err(err, OPM_EINVAL, "tdp_w", "expected a positive number, got %.17g", tdp_w);
    b->hw.has_static_power = static_power_w >= 0;
    b->hw.static_power_w = static_power_w >= 0 ? static_power_w : 0;
    b->hw.has_tdp = tdp_w > 0;
    b->hw.tdp_w = tdp_w > 0 ? tdp_w : 0;
    return 0;
}

opm_hardware *opm_hardware_builder_build(const opm_hardware_builder *b, opm_error *err)
{
    opm_error_clear(err);
    if (!b) {
        opm_err(err, OPM_EINVAL, "builder", "expected a builder, got NULL");
        return NULL;
    }
    if (opm_hw_check(&b->hw, err)) return NULL;
    opm_hardware *hw = opm_hardware_clone(&b->hw, err);
    /* The TDP rule's stand-in J/FLOP, as the loader fills it. */
    if (hw) opm_hw_derive_energy(hw);
    return hw;
}

int opm_hardware_builder_set_table(opm_hardware_builder *b, const char *table, size_t n, const double *clock_hz,
                                   const double *values, opm_error *err)
{
    opm_error_clear(err);
    if (!b || !table) return opm_err(err, OPM_EINVAL, "table", "expected a builder and a table name");
    int idle = !strcmp(table, "idle_power");
    if (!idle && strcmp(table, "supply_voltage"))
        return opm_err(err, OPM_EINVAL, "table", "expected idle_power or supply_voltage, got '%.40s'", table);
    if (n > HW_TABLE_MAX) return opm_err(err, OPM_EINVAL, table, "expected at most %d points, got %zu", HW_TABLE_MAX, n);
    if (n && (!clock_hz || !values)) return opm_err(err, OPM_EINVAL, table, "expected clock and value arrays");
    for (size_t i = 0; i < n; i++) {
        if (!(clock_hz[i] > 0) || !isfinite(clock_hz[i]) || (i && !(clock_hz[i] > clock_hz[i - 1])))
            return opm_err(err, OPM_EINVAL, table, "point %zu: expected a positive clock above the previous one, got %.17g",
                           i, clock_hz[i]);
        if (!(values[i] > 0) || !isfinite(values[i]))
            return opm_err(err, OPM_EINVAL, table, "point %zu: expected a positive value, got %.17g", i, values[i]);
    }
    double *x = idle ? b->hw.idle_clock_hz : b->hw.volt_clock_hz, *y = idle ? b->hw.idle_w : b->hw.volt;
    for (size_t i = 0; i < n; i++) {
        x[i] = clock_hz[i];
        y[i] = values[i];
    }
    if (idle) b->hw.n_idle = n;
    else b->hw.n_volt = n;
    return 0;
}

int opm_hardware_builder_set_interconnect(opm_hardware_builder *b, const opm_interconnect *link, opm_error *err)
{
    opm_error_clear(err);
    if (!b) return opm_err(err, OPM_EINVAL, "interconnect", "expected a builder");
    if (!link) {
        memset(&b->hw.link, 0, sizeof b->hw.link);
        b->hw.has_link = 0;
        return 0;
    }
    if (!(link->bandwidth_bytes_per_s > 0) || !isfinite(link->bandwidth_bytes_per_s))
        return opm_err(err, OPM_EINVAL, "interconnect.bandwidth_bytes_per_s", "expected a positive number, got %.17g",
                       link->bandwidth_bytes_per_s);
    if (!(link->latency_s >= 0) || !isfinite(link->latency_s))
        return opm_err(err, OPM_EINVAL, "interconnect.latency_s", "expected a non-negative number, got %.17g",
                       link->latency_s);
    if (!(link->domain_devices >= 0) || link->domain_devices != floor(link->domain_devices) || link->domain_devices > 1e9)
        return opm_err(err, OPM_EINVAL, "interconnect.domain_devices", "expected a whole number of devices, got %.17g",
                       link->domain_devices);
    if (!memchr(link->name, '\0', sizeof link->name))
        return opm_err(err, OPM_EINVAL, "interconnect.name", "expected a NUL-terminated name under 32 bytes");
    b->hw.link = *link;
    b->hw.has_link = 1;
    return 0;
}
