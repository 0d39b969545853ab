/* test_io.c — op text in and out: short form expands to the full form,
 * full form round-trips through YAML and JSON, JSONL lines parse with their
 * line numbers, and a prediction's JSON has every field of contract §3. */
#include <criterion/criterion.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "io/io_internal.h"

static void same_op(const opm_op *a, const opm_op *b)
{
    cr_assert_str_eq(opm_op_name(a), opm_op_name(b));
    cr_assert_eq(opm_op_kind(a), opm_op_kind(b));
    cr_assert_eq(opm_op_phase(a), opm_op_phase(b));
    cr_assert_eq(opm_op_tensor_count(a), opm_op_tensor_count(b));
    for (size_t i = 0; i < opm_op_tensor_count(a); i++)
        cr_assert_eq(memcmp(opm_op_tensor(a, i), opm_op_tensor(b, i), sizeof(opm_tensor)), 0, "tensor %zu", i);
    cr_assert_eq(opm_op_attr_count(a), opm_op_attr_count(b));
    opm_counts ca, cb;
    opm_error err;
    cr_assert_eq(opm_op_count(a, &ca, &err), 0);
    cr_assert_eq(opm_op_count(b, &cb, &err), 0);
    cr_assert_eq(memcmp(&ca, &cb, sizeof ca), 0);
}

static void round_trip(const opm_op *op)
{
    for (int json = 0; json < 2; json++) {
        opm_error err;
        char *text = opm_op_to_text(op, json ? OPM_FORMAT_JSON : OPM_FORMAT_YAML, &err);
        cr_assert_not_null(text);
        opm_op *back = opm_op_parse_string(text, strlen(text), json ? OPM_FORMAT_JSON : OPM_FORMAT_YAML, "<rt>", 1, &err);
        cr_assert_not_null(back, "%s\n%s", err.message, text);
        same_op(op, back);
        opm_op_free(back);
        free(text);
    }
}

Test(io, short_form_expands_to_full_form)
{
    opm_op *s = op_yaml("name: up\nkind: gemm\nphase: prefill\nm: 128\nn: 256\nk: 64\ndtype: bf16\nout_dtype: fp32\n"
                        "transpose_b: true\n");
    opm_op *f = op_yaml("name: up\nkind: gemm\nphase: prefill\ntensors:\n"
                        "  - {role: input, shape: [128, 64], dtype: bf16}\n"
                        "  - {role: weight, shape: [256, 64], dtype: bf16}\n"
                        "  - {role: output, shape: [128, 256], dtype: fp32}\n"
                        "attrs: {transpose_b: true}\n");
    same_op(s, f);
    round_trip(s);
    opm_op_free(s);
    opm_op_free(f);
}

Test(io, every_example_round_trips)
{
    const char *ex[] = {"gemm.yaml", "gemm_short.yaml", "gemm_train_bwd.yaml", "gemm_extended_roofline.yaml",
                        "batched_gemm.json", "attention_prefill.yaml", "attention_decode.yaml",
                        "attention_full.yaml", "softmax.yaml", "layernorm.yaml", "rmsnorm.yaml",
                        "elementwise.yaml", "swiglu.yaml", "reduction.yaml", "embedding.yaml", "copy.yaml"};
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        char rel[128], p[512];
        snprintf(rel, sizeof rel, "examples/%s", ex[i]);
        opm_error err;
        opm_op *op = opm_op_parse_file(src_path(rel, p, sizeof p), &err);
        cr_assert_not_null(op, "%s", err.message);
        round_trip(op);
        opm_op_free(op);
    }
}

Test(io, jsonl_line_numbers_in_errors)
{
    const char *line = "{\"kind\": \"gemm\", \"m\": 4, \"n\": 4, \"k\": 0, \"dtype\": \"bf16\"}";
    opm_error err;
    opm_op *op = opm_op_parse_string(line, strlen(line), OPM_FORMAT_JSON, "ops.jsonl", 17, &err);
    cr_assert_null(op);
    cr_assert(strstr(err.message, "ops.jsonl:17"), "%s", err.message);
    cr_assert(strstr(err.message, "k: expected a positive integer"), "%s", err.message);
    const char *broken = "{\"kind\": \"gemm\", ";
    cr_assert_null(opm_op_parse_string(broken, strlen(broken), OPM_FORMAT_JSON, "ops.jsonl", 3, &err));
    cr_assert(strstr(err.message, "ops.jsonl:3:"), "%s", err.message);
}

