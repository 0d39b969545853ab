/* hardware.c — the hardware object: defaults, semantic validation, getters,
 * clock rescaling and equality.  Reading and writing text is in
 * src/io/hardware_io.c; the built-in entries are in builtin.c. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "hw_internal.h"

const char *const opm_hw_cparam_names[CP_COUNT] = {
    "clock_hz", "tensor_clock_hz", "sm_max_clock_hz", "num_sms", "max_ctas_per_sm",
    "max_warps_per_sm", "registers_per_sm", "shared_memory_bytes_per_sm", "max_async_copy_groups",
    "tensor_latency_cycles", "device_fixed_overhead_cycles", "warp_size",
    "sustained_clock_hz",
};
const char *const opm_hw_map_names[HM_COUNT] = {
    "tensor_flops_per_s", "vector_flops_per_s", "tensor_energy_j_per_flop", "vector_energy_j_per_flop",
    "tensor_flops_per_clock_per_sm", "vector_flops_per_clock_per_sm", "tensor_achievable_fraction",
};
/* mma_sync: Volta..Ada warp-level MMA; wgmma: Hopper warpgroup MMA fed by
 * TMA; tcgen05: Blackwell MMA into tensor memory; mfma: AMD CDNA matrix
 * cores; mxu: TPU systolic arrays; mme: Gaudi matrix engines; simt: no
 * matrix engine (CUDA-core FMAs). */
const char *const opm_hw_matrix_names[] = {"simt", "mma_sync", "wgmma", "tcgen05", "mfma", "mxu", "mme", NULL};
const char *const opm_hw_power_names[PC_COUNT] = {
    "base_power_w", "sm_resident_power_w", "tc_active_power_w", "dram_active_power_w",
    "dram_exposed_power_w", "l2_active_power_w", "smem_active_power_w",
};

const char *const opm_hw_level_keys[LK_COUNT + 1] = {
    "name", "size_bytes", "bandwidth_bytes_per_s", "energy_j_per_byte", "energy_j_per_sector",
    "latency_s", "latency_cycles", "line_size_bytes", "sector_size_bytes", "bank_count",
    "bank_width_bytes", "partitions", "far_latency_cycles", NULL,
};
/* Innermost first: the order memory.levels must list them in. */
const char *const opm_hw_level_names[] = {"register", "sram", "l1", "l2", "llc", "hbm", NULL};
static const int level_ranks[] = {0, 1, 1, 2, 3, 4};
const char *const opm_hw_kinds[] = {"gpu", "tpu", "npu", "cpu", NULL};
const char *const opm_hw_objective_names[] = {"latency", "energy", "edp", NULL};

int opm_hw_objective_index(const char *name)
{
    for (int i = 0; name && opm_hw_objective_names[i]; i++)
        if (!strcmp(name, opm_hw_objective_names[i])) return i;
    return -1;
}

int opm_hw_level_rank(const char *name)
{
    for (int i = 0; opm_hw_level_names[i]; i++)
        if (!strcmp(name, opm_hw_level_names[i])) return level_ranks[i];
    return -1;
}

static const size_t level_offsets[LK_COUNT] = {
    0, offsetof(opm_memory_level, size_bytes), offsetof(opm_memory_level, bandwidth_bytes_per_s),
    offsetof(opm_memory_level, energy_j_per_byte), offsetof(opm_memory_level, energy_j_per_sector),
    offsetof(opm_memory_level, latency_s), offsetof(opm_memory_level, latency_cycles),
    offsetof(opm_memory_level, line_size_bytes), offsetof(opm_memory_level, sector_size_bytes),
    offsetof(opm_memory_level, bank_count), offsetof(opm_memory_level, bank_width_bytes),
    offsetof(opm_memory_level, partitions), offsetof(opm_memory_level, far_latency_cycles),
};

double *opm_hw_level_slot(opm_memory_level *l, int key)
{
    return key > 0 && key < LK_COUNT ? (double *)(void *)((char *)l + level_offsets[key]) : NULL;
}

double opm_hw_level_value(const opm_memory_level *l, int key)
{
    return key > 0 && key < LK_COUNT ? *(const double *)(const void *)((const char *)l + level_offsets[key]) : 0;
}

