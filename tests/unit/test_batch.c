/* test_batch.c — opm_predict_many (batch.h): every row equals the same short
 * form predicted one op at a time (the in-place GEMM path and the rebuilt
 * path alike, every model), default and named columns, list keys, attrs on
 * every row, and its errors: bad keys before any row, a bad row named by its
 * index, or NaN and a count with nan_on_error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"

static const opm_batch_field all_fields[] = {
    OPM_FIELD_LATENCY_S, OPM_FIELD_FLOPS, OPM_FIELD_MATRIX_FLOPS, OPM_FIELD_VECTOR_FLOPS,
    OPM_FIELD_HBM_READ_BYTES, OPM_FIELD_HBM_WRITE_BYTES, OPM_FIELD_ARITHMETIC_INTENSITY, OPM_FIELD_ENERGY_J,
    OPM_FIELD_COMPUTE_TIME_S, OPM_FIELD_OVERHEAD_S, OPM_FIELD_BOUND, OPM_FIELD_ENGINE, OPM_FIELD_INPUT_BYTES,
    OPM_FIELD_WEIGHT_BYTES, OPM_FIELD_OUTPUT_BYTES, OPM_FIELD_WORKSPACE_BYTES,
};
#define NF (sizeof all_fields / sizeof all_fields[0])

/* The fields of the op in `yaml` predicted alone. */
static void one(const char *model, const opm_hardware *hw, const char *yaml, double *o)
{
    opm_op *op = op_yaml(yaml);
    opm_profile p;
    opm_error err;
    cr_assert_eq(opm_predict(model, op, hw, &p, &err), 0, "%s", err.message);
    double hr = 0, hw_ = 0;
    for (size_t i = 0; i < p.level_count; i++)
        if (!strcmp(p.levels[i].name, "hbm")) hr = (double)p.levels[i].read_bytes, hw_ = (double)p.levels[i].write_bytes;
    double v[NF] = {p.latency_s, (double)p.flops, (double)p.matrix_flops, (double)p.vector_flops, hr, hw_,
                    p.arithmetic_intensity, p.energy_j, p.compute_time_s, p.overhead_s, (double)p.bound,
                    (double)p.engine, (double)p.input_bytes, (double)p.weight_bytes, (double)p.output_bytes,
                    (double)p.workspace_bytes};
    memcpy(o, v, sizeof v);
    opm_op_free(op);
}

Test(batch, gemm_rows_equal_single_predictions_every_model)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("a100_80gb_sxm", &err);
    cr_assert(hw);
    enum { N = 40 };
    int64_t rows[N * 4];
    for (int i = 0; i < N; i++) {
        rows[4 * i] = 1 + i % 3;
        rows[4 * i + 1] = 1 + (i * 37) % 3000;
        rows[4 * i + 2] = 16 + (i * 101) % 5000;
        rows[4 * i + 3] = 1 + (i * 7919) % 8192;
    }
    for (size_t m = 0; m < opm_model_count(); m++) {
        const opm_model *model = opm_model_at(m);
        for (int batched = 0; batched < 2; batched++) {
            opm_batch spec = {batched ? OPM_KIND_BATCHED_GEMM : OPM_KIND_GEMM, OPM_PHASE_INFERENCE, OPM_BF16,
                              NULL, NULL, 0};
            double out[N * NF];
            /* gemm reads columns m n k: the last three of each 4-wide row. */
            int64_t g[N * 3];
            for (int i = 0; i < N; i++) memcpy(g + 3 * i, rows + 4 * i + 1, 3 * sizeof *g);
            cr_assert_eq(opm_predict_many(model, hw, &spec, batched ? rows : g, N, batched ? 4 : 3, all_fields, NF,
                                          out, NULL, &err), 0, "%s", err.message);
            for (int i = 0; i < N; i++) {
                char yaml[256];
                const int64_t *r = rows + 4 * i;
                if (batched)
                    snprintf(yaml, sizeof yaml, "kind: batched_gemm\nbatch: %lld\nm: %lld\nn: %lld\nk: %lld\ndtype: bf16\n",
                             (long long)r[0], (long long)r[1], (long long)r[2], (long long)r[3]);
                else
                    snprintf(yaml, sizeof yaml, "kind: gemm\nm: %lld\nn: %lld\nk: %lld\ndtype: bf16\n",
                             (long long)r[1], (long long)r[2], (long long)r[3]);
                double want[NF];
                one(model->name, hw, yaml, want);
                for (size_t j = 0; j < NF; j++)
                    cr_assert_eq(out[i * NF + j], want[j], "%s row %d field %s: %g vs %g", model->name, i,
                                 opm_batch_field_name(all_fields[j]), out[i * NF + j], want[j]);
            }
        }
    }
    opm_hardware_free(hw);
}

