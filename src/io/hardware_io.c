/* hardware_io.c — hardware descriptions to and from text (contract §2):
 * every key of the original opmodel schema plus ours, each checked with an
 * error that points at the file position, and a writer whose output loads
 * back into an identical object. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "../hardware/hw_internal.h"
#include "io_internal.h"

static const char *const top_keys[] = {"name", "kind", "static_power_w", "tdp_w", "compute", "memory",
                                       "utilization", "energy_model", "interconnect", "idle_power", "supply_voltage",
                                       "static_power_clock_hz", "quoted_clock_hz", "gemm_selection_objective", NULL};
#define objectives opm_hw_objective_names
#define level_keys opm_hw_level_keys

typedef struct ctx {
    const doc *d;
    opm_error *err;
} ctx;

static int bad(ctx *c, const doc_node *n, const char *field, const char *expected)
{
    char got[80];
    doc_describe(n, got, sizeof got);
    opm_err(c->err, OPM_EINVAL, field, "expected %s, got %s", expected, got);
    doc_error_at(c->d, n, c->err);
    return OPM_EINVAL;
}

static int unknown(ctx *c, const doc_node *key, const char *prefix, const char *const *valid, const char *where)
{
    const char *hint = opm_closest(key->text, valid);
    char field[OPM_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "%s%.60s", prefix, key->text);
    opm_err(c->err, OPM_EINVAL, field, "unknown key in %s%s%s%s", where, hint ? " (did you mean '" : "",
            hint ? hint : "", hint ? "'?)" : "");
    doc_error_at(c->d, key, c->err);
    return OPM_EINVAL;
}

static int index_of(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] && strcmp(s, list[i]) == 0) return (int)i;
    return -1;
}

/* A number ≥ 0 (or > 0 when `positive`). */
static int number(ctx *c, const doc_node *n, const char *field, int positive, double *out)
{
    if (doc_double(n, out) || *out < 0 || (positive && *out == 0))
        return bad(c, n, field, positive ? "a positive number" : "a non-negative number");
    return 0;
}

/* A number passing one of the shared value checks (hw_internal.h). */
static int checked(ctx *c, const doc_node *n, const char *field, const char *(*expected)(int, double), int key,
                   double *out)
{
    const char *e;
    if (doc_double(n, out)) *out = NAN; /* not a number: the check says what is expected */
    if ((e = expected(key, *out))) return bad(c, n, field, e);
    return 0;
}

static int string(ctx *c, const doc_node *n, const char *field, char *out, size_t cap)
{
    if (n->type != DOC_SCALAR || doc_is_null(n)) return bad(c, n, field, "a string");
    if (strlen(n->text) >= cap) return bad(c, n, field, "a shorter string");
    opm_strlcpy(out, n->text, cap);
    return 0;
}