static const char *number_expected(double v, int positive)
{
    if (!(v >= 0) || !isfinite(v) || (positive && v == 0)) return positive ? "a positive number" : "a non-negative number";
    return NULL;
}

const char *opm_hw_cparam_expected(int idx, double v)
{
    const char *e = number_expected(v, idx <= CP_NUM_SMS);
    if (e) return e;
    /* Counts of things are whole numbers; clocks and cycles need not be. */
    int whole = idx == CP_NUM_SMS || idx == CP_MAX_CTAS_PER_SM || idx == CP_MAX_WARPS_PER_SM ||
                idx == CP_REGISTERS_PER_SM || idx == CP_SHARED_MEMORY_BYTES_PER_SM ||
                idx == CP_MAX_ASYNC_COPY_GROUPS || idx == CP_WARP_SIZE;
    if (whole && v != floor(v)) return idx == CP_NUM_SMS ? "a positive integer" : "a non-negative integer";
    return NULL;
}

const char *opm_hw_map_expected(int map, double v)
{
    return number_expected(v, map == HM_TENSOR_FLOPS || map == HM_VECTOR_FLOPS);
}

const char *opm_hw_level_expected(int key, double v)
{
    const char *e = number_expected(v, key == LK_BANDWIDTH);
    if (e) return e;
    if (key == LK_PARTITIONS && !(v >= 1 && v <= 64 && v == floor(v))) return "a whole number of partitions from 1 to 64";
    return NULL;
}

const char *opm_hw_fraction_expected(double v)
{
    return v > 0 && v <= 1 ? NULL : "a utilization in (0, 1]";
}

/* Linear interpolation in a table ascending by clock, held flat past its
 * ends (a clock outside the measured range gets the nearest measurement). */
static double table_at(const double *x, const double *y, size_t n, double at)
{
    if (n == 0) return 0;
    if (at <= x[0]) return y[0];
    if (at >= x[n - 1]) return y[n - 1];
    size_t lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (x[mid] <= at) lo = mid;
        else hi = mid;
    }
    double t = (at - x[lo]) / (x[hi] - x[lo]);
    return y[lo] + t * (y[hi] - y[lo]);
}

double opm_hw_voltage(const opm_hardware *hw, double clock_hz)
{
    return table_at(hw->volt_clock_hz, hw->volt, hw->n_volt, clock_hz);
}

/* Without a table, idle power falls with the clock toward a floor: the
 * clock-independent part (memory, board, fans, leakage at the lowest
 * voltage) plus a part growing as f³ (V²f with V roughly ∝ f).  The floor
 * is the lowest-clock idle power over the top-clock one in the three
 * measured EnergAIzer tables: A100 PCIe 44.47/67.34 = 0.66, A100 SXM
 * 60.28/82.29 = 0.73, H100 72.10/120.14 = 0.60; their median. */
#define IDLE_POWER_FLOOR_FRACTION 0.66

/* Without a measured idle power, the board's idle at its quoted clock is
 * this fraction of tdp_w: the measured idle/TDP of the A100 PCIe
 * (67.34/250 = 0.27), A100 SXM (82.29/400 = 0.21) and H100 SXM
 * (120.14/700 = 0.17); their median. */
#define IDLE_TDP_FRACTION 0.21

static double idle_at(const opm_hardware *hw, double clock_hz, int tdp_rule)
{
    double f = clock_hz > 0 ? clock_hz : hw->cparam[CP_CLOCK_HZ];
    if (hw->n_idle) return table_at(hw->idle_clock_hz, hw->idle_w, hw->n_idle, f);
    double p0 = hw->has_static_power ? hw->static_power_w : tdp_rule && hw->has_tdp ? IDLE_TDP_FRACTION * hw->tdp_w : 0;
    double f0 = hw->static_power_clock_hz > 0 ? hw->static_power_clock_hz : hw->cparam[CP_CLOCK_HZ];
    double r = f / f0;
    return p0 * (IDLE_POWER_FLOOR_FRACTION + (1 - IDLE_POWER_FLOOR_FRACTION) * r * r * r);
}

double opm_hardware_idle_power_w(const opm_hardware *hw, double clock_hz) { return idle_at(hw, clock_hz, 1); }
double opm_hw_measured_idle_w(const opm_hardware *hw, double clock_hz) { return idle_at(hw, clock_hz, 0); }

