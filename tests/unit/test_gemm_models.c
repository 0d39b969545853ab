/* test_gemm_models.c — the tile-aware GEMM models (extended_roofline,
 * effective_roofline) and the GEMM latency validation: hand-checked tiling,
 * occupancy and waves; SIMT waves past the L2 streaming their K-contiguous
 * panels per CTA; DRAM writes at the write efficiency; DRAM row
 * activations; batched GEMMs never split K unless told;
 * hints honoured; automatic selection never worse
 * than a catalog tile given as hints; monotonicity; never below the
 * roofline's compute/memory floor (the models overlap compute with memory
 * but never beat either); kernel-name parsing; and validation on the
 * fixture in tests/data/gemm/ with answers recomputed here; the power cap
 * (exact energy over budget, the overhead's idle credit); fp16 SIMT GEMMs
 * at the fp32 rate; effective_roofline's rate, occupancy and tie
 * diagnostics; grouped_gemm (one group is the GEMM, equal groups vs
 * batched_gemm, edge tiles per group) and conv as implicit GEMM (1×1 is the
 * GEMM, monotone in batch, backward above forward, depthwise fallback),
 * never below the roofline, their diagnostics; the clock_mhz column;
 * leave-one-hardware-out; and loose bounds on the held-out accuracy over
 * the shipped data/gemm. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "models/gemm_tiled.h"
#include "testutil.h"
#include "validate/gemm_latency.h"

static const char *const both_models[2] = {"extended_roofline", "effective_roofline"};


static opm_op *gemm(int64_t batch, int64_t m, int64_t n, int64_t k, opm_dtype dt)
{
    opm_error err;
    opm_op *op = batch > 1 ? opm_op_batched_gemm(batch, m, n, k, dt, &err) : opm_op_gemm(m, n, k, dt, &err);
    cr_assert_not_null(op, "%s", err.message);
    return op;
}

static void set_tile(opm_op *op, int tm, int tn, int tk, int warps, int wm, int wn, int split)
{
    cr_assert_eq(opm_op_set_int(op, "cta_tile_m", tm, NULL), 0);
    cr_assert_eq(opm_op_set_int(op, "cta_tile_n", tn, NULL), 0);
    cr_assert_eq(opm_op_set_int(op, "cta_tile_k", tk, NULL), 0);
    cr_assert_eq(opm_op_set_int(op, "warps_per_cta", warps, NULL), 0);
    cr_assert_eq(opm_op_set_int(op, "warp_tile_m", wm, NULL), 0);
    cr_assert_eq(opm_op_set_int(op, "warp_tile_n", wn, NULL), 0);
    if (split) cr_assert_eq(opm_op_set_int(op, "split_k", split, NULL), 0);
}

static const char *diag_text(const opm_profile *p, const char *key)
{
    const opm_diag *d = opm_profile_diag(p, key);
    cr_assert_not_null(d, "no diagnostic %s", key);
    return d->text;
}

/* The findings diagnostic names finding f. */
static int has_finding(const opm_profile *p, const char *f)
{
    return strstr(diag_text(p, "findings"), f) != NULL;
}

static double diag_num(const opm_profile *p, const char *key)
{
    const opm_diag *d = opm_profile_diag(p, key);
    cr_assert_not_null(d, "no diagnostic %s", key);
    return d->number;
}

Test(gemm_models, registered)
{
    cr_assert_not_null(opm_model_find("extended_roofline"));
    cr_assert_not_null(opm_model_find("effective_roofline"));
}

/* A100 fp32 (SIMT): 1000×1000×512 with a 128×128×8 tile of 8 warps.
 * tiles 8×8 = 64; registers 256 threads × 128 = 32768 → 2 CTAs/SM (warps
 * 64/8 = 8, smem 2·256·8·4 = 16 KiB → 10, CTAs 32), so 216 slots: one
 * partial wave of 64 tiles, wave efficiency 64/216; tile efficiency
 * 1000²·512 / (1024²·512). */
Test(gemm_models, tiling_hand_checked)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    gemm_hw h;
    cr_assert_eq(opm_gemm_hw(hw, OPM_FP32, &h, NULL), 0);
    cr_assert_eq(h.tensor, 0, "fp32 without tf32 runs on the SIMT path");
    cr_assert_float_eq(h.flops_per_s_sm, 19.5e12 / 108, 1);
    gemm_problem pb = {.batch = 1, .m = 1000, .n = 1000, .k = 512, .b_mats = 1, .a_bytes = 4, .b_bytes = 4, .c_bytes = 4};
    gemm_kernel k = {"t", 128, 128, 8, 32, 64, 1, 1, 1, 2, 8, 128, 1, 0, 0, 1, 0, 0};
    gemm_eval e;
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 1);
    cr_assert_eq(e.tiles_m, 8);
    cr_assert_eq(e.tiles_n, 8);
    cr_assert_eq(e.tiles, 64);
    cr_assert_eq(e.ctas_per_sm, 2);
    cr_assert_str_eq(e.occ_limit, "registers");
    cr_assert_eq(e.slots, 216);
    cr_assert_eq(e.full_waves, 0);
    cr_assert_eq(e.tail_tiles, 64);
    cr_assert_eq(e.waves, 1);
    cr_assert_float_eq(e.wave_eff, 64.0 / 216, 1e-12);
    cr_assert_float_eq(e.tile_eff, 1000.0 * 1000 / (1024.0 * 1024), 1e-12);
    cr_assert_eq(e.kiters, 64);
    /* A read once per tile column, B once per tile row. */
    cr_assert_float_eq(e.l2_read, 8 * 1000.0 * 512 * 4 + 8 * 512.0 * 1000 * 4, 1);
    /* 4 MB of operands fit half of the 40 MiB L2: DRAM reads them once. */
    cr_assert_float_eq(e.dram_read, (1000.0 * 512 + 512.0 * 1000) * 4, 1);
    cr_assert_float_eq(e.dram_write, 1000.0 * 1000 * 4, 1);

    /* Batch 100 × 300×200 with split-K 2: 3·2 tiles per matrix per split
     * = 1200 tiles = 5 full waves of 216 + a tail of 120. */
    gemm_problem pb2 = {.batch = 100, .m = 300, .n = 200, .k = 64, .b_mats = 100, .a_bytes = 4, .b_bytes = 4, .c_bytes = 4};
    k.split_k = 2;
    cr_assert_eq(opm_gemm_setup(&pb2, &h, &k, &e), 1);
    cr_assert_eq(e.tiles, 1200);
    cr_assert_eq(e.full_waves, 5);
    cr_assert_eq(e.tail_tiles, 120);
    cr_assert_eq(e.waves, 6);
    cr_assert_eq(e.kiters, 4);
    opm_hardware_free(hw);
}

/* Past the usable L2, a SIMT wave streams every K-contiguous operand's
 * panels CTA by CTA; an operand stored M- or N-contiguous keeps the
 * sharing, and a tensor-core wave keeps it for both.  Hand-checked on the
 * P100 and the A100. */
Test(gemm_models, simt_waves_past_l2_stream_own_panels)
{
    opm_hardware *p100 = builtin_hw("p100_pcie_16gb"), *a100 = builtin_hw("a100_40gb_pcie");
    gemm_hw h;
    gemm_eval e;
    cr_assert_eq(opm_gemm_hw(p100, OPM_FP32, &h, NULL), 0);
    cr_assert_eq(h.tensor, 0);
    /* x · Wᵀ (transpose_b): both operands K-contiguous. */
    gemm_problem pb = {.batch = 1, .m = 4096, .n = 4096, .k = 16384, .b_mats = 1, .a_bytes = 4, .b_bytes = 4, .c_bytes = 4,
                       .trans_b = 1};
    gemm_kernel k = {"t", 64, 64, 8, 32, 64, 1, 1, 1, 2, 2, 128, 1, 0, 0, 1, 0, 0};
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 1);
    /* A read once per tile column, B once per tile row: 64 × (64 + 64) MiB. */
    const double panel_all = 64 * 4096.0 * 16384 * 4;
    cr_assert_float_eq(e.l2_read, 2 * panel_all, 1);
    cr_assert_float_eq(e.dram_read, e.l2_read, 1, "every CTA streams its own panels");

    /* Row-major B (N-contiguous): A still streams per CTA, B keeps the
     * sharing of one wave: 56 SMs × 8 CTAs = 448 tiles, 7 tile rows of 64
     * columns, so each wave reads 64 B column panels: 2.29 waves × 64 ×
     * 64 columns × 16384 × 4 B, at least B once. */
    pb.trans_b = 0;
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 1);
    cr_assert_eq(e.slots, 448);
    double b_wave = e.full_waves * 4096.0 * 16384 * 4 + fmin(e.tail_tiles, 64) * 64 * 16384 * 4.0;
    cr_assert_float_eq(e.dram_read, panel_all + b_wave, 1, "dram %g", e.dram_read);
    cr_assert(e.dram_read < 0.6 * e.l2_read);

    /* transpose_a (A M-contiguous) and row-major B: both shared. */
    pb.trans_a = 1;
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 1);
    cr_assert(e.dram_read < 0.2 * e.l2_read, "dram %g vs l2 %g", e.dram_read, e.l2_read);
    pb.trans_a = 0;
    pb.trans_b = 1;

    /* The same tile on a problem whose operands fit half the 4 MB L2: first touch. */
    gemm_problem small = {.batch = 1, .m = 512, .n = 512, .k = 256, .b_mats = 1, .a_bytes = 4, .b_bytes = 4, .c_bytes = 4};
    cr_assert_eq(opm_gemm_setup(&small, &h, &k, &e), 1);
    cr_assert_float_eq(e.dram_read, 2 * 512.0 * 256 * 4, 1);

    /* A100 fp16 runs on tensor cores: the wave still shares its panels. */
    cr_assert_eq(opm_gemm_hw(a100, OPM_FP16, &h, NULL), 0);
    cr_assert_eq(h.tensor, 1);
    pb.a_bytes = pb.b_bytes = pb.c_bytes = 2;
    pb.k = 65536;
    gemm_kernel kt = {"t", 128, 128, 32, 64, 64, 16, 8, 16, 3, 4, 168, 1, 0, 0, 1, 0, 0};
    cr_assert_eq(opm_gemm_setup(&pb, &h, &kt, &e), 1);
    cr_assert(e.dram_read < 0.5 * e.l2_read, "dram %g vs l2 %g", e.dram_read, e.l2_read);
    opm_hardware_free(p100);
    opm_hardware_free(a100);
}