static int dtype_map(ctx *c, const doc_node *m, const char *field, double *vals, int map)
{
    if (m->type != DOC_MAP) return bad(c, m, field, "a mapping of dtype to number");
    for (size_t i = 0; i < m->n; i++) {
        const doc_node *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        opm_dtype dt;
        char f[OPM_ERROR_FIELD_MAX];
        snprintf(f, sizeof f, "%s.%s", field, k->text);
        if (opm_dtype_parse(k->text, &dt)) {
            const char *hint = opm_closest(k->text, opm_dtype_name_list);
            opm_err(c->err, OPM_EINVAL, f, "expected a dtype name, got '%.40s'%s%s%s", k->text,
                    hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
            doc_error_at(c->d, k, c->err);
            return OPM_EINVAL;
        }
        if (checked(c, v, f, opm_hw_map_expected, map, &vals[dt])) return OPM_EINVAL;
    }
    return 0;
}

static int load_compute(ctx *c, opm_hardware *hw, const doc_node *m)
{
    if (m->type != DOC_MAP) return bad(c, m, "compute", "a mapping");
    const char *valid[CP_COUNT + HM_COUNT + 4];
    size_t nv = 0;
    for (int i = 0; i < CP_COUNT; i++) valid[nv++] = opm_hw_cparam_names[i];
    for (int i = 0; i < HM_COUNT; i++) valid[nv++] = opm_hw_map_names[i];
    valid[nv++] = "fma_dims";
    valid[nv++] = "dataflow";
    valid[nv++] = "matrix_instruction";
    valid[nv] = NULL;
    for (size_t i = 0; i < m->n; i++) {
        const doc_node *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        char f[OPM_ERROR_FIELD_MAX];
        snprintf(f, sizeof f, "compute.%s", k->text);
        int idx;
        if ((idx = index_of(k->text, opm_hw_cparam_names, CP_COUNT)) >= 0) {
            if (checked(c, v, f, opm_hw_cparam_expected, idx, &hw->cparam[idx])) return OPM_EINVAL;
            hw->cparam_set |= 1u << idx;
        } else if ((idx = index_of(k->text, opm_hw_map_names, HM_COUNT)) >= 0) {
            if (dtype_map(c, v, f, hw->maps[idx], idx))
                return OPM_EINVAL;
        } else if (!strcmp(k->text, "fma_dims")) {
            int64_t d;
            if (v->type != DOC_SEQ || v->n != 3) return bad(c, v, f, "a list of three integers [m, n, k]");
            for (int j = 0; j < 3; j++) {
                if (doc_int(v->kids[j], &d) || d <= 0 || d > 1 << 20)
                    return bad(c, v->kids[j], f, "a positive integer");
                hw->fma_dims[j] = (int)d;
            }
            hw->has_fma = 1;
        } else if (!strcmp(k->text, "dataflow")) {
            if (string(c, v, f, hw->dataflow, sizeof hw->dataflow)) return OPM_EINVAL;
        } else if (!strcmp(k->text, "matrix_instruction")) {
            int mi = v->type == DOC_SCALAR && !doc_is_null(v) ? index_of(v->text, opm_hw_matrix_names, 7) : -1;
            if (mi < 0) return bad(c, v, f, "one of simt, mma_sync, wgmma, tcgen05, mfma, mxu, mme");
            hw->matrix_instruction = mi + 1;
        } else {
            return unknown(c, k, "compute.", valid, "compute");
        }
    }
    return 0;
}

static int load_level(ctx *c, opm_hardware *hw, const doc_node *m, size_t idx)
{
    char field[OPM_ERROR_FIELD_MAX], f[OPM_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "memory.levels[%zu]", idx);
    if (m->type != DOC_MAP) return bad(c, m, field, "a mapping with name, size_bytes and bandwidth_bytes_per_s");
    opm_memory_level *l = &hw->levels[idx];
    memset(l, 0, sizeof *l);
    l->utilization = 1.0;
    for (size_t i = 0; i < m->n; i++) {
        const doc_node *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        snprintf(f, sizeof f, "%s.%s", field, k->text);
        int j = index_of(k->text, level_keys, LK_COUNT);
        if (j < 0) {
            char pre[OPM_ERROR_FIELD_MAX];
            snprintf(pre, sizeof pre, "%s.", field);
            return unknown(c, k, pre, level_keys, "a memory level");
        }
        if (j == 0) {
            if (string(c, v, f, l->name, sizeof l->name)) return OPM_EINVAL;
            if (opm_hw_level_rank(l->name) < 0)
                return bad(c, v, f, "a level name (register, sram, l1, l2, llc, hbm)");
        } else if (checked(c, v, f, opm_hw_level_expected, j, opm_hw_level_slot(l, j))) {
            return OPM_EINVAL;
        }
    }
    if (!l->name[0]) {
        snprintf(f, sizeof f, "%s.name", field);
        opm_err(c->err, OPM_EINVAL, f, "missing; expected a name for every level");
        doc_error_at(c->d, m, c->err);
        return OPM_EINVAL;
    }
    for (size_t i = 0; i < idx; i++)
        if (!strcmp(hw->levels[i].name, l->name)) {
            snprintf(f, sizeof f, "%s.name", field);
            return bad(c, doc_get(m, "name"), f, "a level name not used before");
        }
    return 0;
}

static int load_memory(ctx *c, opm_hardware *hw, const doc_node *m)
{
    static const char *const keys[] = {"levels", NULL};
    if (m->type != DOC_MAP) return bad(c, m, "memory", "a mapping with levels");
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->kids[2 * i]->text, "levels")) return unknown(c, m->kids[2 * i], "memory.", keys, "memory");
    const doc_node *levels = doc_get(m, "levels");
    if (!levels || levels->type != DOC_SEQ || levels->n == 0 || levels->n > OPM_MAX_LEVELS)
        return bad(c, levels ? levels : m, "memory.levels", "a list of 1 to 8 levels");
    hw->n_levels = levels->n;
    for (size_t j = 0; j < levels->n; j++)
        if (load_level(c, hw, levels->kids[j], j)) return OPM_EINVAL;
    return 0;
}

