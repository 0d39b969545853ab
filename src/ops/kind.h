/* kind.h — the one interface every op kind implements (one kind family per
 * file in src/ops/), and helpers they share.  Kinds know shapes and
 * arithmetic only: nothing here knows hardware or text formats. */
#ifndef OPM_KIND_H
#define OPM_KIND_H

#include "../core/internal.h"
#include "opmodel/kind.h"


/* The built-in kind k's table; NULL for OPM_KIND_USER or out of range. */
const opm_kind_def *opm_kind_def_get(opm_kind k);
/* An op of the kind `def` describes (a built-in table or a user kind a
 * registry holds, which must outlive the op). */
opm_op *opm_op_new_def(const opm_kind_def *def, const char *name, opm_phase phase, opm_error *err);
/* Makes op a new op of the kind def describes, named name (the kind's
 * name when NULL), with no tensors or attributes, keeping its allocations:
 * for a reader that builds one op per line.  0, or an error (op still
 * valid, as it was). */
int opm_op_reset(opm_op *op, const opm_kind_def *def, const char *name, opm_phase phase, opm_error *err);
/* An attribute value for opm_op_append_attr: i for bool and int, d, s (n
 * bytes) for a string, ints (n) for a list. */
typedef struct opm_attr_value {
    opm_attr_type type;
    int64_t i;
    double d;
    const char *s;
    const int64_t *ints;
    size_t n;
} opm_attr_value;
/* opm_op_set_* for a parser that has checked the key against the op's
 * kind (as the setters do) and knows it is not set yet (it refuses
 * repeated keys): the same attribute without the lookups.  key_len bytes of
 * key, at most 47. */
int opm_op_append_attr(opm_op *op, const char *key, size_t key_len, const opm_attr_value *v, opm_error *err);
/* The index of attribute key (for the opm_op_attr_*_at accessors), or
 * OPM_NO_ATTR; and the removal of the i-th: one lookup for a short-form
 * reader that reads a key and then removes it. */
#define OPM_NO_ATTR ((size_t)-1)
size_t opm_op_attr_index(const opm_op *op, const char *key);
void opm_op_unset_at(opm_op *op, size_t i);
/* 1 for a built-in kind whose count() runs every check of its validate()
 * before counting (so opm_op_finalize need not run both), else 0. */
int opm_kind_count_validates(const opm_kind_def *def);
const opm_attr_def *opm_kind_find_attr(const opm_kind_def *def, const char *key);
size_t opm_kind_attr_names(const opm_kind_def *def, const char **names, size_t cap);
const char *opm_attr_type_text(opm_attr_type t);

/* Kernel hints accepted by every matrix kind (contract §1). */
#define OPM_GEMM_HINT_ATTRS                                                        \
    {"cta_tile_m", OPM_ATTR_INT, 1, "kernel hint: CTA tile rows"},                 \
    {"cta_tile_n", OPM_ATTR_INT, 1, "kernel hint: CTA tile columns"},              \
    {"cta_tile_k", OPM_ATTR_INT, 1, "kernel hint: CTA tile depth"},                \
    {"warp_tile_m", OPM_ATTR_INT, 1, "kernel hint: warp tile rows"},               \
    {"warp_tile_n", OPM_ATTR_INT, 1, "kernel hint: warp tile columns"},            \
    {"warp_tile_k", OPM_ATTR_INT, 1, "kernel hint: warp tile depth (recorded)"},    \
    {"mma_m", OPM_ATTR_INT, 1, "kernel hint: MMA instruction m"},                  \
    {"mma_n", OPM_ATTR_INT, 1, "kernel hint: MMA instruction n"},                  \
    {"mma_k", OPM_ATTR_INT, 1, "kernel hint: MMA instruction k"},                  \
    {"pipeline_stages", OPM_ATTR_INT, 1, "kernel hint: K-loop pipeline stages"},   \
    {"warps_per_cta", OPM_ATTR_INT, 1, "kernel hint: warps per CTA"},              \
    {"registers_per_thread", OPM_ATTR_INT, 1, "kernel hint: registers per thread"},\
    {"split_k", OPM_ATTR_INT, 1, "kernel hint: split-K factor"},                   \
    {"gemm_selection_objective", OPM_ATTR_STRING, 0,                               \
     "what the kernel search minimises: latency, energy or edp (default: the hardware's)"}, \
    {"threads_per_cta", OPM_ATTR_INT, 1,                                           \
     "kernel hint: threads per CTA (recorded; the tile models read warps_per_cta)"},\
    {"beta_zero", OPM_ATTR_BOOL, 0,                                                \
     "kernel hint: the epilogue does not read C (recorded; C is counted as written only)"}

/* Context of a memory-streaming kernel (elementwise, copy, norms, softmax,
 * reduction, rope, embedding): what the kernel before it left in L2.  The
 * models read it; the counts are the op's own.  Checked by
 * opm_check_l2_warm. */
