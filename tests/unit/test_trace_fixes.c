/* test_trace_fixes.c — the trace defects of issue 21 that no shipped trace
 * shows: aten::linalg_norm as the owner of its inner linalg_vector_norm,
 * aten::where with a Python scalar (the scalar_tensor → fill_ kernel
 * reported apart), symmetric-memory all-reduce in the timeline's comm_s,
 * TRT-LLM bmm_ kernels as GEMM, vLLM's custom ops as owners of their
 * kernels, and vllm::moe_forward's kernels as TraceLens's pseudo ops.  The upsample rows are checked on a real trace by the golden
 * test (tests/data/traces/xdit_excerpt).
 *
 * The traces are small hand-made profiler traces (test text uses ' for ")
 * whose op names, argument lists and kernel names are the ones the real
 * programs record; the vLLM shapes are those of the GPT-OSS capture trace in
 * ../shared/data/traces/graph/vllm_decode_full, whose kernels were captured
 * into a graph and so are not in that file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "trace/trace_internal.h"

static opm_trace_report *report_text(const char *single_quoted)
{
    size_t n = strlen(single_quoted);
    char *json = malloc(n + 1);
    cr_assert_not_null(json);
    memcpy(json, single_quoted, n + 1);
    for (char *p = json; *p; p++)
        if (*p == '\'')
            *p = '"';
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_buffer(json, strlen(json), "<test>", &err);
    free(json);
    cr_assert_not_null(t, "read: %s", err.message);
    opm_trace_report *r = opm_trace_report_new(t, NULL, NULL, &err);
    cr_assert_not_null(r, "report: %s", err.message);
    opm_trace_free(t);
    return r;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15; }

#define HEAD "{'traceEvents':["
#define TAIL "]}"
/* A cpu_op on thread 1, with its call arguments. */
#define OP(name, ts, dur, dims, types, concrete) \
    "{'ph':'X','cat':'cpu_op','name':'" name "','pid':1,'tid':1,'ts':" #ts ",'dur':" #dur \
    ",'args':{'Input Dims':" dims ",'Input type':" types ",'Input Strides':[],'Concrete Inputs':" concrete "}},"
/* A launch at ts and the kernel it queued at kts. */
#define LK(ts, corr, kts, kdur, kname) \
    "{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':1,'tid':1,'ts':" #ts ",'dur':1," \
    "'args':{'correlation':" #corr "}}," \
    "{'ph':'X','cat':'kernel','name':'" kname "','pid':0,'tid':7,'ts':" #kts ",'dur':" #kdur "," \
    "'args':{'correlation':" #corr ",'stream':7,'device':0}},"
#define END "{'ph':'X','cat':'cpu_op','name':'aten::empty','pid':1,'tid':1,'ts':900,'dur':1,'args':{}}"

Test(trace_fixes, linalg_norm_owns_its_vector_norm)
{
    /* torch.linalg.norm(x, dim=1): aten::linalg_norm(self, ord=None, dim,
     * keepdim, dtype) calls aten::linalg_vector_norm, which launches. */
    opm_trace_report *r = report_text(
        HEAD OP("aten::linalg_norm", 10, 50, "[[64,1024],[],[],[],[]]",
                "['float','','ScalarList','Scalar','']", "['','','[1]','False','']")
        OP("aten::linalg_vector_norm", 12, 40, "[[64,1024],[],[],[],[]]",
           "['float','Scalar','ScalarList','Scalar','']", "['','2','[1]','False','']")
        LK(20, 100, 100, 5, "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps>>")
        END TAIL);
    cr_expect_null(group_named(r, "aten::linalg_vector_norm"), "the outer op owns the kernel");
    const opm_trace_group *g = group_named(r, "aten::linalg_norm");
    cr_assert_not_null(g);
    cr_expect_eq(g->count, 1);
    cr_expect(near(g->kernel_time_s, 5e-6));
    cr_expect_eq(g->category, OPM_TCAT_REDUCE);
    cr_assert(g->has_kind, "ord=None over one dim is the L2 norm: modelled");
    /* 2 FLOPs per element (square, add) + sqrt (weight 4) per output;
     * bytes: read x, write 64 floats. */
    cr_expect_eq(g->flops, 2ull * 64 * 1024 + 4ull * 64);
    cr_expect_eq(g->bytes, 4ull * 64 * 1024 + 4ull * 64);
    opm_trace_report_free(r);
}

Test(trace_fixes, linalg_norm_matrix_order_is_not_modelled)
{
    /* ord=2 over two dims is the spectral norm (an SVD), not L2. */
    opm_trace_report *r = report_text(
        HEAD OP("aten::linalg_norm", 10, 50, "[[64,64],[],[],[],[]]", "['float','Scalar','ScalarList','Scalar','']",
                "['','2','[0, 1]','False','']")
        LK(20, 100, 100, 5, "void at::native::svd_kernel") END TAIL);
    const opm_trace_group *g = group_named(r, "aten::linalg_norm");
    cr_assert_not_null(g);
    cr_expect_eq(g->has_kind, 0);
    cr_expect_eq(g->category, OPM_TCAT_REDUCE);
    opm_trace_report_free(r);
}

