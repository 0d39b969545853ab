/* test_llm.c — whole-model rollups (src/llm): the per-op perf-model seed's
 * Llama-3-70B numbers on its MI300X figures, parameter counts of every
 * shipped config against the published totals, sharding invariants, config
 * errors with their position, a HuggingFace config.json read as it is, and
 * the speed of a 405B decode rollup. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "llm/llm.h"
#include "testutil.h"

static llm_step_spec spec(llm_phase ph)
{
    llm_step_spec s = {ph, 1, 2048, ph == LLM_DECODE ? 2048 : 0, OPM_BF16, OPM_BF16, 1, 1, 1, "roofline", 0};
    return s;
}

static llm_config *cfg(const char *name)
{
    opm_error err;
    llm_config *c = llm_config_open(name, &err);
    cr_assert(c, "%s: %s", name, err.message);
    return c;
}

static opm_hardware *seed_hw(void)
{
    char buf[512];
    opm_error err;
    opm_hardware *hw = opm_hardware_load_file(src_path("tests/data/mi300x_golden.yaml", buf, sizeof buf), &err);
    cr_assert(hw, "%s", err.message);
    return hw;
}

static double step_latency(const llm_step *s)
{
    double t = 0;
    for (size_t i = 0; i < s->n_ops; i++) t += s->ops[i].prof.latency_s * (double)s->ops[i].count;
    return t;
}

static const llm_step_op *find(const llm_step *s, const char *name)
{
    for (size_t i = 0; i < s->n_ops; i++)
        if (!strcmp(s->ops[i].name, name)) return &s->ops[i];
    cr_assert_fail("no op %s", name);
    return NULL;
}

static void run(const char *model, llm_step_spec *sp, const opm_hardware *hw, llm_step *s)
{
    opm_error err;
    llm_config *c = cfg(model);
    cr_assert_eq(llm_step_build(c, sp, s, &err), 0, "%s", err.message);
    if (hw) cr_assert_eq(llm_step_predict(s, sp, hw, &err), 0, "%s", err.message);
    llm_config_free(c);
}

/* The seed's rollup: GEMMs and SDPA only, roofline, bf16, batch 1. */
Test(llm, seed_llama3_70b_decode_per_op_and_total)
{
    opm_hardware *hw = seed_hw();
    llm_step_spec sp = spec(LLM_DECODE);
    opm_error err;
    cr_assert_eq(llm_kinds_parse("gemm,attention", &sp.kinds_mask, &err), 0);
    llm_step s;
    run("llama3_70b", &sp, hw, &s);
    static const struct { const char *name; double us; } want[] = {
        {"q", 25.3}, {"k", 3.2}, {"v", 3.2}, {"o", 25.3}, {"gate", 88.6}, {"up", 88.6}, {"down", 88.6},
        {"attention", 1.6}, {"lm_head", 396.5}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double us = find(&s, want[i].name)->prof.latency_s * 1e6;
        cr_expect(fabs(us - want[i].us) <= 0.05 + 1e-9, "%s: %.4f us, seed %.1f", want[i].name, us, want[i].us);
    }
    cr_expect_eq(find(&s, "q")->count, 80);
    double ms = step_latency(&s) * 1e3;
    cr_expect(fabs(ms - 26.36) <= 0.005, "decode %.4f ms per token, seed 26.36", ms);
    llm_step_free(&s);
    opm_hardware_free(hw);
}

Test(llm, seed_llama3_70b_prefill_2048)
{
    opm_hardware *hw = seed_hw();
    llm_step_spec sp = spec(LLM_PREFILL);
    opm_error err;
    cr_assert_eq(llm_kinds_parse("gemm,attention", &sp.kinds_mask, &err), 0);
    llm_step s;
    run("llama3_70b", &sp, hw, &s);
    double ms = step_latency(&s) * 1e3;
    /* 409.858: the exact causal triangle S(S+1)/2 where the seed takes S²/2 */
    cr_expect(fabs(ms - 409.85) <= 0.01, "prefill %.4f ms, seed 409.85", ms);
    llm_step_free(&s);
    opm_hardware_free(hw);
}

