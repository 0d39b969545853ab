/* gemm_tiled.h — what the two tile-aware GEMM models (extended_roofline in
 * gemm_tiled.c, effective_roofline in gemm_effective.c) share: the GEMM
 * problem as the kernels see it, the hardware numbers they need (with
 * documented defaults), the kernel catalog and selection, per-kernel
 * tiling/occupancy/traffic, and the evaluation record a wave model fills.
 * Everything here is plain values on the caller's stack: no allocation. */
#ifndef OPM_GEMM_TILED_H
#define OPM_GEMM_TILED_H

#include <math.h>
#include <stddef.h>
#include "opmodel/opmodel.h"
#include "../hardware/hw_internal.h"

/* Powers of two 1..2^(GEMM_ROW_CACHE−1) whose grouped tile-row counts
 * gemm_problem caches (every catalog CTA tile M is one). */
#define GEMM_ROW_CACHE 11

/* One GEMM as a kernel sees it: C[b, m, n] = A[b, m, k] · B[b?, k, n].
 * A grouped GEMM (groups > 0) is one launch over row groups that share n
 * and k: m is their total, batch 1, b_mats the groups with rows (one weight
 * each), and every group's last tile row is an edge tile.  An implicit
 * GEMM (conv) reads A or B from a tensor smaller than the matrix the
 * kernel sees (im2col): a_unique/b_unique give the bytes DRAM holds (0:
 * the matrix itself). */
typedef struct gemm_problem {
    double batch, m, n, k;
    double b_mats;              /* distinct B matrices (1 when broadcast over the batch) */
    double a_bytes, b_bytes;    /* bytes per element of A and B as stored */
    double c_bytes;             /* bytes per element of C */
    int bias;                   /* a bias vector is read in the epilogue */
    /* fp8 GEMMs whose activation is quantised by kernels of their own
     * (attrs.activation_quant): GEMM_AQ_*. */
    int act_quant;
    /* Block scales (attrs.scale_a / scale_b: block): the K depth of the
     * scale blocks (the smaller of the two operands'; 0: no block scales)
     * and how many operands are block-scaled (1 or 2). */
    double scale_bk;
    int scale_blocks;
    /* Operands resident in L2 when the kernel starts (attrs.l2_warm): the
     * previous kernel wrote or read them, so their first touch is an L2 hit
     * as far as they fit. */
    int warm_a, warm_b;
    /* attrs.operand_copies: the op is one of this many copies run in turn,
     * each on its own weight (and its own input unless warm_a shares it),
     * so each copy's operands were last read copies − 1 GEMMs ago and are
     * still in L2 when every copy fits its usable part (0: not rotated). */
    double copies;
    int trans_a, trans_b;       /* transpose_a / transpose_b: 0 (row-major A[M,K], B[K,N])
                                 * leaves A K-contiguous and B N-contiguous */
    double a_unique, b_unique;  /* DRAM bytes of A and B when not the matrices (implicit GEMM) */
    double groups;              /* grouped GEMM: G (0: not grouped) */
    const int64_t *group_rows;  /* rows of each group (NULL: m split evenly over groups) */
    double row_tiles[GEMM_ROW_CACHE]; /* with group_rows: Σ ceil(M_g / 2^i) */
} gemm_problem;

enum { GEMM_AQ_NONE, GEMM_AQ_STATIC, GEMM_AQ_DYNAMIC, GEMM_AQ_DYNAMIC_BLOCK };
/* Matrix instruction families (hardware compute.matrix_instruction): they
 * select the kernel catalog. */
/* The same order as opm_hw_matrix_names (src/hardware/hardware.c). */
enum { GEMM_MI_SIMT, GEMM_MI_MMA_SYNC, GEMM_MI_WGMMA, GEMM_MI_TCGEN05, GEMM_MI_MFMA, GEMM_MI_MXU, GEMM_MI_MME };

/* The family the description names (GEMM_MI_*, the index in
 * opm_hw_matrix_names), -1 when it names none: matrix_instruction stores
 * that index plus one, 0 for not given. */
static inline int gemm_hw_named_family(const opm_hardware *hw)
{
    return hw->matrix_instruction - 1;
}