Test(trace_fixes, where_with_a_scalar_reports_the_fill_apart)
{
    /* torch.where(cond, x, 0.0): the scalar becomes a 0-dim tensor
     * (aten::scalar_tensor → aten::fill_, one fill kernel), then the where
     * kernel.  TraceLens reports the fill_ as its own row. */
    opm_trace_report *r = report_text(
        HEAD OP("aten::where", 10, 80, "[[64,64],[64,64],[]]", "['bool','float','Scalar']", "['','','0.']")
        OP("aten::scalar_tensor", 12, 20, "[[],[],[],[],[]]", "['Scalar','','','','']", "['0.','','','','']")
        OP("aten::fill_", 14, 10, "[[],[]]", "['float','Scalar']", "['','0.']")
        LK(15, 100, 100, 2, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>")
        LK(40, 101, 110, 3, "void at::native::vectorized_elementwise_kernel<4, at::native::where_kernel_impl>")
        END TAIL);
    const opm_trace_group *w = group_named(r, "aten::where"), *f = group_named(r, "aten::fill_");
    cr_assert_not_null(w);
    cr_assert_not_null(f, "the fill_ under scalar_tensor is its own group");
    cr_expect(near(w->kernel_time_s, 3e-6), "where: its own kernel only (%g)", w->kernel_time_s);
    cr_expect(near(f->kernel_time_s, 2e-6));
    cr_expect_null(group_named(r, "aten::scalar_tensor"));
    cr_expect(w->has_kind, "where(cond, x, scalar) is modelled on its tensors");
    opm_trace_report_free(r);
}

Test(trace_fixes, symm_mem_all_reduce_counts_as_communication)
{
    /* vLLM with symmetric memory: torch's multimem all-reduce kernel, and
     * vLLM's custom all-reduce, beside a compute kernel they overlap by 4 us. */
    opm_trace_report *r = report_text(
        HEAD OP("symm_mem::multimem_all_reduce_", 10, 20, "[[4096]]", "['c10::BFloat16']", "['']")
        LK(12, 100, 100, 20,
           "void c10d::symmetric_memory::multimem_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16*, unsigned long)")
        OP("_C_custom_ar::all_reduce", 40, 10, "[[4096]]", "['c10::BFloat16']", "['']")
        LK(42, 101, 130, 6, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)")
        OP("aten::mm", 60, 10, "[[64,64],[64,64]]", "['float','float']", "['','']")
        LK(62, 102, 116, 10, "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32") END TAIL);
    const opm_trace_timeline *tl = opm_trace_report_timeline(r);
    /* comm [100,120) ∪ [130,136) = 26 us; compute [116,126) = 10 us. */
    cr_expect(near(tl->comm_s, 26e-6), "comm_s %g", tl->comm_s);
    cr_expect(near(tl->compute_s, 10e-6), "compute_s %g", tl->compute_s);
    cr_expect(near(tl->exposed_comm_s, 22e-6), "exposed %g", tl->exposed_comm_s);
    const opm_trace_group *g = group_named(r, "symm_mem::multimem_all_reduce_");
    cr_assert_not_null(g);
    cr_expect_eq(g->category, OPM_TCAT_COMM);
    opm_trace_report_free(r);
}

Test(trace_fixes, trtllm_bmm_kernels_are_gemm)
{
    cr_expect_eq(opm_trace_kernel_category(
                     "bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_s6_et128x8_m128x8x32_cga1x1x1_16dp256b_TN_transOut_schedS_sm100a",
                     OPM_EV_KERNEL),
                 OPM_TCAT_GEMM);
    cr_expect_eq(opm_trace_kernel_category("bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x256_s3_et128x8_sm100f", OPM_EV_KERNEL),
                 OPM_TCAT_GEMM);
    /* Not every "bmm" is TRT-LLM's: only the name's start counts. */
    cr_expect_eq(opm_trace_kernel_category("triton_poi_fused_bmm_0", OPM_EV_KERNEL), OPM_TCAT_ELEMENTWISE);
    opm_trace_report *r = report_text(
        HEAD OP("trtllm::fp8_block_scale_moe_runner", 10, 20, "[[32,7168]]", "['c10::Float8_e4m3fn']", "['']")
        LK(12, 100, 100, 20, "bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_s6_et128x8_m128x8x32_cga1x1x1_16dp256b_TN_transOut_schedS_sm100a")
        END TAIL);
    const opm_trace_group *g = group_named(r, "trtllm::fp8_block_scale_moe_runner");
    cr_assert_not_null(g);
    cr_expect_eq(g->category, OPM_TCAT_GEMM);
    opm_trace_report_free(r);
}

Test(trace_fixes, vllm_custom_ops_own_their_kernels)
{
    opm_trace_report *r = report_text(
        HEAD OP("vllm::rocm_unquantized_gemm", 10, 30, "[[32,2880],[5120,2880],[5120]]",
                "['c10::BFloat16','c10::BFloat16','c10::BFloat16']", "['','','']")
        OP("aten::linear", 12, 20, "[[32,2880],[5120,2880],[5120]]",
           "['c10::BFloat16','c10::BFloat16','c10::BFloat16']", "['','','']")
        OP("aten::addmm", 14, 15, "[[5120],[32,2880],[2880,5120],[],[]]",
           "['c10::BFloat16','c10::BFloat16','c10::BFloat16','Scalar','Scalar']", "['','','','1','1']")
        LK(16, 100, 100, 8, "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x128_MI16x16x1")
        OP("vllm::moe_forward", 50, 60, "[[32,3072],[32,32],[],[]]", "['c10::BFloat16','c10::BFloat16','','']",
           "['','','','']")
        OP("_moe_C::topk_softmax", 52, 5, "[[32,4],[32,4],[32,32]]", "['float','int','c10::BFloat16']", "['','','']")
        LK(53, 101, 110, 2, "void vllm::moe::topkGatingSoftmax<8, 32>")
        LK(60, 102, 113, 30, "_ZN5aiter16fmoe_g1u1_mxfp4_kernelE")
        OP("vllm::unified_attention_with_output", 120, 30,
           "[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]]",
           "['c10::BFloat16','c10::BFloat16','c10::BFloat16','c10::BFloat16','','','','c10::BFloat16']",
           "['','','','','','','','']")
        LK(122, 103, 150, 12, "_ZN5aiter31paged_attention_ll4mi_QKV_kernelE")
        OP("vllm::unified_kv_cache_update", 160, 10, "[[32,8,64],[32,8,64],[]]",
           "['c10::BFloat16','c10::BFloat16','']", "['','','']")
        LK(162, 104, 170, 1, "void vllm::reshape_and_cache_flash_kernel") END TAIL);
    /* One group per vLLM op; moe_forward yields to the recognised op below it
     * (the routing's topk_softmax, as TraceLens reports triton_kernels' TopK
     * apart in vllm_decode_full) and keeps its direct expert kernel. */
    cr_expect_eq(opm_trace_report_group_count(r), 5, "one group per vLLM op and the routing's topk");
    const opm_trace_group *topk = group_named(r, "_moe_C::topk_softmax");
    cr_assert_not_null(topk);
    cr_expect(near(topk->kernel_time_s, 2e-6), "topk: %g", topk->kernel_time_s);
    const opm_trace_group *gemm = group_named(r, "vllm::rocm_unquantized_gemm");
    cr_assert_not_null(gemm);
    cr_expect_eq(gemm->category, OPM_TCAT_GEMM);
    cr_assert(gemm->has_kind);
    cr_expect_eq(gemm->kind, OPM_KIND_GEMM);
    cr_expect_geq(gemm->flops, 2ull * 32 * 2880 * 5120, "x[32,2880] · W[5120,2880]ᵀ: %llu",
                  (unsigned long long)gemm->flops);
    cr_expect_leq(gemm->flops, 2ull * 32 * 2880 * 5120 + 32ull * 5120, "plus at most the bias adds");
    const opm_trace_group *moe = group_named(r, "vllm::moe_forward");
    cr_assert_not_null(moe);
    cr_expect_eq(moe->category, OPM_TCAT_GEMM);
    cr_expect(near(moe->kernel_time_s, 30e-6), "the experts: %g", moe->kernel_time_s);
    cr_expect_eq(moe->has_kind, 0, "the expert weights are not among its arguments");
    const opm_trace_group *att = group_named(r, "vllm::unified_attention_with_output");
    cr_assert_not_null(att);
    cr_expect_eq(att->category, OPM_TCAT_ATTENTION);
    const opm_trace_group *kv = group_named(r, "vllm::unified_kv_cache_update");
    cr_assert_not_null(kv);
    cr_expect_eq(kv->category, OPM_TCAT_ATTENTION);
    opm_trace_report_free(r);
}

Test(trace_fixes, vllm_moe_forward_pseudo_ops)
{
    /* GPT-OSS's MoE as vLLM runs it on ROCm (the capture trace of
     * ../shared/data/traces/graph/vllm_decode_full): under vllm::moe_forward,
     * triton_kernels' TopK and SortTokens launch the routing, and
     * moe_forward itself the two matmul_ogs and the scatter.  TraceLens
     * reports TopK and SortTokens as rows and the rest as pseudo ops named
     * by kernel, with moe_forward's arguments; so do we.  Two layers. */
    opm_trace_report *r = report_text(
        HEAD OP("vllm::moe_forward", 10, 80, "[[32,3072],[32,32],[],[]]", "['c10::BFloat16','c10::BFloat16','','']",
                "['','','','']")
        OP("TopK", 12, 5, "[[32,32],[],[],[],[],[],[]]", "['c10::BFloat16','','','','','','']",
           "['','4','True','1','True','','']")
        LK(13, 100, 100, 5, "_topk_forward")
        OP("SortTokens", 20, 5, "[[32,4],[32,4],[]]", "['c10::BFloat16','int','']", "['','','32']")
        LK(21, 101, 110, 15, "_combined_routing_memset")
        LK(30, 102, 130, 130, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu")
        LK(40, 103, 270, 150, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1")
        LK(50, 104, 430, 6, "_finalize_matmul_scatter_bf16")
        OP("vllm::moe_forward", 100, 80, "[[32,3072],[32,32],[],[]]", "['c10::BFloat16','c10::BFloat16','','']",
           "['','','','']")
        LK(130, 105, 500, 131, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu")
        LK(140, 106, 640, 151, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1")
        LK(150, 107, 800, 7, "_finalize_matmul_scatter_bf16")
        END TAIL);
    cr_expect_null(group_named(r, "vllm::moe_forward"), "every kernel of moe_forward is in a pseudo op or a child");
    const struct {
        const char *name;
        uint64_t count;
        double time_s;
    } want[5] = {{"pseudo_op::moe_triton_unfused_up", 2, 261e-6},
                 {"pseudo_op::moe_triton_unfused_down", 2, 301e-6},
                 {"pseudo_op::moe_triton_unfused_finalize_matmul_scatter", 2, 13e-6},
                 {"TopK", 1, 5e-6},
                 {"SortTokens", 1, 15e-6}};
    for (int i = 0; i < 5; i++) {
        const opm_trace_group *g = group_named(r, want[i].name);
        cr_assert_not_null(g, "%s", want[i].name);
        cr_expect_eq(g->count, want[i].count, "%s", want[i].name);
        cr_expect(near(g->kernel_time_s, want[i].time_s), "%s: %g", want[i].name, g->kernel_time_s);
        if (i < 3) {
            cr_expect_str_eq(g->input_dims, "[[32,3072],[32,32],[],[]]", "%s: moe_forward's arguments", want[i].name);
            cr_expect_eq(g->has_kind, 0);
        }
    }
    cr_expect_eq(opm_trace_report_group_count(r), 5);
    opm_trace_report_free(r);
}

Test(trace_fixes, upsample_nearest_on_a_real_trace)
{
    /* tests/data/traces/xdit_excerpt: SD 3.5's VAE upsamples (xDiT on
     * MI300X).  The .vec overload (input, None, [2., 2.]) calls the base one
     * (self, [H, W], 2., 2.) under the same name; the outer owns both, and a
     * channels-last input's contiguous copy besides. */
    char buf[1024];
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_file(src_path("tests/data/traces/xdit_excerpt/trace.json.gz", buf, sizeof buf), &err);
    cr_assert_not_null(t, "%s", err.message);
    opm_trace_report *r = opm_trace_report_new(t, NULL, NULL, &err);
    cr_assert_not_null(r, "%s", err.message);
    opm_trace_free(t);
    int seen = 0;
    for (size_t i = 0; i < opm_trace_report_group_count(r); i++) {
        const opm_trace_group *g = opm_trace_report_group(r, i);
        if (strcmp(g->name, "aten::upsample_nearest2d"))
            continue;
        seen++;
        cr_expect_str_eq(g->input_types, "[\"c10::BFloat16\",\"\",\"ScalarList\"]", "the outer .vec call owns it");
        cr_expect_eq(g->category, OPM_TCAT_ELEMENTWISE);
        cr_assert(g->has_kind);
        cr_expect_eq(g->flops, 0, "nearest only gathers");
        /* [1, C, H, W] read, [1, C, 2H, 2W] written, bf16. */
        uint64_t in = !strcmp(g->input_dims, "[[1,256,512,512],[],[]]")   ? 256ull * 512 * 512
                      : !strcmp(g->input_dims, "[[1,512,256,256],[],[]]") ? 512ull * 256 * 256
                                                                           : 512ull * 128 * 128;
        /* + 4 bytes: the 1-byte [1,1,1,2,1,2] operand that expresses the repeat. */
        cr_expect_eq(g->bytes, 2 * in + 2 * 4 * in + 4, "%s: %llu bytes", g->input_dims, (unsigned long long)g->bytes);
    }
    cr_expect_eq(seen, 3);
    opm_trace_report_free(r);
}
