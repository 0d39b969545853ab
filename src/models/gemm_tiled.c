/* gemm_tiled.c — the `extended_roofline` model, and the machinery it shares
 * with `effective_roofline` (gemm_effective.c): GEMM problem extraction
 * (gemm, batched_gemm, grouped_gemm as one launch over its groups' tiles,
 * conv as implicit GEMMs: fprop, dgrad, wgrad), hardware numbers with
 * defaults, the kernel catalog and selection, CTA tiling with edge tiles,
 * occupancy, waves, first-touch L2 reuse bounded by L2 capacity (SIMT waves
 * whose panels overflow it lose the sharing between CTAs of a K-contiguous
 * operand), DRAM row activations, split-K only for unbatched launches, and
 * filling the profile.  docs/gemm_models.md gives the grouped and conv
 * mappings; other kinds, and depthwise convs, go to the roofline.
 *
 * This file holds the hardware numbers, the tiling and traffic of a kernel
 * and the prediction (profile, energy, limiting resource); the rest is
 * split by concern: gemm_problem.c (the GEMM problem of an op),
 * gemm_catalog.c (kernel catalogs, hints, selection), gemm_waves.c (the
 * one wave loop and the two wave models' bodies, the power cap) and
 * gemm_diags.c (diagnostics and opm_gemm_details).
 *
 * extended_roofline times each wave (all full waves alike, then the tail) as
 *   K loop    = kiters × max(compute, SMEM, L2, DRAM, latency/(stages−1))
 *               (stages ≥ 2 overlap loads with math; 1 stage serialises them)
 *               on the busiest SM, + issuing its output tiles;
 *   DRAM      = the wave's operand loads + output stores at DRAM bandwidth
 *               (a tail wave whose output fits stores into L2);
 *   wave      = max(K loop + store issue, DRAM)
 * plus, exposed once, the first pipeline fill (DRAM latency + (stages−1)
 * K tiles of loads) and the last stores' L2 latency, then the split-K
 * reduction and the fixed device overhead (device_fixed_overhead_cycles /
 * clock_hz).  Both models then apply the power cap
 * (opm_gemm_power_cap): when the description gives tdp_w and an energy per
 * FLOP for the matrix path, body ≥ dynamic energy / (tdp_w −
 * idle power at the clock) − fixed overhead.  On a GPU without a matrix engine for
 * the dtype, fp16/bf16 GEMMs run fp32 FMAs (fp32 accumulation) at the fp32
 * vector rate.
 *
 * Constants (physical unless said; see the report and
 * README for their sources):
 *   DEF_MAX_CTAS 32, DEF_MAX_WARPS 64, DEF_REGS 65536, DEF_SMEM 48 KiB,
 *   DEF_WARP 32 — occupancy limits when the hardware omits them (CUDA
 *   compute-capability tables; 48 KiB is the static shared-memory limit of
 *   every CUDA GPU);
 *   SMEM_B_PER_CLK 128 (32 banks × 4 B per SM per clock) when the
 *   hardware has no sram level, or the matrix peak / SMEM_FEED_FLOP_PER_B
 *   (16 FLOP per byte) when larger: matrix engines are built to be fed at
 *   that intensity (Hopper's warpgroup MMAs read shared memory once per
 *   warpgroup, TPU MXUs stream from VMEM), which per-warp fragment counting
 *   would otherwise overstate;
 *   L2_B_PER_CLK_SM 48 — L2 bandwidth when the l2 level gives none (A100:
 *   5120 B/clk over 108 SMs = 47; Volta/Turing microbenchmarks measure
 *   19–27, but their SIMT kernels need < 16, so the value rarely binds);
 *   L2_PORT_B_PER_CLK 64 — what one SM can take from L2 per clock;
 *   LAT_L2_CYC 200, LAT_DRAM_CYC 500 — load-to-use latencies when absent;
 *   WARPS_FOR_PEAK 4 — one warp per scheduler reaches the issue peak;
 *   L2_USABLE 0.5 — fraction of L2 the operands may occupy and still be
 *   read from DRAM only once (the rest holds outputs and conflicts);
 *   SPLITK_GAP_S 2 µs — launch gap of a kernel that follows another in
 *   one op: the split-K reduction, a backward's second GEMM (dB, dW), a
 *   conv backward's bias reduction, the zeroing of empty groups' weight
 *   gradients;
 *   GEMM_TIE_FRAC 0.05 — phases within 5% of the longest are reported as
 *   tied limiting resources (a reporting threshold, not a model input).
 *   DRAM_PAGE_BYTES 1 KiB — a DRAM row (an HBM2 channel's: 64 columns ×
 *   128 bits, DRAMsim3 configs/HBM2_8Gb_x128.ini): matrix rows closer than
 *   that share a row activation.
 * Two constants are fitted, not physical (docs/gemm_models.md gives each
 * one fitted on four GPUs of the shipped data and scored on the fifth):
 * DRAM_WRITE_EFF 0.7 (bounded [0.5, 1]) — DRAM stores run at that fraction
 * of the reached read bandwidth ("DRAM writes"); DRAM_ACT_BYTES 112
 * (bounded [32, 512]) — a DRAM row activation costs the time of that many
 * bytes at the datasheet bandwidth, so reads of small pieces of rows far
 * apart (a K-contiguous operand) are bound by activations, not bytes
 * ("DRAM row activations").
 * The power cap adds no constant: tdp_w, static_power_w and the energies
 * per FLOP and per DRAM byte come from the hardware description
 * (docs/gemm_models.md).
 * The SIMT math efficiency is not a constant: it is the FFMA share of the
 * instruction stream implied by the thread tile (FMAs vs shared-memory
 * loads and per-iteration bookkeeping). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../core/internal.h"
#include "hw_internal.h"
#include "gemm_tiled.h"
#include "models.h"
#include "stream.h"

#define DEF_MAX_CTAS 32.0
#define DEF_MAX_WARPS 64.0
#define DEF_REGS 65536.0
#define DEF_SMEM 49152.0
#define DEF_WARP 32.0
#define SMEM_B_PER_CLK 128.0
#define SMEM_FEED_FLOP_PER_B 16.0
#define L2_B_PER_CLK_SM 48.0
#define L2_PORT_B_PER_CLK 64.0
#define LAT_L2_CYC 200.0
#define LAT_DRAM_CYC 500.0
#define L2_USABLE 0.5

const char *const opm_gemm_limit_names[GEMM_LIM_COUNT] = {
    "compute_roof_limited", "smem_bandwidth_limited", "l2_bandwidth_limited",
    "dram_bandwidth_limited", "epilogue_limited", "fixed_overhead_limited", "power_limited",
};

/* Which of the levels the models use a level is, by name: 's' sram, 'l'
 * l2, 'h' hbm, 'r' register, 0 any other (one pass, no lookups by name). */
static char level_kind(const opm_memory_level *l)
{
    /* name is a 16-byte array, so fixed-size compares (inlined, unlike
     * strcmp) may read past a short name's terminator. */
    const char *n = l->name;
    return !memcmp(n, "sram", 5) ? 's' : !memcmp(n, "l2", 3) ? 'l' : !memcmp(n, "hbm", 4) ? 'h'
         : !memcmp(n, "register", 9) ? 'r' : 0;
}

