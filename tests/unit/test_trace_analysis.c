/* test_trace_analysis.c — kernel names as hints, iteration detection and
 * multi-rank reports (include/opmodel/trace_analysis.h):
 *
 *  - a table of real GEMM kernel names (every scheme found in the shipped
 *    traces, and the cuBLAS/cuBLASLt/CUTLASS 3 names of the docs) and what
 *    each must parse to, in the op's orientation; names that must not parse;
 *  - the per-group comparison on the shipped H100 Falcon trace: every check
 *    is a GEMM group whose kernel list holds the parsed name, its measured
 *    mean is the group's, and a depth named in the kernel is the one used;
 *  - iterations: the ProfilerStep ranges of the MI300X ResNet trace (host
 *    ranges; its GPU-side ones are 16-18 us), the decoder-layer period of
 *    the H100 Qwen trace (one forward pass), and a hand-made run whose first
 *    iteration is slow (the outlier) with a kernel repeated inside the
 *    period;
 *  - multi-rank: the hand-made 4-rank set (tools/make_multirank_traces.py):
 *    bytes, time, bus bandwidth, skew, slowest rank per collective and each
 *    rank's exposed and overlapped communication, all known by construction. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "opmodel/trace_analysis.h"

typedef struct name_case {
    const char *name;
    const char *library, *instruction;
    int m, n, k, stages, split_k, warps, column_major;
} name_case;

static const name_case names[] = {
    /* cuBLAS xmma (h100_bert, h100_falcon, h100_qwen) */
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     "cublas", "wgmma", 64, 128, 64, 0, 1, 4, 1},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     "cublas", "wgmma", 128, 128, 64, 0, 1, 4, 1},
    {"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize160x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
     "cublas", "mma_sync", 128, 160, 32, 4, 0, 4, 1},
    /* CUTLASS 2 as cuBLAS ships it (h100 traces) */
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8>"
     "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8::Params)",
     "cutlass", "mma_sync", 64, 128, 64, 6, 0, 0, 1},
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2>"
     "(cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2::Params)",
     "cutlass", "mma_sync", 128, 256, 64, 3, 0, 0, 1},
    {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>"
     "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
     "cutlass", "wmma", 32, 32, 128, 2, 0, 0, 1},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)",
     "cutlass", "simt", 32, 128, 8, 5, 0, 0, 1},
    /* CUTLASS 3, row-major callers */
    {"void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_"
     "warpspecialized_cooperative_epi_tma>(cutlass3x_sm90::Params)",
     "cutlass", "wgmma", 128, 256, 64, 0, 0, 0, 0},
    /* cuBLASLt nvjet */
    {"nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT", "cublaslt", NULL, 256, 128, 64, 4, 0, 0, 1},
    /* cuBLAS by architecture */
    {"ampere_sgemm_128x64_nn", "cublas", "simt", 64, 128, 0, 0, 0, 0, 1},
    {"volta_sgemm_32x32_sliced1x4_nn", "cublas", "simt", 32, 32, 0, 0, 0, 0, 1},
    {"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn", "cublas", "mma_sync", 64, 128, 64, 3, 0, 0, 1},
    /* hipBLASLt / Tensile (mi300 traces, sglang, vllm, xdit) */
    {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_"
     "DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA1024_LBSPPB512",
     "tensile", "mfma", 128, 256, 64, 0, 0, 0, 1},
    {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x32x512_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_"
     "DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_",
     "tensile", "mfma", 32, 16, 512, 0, 0, 0, 1},
    {"Cijk_Ailk_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASM_"
     "ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR0_DTLA0_DTLB0_DTVA0_DTVB0_DVO0_ETSP_EPS1_ELFLR4_EMLL0_FSSC10_FL0_GSU1_GLVWA8",
     "tensile", "mfma", 64, 64, 64, 0, 1, 0, 1},
    {"Cijk_Ailk_Bljk_SB_MT64x64x8_SE_K1_GSU4", "tensile", "simt", 64, 64, 8, 0, 4, 0, 1},
    /* mi300_resnet_ckpt, whole: WG32_8_1 with WS64 = 4 waves; GSU1 */
    {"Cijk_Ailk_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASM_"
     "ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR0_DTLA0_DTLB0_DTVA0_DTVB0_DVO0_ETSP_EPS1_ELFLR4_EMLL0_FSSC10_FL0_GLVWA2_"
     "GLVWB2_GRCGA1_GRCGB1_GRPM1_GRVWn1_GSU1_GSUASB_GLS1_ISA942_IU1_K1_KLA_LBSPPA512_LBSPPB256_LPA32_LPB4_LDL1_LRVW4_"
     "LWPMn1_LDW0_FMA_MIAV0_MDA2_MO40_MMFSC_MKFGSU256_NTA0_NTB0_NTC2_NTD2_NEPBS0_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR2_"
     "PLR1_PKA0_SIA3_SLW1_SS1_SU64_SUM0_SUS512_SCIUI1_SPO1_SRVW0_SSO4_SVW2_SNLL0_TSGRA0_TSGRB0_TT2_32_TLDS1_UMLDSA0_"
     "UMLDSB1_U64SL1_USFGROn1_VAW1_VSn1_VW2_VWB2_VFLRP1_WSGRA0_WSGRB0_WS64_WG32_8_1_WGMn16",
     "tensile", "mfma", 64, 64, 64, 0, 1, 4, 1},
    /* Triton (vllm_decode_full) */
    {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", "triton", NULL, 16, 128, 256, 0, 1, 0, 0},
};

