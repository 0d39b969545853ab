/* energy.c — the one energy model every prediction model ends with: dynamic
 * energy from J/FLOP × FLOPs and J/byte (or J/sector) × the traffic the
 * model computed per level, or the seed's E0–E3 module powers × busy times
 * when the description gives power_coefficients; static energy from the
 * idle power at the clock × latency; the average power; and the power cap
 * (tdp_w) that lowers the clock when that power would exceed it.
 * docs/energy.md has the formulas and every coefficient's source rule. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../hardware/hw_internal.h"
#include "energy.h"
#include "models.h"

/* Bisection steps of the power-cap clock search: 2^-48 of the clock range,
 * far below any table step; bounded whatever the hardware figures. */
#define CAP_STEPS 48
/* The lowest clock the cap may pick, as a fraction of the current one, when
 * the description has no table naming a lower measured clock. */
#define CAP_MIN_CLOCK_FRACTION 0.1
/* Sector size when a level gives energy_j_per_sector but no size. */
#define DEFAULT_SECTOR_BYTES 32
/* Active base power: what a busy GPU draws beyond its idle power that no
 * FLOP or byte of the op explains (clock tree, instruction issue and
 * scheduling, register-file and shared-memory traffic, leakage rising with
 * activity and temperature).  It scales as C·V²·f, so it is written as a
 * dimensionless fraction of tdp_w at the top clock, which transfers to any
 * GPU with a tdp_w; bounded to [0, 1) (a busy board below its TDP before
 * any FLOP).  Fitted on the EnergAIzer A100 PCIe 900 MHz runs of
 * even-hashed workload names (0.7774 on the current GEMM model, 0.7515 at
 * first), scored on the rest, on the A10 and on the A100 DVFS clocks; fitted
 * on the A10's runs instead it is 0.898 (docs/energy.md, "Active base
 * power"). */
#ifndef ACTIVE_POWER_FRACTION
#define ACTIVE_POWER_FRACTION 0.78
#endif
/* Without a supply-voltage table: V(f)/V(f_top) = max(VOLT_FLOOR_RATIO, a
 * line from the knee at VOLT_KNEE_FRACTION × f_top to 1 at f_top).  The two
 * measured tables (EnergAIzer A100 PCIe, A100 SXM) are flat at 0.78 and
 * 0.83 of their top-clock voltage up to 0.71 and 0.82 of the top clock. */
#define VOLT_FLOOR_RATIO 0.8
#define VOLT_KNEE_FRACTION 0.75

/* Missing coefficients, one diagnostic each: energy_missing, then
 * energy_missing_2 … _4 (a JSON object cannot repeat a key). */
#define MISSING_MAX 4
typedef struct missing_list {
    size_t n;
    char what[MISSING_MAX][sizeof ((opm_diag *)0)->text];
} missing_list;

/* Joined by hand, not by snprintf: built-ins whose figures come from the
 * TDP rule note one on every prediction, and the formatter was a fifth of
 * the roofline's time. */
static void missing(missing_list *m, const char *what, const char *sub)
{
    if (m->n >= MISSING_MAX) return;
    char *d = m->what[m->n++];
    size_t cap = sizeof m->what[0] - 1, n = strlen(what);
    if (n > cap) n = cap;
    memcpy(d, what, n);
    if (sub && n < cap) {
        d[n++] = '.';
        size_t k = strlen(sub);
        if (k > cap - n) k = cap - n;
        memcpy(d + n, sub, k);
        n += k;
    }
    d[n] = '\0';
}

/* The hardware level a profile level was computed for.  Models list them in
 * the hardware's order, skipping some (registers), so the level at the same
 * or the next position is nearly always it; the name decides. */
static const opm_memory_level *level_of(const opm_hardware *hw, size_t i, const char *name)
{
    size_t n = opm_hardware_level_count(hw);
    for (size_t j = i; j < n && j <= i + 1; j++) {
        const opm_memory_level *l = opm_hardware_level(hw, j);
        if (!strcmp(l->name, name)) return l;
    }
    return opm_hardware_find_level(hw, name);
}

/* J/FLOP of the engine at dt: the given figure, else the TDP rule's
 * (noted in *derived), else — for vector work in a narrow type — fp32's. */
