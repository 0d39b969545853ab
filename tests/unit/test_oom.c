/* test_oom.c — allocation failures inside the library: a setter whose
 * allocation fails reports OPM_ENOMEM and leaves the op whole (the other
 * attributes kept, the failed one unset, the op still printable).  The
 * executable links with -Wl,--wrap=malloc (tests/meson.build), so every
 * malloc of the static library comes through oom_malloc's countdown. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

/* 0: no failure armed; k > 0: the k-th malloc from now fails. */
static int fail_in;

void *__wrap_malloc(size_t n)
{
    if (fail_in > 0 && --fail_in == 0) return NULL;
    return __real_malloc(n);
}

static opm_op *parse(const char *js)
{
    opm_error err;
    opm_op *op = opm_op_parse_string(js, strlen(js), OPM_FORMAT_JSON, "test", 1, &err);
    cr_assert_not_null(op, "%s", err.message);
    return op;
}

/* The op prints, and holds exactly the attributes named (in order). */
static void expect_attrs(const opm_op *op, const char *const *keys, size_t n)
{
    cr_assert_eq(opm_op_attr_count(op), n);
    for (size_t i = 0; i < n; i++) cr_assert_str_eq(opm_op_attr_key(op, i), keys[i]);
    opm_error err;
    char *text = opm_op_to_text(op, OPM_FORMAT_JSON, &err);
    cr_assert_not_null(text, "%s", err.message);
    free(text);
}

Test(oom, set_string_that_fails_on_an_existing_key_unsets_only_it)
{
    opm_op *op = parse("{\"kind\": \"elementwise\", \"inputs\": [[4, 8], [4, 8]], \"dtype\": \"bf16\", \"op\": \"add\"}");
    opm_error err;
    cr_assert_eq(opm_op_set_string(op, "l2_warm", "input", &err), 0, "%s", err.message);
    fail_in = 1;
    cr_assert_eq(opm_op_set_string(op, "op", "mul", &err), OPM_ENOMEM);
    cr_assert_eq(fail_in, 0);
    static const char *const keys[] = {"l2_warm"};
    expect_attrs(op, keys, 1);
    cr_assert_str_eq(opm_op_get_string(op, "l2_warm", ""), "input");
    cr_assert_str_eq(opm_op_get_string(op, "op", "unset"), "unset");
    /* The op takes the attribute again once memory is back. */
    cr_assert_eq(opm_op_set_string(op, "op", "mul", &err), 0, "%s", err.message);
    cr_assert_str_eq(opm_op_get_string(op, "op", ""), "mul");
    opm_op_free(op);
}

Test(oom, set_ints_that_fails_on_an_existing_key_unsets_only_it)
{
    opm_op *op = parse("{\"kind\": \"attention_prefill\", \"batch\": 2, \"seq_q\": 64, \"seq_kv\": 64, \"heads\": 8, "
                       "\"kv_heads\": 8, \"head_dim\": 64, \"dtype\": \"bf16\"}");
    opm_error err;
    size_t n0 = opm_op_attr_count(op);
    const int64_t lens[] = {64, 64};
    cr_assert_eq(opm_op_set_ints(op, "seq_lens", lens, 2, &err), 0, "%s", err.message);
    cr_assert_eq(opm_op_set_bool(op, "causal", 1, &err), 0, "%s", err.message);
    fail_in = 1;
    cr_assert_eq(opm_op_set_ints(op, "seq_lens", lens, 2, &err), OPM_ENOMEM);
    cr_assert_eq(opm_op_attr_count(op), n0 + 1);
    cr_assert(opm_op_get_bool(op, "causal", 0));
    const int64_t *v;
    cr_assert_eq(opm_op_get_ints(op, "seq_lens", &v), 0);
    char *text = opm_op_to_text(op, OPM_FORMAT_JSON, &err);
    cr_assert_not_null(text, "%s", err.message);
    free(text);
    opm_op_free(op);
}

Test(oom, set_string_that_fails_on_a_new_key_adds_nothing)
{
    opm_op *op = parse("{\"kind\": \"elementwise\", \"inputs\": [[4, 8], [4, 8]], \"dtype\": \"bf16\", \"op\": \"add\"}");
    opm_error err;
    fail_in = 1;
    cr_assert_eq(opm_op_set_string(op, "l2_warm", "input", &err), OPM_ENOMEM);
    static const char *const keys[] = {"op"};
    expect_attrs(op, keys, 1);
    cr_assert_str_eq(opm_op_get_string(op, "op", ""), "add");
    opm_op_free(op);
}