/* DRAM row activations, hand-checked on the A100 (fp32, SIMT): a skinny
 * GEMM whose A is K-contiguous reads, per K step, a 32-byte piece of rows
 * 32 KiB apart, each opening its own DRAM row at DRAM_ACT_BYTES of the
 * datasheet rate; B (16 columns, N-contiguous) is 64-byte rows packed 16
 * to a DRAM page.  Stored M-contiguous (transpose_a), A's pieces are the
 * tile's 64 rows: 256 bytes, and bandwidth, not activations, binds. */
Test(gemm_models, dram_row_activations)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    gemm_hw h;
    gemm_eval e;
    cr_assert_eq(opm_gemm_hw(hw, OPM_FP32, &h, NULL), 0);
    cr_assert_float_eq(h.hbm_act_s, DRAM_ACT_BYTES / 1555e9, 1e-24);
    gemm_problem pb = {.batch = 1, .m = 4096, .n = 16, .k = 8192, .b_mats = 1, .a_bytes = 4, .b_bytes = 4, .c_bytes = 4};
    gemm_kernel k = {"t", 64, 64, 8, 32, 64, 1, 1, 1, 2, 2, 128, 1, 0, 0, 1, 0, 0};
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 1);
    const double a_all = 4096.0 * 8192 * 4, b_all = 16.0 * 8192 * 4;
    cr_assert_float_eq(e.dram_read, a_all + b_all, 1, "one tile column: A and B read once");
    cr_assert_float_eq(e.dram_acts, a_all / 32 + b_all / 1024, 1e-6);
    double a_act = a_all / 32 * h.hbm_act_s * h.hbm_bw;
    cr_assert(a_act > a_all);
    cr_assert_float_eq(e.dram_read_eq, a_act + b_all, 1);

    pb.trans_a = 1;
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 1);
    cr_assert_float_eq(e.dram_acts, a_all / 256 + b_all / 1024, 1e-6);
    cr_assert_float_eq(e.dram_read_eq, e.dram_read, 1);

    /* Through the models, a 65536×64×4096 GEMM on the same tile: it takes
     * at least its A activations' time and says so; with A stored
     * M-contiguous it is faster and does not. */
    const double a_big = 65536.0 * 4096 * 4, b_big = 64.0 * 4096 * 4;
    for (int mi = 0; mi < 2; mi++) {
        opm_op *op = gemm(1, 65536, 64, 4096, OPM_FP32);
        set_tile(op, 64, 64, 8, 2, 32, 64, 1);
        opm_op *opt = op_json("{\"kind\": \"gemm\", \"m\": 65536, \"n\": 64, \"k\": 4096, \"dtype\": \"fp32\","
                               " \"transpose_a\": true}");
        set_tile(opt, 64, 64, 8, 2, 32, 64, 1);
        opm_profile p = predict_ok(both_models[mi], op, hw);
        cr_assert_geq(p.latency_s, a_big / 32 * DRAM_ACT_BYTES / 1555e9, "%s", both_models[mi]);
        cr_assert(has_finding(&p, "dram_activations"), "%s: %s", both_models[mi],
                  diag_text(&p, "findings"));
        cr_assert_float_eq(diag_num(&p, "dram_row_activations"), a_big / 32 + b_big / 1024, 1e-3);
        opm_profile q = predict_ok(both_models[mi], opt, hw);
        cr_assert_lt(q.latency_s, p.latency_s, "%s", both_models[mi]);
        cr_assert(!has_finding(&q, "dram_activations"), "%s: %s", both_models[mi],
                  diag_text(&q, "findings"));
        opm_op_free(op);
        opm_op_free(opt);
    }
    opm_hardware_free(hw);
}

/* DRAM writes run at DRAM_WRITE_EFF of the reached read bandwidth: a
 * store-bound batched GEMM on the T4 (64×64 outputs, K = 8) whose tiles
 * fill whole waves, so every wave's stores go to DRAM.  (effective_roofline
 * reports no DRAM time; it takes its store time from the same hbm_write_bw.) */
Test(gemm_models, dram_writes_at_write_efficiency)
{
    opm_hardware *hw = builtin_hw("t4");
    opm_op *op = gemm(1920, 64, 64, 8, OPM_FP32);
    set_tile(op, 64, 64, 8, 2, 32, 64, 1);
    const double bw = 320e9 * 0.69;
    {
        opm_profile p = predict_ok("extended_roofline", op, hw);
        cr_assert_eq(diag_num(&p, "tiles"), 1920);
        double tiles_per_wave = 40 * diag_num(&p, "ctas_per_sm");
        cr_assert_float_eq(fmod(1920, tiles_per_wave), 0, 1e-9, "whole waves");
        const opm_level_access *d = &p.levels[p.level_count - 1];
        cr_assert_str_eq(d->name, "hbm");
        cr_assert_eq(d->write_bytes, 1920ull * 64 * 64 * 4);
        double want = d->read_bytes / bw + d->write_bytes / (bw * DRAM_WRITE_EFF);
        cr_assert_float_eq(diag_num(&p, "dram_time_s"), want, want * 1e-9, "%s: %g vs %g", p.model,
                           diag_num(&p, "dram_time_s"), want);
    }
    opm_op_free(op);
    opm_hardware_free(hw);
}

Test(gemm_models, occupancy_limits)
{
    opm_hardware *hw = builtin_hw("t4");
    gemm_hw h;
    cr_assert_eq(opm_gemm_hw(hw, OPM_FP16, &h, NULL), 0);
    cr_assert_eq(h.tensor, 1);
    gemm_problem pb = {.batch = 1, .m = 4096, .n = 4096, .k = 4096, .b_mats = 1, .a_bytes = 2, .b_bytes = 2, .c_bytes = 2};
    /* 256×128×32 fp16, 3 stages: 3·384·32·2 = 72 KiB > the T4's 64 KiB. */
    gemm_kernel k = {"t", 256, 128, 32, 64, 64, 16, 8, 8, 3, 8, 128, 1, 0, 0, 1, 0, 0};
    gemm_eval e;
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 0, "a CTA that does not fit is rejected");
    k.stages = 2; /* 48 KiB: one CTA; warps 32/8 = 4, registers 65536/(256·128) = 2 */
    cr_assert_eq(opm_gemm_setup(&pb, &h, &k, &e), 1);
    cr_assert_eq(e.ctas_per_sm, 1);
    cr_assert_str_eq(e.occ_limit, "shared_memory");
    opm_hardware_free(hw);
}

/* Warp-level MMA: no tile smaller than the largest that fills the SMs
 * (4096x1024: 256x128 gives 128 tiles on 108 SMs, where three co-resident
 * 128x64 CTAs timed as fast); a problem no tile fills keeps the sweep and
 * its split-K. */
Test(gemm_models, mma_sync_tile_fills_the_sms)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_op *big = gemm(1, 4096, 1024, 1024, OPM_BF16), *tiny = gemm(1, 256, 256, 16384, OPM_BF16);
    for (int i = 0; i < 2; i++) {
        opm_profile p = predict_ok(both_models[i], big, hw);
        cr_assert_eq(diag_num(&p, "tiles"), 128, "%s: %s", both_models[i], diag_text(&p, "kernel"));
        cr_assert_eq(diag_num(&p, "ctas_per_sm"), 1);
        opm_profile q = predict_ok(both_models[i], tiny, hw);
        cr_assert_gt(diag_num(&q, "split_k"), 1, "%s: %s", both_models[i], diag_text(&q, "kernel"));
    }
    opm_op_free(big);
    opm_op_free(tiny);
    opm_hardware_free(hw);
}

Test(gemm_models, hints_honoured)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_op *op = gemm(1, 2048, 1024, 4096, OPM_FP32);
    set_tile(op, 64, 32, 16, 4, 32, 16, 2);
    cr_assert_eq(opm_op_set_int(op, "pipeline_stages", 3, NULL), 0);
    for (int i = 0; i < 2; i++) {
        opm_profile p = predict_ok(i ? "effective_roofline" : "extended_roofline", op, hw);
        cr_assert_str_eq(diag_text(&p, "tile"), "64x32x16");
        cr_assert_eq(diag_num(&p, "split_k"), 2);
        cr_assert_eq(diag_num(&p, "pipeline_stages"), 3);
        cr_assert_eq(diag_num(&p, "warps_per_cta"), 4);
        cr_assert_eq(diag_num(&p, "tiles"), 32 * 32 * 2);
        cr_assert(strstr(diag_text(&p, "kernel"), "hinted_64x32x16") != NULL);
    }
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* Automatic selection returns the lowest latency of its catalog: never
 * above any catalog SIMT tile given as hints (same defaults). */
Test(gemm_models, selection_picks_best)
{
    static const int tiles[][6] = {{128, 128, 8, 8, 32, 64}, {128, 64, 8, 4, 64, 32}, {64, 64, 8, 2, 32, 64},
                                   {128, 32, 8, 2, 64, 32},  {32, 128, 8, 2, 32, 64}};
    static const int64_t shapes[][4] = {{1, 4096, 4096, 4096}, {1, 64, 8192, 512}, {32, 128, 96, 700}, {1, 17, 33, 100000}};
    opm_hardware *hw = builtin_hw("v100_pcie_32gb");
    const char *models[2] = {"extended_roofline", "effective_roofline"};
    for (int mi = 0; mi < 2; mi++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            opm_op *op = gemm(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], OPM_FP32);
            opm_profile best = predict_ok(models[mi], op, hw);
            cr_assert(strncmp(diag_text(&best, "kernel"), "sgemm_", 6) == 0, "%s", diag_text(&best, "kernel"));
            for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
                opm_op *h = opm_op_clone(op, NULL);
                set_tile(h, tiles[t][0], tiles[t][1], tiles[t][2], tiles[t][3], tiles[t][4], tiles[t][5], 1);
                opm_profile p = predict_ok(models[mi], h, hw);
                cr_assert(best.latency_s <= p.latency_s * (1 + 1e-12), "%s %zu: auto %g > tile %zu %g", models[mi], s,
                          best.latency_s, t, p.latency_s);
                opm_op_free(h);
            }
            opm_op_free(op);
        }
    opm_hardware_free(hw);
}