static void find_levels(const opm_hardware *hw, const opm_memory_level **sram, const opm_memory_level **l2,
                        const opm_memory_level **hbm)
{
    *sram = *l2 = *hbm = NULL;
    for (size_t i = 0; i < hw->n_levels; i++) {
        char k = level_kind(&hw->levels[i]);
        if (k == 's' && !*sram) *sram = &hw->levels[i];
        else if (k == 'l' && !*l2) *l2 = &hw->levels[i];
        else if (k == 'h' && !*hbm) *hbm = &hw->levels[i];
    }
}

static double cparam(const opm_hardware *hw, int i, double dflt)
{
    return (hw->cparam_set & (1u << i)) && hw->cparam[i] > 0 ? hw->cparam[i] : dflt;
}

/* The sustained fraction of the dense tensor peak for dtype dt: the
 * hardware's own figure for dt, else for its sibling dtype (fp16/bf16,
 * the two fp8s), else for bf16, else the default (*dflt = 1).  The
 * roofline fallback on MXU/MME parts (roofline.c) takes only the first two
 * (opm_gemm_tensor_achievable_listed). */
double opm_gemm_tensor_achievable_listed(const opm_hardware *hw, opm_dtype dt)
{
    const double *f = hw->maps[HM_TENSOR_ACHIEVABLE];
    opm_dtype sib = dt == OPM_FP16 ? OPM_BF16 : dt == OPM_BF16 ? OPM_FP16
                  : dt == OPM_FP8_E4M3 ? OPM_FP8_E5M2 : dt == OPM_FP8_E5M2 ? OPM_FP8_E4M3 : dt;
    return f[dt] > 0 ? f[dt] : f[sib] > 0 ? f[sib] : 0;
}

double opm_gemm_tensor_achievable(const opm_hardware *hw, opm_dtype dt, int *dflt)
{
    const double *f = hw->maps[HM_TENSOR_ACHIEVABLE];
    double own = opm_gemm_tensor_achievable_listed(hw, dt);
    *dflt = 0;
    if (own > 0) return own;
    /* An 8-bit MMA does twice the FLOPs of a 16-bit one per cycle for less
     * than twice the energy, so under the same power limit its clock sits
     * lower: a 16-bit figure (or the default) stands for it only scaled. */
    double eight = dt == OPM_FP8_E4M3 || dt == OPM_FP8_E5M2 || dt == OPM_INT8 ? EIGHT_BIT_ACHIEVABLE_RATIO : 1;
    if (f[OPM_BF16] > 0) return f[OPM_BF16] * eight;
    *dflt = 1;
    /* CDNA parts sit further below their peak than NVIDIA's under the
     * power limit (their peaks are quoted at the top engine clock), so an
     * MFMA part takes the CDNA default. */
    if (gemm_hw_named_family(hw) == GEMM_MI_MFMA) return OPM_TENSOR_ACHIEVABLE_DEFAULT_MFMA * eight;
    return OPM_TENSOR_ACHIEVABLE_DEFAULT * eight;
}

/* The hardware's family (opm_hw_matrix_names is in GEMM_MI_* order); not
 * given, or simt with a tensor peak: warp-level MMA, the family every CUDA
 * tensor core since Volta runs. */
static int matrix_family(const opm_hardware *hw, int tensor)
{
    int mi = gemm_hw_named_family(hw);
    return !tensor ? GEMM_MI_SIMT : mi > GEMM_MI_SIMT ? mi : GEMM_MI_MMA_SYNC;
}