Test(llm, every_shipped_config_matches_its_published_params)
{
    cr_assert_geq(llm_config_builtin_count(), 12);
    for (size_t i = 0; i < llm_config_builtin_count(); i++) {
        llm_config *c = cfg(llm_config_builtin_name(i));
        double want = llm_config_published_params(c), got = (double)llm_config_params(c);
        cr_expect(want > 0, "%s cites no published total", llm_config_name(c));
        cr_expect(fabs(got - want) <= 0.005 * want, "%s: %.6g params, published %.6g", llm_config_name(c), got, want);
        llm_config_free(c);
    }
    llm_config *c = cfg("llama3_70b");
    cr_expect_eq(llm_config_params(c), 70553706496ull); /* the safetensors total */
    llm_config_free(c);
    c = cfg("qwen2.5_7b"); /* '.' reads as '_' */
    llm_config_free(c);
    /* the architectures added with SSM and hybrid layers, exactly */
    static const struct { const char *name; uint64_t params; } exact[] = {
        {"qwen3_235b_a22b", 235093634560ull}, {"mamba2_2_7b", 2702599680ull}, {"jamba_v0_1", 51570323328ull}};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        c = cfg(exact[i].name);
        cr_expect_eq(llm_config_params(c), exact[i].params, "%s: %llu", exact[i].name,
                     (unsigned long long)llm_config_params(c));
        llm_config_free(c);
    }
}

/* Model FLOPs: per-device counts × the devices that split each op; matrix
 * FLOPs only when `matrix`. */
static uint64_t model_flops(const llm_step *s, int matrix)
{
    uint64_t f = 0;
    for (size_t i = 0; i < s->n_ops; i++) {
        if (!s->ops[i].op) continue;
        opm_counts k;
        opm_error err;
        cr_assert_eq(opm_op_count(s->ops[i].op, &k, &err), 0, "%s", err.message);
        f += (k.matrix_flops + (matrix ? 0 : k.vector_flops)) * (uint64_t)s->ops[i].count * (uint64_t)s->ops[i].shards;
    }
    return f;
}

Test(llm, total_flops_do_not_depend_on_tp_pp_ep)
{
    static const struct { const char *model; int64_t tp, pp, ep; } cases[] = {
        {"llama3_70b", 2, 1, 1}, {"llama3_70b", 8, 1, 1}, {"llama3_70b", 4, 4, 1}, {"llama3_70b", 1, 8, 1},
        {"mixtral_8x7b", 2, 1, 1}, {"mixtral_8x7b", 1, 1, 8}, {"mixtral_8x7b", 4, 2, 2},
        {"deepseek_v3", 8, 1, 8}, {"qwen3_30b_a3b", 4, 1, 16}};
    for (int ph = 0; ph < 3; ph++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            llm_step_spec a = spec((llm_phase)ph), b = a;
            a.batch = b.batch = ph == LLM_DECODE ? 64 : 8;
            a.seq = b.seq = 256;
            b.tp = cases[i].tp, b.pp = cases[i].pp, b.ep = cases[i].ep;
            llm_step sa, sb;
            run(cases[i].model, &a, NULL, &sa);
            run(cases[i].model, &b, NULL, &sb);
            /* Matrix FLOPs exactly; all FLOPs within 1%: a tp shard of
             * fused_moe still sums (and in backward differentiates) its k
             * partial outputs over the full hidden size, vector work that tp
             * repeats (0.8% of a Qwen3-30B-A3B training step at tp 4), and
             * the optimizer update covers the replicated norms on every
             * device.  Dense models agree to 1e-3 and better. */
            uint64_t ma = model_flops(&sa, 1), mb = model_flops(&sb, 1);
            double fa = (double)model_flops(&sa, 0), fb = (double)model_flops(&sb, 0);
            cr_expect_eq(ma, mb, "%s phase %d tp %lld pp %lld ep %lld: matrix %llu vs %llu", cases[i].model, ph,
                         (long long)b.tp, (long long)b.pp, (long long)b.ep, (unsigned long long)mb, (unsigned long long)ma);
            cr_expect(fabs(fa - fb) <= (sa.groups[sa.n_groups - 1].label[0] == 'm' ? 1e-2 : 1e-3) * fa, "%s phase %d tp %lld pp %lld ep %lld: %.17g vs %.17g", cases[i].model,
                      ph, (long long)b.tp, (long long)b.pp, (long long)b.ep, fb, fa);
            llm_step_free(&sa);
            llm_step_free(&sb);
        }
}