Test(io, yaml_errors_point_at_line_and_column)
{
    const char *t = "kind: gemm\ntensors:\n  - {role: input, shape: [4, 8], dtype: bf16}\n"
                    "  - {role: weight, shape: [9, 4], dtype: bf16}\n  - {role: output, shape: [4, 4], dtype: bf16}\n";
    opm_error err;
    cr_assert_null(opm_op_parse_string(t, strlen(t), OPM_FORMAT_YAML, "f.yaml", 1, &err));
    cr_assert(strstr(err.message, "f.yaml:4:27: tensors[1].shape: expected the weight's inner dimension to equal the input's K = 8, got 9"),
              "%s", err.message);
    cr_assert_null(strchr(err.message, '\n'));
}

Test(io, unknown_keys_suggest)
{
    const char *t = "kind: gemm\nm: 4\nn: 4\nkk: 4\ndtype: bf16\n";
    opm_error err;
    cr_assert_null(opm_op_parse_string(t, strlen(t), OPM_FORMAT_YAML, "f.yaml", 1, &err));
    cr_assert(strstr(err.message, "f.yaml:4:1: kk: unknown key"), "%s", err.message);
    cr_assert(strstr(err.message, "did you mean 'k'"), "%s", err.message);
}

Test(io, profile_json_has_contract_fields)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("a100_40gb_pcie", &err);
    opm_op *op = op_yaml("name: \"quote\\\"d\"\nkind: gemm\nm: 64\nn: 64\nk: 64\ndtype: bf16\n");
    opm_profile p;
    cr_assert_eq(opm_predict("roofline", op, hw, &p, &err), 0);
    char *text = opm_profile_to_json(&p, &err);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    cr_assert_not_null(j, "%s: %s", je.text, text);
    const char *keys[] = {"name", "kind", "phase", "model", "hardware", "latency_s", "flops", "engine", "bound",
                          "arithmetic_intensity", "memory_access", "footprint", "energy_j", "energy_breakdown",
                          "diagnostics"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) cr_assert_not_null(json_object_get(j, keys[i]), "%s", keys[i]);
    cr_assert_str_eq(json_string_value(json_object_get(j, "name")), "quote\"d");
    json_t *hbm = json_object_get(json_object_get(j, "memory_access"), "hbm");
    cr_assert_eq(json_integer_value(json_object_get(hbm, "read_bytes")), 2 * 64 * 64 * 2);
    json_t *eb = json_object_get(j, "energy_breakdown");
    const char *ek[] = {"compute_j", "hbm_j", "l2_j", "static_j"};
    for (size_t i = 0; i < 4; i++) cr_assert_not_null(json_object_get(eb, ek[i]), "%s", ek[i]);
    /* Predictions print 12 significant digits. */
    cr_assert_leq(rel_diff(json_real_value(json_object_get(j, "latency_s")), p.latency_s), 5e-12);
    json_decref(j);
    free(text);
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* The batch's cache of number texts (opm_num_cache) changes no byte: a
 * profile written line after line with its diagnostics and average power
 * drawn from a pool of 1000 doubles (repeats, and more values than the
 * cache has entries, so entries are replaced) prints what the writer
 * without the cache prints, including the longest texts, zeros, infinities
 * and NaN. */
