/* test_kernel_models.c — the attention and memory-streaming kernel models
 * of extended_roofline and effective_roofline: what each physical effect
 * does to a prediction (GQA sharing, causal skipping, split-KV, the
 * reshape-and-cache kernel, L2-warm inputs, vector width, row kernels),
 * the diagnostics they report, and the fallback where no kernel model
 * applies. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"

static const char *const models[] = {"extended_roofline", "effective_roofline"};

static opm_profile run(const char *model, const char *json, const char *hw_name)
{
    opm_op *op = op_json(json);
    opm_hardware *hw = builtin_hw(hw_name);
    opm_profile p = predict_ok(model, op, hw);
    opm_hardware_free(hw);
    opm_op_free(op);
    return p;
}

static double lat(const char *model, const char *json) { return run(model, json, "h100_sxm").latency_s; }

static double diag_num(const opm_profile *p, const char *key)
{
    const opm_diag *d = opm_profile_diag(p, key);
    cr_assert_not_null(d, "no diagnostic %s", key);
    return d->number;
}

#define DECODE(b, kv, h, hkv, extra)                                                                     \
    "{\"kind\": \"attention_decode\", \"batch\": " #b ", \"seq_kv\": " #kv ", \"heads\": " #h             \
    ", \"kv_heads\": " #hkv ", \"head_dim\": 128, \"dtype\": \"bf16\"" extra "}"
#define PREFILL(b, s, causal)                                                                            \
    "{\"kind\": \"attention_prefill\", \"batch\": " #b ", \"seq_q\": " #s ", \"seq_kv\": " #s             \
    ", \"heads\": 32, \"kv_heads\": 8, \"head_dim\": 128, \"dtype\": \"bf16\", \"causal\": " #causal "}"

Test(kernel_models, attention_has_a_kernel_model)
{
    for (int m = 0; m < 2; m++) {
        opm_profile p = run(models[m], PREFILL(1, 4096, true), "h100_sxm");
        cr_assert_null(opm_profile_diag(&p, "fallback"));
        cr_assert_not_null(opm_profile_diag(&p, "limiting_resource"));
        cr_assert_eq(diag_num(&p, "tile_m"), 128);
        cr_assert(diag_num(&p, "ctas") >= 32 * 32);
        /* Slower than the roofline's bound, at most a few times. */
        opm_op *op = op_json(PREFILL(1, 4096, true));
        opm_hardware *hw = builtin_hw("h100_sxm");
        opm_profile r = predict_ok("roofline", op, hw);
        cr_assert(p.latency_s > r.latency_s && p.latency_s < 4 * r.latency_s, "%g vs %g", p.latency_s, r.latency_s);
        opm_hardware_free(hw);
        opm_op_free(op);
    }
}

Test(kernel_models, causal_skips_about_half_the_blocks)
{
    for (int m = 0; m < 2; m++) {
        double c = lat(models[m], PREFILL(1, 16384, true)), n = lat(models[m], PREFILL(1, 16384, false));
        cr_assert(c > 0.45 * n && c < 0.6 * n, "causal %g full %g", c, n);
    }
}

Test(kernel_models, gqa_shares_kv_and_decode_is_bandwidth_bound)
{
    for (int m = 0; m < 2; m++) {
        opm_profile mha = run(models[m], DECODE(64, 8192, 32, 32, ""), "h100_sxm");
        opm_profile gqa = run(models[m], DECODE(64, 8192, 32, 8, ""), "h100_sxm");
        cr_assert(gqa.latency_s < 0.35 * mha.latency_s, "gqa %g mha %g", gqa.latency_s, mha.latency_s);
        cr_assert_str_eq(opm_profile_diag(&mha, "limiting_resource")->text, "hbm");
        cr_assert_str_eq(opm_profile_diag(&gqa, "kernel")->text, "flash_decoding_packed_gqa");
    }
}

Test(kernel_models, dram_bound_decode_waves_pay_their_start_on_top_of_the_stream)
{
    /* The CTAs of a wave start together and stream together: the grid is
     * their start and finish plus the K/V stream at the DRAM rate, more
     * than the DRAM time alone, and it grows with the waves' count. */
    opm_profile p = run("extended_roofline", DECODE(64, 8192, 32, 8, ""), "h100_sxm");
    cr_assert(diag_num(&p, "grid_time_s") > diag_num(&p, "dram_time_s"), "grid %g dram %g",
              diag_num(&p, "grid_time_s"), diag_num(&p, "dram_time_s"));
    cr_assert_str_eq(opm_profile_diag(&p, "limiting_resource")->text, "hbm");
    opm_profile few = run("extended_roofline", DECODE(512, 256, 32, 8, ""), "h100_sxm");
    opm_profile many = run("extended_roofline", DECODE(2048, 64, 32, 8, ""), "h100_sxm");
    /* Same K/V bytes, four times the CTAs: more starts to pay. */
    cr_assert(many.latency_s > few.latency_s, "many %g few %g", many.latency_s, few.latency_s);
}

Test(kernel_models, small_batch_long_context_splits_kv)
{
    opm_profile p = run("extended_roofline", DECODE(1, 65536, 32, 8, ""), "h100_sxm");
    cr_assert(diag_num(&p, "kv_splits") > 1);
    cr_assert(diag_num(&p, "combine_time_s") > 0);
    opm_profile q = run("extended_roofline", DECODE(256, 65536, 32, 8, ""), "h100_sxm");
    cr_assert_eq(diag_num(&q, "kv_splits"), 1);
}

