/* gemm_catalog.c — the GEMM kernels the tile models choose from: the
 * per-architecture catalogs (SIMT, mma_sync, wgmma, tcgen05, MFMA tiles
 * with their warps, stages and registers), a kernel's display name, kernel
 * hints and their bounds, and the selection (every catalog kernel, with a
 * split-K sweep for unbatched launches, timed by the wave model; the
 * fastest kept; on warp-level MMA only the largest tiles that still fill
 * the SMs, when one does).  Tiling and timing are in gemm_tiled.c and gemm_waves.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../core/internal.h"
#include "hw_internal.h"
#include "gemm_tiled.h"

void opm_gemm_kernel_name(const gemm_kernel *k, char *buf, size_t cap)
{
    size_t pos = 0;
    if (!cap) return;
    buf[0] = '\0';
    put_str(buf, cap, &pos, k->family);
    put_str(buf, cap, &pos, "_");
    put_int(buf, cap, &pos, k->tm);
    put_str(buf, cap, &pos, "x");
    put_int(buf, cap, &pos, k->tn);
    put_str(buf, cap, &pos, "x");
    put_int(buf, cap, &pos, k->tk);
    if (k->sliced) put_str(buf, cap, &pos, "_sliced");
    put_str(buf, cap, &pos, "_s");
    put_int(buf, cap, &pos, k->stages);
    if (k->split_k > 1) {
        put_str(buf, cap, &pos, "_splitk");
        put_int(buf, cap, &pos, k->split_k);
    }
}

/* ---- kernel catalog ---- */

typedef struct cat_entry {
    int tm, tn, tk_bytes;   /* tk_bytes: CTA K depth in bytes of the operand */
    int wm, wn, warps, sliced;
    int multicast;          /* CTAs sharing one load of the B panel */
} cat_entry;

/* SIMT sgemm tiles (cuBLAS maxwell/volta/ampere_sgemm_*), K depth 8;
 * sliced ones split a K depth of 32 four ways.  Warps per CTA as NeuSight's
 * launch records give them (data/README.md): 8×8 thread tiles for the
 * 128×128, 128×64 and 64×64 kernels, 256 threads (4×4 per thread) for the
 * 128×32 and 32×128 ones, 8 warps (2 per K slice) for the 64×32 and 128×32
 * sliced ones. */
static const cat_entry simt_cat[] = {
    {128, 128, 32, 32, 64, 8, 0, 1}, {128, 64, 32, 64, 32, 4, 0, 1}, {64, 128, 32, 32, 64, 4, 0, 1},
    {64, 64, 32, 32, 64, 2, 0, 1},   {128, 32, 32, 16, 32, 8, 0, 1}, {32, 128, 32, 16, 32, 8, 0, 1},
    {32, 32, 128, 32, 32, 4, 1, 1},  {64, 32, 128, 32, 32, 8, 1, 1}, {128, 32, 128, 64, 32, 8, 1, 1},
};
/* Warp-level MMA (mma.sync: Volta .. Ada) tiles, K depth 64 bytes (32 fp16
 * elements) or 128 bytes (deeper stages cover latency with fewer
 * barriers); rounded up to multiples of the native MMA shape.  cuBLAS's
 * Ampere kernels include the 256x64 and 64x256 shapes. */
static const cat_entry tensor_cat[] = {
    {256, 128, 64, 64, 64, 8, 0, 1},  {128, 256, 64, 64, 64, 8, 0, 1},  {128, 128, 64, 64, 64, 4, 0, 1},
    {128, 64, 64, 64, 32, 4, 0, 1},   {64, 128, 64, 32, 64, 4, 0, 1},   {64, 64, 64, 32, 32, 4, 0, 1},
    {256, 128, 128, 64, 64, 8, 0, 1}, {128, 256, 128, 64, 64, 8, 0, 1}, {128, 128, 128, 64, 64, 4, 0, 1},
    {256, 64, 64, 64, 64, 4, 0, 1},   {64, 256, 64, 64, 64, 4, 0, 1},
};
/* Hopper warpgroup MMA (wgmma m64nNk16, TMA loads, persistent warp-
 * specialised kernels as CUTLASS 3 and cuBLAS sm90 run them): one producer
 * warpgroup and one (64-row tiles, ping-pong) or two (128- and 256-row
 * tiles, cooperative) consumer warpgroups; K depth 128 bytes (64 bf16 or
 * 128 fp8 elements); 2x1 clusters multicast the B panel.  The warp tile
 * only sizes the accumulators (tile over the consumer warps). */
