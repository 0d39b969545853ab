/* test_workload.c — whole workloads (include/opmodel/workload.h) and
 * validate-artifact (src/workload/artifact.c): eager vs graph timing,
 * energy = op energies + idle power in the gaps, the kernel-list reader's
 * mapping and its FILE:ENTRY:FIELD errors, JSONL counts, the artifact's
 * matching rule, unmatched and out-of-memory runs, and calibration on at
 * most 4 runs that are then not scored; the kernels a named model's
 * architecture implies (batch norms, pools, residual adds, GPT-2's mask). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "testutil.h"
#include "models/energy.h"
#include "workload/artifact.h"

static opm_workload *from_text(const char *text)
{
    opm_error err;
    opm_workload *w = opm_workload_new(&err);
    cr_assert(w);
    cr_assert_eq(opm_workload_add_text(w, text, strlen(text), "t.json", &err), 0, "%s", err.message);
    return w;
}

static const char two_kernels[] =
    "[[{\"batch\":1,\"dimM\":4096,\"dimN\":4096,\"dimK\":4096,\"precM\":\"bf16\",\"precA\":\"bf16\","
    "\"useTensorCore\":true},[\"gemm\",\"tc\",\"bf16_bf16\"]],"
    " [{\"dim\":1024,\"op\":\"pointwise_add\",\"prec\":\"bf16\"},[\"elementwise\"]],"
    " [{\"dim\":1024,\"op\":\"pointwise_add\",\"prec\":\"bf16\"},[\"elementwise\"]]]";

Test(workload, eager_is_graph_plus_host_gaps_and_energy_adds_up)
{
    opm_workload *w = from_text(two_kernels);
    cr_assert_eq(opm_workload_kernel_count(w), 3);
    cr_assert_eq(opm_workload_op_count(w), 2, "a repeated kernel is one op");
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_workload_options o;
    opm_workload_options_init(&o);
    opm_error err;
    o.mode = OPM_WORKLOAD_GRAPH;
    opm_workload_result *g = opm_workload_evaluate(w, hw, &o, &err);
    cr_assert(g, "%s", err.message);
    o.mode = OPM_WORKLOAD_EAGER;
    o.launch_interval_s = 50e-6;
    opm_workload_result *e = opm_workload_evaluate(w, hw, &o, &err);
    cr_assert(e, "%s", err.message);
    const opm_workload_totals *tg = opm_workload_result_totals(g), *te = opm_workload_result_totals(e);
    /* Per-op predictions, by hand. */
    opm_profile pg = predict_ok("extended_roofline", opm_workload_op(w, 0), hw);
    opm_profile pa = predict_ok("extended_roofline", opm_workload_op(w, 1), hw);
    cr_assert(pa.latency_s < 50e-6 && pg.latency_s > 50e-6, "test needs a long gemm and short adds");
    cr_assert_float_eq(tg->latency_s, pg.latency_s + 2 * pa.latency_s, 1e-12);
    cr_assert_float_eq(tg->energy_j, pg.energy_j + 2 * pa.energy_j, 1e-12);
    cr_assert_float_eq(tg->idle_s, 0, 1e-15);
    cr_assert_float_eq(te->latency_s, pg.latency_s + 2 * 50e-6, 1e-12);
    double gap = 2 * (50e-6 - pa.latency_s);
    cr_assert_float_eq(te->idle_s, gap, 1e-12);
    /* The gaps draw idle power; the active base power the per-op TDP limit
     * took off the gemm comes back as far as the run's average stays under
     * tdp_w (the board's limiter works over the whole run). */
    double base = pg.energy_j + 2 * pa.energy_j + opm_hardware_static_power_w(hw) * gap;
    double act = opm_energy_active_power_w(hw), tdp = opm_hardware_tdp_w(hw);
    double cut = (act - opm_profile_diag(&pg, "active_power_w")->number) * pg.latency_s +
                 2 * (act - opm_profile_diag(&pa, "active_power_w")->number) * pa.latency_s;
    cr_assert_gt(cut, 0, "the gemm's active power is limited per op at the top clock");
    double want = base + cut < tdp * te->latency_s ? base + cut : tdp * te->latency_s;
    cr_assert_gt(want, base);
    cr_assert_float_eq(te->energy_j, want, 1e-12);
    cr_assert_leq(te->average_power_w, tdp * (1 + 1e-12));
    cr_assert_float_eq(te->average_power_w, te->energy_j / te->latency_s, 1e-9);
    cr_assert_float_eq(te->flops, (double)pg.flops + 2 * (double)pa.flops, 1);
    /* Breakdowns: largest first, and they sum to the totals. */
    cr_assert_eq(opm_workload_result_kind_count(e), 2);
    cr_assert_str_eq(opm_workload_result_kind(e, 0)->name, "gemm");
    cr_assert_eq(opm_workload_result_kind(e, 1)->count, 2);
    double s = 0;
    for (size_t i = 0; i < opm_workload_result_op_count(e); i++) s += opm_workload_result_op(e, i)->energy_j;
    cr_assert_float_eq(s, te->energy_j, 1e-12);
    opm_workload_result_free(g);
    opm_workload_result_free(e);
    opm_workload_free(w);
    opm_hardware_free(hw);
}