Test(kernel_models, cache_write_and_warm_cache)
{
    double base = lat("extended_roofline", DECODE(8, 1024, 32, 8, ", \"page_size\": 64"));
    double write = lat("extended_roofline", DECODE(8, 1024, 32, 8, ", \"page_size\": 64, \"kv_cache_write\": true"));
    cr_assert(write > base + 3e-6, "write %g base %g", write, base);
    double cold = lat("extended_roofline", DECODE(4, 1024, 32, 8, ""));
    double warm = lat("extended_roofline", DECODE(4, 1024, 32, 8, ", \"l2_warm\": \"all\""));
    cr_assert(warm < cold, "warm %g cold %g", warm, cold);
    rejected("{kind: attention_decode, batch: 1, seq_kv: 8, heads: 2, head_dim: 64, dtype: bf16, l2_warm: hot}",
             "l2_warm");
}

#define PREFILL_AT(s, lib)                                                                                \
    "{\"kind\": \"attention_prefill\", \"batch\": 4, \"seq_q\": " #s ", \"seq_kv\": " #s                 \
    ", \"heads\": 32, \"kv_heads\": 8, \"head_dim\": 128, \"dtype\": \"bf16\", \"causal\": true" lib "}"

Test(kernel_models, padding_rows_of_a_packed_tile_are_computed)
{
    /* Two or eight query heads per KV head fill 2 or 8 rows of the same
     * packed tile: the grid runs the whole tile either way. */
    for (int m = 0; m < 2; m++) {
        opm_profile two = run(models[m], DECODE(1, 65536, 16, 8, ""), "a100_80gb_sxm");
        opm_profile eight = run(models[m], DECODE(1, 65536, 64, 8, ""), "a100_80gb_sxm");
        double g2 = diag_num(&two, "grid_time_s"), g8 = diag_num(&eight, "grid_time_s");
        cr_assert(g8 < 1.05 * g2 && g8 > 0.95 * g2, "grid %g vs %g", g2, g8);
    }
}

Test(kernel_models, fa3_packs_gqa_heads_into_short_prefill_tiles)
{
    /* 32 queries per sequence fill a quarter of a 128-row tile; packing the
     * four heads of a KV head fills one (FA3's should_pack_gqa). */
    opm_profile h = run("extended_roofline", PREFILL_AT(32, ""), "h100_sxm");
    cr_assert_eq(diag_num(&h, "pack_gqa"), 1);
    cr_assert_str_eq(opm_profile_diag(&h, "kernel")->text, "flash_attention_3");
    opm_profile long_seq = run("extended_roofline", PREFILL_AT(4096, ""), "h100_sxm");
    cr_assert_eq(diag_num(&long_seq, "pack_gqa"), 0);
    /* FA2 (the default on mma.sync parts) never packs a prefill; FA3's
     * Ampere path always does, and it is faster for it. */
    opm_profile fa2 = run("extended_roofline", PREFILL_AT(32, ""), "a100_80gb_sxm");
    opm_profile fa3 = run("extended_roofline", PREFILL_AT(32, ", \"attention_kernel\": \"flash_attention_3\""),
                          "a100_80gb_sxm");
    cr_assert_eq(diag_num(&fa2, "pack_gqa"), 0);
    cr_assert_eq(diag_num(&fa3, "pack_gqa"), 1);
    cr_assert(fa3.latency_s < fa2.latency_s, "fa3 %g fa2 %g", fa3.latency_s, fa2.latency_s);
    /* 16 queries × 4 heads fit one decode tile: FA3 packs them, FA2 packs
     * only a one-query decode. */
    opm_profile short3 = run("extended_roofline", PREFILL_AT(16, ""), "h100_sxm");
    opm_profile short2 = run("extended_roofline", PREFILL_AT(16, ""), "l40s");
    cr_assert_eq(diag_num(&short3, "pack_gqa"), 1);
    cr_assert_eq(diag_num(&short2, "pack_gqa"), 0);
    rejected("{kind: attention_prefill, batch: 1, seq_q: 8, seq_kv: 8, heads: 2, head_dim: 64, dtype: bf16, "
             "attention_kernel: flash_attention_9}",
             "attention_kernel");
}

Test(kernel_models, fa2_paged_uses_its_split_kv_kernel_and_varlen_split_rule)
{
    const char *fa2 = ", \"page_size\": 64, \"kv_cache_write\": true, \"attention_kernel\": \"flash_attention_2\"";
    char mha[512], gqa[512];
    snprintf(mha, sizeof mha, "{\"kind\": \"attention_decode\", \"batch\": 1, \"seq_kv\": 65536, \"heads\": 8, "
             "\"kv_heads\": 8, \"head_dim\": 128, \"dtype\": \"bf16\"%s}", fa2);
    snprintf(gqa, sizeof gqa, "{\"kind\": \"attention_decode\", \"batch\": 1, \"seq_kv\": 65536, \"heads\": 32, "
             "\"kv_heads\": 8, \"head_dim\": 128, \"dtype\": \"bf16\"%s}", fa2);
    opm_profile m = run("extended_roofline", mha, "l40s"), g = run("extended_roofline", gqa, "l40s");
    /* FA2's varlen path splits only when it swaps GQA groups into rows. */
    cr_assert_eq(diag_num(&m, "kv_splits"), 1);
    cr_assert(diag_num(&g, "kv_splits") > 1);
    cr_assert_eq(diag_num(&g, "tile_n"), 128);
    cr_assert(m.latency_s > 2 * g.latency_s, "mha %g gqa %g", m.latency_s, g.latency_s);
}