static int fraction(ctx *c, const doc_node *n, const char *field, double *out)
{
    const char *e;
    if (doc_double(n, out)) *out = NAN;
    if ((e = opm_hw_fraction_expected(*out))) return bad(c, n, field, e);
    return 0;
}

static int load_utilization(ctx *c, opm_hardware *hw, const doc_node *m)
{
    static const char *const keys[] = {"vector", "tensor", "memory", NULL};
    if (m->type != DOC_MAP) return bad(c, m, "utilization", "a mapping");
    for (size_t i = 0; i < m->n; i++) {
        const doc_node *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        char f[OPM_ERROR_FIELD_MAX];
        snprintf(f, sizeof f, "utilization.%s", k->text);
        if (!strcmp(k->text, "vector")) {
            if (fraction(c, v, f, &hw->util_vector)) return OPM_EINVAL;
            hw->has_util_vector = 1;
        } else if (!strcmp(k->text, "tensor")) {
            if (fraction(c, v, f, &hw->util_tensor)) return OPM_EINVAL;
            hw->has_util_tensor = 1;
        } else if (!strcmp(k->text, "memory")) {
            if (v->type != DOC_MAP) return bad(c, v, f, "a mapping of level name to fraction");
            for (size_t j = 0; j < v->n; j++) {
                const doc_node *lk = v->kids[2 * j];
                char lf[OPM_ERROR_FIELD_MAX];
                snprintf(lf, sizeof lf, "%s.%s", f, lk->text);
                opm_memory_level *l = NULL;
                for (size_t x = 0; x < hw->n_levels; x++)
                    if (!strcmp(hw->levels[x].name, lk->text)) l = &hw->levels[x];
                if (!l) return bad(c, lk, lf, "the name of a level in memory.levels");
                if (fraction(c, v->kids[2 * j + 1], lf, &l->utilization)) return OPM_EINVAL;
            }
        } else {
            return unknown(c, k, "utilization.", keys, "utilization");
        }
    }
    return 0;
}

/* A table by SM clock: a mapping of clock in MHz to a value (the layout of
 * the EnergAIzer config/dvfs JSON files, so they paste in as they are).
 * A null value is a clock that was not measured and is skipped. */
static int load_table(ctx *c, const doc_node *m, const char *field, double *clk, double *val, size_t *n)
{
    if (m->type != DOC_MAP) return bad(c, m, field, "a mapping of SM clock in MHz to a number");
    *n = 0;
    for (size_t i = 0; i < m->n; i++) {
        const doc_node *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        char f[OPM_ERROR_FIELD_MAX];
        snprintf(f, sizeof f, "%s.%.40s", field, k->text);
        char *end;
        double mhz = strtod(k->text, &end);
        if (end == k->text || *end || !(mhz > 0) || !isfinite(mhz) || mhz > 1e6)
            return bad(c, k, f, "a clock in MHz as the key");
        if (doc_is_null(v)) continue;
        double x;
        if (number(c, v, f, 1, &x)) return OPM_EINVAL;
        if (*n >= HW_TABLE_MAX) return bad(c, k, f, "at most 160 clocks");
        /* Insertion keeps the table ascending whatever the key order. */
        size_t j = *n;
        while (j > 0 && clk[j - 1] > mhz * 1e6) {
            clk[j] = clk[j - 1];
            val[j] = val[j - 1];
            j--;
        }
        if (j > 0 && clk[j - 1] == mhz * 1e6) return bad(c, k, f, "a clock not given before");
        clk[j] = mhz * 1e6;
        val[j] = x;
        (*n)++;
    }
    return 0;
}