Test(io, profile_json_number_cache_changes_nothing)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    opm_op *op = op_yaml("kind: gemm\nm: 64\nn: 64\nk: 64\ndtype: bf16\n");
    opm_profile p;
    cr_assert_eq(opm_predict("roofline", op, hw, &p, &err), 0);
    cr_assert_gt(p.diag_count, 2);
    double pool[1000];
    uint64_t x = 88172645463325252u;
    for (size_t i = 0; i < 1000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t bits = x;
        double v;
        memcpy(&v, &bits, sizeof v);
        pool[i] = i % 5 == 0 ? v : i % 5 == 1 ? -1.23456789012e-308 * (double)(i % 7 + 1)
                                 : i % 5 == 2 ? (double)(x % 100000) / 7.0 : i % 5 == 3 ? 9.999999999995 * (double)i
                                                                                       : 700;
    }
    pool[1] = 0, pool[2] = -0.0, pool[3] = INFINITY, pool[4] = -INFINITY, pool[6] = NAN;
    opm_num_cache cache = {0};
    strbuf with = {0}, without = {0};
    with.nums = &cache;
    for (size_t line = 0; line < 5000; line++) {
        p.average_power_w = pool[(line * 7) % 1000];
        for (size_t i = 0; i < p.diag_count; i++)
            if (!p.diags[i].is_text) p.diags[i].number = pool[(line * 13 + i * 31) % (line % 3 ? 1000 : 16)];
        with.n = without.n = 0;
        opm_profile_write_json(&p, &with);
        opm_profile_write_json(&p, &without);
        cr_assert(!with.oom && !without.oom);
        cr_assert_str_eq(with.p, without.p, "line %zu", line);
    }
    free(with.p);
    free(without.p);
    opm_op_free(op);
    opm_hardware_free(hw);
}

/* JSON string literals stay valid JSON whatever the bytes: well-formed UTF-8
 * passes through, a stray byte, an overlong form and a cut sequence each
 * become U+FFFD, control characters are escaped. */
Test(io, json_strings_replace_malformed_utf8)
{
    strbuf b = {0};
    sb_json_string(&b, "caf\xc3\xa9 \xff|\xc0\xaf|\xe2\x82|\x01\"");
    cr_assert(!b.oom);
    cr_assert_str_eq(b.p, "\"caf\xc3\xa9 \xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\\u0001\\\"\"");
    free(b.p);
}

/* opm_put_json_string tests eight bytes at a time: a byte to escape at
 * every position of strings of every length up to past two words, and a
 * NUL (the end) there, give what the byte-by-byte rule gives. */
Test(io, json_strings_escape_at_every_position)
{
    static const char specials[] = {'"', '\\', '\x01', '\x1f', '\x7f', '\0'};
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at < len; at++)
            for (size_t k = 0; k < sizeof specials; k++) {
                char src[48], want[128], got[6 * 48 + 2 + 16];
                memset(src, 'a', len);
                src[len] = '\0';
                src[at] = specials[k];
                size_t w = 0;
                want[w++] = '"';
                for (size_t i = 0; i < len && src[i]; i++) {
                    unsigned char c = (unsigned char)src[i];
                    if (c == '"' || c == '\\') want[w++] = '\\', want[w++] = (char)c;
                    else if (c < 0x20) w += (size_t)snprintf(want + w, sizeof want - w, "\\u%04x", c);
                    else want[w++] = (char)c;
                }
                want[w++] = '"';
                want[w] = '\0';
                char *end = opm_put_json_string(got, src, len + 1);
                *end = '\0';
                cr_assert_str_eq(got, want, "len %zu, byte %zu = %#x", len, at, (unsigned char)specials[k]);
            }
}

/* `predict --batch` reads flat short forms through its own scanner
 * (op_line.c) and everything else through the full parser: every line must
 * give the same op, or the same error message, either way. */
