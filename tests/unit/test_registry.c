/* test_registry.c — opm_registry: a user's model registered next to the
 * built-in ones is used by opm_predict_with, by a trace report and by a
 * general validation; names are checked; a registry holds no state the
 * built-in paths see (opm_predict still knows only the built-in models). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "validate/general.h"

/* A user model: the roofline at twice the latency, with one diagnostic. */
static int slow_predict(const opm_op *op, const opm_hardware *hw, opm_profile *out, opm_error *err)
{
    int rc = opm_predict("roofline", op, hw, out, err);
    if (rc) return rc;
    out->latency_s *= 2;
    out->compute_time_s *= 2;
    out->static_energy_j *= 2;
    return 0;
}

/* A user model built from opm_profile_init: a fixed 1 ms. */
static int one_ms_predict(const opm_op *op, const opm_hardware *hw, opm_profile *out, opm_error *err)
{
    int rc = opm_profile_init(out, op, hw, "one_ms", err);
    if (rc) return rc;
    out->latency_s = 1e-3;
    out->bound = OPM_BOUND_OVERHEAD;
    out->engine = OPM_ENGINE_NONE;
    return 0;
}

static opm_registry *user_registry(void)
{
    opm_error err;
    opm_registry *r = opm_registry_new(&err);
    cr_assert_not_null(r);
    /* Temporaries: the registry copies them. */
    char name[32] = "slow_roofline", desc[64] = "the roofline, twice as slow";
    opm_model m = {name, desc, slow_predict};
    cr_assert_eq(opm_model_register(r, &m, &err), 0, "%s", err.message);
    memset(name, 0, sizeof name);
    memset(desc, 0, sizeof desc);
    opm_model m2 = {"one_ms", NULL, one_ms_predict};
    cr_assert_eq(opm_model_register(r, &m2, &err), 0, "%s", err.message);
    return r;
}

Test(registry, user_model_predicts)
{
    opm_registry *r = user_registry();
    cr_assert_eq(opm_registry_model_count(r), opm_model_count() + 2);
    cr_assert_str_eq(opm_registry_model_at(r, opm_model_count())->name, "slow_roofline");
    cr_assert_str_eq(opm_registry_model_at(r, opm_model_count())->description, "the roofline, twice as slow");
    cr_assert_null(opm_registry_model_at(r, opm_model_count() + 2));
    cr_assert_not_null(opm_registry_find_model(r, "roofline"), "the built-in models are there too");
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_op *op = op_yaml("name: up\nkind: gemm\nm: 4096\nn: 4096\nk: 4096\ndtype: bf16\n");
    opm_profile base = predict_ok("roofline", op, hw), p;
    opm_error err;
    cr_assert_eq(opm_predict_with(r, "slow_roofline", op, hw, &p, &err), 0, "%s", err.message);
    cr_assert_float_eq(p.latency_s, 2 * base.latency_s, 1e-15);
    cr_assert_str_eq(p.model, "slow_roofline", "the registered name, not the roofline's");
    cr_assert_eq(opm_predict_with(r, "one_ms", op, hw, &p, &err), 0, "%s", err.message);
    cr_assert_eq(p.latency_s, 1e-3);
    cr_assert_eq(p.flops, base.flops);
    cr_assert_str_eq(p.name, "up");
    char *json = opm_profile_to_json(&p, &err);
    cr_assert(strstr(json, "\"model\": \"one_ms\"") != NULL, "%s", json);
    opm_free(json);
    /* Built-ins through the registry are unchanged; the global path does
     * not see the user's models. */
    cr_assert_eq(opm_predict_with(r, "roofline", op, hw, &p, &err), 0);
    cr_assert_eq(p.latency_s, base.latency_s);
    cr_assert_neq(opm_predict("slow_roofline", op, hw, &p, &err), 0);
    cr_assert_eq(err.code, OPM_ENOTFOUND);
    cr_assert_neq(opm_predict_with(r, "slow_rooflin", op, hw, &p, &err), 0);
    cr_assert_eq(err.code, OPM_ENOTFOUND);
    cr_assert_neq(opm_predict_with(r, NULL, op, hw, &p, &err), 0);
    opm_op_free(op);
    opm_hardware_free(hw);
    opm_registry_free(r);
}

