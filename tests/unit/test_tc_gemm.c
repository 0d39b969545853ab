/* test_tc_gemm.c — tensor-core GEMM behaviour: the hardware behaviour
 * fields (warp width, matrix instruction family, achievable tensor
 * fraction, sustained clock), the catalog each family selects, the
 * fallback of non-GPU parts, L2-warm operands, fp8 activation-quantisation
 * kernels, the harness columns of validate-gemm-latency, and the shipped
 * tensor-core sets scored uncalibrated. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hardware/hw_internal.h"
#include "models/gemm_tiled.h"
#include "testutil.h"
#include "validate/gemm_latency.h"


static const opm_diag *diag(const opm_profile *p, const char *key) { return opm_profile_diag(p, key); }

static double diag_num(const opm_profile *p, const char *key)
{
    const opm_diag *d = diag(p, key);
    cr_assert_not_null(d, "no diagnostic %s", key);
    return d->number;
}

static uint64_t hbm_read(const opm_profile *p)
{
    for (size_t i = 0; i < p->level_count; i++)
        if (!strcmp(p->levels[i].name, "hbm")) return p->levels[i].read_bytes;
    cr_assert_fail("no hbm level");
    return 0;
}

/* A built-in entry's YAML with `line` (a whole "  key: value" line of the
 * compute section) inserted after "compute:"; drops any existing line with
 * the same key first. */
static opm_hardware *variant(const char *name, const char *line, opm_error *err)
{
    opm_hardware *base = builtin_hw(name);
    char *yaml = opm_hardware_to_yaml(base, err);
    cr_assert_not_null(yaml);
    opm_hardware_free(base);
    char key[64];
    size_t kl = strcspn(line, ":");
    cr_assert(kl < sizeof key);
    memcpy(key, line, kl);
    key[kl] = '\0';
    char *out = malloc(strlen(yaml) + strlen(line) + 4), *w = out;
    cr_assert_not_null(out);
    for (char *l = yaml; *l;) {
        size_t len = strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n');
        if (!(strncmp(l, key, kl) == 0 && l[kl] == ':')) {
            memcpy(w, l, len);
            w += len;
            if (!strncmp(l, "compute:", 8)) w += sprintf(w, "%s\n", line);
        }
        l += len;
    }
    *w = '\0';
    opm_hardware *hw = opm_hardware_load_string(out, strlen(out), "<variant>", err);
    free(out);
    free(yaml);
    return hw;
}

/* Every built-in GPU says how its kernels behave: warp width, matrix
 * family, maximum clock and fixed time; fractions are fractions. */
Test(tc_gemm, every_gpu_entry_has_behaviour_figures)
{
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        const char *name = opm_hardware_builtin_name(i);
        opm_hardware *hw = builtin_hw(name);
        if (!strcmp(opm_hardware_kind(hw), "gpu") && strcmp(name, "gpu_generic")) {
            cr_assert(opm_hardware_compute_param(hw, "warp_size") == 32 || opm_hardware_compute_param(hw, "warp_size") == 64, "%s",
                      name);
            cr_assert(opm_hardware_compute_param(hw, "sm_max_clock_hz") >= opm_hardware_clock_hz(hw), "%s", name);
            cr_assert(opm_hardware_fixed_overhead_cycles(hw) > 0, "%s", name);
        }
        opm_hardware_free(hw);
    }
}

Test(tc_gemm, bad_behaviour_figures_are_refused)
{
    opm_error err;
    static const struct { const char *line, *needle; } cases[] = {
        {"  warp_size: 0", "compute.warp_size"},
        {"  warp_size: 48.5", "compute.warp_size"},
        {"  matrix_instruction: tensorcore", "compute.matrix_instruction"},
        {"  sustained_clock_hz: 3e9", "compute.sustained_clock_hz"},
        {"  tensor_achievable_fraction: {bf16: 1.5}", "compute.tensor_achievable_fraction"},
        {"  tensor_achievable_fraction: {bf17: 0.5}", "compute.tensor_achievable_fraction.bf17"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        opm_hardware *hw = variant("h100_sxm", cases[i].line, &err);
        cr_assert_null(hw, "%s accepted", cases[i].line);
        cr_assert(strstr(err.message, cases[i].needle), "%s: %s", cases[i].line, err.message);
        cr_assert_null(strchr(err.message, '\n'));
    }
}

/* The new keys survive hardware show → load. */
Test(tc_gemm, behaviour_figures_round_trip)
{
    static const char *const names[] = {"h100_sxm", "mi300x", "tpu_v6e"};
    for (size_t i = 0; i < 3; i++) {
        opm_error err;
        opm_hardware *hw = builtin_hw(names[i]);
        char *yaml = opm_hardware_to_yaml(hw, &err);
        cr_assert_not_null(yaml);
        cr_assert(strstr(yaml, "matrix_instruction"), "%s", names[i]);
        opm_hardware *back = opm_hardware_load_string(yaml, strlen(yaml), "<round trip>", &err);
        cr_assert_not_null(back, "%s", err.message);
        cr_assert(opm_hardware_equal(hw, back), "%s", names[i]);
        free(yaml);
        opm_hardware_free(back);
        opm_hardware_free(hw);
    }
}

/* The catalog comes from the matrix instruction family in the data, not
 * from the GPU's name: the same H100 described as mma_sync gets the
 * warp-level catalog. */
Test(tc_gemm, catalog_follows_matrix_instruction)
{
    static const struct { const char *hw, *prefix; } cases[] = {
        {"h100_sxm", "wgmma"}, {"h200_sxm", "wgmma"}, {"b200", "tcgen05"}, {"a100_80gb_sxm", "tensorop"},
        {"l40s", "tensorop"},  {"mi300x", "mfma"},    {"mi355x", "mfma"},
    };
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\"}");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        opm_hardware *hw = builtin_hw(cases[i].hw);
        opm_profile p = predict_ok("extended_roofline", op, hw);
        const char *k = diag(&p, "kernel")->text;
        cr_assert(!strncmp(k, cases[i].prefix, strlen(cases[i].prefix)), "%s: %s", cases[i].hw, k);
        opm_hardware_free(hw);
    }
    opm_error err;
    opm_hardware *as_ampere = variant("h100_sxm", "  matrix_instruction: mma_sync", &err);
    cr_assert_not_null(as_ampere, "%s", err.message);
    opm_profile p = predict_ok("effective_roofline", op, as_ampere);
    cr_assert(!strncmp(diag(&p, "kernel")->text, "tensorop", 8), "%s", diag(&p, "kernel")->text);
    opm_hardware_free(as_ampere);
    opm_op_free(op);
}

/* A large square GEMM runs near, and never above, the achievable fraction
 * of the dense peak; without a figure the default applies and is said. */
Test(tc_gemm, achievable_fraction_bounds_large_gemms)
{
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 16384, \"n\": 16384, \"k\": 16384, \"dtype\": \"bf16\"}");
    opm_hardware *hw = builtin_hw("h100_sxm");
    double peak = opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, OPM_BF16);
    for (int mi = 0; mi < 2; mi++) {
        opm_profile p = predict_ok(mi ? "effective_roofline" : "extended_roofline", op, hw);
        cr_assert_float_eq(diag_num(&p, "tensor_achievable_fraction"), 0.803, 1e-12);
        cr_assert_null(diag(&p, "tensor_achievable_source"));
        double rate = (double)p.flops / p.latency_s;
        cr_assert(rate <= 0.803 * peak && rate >= 0.7 * peak, "%g of peak", rate / peak);
    }
    opm_error err;
    opm_hardware *none = variant("h100_sxm", "  tensor_achievable_fraction: {tf32: 0.5}", &err);
    cr_assert_not_null(none, "%s", err.message);
    opm_profile p = predict_ok("extended_roofline", op, none);
    cr_assert_float_eq(diag_num(&p, "tensor_achievable_fraction"), OPM_TENSOR_ACHIEVABLE_DEFAULT, 1e-12);
    cr_assert_str_eq(diag(&p, "tensor_achievable_source")->text, "default");
    opm_hardware_free(none);
    opm_hardware_free(hw);
    opm_op_free(op);
}

