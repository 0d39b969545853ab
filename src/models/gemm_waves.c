/* gemm_waves.c — the two GEMM wave models and what they share: one loop
 * over the wave classes (the full waves, then the tail; a stream-K tail
 * spread over every slot), extended_roofline's K-loop timeline and
 * effective_roofline's concurrency-limited ceiling per class, the output
 * store and split-K reduction times, the non-persistent pipeline refill,
 * the stream-K fixup, what is added once after the waves, and the power
 * cap.  The models are described in gemm_tiled.c (extended) and
 * gemm_effective.c (effective); docs/gemm_models.md. */
#include <math.h>
#include "gemm_tiled.h"

double opm_gemm_store_s(const gemm_hw *h, double store, int tail)
{
    return store / (tail && store < h->l2_size ? h->l2_bw : h->hbm_write_bw);
}

double opm_gemm_reduce_s(const gemm_problem *pb, const gemm_hw *h, const gemm_kernel *k)
{
    double mn = pb->batch * pb->m * pb->n;
    return mn * 4.0 * k->split_k / h->hbm_bw + mn * pb->c_bytes / h->hbm_write_bw + h->lat_dram_s + SPLITK_GAP_S;
}

void opm_gemm_wave_in(const gemm_problem *pb, const gemm_hw *h, const gemm_eval *e, gemm_wave_in *w)
{
    const gemm_kernel *k = &e->kern;
    double miss = e->l2_read > 0 ? mind(1.0, e->dram_read / e->l2_read) : 1.0;
    w->share = h->tensor ? 1.0 : opm_gemm_ffma_share(k, h->warp_size);
    w->warp_reads = opm_gemm_warp_smem_reads(pb, k);
    w->tile_iter_bytes = ((double)k->tm * pb->a_bytes + (double)k->tn * pb->b_bytes) * k->tk;
    w->out_elem = k->split_k > 1 ? 4.0 : pb->c_bytes;
    /* Issuing one CTA's output tile: its stores to L2 and, on warp-level
     * MMA, first the staging of each fp32 (int32) accumulator through
     * shared memory, written and read back, so that the stores leave in
     * whole rows (CUTLASS 2.x's and cuBLAS's mma.sync epilogues; the
     * fragment layout of the MMA scatters a warp's outputs over rows).  The
     * stage runs between barriers, after the K loop: it adds to the CTA's
     * time.  Only the rows and columns the problem has are staged: a
     * library runs a tile of few rows for a few-row GEMM (a GEMV), which
     * the catalog's tile stands for. */
    w->epi_tile_s = (double)k->tm * k->tn * w->out_elem / h->l2_port_sm;
    if (k->mi == GEMM_MI_MMA_SYNC)
        w->epi_tile_s += mind(k->tm, pb->m) * mind(k->tn, pb->n) * 2.0 * EPILOGUE_ACC_BYTES / h->smem_bw_sm;
    w->lat_s = h->lat_l2_mean_s + miss * (h->lat_dram_s - h->lat_l2_mean_s);
    w->dq_s = 0;
    if (k->mi == GEMM_MI_MFMA && h->tensor && pb->scale_bk > 0) {
        double simds = mind((double)k->warps, MFMA_SIMDS_PER_CU);
        double lane_ops = (double)k->tm * k->tn * MFMA_DEQUANT_VALU_INSTR;
        w->dq_s = (lane_ops / (simds * MFMA_SIMD_LANES) + MFMA_SCALE_BLOCK_STALL_CYCLES) * k->tk / pb->scale_bk / h->clock_hz;
    }
}

/* Whether e's tail is spread by stream-K: the hybrid schedule of the
 * persistent kernels runs whole tiles data-parallel and splits only the
 * tail after at least one full wave; a launch with fewer tiles than slots
 * runs them whole (the libraries split K there only as split-K, which the
 * selection tries separately). */
static int stream_k_tail(const gemm_eval *e)
{
    return e->kern.stream_k && e->tail_tiles > 0 && e->full_waves >= 1 && e->kiters > 1;
}

