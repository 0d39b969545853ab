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
 * ping-pong of two warpgroups) the softmax overlaps the MMAs, a block
 * costs max(MMA, softmax, loads); elsewhere (mma_sync, MFMA: FA2) the
 * softmax follows the MMAs, max(MMA + softmax, loads).  A CTA also pays
 * its start (block-table and Q loads: two DRAM latencies), one exposed
 * K/V load latency and its O store.  The grid's time is the busiest
 * slot's (one CTA per SM): uniform CTAs run in whole waves, causal ones are balanced
 * (longest first, as FA3's scheduler orders them) so the grid takes
 * max(total / slots, longest CTA).  When the grid does not fill the
 * slots, the KV range is split (FlashDecoding) into the count in 1…128
 * (1…32 for a serving backend under CUDA graphs) that minimises grid time
 * plus the combine kernel (its fixed time share, the fp32 partial outputs
 * and LSEs through L2).  A wave's CTAs start and finish together and
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
 *     softmax that FA3's warpgroup ping-pong fails to hide;
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
 * queries and sk keys (bottom-right aligned masks); tn divides by tile_n. */
static double tile_blocks(const attn_k *a, double i0, double i1, double sq, double sk, const exact_div *tn)
{
    double off = sk - sq;
    double lo = a->wl >= 0 ? maxd(0, i0 + off - a->wl) : 0;
    double hi = a->wr >= 0 ? mind(sk - 1, i1 + off + a->wr) : sk - 1;
    if (hi < lo) return 0;
    return floor_div(hi, tn) - floor_div(lo, tn) + 1;
}

/* tile_blocks where floor_div's checks hold for the whole sequence (a
 * whole sk ≤ EXACT_DIV_X_MAX, whole query positions and window): lo
 * and hi are whole numbers in [0, sk). */
static inline double tile_blocks_whole(const attn_k *a, double i0, double i1, double off, double sk,
                                       const exact_div *tn)
{
    double lo = a->wl >= 0 ? maxd(0, i0 + off - a->wl) : 0;
    double hi = a->wr >= 0 ? mind(sk - 1, i1 + off + a->wr) : sk - 1;
    if (hi < lo) return 0;
    return (double)(((uint64_t)hi * tn->m) >> 32) - (double)(((uint64_t)lo * tn->m) >> 32) + 1;
}

typedef struct grid_acc {
    double ctas, total_s, max_s, blocks;
    double fixed_total_s, fixed_first_s; /* the CTAs' start and finish: latency, no streaming */
    int uniform;
    double first_s;
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
    return r->overlap ? maxd(maxd(t_mma, t_soft) + FA3_OVERLAP_LOSS * mind(t_mma, t_soft), t_load)
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

/* A grid's sums while it is walked, in locals the compiler keeps in
 * registers (grid_acc behind a pointer would go through memory on every
 * tile). */
typedef struct grid_sum {
    double ctas, total_s, fixed_total_s, blocks, max_s, fixed_first_s, first;
    int uniform;
} grid_sum;

/* One Q tile's CTAs (n of them, ct seconds each) into the grid. */
static inline void grid_add(grid_sum *g, double n, double ct, double fx, double blocks)
{
    g->ctas += n;
    g->total_s += n * ct;
    g->fixed_total_s += n * fx;
    g->blocks += blocks;
    if (ct > g->max_s) g->max_s = ct;
    if (g->first < 0) g->first = ct, g->fixed_first_s = fx;
    else if (g->uniform && fabs(ct - g->first) > 1e-3 * g->first) g->uniform = 0;
}

/* The rest full tiles of an unmasked sequence, all like the one before. */
static inline void grid_add_rest(grid_sum *g, double rest, double n, double ct, double fx, double heads, double mult,
                                 double nb)
{
    g->ctas += rest * n;
    g->total_s += rest * n * ct;
    g->fixed_total_s += rest * n * fx;
    g->blocks += rest * heads * mult * nb;
}

static void grid_done(const grid_sum *s, grid_acc *g)
{
    memset(g, 0, sizeof *g);
    g->ctas = s->ctas;
    g->total_s = s->total_s;
    g->fixed_total_s = s->fixed_total_s;
    g->blocks = s->blocks;
    g->max_s = s->max_s;
    g->fixed_first_s = s->fixed_first_s;
    g->uniform = s->uniform;
}

/* The Q tiles of a walk, kept so the split-KV search re-derives each
 * split count's grid without walking the sequences again: the search
 * runs only on grids with fewer CTAs than slots, so a grid there has at
 * most that many tiles.  A record with rest > 0 stands for the rest
 * full tiles of an unmasked sequence, all like the one before it. */
#define WALK_TILES_MAX 512
typedef struct walk_tile {
    double nb, fx, rest;
} walk_tile;
typedef struct walk_tiles {
    walk_tile t[WALK_TILES_MAX];
    size_t n;
    int overflow;
    double t_blk, heads, mult;
    double nb_max, fx_min; /* over every tile, kept or not */
    double ctas, blocks, fixed_total_s; /* the walk's sums (one split) */
    int has_rest;                       /* a record stands for several tiles */
} walk_tiles;

static inline void walk_keep(walk_tiles *w, double nb, double fx, double rest)
{
    if (!w) return;
    w->nb_max = maxd(w->nb_max, nb);
    w->fx_min = w->fx_min < 0 ? fx : mind(w->fx_min, fx);
    if (w->n == WALK_TILES_MAX) {
        w->overflow = 1;
        return;
    }
    w->t[w->n++] = (walk_tile){nb, fx, rest};
    if (rest > 0) w->has_rest = 1;
}

/* Whole numbers up to this are exact in a double, and so is every sum
 * of them that stays below it. */
#define EXACT_INT_MAX 4503599627370496.0 /* 2^52 */

/* tile_blocks_whole in integers for the Q tile whose first row sits at
 * key position i0 (its position plus sk − sq), tmi rows tall: m is
 * tile_n's exact_div multiplier, hi_max = sk − 1. */
static inline int64_t masked_blocks(int64_t i0, int64_t tmi, int lo_on, int64_t wl, int hi_on, int64_t wr,
                                    int64_t hi_max, uint64_t m)
{
    int64_t lo = lo_on && i0 - wl > 0 ? i0 - wl : 0;
    int64_t hi = hi_on && i0 + tmi - 1 + wr < hi_max ? i0 + tmi - 1 + wr : hi_max;
    if (hi < lo) return 0;
    return (int64_t)((((uint64_t)hi * m) >> 32) - (((uint64_t)lo * m) >> 32)) + 1;
}

/* grid_walk's loop over the full Q tiles 0 … tiles − 2 of a masked
 * sequence whose positions, lengths and window are whole numbers, at one
 * split, in integers: sq, sk ≤ EXACT_DIV_X_MAX, so every position and
 * bound the double loop forms is a whole number it holds exactly (a
 * window past 2·EXACT_DIV_X_MAX bounds nothing either way, so it is
 * clamped there), and tile_blocks_whole's block count is the same whole
 * number.  The time sums (total, fixed, the longest CTA, uniformity) are
 * grid_add's, tile by tile in the same order; the CTA and block counts
 * are sums of whole numbers below EXACT_INT_MAX, exact in any order, so
 * they are added once.  Every figure is bit-identical to the general
 * loop's.  Returns 0, touching nothing, where those bounds do not hold
 * (the caller then runs the general loop). */
static int walk_masked_whole(const attn_k *a, grid_sum *gsp, walk_tiles *w, double tiles, double tm, double sq,
                             double sk, const exact_div *tn, double n, double hm, double t_blk, double fx)
{
    int64_t nt = (int64_t)tiles - 1;
    /* Only a walk that keeps its tiles (the one-split walk); fx, t_blk ≥
     * 0, so no CTA time is negative and grid_add sets `first` once, at the
     * grid's first tile. */
    if (!w || !(fx >= 0 && t_blk >= 0) ||
        !(gsp->ctas + (double)nt * n <= EXACT_INT_MAX) || !(gsp->blocks + hm * (sk + 1) * (double)nt <= EXACT_INT_MAX))
        return 0;
    int64_t tmi = (int64_t)tm, off = (int64_t)sk - (int64_t)sq, hi_max = (int64_t)sk - 1;
    int lo_on = a->wl >= 0, hi_on = a->wr >= 0;
    int64_t wl = lo_on ? (int64_t)mind(a->wl, 2 * EXACT_DIV_X_MAX) : 0;
    int64_t wr = hi_on ? (int64_t)mind(a->wr, 2 * EXACT_DIV_X_MAX) : 0;
    uint64_t m = tn->m;
    grid_sum gs = *gsp;
    int64_t t = 0;
    if (gs.first < 0 && nt > 0) {
        /* The grid's first tile: grid_add sets `first` from it. */
        int64_t nb_i = masked_blocks(off, tmi, lo_on, wl, hi_on, wr, hi_max, m);
        double nb = (double)nb_i;
        grid_add(&gs, n, fx + nb * t_blk, fx, hm * nb);
        walk_keep(w, nb, fx, 0);
        t = 1;
    }
    /* Tiles past what w holds overflow it (the split search then walks
     * again, and reads none of the kept tiles): they go to a sink. */
    walk_tile sink;
    int room = nt - t <= (int64_t)(WALK_TILES_MAX - w->n);
    walk_tile *kept_at = room ? w->t + w->n : &sink;
    size_t kept_step = room ? 1 : 0;
    double total = gs.total_s, fixed = gs.fixed_total_s, max_s = gs.max_s, first = gs.first, thr = 1e-3 * first;
    double c = n * fx;
    int uniform = gs.uniform;
    int64_t nb_sum = 0, nb_max = 0, t0 = t;
    for (; t < nt; t++) {
        int64_t nb_i = masked_blocks(t * tmi + off, tmi, lo_on, wl, hi_on, wr, hi_max, m);
        double nb = (double)nb_i;
        double ct = fx + nb * t_blk;
        total += n * ct;
        fixed += c;
        nb_sum += nb_i;
        nb_max = nb_i > nb_max ? nb_i : nb_max;
        if (ct > max_s) max_s = ct;
        if (uniform && fabs(ct - first) > thr) uniform = 0;
        *kept_at = (walk_tile){nb, fx, 0};
        kept_at += kept_step;
    }
    gs.total_s = total;
    gs.fixed_total_s = fixed;
    gs.max_s = max_s;
    gs.uniform = uniform;
    gs.ctas += (double)(nt - t0) * n;
    gs.blocks += hm * (double)nb_sum;
    if (nt > t0) {
        if (room) w->n += (size_t)(nt - t0);
        else w->overflow = 1;
        w->nb_max = maxd(w->nb_max, (double)nb_max);
        w->fx_min = w->fx_min < 0 ? fx : mind(w->fx_min, fx);
    }
    *gsp = gs;
    return 1;
}

/* Walks the grid: per sequence, per Q tile; keeps the tiles in w when
 * w is not NULL. */
static void grid_walk(const attn_k *a, const attn_rates *r, int packed, double tm, double splits, grid_acc *g,
                      walk_tiles *w)
{
    grid_sum gs = {0, 0, 0, 0, 0, 0, -1, 1};
    double g_ratio = a->h / a->hkv;
    double heads = packed ? a->hkv : a->h;
    size_t nseq = a->lq || a->lkv ? a->nseq : 1;
    double mult = a->lq || a->lkv ? 1 : a->b;
    double t_blk = block_time(a, r, tm), fx_full = cta_fixed(a, r, tm);
    double n = heads * mult * splits;
    int masked = a->causal || a->wl >= 0 || a->wr >= 0;
    exact_div tn = exact_div_of(r->tile_n), sd = exact_div_of(splits);
    if (w) w->n = 0, w->overflow = 0, w->has_rest = 0, w->t_blk = t_blk, w->heads = heads, w->mult = mult, w->nb_max = 0, w->fx_min = -1;
    for (size_t s = 0; s < nseq; s++) {
        double sq = a->lq ? (double)a->lq[s] : a->sq, sk = a->lkv ? (double)a->lkv[s] : a->skv;
        double rows_total = packed ? sq * g_ratio : sq;
        double tiles = ceil(rows_total / tm);
        int whole = !packed && tn.m && sq == floor(sq) && sk == floor(sk) && sk <= EXACT_DIV_X_MAX &&
                    tm == floor(tm) && a->wl == floor(a->wl) && a->wr == floor(a->wr);
        /* Every tile but the last has tm rows (tiles = ⌈rows_total/tm⌉). */
        double rows_last = mind(tm, rows_total - (tiles - 1) * tm);
        double fx_last = rows_last == tm ? fx_full : cta_fixed(a, r, rows_last);
        if (whole && masked && sd.d == 1 && sq <= EXACT_DIV_X_MAX && tiles > 1 &&
            walk_masked_whole(a, &gs, w, tiles, tm, sq, sk, &tn, n, heads * mult, t_blk, fx_full)) {
            double t = tiles - 1, rows = rows_last;
            double nb = tile_blocks_whole(a, t * tm, t * tm + rows - 1, sk - sq, sk, &tn);
            grid_add(&gs, n, cta_time(fx_last, t_blk, nb, &sd), fx_last, heads * mult * nb);
            walk_keep(w, nb, fx_last, 0);
            continue;
        }
        for (double t = 0; t < tiles; t++) {
            double rows = mind(tm, rows_total - t * tm);
            double p0 = packed ? floor(t * tm / g_ratio) : t * tm;
            double p1 = packed ? floor((t * tm + rows - 1) / g_ratio) : t * tm + rows - 1;
            double nb = whole ? tile_blocks_whole(a, p0, p1, sk - sq, sk, &tn) : tile_blocks(a, p0, p1, sq, sk, &tn);
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
    if (w) w->ctas = gs.ctas, w->blocks = gs.blocks, w->fixed_total_s = gs.fixed_total_s;
    grid_done(&gs, g);
}

/* The grid of a kept walk with the KV range split `splits` ways: the
 * same sums, in the same order, as grid_walk's.  The block count is the
 * walk's (the same terms in the same order: a kept walk holds every
 * tile); the CTA count, a sum of whole numbers below EXACT_INT_MAX, is
 * the walk's times `splits`; and for a power of two the fixed-time sum
 * is the walk's times `splits` too (every term scales exactly, none
 * near the subnormals or overflow), so the loop sums only the CTA
 * times. */
static void grid_rewalk(const walk_tiles *w, double splits, grid_acc *g)
{
    grid_sum gs = {0, 0, 0, 0, 0, 0, -1, 1};
    double heads = w->heads, mult = w->mult, t_blk = w->t_blk;
    double n = heads * mult * splits;
    exact_div sd = exact_div_of(splits);
    /* Every kept nb is a whole number ≤ nb_max: ceil_div's checks hold. */
    uint64_t si = (uint64_t)splits - 1;
    int whole = sd.m && w->nb_max + splits < EXACT_DIV_X_MAX && !w->overflow && w->ctas * splits <= EXACT_INT_MAX;
    if (!whole) {
        for (size_t i = 0; i < w->n; i++) {
            const walk_tile *e = &w->t[i];
            double ct = cta_time(e->fx, t_blk, e->nb, &sd);
            if (e->rest > 0) grid_add_rest(&gs, e->rest, n, ct, e->fx, heads, mult, e->nb);
            else grid_add(&gs, n, ct, e->fx, heads * mult * e->nb);
        }
        grid_done(&gs, g);
        return;
    }
    /* (splits is a whole number ≤ 256 here: sd.m is set.) */
    uint64_t su = (uint64_t)splits;
    int pow2 = (su & (su - 1)) == 0 && w->fx_min >= 0x1p-900 && w->fixed_total_s * splits <= 0x1p1000;
    double total = 0, fixed = 0, max_s = 0, first = -1, thr = 0, fixed_first = 0;
    int uniform = 1;
    size_t i = 0;
    if (pow2 && !w->has_rest && w->n > 0) {
        /* The same sums without the rest records' and the fixed time's
         * terms: the first tile sets `first`, the others only compare. */
        const walk_tile *e = &w->t[0];
        double ct = e->fx + (double)(int64_t)((((uint64_t)(int64_t)e->nb + si) * sd.m) >> 32) * t_blk;
        total += n * ct;
        if (ct > max_s) max_s = ct;
        first = ct, thr = 1e-3 * ct, fixed_first = e->fx;
        if (first >= 0) {
            for (i = 1; i < w->n; i++) {
                e = &w->t[i];
                ct = e->fx + (double)(int64_t)((((uint64_t)(int64_t)e->nb + si) * sd.m) >> 32) * t_blk;
                total += n * ct;
                if (ct > max_s) max_s = ct;
                if (uniform && fabs(ct - first) > thr) uniform = 0;
            }
        } else {
            i = 1;
        }
    }
    for (; i < w->n; i++) {
        const walk_tile *e = &w->t[i];
        /* (Through int64_t: a whole nb < 2^24 converts the same, without
         * the unsigned conversions' range branches.) */
        double ct = e->fx + (double)(int64_t)((((uint64_t)(int64_t)e->nb + si) * sd.m) >> 32) * t_blk;
        if (e->rest > 0) {
            /* grid_add_rest's terms. */
            double rn = e->rest * n;
            total += rn * ct;
            if (!pow2) fixed += rn * e->fx;
            continue;
        }
        /* grid_add's. */
        total += n * ct;
        if (!pow2) fixed += n * e->fx;
        if (ct > max_s) max_s = ct;
        if (first < 0) first = ct, thr = 1e-3 * ct, fixed_first = e->fx;
        else if (uniform && fabs(ct - first) > thr) uniform = 0;
    }
    gs.ctas = w->ctas * splits;
    gs.total_s = total;
    gs.fixed_total_s = pow2 ? w->fixed_total_s * splits : fixed;
    gs.blocks = w->blocks;
    gs.max_s = max_s;
    gs.fixed_first_s = fixed_first;
    gs.uniform = uniform;
    grid_done(&gs, g);
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

/* The grid's time with its K/V stream's DRAM time t_dram (at the reached rate):
 * the CTAs of a wave start and finish together, and DRAM serves their
 * streams only between, so per wave the start and finish add to the
 * longer of the SMs' streaming and the wave's share of the DRAM time. */
/* The SMs' own streaming time of a grid (its CTAs less their start and
 * finish), to compare with the K/V stream's DRAM time. */
static double grid_stream(const grid_acc *g, double slots)
{
    if (g->ctas <= 0) return 0;
    if (g->uniform) return ceil(g->ctas / slots) * (g->max_s - g->fixed_first_s);
    return (g->total_s - g->fixed_total_s) / slots;
}

static double grid_time(const grid_acc *g, double slots, double t_dram)
{
    if (g->ctas <= 0) return 0;
    if (g->uniform) {
        double w = ceil(g->ctas / slots);
        return w * g->fixed_first_s + maxd(w * (g->max_s - g->fixed_first_s), t_dram);
    }
    return maxd(g->fixed_total_s / slots + maxd((g->total_s - g->fixed_total_s) / slots, t_dram), g->max_s);
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
    /* One CTA per SM: FA3's warp-specialised CTAs take the register file
     * (setmaxnreg), FA2's 4-warp CTAs at 255 registers leave room for
     * two only where their shared memory fits too; the measured decode
     * floors (latency-bound grids) show one per SM on every GPU here. */
    double slots = h.num_sms;

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
    if (!bwd && opm_op_get_bool(op, "kv_cache_write", 0)) {
        /* The reshape-and-cache kernel before the attention kernel: its
         * bytes are in the counts (the new tokens' K and V, twice). */
        double tq = a.lq ? 0 : a.b * a.sq;
        if (a.lq) for (size_t i = 0; i < a.nseq; i++) tq += (double)a.lq[i];
        double nkv = tq * a.hkv * (a.dqk + a.dv) * a.kv_bytes;
        /* It and the scheduler kernel before the attention kernel (FA3's
         * prepare_varlen_num_blocks, FlashInfer's plan) each cost a
         * kernel floor: the fixed time and a DRAM round trip. */
        t_cache = SERVING_EXTRA_KERNELS * (h.fixed_s + h.lat_dram_s) +
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
    double best_splits = 1, t_grid = grid_time(&g, slots, t_kv), t_combine = 0, t_stream = grid_stream(&g, slots);
    double blocks_per_cta = g.ctas > 0 ? g.blocks / g.ctas : 0;
    /* FA2's varlen entry point, which a serving backend calls, splits
     * the KV range only when it swaps the GQA groups into the query rows
     * (mha_varlen_fwd: seqlenq_ngroups_swapped, one query per sequence). */
    int splittable = fa3 || !serving || (a.sq == 1 && a.h > a.hkv);
    if (!bwd && splittable && g.ctas < slots && blocks_per_cta >= 2) {
        /* A serving backend captures decode in CUDA graphs with its split
         * buffers sized up front: vLLM's flash_attn_max_num_splits_for_cuda_graph
         * (32) caps what FlashAttention's own heuristic (128) would take. */
        int smax = serving ? SERVING_SPLITS_MAX : SPLITS_MAX;
        for (int s = 2; s <= smax && s <= blocks_per_cta; s++) {
            /* The split grid's CTAs: every tile's count times s (whole
             * numbers, so exactly what its walk would sum). */
            double ctas_s = s * g.ctas;
            /* The combine kernel: fp32 partial O and LSE per split. */
            double part = ctas_s / s * s * ptm * (a.dv + 1) * 4;
            double tc = h.fixed_s + h.lat_dram_s + part / h.l2_bw + (double)c.output_bytes / h.hbm_bw;
            /* A bound under the split grid's time, not walked: at least its
             * longest CTA (the tile of most blocks, at the least fixed
             * time) and its CTA-seconds over the slots (every CTA's share
             * of its tile's blocks at least nb / s); with a margin far
             * over the sums' rounding, a split count whose bound already
             * loses cannot be chosen. */
            double ct_lo = kept.n > 4 || kept.overflow ? cta_time(kept.fx_min, kept.t_blk, kept.nb_max, &(exact_div){(double)s, 0}) : 0;
            double lo = maxd(ct_lo, (s * g.fixed_total_s + kept.t_blk * g.blocks) / slots);
            /* (Worth it where a walk costs more than the bound.) */
            if ((kept.n > 4 || kept.overflow) && lo * (1 - 1e-9) + tc >= t_grid + t_combine) {
                if (ctas_s >= 2 * slots) break;
                continue;
            }
            grid_acc gs;
            if (kept.overflow) grid_walk(&a, &r, packed, ptm, s, &gs, NULL);
            else grid_rewalk(&kept, s, &gs);
            double t = grid_time(&gs, slots, t_kv) + tc;
            if (t < t_grid + t_combine) {
                t_stream = grid_stream(&gs, slots);
                t_grid = grid_time(&gs, slots, t_kv);
                t_combine = tc;
                best_splits = s;
            }
            if (gs.ctas >= 2 * slots) break;
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
    opm_diag_num(p, "ctas_per_sm", 1);
    opm_diag_num(p, "shared_memory_bytes_per_cta", smem);
    opm_diag_num(p, "waves", g.ctas * best_splits / slots);
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
