/* common.c — the kind registry and the helpers kind files share: tensor
 * lookup with errors, shape checks, the error for a value outside a closed
 * set, short-form key reading, broadcasting. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "kind.h"

static const opm_kind_def *const kinds[OPM_KIND_COUNT] = {
    [OPM_KIND_GEMM] = &opm_kind_gemm,
    [OPM_KIND_BATCHED_GEMM] = &opm_kind_batched_gemm,
    [OPM_KIND_ATTENTION_PREFILL] = &opm_kind_attention_prefill,
    [OPM_KIND_ATTENTION_DECODE] = &opm_kind_attention_decode,
    [OPM_KIND_SOFTMAX] = &opm_kind_softmax,
    [OPM_KIND_LAYERNORM] = &opm_kind_layernorm,
    [OPM_KIND_RMSNORM] = &opm_kind_rmsnorm,
    [OPM_KIND_ELEMENTWISE] = &opm_kind_elementwise,
    [OPM_KIND_REDUCTION] = &opm_kind_reduction,
    [OPM_KIND_EMBEDDING] = &opm_kind_embedding,
    [OPM_KIND_COPY] = &opm_kind_copy,
    [OPM_KIND_GROUPED_GEMM] = &opm_kind_grouped_gemm,
    [OPM_KIND_CONV] = &opm_kind_conv,
    [OPM_KIND_ATTENTION] = &opm_kind_attention,
    [OPM_KIND_BATCHNORM] = &opm_kind_batchnorm,
    [OPM_KIND_GROUPNORM] = &opm_kind_groupnorm,
    [OPM_KIND_INSTANCENORM] = &opm_kind_instancenorm,
    [OPM_KIND_CROSS_ENTROPY] = &opm_kind_cross_entropy,
    [OPM_KIND_ROPE] = &opm_kind_rope,
    [OPM_KIND_CAUSAL_CONV1D] = &opm_kind_causal_conv1d,
    [OPM_KIND_MAMBA_SSD] = &opm_kind_mamba_ssd,
    [OPM_KIND_MOE_DISPATCH] = &opm_kind_moe_dispatch,
    [OPM_KIND_MOE_COMBINE] = &opm_kind_moe_combine,
    [OPM_KIND_FUSED_MOE] = &opm_kind_fused_moe,
};


const opm_kind_def *opm_kind_def_get(opm_kind k) { return (unsigned)k < OPM_KIND_COUNT ? kinds[k] : NULL; }

int opm_kind_count_validates(const opm_kind_def *def)
{
    /* gemm and batched_gemm: validate() is dims(), which count() calls
     * first (src/ops/gemm.c).  A kind joins this list only when that holds
     * for it; the others' validate() checks things count() does not (l2_warm). */
    return def == &opm_kind_gemm || def == &opm_kind_batched_gemm;
}

const opm_attr_def *opm_kind_find_attr(const opm_kind_def *def, const char *key)
{
    /* Every setter looks its key up here: the first byte rules most out. */
    for (const opm_attr_def *a = def->attrs; a && a->key; a++)
        if (a->key[0] == key[0] && strcmp(a->key, key) == 0) return a;
    return NULL;
}

size_t opm_kind_attr_names(const opm_kind_def *def, const char **names, size_t cap)
{
    size_t n = 0;
    for (const opm_attr_def *a = def->attrs; a && a->key && n < cap; a++) names[n++] = a->key;
    return n;
}

const char *opm_attr_type_text(opm_attr_type t)
{
    switch (t) {
    case OPM_ATTR_BOOL: return "a boolean (true or false)";
    case OPM_ATTR_INT: return "an integer";
    case OPM_ATTR_DOUBLE: return "a number";
    case OPM_ATTR_STRING: return "a string";
    default: return "a list of integers";
    }
}

void opm_tensor_field(const opm_op *op, const opm_tensor *t, const char *suffix, char *buf, size_t cap)
{
    size_t idx = 0;
    for (size_t i = 0; i < opm_op_tensor_count(op); i++)
        if (opm_op_tensor(op, i) == t) idx = i;
    snprintf(buf, cap, "tensors[%zu]%s", idx, suffix ? suffix : "");
}

