/* gemm_diags.c — what the tile GEMM models report besides the numbers:
 * the text diagnostics (kernel, tile, occupancy, waves, efficiencies,
 * phase times or raw and effective rates, scheduler warps, tied limits,
 * grouped and conv details, findings) and their typed twin,
 * opm_gemm_details.  At most 2 + 10 + 4 + 10 + 3 = 29 of OPM_MAX_DIAGS
 * (32), plus the tensor achievable fraction and its source: 31. */
#include <math.h>
#include <string.h>
#include "../core/internal.h"
#include "hw_internal.h"
#include "gemm_tiled.h"
#include "models.h"

/* The kernel and its occupancy (both models). */
void opm_gemm_put_kernel_diags(opm_profile *p, const gemm_eval *e)
{
    /* Formatted once: the typed twin's copy (opm_gemm_put_details, called
     * next, keeps it) is made here. */
    char name[OPM_DIAG_TEXT_BYTES] = "";
    _Static_assert(sizeof p->gemm.kernel == sizeof name, "the kernel name fits both buffers alike");
    opm_gemm_kernel_name(&e->kern, name, sizeof name);
    opm_diag_text_block(p, "kernel", name);
    memcpy(p->gemm.kernel, name, sizeof name);
    size_t pos = 0;
    put_int(name, sizeof name, &pos, e->kern.tm);
    put_str(name, sizeof name, &pos, "x");
    put_int(name, sizeof name, &pos, e->kern.tn);
    put_str(name, sizeof name, &pos, "x");
    put_int(name, sizeof name, &pos, e->kern.tk);
    opm_diag_text_block(p, "tile", name);
    opm_diag_num(p, "split_k", e->kern.split_k);
    opm_diag_num(p, "pipeline_stages", e->kern.stages);
    opm_diag_num(p, "warps_per_cta", e->kern.warps);
    opm_diag_num(p, "ctas_per_sm", e->ctas_per_sm);
    opm_diag_text(p, "occupancy_limit", e->occ_limit ? e->occ_limit : "ctas");
    opm_diag_num(p, "tiles", e->tiles);
    opm_diag_num(p, "waves", e->waves);
    opm_diag_num(p, "dram_row_activations", e->dram_acts);
}

/* The typed twin of the kernel diagnostics (opm_gemm_details); after
 * opm_gemm_put_kernel_diags, which wrote g->kernel. */
void opm_gemm_put_details(opm_profile *p, const gemm_eval *e)
{
    opm_gemm_details *g = &p->gemm;
    p->has_gemm = 1;
    int mi = e->kern.mi >= GEMM_MI_SIMT && e->kern.mi <= GEMM_MI_MME ? e->kern.mi : GEMM_MI_SIMT;
    opm_strlcpy(g->kernel_family, opm_hw_matrix_names[mi], sizeof g->kernel_family);
    g->tile_m = e->kern.tm;
    g->tile_n = e->kern.tn;
    g->tile_k = e->kern.tk;
    g->split_k = e->kern.split_k;
    g->pipeline_stages = e->kern.stages;
    g->warps_per_cta = e->kern.warps;
    g->ctas_per_sm = e->ctas_per_sm;
    g->tiles = e->tiles;
    g->waves = e->waves;
    g->wave_efficiency = e->wave_eff;
    g->tile_efficiency = e->tile_eff;
    for (int r = 0; r < GEMM_RES_COUNT; r++) {
        g->raw_rates_per_s[r] = e->raw_rate[r];
        g->effective_rates_per_s[r] = e->eff_rate[r];
    }
}

/* The last diagnostics of both models: the exposed phases, the power
 * cap's time and the dequantisation's share of the compute time. */
static void put_phase_tail(opm_profile *p, const gemm_eval *e)
{
    opm_diag_num(p, "prologue_s", e->t_prologue);
    opm_diag_num(p, "epilogue_s", e->t_epilogue + e->t_reduce);
    if (e->t_power > 0) opm_diag_num(p, "power_time_s", e->t_power);
    /* Part of compute_time_s: the block-scale dequantisation the MFMAs wait on. */
    if (e->t_dequant > 0) opm_diag_num(p, "dequant_time_s", e->t_dequant);
}

/* extended_roofline: efficiencies, L2 hits and the summed resource and
 * phase times. */