Test(gemm_models, monotone_in_size)
{
    const char *hws[3] = {"a100_40gb_pcie", "h100_sxm", "t4"};
    const opm_dtype dts[3] = {OPM_FP32, OPM_BF16, OPM_FP16};
    const char *models[2] = {"extended_roofline", "effective_roofline"};
    for (int i = 0; i < 3; i++) {
        opm_hardware *hw = builtin_hw(hws[i]);
        for (int mi = 0; mi < 2; mi++) {
            double prev_k = 0, prev_all = 0;
            for (int64_t s = 64; s <= 16384; s *= 2) {
                opm_op *a = gemm(1, 1024, 1024, s, dts[i]);
                opm_op *b = gemm(1, s, s, s, dts[i]);
                double lk = predict_ok(models[mi], a, hw).latency_s, la = predict_ok(models[mi], b, hw).latency_s;
                cr_assert(lk >= prev_k * 0.98, "%s %s: K=%lld %g < %g", hws[i], models[mi], (long long)s, lk, prev_k);
                cr_assert(la > prev_all, "%s %s: %lld^3 %g <= %g", hws[i], models[mi], (long long)s, la, prev_all);
                prev_k = lk;
                prev_all = la;
                opm_op_free(a);
                opm_op_free(b);
            }
        }
        opm_hardware_free(hw);
    }
}

/* The floor: overlap hides the shorter of compute and memory, never the
 * longer, so no prediction is below the roofline's max(compute, DRAM) —
 * except that the last wave's output may stay in the write-back L2 when
 * the kernel ends: at most min(output, L2 size) / reached DRAM bandwidth
 * less. */
Test(gemm_models, never_below_roofline_floor)
{
    const char *hws[5] = {"a100_40gb_pcie", "h100_sxm", "mi300x", "tpu_v5e", "t4"};
    const opm_dtype dts[5] = {OPM_FP32, OPM_FP8_E4M3, OPM_BF16, OPM_BF16, OPM_FP16};
    static const int64_t shapes[][4] = {{1, 1, 4096, 4096},  {1, 8, 8192, 8192},  {1, 4096, 4096, 4096},
                                        {64, 128, 128, 64},  {1, 333, 777, 91},   {1, 16384, 64, 16384},
                                        {8, 2048, 2048, 32}, {1, 100, 100, 1000000}};
    for (int i = 0; i < 5; i++) {
        opm_hardware *hw = builtin_hw(hws[i]);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            opm_op *op = gemm(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], dts[i]);
            opm_profile r = predict_ok("roofline", op, hw);
            const opm_memory_level *l2 = opm_hardware_find_level(hw, "l2");
            double l2_size = l2 ? l2->size_bytes : 0;
            const opm_memory_level *hbm = opm_hardware_find_level(hw, "hbm");
            double allow = fmin((double)r.output_bytes, l2_size) / (hbm->bandwidth_bytes_per_s * hbm->utilization);
            double floor_s = fmax(r.compute_time_s, diag_num(&r, "memory_time_s") - allow);
            for (int mi = 0; mi < 2; mi++) {
                opm_profile p = predict_ok(mi ? "effective_roofline" : "extended_roofline", op, hw);
                cr_assert(p.latency_s >= floor_s * (1 - 1e-9), "%s shape %zu: %g < floor %g", hws[i], s, p.latency_s,
                          floor_s);
                cr_assert_eq(p.flops, r.flops);
                cr_assert(p.energy_j >= 0 && (r.energy_j <= 0 || p.energy_j > 0));
                cr_assert_eq(p.level_count, r.level_count);
            }
            opm_op_free(op);
        }
        opm_hardware_free(hw);
    }
}

Test(gemm_models, backward_and_fallback)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *op = gemm(1, 4096, 4096, 4096, OPM_BF16);
    double fwd = predict_ok("extended_roofline", op, hw).latency_s;
    opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD);
    double bwd = predict_ok("extended_roofline", op, hw).latency_s;
    cr_assert(bwd > 1.8 * fwd && bwd < 2.5 * fwd, "bwd %g fwd %g", bwd, fwd);
    opm_op_free(op);
    int64_t shape[2] = {4096, 4096};
    opm_op *ew = opm_op_elementwise(shape, 2, 2, 1, OPM_BF16, NULL);
    cr_assert_not_null(ew);
    /* Elementwise has a streaming-kernel model now: not the roofline's
     * answer, never faster than its bytes at the reached bandwidth. */
    opm_profile a = predict_ok("roofline", ew, hw), b = predict_ok("extended_roofline", ew, hw);
    cr_assert_null(opm_profile_diag(&b, "fallback"));
    cr_assert_not_null(opm_profile_diag(&b, "kernel"));
    cr_assert_geq(b.latency_s, a.latency_s * 0.999);
    cr_assert_str_eq(b.model, "extended_roofline");
    opm_op_free(ew);
    opm_hardware_free(hw);
}

Test(gemm_models, fixed_overhead_from_hardware)
{
    char yaml[] = "name: oh\nkind: gpu\ncompute:\n  clock_hz: 1.0e9\n  num_sms: 10\n"
                  "  device_fixed_overhead_cycles: 5000\n  vector_flops_per_s: {fp32: 1.0e13}\n"
                  "memory:\n  levels:\n    - {name: hbm, size_bytes: 1.0e10, bandwidth_bytes_per_s: 1.0e12}\n";
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string(yaml, strlen(yaml), "oh", &err);
    cr_assert_not_null(hw, "%s", err.message);
    opm_op *op = gemm(1, 1, 1, 1, OPM_FP32);
    opm_profile p = predict_ok("extended_roofline", op, hw);
    cr_assert_float_eq(p.overhead_s, 5e-6, 1e-15);
    cr_assert_str_eq(diag_text(&p, "limiting_resource"), "fixed_overhead_limited");
    cr_assert_eq(p.bound, OPM_BOUND_OVERHEAD);
    opm_op_free(op);
    opm_hardware_free(hw);
}

Test(gemm_models, size_classes)
{
    cr_assert_eq(opm_gemm_size_class(1, 1, 4096, 4096), GC_VECTOR_LIKE);
    cr_assert_eq(opm_gemm_size_class(1, 64, 64, 100000), GC_SMALL);
    cr_assert_eq(opm_gemm_size_class(1, 16, 4096, 1024), GC_SKINNY);
    cr_assert_eq(opm_gemm_size_class(3, 256, 256, 16), GC_SMALL_K);
    cr_assert_eq(opm_gemm_size_class(1, 1024, 1024, 64), GC_LARGE);
    cr_assert_eq(opm_gemm_size_class(5000, 512, 512, 512), GC_LARGE);
    cr_assert_eq(opm_gemm_size_class(1, 512, 512, 512), GC_REGULAR);
}

Test(gemm_models, kernel_names)
{
    opm_gemm_row r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(opm_gemm_parse_kernel("ampere_sgemm_128x64_tn", 0, &r), 1);
    cr_assert_eq(r.kern_tm, 64); /* cuBLAS's first number tiles our n */
    cr_assert_eq(r.kern_tn, 128);
    cr_assert_eq(r.kern_tk, 8);
    cr_assert_eq(r.kern_warps, 4);
    cr_assert_eq(r.kern_splitk, 0);
    cr_assert_eq(opm_gemm_parse_kernel("volta_sgemm_32x32_sliced1x4_nn+splitkreduce_kernel", 0, &r), 1);
    cr_assert_eq(r.kern_tk, 32);
    cr_assert_eq(r.kern_warps, 4);
    cr_assert_eq(r.kern_splitk, 1);
    cr_assert_eq(opm_gemm_parse_kernel("sgemm_32x32x32_NN", 0, &r), 1);
    cr_assert_eq(r.kern_tk, 32);
    cr_assert_eq(opm_gemm_parse_kernel("volta_h884gemm_128x128", 0, &r), 0);
}

/* Composable Kernel XDL instance names (aiter's labels) give BlockSize x
 * MPerBlock x NPerBlock x KPerBlock in CK's row-major terms, which are
 * ours: 256 threads are four 64-lane waves, and the pipeline is two deep.
 * Names without such a token, or whose first number is no block size, are
 * not kernels the parser knows. */
Test(gemm_models, ck_instance_names)
{
    opm_gemm_row r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(opm_gemm_parse_kernel("a8w8_blockscale:ck:256x16x64x256[e4m3fnuz]", 0, &r), 1);
    cr_assert_eq(r.kern_tm, 16);
    cr_assert_eq(r.kern_tn, 64);
    cr_assert_eq(r.kern_tk, 256);
    cr_assert_eq(r.kern_warps, 4);
    cr_assert_eq(r.kern_wm * r.kern_wn, 16 * 64 / 4);
    cr_assert_eq(r.kern_stages, 2);
    cr_assert_eq(opm_gemm_parse_kernel("bf16:64x16x16x64", 0, &r), 1);
    cr_assert_eq(r.kern_warps, 1);
    cr_assert_eq(r.kern_wm, 16);
    cr_assert_eq(r.kern_wn, 16);
    cr_assert_eq(opm_gemm_parse_kernel("a8w8_blockscale_1x128x128_256x128x128x128_16x16_32x32_intrawave_v3", 0, &r), 1);
    cr_assert_eq(r.kern_tm, 128);
    cr_assert_eq(r.kern_tk, 128);
    cr_assert_eq(r.kern_wm, 64);
    cr_assert_eq(r.kern_wn, 64);
    cr_assert_eq(opm_gemm_parse_kernel("a8w8_bpreshuffle:asm:16x128", 0, &r), 0);
    cr_assert_eq(r.kern_tm, 0);
    cr_assert_eq(opm_gemm_parse_kernel("gemm_100x16x64x256", 0, &r), 0);
    cr_assert_eq(opm_gemm_parse_kernel("x256x16x64x256x8", 0, &r), 0);
    cr_assert_eq(opm_gemm_parse_kernel("dynquant+cutlass_fp8_scaled_mm", 0, &r), 0);
    cr_assert_eq(r.kern_stages, 0);
}

/* The recorded launch block sets the warps and the warp tile: NeuSight's
 * volta_sgemm_128x32_nn runs 256 threads (4x4 outputs each), not the 64 of
 * 8x8 thread tiles; its 64x32 sliced1x4 kernel 8 warps, 2 per K slice.
 * Without a block size the name rule holds, and with the block an 8x8
 * kernel gets the same layout as from its name. */