/* An 8-bit GEMM on hardware that measures only its 16-bit fraction runs at
 * that fraction scaled down (its pipe draws more power per cycle); one
 * that measures its own keeps it. */
Test(tc_gemm, eight_bit_fraction_from_the_16_bit_one)
{
    opm_op *fp8 = op_json("{\"kind\": \"gemm\", \"m\": 8192, \"n\": 8192, \"k\": 8192, \"dtype\": \"fp8\"}");
    opm_op *bf16 = op_json("{\"kind\": \"gemm\", \"m\": 8192, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\"}");
    opm_hardware *ada = builtin_hw("l40s"), *hopper = builtin_hw("h100_sxm");
    opm_profile f = predict_ok("extended_roofline", fp8, ada), b = predict_ok("extended_roofline", bf16, ada);
    double fb = diag_num(&b, "tensor_achievable_fraction");
    cr_assert_float_eq(diag_num(&f, "tensor_achievable_fraction"), fb * EIGHT_BIT_ACHIEVABLE_RATIO, 1e-12);
    cr_assert(EIGHT_BIT_ACHIEVABLE_RATIO >= 0.5 && EIGHT_BIT_ACHIEVABLE_RATIO < 1);
    /* Twice the peak, less than twice the speed. */
    cr_assert(f.latency_s > 0.5 * b.latency_s && f.latency_s < b.latency_s, "%g vs %g", f.latency_s, b.latency_s);
    opm_profile h = predict_ok("extended_roofline", fp8, hopper);
    cr_assert_float_eq(diag_num(&h, "tensor_achievable_fraction"), 0.709, 1e-12);
    opm_hardware_free(ada);
    opm_hardware_free(hopper);
    opm_op_free(fp8);
    opm_op_free(bf16);
}

/* A warp-level MMA epilogue stages every fp32 accumulator through shared
 * memory (written, read back) before storing it: at least 8 bytes of
 * shared-memory traffic per output element on each SM's share. */
Test(tc_gemm, mma_sync_epilogue_stages_accumulators)
{
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 8192, \"n\": 8192, \"k\": 64, \"dtype\": \"bf16\"}");
    opm_hardware *hw = builtin_hw("a100_80gb_sxm");
    double sms = opm_hardware_num_sms(hw), clock = opm_hardware_clock_hz(hw);
    /* 128 B per clock per SM: 32 banks x 4 B (no faster shared memory on Ampere). */
    double floor_s = 8192.0 * 8192.0 / sms * 2 * EPILOGUE_ACC_BYTES / (128.0 * clock);
    for (int mi = 0; mi < 2; mi++) {
        opm_profile p = predict_ok(mi ? "effective_roofline" : "extended_roofline", op, hw);
        cr_assert_geq(diag_num(&p, "epilogue_s"), 0.9 * floor_s, "%g vs %g", diag_num(&p, "epilogue_s"), floor_s);
    }
    opm_hardware_free(hw);
    opm_op_free(op);
}

/* A sustained clock below clock_hz slows what runs on the SM clock (here a
 * latency- and L2-bound skinny GEMM), never the fixed time. */
Test(tc_gemm, sustained_clock_slows_the_sm_clock_domain)
{
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 64, \"n\": 4096, \"k\": 4096, \"dtype\": \"fp8\"}");
    opm_error err;
    opm_hardware *at = builtin_hw("mi300x"), *max = variant("mi300x", "  sustained_clock_hz: 2.1e9", &err);
    cr_assert_not_null(max, "%s", err.message);
    opm_profile a = predict_ok("extended_roofline", op, at), b = predict_ok("extended_roofline", op, max);
    cr_assert(a.latency_s > b.latency_s, "%g vs %g", a.latency_s, b.latency_s);
    cr_assert_float_eq(a.overhead_s, b.overhead_s, 1e-15);
    opm_hardware_free(at);
    opm_hardware_free(max);
    opm_op_free(op);
}

/* TPU and Gaudi parts: the roofline, saying why, with no L2 invented; at
 * the entry's achievable fraction where it publishes one (Gaudi), at the
 * dense peak where it does not (the TPUs). */
Test(tc_gemm, systolic_parts_fall_back_to_the_roofline)
{
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\"}");
    static const char *const names[] = {"tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e", "gaudi2", "gaudi3"};
    for (size_t i = 0; i < 6; i++) {
        opm_hardware *hw = builtin_hw(names[i]);
        int dflt;
        double f = opm_gemm_tensor_achievable(hw, OPM_BF16, &dflt);
        opm_profile r = predict_ok("roofline", op, hw);
        cr_assert_null(diag(&r, "tensor_achievable_fraction"), "%s: the plain roofline is the dense peak", names[i]);
        cr_assert_eq(r.bound, OPM_BOUND_COMPUTE, "%s", names[i]);
        for (int mi = 0; mi < 2; mi++) {
            opm_profile p = predict_ok(mi ? "effective_roofline" : "extended_roofline", op, hw);
            const opm_diag *fb = diag(&p, "fallback");
            cr_assert_not_null(fb, "%s", names[i]);
            if (dflt) {
                cr_assert_float_eq(p.latency_s, r.latency_s, 1e-15, "%s", names[i]);
                cr_assert_null(diag(&p, "tensor_achievable_fraction"), "%s", names[i]);
                cr_assert_null(strstr(fb->text, "achievable"), "%s: %s", names[i], fb->text);
            } else {
                /* Exactly 1/f slower on a compute-bound GEMM. */
                cr_assert(f > 0 && f < 1, "%s: %g", names[i], f);
                cr_assert_float_eq(p.compute_time_s, r.compute_time_s / f, 1e-12 * r.compute_time_s, "%s", names[i]);
                cr_assert_float_eq(p.latency_s - p.overhead_s, (r.latency_s - r.overhead_s) / f, 1e-12 * r.latency_s,
                                   "%s", names[i]);
                cr_assert_float_eq(diag_num(&p, "tensor_achievable_fraction"), f, 1e-15, "%s", names[i]);
                cr_assert_str_eq(diag(&p, "tensor_achievable_source")->text, "hardware", "%s", names[i]);
                cr_assert_str_eq(fb->text, "no MME (matrix engine) kernel model: achievable-rate roofline", "%s",
                                 names[i]);
            }
            for (size_t l = 0; l < p.level_count; l++)
                cr_assert_not_null(opm_hardware_find_level(hw, p.levels[l].name), "%s: %s", names[i], p.levels[l].name);
        }
        opm_hardware_free(hw);
    }
    /* Gaudi 3 without its fraction: the plain roofline again (no default
     * stands in for it), and the fallback says so. */
    opm_error err;
    opm_hardware *g3 = builtin_hw("gaudi3"), *none = variant("gaudi3", "  tensor_achievable_fraction: {tf32: 0.5}", &err);
    cr_assert_not_null(none, "%s", err.message);
    opm_profile with = predict_ok("extended_roofline", op, g3), without = predict_ok("extended_roofline", op, none);
    opm_profile plain = predict_ok("roofline", op, none);
    cr_assert_float_eq(without.latency_s, plain.latency_s, 1e-15);
    cr_assert_float_eq(with.compute_time_s * 0.677, without.compute_time_s, 1e-12 * without.compute_time_s);
    cr_assert(with.latency_s > without.latency_s);
    cr_assert_str_eq(diag(&without, "fallback")->text, "no MME (matrix engine) kernel model: roofline");
    cr_assert_null(diag(&without, "tensor_achievable_source"));
    /* An fp8 GEMM takes the fp8 figure; a kind with no tensor work (a
     * copy) takes none. */
    opm_op *f8 = op_json("{\"kind\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"dtype\": \"fp8_e4m3\", "
                         "\"out_dtype\": \"bf16\"}");
    opm_profile p8 = predict_ok("extended_roofline", f8, g3);
    cr_assert_float_eq(diag_num(&p8, "tensor_achievable_fraction"), 0.703, 1e-15);
    opm_op *cp = op_json("{\"kind\": \"copy\", \"shape\": [4096, 4096], \"dtype\": \"bf16\"}");
    opm_profile pc = predict_ok("extended_roofline", cp, g3), rc = predict_ok("roofline", cp, g3);
    cr_assert_float_eq(pc.latency_s, rc.latency_s, 1e-15);
    cr_assert_null(diag(&pc, "tensor_achievable_fraction"));
    cr_assert_str_eq(diag(&pc, "fallback")->text, "no MME (matrix engine) kernel model for this kind: roofline");
    opm_op_free(cp);
    opm_op_free(f8);
    opm_hardware_free(none);
    opm_hardware_free(g3);
    /* A kind without a kernel model says so too. */
    opm_op *sm = op_json("{\"kind\": \"moe_dispatch\", \"tokens\": 4096, \"hidden\": 4096, \"top_k\": 2, "
                         "\"experts\": 8, \"dtype\": \"bf16\"}");
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_profile p = predict_ok("extended_roofline", sm, hw);
    cr_assert_not_null(diag(&p, "fallback"));
    opm_hardware_free(hw);
    opm_op_free(sm);
    opm_op_free(op);
}

