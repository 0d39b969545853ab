/* recognize_args.h — the call arguments of one profiled op, read from the
 * canonical JSON texts the reader stores (see opm_call_args), and the
 * JSON object the recognizer reports parameters in.
 *
 * One argument is one entry of `Input Dims` with the matching entries of
 * `Input type` and `Concrete Inputs`:
 *
 *     dims [141, 512]  type "c10::BFloat16"  value ""       a tensor
 *     dims []          type "float"          value ""       a 0-dim tensor
 *     dims []          type "Scalar"         value "1"      a Python scalar
 *     dims []          type "ScalarList"     value "[512]"  an int list
 *     dims []          type ""               value ""       an absent optional
 *     dims [[2,3],[2]] type "TensorList"     value ""       a tensor list
 *
 * Reading never fails on text it does not understand: such an argument is
 * OPM_TARG_OTHER and the builders that need it decline.  Private to the
 * recognizer (recognize.c) and its tests. */
#ifndef OPM_RECOGNIZE_ARGS_H
#define OPM_RECOGNIZE_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include "opmodel/opmodel.h"
#include "../io/io_internal.h"

typedef enum opm_targ_kind {
    OPM_TARG_NONE,     /* a scalar, a list of scalars or an absent optional: dims [] */
    OPM_TARG_TENSOR,   /* dims a list of ints and a dtype we model (rank 0: a 0-dim tensor) */
    OPM_TARG_LIST,     /* nested lists: a TensorList of list_len tensors */
    OPM_TARG_OTHER     /* a tensor of a dtype we do not model, a rank over OPM_MAX_RANK,
                          a dim that is not an integer, or anything else */
} opm_targ_kind;

typedef struct opm_targ {
    opm_targ_kind kind;
    opm_dtype dtype;                /* OPM_TARG_TENSOR */
    int rank;                       /* OPM_TARG_TENSOR */
    int64_t shape[OPM_MAX_RANK];
    size_t list_len;                /* OPM_TARG_LIST */
    const char *type;               /* the Input type entry, "" when none */
    const char *value;              /* the Concrete Inputs entry, "" when none */
} opm_targ;

typedef struct opm_targs {
    size_t n;                       /* entries of Input Dims */
    opm_targ *arg;
    char *text;                     /* storage of the decoded strings */
} opm_targs;

/* Reads the arguments.  Returns 0 (args understood or not: see the kinds),
 * OPM_EINVAL when `dims` is not a JSON array (absent, malformed) or the
 * types do not pair with the dims, OPM_ENOMEM.  On any non-zero return
 * `out` is empty and needs no free. */
int opm_targs_parse(const char *dims, const char *types, const char *concrete, opm_targs *out,
                    opm_error *err);
void opm_targs_free(opm_targs *a);

/* Argument i is a tensor (of a modelled dtype); i may be out of range. */
int opm_targ_is_tensor(const opm_targs *a, size_t i);
/* Concrete value of argument i as an integer ("-1"), a double ("0.",
 * "1e-05"), a Python bool ("True"), an int list ("[16, 16]", or one int
 * "2" as a list of one), a bool list ("[True, False, True]").  Return 0 on
 * success; lists fill at most `cap` values and set *n.  Strings of an
 * argument that was never recorded ("" value) do not parse. */
int opm_targ_int(const opm_targs *a, size_t i, int64_t *v);
int opm_targ_double(const opm_targs *a, size_t i, double *v);
int opm_targ_bool(const opm_targs *a, size_t i, int *v);
int opm_targ_ints(const opm_targs *a, size_t i, int64_t *v, int cap, int *n);
int opm_targ_bools(const opm_targs *a, size_t i, int *v, int cap, int *n);

/* A C++ type name as the profiler writes it ("c10::BFloat16", "float",
 * "long int") → dtype; 0 when known. */
int opm_torch_type_dtype(const char *type, opm_dtype *out);
/* A c10::ScalarType code (the integer a dtype argument is recorded as:
 * 15 BFloat16, 5 Half, 6 Float, ...) → dtype; 0 when modelled. */
int opm_scalar_type_dtype(int64_t code, opm_dtype *out);

/* 1 when text[0..len) is exactly one JSON value (surrounding white space
 * allowed), nested at most 256 deep. */
int opm_json_is_value(const char *text, size_t len);

/* ---- JSON object of parameters ----
 * Appends "key":value pairs to a strbuf (the project's one text builder:
 * its string escaping and number text), adding only the braces and commas.
 * A failed allocation sets sb.oom and every later call does nothing, so
 * callers check once at the end. */
typedef struct opm_jbuf {
    strbuf sb;        /* "{" and the pairs so far */
    int fields;       /* pairs written so far (for the commas) */
} opm_jbuf;

void opm_jbuf_init(opm_jbuf *b);
void opm_jbuf_free(opm_jbuf *b);
void opm_jbuf_int(opm_jbuf *b, const char *key, int64_t v);
void opm_jbuf_bool(opm_jbuf *b, const char *key, int v);
/* Shortest text that reads back as v; null when v is not finite. */
void opm_jbuf_double(opm_jbuf *b, const char *key, double v);
/* Bytes that are not well-formed UTF-8 become U+FFFD (see sb_json_string). */
void opm_jbuf_str(opm_jbuf *b, const char *key, const char *v);
void opm_jbuf_ints(opm_jbuf *b, const char *key, const int64_t *v, int n);
/* `list` of n shapes, shape i with ranks[i] dims starting at dims[i]. */
void opm_jbuf_shapes(opm_jbuf *b, const char *key, const int64_t *const *dims, const int *ranks, int n);
/* A value already JSON (copied as is), or null when `json` is NULL. */
void opm_jbuf_raw(opm_jbuf *b, const char *key, const char *json);
/* The finished object "{...}" (malloc'ed; the writer is emptied), NULL when
 * an allocation failed. */
char *opm_jbuf_finish(opm_jbuf *b);

#endif