Test(gemm_models, kernel_launch_block)
{
    opm_gemm_row r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(opm_gemm_parse_kernel("volta_sgemm_128x32_nn", 0, &r), 1);
    cr_assert_eq(r.kern_warps, 2);
    cr_assert_eq(r.kern_wm * r.kern_wn, 2048);
    cr_assert_eq(opm_gemm_parse_kernel("volta_sgemm_128x32_nn", 256, &r), 1);
    cr_assert_eq(r.kern_tm, 32);
    cr_assert_eq(r.kern_tn, 128);
    cr_assert_eq(r.kern_warps, 8);
    cr_assert_eq(r.kern_wm, 16);
    cr_assert_eq(r.kern_wn, 32);
    cr_assert_eq(opm_gemm_parse_kernel("ampere_sgemm_64x32_sliced1x4_tn", 256, &r), 1);
    cr_assert_eq(r.kern_tk, 32);
    cr_assert_eq(r.kern_warps, 8);
    cr_assert_eq(r.kern_wm, 32);
    cr_assert_eq(r.kern_wn, 32);
    cr_assert_eq(opm_gemm_parse_kernel("ampere_sgemm_128x128_nn", 256, &r), 1);
    cr_assert_eq(r.kern_warps, 8);
    cr_assert_eq(r.kern_wm, 32);
    cr_assert_eq(r.kern_wn, 64);
    /* Out of range: taken as not given. */
    cr_assert_eq(opm_gemm_parse_kernel("volta_sgemm_128x32_nn", 4096, &r), 1);
    cr_assert_eq(r.kern_warps, 2);
}

/* A sliced-K kernel's K slices are its warps over the warps that cover the
 * tile once: 8 warps of 32x32 on a 32x64 tile are 4 slices of 2, and each
 * warp then covers a quarter of the K tile (not an eighth). */
Test(gemm_models, sliced_kernel_slices)
{
    gemm_kernel k;
    memset(&k, 0, sizeof k);
    k.tm = 32, k.tn = 64, k.tk = 32, k.wm = 32, k.wn = 32, k.warps = 8, k.sliced = 1;
    cr_assert_float_eq(opm_gemm_slices(&k), 4.0, 1e-12);
    k.wm = 32, k.wn = 64, k.warps = 4;
    cr_assert_float_eq(opm_gemm_slices(&k), 4.0, 1e-12);
    k.wm = 16, k.wn = 32, k.warps = 4, k.sliced = 0;
    cr_assert_float_eq(opm_gemm_slices(&k), 1.0, 1e-12);
}

/* Validation on tests/data/gemm: 9 parseable rows, one of unknown hardware
 * and one bad.  Group "a100_40gb_pcie|test:a" has 4 small/vector_like rows
 * under the FLOP bound, so its 2 smallest calibrate the overhead (median of
 * measured − predicted); group "a100_40gb_pcie|" (sub/more.csv, no source)
 * has none and nothing to borrow, so it keeps the hardware's overhead, 0. */
Test(gemm_models, validate_fixture)
{
    char dir[512];
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(src_path("tests/data/gemm", dir, sizeof dir), &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.files, 2);
    cr_assert_eq(ds.n_rows, 8);
    cr_assert_eq(ds.rows_unknown_hw, 1);
    cr_assert_eq(ds.rows_bad, 1);
    cr_assert_eq(ds.n_groups, 2);
    double base[8];
    cr_assert_eq(opm_gemm_base_predictions(&ds, "roofline", 1, base, &err), 0, "%s", err.message);
    opm_gemm_validate_opts o = {"roofline", 1, -1, 0, 0};
    opm_gemm_validation v;
    cr_assert_eq(opm_gemm_validate(&ds, &o, base, &v, &err), 0, "%s", err.message);
    cr_assert_eq(v.calibration_rows, 2);
    cr_assert_eq(v.rows, 6);
    cr_assert_eq(v.rows_failed, 0);
    /* Files load in sorted path order: sub/more.csv (rows 0–1), then
     * tiny.csv (rows 2–7); its m=1 and m=2 rows calibrate. */
    cr_assert_eq(ds.rows[2].m, 1);
    cr_assert_eq(ds.rows[3].m, 2);
    cr_assert(v.is_cal[2] && v.is_cal[3] && !v.is_cal[4] && !v.is_cal[5] && !v.is_cal[0]);
    double oh = 0.5 * ((20e-6 - base[2]) + (21e-6 - base[3]));
    cr_assert_float_eq(v.group_overhead_s[ds.rows[2].group], oh, 1e-15);
    /* A group without calibration rows of its own keeps its hardware's fixed time. */
    const opm_hardware *t4 = ds.hw[ds.rows[0].hw];
    cr_assert_float_eq(v.group_overhead_s[ds.rows[0].group],
                       opm_hardware_fixed_overhead_cycles(t4) / opm_hardware_clock_hz(t4), 1e-18);
    /* MAPE over the held-out rows, recomputed. */
    double sum = 0, sum_log = 0;
    for (size_t i = 0; i < ds.n_rows; i++) {
        if (v.is_cal[i]) continue;
        double pred = base[i] + v.group_overhead_s[ds.rows[i].group];
        cr_assert_float_eq(v.pred_s[i], pred, 1e-15);
        sum += fabs(pred - ds.rows[i].latency_s) / ds.rows[i].latency_s * 100;
        sum_log += log(pred / ds.rows[i].latency_s);
    }
    cr_assert_float_eq(v.overall.mape, sum / 6, 1e-9);
    cr_assert_float_eq(v.overall.geomean_ratio, exp(sum_log / 6), 1e-9);
    cr_assert_eq(v.by_class[GC_LARGE].n, 1);
    cr_assert_eq(v.by_class[GC_SMALL].n, 2);
    cr_assert_eq(v.by_class[GC_SMALL_K].n, 1);
    cr_assert_eq(v.by_class[GC_SKINNY].n, 1);
    cr_assert_eq(v.by_class[GC_REGULAR].n, 1);
    opm_gemm_validation_free(&v);

    /* Without calibration every row is held out at the config's overhead. */
    o.calibrate = 0;
    cr_assert_eq(opm_gemm_validate(&ds, &o, base, &v, &err), 0);
    cr_assert_eq(v.calibration_rows, 0);
    cr_assert_eq(v.rows, 8);
    opm_gemm_validation_free(&v);

    /* The tile models run on every row. */
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 1, base, &err), 0);
    for (size_t i = 0; i < ds.n_rows; i++) cr_assert(base[i] > 0);
    opm_gemm_dataset_free(&ds);
}

Test(gemm_models, missing_dir_is_an_error)
{
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_neq(opm_gemm_dataset_load("/nonexistent/gemm", &ds, &err), 0);
    cr_assert(strstr(err.message, "/nonexistent/gemm") != NULL, "%s", err.message);
}

/* ---- the power cap ---- */

/* The built-in t4 with device_fixed_overhead_cycles added. */
static opm_hardware *t4_with_overhead(double cycles)
{
    const char *text = NULL;
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++)
        if (strcmp(opm_hardware_builtin_name(i), "t4") == 0) text = opm_hardware_builtin_text(i);
    cr_assert_not_null(text);
    /* The entry's own fixed time is replaced by `cycles`. */
    const char *own = strstr(text, "  device_fixed_overhead_cycles:");
    cr_assert_not_null(own);
    const char *own_end = strchr(own, '\n') + 1;
    char yaml[8192];
    int n = snprintf(yaml, sizeof yaml, "%.*s  device_fixed_overhead_cycles: %.1f\n%s", (int)(own - text), text,
                     cycles, own_end);
    cr_assert(n > 0 && (size_t)n < sizeof yaml);
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string(yaml, (size_t)n, "t4+overhead", &err);
    cr_assert_not_null(hw, "%s", err.message);
    return hw;
}

static double hbm_bytes(const opm_profile *p)
{
    for (size_t i = 0; i < p->level_count; i++)
        if (strcmp(p->levels[i].name, "hbm") == 0)
            return (double)p->levels[i].read_bytes + (double)p->levels[i].write_bytes;
    cr_assert_fail("no hbm level");
    return 0;
}

/* T4 fp32 4096³: the 70 W budget binds.  Every catalog tile divides 4096,
 * so the executed FLOPs are the op's, and the body is exactly the dynamic
 * energy (flops × 1.911e-11 J + DRAM bytes × 6.0e-11 J, t4.yaml) over
 * tdp_w = 70 W (no static power given). */
