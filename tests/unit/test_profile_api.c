/* test_profile_api.c — the profile as a self-contained value: it owns its
 * name strings (still readable after the op and hardware are freed; run
 * under ASan this is a use-after-free check), counts and reports the
 * diagnostics past OPM_MAX_DIAGS, says when a model fell back to the
 * roofline, and carries typed GEMM details equal to the text diagnostics. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/models.h"
#include "testutil.h"

Test(profile_api, names_outlive_op_and_hardware)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *op = op_yaml("name: ffn_up_projection\nkind: gemm\nm: 512\nn: 1024\nk: 256\ndtype: bf16\n");
    opm_profile p = predict_ok("extended_roofline", op, hw);
    opm_op_free(op);
    opm_hardware_free(hw);
    cr_assert_str_eq(p.name, "ffn_up_projection");
    cr_assert_str_eq(p.model, "extended_roofline");
    cr_assert_str_eq(p.hardware, "h100_sxm");
    opm_error err;
    char *json = opm_profile_to_json(&p, &err);
    cr_assert_not_null(json);
    cr_assert(strstr(json, "\"name\": \"ffn_up_projection\"") != NULL, "%s", json);
    opm_free(json);
}

Test(profile_api, long_op_name_is_cut_to_the_buffer)
{
    char name[300], yaml[400];
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    snprintf(yaml, sizeof yaml, "name: %s\nkind: gemm\nm: 8\nn: 8\nk: 8\ndtype: bf16\n", name);
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *op = op_yaml(yaml);
    opm_profile p = predict_ok("roofline", op, hw);
    cr_assert_eq(strlen(p.name), OPM_PROFILE_NAME_MAX - 1);
    cr_assert_eq(strncmp(p.name, name, OPM_PROFILE_NAME_MAX - 1), 0);
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* A model appending more than OPM_MAX_DIAGS diagnostics: the extra ones
 * are counted, reported in JSON and in the accessors. */