/* The MXU/MME fallback takes only a published figure: the dtype's own or
 * its sibling's (e4m3/e5m2), never a 16-bit one scaled for 8 bits nor a
 * GPU-derived default, which the GPU kernel models would take. */
Test(tc_gemm, mme_fallback_takes_only_the_dtypes_own_or_siblings_fraction)
{
    opm_error err;
    opm_hardware *bf = variant("gaudi3", "  tensor_achievable_fraction: {bf16: 0.677}", &err);
    cr_assert_not_null(bf, "%s", err.message);
    opm_hardware *e5 = variant("gaudi3", "  tensor_achievable_fraction: {fp8_e5m2: 0.6}", &err);
    cr_assert_not_null(e5, "%s", err.message);
    static const char *const dts[] = {"fp8_e4m3", "fp8_e5m2"};
    for (int i = 0; i < 2; i++) {
        char js[160];
        snprintf(js, sizeof js,
                 "{\"kind\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"dtype\": \"%s\", \"out_dtype\": \"bf16\"}",
                 dts[i]);
        opm_op *op = op_json(js);
        /* The GPU path would take bf16 × the 8-bit ratio: not the fallback. */
        int dflt = 1;
        double gpu = opm_gemm_tensor_achievable(bf, i ? OPM_FP8_E5M2 : OPM_FP8_E4M3, &dflt);
        cr_assert(!dflt && gpu > 0 && gpu < 0.677, "%s: %g", dts[i], gpu);
        opm_profile plain = predict_ok("roofline", op, bf);
        for (int m = 0; m < 2; m++) {
            opm_profile p = predict_ok(m ? "effective_roofline" : "extended_roofline", op, bf);
            cr_assert_null(diag(&p, "tensor_achievable_fraction"), "%s", dts[i]);
            cr_assert_null(diag(&p, "tensor_achievable_source"), "%s", dts[i]);
            cr_assert_float_eq(p.latency_s, plain.latency_s, 1e-15, "%s", dts[i]);
            cr_assert_str_eq(diag(&p, "fallback")->text, "no MME (matrix engine) kernel model: roofline", "%s", dts[i]);
            /* The sibling's figure stands for e4m3, the own one for e5m2. */
            opm_profile s = predict_ok(m ? "effective_roofline" : "extended_roofline", op, e5);
            cr_assert_float_eq(diag_num(&s, "tensor_achievable_fraction"), 0.6, 1e-15, "%s", dts[i]);
            cr_assert_float_eq(s.compute_time_s, plain.compute_time_s / 0.6, 1e-12 * s.compute_time_s, "%s", dts[i]);
            /* The knee is the roofline's the time was taken on. */
            cr_assert_float_eq(diag_num(&s, "knee_flops_per_byte"), 0.6 * diag_num(&plain, "knee_flops_per_byte"),
                               1e-9 * diag_num(&plain, "knee_flops_per_byte"), "%s", dts[i]);
        }
        opm_op_free(op);
    }
    opm_hardware_free(e5);
    opm_hardware_free(bf);
}

/* An input the previous kernel left in L2 is not read from DRAM when it
 * fits; one larger than the usable L2 is. */
Test(tc_gemm, l2_warm_input)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    /* A: 512 x 4096 bf16 = 4 MiB, fits; B: 4096 x 4096. */
    opm_op *cold = op_json("{\"kind\": \"gemm\", \"m\": 512, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\"}");
    opm_op *warm = op_json("{\"kind\": \"gemm\", \"m\": 512, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\","
                            " \"attrs\": {\"l2_warm\": \"input\"}}");
    for (int mi = 0; mi < 2; mi++) {
        const char *model = mi ? "effective_roofline" : "extended_roofline";
        opm_profile c = predict_ok(model, cold, hw), w = predict_ok(model, warm, hw);
        cr_assert_eq(hbm_read(&c) - hbm_read(&w), (uint64_t)512 * 4096 * 2);
        cr_assert(w.latency_s <= c.latency_s);
    }
    /* A: 16384 x 4096 bf16 = 128 MiB, larger than the L2. */
    opm_op *big = op_json("{\"kind\": \"gemm\", \"m\": 16384, \"n\": 256, \"k\": 4096, \"dtype\": \"bf16\"}");
    opm_op *bigw = op_json("{\"kind\": \"gemm\", \"m\": 16384, \"n\": 256, \"k\": 4096, \"dtype\": \"bf16\","
                            " \"attrs\": {\"l2_warm\": \"input\"}}");
    opm_profile c = predict_ok("extended_roofline", big, hw), w = predict_ok("extended_roofline", bigw, hw);
    cr_assert_eq(hbm_read(&c), hbm_read(&w));
    rejected("{kind: gemm, m: 8, n: 8, k: 8, dtype: bf16, attrs: {l2_warm: inputs}}", "attrs.l2_warm");
    opm_op_free(cold);
    opm_op_free(warm);
    opm_op_free(big);
    opm_op_free(bigw);
    opm_hardware_free(hw);
}

/* A benchmark rotating over copies of the weight finds each copy in L2
 * while all of them fit: fewer DRAM bytes and less time than a cold
 * weight; copies that overflow the L2 leave it cold. */
Test(tc_gemm, operand_copies)
{
    opm_hardware *hw = builtin_hw("l40s");
    /* B: 768 x 6144 bf16 = 9 MiB; 6 copies fit the 96 MiB L2, 16 do not. */
#define COPIES_GEMM(extra) "{\"kind\": \"gemm\", \"m\": 1, \"n\": 6144, \"k\": 768, \"dtype\": \"bf16\"," \
                           " \"attrs\": {\"transpose_b\": true, \"l2_warm\": \"input\"" extra "}}"
    opm_op *cold = op_json(COPIES_GEMM(""));
    opm_op *six = op_json(COPIES_GEMM(", \"operand_copies\": 6"));
    opm_op *many = op_json(COPIES_GEMM(", \"operand_copies\": 16"));
#undef COPIES_GEMM
    for (int mi = 0; mi < 2; mi++) {
        const char *model = mi ? "effective_roofline" : "extended_roofline";
        opm_profile c = predict_ok(model, cold, hw), s = predict_ok(model, six, hw), m = predict_ok(model, many, hw);
        cr_assert_geq(hbm_read(&c) - hbm_read(&s), (uint64_t)768 * 6144 * 2, "%s", model);
        cr_assert_lt(s.latency_s, c.latency_s, "%s", model);
        cr_assert_eq(hbm_read(&m), hbm_read(&c), "%s", model);
        cr_assert_eq(m.latency_s, c.latency_s, "%s", model);
    }
    rejected("{kind: gemm, m: 8, n: 8, k: 8, dtype: bf16, attrs: {operand_copies: 0}}", "operand_copies");
    opm_op_free(cold);
    opm_op_free(six);
    opm_op_free(many);
    opm_hardware_free(hw);
}

static opm_op *fp8_gemm(int64_t m, int64_t n, int64_t k, const char *aq)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"kind\": \"gemm\", \"tensors\": [{\"role\": \"input\", \"shape\": [%lld, %lld], \"dtype\": \"fp8\"},"
             " {\"role\": \"weight\", \"shape\": [%lld, %lld], \"dtype\": \"fp8\"},"
             " {\"role\": \"output\", \"shape\": [%lld, %lld], \"dtype\": \"bf16\"}],"
             " \"attrs\": {\"transpose_b\": true%s%s%s}}",
             (long long)m, (long long)k, (long long)n, (long long)k, (long long)m, (long long)n, aq ? ", \"activation_quant\": \"" : "",
             aq ? aq : "", aq ? "\"" : "");
    return op_json(json);
}