Test(kernel_models, serving_decode_caps_splits_and_skips_page_tails)
{
    opm_profile eager = run("extended_roofline", DECODE(1, 131072, 8, 1, ", \"page_size\": 64"), "h100_sxm");
    opm_profile serve =
        run("extended_roofline", DECODE(1, 131072, 8, 1, ", \"page_size\": 64, \"kv_cache_write\": true"), "h100_sxm");
    cr_assert(diag_num(&eager, "kv_splits") > 32);
    cr_assert(diag_num(&serve, "kv_splits") <= 32);
    /* Two keys in 64-token pages: the page tails are not fetched, so the
     * DRAM time is that of the unpaged cache. */
    opm_profile paged = run("extended_roofline", DECODE(2048, 2, 32, 8, ", \"page_size\": 64"), "h100_sxm");
    opm_profile dense = run("extended_roofline", DECODE(2048, 2, 32, 8, ""), "h100_sxm");
    double dp = diag_num(&paged, "dram_time_s"), dd = diag_num(&dense, "dram_time_s");
    cr_assert(dp < 1.1 * dd, "paged %g dense %g", dp, dd);
}

Test(kernel_models, systolic_parts_fall_back)
{
    /* No tile model for a TPU: the roofline answers (here with its own
     * error: the entry lists no vector peak for the softmax). */
    opm_op *op = op_json(PREFILL(1, 4096, true));
    opm_hardware *hw = builtin_hw("tpu_v5e");
    opm_profile p;
    opm_error e1, e2;
    int r1 = opm_predict("roofline", op, hw, &p, &e1), r2 = opm_predict("extended_roofline", op, hw, &p, &e2);
    cr_assert_eq(r1, r2);
    if (r1) cr_assert_str_eq(e1.message, e2.message);
    else cr_assert_not_null(opm_profile_diag(&p, "fallback"));
    opm_hardware_free(hw);
    opm_op_free(op);
}

#define NORM(kind, rows, cols, extra)                                                                     \
    "{\"kind\": \"" kind "\", \"shape\": [" #rows ", " #cols "], \"dtype\": \"bf16\"" extra "}"

Test(kernel_models, streaming_kernels)
{
    for (int m = 0; m < 2; m++) {
        opm_profile p = run(models[m], NORM("rmsnorm", 4096, 8192, ""), "h100_sxm");
        cr_assert_null(opm_profile_diag(&p, "fallback"));
        cr_assert_str_eq(opm_profile_diag(&p, "kernel")->text, "row_rmsnorm");
        cr_assert_eq(diag_num(&p, "passes"), 2);
        /* Twice the rows, about twice the time once bandwidth-bound. */
        double t1 = p.latency_s, t2 = lat(models[m], NORM("rmsnorm", 8192, 8192, ""));
        cr_assert(t2 > 1.7 * t1 && t2 < 2.2 * t1, "%g %g", t1, t2);
        /* A tiny op costs the kernel floor: fixed time and a DRAM trip. */
        double tiny = lat(models[m], NORM("rmsnorm", 1, 128, ""));
        cr_assert(tiny > 1.5e-6 && tiny < 4e-6, "%g", tiny);
    }
    opm_profile sm = run("extended_roofline", NORM("softmax", 4096, 512, ""), "h100_sxm");
    cr_assert_str_eq(opm_profile_diag(&sm, "kernel")->text, "warp_softmax");
    opm_profile sb = run("extended_roofline", NORM("softmax", 4096, 4096, ""), "h100_sxm");
    cr_assert_str_eq(opm_profile_diag(&sb, "kernel")->text, "block_softmax");
    opm_profile q = run("extended_roofline",
                        "{\"kind\": \"copy\", \"shape\": [16, 8192], \"dtype\": \"bf16\", \"out_dtype\": \"fp8_e4m3\"}",
                        "h100_sxm");
    cr_assert_str_eq(opm_profile_diag(&q, "kernel")->text, "row_quantize");
}

Test(kernel_models, warm_inputs_and_vector_width)
{
    double cold = lat("extended_roofline", NORM("rmsnorm", 1024, 4096, ""));
    double warm = lat("extended_roofline", NORM("rmsnorm", 1024, 4096, ", \"l2_warm\": \"input\""));
    cr_assert(warm < cold, "warm %g cold %g", warm, cold);
    /* An op far larger than L2 gains only the share L2 holds. */
    double big = lat("extended_roofline", NORM("rmsnorm", 65536, 8192, ""));
    double big_w = lat("extended_roofline", NORM("rmsnorm", 65536, 8192, ", \"l2_warm\": \"input\""));
    cr_assert(big_w <= big && big_w > 0.9 * big, "big %g warm %g", big, big_w);
    /* Scalar loads keep less in flight: slower than 128-bit ones. */
    double v16 = lat("extended_roofline", NORM("rmsnorm", 16384, 8192, ""));
    double v2 = lat("extended_roofline", NORM("rmsnorm", 16384, 8192, ", \"vector_bytes\": 2"));
    cr_assert(v2 > 1.2 * v16, "v2 %g v16 %g", v2, v16);
    rejected("{kind: rmsnorm, shape: [4, 4], dtype: bf16, l2_warm: weight}", "l2_warm");
}

#define EMB(tokens, dim) "{\"kind\": \"embedding\", \"tokens\": " #tokens ", \"vocab\": 128256, \"dim\": " #dim ", \"dtype\": \"fp16\"}"

