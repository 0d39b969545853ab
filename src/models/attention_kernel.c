/* attention_kernel.c — fused attention as FlashAttention-2/3 and
 * FlashDecoding run it, for extended_roofline and effective_roofline:
 * attention, attention_prefill and attention_decode, dense or packed
 * (varlen), causal and sliding-window tile skipping, GQA/MQA, MLA head
 * dims, paged KV, split-KV with its combine kernel, the reshape-and-cache
 * kernel (attrs.kv_cache_write) and the backward.
 *
 * The library: FA3 on warpgroup-MMA parts, FA2 elsewhere, or what
 * attrs.attention_kernel names (FA3 has an Ampere/Ada path too).  FA2 with
 * a paged cache runs its split-KV kernel (64-row Q tiles, wider K/V
 * tiles), and its varlen entry point splits the KV range only for decode
 * with GQA groups swapped into the query rows.
 *
 * The grid: one CTA per (sequence, head, Q tile of TILE_M rows) — for
 * decode-like launches (Sq·H/Hkv ≤ TILE_M_PACKED rows per KV head) the
 * query heads of one KV head are packed into the tile's rows (FA3's
 * pack_gqa, FlashDecoding), one CTA per (sequence, KV head); FA3 also
 * packs a prefill's GQA heads into full tiles where that fills them
 * better (should_pack_gqa; always on its Ampere/Ada path).  Each CTA
 * walks the KV blocks of tile_n keys its rows can see (causal and window
 * masks skip whole blocks) and per block, over all the tile's rows
 * (padding rows are computed too)
 *   MMA      2·rows·tile_n·(Dqk + Dv) FLOPs at the SM's matrix rate
 *            (peak × utilization × tensor_achievable_fraction);
 *   softmax  rows·tile_n scores: SOFTMAX_VEC_OPS fp32 vector instructions
 *            on the SM's FMA lanes and one exp on SFU_OPS_PER_CLK_SM
 *            special-function units;
 *   loads    tile_n·(Dqk + Dv) K/V elements at the SM's L2 port.
 * On warpgroup-MMA parts (matrix_instruction wgmma, tcgen05: FA3's
 * ping-pong of two warpgroups) the softmax overlaps the MMAs: a block
 * costs max(max(MMA, softmax) + FA3_OVERLAP_LOSS·min(MMA, softmax),
 * loads), on wgmma more than max(MMA, softmax, loads) by that loss, on
 * tcgen05 exactly that max (loss 0: FA4's asynchronous MMA); elsewhere (mma_sync, MFMA: FA2) the
 * softmax follows the MMAs, max(MMA + softmax, loads).  A CTA also pays
 * its start (block-table and Q loads: two DRAM latencies), one exposed
 * K/V load latency and its O store.  The grid's time is the busiest
 * SM's: one CTA per SM, or two 4-warp CTAs where one stage of their
 * tiles fits twice in its shared memory (FA3's sm8x kernel, FA2), whose
 * starts overlap and whose streaming shares the SM.  Uniform CTAs run
 * in whole waves; causal ones are balanced under FA3's longest-first
 * scheduler, max(total / slots, longest CTA), and list-scheduled in
 * launch order (short tiles first) under FA2.  The KV range is split
 * (FlashDecoding) into the count the library's own heuristic picks
 * (FA3's num_splits_heuristic and varlen scheduler, FA2's
 * num_splits_heuristic; at most 32 for a serving backend under CUDA
 * graphs), plus the combine kernel (its fixed time share, the fp32
 * partial outputs and LSEs through L2).  A wave's CTAs start and finish together and
 * stream K/V in between, so per wave the start and finish add to the
 * longer of the SMs' streaming and the wave's share of the K/V DRAM time.
 * The kernel is also bound by its DRAM bytes (Q, K, V, O and the block
 * table once: K/V tiles are shared through L2 by the Q tiles and heads
 * that read them; a page's tail past the sequence is not fetched).
 *
 * latency = fixed + [reshape-and-cache kernel] + max(grid, DRAM)
 *           [+ combine kernel]
 * where every kernel after the first costs BACK_TO_BACK_KERNEL_FRACTION
 * of the fixed time (gemm_tiled.h).  The backward runs the same grid over
 * the count's FLOPs (dQ, dK, dV: 2.5× the forward's MMAs with recompute),
 * the softmax work again and a dQ accumulation through L2, plus the
 * dot(dO, O) preprocessing kernel.
 *
 * Constants (kernel shapes of the libraries named, not fits):
 *   TILE_M 128 — FA2/FA3 forward Q tile (kBlockM) for head dims ≤ 128; 64
 *     above (FA2's hd 256 tile);
 *   TILE_M_PACKED 64 — FA3's decode tile when GQA heads are packed;
 *   tile_n 128 for Dqk ≤ 64, 128 (wgmma) or 64 (mma_sync) for ≤ 128,
 *     64 above (FA2 Flash_fwd_kernel_traits); FA3 on Hopper 192 × 128,
 *     128 × 128, 128 × 96, 128 × 80 by head dim (tile_size_fwd_sm90);
 *   SPLITS_MAX 128 — FlashDecoding's largest split count;
 *   SERVING_SPLITS_MAX 32 — vLLM's default flash_attn_max_num_splits_for_cuda_graph,
 *     the cap a serving backend (attrs.kv_cache_write) runs decode under;
 *   SFU_OPS_PER_CLK_SM 16 — special-function throughput of an NVIDIA SM
 *     since Volta (4 per SM sub-partition) and of a CDNA CU (4 SIMDs × 16
 *     lanes at quarter rate);
 *   SOFTMAX_VEC_OPS 4 — fp32 instructions per score: the fused scale and
 *     subtract (one FFMA), the row max, the row sum and the conversion to
 *     the MMA dtype; the accumulator's rescale adds Dv per row per block.
 * Fitted (bounded, reported in docs/kernel_models.md):
 *   ATTN_CTA_DRAM_TRIPS 8 [4, 20] — a CTA's start and finish (block table,
 *     Q and first K/V loads, pipeline barriers, the O and LSE stores) in
 *     DRAM latencies;
 *   FA3_OVERLAP_LOSS 0.75 [0, 1] — the share of the shorter of MMA and
 *     softmax that FA3's warpgroup ping-pong fails to hide on wgmma parts
 *     (a block costs that much more than max(MMA, softmax, loads)); 0 on
 *     tcgen05, whose asynchronous MMAs (FA4) leave nothing exposed;
 *   SERVING_EXTRA_KERNELS 4 [1, 6] — kernel floors (fixed time and a DRAM
 *     round trip) a serving backend's attention forward launches besides
 *     the attention kernel (reshape-and-cache, scheduler metadata, the
 *     output copy), charged with attrs.kv_cache_write. */