/* Quantising the activation first costs kernels of their own: dynamic
 * (absmax + quantise) more than static; the absmax's atomics on one
 * address grow with the rows. */
Test(tc_gemm, activation_quant_kernels)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *none = fp8_gemm(4096, 4096, 4096, NULL), *st = fp8_gemm(4096, 4096, 4096, "static"),
           *dyn = fp8_gemm(4096, 4096, 4096, "dynamic");
    for (int mi = 0; mi < 2; mi++) {
        const char *model = mi ? "effective_roofline" : "extended_roofline";
        opm_profile a = predict_ok(model, none, hw), b = predict_ok(model, st, hw), c = predict_ok(model, dyn, hw);
        cr_assert(a.latency_s < b.latency_s && b.latency_s < c.latency_s, "%g %g %g", a.latency_s, b.latency_s,
                  c.latency_s);
        cr_assert_gt(diag_num(&c, "activation_quant_s"), diag_num(&b, "activation_quant_s"));
        cr_assert_null(diag(&a, "activation_quant_s"));
        cr_assert_eq(a.flops, c.flops);
    }
    /* k = 32: the atomics dominate; doubling the rows adds 16384 of them. */
    opm_op *r1 = fp8_gemm(16384, 128, 32, "dynamic"), *r2 = fp8_gemm(32768, 128, 32, "dynamic");
    opm_profile p1 = predict_ok("extended_roofline", r1, hw), p2 = predict_ok("extended_roofline", r2, hw);
    double per_row = SAME_ADDRESS_ATOMIC_CYCLES / opm_hardware_clock_hz(hw);
    double delta = diag_num(&p2, "activation_quant_s") - diag_num(&p1, "activation_quant_s");
    cr_assert(delta >= 16384 * per_row && delta <= 16384 * per_row * 1.01, "%g vs %g", delta, 16384 * per_row);
    rejected("{kind: gemm, m: 8, n: 8, k: 8, dtype: fp8, attrs: {activation_quant: dynamik}}",
             "attrs.activation_quant");
    opm_op_free(none);
    opm_op_free(st);
    opm_op_free(dyn);
    opm_op_free(r1);
    opm_op_free(r2);
    opm_hardware_free(hw);
}

/* A fresh folder TAG holding rows.csv with the text CSV: what
 * opm_gemm_dataset_load reads in the harness tests below. */
static void rows_csv(const char *tag, char *dir, size_t dir_cap, char *path, size_t path_cap, const char *csv)
{
    tmp_dir(dir, dir_cap, tag);
    snprintf(path, path_cap, "%s/rows.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(csv, f);
    fclose(f);
}

/* The extended_roofline times of the rows in CSV (n of them, in a fresh
 * folder TAG) with the kernel column read as hints (`with`) and ignored
 * (`without`): what the kernel-column tests below compare. */
static void kernel_column_predictions(const char *tag, const char *csv, size_t n, double *with, double *without)
{
    char dir[512], path[600];
    rows_csv(tag, dir, sizeof dir, path, sizeof path, csv);
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.n_rows, n);
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 1, with, &err), 0, "%s", err.message);
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 0, without, &err), 0, "%s", err.message);
    opm_gemm_dataset_free(&ds);
    remove(path);
    rmdir(dir);
}

/* validate-gemm-latency's harness columns: eager rows are left out of an
 * uncalibrated score and counted; a bad value is a bad row naming its
 * column. */
Test(tc_gemm, harness_columns)
{
    char dir[512], path[600];
    rows_csv("tc_harness", dir, sizeof dir, path, sizeof path,
             "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,source,activation_quant,timing,l2_warm\n"
             "h100_sxm,bf16,1,1024,1024,1024,0,1,0,10,t,none,graph,input\n"
             "h100_sxm,fp8_e4m3,1,1024,1024,1024,0,1,0,12,t,dynamic,graph,input\n"
             "h100_sxm,fp8_e4m3,1,1024,1024,1024,0,1,0,70,t,dynamic_block,eager,input\n"
             "h100_sxm,fp8_e4m3,1,1024,1024,1024,0,1,0,9,t,block,kernel,none\n"
             "h100_sxm,fp8_e4m3,1,1024,1024,1024,0,1,0,9,t,blocky,kernel,none\n");
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.n_rows, 4);
    cr_assert_eq(ds.rows_bad, 1);
    cr_assert(strstr(ds.first_bad, "activation_quant"), "%s", ds.first_bad);
    cr_assert_eq(ds.rows[1].act_quant, OPM_GAQ_DYNAMIC);
    cr_assert_eq(ds.rows[2].timing, OPM_GTIME_EAGER);
    cr_assert_eq(ds.rows[3].l2_warm, OPM_GWARM_NONE);
    double base[4];
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 1, base, &err), 0, "%s", err.message);
    for (int i = 0; i < 4; i++) cr_assert(base[i] > 0 && isfinite(base[i]));
    /* The dynamically quantised op is slower than its block-scaled GEMM alone. */
    cr_assert_gt(base[1], base[3]);
    opm_gemm_validate_opts o = {"extended_roofline", 0, -1, 0, 0};
    opm_gemm_validation v;
    cr_assert_eq(opm_gemm_validate(&ds, &o, base, &v, &err), 0, "%s", err.message);
    cr_assert_eq(v.rows, 3);
    cr_assert_eq(v.rows_eager_skipped, 1);
    opm_gemm_validation_free(&v);
    /* Held out, its host floor would be another GPU's: skipped too. */
    cr_assert_eq(opm_gemm_leave_one_out(&ds, "extended_roofline", 1, base, 0.25, &v, &err), 0, "%s", err.message);
    cr_assert_eq(v.rows, 3);
    cr_assert_eq(v.rows_eager_skipped, 1);
    opm_gemm_validation_free(&v);
    opm_gemm_dataset_free(&ds);
    remove(path);
    rmdir(dir);
}

/* The operand_copies column reaches the op: a rotated small weight that
 * fits the L2 is predicted faster than the same row without the column; a
 * count that is not one is a bad row naming the column. */
Test(tc_gemm, operand_copies_column)
{
    char dir[512], path[600];
    rows_csv("tc_copies", dir, sizeof dir, path, sizeof path,
             "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,source,timing,l2_warm,operand_copies\n"
             "l40s,bf16,1,1,6144,768,0,1,0,6,t,graph,input,6\n"
             "l40s,bf16,1,1,6144,768,0,1,0,6,t,graph,input,\n"
             "l40s,bf16,1,1,6144,768,0,1,0,6,t,graph,input,0\n");
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.n_rows, 2);
    cr_assert_eq(ds.rows_bad, 1);
    cr_assert(strstr(ds.first_bad, "operand_copies"), "%s", ds.first_bad);
    cr_assert_eq(ds.rows[0].copies, 6);
    cr_assert_eq(ds.rows[1].copies, 0);
    double base[2];
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 1, base, &err), 0, "%s", err.message);
    cr_assert_lt(base[0], base[1]);
    opm_gemm_dataset_free(&ds);
    remove(path);
    rmdir(dir);
}

/* The shipped tensor-core sets (data/gemm_tc), uncalibrated, on the
 * graph-replayed bf16 GEMMs of H100 and H200 and Vidur's A100 kernels: a
 * guard on the figures docs/gemm_models.md reports (behaviour, not speed). */