void opm_gemm_put_extended_diags(opm_profile *p, const gemm_eval *e)
{
    opm_diag_num(p, "wave_efficiency", e->wave_eff);
    opm_diag_num(p, "tile_efficiency", e->tile_eff);
    opm_diag_num(p, "l2_hit_ratio", e->l2_read > 0 ? 1 - mind(1, e->dram_read / e->l2_read) : 0);
    opm_diag_num(p, "compute_time_s", e->t_compute);
    opm_diag_num(p, "smem_time_s", e->t_smem);
    opm_diag_num(p, "l2_time_s", e->t_l2);
    opm_diag_num(p, "dram_time_s", e->t_dram);
    put_phase_tail(p, e);
}

/* Writes v with three significant digits and an SI prefix ("11.6T",
 * "950G", "1.56T") at out, at most 6 characters; returns the length.
 * Hand-rolled, as printf's floating-point formatting would dominate a
 * prediction. */
static size_t fmt_rate(char *out, double v)
{
    static const char prefix[] = " kMGTPE";
    if (!(v >= 0 && v < 999.5e18)) {
        memcpy(out, "inf", 3);
        return 3;
    }
    int p = 0;
    while (v >= 999.5 && p < 6) v *= 1e-3, p++;
    size_t n = 0;
    if (v < 9.995) {
        int x = (int)(v * 100 + 0.5);
        out[n++] = (char)('0' + x / 100);
        out[n++] = '.';
        out[n++] = (char)('0' + x / 10 % 10);
        out[n++] = (char)('0' + x % 10);
    } else if (v < 99.95) {
        int x = (int)(v * 10 + 0.5);
        out[n++] = (char)('0' + x / 100);
        out[n++] = (char)('0' + x / 10 % 10);
        out[n++] = '.';
        out[n++] = (char)('0' + x % 10);
    } else {
        int x = (int)(v + 0.5);
        out[n++] = (char)('0' + x / 100);
        out[n++] = (char)('0' + x / 10 % 10);
        out[n++] = (char)('0' + x % 10);
    }
    if (p) out[n++] = prefix[p];
    return n;
}

/* "math R l2 R dram R": the resources whose rate concurrency limits (the
 * model gives shared memory no concurrency limit, so its raw and effective
 * rates are equal and left out); fits 64 bytes. */
static void put_rates(char *buf, const double r[GEMM_RES_COUNT])
{
    size_t n = 5;
    memcpy(buf, "math ", 5);
    n += fmt_rate(buf + n, r[GEMM_RES_MATH]);
    memcpy(buf + n, " l2 ", 4);
    n += 4;
    n += fmt_rate(buf + n, r[GEMM_RES_L2]);
    memcpy(buf + n, " dram ", 6);
    n += 6;
    n += fmt_rate(buf + n, r[GEMM_RES_DRAM]);
    buf[n] = '\0';
}

/* "w0,w1,w2,w3": the resident warps of each scheduler (SMSP) of a busy
 * SM, warps being dealt to the schedulers in turn. */
static void put_smsp(char *buf, size_t cap, size_t *pos, double warps)
{
    int w = (int)warps, n = (int)WARPS_FOR_PEAK;
    for (int i = 0; i < n; i++) {
        if (i) put_str(buf, cap, pos, ",");
        put_int(buf, cap, pos, w / n + (i < w % n));
    }
}

/* The occupancy class of a busy SM from its resident warps per scheduler:
 * "latency_hiding" (two or more, so one warp's stall is covered by
 * another's issue), "one_warp_per_scheduler" (every scheduler busy but
 * exposed to its warp's latencies), "idle_schedulers" (fewer warps than
 * schedulers: part of the SM cannot issue at all). */
static void put_occupancy_class(opm_profile *p, double lo)
{
    /* lo: warps on the idlest scheduler. */
    if (lo >= 2) opm_diag_text_lit(p, "occupancy_class", "latency_hiding");
    else if (lo >= 1) opm_diag_text_lit(p, "occupancy_class", "one_warp_per_scheduler");
    else opm_diag_text_lit(p, "occupancy_class", "idle_schedulers");
}

/* effective_roofline: raw vs effective rates, occupancy class, exact
 * scheduler warp distribution, tied limiting resources, phases. */
