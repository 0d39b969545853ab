/* opmodel/op.h — one already-partitioned local operation: a name, a kind, a
 * phase, its tensors and typed attributes; and what it costs in FLOPs and
 * bytes, independent of any hardware.
 *
 * Ownership: opm_op_new() and the builders return an op the caller owns and
 * releases with opm_op_free().  An op is immutable once built as far as the
 * library is concerned; any number of threads may read or predict the same op
 * at once.  Strings passed in are copied. */
#ifndef OPMODEL_OP_H
#define OPMODEL_OP_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPM_MAX_RANK 8

/* A tensor as the op sees it.  Read-only view; the op owns it. */
typedef struct opm_tensor {
    opm_role role;
    opm_dtype dtype;
    int rank;
    int64_t shape[OPM_MAX_RANK];
    char layout[16];       /* optional ("q", "bshd"), empty when absent */
} opm_tensor;

typedef enum opm_attr_type {
    OPM_ATTR_BOOL, OPM_ATTR_INT, OPM_ATTR_DOUBLE, OPM_ATTR_STRING, OPM_ATTR_INTS
} opm_attr_type;

typedef struct opm_op opm_op;

OPM_API opm_op *opm_op_new(const char *name, opm_kind kind, opm_phase phase, opm_error *err);
OPM_API void opm_op_free(opm_op *op);
/* Deep copy. */
OPM_API opm_op *opm_op_clone(const opm_op *op, opm_error *err);

/* Appends a tensor.  shape has `rank` entries, each ≥ 1; layout may be NULL. */
OPM_API int opm_op_add_tensor(opm_op *op, opm_role role, const int64_t *shape, int rank,
                              opm_dtype dtype, const char *layout, opm_error *err);

/* Sets (or replaces) an attribute.  Keys are at most 47 bytes. */
OPM_API int opm_op_set_bool(opm_op *op, const char *key, int value, opm_error *err);
OPM_API int opm_op_set_int(opm_op *op, const char *key, int64_t value, opm_error *err);
OPM_API int opm_op_set_double(opm_op *op, const char *key, double value, opm_error *err);
OPM_API int opm_op_set_string(opm_op *op, const char *key, const char *value, opm_error *err);
OPM_API int opm_op_set_ints(opm_op *op, const char *key, const int64_t *values, size_t count, opm_error *err);
/* Removes an attribute; returns 1 if it was present. */
OPM_API int opm_op_unset(opm_op *op, const char *key);
OPM_API int opm_op_set_phase(opm_op *op, opm_phase phase);

OPM_API const char *opm_op_name(const opm_op *op);
OPM_API opm_kind opm_op_kind(const opm_op *op);
/* The name of the op's kind ("gemm"; a user kind's own name). */
OPM_API const char *opm_op_kind_name(const opm_op *op);
OPM_API opm_phase opm_op_phase(const opm_op *op);
OPM_API size_t opm_op_tensor_count(const opm_op *op);
OPM_API const opm_tensor *opm_op_tensor(const opm_op *op, size_t i);
/* First tensor with this role, counting from `nth` = 0; NULL if none. */
OPM_API const opm_tensor *opm_op_find_tensor(const opm_op *op, opm_role role, size_t nth);

OPM_API size_t opm_op_attr_count(const opm_op *op);
/* Attribute i: key and type; values through the typed getters below. */
OPM_API const char *opm_op_attr_key(const opm_op *op, size_t i);
OPM_API opm_attr_type opm_op_attr_type(const opm_op *op, size_t i);
OPM_API int opm_op_has(const opm_op *op, const char *key);
/* The value of attribute i (0 ≤ i < opm_op_attr_count), with the same
 * conversions as the getters by name; for code that walks every attribute
 * once instead of looking each up. */
OPM_API int opm_op_attr_bool_at(const opm_op *op, size_t i, int dflt);
OPM_API int64_t opm_op_attr_int_at(const opm_op *op, size_t i, int64_t dflt);
OPM_API const char *opm_op_attr_string_at(const opm_op *op, size_t i, const char *dflt);
OPM_API size_t opm_op_attr_ints_at(const opm_op *op, size_t i, const int64_t **values);
/* Typed getters with a default for an absent key.  Ints read as doubles and
 * bools as ints where asked; a string read as a number gives the default. */
OPM_API int opm_op_get_bool(const opm_op *op, const char *key, int dflt);
OPM_API int64_t opm_op_get_int(const opm_op *op, const char *key, int64_t dflt);
OPM_API double opm_op_get_double(const opm_op *op, const char *key, double dflt);
OPM_API const char *opm_op_get_string(const opm_op *op, const char *key, const char *dflt);
/* List attribute: returns its length and sets *values (owned by the op);
 * a scalar int attribute reads as a list of one. 0 if absent. */
OPM_API size_t opm_op_get_ints(const opm_op *op, const char *key, const int64_t **values);

/* Checks that the tensors and attributes make a well-formed op of its kind:
 * required tensors present, shapes that agree, known attributes with the
 * right types.  Returns 0 or an OPM_EINVAL status naming the field. */
OPM_API int opm_op_validate(const opm_op *op, opm_error *err);

/* ---- Builders for the common ops (validated; NULL + err on bad input) ---- */

/* C[m,n] = A[m,k] · B[k,n]; out dtype = dtype.  */
OPM_API opm_op *opm_op_gemm(int64_t m, int64_t n, int64_t k, opm_dtype dtype, opm_error *err);
/* batch × (m,k)·(k,n). */
OPM_API opm_op *opm_op_batched_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, opm_dtype dtype,
                                    opm_error *err);
/* Flash-style attention; kind is prefill when seq_q > 1, else decode. */
OPM_API opm_op *opm_op_attention(int64_t batch, int64_t seq_q, int64_t seq_kv, int64_t heads,
                                 int64_t kv_heads, int64_t head_dim, int causal, opm_dtype dtype,
                                 opm_error *err);
/* Unary/n-ary elementwise over `shape` with `op_count_per_element` FLOPs each. */
OPM_API opm_op *opm_op_elementwise(const int64_t *shape, int rank, int n_inputs,
                                   int64_t op_count_per_element, opm_dtype dtype, opm_error *err);

/* ---- Counting: what the op costs, independent of hardware ---- */

typedef struct opm_counts {
    /* FLOPs that run on a matrix engine when the hardware has one for
     * `compute_dtype`, and FLOPs that always run on the vector units. */
    uint64_t matrix_flops;
    uint64_t vector_flops;
    opm_dtype compute_dtype;
    /* Bytes read from and written to device memory, each tensor touched once. */
    uint64_t read_bytes;
    uint64_t write_bytes;
    /* Global-memory footprint by role (grads count as inputs for backward
     * reads and as outputs for what backward writes). */
    uint64_t input_bytes;
    uint64_t weight_bytes;
    uint64_t output_bytes;
    uint64_t workspace_bytes;
} opm_counts;

/* Fills `out`.  Exact 64-bit integers; OPM_EOVERFLOW if a count would not
 * fit.  Does not allocate.  The op must be valid (opm_op_validate). */
OPM_API int opm_op_count(const opm_op *op, opm_counts *out, opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