Test(gemm_models, power_cap_binds_on_t4)
{
    opm_hardware *hw = t4_with_overhead(0);
    opm_op *op = gemm(1, 4096, 4096, 4096, OPM_FP32);
    for (int mi = 0; mi < 2; mi++) {
        opm_profile p = predict_ok(mi ? "effective_roofline" : "extended_roofline", op, hw);
        cr_assert_str_eq(diag_text(&p, "limiting_resource"), "power_limited");
        cr_assert(has_finding(&p, "power_capped"));
        cr_assert_eq(p.bound, OPM_BOUND_COMPUTE);
        double energy = (double)p.flops * 1.911e-11 + hbm_bytes(&p) * 6.0e-11;
        cr_assert_float_eq(p.latency_s * 70, energy, energy * 1e-9);
        cr_assert_float_eq(diag_num(&p, "power_time_s"), p.latency_s, 1e-15);
        /* 3.66e12 FLOP/s at most: 45% of the 8.1 TF peak. */
        cr_assert(diag_num(&p, "achieved_flops_per_s") < 70 / 1.911e-11);
    }
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* The fixed overhead is idle time the budget credits: with 20 µs of it a
 * capped kernel's body is 20 µs shorter and its latency unchanged. */
Test(gemm_models, power_cap_credits_the_overhead)
{
    opm_hardware *plain = t4_with_overhead(0), *oh = t4_with_overhead(20e-6 * 1.59e9);
    opm_op *op = gemm(1, 4096, 4096, 4096, OPM_FP32);
    opm_profile a = predict_ok("extended_roofline", op, plain), b = predict_ok("extended_roofline", op, oh);
    cr_assert_float_eq(b.overhead_s, 20e-6, 1e-15);
    cr_assert_float_eq(b.latency_s, a.latency_s, a.latency_s * 1e-9);
    cr_assert_float_eq(diag_num(&b, "power_time_s"), diag_num(&a, "power_time_s") - 20e-6, 1e-12);
    /* A small kernel is far from the cap: only the overhead is added. */
    opm_op *small = gemm(1, 64, 64, 64, OPM_FP32);
    opm_profile c = predict_ok("extended_roofline", small, plain), d = predict_ok("extended_roofline", small, oh);
    cr_assert_neq(strcmp(diag_text(&c, "limiting_resource"), "power_limited"), 0);
    cr_assert_float_eq(d.latency_s, c.latency_s + 20e-6, 1e-12);
    opm_op_free(small);
    opm_op_free(op);
    opm_hardware_free(plain);
    opm_hardware_free(oh);
}

/* No cap without an energy per FLOP (v100_pcie_32gb; bf16 runs its SIMT
 * path), and none that binds for SIMT fp32 on the A100, whose fp32 energy
 * per FLOP is its TDP budget over its peak while sgemm reaches ~93% of it. */
Test(gemm_models, power_cap_absent_or_loose)
{
    opm_hardware *v100 = builtin_hw("v100_pcie_32gb"), *a100 = builtin_hw("a100_40gb_pcie");
    opm_op *op = gemm(1, 4096, 4096, 4096, OPM_BF16);
    opm_profile p = predict_ok("extended_roofline", op, v100);
    cr_assert_null(opm_profile_diag(&p, "power_time_s"));
    opm_op_free(op);
    op = gemm(1, 4096, 4096, 4096, OPM_FP32);
    p = predict_ok("extended_roofline", op, a100);
    cr_assert_not_null(opm_profile_diag(&p, "power_time_s"));
    cr_assert_neq(strcmp(diag_text(&p, "limiting_resource"), "power_limited"), 0);
    opm_op_free(op);
    opm_hardware_free(v100);
    opm_hardware_free(a100);
}

/* fp16 on a GPU without fp16 tensor cores (P100): the SIMT GEMM accumulates
 * in fp32, so it runs at the fp32 rate, not the half2 rate (18.7 TF). */
Test(gemm_models, simt_half_runs_at_fp32_rate)
{
    opm_hardware *hw = builtin_hw("p100_pcie_16gb");
    gemm_hw h;
    cr_assert_eq(opm_gemm_hw(hw, OPM_FP16, &h, NULL), 0);
    cr_assert_eq(h.tensor, 0);
    cr_assert_float_eq(h.flops_per_s_sm, 9.3e12 / 56, 1);
    opm_hardware_free(hw);
}

/* ---- effective_roofline diagnostics ---- */

/* Reads the "name value" pairs of a rates diagnostic ("math 11.6T l2 5.78T
 * dram 1.56T") in GEMM_RES_* order; shared memory, not reported, reads 0. */
static void rates_of(const char *text, double out[GEMM_RES_COUNT])
{
    static const char *const names[GEMM_RES_COUNT] = {"math", NULL, "l2", "dram"};
    static const char prefix[] = "kMGTPE";
    for (int r = 0; r < GEMM_RES_COUNT; r++) {
        out[r] = 0;
        if (!names[r]) continue;
        char key[16];
        snprintf(key, sizeof key, "%s ", names[r]);
        const char *at = strstr(text, key);
        cr_assert_not_null(at, "%s: no %s", text, names[r]);
        char *end;
        out[r] = strtod(at + strlen(key), &end);
        const char *pf = *end ? strchr(prefix, *end) : NULL;
        if (pf) out[r] *= pow(1000, (double)(pf - prefix + 1));
    }
}

/* A100 fp32 1000×1000×512, hinted 128×128×8 of 8 warps: 64 tiles, two CTAs
 * fit an SM (tiling_hand_checked), so the only wave is a tail of 64 tiles on
 * 64 SMs with one CTA each: 8 warps, two per scheduler.  Raw math rate =
 * the 64 busy SMs' peak.  Every effective rate is at most its raw one. */
Test(gemm_models, effective_diagnostics)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_op *op = gemm(1, 1000, 1000, 512, OPM_FP32);
    set_tile(op, 128, 128, 8, 8, 32, 64, 0);
    cr_assert_eq(opm_op_set_int(op, "split_k", 1, NULL), 0);
    opm_profile p = predict_ok("effective_roofline", op, hw);
    cr_assert_str_eq(diag_text(&p, "smsp_warps"), "tail 2,2,2,2");
    cr_assert_str_eq(diag_text(&p, "occupancy_class"), "latency_hiding");
    double raw[GEMM_RES_COUNT], eff[GEMM_RES_COUNT];
    rates_of(diag_text(&p, "raw_rates_per_s"), raw);
    rates_of(diag_text(&p, "effective_rates_per_s"), eff);
    /* math 19.5e12·64/108; L2 min(5120 B/clk · 1.41 GHz, 64 SMs · 64 B/clk
     * · 1.41 GHz); DRAM 1.555e12 × the 0.87 of it a copy kernel reaches. */
    cr_assert_str_eq(diag_text(&p, "raw_rates_per_s"), "math 11.6T l2 5.78T dram 1.35T");
    cr_assert_float_eq(raw[GEMM_RES_MATH], 19.5e12 * 64 / 108, 19.5e12 * 64 / 108 * 5e-3);
    const opm_memory_level *hbm = opm_hardware_find_level(hw, "hbm");
    cr_assert_float_eq(hbm->utilization, 0.87, 1e-12);
    cr_assert_float_eq(raw[GEMM_RES_DRAM], 1.555e12 * 0.87, 1.555e12 * 5e-3);
    for (int r = 0; r < GEMM_RES_COUNT; r++) cr_assert(eff[r] <= raw[r] * 1.001, "resource %d", r);
    /* SIMT: the FFMA share keeps the effective math rate below raw. */
    cr_assert(eff[GEMM_RES_MATH] < raw[GEMM_RES_MATH]);
    const char *tied = diag_text(&p, "tied_limits");
    cr_assert(strcmp(tied, "none") != 0);
    cr_assert_eq(strspn(tied, "computesmemldra2,"), strlen(tied), "%s", tied);
    opm_op_free(op);

    /* Two warps per CTA: two schedulers of each busy SM have none. */
    op = gemm(1, 256, 256, 512, OPM_FP32);
    set_tile(op, 64, 64, 8, 2, 32, 64, 0);
    cr_assert_eq(opm_op_set_int(op, "split_k", 1, NULL), 0);
    p = predict_ok("effective_roofline", op, hw);
    cr_assert_str_eq(diag_text(&p, "smsp_warps"), "tail 1,1,0,0");
    cr_assert_str_eq(diag_text(&p, "occupancy_class"), "idle_schedulers");

    /* 4096³ with the same 8-warp tile: 1024 tiles = 4 full waves of 216
     * (2 CTAs per SM: 16 warps, 4 per scheduler) and a tail of 160 tiles
     * (108 SMs, 2 CTAs on the busiest). */
    opm_op_free(op);
    op = gemm(1, 4096, 4096, 4096, OPM_FP32);
    set_tile(op, 128, 128, 8, 8, 32, 64, 0);
    cr_assert_eq(opm_op_set_int(op, "split_k", 1, NULL), 0);
    p = predict_ok("effective_roofline", op, hw);
    cr_assert_str_eq(diag_text(&p, "smsp_warps"), "full 4,4,4,4; tail 4,4,4,4");
    cr_assert_str_eq(diag_text(&p, "occupancy_class"), "latency_hiding");
    cr_assert_leq(p.diag_count, OPM_MAX_DIAGS);
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* ---- grouped_gemm and conv as implicit GEMM ---- */



/* grouped_gemm short form: G groups of m rows in total (split evenly). */
static opm_op *grouped(int64_t groups, int64_t m, int64_t n, int64_t k, const char *dtype)
{
    char json[256];
    snprintf(json, sizeof json,
             "{\"name\": \"g\", \"kind\": \"grouped_gemm\", \"groups\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld,"
             " \"dtype\": \"%s\"}",
             (long long)groups, (long long)m, (long long)n, (long long)k, dtype);
    return op_json(json);
}

/* conv short form: input [N, C_in, H, W], weight [C_out, C_in/g, kh, kw]
 * ([C_in, C_out/g, kh, kw] transposed) and extra attrs ("" for none). */
static opm_op *conv2d(int64_t n, int64_t cin, int64_t hw_, int64_t cout_or_w0, int64_t w1, int64_t kk,
                      const char *dtype, const char *attrs)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\": \"c\", \"kind\": \"conv\", \"input\": [%lld, %lld, %lld, %lld], \"weight\": [%lld, %lld, "
             "%lld, %lld], \"dtype\": \"%s\"%s%s}",
             (long long)n, (long long)cin, (long long)hw_, (long long)hw_, (long long)cout_or_w0, (long long)w1,
             (long long)kk, (long long)kk, dtype, attrs[0] ? ", " : "", attrs);
    return op_json(json);
}

static void assert_rel(double a, double b, double tol, const char *what)
{
    cr_assert(fabs(a - b) <= tol * fabs(b), "%s: %.17g vs %.17g", what, a, b);
}

/* One group is the GEMM: same tiles, traffic and kernel choice, forward
 * and backward; only groups_active is added to the diagnostics. */
Test(gemm_models, grouped_one_group_is_gemm)
{
    static const int64_t shapes[][3] = {{4096, 4096, 4096}, {333, 777, 91}, {16, 14336, 4096}, {8192, 256, 16384}};
    const char *hws[3] = {"h100_sxm", "a100_40gb_pcie", "t4"};
    for (int i = 0; i < 3; i++) {
        opm_hardware *hw = builtin_hw(hws[i]);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int ph = 0; ph < 2; ph++) {
                opm_op *g = grouped(1, shapes[s][0], shapes[s][1], shapes[s][2], "bf16");
                opm_op *m = gemm(1, shapes[s][0], shapes[s][1], shapes[s][2], OPM_BF16);
                if (ph) {
                    opm_op_set_phase(g, OPM_PHASE_TRAIN_BWD);
                    opm_op_set_phase(m, OPM_PHASE_TRAIN_BWD);
                }
                for (int mi = 0; mi < 2; mi++) {
                    opm_profile a = predict_ok(both_models[mi], g, hw), b = predict_ok(both_models[mi], m, hw);
                    assert_rel(a.latency_s, b.latency_s, 1e-9, both_models[mi]);
                    cr_assert_str_eq(diag_text(&a, "kernel"), diag_text(&b, "kernel"));
                    cr_assert_eq(diag_num(&a, "groups_active"), 1);
                    cr_assert_null(opm_profile_diag(&b, "groups_active"));
                }
                opm_op_free(g);
                opm_op_free(m);
            }
        opm_hardware_free(hw);
    }
}