#include <math.h>
#include <string.h>
#include "../core/internal.h"
#include "hw_internal.h"
#include "gemm_tiled.h"
#include "models.h"
#include "stream.h"

#define TILE_M 128.0
#define TILE_M_PACKED 64.0
#define SPLITS_MAX 128
#define SERVING_SPLITS_MAX 32
#define SFU_OPS_PER_CLK_SM 16.0
#define SOFTMAX_VEC_OPS 4.0
/* Fitted on h100_sxm decode and prefill of data/kernels (aiconfigurator),
 * scored on a100_80gb_sxm, h200_sxm and l40s (docs/kernel_models.md). */
#ifndef ATTN_CTA_DRAM_TRIPS   /* -D overrides: tools/refit_kernel_constants.py */
#define ATTN_CTA_DRAM_TRIPS 8.0
#endif
#ifndef FA3_OVERLAP_LOSS
#define FA3_OVERLAP_LOSS 0.75
#endif
#ifndef SERVING_EXTRA_KERNELS
#define SERVING_EXTRA_KERNELS 4.0
#endif


typedef struct attn_k {
    double b, h, hkv, dqk, dv;
    int causal;
    double wl, wr;            /* window; < 0 unbounded */
    double page;
    const int64_t *lq, *lkv;  /* per-sequence lengths, or NULL */
    size_t nseq;
    double sq, skv;           /* uniform lengths */
    double q_bytes, kv_bytes; /* per element */
} attn_k;

/* The dims of a validated attention op (ops/attention.c's layouts). */
static int attn_read(const opm_op *op, attn_k *a)
{
    memset(a, 0, sizeof *a);
    const opm_tensor *q = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), *k = opm_op_find_tensor(op, OPM_ROLE_INPUT, 1),
                     *v = opm_op_find_tensor(op, OPM_ROLE_INPUT, 2);
    if (!q || !k || !v) return 0;
    a->q_bytes = opm_dtype_bytes(q->dtype);
    a->kv_bytes = opm_dtype_bytes(k->dtype);
    a->dqk = (double)q->shape[q->rank - 1];
    a->dv = (double)v->shape[v->rank - 1];
    const int64_t *l;
    size_t n;
    if (q->rank == 3) {
        a->h = (double)q->shape[1];
        a->hkv = (double)k->shape[1];
        if ((n = opm_op_get_ints(op, "seq_lens", &l))) a->lq = a->lkv = l, a->nseq = n;
        if ((n = opm_op_get_ints(op, "seq_lens_q", &l))) a->lq = l, a->nseq = n;
        if ((n = opm_op_get_ints(op, "seq_lens_kv", &l))) a->lkv = l, a->nseq = n;
        if (!a->nseq) return 0;
        a->b = (double)a->nseq;
        a->sq = (double)q->shape[0] / a->b;
        a->skv = (double)k->shape[0] / a->b;
    } else if (q->rank == 4) {
        int heads = (int)opm_op_get_int(op, "heads", 0);
        int bhsd = !strcmp(q->layout, "bhsd") ||
                   (heads && q->shape[1] == heads && q->shape[2] != heads && strcmp(q->layout, "bshd"));
        int kbhsd = !strcmp(k->layout, "bhsd") || (!k->layout[0] && bhsd);
        a->b = (double)q->shape[0];
        a->h = (double)q->shape[bhsd ? 1 : 2];
        a->sq = (double)q->shape[bhsd ? 2 : 1];
        a->hkv = (double)k->shape[kbhsd ? 1 : 2];
        a->skv = (double)k->shape[kbhsd ? 2 : 1];
    } else {
        return 0;
    }
    a->causal = opm_op_get_bool(op, "causal", 0);
    a->wl = a->wr = -1;
    int64_t sw = opm_op_get_int(op, "sliding_window", 0);
    if (sw > 0) a->wl = a->wr = (double)(sw - 1);
    if (opm_op_has(op, "window_left")) a->wl = (double)opm_op_get_int(op, "window_left", -1);
    if (opm_op_has(op, "window_right")) a->wr = (double)opm_op_get_int(op, "window_right", -1);
    if (a->causal) a->wr = 0;
    a->page = (double)opm_op_get_int(op, "page_size", 0);
    return a->h > 0 && a->hkv > 0;
}

typedef struct attn_rates {
    double mma_flops_s, vec_ops_s, sfu_ops_s, port_bytes_s;
    double lat_dram, lat_l2;
    int overlap;                 /* softmax overlaps the MMAs (FA3) */
    double overlap_loss;         /* share of the shorter of MMA and softmax left exposed */
    double tile_n;
} attn_rates;

/* floor(x / d) and ceil(x / d) for a whole x ≥ 0 and a whole divisor d,
 * bit for bit what the double division and floor/ceil give (a quotient
 * of whole numbers this small never rounds across a whole number), by a
 * multiply where x < 2^24 and d ≤ 256: x·m / 2^32 with m = ⌊2^32/d⌋ + 1
 * exceeds x/d by under 2^-8 ≤ 1/d, so its floor is x/d's.  The grid
 * walks divide per Q tile, and a division costs several multiplies. */
#define EXACT_DIV_X_MAX 16777216.0
typedef struct exact_div {
    double d;
    uint64_t m; /* 0: divide */
} exact_div;

static exact_div exact_div_of(double d)
{
    exact_div e = {d, 0};
    /* ⌊2^32/d⌋ by the double division (exact here, as above): a 64-bit
     * integer division costs several times more.  d = 1 never divides. */
    if (d > 1 && d <= 256 && d == floor(d)) e.m = (uint64_t)(4294967296.0 / d) + 1;
    return e;
}

static inline double floor_div(double x, const exact_div *e)
{
    if (e->m && x >= 0 && x < EXACT_DIV_X_MAX) {
        uint64_t xi = (uint64_t)x;
        if ((double)xi == x) return (double)((xi * e->m) >> 32);
    }
    return floor(x / e->d);
}

static inline double ceil_div(double x, const exact_div *e)
{
    if (e->m && x >= 0 && x + e->d < EXACT_DIV_X_MAX) {
        uint64_t xi = (uint64_t)x;
        if ((double)xi == x) return (double)(((xi + (uint64_t)e->d - 1) * e->m) >> 32);
    }
    return ceil(x / e->d);
}

/* KV blocks a Q tile of query positions [i0, i1] sees in a sequence of sq
 * queries and sk keys (bottom-right aligned masks); tn divides by tile_n.
 * masked_blocks is the same count in integers, for walk_masked_whole. */
