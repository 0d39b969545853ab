/* test_trace_emit.c — the trace report emitters (JSON per contract §6, the
 * group and instance CSVs, the terminal table, the SVG roofline) on reports
 * built by hand, so these tests depend on nothing but the emitters: four
 * groups covering a model with a roofline, a model the hardware has no
 * roofline for, an op with no model, and a linked backward op; names with
 * quotes, backslashes, markup characters, commas, line breaks, control
 * characters and a malformed UTF-8 byte. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "golden.h"
#include "testutil.h"
#include "trace/trace_internal.h"

/* 2^53 + 1: exact only when written as an integer, not through a double. */
#define BIG_FLOPS 9007199254740993ULL

static const char *const mm_kernels[] = {"Cijk_Alik_Bljk \"q\" \\ <float, 4> & co\x01\ttab", "nvjet_tst_2"};
static const char *const ln_kernels[] = {"vectorized_layer_norm_kernel"};
static const char *const triton_kernels[] = {"triton_poi_fused_add_0"};
static const char *const conv_kernels[] = {"igemm_bwd_data", "igemm_wrw"};

/* A report as analyze.c would hand it over: groups by kernel time. */
static opm_trace_report *make_report(int with_hw)
{
    opm_trace_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    r->source = (char *)"traces/step \"1\".json";
    r->hardware = with_hw ? (char *)"mi300x" : NULL;
    r->model = with_hw ? (char *)"roofline" : NULL;
    r->n_groups = 4;
    r->groups = calloc(r->n_groups, sizeof *r->groups);
    cr_assert_not_null(r->groups);
    opm_trace_group *g = r->groups;

    g[0] = (opm_trace_group){
        .name = "aten::mm", .has_kind = 1, .kind = OPM_KIND_GEMM, .phase = OPM_PHASE_TRAIN_FWD,
        .category = OPM_TCAT_GEMM, .params_json = "{\"m\": 141, \"n\": 512, \"k\": 512, \"dtype\": \"bf16\"}",
        .input_dims = "[[141,512],[512,512]]", .input_types = "[\"c10::BFloat16\",\"c10::BFloat16\"]",
        .input_strides = "[[512,1],[1,512]]", .concrete_inputs = "[\"\",\"\"]", .count = 4,
        .kernel_time_s = 1.23456789012345e-4, .kernel_time_mean_s = 1.23456789012345e-4 / 4, .flops = BIG_FLOPS,
        .bytes = 1000000, .flops_per_byte = 9007199254.740993, .tflops_per_s = 291.8, .tb_per_s = 0.0324,
        .has_roofline = 1, .roofline_time_s = 2e-5, .pct_roofline = 64.8, .bound = OPM_BOUND_COMPUTE,
        .kernel_name_count = 2, .kernel_names = mm_kernels};
    g[1] = (opm_trace_group){
        .name = "aten::layer_norm", .has_kind = 1, .kind = OPM_KIND_LAYERNORM, .phase = OPM_PHASE_INFERENCE,
        .category = OPM_TCAT_NORM, .params_json = "{\"rows\": 141, \"cols\": 512}", .input_dims = "[[141,512]]",
        .input_types = "", .input_strides = "", .concrete_inputs = "", .count = 2, .kernel_time_s = 6e-5,
        .kernel_time_mean_s = 3e-5, .flops = 577536, .bytes = 288768, .flops_per_byte = 2, .tflops_per_s = 0.0385,
        .tb_per_s = 0.0192, .kernel_name_count = 1, .kernel_names = ln_kernels};
    g[2] = (opm_trace_group){
        .name = "triton_poi_fused_add_0, \"fast\"\nline2", .category = OPM_TCAT_ELEMENTWISE,
        .params_json = "{\"input_dims\": \"\"}", .input_dims = "", .input_types = "", .input_strides = "",
        .concrete_inputs = "", .count = 3, .kernel_time_s = 3e-5, .kernel_time_mean_s = 1e-5,
        .kernel_name_count = 1, .kernel_names = triton_kernels};
    g[3] = (opm_trace_group){
        .name = "aten::convolution_backward", .has_kind = 1, .kind = OPM_KIND_CONV, .phase = OPM_PHASE_TRAIN_BWD,
        .category = OPM_TCAT_CONV, .params_json = "{\"n\": 8, \"c\": 64}", .input_dims = "[[8,64,56,56]]",
        .input_types = "", .input_strides = "", .concrete_inputs = "", .forward_name = "aten::convolution",
        .count = 1, .kernel_time_s = 2e-5, .kernel_time_mean_s = 2e-5, .flops = 3000000000, .bytes = 40000000,
        .flops_per_byte = 75, .tflops_per_s = 150, .tb_per_s = 2, .has_roofline = 1, .roofline_time_s = 8e-6,
        .pct_roofline = 40, .bound = OPM_BOUND_MEMORY, .kernel_name_count = 2, .kernel_names = conv_kernels};
    if (!with_hw)
        for (int i = 0; i < 4; i++) g[i].has_roofline = 0;

    r->n_inst = 5;
    r->inst = calloc(r->n_inst, sizeof *r->inst);
    cr_assert_not_null(r->inst);
    r->inst[0] = (opm_trace_instance){0, 1712345678.123456, 4e-6, 1712345678.123460, 3e-5, 2, 17};
    r->inst[1] = (opm_trace_instance){0, 1712345678.223456, 4e-6, 1712345678.223460, 3.1e-5, 2, 18};
    r->inst[2] = (opm_trace_instance){1, 1712345678.3, 2e-6, 1712345678.31, 3e-5, 1, -1};
    r->inst[3] = (opm_trace_instance){2, 0, 0, 1712345678.4, 1e-5, 1, -1};
    r->inst[4] = (opm_trace_instance){3, 1712345678.5, 5e-6, 1712345678.51, 2e-5, 2, 17};

    r->n_cats = 4;
    r->cats[0] = (opm_trace_category_time){OPM_TCAT_GEMM, 4, 1.23456789012345e-4, 0.5};
    r->cats[1] = (opm_trace_category_time){OPM_TCAT_CONV, 1, 2e-5, 0.1};
    r->cats[2] = (opm_trace_category_time){OPM_TCAT_NORM, 2, 6e-5, 0.25};
    r->cats[3] = (opm_trace_category_time){OPM_TCAT_ELEMENTWISE, 3, 3e-5, 0.15};
    r->timeline = (opm_trace_timeline){.wall_s = 4e-4, .busy_s = 2.4e-4, .idle_s = 1.6e-4, .compute_s = 2.2e-4,
                                       .comm_s = 1e-5, .memcpy_s = 1e-5, .exposed_comm_s = 5e-6,
                                       .exposed_memcpy_s = 2e-6};
    if (with_hw) {
        r->hbm_bytes_per_s = 5.3e12;
        r->group_peak_flops_per_s = calloc(r->n_groups, sizeof(double));
        cr_assert_not_null(r->group_peak_flops_per_s);
        r->group_peak_flops_per_s[0] = 1307.4e12;
        r->group_peak_flops_per_s[1] = 163.4e12;
        r->group_peak_flops_per_s[3] = 1307.4e12;
        /* Time lost: mm 4·(30.86 − 20) = 43.5 µs, conv 1·(20 − 8) = 12 µs. */
        r->n_gap = 2;
        r->gap_order = calloc(2, sizeof *r->gap_order);
        cr_assert_not_null(r->gap_order);
        r->gap_order[0] = 0;
        r->gap_order[1] = 3;
    }
    return r;
}

