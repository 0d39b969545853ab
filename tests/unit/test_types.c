/* test_types.c — names and sizes of the small vocabularies. */
#include <criterion/criterion.h>
#include "testutil.h"

Test(types, dtype_names_round_trip)
{
    for (int i = 0; i < OPM_DTYPE_COUNT; i++) {
        opm_dtype d;
        cr_assert_eq(opm_dtype_parse(opm_dtype_name((opm_dtype)i), &d), 0);
        cr_assert_eq((int)d, i);
    }
    opm_dtype d;
    cr_assert_eq(opm_dtype_parse("fp8", &d), 0);
    cr_assert_eq(d, OPM_FP8_E4M3);
    cr_assert_neq(opm_dtype_parse("float", &d), 0);
}

Test(types, dtype_sizes)
{
    cr_assert_float_eq(opm_dtype_bytes(OPM_FP64), 8, 0);
    cr_assert_float_eq(opm_dtype_bytes(OPM_TF32), 4, 0);
    cr_assert_float_eq(opm_dtype_bytes(OPM_BF16), 2, 0);
    cr_assert_float_eq(opm_dtype_bytes(OPM_FP8_E5M2), 1, 0);
    cr_assert_float_eq(opm_dtype_bytes(OPM_INT4), 0.5, 0);
    cr_assert_str_eq(opm_dtype_name((opm_dtype)99), "?");
}

Test(types, kinds_phases_roles)
{
    for (int i = 0; i < OPM_KIND_COUNT; i++) {
        opm_kind k;
        cr_assert_eq(opm_kind_parse(opm_kind_name((opm_kind)i), &k), 0);
        cr_assert_eq((int)k, i);
    }
    for (int i = 0; i < OPM_PHASE_COUNT; i++) {
        opm_phase p;
        cr_assert_eq(opm_phase_parse(opm_phase_name((opm_phase)i), &p), 0);
        cr_assert_eq((int)p, i);
    }
    for (int i = 0; i < OPM_ROLE_COUNT; i++) {
        opm_role r;
        cr_assert_eq(opm_role_parse(opm_role_name((opm_role)i), &r), 0);
    }
    cr_assert_str_eq(opm_engine_name(OPM_ENGINE_TENSOR), "tensor");
    cr_assert_str_eq(opm_bound_name(OPM_BOUND_MEMORY), "memory");
    cr_assert_str_eq(opm_version(), "0.1.0");
}
