/* test_validate_general.c — `opmodel validate`'s library part
 * (src/validate/general.c): the shipped tiny measurement file's counts and
 * breakdowns, exact statistics against predictions made here one op at a
 * time, every kind of bad line counted with the first named FILE:LINE:
 * field, unknown hardware, the fixed-overhead calibration (set size, ties
 * in file order, the bound at 0, groups by hardware and source), folders
 * (recursive, sorted, *.jsonl only), clock_mhz, hardware given by path,
 * CRLF / byte order mark / blank lines, energy, limiting resources, and the
 * errors that stop a run. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "testutil.h"
#include "validate/general.h"

/* ---- helpers ---- */

static char tmp_root[256];

static void make_tmp(void) { tmp_dir(tmp_root, sizeof tmp_root, "opm_vgen_"); }

static void remove_tmp(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    cr_assert_eq(system(cmd), 0);
}

static const char *tmp_path(const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", tmp_root, name);
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* A validation of `model` over one path; fails the test on error. */
static void load(opm_general *v, const char *path, const char *model, int calibrate)
{
    opm_error err;
    cr_assert_eq(opm_general_init(v, model, calibrate, &err), 0, "%s", err.message);
    cr_assert_eq(opm_general_add_path(v, path, "--data", &err), 0, "%s", err.message);
    cr_assert_eq(opm_general_score(v, &err), 0, "%s", err.message);
}

/* The latency and energy `model` predicts for the JSON op on hardware hw. */
static opm_profile predicted(const char *model, const char *hw_name, double clock_mhz, const char *op_text)
{
    opm_hardware *hw = builtin_hw(hw_name);
    if (clock_mhz > 0) {
        opm_error err;
        opm_hardware *c = opm_hardware_with_clock(hw, clock_mhz * 1e6, &err);
        cr_assert_not_null(c, "%s", err.message);
        opm_hardware_free(hw);
        hw = c;
    }
    opm_op *op = op_json(op_text);
    opm_profile p = predict_ok(model, op, hw);
    opm_op_free(op);
    opm_hardware_free(hw);
    return p;
}

static long source_id(const opm_general *v, const char *name)
{
    for (size_t i = 0; i < v->source_tab.count; i++)
        if (!strcmp(v->source_tab.strs[i], name)) return (long)i;
    return -1;
}

static long hw_id(const opm_general *v, const char *name)
{
    for (size_t i = 0; i < v->n_hw; i++)
        if (!strcmp(v->hw_tab.strs[i], name)) return (long)i;
    return -1;
}

/* A line of hardware hw, op `op`, measured latency_s, source (NULL: none). */
static void put_line(FILE *f, const char *hw, const char *op, double latency_s, const char *source)
{
    fprintf(f, "{\"hardware\": \"%s\", \"op\": %s, \"measured\": {\"latency_s\": %.17g}", hw, op, latency_s);
    if (source) fprintf(f, ", \"source\": \"%s\"", source);
    fputs("}\n", f);
}

#define GOOD_OP "{\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"bf16\"}"
#define GOOD_LINE "{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}}"

/* ---- the shipped tiny file ---- */

Test(validate_general, tiny_file_counts_and_breakdowns)
{
    char path[512];
    opm_general v;
    load(&v, src_path("tests/data/validate/tiny.jsonl", path, sizeof path), "extended_roofline", 0);
    cr_assert_eq(v.files, 1);
    cr_assert_eq(v.n_lines, 6);
    cr_assert_eq(v.rows, 6);
    cr_assert_eq(v.rows_failed, 0, "%s", v.first_bad);
    cr_assert_eq(v.rows_unknown_hw, 0);
    cr_assert_eq(v.calibration_rows, 0);
    cr_assert_str_empty(v.first_bad);
    cr_assert_eq(v.time.overall.n, 6);
    cr_assert_eq(v.time.by_kind[OPM_KIND_GEMM].n, 3);
    cr_assert_eq(v.time.by_kind[OPM_KIND_RMSNORM].n, 1);
    cr_assert_eq(v.time.by_kind[OPM_KIND_ATTENTION_DECODE].n, 1);
    cr_assert_eq(v.time.by_kind[OPM_KIND_COPY].n, 1);
    cr_assert_eq(v.n_hw, 2);
    cr_assert_eq(v.time.by_hw[hw_id(&v, "a100_40gb_pcie")].n, 3);
    cr_assert_eq(v.time.by_hw[hw_id(&v, "h100_sxm")].n, 3);
    cr_assert_eq(v.time.by_source[source_id(&v, "bench/a")].n, 3);
    cr_assert_eq(v.time.by_source[source_id(&v, "bench/b")].n, 2);
    cr_assert_eq(v.time.by_source[source_id(&v, "unknown")].n, 1, "a line without a source is under unknown");
    /* Size classes only for the gemm lines: m = 1 is vector_like, the
     * 4096³ and 2048×28672×8192 GEMMs large. */
    cr_assert_eq(v.time.by_class[GC_VECTOR_LIKE].n, 1);
    cr_assert_eq(v.time.by_class[GC_LARGE].n, 2);
    size_t classed = 0;
    for (int c = 0; c < GC_COUNT; c++) classed += v.time.by_class[c].n;
    cr_assert_eq(classed, 3);
    /* energy_j on two lines (the third's is null: absent). */
    cr_assert_eq(v.energy_rows, 2);
    cr_assert_eq(v.energy.overall.n, 2);
    cr_assert_eq(v.energy.by_kind[OPM_KIND_ATTENTION_DECODE].n, 1);
    opm_general_free(&v);
}

/* ---- exact statistics ---- */

Test(validate_general, statistics_against_single_predictions, .init = make_tmp, .fini = remove_tmp)
{
    static const char *const ops[4] = {
        "{\"kind\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\"}",
        "{\"kind\": \"rmsnorm\", \"shape\": [8192, 4096], \"dtype\": \"bf16\"}",
        "{\"kind\": \"copy\", \"shape\": [4096, 4096], \"dtype\": \"fp32\"}",
        /* One literal in two pieces (parenthesised: not two entries). */
        ("{\"kind\": \"attention_decode\", \"batch\": 8, \"seq_q\": 1, \"seq_kv\": 2048, \"heads\": 32, "
         "\"kv_heads\": 8, \"head_dim\": 128, \"dtype\": \"bf16\"}"),
    };
    /* measured = predicted × f: predicted/measured is 1/f. */
    static const double f[4] = {2, 0.5, 1.25, 1};
    char path[512];
    FILE *out = fopen(tmp_path("m.jsonl", path, sizeof path), "w");
    cr_assert_not_null(out);
    for (int i = 0; i < 4; i++) {
        opm_profile p = predicted("roofline", "h100_sxm", 0, ops[i]);
        fprintf(out, "{\"hardware\": \"h100_sxm\", \"op\": %s, \"measured\": {\"latency_s\": %.17g, \"energy_j\": %.17g}}\n",
                ops[i], p.latency_s * f[i], p.energy_j * f[i]);
    }
    fclose(out);
    opm_general v;
    load(&v, path, "roofline", 0);
    cr_assert_eq(v.rows, 4, "%s", v.first_bad);
    const opm_err_stats *s = &v.time.overall;
    /* APEs 50, 100, 20, 0. */
    cr_assert_float_eq(s->mape, 42.5, 1e-9);
    cr_assert_float_eq(s->median_ape, 35.0, 1e-9);
    cr_assert_float_eq(s->p90_ape, 100.0, 1e-9);
    cr_assert_float_eq(s->geomean_ratio, pow(0.5 * 2 * 0.8 * 1, 0.25), 1e-12);
    cr_assert_float_eq(s->signed_mean_error, 7.5, 1e-9);
    /* The same errors for energy, and per kind one line each. */
    cr_assert_eq(v.energy_rows, 4);
    cr_assert_float_eq(v.energy.overall.mape, 42.5, 1e-9);
    cr_assert_float_eq(v.time.by_kind[OPM_KIND_RMSNORM].mape, 100.0, 1e-9);
    cr_assert_float_eq(v.time.by_kind[OPM_KIND_RMSNORM].geomean_ratio, 2.0, 1e-12);
    cr_assert_float_eq(v.time.by_kind[OPM_KIND_COPY].signed_mean_error, -20.0, 1e-9);
    /* The record keeps the model's values. */
    opm_profile p0 = predicted("roofline", "h100_sxm", 0, ops[0]);
    cr_assert_eq(v.lines[0].predicted_s, p0.latency_s);
    cr_assert_eq(v.lines[0].predicted_j, p0.energy_j);
    cr_assert_eq(v.lines[0].line, 1);
    cr_assert_eq(v.lines[3].line, 4);
    opm_general_free(&v);
}

/* ---- bad lines ---- */

typedef struct bad_case {
    const char *line;            /* the second line of a file whose first is good */
    const char *named;           /* first_bad past "PATH:2: " */
} bad_case;

Test(validate_general, bad_lines_counted_first_named, .init = make_tmp, .fini = remove_tmp)
{
    static const bad_case cases[] = {
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP "}",
         "measured: expected an object with latency_s (and optionally energy_j), got nothing (the key is missing)"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": -1e-5}}",
         "measured.latency_s: expected a positive number of seconds, got '-1e-5'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 0}}",
         "measured.latency_s: expected a positive number of seconds, got '0'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e999}}",
         "measured.latency_s: expected a positive number of seconds, got '1e999'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": \"1e-5\"}}",
         "measured.latency_s: expected a positive number of seconds, got '1e-5'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5, \"energy\": 1}}",
         "measured.energy: expected latency_s or energy_j, got an unknown key (did you mean 'energy_j'?)"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5, \"energy_j\": -2}}",
         "measured.energy_j: expected a positive number of joules, got '-2'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}, \"sorce\": \"x\"}",
         "sorce: expected one of hardware, clock_mhz, op, measured, source, timing, kernel, got an unknown key "
         "(did you mean 'source'?)"},
        {"{\"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}}",
         "hardware: expected a built-in hardware name or a hardware file path, got nothing (the key is missing)"},
        {"{\"hardware\": 7, \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}}",
         "hardware: expected a built-in hardware name or a hardware file path, got '7'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"clock_mhz\": \"fast\", \"op\": " GOOD_OP
         ", \"measured\": {\"latency_s\": 1e-5}}",
         "clock_mhz: expected a clock from 1 to 100000 MHz, got 'fast'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"clock_mhz\": 5000, \"op\": " GOOD_OP
         ", \"measured\": {\"latency_s\": 1e-5}}",
         "clock_mhz: expected at most sm_max_clock_hz = 1410 MHz, got 5000 MHz"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}, \"timing\": \"wall\"}",
         "timing: expected graph, eager, kernel or events, got 'wall'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}, \"source\": 3}",
         "source: expected a string, got '3'"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}, \"kernel\": []}",
         "kernel: expected a string, got a list"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": [1], \"measured\": {\"latency_s\": 1e-5}}",
         "op: expected an operation object (full or short form, contract §1), got a list"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": {\"kind\": \"gemm\", \"m\": 64, \"n\": 64, \"dtype\": \"bf16\"}, "
         "\"measured\": {\"latency_s\": 1e-5}}",
         "op.k: missing; the short form of gemm needs it"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": {\"kind\": \"gemmm\", \"m\": 64, \"n\": 64, \"k\": 64, "
         "\"dtype\": \"bf16\"}, \"measured\": {\"latency_s\": 1e-5}}",
         "op.kind: expected a known op kind (see `opmodel ops`), got 'gemmm' (did you mean 'gemm'?)"},
        {"{\"hardware\": \"a100_40gb_pcie\", \"op\": {\"kind\": \"gemm\", \"tensors\": [{\"role\": \"input\", "
         "\"shape\": [0, 8], \"dtype\": \"bf16\"}]}, \"measured\": {\"latency_s\": 1e-5}}",
         "op.tensors[0].shape: expected positive integer dimensions, got '0'"},
        {"[1, 2]", "expected a measurement object {\"hardware\", \"op\", \"measured\", ...}, got a list"},
    };
    char path[512];
    tmp_path("bad.jsonl", path, sizeof path);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char text[2048], want[1024];
        snprintf(text, sizeof text, "%s\n%s\n", GOOD_LINE, cases[c].line);
        write_text(path, text);
        opm_general v;
        load(&v, path, "extended_roofline", 0);
        cr_assert_eq(v.rows_failed, 1, "case %zu: %zu bad lines", c, v.rows_failed);
        cr_assert_eq(v.rows, 1, "case %zu", c);
        snprintf(want, sizeof want, "%s:2: %s", path, cases[c].named);
        cr_assert_str_eq(v.first_bad, want, "case %zu", c);
        opm_general_free(&v);
    }
    /* Invalid JSON: the document reader's located message. */
    write_text(path, GOOD_LINE "\n{\"hardware\": \"a100_40gb_pcie\", \"op\": " GOOD_OP "\n");
    opm_general v;
    load(&v, path, "extended_roofline", 0);
    cr_assert_eq(v.rows_failed, 1);
    char want[600];
    snprintf(want, sizeof want, "%s:2:", path);
    cr_assert(!strncmp(v.first_bad, want, strlen(want)) && strstr(v.first_bad, "invalid JSON"), "%s", v.first_bad);
    opm_general_free(&v);
}