static const char *const not_gemm[] = {
    "", ("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>"
         "(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)"),
    "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x16_wt16x16x4_ws1x1_wr2x2_ta1x1x4x1_1x16x1x16_tb1x1x4x1_1x16x1x16_me",
    "_finalize_matmul_scatter_bf16", "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>",
    "ampere_sgemm_99999x2_nn", "Cijk_MT0x16x16_MI16x16x1", "nvjet_tst", "sm90_xmma_gemm_tilesize128x128"};

static int same(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

Test(trace_analysis, kernel_name_table)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const name_case *c = &names[i];
        opm_trace_kernel_hint h;
        cr_assert_eq(opm_trace_parse_kernel_name(c->name, &h), 1, "%s: not parsed", c->name);
        cr_expect(same(h.library, c->library), "%s: library %s", c->name, h.library ? h.library : "(null)");
        cr_expect(same(h.instruction, c->instruction), "%s: instruction %s", c->name,
                  h.instruction ? h.instruction : "(null)");
        cr_expect(h.tile_m == c->m && h.tile_n == c->n && h.tile_k == c->k, "%s: tile %dx%dx%d", c->name, h.tile_m,
                  h.tile_n, h.tile_k);
        cr_expect_eq(h.stages, c->stages, "%s: stages %d", c->name, h.stages);
        cr_expect_eq(h.split_k, c->split_k, "%s: split_k %d", c->name, h.split_k);
        cr_expect_eq(h.warps, c->warps, "%s: warps %d", c->name, h.warps);
        cr_expect_eq(h.column_major, c->column_major, "%s: column_major %d", c->name, h.column_major);
    }
    for (size_t i = 0; i < sizeof not_gemm / sizeof not_gemm[0]; i++) {
        opm_trace_kernel_hint h;
        h.tile_m = 7;
        cr_expect_eq(opm_trace_parse_kernel_name(not_gemm[i], &h), 0, "'%s' parsed", not_gemm[i]);
        cr_expect(h.tile_m == 0 && h.library == NULL, "'%s': hint not zeroed", not_gemm[i]);
    }
    cr_expect_eq(opm_trace_parse_kernel_name(NULL, NULL), 0);
}

static opm_trace *read_rel(const char *rel)
{
    char buf[1024];
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_file(src_path(rel, buf, sizeof buf), &err);
    cr_assert_not_null(t, "%s: %s", rel, err.message);
    return t;
}