static double tile_blocks(const attn_k *a, double i0, double i1, double sq, double sk, const exact_div *tn)
{
    double off = sk - sq;
    double lo = a->wl >= 0 ? maxd(0, i0 + off - a->wl) : 0;
    double hi = a->wr >= 0 ? mind(sk - 1, i1 + off + a->wr) : sk - 1;
    if (hi < lo) return 0;
    return floor_div(hi, tn) - floor_div(lo, tn) + 1;
}

/* A grid's sums while it is walked.  grid_walk keeps them in a local the
 * compiler holds in registers (behind a pointer they would go through
 * memory on every tile) and hands them out once, at the end. */
typedef struct grid_acc {
    double ctas, total_s, blocks, max_s;
    double fixed_total_s, fixed_first_s; /* the CTAs' start and finish: latency, no streaming */
    double first_s;                      /* the first CTA's time; < 0 before the first tile */
    int uniform;
} grid_acc;

/* One KV block of `rows` query rows: its MMAs, its softmax (the FMA and
 * special-function pipes issue side by side) and its K/V loads. */
static void block_times(const attn_k *a, const attn_rates *r, double rows, double *t_mma, double *t_soft,
                        double *t_load)
{
    double scores = rows * r->tile_n;
    *t_mma = 2 * scores * (a->dqk + a->dv) / r->mma_flops_s;
    *t_soft = maxd((scores * SOFTMAX_VEC_OPS + rows * a->dv) / r->vec_ops_s, scores / r->sfu_ops_s);
    *t_load = r->tile_n * (a->dqk + a->dv) * a->kv_bytes / r->port_bytes_s;
}

/* One KV block's time in a CTA.  The MMAs and the softmax run on the
 * whole tile of tile_rows rows, the padding rows of a partial tile too
 * (FlashAttention's warps own fixed row slices and do not skip empty
 * ones), so every CTA of a grid shares it. */
static double block_time(const attn_k *a, const attn_rates *r, double tile_rows)
{
    double t_mma, t_soft, t_load;
    block_times(a, r, tile_rows, &t_mma, &t_soft, &t_load);
    return r->overlap ? maxd(maxd(t_mma, t_soft) + r->overlap_loss * mind(t_mma, t_soft), t_load)
                      : maxd(t_mma + t_soft, t_load);
}

/* A CTA's start and finish: only the Q load and the O store see its
 * `rows` real rows. */
static double cta_fixed(const attn_k *a, const attn_rates *r, double rows)
{
    double q_load = rows * a->dqk * a->q_bytes / r->port_bytes_s;
    double o_store = rows * a->dv * a->q_bytes / r->port_bytes_s;
    return ATTN_CTA_DRAM_TRIPS * r->lat_dram + q_load + o_store;
}

/* A CTA's time over its share of nb KV blocks with the KV range split
 * `splits` ways. */
static inline double cta_time(double fx, double t_blk, double nb, const exact_div *splits)
{
    double nbs = splits->d == 1 ? nb : ceil_div(nb, splits);
    if (nbs <= 0) nbs = 0;
    return fx + nbs * t_blk;
}

/* One Q tile's CTAs (n of them, ct seconds each) into the grid. */
static inline void grid_add(grid_acc *g, double n, double ct, double fx, double blocks)
{
    g->ctas += n;
    g->total_s += n * ct;
    g->fixed_total_s += n * fx;
    g->blocks += blocks;
    if (ct > g->max_s) g->max_s = ct;
    if (g->first_s < 0) g->first_s = ct, g->fixed_first_s = fx;
    else if (g->uniform && fabs(ct - g->first_s) > 1e-3 * g->first_s) g->uniform = 0;
}

/* The rest full tiles of an unmasked sequence, all like the one before. */
static inline void grid_add_rest(grid_acc *g, double rest, double n, double ct, double fx, double heads, double mult,
                                 double nb)
{
    g->ctas += rest * n;
    g->total_s += rest * n * ct;
    g->fixed_total_s += rest * n * fx;
    g->blocks += rest * heads * mult * nb;
}

/* The Q tiles of a walk in launch order, kept for FA2's list schedule
 * (grid_list_schedule) without walking the sequences again.  A record
 * with rest > 0 stands for the rest full tiles of an unmasked sequence,
 * all like the one before it. */
#define WALK_TILES_MAX 512
typedef struct walk_tile {
    double nb, fx, rest;
} walk_tile;
typedef struct walk_tiles {
    walk_tile t[WALK_TILES_MAX];
    size_t n;
    int overflow;
    double t_blk, heads, mult;
} walk_tiles;

static inline void walk_keep(walk_tiles *w, double nb, double fx, double rest)
{
    if (!w) return;
    if (w->n == WALK_TILES_MAX) {
        w->overflow = 1;
        return;
    }
    w->t[w->n++] = (walk_tile){nb, fx, rest};
}

/* Whole numbers up to this are exact in a double, and so is every sum
 * of them that stays below it. */
#define EXACT_INT_MAX 4503599627370496.0 /* 2^52 */

/* tile_blocks in integers for the Q tile whose first row sits at key
 * position i0 (its position plus sk − sq), tmi rows tall: m is tile_n's
 * exact_div multiplier, hi_max = sk − 1. */
static inline int64_t masked_blocks(int64_t i0, int64_t tmi, int lo_on, int64_t wl, int hi_on, int64_t wr,
                                    int64_t hi_max, uint64_t m)
{
    int64_t lo = lo_on && i0 - wl > 0 ? i0 - wl : 0;
    int64_t hi = hi_on && i0 + tmi - 1 + wr < hi_max ? i0 + tmi - 1 + wr : hi_max;
    if (hi < lo) return 0;
    return (int64_t)((((uint64_t)hi * m) >> 32) - (((uint64_t)lo * m) >> 32)) + 1;
}

/* grid_walk's loop over the Q tiles of a masked sequence whose
 * positions, lengths and window are whole numbers, at one split, in
 * integers: sq, sk ≤ EXACT_DIV_X_MAX, so every position and bound the
 * double loop forms is a whole number it holds exactly (a window past
 * 2·EXACT_DIV_X_MAX bounds nothing either way, so it is clamped there),
 * and tile_blocks's count (floor_div multiplies there too) is the same
 * whole number.  Every tile but the last is tm rows tall with fixed time
 * fx; the last, rows_last tall with fx_last, is added by grid_add as the
 * general loop adds it.  Over the others the time sums (total, fixed,
 * the longest CTA, uniformity) are grid_add's, tile by tile in the same
 * order; their CTA and block counts are sums of whole numbers below
 * EXACT_INT_MAX, exact in any order, so they are added once.  Every
 * figure is bit-identical to the general loop's.  Returns 0, touching
 * nothing, where those bounds do not hold (the caller then runs the
 * general loop). */