/* The TDP limit on the active base power is the run's, not each op's: a
 * gemm held at tdp_w with idle gaps around it gets back the active power
 * its own limit took off, up to the run's average reaching tdp_w; the same
 * gemms back to back (graph) have no room; without tdp_w nothing moves. */
Test(workload, power_limit_over_the_run)
{
    static const char gemm[] = "{\"kind\": \"gemm\", \"m\": 8192, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\", \"count\": 4}\n";
    opm_workload *w = from_text(gemm);
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_profile p = predict_ok("extended_roofline", opm_workload_op(w, 0), hw);
    double tdp = opm_hardware_tdp_w(hw);
    cr_assert_float_eq(p.average_power_w, tdp, 1e-9 * tdp, "the gemm alone is held at tdp_w");
    opm_workload_options o;
    opm_workload_options_init(&o);
    opm_error err;
    o.mode = OPM_WORKLOAD_GRAPH;
    opm_workload_result *g = opm_workload_evaluate(w, hw, &o, &err);
    cr_assert(g, "%s", err.message);
    cr_assert_float_eq(opm_workload_result_totals(g)->energy_j, 4 * p.energy_j, 1e-12 * p.energy_j);
    o.mode = OPM_WORKLOAD_EAGER;
    o.launch_interval_s = 3 * p.latency_s;
    opm_workload_result *e = opm_workload_evaluate(w, hw, &o, &err);
    cr_assert(e, "%s", err.message);
    const opm_workload_totals *t = opm_workload_result_totals(e);
    double idle = opm_hardware_idle_power_w(hw, 0);
    double per_op = 4 * (p.energy_j + idle * 2 * p.latency_s);
    cr_assert_gt(t->energy_j, per_op * (1 + 1e-6));
    cr_assert_leq(t->average_power_w, tdp * (1 + 1e-12));
    cr_assert_float_eq(t->op_energy_j + t->idle_energy_j, t->energy_j, 1e-12 * t->energy_j);
    opm_workload_result_free(g);
    opm_workload_result_free(e);
    opm_hardware_free(hw);
    /* No tdp_w: no limit, per op or over the run. */
    static const char no_tdp[] = "name: nt\nstatic_power_w: 50\n"
                                 "compute: {clock_hz: 1.41e9, num_sms: 108, tensor_flops_per_s: {bf16: 312e12},"
                                 " vector_flops_per_s: {fp32: 19.5e12}, tensor_energy_j_per_flop: {bf16: 1e-12},"
                                 " vector_energy_j_per_flop: {fp32: 1e-11}}\n"
                                 "memory: {levels: [{name: hbm, size_bytes: 4e10, bandwidth_bytes_per_s: 1.5e12,"
                                 " energy_j_per_byte: 3e-11}]}\n";
    opm_hardware *nt = opm_hardware_load_string(no_tdp, strlen(no_tdp), "<nt>", &err);
    cr_assert(nt, "%s", err.message);
    opm_profile q = predict_ok("extended_roofline", opm_workload_op(w, 0), nt);
    o.launch_interval_s = 3 * q.latency_s;
    e = opm_workload_evaluate(w, nt, &o, &err);
    cr_assert(e, "%s", err.message);
    cr_assert_float_eq(opm_workload_result_totals(e)->energy_j, 4 * (q.energy_j + 50 * 2 * q.latency_s),
                       1e-12 * q.energy_j);
    opm_workload_result_free(e);
    opm_hardware_free(nt);
    opm_workload_free(w);
}