Test(llm, weights_per_device_divide_by_the_sharding)
{
    llm_step_spec a = spec(LLM_DECODE), b = a;
    b.tp = 8;
    llm_step sa, sb;
    run("llama3_70b", &a, NULL, &sa);
    run("llama3_70b", &b, NULL, &sb);
    /* only the replicated norms (0.015%) keep it from dividing exactly */
    cr_expect(fabs((double)sb.weights_bytes * 8 - (double)sa.weights_bytes) <= 5e-4 * (double)sa.weights_bytes,
              "%llu vs %llu / 8", (unsigned long long)sb.weights_bytes, (unsigned long long)sa.weights_bytes);
    cr_expect_eq(sa.weights_bytes, 2 * sa.params);
    cr_expect_eq(sb.kv_cache_bytes * 8, sa.kv_cache_bytes); /* 8 kv heads, one per device */
    llm_step_free(&sb);
    /* Expert parallel: the experts divide by ep, the rest stays. */
    llm_step_spec e1 = spec(LLM_DECODE), e8 = e1;
    e8.ep = 8;
    llm_step m1, m8;
    run("mixtral_8x7b", &e1, NULL, &m1);
    run("mixtral_8x7b", &e8, NULL, &m8);
    uint64_t expert = 3ull * 4096 * 14336 * 2; /* one expert's bytes */
    cr_expect_eq(m1.weights_bytes - m8.weights_bytes, 32ull * 7 * expert);
    llm_step_free(&m1);
    llm_step_free(&m8);
    llm_step_free(&sa);
}

Test(llm, expert_parallel_all_to_all_moves_the_routed_tokens)
{
    llm_step_spec sp = spec(LLM_PREFILL);
    sp.batch = 4;
    sp.seq = 1024;
    sp.ep = 8;
    llm_step s;
    run("mixtral_8x7b", &sp, NULL, &s);
    const llm_step_op *d = find(&s, "moe_dispatch_all_to_all"), *c = find(&s, "moe_combine_all_to_all");
    /* 4096 tokens × top-2 × 4096 hidden × 2 bytes, 7/8 of it leaving the device */
    uint64_t want = 4096ull * 2 * 4096 * 2 / 8 * 7;
    cr_expect_eq(d->comm_bytes, want);
    cr_expect_eq(c->comm_bytes, want);
    cr_expect_eq(d->count, 32);
    cr_expect_null(d->op);
    llm_step_free(&s);
}

Test(llm, llama3_405b_does_not_fit_one_h100)
{
    llm_step_spec sp = spec(LLM_DECODE);
    llm_step s;
    run("llama3_405b", &sp, NULL, &s);
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert(hw);
    double cap = opm_hardware_find_level(hw, "hbm")->size_bytes;
    cr_expect_eq(s.weights_bytes, 811706777600ull);
    cr_expect_gt((double)s.weights_bytes, cap);
    llm_step_free(&s);
    opm_hardware_free(hw);
}

Test(llm, train_has_backward_and_the_optimizer)
{
    llm_step_spec sp = spec(LLM_TRAIN);
    sp.seq = 512;
    llm_step s;
    run("llama3_8b", &sp, NULL, &s);
    size_t fwd = 0, bwd = 0, opt = 0;
    for (size_t i = 0; i < s.n_ops; i++) {
        if (!s.ops[i].op) continue;
        opm_phase p = opm_op_phase(s.ops[i].op);
        fwd += p == OPM_PHASE_TRAIN_FWD;
        bwd += p == OPM_PHASE_TRAIN_BWD;
        opt += !strcmp(s.ops[i].name, "adam_update");
    }
    cr_expect_eq(fwd, bwd);
    cr_expect_eq(opt, 1);
    cr_expect_gt(s.optimizer_bytes, 12 * s.params);
    llm_step_free(&s);
}

Test(llm, config_errors_give_file_line_field)
{
    static const char text[] = "name: x\nnum_hidden_layers: 2\nhidden_size: lots\nnum_attention_heads: 2\nvocab_size: 10\n";
    opm_error err;
    llm_config *c = llm_config_load_string(text, sizeof text - 1, "my.yaml", &err);
    cr_assert_null(c);
    cr_expect(strstr(err.message, "my.yaml:3"), "%s", err.message);
    cr_expect(strstr(err.message, "hidden_size"), "%s", err.message);
    static const char missing[] = "num_hidden_layers: 2\nhidden_size: 8\n";
    c = llm_config_load_string(missing, sizeof missing - 1, "m.yaml", &err);
    cr_assert_null(c);
    cr_expect(strstr(err.message, "num_attention_heads"), "%s", err.message);
    static const char huge[] = "num_hidden_layers: 100000000000\nhidden_size: 8\nnum_attention_heads: 2\nvocab_size: 10\n";
    c = llm_config_load_string(huge, sizeof huge - 1, "h.yaml", &err);
    cr_assert_null(c, "a size beyond 2^24 is refused (no hang, no overflow)");
    cr_expect(strstr(err.message, "h.yaml:1") && strstr(err.message, "num_hidden_layers"), "%s", err.message);
    c = cfg("llama3_8b");
    llm_step_spec sp = spec(LLM_PREFILL);
    sp.batch = 1 << 24;
    sp.seq = 1 << 24;
    llm_step s;
    cr_expect_eq(llm_step_build(c, &sp, &s, &err), OPM_EINVAL, "batch x seq beyond 2^36 is refused");
    llm_config_free(c);
    c = llm_config_open("lama3_70b", &err);
    cr_assert_null(c);
    cr_expect(strstr(err.message, "llama3_70b"), "a suggestion: %s", err.message);
}