Test(validate_general, many_bad_lines_keep_the_first, .init = make_tmp, .fini = remove_tmp)
{
    char path[512], want[600];
    FILE *f = fopen(tmp_path("many.jsonl", path, sizeof path), "w");
    cr_assert_not_null(f);
    fputs(GOOD_LINE "\n\n", f); /* a blank line 2 is skipped but counted */
    for (int i = 0; i < 1000; i++) fputs(i % 2 ? "not json\n" : "{\"hardware\": \"t4\"}\n", f);
    fputs(GOOD_LINE "\n", f);
    fclose(f);
    opm_general v;
    load(&v, path, "roofline", 0);
    cr_assert_eq(v.rows_failed, 1000);
    cr_assert_eq(v.rows, 2);
    cr_assert_eq(v.lines[1].line, 1003);
    snprintf(want, sizeof want, "%s:3: measured: expected", path);
    cr_assert(!strncmp(v.first_bad, want, strlen(want)), "%s", v.first_bad);
    opm_general_free(&v);
}

Test(validate_general, unknown_hardware_skipped_and_counted, .init = make_tmp, .fini = remove_tmp)
{
    char path[512], yaml[512];
    /* A hardware file that does not exist, and a built-in name that is not one. */
    char text[2048];
    snprintf(text, sizeof text,
             "%s\n"
             "{\"hardware\": \"no_such_gpu\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}}\n"
             "{\"hardware\": \"%s\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}}\n"
             "{\"hardware\": \"no_such_gpu\", \"op\": " GOOD_OP ", \"measured\": {\"latency_s\": 1e-5}}\n",
             GOOD_LINE, tmp_path("missing.yaml", yaml, sizeof yaml));
    write_text(tmp_path("hw.jsonl", path, sizeof path), text);
    opm_general v;
    load(&v, path, "extended_roofline", 0);
    cr_assert_eq(v.rows_unknown_hw, 3);
    cr_assert_eq(v.rows_failed, 0, "%s", v.first_bad);
    cr_assert_eq(v.rows, 1);
    cr_assert_eq(v.n_hw, 3, "each name opened once");
    char want[600];
    snprintf(want, sizeof want, "%s:2: hardware: ", path);
    cr_assert(!strncmp(v.first_unknown_hw, want, strlen(want)) && strstr(v.first_unknown_hw, "no_such_gpu"), "%s",
              v.first_unknown_hw);
    cr_assert_eq(v.time.by_hw[hw_id(&v, "no_such_gpu")].n, 0);
    opm_general_free(&v);
}