static int load_energy_model(ctx *c, opm_hardware *hw, const doc_node *m)
{
    static const char *const keys[] = {"level", "model_level", "power_coefficients", "feature_order",
                                       "calibration", NULL};
    if (m->type != DOC_MAP) return bad(c, m, "energy_model", "a mapping");
    hw->has_energy_model = 1;
    for (size_t i = 0; i < m->n; i++) {
        const doc_node *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        char f[OPM_ERROR_FIELD_MAX];
        snprintf(f, sizeof f, "energy_model.%s", k->text);
        if (!strcmp(k->text, "calibration")) {
            /* How the seed's package fitted the coefficients: provenance,
             * not an input; checked for shape and not kept. */
            if (v->type != DOC_MAP && v->type != DOC_SCALAR) return bad(c, v, f, "a mapping");
        } else if (!strcmp(k->text, "level") || !strcmp(k->text, "model_level")) {
            static const char *const lv[] = {"E0", "E1", "E2", "E3", NULL};
            if (string(c, v, f, hw->em_level, sizeof hw->em_level) || index_of(hw->em_level, lv, 4) < 0)
                return bad(c, v, f, "one of E0, E1, E2, E3");
        } else if (!strcmp(k->text, "power_coefficients")) {
            if (v->type != DOC_MAP) return bad(c, v, f, "a mapping");
            for (size_t j = 0; j < v->n; j++) {
                const doc_node *pk = v->kids[2 * j];
                int idx = index_of(pk->text, opm_hw_power_names, PC_COUNT);
                if (idx < 0)
                    return unknown(c, pk, "energy_model.power_coefficients.", opm_hw_power_names,
                                   "energy_model.power_coefficients");
                char pf[OPM_ERROR_FIELD_MAX];
                snprintf(pf, sizeof pf, "%s.%s", f, pk->text);
                if (number(c, v->kids[2 * j + 1], pf, 0, &hw->power[idx])) return OPM_EINVAL;
                hw->power_set |= 1u << idx;
            }
        } else if (!strcmp(k->text, "feature_order")) {
            if (v->type != DOC_SEQ || v->n > FEATURE_MAX) return bad(c, v, f, "a list of at most 16 names");
            for (size_t j = 0; j < v->n; j++)
                if (string(c, v->kids[j], f, hw->features[j], sizeof hw->features[j])) return OPM_EINVAL;
            hw->n_features = v->n;
        } else {
            return unknown(c, k, "energy_model.", keys, "energy_model");
        }
    }
    return 0;
}

/* interconnect: {name, bandwidth_bytes_per_s (required), latency_s, domain_devices}. */
static int load_interconnect(ctx *c, opm_hardware *hw, const doc_node *m)
{
    static const char *const keys[] = {"name", "bandwidth_bytes_per_s", "latency_s", "domain_devices", NULL};
    if (m->type != DOC_MAP) return bad(c, m, "interconnect", "a mapping with bandwidth_bytes_per_s");
    int has_bw = 0;
    for (size_t i = 0; i < m->n; i++) {
        const doc_node *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        char f[OPM_ERROR_FIELD_MAX];
        snprintf(f, sizeof f, "interconnect.%.40s", k->text);
        int rc;
        if (!strcmp(k->text, "name")) rc = string(c, v, f, hw->link.name, sizeof hw->link.name);
        else if (!strcmp(k->text, "bandwidth_bytes_per_s")) {
            rc = number(c, v, f, 1, &hw->link.bandwidth_bytes_per_s);
            has_bw = 1;
        } else if (!strcmp(k->text, "latency_s")) rc = number(c, v, f, 0, &hw->link.latency_s);
        else if (!strcmp(k->text, "domain_devices")) {
            rc = number(c, v, f, 1, &hw->link.domain_devices);
            if (!rc && (hw->link.domain_devices != floor(hw->link.domain_devices) || hw->link.domain_devices > 1e9))
                rc = bad(c, v, f, "a whole number of devices");
        } else rc = unknown(c, k, "interconnect.", keys, "interconnect");
        if (rc) return rc;
    }
    if (!has_bw) {
        opm_err(c->err, OPM_EINVAL, "interconnect.bandwidth_bytes_per_s",
                "required (bytes per second per direction per device)");
        doc_error_at(c->d, m, c->err);
        return OPM_EINVAL;
    }
    hw->has_link = 1;
    return 0;
}

