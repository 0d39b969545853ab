/* test_trace_diff.c — `trace diff` in the library: the pairing of two
 * reports' groups and the JSON (contract §8).
 *
 *  - the shipped H100 and MI300X runs of each model: every group of each
 *    report appears exactly once, with exactly that report's count and
 *    kernel time (in the structs and in the JSON, checked against each
 *    report's own JSON), delta_s = b − a, largest regression first, and
 *    the categories and timelines are the reports';
 *  - synthetic pairs, one rule each: args, params (strides differ), place
 *    (renamed op between paired neighbours), one side only, self diff. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "opmodel/trace_diff.h"

static opm_trace_report *report_dir(const char *dir)
{
    char rel[256], buf[1024];
    snprintf(rel, sizeof rel, "tests/data/traces/%s/trace.json.gz", dir);
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_file(src_path(rel, buf, sizeof buf), &err);
    cr_assert_not_null(t, "%s: %s", dir, err.message);
    opm_trace_report *r = opm_trace_report_new(t, NULL, NULL, &err);
    cr_assert_not_null(r, "%s: %s", dir, err.message);
    opm_trace_free(t);
    return r;
}

/* One op per entry, each launching one kernel of its own name + "_k";
 * ops run one after another on one stream. */
typedef struct syn_op {
    const char *name, *dims, *strides;
} syn_op;

static opm_trace_report *report_syn(const syn_op *ops, size_t n)
{
    size_t cap = 4096 + n * 1024;
    char *json = malloc(cap);
    cr_assert_not_null(json);
    size_t len = (size_t)snprintf(json, cap, "{\"traceEvents\":[");
    for (size_t i = 0; i < n; i++) {
        long ts = 10 + 20 * (long)i, gts = 1000 + 20 * (long)i;
        len += (size_t)snprintf(json + len, cap - len,
            "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":10,"
            "\"args\":{\"Input Dims\":%s,\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],"
            "\"Input Strides\":%s}},"
            "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%ld,"
            "\"dur\":2,\"args\":{\"correlation\":%zu}},"
            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s_k\",\"pid\":0,\"tid\":7,\"ts\":%ld,\"dur\":%zu,"
            "\"args\":{\"correlation\":%zu,\"stream\":7,\"device\":0}}",
            i ? "," : "", ops[i].name, ts, ops[i].dims, ops[i].strides, ts + 1, i + 1, ops[i].name, gts,
            5 + i, i + 1);
        cr_assert(len < cap);
    }
    snprintf(json + len, cap - len, "]}");
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_buffer(json, strlen(json), "<syn>", &err);
    free(json);
    cr_assert_not_null(t, "%s", err.message);
    opm_trace_report *r = opm_trace_report_new(t, NULL, NULL, &err);
    cr_assert_not_null(r, "%s", err.message);
    opm_trace_free(t);
    return r;
}

static opm_trace_diff *diff_ok(const opm_trace_report *a, const opm_trace_report *b)
{
    opm_error err;
    opm_error_clear(&err);
    opm_trace_diff *d = opm_trace_diff_new(a, b, &err);
    cr_assert_not_null(d, "%s", err.message);
    return d;
}