Test(kernel_models, embedding_is_an_index_select_chain)
{
    /* F.embedding runs index_select: a grid capped at 8 CTAs per SM walks the
     * output one scalar element per thread per step, each step an index load
     * then a table load: latency-bound, far below the DRAM rate. */
    opm_profile p = run("extended_roofline", EMB(8192, 4096), "h100_sxm");
    cr_assert_str_eq(opm_profile_diag(&p, "kernel")->text, "index_select");
    cr_assert_str_eq(opm_profile_diag(&p, "limiting_resource")->text, "latency");
    cr_assert_eq(diag_num(&p, "ctas"), 8 * 132);
    double bytes = 8192.0 * 4096 * 2 * 2;
    cr_assert(bytes / p.latency_s < 0.5 * 3.35e12, "%g B/s", bytes / p.latency_s);
    /* Twice the tokens, twice the steps. */
    double t2 = lat("extended_roofline", EMB(16384, 4096));
    cr_assert(t2 > 1.8 * p.latency_s && t2 < 2.2 * p.latency_s, "%g %g", p.latency_s, t2);
    /* Fewer SMs walk longer chains: an A100 (108 SMs, slower clock) is slower. */
    opm_profile a = run("extended_roofline", EMB(8192, 4096), "a100_80gb_sxm");
    cr_assert(a.latency_s > p.latency_s, "a100 %g h100 %g", a.latency_s, p.latency_s);
    /* Few indices: each thread loops over them, one slice per grid. */
    opm_profile s = run("extended_roofline", EMB(4, 4096), "h100_sxm");
    cr_assert_eq(diag_num(&s, "ctas"), 32);
    cr_assert(s.latency_s < p.latency_s);
}

#define GATED(tokens, width) \
    "{\"kind\": \"elementwise\", \"op\": \"silu_mul\", \"shape\": [" #tokens ", " #width "], \"dtype\": \"fp16\", \"vector_bytes\": 2}"

Test(kernel_models, gated_activations_keep_both_halves_in_flight)
{
    /* act_and_mul loads x and its gate before it uses either: two loads
     * per thread in flight, where a norm's loop keeps one. */
    opm_profile g = run("extended_roofline", GATED(4096, 28672), "h100_sxm");
    cr_assert_str_eq(opm_profile_diag(&g, "kernel")->text, "row_gated");
    cr_assert_eq(diag_num(&g, "loads_per_thread"), 2);
    opm_profile n = run("extended_roofline", NORM("rmsnorm", 4096, 14336, ", \"vector_bytes\": 2"), "h100_sxm");
    cr_assert_eq(diag_num(&n, "loads_per_thread"), 1);
    /* Same rows, same threads (1024), same first-pass bytes per row
     * (14336 fp16 elements): with twice the loads in flight the gated
     * kernel's chain is the shorter, though it also waits on its stores. */
    cr_assert_lt(diag_num(&g, "chain_time_s"), diag_num(&n, "chain_time_s"));
}

Test(kernel_models, chain_and_stream_meet_at_a_soft_knee)
{
    /* Where the latency chain and the DRAM stream are both near the time,
     * the kernel is slower than either bound alone: the DRAM's queues
     * lengthen every load.  Far from the knee the larger bound sets it. */
    opm_profile g = run("extended_roofline", GATED(4096, 28672), "h100_sxm");
    double chain = diag_num(&g, "chain_time_s"), mem = diag_num(&g, "memory_time_s");
    double stream = g.latency_s - diag_num(&g, "overhead_s");
    cr_assert_gt(mem, chain);
    cr_assert_gt(mem, diag_num(&g, "dram_time_s"));
    cr_assert(fabs(stream - mem) <= 1e-12 + 1e-9 * mem, "body %g knee %g", stream, mem);
    double lo = chain > diag_num(&g, "dram_time_s") ? chain : diag_num(&g, "dram_time_s");
    cr_assert_lt(mem, 1.5 * lo, "knee %g bounds %g", mem, lo);
    /* An index_select chain is far above its DRAM stream: the knee adds
     * next to nothing there. */
    opm_profile e = run("extended_roofline", EMB(8192, 4096), "h100_sxm");
    double ec = diag_num(&e, "chain_time_s"), em = diag_num(&e, "memory_time_s");
    cr_assert(em >= ec && em < 1.05 * ec, "knee %g chain %g", em, ec);
    cr_assert_str_eq(opm_profile_diag(&e, "limiting_resource")->text, "latency");
}

/* vLLM's fp8 quantise (a row kernel of up to 1024 threads), the kernel the
 * re-run data are: a flat bf16 copy of the same size is bound by the launch
 * of its 512-element CTAs, warm or not. */
#define COPY(rows, cols, warm)                                                                               \
    "{\"kind\": \"copy\", \"shape\": [" #rows ", " #cols "], \"dtype\": \"bf16\", \"out_dtype\": \"fp8_e4m3\", " \
    "\"l2_warm\": \"" warm "\"}"

Test(kernel_models, rerun_tensors_stay_in_l2_only_while_they_fit)
{
    /* The same call re-run (l2_warm: all) on 12 MB fits L40S's 96 MB L2: faster
     * than cold (its L2 runs at 6x its DRAM; on H100 the streaming L2 rate is
     * near the DRAM rate).  On 200 MB it cycles through L2 and keeps nothing: no input
     * from L2, and the write-backs of its stores fall in the next call, so
     * no faster than cold; inputs a previous kernel just wrote (input) keep
     * a share. */
    double fit_cold = run("extended_roofline", COPY(1024, 4096, "none"), "l40s").latency_s;
    double fit_all = run("extended_roofline", COPY(1024, 4096, "all"), "l40s").latency_s;
    cr_assert(fit_all < 0.8 * fit_cold, "all %g cold %g", fit_all, fit_cold);
    opm_profile big_all = run("extended_roofline", COPY(8192, 8192, "all"), "l40s");
    double big_cold = run("extended_roofline", COPY(8192, 8192, "none"), "l40s").latency_s;
    double big_in = run("extended_roofline", COPY(8192, 8192, "input"), "l40s").latency_s;
    cr_assert(big_all.latency_s >= big_cold, "all %g cold %g", big_all.latency_s, big_cold);
    cr_assert_eq(diag_num(&big_all, "l2_input_fraction"), 0);
    cr_assert(big_in < big_cold, "input %g cold %g", big_in, big_cold);
}