/* ---- calibration ---- */

Test(validate_general, calibration_sets_and_overheads, .init = make_tmp, .fini = remove_tmp)
{
    char path[512], op[256];
    FILE *f = fopen(tmp_path("cal.jsonl", path, sizeof path), "w");
    cr_assert_not_null(f);
    const double oh = 10e-6;
    /* Group h100|s: 6 lines, measured = predicted + 10 us; written largest
     * first, so the 3 calibration lines (6 / 2) are the last three. */
    for (int i = 5; i >= 0; i--) {
        snprintf(op, sizeof op, "{\"kind\": \"gemm\", \"m\": %d, \"n\": 2048, \"k\": 2048, \"dtype\": \"bf16\"}", 256 << i);
        put_line(f, "h100_sxm", op, predicted("extended_roofline", "h100_sxm", 0, op).latency_s + oh, "s");
    }
    /* Group h100|t: 20 lines, at most 8 calibrate. */
    for (int i = 0; i < 20; i++) {
        snprintf(op, sizeof op, "{\"kind\": \"rmsnorm\", \"shape\": [%d, 4096], \"dtype\": \"bf16\"}", 64 * (i + 1));
        put_line(f, "h100_sxm", op, predicted("extended_roofline", "h100_sxm", 0, op).latency_s * 1.5, "t");
    }
    /* Group a100|unknown: one line, no calibration line (half of 1 is 0). */
    put_line(f, "a100_40gb_pcie", GOOD_OP, 1e-5, NULL);
    /* Group t4|ties: 4 equal lines: the first two in file order calibrate. */
    for (int i = 0; i < 4; i++) put_line(f, "t4", GOOD_OP, 2e-5 + i * 1e-6, "ties");
    /* Group t4|fast: measured below predicted: the overhead is bounded at 0. */
    for (int i = 0; i < 4; i++) {
        snprintf(op, sizeof op, "{\"kind\": \"copy\", \"shape\": [%d, 1024], \"dtype\": \"fp32\"}", 1024 * (i + 1));
        put_line(f, "t4", op, predicted("extended_roofline", "t4", 0, op).latency_s * 0.5, "fast");
    }
    fclose(f);

    opm_general u, v;
    load(&u, path, "extended_roofline", 0);
    load(&v, path, "extended_roofline", 1);
    cr_assert_eq(u.rows, 35);
    cr_assert_eq(u.calibration_rows, 0);
    cr_assert_eq(v.calibration_rows, 3 + 8 + 0 + 2 + 2);
    cr_assert_eq(v.rows + v.calibration_rows, u.rows, "calibration lines move out of scoring");
    cr_assert_eq(v.group_tab.count, 5);
    for (size_t g = 0; g < v.group_tab.count; g++) {
        const opm_general_group *gr = &v.groups[g];
        const char *src = v.source_tab.strs[gr->source];
        if (!strcmp(src, "s")) {
            cr_assert_eq(gr->cal_rows, 3);
            cr_assert_float_eq(gr->overhead_s, oh, 1e-15);
        } else if (!strcmp(src, "t")) {
            cr_assert_eq(gr->cal_rows, 8);
            cr_assert(gr->overhead_s > 0);
        } else if (!strcmp(src, "unknown")) {
            cr_assert_eq(gr->cal_rows, 0);
            cr_assert_eq(gr->overhead_s, 0);
        } else if (!strcmp(src, "ties")) {
            cr_assert_eq(gr->cal_rows, 2);
        } else {
            cr_assert_str_eq(src, "fast");
            cr_assert_eq(gr->cal_rows, 2);
            cr_assert_eq(gr->overhead_s, 0, "a negative overhead is not applied");
        }
    }
    /* Which lines: the 3 smallest GEMMs (file lines 4-6), the 8 smallest
     * rmsnorms (lines 7-14), the first two of the ties (lines 28, 29). */
    for (size_t i = 0; i < v.n_lines; i++) {
        unsigned ln = v.lines[i].line;
        int want = (ln >= 4 && ln <= 6) || (ln >= 7 && ln <= 14) || ln == 28 || ln == 29 || ln == 32 || ln == 33;
        cr_assert_eq(v.lines[i].is_cal, want, "line %u", ln);
    }
    /* The held-out GEMMs are predicted + 10 us exactly as measured. */
    long s = source_id(&v, "s");
    cr_assert_eq(v.time.by_source[s].n, 3);
    cr_assert_lt(v.time.by_source[s].mape, 1e-6);
    cr_assert_gt(u.time.by_source[s].mape, 0.1);
    for (size_t i = 0; i < v.n_lines; i++)
        if (v.lines[i].group == v.lines[0].group)
            cr_assert_float_eq(opm_general_line_predicted_s(&v, &v.lines[i]), v.lines[i].predicted_s + oh, 1e-15);
    opm_general_free(&u);
    opm_general_free(&v);
}