static const cat_entry wgmma_cat[] = {
    {64, 64, 128, 32, 32, 8, 0, 1},   {64, 128, 128, 32, 64, 8, 0, 2},  {64, 256, 128, 64, 64, 8, 0, 2},
    {128, 64, 128, 32, 32, 12, 0, 2}, {128, 128, 128, 32, 64, 12, 0, 2}, {128, 256, 128, 64, 64, 12, 0, 2},
    {256, 128, 128, 64, 64, 12, 0, 2}, {128, 192, 128, 64, 48, 12, 0, 2},
};
/* Blackwell tcgen05 MMA: accumulators in tensor memory (registers only for
 * addresses and the epilogue), 1-SM tiles of 128 rows and 2-SM tiles of
 * 256 rows; a 2-SM tile runs as one 128-row tile per SM whose B panel the
 * pair loads once (multicast 2).  K depth 128 bytes. */
static const cat_entry tcgen05_cat[] = {
    {128, 64, 128, 16, 16, 6, 0, 1},  {128, 128, 128, 16, 16, 6, 0, 1}, {128, 256, 128, 16, 16, 6, 0, 1},
    {128, 128, 128, 16, 16, 6, 0, 2}, {128, 256, 128, 16, 16, 6, 0, 2}, {64, 128, 128, 16, 16, 6, 0, 1},
};
/* AMD CDNA MFMA macro tiles as hipBLASLt and the Tensile kernels run them:
 * 256 threads (four 64-lane waves), K depth 64 bytes so that two stages fit
 * the 64 KiB LDS. */
static const cat_entry mfma_cat[] = {
    {256, 256, 64, 128, 128, 4, 0, 1}, {256, 128, 64, 128, 64, 4, 0, 1}, {128, 256, 64, 64, 128, 4, 0, 1},
    {128, 128, 64, 64, 64, 4, 0, 1},   {128, 64, 64, 64, 32, 4, 0, 1},   {64, 128, 64, 32, 64, 4, 0, 1},
    {64, 64, 64, 32, 32, 4, 0, 1},     {256, 64, 64, 128, 32, 4, 0, 1},  {64, 256, 64, 32, 128, 4, 0, 1},
};
/* The largest catalog (opm_gemm_choose builds its kernels on the stack). */
#define CAT_MAX 16
#define CAT_FITS(c) (sizeof c / sizeof c[0] <= CAT_MAX)
_Static_assert(CAT_FITS(simt_cat) && CAT_FITS(tensor_cat) && CAT_FITS(wgmma_cat) && CAT_FITS(tcgen05_cat) &&
                   CAT_FITS(mfma_cat),
               "every catalog fits CAT_MAX");
#undef CAT_FITS

/* Stages of a persistent warp-specialised kernel (Hopper, Blackwell): as
 * many K tiles of stage_bytes as fill the shared memory left after a
 * quarter kept for the epilogue's staging, from 2 up to 8. */
static int persistent_stages(const gemm_hw *h, double stage_bytes)
{
    int s = 2;
    while (s < 8 && (s + 1) * stage_bytes <= 0.75 * h->smem_per_sm) s++;
    return s;
}

static int round_up(int v, int q) { return q > 1 ? (v + q - 1) / q * q : v; }

/* Registers per thread a kernel needs: accumulators (warp tile over the
 * warp's lanes), the operand fragments, and ~48 for addresses and loop
 * state, capped at what a lane can address: 255 on a 32-lane warp, 512
 * (VGPRs and AGPRs) on a 64-lane CDNA wave. */
static int lane_regs_max(double warp_size) { return warp_size > 32 ? 512 : 255; }

static int regs_for(int wm, int wn, double warp_size)
{
    double acc = wm * wn / warp_size;
    double r = acc + 2 * sqrt(acc) + 48;
    int cap = lane_regs_max(warp_size);
    return r > cap ? cap : (int)r;
}