opm_hardware *opm_hardware_from_doc(const doc *d, opm_error *err)
{
    ctx c = {d, err};
    const doc_node *root = doc_root(d);
    opm_hardware *hw = malloc(sizeof *hw);
    if (!hw) {
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    opm_hw_init(hw);
    if (root->type != DOC_MAP) {
        bad(&c, root, NULL, "a hardware description (a mapping with name, compute and memory)");
        goto fail;
    }
    const doc_node *util = NULL;
    for (size_t i = 0; i < root->n; i++) {
        const doc_node *k = root->kids[2 * i], *v = root->kids[2 * i + 1];
        int rc = 0;
        if (!strcmp(k->text, "name")) rc = string(&c, v, "name", hw->name, sizeof hw->name);
        else if (!strcmp(k->text, "kind")) {
            rc = string(&c, v, "kind", hw->kind, sizeof hw->kind);
            if (!rc && index_of(hw->kind, opm_hw_kinds, 4) < 0) rc = bad(&c, v, "kind", "gpu, tpu, npu or cpu");
        } else if (!strcmp(k->text, "static_power_w")) {
            rc = number(&c, v, "static_power_w", 0, &hw->static_power_w);
            hw->has_static_power = 1;
        } else if (!strcmp(k->text, "tdp_w")) {
            rc = number(&c, v, "tdp_w", 1, &hw->tdp_w);
            hw->has_tdp = 1;
        } else if (!strcmp(k->text, "static_power_clock_hz")) {
            rc = number(&c, v, "static_power_clock_hz", 1, &hw->static_power_clock_hz);
        } else if (!strcmp(k->text, "quoted_clock_hz")) {
            rc = number(&c, v, "quoted_clock_hz", 1, &hw->quoted_clock_hz);
        } else if (!strcmp(k->text, "idle_power")) {
            rc = load_table(&c, v, "idle_power", hw->idle_clock_hz, hw->idle_w, &hw->n_idle);
        } else if (!strcmp(k->text, "supply_voltage")) {
            rc = load_table(&c, v, "supply_voltage", hw->volt_clock_hz, hw->volt, &hw->n_volt);
        } else if (!strcmp(k->text, "gemm_selection_objective")) {
            int o = v->type == DOC_SCALAR && !doc_is_null(v) ? index_of(v->text, objectives, 3) : -1;
            if (o < 0) rc = bad(&c, v, "gemm_selection_objective", "one of latency, energy, edp");
            else hw->gemm_objective = o;
        } else if (!strcmp(k->text, "compute")) rc = load_compute(&c, hw, v);
        else if (!strcmp(k->text, "memory")) rc = load_memory(&c, hw, v);
        else if (!strcmp(k->text, "utilization")) util = v;
        else if (!strcmp(k->text, "energy_model")) rc = load_energy_model(&c, hw, v);
        else if (!strcmp(k->text, "interconnect")) rc = load_interconnect(&c, hw, v);
        else rc = unknown(&c, k, "", top_keys, "a hardware description");
        if (rc) goto fail;
    }
    /* Utilization names levels, so it is read once the levels are known. */
    if (util && load_utilization(&c, hw, util)) goto fail;
    if (!hw->kind[0]) strcpy(hw->kind, "gpu");
    if (opm_hw_check(hw, err)) {
        doc_locate_error(d, err);
        goto fail;
    }
    opm_hw_derive_energy(hw);
    return hw;
fail:
    free(hw);
    return NULL;
}

opm_hardware *opm_hardware_load_string(const char *text, size_t len, const char *source, opm_error *err)
{
    opm_error_clear(err); /* no stale message after success */
    doc *d = doc_parse_yaml(text, len, source, 1, err);
    if (!d) return NULL;
    opm_hardware *hw = opm_hardware_from_doc(d, err);
    doc_free(d);
    return hw;
}

opm_hardware *opm_hardware_load_file(const char *path, opm_error *err)
{
    opm_error_clear(err); /* no stale message after success */
    size_t len;
    char *text = opm_read_file(path, &len, err);
    if (!text) return NULL;
    opm_hardware *hw = opm_hardware_load_string(text, len, path, err);
    free(text);
    return hw;
}

opm_hardware *opm_hardware_open(const char *name_or_path, opm_error *err)
{
    opm_error_clear(err); /* no stale message after success */
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++)
        if (!strcmp(opm_hardware_builtin_name(i), name_or_path)) return opm_hardware_builtin(name_or_path, err);
    if (!strchr(name_or_path, '/') && !strchr(name_or_path, '.')) {
        const char *names[64];
        size_t n = opm_hardware_builtin_count();
        for (size_t i = 0; i < n && i < 63; i++) names[i] = opm_hardware_builtin_name(i);
        names[n < 63 ? n : 63] = NULL;
        const char *hint = opm_closest(name_or_path, names);
        opm_err(err, OPM_ENOTFOUND, "hardware", "expected a built-in name (see `opmodel hardware list`) or a file, got '%s'%s%s%s",
                name_or_path, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
        return NULL;
    }
    return opm_hardware_load_file(name_or_path, err);
}

/* ---- writing ---- */

static int put_num(doc *d, doc_node *m, const char *key, double v)
{
    char buf[40];
    opm_format_double(v, buf, sizeof buf);
    return doc_append(d, m, key, doc_new_scalar(d, buf, 0));
}

static int put_table(doc *d, doc_node *root, const char *key, const double *clk, const double *val, size_t n)
{
    if (!n) return 0;
    doc_node *t = doc_new_collection(d, DOC_MAP);
    if (!t || doc_append(d, root, key, t)) return 1;
    for (size_t i = 0; i < n; i++) {
        char k[40];
        opm_format_double(clk[i] / 1e6, k, sizeof k);
        if (put_num(d, t, k, val[i])) return 1;
    }
    return 0;
}

static doc *to_doc(const opm_hardware *hw)
{
    doc *d = doc_new_empty("<hardware>");
    if (!d) return NULL;
    doc_node *root = doc_new_collection(d, DOC_MAP), *comp = doc_new_collection(d, DOC_MAP);
    doc_node *mem = doc_new_collection(d, DOC_MAP), *levels = doc_new_collection(d, DOC_SEQ);
    if (!root || !comp || !mem || !levels) goto fail;
    doc_set_root(d, root);
    int bad = doc_append(d, root, "name", doc_new_scalar(d, hw->name, 1)) ||
              doc_append(d, root, "kind", doc_new_scalar(d, hw->kind, 0));
    if (hw->has_tdp) bad = bad || put_num(d, root, "tdp_w", hw->tdp_w);
    if (hw->has_static_power) bad = bad || put_num(d, root, "static_power_w", hw->static_power_w);
    if (hw->static_power_clock_hz > 0)
        bad = bad || put_num(d, root, "static_power_clock_hz", hw->static_power_clock_hz);
    if (hw->quoted_clock_hz > 0) bad = bad || put_num(d, root, "quoted_clock_hz", hw->quoted_clock_hz);
    if (hw->gemm_objective)
        bad = bad || doc_append(d, root, "gemm_selection_objective", doc_new_scalar(d, objectives[hw->gemm_objective], 0));
    bad = bad || put_table(d, root, "idle_power", hw->idle_clock_hz, hw->idle_w, hw->n_idle) ||
          put_table(d, root, "supply_voltage", hw->volt_clock_hz, hw->volt, hw->n_volt);
    bad = bad || doc_append(d, root, "compute", comp);
    for (int i = 0; !bad && i < CP_COUNT; i++)
        if (hw->cparam_set & (1u << i)) bad = put_num(d, comp, opm_hw_cparam_names[i], hw->cparam[i]);
    for (int m = 0; !bad && m < HM_COUNT; m++) {
        doc_node *map = NULL;
        for (int dt = 0; !bad && dt < OPM_DTYPE_COUNT; dt++) {
            if (hw->maps[m][dt] == 0) continue;
            if (!map && (!(map = doc_new_collection(d, DOC_MAP)) || doc_append(d, comp, opm_hw_map_names[m], map)))
                bad = 1;
            bad = bad || put_num(d, map, opm_dtype_name((opm_dtype)dt), hw->maps[m][dt]);
        }
    }
    if (!bad && hw->has_fma) {
        doc_node *f = doc_new_collection(d, DOC_SEQ);
        bad = !f || put_num(d, f, NULL, hw->fma_dims[0]) || put_num(d, f, NULL, hw->fma_dims[1]) ||
              put_num(d, f, NULL, hw->fma_dims[2]) || doc_append(d, comp, "fma_dims", f);
    }
    if (!bad && hw->dataflow[0]) bad = doc_append(d, comp, "dataflow", doc_new_scalar(d, hw->dataflow, 1));
    if (!bad && hw->matrix_instruction)
        bad = doc_append(d, comp, "matrix_instruction",
                         doc_new_scalar(d, opm_hw_matrix_names[hw->matrix_instruction - 1], 0));
    bad = bad || doc_append(d, root, "memory", mem) || doc_append(d, mem, "levels", levels);
    doc_node *mutil = NULL;
    for (size_t i = 0; !bad && i < hw->n_levels; i++) {
        const opm_memory_level *l = &hw->levels[i];
        doc_node *ln = doc_new_collection(d, DOC_MAP);
        bad = !ln || doc_append(d, ln, "name", doc_new_scalar(d, l->name, 0));
        for (int j = 1; !bad && j < LK_COUNT; j++)
            if (opm_hw_level_value(l, j) != 0) bad = put_num(d, ln, level_keys[j], opm_hw_level_value(l, j));
        bad = bad || doc_append(d, levels, NULL, ln);
        if (!bad && l->utilization != 1.0) {
            if (!mutil && !(mutil = doc_new_collection(d, DOC_MAP))) bad = 1;
            bad = bad || put_num(d, mutil, l->name, l->utilization);
        }
    }
    if (!bad && (hw->has_util_vector || hw->has_util_tensor || mutil)) {
        doc_node *u = doc_new_collection(d, DOC_MAP);
        bad = !u || doc_append(d, root, "utilization", u);
        if (!bad && hw->has_util_vector) bad = put_num(d, u, "vector", hw->util_vector);
        if (!bad && hw->has_util_tensor) bad = put_num(d, u, "tensor", hw->util_tensor);
        if (!bad && mutil) bad = doc_append(d, u, "memory", mutil);
    }
    if (!bad && hw->has_energy_model) {
        doc_node *em = doc_new_collection(d, DOC_MAP);
        bad = !em || doc_append(d, root, "energy_model", em);
        if (!bad && hw->em_level[0]) bad = doc_append(d, em, "level", doc_new_scalar(d, hw->em_level, 0));
        if (!bad && hw->power_set) {
            doc_node *pc = doc_new_collection(d, DOC_MAP);
            bad = !pc || doc_append(d, em, "power_coefficients", pc);
            for (int i = 0; !bad && i < PC_COUNT; i++)
                if (hw->power_set & (1u << i)) bad = put_num(d, pc, opm_hw_power_names[i], hw->power[i]);
        }
        if (!bad && hw->n_features) {
            doc_node *fo = doc_new_collection(d, DOC_SEQ);
            bad = !fo || doc_append(d, em, "feature_order", fo);
            for (size_t i = 0; !bad && i < hw->n_features; i++)
                bad = doc_append(d, fo, NULL, doc_new_scalar(d, hw->features[i], 1));
        }
    }
    if (!bad && hw->has_link) {
        doc_node *ic = doc_new_collection(d, DOC_MAP);
        bad = !ic || doc_append(d, root, "interconnect", ic);
        if (!bad && hw->link.name[0]) bad = doc_append(d, ic, "name", doc_new_scalar(d, hw->link.name, 1));
        bad = bad || put_num(d, ic, "bandwidth_bytes_per_s", hw->link.bandwidth_bytes_per_s);
        if (!bad && hw->link.latency_s > 0) bad = put_num(d, ic, "latency_s", hw->link.latency_s);
        if (!bad && hw->link.domain_devices > 0) bad = put_num(d, ic, "domain_devices", hw->link.domain_devices);
    }
    if (bad) goto fail;
    return d;
fail:
    doc_free(d);
    return NULL;
}

static char *emit(const opm_hardware *hw, int json, opm_error *err)
{
    doc *d = to_doc(hw);
    strbuf b = {0};
    if (!d || (json ? doc_emit_json(doc_root(d), &b) : doc_emit_yaml(doc_root(d), &b))) {
        doc_free(d);
        free(b.p);
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    doc_free(d);
    return b.p;
}

char *opm_hardware_to_yaml(const opm_hardware *hw, opm_error *err)
{
    opm_error_clear(err);
    return emit(hw, 0, err);
}

char *opm_hardware_to_json(const opm_hardware *hw, opm_error *err)
{
    opm_error_clear(err);
    return emit(hw, 1, err);
}