Test(workload, kernel_list_maps_each_kind)
{
    const char *text =
        "[[{\"batch\":12,\"dimM\":128,\"dimN\":128,\"dimK\":64,\"precM\":\"bf16\",\"precA\":\"bf16\",\"useTensorCore\":true},"
        "[\"gemm\",\"tc\",\"bf16_bf16\"]],"
        "[{\"batch\":1,\"dimM\":64,\"dimN\":64,\"dimK\":64,\"precM\":\"fp32\",\"precA\":\"fp32\",\"useTensorCore\":false},"
        "[\"gemm\",\"cuda\",\"fp32_fp32\"]],"
        "[{\"batch\":1,\"dimM\":200704,\"dimN\":64,\"dimK\":147,\"precM\":\"bf16\",\"precA\":\"bf16\",\"useTensorCore\":true,"
        "\"b\":16,\"m\":64,\"c\":3,\"hw\":224,\"rs\":7,\"stride\":2,\"padding\":3},[\"conv2d\",\"tc\",\"bf16_bf16\"]],"
        "[{\"dim\":100,\"op\":\"typecast_to_fp32\",\"prec\":\"bf16\"},[\"elementwise\"]],"
        "[{\"batch\":128,\"dim\":768,\"prec\":\"bf16\"},[\"layernorm\",\"bf16\"]],"
        "[{\"batch\":128,\"dim\":128,\"prec\":\"fp32\"},[\"softmax\",\"fp32\"]],"
        "[{\"dim\":4096,\"op\":\"unspecified_tensor\",\"prec\":\"bf16\"},[\"elementwise\"]]]";
    opm_workload *w = from_text(text);
    cr_assert_eq(opm_workload_op_count(w), 7);
    opm_kind want[] = {OPM_KIND_BATCHED_GEMM, OPM_KIND_GEMM, OPM_KIND_CONV, OPM_KIND_ELEMENTWISE, OPM_KIND_LAYERNORM,
                       OPM_KIND_SOFTMAX};
    for (size_t i = 0; i < 6; i++) cr_assert_eq(opm_op_kind(opm_workload_op(w, i)), want[i], "entry %zu", i);
    /* The conv's FLOPs are the implicit GEMM's: 2·M·N·K. */
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(opm_workload_op(w, 2), &c, &err), 0);
    cr_assert_eq(c.matrix_flops + c.vector_flops, 2ull * 200704 * 64 * 147);
    cr_assert_eq(opm_op_find_tensor(opm_workload_op(w, 1), OPM_ROLE_INPUT, 0)->dtype, OPM_FP32);
    cr_assert_eq(opm_op_find_tensor(opm_workload_op(w, 3), OPM_ROLE_OUTPUT, 0)->dtype, OPM_FP32);
    /* GPT-2's masked scores: the scores read in full, the mask broadcast. */
    cr_assert_eq(opm_op_count(opm_workload_op(w, 6), &c, &err), 0);
    cr_assert_eq(c.read_bytes, 4096 * 2 + 2);
    cr_assert_eq(c.write_bytes, 4096 * 2);
    opm_workload_free(w);
}

#define KL_EW(op, d) "[{\"dim\":" #d ",\"op\":\"" op "\",\"prec\":\"bf16\"},[\"elementwise\"]],"

static opm_workload *named_list(const char *text, const char *source, int implied)
{
    opm_error err;
    opm_workload *w = opm_workload_new(&err);
    cr_assert(w);
    opm_workload_set_implied_kernels(w, implied);
    cr_assert_eq(opm_workload_add_text(w, text, strlen(text), source, &err), 0, "%s", err.message);
    return w;
}

static double graph_time(const opm_workload *w)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("a100_40gb_pcie", &err);
    cr_assert(hw);
    opm_workload_options o;
    opm_workload_options_init(&o);
    o.mode = OPM_WORKLOAD_GRAPH;
    opm_workload_result *r = opm_workload_evaluate(w, hw, &o, &err);
    cr_assert(r, "%s", err.message);
    double t = opm_workload_result_totals(r)->latency_s;
    opm_workload_result_free(r);
    opm_hardware_free(hw);
    return t;
}

/* A two-image Bottleneck ResNet in miniature, as the artifact lists one:
 * convolutions, ReLUs and the fc, without batch norms, pools or the add. */
