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

/* The error a user kind returns, through the public opm_error_set. */
static int opm_err_for_test(opm_error *err, const char *field, const char *msg)
{
    return opm_error_set(err, OPM_EINVAL, field, "%s", msg);
}

/* A user model: the roofline at twice the latency. */
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

/* ---- a user op kind: y = alpha * x + beta, elementwise, one input and
 * one output of the same shape; 2 FLOPs per element ---- */

static const opm_attr_def axpb_attrs[] = {
    {"alpha", OPM_ATTR_DOUBLE, 0, "scale"},
    {"beta", OPM_ATTR_DOUBLE, 0, "offset"},
    {NULL, 0, 0, NULL},
};

static int axpb_validate(const opm_op *op, opm_error *err)
{
    const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    if (!x || !y) return opm_err_for_test(err, "tensors", "expected an input x and an output y");
    if (x->rank != y->rank) return opm_err_for_test(err, "tensors[1].shape", "expected the shape of x");
    for (int i = 0; i < x->rank; i++)
        if (x->shape[i] != y->shape[i]) return opm_err_for_test(err, "tensors[1].shape", "expected the shape of x");
    return 0;
}

static int axpb_count(const opm_op *op, opm_counts *c, opm_error *err)
{
    int rc = axpb_validate(op, err);
    if (rc) return rc;
    const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    uint64_t n = 1;
    for (int i = 0; i < x->rank; i++) n *= (uint64_t)x->shape[i];
    c->vector_flops = 2 * n;
    c->compute_dtype = x->dtype;
    c->input_bytes = c->read_bytes = n * opm_dtype_bits(x->dtype) / 8;
    c->output_bytes = c->write_bytes = n * opm_dtype_bits(y->dtype) / 8;
    return 0;
}

static const opm_kind_def axpb_kind = {
    .kind = OPM_KIND_USER, .name = "axpb", .summary = "y = alpha x + beta",
    .tensors_help = "input x, output y of the same shape", .attrs = axpb_attrs,
    .validate = axpb_validate, .count = axpb_count, .max_tensors = {1, 0, 1, 0, -1},
};

Test(registry, user_kind_predicts_with_every_model)
{
    opm_error err;
    opm_registry *r = user_registry();
    cr_assert_eq(opm_registry_add_kind(r, &axpb_kind, &err), 0, "%s", err.message);
    cr_assert_not_null(opm_registry_find_kind(r, "axpb"));
    opm_op *op = opm_registry_op_new(r, "axpb", "scale_shift", OPM_PHASE_INFERENCE, &err);
    cr_assert_not_null(op, "%s", err.message);
    const int64_t shape[2] = {8192, 8192};
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_INPUT, shape, 2, OPM_BF16, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_add_tensor(op, OPM_ROLE_OUTPUT, shape, 2, OPM_BF16, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_set_double(op, "alpha", 2.0, &err), 0, "%s", err.message);
    cr_assert_neq(opm_op_set_double(op, "alpah", 2.0, &err), 0, "the kind's attributes are checked");
    cr_assert(strstr(err.message, "did you mean 'alpha'"), "%s", err.message);
    cr_assert_eq(opm_op_validate(op, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_kind(op), OPM_KIND_USER);
    cr_assert_str_eq(opm_op_kind_name(op), "axpb");
    opm_hardware *hw = builtin_hw("h100_sxm");
    const char *models[] = {"roofline", "extended_roofline", "effective_roofline", "slow_roofline"};
    double bytes = 2.0 * 8192 * 8192 * 2;
    for (size_t m = 0; m < 4; m++) {
        opm_profile p;
        cr_assert_eq(opm_predict_with(r, models[m], op, hw, &p, &err), 0, "%s: %s", models[m], err.message);
        cr_assert_eq(p.flops, 2ull * 8192 * 8192);
        cr_assert_eq(p.bound, OPM_BOUND_MEMORY, "%s", models[m]);
        /* The memory roofline: the bytes at the hbm bandwidth and utilization. */
        double t = bytes / (3.35e12 * 0.949);
        cr_assert(p.latency_s > t && p.latency_s < 2.5 * t, "%s: %g vs %g", models[m], p.latency_s, t);
        cr_assert_eq(p.fell_back, m == 1 || m == 2, "%s: the kernel models fall back", models[m]);
        char *json = opm_profile_to_json(&p, &err);
        cr_assert(strstr(json, "\"kind\": \"user\"") != NULL, "%s", json);
        opm_free(json);
    }
    opm_op *copy = opm_op_clone(op, &err);
    cr_assert_not_null(copy);
    cr_assert_str_eq(opm_op_kind_name(copy), "axpb");
    opm_op_free(copy);
    /* A malformed op of the kind: its validate speaks. */
    opm_op *bad = opm_registry_op_new(r, "axpb", NULL, OPM_PHASE_INFERENCE, &err);
    const int64_t other[2] = {8192, 4096};
    opm_op_add_tensor(bad, OPM_ROLE_INPUT, shape, 2, OPM_BF16, NULL, &err);
    opm_op_add_tensor(bad, OPM_ROLE_OUTPUT, other, 2, OPM_BF16, NULL, &err);
    opm_profile p;
    cr_assert_neq(opm_predict_with(r, "roofline", bad, hw, &p, &err), 0);
    cr_assert_str_eq(err.message, "tensors[1].shape: expected the shape of x");
    cr_assert_str_eq(err.field, "tensors[1].shape");
    opm_op_free(bad);
    /* Built-in kinds by name too; unknown names refused. */
    opm_op *g = opm_registry_op_new(r, "gemm", NULL, OPM_PHASE_INFERENCE, &err);
    cr_assert_not_null(g);
    cr_assert_str_eq(opm_op_kind_name(g), "gemm");
    opm_op_free(g);
    cr_assert_null(opm_registry_op_new(r, "axbp", NULL, OPM_PHASE_INFERENCE, &err));
    cr_assert_eq(err.code, OPM_ENOTFOUND);
    opm_op_free(op);
    opm_hardware_free(hw);
    opm_registry_free(r);
}

Test(registry, user_kind_checked)
{
    opm_error err;
    opm_registry *r = opm_registry_new(&err);
    opm_kind_def k = axpb_kind;
    k.name = "gemm";
    cr_assert_neq(opm_registry_add_kind(r, &k, &err), 0, "a built-in name");
    k.name = "Bad Name";
    cr_assert_neq(opm_registry_add_kind(r, &k, &err), 0);
    k = axpb_kind;
    k.kind = OPM_KIND_GEMM;
    cr_assert_neq(opm_registry_add_kind(r, &k, &err), 0, "not OPM_KIND_USER");
    k = axpb_kind;
    k.count = NULL;
    cr_assert_neq(opm_registry_add_kind(r, &k, &err), 0, "no count");
    cr_assert_eq(opm_registry_add_kind(r, &axpb_kind, &err), 0, "%s", err.message);
    cr_assert_neq(opm_registry_add_kind(r, &axpb_kind, &err), 0, "twice");
    /* The built-in constructor does not make user-kind ops. */
    cr_assert_null(opm_op_new("x", OPM_KIND_USER, OPM_PHASE_INFERENCE, &err));
    opm_registry_free(r);
}