Test(io, json_line_fast_path_matches_the_parser)
{
    static const char *const lines[] = {
        "{\"name\": \"q\", \"kind\": \"gemm\", \"m\": 128, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\"}",
        "{\"kind\":\"gemm\",\"m\":1,\"n\":2,\"k\":3,\"dtype\":\"fp8_e4m3\",\"out_dtype\":\"bf16\",\"bias\":true}",
        "  {\"kind\": \"gemm\", \"phase\": \"train_bwd\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"fp16\"}  ",
        "{\"kind\": \"rmsnorm\", \"shape\": [4096, 8192], \"dtype\": \"bf16\"}",
        "{\"kind\": \"elementwise\", \"inputs\": [[16, 4096], [16, 4096]], \"dtype\": \"bf16\", \"op\": \"add\"}",
        ("{\"kind\": \"attention_prefill\", \"batch\": 2, \"seq_q\": 512, \"seq_kv\": 512, \"heads\": 8, "
         "\"kv_heads\": 8, \"head_dim\": 128, \"causal\": false, \"dtype\": \"bf16\"}"),
        "{\"kind\": \"gemm\", \"m\": 1e3, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",          /* exponent */
        "{\"kind\": \"gemm\", \"m\": 10.0, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",         /* fraction */
        "{\"kind\": \"gemm\", \"m\": 99999999999999999999, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 9223372036854775807, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": -5, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 0, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 012, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",          /* not JSON */
        "{\"kind\": \"gemm\", \"m\": 1, \"m\": 2, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",  /* repeated key */
        "{\"kind\": \"gemm\", \"mm\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",          /* unknown key */
        "{\"kind\": \"gemm\", \"m\": null, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": \"12\", \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf17\"}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"} x",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"",
        "{\"kind\": \"gemm\", \"name\": \"a\\nb\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"name\": \"caf\xc3\xa9\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"name\": 7, \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm \", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"phase\": \"decod\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"attrs\": {\"bias\": true}, \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\"}",
        "{\"kind\": \"rmsnorm\", \"shape\": [], \"dtype\": \"bf16\"}",
        "{\"kind\": \"rmsnorm\", \"shape\": [[4, 4]], \"dtype\": \"bf16\"}",
        "{\"kind\": \"elementwise\", \"inputs\": [[16, 4096], 3], \"dtype\": \"bf16\"}",
        "{\"kind\": \"elementwise\", \"inputs\": [[16, 4096], []], \"dtype\": \"bf16\"}",
        "{\"kind\": \"softmax\", \"tensors\": [{\"role\": \"input\", \"shape\": [4, 8], \"dtype\": \"fp32\"}]}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\", \"cta_tile_m\": 4294967296}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\", \"bias\": \"true\"}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\", \"bias\": tru}",
        "{}", "[]", "", "{\"kind\": 5}", "{\"kind\": \"nope\"}",
        /* flat GEMM lines (the direct route) and their near misses */
        "{\"name\": \"p\", \"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"fp8\"}",
        "{\"kind\": \"gemm\", \"dtype\": \"int4\", \"k\": 7, \"n\": 5, \"m\": 3}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"BF16\"}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"\"}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"fp8_e4m3_and_much_longer\"}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": 16}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": true, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": [5], \"k\": 7, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 3, \"k\": 7, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"bf16\", \"weight_dtype\": \"int8\"}",
        "{\"kind\": \"gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"bf16\", \"transpose_a\": true}",
        "{\"kind\": \"gemm\", \"phase\": \"train_bwd\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"fp32\"}",
        "{\"kind\": \"gemm\", \"m\": 4294967296, \"n\": 4294967296, \"k\": 4294967296, \"dtype\": \"fp32\"}",
        "{\"kind\": \"batched_gemm\", \"batch\": 2, \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"bf16\"}",
        "{\"kind\": \"batched_gemm\", \"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"bf16\"}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        const char *l = lines[i];
        opm_error e1, e2;
        opm_op *a = opm_op_parse_json_line(l, strlen(l), "f.jsonl", 7, NULL, &e1);
        opm_op *b = opm_op_parse_string(l, strlen(l), OPM_FORMAT_JSON, "f.jsonl", 7, &e2);
        cr_assert_eq(!a, !b, "line %zu: %s", i, l);
        if (a) {
            cr_assert_str_eq(opm_op_name(a), opm_op_name(b));
            cr_assert_eq(opm_op_phase(a), opm_op_phase(b));
            cr_assert_eq(opm_op_tensor_count(a), opm_op_tensor_count(b), "line %zu", i);
            for (size_t t = 0; t < opm_op_tensor_count(a); t++)
                cr_assert_eq(memcmp(opm_op_tensor(a, t), opm_op_tensor(b, t), sizeof(opm_tensor)), 0, "line %zu", i);
            opm_counts ca, cb;
            cr_assert_eq(opm_op_count(a, &ca, &e1), opm_op_count(b, &cb, &e2), "line %zu", i);
            char *ta = opm_op_to_text(a, OPM_FORMAT_JSON, &e1), *tb = opm_op_to_text(b, OPM_FORMAT_JSON, &e2);
            cr_assert_str_eq(ta, tb, "line %zu", i);
            free(ta);
            free(tb);
        } else {
            cr_assert_eq(e1.code, e2.code, "line %zu", i);
            cr_assert_str_eq(e1.message, e2.message, "line %zu", i);
        }
        opm_op_free(a);
        opm_op_free(b);
    }
}