/* ---- inputs ---- */

Test(validate_general, folder_recursive_sorted_jsonl_only, .init = make_tmp, .fini = remove_tmp)
{
    char dir[512], p[600];
    tmp_path("data", dir, sizeof dir);
    cr_assert_eq(mkdir(dir, 0755), 0);
    snprintf(p, sizeof p, "%s/sub", dir);
    cr_assert_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/b.jsonl", dir);
    write_text(p, GOOD_LINE "\n" GOOD_LINE "\n");
    snprintf(p, sizeof p, "%s/sub/a.jsonl", dir);
    write_text(p, GOOD_LINE "\n");
    snprintf(p, sizeof p, "%s/a.jsonl.txt", dir);
    write_text(p, "not read\n");
    snprintf(p, sizeof p, "%s/.hidden.jsonl", dir);
    write_text(p, "not read\n");
    opm_general v;
    load(&v, dir, "roofline", 0);
    cr_assert_eq(v.files, 2);
    cr_assert_eq(v.rows, 3);
    cr_assert_eq(v.rows_failed, 0, "%s", v.first_bad);
    /* "DIR/b.jsonl" sorts before "DIR/sub". */
    snprintf(p, sizeof p, "%s/b.jsonl", dir);
    cr_assert_str_eq(v.file_tab.strs[v.lines[0].file], p);
    snprintf(p, sizeof p, "%s/sub/a.jsonl", dir);
    cr_assert_str_eq(v.file_tab.strs[v.lines[2].file], p);
    opm_general_free(&v);

    /* Two paths add up; a folder without *.jsonl and a missing path are errors. */
    opm_error err;
    cr_assert_eq(opm_general_init(&v, "roofline", 0, &err), 0);
    cr_assert_eq(opm_general_add_path(&v, dir, "--data", &err), 0, "%s", err.message);
    cr_assert_eq(opm_general_add_path(&v, p, "--data", &err), 0, "%s", err.message);
    cr_assert_eq(v.n_lines, 4);
    snprintf(p, sizeof p, "%s/sub/empty", dir);
    cr_assert_eq(mkdir(p, 0755), 0);
    cr_assert_eq(opm_general_add_path(&v, p, "--data", &err), OPM_EINVAL);
    cr_assert(strstr(err.message, "--data: no *.jsonl files under"), "%s", err.message);
    snprintf(p, sizeof p, "%s/none.jsonl", dir);
    cr_assert_eq(opm_general_add_path(&v, p, "--data", &err), OPM_EIO);
    cr_assert(strstr(err.message, "none.jsonl"), "%s", err.message);
    opm_general_free(&v);
}