Test(trace_analysis, kernel_checks_h100_falcon)
{
    opm_trace *t = read_rel("tests/data/traces/h100_falcon/trace.json.gz");
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_error err;
    opm_trace_report *r = opm_trace_report_new(t, hw, NULL, &err);
    cr_assert_not_null(r, "%s", err.message);
    opm_trace_kernel_checks *c = opm_trace_kernel_checks_new(r, hw, NULL, &err);
    cr_assert_not_null(c, "%s", err.message);
    cr_expect_str_eq(opm_trace_kernel_checks_model(c), "extended_roofline");
    size_t n = opm_trace_kernel_check_count(c), gemm_groups = 0, named = 0;
    /* Every GEMM group with a model and a parsable kernel is checked. */
    for (size_t gi = 0; gi < opm_trace_report_group_count(r); gi++) {
        const opm_trace_group *g = opm_trace_report_group(r, gi);
        if (!g->has_kind || (g->kind != OPM_KIND_GEMM && g->kind != OPM_KIND_BATCHED_GEMM)) continue;
        gemm_groups++;
        opm_trace_kernel_hint h;
        for (size_t k = 0; k < g->kernel_name_count; k++)
            if (opm_trace_parse_kernel_name(g->kernel_names[k], &h)) {
                named++;
                break;
            }
    }
    cr_assert_gt(gemm_groups, 0);
    cr_expect_eq(n, named, "%zu checks for %zu GEMM groups with a named kernel", n, named);
    for (size_t i = 0; i < n; i++) {
        const opm_trace_kernel_check *k = opm_trace_kernel_check_at(c, i);
        const opm_trace_group *g = opm_trace_report_group(r, k->group);
        int listed = 0;
        for (size_t j = 0; j < g->kernel_name_count; j++) listed |= !strcmp(g->kernel_names[j], k->kernel);
        cr_expect(listed, "group %zu: %s not among its kernels", k->group, k->kernel);
        cr_expect_eq(k->measured_mean_s, g->kernel_time_mean_s);
        cr_expect(k->hinted_time_s > 0 && k->auto_time_s > 0 && isfinite(k->hinted_time_s));
        cr_expect(k->hinted_tile_efficiency > 0 && k->hinted_tile_efficiency <= 1);
        cr_expect(k->hinted_wave_efficiency > 0 && k->hinted_wave_efficiency <= 1);
        if (k->hint.stages) cr_expect_eq(k->hinted_stages, k->hint.stages, "group %zu", k->group);
        if (k->hint.split_k) cr_expect_eq(k->hinted_split_k, k->hint.split_k, "group %zu", k->group);
        if (k->hint.warps) cr_expect_eq(k->hinted_warps, k->hint.warps, "group %zu", k->group);
        /* cutlass_80 (sm80 mma_sync) kernels on Hopper: flagged. */
        cr_expect_eq(k->instruction_differs, !strcmp(k->hint.library, "cutlass"), "group %zu", k->group);
    }
    char *j = opm_trace_kernel_checks_to_json(c, r, &err);
    cr_assert_not_null(j);
    cr_expect(strstr(j, "\"hinted_time_s\"") && strstr(j, "\"tile_m\": 64, \"tile_n\": 128"));
    free(j);
    char *tb = opm_trace_kernel_checks_to_table(c, r, &err);
    cr_assert_not_null(tb);
    free(tb);
    /* No hardware: an error, not a crash. */
    cr_expect_null(opm_trace_kernel_checks_new(r, NULL, NULL, &err));
    cr_expect_eq(err.code, OPM_EINVAL);
    opm_trace_kernel_checks_free(c);
    opm_trace_report_free(r);
    opm_hardware_free(hw);
    opm_trace_free(t);
}