/* Hardware numbers in SI units, defaults applied (see gemm_tiled.c). */
/* max and min of two doubles, for the kernel models' many bounds. */
static inline double maxd(double a, double b) { return a > b ? a : b; }
static inline double mind(double a, double b) { return a < b ? a : b; }
static inline double cdivd(double a, double b) { return ceil(a / b); }

/* Appends text / a non-negative integer at *pos within cap (always
 * terminated); hand-rolled because snprintf dominated predict time. */
static inline void put_str(char *buf, size_t cap, size_t *pos, const char *t)
{
    while (*t && *pos + 1 < cap) buf[(*pos)++] = *t++;
    buf[*pos] = '\0';
}

static inline void put_int(char *buf, size_t cap, size_t *pos, int v)
{
    char d[12];
    int n = 0;
    unsigned u = v < 0 ? 0u : (unsigned)v;
    do d[n++] = (char)('0' + u % 10); while ((u /= 10) && n < 11);
    while (n && *pos + 1 < cap) buf[(*pos)++] = d[--n];
    buf[*pos] = '\0';
}

typedef struct gemm_hw {
    double clock_hz, num_sms;
    int tensor;                  /* the matrix FLOPs run on the tensor engine */
    int mi;                      /* GEMM_MI_*: the kernel catalog */
    /* Fraction of the dense tensor peak the best library kernel sustains
     * (clock under the power limit × issue efficiency): the hardware's
     * tensor_achievable_fraction, or OPM_TENSOR_ACHIEVABLE_DEFAULT when it
     * gives none (achievable_default then 1); 1 on SIMT paths. */
    double achievable;
    int achievable_default;
    double flops_per_s_sm;       /* matrix-path peak per SM × utilization */
    double smem_bw_sm;           /* bytes/s per SM, shared memory */
    double l2_bw;                /* bytes/s, whole L2 */
    double l2_port_sm;           /* bytes/s one SM can pull from L2 */
    double l2_size;
    /* L2 partitions (the level's `partitions`, 1 when it gives none).
     * A GEMM epilogue's output stores are absorbed by an unpartitioned L2
     * only: measured on the two-partition A100 and H100/H200, epilogue
     * outputs that fit one partition's share still drain at the DRAM write
     * rate (docs/gemm_models.md, "Output stores on a partitioned L2").  The
     * rule covers the epilogue stores alone: the activation-quantization
     * kernel's output (act_quant_s) and the streaming kernels' (stream.c)
     * still stay in L2 when they fit l2_usable, partitioned or not. */
    double l2_parts;
    /* L2 bytes one kernel's operands, warm inputs and (on an unpartitioned
     * L2) absorbed epilogue stores may occupy: L2_USABLE of it on SIMT paths (the fitted rule), one
     * partition's share on tensor paths when the level gives its
     * partitions (A100/H100: two halves each caching their own SMs'
     * accesses; MI300X: one L2 per XCD), else L2_USABLE of it. */
    double l2_usable;
    /* The same share whatever the path (one partition's where the level
     * gives partitions, else L2_USABLE of it): what the streaming and
     * attention kernels (stream.c, attention_kernel.c) may keep resident. */
    double l2_share;
    double hbm_bw;               /* reached DRAM read bandwidth */
    /* The run's SM clock over the description's (opm_hw_onchip_clock_ratio):
     * what an on-chip rate derived from a description figure at its own
     * clock scales by, as every on-chip level's bandwidth does. */
    double onchip_clock_ratio;
    double hbm_write_bw;         /* hbm_bw × DRAM_WRITE_EFF */
    double hbm_act_s;            /* DRAM time one row activation costs: DRAM_ACT_BYTES at the datasheet rate */
    double lat_l2_s, lat_dram_s; /* load-to-use latencies */
    /* The mean L2-hit latency of a GEMM's operand and output lines, which
     * lie evenly over the L2's partitions: lat_l2_s for the 1 in P near
     * the SM, the level's far_latency_cycles for the others (A100: lines
     * stay in their home partition, a far hit crosses between them); lat_l2_s
     * where the level gives no far latency. */
    double lat_l2_mean_s;
    double max_ctas, max_warps, regs_per_sm, smem_per_sm, warp_size;
    int fma[3];
    double fixed_s;              /* device_fixed_overhead_cycles / clock */
    /* SAME_ADDRESS_ATOMIC_CYCLES and BACK_TO_BACK_KERNEL_FRACTION, or the
     * hardware's refit overrides of them (opm_hardware.fit). */
    double atomic_cycles, back_to_back;
    /* Power cap: dynamic power budget tdp_w − idle power at the clock (0: no cap,
     * when the description lacks tdp_w or the energy per FLOP of the
     * matrix path), energy per executed matrix FLOP and per DRAM byte. */
    double power_w, flop_j, dram_j_per_byte;
    /* Kernel selection objective (0 latency, 1 energy, 2 energy × delay)
     * and the energies it scores with: J per executed FLOP (given or TDP
     * rule), per DRAM and per L2 byte, idle W at the clock. */
    int objective;
    double obj_flop_j, obj_dram_j, obj_l2_j, obj_idle_w, obj_active_w, obj_tdp_w;
} gemm_hw;