int opm_hardware_has_idle_power(const opm_hardware *hw) { return hw->n_idle > 0 || hw->has_static_power || hw->has_tdp; }
int opm_hardware_idle_power_is_measured(const opm_hardware *hw) { return hw->n_idle > 0 || hw->has_static_power; }

void opm_hw_derive_energy(opm_hardware *hw)
{
    memset(hw->derived_j_per_flop, 0, sizeof hw->derived_j_per_flop);
    double budget = hw->tdp_w - opm_hardware_idle_power_w(hw, 0);
    if (!hw->has_tdp || !(budget > 0)) return;
    for (int e = 0; e < 2; e++)
        for (int d = 0; d < OPM_DTYPE_COUNT; d++) {
            double peak = hw->maps[e ? HM_VECTOR_FLOPS : HM_TENSOR_FLOPS][d];
            if (peak > 0 && hw->maps[e ? HM_VECTOR_ENERGY : HM_TENSOR_ENERGY][d] <= 0)
                hw->derived_j_per_flop[e][d] = budget / peak;
        }
}

const char *opm_hardware_gemm_selection_objective(const opm_hardware *hw)
{
    return opm_hw_objective_names[hw->gemm_objective >= 0 && hw->gemm_objective <= 2 ? hw->gemm_objective : 0];
}

void opm_hw_init(opm_hardware *hw)
{
    memset(hw, 0, sizeof *hw);
    hw->util_vector = hw->util_tensor = 1.0;
}

/* The per-value checks the loader makes while reading, made again on the
 * object, so a builder-made description passes the same ones. */
static int check_values(const opm_hardware *hw, opm_error *err)
{
    char f[OPM_ERROR_FIELD_MAX];
    const char *e;
    int known_kind = 0;
    for (int i = 0; opm_hw_kinds[i]; i++) known_kind |= !strcmp(hw->kind, opm_hw_kinds[i]);
    if (!known_kind) return opm_err(err, OPM_EINVAL, "kind", "expected gpu, tpu, npu or cpu, got '%.20s'", hw->kind);
    if (hw->has_static_power && (e = number_expected(hw->static_power_w, 0)))
        return opm_err(err, OPM_EINVAL, "static_power_w", "expected %s, got %.17g", e, hw->static_power_w);
    if (hw->has_tdp && (e = number_expected(hw->tdp_w, 1)))
        return opm_err(err, OPM_EINVAL, "tdp_w", "expected %s, got %.17g", e, hw->tdp_w);
    for (int i = 0; i < CP_COUNT; i++)
        if ((hw->cparam_set & (1u << i)) && (e = opm_hw_cparam_expected(i, hw->cparam[i]))) {
            snprintf(f, sizeof f, "compute.%s", opm_hw_cparam_names[i]);
            return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, hw->cparam[i]);
        }
    for (int m = 0; m < HM_COUNT; m++)
        for (int d = 0; d < OPM_DTYPE_COUNT; d++)
            if (hw->maps[m][d] != 0 && (e = opm_hw_map_expected(m, hw->maps[m][d]))) {
                snprintf(f, sizeof f, "compute.%s.%s", opm_hw_map_names[m], opm_dtype_name((opm_dtype)d));
                return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, hw->maps[m][d]);
            }
    if ((hw->has_util_vector && opm_hw_fraction_expected(hw->util_vector)) ||
        (hw->has_util_tensor && opm_hw_fraction_expected(hw->util_tensor)))
        return opm_err(err, OPM_EINVAL, hw->has_util_vector && opm_hw_fraction_expected(hw->util_vector)
                                            ? "utilization.vector" : "utilization.tensor",
                       "expected a utilization in (0, 1]");
    if (hw->n_levels < 1 || hw->n_levels > OPM_MAX_LEVELS)
        return opm_err(err, OPM_EINVAL, "memory.levels", "expected a list of 1 to %d levels, got %zu",
                       OPM_MAX_LEVELS, hw->n_levels);
    for (size_t i = 0; i < hw->n_levels; i++) {
        const opm_memory_level *l = &hw->levels[i];
        snprintf(f, sizeof f, "memory.levels[%zu].name", i);
        if (opm_hw_level_rank(l->name) < 0)
            return opm_err(err, OPM_EINVAL, f, "expected a level name (register, sram, l1, l2, llc, hbm), got '%.16s'",
                           l->name);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(hw->levels[j].name, l->name))
                return opm_err(err, OPM_EINVAL, f, "expected a level name not used before, got '%s' again", l->name);
        for (int k = 1; k < LK_COUNT; k++) {
            double v = opm_hw_level_value(l, k);
            /* 0 is "not given" (a level may leave out its bandwidth). */
            if (v != 0 && (e = opm_hw_level_expected(k, v))) {
                snprintf(f, sizeof f, "memory.levels[%zu].%s", i, opm_hw_level_keys[k]);
                return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, v);
            }
        }
        if ((e = opm_hw_fraction_expected(l->utilization))) {
            snprintf(f, sizeof f, "utilization.memory.%s", l->name);
            return opm_err(err, OPM_EINVAL, f, "expected %s, got %.17g", e, l->utilization);
        }
    }
    return 0;
}