/* Meta's config.json for Llama-3-8B, verbatim. */
Test(llm, huggingface_config_json_reads_as_it_is)
{
    static const char json[] =
        "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"attention_bias\": false,\n  \"attention_dropout\": 0.0,\n"
        "  \"bos_token_id\": 128000,\n  \"eos_token_id\": 128001,\n  \"hidden_act\": \"silu\",\n  \"hidden_size\": 4096,\n"
        "  \"initializer_range\": 0.02,\n  \"intermediate_size\": 14336,\n  \"max_position_embeddings\": 8192,\n"
        "  \"model_type\": \"llama\",\n  \"num_attention_heads\": 32,\n  \"num_hidden_layers\": 32,\n"
        "  \"num_key_value_heads\": 8,\n  \"pretraining_tp\": 1,\n  \"rms_norm_eps\": 1e-05,\n  \"rope_scaling\": null,\n"
        "  \"rope_theta\": 500000.0,\n  \"tie_word_embeddings\": false,\n  \"torch_dtype\": \"bfloat16\",\n"
        "  \"transformers_version\": \"4.40.0.dev0\",\n  \"use_cache\": true,\n  \"vocab_size\": 128256\n}\n";
    opm_error err;
    llm_config *c = llm_config_load_string(json, sizeof json - 1, "config.json", &err);
    cr_assert(c, "%s", err.message);
    llm_config *ref = cfg("llama3_8b");
    cr_expect_eq(llm_config_params(c), llm_config_params(ref));
    cr_expect_eq(llm_config_params(c), 8030261248ull);
    llm_config_free(ref);
    llm_config_free(c);
}

static llm_config *cfg_text(const char *text)
{
    opm_error err;
    llm_config *c = llm_config_load_string(text, strlen(text), "test.yaml", &err);
    cr_assert(c, "%s", err.message);
    return c;
}

static void build_predict(const llm_config *c, llm_step_spec *sp, const opm_hardware *hw, llm_step *s)
{
    opm_error err;
    cr_assert_eq(llm_step_build(c, sp, s, &err), 0, "%s", err.message);
    cr_assert_eq(llm_step_predict(s, sp, hw, &err), 0, "%s", err.message);
}

/* A Mistral-7B-shaped config with and without its 4096-token window. */
#define MISTRAL_LIKE "model_type: mistral\nnum_hidden_layers: 4\nhidden_size: 4096\nintermediate_size: 14336\n" \
                     "num_attention_heads: 32\nnum_key_value_heads: 8\nvocab_size: 32000\n"