Test(validate_general, crlf_bom_and_blank_lines, .init = make_tmp, .fini = remove_tmp)
{
    char path[512];
    write_text(tmp_path("crlf.jsonl", path, sizeof path),
               "\xEF\xBB\xBF" GOOD_LINE "\r\n\r\n   \t\n  " GOOD_LINE "  \r\n");
    opm_general v;
    load(&v, path, "roofline", 0);
    cr_assert_eq(v.rows_failed, 0, "%s", v.first_bad);
    cr_assert_eq(v.rows, 2);
    cr_assert_eq(v.lines[0].line, 1);
    cr_assert_eq(v.lines[1].line, 4);
    opm_general_free(&v);
}

Test(validate_general, clock_and_hardware_path, .init = make_tmp, .fini = remove_tmp)
{
    char path[512], yaml[512], text[4096];
    /* The built-in t4 written to a file, named by its path. */
    opm_hardware *t4 = builtin_hw("t4");
    opm_error err;
    char *t4_yaml = opm_hardware_to_yaml(t4, &err);
    cr_assert_not_null(t4_yaml, "%s", err.message);
    write_text(tmp_path("my_t4.yaml", yaml, sizeof yaml), t4_yaml);
    opm_free(t4_yaml);
    opm_hardware_free(t4);
    const char *op = "{\"kind\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\"}";
    snprintf(text, sizeof text,
             "{\"hardware\": \"h100_sxm\", \"clock_mhz\": 700, \"op\": %s, \"measured\": {\"latency_s\": 1e-3}}\n"
             "{\"hardware\": \"h100_sxm\", \"op\": %s, \"measured\": {\"latency_s\": 1e-3}}\n"
             "{\"hardware\": \"h100_sxm\", \"clock_mhz\": 700, \"op\": %s, \"measured\": {\"latency_s\": 1e-3}}\n"
             "{\"hardware\": \"h100_sxm\", \"clock_mhz\": 1000, \"op\": %s, \"measured\": {\"latency_s\": 1e-3}}\n"
             "{\"hardware\": \"%s\", \"op\": %s, \"measured\": {\"latency_s\": 1e-3}}\n"
             "{\"hardware\": \"%s\", \"op\": %s, \"measured\": {\"latency_s\": 1e-3}}\n",
             op, op, op, op, yaml, op, yaml, op);
    write_text(tmp_path("clk.jsonl", path, sizeof path), text);
    opm_general v;
    load(&v, path, "extended_roofline", 0);
    cr_assert_eq(v.rows, 6, "%s", v.first_bad);
    cr_assert_eq(v.n_hw, 2, "a hardware path is one hardware however many lines name it");
    cr_assert_str_eq(v.hw_tab.strs[v.lines[4].hw], yaml);
    cr_assert_eq(v.clock_tab.count, 2, "one copy per (hardware, clock)");
    cr_assert_eq(v.lines[0].predicted_s, predicted("extended_roofline", "h100_sxm", 700, op).latency_s);
    cr_assert_eq(v.lines[1].predicted_s, predicted("extended_roofline", "h100_sxm", 0, op).latency_s);
    cr_assert_eq(v.lines[2].predicted_s, v.lines[0].predicted_s);
    cr_assert_eq(v.lines[3].predicted_s, predicted("extended_roofline", "h100_sxm", 1000, op).latency_s);
    cr_assert_gt(v.lines[0].predicted_s, v.lines[1].predicted_s * 1.5, "a compute-bound GEMM slows at 700 MHz");
    cr_assert_eq(v.lines[4].predicted_s, predicted("extended_roofline", "t4", 0, op).latency_s);
    opm_general_free(&v);
}

