/* internal.h — helpers shared inside the library: error filling and exact
 * checked integer arithmetic.  Not installed. */
#ifndef OPM_INTERNAL_H
#define OPM_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include "opmodel/opmodel.h"

#if defined(__GNUC__) || defined(__clang__)
#define OPM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OPM_PRINTF(a, b)
#endif

/* Fills err (if non-NULL) with code, field and message "field: text".
 * Returns code so callers can `return opm_err(...)`. */
int opm_err(opm_error *err, opm_status code, const char *field, const char *fmt, ...)
    OPM_PRINTF(4, 5);
/* Prefixes "prefix: " to an already-filled message (location decoration). */
void opm_err_prefix(opm_error *err, const char *prefix);
/* Rewrites control characters in s (cap bytes) as \n, \t, \r or \xHH, so a
 * message built from input text outside opm_err stays one line. */
void opm_escape_controls(char *s, size_t cap);

/* Exact arithmetic on counts.  Each returns 0, or 1 when the result does not
 * fit in 64 bits; *ok is cleared on overflow so long expressions can check
 * once at the end. */
static inline uint64_t opm_mul(uint64_t a, uint64_t b, int *ok)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) { *ok = 0; return 0; }
    return r;
}
static inline uint64_t opm_add(uint64_t a, uint64_t b, int *ok)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) { *ok = 0; return 0; }
    return r;
}
/* Bytes of `elems` elements of dtype, rounded up to whole bytes. */
static inline uint64_t opm_bytes(uint64_t elems, opm_dtype dt, int *ok)
{
    uint64_t bits = opm_mul(elems, opm_dtype_bits(dt), ok);
    return bits / 8 + (bits % 8 != 0);
}
/* Product of a tensor's dims, and its bytes.  Inline: every kind's count()
 * calls these on its hot path. */
static inline uint64_t opm_tensor_elems(const opm_tensor *t, int *ok)
{
    uint64_t n = 1;
    for (int d = 0; d < t->rank; d++) n = opm_mul(n, (uint64_t)t->shape[d], ok);
    return n;
}
static inline uint64_t opm_tensor_bytes(const opm_tensor *t, int *ok)
{
    return opm_bytes(opm_tensor_elems(t, ok), t->dtype, ok);
}

/* The canonical names, NULL-terminated (dtypes end with the "fp8" alias),
 * for parsers and "did you mean" suggestions. */
extern const char *const opm_dtype_name_list[];
extern const char *const opm_kind_name_list[];
extern const char *const opm_phase_name_list[];
extern const char *const opm_role_name_list[];

/* Tensor i of an op the caller is still building (NULL past the end): for
 * code that rewrites shapes in place between predictions of one op
 * (models/batch.c), which must keep the op valid. */
opm_tensor *opm_op_tensor_mut(opm_op *op, size_t i);
/* opm_op_validate, then the op's counts computed once and kept on it, so
 * opm_op_count (and every prediction) copies them instead of counting.  Every
 * builder ends with this.  Adding a tensor drops the kept counts (the op is
 * being built again); an attribute or phase set or unset on an op whose counts
 * were kept counts it again at once, so an op finished and then given kernel
 * hints by the API still predicts without counting. */
int opm_op_finalize(opm_op *op, opm_error *err);
/* Recounts and keeps the counts of an op rewritten in place (tensor_mut). */
void opm_op_cache_counts(opm_op *op);

/* Bounded string copy that always terminates. */
void opm_strlcpy(char *dst, const char *src, size_t cap);
/* String interning (strtab.c): one copy of each string in an arena, found
 * through an open-addressing hash table; ids are dense from 0, and strs[id]
 * stays valid (and NUL-terminated) until opm_strtab_free.  Zero-initialise
 * before use. */
typedef struct opm_strtab {
    char **strs;            /* id → string (in arena blocks) */
    uint32_t *lens;
    size_t count, cap;
    uint32_t *slots;        /* open addressing, id+1 (0 = empty) */
    size_t nslots;
    char *block;            /* current arena block */
    size_t block_used, block_cap;
    char **blocks;          /* every arena block, for freeing */
    size_t nblocks, blocks_cap;
} opm_strtab;
/* The id of s[0..len), added when new; UINT32_MAX when out of memory. */
uint32_t opm_strtab_intern(opm_strtab *st, const char *s, size_t len);
void opm_strtab_free(opm_strtab *st);
/* Grows the malloc'ed array *p (capacity *cap elements of `elem` bytes,
 * doubling from 64) to hold `need`; 0, or -1 when out of memory (*p and
 * *cap unchanged). */
int opm_array_grow(void **p, size_t *cap, size_t need, size_t elem);
/* Levenshtein-closest candidate from a NULL-terminated list (NULL if none
 * is close enough), for "did you mean" hints. */
const char *opm_closest(const char *word, const char *const *candidates);

#endif