static double flop_j(const opm_hardware *hw, opm_engine e, opm_dtype dt, missing_list *derived, int *rule_flop)
{
    int v = e == OPM_ENGINE_VECTOR;
    const char *name = v ? "vector_energy_j_per_flop" : "tensor_energy_j_per_flop";
    opm_dtype try[2] = {dt, OPM_FP32};
    for (int k = 0; k < (v && dt != OPM_FP32 ? 2 : 1); k++) {
        double j = opm_hardware_energy_j_per_flop(hw, e, try[k]);
        if (j > 0) return j;
        if ((unsigned)try[k] < OPM_DTYPE_COUNT && hw->derived_j_per_flop[v][try[k]] > 0) {
            missing(derived, name, opm_dtype_name(try[k]));
            *rule_flop = 1;
            return hw->derived_j_per_flop[v][try[k]];
        }
    }
    return 0;
}

/* The seed's E0–E3 power-coefficient form: each module's active power ×
 * the time the model says it is busy.  E0: base power over the latency;
 * E1: + tensor cores over the compute time, DRAM over its transfer time;
 * E2: + SM residency over the latency, L2 over its time; E3: + shared
 * memory over its time, and the DRAM time not hidden behind compute. */
static void module_power_energy(opm_profile *p, const opm_hardware *hw)
{
    int lvl = hw->em_level[0] ? hw->em_level[1] - '0' : 3;
    const double *pc = hw->power;
    enum { BASE, SM, TC, DRAM, EXPOSED, L2, SMEM };
    p->static_energy_j = pc[BASE] * p->latency_s;
    p->compute_energy_j = 0;
    if (lvl >= 1 && p->engine == OPM_ENGINE_TENSOR) p->compute_energy_j += pc[TC] * p->compute_time_s;
    if (lvl >= 2) p->compute_energy_j += pc[SM] * p->latency_s;
    for (size_t i = 0; i < p->level_count; i++) {
        opm_level_access *a = &p->levels[i];
        double t = a->time_s;
        a->energy_j = 0;
        if (!strcmp(a->name, "hbm")) {
            if (lvl >= 1) a->energy_j += pc[DRAM] * t;
            if (lvl >= 3 && t > p->compute_time_s) a->energy_j += pc[EXPOSED] * (t - p->compute_time_s);
        } else if (!strcmp(a->name, "l2")) {
            if (lvl >= 2) a->energy_j += pc[L2] * t;
        } else if (!strcmp(a->name, "sram") || !strcmp(a->name, "l1")) {
            if (lvl >= 3) a->energy_j += pc[SMEM] * t;
        }
    }
}

static double dynamic_j(const opm_profile *p)
{
    double e = p->compute_energy_j;
    for (size_t i = 0; i < p->level_count; i++) e += p->levels[i].energy_j;
    return e;
}

/* (V(f·s)/V(f))² for the cap's trial clock, 1 without a voltage table. */
static double volt_ratio_sq(const opm_hardware *hw, double f, double s)
{
    double v0 = opm_hw_voltage(hw, f), v1 = opm_hw_voltage(hw, f * s);
    return v0 > 0 && v1 > 0 ? (v1 / v0) * (v1 / v0) : 1;
}

/* The power cap.  At clock scale s ∈ (0, 1] the op takes latency / s (a
 * capped op is compute-bound: its time follows the clock), its dynamic
 * energy is E·(V(sf)/V(f))² and the board idles at P_idle(sf), so its
 * average power P(s) = E·v(s)²·s / latency + P_idle(sf) rises with s.  The
 * largest s with P(s) ≤ tdp_w is found by bisection; below the lowest
 * measured (or 0.1×) clock the op runs at that clock, over the cap, and
 * says so.  Returns s (1: not capped). */
static double power_cap(opm_profile *p, const opm_hardware *hw, double edyn, double idle_w)
{
    double tdp = opm_hardware_tdp_w(hw), f = opm_hardware_clock_hz(hw), t = p->latency_s;
    if (!(tdp > 0) || !(t > 0) || !(edyn > 0)) return 1;
    if (edyn / t + idle_w <= tdp) return 1;
    double lo_clock = f * CAP_MIN_CLOCK_FRACTION;
    if (hw->n_idle && hw->idle_clock_hz[0] > lo_clock) lo_clock = hw->idle_clock_hz[0];
    if (hw->n_volt && hw->volt_clock_hz[0] > lo_clock) lo_clock = hw->volt_clock_hz[0];
    double lo = lo_clock < f ? lo_clock / f : 1, hi = 1;
    if (edyn * volt_ratio_sq(hw, f, lo) * lo / t + opm_hardware_idle_power_w(hw, f * lo) > tdp) {
        opm_diag_text(p, "power_cap", "unreachable: over tdp_w at the lowest clock");
        return lo;
    }
    for (int i = 0; i < CAP_STEPS; i++) {
        double s = 0.5 * (lo + hi);
        if (edyn * volt_ratio_sq(hw, f, s) * s / t + opm_hardware_idle_power_w(hw, f * s) <= tdp) lo = s;
        else hi = s;
    }
    return lo;
}