int opm_gemm_hw(const opm_hardware *hw, opm_dtype dt, gemm_hw *h, opm_error *err)
{
    memset(h, 0, sizeof *h);
    /* Under a sustained matrix load the SM clock may sit below clock_hz
     * (the power limit): shared memory, L2, latencies in cycles and the
     * fixed time then run at that clock (the tensor rate's own drop is in
     * the achievable fraction). */
    double clock = hw->cparam[CP_CLOCK_HZ];
    double sustained = hw->cparam[CP_SUSTAINED_CLOCK_HZ] > 0 ? mind(hw->cparam[CP_SUSTAINED_CLOCK_HZ], clock) : clock;
    h->clock_hz = sustained;
    h->num_sms = cparam(hw, CP_NUM_SMS, 1);
    double tpeak = opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, dt);
    double peak;
    opm_dtype simt_dt = dt;
    h->achievable = 1;
    if (tpeak > 0) {
        h->tensor = 1;
        h->achievable = opm_gemm_tensor_achievable(hw, dt, &h->achievable_default);
        peak = tpeak * hw->util_tensor * h->achievable;
    } else {
        /* No matrix engine for this dtype (fp32 without tf32 on NVIDIA):
         * SIMT FMAs at the vector peak, fp32 when the dtype has none.
         * 16-bit floats accumulate in fp32 (cuBLAS GemmEx's and the
         * frameworks' default compute type), so their SIMT GEMMs convert
         * the inputs and run fp32 FMAs: the packed half2 rate (P100) is
         * for fp16 accumulation, which GEMM libraries avoid. */
        int fp32_math = dt == OPM_FP16 || dt == OPM_BF16;
        simt_dt = fp32_math ? OPM_FP32 : dt;
        peak = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, simt_dt);
        if (peak <= 0) {
            simt_dt = OPM_FP32;
            peak = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32);
        }
        if (peak <= 0 && fp32_math) {
            simt_dt = dt;
            peak = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, dt);
        }
        peak *= hw->util_vector;
    }
    if (peak <= 0)
        return opm_err(err, OPM_EUNSUPPORTED, "hardware", "%s lists no tensor or vector peak for %s (or fp32)",
                       hw->name, opm_dtype_name(dt));
    h->flops_per_s_sm = peak / h->num_sms;
    const opm_memory_level *sram, *l2, *hbm;
    find_levels(hw, &sram, &l2, &hbm);
    h->smem_bw_sm = sram && sram->bandwidth_bytes_per_s > 0
                        ? sram->bandwidth_bytes_per_s * sram->utilization / h->num_sms * sustained / clock
                        : maxd(SMEM_B_PER_CLK * h->clock_hz, h->flops_per_s_sm / SMEM_FEED_FLOP_PER_B);
    if (l2) {
        h->l2_bw = l2->bandwidth_bytes_per_s > 0 ? l2->bandwidth_bytes_per_s * l2->utilization * sustained / clock
                                                 : L2_B_PER_CLK_SM * h->num_sms * h->clock_hz;
        h->l2_port_sm = maxd(L2_PORT_B_PER_CLK * h->clock_hz, h->l2_bw / h->num_sms);
    } else {
        /* No L2 (TPU-style cores stream DRAM straight into their on-chip
         * memory): no L2 term, and no reuse between waves. */
        h->l2_bw = h->l2_port_sm = HUGE_VAL;
    }
    h->l2_size = l2 ? l2->size_bytes : 0;
    h->l2_parts = l2 && l2->partitions > 1 ? l2->partitions : 1;
    h->l2_share = l2 && l2->partitions >= 1 ? h->l2_size / l2->partitions : L2_USABLE * h->l2_size;
    h->l2_usable = h->tensor ? h->l2_share : L2_USABLE * h->l2_size;
    h->hbm_bw = hbm->bandwidth_bytes_per_s * hbm->utilization;
    h->onchip_clock_ratio = opm_hw_onchip_clock_ratio(hw);
    h->hbm_write_bw = h->hbm_bw * DRAM_WRITE_EFF;
    h->hbm_act_s = hbm->bandwidth_bytes_per_s > 0 ? DRAM_ACT_BYTES / hbm->bandwidth_bytes_per_s : 0;
    h->lat_l2_s = l2 && l2->latency_s > 0 ? l2->latency_s
                : (l2 && l2->latency_cycles > 0 ? l2->latency_cycles : LAT_L2_CYC) / h->clock_hz;
    /* Lines spread evenly over a partitioned L2: near hits at the level's
     * latency, the other (P - 1) / P at its far_latency_cycles. */
    h->lat_l2_mean_s = h->lat_l2_s;
    if (l2 && l2->partitions > 1 && l2->far_latency_cycles > 0)
        h->lat_l2_mean_s = (h->lat_l2_s + (l2->partitions - 1) * (l2->far_latency_cycles / h->clock_hz)) / l2->partitions;
    h->lat_dram_s = hbm->latency_s > 0 ? hbm->latency_s
                  : (hbm->latency_cycles > 0 ? hbm->latency_cycles : LAT_DRAM_CYC) / h->clock_hz;
    h->max_ctas = cparam(hw, CP_MAX_CTAS_PER_SM, DEF_MAX_CTAS);
    h->max_warps = cparam(hw, CP_MAX_WARPS_PER_SM, DEF_MAX_WARPS);
    h->regs_per_sm = cparam(hw, CP_REGISTERS_PER_SM, DEF_REGS);
    h->smem_per_sm = cparam(hw, CP_SHARED_MEMORY_BYTES_PER_SM, DEF_SMEM);
    /* Lanes per warp (AMD CDNA wavefronts are 64 wide). */
    h->warp_size = cparam(hw, CP_WARP_SIZE, DEF_WARP);
    h->mi = matrix_family(hw, h->tensor);
    for (int i = 0; i < 3; i++) h->fma[i] = hw->has_fma && hw->fma_dims[i] > 0 ? hw->fma_dims[i] : 1;
    h->fixed_s = hw->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES] / clock; /* launch and drain: not the loaded clock */
    /* The fitted constants, or a refit's values on a copy of the hardware
     * (validate-gemm-latency --leave-one-hardware-out). */
    const double *fit = hw->fit;
    h->atomic_cycles = fit[OPM_FIT_ATOMIC_CYCLES] > 0 ? fit[OPM_FIT_ATOMIC_CYCLES] : SAME_ADDRESS_ATOMIC_CYCLES;
    h->back_to_back = fit[OPM_FIT_BACK_TO_BACK] > 0 ? fit[OPM_FIT_BACK_TO_BACK] : BACK_TO_BACK_KERNEL_FRACTION;
    double flop_j = h->tensor ? opm_hardware_energy_j_per_flop(hw, OPM_ENGINE_TENSOR, dt)
                              : opm_hardware_energy_j_per_flop(hw, OPM_ENGINE_VECTOR, simt_dt);
    if (flop_j <= 0 && !h->tensor) flop_j = opm_hardware_energy_j_per_flop(hw, OPM_ENGINE_VECTOR, OPM_FP32);
    h->objective = hw->gemm_objective >= 0 && hw->gemm_objective <= 2 ? hw->gemm_objective : 0;
    int v = !h->tensor;
    opm_dtype odt = v ? simt_dt : dt;
    h->obj_flop_j = opm_hardware_energy_j_per_flop(hw, v ? OPM_ENGINE_VECTOR : OPM_ENGINE_TENSOR, odt);
    if (h->obj_flop_j <= 0 && (unsigned)odt < OPM_DTYPE_COUNT) h->obj_flop_j = hw->derived_j_per_flop[v][odt];
    if (h->obj_flop_j <= 0 && v) h->obj_flop_j = flop_j > 0 ? flop_j : hw->derived_j_per_flop[1][OPM_FP32];
    h->obj_dram_j = hbm->energy_j_per_sector > 0 ? hbm->energy_j_per_sector / (hbm->sector_size_bytes > 0 ? hbm->sector_size_bytes : 32)
                                                 : hbm->energy_j_per_byte;
    h->obj_l2_j = !l2 ? 0 : l2->energy_j_per_sector > 0 ? l2->energy_j_per_sector / (l2->sector_size_bytes > 0 ? l2->sector_size_bytes : 32)
                                                       : l2->energy_j_per_byte;
    h->obj_idle_w = opm_hardware_idle_power_w(hw, 0);
    h->obj_active_w = opm_energy_active_power_w(hw);
    h->obj_tdp_w = opm_hardware_tdp_w(hw);
    double budget = opm_hardware_tdp_w(hw) - opm_hw_measured_idle_w(hw, 0);
    if (flop_j > 0 && budget > 0) {
        h->power_w = budget;
        h->flop_j = flop_j;
        h->dram_j_per_byte = hbm->energy_j_per_byte;
    }
    return 0;
}

/* A sliced-K CTA's warps split its K tile between slices, each slice's
 * warps covering the whole tile: a 64x32 sliced1x4 kernel of 8 warps has 4
 * slices of 2 warps (NeuSight's launch records), not 8 of one. */
double opm_gemm_slices(const gemm_kernel *k)
{
    double per_slice = (double)k->tm * k->tn / ((double)k->wm * k->wn);
    double s = per_slice > 0 ? k->warps / per_slice : 1;
    return s >= 1 ? s : 1;
}

/* FFMA share of a SIMT warp's instruction stream: per k step a thread does
 * e = wm·wn/32 FMAs and loads its √e-by-√e operand fragments with 128-bit
 * shared loads (2√e/4 instructions); per K iteration it also moves its
 * share of the global tile through registers into shared memory (one
 * 128-bit load and store per 4 elements) plus fixed bookkeeping. */
double opm_gemm_ffma_share(const gemm_kernel *k, double warp_size)
{
    double threads = k->warps * warp_size;
    double e = (double)k->wm * k->wn / warp_size;
    double ksteps = k->sliced ? (double)k->tk / opm_gemm_slices(k) : k->tk;
    double lds = 2 * sqrt(e) / 4;
    double per_iter = 2 * ((double)(k->tm + k->tn) * k->tk / (threads * 4)) + SIMT_ITER_OVERHEAD_INSTR;
    return e / (e + lds + per_iter / ksteps);
}