static const char mini_resnet[] =
             "[[{\"batch\":1,\"dimM\":128,\"dimN\":8,\"dimK\":27,\"precM\":\"bf16\",\"b\":2,\"m\":8,\"c\":3,\"hw\":16,\"rs\":3,"
             "\"stride\":2,\"padding\":1},[\"conv2d\"]]," KL_EW("relu", 1024)
             "[{\"batch\":1,\"dimM\":32,\"dimN\":4,\"dimK\":8,\"precM\":\"bf16\",\"b\":2,\"m\":4,\"c\":8,\"hw\":4,\"rs\":1,"
             "\"stride\":1,\"padding\":0},[\"conv2d\"]]," KL_EW("relu", 128)
             "[{\"batch\":1,\"dimM\":32,\"dimN\":4,\"dimK\":36,\"precM\":\"bf16\",\"b\":2,\"m\":4,\"c\":4,\"hw\":4,\"rs\":3,"
             "\"stride\":1,\"padding\":1},[\"conv2d\"]]," KL_EW("relu", 128)
             "[{\"batch\":1,\"dimM\":32,\"dimN\":16,\"dimK\":4,\"precM\":\"bf16\",\"b\":2,\"m\":16,\"c\":4,\"hw\":4,\"rs\":1,"
             "\"stride\":1,\"padding\":0},[\"conv2d\"]],"
             "[{\"batch\":1,\"dimM\":32,\"dimN\":16,\"dimK\":8,\"precM\":\"bf16\",\"b\":2,\"m\":16,\"c\":8,\"hw\":4,\"rs\":1,"
             "\"stride\":1,\"padding\":0},[\"conv2d\"]]," KL_EW("relu", 512)
             "[{\"batch\":1,\"dimM\":2,\"dimN\":10,\"dimK\":16,\"precM\":\"bf16\",\"precA\":\"bf16\",\"useTensorCore\":true},"
             "[\"gemm\",\"tc\",\"bf16_bf16\"]]]";

Test(workload, kernel_list_implied_kernels_of_a_resnet)
{
    const char *text = mini_resnet;
    opm_workload *listed = named_list(text, "data/resnet50__pbf16_b2.json", 0);
    opm_workload *w = named_list(text, "data/resnet50__pbf16_b2.json", 1);
    opm_workload *anon = named_list(text, "t.json", 1);
    cr_assert_eq(opm_workload_kernel_count(listed), 10);
    cr_assert_eq(opm_workload_implied(listed), 0);
    cr_assert_eq(opm_workload_implied(anon), 0, "a list whose name names no model is read as it is");
    /* 5 batch norms, the stem's max pool, one residual add, the average pool. */
    cr_assert_eq(opm_workload_implied(w), 8);
    cr_assert_eq(opm_workload_kernel_count(w), 18);
    /* In order: stem conv, its batch norm, ReLU, max pool. */
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 0)), OPM_KIND_CONV);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 1)), OPM_KIND_BATCHNORM);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 2)), OPM_KIND_ELEMENTWISE);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 3)), OPM_KIND_REDUCTION);
    opm_counts c;
    opm_error err;
    /* The stem's output [2, 8, 8, 8] bf16: the batch norm reads it all. */
    const opm_tensor *x = opm_op_find_tensor(opm_workload_op(w, 1), OPM_ROLE_INPUT, 0);
    cr_assert_eq(x->rank, 4);
    cr_assert_eq(x->shape[0] * x->shape[1] * x->shape[2] * x->shape[3], 1024);
    /* The max pool reads the ReLU's output once and writes a quarter. */
    cr_assert_eq(opm_op_count(opm_workload_op(w, 3), &c, &err), 0, "%s", err.message);
    cr_assert_geq(c.read_bytes, 1024 * 2);
    const opm_tensor *y = opm_op_find_tensor(opm_workload_op(w, 3), OPM_ROLE_OUTPUT, 0);
    cr_assert_eq(y->shape[0], 2 * 8 * 4 * 4);
    /* The residual add: two full inputs of the block's output, before its last ReLU. */
    int found = 0;
    for (size_t i = 0; i < opm_workload_op_count(w); i++) {
        const opm_op *op = opm_workload_op(w, i);
        if (opm_op_kind(op) != OPM_KIND_ELEMENTWISE) continue;
        const opm_tensor *b = opm_op_find_tensor(op, OPM_ROLE_INPUT, 1);
        if (b && b->shape[0] == 512) found++;
    }
    cr_assert_eq(found, 1);
    /* The added kernels take time: the workload is slower than its list. */
    cr_assert_gt(graph_time(w), graph_time(listed));
    opm_workload_free(listed);
    opm_workload_free(w);
    opm_workload_free(anon);
}

/* The model is the base name's first '_' field, whole: a name that only
 * contains a known model, or lacks the '_' after it, reads as listed; the
 * directory part does not count. */