Test(batch, named_keys_lists_and_attrs)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    /* Attention with named columns and causal on every row. */
    opm_op *attrs = opm_op_new(NULL, OPM_KIND_ATTENTION_PREFILL, OPM_PHASE_PREFILL, &err);
    cr_assert_eq(opm_op_set_bool(attrs, "causal", 1, &err), 0);
    static const char *const keys[] = {"seq_q", "seq_kv", "heads", "head_dim", "batch", NULL};
    int64_t rows[] = {512, 512, 16, 64, 2, 1024, 4096, 32, 128, 1};
    opm_batch spec = {OPM_KIND_ATTENTION_PREFILL, OPM_PHASE_PREFILL, OPM_BF16, keys, attrs, 0};
    double out[2 * NF], want[NF];
    cr_assert_eq(opm_predict_many(NULL, hw, &spec, rows, 2, 5, all_fields, NF, out, NULL, &err), 0, "%s", err.message);
    one("roofline", hw, "kind: attention_prefill\nphase: prefill\nbatch: 1\nseq_q: 1024\nseq_kv: 4096\nheads: 32\n"
        "head_dim: 128\ncausal: true\ndtype: bf16\n", want);
    for (size_t j = 0; j < NF; j++) cr_assert_eq(out[NF + j], want[j]);
    opm_op_free(attrs);
    /* Softmax: the default key is the whole shape. */
    int64_t srows[] = {8, 1024, 4096};
    opm_batch sspec = {OPM_KIND_SOFTMAX, OPM_PHASE_INFERENCE, OPM_FP16, NULL, NULL, 0};
    cr_assert_eq(opm_predict_many(NULL, hw, &sspec, srows, 1, 3, all_fields, NF, out, NULL, &err), 0, "%s",
                 err.message);
    one("roofline", hw, "kind: softmax\nshape: [8, 1024, 4096]\ndtype: fp16\n", want);
    for (size_t j = 0; j < NF; j++) cr_assert_eq(out[j], want[j]);
    /* Conv by default columns, and shape given entry by entry. */
    int64_t crow[] = {8, 64, 56, 56, 128, 64, 3, 3};
    opm_batch cspec = {OPM_KIND_CONV, OPM_PHASE_INFERENCE, OPM_BF16, NULL, NULL, 0};
    cr_assert_eq(opm_predict_many(NULL, hw, &cspec, crow, 1, 8, all_fields, NF, out, NULL, &err), 0, "%s", err.message);
    one("roofline", hw, "kind: conv\ninput: [8, 64, 56, 56]\nweight: [128, 64, 3, 3]\ndtype: bf16\n", want);
    for (size_t j = 0; j < NF; j++) cr_assert_eq(out[j], want[j]);
    static const char *const rk[] = {"shape[1]", "shape[0]", NULL};
    int64_t rrow[] = {4096, 16};
    opm_batch rspec = {OPM_KIND_RMSNORM, OPM_PHASE_INFERENCE, OPM_BF16, rk, NULL, 0};
    cr_assert_eq(opm_predict_many(NULL, hw, &rspec, rrow, 1, 2, all_fields, NF, out, NULL, &err), 0, "%s", err.message);
    one("roofline", hw, "kind: rmsnorm\nshape: [16, 4096]\ndtype: bf16\n", want);
    for (size_t j = 0; j < NF; j++) cr_assert_eq(out[j], want[j]);
    opm_hardware_free(hw);
}

Test(batch, errors)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    const opm_batch_field f = OPM_FIELD_LATENCY_S;
    double out[3];
    int64_t rows[] = {16, 16, 16, 0, 16, 16, 32, 32, 32};
    opm_batch spec = {OPM_KIND_GEMM, OPM_PHASE_INFERENCE, OPM_BF16, NULL, NULL, 0};
    cr_assert_neq(opm_predict_many(NULL, hw, &spec, rows, 3, 3, &f, 1, out, NULL, &err), 0);
    cr_assert(strstr(err.message, "row 1: m: expected"), "%s", err.message);
    size_t failed = 0;
    spec.nan_on_error = 1;
    cr_assert_eq(opm_predict_many(NULL, hw, &spec, rows, 3, 3, &f, 1, out, &failed, &err), 0);
    cr_assert_eq(failed, 1);
    cr_assert(isnan(out[1]) && out[0] > 0 && out[2] > 0);
    static const char *const bad[] = {"m", "n", "kk", NULL};
    opm_batch bspec = {OPM_KIND_GEMM, OPM_PHASE_INFERENCE, OPM_BF16, bad, NULL, 0};
    cr_assert_neq(opm_predict_many(NULL, hw, &bspec, rows, 3, 3, &f, 1, out, NULL, &err), 0);
    cr_assert(strstr(err.message, "keys[2]: 'kk': not a short-form key or attribute of kind gemm"), "%s", err.message);
    static const char *const gap[] = {"shape[0]", "shape[2]", NULL};
    opm_batch gspec = {OPM_KIND_SOFTMAX, OPM_PHASE_INFERENCE, OPM_BF16, gap, NULL, 0};
    cr_assert_neq(opm_predict_many(NULL, hw, &gspec, rows, 1, 2, &f, 1, out, NULL, &err), 0);
    cr_assert(strstr(err.message, "list shape has no column for entry 1"), "%s", err.message);
    cr_assert_neq(opm_predict_many(NULL, hw, &spec, rows, 2, 4, &f, 1, out, NULL, &err), 0);
    cr_assert(strstr(err.message, "4 columns, 3 keys by default"), "%s", err.message);
    opm_batch_field parsed;
    cr_assert_eq(opm_batch_field_parse("hbm_read_bytes", &parsed), 0);
    cr_assert_eq(parsed, OPM_FIELD_HBM_READ_BYTES);
    cr_assert_neq(opm_batch_field_parse("nope", &parsed), 0);
    opm_hardware_free(hw);
}