static int walk_masked_whole(const attn_k *a, grid_acc *gsp, walk_tiles *w, double tiles, double tm, double rows_last,
                             double sq, double sk, const exact_div *tn, double n, double hm, double t_blk, double fx,
                             double fx_last)
{
    int64_t nt = (int64_t)tiles, last = nt - 1;
    /* Only a walk that keeps its tiles (the one-split walk); fx, t_blk ≥
     * 0, so no CTA time is negative and grid_add sets `first_s` once, at
     * the grid's first tile (never the last: tiles > 1). */
    if (!w || !(fx >= 0 && t_blk >= 0) || !(gsp->ctas + (double)last * n <= EXACT_INT_MAX) ||
        !(gsp->blocks + hm * (sk + 1) * (double)last <= EXACT_INT_MAX))
        return 0;
    int64_t tmi = (int64_t)tm, off = (int64_t)sk - (int64_t)sq, hi_max = (int64_t)sk - 1;
    int lo_on = a->wl >= 0, hi_on = a->wr >= 0;
    int64_t wl = lo_on ? (int64_t)mind(a->wl, 2 * EXACT_DIV_X_MAX) : 0;
    int64_t wr = hi_on ? (int64_t)mind(a->wr, 2 * EXACT_DIV_X_MAX) : 0;
    uint64_t m = tn->m;
    grid_acc gs = *gsp;
    int64_t t = 0;
    if (gs.first_s < 0) {
        /* The grid's first tile: grid_add sets `first_s` from it. */
        int64_t nb_i = masked_blocks(off, tmi, lo_on, wl, hi_on, wr, hi_max, m);
        double nb = (double)nb_i;
        grid_add(&gs, n, fx + nb * t_blk, fx, hm * nb);
        walk_keep(w, nb, fx, 0);
        t = 1;
    }
    /* Tiles past what w holds overflow it (grid_list_schedule then reads
     * none of the kept tiles): they go to a sink. */
    walk_tile sink;
    int room = last - t <= (int64_t)(WALK_TILES_MAX - w->n);
    walk_tile *kept_at = room ? w->t + w->n : &sink;
    size_t kept_step = room ? 1 : 0;
    double total = gs.total_s, fixed = gs.fixed_total_s, max_s = gs.max_s, first = gs.first_s, thr = 1e-3 * first;
    int uniform = gs.uniform;
    double c = n * fx;
    int64_t nb_sum = 0, t0 = t;
    for (; t < last; t++) {
        int64_t nb_i = masked_blocks(t * tmi + off, tmi, lo_on, wl, hi_on, wr, hi_max, m);
        double nb = (double)nb_i;
        double ct = fx + nb * t_blk;
        total += n * ct;
        fixed += c;
        nb_sum += nb_i;
        if (ct > max_s) max_s = ct;
        if (uniform && fabs(ct - first) > thr) uniform = 0;
        *kept_at = (walk_tile){nb, fx, 0};
        kept_at += kept_step;
    }
    gs.total_s = total;
    gs.fixed_total_s = fixed;
    gs.max_s = max_s;
    gs.uniform = uniform;
    gs.ctas += (double)(last - t0) * n;
    gs.blocks += hm * (double)nb_sum;
    if (room) w->n += (size_t)(last - t0);
    else w->overflow = 1;
    /* The last tile, rows_last tall, with its own fixed time. */
    double nb = (double)masked_blocks(last * tmi + off, (int64_t)rows_last, lo_on, wl, hi_on, wr, hi_max, m);
    grid_add(&gs, n, fx_last + nb * t_blk, fx_last, hm * nb);
    walk_keep(w, nb, fx_last, 0);
    *gsp = gs;
    return 1;
}

/* Walks the grid: per sequence, per Q tile; keeps the tiles in w when
 * w is not NULL. */
static void grid_walk(const attn_k *a, const attn_rates *r, int packed, double tm, double splits, grid_acc *g,
                      walk_tiles *w)
{
    grid_acc gs = {.first_s = -1, .uniform = 1};
    double g_ratio = a->h / a->hkv;
    double heads = packed ? a->hkv : a->h;
    size_t nseq = a->lq || a->lkv ? a->nseq : 1;
    double mult = a->lq || a->lkv ? 1 : a->b;
    double t_blk = block_time(a, r, tm), fx_full = cta_fixed(a, r, tm);
    double n = heads * mult * splits;
    int masked = a->causal || a->wl >= 0 || a->wr >= 0;
    exact_div tn = exact_div_of(r->tile_n), sd = exact_div_of(splits);
    if (w) w->n = 0, w->overflow = 0, w->t_blk = t_blk, w->heads = heads, w->mult = mult;
    for (size_t s = 0; s < nseq; s++) {
        double sq = a->lq ? (double)a->lq[s] : a->sq, sk = a->lkv ? (double)a->lkv[s] : a->skv;
        double rows_total = packed ? sq * g_ratio : sq;
        double tiles = ceil(rows_total / tm);
        /* Every tile but the last has tm rows (tiles = ⌈rows_total/tm⌉). */
        double rows_last = mind(tm, rows_total - (tiles - 1) * tm);
        double fx_last = rows_last == tm ? fx_full : cta_fixed(a, r, rows_last);
        int whole = !packed && tn.m && sq == floor(sq) && sk == floor(sk) && sk <= EXACT_DIV_X_MAX &&
                    sq <= EXACT_DIV_X_MAX && tm == floor(tm) && a->wl == floor(a->wl) && a->wr == floor(a->wr);
        if (whole && masked && sd.d == 1 && tiles > 1 &&
            walk_masked_whole(a, &gs, w, tiles, tm, rows_last, sq, sk, &tn, n, heads * mult, t_blk, fx_full, fx_last))
            continue;
        for (double t = 0; t < tiles; t++) {
            double rows = mind(tm, rows_total - t * tm);
            double p0 = packed ? floor(t * tm / g_ratio) : t * tm;
            double p1 = packed ? floor((t * tm + rows - 1) / g_ratio) : t * tm + rows - 1;
            double nb = tile_blocks(a, p0, p1, sq, sk, &tn);
            double fx = t == tiles - 1 ? fx_last : fx_full;
            double ct = cta_time(fx, t_blk, nb, &sd);
            grid_add(&gs, n, ct, fx, heads * mult * nb);
            walk_keep(w, nb, fx, 0);
            if (!masked && tiles > 2 && t == 0) {
                /* Unmasked: every full tile alike; the last may be short. */
                double rest = tiles - 2;
                grid_add_rest(&gs, rest, n, ct, fx, heads, mult, nb);
                walk_keep(w, nb, fx, rest);
                t = tiles - 2;
            }
        }
    }
    *g = gs;
}

/* FA3's pack_gqa choice for a prefill (should_pack_gqa): the GQA heads
 * of a KV head share its Q tiles when that fills the tiles better, i.e.
 * when the unpacked tiles' row efficiency is under 0.9 of the packed
 * ones'. */
