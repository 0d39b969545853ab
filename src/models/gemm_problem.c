/* gemm_problem.c — the GEMM problem of an op: M, N, K, batch, operand
 * bytes, transposes and bias of gemm and batched_gemm; a grouped_gemm as
 * one launch over its groups' rows; a conv as its implicit GEMMs (fprop,
 * dgrad, wgrad; transposed convs swap fprop and dgrad).  The mappings are
 * in docs/gemm_models.md. */
#include <math.h>
#include <string.h>
#include "../core/internal.h"
#include "gemm_tiled.h"

static double lead_product(const opm_tensor *t)
{
    double p = 1;
    for (int d = 0; d < t->rank - 2; d++) p *= (double)t->shape[d];
    return p;
}

int opm_gemm_problem(const opm_op *op, gemm_problem *pb)
{
    memset(pb, 0, sizeof *pb);
    const opm_tensor *a = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0);
    const opm_tensor *b = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 0);
    const opm_tensor *c = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    if (!a || !b || !c || a->rank < 2 || b->rank < 2) return 0;
    int batched = opm_op_kind(op) == OPM_KIND_BATCHED_GEMM;
    /* transpose_a, transpose_b and bias in one pass over the attributes. */
    int ta = 0, tb = 0, bias = 0;
    /* Block scales: which operands (scale_a, scale_b), the block of each
     * (scale_block_a / _b, else scale_block, else 128; its last entry is
     * the depth along K). */
    int blk[2] = {0, 0};
    double depth[3] = {128, 0, 0}; /* scale_block, scale_block_a, scale_block_b */
    size_t na = opm_op_attr_count(op);
    for (size_t i = 0; i < na; i++) {
        const char *key = opm_op_attr_key(op, i);
        if (key[0] == 't' && !strcmp(key, "transpose_a")) ta = opm_op_attr_bool_at(op, i, 0);
        else if (key[0] == 't' && !strcmp(key, "transpose_b")) tb = opm_op_attr_bool_at(op, i, 0);
        else if (key[0] == 'b' && !strcmp(key, "bias")) bias = opm_op_attr_bool_at(op, i, 0);
        else if (key[0] == 'a' && !strcmp(key, "activation_quant")) {
            const char *v = opm_op_attr_string_at(op, i, "none");
            pb->act_quant = !strcmp(v, "static") ? GEMM_AQ_STATIC : !strcmp(v, "dynamic") ? GEMM_AQ_DYNAMIC
                          : !strcmp(v, "dynamic_block") ? GEMM_AQ_DYNAMIC_BLOCK : GEMM_AQ_NONE;
        } else if (key[0] == 's' && !strncmp(key, "scale_", 6)) {
            const char *r = key + 6;
            if ((r[0] == 'a' || r[0] == 'b') && !r[1]) {
                const char *v = opm_op_attr_string_at(op, i, "none");
                blk[r[0] == 'b'] = !strcmp(v, "block");
            } else if (!strncmp(r, "block", 5)) {
                int w = !r[5] ? 0 : !strcmp(r + 5, "_a") ? 1 : !strcmp(r + 5, "_b") ? 2 : -1;
                const int64_t *v;
                size_t nv = opm_op_attr_ints_at(op, i, &v);
                if (w >= 0 && nv >= 1 && v[nv - 1] >= 1) depth[w] = (double)v[nv - 1];
            }
        } else if (key[0] == 'l' && !strcmp(key, "l2_warm")) {
            const char *v = opm_op_attr_string_at(op, i, "none");
            pb->warm_a = !strcmp(v, "input") || !strcmp(v, "all");
            pb->warm_b = !strcmp(v, "weight") || !strcmp(v, "all");
        } else if (key[0] == 'o' && !strcmp(key, "operand_copies")) {
            int64_t copies = opm_op_attr_int_at(op, i, 0);
            pb->copies = copies > 0 ? (double)copies : 0;
        }
    }
    double m = (double)(ta ? a->shape[a->rank - 1] : a->shape[a->rank - 2]);
    pb->k = (double)(ta ? a->shape[a->rank - 2] : a->shape[a->rank - 1]);
    pb->n = (double)(tb ? b->shape[b->rank - 2] : b->shape[b->rank - 1]);
    double lead = lead_product(a);
    pb->batch = batched ? lead : 1;
    pb->m = batched ? m : lead * m;
    pb->b_mats = batched && b->rank > 2 ? lead : 1;
    pb->a_bytes = opm_dtype_bytes(a->dtype);
    pb->b_bytes = opm_dtype_bytes(b->dtype);
    pb->c_bytes = opm_dtype_bytes(c->dtype);
    pb->bias = bias || opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 1) != NULL;
    pb->trans_a = ta;
    pb->trans_b = tb;
    for (int o = 0; o < 2; o++) {
        if (!blk[o]) continue;
        double d = depth[1 + o] > 0 ? depth[1 + o] : depth[0];
        pb->scale_bk = pb->scale_bk > 0 ? mind(pb->scale_bk, d) : d;
        pb->scale_blocks++;
    }
    return 1;
}

