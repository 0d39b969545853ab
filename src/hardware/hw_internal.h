/* hw_internal.h — the layout of opm_hardware, shared by src/hardware/ (which
 * owns its meaning) and src/io/hardware_io.c (which reads and writes it). */
#ifndef OPM_HW_INTERNAL_H
#define OPM_HW_INTERNAL_H

#include "opmodel/opmodel.h"

enum {
    CP_CLOCK_HZ, CP_TENSOR_CLOCK_HZ, CP_SM_MAX_CLOCK_HZ, CP_NUM_SMS, CP_MAX_CTAS_PER_SM,
    CP_MAX_WARPS_PER_SM, CP_REGISTERS_PER_SM, CP_SHARED_MEMORY_BYTES_PER_SM,
    CP_MAX_ASYNC_COPY_GROUPS, CP_TENSOR_LATENCY_CYCLES, CP_DEVICE_FIXED_OVERHEAD_CYCLES,
    CP_WARP_SIZE, CP_SUSTAINED_CLOCK_HZ, CP_COUNT
};
extern const char *const opm_hw_cparam_names[CP_COUNT];

enum {
    HM_TENSOR_FLOPS, HM_VECTOR_FLOPS, HM_TENSOR_ENERGY, HM_VECTOR_ENERGY, HM_TENSOR_FPC,
    HM_VECTOR_FPC, HM_TENSOR_ACHIEVABLE, HM_COUNT
};
extern const char *const opm_hw_map_names[HM_COUNT];

enum { PC_COUNT = 7, FEATURE_MAX = 16, HW_TABLE_MAX = 160 };
/* How far num_sms × *_flops_per_clock_per_sm × clock may be from the
 * quoted peak: datasheet peaks are rounded to 3-4 digits and a few are
 * quoted at a boost clock 1-2% off the listed one. */
#define OPM_HW_FPC_TOLERANCE 0.02
extern const char *const opm_hw_power_names[PC_COUNT];

/* Values of compute.matrix_instruction, NULL-terminated, in the order of
 * the GEMM models' GEMM_MI_* families (src/models/gemm_tiled.h). */
extern const char *const opm_hw_matrix_names[];

/* The GEMM models' fitted global constants a refit may override
 * (src/models/gemm_tiled.h: SAME_ADDRESS_ATOMIC_CYCLES,
 * BACK_TO_BACK_KERNEL_FRACTION). */
enum { OPM_FIT_ATOMIC_CYCLES, OPM_FIT_BACK_TO_BACK, OPM_FIT_COUNT };

struct opm_hardware {
    char name[64];
    char kind[8];
    char dataflow[32];
    /* The matrix instruction family its GEMM kernels are built on: 1 +
     * its index in opm_hw_matrix_names, 0 when not given.  Selects the
     * kernel catalog, so per-architecture behaviour comes from this data. */
    int matrix_instruction;
    double static_power_w, tdp_w;
    int has_static_power, has_tdp;
    /* Clock at which static_power_w was measured (0: clock_hz); set by
     * opm_hardware_with_clock so a clocked copy keeps its anchor. */
    double static_power_clock_hz;
    /* SM clock the description's on-chip rates are quoted at (0: clock_hz,
     * a copy never re-clocked); set by opm_hardware_with_clock so a clocked
     * copy's models know how far its on-chip rates have moved
     * (opm_hw_onchip_clock_ratio). */
    double quoted_clock_hz;
    /* Measured tables by SM clock, ascending: idle board power (W) and
     * supply voltage (any unit: only ratios are used). */
    size_t n_idle, n_volt;
    double idle_clock_hz[HW_TABLE_MAX], idle_w[HW_TABLE_MAX];
    double volt_clock_hz[HW_TABLE_MAX], volt[HW_TABLE_MAX];
    /* J/FLOP by the TDP rule for dtypes with a peak but no figure, filled
     * at load (opm_hw_derive_energy): [0] tensor, [1] vector.  Read by the
     * energy model only; the GEMM power cap uses given figures alone. */
    double derived_j_per_flop[2][OPM_DTYPE_COUNT];
    /* gemm_selection_objective: 0 latency, 1 energy, 2 edp. */
    int gemm_objective;
    double cparam[CP_COUNT];
    unsigned cparam_set;               /* bit i: cparam[i] was given */
    double maps[HM_COUNT][OPM_DTYPE_COUNT];  /* 0 = not given */
    int fma_dims[3];
    int has_fma;
    double util_vector, util_tensor;
    int has_util_vector, has_util_tensor;
    size_t n_levels;
    opm_memory_level levels[OPM_MAX_LEVELS];
    int has_energy_model;
    char em_level[8];
    double power[PC_COUNT];
    unsigned power_set;
    size_t n_features;
    char features[FEATURE_MAX][40];
    opm_interconnect link;
    int has_link;
    /* Overrides of the GEMM models' globally fitted constants (OPM_FIT_*;
     * 0: the shipped value).  Never loaded or written: only
     * validate-gemm-latency's leave-one-hardware-out refit sets them, on
     * its own copies of the hardware. */
    double fit[OPM_FIT_COUNT];
};