/* A kernel configuration (a catalog entry, or the hints of one op). */
typedef struct gemm_kernel {
    const char *family;          /* name stem: "sgemm", "tensorop", "mfma", "mxu", "hinted" */
    int tm, tn, tk;              /* CTA tile */
    int wm, wn;                  /* warp tile */
    int mma_m, mma_n, mma_k;
    int stages, warps, regs, split_k;
    int sliced;                  /* warps split the CTA's K tile (cuBLAS "sliced1x4") */
    int split_hinted;            /* split_k came from a hint (else selection may change it) */
    /* CTAs of a cluster (Hopper) or an SM pair (Blackwell 2-SM MMA) that
     * share one load of an operand panel by multicast: the L2 reads of the
     * operand the cluster shares fall by this factor (1: none). */
    int multicast;
    /* Persistent stream-K scheduling (CUTLASS 3 / cuBLAS sm90+): the
     * partial last wave's K iterations are spread over every CTA slot, the
     * split tiles' partial sums fixed up through L2. */
    int stream_k;
    int mi;                      /* GEMM_MI_*: how the MMAs read their operands */
} gemm_kernel;

enum { GEMM_LIM_COMPUTE, GEMM_LIM_SMEM, GEMM_LIM_L2, GEMM_LIM_DRAM, GEMM_LIM_EPILOGUE, GEMM_LIM_FIXED,
       GEMM_LIM_POWER, GEMM_LIM_COUNT };
/* Resources of one wave's phases (effective_roofline diagnostics). */
enum { GEMM_RES_MATH, GEMM_RES_SMEM, GEMM_RES_L2, GEMM_RES_DRAM, GEMM_RES_COUNT };
extern const char *const opm_gemm_limit_names[GEMM_LIM_COUNT];

/* What evaluating one kernel on one problem gives. Times in seconds. */
typedef struct gemm_eval {
    gemm_kernel kern;
    double tiles_m, tiles_n, tiles;      /* tiles counts split-K pieces too */
    double ctas_per_sm, slots;           /* occupancy and concurrent CTAs on the chip */
    const char *occ_limit;               /* registers | shared_memory | warps | ctas */
    double full_waves, tail_tiles, waves;
    double wave_eff;                     /* tiles / (waves · slots) */
    double tile_eff;                     /* useful FLOPs / FLOPs of whole padded tiles */
    double kiters;                       /* K-loop iterations of one CTA */
    double dram_read, dram_write, l2_read, l2_write, smem_bytes;
    /* DRAM row activations of the operand reads, and the read bytes that
     * at the reached bandwidth take as long as the reads do: each
     * operand's bytes, or its activations' time where that is longer. */
    double dram_acts, dram_read_eq;
    int act_bound;                       /* activations lengthen some kernel's DRAM reads */
    /* The output fits the usable L2 and the L2 is not partitioned: the
     * write-back L2 absorbs its stores during the kernel (tensor-core
     * kernels). */
    int stores_in_l2;
    double t_compute, t_smem, t_l2, t_dram, t_latency;  /* summed over waves */
    double t_prologue, t_epilogue, t_reduce;
    double t_dequant;                    /* vector-ALU dequantisation in the K loop (summed, busiest SM) */
    double body_s;                       /* latency without the fixed overhead */
    double exec_flops;                   /* FLOPs the math units execute (whole padded tiles) */
    double t_power;                      /* least time the power cap allows (0: no cap) */
    int limit;                           /* GEMM_LIM_* */
    int exposed_latency;                 /* latency term was the longest body term */
    int power_limited;                   /* the power cap set body_s */
    /* effective_roofline, for the wave class that takes the most time: the
     * rates with every SM at its peak (raw) and as concurrency allows
     * (effective), FLOP/s or bytes/s by GEMM_RES_*; its phase times; and
     * the warps resident on a busy SM in full waves (index 0) and in the
     * tail (index 1), 0 where that wave class does not occur. */
    double raw_rate[GEMM_RES_COUNT], eff_rate[GEMM_RES_COUNT], phase_s[GEMM_RES_COUNT];
    double sm_warps[2];
    int dominant_tail;                   /* the dominant wave class is the tail */
} gemm_eval;