/* `predict --batch` rebuilds one op line after line (opm_op_parse_json_line
 * takes the previous one over): every line, good or bad, after any other,
 * gives the same op or message as a fresh parse. */
Test(io, json_line_reused_op_matches_the_parser)
{
    static const char *const lines[] = {
        "{\"name\": \"a longer name than the next\", \"kind\": \"elementwise\", \"inputs\": [[16, 4096], "
        "[16, 4096]], \"dtype\": \"bf16\", \"op\": \"add\"}",
        "{\"name\": \"q\", \"kind\": \"gemm\", \"m\": 128, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\"}",
        "{\"kind\":\"gemm\",\"m\":1,\"n\":2,\"k\":3,\"dtype\":\"fp8_e4m3\",\"out_dtype\":\"bf16\",\"bias\":true}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf17\"}",
        "{\"kind\": \"rmsnorm\", \"shape\": [4096, 8192], \"dtype\": \"bf16\"}",
        "not json",
        "{\"name\": \"x\", \"kind\": \"attention_prefill\", \"batch\": 2, \"seq_q\": 512, \"seq_kv\": 512, "
        "\"heads\": 8, \"kv_heads\": 8, \"head_dim\": 128, \"causal\": true, \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\", \"cta_tile_m\": 4294967296}",
        "{\"kind\": \"softmax\", \"tensors\": [{\"role\": \"input\", \"shape\": [4, 8], \"dtype\": \"fp32\"}]}",
        "{\"name\": \"a name of more than sixteen bytes, to grow the buffer\", \"kind\": \"batched_gemm\", "
        "\"batch\": 3, \"m\": 100, \"n\": 7, \"k\": 9, \"dtype\": \"fp32\", \"transpose_b\": true}",
        "{\"kind\": \"elementwise\", \"inputs\": [[16, 4096], 3], \"dtype\": \"bf16\"}",
        "{\"kind\": \"gemm\", \"m\": 64, \"n\": 2, \"k\": 3, \"dtype\": \"bf16\", \"weight_dtype\": \"int4\", "
        "\"weight_group_size\": 32}",
    };
    opm_op *r = NULL;
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
            const char *l = lines[i];
            opm_error e1, e2;
            r = opm_op_parse_json_line(l, strlen(l), "f.jsonl", 7, r, &e1);
            opm_op *b = opm_op_parse_string(l, strlen(l), OPM_FORMAT_JSON, "f.jsonl", 7, &e2);
            cr_assert_eq(!r, !b, "line %zu: %s", i, l);
            if (r) {
                cr_assert_eq(e1.code, OPM_OK, "line %zu", i);
                char *ta = opm_op_to_text(r, OPM_FORMAT_JSON, &e1), *tb = opm_op_to_text(b, OPM_FORMAT_JSON, &e2);
                cr_assert_str_eq(ta, tb, "line %zu", i);
                free(ta);
                free(tb);
                opm_counts ca, cb;
                cr_assert_eq(opm_op_count(r, &ca, &e1), 0, "line %zu", i);
                cr_assert_eq(opm_op_count(b, &cb, &e2), 0, "line %zu", i);
                cr_assert_eq(memcmp(&ca, &cb, sizeof ca), 0, "line %zu", i);
            } else {
                cr_assert_eq(e1.code, e2.code, "line %zu", i);
                cr_assert_str_eq(e1.message, e2.message, "line %zu", i);
            }
            opm_op_free(b);
        }
    opm_op_free(r);
}