double opm_gemm_tile_rows(const gemm_problem *pb, int tm)
{
    if (!(pb->groups > 0)) return cdivd(pb->m, tm);
    if (!pb->group_rows) {
        /* torch.tensor_split: the first M mod G groups hold one row more. */
        double q = floor(pb->m / pb->groups), r = pb->m - q * pb->groups;
        return r * cdivd(q + 1, tm) + (pb->groups - r) * cdivd(q, tm);
    }
    if ((tm & (tm - 1)) == 0 && tm < (1 << GEMM_ROW_CACHE)) {
        int i = 0;
        while ((1 << i) < tm) i++;
        return pb->row_tiles[i];
    }
    double t = 0;
    for (size_t g = 0; g < (size_t)pb->groups; g++) t += cdivd((double)pb->group_rows[g], tm);
    return t;
}

/* Shared-memory bytes a CTA's warps read per K iteration: each warp its
 * A and B fragments over the K steps it covers (a sliced-K CTA splits the
 * depth among its warps). */
double opm_gemm_warp_smem_reads(const gemm_problem *pb, const gemm_kernel *k)
{
    /* Warpgroup MMAs read their operands from shared memory: each 64-row
     * consumer warpgroup its rows of A and the whole B tile.  tcgen05 MMAs
     * read both tiles once per CTA. */
    if (k->mi == GEMM_MI_WGMMA) {
        double groups = k->tm > 64 ? (k->tm + 127) / 128 * 2 : 1;
        return ((double)k->tm * pb->a_bytes + groups * k->tn * pb->b_bytes) * k->tk;
    }
    if (k->mi == GEMM_MI_TCGEN05) return ((double)k->tm * pb->a_bytes + (double)k->tn * pb->b_bytes) * k->tk;
    double ksteps = k->sliced ? (double)k->tk / opm_gemm_slices(k) : k->tk;
    return k->warps * ((double)k->wm * pb->a_bytes + (double)k->wn * pb->b_bytes) * ksteps;
}

/* The rows x cols block of nt tiles (rows · cols ≥ nt) whose A and B panels
 * hold the fewest bytes: rows near sqrt(nt · tn·b / (tm·a)). */
static void swizzled_wave(const gemm_problem *pb, const gemm_kernel *k, const gemm_eval *e, double nt, double *rows,
                          double *cols)
{
    double ra = k->tm * pb->a_bytes, cb = k->tn * pb->b_bytes, max_r = e->tiles_m * pb->batch;
    double r0 = floor(sqrt(nt * cb / ra)), best = HUGE_VAL;
    /* Two candidates, not a loop: r0 may be too large for r0 + 1 to differ. */
    if (!(r0 >= 1)) r0 = 1;
    if (!(r0 <= max_r)) r0 = max_r;
    for (int i = 0; i < 2; i++) {
        double rr = mind(r0 + i, max_r), cc = mind(cdivd(nt, rr), e->tiles_n);
        double bytes = rr * ra + cc * cb;
        if (bytes < best) {
            best = bytes;
            *rows = rr;
            *cols = cc;
        }
    }
}