Test(kernel_models, norm_rereads_spill_to_dram_past_the_l2)
{
    /* PyTorch's layer norm reads each row twice.  On a P4 (2 MB L2) the rows
     * of every CTA in flight (20 SMs × 16 CTAs × 16 KB) do not fit: part of
     * the second read comes from DRAM.  On an A100 40GB, rows of 1024 floats
     * in flight (108 × 16 × 4 KB) fit its 20 MB partition: an L2 hit. */
    const char *ln = "{\"kind\": \"layernorm\", \"shape\": [8192, 4096], \"dtype\": \"fp32\"}";
    opm_profile p4 = run("extended_roofline", ln, "p4");
    cr_assert(diag_num(&p4, "reread_dram_fraction") > 0.5, "%g", diag_num(&p4, "reread_dram_fraction"));
    opm_profile a = run("extended_roofline", "{\"kind\": \"layernorm\", \"shape\": [8192, 1024], \"dtype\": \"fp32\"}",
                        "a100_40gb_pcie");
    cr_assert_eq(diag_num(&a, "reread_dram_fraction"), 0);
    /* One pass (RMS norm has two as well; a warp softmax holds its row): no re-read. */
    opm_profile w = run("extended_roofline", NORM("softmax", 8192, 512, ""), "p4");
    cr_assert_eq(diag_num(&w, "reread_dram_fraction"), 0);
}

#define QUANT(rows, cols) \
    "{\"kind\": \"copy\", \"shape\": [" #rows ", " #cols "], \"dtype\": \"bf16\", \"out_dtype\": \"fp8_e4m3\", \"l2_warm\": \"all\"}"

Test(kernel_models, many_small_ctas_wait_on_the_block_scheduler)
{
    /* A quantising copy of 8192 rows of 32 elements launches 8192 one-warp
     * CTAs: 63 launches per H100 SM one after the other, longer than their
     * few bytes take.  The same bytes in 32 rows of 8192 are a few CTAs. */
    opm_profile many = run("extended_roofline", QUANT(8192, 32), "h100_sxm");
    cr_assert_str_eq(opm_profile_diag(&many, "limiting_resource")->text, "cta_launch");
    cr_assert_eq(many.bound, OPM_BOUND_OVERHEAD);
    double t_launch = diag_num(&many, "cta_launch_time_s");
    cr_assert(t_launch > diag_num(&many, "chain_time_s") && t_launch > diag_num(&many, "dram_time_s"));
    opm_profile few = run("extended_roofline", QUANT(32, 8192), "h100_sxm");
    cr_assert(few.latency_s < many.latency_s, "few %g many %g", few.latency_s, many.latency_s);
    cr_assert(diag_num(&few, "cta_launch_time_s") < t_launch);
    /* Twice the rows, about twice the launch time. */
    opm_profile twice = run("extended_roofline", QUANT(16384, 32), "h100_sxm");
    double r = diag_num(&twice, "cta_launch_time_s") / t_launch;
    cr_assert(r > 1.9 && r < 2.1, "%g", r);
    /* vLLM's static quantise launches 256 threads per row whatever its width,
     * each loading 16 bytes per step. */
    cr_assert_eq(diag_num(&many, "threads_per_cta"), 256);
    cr_assert_eq(diag_num(&few, "threads_per_cta"), 256);
    /* More SMs launch in parallel: an A100 (108 SMs, lower clock) takes longer per grid. */
    opm_profile a = run("extended_roofline", QUANT(8192, 32), "a100_80gb_sxm");
    cr_assert(diag_num(&a, "cta_launch_time_s") > t_launch);
}

Test(kernel_models, l2_resident_streams_run_at_the_streaming_l2_rate)
{
    /* A re-run quantise of 25 MB stays in H100's 50 MB L2: it is bound by the
     * rate a streaming kernel's loads and stores reach L2 (16 B per SM per
     * clock: 4.2 TB/s), not by the L2 bandwidth GEMMs' bulk copies see. */
    opm_profile p = run("extended_roofline", QUANT(2048, 4096), "h100_sxm");
    cr_assert_str_eq(opm_profile_diag(&p, "limiting_resource")->text, "l2");
    double bytes = 2048.0 * 4096 * 3, cap = 16.0 * 132 * 1.98e9;
    double t_l2 = diag_num(&p, "l2_time_s");
    cr_assert(t_l2 >= 0.99 * bytes / cap && t_l2 <= 1.01 * bytes / cap, "%g s for %g B", t_l2, bytes);
    /* Past the L2 (100 MB re-run: nothing stays) DRAM bounds it instead. */
    opm_profile big = run("extended_roofline", QUANT(8192, 4096), "h100_sxm");
    cr_assert_str_neq(opm_profile_diag(&big, "limiting_resource")->text, "l2");
    /* Never below the DRAM rate: B200's SMs stream its 8 TB/s (more than 16 B
     * per SM per clock), so a 200 MB quantise (past its 126 MB L2) takes its
     * L2 path about as long as its DRAM stream, not 8 / 4.7 times as long. */
    opm_profile bw = run("extended_roofline", QUANT(8192, 8192), "b200");
    cr_assert(diag_num(&bw, "l2_time_s") < 1.1 * diag_num(&bw, "dram_time_s"), "l2 %g dram %g",
              diag_num(&bw, "l2_time_s"), diag_num(&bw, "dram_time_s"));
    /* A GPU whose L2 figure is below that rate keeps its own (L40S: 5.0 TB/s < 16 × 142 × 2.52 GHz). */
    opm_profile l = run("extended_roofline", QUANT(2048, 4096), "l40s");
    double tl = diag_num(&l, "l2_time_s");
    cr_assert(tl >= 0.99 * bytes / 5.022e12 && tl <= 1.01 * bytes / 5.022e12, "%g", tl);
}