Test(registry, names_checked)
{
    opm_error err;
    opm_registry *r = opm_registry_new(&err);
    opm_model bad[] = {{"", "", slow_predict}, {"Has Space", "", slow_predict},
                       {"roofline", "", slow_predict}, {"ok_name", "", NULL},
                       {"a_name_that_is_far_too_long_for_the_profile", "", slow_predict}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_neq(opm_model_register(r, &bad[i], &err), 0, "%zu accepted", i);
        cr_assert(strchr(err.message, '\n') == NULL);
    }
    cr_assert(strstr(err.message, "a_name_that") != NULL, "%s", err.message);
    opm_model m = {"twice", "", slow_predict};
    cr_assert_eq(opm_model_register(r, &m, &err), 0);
    cr_assert_neq(opm_model_register(r, &m, &err), 0, "registered twice");
    cr_assert(strstr(err.message, "already registered"), "%s", err.message);
    cr_assert_eq(opm_registry_model_count(r), opm_model_count() + 1);
    /* Many models: pointers handed out earlier stay valid as it grows. */
    const opm_model *first = opm_registry_find_model(r, "twice");
    for (int i = 0; i < 50; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        opm_model mi = {name, "", one_ms_predict};
        cr_assert_eq(opm_model_register(r, &mi, &err), 0, "%s", err.message);
    }
    cr_assert_eq(first, opm_registry_find_model(r, "twice"));
    cr_assert_str_eq(first->name, "twice");
    opm_registry_free(r);
    opm_registry_free(NULL);
}

Test(registry, trace_report_with_a_user_model)
{
    char buf[1024];
    opm_error err;
    opm_trace *t = opm_trace_read_file(src_path("tests/data/traces/h100_bert/trace.json.gz", buf, sizeof buf), &err);
    cr_assert_not_null(t, "%s", err.message);
    opm_hardware *hw = builtin_hw("h100_sxm");
    opm_registry *r = user_registry();
    opm_trace_report *base = opm_trace_report_new(t, hw, "roofline", &err);
    opm_trace_report *slow = opm_trace_report_new_with(r, t, hw, "slow_roofline", &err);
    cr_assert_not_null(base, "%s", err.message);
    cr_assert_not_null(slow, "%s", err.message);
    cr_assert_null(opm_trace_report_new(t, hw, "slow_roofline", &err), "not a built-in");
    size_t n = opm_trace_report_group_count(base), compared = 0;
    cr_assert_eq(n, opm_trace_report_group_count(slow));
    for (size_t i = 0; i < n; i++) {
        const opm_trace_group *a = opm_trace_report_group(base, i), *b = opm_trace_report_group(slow, i);
        cr_assert_eq(a->has_roofline, b->has_roofline);
        if (!a->has_roofline) continue;
        cr_assert_float_eq(b->roofline_time_s, 2 * a->roofline_time_s, 1e-18 + 1e-12 * a->roofline_time_s);
        compared++;
    }
    cr_assert_gt(compared, 5);
    opm_trace_report_free(base);
    opm_trace_report_free(slow);
    opm_registry_free(r);
    opm_hardware_free(hw);
    opm_trace_free(t);
}

Test(registry, validation_with_a_user_model)
{
    char dir[256], path[300];
    tmp_dir(dir, sizeof dir, "registry");
    snprintf(path, sizeof path, "%s/m.jsonl", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"hardware\": \"h100_sxm\", \"op\": {\"kind\": \"gemm\", \"m\": 1024, \"n\": 1024, \"k\": 1024, "
          "\"dtype\": \"bf16\"}, \"measured\": {\"latency_s\": 2e-3}}\n"
          "{\"hardware\": \"h100_sxm\", \"op\": {\"kind\": \"softmax\", \"shape\": [64, 4096], \"dtype\": "
          "\"bf16\"}, \"measured\": {\"latency_s\": 0.5e-3}}\n", f);
    fclose(f);
    opm_registry *r = user_registry();
    opm_general v;
    opm_error err;
    cr_assert_eq(opm_general_init_with(&v, r, "one_ms", 0, &err), 0, "%s", err.message);
    cr_assert_eq(opm_general_add_path(&v, path, "--data", &err), 0, "%s", err.message);
    cr_assert_eq(opm_general_score(&v, &err), 0, "%s", err.message);
    cr_assert_eq(v.rows, 2);
    cr_assert_eq(v.rows_failed, 0);
    /* 1 ms against 2 ms and 0.5 ms: errors of 50% and 100%. */
    cr_assert_float_eq(v.time.overall.mape, 75, 1e-9, "%g", v.time.overall.mape);
    opm_general_free(&v);
    opm_general g;
    cr_assert_neq(opm_general_init(&g, "one_ms", 0, &err), 0, "the built-in path does not know it");
    opm_general_free(&g);
    opm_registry_free(r);
    unlink(path);
    rmdir(dir);
}