#define OPM_STREAM_CONTEXT_ATTRS                                                             \
    {"l2_warm", OPM_ATTR_STRING, 0,                                                          \
     "tensors resident in L2 at the start (the previous kernel wrote or read them): none "   \
     "(default), input, all"},                                                              \
    {"vector_bytes", OPM_ATTR_INT, 1,                                                        \
     "kernel hint: bytes each thread loads per access (default 16, one 128-bit load; 2 for a " \
     "scalar fp16 kernel)"},                                                                  \
    {"threads_per_cta", OPM_ATTR_INT, 1, "kernel hint: threads per CTA (default per kind)"}

/* ---- helpers for kind files (common.c) ---- */

/* attrs.l2_warm, when present, is none, input or all. */
int opm_check_l2_warm(const opm_op *op, opm_error *err);

/* strcmp(s, lit) == 0, inline: count() matches attribute keys against
 * literals on every call, and a library strcmp per candidate would dominate
 * its time. */
static inline int opm_str_equals(const char *s, const char *lit)
{
    while (*s && *s == *lit) s++, lit++;
    return *s == *lit;
}

/* "tensors[i]" field name of tensor t of op. */
void opm_tensor_field(const opm_op *op, const opm_tensor *t, const char *suffix, char *buf, size_t cap);
/* The nth tensor of a role, or an error naming what is missing. */
const opm_tensor *opm_need_tensor(const opm_op *op, opm_role role, size_t nth, int min_rank,
                                  int max_rank, const char *what, opm_error *err);
/* The error for a tensor whose shape is not `shape` (always non-zero). */
int opm_shape_mismatch(const opm_op *op, const opm_tensor *t, const int64_t *shape, int rank,
                       opm_error *err);
/* Shape equality check with an error on `t` naming the expected shape.  The
 * passing case is inline, a few compares, because validate() runs it for
 * every tensor of every op; only a failure builds the message. */
static inline int opm_expect_shape(const opm_op *op, const opm_tensor *t, const int64_t *shape,
                                   int rank, opm_error *err)
{
    int same = t->rank == rank;
    for (int i = 0; same && i < rank; i++) same = t->shape[i] == shape[i];
    return same ? 0 : opm_shape_mismatch(op, t, shape, rank, err);
}
/* Short form: reads and removes the positive int key. */
int opm_short_int(opm_op *op, const char *key, int required, int64_t dflt, int64_t *out,
                  opm_error *err);
/* Short form: reads and removes dtype (required) and out_dtype (default dtype). */
int opm_short_dtypes(opm_op *op, opm_dtype *dt, opm_dtype *out_dt, opm_error *err);
/* Short form: reads and removes a shape list key. */
int opm_short_shape(opm_op *op, const char *key, int64_t *shape, int *rank, opm_error *err);
int opm_short_dtype_key(opm_op *op, const char *key, opm_dtype dflt, opm_dtype *out, opm_error *err);
/* The tensors of a (batched) GEMM's short form once its keys are read: A, B
 * and C from batch, m, n, k, the dtypes and the transposes (gemm.c).  The
 * short form's own path and the --batch line reader's direct path for flat
 * GEMM lines (io/op_line.c) both use it, so both give the same op. */
int opm_gemm_short_tensors(opm_op *op, int batched, int64_t batch, int64_t m, int64_t n, int64_t k, opm_dtype dt,
                           opm_dtype wdt, opm_dtype odt, int ta, int tb, opm_error *err);
/* Short form `shape` + dtype/out_dtype → one input x and an output of the
 * same shape: the from_short of every shape-preserving kind. */
int opm_short_same_shape(opm_op *op, opm_error *err);
/* "[2, 3]" */
void opm_shape_text(const int64_t *s, int r, char *buf, size_t cap);
/* "sum mean max": the NULL-terminated names separated by spaces, cut at cap,
 * for a message that lists the accepted values. */
void opm_names_text(const char *const *names, char *buf, size_t cap);
/* The error for attribute `field` whose value `got` is none of the
 * NULL-terminated `names`: fmt says what was expected; ", got '<got>'"
 * follows, then a "did you mean" hint when one name is close, so every
 * closed set of values reports a typo the same way.  Always non-zero. */
int opm_choice_err(opm_error *err, const char *field, const char *got, const char *const *names,
                   const char *fmt, ...) OPM_PRINTF(5, 6);
/* numpy broadcasting of two shapes; -1 if incompatible. */
int opm_broadcast(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out, int *rout);
/* Sum of bytes of every tensor of a role. */
uint64_t opm_role_bytes(const opm_op *op, opm_role role, int *ok);

/* The kind tables, one per file. */
extern const opm_kind_def opm_kind_gemm, opm_kind_batched_gemm, opm_kind_attention_prefill,
    opm_kind_attention_decode, opm_kind_softmax, opm_kind_layernorm, opm_kind_rmsnorm,
    opm_kind_elementwise, opm_kind_reduction, opm_kind_embedding, opm_kind_copy, opm_kind_grouped_gemm,
    opm_kind_conv, opm_kind_attention, opm_kind_batchnorm, opm_kind_groupnorm, opm_kind_instancenorm,
    opm_kind_cross_entropy, opm_kind_rope, opm_kind_causal_conv1d, opm_kind_mamba_ssd, opm_kind_moe_dispatch,
    opm_kind_moe_combine, opm_kind_fused_moe;


#endif