/* Checks across fields: the levels listed innermost first (register,
 * sram/l1, l2, llc, hbm: the models read "the next level out" in that
 * order), and a per-SM rate agreeing with its peak. */
static int check_structure(const opm_hardware *hw, opm_error *err)
{
    char f[OPM_ERROR_FIELD_MAX];
    for (size_t i = 1; i < hw->n_levels; i++)
        if (opm_hw_level_rank(hw->levels[i].name) < opm_hw_level_rank(hw->levels[i - 1].name)) {
            snprintf(f, sizeof f, "memory.levels[%zu].name", i);
            return opm_err(err, OPM_EINVAL, f,
                           "expected the levels innermost first (register, sram or l1, l2, llc, hbm), got %s after %s",
                           hw->levels[i].name, hw->levels[i - 1].name);
        }
    for (int e = 0; e < 2; e++) {
        int fpc_map = e ? HM_TENSOR_FPC : HM_VECTOR_FPC, peak_map = e ? HM_TENSOR_FLOPS : HM_VECTOR_FLOPS;
        double clock = e ? opm_hardware_tensor_clock_hz(hw) : hw->cparam[CP_CLOCK_HZ];
        for (int d = 0; d < OPM_DTYPE_COUNT; d++) {
            double fpc = hw->maps[fpc_map][d], peak = hw->maps[peak_map][d];
            if (fpc == 0) continue;
            snprintf(f, sizeof f, "compute.%s.%s", opm_hw_map_names[fpc_map], opm_dtype_name((opm_dtype)d));
            if (peak <= 0)
                return opm_err(err, OPM_EINVAL, f, "expected a peak in %s.%s for this per-SM rate",
                               opm_hw_map_names[peak_map], opm_dtype_name((opm_dtype)d));
            double derived = fpc * hw->cparam[CP_NUM_SMS] * clock;
            if (fabs(derived - peak) > OPM_HW_FPC_TOLERANCE * peak)
                return opm_err(err, OPM_EINVAL, f,
                               "expected num_sms x this x %s (%.6g FLOP/s) within %.0f%% of %s (%.6g), got %.6g",
                               e ? "tensor_clock_hz" : "clock_hz", derived, OPM_HW_FPC_TOLERANCE * 100,
                               opm_hw_map_names[peak_map], peak, fpc);
        }
    }
    return 0;
}

