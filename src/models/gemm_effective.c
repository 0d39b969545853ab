/* gemm_effective.c — the `effective_roofline` model: the same problem,
 * catalog, selection, tiling, occupancy and traffic as extended_roofline
 * (gemm_tiled.c), but each wave (all full waves alike, then the tail) is one
 * constant-time phase-aware ceiling instead of a K-loop timeline:
 *
 *   wave = max(local body, memory body)
 *   local body  = max(math / R_math, SMEM bytes / R_smem) on the busiest SM
 *                 + issuing its output tiles
 *   memory body = max(L2 bytes / R_l2, DRAM loads / R_dram + output stores)
 *
 * with concurrency-limited rates: R_math = per-SM peak × issue share (warps
 * resident vs one per scheduler, SIMT FFMA share); R_l2 = min(L2 bandwidth,
 * busy SMs × L2 port); R_dram = min(DRAM bandwidth, bytes in flight /
 * latency) — Little's law with every resident CTA keeping `stages` K tiles
 * in flight.  Exposed once: the prologue (one DRAM latency plus one K tile
 * per CTA) and the last stores' L2 latency.  The power cap and the kernel
 * selection, and the grouped GEMM and conv (implicit GEMM) problems, are
 * gemm_tiled.c's.  Other kinds use the roofline.
 *
 * Diagnostics of the wave class that takes the most time (full waves or
 * the tail): raw rates (every busy SM at its peak, L2 at its bandwidth or
 * the busy SMs' ports, DRAM at its bandwidth) against the effective,
 * concurrency-limited ones; the occupancy class and the exact warps per
 * scheduler of a busy SM for each wave class; and the tied limiting
 * resources, the phases within GEMM_TIE_FRAC of the longest. */
#include <math.h>
#include "gemm_tiled.h"
#include "models.h"



static void wave_effective(const gemm_problem *pb, const gemm_hw *h, gemm_eval *e)
{
    const gemm_kernel *k = &e->kern;
    gemm_wave_in in;
    opm_gemm_wave_in(pb, h, e, &in);
    double share = in.share, warp_reads = in.warp_reads, tile_iter_bytes = in.tile_iter_bytes;
    double out_elem = in.out_elem, lat = in.lat_s;
    double first_pro = -1, dominant = -1;
    for (int w = 0; w < 2; w++) {
        double nt, kit, frac, count = w ? 1 : e->full_waves;
        opm_gemm_wave_class(e, w, &nt, &kit, &frac);
        if (nt <= 0 || count <= 0) continue;
        double a = mind(ceil(nt / h->num_sms), e->ctas_per_sm);
        double sms = mind(nt, h->num_sms);
        double r_math = h->flops_per_s_sm * mind(1.0, a * k->warps / WARPS_FOR_PEAK) * share;
        double t_c = a * kit * 2.0 * k->tm * k->tn * k->tk / r_math;
        double t_s = a * kit * (warp_reads + tile_iter_bytes) / h->smem_bw_sm;
        double inflight = sms * a * (k->stages > 1 ? k->stages - 1 : 1) * tile_iter_bytes;
        double r_l2 = isinf(h->l2_bw) ? HUGE_VAL : mind(mind(h->l2_bw, sms * h->l2_port_sm), inflight / h->lat_l2_s);
        double r_dram = mind(h->hbm_bw, inflight / lat);
        double t_l2 = frac * e->l2_read / r_l2;
        /* Concurrency limits the byte rate; the activations' time is fixed. */
        double t_d = frac * maxd(e->dram_read / r_dram, e->dram_read_eq / h->hbm_bw);
        double issue_epi = a * k->tm * k->tn * out_elem / h->l2_port_sm;
        double store = frac * e->l2_write;
        double t_store = opm_gemm_store_s(h, store, w || e->stores_in_l2);
        double local = maxd(t_c, t_s) + issue_epi, mem = maxd(t_l2, t_d + t_store);
        /* One stage cannot overlap loads with math. */
        double body = k->stages >= 2 ? maxd(local, mem) : local + mem;
        if (first_pro < 0) first_pro = h->lat_dram_s + a * tile_iter_bytes / h->l2_port_sm;
        e->t_compute += count * t_c;
        e->t_smem += count * t_s;
        e->t_l2 += count * frac * e->l2_read / mind(h->l2_bw, sms * h->l2_port_sm);
        e->t_dram += count * (frac * e->dram_read_eq / h->hbm_bw + t_store);
        e->t_latency += count * mem;
        e->t_epilogue += count * issue_epi;
        e->body_s += count * body;
        opm_gemm_wave_refill(h, e, w, count, a);
        e->sm_warps[w] = a * k->warps;
        if (count * body > dominant) {
            /* Diagnostics of the wave class that takes the most time. */
            dominant = count * body;
            e->dominant_tail = w;
            double l2_raw = isinf(h->l2_bw) ? HUGE_VAL : mind(h->l2_bw, sms * h->l2_port_sm);
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
        if (mem > local && (r_dram < h->hbm_bw * 0.999 || r_l2 < mind(h->l2_bw, sms * h->l2_port_sm) * 0.999))
            e->exposed_latency = 1;
    }
    opm_gemm_wave_end(pb, h, e, first_pro);
}

int opm_effective_roofline_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, opm_error *err)
{
    return opm_gemm_predict(op, hw, p, "effective_roofline", wave_effective, err);
}