/* Keys of one memory level (index 0 is "name", the others are numbers in
 * opm_memory_level order), NULL-terminated; the accepted level names,
 * innermost first; the accepted kinds. */
enum { LK_NAME, LK_SIZE, LK_BANDWIDTH, LK_PARTITIONS = 11, LK_FAR_LATENCY = 12, LK_COUNT = 13 };
extern const char *const opm_hw_level_keys[LK_COUNT + 1];
extern const char *const opm_hw_level_names[];
extern const char *const opm_hw_kinds[];
/* gemm_selection_objective's values, in gemm_objective's order
 * (latency 0, energy 1, edp 2), NULL-terminated. */
extern const char *const opm_hw_objective_names[];
/* The index of an objective name in opm_hw_objective_names, -1 if none. */
int opm_hw_objective_index(const char *name);

/* The value checks shared by the YAML loader (which reports them at the
 * file position) and opm_hw_check (which the loader and the builder both
 * run on the finished object): what the value must be ("a positive
 * number"), or NULL when v is acceptable. */
const char *opm_hw_cparam_expected(int idx, double v);
const char *opm_hw_map_expected(int map, double v);
const char *opm_hw_level_expected(int key, double v);
const char *opm_hw_fraction_expected(double v);
/* The number field of a level for key index 1..LK_COUNT-1. */
double *opm_hw_level_slot(opm_memory_level *l, int key);
double opm_hw_level_value(const opm_memory_level *l, int key);
/* 0 register, 1 sram/l1, 2 l2, 3 llc, 4 hbm; -1 for an unknown name. */
int opm_hw_level_rank(const char *name);

/* The supply voltage at clock_hz interpolated in the table; 0 without one. */
double opm_hw_voltage(const opm_hardware *hw, double clock_hz);
/* The run's SM clock over the clock the description's on-chip rates are
 * quoted at (1 unless opm_hardware_with_clock moved it): the factor every
 * on-chip rate has been scaled by. */
double opm_hw_onchip_clock_ratio(const opm_hardware *hw);

/* Idle power from a table or static_power_w only (0 without either): what
 * the GEMM power cap has always charged, so the TDP rule moves no latency. */
double opm_hw_measured_idle_w(const opm_hardware *hw, double clock_hz);
/* Fills derived_j_per_flop: (tdp_w − idle power) / dense peak for every
 * dtype that has a peak but no J/FLOP (docs/energy.md, "TDP rule"). */
void opm_hw_derive_energy(opm_hardware *hw);

/* Initialises the defaults (utilizations 1). */
void opm_hw_init(opm_hardware *hw);
/* Semantic checks after loading; errors name the field path. */
int opm_hw_check(const opm_hardware *hw, opm_error *err);

#endif
