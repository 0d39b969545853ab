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
    double far_latency_cycles;      /* load-to-use latency of a hit in another partition than the
                                     * loading SM's (a partitioned L2); 0 = not given: latency_cycles */
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
 * bandwidths scale with the clock relative to the clock they are quoted at.
 * DRAM (hbm) bandwidth does not change (DRAM has its own clock); with L
 * the hbm and l the l2 latency in cycles (500 and 200 where not given), the
 * hbm latency becomes (L − l)·f/f0 + l cycles (the L2 part of a DRAM load
 * runs on the SM clock; the kernel models' in-flight terms slow kernels
 * short of bytes in flight through it; docs/workload.md).  The copy keeps the
 * clock its on-chip rates were first quoted at (`quoted_clock_hz` in its
 * YAML), so rates the models derive from the description's figures (the
 * streaming kernels' L2 floor at the DRAM rate) scale by the same ratio.
 * With a supply_voltage table, J/FLOP and
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
/* FLOP per clock per SM as given in the description; when not given,
 * derived from the peak (peak / (num_sms × clock, the tensor clock for the
 * tensor engine)); 0 when the engine has no peak for dt.  A given one is
 * checked at load to agree with the peak within 2%. */
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

/* ---- building a description in code (a what-if without YAML) ----
 *
 * A builder collects the same fields a YAML description holds; each setter
 * checks its own value at once (an error names the YAML path of the field,
 * e.g. "compute.num_sms") and _build runs the loader's whole-object checks
 * (required keys, an hbm level, levels innermost first, per-SM rates
 * against peaks).  The builder is not changed by _build, so one builder can
 * produce several variants.  Not thread-safe: one builder per thread. */
typedef struct opm_hardware_builder opm_hardware_builder;

/* An empty description named `name` (kind gpu, utilizations 1). */
OPM_API opm_hardware_builder *opm_hardware_builder_new(const char *name, opm_error *err);
/* A builder holding a copy of `hw`, to change a few figures of it. */
OPM_API opm_hardware_builder *opm_hardware_builder_from(const opm_hardware *hw, opm_error *err);
OPM_API void opm_hardware_builder_free(opm_hardware_builder *b);

OPM_API int opm_hardware_builder_set_name(opm_hardware_builder *b, const char *name, opm_error *err);
/* gpu | tpu | npu | cpu */
OPM_API int opm_hardware_builder_set_kind(opm_hardware_builder *b, const char *kind, opm_error *err);
/* A dense peak of engine (vector or tensor) for dt, FLOP/s (> 0). */
OPM_API int opm_hardware_builder_set_peak(opm_hardware_builder *b, opm_engine engine, opm_dtype dt,
                                          double flops_per_s, opm_error *err);
/* Any per-dtype compute key of the schema ("tensor_energy_j_per_flop",
 * "tensor_flops_per_clock_per_sm", "tensor_achievable_fraction", ...);
 * 0 removes the entry. */
OPM_API int opm_hardware_builder_set_dtype_param(opm_hardware_builder *b, const char *key, opm_dtype dt,
                                                 double value, opm_error *err);
/* Any scalar compute key of the schema: clock_hz, tensor_clock_hz,
 * sm_max_clock_hz, sustained_clock_hz, num_sms, max_ctas_per_sm,
 * max_warps_per_sm, registers_per_sm, shared_memory_bytes_per_sm,
 * max_async_copy_groups, tensor_latency_cycles,
 * device_fixed_overhead_cycles, warp_size. */
OPM_API int opm_hardware_builder_set_compute(opm_hardware_builder *b, const char *key, double value,
                                             opm_error *err);
/* compute.matrix_instruction: simt, mma_sync, wgmma, tcgen05, mfma, mxu, mme. */
OPM_API int opm_hardware_builder_set_matrix_instruction(opm_hardware_builder *b, const char *name,
                                                        opm_error *err);
/* compute.fma_dims: the m, n, k of one matrix instruction (each 1 to 2^20). */
OPM_API int opm_hardware_builder_set_fma_dims(opm_hardware_builder *b, int m, int n, int k, opm_error *err);
/* Appends a memory level (levels go innermost first: register, sram or l1,
 * l2, llc, hbm); its utilization, if 0, is taken as 1.  A level of the same
 * name is replaced in place. */
OPM_API int opm_hardware_builder_add_level(opm_hardware_builder *b, const opm_memory_level *level,
                                           opm_error *err);
/* utilization.vector / utilization.tensor, in (0, 1]. */
OPM_API int opm_hardware_builder_set_utilization(opm_hardware_builder *b, opm_engine engine, double fraction,
                                                 opm_error *err);
/* utilization.memory.<level>, in (0, 1]; the level must have been added. */
OPM_API int opm_hardware_builder_set_level_utilization(opm_hardware_builder *b, const char *level,
                                                       double fraction, opm_error *err);
/* static_power_w (≥ 0) and tdp_w (> 0); a negative value leaves it unset. */
OPM_API int opm_hardware_builder_set_power(opm_hardware_builder *b, double static_power_w, double tdp_w,
                                           opm_error *err);
/* A per-clock table: "idle_power" (idle board W) or "supply_voltage" (any
 * voltage unit; only ratios are used), n points (1 to 160) with clocks in Hz
 * strictly ascending and values positive; n = 0 removes the table.  Copied. */
OPM_API int opm_hardware_builder_set_table(opm_hardware_builder *b, const char *table, size_t n,
                                           const double *clock_hz, const double *values, opm_error *err);
/* The scale-up interconnect (bandwidth > 0, latency ≥ 0, domain_devices a
 * whole number ≥ 0); NULL removes it.  Copied. */
OPM_API int opm_hardware_builder_set_interconnect(opm_hardware_builder *b, const opm_interconnect *link,
                                                  opm_error *err);
/* A new hardware object (free with opm_hardware_free), or NULL with the
 * first failed check in err. */
OPM_API opm_hardware *opm_hardware_builder_build(const opm_hardware_builder *b, opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