/* Prediction numbers: 12 significant digits, %g's layout, exactly as before
 * the formatter lost its log10 and sprintf calls (the values near powers of
 * ten and near the 12th digit's rounding are where an exponent estimate
 * could go wrong). */
Test(io, sig12_text)
{
    static const struct { double v; const char *text; } cases[] = {
        {1, "1"}, {10, "10"}, {0.1, "0.1"}, {1e-5, "1e-05"}, {1.5e-05, "1.5e-05"}, {0.0001, "0.0001"},
        {123456789012.0, "123456789012"}, {999999999999.0, "999999999999"}, {1e12, "1e+12"},
        {9.999999999995, "10"}, {9.99999999999, "9.99999999999"}, {989400000000000.0, "9.894e+14"},
        {0.99999999999951, "1"}, {4.5067736621e-05, "4.5067736621e-05"}, {124.121212121, "124.121212121"},
        {-2.5, "-2.5"}, {1e100, "1e+100"}, {1.7976931348623157e308, "1.79769313486e+308"},
        {5e-324, "4.94065645841e-324"}, {2.2250738585072014e-308, "2.22507385851e-308"}, {0, "0"},
        {0.30000000000000004, "0.3"}, {1e-300, "1e-300"}, {123.456, "123.456"}, {1e22, "1e+22"},
        {1e23, "1e+23"}, {9.99999999999e-5, "9.99999999999e-05"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[48];
        size_t n = opm_format_sig12(cases[i].v, buf);
        cr_assert_str_eq(buf, cases[i].text, "%.17g", cases[i].v);
        cr_assert_eq(n, strlen(buf));
    }
}

/* The formatter's corpus: bit patterns (NaN, infinities and subnormals
 * among them), 12-digit decimals at every scale with the 12th digit's ties
 * (13 digits ending in 5) and their neighbours, 64 doubles either side of
 * every power of ten and below 999999999999 and 9999999999995 at every
 * scale, integers, short decimals and subnormals.  Decimals come from
 * strtod, which rounds correctly everywhere, so the corpus is the same on
 * every platform. */
static uint64_t corpus_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double corpus_dec(uint64_t mant, int exp10)
{
    char t[48];
    snprintf(t, sizeof t, "%llue%d", (unsigned long long)mant, exp10);
    return strtod(t, NULL);
}

static void sig12_corpus(long n, void (*f)(double, void *), void *ctx)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 5e-324, 2.2250738585072014e-308,
                                     2.2250738585072009e-308, 1.7976931348623157e308, 1, 10, 0.1, 700,
                                     9.999999999995, 9.99999999999, 0.99999999999951, 999999999999.5,
                                     999999999999.4999, 99999999999.95, 1e12, 1e11, 1e-4, 1e-5, 1e22, 1e23};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) f(special[i], ctx), f(-special[i], ctx);
    for (long i = 0; i < n; i++) {
        uint64_t b = corpus_rng(&s);
        double v;
        memcpy(&v, &b, sizeof v);
        f(v, ctx);
    }
    for (long i = 0; i < n; i++) {
        int e = (int)(corpus_rng(&s) % 640) - 330;
        uint64_t m = 100000000000ULL + corpus_rng(&s) % 900000000000ULL;
        double v = corpus_dec(m, e - 11), h = corpus_dec(10 * m + 5, e - 12);
        f(v, ctx), f(nextafter(v, 0), ctx), f(nextafter(v, INFINITY), ctx);
        f(h, ctx), f(nextafter(h, 0), ctx), f(nextafter(h, INFINITY), ctx);
    }
    for (int e = -325; e <= 309; e++) {
        double lo = corpus_dec(1, e), hi = lo, a = corpus_dec(999999999999ULL, e - 11),
               b = corpus_dec(9999999999995ULL, e - 12);
        for (int k = 0; k < 64; k++) {
            f(lo, ctx), f(hi, ctx), f(a, ctx), f(b, ctx);
            lo = nextafter(lo, 0), hi = nextafter(hi, INFINITY), a = nextafter(a, 0), b = nextafter(b, INFINITY);
        }
    }
    for (long i = 0; i < n / 4; i++) {
        uint64_t r = corpus_rng(&s);
        f((double)(r % 1000000000000000ULL), ctx);
        f((double)(r % 100000) / 1000, ctx);
        uint64_t b = r & 0x800fffffffffffffULL;
        double v;
        memcpy(&v, &b, sizeof v);
        f(v, ctx);
    }
}