Test(validate_general, bound_and_limiting_kept, .init = make_tmp, .fini = remove_tmp)
{
    char path[512];
    write_text(tmp_path("lim.jsonl", path, sizeof path),
               "{\"hardware\": \"h100_sxm\", \"op\": {\"kind\": \"copy\", \"shape\": [8192, 8192], \"dtype\": \"fp32\"}, "
               "\"measured\": {\"latency_s\": 1e-3}}\n"
               "{\"hardware\": \"h100_sxm\", \"op\": {\"kind\": \"gemm\", \"m\": 8192, \"n\": 8192, \"k\": 8192, "
               "\"dtype\": \"bf16\"}, \"measured\": {\"latency_s\": 1e-3}}\n");
    opm_general v;
    load(&v, path, "roofline", 0);
    cr_assert_eq(v.rows, 2, "%s", v.first_bad);
    cr_assert_eq(v.lines[0].bound, OPM_BOUND_MEMORY);
    cr_assert_neq(v.lines[0].limiting, OPM_GENERAL_NONE);
    cr_assert_str_eq(v.limiting_tab.strs[v.lines[0].limiting], "hbm", "roofline's limiting_level");
    cr_assert_eq(v.lines[1].bound, OPM_BOUND_COMPUTE);
    cr_assert_eq(v.lines[0].kind, OPM_KIND_COPY);
    cr_assert_eq(v.lines[0].cls, OPM_GENERAL_NO_CLASS);
    cr_assert_eq(v.lines[1].cls, GC_LARGE);
    cr_assert(isnan(v.lines[0].measured_j));
    cr_assert_eq(v.energy_rows, 0);
    opm_general_free(&v);
}