Test(tc_gemm, shipped_sets_uncalibrated, .timeout = 120)
{
    char dir[512];
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(src_path("data/gemm_tc", dir, sizeof dir), &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.rows_bad, 0);
    cr_assert_gt(ds.n_rows, 90000);
    double *base = malloc(ds.n_rows * sizeof *base);
    cr_assert_not_null(base);
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 1, base, &err), 0, "%s", err.message);
    opm_gemm_validate_opts o = {"extended_roofline", 0, -1, 0, 0};
    opm_gemm_validation v;
    cr_assert_eq(opm_gemm_validate(&ds, &o, base, &v, &err), 0, "%s", err.message);
    /* Per (hardware, 16-bit dtype, source): MAPE of the held-out rows. */
    static const struct { const char *hw, *src; double bar; } sets[] = {
        {"h100_sxm", "aiconfigurator", 12.0}, {"h200_sxm", "aiconfigurator", 12.0}, {"a100_80gb_pcie", "vidur", 12.0}};
    for (size_t s = 0; s < 3; s++) {
        double sum = 0;
        size_t n = 0;
        for (size_t i = 0; i < ds.n_rows; i++) {
            const opm_gemm_row *r = &ds.rows[i];
            if (strcmp(ds.hw_names[r->hw], sets[s].hw) || (r->dtype != OPM_BF16 && r->dtype != OPM_FP16) ||
                !strstr(ds.group_names[r->group], sets[s].src) || isnan(v.pred_s[i]))
                continue;
            sum += fabs(v.pred_s[i] / r->latency_s - 1) * 100;
            n++;
        }
        cr_assert_gt(n, 1000);
        cr_assert_leq(sum / n, sets[s].bar, "%s %s: %.2f%%", sets[s].hw, sets[s].src, sum / n);
    }
    opm_gemm_validation_free(&v);
    free(base);
    opm_gemm_dataset_free(&ds);
}

/* Kernel hints beyond the hardware's limits are errors naming the
 * attribute (a 2^32 tile once became 0 and divided), in both models. */
Test(tc_gemm, kernel_hints_are_bounded)
{
    static const char *const ops[] = {
        "{\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\", \"attrs\": {\"cta_tile_m\": 4294967296}}",
        "{\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\", \"attrs\": {\"warps_per_cta\": 1000}}",
        "{\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\", \"attrs\": {\"split_k\": 2147483648}}",
        "{\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\", \"attrs\": {\"registers_per_thread\": 300}}",
    };
    static const char *const fields[] = {"attrs.cta_tile_m", "attrs.warps_per_cta", "attrs.split_k",
                                         "attrs.registers_per_thread"};
    opm_hardware *hw = builtin_hw("h100_sxm");
    for (size_t i = 0; i < 4; i++) {
        opm_op *op = op_json(ops[i]);
        for (int mi = 0; mi < 2; mi++) {
            opm_error err;
            opm_profile p;
            cr_assert_eq(opm_predict(mi ? "effective_roofline" : "extended_roofline", op, hw, &p, &err), OPM_EINVAL,
                         "%s", ops[i]);
            cr_assert_str_eq(err.field, fields[i]);
        }
        opm_op_free(op);
    }
    opm_hardware_free(hw);
}

/* The hardware functions leave no stale error behind on success. */
Test(tc_gemm, hardware_functions_clear_the_error)
{
    opm_error err;
    err.code = OPM_EINVAL;
    strcpy(err.field, "stale");
    strcpy(err.message, "stale message");
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert_not_null(hw);
    cr_assert_eq(err.code, OPM_OK);
    cr_assert_str_empty(err.message);
    strcpy(err.message, "stale");
    err.code = OPM_EINVAL;
    opm_hardware *slow = opm_hardware_with_clock(hw, 1e9, &err);
    cr_assert_not_null(slow);
    cr_assert_eq(err.code, OPM_OK);
    err.code = OPM_EINVAL;
    char *yaml = opm_hardware_to_yaml(slow, &err);
    cr_assert_not_null(yaml);
    cr_assert_eq(err.code, OPM_OK);
    err.code = OPM_EINVAL;
    opm_hardware *back = opm_hardware_load_string(yaml, strlen(yaml), "<yaml>", &err);
    cr_assert_not_null(back);
    cr_assert_eq(err.code, OPM_OK);
    free(yaml);
    opm_hardware_free(back);
    opm_hardware_free(slow);
    opm_hardware_free(hw);
}

/* L2 partitions: a whole number; on tensor paths one partition's share is
 * what a kernel's operands may occupy (L40S's unified 96 MiB absorbs a
 * 64 MiB output that H100's 25 MiB half cannot). */
Test(tc_gemm, l2_partitions)
{
    static const char bad[] = "name: x\nkind: gpu\ncompute: {clock_hz: 1e9, num_sms: 1, tensor_flops_per_s: {bf16: 1e12}}\n"
                              "memory:\n  levels:\n    - {name: l2, size_bytes: 1e6, partitions: 1.5}\n"
                              "    - {name: hbm, size_bytes: 1e9, bandwidth_bytes_per_s: 1e11}\n";
    opm_error err;
    cr_assert_null(opm_hardware_load_string(bad, strlen(bad), "<bad>", &err));
    cr_assert(strstr(err.message, "memory.levels[0].partitions"), "%s", err.message);
    opm_hardware *l40s = builtin_hw("l40s"), *h100 = builtin_hw("h100_sxm");
    cr_assert_eq(opm_hardware_find_level(l40s, "l2")->partitions, 1);
    cr_assert_eq(opm_hardware_find_level(h100, "l2")->partitions, 2);
    /* 2048 x 16384 bf16 output = 64 MiB, K = 32. */
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 2048, \"n\": 16384, \"k\": 32, \"dtype\": \"bf16\"}");
    opm_profile a = predict_ok("extended_roofline", op, l40s), b = predict_ok("extended_roofline", op, h100);
    double out = 2048.0 * 16384 * 2;
    /* L40S: the stores go to L2, faster than its DRAM could take them. */
    cr_assert_lt(a.latency_s, out / (opm_hardware_find_level(l40s, "hbm")->bandwidth_bytes_per_s));
    /* H100: they reach DRAM. */
    cr_assert_gt(b.latency_s, out / (opm_hardware_find_level(h100, "hbm")->bandwidth_bytes_per_s));
    opm_op_free(op);
    opm_hardware_free(l40s);
    opm_hardware_free(h100);
}

/* Output stores on a partitioned L2 drain to DRAM even when the output
 * fits one partition's share (measured on A100 and H100/H200); an
 * unpartitioned L2 of the same size absorbs them, so the same GEMM is
 * faster there, and on the partitioned one it takes at least the output's
 * DRAM write time. */
Test(tc_gemm, partitioned_l2_does_not_absorb_stores)
{
    opm_hardware *two = builtin_hw("h100_sxm"), *one = builtin_hw_with_l2("h100_sxm", 0, 1);
    cr_assert_eq(opm_hardware_find_level(two, "l2")->partitions, 2);
    /* 2048 x 4096 bf16 = 16 MiB of output, under the 25 MiB half; K = 32. */
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 2048, \"n\": 4096, \"k\": 32, \"dtype\": \"bf16\"}");
    const opm_memory_level *hbm = opm_hardware_find_level(two, "hbm");
    double write_s = 2048.0 * 4096 * 2 / (hbm->bandwidth_bytes_per_s * hbm->utilization * DRAM_WRITE_EFF);
    for (int e = 0; e < 2; e++) {
        const char *model = e ? "effective_roofline" : "extended_roofline";
        opm_profile p2 = predict_ok(model, op, two), p1 = predict_ok(model, op, one);
        cr_assert_gt(p2.latency_s, p1.latency_s * 1.1, "%s: %g vs %g", model, p2.latency_s, p1.latency_s);
        cr_assert_geq(p2.latency_s, write_s, "%s: %g vs %g", model, p2.latency_s, write_s);
    }
    opm_op_free(op);
    opm_hardware_free(one);
    opm_hardware_free(two);
}

/* fp8 with 1x128 / 128x128 block scales (aiter's and DeepSeek's layout),
 * or with the depth `bk` for both. */
static opm_op *block_gemm(int m, int n, int k, int bk, const char *phase)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"kind\": \"gemm\", \"phase\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"dtype\": \"fp8_e4m3\", "
             "\"out_dtype\": \"bf16\", \"transpose_b\": true, \"attrs\": {\"scale_a\": \"block\", "
             "\"scale_b\": \"block\", \"scale_block_a\": [1, %d], \"scale_block_b\": [128, %d]}}",
             phase, m, n, k, bk, bk);
    return op_json(json);
}