Test(workload, kernel_list_model_from_the_name_only)
{
    static const char *const as_listed[] = {"myresnet50__pbf16_b2.json", "resnet50.json", "resnet50x_pbf16.json",
                                            "runs/resnet50_b2/list.json", "ResNet50__pbf16_b2.json",
                                            "wide_resnet50_2_pbf16.json", "resnet_pbf16.json"};
    for (size_t i = 0; i < sizeof as_listed / sizeof as_listed[0]; i++) {
        opm_workload *w = named_list(mini_resnet, as_listed[i], 1);
        cr_assert_eq(opm_workload_implied(w), 0, "%s", as_listed[i]);
        cr_assert_eq(opm_workload_kernel_count(w), 10, "%s", as_listed[i]);
        opm_workload_free(w);
    }
    static const char *const named[] = {"resnet50_", "lists/resnet50__pbf16_b2.json", "resnet101_x.json"};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        opm_workload *w = named_list(mini_resnet, named[i], 1);
        cr_assert_eq(opm_workload_implied(w), 8, "%s", named[i]);
        opm_workload_free(w);
    }
}

/* The global average pool precedes the fc, the network's one GEMM: a list
 * named after a ResNet that holds a second GEMM after it gets one pool,
 * not one per GEMM. */
Test(workload, kernel_list_resnet_average_pool_once)
{
    char text[sizeof mini_resnet + 256];
    size_t n = strlen(mini_resnet);
    memcpy(text, mini_resnet, n - 1); /* without the list's closing ']' */
    snprintf(text + n - 1, sizeof text - (n - 1),
             ",[{\"batch\":1,\"dimM\":4,\"dimN\":2,\"dimK\":10,\"precM\":\"bf16\",\"precA\":\"bf16\","
             "\"useTensorCore\":true},[\"gemm\",\"tc\",\"bf16_bf16\"]]]");
    opm_workload *w = named_list(text, "resnet50__pbf16_b2.json", 1);
    opm_workload *one = named_list(mini_resnet, "resnet50__pbf16_b2.json", 1);
    size_t pools = 0;
    for (size_t i = 0; i < opm_workload_op_count(w); i++)
        pools += opm_op_kind(opm_workload_op(w, i)) == OPM_KIND_REDUCTION;
    /* The stem's max pool and one average pool. */
    cr_assert_eq(pools, 2);
    cr_assert_eq(opm_workload_implied(w), opm_workload_implied(one));
    cr_assert_eq(opm_workload_kernel_count(w), opm_workload_kernel_count(one) + 1);
    opm_workload_free(one);
    opm_workload_free(w);
}

Test(workload, kernel_list_implied_kernels_of_gpt2_and_mobilevit)
{
    const char *gpt2 =
        "[[{\"batch\":12,\"dimM\":128,\"dimN\":128,\"dimK\":64,\"precM\":\"bf16\",\"precA\":\"bf16\",\"useTensorCore\":true},"
        "[\"gemm\",\"tc\",\"bf16_bf16\"]]," KL_EW("unspecified_tensor", 196608)
        "[{\"batch\":1536,\"dim\":128,\"prec\":\"bf16\"},[\"softmax\",\"bf16\"]]]";
    opm_workload *w = named_list(gpt2, "gpt2model_gpt2_pbf16_b1_s128_modeprefill.json", 1);
    /* The scale's division is listed; the causal-mask select follows it. */
    cr_assert_eq(opm_workload_implied(w), 1);
    cr_assert_eq(opm_workload_op_count(w), 4);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 2)), OPM_KIND_ELEMENTWISE);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 3)), OPM_KIND_SOFTMAX);
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(opm_workload_op(w, 2), &c, &err), 0);
    cr_assert_eq(c.write_bytes, 196608 * 2);
    opm_workload_free(w);

    /* MobileViT: a normalised conv, then MobileViTLayer's conv_1x1 (no norm:
     * the transformer's layer norm follows), then the final mean. */
    const char *mvit =
        "[[{\"batch\":1,\"dimM\":128,\"dimN\":16,\"dimK\":27,\"precM\":\"bf16\",\"b\":2,\"m\":16,\"c\":3,\"hw\":16,\"rs\":3,"
        "\"stride\":2,\"padding\":1},[\"conv2d\"]]," KL_EW("silu", 2048)
        "[{\"batch\":1,\"dimM\":128,\"dimN\":32,\"dimK\":16,\"precM\":\"bf16\",\"b\":2,\"m\":32,\"c\":16,\"hw\":8,\"rs\":1,"
        "\"stride\":1,\"padding\":0},[\"conv2d\"]],"
        "[{\"batch\":128,\"dim\":32,\"prec\":\"bf16\"},[\"layernorm\",\"bf16\"]]]";
    w = named_list(mvit, "mobilevitmodel_small_pbf16_b2_freq900.json", 1);
    cr_assert_eq(opm_workload_implied(w), 2, "one batch norm and the final mean");
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 1)), OPM_KIND_BATCHNORM);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 3)), OPM_KIND_CONV);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 4)), OPM_KIND_LAYERNORM);
    cr_assert_eq(opm_op_kind(opm_workload_op(w, 5)), OPM_KIND_REDUCTION);
    opm_workload_free(w);
}