Test(validate_general, errors_that_stop_a_run)
{
    opm_general v;
    opm_error err;
    cr_assert_eq(opm_general_init(&v, "no_such_model", 0, &err), OPM_ENOTFOUND);
    cr_assert(strstr(err.message, "no_such_model"), "%s", err.message);
    opm_general_free(&v);
    /* An endless line ends with the line-length error, not exhausted memory. */
    cr_assert_eq(opm_general_init(&v, "roofline", 0, &err), 0);
    cr_assert_eq(opm_general_add_path(&v, "/dev/zero", "--data", &err), OPM_EINVAL);
    cr_assert(strstr(err.message, "/dev/zero:1: expected a line of at most 64 MiB"), "%s", err.message);
    opm_general_free(&v);
}

/* A `timing: events` line (CUDA events around one eager call) holds the host's
 * dispatch: its prediction gets the host's launch interval, other lines none. */
Test(validate_general, events_lines_get_the_host_dispatch, .init = make_tmp, .fini = remove_tmp)
{
    char path[512];
    tmp_path("t.jsonl", path, sizeof path);
    const char *op = "{\"kind\": \"softmax\", \"shape\": [4096, 1024], \"dtype\": \"fp32\"}";
    char text[1024];
    snprintf(text, sizeof text,
             "{\"hardware\": \"v100_pcie_32gb\", \"op\": %s, \"measured\": {\"latency_s\": 1e-4}, \"timing\": \"events\"}\n"
             "{\"hardware\": \"v100_pcie_32gb\", \"op\": %s, \"measured\": {\"latency_s\": 1e-4}, \"timing\": \"kernel\"}\n"
             "{\"hardware\": \"v100_pcie_32gb\", \"op\": %s, \"measured\": {\"latency_s\": 1e-4}}\n",
             op, op, op);
    write_text(path, text);
    double model_s = predicted("extended_roofline", "v100_pcie_32gb", 0, op).latency_s;
    opm_general v;
    load(&v, path, "extended_roofline", 0);
    cr_assert_eq(v.n_lines, 3);
    double host_s = opm_workload_host_at(0)->launch_interval_s;
    cr_assert(host_s > 0);
    cr_assert_float_eq(v.lines[0].predicted_s, model_s + host_s, 1e-12);
    cr_assert_float_eq(v.lines[1].predicted_s, model_s, 1e-15);
    cr_assert_float_eq(v.lines[2].predicted_s, model_s, 1e-15);
    opm_general_free(&v);
    /* A caller's own host figure replaces the default. */
    opm_error err;
    cr_assert_eq(opm_general_init(&v, "extended_roofline", 0, &err), 0);
    v.events_host_s = 5e-6;
    cr_assert_eq(opm_general_add_path(&v, path, "--data", &err), 0, "%s", err.message);
    cr_assert_float_eq(v.lines[0].predicted_s, model_s + 5e-6, 1e-12);
    opm_general_free(&v);
}