static int pack_gqa_pays(double sq, double g, double tm, int fa3, int wgmma)
{
    if (!fa3) return 0;
    /* FA3's Ampere/Ada path always packs (get_pack_gqa: arch < 90). */
    if (!wgmma) return 1;
    double eff = sq / (ceil(sq / tm) * tm), eff_p = sq * g / (ceil(sq * g / tm) * tm);
    return eff < 0.9 * eff_p;
}

/* The SMs' own streaming time of a grid (its CTAs less their start and
 * finish), to compare with the K/V stream's DRAM time. */
static double grid_stream(const grid_acc *g, double slots)
{
    if (g->ctas <= 0) return 0;
    if (g->uniform) return ceil(g->ctas / slots) * (g->max_s - g->fixed_first_s);
    return (g->total_s - g->fixed_total_s) / slots;
}

/* The grid's time with its K/V stream's DRAM time t_dram (at the reached rate):
 * the CTAs of a wave start and finish together, and DRAM serves their
 * streams only between, so per wave the start and finish add to the
 * longer of the SMs' streaming and the wave's share of the DRAM time. */
static double grid_time(const grid_acc *g, double slots, double per_sm, double t_dram)
{
    if (g->ctas <= 0) return 0;
    /* per_sm CTAs share an SM: their starts and finishes overlap, their
     * streaming (the SM's MMA, softmax and load pipes) does not. */
    if (g->uniform) {
        double w = ceil(g->ctas / (slots * per_sm));
        return w * g->fixed_first_s + maxd(ceil(g->ctas / slots) * (g->max_s - g->fixed_first_s), t_dram);
    }
    return maxd(g->fixed_total_s / (slots * per_sm) + maxd((g->total_s - g->fixed_total_s) / slots, t_dram), g->max_s);
}

/* FA2 launches its CTAs in grid order, Q tile fastest (m_block =
 * blockIdx.x, then the sequence, then the head), and the block
 * scheduler starts each on the first SM to free up: a causal grid's
 * short first tiles run first and its longest tiles last, so a grid of
 * few waves ends in a tail that longest-first ordering (FA3's
 * scheduler) avoids.  The makespan of that list schedule for a kept
 * walk, whose tiles in order repeat per head, sequence and split: the
 * last repetitions, LIST_SCHED_WAVES waves of CTAs at least, are
 * scheduled CTA by CTA from slots all free together, after the others'
 * CTA-seconds spread evenly over the slots (the tail depends on the last
 * waves alone: within 1% of the whole schedule on FA2 causal grids of
 * 256 to 16,384 CTAs).  0 where the walk was not kept whole. */
#define LIST_SCHED_WAVES 2
#define LIST_SCHED_SLOTS_MAX 512
#define LIST_SCHED_CTAS_MAX 2048
static double grid_list_schedule(const walk_tiles *w, double splits, double slots)
{
    if (w->overflow || slots > LIST_SCHED_SLOTS_MAX || slots < 1) return 0;
    exact_div sd = exact_div_of(splits);
    /* Each kept tile's CTA time, once: the simulation below places it sim times. */
    double ctv[WALK_TILES_MAX];
    double per = 0, work = 0;
    for (size_t i = 0; i < w->n; i++) {
        ctv[i] = cta_time(w->t[i].fx, w->t_blk, w->t[i].nb, &sd);
        per += 1 + w->t[i].rest;
        work += (1 + w->t[i].rest) * ctv[i];
    }
    double reps = w->heads * w->mult * splits;
    double sim = mind(reps, ceil(LIST_SCHED_WAVES * slots / per));
    if (per <= 0 || sim * per > LIST_SCHED_CTAS_MAX) return 0;
    double hp[LIST_SCHED_SLOTS_MAX];
    size_t n = (size_t)slots;
    memset(hp, 0, n * sizeof hp[0]);
    for (double r = 0; r < sim; r++) {
        for (size_t i = 0; i < w->n; i++) {
            double ct = ctv[i];
            for (double k = 0; k <= w->t[i].rest; k++) {
                /* The earliest free slot (the heap's root) takes it. */
                double v = hp[0] + ct;
                size_t j = 0;
                for (;;) {
                    size_t c = 2 * j + 1;
                    if (c >= n) break;
                    if (c + 1 < n && hp[c + 1] < hp[c]) c++;
                    if (hp[c] >= v) break;
                    hp[j] = hp[c];
                    j = c;
                }
                hp[j] = v;
            }
        }
    }
    double m = 0;
    for (size_t j = 0; j < n; j++) m = maxd(m, hp[j]);
    return (reps - sim) * work / slots + m;
}

/* The search both libraries' num_splits_heuristic end in: the fewest
 * splits, up to min(cap, SMs, blocks), whose wave efficiency (ctas · s
 * CTAs over whole waves of sms) is within 0.85 of the best; with
 * eligible_only (FA2), skipping counts that give the same blocks per
 * split as one fewer. */
static inline int splits_by_wave_efficiency(double ctas, double sms, double nblk, int cap, int eligible_only)
{
    int smax = (int)mind(mind(cap, sms), nblk);
    /* In single precision, as the libraries compute it; no efficiency
     * exceeds a whole last wave's 1.  Blocks per split carry over from
     * one count to the next (each is computed once per pass). */
    float best = 0, t = (float)ctas, n = (float)sms;
    double per = 0;
    for (int s = 1; s <= smax && best < 1; s++) {
        if (eligible_only) {
            double prev = per;
            per = ceil(nblk / s);
            if (s > 1 && per == prev) continue;
        }
        float w = t * (float)s / n;
        if (w / ceilf(w) > best) best = w / ceilf(w);
    }
    per = 0;
    for (int s = 1; s <= smax; s++) {
        if (eligible_only) {
            double prev = per;
            per = ceil(nblk / s);
            if (s > 1 && per == prev) continue;
        }
        float w = t * (float)s / n;
        if (w / ceilf(w) >= 0.85 * best) return s;
    }
    return 1;
}

/* FA2's split count (flash_api.cpp num_splits_heuristic, called by
 * set_params_splitkv with twice the SMs: two 128-thread CTAs per SM),
 * over the longest sequence's KV blocks and the grid counted in 64-row Q
 * blocks (the split kernel's kBlockM): none when the grid nearly fills
 * the SMs, else the wave-efficiency search over eligible counts. */