Test(profile_api, diagnostics_past_the_capacity_are_counted)
{
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *op = op_yaml("kind: gemm\nm: 64\nn: 64\nk: 64\ndtype: bf16\n");
    opm_profile p = predict_ok("roofline", op, hw);
    size_t before = opm_profile_diag_count(&p);
    cr_assert_eq(opm_profile_diags_dropped(&p), 0);
    for (size_t i = before; i < OPM_MAX_DIAGS + 5; i++) opm_diag_num(&p, "extra", (double)i);
    cr_assert_eq(opm_profile_diag_count(&p), OPM_MAX_DIAGS);
    cr_assert_eq(opm_profile_diags_dropped(&p), 5);
    cr_assert_not_null(opm_profile_diag_at(&p, OPM_MAX_DIAGS - 1));
    cr_assert_null(opm_profile_diag_at(&p, OPM_MAX_DIAGS));
    cr_assert_str_eq(opm_profile_diag_at(&p, 0)->key, p.diags[0].key);
    opm_error err;
    char *json = opm_profile_to_json(&p, &err);
    cr_assert(strstr(json, "\"diagnostics_dropped\": 5") != NULL, "%s", json);
    opm_free(json);
    /* The next prediction into the same profile starts from zero. */
    p = predict_ok("effective_roofline", op, hw);
    cr_assert_eq(opm_profile_diags_dropped(&p), 0);
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* A conv, the kind with the most diagnostics (31), keeps every one. */
Test(profile_api, conv_keeps_every_diagnostic)
{
    opm_hardware *hw = builtin_hw("t4");
    opm_op *op = op_json("{\"name\": \"c\", \"kind\": \"conv\", \"input\": [16, 128, 28, 28], \"weight\": "
                         "[256, 128, 3, 3], \"dtype\": \"fp16\", \"padding\": 1, \"bias\": true}");
    for (int ph = 0; ph < 2; ph++) {
        if (ph) opm_op_set_phase(op, OPM_PHASE_TRAIN_BWD);
        opm_profile p = predict_ok("extended_roofline", op, hw);
        cr_assert_gt(opm_profile_diag_count(&p), 24);
        cr_assert_eq(opm_profile_diags_dropped(&p), 0, "%zu dropped", opm_profile_diags_dropped(&p));
    }
    opm_op_free(op);
    opm_hardware_free(hw);
}

Test(profile_api, fell_back_flag)
{
    opm_hardware *gpu = builtin_hw("h100_sxm"), *tpu = builtin_hw("tpu_v5e");
    opm_op *gemm = op_yaml("kind: gemm\nm: 1024\nn: 1024\nk: 1024\ndtype: bf16\n");
    const char *models[] = {"extended_roofline", "effective_roofline"};
    for (int i = 0; i < 2; i++) {
        opm_profile p = predict_ok(models[i], gemm, gpu);
        cr_assert_eq(p.fell_back, 0);
        cr_assert_not_null(opm_profile_gemm(&p));
        /* A TPU has no tile model: the roofline answers, and says so. */
        p = predict_ok(models[i], gemm, tpu);
        cr_assert_eq(p.fell_back, 1);
        cr_assert_str_eq(p.model, models[i]);
        cr_assert_not_null(opm_profile_diag(&p, "fallback"));
        cr_assert_null(opm_profile_gemm(&p));
        opm_error err;
        char *json = opm_profile_to_json(&p, &err);
        cr_assert(strstr(json, "\"fell_back\": true") != NULL, "%s", json);
        opm_free(json);
    }
    opm_profile p = predict_ok("roofline", gemm, gpu);
    cr_assert_eq(p.fell_back, 0);
    cr_assert_null(opm_profile_gemm(&p));
    opm_error err;
    char *json = opm_profile_to_json(&p, &err);
    cr_assert(strstr(json, "\"fell_back\": false") != NULL, "%s", json);
    opm_free(json);
    opm_op_free(gemm);
    opm_hardware_free(gpu);
    opm_hardware_free(tpu);
}

/* The typed details say what the text diagnostics say. */
Test(profile_api, gemm_details_match_the_diagnostics)
{
    const char *hws[] = {"h100_sxm", "a100_80gb_sxm", "mi300x", "t4"};
    const char *models[] = {"extended_roofline", "effective_roofline"};
    opm_op *op = op_yaml("kind: gemm\nm: 4096\nn: 3072\nk: 1000\ndtype: fp16\n");
    for (size_t h = 0; h < 4; h++) {
        opm_hardware *hw = builtin_hw(hws[h]);
        for (int m = 0; m < 2; m++) {
            opm_profile p = predict_ok(models[m], op, hw);
            const opm_gemm_details *g = opm_profile_gemm(&p);
            cr_assert_not_null(g);
            cr_assert_str_eq(g->kernel, opm_profile_diag(&p, "kernel")->text);
            char tile[64];
            snprintf(tile, sizeof tile, "%lldx%lldx%lld", (long long)g->tile_m, (long long)g->tile_n,
                     (long long)g->tile_k);
            cr_assert_str_eq(tile, opm_profile_diag(&p, "tile")->text);
            cr_assert_eq((double)g->split_k, opm_profile_diag(&p, "split_k")->number);
            cr_assert_eq((double)g->pipeline_stages, opm_profile_diag(&p, "pipeline_stages")->number);
            cr_assert_eq((double)g->warps_per_cta, opm_profile_diag(&p, "warps_per_cta")->number);
            cr_assert_eq(g->waves, opm_profile_diag(&p, "waves")->number);
            cr_assert_eq(g->tiles, opm_profile_diag(&p, "tiles")->number);
            cr_assert_eq(g->wave_efficiency, opm_profile_diag(&p, "wave_efficiency")->number);
            cr_assert(g->kernel_family[0] != '\0');
            if (m) cr_assert_gt(g->effective_rates_per_s[0], 0, "%s", hws[h]);
        }
        opm_hardware_free(hw);
    }
    opm_op_free(op);
}

Test(profile_api, size_matches_the_headers)
{
    cr_assert_eq(opm_profile_size(), sizeof(opm_profile));
}