typedef struct sig12_check {
    long values, unlike_printf;
    uint64_t fnv;
} sig12_check;

/* What the rule promises for each value, against the C library: zero (of
 * either sign) is "0", a non-finite value null; any other text is what
 * %.12g prints for the decimal it denotes (so: at most 12 significant
 * digits, no trailing zeros, %g's choice of fixed or exponent form, e%+03d),
 * and that decimal is within half a unit of its 12th digit of v, with a
 * thousandth of a unit to spare: v scaled by a power of ten is rounded in
 * double arithmetic, half up, so a value a hair below a tie can round up
 * where %.12g rounds down (9.999999999995 prints 10, %.12g 9.99999999999).
 * Long double holds subnormals' decimals to more than 12 digits. */
static void sig12_against_printf(double v, void *ctx)
{
    sig12_check *c = ctx;
    char t[48], back[64], g[64];
    size_t n = opm_format_sig12(v, t);
    cr_assert_eq(n, strlen(t));
    c->values++;
    if (v == 0 || !isfinite(v)) {
        cr_assert_str_eq(t, v == 0 ? "0" : "null", "%.17g", v);
        return;
    }
    long double r = strtold(t, NULL);
    snprintf(back, sizeof back, "%.12Lg", r);
    if (LDBL_MANT_DIG > DBL_MANT_DIG || fabs(v) >= DBL_MIN)
        cr_assert_str_eq(t, back, "%.17g: '%s' is not how %%.12g writes its own value", v, t);
    snprintf(g, sizeof g, "%.12g", v);
    if (strcmp(g, t) == 0) return;
    c->unlike_printf++;
    snprintf(back, sizeof back, "%.11Le", r);
    long double unit = powl(10.0L, atoi(strchr(back, 'e') + 1) - 11);
    long double off = fabsl(r - (long double)v);
    if (LDBL_MANT_DIG > DBL_MANT_DIG || fabs(v) >= DBL_MIN)
        cr_assert(off <= 0.501L * unit, "%.17g: '%s' (printf '%s') is %.4Lf units off", v, t, g, off / unit);
}

static void sig12_hash(double v, void *ctx)
{
    sig12_check *c = ctx;
    char t[48];
    size_t n = opm_format_sig12(v, t);
    for (size_t i = 0; i <= n; i++) c->fnv = (c->fnv ^ (unsigned char)t[i]) * 0x100000001b3ULL;
    c->values++;
}

Test(io, sig12_rule)
{
    sig12_check c = {0};
    sig12_corpus(30000, sig12_against_printf, &c);
    cr_assert_eq(c.values, 395110);
    /* ties and their neighbours are a large part of the corpus */
    cr_assert(c.unlike_printf > 0 && c.unlike_printf < c.values / 5, "%ld", c.unlike_printf);
}

/* Byte for byte what the formatter printed before its digits moved to SIMD
 * lanes (commit 8ec71b3), over 937,610 values: every path (the fast one,
 * the search, zero, non-finite, subnormals) and both outcomes of each
 * rounding.  A change of this hash is a change of the output. */
Test(io, sig12_frozen)
{
    sig12_check c = {0, 0, 0xcbf29ce484222325ULL};
    sig12_corpus(100000, sig12_hash, &c);
    cr_assert_eq(c.values, 937610);
    cr_assert_eq(c.fnv, 0x680cc8dd3d13a358ULL, "0x%016llx", (unsigned long long)c.fnv);
}