/* Constants both wave models use (sources in gemm_tiled.c's comment). */
/* Achievable fraction of the dense tensor peak for hardware that gives none:
 * the median of the published maximum-achievable-matmul measurements
 * (docs/gemm_models.md, "Achievable tensor rate"). */
#define OPM_TENSOR_ACHIEVABLE_DEFAULT 0.8
/* The same default for MFMA (CDNA) hardware: the median of the three CDNA
 * entries' published 16-bit fractions (MI250X 0.768 one GCD, Bekman's
 * table; MI300X 0.542 and MI325X 0.636, AMD's MAF/TAF blogs).  Each left
 * out in turn: 0.589 (MI250X out), 0.702 (MI300X out), 0.655 (MI325X out).
 * Bounded [0.4, 1].  It reaches only MFMA entries without a fraction of
 * their own (MI350X, MI355X), which no measured row covers
 * (docs/gemm_models.md, "Held-out public figures"). */
#define OPM_TENSOR_ACHIEVABLE_DEFAULT_MFMA 0.636
/* An 8-bit (fp8, int8) achievable fraction over the 16-bit one of the same
 * GPU, for hardware that measures only the 16-bit one: the median of the
 * three published pairs (H100 SXM 0.709 / 0.803 = 0.883, MI300X 0.487 /
 * 0.542 = 0.899, MI325X 0.538 / 0.636 = 0.846; leaving one out gives
 * 0.865-0.891).  Bounded [0.5, 1]: the 8-bit pipe does twice the FLOPs per
 * cycle for between the same and twice the energy (docs/gemm_models.md,
 * "8-bit tensor rate under the power limit"). */
#define EIGHT_BIT_ACHIEVABLE_RATIO 0.883
/* SM cycles between two atomic updates of one address (the per-tensor
 * absmax of a dynamic fp8 activation quantisation: one per row block).
 * Fitted, bounded [2, 64]: the grid refit of validate-gemm-latency
 * --leave-one-hardware-out on every activation-quantised row (H100, H200,
 * L40S, uncalibrated) gives 15.5; each GPU left out 15.0-17.5
 * (docs/gemm_models.md, "What the timed op did besides the GEMM"). */
#define SAME_ADDRESS_ATOMIC_CYCLES 15.5
/* Share of the device fixed time a kernel costs when it follows another of
 * the same op back to back (its launch overlaps the previous drain).
 * Fitted, bounded [0.25, 1], by the same refit: 0.45 on every GPU, 0.40-0.50
 * with one left out. */
#define BACK_TO_BACK_KERNEL_FRACTION 0.45
/* vLLM's per-tensor fp8 quantisation kernels (static_scaled_fp8_quant, the
 * dynamic absmax and quantise passes): one CTA of 256 threads per row, each
 * thread loading a vector of 16 bf16 elements (32 bytes) per step
 * (csrc/quantization/fp8/common.cu, vectorization_utils.cuh). */
#define QUANT_CTA_THREADS 256.0
#define QUANT_BYTES_IN_FLIGHT 32.0
#define WARPS_FOR_PEAK 4.0
/* Bytes of one accumulator (fp32, or int32 for int8 MMAs) that a warp-level
 * MMA epilogue stages through shared memory. */
#define EPILOGUE_ACC_BYTES 4.0
/* DRAM write bandwidth over the reached read bandwidth: output stores and
 * the split-K partials.  Fitted, bounded [0.5, 1] (docs/gemm_models.md). */