static void kl_rejected(const char *text, const char *needle)
{
    opm_error err;
    opm_workload *w = opm_workload_new(&err);
    cr_assert_neq(opm_workload_add_text(w, text, strlen(text), "k.json", &err), 0, "accepted: %s", text);
    cr_assert(strstr(err.message, needle), "'%s' not in: %s", needle, err.message);
    cr_assert(!strchr(err.message, '\n'));
    cr_assert_eq(opm_workload_kernel_count(w), 0, "nothing kept after an error");
    opm_workload_free(w);
}

Test(workload, kernel_list_errors_name_file_entry_field)
{
    kl_rejected("[[{\"dim\":4,\"op\":\"relu\",\"prec\":\"bf16\"},[\"elementwise\"]],"
                "[{\"dim\":0,\"op\":\"relu\",\"prec\":\"bf16\"},[\"elementwise\"]]]",
                "k.json:1:dim: expected an integer in [1,");
    kl_rejected("[[{\"dim\":4,\"op\":\"frobnicate\",\"prec\":\"bf16\"},[\"elementwise\"]]]", "k.json:0:op: expected one of");
    kl_rejected("[[{\"dim\":4,\"op\":\"relu\",\"prec\":\"bf17\"},[\"elementwise\"]]]", "k.json:0:prec: expected a dtype");
    kl_rejected("[[{\"batch\":1,\"dimM\":4,\"dimN\":4,\"precM\":\"bf16\"},[\"gemm\",\"tc\",\"bf16_bf16\"]]]",
                "k.json:0:dimK: missing");
    kl_rejected("[[{\"dim\":4},[\"pooling\"]]]", "k.json:0:op: expected gemm, conv2d");
    kl_rejected("[[{\"dim\":4}]]", "k.json:0:entry: expected [query object");
    kl_rejected("[[{\"batch\":1,\"dimM\":4,\"dimN\":4,\"dimK\":5,\"precM\":\"bf16\",\"b\":1,\"m\":4,\"c\":3,\"hw\":8,"
                "\"rs\":3,\"stride\":1,\"padding\":1},[\"conv2d\"]]]",
                "k.json:0:dimK:");
}

Test(workload, jsonl_counts_and_rollback)
{
    const char *text = "{\"count\": 3, \"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\"}\n"
                       "\n"
                       "{\"name\": \"act\", \"kind\": \"elementwise\", \"shape\": [64], \"dtype\": \"bf16\", \"op\": \"relu\"}\n";
    opm_workload *w = from_text(text);
    cr_assert_eq(opm_workload_kernel_count(w), 4);
    cr_assert_eq(opm_workload_op_count(w), 2);
    opm_error err;
    const char *bad = "{\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\"}\n"
                      "{\"count\": 0, \"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\"}\n";
    cr_assert_neq(opm_workload_add_text(w, bad, strlen(bad), "b.jsonl", &err), 0);
    cr_assert(strstr(err.message, "b.jsonl:2: count: expected an integer >= 1"), "%s", err.message);
    cr_assert_eq(opm_workload_kernel_count(w), 4, "the failed file left nothing");
    cr_assert_eq(opm_workload_op_count(w), 2);
    /* A failing file whose first line repeats the last op merges into its
     * launch before failing: the rollback restores that launch's count. */
    const char *merge = "{\"name\": \"act\", \"kind\": \"elementwise\", \"shape\": [64], \"dtype\": \"bf16\", \"op\": \"relu\"}\n"
                        "{\"kind\": \"nope\"}\n";
    cr_assert_neq(opm_workload_add_text(w, merge, strlen(merge), "c.jsonl", &err), 0);
    cr_assert_eq(opm_workload_kernel_count(w), 4);
    opm_hardware *hw = builtin_hw("a100_40gb_pcie");
    opm_workload_options o;
    opm_workload_options_init(&o);
    opm_workload_result *r = opm_workload_evaluate(w, hw, &o, &err);
    cr_assert_not_null(r, "%s", err.message);
    cr_assert_eq(opm_workload_result_totals(r)->kernels, 4, "the sequence holds the kernels the count says");
    opm_workload_result_free(r);
    opm_hardware_free(hw);
    opm_workload_free(w);
}

/* A tiny artifact: one hardware, 7 matched runs (so 3 calibrate), one
 * without a kernel list, one that cannot have run its kernels. */