#define SERVE_DECODE(b, kv, h, hkv, lib)                                                                  \
    "{\"kind\": \"attention_decode\", \"batch\": " #b ", \"seq_kv\": " #kv ", \"heads\": " #h             \
    ", \"kv_heads\": " #hkv ", \"head_dim\": 128, \"dtype\": \"bf16\", \"page_size\": 64, "              \
    "\"kv_cache_write\": true, \"attention_kernel\": \"" lib "\"}"

Test(kernel_models, fa3_splits_by_its_scheduler_rule_not_the_fastest_count)
{
    /* FA3's varlen scheduler gives a sequence about SMs / (1.1 × batch ×
     * KV heads) splits: the split CTAs of a batch fill the SMs once,
     * whatever the context, and fewer splits as the batch grows. */
    double prev = 1e9;
    for (int b = 4; b <= 16; b *= 2) {
        char j[512];
        snprintf(j, sizeof j, "{\"kind\": \"attention_decode\", \"batch\": %d, \"seq_kv\": 131072, \"heads\": 2, "
                 "\"kv_heads\": 1, \"head_dim\": 128, \"dtype\": \"bf16\", \"page_size\": 64, "
                 "\"kv_cache_write\": true, \"attention_kernel\": \"flash_attention_3\"}", b);
        opm_profile p = run("extended_roofline", j, "a100_80gb_sxm");
        double s = diag_num(&p, "kv_splits");
        cr_assert(s < prev, "batch %d: %g splits after %g", b, s, prev);
        cr_assert(b * s <= 108 + b && b * s >= 0.5 * 108 / 1.1, "batch %d: %g splits", b, s);
        /* FA3's Ampere path runs a split varlen call with its 8-warp
         * 128 x 112 tile, one CTA per SM. */
        cr_assert_eq(diag_num(&p, "tile_n"), 112);
        cr_assert_eq(diag_num(&p, "ctas_per_sm"), 1);
        prev = s;
    }
    /* One sequence: the serving cap (32) bounds the count. */
    opm_profile one = run("extended_roofline", SERVE_DECODE(1, 131072, 2, 1, "flash_attention_3"), "a100_80gb_sxm");
    cr_assert(diag_num(&one, "kv_splits") > 16 && diag_num(&one, "kv_splits") <= 32);
    /* At most four KV blocks never split (num_splits_heuristic). */
    opm_profile few = run("extended_roofline", SERVE_DECODE(1, 448, 2, 1, "flash_attention_3"), "a100_80gb_sxm");
    cr_assert_eq(diag_num(&few, "kv_splits"), 1);
    cr_assert_eq(diag_num(&few, "tile_n"), 64);
}

Test(kernel_models, fa2_splits_by_its_efficiency_heuristic)
{
    /* FA2 takes the fewest splits within 0.85 of the best wave efficiency
     * over twice the SMs: one KV head of one sequence on 142 SMs takes
     * about 0.85 × 284 CTAs, not every block it could. */
    opm_profile p = run("extended_roofline", DECODE(1, 131072, 8, 1, ", \"page_size\": 64, "
                                                   "\"attention_kernel\": \"flash_attention_2\""), "l40s");
    double s = diag_num(&p, "kv_splits");
    cr_assert(s >= 0.85 * 128 - 1 && s <= 128, "%g splits", s);
    /* A grid that nearly fills twice the SMs does not split. */
    opm_profile q = run("extended_roofline", SERVE_DECODE(128, 8192, 32, 8, "flash_attention_2"), "l40s");
    cr_assert_eq(diag_num(&q, "kv_splits"), 1);
}

Test(kernel_models, fa2_causal_grids_of_few_waves_pay_their_tail)
{
    /* FA2 launches a causal grid's short tiles first.  Two heads of 64
     * tiles fit one wave of SMs (the longest CTA sets the time); four
     * heads (256 CTAs on 142 SMs) start their longest tiles last, so they
     * take well over that although their CTA-seconds fit the SMs. */
    const char *fmt = "{\"kind\": \"attention_prefill\", \"batch\": 1, \"seq_q\": 8192, \"seq_kv\": 8192, "
                      "\"heads\": %d, \"kv_heads\": 1, \"head_dim\": 128, \"dtype\": \"bf16\", \"causal\": true, "
                      "\"attention_kernel\": \"%s\"}";
    char two[512], four[512];
    snprintf(two, sizeof two, fmt, 2, "flash_attention_2");
    snprintf(four, sizeof four, fmt, 4, "flash_attention_2");
    opm_profile p2 = run("extended_roofline", two, "l40s"), p4 = run("extended_roofline", four, "l40s");
    double g2 = diag_num(&p2, "grid_time_s"), g4 = diag_num(&p4, "grid_time_s");
    cr_assert(g4 > 1.3 * g2, "4 heads %g, 2 heads %g", g4, g2);
    /* FA3's scheduler runs the longest tiles first: no such tail. */
    snprintf(two, sizeof two, fmt, 2, "flash_attention_3");
    snprintf(four, sizeof four, fmt, 4, "flash_attention_3");
    opm_profile q2 = run("extended_roofline", two, "h100_sxm"), q4 = run("extended_roofline", four, "h100_sxm");
    double f2 = diag_num(&q2, "grid_time_s"), f4 = diag_num(&q4, "grid_time_s");
    cr_assert(f4 < 1.15 * f2, "4 heads %g, 2 heads %g", f4, f2);
}