static const char *const family_names[] = {"sgemm", "tensorop", "wgmma", "tcgen05", "mfma", "mxu", "mme"};

static void from_entry(const cat_entry *c, const gemm_problem *pb, const gemm_hw *h, gemm_kernel *k)
{
    memset(k, 0, sizeof *k);
    double opb = maxd(pb->a_bytes, pb->b_bytes);
    k->family = family_names[h->mi];
    k->tm = h->tensor ? round_up(c->tm, h->fma[0]) : c->tm;
    k->tn = h->tensor ? round_up(c->tn, h->fma[1]) : c->tn;
    int tk = (int)(c->tk_bytes / opb);
    if (tk < 1) tk = 1;
    k->tk = h->tensor ? round_up(tk, h->fma[2]) : tk;
    /* Block-scaled MFMA kernels (CK's a8w8 blockscale, every KPerBlock a
     * multiple of the 128-deep scale block) step K at least one scale
     * block at a time, so the dequantisation falls between K tiles: the
     * deeper tile then sets the LDS stages and the CTAs per CU. */
    if (h->mi == GEMM_MI_MFMA && h->tensor && pb->scale_bk > k->tk && pb->scale_bk <= MFMA_SCALE_TILE_MAX_K)
        k->tk = round_up((int)pb->scale_bk, h->fma[2]);
    k->wm = c->wm;
    k->wn = c->wn;
    k->warps = c->warps;
    k->sliced = c->sliced;
    k->mma_m = h->tensor ? h->fma[0] : 1;
    k->mma_n = h->tensor ? h->fma[1] : 1;
    k->mma_k = h->tensor ? h->fma[2] : 1;
    k->regs = regs_for(c->wm, c->wn, h->warp_size);
    k->multicast = c->multicast;
    k->mi = h->mi;
    k->stream_k = h->mi == GEMM_MI_WGMMA || h->mi == GEMM_MI_TCGEN05;
    /* Pipeline depth from shared memory: warp-level MMA kernels take as
     * many K stages (2..4) as leave room for two CTAs per SM; the
     * persistent Hopper and Blackwell kernels (one CTA per SM) fill it, up
     * to 8, after a quarter kept for the epilogue's staging; SIMT sgemm and
     * MFMA kernels double-buffer. */
    double stage = (double)(k->tm + k->tn) * k->tk * opb;
    int s = 2;
    if (h->mi == GEMM_MI_WGMMA || h->mi == GEMM_MI_TCGEN05)
        s = persistent_stages(h, stage);
    else if (h->mi == GEMM_MI_MMA_SYNC)
        while (s < 4 && (s + 1) * stage * 2 <= h->smem_per_sm) s++;
    k->stages = s;
    k->split_k = 1;
}

enum { H_TM, H_TN, H_TK, H_WM, H_WN, H_MMA_M, H_MMA_N, H_MMA_K, H_STAGES, H_WARPS, H_REGS, H_SPLIT, H_COUNT };
static const char *const hint_keys[H_COUNT] = {
    "cta_tile_m", "cta_tile_n", "cta_tile_k", "warp_tile_m", "warp_tile_n", "mma_m", "mma_n", "mma_k",
    "pipeline_stages", "warps_per_cta", "registers_per_thread", "split_k"};

/* Largest accepted value of each hint (H_*): beyond these no kernel exists
 * on any device we describe, and the tile arithmetic would leave int. */
static const int64_t hint_max[H_COUNT] = {4096, 4096, 4096, 4096, 4096, 1024, 1024, 1024, 32, 0, 0, 1024};