/* On MFMA the block-scale dequantisation runs on the vector ALUs between
 * scale blocks, serialised with the MFMAs: it lengthens a compute-bound
 * GEMM against per-tensor scales, is named in the diagnostics, grows with
 * the number of scale blocks, makes the K tile a whole scale block, and
 * leaves the other catalogs and the backward alone. */
Test(tc_gemm, mfma_block_scale_dequant)
{
    opm_hardware *mi = builtin_hw("mi300x"), *h100 = builtin_hw("h100_sxm");
    opm_op *blk = block_gemm(8192, 8192, 8192, 128, "inference"), *fine = block_gemm(8192, 8192, 8192, 64, "inference");
    opm_op *plain = op_json("{\"kind\": \"gemm\", \"m\": 8192, \"n\": 8192, \"k\": 8192, \"dtype\": \"fp8_e4m3\", "
                            "\"out_dtype\": \"bf16\", \"transpose_b\": true, "
                            "\"attrs\": {\"scale_a\": \"tensor\", \"scale_b\": \"tensor\"}}");
    opm_op *bwd = block_gemm(4096, 4096, 4096, 128, "train_bwd");
    for (int mi_ = 0; mi_ < 2; mi_++) {
        const char *model = mi_ ? "effective_roofline" : "extended_roofline";
        opm_profile b = predict_ok(model, blk, mi), f = predict_ok(model, fine, mi), p = predict_ok(model, plain, mi);
        double dq = diag_num(&b, "dequant_time_s");
        cr_assert_gt(dq, 0);
        cr_assert_null(diag(&p, "dequant_time_s"));
        /* The dequantisation is a serial phase, not hidden behind the MFMAs. */
        cr_assert_gt(b.latency_s, p.latency_s * 1.2, "%s: %g vs %g", model, b.latency_s, p.latency_s);
        cr_assert_gt(diag_num(&f, "dequant_time_s"), dq * 1.1, "%s: %g vs %g", model, diag_num(&f, "dequant_time_s"), dq);
        if (!mi_) cr_assert_geq(diag_num(&b, "compute_time_s"), dq);
        int tk = 0;
        cr_assert_eq(sscanf(strrchr(diag(&b, "tile")->text, 'x') + 1, "%d", &tk), 1);
        cr_assert_eq(tk % 128, 0, "%s: tile %s", model, diag(&b, "tile")->text);
        opm_profile h = predict_ok(model, blk, h100), w = predict_ok(model, bwd, mi);
        cr_assert_null(diag(&h, "dequant_time_s"));
        cr_assert_null(diag(&w, "dequant_time_s"));
    }
    opm_op_free(blk);
    opm_op_free(fine);
    opm_op_free(plain);
    opm_op_free(bwd);
    opm_hardware_free(mi);
    opm_hardware_free(h100);
}

/* Block-scaled MFMA kernels split K within aiter's bounds: a 16-row GEMM
 * of 8 tiles of 16x64x256 over K = 6144 splits into pieces of fewer than
 * the 4 K tiles other kernels keep, and never into more pieces than the
 * CUs; the same tile per-tensor-scaled keeps 4 K tiles per split. */
Test(tc_gemm, mfma_block_scaled_split_k_bounds)
{
    opm_hardware *mi = builtin_hw("mi300x");
    const char *fmt = "{\"kind\": \"gemm\", \"m\": 16, \"n\": %d, \"k\": 6144, \"dtype\": \"fp8_e4m3\", "
                      "\"out_dtype\": \"bf16\", \"transpose_b\": true, \"attrs\": {%s\"cta_tile_m\": 16, "
                      "\"cta_tile_n\": 64, \"cta_tile_k\": 256, \"warps_per_cta\": 4, \"pipeline_stages\": 2}}";
    const char *blocks = "\"scale_a\": \"block\", \"scale_b\": \"block\", \"scale_block_a\": [1, 128], "
                         "\"scale_block_b\": [128, 128], ";
    const char *tensor = "\"scale_a\": \"tensor\", \"scale_b\": \"tensor\", ";
    char json[768];
    snprintf(json, sizeof json, fmt, 512, blocks);
    opm_op *blk = op_json(json);
    snprintf(json, sizeof json, fmt, 512, tensor);
    opm_op *per_tensor = op_json(json);
    snprintf(json, sizeof json, fmt, 4096, blocks);
    opm_op *wide = op_json(json);
    opm_profile b = predict_ok("extended_roofline", blk, mi), t = predict_ok("extended_roofline", per_tensor, mi),
                w = predict_ok("extended_roofline", wide, mi);
    double sb = diag_num(&b, "split_k"), st = diag_num(&t, "split_k");
    cr_assert_gt(sb, 6144.0 / (4 * 256), "split %g", sb);
    cr_assert_leq(st, 6144.0 / (4 * 256), "split %g", st);
    cr_assert_leq(diag_num(&b, "tiles"), 304);
    /* 64 tiles: at most 4 pieces each on 304 CUs. */
    cr_assert_leq(diag_num(&w, "split_k"), 4);
    opm_op_free(blk);
    opm_op_free(per_tensor);
    opm_op_free(wide);
    opm_hardware_free(mi);
}

/* A hinted tile the occupancy rules call too big for an SM (16x128x256 fp8
 * over two LDS stages: 72 KiB of a 64 KiB LDS) runs one CTA per SM, and
 * split-K is still chosen for it: 24 output tiles leave most of 304 CUs
 * idle, and splitting is faster than the unsplit launch. */
Test(tc_gemm, oversubscribed_hint_still_splits)
{
    opm_hardware *mi = builtin_hw("mi300x");
    const char *fmt = "{\"kind\": \"gemm\", \"m\": 1, \"n\": 3072, \"k\": 6144, \"dtype\": \"fp8_e4m3\", "
                      "\"out_dtype\": \"bf16\", \"transpose_b\": true, \"attrs\": {\"scale_a\": \"block\", "
                      "\"scale_b\": \"block\", \"scale_block_a\": [1, 128], \"scale_block_b\": [128, 128], "
                      "\"cta_tile_m\": 16, \"cta_tile_n\": 128, \"cta_tile_k\": 256, \"warps_per_cta\": 4, "
                      "\"pipeline_stages\": 2%s}}";
    char json[768];
    snprintf(json, sizeof json, fmt, "");
    opm_op *free_split = op_json(json);
    snprintf(json, sizeof json, fmt, ", \"split_k\": 1");
    opm_op *unsplit = op_json(json);
    opm_profile f = predict_ok("extended_roofline", free_split, mi), u = predict_ok("extended_roofline", unsplit, mi);
    cr_assert_str_eq(diag(&u, "occupancy_limit")->text, "oversubscribed");
    cr_assert_str_eq(diag(&f, "occupancy_limit")->text, "oversubscribed");
    cr_assert_gt(diag_num(&f, "split_k"), 1);
    cr_assert_lt(f.latency_s, u.latency_s, "%g vs %g", f.latency_s, u.latency_s);
    opm_op_free(free_split);
    opm_op_free(unsplit);
    opm_hardware_free(mi);
}

/* A second resident CTA does not hide the dequantisation: a 64x64 kernel
 * (two fit a CU's LDS) with two tiles on every CU takes twice the K-loop
 * compute time of one tile per CU. */
Test(tc_gemm, mfma_dequant_not_hidden_by_a_second_cta)
{
    opm_hardware *mi = builtin_hw("mi300x");
    double t[2];
    for (int i = 0; i < 2; i++) {
        char json[512];
        /* 304 CUs: 304 or 608 tiles of 64x64 in one tile row. */
        snprintf(json, sizeof json,
                 "{\"kind\": \"gemm\", \"m\": 64, \"n\": %d, \"k\": 4096, \"dtype\": \"fp8_e4m3\", "
                 "\"out_dtype\": \"bf16\", \"transpose_b\": true, \"attrs\": {\"scale_a\": \"block\", "
                 "\"scale_b\": \"block\", \"scale_block_a\": [1, 128], \"scale_block_b\": [128, 128], "
                 "\"cta_tile_m\": 64, \"cta_tile_n\": 64, \"cta_tile_k\": 128, \"warps_per_cta\": 4, "
                 "\"pipeline_stages\": 2, \"split_k\": 1}}",
                 64 * 304 * (i + 1));
        opm_op *op = op_json(json);
        opm_profile p = predict_ok("extended_roofline", op, mi);
        cr_assert_eq(diag_num(&p, "ctas_per_sm"), 2);
        t[i] = diag_num(&p, "dequant_time_s");
        opm_op_free(op);
    }
    cr_assert_float_eq(t[1], 2 * t[0], 1e-3 * t[1], "%g vs %g", t[1], t[0]);
    opm_hardware_free(mi);
}