static void free_report(opm_trace_report *r)
{
    free(r->groups);
    free(r->inst);
    free(r->group_peak_flops_per_s);
    free(r->gap_order);
    free(r);
}

static char *must(char *text, const opm_error *err)
{
    cr_assert_not_null(text, "emitter failed: %s", err->message);
    return text;
}

static json_t *load_json(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    cr_assert_not_null(j, "not JSON: %s at line %d col %d\n%s", je.text, je.line, je.column, text);
    return j;
}

/* The object's keys, in document order, equal `want` (NULL-terminated). */
static void assert_keys(json_t *obj, const char *const *want, const char *what)
{
    cr_assert(json_is_object(obj), "%s: not an object", what);
    size_t i = 0;
    for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it), i++) {
        cr_assert_not_null(want[i], "%s: extra key '%s'", what, json_object_iter_key(it));
        cr_assert_str_eq(json_object_iter_key(it), want[i], "%s: key %zu", what, i);
    }
    cr_assert_null(want[i], "%s: missing key '%s'", what, want[i]);
}

Test(trace_emit, json_top_level_is_the_contract_in_order)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    char *text = must(opm_trace_report_to_json(r, &err), &err);
    json_t *j = load_json(text);
    static const char *const top[] = {"trace", "hardware", "gpu_busy_s", "wall_s", "groups",
                                      "categories", "timeline", "graph_launches", "model", NULL};
    assert_keys(j, top, "top level");
    static const char *const gk[] = {"launches", "gpu_events", "kernel_time_s", NULL};
    assert_keys(json_object_get(j, "graph_launches"), gk, "graph_launches");
    cr_assert_str_eq(json_string_value(json_object_get(j, "trace")), r->source);
    cr_assert_str_eq(json_string_value(json_object_get(j, "hardware")), "mi300x");
    cr_assert_float_eq(json_number_value(json_object_get(j, "gpu_busy_s")), 2.4e-4, 1e-18);
    cr_assert_float_eq(json_number_value(json_object_get(j, "wall_s")), 4e-4, 1e-18);
    cr_assert_eq(json_array_size(json_object_get(j, "groups")), 4);
    static const char *const tl[] = {"busy_s", "idle_s", "compute_s", "comm_s", "memcpy_s", "wall_s",
                                     "exposed_comm_s", "exposed_memcpy_s", NULL};
    assert_keys(json_object_get(j, "timeline"), tl, "timeline");
    cr_assert_float_eq(json_number_value(json_object_get(json_object_get(j, "timeline"), "comm_s")), 1e-5, 1e-18);
    json_t *cats = json_object_get(j, "categories");
    cr_assert_eq(json_array_size(cats), 4);
    static const char *const ck[] = {"category", "kernel_time_s", "share", "count", NULL};
    for (size_t i = 0; i < 4; i++) assert_keys(json_array_get(cats, i), ck, "category");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(cats, 2), "category")), "norm");
    cr_assert_float_eq(json_number_value(json_object_get(json_array_get(cats, 2), "share")), 0.25, 1e-15);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(cats, 3), "count")), 3);
    json_decref(j);
    free(text);
    free_report(r);
}