Test(trace_analysis, iterations_profiler_steps)
{
    opm_trace *t = read_rel("tests/data/traces/mi300_resnet_ckpt/trace.json.gz");
    opm_error err;
    opm_trace_iterations *it = opm_trace_iterations_new(t, &err);
    cr_assert_not_null(it, "%s", err.message);
    cr_assert_eq(opm_trace_iterations_method(it), OPM_ITER_PROFILER_STEP);
    cr_assert_eq(opm_trace_iterations_count(it), 3);
    const char *want[3] = {"ProfilerStep#15", "ProfilerStep#16", "ProfilerStep#17"};
    for (size_t i = 0; i < 3; i++) {
        const opm_trace_iteration *x = opm_trace_iterations_at(it, i);
        cr_expect_str_eq(x->name, want[i]);
        /* The same step three times: the same kernels each time. */
        cr_expect_eq(x->gpu_events, 895, "%s: %llu events", x->name, (unsigned long long)x->gpu_events);
        cr_expect(x->busy_s > 0 && x->busy_s <= x->duration_s + 1e-9);
        if (i) cr_expect(fabs(x->start_s - (opm_trace_iterations_at(it, i - 1)->start_s +
                                           opm_trace_iterations_at(it, i - 1)->duration_s)) < 1e-9);
    }
    double mean, med, mn, mx, ratio;
    size_t out;
    cr_assert_eq(opm_trace_iterations_stats(it, &mean, &med, &mn, &mx, &out, &ratio), 0);
    cr_expect(mn <= med && med <= mx && mn <= mean && mean <= mx);
    cr_expect(out < 3 && ratio < 0.1, "steady steps: outlier %zu at %g", out, ratio);
    cr_expect_eq(opm_trace_iterations_period(it), 0);
    opm_trace_iterations_free(it);
    opm_trace_free(t);
}

Test(trace_analysis, iterations_layer_period_qwen)
{
    /* One ProfilerStep (one forward pass of 24 decoder layers): the period
     * found is the layer's 49 kernels. */
    opm_trace *t = read_rel("tests/data/traces/h100_qwen/trace.json.gz");
    opm_error err;
    opm_trace_iterations *it = opm_trace_iterations_new(t, &err);
    cr_assert_not_null(it, "%s", err.message);
    cr_expect_eq(opm_trace_iterations_method(it), OPM_ITER_KERNEL_SEQUENCE);
    cr_expect_eq(opm_trace_iterations_period(it), 49);
    for (size_t i = 0; i < opm_trace_iterations_count(it); i++)
        cr_expect_eq(opm_trace_iterations_at(it, i)->gpu_events, 49);
    opm_trace_iterations_free(it);
    opm_trace_free(t);
}

/* `iters` iterations of kernels A B A C, each kernel `dur` us (the first
 * iteration 3x as long), 40 us idle between iterations. */
static opm_trace *synthetic_run(int iters)
{
    size_t cap = 512 + (size_t)iters * 4 * 200;
    char *json = malloc(cap);
    cr_assert_not_null(json);
    size_t len = (size_t)snprintf(json, cap, "{\"traceEvents\":[");
    long ts = 1000;
    const char *k[4] = {"A", "B", "A", "C"};
    int first = 1;
    for (int i = 0; i < iters; i++) {
        for (int j = 0; j < 4; j++) {
            long dur = i == 0 ? 30 : 10;
            len += (size_t)snprintf(json + len, cap - len,
                                    "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%ld,"
                                    "\"dur\":%ld,\"args\":{\"stream\":7,\"device\":0}}",
                                    first ? "" : ",", k[j], ts, dur);
            first = 0;
            ts += dur + 2;
        }
        ts += 40;
        cr_assert(len < cap);
    }
    snprintf(json + len, cap - len, "]}");
    opm_error err;
    opm_trace *t = opm_trace_read_buffer(json, strlen(json), "<run>", &err);
    free(json);
    cr_assert_not_null(t, "%s", err.message);
    return t;
}