/* The clock the description's peaks and tdp_w are quoted at. */
static double top_clock_hz(const opm_hardware *hw)
{
    if (hw->cparam[CP_SM_MAX_CLOCK_HZ] > 0) return hw->cparam[CP_SM_MAX_CLOCK_HZ];
    if (hw->static_power_clock_hz > 0) return hw->static_power_clock_hz;
    return opm_hardware_clock_hz(hw);
}

/* (V(f)/V(f_top))² · f/f_top: the C·V²·f scaling of clocked power. */
static double v2f_ratio(const opm_hardware *hw, double f, double ftop)
{
    if (!(f > 0) || !(ftop > 0)) return 1;
    double v0 = opm_hw_voltage(hw, ftop), v1 = opm_hw_voltage(hw, f), v;
    if (v0 > 0 && v1 > 0) v = v1 / v0;
    else {
        double knee = VOLT_KNEE_FRACTION * ftop;
        v = f >= ftop ? 1 : f <= knee ? VOLT_FLOOR_RATIO
                                      : VOLT_FLOOR_RATIO + (1 - VOLT_FLOOR_RATIO) * (f - knee) / (ftop - knee);
    }
    return v * v * f / ftop;
}

double opm_energy_active_power_w(const opm_hardware *hw)
{
    if (!hw->has_tdp || !(hw->tdp_w > 0)) return 0;
    double ftop = top_clock_hz(hw);
    return ACTIVE_POWER_FRACTION * hw->tdp_w * v2f_ratio(hw, opm_hardware_clock_hz(hw), ftop);
}

static double activity_cap(opm_profile *p, const opm_hardware *hw, int rule_flop, double idle_w);
static void add_active(opm_profile *p, const opm_hardware *hw, double idle_w, opm_diag *d);

/* The idle power at clock_hz, reusing idle_w, the one at the description's
 * clock, when clock_hz is that clock (the uncapped case: every line of a
 * batch): idle_at picks the same clock either way, so the value is the same
 * double, without a second table walk. */
static double idle_power_at(const opm_hardware *hw, double clock_hz, double idle_w)
{
    return clock_hz == opm_hardware_clock_hz(hw) && clock_hz > 0 ? idle_w : opm_hardware_idle_power_w(hw, clock_hz);
}

void opm_energy_apply(opm_profile *p, const opm_hardware *hw, const opm_energy_in *in)
{
    /* Only the counts start at zero: clearing the text buffers was a
     * quarter of a roofline prediction. */
    missing_list miss, derived;
    miss.n = derived.n = 0;
    int rule_flop = 0;
    double idle_w = opm_hardware_idle_power_w(hw, 0);
    if (hw->power_set) {
        module_power_energy(p, hw);
    } else {
        double mj = in->matrix_flops > 0 ? flop_j(hw, in->matrix_engine, in->matrix_dtype, &derived, &rule_flop) : 0;
        double vj = in->vector_flops > 0 ? flop_j(hw, OPM_ENGINE_VECTOR, in->vector_dtype, &derived, &rule_flop) : 0;
        if (in->matrix_flops > 0 && mj <= 0)
            missing(&miss, in->matrix_engine == OPM_ENGINE_TENSOR ? "tensor_energy_j_per_flop"
                                                                              : "vector_energy_j_per_flop",
                    opm_dtype_name(in->matrix_dtype));
        if (in->vector_flops > 0 && vj <= 0)
            missing(&miss, "vector_energy_j_per_flop", opm_dtype_name(in->vector_dtype));
        p->compute_energy_j = in->matrix_flops * mj + in->vector_flops * vj;
        for (size_t i = 0; i < p->level_count; i++) {
            opm_level_access *a = &p->levels[i];
            const opm_memory_level *l = level_of(hw, i, a->name);
            double bytes = (double)a->read_bytes + (double)a->write_bytes;
            a->energy_j = 0;
            if (!l || bytes <= 0) continue;
            /* A per-sector figure is the more specific one: it wins. */
            if (l->energy_j_per_sector > 0)
                a->energy_j = bytes / (l->sector_size_bytes > 0 ? l->sector_size_bytes : DEFAULT_SECTOR_BYTES) *
                              l->energy_j_per_sector;
            else if (l->energy_j_per_byte > 0)
                a->energy_j = bytes * l->energy_j_per_byte;
            else
                missing(&miss, a->name, "energy_j_per_byte");
        }
        if (!opm_hardware_has_idle_power(hw)) missing(&miss, "static_power_w", NULL);
        else if (!opm_hardware_idle_power_is_measured(hw)) missing(&derived, "static_power_w", NULL);
        p->static_energy_j = idle_w * p->latency_s;
    }
    p->energy_j = dynamic_j(p) + p->static_energy_j;
    p->average_power_w = p->latency_s > 0 ? p->energy_j / p->latency_s : 0;
    static const char *const keys[MISSING_MAX] = {"energy_missing", "energy_missing_2", "energy_missing_3",
                                                   "energy_missing_4"};
    for (size_t i = 0; i < miss.n; i++) opm_diag_text_n(p, keys[i], strlen(keys[i]) + 1, miss.what[i]);
    /* Coefficients the TDP rule stood in for: one diagnostic, the first. */
    if (derived.n) opm_diag_text(p, "energy_derived", derived.what[0]);
    double clock_hz = in->capped ? opm_hardware_clock_hz(hw) : activity_cap(p, hw, rule_flop, idle_w);
    if (!hw->power_set) add_active(p, hw, idle_power_at(hw, clock_hz, idle_w), NULL);
}