Test(trace_emit, json_groups_keep_contract_order_and_optional_fields)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    char *text = must(opm_trace_report_to_json(r, &err), &err);
    json_t *j = load_json(text);
    json_t *groups = json_object_get(j, "groups");
    static const char *const full[] = {"name", "kind", "category", "params", "count", "kernel_time_s",
                                       "kernel_time_mean_s", "flops", "bytes", "tflops_per_s", "tb_per_s",
                                       "roofline_time_s", "pct_roofline", "bound", "kernels", "phase",
                                       "flops_per_byte", NULL};
    static const char *const no_roof[] = {"name", "kind", "category", "params", "count", "kernel_time_s",
                                          "kernel_time_mean_s", "flops", "bytes", "tflops_per_s", "tb_per_s",
                                          "kernels", "phase", "flops_per_byte", NULL};
    static const char *const no_model[] = {"name", "kind", "category", "params", "count", "kernel_time_s",
                                           "kernel_time_mean_s", "kernels", NULL};
    static const char *const backward[] = {"name", "kind", "category", "params", "count", "kernel_time_s",
                                           "kernel_time_mean_s", "flops", "bytes", "tflops_per_s", "tb_per_s",
                                           "roofline_time_s", "pct_roofline", "bound", "kernels", "phase",
                                           "flops_per_byte", "forward", NULL};
    assert_keys(json_array_get(groups, 0), full, "group 0");
    assert_keys(json_array_get(groups, 1), no_roof, "group 1");
    assert_keys(json_array_get(groups, 2), no_model, "group 2");
    assert_keys(json_array_get(groups, 3), backward, "group 3");

    json_t *mm = json_array_get(groups, 0);
    cr_assert_str_eq(json_string_value(json_object_get(mm, "kind")), "gemm");
    cr_assert_str_eq(json_string_value(json_object_get(mm, "category")), "gemm");
    cr_assert_str_eq(json_string_value(json_object_get(mm, "phase")), "train_fwd");
    cr_assert_str_eq(json_string_value(json_object_get(mm, "bound")), "compute");
    /* Integers stay exact: 2^53 + 1 would come back as 2^53 through a double. */
    cr_assert(json_is_integer(json_object_get(mm, "flops")));
    cr_assert_eq((unsigned long long)json_integer_value(json_object_get(mm, "flops")), BIG_FLOPS);
    cr_assert_eq(json_integer_value(json_object_get(mm, "count")), 4);
    cr_assert_eq(json_integer_value(json_object_get(mm, "bytes")), 1000000);
    /* Params are the recogniser's object, inserted as JSON, not as a string. */
    json_t *params = json_object_get(mm, "params");
    cr_assert(json_is_object(params));
    cr_assert_eq(json_integer_value(json_object_get(params, "m")), 141);
    cr_assert_str_eq(json_string_value(json_object_get(params, "dtype")), "bf16");
    json_t *kern = json_object_get(mm, "kernels");
    cr_assert_eq(json_array_size(kern), 2);
    cr_assert_str_eq(json_string_value(json_array_get(kern, 0)), mm_kernels[0], "escaping did not round-trip");
    cr_assert_str_eq(json_string_value(json_array_get(kern, 1)), "nvjet_tst_2");

    json_t *triton = json_array_get(groups, 2);
    cr_assert(json_is_null(json_object_get(triton, "kind")), "an op with no model has kind null");
    cr_assert_str_eq(json_string_value(json_object_get(triton, "name")), r->groups[2].name);
    cr_assert_str_eq(json_string_value(json_object_get(triton, "category")), "elementwise");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(groups, 3), "forward")), "aten::convolution");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(groups, 3), "bound")), "memory");
    json_decref(j);
    free(text);
    free_report(r);
}