/* The invariant of contract §8 on the structs. */
static void check_invariant(const opm_trace_diff *d, const opm_trace_report *a, const opm_trace_report *b)
{
    size_t na = opm_trace_report_group_count(a), nb = opm_trace_report_group_count(b);
    unsigned char *seen_a = calloc(na + 1, 1), *seen_b = calloc(nb + 1, 1);
    cr_assert(seen_a && seen_b);
    double prev = INFINITY;
    for (size_t i = 0; i < opm_trace_diff_group_count(d); i++) {
        const opm_trace_diff_entry *e = opm_trace_diff_group(d, i);
        cr_assert(e->a || e->b);
        cr_expect(e->delta_s <= prev, "entry %zu out of order", i);
        prev = e->delta_s;
        double ta = 0, tb = 0;
        if (e->a) {
            cr_assert_lt(e->a_index, na);
            cr_expect_eq(e->a, opm_trace_report_group(a, e->a_index));
            cr_expect_eq(seen_a[e->a_index]++, 0, "A group %zu twice", e->a_index);
            ta = e->a->kernel_time_s;
        } else {
            cr_expect_eq(e->match, OPM_TDIFF_B_ONLY);
        }
        if (e->b) {
            cr_assert_lt(e->b_index, nb);
            cr_expect_eq(e->b, opm_trace_report_group(b, e->b_index));
            cr_expect_eq(seen_b[e->b_index]++, 0, "B group %zu twice", e->b_index);
            tb = e->b->kernel_time_s;
        } else {
            cr_expect_eq(e->match, OPM_TDIFF_A_ONLY);
        }
        cr_expect_eq(e->delta_s, tb - ta);
    }
    for (size_t i = 0; i < na; i++) cr_expect_eq(seen_a[i], 1, "A group %zu missing", i);
    for (size_t i = 0; i < nb; i++) cr_expect_eq(seen_b[i], 1, "B group %zu missing", i);
    free(seen_a);
    free(seen_b);
}

static json_t *parse(char *text)
{
    cr_assert_not_null(text);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    cr_assert_not_null(j, "json: %s at line %d", je.text, je.line);
    free(text);
    return j;
}

/* The invariant on the JSON, against each side's own report JSON: the
 * numbers a user would compare with `trace report`. */
static void check_json(const opm_trace_diff *d, const opm_trace_report *a, const opm_trace_report *b)
{
    opm_error err;
    json_t *jd = parse(opm_trace_diff_to_json(d, &err));
    json_t *side[2] = {parse(opm_trace_report_to_json(a, &err)), parse(opm_trace_report_to_json(b, &err))};
    const char *key[2] = {"a", "b"};
    json_t *groups = json_object_get(jd, "groups");
    cr_assert(json_is_array(groups));
    size_t found[2] = {0, 0};
    double total[2] = {0, 0};
    for (size_t i = 0; i < json_array_size(groups); i++) {
        json_t *g = json_array_get(groups, i);
        cr_assert(json_is_string(json_object_get(g, "name")));
        cr_assert(json_object_get(g, "params"), "params key present");
        cr_assert(json_is_number(json_object_get(g, "delta_s")));
        for (int s = 0; s < 2; s++) {
            json_t *x = json_object_get(g, key[s]);
            cr_assert(x);
            if (json_is_null(x)) continue;
            size_t idx = (size_t)json_integer_value(json_object_get(x, "index"));
            json_t *rg = json_array_get(json_object_get(side[s], "groups"), idx);
            cr_assert_not_null(rg);
            cr_expect_eq(json_integer_value(json_object_get(x, "count")),
                         json_integer_value(json_object_get(rg, "count")));
            cr_expect_eq(json_real_value(json_object_get(x, "kernel_time_s")),
                         json_real_value(json_object_get(rg, "kernel_time_s")), "%s group %zu time", key[s], idx);
            total[s] += json_real_value(json_object_get(x, "kernel_time_s"));
            found[s]++;
        }
    }
    for (int s = 0; s < 2; s++) {
        json_t *rgroups = json_object_get(side[s], "groups");
        cr_expect_eq(found[s], json_array_size(rgroups), "%s: every report group once", key[s]);
        double want = 0;
        for (size_t i = 0; i < json_array_size(rgroups); i++)
            want += json_real_value(json_object_get(json_array_get(rgroups, i), "kernel_time_s"));
        cr_expect(fabs(total[s] - want) <= 1e-9 * want + 1e-15, "%s total %g vs %g", key[s], total[s], want);
        cr_expect(json_equal(json_object_get(json_object_get(jd, "timeline"), key[s]),
                             json_object_get(side[s], "timeline")),
                  "%s timeline is the report's", key[s]);
        /* Each category time is the report's. */
        json_t *cats = json_object_get(jd, "categories");
        json_t *rcats = json_object_get(side[s], "categories");
        for (size_t i = 0; i < json_array_size(rcats); i++) {
            json_t *rc = json_array_get(rcats, i);
            const char *name = json_string_value(json_object_get(rc, "category"));
            int hit = 0;
            for (size_t k = 0; k < json_array_size(cats); k++) {
                json_t *c = json_array_get(cats, k);
                if (strcmp(json_string_value(json_object_get(c, "category")), name)) continue;
                hit = 1;
                char f[8];
                snprintf(f, sizeof f, "%s_s", key[s]);
                cr_expect_eq(json_real_value(json_object_get(c, f)),
                             json_real_value(json_object_get(rc, "kernel_time_s")), "%s %s", key[s], name);
            }
            cr_expect(hit, "%s: category %s missing", key[s], name);
        }
    }
    json_decref(jd);
    json_decref(side[0]);
    json_decref(side[1]);
}