static int fa2_num_splits(const attn_k *a, double sms, double tile_n, int packed, int cap)
{
    double nblk = 0, mb = 0;
    size_t nseq = a->lkv || a->lq ? a->nseq : 1;
    for (size_t i = 0; i < nseq; i++) {
        nblk = maxd(nblk, ceil((a->lkv ? (double)a->lkv[i] : a->skv) / tile_n));
        mb = maxd(mb, ceil((a->lq ? (double)a->lq[i] : a->sq) * (packed ? a->h / a->hkv : 1) / 64));
    }
    double ctas = a->b * (packed ? a->hkv : a->h) * mb;
    if (ctas >= 0.8 * (2 * sms)) return 1;
    return splits_by_wave_efficiency(ctas, 2 * sms, nblk, cap, 1);
}

/* CTAs resident per SM.  FA3's Ampere/Ada kernel declares two blocks
 * per SM for its 4-warp CTAs (MinBlocksPerMultiprocessor: 255 registers
 * a thread fit twice) and FA2's heuristics count on two 128-thread CTAs
 * per SM (set_params_splitkv); both keep one stage of the Q, K and V
 * tiles in shared memory, so two fit only where the SM holds twice that.
 * FA3's warp-specialised Hopper CTAs and 8-warp CTAs: one. */
static double attn_ctas_per_sm(const attn_k *a, int warp_specialised, double warps, double tm, double tn,
                               double smem_sm)
{
    if (warp_specialised || warps != 4) return 1;
    double smem = tm * a->dqk * a->q_bytes + tn * (a->dqk + a->dv) * a->kv_bytes;
    return smem > 0 && 2 * smem <= smem_sm ? 2 : 1;
}

/* Warps of FA3's Ampere/Ada CTA (tile_size_fwd_sm8x): 4 up to head dim
 * 96 and at 128 on sm80 unsplit, 8 otherwise. */
static double fa3_sm8x_warps(double d, int small_smem, int varlen_split)
{
    return d <= 96 || (d <= 128 && !small_smem && !varlen_split) ? 4 : 8;
}

/* FA3's kBlockN on its Ampere/Ada path (tile_size_fwd_sm8x) when the
 * KV range is split in a varlen call (varlen_and_split): 8 warps and a
 * longer K/V tile at head dim 128, a shorter one elsewhere.  small_smem:
 * the sm86/sm89 parts (100 KB of shared memory per SM against sm80's
 * 164 KB), which the library tells apart by arch. */
static double fa3_sm8x_split_tile_n(double d, int small_smem, int local)
{
    if (d <= 64) return 80;
    if (d <= 96) return 48;
    if (d <= 128) return local ? 96 : 112;
    if (d <= 192) return 64;
    return small_smem ? 48 : 64;
}

/* FA3's split count (hopper/heuristics.h num_splits_heuristic): no split
 * when the grid's Q tiles nearly fill the SMs (unless one KV head
 * overflows a 50 MB L2 and enough Q tiles re-read it) or the KV range
 * has at most 4 blocks; else the fewest splits whose wave efficiency is
 * within 0.85 of the best up to min(cap, SMs, blocks). */
static int fa3_splits_heuristic(double mblocks_total, double sms, double nblk, double mblocks, double kv_head_bytes,
                                int causal_or_local, int cap)
{
    if (mblocks_total >= 0.8 * sms) {
        double l2 = 50.0 * 1024 * 1024;
        if (kv_head_bytes > l2 && mblocks >= 2 * sms && !causal_or_local) return (int)mind(ceil(kv_head_bytes / l2), cap);
        return 1;
    }
    if (nblk <= 4) return 1;
    return splits_by_wave_efficiency(mblocks_total, sms, nblk, cap, 0);
}

/* FA3's varlen split count (flash_prepare_scheduler.cu): with at most
 * 992 sequences the scheduler kernel gives each sequence
 * ceil(blocks / blocks_per_sm) splits, at most the static count, where
 * blocks_per_sm = ceil(1.1 × every sequence's Q tiles × KV blocks × heads
 * / SMs); the static count is num_splits_heuristic's for one sequence. */
static int fa3_num_splits(const attn_k *a, double sms, double tile_m, double tile_n, int varlen, int cap)
{
    /* FA3 packs the GQA heads whenever it splits. */
    double g = a->h / a->hkv, heads = a->hkv;
    size_t nseq = a->lq || a->lkv ? a->nseq : 1;
    double mult = a->lq || a->lkv ? 1 : a->b;
    double total = 0, nblk_max = 0, mb_max = 0, sk_max = 0;
    for (size_t i = 0; i < nseq; i++) {
        double sq = a->lq ? (double)a->lq[i] : a->sq, sk = a->lkv ? (double)a->lkv[i] : a->skv;
        /* A window bounds the keys a sequence loads. */
        if (a->wl >= 0 && a->wr >= 0) sk = mind(sk, a->wl + a->wr + 1 + tile_m);
        double mb = ceil(sq * g / tile_m), nb = ceil(sk / tile_n);
        total += mult * mb * nb;
        nblk_max = maxd(nblk_max, nb);
        mb_max = maxd(mb_max, mb);
        sk_max = maxd(sk_max, a->lkv ? (double)a->lkv[i] : a->skv);
    }
    int dynamic = varlen && a->b <= 992;
    double dyn = 1;
    if (dynamic) {
        double bps = ceil(total * 1.1 * heads / sms);
        if (!(bps >= 1)) return 1; /* no KV block to split */
        /* The longest sequence's count: it sets the grid's longest CTA. */
        dyn = ceil(nblk_max / bps);
        if (dyn <= 1) return 1; /* whatever the static count */
    }
    int local = a->wl >= 0 || (a->wr >= 0 && !a->causal);
    int st = fa3_splits_heuristic((dynamic ? 1 : a->b) * a->hkv * mb_max, sms, nblk_max, mb_max,
                                  sk_max * (a->dqk + a->dv) * a->kv_bytes, a->causal || local, cap);
    return dynamic ? (int)mind(dyn, st) : st;
}