#define DRAM_WRITE_EFF 0.7
/* DRAM row activations (docs/gemm_models.md, "DRAM row activations"):
 * every piece of an operand a K step reads opens a DRAM row, unless rows
 * of the matrix closer than DRAM_PAGE_BYTES share it (the 1 KiB row of an
 * HBM2 channel: 64 columns × 128 bits, DRAMsim3 configs/HBM2_8Gb_x128.ini),
 * and each opening costs the DRAM the time of DRAM_ACT_BYTES at its
 * datasheet bandwidth.  DRAM_ACT_BYTES is fitted, bounded [32, 512]. */
#define DRAM_PAGE_BYTES 1024.0
#define DRAM_ACT_BYTES 112.0
/* Block-scaled fp8 on CDNA (docs/gemm_models.md, "Block-scaled fp8 on
 * MFMA"): after each scale block's MFMAs, every fp32 accumulator is
 * rescaled by its row's and column's scales and added to the running sum
 * on the vector ALUs (CK's ab_scale pipeline), which the next block's
 * MFMAs wait on.  Per scale block a CTA pays MFMA_DEQUANT_VALU_INSTR
 * lane instructions per accumulator (the move out of the MFMA result and
 * half a packed v_pk_fma_f32: 1.5; fitted 1.0, bounded [0.5, 4]), run on
 * the CU's MFMA_SIMDS_PER_CU SIMDs of MFMA_SIMD_LANES lanes (a 64-lane
 * wave instruction takes 4 clocks: AMD CDNA 3 ISA guide; the same on
 * CDNA 2 and CDNA 4), and MFMA_SCALE_BLOCK_STALL_CYCLES of exposed latency
 * (the MFMA chain's drain before the dequantisation may read it, the next
 * block's LDS reads and barrier before its MFMAs; fitted 350, bounded
 * [0, 1000]).  Neither is hidden by a second resident CTA: aiter's 64x64
 * kernels take the same time per tile and block with one or two tiles per
 * CU.  Both fitted jointly on aiter's 23,414 MI300X block-scaled rows (the
 * only MFMA GPU with such rows: no held-out GPU).  Scale blocks deeper
 * than MFMA_SCALE_TILE_MAX_K elements keep the catalog's K tile. */
#define MFMA_DEQUANT_VALU_INSTR 1.0
#define MFMA_SCALE_BLOCK_STALL_CYCLES 350.0
#define MFMA_SIMDS_PER_CU 4.0
#define MFMA_SIMD_LANES 16.0
#define MFMA_SCALE_TILE_MAX_K 256
/* Launch gap of a kernel that follows another within one op. */
#define SPLITK_GAP_S 2e-6
/* Bookkeeping instructions per K iteration of a SIMT CTA (barrier, loop
 * branch, two pointer increments): part of the FFMA-share derivation. */
#define SIMT_ITER_OVERHEAD_INSTR 4.0
/* Phase times within this fraction of the longest are reported as tied
 * limiting resources. */
#define GEMM_TIE_FRAC 0.05

/* Share of a SIMT warp's instructions that are FFMAs for kernel k. */
double opm_gemm_ffma_share(const gemm_kernel *k, double warp_size);

/* Per-kernel quantities both wave models start from. */
typedef struct gemm_wave_in {
    double share;            /* FFMA share of issue (1 on a matrix engine) */
    double warp_reads;       /* SMEM bytes the CTA's warps read per K iteration */
    double tile_iter_bytes;  /* bytes of one K iteration's A and B tiles */
    double out_elem;         /* bytes per output element (fp32 partials under split-K) */
    double epi_tile_s;       /* SM time to issue one CTA's output tile (epilogue) */
    double lat_s;            /* load latency, L2 to DRAM blended by the miss ratio */
    /* Vector-ALU time of one CTA's block-scale dequantisation per K
     * iteration (MFMA kernels with block scales; else 0). */
    double dq_s;
} gemm_wave_in;
void opm_gemm_wave_in(const gemm_problem *pb, const gemm_hw *h, const gemm_eval *e, gemm_wave_in *w);
/* Compute time of one K iteration on a busy SM running `a` CTAs: the
 * matrix time t_c of all of them plus, where the kernel dequantises block
 * scales on the vector ALUs (dq_s per CTA), every CTA's dequantisation:
 * it waits for its block's MFMAs and the next block's MFMAs wait for it,
 * and another resident CTA does not hide it (its waves share the SIMDs'
 * issue; measured, aiter's tuner keeps one-CTA-per-CU 128x128 tiles over
 * two-per-CU 64x64 ones, which would hide it, on 93% of its shapes). */
