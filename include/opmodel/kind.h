/* opmodel/kind.h — the interface every op kind implements, built-in or a
 * user's.  An op kind knows shapes and arithmetic only (which tensors and
 * attributes it takes, how to check them, how many FLOPs and bytes it
 * does); the models know the hardware.
 *
 * A kind of one's own, without forking: fill an opm_kind_def (kind =
 * OPM_KIND_USER, a new name, the attributes, validate and count), register
 * it with opm_registry_add_kind (registry.h) and make ops of it with
 * opm_registry_op_new; tensors and attributes are then set as for any op
 * (op.h), attribute keys checked against `attrs`.  Every model predicts
 * such an op: the roofline from its counts, the kernel models by falling
 * back to the roofline (profile.fell_back).  Its profile's kind is
 * OPM_KIND_USER ("user" in JSON); opm_op_kind_name gives the kind's name.
 * Ops of a user kind are not read from or written to text. */
#ifndef OPMODEL_KIND_H
#define OPMODEL_KIND_H

#include <stdint.h>
#include "error.h"
#include "op.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The opm_kind of every op of a user kind (outside the built-in range). */
#define OPM_KIND_USER ((opm_kind)1000)

/* One attribute of a kind; a table of them ends with {NULL}. */
typedef struct opm_attr_def {
    const char *key;
    opm_attr_type type;
    int64_t min_int;        /* for ints: smallest accepted value when > 0 */
    const char *help;
} opm_attr_def;

/* A kind.  The registry copies the struct and the name; the strings and
 * tables it points to (summary, tensors_help, attrs, short_keys) must
 * outlive the registry, as static tables do. */
typedef struct opm_kind_def {
    opm_kind kind;          /* OPM_KIND_USER for a user kind */
    const char *name;
    const char *summary;
    /* Required tensors, in the order they are listed, for `opmodel ops`. */
    const char *tensors_help;
    /* Attributes of the full form; terminated by {NULL}. */
    const opm_attr_def *attrs;
    /* Keys of the short form besides name/kind/phase/dtype/out_dtype;
     * terminated by {NULL}.  NULL when the kind has no short form. */
    const opm_attr_def *short_keys;
    /* Turns an op whose short-form keys were stored as attributes (dtype and
     * out_dtype as strings) into the full form: adds tensors, removes the
     * keys that became shapes.  NULL when there is no short form. */
    int (*from_short)(opm_op *op, opm_error *err);
    int (*validate)(const opm_op *op, opm_error *err);
    /* Fills counts; `c` is zeroed by the caller. */
    int (*count)(const opm_op *op, opm_counts *c, opm_error *err);
    /* Most tensors of each role (input, weight, output, grad, workspace)
     * the kind accepts; -1 for no limit.  Checked before validate(). */
    int max_tensors[OPM_ROLE_COUNT];
} opm_kind_def;

#ifdef __cplusplus
}
#endif
#endif