int opm_gemm_setup(const gemm_problem *pb, const gemm_hw *h, const gemm_kernel *k, gemm_eval *e)
{
    memset(e, 0, sizeof *e);
    e->kern = *k;
    double threads = k->warps * h->warp_size;
    double opb = maxd(pb->a_bytes, pb->b_bytes);
    double smem_cta = (double)k->stages * (k->tm + k->tn) * k->tk * opb;
    double by_ctas = h->max_ctas, by_warps = floor(h->max_warps / k->warps);
    double by_regs = floor(h->regs_per_sm / (threads * k->regs));
    double by_smem = floor(h->smem_per_sm / smem_cta);
    double occ = by_ctas;
    e->occ_limit = "ctas";
    if (by_warps < occ) { occ = by_warps; e->occ_limit = "warps"; }
    if (by_regs < occ) { occ = by_regs; e->occ_limit = "registers"; }
    if (by_smem < occ) { occ = by_smem; e->occ_limit = "shared_memory"; }
    if (occ < 1) return 0;
    e->ctas_per_sm = occ;
    e->slots = occ * h->num_sms;
    double split = k->split_k;
    double ks = cdivd(pb->k, split);
    e->tiles_m = opm_gemm_tile_rows(pb, k->tm);
    e->tiles_n = cdivd(pb->n, k->tn);
    e->tiles = pb->batch * e->tiles_m * e->tiles_n * split;
    e->kiters = cdivd(ks, k->tk);
    e->full_waves = floor(e->tiles / e->slots);
    e->tail_tiles = e->tiles - e->full_waves * e->slots;
    e->waves = e->full_waves + (e->tail_tiles > 0);
    e->wave_eff = e->tiles / (e->waves * e->slots);
    e->tile_eff = pb->m * pb->n * pb->k /
                  (e->tiles_m * k->tm * e->tiles_n * k->tn * e->kiters * k->tk * split);
    e->exec_flops = e->tiles * e->kiters * 2.0 * k->tm * k->tn * k->tk;

    /* L2 → SMEM: each A row panel is read once per tile column and each B
     * column panel once per tile row (edge tiles load only what exists). */
    double a_all = pb->batch * pb->m * pb->k * pb->a_bytes, b_all = pb->b_mats * pb->k * pb->n * pb->b_bytes;
    e->l2_read = e->tiles_n * a_all + e->tiles_m * pb->batch * pb->k * pb->n * pb->b_bytes;
    /* DRAM: first touch only while the operands fit the usable L2; beyond,
     * every wave re-reads the panels it touches (tiles raster along N).  An
     * implicit GEMM's first touch is the tensor, not its im2col matrix: the
     * overlapping taps are L2 hits while reuse holds. */
    double a_first = pb->a_unique > 0 ? mind(pb->a_unique, a_all) : a_all;
    double b_first = pb->b_unique > 0 ? mind(pb->b_unique, b_all) : b_all;
    double a_dram = a_first, b_dram = b_first;
    if (a_first + b_first > h->l2_usable) {
        /* The A and B panels one wave touches, full waves and tail. */
        double wa[2] = {0, 0}, wb[2] = {0, 0};
        for (int w = 0; w < 2; w++) {
            double nt = w ? e->tail_tiles : e->slots;
            if (nt <= 0) continue;
            double cols = mind(nt, e->tiles_n);
            double rows = mind(cdivd(nt, e->tiles_n), e->tiles_m * pb->batch);
            /* Tensor-core libraries swizzle their tile order (CUTLASS's
             * threadblock swizzle and persistent scheduler, cuBLAS's and
             * hipBLASLt's heuristics): a wave covers the block of tile rows
             * x columns that reads the least, not one strip of rows. */
            if (h->tensor) swizzled_wave(pb, k, e, nt, &rows, &cols);
            /* A grouped wave's tile rows span several groups, each with
             * its own weight panel. */
            double panels = pb->groups > 0 ? mind(pb->b_mats, cdivd(rows * pb->b_mats, e->tiles_m)) : 1;
            wa[w] = mind(rows * k->tm, pb->m * pb->batch) * pb->a_bytes * ks;
            wb[w] = panels * mind(cols * k->tn, pb->n) * pb->b_bytes * ks;
        }
        double a_l2 = e->tiles_n * a_all, b_l2 = e->l2_read - a_l2;
        double a_wave = mind(maxd(a_all, e->full_waves * wa[0] + wa[1]), a_l2);
        double b_wave = mind(maxd(b_all, e->full_waves * wb[0] + wb[1]), b_l2);
        /* SIMT kernels whose wave panels overflow the usable L2 lose the
         * sharing between CTAs for an operand stored K-contiguous: each
         * K step reads a 32-byte piece of every panel row, rows a whole
         * matrix row apart, and each CTA ends up streaming its own panel
         * from DRAM.  An operand stored M- or N-contiguous (a K step reads
         * whole lines of one row) keeps it.  Tensor-core kernels keep it
         * for both: their measured rates need it (DeepBench's T4 fp16
         * GEMMs run at 0.7 of the tensor peak, 2.5x what per-CTA DRAM
         * streams of their tiles allow). */
        int shared = h->tensor || wa[0] + wb[0] <= h->l2_usable;
        /* Both are at least the first touch: a_wave, a_l2 ≥ a_all ≥ a_first. */
        a_dram = shared || pb->trans_a ? a_wave : a_l2;
        b_dram = shared || !pb->trans_b ? b_wave : b_l2;
        /* Tensor-core libraries choose the raster order and swizzle of their
         * tile schedulers (CUTLASS's persistent scheduler, cuBLAS's and
         * hipBLASLt's heuristics): an operand that fits the usable L2 on its
         * own stays resident while the other streams past it once. */
        if (h->tensor && mind(a_first, b_first) <= h->l2_usable && a_first + b_first < a_dram + b_dram) {
            a_dram = a_first;
            b_dram = b_first;
        }
    }
    /* Operands the previous kernel left in L2 are hits when they fit its
     * usable part (the input first: it is the one just written); one that
     * does not fit was streamed through it and left little behind. */
    int warm_a = pb->warm_a, warm_b = pb->warm_b;
    /* A harness that runs the op in turn over `copies` copies of its
     * operands (attrs.operand_copies) finds each copy's operands where the
     * previous round left them: in L2 when every copy's weight (and input,
     * unless shared), the shared input and the one output buffer the copies
     * reuse fit its usable part. */
    if (pb->copies >= 1) {
        double out = pb->batch * pb->m * pb->n * pb->c_bytes;
        if (pb->copies * (b_first + (warm_a ? 0 : a_first)) + (warm_a ? a_first : 0) + out <= h->l2_usable)
            warm_a = warm_b = 1;
    }
    double warm_room = h->l2_usable, warm[2] = {0, 0};
    if (warm_a && a_first <= warm_room) warm_room -= (warm[0] = a_first);
    if (warm_b && b_first <= warm_room) warm[1] = b_first;
    a_dram = maxd(0, a_dram - warm[0]);
    b_dram = maxd(0, b_dram - warm[1]);
    double bias = pb->bias ? pb->n * pb->c_bytes : 0;
    e->dram_read = a_dram + b_dram + bias;
    /* A cluster's multicast loads each B panel once for its CTAs: fewer L2
     * reads, never fewer than the DRAM brings in. */
    if (k->multicast > 1) {
        double b_l2 = e->l2_read - e->tiles_n * a_all;
        e->l2_read -= b_l2 - maxd(b_l2 / k->multicast, mind(b_l2, b_dram));
    }
    /* DRAM row activations.  Per K step a CTA reads, of each tile row of a
     * K-contiguous operand, a piece of tk elements (of an M/N-contiguous
     * one, a piece of the tile's extent), and the matrix rows lie a whole
     * row apart: rows closer than a DRAM page share one activation, farther
     * ones open a row each.  Activations are counted on the operand's
     * distinct bytes: the re-reads of a panel by the other CTAs of a wave
     * arrive while its rows are open and cost bandwidth only.  An implicit
     * GEMM's rows are overlapping windows of its tensor, so successive rows
     * lie closer than a matrix row: by the tensor's share of the matrix
     * bytes (one pixel's channels apart for a stride-1 conv). */
    double piece[2], stride[2];
    /* A CTA keeps stages − 1 K tiles in flight: its reads of successive
     * pieces of a row go out together and share the row's activation. */
    double kin = mind(ks, k->tk * (k->stages > 2 ? k->stages - 1 : 1));
    piece[0] = (pb->trans_a ? mind(k->tm, pb->m) : kin) * pb->a_bytes;
    stride[0] = (pb->trans_a ? pb->m : pb->k) * pb->a_bytes * (a_all > 0 ? a_first / a_all : 1);
    piece[1] = (pb->trans_b ? kin : mind(k->tn, pb->n)) * pb->b_bytes;
    stride[1] = (pb->trans_b ? pb->k : pb->n) * pb->b_bytes * (b_all > 0 ? b_first / b_all : 1);
    const double first[2] = {a_first, b_first}, bytes[2] = {a_dram, b_dram};
    e->dram_acts = 0;
    e->dram_read_eq = bias;
    for (int o = 0; o < 2; o++) {
        /* Bytes one activation serves: the piece, or the rows of it one
         * DRAM row holds, never more than the row.  Sub-byte (packed int4 /
         * fp4) operands are repacked offline into the kernel's tile order
         * (GPTQ/AWQ/Marlin-style layouts), so their reads fill whole rows. */
        double elem = o ? pb->b_bytes : pb->a_bytes;
        double bpa = elem < 1 ? DRAM_PAGE_BYTES
                              : mind(DRAM_PAGE_BYTES, piece[o] * maxd(1.0, DRAM_PAGE_BYTES / stride[o]));
        double acts = piece[o] > 0 && stride[o] > 0 ? (first[o] - warm[o]) / bpa : 0;
        e->dram_acts += acts;
        e->dram_read_eq += maxd(bytes[o], acts * h->hbm_act_s * h->hbm_bw);
    }
    e->act_bound = e->dram_read_eq > e->dram_read * (1 + GEMM_TIE_FRAC);
    e->dram_write = pb->batch * pb->m * pb->n * pb->c_bytes;
    e->l2_write = e->dram_write * (split > 1 ? 4.0 * split / pb->c_bytes : 1.0);
    /* A partitioned L2 (A100, H100) does not absorb the stores, however
     * small the output: measured, they drain at the DRAM write rate. */
    e->stores_in_l2 = h->tensor && h->l2_parts <= 1 && e->l2_write <= h->l2_usable;
    e->smem_bytes = e->l2_read + e->tiles * e->kiters * opm_gemm_warp_smem_reads(pb, k);
    return 1;
}

/* ---- the profile ---- */

/* Adds the times and bytes of a second GEMM (a backward's dB or dW) to e:
 * its own kernel, launched after the first drains (SPLITK_GAP_S). */