/* Eight equal groups against a batched GEMM of eight (own weights each):
 * the same tiles and bytes, so the same latency while the operands fit
 * the usable L2.  The documented difference: beyond it, a wave of the
 * grouped kernel re-reads the weight panel of every group its tile rows
 * span, where batched_gemm charges one panel per wave, so grouped is
 * never faster and, on these shapes, at most 25% slower. */
Test(gemm_models, grouped_equal_groups_vs_batched)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    static const int64_t fit[][3] = {{512, 1024, 512}, {128, 4096, 256}, {1000, 300, 700}};
    static const int64_t spill[][3] = {{2048, 4096, 4096}, {512, 14336, 4096}};
    for (int mi = 0; mi < 2; mi++) {
        for (size_t s = 0; s < 3; s++) {
            opm_op *g = grouped(8, 8 * fit[s][0], fit[s][1], fit[s][2], "bf16");
            opm_op *b = gemm(8, fit[s][0], fit[s][1], fit[s][2], OPM_BF16);
            opm_profile pg = predict_ok(both_models[mi], g, hw), pbt = predict_ok(both_models[mi], b, hw);
            assert_rel(pg.latency_s, pbt.latency_s, 1e-9, "fits L2");
            cr_assert_eq(diag_num(&pg, "tiles"), diag_num(&pbt, "tiles"));
            cr_assert_eq(diag_num(&pg, "groups_active"), 8);
            opm_op_free(g);
            opm_op_free(b);
        }
        for (size_t s = 0; s < 2; s++) {
            opm_op *g = grouped(8, 8 * spill[s][0], spill[s][1], spill[s][2], "bf16");
            opm_op *b = gemm(8, spill[s][0], spill[s][1], spill[s][2], OPM_BF16);
            double lg = predict_ok(both_models[mi], g, hw).latency_s, lb = predict_ok(both_models[mi], b, hw).latency_s;
            cr_assert(lg >= lb * (1 - 1e-9) && lg <= 1.25 * lb, "spill %zu: grouped %g batched %g", s, lg, lb);
            opm_op_free(g);
            opm_op_free(b);
        }
    }
    opm_hardware_free(hw);
}

/* Uneven groups, hinted 128×128 tile: each group's last tile row is an
 * edge tile, empty groups have none.  group_m [100, 0, 300, 1], N = 256:
 * (1 + 0 + 3 + 1) tile rows × 2 tile columns = 10 tiles, 3 groups active;
 * tile efficiency 401·256 / (5·128 · 256). */
Test(gemm_models, grouped_edge_tiles_per_group)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_op *op = op_json("{\"name\": \"g\", \"kind\": \"grouped_gemm\", \"group_m\": [100, 0, 300, 1], \"n\": 256,"
                          " \"k\": 512, \"dtype\": \"bf16\", \"cta_tile_m\": 128, \"cta_tile_n\": 128,"
                          " \"cta_tile_k\": 32, \"split_k\": 1}");
    for (int mi = 0; mi < 2; mi++) {
        opm_profile p = predict_ok(both_models[mi], op, hw);
        cr_assert_eq(diag_num(&p, "tiles"), 10);
        cr_assert_eq(diag_num(&p, "groups_active"), 3);
        cr_assert_float_eq(diag_num(&p, "tile_efficiency"), 401.0 / 640, 1e-12);
    }
    /* The backward writes all four weight gradients: the empty group's
     * is zeroed, 512·256·2 bytes more DRAM writes than with no empty group. */
    opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD);
    opm_op *full = op_json("{\"name\": \"g\", \"kind\": \"grouped_gemm\", \"group_m\": [100, 300, 1], \"n\": 256,"
                            " \"k\": 512, \"dtype\": \"bf16\", \"cta_tile_m\": 128, \"cta_tile_n\": 128,"
                            " \"cta_tile_k\": 32, \"split_k\": 1}");
    opm_op_set_phase(full, OPM_PHASE_TRAIN_BWD);
    opm_profile a = predict_ok("extended_roofline", op, hw), b = predict_ok("extended_roofline", full, hw);
    cr_assert_float_eq(hbm_bytes(&a) - hbm_bytes(&b), 512.0 * 256 * 2, 1);
    cr_assert(a.latency_s > b.latency_s);
    opm_op_free(full);
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* A 1×1, stride-1 conv is the GEMM (N·H·W) × C_out × C_in: the same
 * matrices, with im2col the identity, so the same prediction (tolerance
 * 1e-9 relative: only the order of the byte sums differs). */
Test(gemm_models, conv_1x1_is_gemm)
{
    static const int64_t shapes[][4] = {{32, 256, 56, 64}, {8, 64, 28, 512}, {1, 2048, 7, 512}, {16, 3, 224, 64}};
    const char *hws[2] = {"h100_sxm", "v100_pcie_32gb"};
    for (int i = 0; i < 2; i++) {
        opm_hardware *hw = builtin_hw(hws[i]);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t n = shapes[s][0], cin = shapes[s][1], h = shapes[s][2], cout = shapes[s][3];
            opm_op *c = conv2d(n, cin, h, cout, cin, 1, "fp16", "");
            opm_op *m = gemm(1, n * h * h, cout, cin, OPM_FP16);
            for (int mi = 0; mi < 2; mi++) {
                opm_profile a = predict_ok(both_models[mi], c, hw), b = predict_ok(both_models[mi], m, hw);
                assert_rel(a.latency_s, b.latency_s, 1e-9, hws[i]);
                cr_assert_eq(diag_num(&a, "implicit_gemm_m"), (double)(n * h * h));
                cr_assert_eq(diag_num(&a, "implicit_gemm_n"), (double)cout);
                cr_assert_eq(diag_num(&a, "implicit_gemm_k"), (double)cin);
            }
            opm_op_free(c);
            opm_op_free(m);
        }
        opm_hardware_free(hw);
    }
}

/* 3×3 convs: monotone in the batch; the backward (dX and dW) costs more
 * than the forward, and dropping either gradient costs less. */
Test(gemm_models, conv_monotone_and_backward)
{
    const char *hws[3] = {"h100_sxm", "a100_40gb_pcie", "t4"};
    const char *dts[3] = {"bf16", "fp32", "fp16"};
    const char *attrs[3] = {"\"padding\": 1", "\"stride\": 2, \"padding\": 1, \"bias\": true",
                            "\"padding\": 1, \"groups\": 4"};
    for (int i = 0; i < 3; i++) {
        opm_hardware *hw = builtin_hw(hws[i]);
        for (int a = 0; a < 3; a++)
            for (int mi = 0; mi < 2; mi++) {
                double prev = 0;
                for (int64_t n = 1; n <= 256; n *= 2) {
                    opm_op *op = conv2d(n, 128, 28, 256, a == 2 ? 32 : 128, 3, dts[i], attrs[a]);
                    double fwd = predict_ok(both_models[mi], op, hw).latency_s;
                    cr_assert(fwd >= prev, "%s %s attrs %d N=%lld: %g < %g", hws[i], both_models[mi], a,
                              (long long)n, fwd, prev);
                    prev = fwd;
                    opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD);
                    opm_profile b = predict_ok(both_models[mi], op, hw);
                    cr_assert(b.latency_s > fwd, "%s N=%lld: bwd %g <= fwd %g", hws[i], (long long)n, b.latency_s, fwd);
                    cr_assert(strstr(diag_text(&b, "implicit_gemms"), "dgrad") != NULL);
                    cr_assert(strstr(diag_text(&b, "implicit_gemms"), "wgrad") != NULL);
                    cr_assert_eq(opm_op_set_bool(op, "grad_input", 0, NULL), 0);
                    double only_dw = predict_ok(both_models[mi], op, hw).latency_s;
                    cr_assert(only_dw < b.latency_s);
                    opm_op_free(op);
                }
                cr_assert(prev > 0);
            }
        opm_hardware_free(hw);
    }
}

/* The roofline is a bound: the GEMM models overlap compute with memory
 * but never beat either, for grouped GEMMs and convs too (forward,
 * backward, transposed, grouped convs), minus at most what the last
 * wave's output may leave in the write-back L2 (as never_below_roofline_floor). */
Test(gemm_models, grouped_and_conv_never_below_roofline)
{
    const char *hws[4] = {"h100_sxm", "a100_40gb_pcie", "mi300x", "t4"};
    const char *ops[] = {
        "{\"name\": \"a\", \"kind\": \"grouped_gemm\", \"groups\": 8, \"m\": 4096, \"n\": 14336, \"k\": 4096, \"dtype\": \"bf16\"}",
        "{\"name\": \"b\", \"kind\": \"grouped_gemm\", \"group_m\": [7, 0, 900, 33, 1, 0, 64, 2000], \"n\": 2048, \"k\": 7168, \"dtype\": \"bf16\"}",
        "{\"name\": \"c\", \"kind\": \"grouped_gemm\", \"groups\": 64, \"m\": 16, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\"}",
        "{\"name\": \"d\", \"kind\": \"conv\", \"input\": [32, 64, 56, 56], \"weight\": [64, 64, 3, 3], \"padding\": 1, \"dtype\": \"bf16\"}",
        "{\"name\": \"e\", \"kind\": \"conv\", \"input\": [10, 128, 28, 28], \"weight\": [256, 128, 3, 3], \"stride\": 2, \"padding\": 1, \"bias\": true, \"dtype\": \"bf16\"}",
        "{\"name\": \"f\", \"kind\": \"conv\", \"input\": [8, 64, 16, 16], \"weight\": [64, 32, 3, 3], \"transposed\": true, \"groups\": 4, \"stride\": 2, \"padding\": 1, \"output_padding\": 1, \"bias\": true, \"dtype\": \"fp16\"}",
        "{\"name\": \"g\", \"kind\": \"conv\", \"input\": [4, 16, 32, 64, 64], \"weight\": [32, 16, 3, 3, 3], \"padding\": 1, \"dilation\": 2, \"dtype\": \"fp32\"}",
        "{\"name\": \"h\", \"kind\": \"conv\", \"input\": [64, 256, 1000], \"weight\": [256, 64, 5], \"groups\": 4, \"padding\": 2, \"dtype\": \"bf16\"}",
        "{\"name\": \"i\", \"kind\": \"conv\", \"input\": [1, 3, 512, 512], \"weight\": [64, 3, 7, 7], \"stride\": 2, \"padding\": 3, \"dtype\": \"fp16\"}",
    };
    for (int i = 0; i < 4; i++) {
        opm_hardware *hw = builtin_hw(hws[i]);
        const opm_memory_level *l2 = opm_hardware_find_level(hw, "l2");
        double bw = opm_hardware_find_level(hw, "hbm")->bandwidth_bytes_per_s;
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (int ph = 0; ph < 2; ph++) {
                opm_op *op = op_json(ops[o]);
                if (ph) opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD);
                opm_profile r = predict_ok("roofline", op, hw);
                double allow = fmin((double)r.output_bytes, l2 ? l2->size_bytes : 0) / bw;
                double floor_s = fmax(r.compute_time_s, diag_num(&r, "memory_time_s") - allow) + r.overhead_s;
                for (int mi = 0; mi < 2; mi++) {
                    opm_profile p = predict_ok(both_models[mi], op, hw);
                    cr_assert(p.latency_s >= floor_s * (1 - 1e-9), "%s %s op %zu phase %d: %g < floor %g", hws[i],
                              both_models[mi], o, ph, p.latency_s, floor_s);
                    cr_assert_eq(p.flops, r.flops);
                    cr_assert_str_eq(p.model, both_models[mi]);
                    const char *kn = diag_text(&p, "kernel");
                    cr_assert(!strncmp(kn, "tensorop", 8) || !strncmp(kn, "sgemm", 5) || !strncmp(kn, "wgmma", 5) ||
                                  !strncmp(kn, "tcgen05", 7) || !strncmp(kn, "mfma", 4),
                              "%s", kn);
                }
                opm_op_free(op);
            }
        opm_hardware_free(hw);
    }
}