Test(trace_emit, json_doubles_have_twelve_significant_digits)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    char *text = must(opm_trace_report_to_json(r, &err), &err);
    cr_assert_not_null(strstr(text, "\"kernel_time_s\": 0.000123456789012,"), "%s", text);
    cr_assert_not_null(strstr(text, "\"pct_roofline\": 64.8,"), "%s", text);
    cr_assert_null(strstr(text, "0.000123456789012345"));
    free(text);
    free_report(r);
}

Test(trace_emit, json_without_hardware_has_null_hardware_and_no_roofline)
{
    opm_error err;
    opm_trace_report *r = make_report(0);
    char *text = must(opm_trace_report_to_json(r, &err), &err);
    json_t *j = load_json(text);
    cr_assert(json_is_null(json_object_get(j, "hardware")));
    cr_assert_null(json_object_get(j, "model"));
    json_t *groups = json_object_get(j, "groups");
    for (size_t i = 0; i < json_array_size(groups); i++) {
        json_t *g = json_array_get(groups, i);
        cr_assert_null(json_object_get(g, "roofline_time_s"), "group %zu", i);
        cr_assert_null(json_object_get(g, "pct_roofline"), "group %zu", i);
        cr_assert_null(json_object_get(g, "bound"), "group %zu", i);
    }
    cr_assert(json_is_integer(json_object_get(json_array_get(groups, 0), "flops")), "flops stay without hardware");
    json_decref(j);
    free(text);
    free_report(r);
}

Test(trace_emit, json_mends_malformed_utf8_and_odd_numbers)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    r->groups[1].name = "bad\xff byte \xc3(";
    r->groups[0].pct_roofline = 1.0 / 0.0; /* a zero mean time would give this */
    r->groups[2].params_json = "";
    char *text = must(opm_trace_report_to_json(r, &err), &err);
    json_t *j = load_json(text);
    json_t *groups = json_object_get(j, "groups");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(groups, 1), "name")),
                     "bad\xef\xbf\xbd byte \xef\xbf\xbd(");
    cr_assert(json_is_null(json_object_get(json_array_get(groups, 0), "pct_roofline")));
    cr_assert(json_is_object(json_object_get(json_array_get(groups, 2), "params")));
    json_decref(j);
    free(text);
    free_report(r);
}

Test(trace_emit, empty_report_gives_valid_outputs)
{
    opm_error err;
    opm_trace_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    r->source = (char *)"empty.json";
    r->hardware = (char *)"h100_sxm";
    r->hbm_bytes_per_s = 3.35e12;
    char *text = must(opm_trace_report_to_json(r, &err), &err);
    json_t *j = load_json(text);
    cr_assert_eq(json_array_size(json_object_get(j, "groups")), 0);
    cr_assert_eq(json_array_size(json_object_get(j, "categories")), 0);
    json_decref(j);
    free(text);
    text = must(opm_trace_report_to_csv(r, 0, &err), &err);
    cr_assert_eq(strchr(text, '\n') - text + 1, (long)strlen(text), "only the header row");
    free(text);
    text = must(opm_trace_report_to_table(r, 0, &err), &err);
    cr_assert_not_null(strstr(text, "Top 0 of 0 groups"));
    free(text);
    text = must(opm_trace_report_to_svg(r, &err), &err);
    cr_assert_null(strstr(text, "<circle"));
    cr_assert_not_null(strstr(text, "no op with a FLOP count"));
    free(text);
    free(r);
}