static void eval_add(gemm_eval *e, const gemm_eval *o)
{
    e->t_reduce += SPLITK_GAP_S;
    e->body_s += SPLITK_GAP_S;
    e->dram_read += o->dram_read;
    e->dram_read_eq += o->dram_read_eq;
    e->dram_acts += o->dram_acts;
    e->act_bound |= o->act_bound;
    e->dram_write += o->dram_write;
    e->l2_read += o->l2_read;
    e->l2_write += o->l2_write;
    e->smem_bytes += o->smem_bytes;
    e->t_compute += o->t_compute;
    e->t_smem += o->t_smem;
    e->t_l2 += o->t_l2;
    e->t_dram += o->t_dram;
    e->t_latency += o->t_latency;
    e->t_prologue += o->t_prologue;
    e->t_epilogue += o->t_epilogue;
    e->t_reduce += o->t_reduce;
    e->t_dequant += o->t_dequant;
    e->body_s += o->body_s;
    e->exec_flops += o->exec_flops;
    e->t_power += o->t_power;
    e->exposed_latency |= o->exposed_latency;
    e->power_limited |= o->power_limited;
}

/* Backward = dA[M,K] = dC[M,N]·Bᵀ and dB[K,N] = Aᵀ·dC, each its own kernel
 * (dB sums over the batch when B is shared; a grouped GEMM's dB is one GEMM
 * per group with rows, of the groups' mean depth). */
static int predict_backward(const opm_op *op, const gemm_problem *pb, const gemm_hw *h, gemm_wave_fn wave,
                            gemm_eval *e, opm_error *err)
{
    gemm_problem da = *pb, db = *pb;
    da.n = pb->k;
    da.k = pb->n;
    da.bias = 0;
    db.batch = pb->b_mats;
    db.m = pb->k;
    db.k = pb->m * pb->batch / pb->b_mats;
    db.bias = 0;
    db.groups = 0;
    db.group_rows = NULL;
    gemm_eval e2;
    int rc;
    if ((rc = opm_gemm_choose(op, &da, h, wave, e, err))) return rc;
    if ((rc = opm_gemm_choose(op, &db, h, wave, &e2, err))) return rc;
    eval_add(e, &e2);
    return 0;
}

/* A conv's implicit GEMMs: forward the fprop (a transposed conv: the
 * dgrad); backward dX (dgrad; transposed: fprop) and dW (wgrad), each its
 * own kernel, and dbias a reduction of dY.  Returns 1 when the conv is
 * left to the roofline (depthwise, or a backward of the bias alone). */
static int predict_conv(const opm_op *op, const gemm_hw *h, gemm_wave_fn wave, gemm_eval *e, gemm_extra *x,
                        opm_error *err)
{
    conv_shape cs;
    if (!opm_gemm_conv_shape(op, &cs)) return 1;
    /* Depthwise convs (one input channel per group) run as direct,
     * memory-bound kernels: an implicit GEMM of N = 1 per group is no
     * kernel any library uses. */
    double c_in = cs.transposed ? cs.c_lo : cs.c_hi;
    if (cs.g > 1 && c_in / cs.g <= 1) return 1;
    double y_bytes = cs.transposed ? cs.n * cs.c_hi * cs.s_hi * cs.hi_b : cs.n * cs.c_lo * cs.s_lo * cs.lo_b;
    double c_out = cs.transposed ? cs.c_hi : cs.c_lo, y_elem = cs.transposed ? cs.hi_b : cs.lo_b;
    if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
        if (opm_op_get_bool(op, "grad_input", 1)) x->conv_which[x->conv_n++] = cs.transposed ? CONV_FPROP : CONV_DGRAD;
        if (opm_op_get_bool(op, "grad_weight", 1)) x->conv_which[x->conv_n++] = CONV_WGRAD;
        if (cs.bias) {
            /* dbias: one more pass over dY, written as C_out sums. */
            x->vec_bytes = y_bytes;
            x->vec_write_bytes = c_out * y_elem;
        }
    } else {
        x->conv_which[x->conv_n++] = cs.transposed ? CONV_DGRAD : CONV_FPROP;
    }
    if (!x->conv_n) return 1;
    for (int i = 0; i < x->conv_n; i++) {
        opm_gemm_conv_problem(&cs, x->conv_which[i], &x->conv_pb[i]);
        gemm_eval e2;
        int rc = opm_gemm_choose(op, &x->conv_pb[i], h, wave, i ? &e2 : e, err);
        if (rc) return -rc;
        if (i) eval_add(e, &e2);
    }
    if (cs.bias && opm_op_phase(op) != OPM_PHASE_TRAIN_BWD) e->dram_read += c_out * y_elem;
    return 0;
}

/* The kernels that quantise an fp8 GEMM's activation before it runs
 * (attrs.activation_quant), from a bf16 source of A's shape: static, one
 * elementwise kernel (read 2 B, write 1 B per element); dynamic per-tensor,
 * a zeroed scale, an absmax pass whose one atomic update per row block all
 * hit one address (serialised at SAME_ADDRESS_ATOMIC_CYCLES each), then
 * the quantising pass; dynamic_block, one pass that also writes an fp32
 * scale per 1x128 group.  Each kernel pays BACK_TO_BACK_KERNEL_FRACTION of
 * the device's fixed time; a source that fits the usable L2 and is warm (the
 * previous kernel wrote it) streams at the L2 rate.  The static and dynamic
 * passes run one CTA of QUANT_CTA_THREADS per row (vLLM's fp8 quantisation
 * kernels), each thread with QUANT_BYTES_IN_FLIGHT of its row's loads in
 * flight: with few rows the pass is bound by the loads in flight over the
 * load latency (Little's law), not by the bandwidth.  Returns the time and
 * adds the DRAM bytes to *rd / *wr. */
static double act_quant_s(const gemm_problem *pb, const gemm_hw *h, double *rd, double *wr, gemm_quant_terms *qt)
{
    if (qt) memset(qt, 0, sizeof *qt);
    if (pb->act_quant == GEMM_AQ_NONE) return 0;
    double elems = pb->batch * pb->m * pb->k, src = 2 * elems, rows = pb->batch * pb->m;
    int l2 = pb->warm_a && src <= h->l2_usable;
    /* Kernels launched back to back (in a graph or a stream) overlap one's
     * launch with the previous one's drain: each costs a fraction of the
     * fixed time. */
    double r_bw = l2 ? h->l2_bw : h->hbm_bw, kern = h->back_to_back * h->fixed_s;
    if (pb->act_quant != GEMM_AQ_DYNAMIC_BLOCK) {
        /* Row CTAs resident at once, and the rate their loads in flight
         * sustain. */
        double per_sm = mind(h->max_ctas, floor(h->max_warps * h->warp_size / QUANT_CTA_THREADS));
        double ctas = mind(rows, maxd(1.0, per_sm) * h->num_sms);
        double lat = l2 ? h->lat_l2_s : h->lat_dram_s;
        r_bw = mind(r_bw, ctas * QUANT_CTA_THREADS * QUANT_BYTES_IN_FLIGHT / lat);
    }
    double out = elems + (pb->act_quant == GEMM_AQ_DYNAMIC_BLOCK ? 4 * ceil(pb->k / 128) * rows : 0);
    double stream = src / r_bw + out / (out <= h->l2_usable ? h->l2_bw : h->hbm_write_bw);
    double t = kern + stream;
    if (!l2) *rd += src;
    *wr += out;
    if (qt) {
        qt->kernels = 1;
        qt->fixed_s = h->fixed_s;
        qt->stream_s = stream;
    }
    if (pb->act_quant == GEMM_AQ_DYNAMIC) {
        t += kern; /* the zeroed scale */
        t += kern + maxd(src / r_bw, rows * h->atomic_cycles / h->clock_hz);
        if (!l2) *rd += src;
        if (qt) {
            qt->kernels = 3;
            qt->absmax_read_s = src / r_bw;
            qt->atomic_s_per_cycle = rows / h->clock_hz;
        }
    }
    return t;
}