const opm_tensor *opm_need_tensor(const opm_op *op, opm_role role, size_t nth, int min_rank,
                                  int max_rank, const char *what, opm_error *err)
{
    const opm_tensor *t = opm_op_find_tensor(op, role, nth);
    if (!t) {
        opm_err(err, OPM_EINVAL, "tensors", "kind %s needs %s (a tensor with role %s)",
                opm_kind_name(opm_op_kind(op)), what, opm_role_name(role));
        return NULL;
    }
    if (t->rank < min_rank || t->rank > max_rank) {
        char f[OPM_ERROR_FIELD_MAX];
        opm_tensor_field(op, t, ".shape", f, sizeof f);
        if (min_rank == max_rank)
            opm_err(err, OPM_EINVAL, f, "expected %s with %d dimensions, got %d", what, min_rank,
                    t->rank);
        else
            opm_err(err, OPM_EINVAL, f, "expected %s with %d to %d dimensions, got %d", what,
                    min_rank, max_rank, t->rank);
        return NULL;
    }
    return t;
}

void opm_shape_text(const int64_t *s, int r, char *buf, size_t cap)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, cap - o, "[");
    for (int i = 0; i < r && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

void opm_names_text(const char *const *names, char *buf, size_t cap)
{
    size_t o = 0;
    if (cap) buf[0] = '\0';
    for (; *names; names++)
        if (o < cap) o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? " " : "", *names);
}