Test(llm, sliding_window_layers_attend_to_fewer_keys)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert(hw);
    llm_config *full = cfg_text(MISTRAL_LIKE), *swa = cfg_text(MISTRAL_LIKE "sliding_window: 4096\n");
    /* prefill of 16k tokens: the windowed scores are fewer, the projections the same */
    llm_step_spec sp = spec(LLM_PREFILL);
    sp.seq = 16384;
    llm_step a, b;
    build_predict(full, &sp, hw, &a);
    build_predict(swa, &sp, hw, &b);
    cr_expect_str_eq(b.groups[0].label, "swa_dense");
    const llm_step_op *fa = find(&a, "attention"), *wa = find(&b, "attention");
    /* scores: Σ_i min(i + 1, W) = W(W+1)/2 + (S − W)·W against S(S+1)/2; FLOPs are linear in them */
    double S = 16384, W = 4096, want = (W * (W + 1) / 2 + (S - W) * W) / (S * (S + 1) / 2);
    double got = (double)wa->prof.flops / (double)fa->prof.flops;
    cr_expect(fabs(got - want) < 1e-9, "windowed/full FLOPs %.9f, expected %.9f", got, want);
    cr_expect_lt(wa->prof.latency_s, fa->prof.latency_s);
    cr_expect_eq(find(&b, "q")->prof.flops, find(&a, "q")->prof.flops);
    llm_step_free(&a);
    llm_step_free(&b);
    /* decode at 32k context: the window's keys are read, and cached */
    sp = spec(LLM_DECODE);
    sp.context = 32768;
    build_predict(full, &sp, hw, &a);
    build_predict(swa, &sp, hw, &b);
    cr_expect_lt(find(&b, "attention")->prof.latency_s, find(&a, "attention")->prof.latency_s / 4);
    cr_expect_eq(b.kv_cache_bytes * 8, a.kv_cache_bytes, "%llu vs %llu", (unsigned long long)b.kv_cache_bytes,
                 (unsigned long long)a.kv_cache_bytes);
    llm_step_free(&a);
    llm_step_free(&b);
    llm_config_free(full);
    llm_config_free(swa);

    /* Qwen2's rule: only with use_sliding_window, for layers >= max_window_layers */
    llm_config *q = cfg_text("model_type: qwen2\nnum_hidden_layers: 4\nhidden_size: 1024\nnum_attention_heads: 8\n"
                             "vocab_size: 1000\nsliding_window: 128\nmax_window_layers: 3\n");
    llm_step s;
    cr_assert_eq(llm_step_build(q, &sp, &s, &err), 0, "%s", err.message);
    cr_expect_eq(s.n_groups, 1, "use_sliding_window defaults to false for qwen2");
    llm_step_free(&s);
    llm_config_free(q);
    q = cfg_text("model_type: qwen2\nnum_hidden_layers: 4\nhidden_size: 1024\nnum_attention_heads: 8\n"
                 "vocab_size: 1000\nsliding_window: 128\nmax_window_layers: 3\nuse_sliding_window: true\n");
    cr_assert_eq(llm_step_build(q, &sp, &s, &err), 0, "%s", err.message);
    cr_assert_eq(s.n_groups, 2);
    cr_expect_str_eq(s.groups[1].label, "swa_dense");
    cr_expect_eq(s.groups[1].first, 3);
    cr_expect_eq(s.groups[1].count, 1);
    llm_step_free(&s);
    llm_config_free(q);
    /* layer_types, one per layer */
    q = cfg_text("{\"num_hidden_layers\": 3, \"hidden_size\": 1024, \"num_attention_heads\": 8, \"vocab_size\": 1000,"
                 " \"sliding_window\": 64, \"layer_types\": [\"sliding_attention\", \"full_attention\", \"sliding_attention\"]}");
    cr_assert_eq(llm_step_build(q, &sp, &s, &err), 0, "%s", err.message);
    cr_assert_eq(s.n_groups, 2);
    cr_expect_eq(s.groups[0].count, 2);
    cr_expect_eq(s.groups[0].mixer, LLM_MIX_SWA);
    cr_expect_eq(s.groups[1].first, 1);
    llm_step_free(&s);
    llm_config_free(q);
    /* Gemma's pattern: every 6th layer full (sliding_window_pattern), Gemma 2's default every 2nd */
    q = cfg_text("num_hidden_layers: 12\nhidden_size: 1024\nnum_attention_heads: 8\nvocab_size: 1000\n"
                 "sliding_window: 512\nsliding_window_pattern: 6\n");
    cr_assert_eq(llm_step_build(q, &sp, &s, &err), 0, "%s", err.message);
    cr_assert_eq(s.n_groups, 2);
    cr_expect_eq(s.groups[0].mixer, LLM_MIX_SWA);
    cr_expect_eq(s.groups[0].count, 10);
    cr_expect_eq(s.groups[1].first, 5);
    cr_expect_eq(s.groups[1].count, 2);
    llm_step_free(&s);
    llm_config_free(q);
    q = cfg_text("model_type: gemma2\nnum_hidden_layers: 4\nhidden_size: 1024\nnum_attention_heads: 8\n"
                 "vocab_size: 1000\nsliding_window: 512\n");
    cr_assert_eq(llm_step_build(q, &sp, &s, &err), 0, "%s", err.message);
    cr_assert_eq(s.n_groups, 2);
    cr_expect_eq(s.groups[0].mixer, LLM_MIX_SWA);
    cr_expect_eq(s.groups[0].count, 2);
    cr_expect_eq(s.groups[1].first, 1);
    llm_step_free(&s);
    llm_config_free(q);
    static const char bad[] = "num_hidden_layers: 3\nhidden_size: 64\nnum_attention_heads: 2\nvocab_size: 10\n"
                              "sliding_window: 8\nlayer_types: [sliding_attention, full]\n";
    cr_expect_null(llm_config_load_string(bad, sizeof bad - 1, "b.yaml", &err));
    cr_expect(strstr(err.message, "b.yaml:6") && strstr(err.message, "layer_types"), "%s", err.message);
    opm_hardware_free(hw);
}