static inline double opm_gemm_iter_compute_s(double t_c, double dq_s, double a)
{
    return dq_s > 0 && a > 0 ? t_c + a * dq_s : t_c;
}
/* Time to drain a wave's output stores of `store` bytes: into the L2 for a
 * tail wave (`tail`) whose stores fit it, else to DRAM at the write rate. */
double opm_gemm_store_s(const gemm_hw *h, double store, int tail);
/* The split-K reduction kernel: reads the fp32 partials, writes C, plus
 * its DRAM latency and launch gap. */
double opm_gemm_reduce_s(const gemm_problem *pb, const gemm_hw *h, const gemm_kernel *k);

/* Wave class w (0: the full waves, 1: the tail) of e: the CTAs it runs, the
 * K iterations each of them runs and its share of the whole work (a stream-K
 * tail runs on every slot, for fewer iterations each). */
void opm_gemm_wave_class(const gemm_eval *e, int w, double *nt, double *kit, double *frac);
/* Wave class w, run `count` times with `ctas` CTAs per busy SM: warp-level
 * MMA and MFMA kernels are not persistent, so every wave after the first
 * fills its pipeline anew (one DRAM latency), hidden only behind the other
 * resident CTAs; added to e's prologue and body. */
void opm_gemm_wave_refill(const gemm_hw *h, gemm_eval *e, int w, double count, double ctas);
/* What both wave models add once after their waves: the first wave's
 * pipeline fill (first_pro), the last stores' L2 latency, a stream-K
 * tail's fixup and a split-K reduction kernel. */
void opm_gemm_wave_end(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e, double first_pro);

/* A wave model: fills e->t_* and e->body_s from the tiling and traffic
 * already in e. */
typedef void (*gemm_wave_fn)(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e);

/* The activation quantisation kernels' time (attrs.activation_quant) as a
 * function of the two fitted constants: kernels × back_to_back × fixed_s +
 * stream_s + max(absmax_read_s, atomic_s_per_cycle × atomic_cycles) (the
 * last term for the dynamic absmax only).  All 0 without quantisation. */
typedef struct gemm_quant_terms {
    double kernels, fixed_s, stream_s, absmax_read_s, atomic_s_per_cycle;
} gemm_quant_terms;
double opm_gemm_quant_terms_time(const gemm_quant_terms *qt, double atomic_cycles, double back_to_back);
/* The terms of a gemm or batched_gemm op on hw (forward phases; zeros for
 * anything the GEMM models do not quantise), for refitting the two
 * constants without predicting again. */
int opm_gemm_quant_terms_of(const opm_op *op, const opm_hardware *hw, gemm_quant_terms *qt, opm_error *err);

/* Builds gemm_hw for the matrix dtype dt; OPM_EUNSUPPORTED when neither a
 * tensor nor a vector peak exists. */
int opm_gemm_hw(const opm_hardware *hw, opm_dtype dt, gemm_hw *h, opm_error *err);
/* The fraction of the dense tensor peak for dtype dt the best library
 * GEMM sustains (gemm_hw.achievable); *dflt = 1 when the hardware gives
 * no figure and the value is a default. */
double opm_gemm_tensor_achievable(const opm_hardware *hw, opm_dtype dt, int *dflt);
/* The hardware's own tensor_achievable_fraction for dt, else its sibling's
 * (fp16/bf16, e4m3/e5m2); 0 when it lists neither. */
double opm_gemm_tensor_achievable_listed(const opm_hardware *hw, opm_dtype dt);
/* Tiling, occupancy and traffic of kernel k on pb; 0 if it cannot run
 * (no CTA fits on an SM). */
int opm_gemm_setup(const gemm_problem *pb, const gemm_hw *h, const gemm_kernel *k, gemm_eval *e);
/* Applies the power cap to e->body_s (see gemm_tiled.c). */
void opm_gemm_power_cap(const gemm_hw *h, gemm_eval *e);
/* Hinted kernel when the op has any tile hint (returns 1); 2 when split_k
 * is its only hint (k->split_k set: the catalog at that split); else 0;
 * minus a status (err filled, naming the attribute) for a hint beyond the
 * hardware's limits. */