double opm_gemm_quant_terms_time(const gemm_quant_terms *qt, double atomic_cycles, double back_to_back)
{
    double t = qt->kernels * back_to_back * qt->fixed_s + qt->stream_s;
    if (qt->atomic_s_per_cycle > 0) t += maxd(qt->absmax_read_s, qt->atomic_s_per_cycle * atomic_cycles);
    return t;
}

int opm_gemm_quant_terms_of(const opm_op *op, const opm_hardware *hw, gemm_quant_terms *qt, opm_error *err)
{
    memset(qt, 0, sizeof *qt);
    opm_kind kind = opm_op_kind(op);
    if ((kind != OPM_KIND_GEMM && kind != OPM_KIND_BATCHED_GEMM) || opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) return 0;
    opm_counts c;
    gemm_hw h;
    gemm_problem pb;
    int rc;
    if ((rc = opm_op_count(op, &c, err)) || (rc = opm_gemm_hw(hw, c.compute_dtype, &h, err))) return rc;
    if (h.mi == GEMM_MI_MXU || h.mi == GEMM_MI_MME || !opm_gemm_problem(op, &pb)) return 0;
    double rd = 0, wr = 0;
    act_quant_s(&pb, &h, &rd, &wr, qt);
    return 0;
}

/* diagnostics.fallback on an MXU/MME part (mi): *plain for the plain
 * roofline, *achievable for one at the hardware's achievable fraction;
 * other_kind for a kind no GPU kernel model covers either.  Each text
 * stays under the 64-byte diagnostic text. */
static void mxu_mme_fallback(int mi, int other_kind, const char **plain, const char **achievable)
{
    static const char *const text[2][2][2] = {
        {{"no MXU (systolic array) kernel model: roofline",
          "no MXU (systolic array) kernel model: achievable-rate roofline"},
         {"no MME (matrix engine) kernel model: roofline",
          "no MME (matrix engine) kernel model: achievable-rate roofline"}},
        {{"no MXU (systolic array) kernel model for this kind: roofline",
          "no MXU kernel model for this kind: achievable-rate roofline"},
         {"no MME (matrix engine) kernel model for this kind: roofline",
          "no MME kernel model for this kind: achievable-rate roofline"}},
    };
    int e = mi == GEMM_MI_MME;
    *plain = text[!!other_kind][e][0];
    *achievable = text[!!other_kind][e][1];
}