void opm_gemm_wave_class(const gemm_eval *e, int w, double *nt, double *kit, double *frac)
{
    *nt = w ? e->tail_tiles : e->slots;
    *kit = e->kiters;
    *frac = *nt / e->tiles;
    if (w && stream_k_tail(e)) {
        double iters = e->tail_tiles * e->kiters;
        *nt = mind(e->slots, iters);
        *kit = cdivd(iters, *nt);
    }
}

/* The stream-K fixup of a tail split over the slots: the partial sums'
 * L2 round trip (0 without stream-K). */
static double fixup_s(const gemm_hw *h, const gemm_eval *e)
{
    if (!stream_k_tail(e)) return 0;
    double nt, kit, frac;
    opm_gemm_wave_class(e, 1, &nt, &kit, &frac);
    double pieces = nt / e->tail_tiles;
    if (pieces <= 1) return 0;
    /* Every piece but the last writes an fp32 partial tile, the last reads them. */
    double bytes = 2 * (nt - e->tail_tiles) * e->kern.tm * e->kern.tn * 4.0;
    return h->lat_l2_mean_s + bytes / h->l2_bw;
}

void opm_gemm_wave_refill(const gemm_hw *h, gemm_eval *e, int w, double count, double ctas)
{
    const gemm_kernel *k = &e->kern;
    if (k->mi != GEMM_MI_MMA_SYNC && k->mi != GEMM_MI_MFMA) return;
    double t = (count - (w == 0)) * h->lat_dram_s / ctas;
    e->t_prologue += t;
    e->body_s += t;
}

void opm_gemm_wave_end(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e, double first_pro)
{
    double pro = first_pro > 0 ? first_pro : 0, fixup = fixup_s(h, e);
    e->t_prologue += pro;
    e->t_epilogue += h->lat_l2_mean_s + fixup;
    e->body_s += pro + h->lat_l2_mean_s + fixup;
    if (e->kern.split_k > 1) {
        e->t_reduce = opm_gemm_reduce_s(pb, h, &e->kern);
        e->body_s += e->t_reduce;
    }
}

/* One wave class as both wave models see it: which class (0 the full
 * waves, 1 the tail), the CTAs it runs, the K iterations each runs, its
 * share of the work, how many times it runs and the CTAs on a busy SM. */
typedef struct wave_step {
    int w;
    double nt, kit, frac, count, a;
} wave_step;

/* A wave model's time for one wave class, added to e; *first_pro is the
 * first class's pipeline fill (set once, by the first class that runs);
 * *state is the model's own running value across classes (-1 at first). */
typedef void (*wave_class_fn)(const gemm_hw *h, const gemm_wave_in *in, const wave_step *s, gemm_eval *e,
                              double *first_pro, double *state);

/* The one loop both wave models run: every wave class that has CTAs, then
 * what is added once after the waves. */
static void run_waves(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e, wave_class_fn fn)
{
    gemm_wave_in in;
    opm_gemm_wave_in(pb, h, e, &in);
    double first_pro = -1, state = -1;
    for (int w = 0; w < 2; w++) {
        wave_step s = {.w = w, .count = w ? 1 : e->full_waves};
        opm_gemm_wave_class(e, w, &s.nt, &s.kit, &s.frac);
        if (s.nt <= 0 || s.count <= 0) continue;
        s.a = mind(cdivd(s.nt, h->num_sms), e->ctas_per_sm);
        fn(h, &in, &s, e, &first_pro, &state);
    }
    opm_gemm_wave_end(pb, h, e, first_pro);
}

/* extended_roofline's wave (see gemm_tiled.c's file comment): a K-loop
 * timeline, each iteration as long as its slowest resource. */