/* Every diagnostic of the GEMM path, plus groups_active or the implicit
 * GEMM's, within OPM_MAX_DIAGS; the profile JSON carries them all. */
Test(gemm_models, grouped_and_conv_diagnostics)
{
    static const char *const common[] = {"limiting_resource", "kernel", "tile", "split_k", "pipeline_stages",
                                         "warps_per_cta", "ctas_per_sm", "occupancy_limit", "tiles", "waves",
                                         "tile_efficiency", "wave_efficiency", "prologue_s", "epilogue_s",
                                         "overhead_s", "achieved_flops_per_s", "findings", "power_time_s"};
    static const char *const ext[] = {"l2_hit_ratio", "compute_time_s", "smem_time_s", "l2_time_s", "dram_time_s"};
    static const char *const eff[] = {"raw_rates_per_s", "effective_rates_per_s", "occupancy_class", "smsp_warps",
                                      "tied_limits"};
    static const char *const conv_keys[] = {"implicit_gemm_m", "implicit_gemm_n", "implicit_gemm_k", "implicit_gemms"};
    opm_hardware *hw = builtin_hw("t4"); /* has a power cap: power_time_s is present */
    opm_op *ops[2] = {grouped(8, 4096, 4096, 1024, "fp16"),
                      conv2d(16, 128, 28, 256, 128, 3, "fp16", "\"padding\": 1, \"bias\": true")};
    for (int o = 0; o < 2; o++)
        for (int ph = 0; ph < 2; ph++) {
            if (ph) opm_op_set_phase(ops[o], OPM_PHASE_TRAIN_BWD);
            for (int mi = 0; mi < 2; mi++) {
                opm_profile p = predict_ok(both_models[mi], ops[o], hw);
                for (size_t k = 0; k < sizeof common / sizeof common[0]; k++)
                    cr_assert_not_null(opm_profile_diag(&p, common[k]), "%s: no %s", both_models[mi], common[k]);
                for (size_t k = 0; k < 5; k++)
                    cr_assert_not_null(opm_profile_diag(&p, mi ? eff[k] : ext[k]), "no %s", mi ? eff[k] : ext[k]);
                for (size_t k = 0; k < 4; k++)
                    cr_assert_eq(opm_profile_diag(&p, conv_keys[k]) != NULL, o == 1, "%s", conv_keys[k]);
                cr_assert_eq(opm_profile_diag(&p, "groups_active") != NULL, o == 0);
                cr_assert_leq(p.diag_count, OPM_MAX_DIAGS);
                if (o) cr_assert_gt(p.diag_count, 24, "more than the old limit of 24 fit");
                opm_error err;
                char *json = opm_profile_to_json(&p, &err);
                cr_assert_not_null(json);
                cr_assert(strstr(json, o ? "\"implicit_gemms\": \"" : "\"groups_active\": 8") != NULL, "%s", json);
                cr_assert(strstr(json, "\"findings\": ") != NULL);
                free(json);
            }
        }
    opm_op_free(ops[0]);
    opm_op_free(ops[1]);
    opm_hardware_free(hw);
}

/* Depthwise convs run as direct memory-bound kernels, not implicit GEMMs:
 * they fall back to the roofline, under the model's name. */
Test(gemm_models, depthwise_conv_falls_back)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *op = conv2d(32, 96, 112, 96, 1, 3, "bf16", "\"padding\": 1, \"groups\": 96");
    opm_profile r = predict_ok("roofline", op, hw);
    for (int mi = 0; mi < 2; mi++) {
        opm_profile p = predict_ok(both_models[mi], op, hw);
        cr_assert_eq(p.latency_s, r.latency_s);
        cr_assert_str_eq(p.model, both_models[mi]);
        cr_assert_null(opm_profile_diag(&p, "implicit_gemm_m"));
    }
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* ---- validation: clock_mhz, leave-one-out, the shipped data ---- */

/* Writes `text` as dir/file. */
static void write_file(const char *dir, const char *file, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

static void remove_file(const char *dir, const char *file)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    remove(path);
}

/* A row with clock_mhz is predicted on its hardware at that clock: exactly
 * the prediction on opm_hardware_with_clock; at half the clock a
 * compute-bound GEMM takes about twice as long.  A clock above the
 * hardware's sm_max_clock_hz fails that row; a malformed one is a bad row. */
Test(gemm_models, clock_column_honoured)
{
    char dir[256], csv[1024];
    tmp_dir(dir, sizeof dir, "opm_gemm_test_");
    write_file(dir, "capped.yaml",
               "name: capped\nkind: gpu\ncompute:\n  clock_hz: 1.0e9\n  sm_max_clock_hz: 1.2e9\n  num_sms: 10\n"
               "  vector_flops_per_s: {fp32: 1.0e13}\n"
               "memory:\n  levels:\n    - {name: hbm, size_bytes: 1.0e10, bandwidth_bytes_per_s: 1.0e12}\n");
    snprintf(csv, sizeof csv,
             "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,energy_j,clock_mhz,kernel,source\n"
             "a100_40gb_pcie,fp32,1,4096,4096,4096,0,0,0,7400,,,,t\n"
             "a100_40gb_pcie,fp32,1,4096,4096,4096,0,0,0,14800,,705,,t\n"
             "%s/capped.yaml,fp32,1,64,64,64,0,0,0,20,,1500,,t\n"
             "a100_40gb_pcie,fp32,1,64,64,64,0,0,0,20,,fast,,t\n", dir);
    write_file(dir, "clock.csv", csv);
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), 0, "%s", err.message);
    remove_file(dir, "clock.csv");
    remove_file(dir, "capped.yaml");
    rmdir(dir);
    cr_assert_eq(ds.n_rows, 3);
    cr_assert_eq(ds.rows_bad, 1);
    cr_assert_eq(ds.rows[0].clock_hz, 0);
    cr_assert_float_eq(ds.rows[1].clock_hz, 705e6, 1e-3);
    double base[3];
    for (int mi = 0; mi < 2; mi++) {
        const char *model = mi ? "effective_roofline" : "extended_roofline";
        cr_assert_eq(opm_gemm_base_predictions(&ds, model, 1, base, &err), 0, "%s", err.message);
        opm_hardware *slow = opm_hardware_with_clock(ds.hw[ds.rows[1].hw], 705e6, &err);
        cr_assert_not_null(slow, "%s", err.message);
        opm_op *op = gemm(1, 4096, 4096, 4096, OPM_FP32);
        opm_profile p = predict_ok(model, op, slow);
        cr_assert_float_eq(base[1], p.latency_s - p.overhead_s, 1e-15);
        cr_assert(base[1] > 1.8 * base[0] && base[1] < 2.05 * base[0], "%g vs %g", base[1], base[0]);
        cr_assert(isnan(base[2]), "1500 MHz is above capped's sm_max_clock_hz");
        opm_op_free(op);
        opm_hardware_free(slow);
    }
    opm_gemm_dataset_free(&ds);
}

/* Leave-one-out on the fixture: its only hardware is held out, so every
 * row is scored, nothing calibrates and nothing can be borrowed: each group
 * keeps the hardware's own fixed time, added to the base. */
Test(gemm_models, leave_one_out_fixture)
{
    char dir[512];
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(src_path("tests/data/gemm", dir, sizeof dir), &ds, &err), 0, "%s", err.message);
    double base[8];
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 1, base, &err), 0);
    opm_gemm_validation v;
    cr_assert_eq(opm_gemm_leave_one_out(&ds, "extended_roofline", 1, base, 0, &v, &err), 0, "%s", err.message);
    cr_assert_eq(v.rows, 8);
    cr_assert_eq(v.calibration_rows, 0);
    cr_assert_eq(v.by_hw[ds.rows[0].hw].n, 8);
    const opm_hardware *t4 = ds.hw[ds.rows[0].hw];
    double own = opm_hardware_fixed_overhead_cycles(t4) / opm_hardware_clock_hz(t4);
    cr_assert(own > 0);
    for (size_t i = 0; i < ds.n_rows; i++) cr_assert_float_eq(v.pred_s[i], base[i] + own, 1e-15);
    for (size_t g = 0; g < ds.n_groups; g++) cr_assert_float_eq(v.group_overhead_s[g], own, 1e-18);
    opm_gemm_validation_free(&v);
    opm_gemm_dataset_free(&ds);
}