Test(llm, mamba2_decode_state_does_not_grow_with_context)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert(hw);
    llm_config *c = cfg("mamba2_2_7b");
    llm_step_spec sp = spec(LLM_DECODE);
    sp.batch = 8;
    llm_step a, b;
    sp.context = 1024;
    build_predict(c, &sp, hw, &a);
    sp.context = 65536;
    build_predict(c, &sp, hw, &b);
    /* 64 layers × 8 sequences × (80 heads · 64 · 128 state + 3 · 5376 conv inputs) × 2 bytes */
    uint64_t want = 64ull * 8 * (80 * 64 * 128 + 3 * 5376) * 2;
    cr_expect_eq(a.kv_cache_bytes, want, "%llu", (unsigned long long)a.kv_cache_bytes);
    cr_expect_eq(b.kv_cache_bytes, want);
    double ta = step_latency(&a), tb = step_latency(&b);
    cr_expect(fabs(ta - tb) <= 1e-12 * ta, "decode time must not depend on context: %g vs %g", ta, tb);
    const llm_step_op *scan = find(&a, "ssd_scan");
    cr_expect_str_eq(scan->kind, "mamba_ssd");
    cr_expect_eq(scan->count, 64);
    /* the recurrent update reads and writes the state: at least 2 × state bytes per layer */
    cr_expect_geq(scan->prof.flops, 2ull * 8 * 80 * 64 * 128, "%llu", (unsigned long long)scan->prof.flops);
    find(&a, "conv1d");
    find(&a, "in_proj");
    find(&a, "out_proj");
    for (size_t i = 0; i < a.n_ops; i++) cr_expect_neq(strcmp(a.ops[i].kind, "attention_decode"), 0);
    llm_step_free(&a);
    llm_step_free(&b);
    /* prefill and train build the chunked scan */
    sp = spec(LLM_PREFILL);
    build_predict(c, &sp, hw, &a);
    cr_expect_gt(find(&a, "ssd_scan")->prof.flops, 0);
    llm_step_free(&a);
    sp = spec(LLM_TRAIN);
    build_predict(c, &sp, hw, &a);
    find(&a, "ssd_scan_bwd");
    llm_step_free(&a);
    llm_config_free(c);
    opm_hardware_free(hw);
}

/* state-spaces/mamba2-2.7b's config.json (mamba_ssm's format), verbatim:
 * the same architecture as the shipped HF-keyed file. */
Test(llm, mamba_ssm_config_json_reads_as_it_is)
{
    static const char json[] =
        "{\n    \"d_model\": 2560,\n    \"d_intermediate\": 0,\n    \"n_layer\": 64,\n    \"vocab_size\": 50277,\n"
        "    \"ssm_cfg\": {\n        \"layer\": \"Mamba2\"\n    },\n    \"attn_layer_idx\": [],\n    \"attn_cfg\": {},\n"
        "    \"rms_norm\": true,\n    \"residual_in_fp32\": true,\n    \"fused_add_norm\": true,\n"
        "    \"pad_vocab_size_multiple\": 16,\n    \"tie_embeddings\": true\n}\n";
    opm_error err;
    llm_config *c = llm_config_load_string(json, sizeof json - 1, "config.json", &err);
    cr_assert(c, "%s", err.message);
    llm_config *ref = cfg("mamba2_2_7b");
    cr_expect_eq(llm_config_params(c), llm_config_params(ref), "%llu vs %llu", (unsigned long long)llm_config_params(c),
                 (unsigned long long)llm_config_params(ref));
    llm_config_free(ref);
    llm_config_free(c);
    static const char hybrid[] = "{\"d_model\": 256, \"n_layer\": 4, \"vocab_size\": 100, \"ssm_cfg\": {\"layer\": \"Mamba2\"},"
                                 " \"attn_layer_idx\": [1]}";
    cr_expect_null(llm_config_load_string(hybrid, sizeof hybrid - 1, "h.json", &err));
    cr_expect(strstr(err.message, "attn_layer_idx"), "%s", err.message);
}

/* Model FLOPs of the SSM models do not depend on the sharding either (within
 * 1%: Mamba-2's single B/C group is recomputed per device in the conv and the
 * scan's C·Bᵀ, as vLLM does; its projection is one replicated GEMM). */