static void real_pair(const char *model)
{
    char da[64], db[64];
    snprintf(da, sizeof da, "h100_%s", model);
    snprintf(db, sizeof db, "mi300_%s", model);
    opm_trace_report *a = report_dir(da), *b = report_dir(db);
    opm_trace_diff *d = diff_ok(a, b);
    check_invariant(d, a, b);
    check_json(d, a, b);
    opm_error err;
    char *csv = opm_trace_diff_to_csv(d, &err), *tab = opm_trace_diff_to_table(d, 5, &err);
    cr_assert(csv && tab, "%s", err.message);
    size_t lines = 0;
    for (const char *p = csv; *p; p++) lines += *p == '\n';
    cr_expect_eq(lines, opm_trace_diff_group_count(d) + 1, "csv: a header and one row per entry");
    cr_expect(strstr(tab, "Largest regressions") || strstr(tab, "All groups"));
    free(csv);
    free(tab);
    opm_trace_diff_free(d);
    opm_trace_report_free(a);
    opm_trace_report_free(b);
}

Test(trace_diff, h100_vs_mi300_bert) { real_pair("bert"); }
Test(trace_diff, h100_vs_mi300_falcon) { real_pair("falcon"); }
Test(trace_diff, h100_vs_mi300_qwen) { real_pair("qwen"); }

/* Every group of the two BERT runs pairs by name and arguments: same
 * model, same PyTorch, only the GPU differs. */
Test(trace_diff, bert_pairs_all_by_args)
{
    opm_trace_report *a = report_dir("h100_bert"), *b = report_dir("mi300_bert");
    opm_trace_diff *d = diff_ok(a, b);
    cr_expect_eq(opm_trace_diff_group_count(d), opm_trace_report_group_count(a));
    for (size_t i = 0; i < opm_trace_diff_group_count(d); i++)
        cr_expect_eq(opm_trace_diff_group(d, i)->match, OPM_TDIFF_ARGS, "%s",
                     opm_trace_diff_group(d, i)->a ? opm_trace_diff_group(d, i)->a->name : "?");
    opm_trace_diff_free(d);
    opm_trace_report_free(a);
    opm_trace_report_free(b);
}

Test(trace_diff, self_diff_is_zero)
{
    opm_trace_report *a = report_dir("h100_falcon");
    opm_trace_diff *d = diff_ok(a, a);
    check_invariant(d, a, a);
    for (size_t i = 0; i < opm_trace_diff_group_count(d); i++) {
        cr_expect_eq(opm_trace_diff_group(d, i)->match, OPM_TDIFF_ARGS);
        cr_expect_eq(opm_trace_diff_group(d, i)->delta_s, 0.0);
        cr_expect_eq(opm_trace_diff_group(d, i)->a_index, opm_trace_diff_group(d, i)->b_index);
    }
    opm_trace_diff_free(d);
    opm_trace_report_free(a);
}

static const opm_trace_diff_entry *entry_of(const opm_trace_diff *d, const char *a_name, const char *b_name)
{
    for (size_t i = 0; i < opm_trace_diff_group_count(d); i++) {
        const opm_trace_diff_entry *e = opm_trace_diff_group(d, i);
        if ((a_name ? e->a && !strcmp(e->a->name, a_name) : !e->a) &&
            (b_name ? e->b && !strcmp(e->b->name, b_name) : !e->b))
            return e;
    }
    return NULL;
}

/* B renames the op between two paired neighbours (flash → efficient
 * attention, say), transposes the GEMM's second operand (same m, n, k,
 * other strides) and adds an op of its own at the end. */
