/* flop_weights.h — the one table of FLOPs charged per element for each
 * elementwise function.  Transcendentals are charged more than one FLOP
 * because they cost several instructions on every vector unit we model; the
 * figures are conventions (documented in docs/ops.md), not measurements. */
#ifndef OPM_FLOP_WEIGHTS_H
#define OPM_FLOP_WEIGHTS_H

#include <string.h>

#define OPM_FLOPS_ARITH 1   /* add, sub, mul, div, max, min, compare */
#define OPM_FLOPS_EXP 4     /* exp, log, rsqrt, sqrt, tanh */

typedef struct opm_flop_weight {
    const char *op;
    int flops;
} opm_flop_weight;

static const opm_flop_weight opm_flop_weights[] = {
    {"add", 1}, {"sub", 1}, {"mul", 1}, {"div", 1}, {"neg", 1}, {"abs", 1}, {"max", 1},
    {"min", 1}, {"relu", 1}, {"where", 1}, {"clamp", 2}, {"square", 1}, {"fma", 2},
    {"exp", 4}, {"log", 4}, {"sqrt", 4}, {"rsqrt", 4}, {"tanh", 4}, {"sigmoid", 4}, {"silu", 5},
    {"gelu", 8}, {"gelu_tanh", 8}, {"pow", 8}, {"silu_mul", 6}, {"gelu_mul", 9},
    {"copy", 0}, {"cast", 0}, {"fill", 0},
    {NULL, 0},
};

/* FLOPs per element of a named elementwise function, -1 if unknown. */
static inline int opm_flop_weight_of(const char *op)
{
    for (const opm_flop_weight *w = opm_flop_weights; w->op; w++)
        if (strcmp(w->op, op) == 0) return w->flops;
    return -1;
}

#endif
