/* test_misuse.c — the library refuses misuse and hostile input with an error
 * value instead of succeeding silently, hanging or printing nonsense:
 * setters check keys against the kind, errors are cleared by a call that
 * succeeds, documents are capped, duplicate keys are found in linear time,
 * NUL and control characters are handled, non-finite predictions refused;
 * plus the version macros, opm_errstr and opm_free. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

Test(misuse, version_number_matches_headers)
{
    cr_assert_eq(opm_version_number(), OPM_VERSION_NUMBER);
    cr_assert_str_eq(opm_version(), OPM_VERSION_STRING);
    cr_assert_eq(OPM_VERSION_NUMBER, OPM_VERSION_MAJOR * 10000 + OPM_VERSION_MINOR * 100 + OPM_VERSION_PATCH);
}

Test(misuse, errstr_and_free)
{
    cr_assert_str_eq(opm_errstr(OPM_OK), "success");
    cr_assert_str_eq(opm_errstr(OPM_ENOMEM), "out of memory");
    cr_assert_str_eq(opm_errstr(12345), "unknown status");
    cr_assert_str_eq(opm_errstr(-1), "unknown status");
    opm_free(NULL);
    opm_free(malloc(16));
}

Test(misuse, setter_refuses_unknown_key_with_closest_name)
{
    opm_error err;
    opm_op *op = opm_op_attention(1, 128, 128, 8, 8, 64, 1, OPM_BF16, &err);
    cr_assert_not_null(op, "%s", err.message);
    cr_assert_eq(opm_op_set_int(op, "sliding_windw", 64, &err), OPM_EINVAL);
    cr_assert_str_eq(err.field, "attrs.sliding_windw");
    cr_assert(strstr(err.message, "did you mean 'sliding_window'"), "%s", err.message);
    cr_assert_eq(opm_op_has(op, "sliding_windw"), 0);
    cr_assert_eq(opm_op_set_int(op, "sliding_window", 64, &err), 0);
    cr_assert_eq(opm_op_set_bool(op, "no_such_attr_at_all", 1, &err), OPM_EINVAL);
    cr_assert_eq(opm_op_set_string(op, "sliding_windw", "x", NULL), OPM_EINVAL);
    opm_op_free(op);

    op = opm_op_gemm(64, 64, 64, OPM_BF16, &err);
    cr_assert_not_null(op);
    cr_assert_eq(opm_op_set_int(op, "split_kk", 2, &err), OPM_EINVAL);
    cr_assert(strstr(err.message, "did you mean 'split_k'"), "%s", err.message);
    cr_assert_eq(opm_op_set_int(op, "split_k", 2, &err), 0);
    opm_op_free(op);
}

Test(misuse, error_cleared_on_success)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    cr_assert_not_null(hw);
    opm_op *op = opm_op_gemm(256, 256, 256, OPM_BF16, &err);
    cr_assert_not_null(op);
    opm_profile p;
#define STALE() cr_assert_neq(opm_op_set_int(op, "bogus", 1, &err), 0)
#define CLEARED(what)                                                                 \
    cr_assert(err.code == OPM_OK && !err.message[0] && !err.field[0],                 \
              "%s left a stale error: %s", what, err.message)
    STALE();
    cr_assert_eq(opm_predict("roofline", op, hw, &p, &err), 0);
    CLEARED("opm_predict");
    STALE();
    cr_assert_eq(opm_op_validate(op, &err), 0);
    CLEARED("opm_op_validate");
    STALE();
    opm_counts c;
    cr_assert_eq(opm_op_count(op, &c, &err), 0);
    CLEARED("opm_op_count");
    STALE();
    cr_assert_eq(opm_op_set_bool(op, "bias", 1, &err), 0);
    CLEARED("opm_op_set_bool");
    STALE();
    char *text = opm_op_to_text(op, OPM_FORMAT_JSON, &err);
    cr_assert_not_null(text);
    CLEARED("opm_op_to_text");
    STALE();
    opm_op *back = opm_op_parse_string(text, strlen(text), OPM_FORMAT_JSON, "<t>", 1, &err);
    cr_assert_not_null(back);
    CLEARED("opm_op_parse_string");
    STALE();
    opm_op *copy = opm_op_clone(back, &err);
    cr_assert_not_null(copy);
    CLEARED("opm_op_clone");
    STALE();
    char *json = opm_profile_to_json(&p, &err);
    cr_assert_not_null(json);
    CLEARED("opm_profile_to_json");
    STALE();
    opm_op *g = opm_op_gemm(8, 8, 8, OPM_FP32, &err);
    cr_assert_not_null(g);
    CLEARED("opm_op_gemm");
#undef STALE
#undef CLEARED
    opm_free(text);
    opm_free(json);
    opm_op_free(g);
    opm_op_free(copy);
    opm_op_free(back);
    opm_op_free(op);
    opm_hardware_free(hw);
}

Test(misuse, embedded_nul_refused)
{
    static const char yaml[] = "kind: \"gemm\\0xyz\"\nm: 8\nn: 8\nk: 8\ndtype: bf16\n";
    rejected(yaml, "NUL");
    static const char json[] = "{\"kind\": \"gemm\\u0000xyz\", \"m\": 8, \"n\": 8, \"k\": 8, \"dtype\": \"bf16\"}";
    opm_error err;
    opm_op *op = opm_op_parse_string(json, strlen(json), OPM_FORMAT_JSON, "<line>", 3, &err);
    cr_assert_null(op);
    cr_assert(strstr(err.message, "NUL"), "%s", err.message);
}

Test(misuse, control_characters_escaped_in_messages)
{
    rejected("kind: \"gem\\nm\"\n", "'gem\\nm'");
    rejected("kind: gemm\nm: 8\nn: 8\nk: 8\ndtype: \"bf\\t16\\u0001\"\n", "'bf\\t16\\x01'");
    rejected("kind: gemm\nm: 8\nn: 8\nk: 8\ndtype: bf16\nattrs: {\"a\\rb\": 1}\n", "a\\rb");
}

Test(misuse, non_json_line_is_not_empty_input)
{
    const char *lines[] = {"hello", "xyz}", "[1, 2", "kind: gemm"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        opm_error err;
        opm_op *op = opm_op_parse_string(lines[i], strlen(lines[i]), OPM_FORMAT_JSON, "<line>", 1, &err);
        cr_assert_null(op);
        cr_assert_null(strstr(err.message, "empty input"), "'%s' gave: %s", lines[i], err.message);
    }
    opm_error err;
    cr_assert_null(opm_op_parse_string("   ", 3, OPM_FORMAT_JSON, "<line>", 1, &err));
    cr_assert(strstr(err.message, "empty input"), "%s", err.message);
}

Test(misuse, document_cap)
{
    size_t len = OPM_DOCUMENT_MAX_BYTES + 1;
    char *big = malloc(len);
    cr_assert_not_null(big);
    memset(big, ' ', len);
    opm_error err;
    cr_assert_null(opm_op_parse_string(big, len, OPM_FORMAT_YAML, "<big>", 1, &err));
    cr_assert_eq(err.code, OPM_EINVAL);
    cr_assert(strstr(err.message, "64 MiB"), "%s", err.message);
    free(big);
    /* An endless file ends with the same error instead of a hang. */
    cr_assert_null(opm_op_parse_file("/dev/zero", &err));
    cr_assert(strstr(err.message, "/dev/zero") && strstr(err.message, "64 MiB"), "%s", err.message);
    cr_assert_null(opm_hardware_load_file("/dev/zero", &err));
    cr_assert(strstr(err.message, "64 MiB"), "%s", err.message);
}