int opm_gemm_hinted(const opm_op *op, const gemm_hw *h, gemm_kernel *k, opm_error *err)
{
    /* One pass over the op's attributes (usually none or a few). */
    int64_t v[H_COUNT];
    int has[H_COUNT] = {0}, any = 0;
    size_t na = opm_op_attr_count(op);
    for (size_t i = 0; i < na; i++) {
        const char *key = opm_op_attr_key(op, i);
        /* The table's keys, first byte first: a strcmp only for the few
         * keys that share it. */
        for (int j = 0; j < H_COUNT; j++)
            if (key[0] == hint_keys[j][0] && strcmp(key, hint_keys[j]) == 0) {
                has[j] = any = 1;
                v[j] = opm_op_attr_int_at(op, i, 0);
                break;
            }
    }
    if (!any) return 0;
    for (int j = 0; j < H_COUNT; j++) {
        if (!has[j]) continue;
        /* Warps are bounded by the SM, registers by what a lane addresses. */
        int64_t max = j == H_WARPS ? (int64_t)h->max_warps : j == H_REGS ? lane_regs_max(h->warp_size) : hint_max[j];
        if (v[j] < 1 || v[j] > max) {
            char f[OPM_ERROR_FIELD_MAX];
            snprintf(f, sizeof f, "attrs.%s", hint_keys[j]);
            return -opm_err(err, OPM_EINVAL, f, "expected a kernel hint from 1 to %lld on this hardware, got %lld",
                            (long long)max, (long long)v[j]);
        }
    }
    /* split_k alone names no kernel: the catalog, at that split (a library
     * that never splits K is split_k: 1), and no stream-K. */
    int others = 0;
    for (int j = 0; j < H_COUNT; j++) others += has[j] && j != H_SPLIT;
    if (!others) {
        memset(k, 0, sizeof *k);
        k->split_k = v[H_SPLIT] < 1 ? 1 : (int)v[H_SPLIT];
        k->split_hinted = 1;
        return 2;
    }
#define HINT(j, dflt) (has[j] ? (int)v[j] : (dflt))
    /* Defaults for what the hints leave out: a 128×128 CTA tile of four
     * 64×64 warps, K depth of 64 bytes (tensor) or 8 elements (SIMT), the
     * hardware's MMA shape, 2 stages (3 on tensor paths), no split-K. */
    memset(k, 0, sizeof *k);
    k->family = "hinted";
    k->mi = h->mi;
    k->tm = HINT(H_TM, 128);
    k->tn = HINT(H_TN, 128);
    k->tk = HINT(H_TK, h->tensor ? 32 : 8);
    k->wm = HINT(H_WM, k->tm >= 64 ? 64 : k->tm);
    k->wn = HINT(H_WN, k->tn >= 64 ? 64 : k->tn);
    if (k->wm > k->tm) k->wm = k->tm;
    if (k->wn > k->tn) k->wn = k->tn;
    int dw = (k->tm / k->wm) * (k->tn / k->wn);
    k->warps = HINT(H_WARPS, dw > 0 ? dw : 1);
    k->mma_m = HINT(H_MMA_M, h->tensor ? h->fma[0] : 1);
    k->mma_n = HINT(H_MMA_N, h->tensor ? h->fma[1] : 1);
    k->mma_k = HINT(H_MMA_K, h->tensor ? h->fma[2] : 1);
    /* 0 on Hopper: opm_gemm_choose sizes the pipeline to the shared memory
     * once it knows the operand widths (warp-specialised kernels fill it,
     * CUTLASS's StageCountAutoCarveout), as the catalog does. */
    k->stages = HINT(H_STAGES, h->mi == GEMM_MI_WGMMA ? 0 : h->tensor ? 3 : 2);
    k->regs = HINT(H_REGS, regs_for(k->wm, k->wn, h->warp_size));
    /* Without a split_k hint the caller also tries split-K (opm_gemm_choose). */
    k->split_k = HINT(H_SPLIT, 1);
    /* Warps beyond those the tile needs split the K tile between them. */
    k->sliced = k->warps > dw && dw > 0 && k->warps % dw == 0 && k->warps / dw > 1;
    /* Warpgroup MMAs do not slice K: the warps beyond the consumers' are
     * the producer warpgroup (and the warp tile only sizes accumulators). */
    if (h->mi == GEMM_MI_WGMMA) k->sliced = 0;
    if (k->tm < 1) k->tm = 1;
    if (k->tn < 1) k->tn = 1;
    if (k->tk < 1) k->tk = 1;
    if (k->warps < 1) k->warps = 1;
    if (k->stages < 1 && has[H_STAGES]) k->stages = 1;
    if (k->regs < 1) k->regs = 1;
    if (k->split_k < 1) k->split_k = 1;
    k->split_hinted = has[H_SPLIT];
#undef HINT
    return 1;
}