Test(kernel_models, two_small_ctas_share_an_sm_where_their_tiles_fit)
{
    /* FA3's 4-warp Ampere CTA (64 KB of tiles) fits twice in an A100 SM's
     * 164 KB, not in an L40S SM's 100 KB; FA3's Hopper CTA takes its SM. */
    const char *d = SERVE_DECODE(2048, 2, 32, 8, "flash_attention_3");
    opm_profile a = run("extended_roofline", d, "a100_80gb_sxm");
    cr_assert_eq(diag_num(&a, "ctas_per_sm"), 2);
    opm_profile h = run("extended_roofline", d, "h100_sxm");
    cr_assert_eq(diag_num(&h, "ctas_per_sm"), 1);
    opm_profile l = run("extended_roofline", SERVE_DECODE(2048, 2, 32, 8, "flash_attention_2"), "l40s");
    cr_assert_eq(diag_num(&l, "ctas_per_sm"), 1);
    /* Their starts overlap: a latency-bound grid of many waves costs less
     * than one CTA start per wave of SMs. */
    double waves_of_sms = diag_num(&a, "ctas") / 108;
    cr_assert(diag_num(&a, "waves") < 0.51 * waves_of_sms);
}

Test(kernel_models, fa2_serving_forward_launches_no_scheduler_kernel)
{
    opm_profile f2 = run("extended_roofline", SERVE_DECODE(8, 1024, 32, 8, "flash_attention_2"), "a100_80gb_sxm");
    opm_profile f3 = run("extended_roofline", SERVE_DECODE(8, 1024, 32, 8, "flash_attention_3"), "a100_80gb_sxm");
    double c2 = diag_num(&f2, "cache_write_time_s"), c3 = diag_num(&f3, "cache_write_time_s");
    /* One kernel floor (fixed time and a DRAM trip: 2 us here) fewer. */
    cr_assert(c3 - c2 > 1.5e-6 && c3 - c2 < 4e-6, "fa2 %g fa3 %g", c2, c3);
}

Test(kernel_models, l2_hits_in_the_far_partition_lengthen_the_chain)
{
    /* A100's L2 hits in the other partition take 1.75x the near ones (the
     * entry's far_latency_cycles); a streaming kernel's warm lines are near
     * its SM in one case of two, so a latency-bound row kernel on warm
     * inputs takes longer than with near hits only, and the same figure on
     * an unpartitioned L2 changes nothing (no other partition). */
    opm_hardware *a100 = builtin_hw("a100_80gb_pcie");
    cr_assert_eq(opm_hardware_find_level(a100, "l2")->far_latency_cycles, 368);
    opm_hardware *h100 = builtin_hw("h100_sxm");
    cr_assert_eq(opm_hardware_find_level(h100, "l2")->far_latency_cycles, 0);
    opm_hardware *near = builtin_hw_with_l2("a100_80gb_pcie", 0, 2), *one = builtin_hw_with_l2("a100_80gb_pcie", 368, 1);
    opm_op *op = op_json(NORM("rmsnorm", 512, 4096, ", \"l2_warm\": \"input\", \"vector_bytes\": 2"));
    opm_profile far = predict_ok("extended_roofline", op, a100);
    opm_profile nr = predict_ok("extended_roofline", op, near), un = predict_ok("extended_roofline", op, one);
    cr_assert_str_eq(opm_profile_diag(&far, "limiting_resource")->text, "latency");
    cr_assert_gt(diag_num(&far, "chain_time_s"), 1.05 * diag_num(&nr, "chain_time_s"));
    cr_assert_lt(diag_num(&far, "chain_time_s"), 1.375 * diag_num(&nr, "chain_time_s"));
    cr_assert_eq(un.latency_s, nr.latency_s);
    /* Cold inputs stream from DRAM: only the re-read's L2 hits change. */
    opm_op *cold = op_json(NORM("rmsnorm", 512, 4096, ", \"vector_bytes\": 2"));
    opm_profile fc = predict_ok("extended_roofline", cold, a100), nc = predict_ok("extended_roofline", cold, near);
    cr_assert_gt(fc.latency_s, nc.latency_s);
    cr_assert_lt(fc.latency_s - nc.latency_s, far.latency_s - nr.latency_s);
    opm_op_free(cold);
    opm_op_free(op);
    opm_hardware_free(one);
    opm_hardware_free(near);
    opm_hardware_free(h100);
    opm_hardware_free(a100);
}

/* At a lower SM clock DRAM streams at the same bandwidth (DRAM has its own
 * clock): a kernel with enough bytes in flight to cover the bandwidth ×
 * latency product (a large add, a DRAM-bound GEMV) keeps its DRAM time
 * and slows only in its fixed, clock-bound parts.  A kernel short of bytes
 * in flight (a latency-bound norm of few rows) slows through its latency
 * chain, whose L2 part runs on the SM clock: by more than a few percent,
 * less than the clock ratio (the DRAM part of each load does not slow). */
static double hbm_time(const opm_profile *p)
{
    for (size_t i = 0; i < p->level_count; i++)
        if (!strcmp(p->levels[i].name, "hbm")) return p->levels[i].time_s;
    return 0;
}