/* A map of `keys` distinct keys under name: (so the op is refused after the
 * whole document is parsed), optionally ending with a repeat of key 0. */
static char *many_keys(int json, size_t keys, int dup)
{
    size_t cap = 32 * keys + 256, n = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    n += (size_t)snprintf(s + n, cap - n, json ? "{\"kind\": \"gemm\", \"name\": {" : "kind: gemm\nname:\n");
    for (size_t i = 0; i < keys + (dup != 0); i++) {
        size_t k = i < keys ? i : 0;
        if (json) n += (size_t)snprintf(s + n, cap - n, "%s\"key%zu\": 1", i ? ", " : "", k);
        else n += (size_t)snprintf(s + n, cap - n, "  key%zu: 1\n", k);
    }
    if (json) snprintf(s + n, cap - n, "}}");
    return s;
}

Test(misuse, duplicate_keys_linear)
{
    for (int json = 0; json < 2; json++)
        for (int dup = 0; dup < 2; dup++) {
            char *text = many_keys(json, 80000, dup);
            opm_error err;
            double t0 = now_s();
            opm_op *op = opm_op_parse_string(text, strlen(text), json ? OPM_FORMAT_JSON : OPM_FORMAT_YAML,
                                             "<keys>", 1, &err);
            double dt = now_s() - t0;
            cr_assert_null(op);
            if (dup) cr_assert(strstr(err.message, "key0: duplicate key"), "%s", err.message);
            else cr_assert(strstr(err.message, "name: expected a string"), "%s", err.message);
            /* Quadratic checks took 20-50 s here; linear ones well under 0.1 s
             * (this bound leaves room for sanitizers and a loaded machine). */
            cr_assert(dt < 5.0, "%s, %s: %.2f s for 80,000 keys", json ? "JSON" : "YAML",
                      dup ? "with a duplicate" : "distinct", dt);
            free(text);
        }
    /* Small maps still find duplicates (the pairwise path). */
    rejected("kind: gemm\nm: 8\nm: 8\n", "m: duplicate key");
    rejected("{\"kind\": \"gemm\", \"m\": 8, \"n\": 8, \"m\": 8}", "m: duplicate key");
}

Test(misuse, non_finite_prediction_refused)
{
    opm_error err;
    opm_hardware *base = opm_hardware_builtin("h100_sxm", &err);
    cr_assert_not_null(base);
    char *yaml = opm_hardware_to_yaml(base, &err);
    cr_assert_not_null(yaml);
    char *at = strstr(yaml, "name: hbm");
    cr_assert_not_null(at);
    char *bw = strstr(at, "bandwidth_bytes_per_s: ");
    cr_assert_not_null(bw);
    bw += strlen("bandwidth_bytes_per_s: ");
    size_t digits = strspn(bw, "0123456789.e+");
    cr_assert_geq(digits, 6);
    char *edited = malloc(strlen(yaml) + 16);
    cr_assert_not_null(edited);
    snprintf(edited, strlen(yaml) + 16, "%.*s1e-300%s", (int)(bw - yaml), yaml, bw + digits);
    opm_hardware *hw = opm_hardware_load_string(edited, strlen(edited), "<tiny-bw>", &err);
    cr_assert_not_null(hw, "%s", err.message);
    opm_op *op = opm_op_gemm(4096, 4096, 4096, OPM_BF16, &err);
    opm_profile p;
    for (size_t i = 0; i < opm_model_count(); i++) {
        int rc = opm_predict(opm_model_at(i)->name, op, hw, &p, &err);
        cr_assert_eq(rc, OPM_EINVAL, "%s: rc %d", opm_model_at(i)->name, rc);
        cr_assert(strstr(err.message, "not a finite number"), "%s", err.message);
    }
    opm_op_free(op);
    opm_hardware_free(hw);
    free(edited);
    opm_free(yaml);
    opm_hardware_free(base);
}