Test(trace_diff, args_params_place_and_one_side)
{
    const syn_op ops_a[] = {
        {"aten::mm", "[[64,32],[32,16]]", "[[32,1],[16,1]]"},
        {"mylib::attn_flash", "[[8]]", "[[1]]"},
        {"aten::relu", "[[64,16]]", "[[16,1]]"},
    };
    const syn_op ops_b[] = {
        {"aten::mm", "[[64,32],[32,16]]", "[[32,1],[1,32]]"},
        {"mylib::attn_efficient", "[[8]]", "[[1]]"},
        {"aten::relu", "[[64,16]]", "[[16,1]]"},
        {"mylib::extra", "[[4]]", "[[1]]"},
    };
    opm_trace_report *a = report_syn(ops_a, 3), *b = report_syn(ops_b, 4);
    opm_trace_diff *d = diff_ok(a, b);
    check_invariant(d, a, b);
    check_json(d, a, b);
    cr_expect_eq(opm_trace_diff_group_count(d), 4);
    const opm_trace_diff_entry *e;
    cr_assert_not_null(e = entry_of(d, "aten::relu", "aten::relu"));
    cr_expect_eq(e->match, OPM_TDIFF_ARGS);
    cr_assert_not_null(e = entry_of(d, "aten::mm", "aten::mm"));
    cr_expect_eq(e->match, OPM_TDIFF_PARAMS, "same m, n, k, dtype; strides differ");
    cr_assert_not_null(e = entry_of(d, "mylib::attn_flash", "mylib::attn_efficient"));
    cr_expect_eq(e->match, OPM_TDIFF_PLACE);
    cr_assert_not_null(e = entry_of(d, NULL, "mylib::extra"));
    cr_expect_eq(e->match, OPM_TDIFF_B_ONLY);
    cr_expect_eq(opm_trace_diff_group(d, 0), e, "the largest regression first: 8 µs more, all of it new");
    opm_trace_diff_free(d);
    opm_trace_report_free(a);
    opm_trace_report_free(b);
}

Test(trace_diff, null_report_is_an_error)
{
    opm_trace_report *a = report_dir("h100_bert");
    opm_error err;
    cr_expect_null(opm_trace_diff_new(a, NULL, &err));
    cr_expect_eq(err.code, OPM_EINVAL);
    cr_expect_null(opm_trace_diff_new(NULL, a, &err));
    cr_expect_null(opm_trace_diff_to_json(NULL, &err));
    cr_expect_eq(opm_trace_diff_group_count(NULL), 0);
    opm_trace_report_free(a);
}

/* Qwen's generation loop is GPU work no CPU op launched, named after
 * each vendor's kernels: the place pass pairs the SiLU kernels of both
 * runs (same op, other template arguments) and the two vendors' GEMMs,
 * and never a pair of different categories. */
Test(trace_diff, qwen_place_pairs_renamed_kernels)
{
    opm_trace_report *a = report_dir("h100_qwen"), *b = report_dir("mi300_qwen");
    opm_trace_diff *d = diff_ok(a, b);
    size_t place = 0;
    int silu = 0, gemm = 0;
    for (size_t i = 0; i < opm_trace_diff_group_count(d); i++) {
        const opm_trace_diff_entry *e = opm_trace_diff_group(d, i);
        if (e->match != OPM_TDIFF_PLACE) continue;
        place++;
        cr_expect_eq(e->a->category, e->b->category, "%s | %s", e->a->name, e->b->name);
        silu |= strstr(e->a->name, "silu_kernel") && strstr(e->b->name, "silu_kernel");
        gemm |= !strncmp(e->a->name, "sm90_xmma_gemm", 14) && !strncmp(e->b->name, "Cijk_", 5);
    }
    cr_expect_geq(place, 7, "place pairs: %zu", place);
    cr_expect(silu, "the two SiLU kernels pair");
    cr_expect(gemm, "cuBLAS's GEMM pairs with hipBLASLt's");
    opm_trace_diff_free(d);
    opm_trace_report_free(a);
    opm_trace_report_free(b);
}