/* Held-out accuracy on the shipped data (data/gemm, 120,882 rows), both
 * passes as validate-gemm-latency runs them, with its default host overlap
 * (the roofline gets the same).  The overall and roofline bounds are the
 * GEMM-models issue's bars; the others sit a little above what the models
 * reach (docs/gemm_models.md lists the figures), so a regression fails:
 * overall MAPE 11.84% (bound 12, the bar), every size class with at least
 * 50 rows at most 17.41% (bound 18.5), 3.19x below the roofline on the
 * same rows (bound 3x, the bar), leave-one-hardware-out 14.78% (bound
 * 15.5). */
Test(gemm_models, shipped_data_accuracy, .timeout = 120)
{
    char dir[512];
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(src_path("data/gemm", dir, sizeof dir), &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.n_rows, 120882);
    cr_assert_eq(ds.rows_bad + ds.rows_unknown_hw, 0);
    double *base = malloc(ds.n_rows * sizeof *base);
    cr_assert_not_null(base);
    opm_gemm_validate_opts o = {"roofline", 1, -1, OPM_GEMM_HOST_OVERLAP, 0};
    opm_gemm_validation roof, v, lv;
    cr_assert_eq(opm_gemm_base_predictions(&ds, "roofline", 1, base, &err), 0);
    cr_assert_eq(opm_gemm_validate(&ds, &o, base, &roof, &err), 0);
    const char *models[2] = {"extended_roofline", "effective_roofline"};
    for (int mi = 0; mi < 2; mi++) {
        o.model = models[mi];
        cr_assert_eq(opm_gemm_base_predictions(&ds, o.model, 1, base, &err), 0);
        cr_assert_eq(opm_gemm_leave_one_out(&ds, o.model, 1, base, OPM_GEMM_HOST_OVERLAP, &lv, &err), 0);
        cr_assert(lv.overall.mape < 15.5, "%s leave-one-out MAPE %.2f", o.model, lv.overall.mape);
        cr_assert_eq(lv.rows, ds.n_rows);
        opm_gemm_validation_free(&lv);
        cr_assert_eq(opm_gemm_validate(&ds, &o, base, &v, &err), 0);
        cr_assert_eq(opm_gemm_repredict_with_overhead(&ds, o.model, 1, v.group_overhead_s, -1, base, &err), 0);
        opm_gemm_validation_free(&v);
        cr_assert_eq(opm_gemm_validate(&ds, &o, base, &v, &err), 0);
        cr_assert_eq(v.rows, roof.rows, "same held-out rows as the roofline");
        cr_assert_eq(v.rows_failed, 0);
        cr_assert(v.overall.mape <= 12.0, "%s MAPE %.2f", o.model, v.overall.mape);
        cr_assert(roof.overall.mape >= 3.0 * v.overall.mape, "%s: roofline %.2f", o.model, roof.overall.mape);
        for (int c = 0; c < GC_COUNT; c++)
            if (v.by_class[c].n >= 50)
                cr_assert(v.by_class[c].mape < 18.5, "%s %s MAPE %.2f", o.model, opm_gemm_class_names[c],
                          v.by_class[c].mape);
        opm_gemm_validation_free(&v);
    }
    opm_gemm_validation_free(&roof);
    free(base);
    opm_gemm_dataset_free(&ds);
}

/* Split-K: a GEMM of few output tiles and a long K loop splits K to fill
 * the SMs; a batched launch does not (the batch occupies the grid
 * dimension the K slices would use), whether the tile is chosen or
 * hinted, unless split_k itself is hinted. */
Test(gemm_models, batched_gemm_runs_unsplit)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    for (int i = 0; i < 2; i++) {
        const char *model = i ? "effective_roofline" : "extended_roofline";
        opm_op *one = gemm(1, 64, 64, 16384, OPM_FP32), *two = gemm(2, 64, 64, 16384, OPM_FP32);
        opm_profile p1 = predict_ok(model, one, hw), p2 = predict_ok(model, two, hw);
        cr_assert_gt(diag_num(&p1, "split_k"), 1, "%s", model);
        cr_assert_eq(diag_num(&p2, "split_k"), 1, "%s", model);
        set_tile(one, 64, 64, 8, 2, 32, 64, 0);
        set_tile(two, 64, 64, 8, 2, 32, 64, 0);
        p1 = predict_ok(model, one, hw);
        p2 = predict_ok(model, two, hw);
        cr_assert_gt(diag_num(&p1, "split_k"), 1, "%s hinted", model);
        cr_assert_eq(diag_num(&p2, "split_k"), 1, "%s hinted", model);
        cr_assert_eq(opm_op_set_int(two, "split_k", 4, NULL), 0);
        p2 = predict_ok(model, two, hw);
        cr_assert_eq(diag_num(&p2, "split_k"), 4, "%s split_k hinted", model);
        opm_op_free(one);
        opm_op_free(two);
    }
    opm_hardware_free(hw);
}

/* Row activations through the rest of the models: effective_roofline's
 * effective DRAM rate is the rate the read bytes move at, activations
 * included, so an activation-bound GEMM reports it well below the raw DRAM
 * rate; and a backward GEMM's activations are its two kernels' (dA, dW)
 * summed, each kernel the forward GEMM of its shape. */
Test(gemm_models, dram_row_activations_rates_and_backward)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_op *op = gemm(1, 65536, 64, 4096, OPM_FP32);
    set_tile(op, 64, 64, 8, 2, 32, 64, 1);
    opm_profile p = predict_ok("effective_roofline", op, hw);
    double raw[GEMM_RES_COUNT], eff[GEMM_RES_COUNT];
    rates_of(diag_text(&p, "raw_rates_per_s"), raw);
    rates_of(diag_text(&p, "effective_rates_per_s"), eff);
    /* A's pieces cost 112 B of datasheet time per 32 B: at most 32/112 of
     * 1555 GB/s, ~0.44 TB/s, against the raw 1.35 TB/s. */
    cr_assert_lt(eff[GEMM_RES_DRAM], 0.5 * raw[GEMM_RES_DRAM], "%s vs %s", diag_text(&p, "effective_rates_per_s"),
                 diag_text(&p, "raw_rates_per_s"));
    opm_op_free(op);

    const int64_t m = 8192, n = 64, k = 4096;
    for (int mi = 0; mi < 2; mi++) {
        opm_op *bwd = gemm(1, m, n, k, OPM_FP32), *da = gemm(1, m, k, n, OPM_FP32), *dw = gemm(1, k, n, m, OPM_FP32);
        opm_op_set_phase(bwd, OPM_PHASE_TRAIN_BWD);
        opm_op *all[3] = {bwd, da, dw};
        for (int i = 0; i < 3; i++) set_tile(all[i], 64, 64, 8, 2, 32, 64, 1);
        opm_profile pb = predict_ok(both_models[mi], bwd, hw), pa = predict_ok(both_models[mi], da, hw),
                    pw = predict_ok(both_models[mi], dw, hw);
        double sum = diag_num(&pa, "dram_row_activations") + diag_num(&pw, "dram_row_activations");
        cr_assert_gt(sum, 0);
        cr_assert_float_eq(diag_num(&pb, "dram_row_activations"), sum, 1e-9 * sum, "%s", both_models[mi]);
        for (int i = 0; i < 3; i++) opm_op_free(all[i]);
    }
    opm_hardware_free(hw);
}

/* A tensor-core kernel keeps stages − 1 K tiles of a row in flight, so its
 * pieces are that many K tiles long: a decode GEMV whose weight is stored
 * K-contiguous (x · Wᵀ, bf16 on h100_sxm, 4 stages) is not activation-bound
 * and costs what the N-contiguous layout costs; a 2-stage SIMT tile of the
 * same layout is bound. */
Test(gemm_models, pipelined_pieces_share_activations)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    for (int mi = 0; mi < 2; mi++)
        for (int64_t m = 1; m <= 16; m *= 16) {
            char js[256];
            snprintf(js, sizeof js,
                     "{\"kind\": \"gemm\", \"m\": %lld, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\", \"transpose_b\": true}",
                     (long long)m);
            opm_op *kc = op_json(js);
            opm_op *nc = gemm(1, m, 4096, 4096, OPM_BF16);
            opm_op *both[2] = {kc, nc};
            for (int i = 0; i < 2; i++) {
                set_tile(both[i], 64, 64, 32, 4, 32, 32, 1);
                cr_assert_eq(opm_op_set_int(both[i], "pipeline_stages", 4, NULL), 0);
            }
            opm_profile a = predict_ok(both_models[mi], kc, hw), b = predict_ok(both_models[mi], nc, hw);
            cr_assert(!has_finding(&a, "dram_activations"), "%s m=%lld: %s", both_models[mi],
                      (long long)m, diag_text(&a, "findings"));
            assert_rel(a.latency_s, b.latency_s, 0.05, both_models[mi]);
            /* Two stages: one 64-byte piece per activation, 1.75x the bytes' datasheet time. */
            cr_assert_eq(opm_op_set_int(kc, "pipeline_stages", 2, NULL), 0);
            opm_profile c = predict_ok(both_models[mi], kc, hw);
            cr_assert(has_finding(&c, "dram_activations"), "%s m=%lld: %s", both_models[mi],
                      (long long)m, diag_text(&c, "findings"));
            opm_op_free(kc);
            opm_op_free(nc);
        }
    opm_hardware_free(hw);
}

/* Packed sub-byte weights (int4 here) are repacked offline into the
 * kernel's tile order, so their reads fill whole DRAM rows: a W4A16 decode
 * GEMM is not activation-bound even though its 128-column int4 tile rows
 * are only 64 bytes; the same GEMM with bf16 weights has 256-byte rows. */
Test(gemm_models, packed_weights_fill_dram_rows)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 16, \"n\": 4096, \"k\": 14336, \"dtype\": \"bf16\","
                          " \"weight_dtype\": \"int4\", \"weight_group_size\": 128, \"weight_zero_point\": true}");
    for (int mi = 0; mi < 2; mi++) {
        opm_profile p = predict_ok(both_models[mi], op, hw);
        cr_assert(!has_finding(&p, "dram_activations"), "%s: %s", both_models[mi],
                  diag_text(&p, "findings"));
        /* The weight (with its scales and zero points, ~0.52 bytes an
         * element) opens one DRAM row per KiB; A's bf16 rows at most one per
         * 32 bytes.  Tile-row pieces would be ~476,000. */
        cr_assert_leq(diag_num(&p, "dram_row_activations"), 14336.0 * 4096 * 0.52 / 1024 + 16.0 * 14336 * 2 / 32);
    }
    opm_op_free(op);
    opm_hardware_free(hw);
}