void opm_gemm_put_effective_diags(opm_profile *p, const gemm_eval *e)
{
    static const char *const lim[GEMM_RES_COUNT] = {"compute", "smem", "l2", "dram"};
    char buf[OPM_DIAG_TEXT_BYTES] = "";
    put_rates(buf, e->raw_rate);
    opm_diag_text_block(p, "raw_rates_per_s", buf);
    put_rates(buf, e->eff_rate);
    opm_diag_text_block(p, "effective_rates_per_s", buf);
    put_occupancy_class(p, floor(e->sm_warps[e->dominant_tail] / WARPS_FOR_PEAK));
    size_t pos = 0;
    buf[0] = '\0';
    for (int w = 0; w < 2; w++) {
        if (e->sm_warps[w] <= 0) continue;
        if (pos) put_str(buf, sizeof buf, &pos, "; ");
        put_str(buf, sizeof buf, &pos, w ? "tail " : "full ");
        put_smsp(buf, sizeof buf, &pos, e->sm_warps[w]);
    }
    if (pos) opm_diag_text_block(p, "smsp_warps", buf);
    else opm_diag_text_lit(p, "smsp_warps", "none");
    double top = 0;
    for (int r = 0; r < GEMM_RES_COUNT; r++) top = maxd(top, e->phase_s[r]);
    pos = 0;
    buf[0] = '\0';
    for (int r = 0; r < GEMM_RES_COUNT; r++)
        if (top > 0 && e->phase_s[r] >= top * (1 - GEMM_TIE_FRAC)) {
            if (pos) put_str(buf, sizeof buf, &pos, ",");
            put_str(buf, sizeof buf, &pos, lim[r]);
        }
    if (pos) opm_diag_text_block(p, "tied_limits", buf);
    else opm_diag_text_lit(p, "tied_limits", "none");
    opm_diag_num(p, "tile_efficiency", e->tile_eff);
    opm_diag_num(p, "wave_efficiency", e->wave_eff);
    put_phase_tail(p, e);
}

/* grouped_gemm: the groups with rows; conv: the first implicit GEMM's
 * M, N, K (per group) and every one, "dgrad 6272x64x576 g2 + wgrad ...". */
void opm_gemm_put_extra_diags(opm_profile *p, const gemm_extra *x)
{
    if (x->groups_active > 0) opm_diag_num(p, "groups_active", x->groups_active);
    if (x->quant_s > 0) opm_diag_num(p, "activation_quant_s", x->quant_s);
    if (!x->conv_n) return;
    opm_diag_num(p, "implicit_gemm_m", x->conv_pb[0].m);
    opm_diag_num(p, "implicit_gemm_n", x->conv_pb[0].n);
    opm_diag_num(p, "implicit_gemm_k", x->conv_pb[0].k);
    char buf[64];
    size_t pos = 0;
    buf[0] = '\0';
    for (int i = 0; i < x->conv_n; i++) {
        const gemm_problem *pb = &x->conv_pb[i];
        if (i) put_str(buf, sizeof buf, &pos, " + ");
        put_str(buf, sizeof buf, &pos, opm_gemm_conv_names[x->conv_which[i]]);
        put_str(buf, sizeof buf, &pos, " ");
        put_int(buf, sizeof buf, &pos, (int)mind(pb->m, 2e9));
        put_str(buf, sizeof buf, &pos, "x");
        put_int(buf, sizeof buf, &pos, (int)mind(pb->n, 2e9));
        put_str(buf, sizeof buf, &pos, "x");
        put_int(buf, sizeof buf, &pos, (int)mind(ceil(pb->k), 2e9));
        if (pb->batch > 1) {
            put_str(buf, sizeof buf, &pos, " g");
            put_int(buf, sizeof buf, &pos, (int)mind(pb->batch, 2e9));
        }
    }
    opm_diag_text(p, "implicit_gemms", buf);
}

void opm_gemm_put_findings(opm_profile *p, const gemm_eval *e)
{
    char findings[OPM_DIAG_TEXT_BYTES] = "";
    size_t fl = 0;
    /* dram_activations: row activations, not bytes, set the DRAM read
     * time.  The text holds 63 bytes: findings that do not fit are left
     * out, so the ones about what limits the kernel come first. */
    const char *f[6] = {e->power_limited ? "power_capped" : NULL,
                        e->act_bound ? "dram_activations" : NULL,
                        e->waves >= 1 && e->wave_eff < 0.75 ? "wave_quantization" : NULL,
                        e->tile_eff < 0.8 ? "edge_tile_waste" : NULL,
                        e->exposed_latency ? "exposed_latency" : NULL,
                        e->ctas_per_sm * e->kern.warps < 2 * WARPS_FOR_PEAK ? "low_occupancy" : NULL};
    for (int i = 0; i < 6; i++)
        if (f[i] && fl + (fl > 0) + strlen(f[i]) < sizeof findings) {
            if (fl) put_str(findings, sizeof findings, &fl, ",");
            put_str(findings, sizeof findings, &fl, f[i]);
        }
    if (fl) opm_diag_text_block(p, "findings", findings); /* initialised throughout: = "" */
    else opm_diag_text_lit(p, "findings", "none");
}