Test(trace_analysis, iterations_kernel_sequence_outlier)
{
    opm_trace *t = synthetic_run(6);
    opm_error err;
    opm_trace_iterations *it = opm_trace_iterations_new(t, &err);
    cr_assert_not_null(it, "%s", err.message);
    cr_assert_eq(opm_trace_iterations_method(it), OPM_ITER_KERNEL_SEQUENCE);
    cr_expect_eq(opm_trace_iterations_period(it), 4);
    cr_assert_eq(opm_trace_iterations_count(it), 6);
    /* Phase: each iteration starts at the A after the idle gap. */
    cr_expect(fabs(opm_trace_iterations_at(it, 0)->start_s) < 1e-12);
    cr_expect(fabs(opm_trace_iterations_at(it, 1)->start_s - (4 * 32 + 40) * 1e-6) < 1e-12);
    cr_expect(fabs(opm_trace_iterations_at(it, 2)->duration_s - (4 * 12 + 40) * 1e-6) < 1e-12);
    cr_expect(fabs(opm_trace_iterations_at(it, 5)->duration_s - (4 * 12 - 2) * 1e-6) < 1e-12);
    cr_expect(fabs(opm_trace_iterations_at(it, 3)->busy_s - 40e-6) < 1e-12);
    double mean, med, mn, mx, ratio;
    size_t out;
    cr_assert_eq(opm_trace_iterations_stats(it, &mean, &med, &mn, &mx, &out, &ratio), 0);
    cr_expect_eq(out, 0, "the slow first iteration is the outlier, got %zu", out);
    cr_expect(ratio > 0.5);
    char *j = opm_trace_iterations_to_json(it, &err);
    cr_assert_not_null(j);
    cr_expect(strstr(j, "\"method\": \"kernel_sequence\", \"count\": 6, \"period_gpu_events\": 4"), "%s", j);
    cr_expect(strstr(j, "\"is_outlier\": true"));
    free(j);
    opm_trace_iterations_free(it);
    opm_trace_free(t);

    /* One iteration only: none found, not an error. */
    t = synthetic_run(1);
    it = opm_trace_iterations_new(t, &err);
    cr_assert_not_null(it);
    cr_expect_eq(opm_trace_iterations_method(it), OPM_ITER_NONE);
    cr_expect_eq(opm_trace_iterations_count(it), 0);
    cr_expect_eq(opm_trace_iterations_stats(it, &mean, &med, &mn, &mx, &out, &ratio), -1);
    j = opm_trace_iterations_to_json(it, &err);
    cr_assert_not_null(j);
    cr_expect(strstr(j, "\"method\": \"none\", \"count\": 0"));
    free(j);
    opm_trace_iterations_free(it);
    opm_trace_free(t);
}

/* ---- multi-rank: the hand-made 4-rank set (tools/make_multirank_traces.py,
 * whose docstring gives the arrival times and transfer times) ---- */

static opm_trace_ranks *ranks_of_set(opm_trace **t)
{
    char rel[128];
    for (int i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "tests/data/traces/multirank/rank%d.json", i);
        t[i] = read_rel(rel);
    }
    opm_error err;
    opm_trace_ranks *r = opm_trace_ranks_new((const opm_trace *const *)t, 4, &err);
    cr_assert_not_null(r, "%s", err.message);
    return r;
}