/* ---- CSV ---- */

static csv *csv_of(const char *text)
{
    char path[256];
    int fd = tmp_file(path, sizeof path, "opm_trace_emit_");
    size_t len = strlen(text);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    csv *c = csv_load(path);
    unlink(path);
    cr_assert_not_null(c);
    return c;
}

Test(trace_emit, csv_groups_header_and_cells)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    char *text = must(opm_trace_report_to_csv(r, 0, &err), &err);
    static const char header[] =
        "name,kind,phase,category,count,kernel_time_s,kernel_time_mean_s,flops,bytes,flops_per_byte,"
        "tflops_per_s,tb_per_s,roofline_time_s,pct_roofline,bound,forward,params,input_dims,input_types,"
        "input_strides,concrete_inputs,kernels\n";
    cr_assert_eq(strncmp(text, header, strlen(header)), 0, "header: %.*s", (int)strlen(header), text);
    csv *c = csv_of(text);
    cr_assert_eq(csv_rows(c), 4);
    cr_assert_str_eq(csv_get(c, 0, "name"), "aten::mm");
    cr_assert_str_eq(csv_get(c, 0, "kind"), "gemm");
    cr_assert_str_eq(csv_get(c, 0, "phase"), "train_fwd");
    cr_assert_str_eq(csv_get(c, 0, "flops"), "9007199254740993");
    cr_assert_str_eq(csv_get(c, 0, "kernel_time_s"), "0.000123456789012");
    cr_assert_str_eq(csv_get(c, 0, "bound"), "compute");
    cr_assert_str_eq(csv_get(c, 0, "params"), r->groups[0].params_json);
    cr_assert_str_eq(csv_get(c, 0, "input_types"), r->groups[0].input_types);
    cr_assert_str_eq(csv_get(c, 0, "input_strides"), r->groups[0].input_strides);
    char joined[256];
    snprintf(joined, sizeof joined, "%s | %s", mm_kernels[0], mm_kernels[1]);
    cr_assert_str_eq(csv_get(c, 0, "kernels"), joined);
    cr_assert_float_eq(csv_num(c, 0, "pct_roofline"), 64.8, 1e-12);
    /* Model, no roofline: roofline cells empty, counts present. */
    cr_assert_str_eq(csv_get(c, 1, "roofline_time_s"), "");
    cr_assert_str_eq(csv_get(c, 1, "bound"), "");
    cr_assert_str_eq(csv_get(c, 1, "bytes"), "288768");
    /* No model: a name with comma, quotes and a line break round-trips. */
    cr_assert_str_eq(csv_get(c, 2, "name"), r->groups[2].name);
    cr_assert_str_eq(csv_get(c, 2, "kind"), "");
    cr_assert_str_eq(csv_get(c, 2, "phase"), "");
    cr_assert_str_eq(csv_get(c, 2, "flops"), "");
    cr_assert_str_eq(csv_get(c, 2, "tflops_per_s"), "");
    cr_assert_str_eq(csv_get(c, 2, "category"), "elementwise");
    cr_assert_str_eq(csv_get(c, 2, "count"), "3");
    cr_assert_str_eq(csv_get(c, 3, "forward"), "aten::convolution");
    cr_assert_str_eq(csv_get(c, 3, "phase"), "train_bwd");
    cr_assert_str_eq(csv_get(c, 3, "bound"), "memory");
    cr_assert_str_eq(csv_get(c, 0, "forward"), "");
    csv_free(c);
    free(text);
    free_report(r);
}