/* vLLM's per-tensor quantisation runs one CTA per row: with few rows its
 * passes are bound by the loads in flight over the load latency, so one
 * long row takes far longer than many short ones of the same bytes, and
 * the long row's time grows with K well above what the DRAM bandwidth
 * alone allows. */
Test(tc_gemm, activation_quant_rows_bound_by_latency)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *one = fp8_gemm(1, 1024, 65536, "dynamic"), *many = fp8_gemm(64, 1024, 1024, "dynamic"),
           *half = fp8_gemm(1, 1024, 32768, "dynamic");
    opm_profile p1 = predict_ok("extended_roofline", one, hw), pm = predict_ok("extended_roofline", many, hw),
                ph = predict_ok("extended_roofline", half, hw);
    double q1 = diag_num(&p1, "activation_quant_s"), qm = diag_num(&pm, "activation_quant_s"),
           qh = diag_num(&ph, "activation_quant_s");
    cr_assert_gt(q1, 2 * qm, "%g vs %g", q1, qm);
    /* Two passes over 32768 more bf16 elements: at the DRAM rate ~0.04 us. */
    double bw = 3.35e12 * 0.949;
    cr_assert_gt(q1 - qh, 10 * 2 * 2 * 32768.0 / bw, "%g", q1 - qh);
    /* Enough rows to fill the SMs: bandwidth-bound again, near bytes / bw. */
    opm_op *tall = fp8_gemm(32768, 1024, 4096, "static");
    opm_profile pt = predict_ok("extended_roofline", tall, hw);
    double bytes_s = 32768.0 * 4096 * 2 / bw;
    cr_assert(diag_num(&pt, "activation_quant_s") < 3 * bytes_s, "%g vs %g", diag_num(&pt, "activation_quant_s"),
              bytes_s);
    /* The refit's decomposition gives the same time the model reports. */
    const opm_op *ops[3] = {one, many, tall};
    const opm_profile *ps[3] = {&p1, &pm, &pt};
    for (int i = 0; i < 3; i++) {
        gemm_quant_terms qt;
        opm_error err;
        cr_assert_eq(opm_gemm_quant_terms_of(ops[i], hw, &qt, &err), 0);
        double t = opm_gemm_quant_terms_time(&qt, SAME_ADDRESS_ATOMIC_CYCLES, BACK_TO_BACK_KERNEL_FRACTION);
        cr_assert_float_eq(t, diag_num(ps[i], "activation_quant_s"), 1e-12, "%d: %g vs %g", i, t,
                           diag_num(ps[i], "activation_quant_s"));
    }
    opm_op_free(one);
    opm_op_free(many);
    opm_op_free(half);
    opm_op_free(tall);
    opm_hardware_free(hw);
}

/* A hinted Hopper kernel without pipeline_stages fills the shared memory
 * as the catalog's warp-specialised kernels do; a stages hint still wins.
 * A 16-row tile (the swapped-operand kernels libraries run for small M)
 * wastes less of the tensor rate on a 4-row GEMM than a 64-row one. */
Test(tc_gemm, hinted_wgmma_kernels)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    const char *fmt = "{\"kind\": \"gemm\", \"m\": 4, \"n\": 1024, \"k\": 65536, \"dtype\": \"fp8\", \"out_dtype\": "
                      "\"bf16\", \"transpose_b\": true, \"attrs\": {\"cta_tile_m\": %d, \"cta_tile_n\": 64, "
                      "\"cta_tile_k\": 256, \"warps_per_cta\": 8%s}}";
    char json[512];
    snprintf(json, sizeof json, fmt, 16, "");
    opm_op *auto16 = op_json(json);
    snprintf(json, sizeof json, fmt, 16, ", \"pipeline_stages\": 3");
    opm_op *three = op_json(json);
    snprintf(json, sizeof json, fmt, 64, "");
    opm_op *auto64 = op_json(json);
    opm_profile a = predict_ok("extended_roofline", auto16, hw), t = predict_ok("extended_roofline", three, hw),
                b = predict_ok("extended_roofline", auto64, hw);
    /* (16 + 64) x 256 fp8 bytes per stage: 8 stages fit 3/4 of 228 KiB. */
    cr_assert_eq(diag_num(&a, "pipeline_stages"), 8);
    cr_assert_eq(diag_num(&t, "pipeline_stages"), 3);
    cr_assert_lt(a.latency_s, b.latency_s, "%g vs %g", a.latency_s, b.latency_s);
    cr_assert(!strncmp(diag(&a, "kernel")->text, "hinted_16x64x256_s8", 19), "%s", diag(&a, "kernel")->text);
    opm_op_free(auto16);
    opm_op_free(three);
    opm_op_free(auto64);
    opm_hardware_free(hw);
}

/* The kernel column `cutlass_fp8_scaled_mm` on a wgmma part runs vLLM's
 * fixed sm90 tiles (no split-K, data-parallel): a 160-row GEMM over a long
 * K gets two 128x128 tiles, much slower than the best catalog choice; on
 * an mma_sync part the column only fixes split_k 1. */
Test(tc_gemm, vllm_cutlass_fp8_tiles)
{
    double with[3], without[3];
    kernel_column_predictions("tc_vllm",
                              "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,activation_quant,timing\n"
                              "h100_sxm,fp8_e4m3,1,160,128,65536,0,1,0,190,dynquant+cutlass_fp8_scaled_mm,t,dynamic,graph\n"
                              "h100_sxm,fp8_e4m3,1,8,1024,65536,0,1,0,60,dynquant+cutlass_fp8_scaled_mm,t,dynamic,graph\n"
                              "h100_sxm,bf16,1,160,128,65536,0,1,0,100,F.linear,t,none,graph\n",
                              3, with, without);
    cr_assert_gt(with[0], 1.5 * without[0], "%g vs %g", with[0], without[0]);
    /* 2 CTAs of 128x128x65536 fp8 cannot beat the tensor rate of 2 SMs. */
    opm_hardware *hw = builtin_hw("h100_sxm");
    double sm_rate = 1978.9e12 / 132;
    cr_assert_gt(with[0], 2.0 * 128 * 128 * 65536 / sm_rate);
    /* The bf16 cuBLAS row is untouched by the column. */
    cr_assert_eq(with[2], without[2]);
    opm_hardware_free(hw);
}

/* On an mma_sync part (L40S) the column runs vLLM's sm89 fixed tiles: a
 * 160-row GEMM over a long K gets three 64x128 CTAs (the (128, 256] bucket
 * at N <= 4096), much slower than the catalog's split-K choice and no
 * faster than three SMs' tensor rate; a 16-row one the 16x64 tile, two
 * CTAs of a quarter the work, so faster.  e5m2 (which sm89's dispatch does
 * not take) only gets split_k 1, and the bf16 row is untouched. */
Test(tc_gemm, vllm_cutlass_fp8_sm89_tiles)
{
    double with[4], without[4];
    kernel_column_predictions("tc_vllm89",
                              "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,activation_quant,timing\n"
                              "l40s,fp8_e4m3,1,160,128,65536,0,1,0,400,dynquant+cutlass_fp8_scaled_mm,t,dynamic,graph\n"
                              "l40s,fp8_e4m3,1,16,128,65536,0,1,0,100,dynquant+cutlass_fp8_scaled_mm,t,dynamic,graph\n"
                              "l40s,fp8_e5m2,1,160,128,65536,0,1,0,400,dynquant+cutlass_fp8_scaled_mm,t,dynamic,graph\n"
                              "l40s,bf16,1,160,128,65536,0,1,0,60,F.linear,t,none,graph\n",
                              4, with, without);
    cr_assert_gt(with[0], 2.0 * without[0], "%g vs %g", with[0], without[0]);
    /* 3 CTAs of 64x128x65536 fp8 cannot beat the tensor rate of 3 SMs. */
    double sm_rate = 733.0e12 / 142;
    cr_assert_gt(with[0], 3 * 2.0 * 64 * 128 * 65536 / (3 * sm_rate));
    cr_assert_lt(with[1], with[0], "%g vs %g", with[1], with[0]);
    cr_assert_neq(with[2], with[0]);
    cr_assert_eq(with[3], without[3]);
}