Test(trace_analysis, ranks_collectives)
{
    opm_trace *t[4];
    opm_trace_ranks *r = ranks_of_set(t);
    cr_assert_eq(opm_trace_ranks_rank_count(r), 4);
    cr_assert_eq(opm_trace_ranks_collective_count(r), 3);
    /* name, transfer us, skew us, slowest rank, longest kernel us, busbw factor */
    const struct {
        const char *name;
        double xfer_us, skew_us;
        size_t slowest;
        double max_us, factor;
    } want[3] = {{"allreduce", 60, 50, 2, 110, 1.5}, {"allgather", 40, 30, 0, 70, 0.75},
                 {"reduce_scatter", 45, 80, 3, 125, 0.75}};
    for (size_t i = 0; i < 3; i++) {
        const opm_trace_collective *c = opm_trace_ranks_collective(r, i);
        cr_expect_str_eq(c->collective, want[i].name);
        cr_expect_str_eq(c->algorithm, "ring");
        cr_expect_str_eq(c->dtype, "BFloat16");
        cr_expect_eq(c->group_size, 4);
        cr_expect_eq(c->message_bytes, 2097152, "%s: %llu bytes", c->collective, (unsigned long long)c->message_bytes);
        cr_expect(fabs(c->time_s - want[i].xfer_us * 1e-6) < 1e-12, "%s: time %g", c->collective, c->time_s);
        cr_expect(fabs(c->skew_s - want[i].skew_us * 1e-6) < 1e-12, "%s: skew %g", c->collective, c->skew_s);
        cr_expect(fabs(c->max_time_s - want[i].max_us * 1e-6) < 1e-12, "%s: max %g", c->collective, c->max_time_s);
        cr_expect_eq(c->slowest_rank, want[i].slowest, "%s: slowest %zu", c->collective, c->slowest_rank);
        double algbw = 2097152 / (want[i].xfer_us * 1e-6);
        cr_expect(rel_diff(c->algbw_bytes_per_s, algbw) < 1e-12);
        cr_expect(rel_diff(c->busbw_bytes_per_s, algbw * want[i].factor) < 1e-12, "%s: busbw %g", c->collective,
                  c->busbw_bytes_per_s);
        cr_expect(c->names_agree);
    }
    /* Exposed vs overlapped: the all-reduce overlaps the GEMM on [1320, 1400)
     * us from its own start (1310 + arrival offset) on. */
    const double overlap_us[4] = {80, 80, 40, 70};
    const double offs[3][4] = {{0, 10, 50, 20}, {30, 0, 0, 5}, {0, 0, 0, 80}};
    const double maxoff[3] = {50, 30, 80}, xfer[3] = {60, 40, 45};
    for (size_t k = 0; k < 4; k++) {
        const opm_trace_rank *rk = opm_trace_ranks_rank(r, k);
        double comm = 0, wait = 0;
        for (int i = 0; i < 3; i++) {
            comm += maxoff[i] - offs[i][k] + xfer[i];
            wait += maxoff[i] - offs[i][k];
        }
        cr_expect_eq(rk->collectives, 3);
        cr_expect(fabs(rk->comm_s - comm * 1e-6) < 1e-12, "rank %zu comm %g", k, rk->comm_s);
        cr_expect(fabs(rk->overlapped_comm_s - overlap_us[k] * 1e-6) < 1e-12, "rank %zu overlapped %g", k,
                  rk->overlapped_comm_s);
        cr_expect(fabs(rk->exposed_comm_s - (comm - overlap_us[k]) * 1e-6) < 1e-12);
        cr_expect(fabs(rk->collective_wait_s - wait * 1e-6) < 1e-12, "rank %zu wait %g", k, rk->collective_wait_s);
        cr_expect(fabs(rk->compute_s - 280e-6) < 1e-12);
    }
    opm_error err;
    char *j = opm_trace_ranks_to_json(r, &err);
    cr_assert_not_null(j);
    cr_expect(strstr(j, "\"rank_count\": 4, \"matched_collectives\": 3"));
    free(j);
    opm_trace_ranks_free(r);
    for (int i = 0; i < 4; i++) opm_trace_free(t[i]);
}

Test(trace_analysis, ranks_unmatched_and_bad_input)
{
    opm_trace *t[4];
    opm_trace_ranks *r = ranks_of_set(t);
    opm_trace_ranks_free(r);
    opm_error err;
    cr_expect_null(opm_trace_ranks_new(NULL, 0, &err));
    cr_expect_eq(err.code, OPM_EINVAL);
    const opm_trace *with_null[2] = {t[0], NULL};
    cr_expect_null(opm_trace_ranks_new(with_null, 2, &err));
    /* A rank with no communication: nothing is matched, each rank still reported. */
    opm_trace *empty = opm_trace_read_buffer("{\"traceEvents\":[]}", 18, "<empty>", &err);
    cr_assert_not_null(empty, "%s", err.message);
    const opm_trace *two[2] = {t[0], empty};
    r = opm_trace_ranks_new(two, 2, &err);
    cr_assert_not_null(r, "%s", err.message);
    cr_expect_eq(opm_trace_ranks_collective_count(r), 0);
    cr_expect_eq(opm_trace_ranks_rank(r, 0)->collectives, 3);
    cr_expect_eq(opm_trace_ranks_rank(r, 1)->collectives, 0);
    opm_trace_ranks_free(r);
    opm_trace_free(empty);
    for (int i = 0; i < 4; i++) opm_trace_free(t[i]);
}