Test(kernel_models, a_lower_clock_slows_only_kernels_short_of_bytes_in_flight)
{
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_error err;
    opm_hardware *slow = opm_hardware_with_clock(hw, 900e6, &err);
    cr_assert_not_null(slow, "%s", err.message);
    const double ratio = opm_hardware_clock_hz(hw) / 900e6;
    cr_assert_gt(ratio, 1.5);
    const char *add = "{\"kind\": \"elementwise\", \"inputs\": [[134217728], [134217728]], \"op\": \"add\", \"dtype\": \"bf16\"}";
    const char *gemv = "{\"kind\": \"gemm\", \"m\": 1, \"n\": 16384, \"k\": 16384, \"dtype\": \"bf16\"}";
    for (int m = 0; m < 2; m++) {
        opm_op *op = op_json(add);
        opm_profile a = predict_ok(models[m], op, hw), b = predict_ok(models[m], op, slow);
        cr_assert_str_eq(opm_profile_diag(&b, "limiting_resource")->text, "hbm");
        cr_assert_eq(diag_num(&b, "dram_time_s"), diag_num(&a, "dram_time_s"));
        cr_assert(b.latency_s < 1.05 * a.latency_s, "%s: add %g at 900 MHz vs %g", models[m], b.latency_s, a.latency_s);
        opm_op_free(op);
        op = op_json(gemv);
        a = predict_ok(models[m], op, hw);
        b = predict_ok(models[m], op, slow);
        cr_assert(hbm_time(&a) > 0);
        cr_assert(fabs(hbm_time(&b) / hbm_time(&a) - 1) < 1e-3, "%s: GEMV DRAM %g vs %g", models[m], hbm_time(&b),
                  hbm_time(&a));
        cr_assert(b.latency_s < 0.5 * (1 + ratio) * a.latency_s, "%s: GEMV %g at 900 MHz vs %g", models[m], b.latency_s,
                  a.latency_s);
        opm_op_free(op);
        op = op_json(NORM("rmsnorm", 512, 4096, ""));
        a = predict_ok(models[m], op, hw);
        b = predict_ok(models[m], op, slow);
        cr_assert_str_eq(opm_profile_diag(&a, "limiting_resource")->text, "latency");
        double c = diag_num(&b, "chain_time_s") / diag_num(&a, "chain_time_s");
        cr_assert(c > 1.1 && c < ratio, "%s: chain x%g at 900 MHz", models[m], c);
        cr_assert(b.latency_s > 1.1 * a.latency_s && b.latency_s < ratio * a.latency_s, "%s: norm %g vs %g", models[m],
                  b.latency_s, a.latency_s);
        opm_op_free(op);
    }
    opm_hardware_free(slow);
    opm_hardware_free(hw);
}

Test(kernel_models, the_l2_floor_follows_the_clock)
{
    /* B200's DRAM (8 TB/s) outruns 16 B per SM per clock, so a streaming
     * kernel's L2 rate is floored at the DRAM rate, a rate of the L2-to-SM
     * path at the description's clock.  That path runs on the SM clock: at
     * 40% of it a re-run quantise resident in L2 (25 MB of 126 MB) takes its
     * L2 time longer by the clock ratio, as a kernel under every other
     * on-chip rate does, while a DRAM stream's DRAM time stays. */
    opm_hardware *hw = builtin_hw("b200");
    opm_error err;
    const double f = 0.4 * opm_hardware_clock_hz(hw);
    opm_hardware *slow = opm_hardware_with_clock(hw, f, &err);
    cr_assert_not_null(slow, "%s", err.message);
    const double ratio = opm_hardware_clock_hz(hw) / f;
    for (int m = 0; m < 2; m++) {
        opm_op *op = op_json(QUANT(2048, 4096));
        opm_profile a = predict_ok(models[m], op, hw), b = predict_ok(models[m], op, slow);
        cr_assert_str_eq(opm_profile_diag(&a, "limiting_resource")->text, "l2");
        cr_assert_str_eq(opm_profile_diag(&b, "limiting_resource")->text, "l2");
        double r = diag_num(&b, "l2_time_s") / diag_num(&a, "l2_time_s");
        cr_assert(fabs(r / ratio - 1) < 1e-9, "%s: L2 time x%g at %g of the clock", models[m], r, 1 / ratio);
        double lr = b.latency_s / a.latency_s;
        cr_assert(lr > 0.9 * ratio && lr < 1.01 * ratio, "%s: latency x%g, clock ratio %g", models[m], lr, ratio);
        opm_op_free(op);
        /* Past the L2 the DRAM time stays and the slower path binds. */
        op = op_json(QUANT(8192, 8192));
        a = predict_ok(models[m], op, hw);
        b = predict_ok(models[m], op, slow);
        cr_assert_eq(diag_num(&b, "dram_time_s"), diag_num(&a, "dram_time_s"));
        cr_assert(fabs(diag_num(&b, "l2_time_s") / diag_num(&a, "l2_time_s") / ratio - 1) < 1e-9);
        cr_assert_str_eq(opm_profile_diag(&b, "limiting_resource")->text, "l2");
        opm_op_free(op);
    }
    opm_hardware_free(slow);
    opm_hardware_free(hw);
}

Test(kernel_models, a_kernel_without_dram_traffic_has_no_dram_stream)
{
    /* A re-run quantise whose input is warm in L2 and whose output stays
     * there moves no DRAM byte: its memory side is the latency chain alone,
     * not the soft knee of the chain with a DRAM latency. */
    for (int m = 0; m < 2; m++) {
        opm_profile p = run(models[m], QUANT(16, 4096), "h100_sxm");
        cr_assert_eq(diag_num(&p, "dram_time_s"), 0);
        cr_assert_eq(diag_num(&p, "stream_time_s"), 0);
        cr_assert_eq(diag_num(&p, "memory_time_s"), diag_num(&p, "chain_time_s"), "%s", models[m]);
    }
}
