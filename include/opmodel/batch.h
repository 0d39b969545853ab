/* opmodel/batch.h — many predictions of one kind in one call, for sweeps and
 * for bindings that cross into C once per table instead of once per op.
 *
 *     static const opm_batch_field f[] = {OPM_FIELD_LATENCY_S, OPM_FIELD_FLOPS};
 *     int64_t rows[] = {1, 8192, 8192,   128, 8192, 8192};     // m, n, k
 *     opm_batch spec = {OPM_KIND_GEMM, OPM_PHASE_INFERENCE, OPM_BF16, NULL, NULL, 0};
 *     double out[2 * 2];
 *     opm_predict_many(opm_model_find("roofline"), hw, &spec, rows, 2, 3, f, 2, out, NULL, &err);
 *
 * Each row of `rows` (n_rows × n_cols int64, row-major) is one op in its
 * short form (contract §1): column j gives the value of key `keys[j]`, the
 * op has `dtype` (and, when `attrs` is given, every attribute of that op),
 * and it is built, validated and predicted exactly as the same short form
 * read from a file would be.  A key is one of
 *   - an integer short-form key or attribute of the kind ("m", "seq_kv",
 *     "split_k");
 *   - "K[i]": entry i of the list key K ("shape[0]", "input[2]"); the
 *     entries of one list are its columns "K[0]" .. "K[n-1]", each once;
 *   - a list key alone ("shape"): the list of all the columns from it to
 *     the end of the row (only as the last key).
 * keys = NULL uses the kind's default columns (opm_batch_default_keys), the
 * first n_cols of them (a list key takes the rest of the row):
 *     gemm            m n k
 *     batched_gemm    batch m n k
 *     grouped_gemm    groups m n k
 *     attention, attention_prefill, attention_decode
 *                     batch seq_q seq_kv heads kv_heads head_dim
 *     conv            input[0..3] weight[0..3] (N C_in H W C_out C_in/groups kH kW)
 *     softmax layernorm rmsnorm batchnorm groupnorm instancenorm elementwise
 *     reduction copy  shape (every column)
 *     cross_entropy   tokens vocab          embedding     tokens vocab dim
 *     rope            batch seq heads kv_heads head_dim
 *     causal_conv1d   batch dim seqlen width
 *     mamba_ssd       batch seqlen heads head_dim state_dim groups
 *     moe_dispatch    tokens hidden top_k experts
 *     moe_combine     tokens hidden top_k
 *     fused_moe       tokens hidden intermediate experts top_k
 *
 * The outputs are doubles, n_rows × n_fields row-major: out[i·n_fields + j]
 * is field fields[j] of row i.  Counts are exact up to 2^53.  bound and
 * engine are their enum values (opm_bound, opm_engine).
 *
 * Errors: a bad spec (unknown key, a list with a gap) fails before any row.
 * A bad row fails the call with "row I: <the op's error>" unless
 * `nan_on_error` is set: then its outputs are NaN, *n_failed counts it and
 * the call goes on (returning 0).  The call does not keep state, allocates
 * only per row, and may run on many threads at once with shared hardware. */
#ifndef OPMODEL_BATCH_H
#define OPMODEL_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "hardware.h"
#include "model.h"
#include "op.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opm_batch_field {
    OPM_FIELD_LATENCY_S,
    OPM_FIELD_FLOPS,
    OPM_FIELD_MATRIX_FLOPS,
    OPM_FIELD_VECTOR_FLOPS,
    OPM_FIELD_HBM_READ_BYTES,        /* 0 when the profile has no hbm level */
    OPM_FIELD_HBM_WRITE_BYTES,
    OPM_FIELD_ARITHMETIC_INTENSITY,
    OPM_FIELD_ENERGY_J,
    OPM_FIELD_COMPUTE_TIME_S,
    OPM_FIELD_OVERHEAD_S,
    OPM_FIELD_BOUND,                 /* opm_bound as a number */
    OPM_FIELD_ENGINE,                /* opm_engine as a number */
    OPM_FIELD_INPUT_BYTES,
    OPM_FIELD_WEIGHT_BYTES,
    OPM_FIELD_OUTPUT_BYTES,
    OPM_FIELD_WORKSPACE_BYTES,
    OPM_FIELD_COUNT
} opm_batch_field;

/* "latency_s", "flops", ..., the profile's JSON names ("hbm_read_bytes" for
 * the hbm level's reads); "?" out of range. */
OPM_API const char *opm_batch_field_name(opm_batch_field f);
/* 0 and *out set, or OPM_ENOTFOUND. */
OPM_API int opm_batch_field_parse(const char *name, opm_batch_field *out);

/* The kind's default columns, NULL-terminated (static storage). */
OPM_API const char *const *opm_batch_default_keys(opm_kind kind);

typedef struct opm_batch {
    opm_kind kind;
    opm_phase phase;
    opm_dtype dtype;
    const char *const *keys;  /* NULL-terminated column keys, or NULL for the defaults */
    const opm_op *attrs;      /* attributes set on every op (only its attributes are read), or NULL */
    int nan_on_error;
} opm_batch;

/* Predicts every row with `model` on `hw` (model NULL: roofline).  Returns 0
 * or a status with err filled.  n_failed may be NULL. */
OPM_API int opm_predict_many(const opm_model *model, const opm_hardware *hw, const opm_batch *spec,
                             const int64_t *rows, size_t n_rows, size_t n_cols,
                             const opm_batch_field *fields, size_t n_fields, double *out,
                             size_t *n_failed, opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