int opm_gemm_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, const char *model,
                     gemm_wave_fn wave, opm_error *err)
{
    opm_kind kind = opm_op_kind(op);
    int rc;
    /* The family the description names: a systolic-array or matrix-engine
     * part has no GPU kernel model for any kind. */
    const int mi = gemm_hw_named_family(hw), mxu_mme = mi == GEMM_MI_MXU || mi == GEMM_MI_MME;
    /* Why the roofline answers instead, reported as diagnostics.fallback;
     * on MXU/MME parts the second text when the tensor peak was taken at
     * the hardware's achievable fraction (each under the 64-byte text). */
    const char *fallback = "no kernel model for this kind: roofline";
    const char *fallback_achievable = fallback;
    if (kind != OPM_KIND_GEMM && kind != OPM_KIND_BATCHED_GEMM && kind != OPM_KIND_GROUPED_GEMM &&
        kind != OPM_KIND_CONV) {
        /* The streaming and attention kernels are CUDA/HIP grids of CTAs
         * on SMs: a systolic-array or matrix-engine part gets the roofline
         * (its DMA and vector units have no such model), not a GPU grid on
         * an fp32 peak it does not list. */
        if (mxu_mme) {
            mxu_mme_fallback(mi, 1, &fallback, &fallback_achievable);
            goto roofline;
        }
        rc = kind == OPM_KIND_ATTENTION || kind == OPM_KIND_ATTENTION_PREFILL || kind == OPM_KIND_ATTENTION_DECODE
                 ? opm_attention_kernel_predict(op, hw, p, model, err)
                 : opm_stream_predict(op, hw, p, model, err);
        if (rc >= 0) return rc;
        goto roofline;
    }
    opm_counts c;
    if ((rc = opm_op_count(op, &c, err))) return rc;
    gemm_hw h;
    if ((rc = opm_gemm_hw(hw, c.compute_dtype, &h, err))) return rc;
    /* Systolic arrays and matrix engines are not tiled like GPU SMs: the
     * roofline, rather than CUDA tiles on a part without them. */
    if (h.mi == GEMM_MI_MXU || h.mi == GEMM_MI_MME) {
        mxu_mme_fallback(h.mi, 0, &fallback, &fallback_achievable);
        goto roofline;
    }
    fallback = "depthwise or degenerate conv: roofline";
    /* Cleared where a path may leave it partly unfilled (predict_conv may
     * find no sub-kernel; the backward's three GEMMs); opm_gemm_choose
     * copies a whole opm_gemm_setup-cleared record into it. */
    gemm_eval e;
    gemm_extra x;
    x.groups_active = 0;
    x.conv_n = 0;
    x.vec_bytes = x.vec_write_bytes = x.zero_bytes = 0;
    x.quant_s = x.quant_read = x.quant_write = 0;
    x.dq_vec_flops = 0;
    if (kind == OPM_KIND_CONV) {
        memset(&e, 0, sizeof e);
        rc = predict_conv(op, &h, wave, &e, &x, err);
        if (rc > 0) goto roofline;
        if (rc < 0) return -rc;
    } else {
        gemm_problem pb;
        int ok = kind == OPM_KIND_GROUPED_GEMM ? opm_gemm_grouped_problem(op, &pb) : opm_gemm_problem(op, &pb);
        if (!ok) {
            if (kind == OPM_KIND_GROUPED_GEMM) { /* no group has rows */
                fallback = "no group has rows: roofline";
                goto roofline;
            }
            return opm_err(err, OPM_EINVAL, "tensors", "expected input A, weight B and output C");
        }
        x.groups_active = kind == OPM_KIND_GROUPED_GEMM ? pb.b_mats : 0;
        if (pb.act_quant != GEMM_AQ_NONE && opm_op_phase(op) != OPM_PHASE_TRAIN_BWD) {
            x.quant_s = act_quant_s(&pb, &h, &x.quant_read, &x.quant_write, NULL);
            pb.warm_a = 1; /* the GEMM reads the activation the last pass wrote */
        }
        if (opm_op_phase(op) == OPM_PHASE_TRAIN_BWD) {
            /* The backward's GEMMs contract other dimensions than the
             * forward's scale blocks: their scale work stays vector work. */
            pb.scale_bk = 0;
            pb.scale_blocks = 0;
            memset(&e, 0, sizeof e);
            if ((rc = predict_backward(op, &pb, &h, wave, &e, err))) return rc;
            /* Every weight gradient is written: those of empty groups are zeros. */
            if (pb.groups > pb.b_mats) x.zero_bytes = (pb.groups - pb.b_mats) * pb.k * pb.n * pb.b_bytes;
        } else if ((rc = opm_gemm_choose(op, &pb, &h, wave, &e, err))) {
            return rc;
        } else if (e.t_dequant > 0 || (e.kern.mi == GEMM_MI_MFMA && h.tensor && pb.scale_bk > 0)) {
            /* The K loop timed the block-scale work (ops/gemm.c counts it
             * as b·M·N·ceil(K/bk)·(1 + block-scaled operands)). */
            x.dq_vec_flops = pb.batch * pb.m * pb.n * ceil(pb.k / pb.scale_bk) * (1 + pb.scale_blocks);
        }
    }

    opm_profile_head(p, op, hw, model, &c);
    p->workspace_bytes = c.workspace_bytes + (e.kern.split_k > 1 ? (uint64_t)(e.l2_write - e.dram_write) : 0);
    p->engine = h.tensor ? OPM_ENGINE_TENSOR : OPM_ENGINE_VECTOR;

    /* Bias and scale work happen in the epilogue on the vector units. */
    double vpeak = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32) * hw->util_vector;
    double vflops = maxd(0, (double)c.vector_flops - x.dq_vec_flops);
    double t_vec = vflops > 0 && vpeak > 0 ? vflops / vpeak : 0;
    /* Vector work with its own DRAM pass (a backward's bias reduction) and
     * zeroed gradients are timed as the roofline times them. */
    double side_bytes = x.vec_bytes + x.vec_write_bytes + x.zero_bytes;
    if (side_bytes > 0) {
        /* One more kernel (the reduction, or the memset), one more gap. */
        t_vec = maxd(t_vec, (x.vec_bytes + x.vec_write_bytes) / h.hbm_bw) + x.zero_bytes / h.hbm_bw + SPLITK_GAP_S;
        e.dram_read += x.vec_bytes;
        e.dram_write += x.vec_write_bytes + x.zero_bytes;
        e.t_dram += side_bytes / h.hbm_bw;
    }
    e.t_epilogue += t_vec;
    e.body_s += t_vec + x.quant_s;
    e.dram_read += x.quant_read;
    e.dram_write += x.quant_write;
    p->compute_time_s = e.t_compute;
    p->overhead_s = h.fixed_s;
    p->latency_s = e.body_s + h.fixed_s;

    double dram_bytes = e.dram_read + e.dram_write;
    for (size_t i = 0; i < hw->n_levels && p->level_count < OPM_MAX_LEVELS; i++) {
        const opm_memory_level *l = &hw->levels[i];
        char lk = level_kind(l);
        if (lk == 'r') continue;
        opm_level_access *a = &p->levels[p->level_count++];
        memcpy(a->name, l->name, sizeof a->name);
        double rd, wr, t;
        if (lk == 'h') { rd = e.dram_read; wr = e.dram_write; t = e.t_dram; }
        else if (lk == 'l') { rd = e.l2_read; wr = e.l2_write; t = e.t_l2; }
        else if (lk == 's') { rd = e.smem_bytes; wr = e.l2_read; t = e.t_smem; }
        else { rd = (double)c.read_bytes; wr = (double)c.write_bytes; t = 0; }
        a->read_bytes = (uint64_t)rd;
        a->write_bytes = (uint64_t)wr;
        a->time_s = t;
    }
    opm_energy_in work = {(double)c.matrix_flops, p->engine, c.compute_dtype, (double)c.vector_flops, OPM_FP32,
                          h.power_w > 0};
    opm_energy_apply(p, hw, &work);
    p->arithmetic_intensity = dram_bytes > 0 ? (double)p->flops / dram_bytes : 0;

    /* The limiting resource: the largest of the summed terms. */
    double terms[GEMM_LIM_COUNT] = {e.t_compute, e.t_smem, e.t_l2, e.t_dram,
                                    e.t_epilogue + e.t_prologue + e.t_reduce, h.fixed_s,
                                    e.power_limited ? e.t_power : 0};
    if (e.exposed_latency) {
        double miss = e.l2_read > 0 ? e.dram_read / e.l2_read : 1;
        double *t = miss > 0.5 ? &terms[GEMM_LIM_DRAM] : &terms[GEMM_LIM_L2];
        *t = maxd(*t, e.t_latency);
    }
    int lim = 0;
    for (int i = 1; i < GEMM_LIM_COUNT; i++)
        if (terms[i] > terms[lim]) lim = i;
    e.limit = lim;
    p->bound = lim == GEMM_LIM_FIXED ? OPM_BOUND_OVERHEAD
             : lim == GEMM_LIM_COMPUTE || lim == GEMM_LIM_POWER ? OPM_BOUND_COMPUTE : OPM_BOUND_MEMORY;
    if (p->bound == OPM_BOUND_MEMORY) {
        if (lim == GEMM_LIM_SMEM) opm_diag_text_lit(p, "limiting_level", "sram");
        else if (lim == GEMM_LIM_L2) opm_diag_text_lit(p, "limiting_level", "l2");
        else opm_diag_text_lit(p, "limiting_level", "hbm");
    }
    opm_diag_text(p, "limiting_resource", opm_gemm_limit_names[lim]);
    opm_gemm_put_kernel_diags(p, &e);
    opm_gemm_put_details(p, &e);
    opm_gemm_put_extra_diags(p, &x);
    if (wave != opm_gemm_wave_extended) opm_gemm_put_effective_diags(p, &e);
    else opm_gemm_put_extended_diags(p, &e);
    opm_diag_num(p, "overhead_s", h.fixed_s);
    if (h.tensor) {
        opm_diag_num(p, "tensor_achievable_fraction", h.achievable);
        if (h.achievable_default) opm_diag_text(p, "tensor_achievable_source", "default");
    }
    opm_diag_num(p, "achieved_flops_per_s", p->latency_s > 0 ? (double)p->flops / p->latency_s : 0);
    opm_gemm_put_findings(p, &e);
    return 0;

roofline:;
    /* A part with no GPU kernel model (TPU, Gaudi) gets the roofline at
     * what its best library GEMM sustains where that is published; a GPU's
     * fallbacks (kinds and shapes its kernels do not cover) stay the
     * plain roofline. */
    double applied = 0;
    rc = mxu_mme ? opm_roofline_fallback_predict(op, hw, p, &applied, err) : opm_roofline_predict(op, hw, p, err);
    if (!rc) {
        opm_profile_copy_name(p->model, sizeof p->model, model);
        p->fell_back = 1;
        opm_energy_cap(p, hw);
        opm_diag_text(p, "fallback", applied > 0 ? fallback_achievable : fallback);
    }
    return rc;
}

int opm_extended_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err)
{
    return opm_gemm_predict(op, hw, p, "extended_roofline", opm_gemm_wave_extended, err);
}