/* grouped_gemm: X [M, K] holds the rows of every group in order, W
 * [G, K, N] ([G, N, K] with transpose_b) one weight per group, group_m the
 * rows per group (absent: M split evenly).  Returns 0 when malformed. */
int opm_gemm_grouped_problem(const opm_op *op, gemm_problem *pb)
{
    if (!opm_gemm_problem(op, pb)) return 0;
    const opm_tensor *w = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 0);
    if (w->rank != 3 || w->shape[0] < 1) return 0;
    pb->groups = (double)w->shape[0];
    const int64_t *v;
    size_t n = opm_op_get_ints(op, "group_m", &v);
    if (n == (size_t)w->shape[0]) {
        double active = 0;
        pb->group_rows = v;
        for (size_t g = 0; g < n; g++) {
            uint64_t r = v[g] > 0 ? (uint64_t)v[g] : 0;
            active += r > 0;
            for (int i = 0; i < GEMM_ROW_CACHE; i++)
                pb->row_tiles[i] += (double)((r + ((uint64_t)1 << i) - 1) >> i);
        }
        pb->b_mats = active;
    } else {
        pb->b_mats = mind(pb->groups, pb->m);
    }
    return pb->b_mats > 0;
}


const char *const opm_gemm_conv_names[3] = {"fprop", "dgrad", "wgrad"};

static double spatial(const opm_tensor *t)
{
    double s = 1;
    for (int d = 2; d < t->rank; d++) s *= (double)t->shape[d];
    return s;
}

int opm_gemm_conv_shape(const opm_op *op, conv_shape *cs)
{
    const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0);
    const opm_tensor *w = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 0);
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    if (!x || !w || !y || x->rank < 3 || w->rank != x->rank || y->rank != x->rank) return 0;
    memset(cs, 0, sizeof *cs);
    cs->g = (double)opm_op_get_int(op, "groups", 1);
    cs->transposed = opm_op_get_bool(op, "transposed", 0);
    cs->bias = opm_op_find_tensor(op, OPM_ROLE_WEIGHT, 1) != NULL || opm_op_get_bool(op, "bias", 0);
    const opm_tensor *lo = cs->transposed ? x : y, *hi = cs->transposed ? y : x;
    cs->n = (double)x->shape[0];
    cs->c_lo = (double)lo->shape[1];
    cs->s_lo = spatial(lo);
    cs->c_hi = (double)hi->shape[1];
    cs->s_hi = spatial(hi);
    cs->kvol = spatial(w);
    cs->lo_b = opm_dtype_bytes(lo->dtype);
    cs->hi_b = opm_dtype_bytes(hi->dtype);
    cs->w_b = opm_dtype_bytes(w->dtype);
    cs->macs = cs->n * cs->c_lo * cs->s_lo * (cs->c_hi / cs->g) * cs->kvol;
    return cs->g >= 1 && cs->macs > 0;
}

/* One implicit GEMM of a conv, batched over the groups (each its own weight
 * slice).  The im2col operand is never stored: DRAM holds the tensor.  The
 * dgrad's depth is the useful taps per output element, macs / (g·M·N):
 * (C_lo/g)·Πk at stride 1, less where a strided conv's gradient skips the
 * zero taps (libraries split it into stride-phase sub-kernels). */
void opm_gemm_conv_problem(const conv_shape *cs, int which, gemm_problem *pb)
{
    memset(pb, 0, sizeof *pb);
    pb->batch = pb->b_mats = cs->g;
    double lo_all = cs->n * cs->c_lo * cs->s_lo * cs->lo_b, hi_all = cs->n * cs->c_hi * cs->s_hi * cs->hi_b;
    double w_all = cs->c_lo * (cs->c_hi / cs->g) * cs->kvol * cs->w_b;
    if (which == CONV_FPROP) {
        pb->m = cs->n * cs->s_lo;
        pb->n = cs->c_lo / cs->g;
        pb->k = cs->c_hi / cs->g * cs->kvol;
        pb->a_bytes = cs->hi_b;
        pb->b_bytes = cs->w_b;
        pb->c_bytes = cs->lo_b;
        pb->a_unique = hi_all;
        pb->b_unique = w_all;
    } else if (which == CONV_DGRAD) {
        pb->m = cs->n * cs->s_hi;
        pb->n = cs->c_hi / cs->g;
        pb->k = cs->macs / (cs->g * pb->m * pb->n);
        pb->a_bytes = cs->lo_b;
        pb->b_bytes = cs->w_b;
        pb->c_bytes = cs->hi_b;
        pb->a_unique = lo_all;
        pb->b_unique = w_all;
    } else {
        pb->m = cs->c_lo / cs->g;
        pb->n = cs->c_hi / cs->g * cs->kvol;
        pb->k = cs->n * cs->s_lo;
        pb->a_bytes = cs->lo_b;
        pb->b_bytes = cs->hi_b;
        pb->c_bytes = cs->w_b;
        pb->a_unique = lo_all;
        pb->b_unique = hi_all;
        /* dY is stored pixel-major (the layout fprop's K-contiguous A
         * implies): as the [C_lo, pixels] operand it is M-contiguous. */
        pb->trans_a = 1;
    }
}