static void write(const char *dir, const char *rel, const char *text)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    cr_assert(f, "%s", p);
    fputs(text, f);
    fclose(f);
}

Test(artifact, matching_calibration_and_scoring)
{
    char dir[256], p[512];
    tmp_dir(dir, sizeof dir, "artifact");
    const char *sub[] = {"measurements", "workloads", "workloads/all"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, sub[i]);
        cr_assert_eq(mkdir(p, 0755), 0);
    }
    char kl[1024];
    for (int b = 1; b <= 7; b++) {
        snprintf(kl, sizeof kl,
                 "[[{\"batch\":1,\"dimM\":%d,\"dimN\":1024,\"dimK\":1024,\"precM\":\"bf16\",\"precA\":\"bf16\","
                 "\"useTensorCore\":true},[\"gemm\",\"tc\",\"bf16_bf16\"]],"
                 "[{\"dim\":%d,\"op\":\"relu\",\"prec\":\"bf16\"},[\"elementwise\"]]]",
                 128 * b, 128 * b * 1024);
        snprintf(p, sizeof p, "workloads/all/gpt2model_gpt2_pbf16_b%d_s128_modeprefill.json", b);
        write(dir, p, kl);
    }
    write(dir, "workloads/all/resnet101__pbf16_b8_freq900.json",
          "[[{\"dim\":1000,\"op\":\"relu\",\"prec\":\"bf16\"},[\"elementwise\"]]]");
    char csv[4096] = "workload,energy,time,avg_freq,temp\n";
    for (int b = 1; b <= 7; b++) {
        char row[256];
        snprintf(row, sizeof row, "gpt2model_gpt2_pbf16_b%d_s128_modeprefill_attneager_freq900_iter10.csv,0.01,0.08,900,60\n",
                 b);
        strcat(csv, row);
    }
    strcat(csv, "gpt2model_gpt2_pfp32_b1_s128_modeprefill_attneager_freq900_iter10.csv,0.01,0.1,900,60\n");
    strcat(csv, "resnet101__pbf16_b8_freq900_iter10.csv,0.01,0.04,900,60\n");
    strcat(csv, "resnet101__pbf16_b8_freq1000_iter10.csv,0.01,0.1,1000,60\n"); /* list names 900: unmatched */
    write(dir, "measurements/a10_e2e.csv", csv);
    art_result r;
    opm_error err;
    cr_assert_eq(art_run_all(&r, dir, NULL, 0, &err), 0, "%s", err.message);
    cr_assert_eq(r.n_runs, 10);
    cr_assert_eq(r.runs_matched, 8);
    size_t unmatched = 0, cal = 0, scored = 0;
    for (size_t i = 0; i < r.n_runs; i++) {
        unmatched += r.runs[i].status == ART_UNMATCHED;
        cal += r.runs[i].status == ART_CALIBRATION;
        scored += r.runs[i].status == ART_SCORED;
    }
    cr_assert_eq(unmatched, 2);
    cr_assert_eq(cal, 4, "min(4, half of 8)");
    cr_assert_eq(r.calibration_runs, 4);
    cr_assert_eq(scored, 4);
    cr_assert_eq(r.overall.time.n, 4, "calibration runs are not scored");
    /* The calibration runs are the most host-bound: the smallest kernels. */
    for (size_t i = 0; i < r.n_runs; i++)
        if (r.runs[i].status == ART_CALIBRATION) cr_assert(strstr(r.runs[i].name, "_b1_") || strstr(r.runs[i].name, "_b2_") ||
                                                           strstr(r.runs[i].name, "_b3_") || strstr(r.runs[i].name, "resnet"),
                                                           "%s", r.runs[i].name);
    /* 0.08 ms for two short kernels, 0.04 ms for one: a 40 us interval
     * fits every calibration run exactly. */
    cr_assert_float_eq(r.launch_interval_s[0], 40e-6, 0.05e-6);
    cr_assert_float_eq(r.default_interval_s, opm_workload_host_at(0)->launch_interval_s, 0);
    art_free(&r);
}