/* The selection score of a timed kernel: its time, its energy (the
 * energy model's terms for this kernel's executed FLOPs and traffic, idle
 * power over its time) or their product. */
static double score(const gemm_hw *h, const gemm_eval *e)
{
    double t = e->body_s + h->fixed_s;
    if (h->objective == 0) return e->body_s;
    double j = e->exec_flops * h->obj_flop_j + (e->dram_read + e->dram_write) * h->obj_dram_j +
               (e->l2_read + e->l2_write) * h->obj_l2_j + h->obj_idle_w * t;
    /* energy.c's active base power, what the TDP leaves of it. */
    if (h->obj_active_w > 0) j = mind(j + h->obj_active_w * t, maxd(j, h->obj_tdp_w * t));
    return h->objective == 1 ? j : j * t;
}

/* Times the kernel set up in e and keeps it in *best when it scores
 * lower (or is the first found). */
static void time_and_keep(const gemm_problem *pb, const gemm_hw *h, gemm_wave_fn wave, gemm_eval *e, gemm_eval *best,
                          int *found)
{
    wave(pb, h, e);
    opm_gemm_power_cap(h, e);
    if (!*found || score(h, e) < score(h, best)) *best = *e;
    *found = 1;
}

/* A hinted CTA that does not fit an SM by the occupancy rules (the
 * library runs it, so the accounting is what is short): one CTA per SM,
 * as a launch with an oversubscribed SM would serialise anyway. */
static int setup_oversubscribed(const gemm_problem *pb, const gemm_hw *h, const gemm_kernel *k, gemm_eval *e)
{
    gemm_hw relaxed = *h;
    relaxed.smem_per_sm = relaxed.regs_per_sm = 1e30;
    relaxed.max_warps = relaxed.max_ctas = 1e30;
    if (!opm_gemm_setup(pb, &relaxed, k, e)) return 0;
    e->ctas_per_sm = 1;
    e->slots = h->num_sms;
    e->full_waves = floor(e->tiles / e->slots);
    e->tail_tiles = e->tiles - e->full_waves * e->slots;
    e->waves = e->full_waves + (e->tail_tiles > 0);
    e->wave_eff = e->tiles / (e->waves * e->slots);
    e->occ_limit = "oversubscribed";
    return 1;
}

/* Kernel k at split-K s0, 2·s0, … up to 32: split-K only pays when the
 * output tiles leave SMs idle, and each split keeps at least 4 K
 * iterations.  Block-scaled MFMA kernels (CK's ab_scale GEMMs, which
 * aiter's tuner splits) take aiter's own bounds instead
 * (compute_gemm_SplitK, aiter/ops/gemm_op_a8w8.py): no more splits than
 * CUs per output tile, and splits × K tile < 2K, so a split may hold a
 * single K tile.  Every configuration that runs replaces *best when it
 * scores lower (or when none was *found yet). */
static void split_k_sweep(const gemm_problem *pb, const gemm_hw *h, gemm_wave_fn wave, gemm_kernel k, int s0,
                          int oversubscribed, gemm_eval *best, int *found)
{
    gemm_eval e;
    int ck = k.mi == GEMM_MI_MFMA && h->tensor && pb->scale_bk > 0;
    for (int s = s0; s <= 32; s *= 2) {
        if (s > 1 && (ck ? (double)s * k.tk >= 2 * pb->k : cdivd(pb->k, (double)s * k.tk) < 4)) break;
        /* A batched launch puts the batch on the grid's z dimension,
         * which split-K kernels use for their K slices: cuBLAS runs
         * batched GEMMs unsplit (docs/gemm_models.md, "Batched GEMMs"). */
        if (s > 1 && pb->batch > 1) break;
        k.split_k = s;
        if (!(oversubscribed ? setup_oversubscribed(pb, h, &k, &e) : opm_gemm_setup(pb, h, &k, &e))) break;
        if (s > 1 && e.tiles / s >= e.slots) break;
        if (s > 1 && ck && e.tiles > h->num_sms) break;
        time_and_keep(pb, h, wave, &e, best, found);
    }
}