Test(trace_emit, csv_instances)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    char *text = must(opm_trace_report_to_csv(r, 1, &err), &err);
    static const char header[] = "group,name,cpu_start_s,cpu_dur_s,gpu_start_s,kernel_time_s,gpu_events,"
                                 "sequence_number,kind,category\n";
    cr_assert_eq(strncmp(text, header, strlen(header)), 0, "%.120s", text);
    csv *c = csv_of(text);
    cr_assert_eq(csv_rows(c), 5);
    cr_assert_str_eq(csv_get(c, 0, "group"), "0");
    cr_assert_str_eq(csv_get(c, 0, "name"), "aten::mm");
    cr_assert_str_eq(csv_get(c, 0, "sequence_number"), "17");
    cr_assert_str_eq(csv_get(c, 0, "gpu_events"), "2");
    cr_assert_str_eq(csv_get(c, 0, "kind"), "gemm");
    /* Timestamps keep sub-microsecond digits (12 digits would not). */
    cr_assert_eq(csv_num(c, 0, "cpu_start_s"), 1712345678.123456);
    cr_assert_str_eq(csv_get(c, 2, "sequence_number"), "");
    cr_assert_str_eq(csv_get(c, 3, "name"), r->groups[2].name);
    cr_assert_str_eq(csv_get(c, 3, "kind"), "");
    cr_assert_str_eq(csv_get(c, 3, "category"), "elementwise");
    cr_assert_str_eq(csv_get(c, 4, "group"), "3");
    cr_assert_float_eq(csv_num(c, 4, "kernel_time_s"), 2e-5, 1e-18);
    csv_free(c);
    free(text);
    free_report(r);
}

Test(trace_emit, csv_rejects_unknown_table)
{
    opm_error err;
    opm_error_clear(&err);
    opm_trace_report *r = make_report(0);
    cr_assert_null(opm_trace_report_to_csv(r, 2, &err));
    cr_assert_eq(err.code, OPM_EINVAL);
    free_report(r);
}

/* ---- Table ---- */

/* The lines of the section that starts with `title`, up to a blank line. */
static size_t section_lines(const char *text, const char *title, const char **lines, size_t max)
{
    const char *p = strstr(text, title);
    cr_assert_not_null(p, "no section '%s' in\n%s", title, text);
    p = strchr(p, '\n') + 1;
    size_t n = 0;
    while (*p && *p != '\n' && n < max) {
        lines[n++] = p;
        p = strchr(p, '\n');
        cr_assert_not_null(p);
        p++;
    }
    return n;
}

/* The character at display column `col` (UTF-8 characters) of the line. */
static const char *at_column(const char *line, size_t col)
{
    const char *p = line;
    for (size_t c = 0; c < col && *p != '\n'; c++) {
        p++;
        while (((unsigned char)*p & 0xC0) == 0x80) p++;
    }
    return p;
}

/* Display column where `word` starts in the line. */
static size_t column_of(const char *line, const char *word)
{
    const char *w = strstr(line, word);
    cr_assert(w && w < strchr(line, '\n'), "no '%s' in the line", word);
    size_t col = 0;
    for (const char *q = line; q < w; q++) col += ((unsigned char)*q & 0xC0) != 0x80;
    return col;
}

Test(trace_emit, table_sections_and_alignment)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    r->groups[2].name = "triton_poi_fused_add_mul_native_layer_norm_backward_sum_view_very_long_name_0";
    char *text = must(opm_trace_report_to_table(r, 0, &err), &err);
    cr_assert_not_null(strstr(text, "hardware  mi300x (model roofline)"), "%s", text);
    cr_assert_not_null(strstr(text, "GPU       busy 0.240 ms, idle 0.160 ms, wall 0.400 ms (60.0% busy)"), "%s", text);
    const char *lines[16];
    size_t n = section_lines(text, "Top 4 of 4 groups", lines, 16);
    cr_assert_eq(n, 5, "header and 4 rows, got %zu", n);
    /* Left-aligned params start, and right-aligned counts end, in one column. */
    size_t params = column_of(lines[0], "params"), count_end = column_of(lines[0], "count") + 5;
    for (size_t i = 1; i < n; i++) {
        cr_assert(at_column(lines[i], params)[-1] == ' ' && at_column(lines[i], params)[0] != ' ',
                  "row %zu: params misaligned:\n%s", i, text);
        cr_assert(at_column(lines[i], count_end)[-1] != ' ' && at_column(lines[i], count_end)[0] == ' ',
                  "row %zu: count misaligned:\n%s", i, text);
    }
    cr_assert_not_null(strstr(lines[1], "m:141 n:512 k:512 dtype:bf16"), "flattened params: %.300s", lines[1]);
    cr_assert_not_null(strstr(text, "triton_poi_fused_add_mul_native_layer_norm_backward_s..."), "%s", text);
    cr_assert_null(strstr(text, "very_long_name_0"));
    /* Category block: every category and a total. */
    n = section_lines(text, "category", lines, 16);
    cr_assert_eq(n, 5, "4 categories and the total");
    cr_assert_eq(strncmp(lines[4], "  total", 7), 0);
    /* Gap section in the order given; lost time = count·(mean − roofline). */
    n = section_lines(text, "Largest gap to roofline", lines, 16);
    cr_assert_eq(n, 3);
    cr_assert_not_null(strstr(lines[1], "aten::mm"));
    cr_assert_not_null(strstr(lines[1], "43.5"), "4·(30.86 − 20) µs: %.200s", lines[1]);
    cr_assert_not_null(strstr(lines[2], "aten::convolution_backward"));
    cr_assert_not_null(strstr(lines[2], "12.0"));
    free(text);
    free_report(r);
}