Test(artifact, out_of_memory_run_is_not_scored)
{
    char dir[256], p[512];
    tmp_dir(dir, sizeof dir, "artifact_oom");
    const char *sub[] = {"measurements", "workloads", "workloads/all"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, sub[i]);
        cr_assert_eq(mkdir(p, 0755), 0);
    }
    write(dir, "workloads/all/qwen2model_qwen2-1p5b_pbf16_b8_s4096_modeprefill.json",
          "[[{\"batch\":1,\"dimM\":32768,\"dimN\":32768,\"dimK\":8192,\"precM\":\"bf16\",\"precA\":\"bf16\","
          "\"useTensorCore\":true},[\"gemm\",\"tc\",\"bf16_bf16\"]]]");
    write(dir, "measurements/a10_e2e.csv", "workload,energy,time,avg_freq,temp\n"
          "qwen2model_qwen2-1p5b_pbf16_b8_s4096_modeprefill_attneager_freq900_iter10.csv,5,0.001,900,50\n");
    art_result r;
    opm_error err;
    cr_assert_eq(art_run_all(&r, dir, NULL, 0, &err), 0, "%s", err.message);
    cr_assert_eq(r.runs_oom, 1);
    cr_assert_eq(r.runs[0].status, ART_OUT_OF_MEMORY);
    cr_assert_eq(r.overall.time.n, 0);
    art_free(&r);
}

/* The harness start-up: measured on the unmatched runs (n x time - 30 s -
 * time / 2, median), added to each prediction as start-up / n, idle; not to
 * a run whose name states no iteration count; ART_NO_HARNESS leaves it out. */
Test(artifact, harness_startup_share)
{
    char dir[256], p[512];
    tmp_dir(dir, sizeof dir, "artifact_harness");
    const char *sub[] = {"measurements", "workloads", "workloads/all"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, sub[i]);
        cr_assert_eq(mkdir(p, 0755), 0);
    }
    write(dir, "workloads/all/gpt2model_gpt2_pbf16_b1_s128_modeprefill.json",
          "[[{\"batch\":1,\"dimM\":128,\"dimN\":1024,\"dimK\":1024,\"precM\":\"bf16\",\"precA\":\"bf16\","
          "\"useTensorCore\":true},[\"gemm\",\"tc\",\"bf16_bf16\"]]]");
    write(dir, "workloads/all/gpt2model_gpt2_pbf16_b2_s128_modeprefill.json",
          "[[{\"dim\":4096,\"op\":\"relu\",\"prec\":\"bf16\"},[\"elementwise\"]]]");
    /* Unmatched (fp32: no list): 31.0, 31.2 and 30.9 s windows over 1000
     * iterations: start-ups 0.9845, 1.1844, 0.88455 s; the median 0.9845. */
    write(dir, "measurements/a10_e2e.csv", "workload,energy,time,avg_freq,temp\n"
          "gpt2model_gpt2_pfp32_b1_s128_modeprefill_attneager_freq900_iter1000.csv,1,31.0,900,50\n"
          "gpt2model_gpt2_pfp32_b2_s128_modeprefill_attneager_freq900_iter1000.csv,1,31.2,900,50\n"
          "gpt2model_gpt2_pfp32_b4_s128_modeprefill_attneager_freq900_iter1000.csv,1,30.9,900,50\n"
          "gpt2model_gpt2_pbf16_b1_s128_modeprefill_attneager_freq900_iter500.csv,1,0.06,900,50\n"
          "gpt2model_gpt2_pbf16_b2_s128_modeprefill_attneager_freq900.csv,1,0.06,900,50\n");
    art_result a, b;
    opm_error err;
    cr_assert_eq(art_run_all(&a, dir, NULL, 0, &err), 0, "%s", err.message);
    cr_assert_eq(art_run_all(&b, dir, NULL, ART_NO_HARNESS, &err), 0, "%s", err.message);
    cr_assert_eq(a.n_files, 1);
    cr_assert_eq(a.startup_runs[0], 3);
    cr_assert_float_eq(a.startup_s[0], 0.9845, 1e-9);
    cr_assert_float_eq(b.startup_s[0], 0.9845, 1e-9, "measured either way, added only without ART_NO_HARNESS");
    int seen = 0;
    for (size_t i = 0; i < a.n_runs; i++) {
        const art_run *u = &a.runs[i], *v = &b.runs[i];
        if (u->status != ART_SCORED && u->status != ART_CALIBRATION) continue;
        double share = u->iterations > 0 ? 0.9845 / (double)u->iterations : 0;
        cr_assert_float_eq(u->unc_time_s - v->unc_time_s, share, 1e-12, "%s", u->name);
        cr_assert_float_eq(u->unc_energy_j - v->unc_energy_j, u->idle_w * share, 1e-12, "%s", u->name);
        cr_assert(u->idle_w > 0);
        seen += u->iterations == 500;
        seen += 2 * (u->iterations == 0);
    }
    cr_assert_eq(seen, 3, "the run with _iter500 and the one without an iteration count");
    art_free(&a);
    art_free(&b);
}