static void extended_class(const gemm_hw *h, const gemm_wave_in *in, const wave_step *s, gemm_eval *e,
                           double *first_pro, double *state)
{
    (void)state;
    const gemm_kernel *k = &e->kern;
    double share = in->share, warp_reads = in->warp_reads, tile_iter_bytes = in->tile_iter_bytes;
    double lat = in->lat_s;
    int w = s->w;
    double kit = s->kit, frac = s->frac, count = s->count, a = s->a;
    double issue = mind(1.0, a * k->warps / WARPS_FOR_PEAK) * share;
    double t_mma = a * 2.0 * k->tm * k->tn * k->tk / (h->flops_per_s_sm * issue);
    double t_c = opm_gemm_iter_compute_s(t_mma, in->dq_s, a);
    double t_s = a * (warp_reads + tile_iter_bytes) / h->smem_bw_sm;
    double t_l2 = maxd(frac * e->l2_read / kit / h->l2_bw, a * tile_iter_bytes / h->l2_port_sm);
    double t_d = frac * e->dram_read_eq / kit / h->hbm_bw;
    double t_lat = k->stages >= 2 ? lat / (k->stages - 1) : 0;
    double t_iter = k->stages >= 2 ? maxd(maxd(maxd(t_c, t_s), maxd(t_l2, t_d)), t_lat)
                                   : t_c + t_s + maxd(t_l2, t_d) + lat;
    if (*first_pro < 0) *first_pro = h->lat_dram_s + (k->stages > 1 ? k->stages - 1 : 1) * maxd(t_l2, t_d);
    /* Epilogue: the SM issues its output tiles (register → global),
     * and the wave's stores drain to DRAM (to L2 for a tail that fits)
     * while the next CTAs already run their K loops, so stores share
     * DRAM time with the loads instead of adding to the wave. */
    double issue_epi = a * in->epi_tile_s;
    double store = frac * e->l2_write;
    double t_store = opm_gemm_store_s(h, store, w || e->stores_in_l2);
    double loop = kit * t_iter;
    double wave = maxd(loop + issue_epi, kit * t_d + t_store);
    opm_gemm_wave_refill(h, e, w, count, a);
    double it = kit * count;
    e->t_compute += it * t_c;
    e->t_dequant += it * (t_c - t_mma);
    e->t_smem += it * t_s;
    e->t_l2 += it * t_l2;
    e->t_dram += count * (kit * t_d + t_store);
    e->t_latency += it * t_lat;
    e->t_epilogue += count * issue_epi;
    e->body_s += count * wave;
    if (t_lat >= maxd(maxd(t_c, t_s), maxd(t_l2, t_d)) && t_lat > 0) e->exposed_latency = 1;
}

void opm_gemm_wave_extended(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e)
{
    run_waves(pb, h, e, extended_class);
}

/* effective_roofline's wave (see gemm_effective.c's file comment): one
 * phase-aware ceiling at concurrency-limited rates; *state is the time of
 * the class that takes the most, whose rates become the diagnostics. */