Test(trace_emit, table_top_limits_both_lists)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    char *text = must(opm_trace_report_to_table(r, 1, &err), &err);
    const char *lines[16];
    cr_assert_eq(section_lines(text, "Top 1 of 4 groups", lines, 16), 2);
    cr_assert_not_null(strstr(lines[1], "aten::mm"));
    cr_assert_eq(section_lines(text, "Largest gap to roofline: top 1 of 2", lines, 16), 2);
    free(text);
    free_report(r);
}

Test(trace_emit, table_without_hardware)
{
    opm_error err;
    opm_trace_report *r = make_report(0);
    char *text = must(opm_trace_report_to_table(r, 0, &err), &err);
    cr_assert_not_null(strstr(text, "hardware  none"));
    cr_assert_not_null(strstr(text, "Largest gap to roofline: needs a hardware"));
    /* A line break in a name does not break the row. */
    cr_assert_null(strstr(text, "\nline2"));
    cr_assert_not_null(strstr(text, "triton_poi_fused_add_0, \"fast\" line2"), "%s", text);
    free(text);
    free_report(r);
}

/* ---- SVG ---- */

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Tags balanced and nested, no stray '<' or '&' in text or attributes. */
static void assert_well_formed(const char *s)
{
    char stack[64][32];
    int depth = 0, roots = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '&') {
            const char *ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            int ok = 0;
            for (int i = 0; i < 5; i++) ok |= !strncmp(p, ents[i], strlen(ents[i]));
            cr_assert(ok, "stray '&' at %.40s", p);
            continue;
        }
        if (*p != '<') continue;
        const char *end = strchr(p, '>');
        cr_assert_not_null(end, "unclosed tag at %.40s", p);
        cr_assert_null(memchr(p + 1, '<', (size_t)(end - p - 1)), "'<' inside a tag at %.40s", p);
        if (p[1] == '?') {
            p = end;
            continue;
        }
        int closing = p[1] == '/', self = end[-1] == '/';
        const char *name = p + 1 + closing;
        size_t len = strcspn(name, " />\n");
        cr_assert(len > 0 && len < 32);
        if (closing) {
            cr_assert_gt(depth, 0, "close without open at %.40s", p);
            depth--;
            cr_assert(strlen(stack[depth]) == len && !strncmp(stack[depth], name, len), "</%.*s> closes <%s>",
                      (int)len, name, stack[depth]);
        } else if (!self) {
            cr_assert_lt(depth, 64);
            if (depth == 0) roots++;
            memcpy(stack[depth], name, len);
            stack[depth++][len] = '\0';
        }
        p = end;
    }
    cr_assert_eq(depth, 0, "unclosed <%s>", depth ? stack[depth - 1] : "");
    cr_assert_eq(roots, 1);
}