int opm_choice_err(opm_error *err, const char *field, const char *got, const char *const *names,
                   const char *fmt, ...)
{
    /* The message buffer's size: opm_err cuts the whole message there, so
     * a longer `expected` would be cut in the same place anyway. */
    char expected[OPM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(expected, sizeof expected, fmt, ap);
    va_end(ap);
    const char *hint = opm_closest(got, names);
    return opm_err(err, OPM_EINVAL, field, "%s, got '%s'%s%s%s", expected, got,
                   hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

int opm_shape_mismatch(const opm_op *op, const opm_tensor *t, const int64_t *shape, int rank,
                       opm_error *err)
{
    char f[OPM_ERROR_FIELD_MAX], want[160], got[160];
    opm_tensor_field(op, t, ".shape", f, sizeof f);
    opm_shape_text(shape, rank, want, sizeof want);
    opm_shape_text(t->shape, t->rank, got, sizeof got);
    return opm_err(err, OPM_EINVAL, f, "expected %s shape %s, got %s", opm_role_name(t->role), want, got);
}

int opm_short_int(opm_op *op, const char *key, int required, int64_t dflt, int64_t *out,
                  opm_error *err)
{
    /* The common case in one lookup: a positive integer attribute. */
    size_t i = opm_op_attr_index(op, key);
    if (i != OPM_NO_ATTR && opm_op_attr_type(op, i) == OPM_ATTR_INT && opm_op_attr_int_at(op, i, 0) > 0) {
        *out = opm_op_attr_int_at(op, i, 0);
        opm_op_unset_at(op, i);
        return 0;
    }
    if (i == OPM_NO_ATTR) {
        if (required)
            return opm_err(err, OPM_EINVAL, key, "missing; the short form of %s needs it",
                           opm_kind_name(opm_op_kind(op)));
        *out = dflt;
        return 0;
    }
    const int64_t *v;
    if (opm_op_get_ints(op, key, &v) != 1 || opm_op_get_string(op, key, NULL) ||
        opm_op_get_int(op, key, -1) != v[0]) {
        const char *s = opm_op_get_string(op, key, NULL);
        if (s) return opm_err(err, OPM_EINVAL, key, "expected a positive integer, got '%s'", s);
        if (opm_op_get_ints(op, key, &v) > 1)
            return opm_err(err, OPM_EINVAL, key, "expected a positive integer, got a list");
        if (opm_op_get_ints(op, key, &v) == 1 || opm_op_get_double(op, key, 0) != 0)
            return opm_err(err, OPM_EINVAL, key, "expected a positive integer, got %.17g", opm_op_get_double(op, key, 0));
        return opm_err(err, OPM_EINVAL, key, "expected a positive integer, got %s",
                       opm_op_get_bool(op, key, 0) ? "true" : "a list or false");
    }
    if (v[0] <= 0) return opm_err(err, OPM_EINVAL, key, "expected a positive integer, got %lld", (long long)v[0]);
    *out = v[0];
    opm_op_unset(op, key);
    return 0;
}

int opm_short_dtype_key(opm_op *op, const char *key, opm_dtype dflt, opm_dtype *out, opm_error *err)
{
    size_t i = opm_op_attr_index(op, key);
    if (i == OPM_NO_ATTR) { *out = dflt; return 0; }
    const char *s = opm_op_attr_string_at(op, i, NULL);
    if (!s || opm_dtype_parse(s, out)) {
        const char *hint = s ? opm_closest(s, opm_dtype_name_list) : NULL;
        char got[96] = "";
        if (s) snprintf(got, sizeof got, ", got '%.40s'", s);
        return opm_err(err, OPM_EINVAL, key,
                       "expected a dtype (fp64 fp32 tf32 fp16 bf16 fp8_e4m3 fp8_e5m2 int8 int4 fp4_e2m1 int32 int64 bool)%s%s%s%s",
                       got, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
    }
    opm_op_unset_at(op, i);
    return 0;
}

int opm_short_dtypes(opm_op *op, opm_dtype *dt, opm_dtype *out_dt, opm_error *err)
{
    if (!opm_op_has(op, "dtype"))
        return opm_err(err, OPM_EINVAL, "dtype", "missing; the short form of %s needs it",
                       opm_kind_name(opm_op_kind(op)));
    if (opm_short_dtype_key(op, "dtype", OPM_BF16, dt, err)) return err ? (int)err->code : OPM_EINVAL;
    return opm_short_dtype_key(op, "out_dtype", *dt, out_dt, err);
}

int opm_short_shape(opm_op *op, const char *key, int64_t *shape, int *rank, opm_error *err)
{
    const int64_t *v;
    size_t n = opm_op_get_ints(op, key, &v);
    if (!opm_op_has(op, key))
        return opm_err(err, OPM_EINVAL, key, "missing; the short form of %s needs it",
                       opm_kind_name(opm_op_kind(op)));
    if (n == 0 || n > OPM_MAX_RANK || opm_op_get_string(op, key, NULL))
        return opm_err(err, OPM_EINVAL, key, "expected a list of 1 to %d positive integers", OPM_MAX_RANK);
    for (size_t i = 0; i < n; i++) {
        if (v[i] <= 0)
            return opm_err(err, OPM_EINVAL, key, "expected positive dimensions, got %lld", (long long)v[i]);
        shape[i] = v[i];
    }
    *rank = (int)n;
    opm_op_unset(op, key);
    return 0;
}

int opm_broadcast(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out, int *rout)
{
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
        if (da != db && da != 1 && db != 1) return -1;
        out[i] = da == 1 ? db : da;
    }
    *rout = r;
    return 0;
}

uint64_t opm_role_bytes(const opm_op *op, opm_role role, int *ok)
{
    uint64_t s = 0;
    for (size_t i = 0; i < opm_op_tensor_count(op); i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        if (t->role == role) s = opm_add(s, opm_tensor_bytes(t, ok), ok);
    }
    return s;
}

int opm_short_same_shape(opm_op *op, opm_error *err)
{
    int64_t s[OPM_MAX_RANK];
    int r;
    opm_dtype dt, odt;
    if (opm_short_shape(op, "shape", s, &r, err) || opm_short_dtypes(op, &dt, &odt, err) ||
        opm_op_add_tensor(op, OPM_ROLE_INPUT, s, r, dt, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, s, r, odt, NULL, err))
        return err ? (int)err->code : OPM_EINVAL;
    return 0;
}

int opm_check_l2_warm(const opm_op *op, opm_error *err)
{
    static const char *const names[] = {"none", "input", "all", NULL};
    const char *v = opm_op_get_string(op, "l2_warm", NULL);
    if (!v) return 0;
    for (const char *const *n = names; *n; n++)
        if (opm_str_equals(v, *n)) return 0;
    return opm_choice_err(err, "attrs.l2_warm", v, names, "expected none, input or all");
}