int opm_hw_check(const opm_hardware *hw, opm_error *err)
{
    if (!hw->name[0]) return opm_err(err, OPM_EINVAL, "name", "missing; every hardware needs a name");
    if (!(hw->cparam_set & (1u << CP_CLOCK_HZ)))
        return opm_err(err, OPM_EINVAL, "compute.clock_hz", "missing; expected a positive clock in Hz");
    if (hw->cparam[CP_CLOCK_HZ] <= 0)
        return opm_err(err, OPM_EINVAL, "compute.clock_hz", "expected a positive clock in Hz");
    if (!(hw->cparam_set & (1u << CP_NUM_SMS)))
        return opm_err(err, OPM_EINVAL, "compute.num_sms", "missing; expected a positive number of SMs/CUs/cores");
    if (hw->cparam[CP_NUM_SMS] < 1)
        return opm_err(err, OPM_EINVAL, "compute.num_sms", "expected a positive number of SMs/CUs/cores");
    if ((hw->cparam_set & (1u << CP_SM_MAX_CLOCK_HZ)) && hw->cparam[CP_SM_MAX_CLOCK_HZ] < hw->cparam[CP_CLOCK_HZ])
        return opm_err(err, OPM_EINVAL, "compute.sm_max_clock_hz", "expected at least clock_hz (%.17g), got %.17g",
                       hw->cparam[CP_CLOCK_HZ], hw->cparam[CP_SM_MAX_CLOCK_HZ]);
    if ((hw->cparam_set & (1u << CP_SUSTAINED_CLOCK_HZ)) &&
        !(hw->cparam[CP_SUSTAINED_CLOCK_HZ] > 0 && hw->cparam[CP_SUSTAINED_CLOCK_HZ] <= hw->cparam[CP_CLOCK_HZ]))
        return opm_err(err, OPM_EINVAL, "compute.sustained_clock_hz", "expected a clock in (0, clock_hz = %.17g], got %.17g",
                       hw->cparam[CP_CLOCK_HZ], hw->cparam[CP_SUSTAINED_CLOCK_HZ]);
    if ((hw->cparam_set & (1u << CP_WARP_SIZE)) &&
        !(hw->cparam[CP_WARP_SIZE] >= 1 && hw->cparam[CP_WARP_SIZE] <= 128))
        return opm_err(err, OPM_EINVAL, "compute.warp_size", "expected 1 to 128 lanes, got %.17g",
                       hw->cparam[CP_WARP_SIZE]);
    for (int d = 0; d < OPM_DTYPE_COUNT; d++) {
        double f = hw->maps[HM_TENSOR_ACHIEVABLE][d];
        if (f != 0 && !(f > 0 && f <= 1))
            return opm_err(err, OPM_EINVAL, "compute.tensor_achievable_fraction",
                           "expected a fraction in (0, 1] for %s, got %.17g", opm_dtype_name((opm_dtype)d), f);
    }
    int peaks = 0;
    for (int e = HM_TENSOR_FLOPS; e <= HM_VECTOR_FLOPS; e++)
        for (int d = 0; d < OPM_DTYPE_COUNT; d++) peaks += hw->maps[e][d] > 0;
    if (!peaks)
        return opm_err(err, OPM_EINVAL, "compute",
                       "expected at least one peak in tensor_flops_per_s or vector_flops_per_s");
    int hbm = 0;
    for (size_t i = 0; i < hw->n_levels; i++) hbm |= strcmp(hw->levels[i].name, "hbm") == 0;
    if (!hbm)
        return opm_err(err, OPM_EINVAL, "memory.levels",
                       "expected a level named hbm (the device DRAM, whatever its technology)");
    for (size_t i = 0; i < hw->n_levels; i++) {
        const opm_memory_level *l = &hw->levels[i];
        if (strcmp(l->name, "hbm") == 0 && l->bandwidth_bytes_per_s <= 0) {
            char f[64];
            snprintf(f, sizeof f, "memory.levels[%zu].bandwidth_bytes_per_s", i);
            return opm_err(err, OPM_EINVAL, f, "expected the hbm level to have a positive bandwidth");
        }
    }
    int rc = check_values(hw, err);
    return rc ? rc : check_structure(hw, err);
}