Test(trace_emit, svg_roofline_chart)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    char *text = must(opm_trace_report_to_svg(r, &err), &err);
    assert_well_formed(text);
    cr_assert_eq(strncmp(text, "<?xml", 5), 0);
    cr_assert_not_null(strstr(text, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    /* Plottable: a model and a FLOP count (mm, layer_norm, conv backward). */
    cr_assert_eq(count(text, "<circle "), 3, "%s", text);
    cr_assert_eq(count(text, "<title>"), 3);
    cr_assert_eq(count(text, "class=\"memory-roof\""), 1);
    cr_assert_eq(count(text, "class=\"compute-roof\""), 2, "one roof per distinct peak");
    cr_assert_not_null(strstr(text, "1307 TFLOP/s: gemm, conv"), "%s", text);
    cr_assert_not_null(strstr(text, "163.4 TFLOP/s: layernorm"), "%s", text);
    cr_assert_not_null(strstr(text, "HBM 5.3 TB/s"));
    /* Tooltip text is escaped, the quoted params too. */
    cr_assert_not_null(strstr(text, "{&quot;m&quot;: 141"), "%s", text);
    /* A legend entry per plotted category. */
    cr_assert_not_null(strstr(text, ">gemm</text>"));
    cr_assert_not_null(strstr(text, ">norm</text>"));
    cr_assert_not_null(strstr(text, ">conv</text>"));
    cr_assert_null(strstr(text, ">elementwise</text>"), "no elementwise point is plotted");
    /* Same report, same bytes. */
    char *again = must(opm_trace_report_to_svg(r, &err), &err);
    cr_assert_str_eq(text, again);
    free(again);
    free(text);
    free_report(r);
}

Test(trace_emit, svg_escapes_markup_in_names)
{
    opm_error err;
    opm_trace_report *r = make_report(1);
    r->groups[0].name = "op<T> & \"x\" 'y' \x02 \xff";
    r->source = (char *)"a&b<c>.json";
    char *text = must(opm_trace_report_to_svg(r, &err), &err);
    assert_well_formed(text);
    cr_assert_not_null(strstr(text, "op&lt;T&gt; &amp; &quot;x&quot; &apos;y&apos; ? \xef\xbf\xbd"), "%s", text);
    cr_assert_not_null(strstr(text, "a&amp;b&lt;c&gt;.json"));
    free(text);
    free_report(r);
}

Test(trace_emit, svg_needs_a_hardware)
{
    opm_error err;
    opm_error_clear(&err);
    opm_trace_report *r = make_report(0);
    cr_assert_null(opm_trace_report_to_svg(r, &err));
    cr_assert_eq(err.code, OPM_EINVAL);
    cr_assert_not_null(strstr(err.message, "svg: the roofline chart needs a hardware"), "%s", err.message);
    free_report(r);
}

/* ---- A real trace through the whole pipeline ---- */

Test(trace_emit, real_trace_all_emitters)
{
    char path[512];
    opm_error err;
    opm_trace *t = opm_trace_read_file(src_path("tests/data/traces/torch_compile/trace.json.gz", path, sizeof path),
                                       &err);
    cr_assert_not_null(t, "%s", err.message);
    opm_hardware *hw = opm_hardware_builtin("mi300x", &err);
    cr_assert_not_null(hw, "%s", err.message);
    opm_trace_report *r = opm_trace_report_new(t, hw, NULL, &err);
    cr_assert_not_null(r, "%s", err.message);
    size_t n = opm_trace_report_group_count(r), plottable = 0;
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        const opm_trace_group *g = opm_trace_report_group(r, i);
        plottable += g->has_kind && g->flops > 0 && g->bytes > 0 && g->kernel_time_s > 0;
    }
    cr_assert_gt(plottable, 0, "the trace has GEMMs and attention");

    char *json = must(opm_trace_report_to_json(r, &err), &err);
    json_t *j = load_json(json);
    cr_assert_eq(json_array_size(json_object_get(j, "groups")), n);
    cr_assert_str_eq(json_string_value(json_object_get(j, "hardware")), "mi300x");
    json_decref(j);
    free(json);

    char *text = must(opm_trace_report_to_csv(r, 0, &err), &err);
    csv *c = csv_of(text);
    cr_assert_eq(csv_rows(c), n);
    csv_free(c);
    free(text);
    text = must(opm_trace_report_to_csv(r, 1, &err), &err);
    c = csv_of(text);
    cr_assert_eq(csv_rows(c), opm_trace_report_instance_count(r));
    csv_free(c);
    free(text);

    text = must(opm_trace_report_to_svg(r, &err), &err);
    assert_well_formed(text);
    cr_assert_eq(count(text, "<circle "), plottable);
    cr_assert_geq(count(text, "class=\"compute-roof\""), 1);
    cr_assert_eq(count(text, "class=\"memory-roof\""), 1);
    free(text);

    text = must(opm_trace_report_to_table(r, 3, &err), &err);
    const char *lines[8];
    char title[64];
    snprintf(title, sizeof title, "Top 3 of %zu groups", n);
    cr_assert_eq(section_lines(text, title, lines, 8), 4);
    free(text);

    opm_trace_report_free(r);
    opm_hardware_free(hw);
    opm_trace_free(t);
}
