/* opmodel/hardware.h — an accelerator description: engines with per-dtype
 * dense peaks, clocks, memory levels, energy coefficients and limits.
 *
 * Ownership: every opm_hardware_* constructor returns a new object owned by
 * the caller, released with opm_hardware_free().  A hardware object is never
 * modified after construction, so one object may be shared by any number of
 * threads predicting at once.  Strings returned by the emitters are
 * malloc'ed and released with opm_free() (or free()). */
#ifndef OPMODEL_HARDWARE_H
#define OPMODEL_HARDWARE_H

#include <stddef.h>
#include "error.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPM_MAX_LEVELS 8

typedef struct opm_hardware opm_hardware;

/* One memory level.  Fields not given in the description are 0. */
typedef struct opm_memory_level {
    char name[16];                  /* register | sram | l2 | llc | hbm */
    double size_bytes;
    double bandwidth_bytes_per_s;
    double energy_j_per_byte;
    double energy_j_per_sector;
    double latency_s;
    double latency_cycles;
    double line_size_bytes;
    double sector_size_bytes;
    double bank_count;
    double bank_width_bytes;
    double utilization;             /* fraction of bandwidth reached, (0,1], default 1 */
    double partitions;              /* slices that each cache their own SMs' data (A100/H100 L2: 2,
                                     * MI300X: one per XCD); 0 = not given (one) */
} opm_memory_level;

/* The scale-up interconnect between devices of one node or pod (NVLink,
 * Infinity Fabric, ICI, Gaudi's on-chip RoCE ports): optional `interconnect`
 * in the description.  Collectives are timed from it (docs/llm.md). */
typedef struct opm_interconnect {
    char name[32];                  /* "nvlink4", "infinity_fabric", "ici", ...; "" when not given */
    double bandwidth_bytes_per_s;   /* per direction per device: what one device can send (and, at the
                                     * same time, receive) over all its links together */
    double latency_s;               /* per step of a ring collective (one hop); 0 = not given */
    double domain_devices;          /* devices reachable at that bandwidth (NVLink domain); 0 = not given */
} opm_interconnect;

/* Loads a description from a YAML (or JSON) file. */
OPM_API opm_hardware *opm_hardware_load_file(const char *path, opm_error *err);
/* Loads from text; `source` names it in error messages. */
OPM_API opm_hardware *opm_hardware_load_string(const char *text, size_t len, const char *source,
                                               opm_error *err);
/* A built-in entry by name ("h100_sxm"); OPM_ENOTFOUND if unknown. */
OPM_API opm_hardware *opm_hardware_builtin(const char *name, opm_error *err);
/* A built-in name, else a file path. */
OPM_API opm_hardware *opm_hardware_open(const char *name_or_path, opm_error *err);
OPM_API size_t opm_hardware_builtin_count(void);
OPM_API const char *opm_hardware_builtin_name(size_t i);
/* The embedded YAML text of built-in entry i (static storage). */
OPM_API const char *opm_hardware_builtin_text(size_t i);

/* A copy running at `clock_hz`: compute peaks and on-chip (non-hbm) level
 * bandwidths scale with the clock relative to the clock they are quoted at;
 * DRAM (hbm) bandwidth does not.  With a supply_voltage table, J/FLOP and
 * on-chip J/byte scale by (V(clock_hz)/V(old clock))²; idle power follows
 * opm_hardware_idle_power_w at the new clock. */
OPM_API opm_hardware *opm_hardware_with_clock(const opm_hardware *hw, double clock_hz, opm_error *err);
OPM_API opm_hardware *opm_hardware_clone(const opm_hardware *hw, opm_error *err);
OPM_API void opm_hardware_free(opm_hardware *hw);

/* Emits the full description; loading the result gives an equal object. */
OPM_API char *opm_hardware_to_yaml(const opm_hardware *hw, opm_error *err);
OPM_API char *opm_hardware_to_json(const opm_hardware *hw, opm_error *err);
/* 1 when every field is equal. */
OPM_API int opm_hardware_equal(const opm_hardware *a, const opm_hardware *b);

OPM_API const char *opm_hardware_name(const opm_hardware *hw);
OPM_API const char *opm_hardware_kind(const opm_hardware *hw);     /* gpu | tpu | npu | cpu */
OPM_API double opm_hardware_clock_hz(const opm_hardware *hw);
/* Clock at which tensor peaks are quoted (clock_hz unless given). */
OPM_API double opm_hardware_tensor_clock_hz(const opm_hardware *hw);
OPM_API int opm_hardware_num_sms(const opm_hardware *hw);
OPM_API double opm_hardware_static_power_w(const opm_hardware *hw);
OPM_API double opm_hardware_tdp_w(const opm_hardware *hw);
/* Idle board power in W at SM clock `clock_hz` (<= 0: the hardware's
 * current clock).  With an `idle_power` table: linear interpolation between
 * its clocks, the end values past its ends.  Without one: static_power_w
 * (idle at the clock it was measured at, f0 = static_power_clock_hz, else
 * clock_hz) × (0.66 + 0.34·(f/f0)³) — a clock-independent floor plus a V²f
 * part, the floor from three measured tables (docs/energy.md).  Without
 * static_power_w either, 0.21 × tdp_w stands for it (the median measured
 * idle/TDP of three GPUs).  0 when the description gives none of them
 * (opm_hardware_has_idle_power says so; _is_measured: table or
 * static_power_w, not the TDP rule). */
OPM_API double opm_hardware_idle_power_w(const opm_hardware *hw, double clock_hz);
OPM_API int opm_hardware_has_idle_power(const opm_hardware *hw);
OPM_API int opm_hardware_idle_power_is_measured(const opm_hardware *hw);
/* "latency" (default), "energy" or "edp": what the GEMM kernel search
 * minimises (hardware key gemm_selection_objective; an op attr overrides). */
OPM_API const char *opm_hardware_gemm_selection_objective(const opm_hardware *hw);
/* Dense peak FLOP/s of the engine for dtype, 0 if the engine lacks it. */
OPM_API double opm_hardware_peak_flops(const opm_hardware *hw, opm_engine engine, opm_dtype dt);
/* FLOP per clock per SM as given in the description (0 if not given). */
OPM_API double opm_hardware_flops_per_clock_per_sm(const opm_hardware *hw, opm_engine engine, opm_dtype dt);
OPM_API double opm_hardware_energy_j_per_flop(const opm_hardware *hw, opm_engine engine, opm_dtype dt);
OPM_API double opm_hardware_utilization(const opm_hardware *hw, opm_engine engine);
OPM_API double opm_hardware_fixed_overhead_cycles(const opm_hardware *hw);
OPM_API size_t opm_hardware_level_count(const opm_hardware *hw);
OPM_API const opm_memory_level *opm_hardware_level(const opm_hardware *hw, size_t i);
/* Level by name, NULL if absent. */
OPM_API const opm_memory_level *opm_hardware_find_level(const opm_hardware *hw, const char *name);
/* The interconnect, or NULL when the description gives none. */
OPM_API const opm_interconnect *opm_hardware_interconnect(const opm_hardware *hw);
/* Optional scalar of `compute` by key ("max_warps_per_sm"); 0 if absent. */
OPM_API double opm_hardware_compute_param(const opm_hardware *hw, const char *key);

#ifdef __cplusplus
}
#endif
#endif