static void effective_class(const gemm_hw *h, const gemm_wave_in *in, const wave_step *s, gemm_eval *e,
                            double *first_pro, double *state)
{
    const gemm_kernel *k = &e->kern;
    double share = in->share, warp_reads = in->warp_reads, tile_iter_bytes = in->tile_iter_bytes;
    double lat = in->lat_s;
    int w = s->w;
    double nt = s->nt, kit = s->kit, frac = s->frac, count = s->count, a = s->a;
    double sms = mind(nt, h->num_sms);
    double r_math = h->flops_per_s_sm * mind(1.0, a * k->warps / WARPS_FOR_PEAK) * share;
    double t_mma = a * kit * 2.0 * k->tm * k->tn * k->tk / r_math;
    double t_c = opm_gemm_iter_compute_s(t_mma, kit * in->dq_s, a);
    double t_s = a * kit * (warp_reads + tile_iter_bytes) / h->smem_bw_sm;
    double inflight = sms * a * (k->stages > 1 ? k->stages - 1 : 1) * tile_iter_bytes;
    /* What L2 delivers to the class's SMs at best: its bandwidth or their ports'. */
    double l2_cap = mind(h->l2_bw, sms * h->l2_port_sm);
    double r_l2 = isinf(h->l2_bw) ? HUGE_VAL : mind(l2_cap, inflight / h->lat_l2_mean_s);
    double r_dram = mind(h->hbm_bw, inflight / lat);
    double t_l2 = frac * e->l2_read / r_l2;
    /* Concurrency limits the byte rate; the activations' time is fixed. */
    double t_d = frac * maxd(e->dram_read / r_dram, e->dram_read_eq / h->hbm_bw);
    double issue_epi = a * in->epi_tile_s;
    double store = frac * e->l2_write;
    double t_store = opm_gemm_store_s(h, store, w || e->stores_in_l2);
    double local = maxd(t_c, t_s) + issue_epi, mem = maxd(t_l2, t_d + t_store);
    /* One stage cannot overlap loads with math. */
    double body = k->stages >= 2 ? maxd(local, mem) : local + mem;
    if (*first_pro < 0) *first_pro = h->lat_dram_s + a * tile_iter_bytes / h->l2_port_sm;
    e->t_compute += count * t_c;
    e->t_dequant += count * (t_c - t_mma);
    e->t_smem += count * t_s;
    e->t_l2 += count * frac * e->l2_read / l2_cap;
    e->t_dram += count * (frac * e->dram_read_eq / h->hbm_bw + t_store);
    e->t_latency += count * mem;
    e->t_epilogue += count * issue_epi;
    e->body_s += count * body;
    opm_gemm_wave_refill(h, e, w, count, a);
    e->sm_warps[w] = a * k->warps;
    if (count * body > *state) {
        /* Diagnostics of the wave class that takes the most time. */
        *state = count * body;
        e->dominant_tail = w;
        double l2_raw = isinf(h->l2_bw) ? HUGE_VAL : l2_cap;
        const double raw[GEMM_RES_COUNT] = {h->flops_per_s_sm * sms, h->smem_bw_sm * sms, l2_raw, h->hbm_bw};
        /* The rate the read bytes move at, row activations included. */
        double r_dram_act = t_d > 0 ? frac * e->dram_read / t_d : r_dram;
        const double eff[GEMM_RES_COUNT] = {r_math * sms, h->smem_bw_sm * sms, r_l2, r_dram_act};
        const double ph[GEMM_RES_COUNT] = {t_c, t_s, t_l2, t_d + t_store};
        for (int r = 0; r < GEMM_RES_COUNT; r++) {
            e->raw_rate[r] = raw[r];
            e->eff_rate[r] = eff[r];
            e->phase_s[r] = ph[r];
        }
    }
    /* Latency-limited: the concurrency-limited memory rate, not the
     * bandwidth, made memory the longest phase. */
    if (mem > local && (r_dram < h->hbm_bw * 0.999 || r_l2 < l2_cap * 0.999))
        e->exposed_latency = 1;
}

void opm_gemm_wave_effective(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e)
{
    run_waves(pb, h, e, effective_class);
}

/* The power cap.  A board may not draw more than tdp_w on average; its
 * clock controller lowers the SM clock until it does.  The kernel's
 * dynamic energy E = executed FLOPs × flop_j + DRAM bytes × dram_j_per_byte
 * is fixed by the work, and back-to-back calls (which measured latencies
 * average over) keep the controller in steady state, so over one call of
 * body + fixed overhead the board may spend (tdp_w − idle power at the clock) ×
 * (body + overhead): the fixed overhead is launch time in which the SMs
 * idle.  Hence body ≥ E / budget − overhead.  Only the SM clock drops, so
 * the whole body stretches; a DRAM-bound kernel draws too little power to
 * be capped. */
void opm_gemm_power_cap(const gemm_hw *h, gemm_eval *e)
{
    if (!(h->power_w > 0)) return;
    double energy = e->exec_flops * h->flop_j + (e->dram_read + e->dram_write) * h->dram_j_per_byte;
    e->t_power = maxd(0, energy / h->power_w - h->fixed_s);
    if (e->t_power > e->body_s) {
        e->body_s = e->t_power;
        e->power_limited = 1;
    }
}