int opm_gemm_choose(const opm_op *op, const gemm_problem *pb, const gemm_hw *h_in, gemm_wave_fn wave,
                    gemm_eval *best, opm_error *err)
{
    gemm_kernel k;
    gemm_eval e;
    /* An op's gemm_selection_objective overrides the hardware's (a copy
     * of the description's figures only when the op names one). */
    const gemm_hw *h = h_in;
    gemm_hw hh;
    const char *obj = opm_op_get_string(op, "gemm_selection_objective", NULL);
    if (obj) {
        int o = opm_hw_objective_index(obj);
        if (o < 0)
            return opm_err(err, OPM_EINVAL, "attrs.gemm_selection_objective",
                           "expected latency, energy or edp, got '%.40s'", obj);
        hh = *h_in;
        hh.objective = o;
        h = &hh;
    }
    int hinted = opm_gemm_hinted(op, h, &k, err);
    if (hinted < 0) return -hinted;
    int fixed_split = hinted == 2 ? k.split_k : 0;
    if (hinted == 1 && k.stages < 1)
        k.stages = persistent_stages(h, (double)(k.tm + k.tn) * k.tk * maxd(pb->a_bytes, pb->b_bytes));
    if (hinted == 1) {
        int oversubscribed = !opm_gemm_setup(pb, h, &k, &e);
        if (oversubscribed) setup_oversubscribed(pb, h, &k, &e);
        int found = 0;
        time_and_keep(pb, h, wave, &e, best, &found);
        /* A hinted tile without a split_k hint: split-K is chosen as for
         * the catalog (kernels that may run a split-K reduction), at one
         * CTA per SM for a tile the occupancy rules call too big. */
        if (!k.split_hinted && best->ctas_per_sm >= 1)
            split_k_sweep(pb, h, wave, k, 2, oversubscribed, best, &found);
        return 0;
    }
    const cat_entry *cat;
    size_t n;
#define CAT(c) (cat = c, n = sizeof c / sizeof c[0])
    switch (h->mi) {
    case GEMM_MI_SIMT: CAT(simt_cat); break;
    case GEMM_MI_WGMMA: CAT(wgmma_cat); break;
    case GEMM_MI_TCGEN05: CAT(tcgen05_cat); break;
    case GEMM_MI_MFMA: CAT(mfma_cat); break;
    default: CAT(tensor_cat); break;
    }
#undef CAT
    /* The catalog's kernels for this problem, built once for the passes
     * below. */
    gemm_kernel ks[CAT_MAX];
    for (size_t i = 0; i < n; i++) from_entry(&cat[i], pb, h, &ks[i]);
    /* Warp-level MMA libraries (cuBLAS's Ampere/Ada heuristics) do not run
     * a tile smaller than the largest one that still gives every SM a
     * tile, though a per-SM timing of several small co-resident CTAs calls
     * it as fast: measured, it is not (docs/gemm_models.md, "Tile choice on
     * warp-level MMA").  Problems no such tile fills keep the full sweep. */
    double min_area = 0;
    if (h->mi == GEMM_MI_MMA_SYNC && h->tensor && !fixed_split)
        for (size_t i = 0; i < n; i++) {
            const gemm_kernel *ki = &ks[i];
            double tiles = pb->batch * opm_gemm_tile_rows(pb, ki->tm) * ceil(pb->n / ki->tn);
            if (tiles >= h->num_sms && (double)ki->tm * ki->tn > min_area) min_area = (double)ki->tm * ki->tn;
        }
    int found = 0;
    /* Pass 1 (the whole catalog) only when no large tile fits an SM. */
    for (int pass = 0; pass < 2 && !found; pass++) {
        for (size_t i = 0; i < n; i++) {
            k = ks[i];
            if (pass == 0 && (double)k.tm * k.tn < min_area) continue;
            if (!fixed_split) {
                split_k_sweep(pb, h, wave, k, 1, 0, best, &found);
                continue;
            }
            k.split_k = fixed_split;
            k.split_hinted = 1;
            k.stream_k = 0;
            if (opm_gemm_setup(pb, h, &k, &e)) time_and_keep(pb, h, wave, &e, best, &found);
        }
    }
    if (!found)
        return opm_err(err, OPM_EUNSUPPORTED, "hardware",
                       "no catalog GEMM kernel fits one SM (shared memory, registers or warps too small)");
    return 0;
}