int opm_gemm_hinted(const opm_op *op, const gemm_hw *h, gemm_kernel *k, opm_error *err);
/* Best kernel for pb under `wave`: the hinted one, or the lowest body_s of
 * the catalog.  Returns 0 and fills *best, or OPM_EUNSUPPORTED. */
int opm_gemm_choose(const opm_op *op, const gemm_problem *pb, const gemm_hw *h, gemm_wave_fn wave,
                    gemm_eval *best, opm_error *err);
/* The whole prediction of a GEMM-kind op with `wave`; non-GEMM kinds go to
 * the roofline. */
int opm_gemm_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, const char *model,
                     gemm_wave_fn wave, opm_error *err);
/* Tile rows of one batch matrix for CTA tile M tm: ceil(m / tm), or for a
 * grouped GEMM the sum over its groups. */
double opm_gemm_tile_rows(const gemm_problem *pb, int tm);
/* K slices of a sliced-K kernel: warps over the warps that cover the tile
 * once (1 for a kernel that is not sliced). */
double opm_gemm_slices(const gemm_kernel *k);
/* Kernel display name ("sgemm_128x64x8_s1"). */
void opm_gemm_kernel_name(const gemm_kernel *k, char *buf, size_t cap);
/* SMEM bytes the CTA's warps read per K iteration of kernel k. */
double opm_gemm_warp_smem_reads(const gemm_problem *pb, const gemm_kernel *k);

/* ---- the two wave models (gemm_waves.c) ---- */
void opm_gemm_wave_extended(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e);
void opm_gemm_wave_effective(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e);

/* ---- the problem of an op (gemm_problem.c) ---- */
/* gemm or batched_gemm: 0 when A, B and C are not all there. */
int opm_gemm_problem(const opm_op *op, gemm_problem *pb);
/* grouped_gemm as one launch; 0 when no group has rows. */
int opm_gemm_grouped_problem(const opm_op *op, gemm_problem *pb);
/* A conv as the ordinary convolution whose forward (fprop), data gradient
 * (dgrad) or weight gradient (wgrad) each of its implicit GEMMs is: "lo"
 * is that conv's output side (y; x of a transposed conv), "hi" its input
 * side, and macs the count's multiply-accumulates N·C_lo·S_lo·(C_hi/g)·Πk. */
typedef struct conv_shape {
    double n, g, c_lo, s_lo, c_hi, s_hi, kvol, macs;
    double lo_b, hi_b, w_b;     /* bytes per element */
    int transposed, bias;
} conv_shape;

enum { CONV_FPROP, CONV_DGRAD, CONV_WGRAD };
extern const char *const opm_gemm_conv_names[3];
/* The conv's shape; 0 when it is not one the GEMM models take. */
int opm_gemm_conv_shape(const opm_op *op, conv_shape *cs);
/* Implicit GEMM `which` (CONV_*) of the conv. */
void opm_gemm_conv_problem(const conv_shape *cs, int which, gemm_problem *pb);

/* What a grouped GEMM or a conv adds to the prediction: its diagnostics,
 * and DRAM work outside the GEMMs (a backward's bias reduction, the zeroed
 * weight gradients of empty groups). */
typedef struct gemm_extra {
    double groups_active;       /* grouped_gemm; 0 otherwise */
    int conv_n;                 /* implicit GEMMs of a conv */
    int conv_which[2];
    gemm_problem conv_pb[2];
    double vec_bytes;           /* DRAM bytes of the vector work (read, then written) */
    double vec_write_bytes;
    double zero_bytes;          /* written by a memset, not a GEMM */
    double quant_s;             /* activation quantisation kernels before the GEMM */
    double quant_read, quant_write;
    /* Vector FLOPs of the block-scale dequantisation that the K loop
     * already times (MFMA kernels): left out of the epilogue's vector work. */
    double dq_vec_flops;
} gemm_extra;

/* ---- diagnostics (gemm_diags.c) ---- */
void opm_gemm_put_kernel_diags(opm_profile *p, const gemm_eval *e);
void opm_gemm_put_details(opm_profile *p, const gemm_eval *e);
void opm_gemm_put_extended_diags(opm_profile *p, const gemm_eval *e);
void opm_gemm_put_effective_diags(opm_profile *p, const gemm_eval *e);
void opm_gemm_put_extra_diags(opm_profile *p, const gemm_extra *x);
void opm_gemm_put_findings(opm_profile *p, const gemm_eval *e);

#endif