/* A Composable Kernel instance in the kernel column (aiter's CK labels)
 * runs its own tile: on a 16-row block-scaled GEMM the 128x128 tile pads
 * M eight-fold and keeps a 128-deep K step per block, so it is slower than
 * the 16x64 tile the same row names, and both differ from automatic
 * selection; a bf16 row without a CK name is untouched by the column. */
Test(tc_gemm, ck_instance_tiles)
{
    double with[3], without[3];
    kernel_column_predictions("tc_ck",
                              "hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,activation_quant,timing\n"
                              "mi300x,fp8_e4m3,1,16,1280,5120,0,1,0,17,a8w8_blockscale:ck:256x16x64x256[e4m3fnuz],t,block,kernel\n"
                              "mi300x,fp8_e4m3,1,16,1280,5120,0,1,0,17,a8w8_blockscale:ck:256x128x128x128[e4m3fnuz],t,block,kernel\n"
                              "mi300x,bf16,1,16,1280,5120,0,1,0,17,F.linear,t,none,kernel\n",
                              3, with, without);
    cr_assert_gt(with[1], with[0], "%g vs %g", with[1], with[0]);
    cr_assert_neq(with[0], without[0]);
    cr_assert_eq(without[0], without[1]);
    cr_assert_eq(with[2], without[2]);
}

/* The leave-one-hardware-out refit finds the constants the rows were made
 * with: rows whose latencies are the model's own at atomic 30 cycles and
 * back-to-back fraction 0.8 (a copy of the hardware carrying those
 * overrides), on two GPUs; every fold recovers them, the held-out error
 * at the refit values is ~0 and at the shipped ones is not. */
Test(tc_gemm, constant_refit_recovers_the_constants)
{
    static const char *const hws[2] = {"h100_sxm", "h200_sxm"};
    static const int64_t shapes[4][3] = {{16384, 128, 32}, {32768, 256, 32}, {1, 64, 1024}, {64, 2048, 4096}};
    char dir[512], path[600];
    tmp_dir(dir, sizeof dir, "tc_refit");
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("hardware,dtype,batch,m,n,k,transpose_a,transpose_b,bias,latency_us,kernel,source,activation_quant,timing,"
          "l2_warm\n", f);
    for (int h = 0; h < 2; h++) {
        opm_hardware *hw = builtin_hw(hws[h]);
        opm_error err;
        opm_hardware *fit = opm_hardware_clone(hw, &err);
        cr_assert_not_null(fit);
        fit->fit[OPM_FIT_ATOMIC_CYCLES] = 30;
        fit->fit[OPM_FIT_BACK_TO_BACK] = 0.8;
        for (int s = 0; s < 4; s++) {
            opm_op *op = fp8_gemm(shapes[s][0], shapes[s][1], shapes[s][2], "dynamic");
            cr_assert_eq(opm_op_set_string(op, "l2_warm", "input", &err), 0);
            cr_assert_eq(opm_op_set_int(op, "split_k", 1, &err), 0);
            opm_profile p = predict_ok("extended_roofline", op, fit);
            fprintf(f, "%s,fp8_e4m3,1,%lld,%lld,%lld,0,1,0,%.6f,x,t,dynamic,graph,input\n", hws[h],
                    (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2], p.latency_s * 1e6);
            opm_op_free(op);
        }
        opm_hardware_free(fit);
        opm_hardware_free(hw);
    }
    fclose(f);
    opm_error err;
    opm_gemm_dataset ds;
    cr_assert_eq(opm_gemm_dataset_load(dir, &ds, &err), 0, "%s", err.message);
    cr_assert_eq(ds.n_rows, 8);
    double base[8];
    cr_assert_eq(opm_gemm_base_predictions(&ds, "extended_roofline", 1, base, &err), 0, "%s", err.message);
    opm_gemm_refit rf;
    cr_assert_eq(opm_gemm_refit_constants(&ds, "extended_roofline", 1, base, &rf, &err), 0, "%s", err.message);
    cr_assert_eq(rf.n_folds, 3);
    for (size_t i = 0; i < rf.n_folds; i++) {
        const opm_gemm_refit_fold *fo = &rf.folds[i];
        cr_assert_float_eq(fo->atomic_cycles, 30, 1e-9, "fold %zu: %g", i, fo->atomic_cycles);
        cr_assert_float_eq(fo->back_to_back, 0.8, 1e-9, "fold %zu: %g", i, fo->back_to_back);
        cr_assert_lt(fo->fit_mape, 0.01);
        if (fo->hw >= 0) {
            cr_assert_eq(fo->held_rows, 4);
            cr_assert_lt(fo->held_mape_refit, 0.01);
            cr_assert_gt(fo->held_mape_shipped, 1);
        }
    }
    cr_assert_eq(rf.pooled_rows, 8);
    opm_gemm_refit_free(&rf);
    /* The roofline has no quantisation kernels: nothing to refit. */
    cr_assert_eq(opm_gemm_refit_constants(&ds, "roofline", 1, base, &rf, &err), 0);
    cr_assert_eq(rf.n_folds, 0);
    opm_gemm_dataset_free(&ds);
    remove(path);
    rmdir(dir);
}

/* A GEMM's operand and output lines lie evenly over the L2's partitions,
 * so on the A100 (two partitions, a far hit 368 cycles against 210 near)
 * its L2 latency is their mean: the waves' latency terms grow (a copy
 * without the far figure is faster), one partition makes the far figure
 * moot, and an entry without far_latency_cycles (H100) keeps the near latency. */
Test(tc_gemm, far_l2_hits_lengthen_gemm_waves)
{
    opm_hardware *a100 = builtin_hw("a100_80gb_sxm"), *h100 = builtin_hw("h100_sxm");
    opm_error err;
    gemm_hw h;
    cr_assert_eq(opm_gemm_hw(a100, OPM_BF16, &h, &err), 0, "%s", err.message);
    cr_assert_float_eq(h.lat_l2_s * h.clock_hz, 210, 1e-6);
    cr_assert_float_eq(h.lat_l2_mean_s * h.clock_hz, (210 + 368) / 2.0, 1e-6);
    cr_assert_eq(opm_gemm_hw(h100, OPM_BF16, &h, &err), 0, "%s", err.message);
    cr_assert_eq(h.lat_l2_mean_s, h.lat_l2_s);
    opm_hardware *near = builtin_hw_with_l2("a100_80gb_sxm", 0, 2), *one = builtin_hw_with_l2("a100_80gb_sxm", 368, 1);
    opm_hardware *one_near = builtin_hw_with_l2("a100_80gb_sxm", 0, 1);
    opm_op *op = op_json("{\"kind\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 128, \"dtype\": \"bf16\", "
                         "\"attrs\": {\"l2_warm\": \"all\"}}");
    for (int e = 0; e < 2; e++) {
        const char *model = e ? "effective_roofline" : "extended_roofline";
        opm_profile f = predict_ok(model, op, a100), n = predict_ok(model, op, near), u = predict_ok(model, op, one);
        opm_profile un = predict_ok(model, op, one_near);
        cr_assert_gt(f.latency_s, n.latency_s, "%s: %g vs %g", model, f.latency_s, n.latency_s);
        cr_assert_lt(f.latency_s, 1.25 * n.latency_s, "%s: %g vs %g", model, f.latency_s, n.latency_s);
        /* One partition: every hit is near, the far figure means nothing. */
        cr_assert_eq(u.latency_s, un.latency_s, "%s: %g vs %g", model, u.latency_s, un.latency_s);
    }
    opm_op_free(op);
    opm_hardware_free(one_near);
    opm_hardware_free(one);
    opm_hardware_free(near);
    opm_hardware_free(h100);
    opm_hardware_free(a100);
}