int opm_attention_kernel_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, const char *model,
                                 opm_error *err)
{
    attn_k a;
    if (!attn_read(op, &a)) return -1;
    opm_counts c;
    int rc = opm_op_count(op, &c, err);
    if (rc) return rc;
    gemm_hw h;
    if ((rc = opm_gemm_hw(hw, c.compute_dtype, &h, err))) return rc;
    if (h.mi == GEMM_MI_MXU || h.mi == GEMM_MI_MME) return -1;
    int bwd = opm_op_phase(op) == OPM_PHASE_TRAIN_BWD;

    attn_rates r;
    r.mma_flops_s = h.flops_per_s_sm;
    double lanes = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32) * hw->util_vector / (2 * h.num_sms * h.clock_hz);
    if (!(lanes > 0)) lanes = 64;
    r.vec_ops_s = lanes * h.clock_hz;
    r.sfu_ops_s = SFU_OPS_PER_CLK_SM * h.clock_hz;
    r.port_bytes_s = h.l2_port_sm;
    r.lat_dram = h.lat_dram_s;
    r.lat_l2 = h.lat_l2_s;
    /* The library: FA3 where the MMAs are warpgroup-wide (its ping-pong
     * needs them), FA2 elsewhere, unless attrs.attention_kernel says. */
    int wgmma = h.mi == GEMM_MI_WGMMA || h.mi == GEMM_MI_TCGEN05;
    const char *lib = opm_op_get_string(op, "attention_kernel", NULL);
    int fa3 = lib ? !strcmp(lib, "flash_attention_3") : wgmma;
    r.overlap = fa3 && wgmma;
    /* tcgen05 MMAs are asynchronous: one thread issues them and they
     * accumulate in tensor memory, so the softmax warps run beside them
     * without the register hand-off that FA3's warpgroup ping-pong loses
     * on Hopper (FlashAttention-4, Zadouri et al. 2026: "fully
     * asynchronous MMA operations"; CUTLASS tcgen05 documentation). */
    r.overlap_loss = h.mi == GEMM_MI_TCGEN05 ? 0 : FA3_OVERLAP_LOSS;
    r.tile_n = a.dqk <= 64 ? 128 : a.dqk <= 128 ? (r.overlap ? 128 : 64) : 64;
    double tm = a.dqk > 128 ? 64 : TILE_M;
    if (r.overlap) {
        /* FA3's Hopper tiles (tile_size_fwd_sm90, causal or paged): 192 × 128
         * up to head dim 64, 128 × 128 to 128, 128 × 96 to 192, 128 × 80
         * above. */
        tm = a.dqk <= 64 ? 192 : 128;
        r.tile_n = a.dqk <= 128 ? 128 : a.dqk <= 192 ? 96 : 80;
    }
    if (!fa3 && a.page > 0) {
        /* FA2 reads a paged KV cache only in its split-KV kernel
         * (run_mha_fwd_splitkv_dispatch): kBlockM 64, kBlockN 256, 128
         * or 64 by head dim, prefill too. */
        tm = 64;
        r.tile_n = a.dqk <= 64 ? 256 : a.dqk <= 128 ? 128 : 64;
    }
    /* Shared memory of a CTA: the Q tile and two stages of K and V. */
    double smem = (tm * a.dqk * a.q_bytes + 2 * r.tile_n * (a.dqk + a.dv) * a.kv_bytes);
    double slots = h.num_sms;
    int small_smem = h.smem_per_sm < 131072;
    double per_sm = attn_ctas_per_sm(&a, r.overlap, fa3 ? fa3_sm8x_warps(a.dqk, small_smem, 0) : 4, tm, r.tile_n,
                                     h.smem_per_sm);

    /* Decode-like: few query rows per KV head; pack the GQA heads. */
    double rows_per_kv = a.sq * a.h / a.hkv;
    int packed = !bwd && rows_per_kv <= TILE_M_PACKED;
    /* FA2 packs only a one-query decode (seqlenq_ngroups_swapped). */
    if (!fa3 && a.sq > 1) packed = 0;
    /* FA3 on Hopper has a one-warpgroup decode tile; its Ampere/Ada path
     * (tile_size_fwd_sm8x) and FA2's split-KV kernel keep their Q tile. */
    double ptm = packed ? (fa3 && !wgmma ? TILE_M : TILE_M_PACKED) : tm;
    if (!packed && !bwd && a.h > a.hkv && pack_gqa_pays(a.sq, a.h / a.hkv, tm, fa3, wgmma)) {
        packed = 1;
        ptm = tm;
    }
    double kern = BACK_TO_BACK_KERNEL_FRACTION * h.fixed_s;
    int serving = opm_op_get_bool(op, "kv_cache_write", 0);

    double rd = (double)c.read_bytes, wr = (double)c.write_bytes;
    /* The counts read whole KV pages; FlashAttention's K/V tile loads are
     * predicated on the sequence length, so a page's unused tail is never
     * fetched. */
    if (a.page > 0 && !bwd) {
        double tail = 0;
        size_t nseq = a.lkv ? a.nseq : 1;
        for (size_t i = 0; i < nseq; i++) {
            double sk = a.lkv ? (double)a.lkv[i] : a.skv;
            tail += ceil(sk / a.page) * a.page - sk;
        }
        if (!a.lkv) tail *= a.b;
        rd = maxd(0, rd - tail * a.hkv * (a.dqk + a.dv) * a.kv_bytes);
    }
    /* Q, K and V left in L2 (a benchmark replaying the same cache) are
     * read from it when they fit the usable L2 (stream.c's rule).  All or
     * nothing: a replayed cache larger than the usable L2 evicts itself
     * before it is read again (the measured decode rows show no partial
     * reuse, unlike stream.c's single tensors).  The footprint is the
     * op's every byte, the reshape-and-cache kernel's too. */
    const char *warm = opm_op_get_string(op, "l2_warm", "none");
    double f_in = (warm[0] == 'i' || warm[0] == 'a') && rd + wr <= h.l2_share ? 1 : 0;
    double t_cache = 0;
    if (!bwd && serving) {
        /* The reshape-and-cache kernel before the attention kernel: its
         * bytes are in the counts (the new tokens' K and V, twice). */
        double tq = a.lq ? 0 : a.b * a.sq;
        if (a.lq) for (size_t i = 0; i < a.nseq; i++) tq += (double)a.lq[i];
        double nkv = tq * a.hkv * (a.dqk + a.dv) * a.kv_bytes;
        /* It and the scheduler kernel before the attention kernel (FA3's
         * prepare_varlen_num_blocks, FlashInfer's plan) each cost a
         * kernel floor: the fixed time and a DRAM round trip.  FA2 has no
         * scheduler kernel (its grid is fixed at launch). */
        t_cache = (SERVING_EXTRA_KERNELS - (fa3 ? 0 : 1)) * (h.fixed_s + h.lat_dram_s) +
                  (f_in ? (2 * nkv + tq * 8) / h.l2_bw : (nkv + tq * 8) / h.hbm_bw + nkv / h.hbm_write_bw);
        rd -= nkv + tq * 8;
        wr -= nkv;
    }
    double t_dram = maxd((rd + wr) * f_in / h.l2_bw, (1 - f_in) * (rd / h.hbm_bw + wr / h.hbm_write_bw));
    /* The K/V stream's share of the DRAM time: what the SMs wait on while
     * they walk the KV blocks (Q and O move at the CTAs' start and finish). */
    double tkv = a.lkv ? 0 : a.b * a.skv;
    if (a.lkv) for (size_t i = 0; i < a.nseq; i++) tkv += (double)a.lkv[i];
    double kv_rd = tkv * a.hkv * (a.dqk + a.dv) * a.kv_bytes;
    double t_kv = bwd ? 0 : f_in ? kv_rd / h.l2_bw : kv_rd / h.hbm_bw;
    grid_acc g;
    walk_tiles kept;
    grid_walk(&a, &r, packed, ptm, 1, &g, &kept);
    double best_splits = 1, t_grid = grid_time(&g, slots, per_sm, t_kv), t_combine = 0, t_stream = grid_stream(&g, slots);
    if (!fa3 && !bwd && !g.uniform && per_sm == 1) t_grid = maxd(t_grid, grid_list_schedule(&kept, 1, slots));
    /* FA2's varlen entry point, which a serving backend calls, splits
     * the KV range only when it swaps the GQA groups into the query rows
     * (mha_varlen_fwd: seqlenq_ngroups_swapped, one query per sequence). */
    int splittable = fa3 || !serving || (a.sq == 1 && a.h > a.hkv);
    if (!bwd && splittable) {
        /* Each library picks its split count by its own rule, not the
         * fastest one.  FA3: a serving backend's call is varlen (its
         * scheduler's per-sequence count), and on the Ampere/Ada path a
         * varlen split runs a longer K/V tile with 8 warps. */
        int varlen = fa3 && (serving || a.lq || a.lkv), sm8x_split = varlen && !wgmma;
        int cap = serving ? SERVING_SPLITS_MAX : SPLITS_MAX;
        attn_rates rs = r;
        if (sm8x_split) rs.tile_n = fa3_sm8x_split_tile_n(a.dqk, small_smem, a.wl >= 0);
        int s = fa3 ? fa3_num_splits(&a, slots, ptm, rs.tile_n, varlen, cap) : fa2_num_splits(&a, slots, r.tile_n, packed, cap);
        if (s > 1) {
            grid_acc gs;
            grid_walk(&a, &rs, packed, ptm, s, &gs, NULL);
            if (sm8x_split)
                per_sm = attn_ctas_per_sm(&a, 0, fa3_sm8x_warps(a.dqk, small_smem, 1), ptm, rs.tile_n, h.smem_per_sm);
            double part = gs.ctas * ptm * (a.dv + 1) * 4;
            t_combine = h.fixed_s + h.lat_dram_s + part / h.l2_bw + (double)c.output_bytes / h.hbm_bw;
            t_stream = grid_stream(&gs, slots);
            t_grid = grid_time(&gs, slots, per_sm, t_kv);
            best_splits = s;
            /* The same as the one-split walk's where the tile is (FA2). */
            g.blocks = gs.blocks;
            r.tile_n = rs.tile_n;
        }
    }
    if (bwd) {
        /* The backward's MMAs over the forward's (dS, dP, dQ, dK, dV, and
         * QKᵀ again with recompute), on the same grid. */
        int recompute = opm_op_get_bool(op, "flash_recompute", 1);
        t_grid *= (2 * a.dqk + 2 * a.dv + (recompute ? a.dqk : 0)) / (a.dqk + a.dv);
        t_combine = kern + h.lat_dram_s + (double)c.output_bytes / h.hbm_bw; /* dot(dO, O) */
    }
    double t_main = maxd(t_grid, h.lat_dram_s + t_dram);
    double body = t_cache + t_main + t_combine;

    opm_profile_head(p, op, hw, model, &c);
    p->engine = h.tensor ? OPM_ENGINE_TENSOR : OPM_ENGINE_VECTOR;
    p->compute_time_s = t_grid;
    p->overhead_s = h.fixed_s;
    p->latency_s = body + h.fixed_s;
    /* DRAM: the bytes not left in L2; L2 sees every byte once. */
    double all_rd = (double)c.read_bytes, all_wr = (double)c.write_bytes;
    opm_level_traffic hbm_t = {all_rd * (1 - f_in), all_wr * (1 - f_in), t_dram}, l2_t = {all_rd, all_wr, 0};
    opm_energy_in work = {(double)c.matrix_flops, p->engine, c.compute_dtype, (double)c.vector_flops, OPM_FP32, 0};
    opm_profile_levels(p, hw, &hbm_t, &l2_t, all_rd, all_wr, &work);

    /* The limiting resource: the grid's own (math, softmax, loads, or the
     * CTAs' latency chain) or DRAM. */
    const char *lim;
    if (h.lat_dram_s + t_dram >= t_grid || (t_kv >= t_stream && t_kv >= 0.5 * t_grid)) lim = "hbm";
    else {
        double t_mma, t_soft, t_load;
        block_times(&a, &r, ptm, &t_mma, &t_soft, &t_load);
        double blk = g.blocks > 0 ? g.blocks * maxd(maxd(t_mma, t_soft), t_load) / (slots * best_splits) : 0;
        if (blk < 0.5 * t_grid) lim = "latency";
        else lim = t_mma >= t_soft && t_mma >= t_load ? "compute" : t_soft >= t_load ? "softmax" : "l2";
    }
    if (h.fixed_s > body) lim = "fixed";
    p->bound = lim[0] == 'f' ? OPM_BOUND_OVERHEAD
             : lim[0] == 'c' || lim[0] == 's' ? OPM_BOUND_COMPUTE : OPM_BOUND_MEMORY;
    if (p->bound == OPM_BOUND_MEMORY) opm_diag_text(p, "limiting_level", lim[0] == 'l' && lim[1] == '2' ? "l2" : "hbm");
    opm_diag_text(p, "limiting_resource", lim);
    opm_diag_text(p, "kernel", packed && ptm == TILE_M_PACKED ? "flash_decoding_packed_gqa" : fa3 ? "flash_attention_3" : "flash_attention_2");
    opm_diag_num(p, "pack_gqa", packed);
    opm_diag_num(p, "tile_m", ptm);
    opm_diag_num(p, "tile_n", r.tile_n);
    opm_diag_num(p, "ctas", g.ctas * best_splits);
    opm_diag_num(p, "ctas_per_sm", per_sm);
    opm_diag_num(p, "shared_memory_bytes_per_cta", smem);
    opm_diag_num(p, "waves", g.ctas * best_splits / (slots * per_sm));
    opm_diag_num(p, "kv_splits", best_splits);
    opm_diag_num(p, "kv_blocks", g.blocks);
    opm_diag_num(p, "grid_time_s", t_grid);
    opm_diag_num(p, "dram_time_s", t_dram);
    opm_diag_num(p, "combine_time_s", t_combine);
    opm_diag_num(p, "cache_write_time_s", t_cache);
    opm_diag_num(p, "overhead_s", h.fixed_s);
    opm_diag_num(p, "l2_input_fraction", f_in);
    opm_diag_num(p, "achieved_flops_per_s", p->latency_s > 0 ? (double)p->flops / p->latency_s : 0);
    return 0;
}