/* The power cap on the op's activity power (idle plus FLOP and byte
 * energy; the active base power is added after it, clamped, by add_active). */
static double activity_cap(opm_profile *p, const opm_hardware *hw, int rule_flop, double idle_w)
{
    /* A J/FLOP from the TDP rule (rule_flop) is by construction the one at
     * which the dense peak draws tdp_w: a cap computed from it would
     * throttle every compute-bound op at its peak, so there is none (as in
     * the GEMM cap, which reads given figures only). */
    double s = rule_flop ? 1 : power_cap(p, hw, dynamic_j(p), idle_w);
    if (s < 1) {
        double f = opm_hardware_clock_hz(hw), v2 = volt_ratio_sq(hw, f, s);
        p->latency_s /= s;
        p->compute_time_s /= s;
        p->overhead_s /= s;
        p->compute_energy_j *= v2;
        for (size_t i = 0; i < p->level_count; i++)
            if (strcmp(p->levels[i].name, "hbm")) p->levels[i].energy_j *= v2;
        p->static_energy_j = (hw->power_set ? hw->power[0] : opm_hardware_idle_power_w(hw, f * s)) * p->latency_s;
        opm_diag_num(p, "power_capped_clock_hz", f * s);
    }
    p->energy_j = dynamic_j(p) + p->static_energy_j;
    p->average_power_w = p->latency_s > 0 ? p->energy_j / p->latency_s : 0;
    return opm_hardware_clock_hz(hw) * s;
}

/* Adds the active base power over the op's busy time, in compute_j, and
 * says it in active_power_w (replacing *d when given).  The board's power
 * limiter holds the total to tdp_w: the active power is what the TDP leaves
 * over idle and the op's activity power, so a capped op (activity at the
 * TDP) gets none. */
static void add_active(opm_profile *p, const opm_hardware *hw, double idle_w, opm_diag *d)
{
    double act_w = opm_energy_active_power_w(hw);
    if (!(act_w > 0) || !(p->latency_s > 0)) return;
    double room = hw->tdp_w - idle_w - dynamic_j(p) / p->latency_s;
    if (act_w > room) act_w = room > 0 ? room : 0;
    p->compute_energy_j += act_w * p->latency_s;
    if (d) d->number = act_w;
    else opm_diag_num(p, "active_power_w", act_w);
    p->energy_j = dynamic_j(p) + p->static_energy_j;
    p->average_power_w = p->latency_s > 0 ? p->energy_j / p->latency_s : 0;
}

void opm_energy_cap(opm_profile *p, const opm_hardware *hw)
{
    /* Weighs the activity power only (sustained throttling of the active
     * base power acts over a window of milliseconds, not one kernel; per
     * kernel it moved validate on data/kernels from 22.10% to 23.32%):
     * the active energy comes off, the cap runs, it goes back on. */
    opm_diag *d = NULL;
    for (size_t i = 0; i < p->diag_count; i++)
        if (!p->diags[i].is_text && !strcmp(p->diags[i].key, "active_power_w")) d = &p->diags[i];
    if (d) p->compute_energy_j -= d->number * p->latency_s;
    /* Called on a finished profile: whether the TDP rule stood in for a
     * J/FLOP is read back from the diagnostic opm_energy_apply wrote. */
    const opm_diag *dv = opm_profile_diag(p, "energy_derived");
    int rule_flop = dv && dv->is_text && strstr(dv->text, "_per_flop");
    double idle_w = opm_hardware_idle_power_w(hw, 0);
    double clock_hz = activity_cap(p, hw, rule_flop, idle_w);
    if (d) add_active(p, hw, idle_power_at(hw, clock_hz, idle_w), d);
}