Test(llm, ssm_flops_do_not_depend_on_tp_pp_ep)
{
    static const struct { const char *name; int64_t tp, pp, ep; } cases[] = {
        {"mamba2_2_7b", 2, 1, 1}, {"mamba2_2_7b", 4, 2, 1}, {"jamba_v0_1", 4, 2, 1}, {"jamba_v0_1", 2, 1, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        llm_step_spec sp = spec(LLM_PREFILL);
        sp.seq = 512;
        llm_step a, b;
        run(cases[i].name, &sp, NULL, &a);
        sp.tp = cases[i].tp;
        sp.pp = cases[i].pp;
        sp.ep = cases[i].ep;
        run(cases[i].name, &sp, NULL, &b);
        double fa = (double)model_flops(&a, 0), fb = (double)model_flops(&b, 0);
        cr_expect(fabs(fb / fa - 1) < 0.01, "%s tp %lld pp %lld ep %lld: %.6g vs %.6g", cases[i].name,
                  (long long)cases[i].tp, (long long)cases[i].pp, (long long)cases[i].ep, fb, fa);
        llm_step_free(&a);
        llm_step_free(&b);
    }
}

Test(llm, jamba_layer_pattern_and_hybrid_cache)
{
    llm_config *c = cfg("jamba_v0_1");
    llm_step_spec sp = spec(LLM_DECODE);
    llm_step s;
    opm_error err;
    cr_assert_eq(llm_step_build(c, &sp, &s, &err), 0, "%s", err.message);
    /* attention at l % 8 == 4, experts at odd layers: 12 SSM+dense, 16 SSM+MoE, 4 attention+dense */
    cr_assert_eq(s.n_groups, 3);
    cr_expect_str_eq(s.groups[0].label, "ssm_dense");
    cr_expect_eq(s.groups[0].count, 12);
    cr_expect_str_eq(s.groups[1].label, "ssm_moe");
    cr_expect_eq(s.groups[1].count, 16);
    cr_expect_str_eq(s.groups[2].label, "dense");
    cr_expect_eq(s.groups[2].first, 4);
    cr_expect_eq(s.groups[2].count, 4);
    for (size_t i = 0; i < s.n_ops; i++) cr_expect_neq(strcmp(s.ops[i].kind, "rope"), 0, "Jamba has no RoPE");
    uint64_t kv_short = s.kv_cache_bytes;
    llm_step_free(&s);
    sp.context = 2 * 2048;
    cr_assert_eq(llm_step_build(c, &sp, &s, &err), 0, "%s", err.message);
    /* only the 4 attention layers' K/V grow: 4 layers × 2048 more tokens × 2·8·128 × 2 bytes */
    cr_expect_eq(s.kv_cache_bytes - kv_short, 4ull * 2048 * 2 * 8 * 128 * 2);
    llm_step_free(&s);
    llm_config_free(c);
}

/* The ring/pairwise formulas of comm.c (NCCL-tests' bus bandwidth factors,
 * NCCL's step counts) on H100 SXM's NVLink 4 figures. */
Test(llm, collective_times_follow_the_ring_formulas)
{
    opm_interconnect ic = {"nvlink4", 450e9, 0.47e-6, 8};
    double S = 1 << 20;
    double ar = llm_collective_time_s(LLM_ALL_REDUCE, S, 8, &ic);
    cr_expect(fabs(ar - (2.0 * 7 / 8 * S / 450e9 + 14 * 0.47e-6)) < 1e-15, "%g", ar);
    double ag = llm_collective_time_s(LLM_ALL_GATHER, S, 8, &ic), rs = llm_collective_time_s(LLM_REDUCE_SCATTER, S, 8, &ic);
    cr_expect(fabs(ag - (7.0 / 8 * S / 450e9 + 7 * 0.47e-6)) < 1e-15, "%g", ag);
    cr_expect(fabs(ag + rs - ar) < 1e-15, "all-reduce = reduce-scatter + all-gather");
    cr_expect(fabs(llm_collective_time_s(LLM_ALL_TO_ALL, S, 8, &ic) - (S / 450e9 + 7 * 0.47e-6)) < 1e-15);
    cr_expect(fabs(llm_collective_time_s(LLM_P2P, S, 2, &ic) - (S / 450e9 + 0.47e-6)) < 1e-15);
    /* invariants: nothing to do alone or without a link; more bytes, more devices or a slower link take longer */
    cr_expect_eq(llm_collective_time_s(LLM_ALL_REDUCE, S, 1, &ic), 0);
    cr_expect_eq(llm_collective_time_s(LLM_ALL_REDUCE, S, 8, NULL), 0);
    cr_expect_eq(llm_collective_time_s(LLM_ALL_REDUCE, 0, 8, &ic), 0);
    cr_expect_gt(llm_collective_time_s(LLM_ALL_REDUCE, 2 * S, 8, &ic), ar);
    cr_expect_gt(llm_collective_time_s(LLM_ALL_REDUCE, S, 16, &ic), ar);
    cr_expect_lt(llm_collective_time_s(LLM_ALL_REDUCE, S, 2, &ic), ar);
    opm_interconnect slow = ic;
    slow.bandwidth_bytes_per_s /= 2;
    cr_expect_gt(llm_collective_time_s(LLM_ALL_REDUCE, S, 8, &slow), ar);
    /* the bandwidth term approaches 2·S/B for large groups */
    ic.latency_s = 0;
    cr_expect(fabs(llm_collective_time_s(LLM_ALL_REDUCE, S, 1000, &ic) / (2 * S / 450e9) - 0.999) < 1e-12);
}

Test(llm, communication_is_timed_from_the_interconnect)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert(hw);
    const opm_interconnect *ic = opm_hardware_interconnect(hw);
    cr_assert_not_null(ic, "h100_sxm describes its NVLink");
    cr_expect_eq(ic->bandwidth_bytes_per_s, 450e9);
    llm_step_spec sp = spec(LLM_DECODE);
    sp.tp = 8;
    sp.batch = 32;
    llm_step s;
    run("llama3_70b", &sp, hw, &s);
    cr_expect_eq(s.has_link, 1);
    const llm_step_op *ar = find(&s, "attn_all_reduce");
    cr_expect(ar->timed);
    cr_expect_eq(ar->comm_devices, 8);
    cr_expect_eq(ar->comm_bytes, 32ull * 8192 * 2); /* batch × hidden × bf16 */
    cr_expect(fabs(ar->prof.latency_s - llm_collective_time_s(LLM_ALL_REDUCE, 32.0 * 8192 * 2, 8, ic)) < 1e-15);
    cr_expect_gt(ar->prof.latency_s, 0);
    llm_step_free(&s);
    /* a tp group larger than the NVLink domain is left untimed and says so */
    sp.tp = 16;
    run("llama3_405b", &sp, hw, &s);
    cr_expect_eq(s.has_link, 0);
    cr_expect_not(find(&s, "attn_all_reduce")->timed);
    cr_expect_eq(find(&s, "attn_all_reduce")->prof.latency_s, 0);
    llm_step_free(&s);
    opm_hardware_free(hw);
    /* the seed's MI300X file has no interconnect: 0 s */
    hw = seed_hw();
    cr_expect_null(opm_hardware_interconnect(hw));
    sp.tp = 8;
    run("llama3_70b", &sp, hw, &s);
    cr_expect_eq(s.has_link, 0);
    cr_expect_eq(find(&s, "mlp_all_reduce")->prof.latency_s, 0);
    llm_step_free(&s);
    /* expert parallel all-to-all and pipeline sends are timed too */
    opm_hardware_free(hw);
    hw = opm_hardware_builtin("h200_sxm", &err);
    sp = spec(LLM_DECODE);
    sp.ep = 8;
    sp.pp = 2;
    run("mixtral_8x7b", &sp, hw, &s);
    const llm_step_op *a2a = find(&s, "moe_dispatch_all_to_all"), *p2p = find(&s, "pipeline_send");
    cr_expect(fabs(a2a->prof.latency_s - llm_collective_time_s(LLM_ALL_TO_ALL, (double)a2a->comm_bytes, 8,
                                                                 opm_hardware_interconnect(hw))) < 1e-15);
    cr_expect_gt(p2p->prof.latency_s, 0);
    llm_step_free(&s);
    opm_hardware_free(hw);
}

/* Issue 23's speed target: a 405B decode rollup with extended_roofline
 * under 10 ms (build + predict + free). */
Test(llm, llama3_405b_decode_rollup_is_fast)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert(hw);
    llm_config *c = cfg("llama3_405b");
    llm_step_spec sp = spec(LLM_DECODE);
    sp.model = "extended_roofline";
    sp.tp = 8;
    sp.batch = 32;
    struct timespec t0, t1;
    enum { N = 20 };
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < N; i++) {
        llm_step s;
        cr_assert_eq(llm_step_build(c, &sp, &s, &err), 0, "%s", err.message);
        cr_assert_eq(llm_step_predict(&s, &sp, hw, &err), 0, "%s", err.message);
        llm_step_free(&s);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / N;
    cr_log_info("405B decode rollup: %.3f ms", ms);
    cr_expect_lt(ms, 10.0, "%.3f ms per rollup", ms);
    llm_config_free(c);
    opm_hardware_free(hw);
}