opm_hardware *opm_hardware_clone(const opm_hardware *hw, opm_error *err)
{
    opm_error_clear(err); /* no stale message after success */
    opm_hardware *c = malloc(sizeof *c);
    if (!c) {
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    memcpy(c, hw, sizeof *c);
    return c;
}

void opm_hardware_free(opm_hardware *hw) { free(hw); }

/* Load-to-use latencies, in SM cycles, where a level gives none: the
 * values the kernel models assume (gemm_tiled.c LAT_L2_CYC, LAT_DRAM_CYC). */
#define DEFAULT_L2_LATENCY_CYCLES 200.0
#define DEFAULT_DRAM_LATENCY_CYCLES 500.0

/* A level's latency in cycles at clock f: given, from seconds, or d. */
static double level_latency_cycles(const opm_memory_level *l, double f, double d)
{
    if (!l) return d;
    if (l->latency_cycles > 0) return l->latency_cycles;
    if (l->latency_s > 0) return l->latency_s * f;
    return d;
}

/* DRAM at another SM clock.  DRAM's bandwidth is set by its own clock and
 * interface, not the SM clock: it stays (so does the roofline's peak, which
 * by definition takes it).  Its latency does change: of a DRAM load's
 * latency L (cycles at f0), the on-chip path to and through L2 (the L2 hit
 * latency l) runs on the SM clock and the rest (L − l) on DRAM's, so at
 * clock f it takes (L − l)/f0 + l/f seconds, (L − l)·f/f0 + l cycles (two
 * changes compose into one).  A kernel short of bytes in flight slows at a
 * lower clock through that latency alone: every kernel model prices its
 * DRAM bytes in flight at the run's latency (stream.c's Little's-law chain,
 * gemm_waves.c's in-flight DRAM rate and act_quant_s, attention_kernel.c's
 * CTA DRAM trips); scaling the bandwidth by the same Little's law as well
 * counted the clock twice (docs/workload.md).  The rescale needs only the
 * two latencies, so it applies to an hbm level that has a latency and no
 * bandwidth too.  No fitted constant: L and l are the description's
 * pointer-chase latencies. */
static void dram_at_clock(opm_hardware *c, double base, double clock_hz)
{
    opm_memory_level *hbm = NULL, *l2 = NULL;
    for (size_t i = 0; i < c->n_levels; i++) {
        if (!strcmp(c->levels[i].name, "hbm")) hbm = &c->levels[i];
        else if (!strcmp(c->levels[i].name, "l2")) l2 = &c->levels[i];
    }
    if (!hbm || !l2) return;
    double L = level_latency_cycles(hbm, base, DEFAULT_DRAM_LATENCY_CYCLES);
    double l = level_latency_cycles(l2, base, DEFAULT_L2_LATENCY_CYCLES);
    if (!(L > l) || !(l > 0)) return;
    double at_f = (L - l) * clock_hz / base + l; /* cycles at the new clock */
    if (hbm->latency_s > 0) hbm->latency_s = at_f / clock_hz;
    else hbm->latency_cycles = at_f;
}

double opm_hw_onchip_clock_ratio(const opm_hardware *hw)
{
    double f = hw->cparam[CP_CLOCK_HZ];
    return hw->quoted_clock_hz > 0 && f > 0 ? f / hw->quoted_clock_hz : 1;
}

opm_hardware *opm_hardware_with_clock(const opm_hardware *hw, double clock_hz, opm_error *err)
{
    opm_error_clear(err); /* no stale message after success */
    if (!(clock_hz > 0) || !isfinite(clock_hz)) {
        opm_err(err, OPM_EINVAL, "clock", "expected a positive clock, got %g Hz", clock_hz);
        return NULL;
    }
    double smax = hw->cparam[CP_SM_MAX_CLOCK_HZ];
    if (smax > 0 && clock_hz > smax * (1 + 1e-9)) {
        opm_err(err, OPM_EINVAL, "clock", "expected at most sm_max_clock_hz = %g MHz, got %g MHz",
                smax / 1e6, clock_hz / 1e6);
        return NULL;
    }
    opm_hardware *c = opm_hardware_clone(hw, err);
    if (!c) return NULL;
    double base = hw->cparam[CP_CLOCK_HZ];
    double tbase = opm_hardware_tensor_clock_hz(hw);
    for (int d = 0; d < OPM_DTYPE_COUNT; d++) {
        c->maps[HM_TENSOR_FLOPS][d] *= clock_hz / tbase;
        c->maps[HM_VECTOR_FLOPS][d] *= clock_hz / base;
    }
    /* On-chip levels run on the core clock; DRAM has its own. */
    for (size_t i = 0; i < c->n_levels; i++)
        if (strcmp(c->levels[i].name, "hbm") != 0) c->levels[i].bandwidth_bytes_per_s *= clock_hz / base;
    dram_at_clock(c, base, clock_hz);
    /* Dynamic energy per FLOP and per on-chip byte is C·V²: it follows the
     * square of the supply voltage, when the description has a table.
     * DRAM has its own supply. */
    double v0 = opm_hw_voltage(hw, base), v1 = opm_hw_voltage(hw, clock_hz);
    if (v0 > 0 && v1 > 0) {
        double s = (v1 / v0) * (v1 / v0);
        for (int d = 0; d < OPM_DTYPE_COUNT; d++) {
            c->maps[HM_TENSOR_ENERGY][d] *= s;
            c->maps[HM_VECTOR_ENERGY][d] *= s;
            c->derived_j_per_flop[0][d] *= s;
            c->derived_j_per_flop[1][d] *= s;
        }
        for (size_t i = 0; i < c->n_levels; i++)
            if (strcmp(c->levels[i].name, "hbm") != 0) {
                c->levels[i].energy_j_per_byte *= s;
                c->levels[i].energy_j_per_sector *= s;
            }
    }
    /* Idle power stays anchored at the clock it was measured at. */
    if ((c->has_static_power || c->has_tdp) && !(c->static_power_clock_hz > 0)) c->static_power_clock_hz = base;
    if (!(c->quoted_clock_hz > 0)) c->quoted_clock_hz = base;
    c->cparam[CP_CLOCK_HZ] = clock_hz;
    if (c->cparam_set & (1u << CP_TENSOR_CLOCK_HZ)) c->cparam[CP_TENSOR_CLOCK_HZ] = clock_hz;
    /* A clock locked below the sustained one is the one the load runs at. */
    if (c->cparam[CP_SUSTAINED_CLOCK_HZ] > clock_hz) c->cparam[CP_SUSTAINED_CLOCK_HZ] = clock_hz;
    return c;
}

int opm_hardware_equal(const opm_hardware *a, const opm_hardware *b)
{
    if (strcmp(a->name, b->name) || strcmp(a->kind, b->kind) || strcmp(a->dataflow, b->dataflow) ||
        a->matrix_instruction != b->matrix_instruction ||
        a->static_power_w != b->static_power_w || a->tdp_w != b->tdp_w ||
        a->has_static_power != b->has_static_power || a->has_tdp != b->has_tdp ||
        a->static_power_clock_hz != b->static_power_clock_hz || a->quoted_clock_hz != b->quoted_clock_hz ||
        a->n_idle != b->n_idle ||
        a->n_volt != b->n_volt || a->gemm_objective != b->gemm_objective ||
        a->cparam_set != b->cparam_set || a->has_fma != b->has_fma ||
        a->util_vector != b->util_vector || a->util_tensor != b->util_tensor ||
        a->n_levels != b->n_levels || a->has_energy_model != b->has_energy_model ||
        strcmp(a->em_level, b->em_level) || a->power_set != b->power_set || a->n_features != b->n_features)
        return 0;
    for (int i = 0; i < CP_COUNT; i++)
        if (a->cparam[i] != b->cparam[i]) return 0;
    for (size_t i = 0; i < a->n_idle; i++)
        if (a->idle_clock_hz[i] != b->idle_clock_hz[i] || a->idle_w[i] != b->idle_w[i]) return 0;
    for (size_t i = 0; i < a->n_volt; i++)
        if (a->volt_clock_hz[i] != b->volt_clock_hz[i] || a->volt[i] != b->volt[i]) return 0;
    for (int m = 0; m < HM_COUNT; m++)
        for (int d = 0; d < OPM_DTYPE_COUNT; d++)
            if (a->maps[m][d] != b->maps[m][d]) return 0;
    for (int i = 0; a->has_fma && i < 3; i++)
        if (a->fma_dims[i] != b->fma_dims[i]) return 0;
    for (size_t i = 0; i < a->n_levels; i++) {
        const opm_memory_level *x = &a->levels[i], *y = &b->levels[i];
        if (strcmp(x->name, y->name) || x->size_bytes != y->size_bytes ||
            x->bandwidth_bytes_per_s != y->bandwidth_bytes_per_s || x->energy_j_per_byte != y->energy_j_per_byte ||
            x->energy_j_per_sector != y->energy_j_per_sector || x->latency_s != y->latency_s ||
            x->latency_cycles != y->latency_cycles || x->line_size_bytes != y->line_size_bytes ||
            x->partitions != y->partitions || x->far_latency_cycles != y->far_latency_cycles ||
            x->sector_size_bytes != y->sector_size_bytes || x->bank_count != y->bank_count ||
            x->bank_width_bytes != y->bank_width_bytes || x->utilization != y->utilization)
            return 0;
    }
    for (int i = 0; i < PC_COUNT; i++)
        if (a->power[i] != b->power[i]) return 0;
    for (size_t i = 0; i < a->n_features; i++)
        if (strcmp(a->features[i], b->features[i])) return 0;
    if (a->has_link != b->has_link ||
        (a->has_link && (strcmp(a->link.name, b->link.name) ||
                         a->link.bandwidth_bytes_per_s != b->link.bandwidth_bytes_per_s ||
                         a->link.latency_s != b->link.latency_s || a->link.domain_devices != b->link.domain_devices)))
        return 0;
    return 1;
}

const opm_interconnect *opm_hardware_interconnect(const opm_hardware *hw) { return hw->has_link ? &hw->link : NULL; }

const char *opm_hardware_name(const opm_hardware *hw) { return hw->name; }
const char *opm_hardware_kind(const opm_hardware *hw) { return hw->kind; }
double opm_hardware_clock_hz(const opm_hardware *hw) { return hw->cparam[CP_CLOCK_HZ]; }
double opm_hardware_tensor_clock_hz(const opm_hardware *hw)
{
    return hw->cparam[CP_TENSOR_CLOCK_HZ] > 0 ? hw->cparam[CP_TENSOR_CLOCK_HZ] : hw->cparam[CP_CLOCK_HZ];
}
int opm_hardware_num_sms(const opm_hardware *hw) { return (int)hw->cparam[CP_NUM_SMS]; }
double opm_hardware_static_power_w(const opm_hardware *hw) { return hw->static_power_w; }
double opm_hardware_tdp_w(const opm_hardware *hw) { return hw->tdp_w; }

double opm_hardware_peak_flops(const opm_hardware *hw, opm_engine engine, opm_dtype dt)
{
    if ((unsigned)dt >= OPM_DTYPE_COUNT || engine == OPM_ENGINE_NONE) return 0;
    return hw->maps[engine == OPM_ENGINE_TENSOR ? HM_TENSOR_FLOPS : HM_VECTOR_FLOPS][dt];
}

double opm_hardware_flops_per_clock_per_sm(const opm_hardware *hw, opm_engine engine, opm_dtype dt)
{
    if ((unsigned)dt >= OPM_DTYPE_COUNT || engine == OPM_ENGINE_NONE) return 0;
    int tensor = engine == OPM_ENGINE_TENSOR;
    double fpc = hw->maps[tensor ? HM_TENSOR_FPC : HM_VECTOR_FPC][dt];
    if (fpc > 0) return fpc;
    /* Not given: derived from the peak, which the description must have. */
    double clock = tensor ? opm_hardware_tensor_clock_hz(hw) : hw->cparam[CP_CLOCK_HZ];
    double peak = hw->maps[tensor ? HM_TENSOR_FLOPS : HM_VECTOR_FLOPS][dt];
    return peak > 0 && clock > 0 && hw->cparam[CP_NUM_SMS] > 0 ? peak / (hw->cparam[CP_NUM_SMS] * clock) : 0;
}

double opm_hardware_energy_j_per_flop(const opm_hardware *hw, opm_engine engine, opm_dtype dt)
{
    if ((unsigned)dt >= OPM_DTYPE_COUNT || engine == OPM_ENGINE_NONE) return 0;
    return hw->maps[engine == OPM_ENGINE_TENSOR ? HM_TENSOR_ENERGY : HM_VECTOR_ENERGY][dt];
}

double opm_hardware_utilization(const opm_hardware *hw, opm_engine engine)
{
    return engine == OPM_ENGINE_TENSOR ? hw->util_tensor : hw->util_vector;
}

double opm_hardware_fixed_overhead_cycles(const opm_hardware *hw)
{
    return hw->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES];
}

size_t opm_hardware_level_count(const opm_hardware *hw) { return hw->n_levels; }
const opm_memory_level *opm_hardware_level(const opm_hardware *hw, size_t i)
{
    return i < hw->n_levels ? &hw->levels[i] : NULL;
}

const opm_memory_level *opm_hardware_find_level(const opm_hardware *hw, const char *name)
{
    for (size_t i = 0; i < hw->n_levels; i++)
        if (strcmp(hw->levels[i].name, name) == 0) return &hw->levels[i];
    return NULL;
}

double opm_hardware_compute_param(const opm_hardware *hw, const char *key)
{
    for (int i = 0; i < CP_COUNT; i++)
        if (strcmp(opm_hw_cparam_names[i], key) == 0) return hw->cparam[i];
    return 0;
}
