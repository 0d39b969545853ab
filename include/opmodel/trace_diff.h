/* opmodel/trace_diff.h — two trace reports of the same model (another GPU,
 * another software version) side by side: every group of each report
 * paired with its counterpart on the other side, or alone, with the
 * difference in kernel time; categories and GPU timelines side by side.
 *
 *     opm_trace_diff *d = opm_trace_diff_new(report_a, report_b, &err);
 *     for (size_t i = 0; i < opm_trace_diff_group_count(d); i++) {
 *         const opm_trace_diff_entry *g = opm_trace_diff_group(d, i);
 *         printf("%s %+g\n", g->a ? g->a->name : g->b->name, g->delta_s);
 *     }
 *     opm_trace_diff_free(d);   before the reports it borrows
 *
 * Ownership: a diff borrows both reports (its groups point at theirs), so
 * it must be freed before either report.  Immutable after construction;
 * may be read from many threads at once. */
#ifndef OPMODEL_TRACE_DIFF_H
#define OPMODEL_TRACE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a pair was made (docs/trace.md, "trace diff"). */
typedef enum opm_trace_diff_match {
    OPM_TDIFF_ARGS,     /* same op name and the same recorded call arguments */
    OPM_TDIFF_PARAMS,   /* same op name and model parameters, arguments differ */
    OPM_TDIFF_PLACE,    /* names differ: same place in the GPU execution order */
    OPM_TDIFF_A_ONLY,   /* no counterpart in B (b is NULL) */
    OPM_TDIFF_B_ONLY    /* no counterpart in A (a is NULL) */
} opm_trace_diff_match;

/* "args", "params", "place", "a_only", "b_only". */
OPM_API const char *opm_trace_diff_match_name(opm_trace_diff_match m);

typedef struct opm_trace_diff_entry {
    const opm_trace_group *a;   /* borrowed from report A; NULL when absent */
    const opm_trace_group *b;   /* borrowed from report B; NULL when absent */
    size_t a_index, b_index;    /* index in each report's groups; SIZE_MAX when absent */
    opm_trace_diff_match match;
    double delta_s;             /* b kernel time − a kernel time (absent side: 0) */
} opm_trace_diff_entry;

typedef struct opm_trace_diff_cat {
    opm_trace_category category;
    double a_s, b_s;            /* the category's kernel time in each report (0: none) */
} opm_trace_diff_cat;

typedef struct opm_trace_diff opm_trace_diff;

/* Pairs the groups of a and b.  Groups are ordered by delta_s, largest
 * regression (b slower) first; every group of each report appears exactly
 * once.  NULL with err set on a NULL report or out of memory. */
OPM_API opm_trace_diff *opm_trace_diff_new(const opm_trace_report *a, const opm_trace_report *b,
                                           opm_error *err);
OPM_API void opm_trace_diff_free(opm_trace_diff *d);

OPM_API size_t opm_trace_diff_group_count(const opm_trace_diff *d);
OPM_API const opm_trace_diff_entry *opm_trace_diff_group(const opm_trace_diff *d, size_t i);
/* Categories with time on either side, in opm_trace_category order. */
OPM_API size_t opm_trace_diff_category_count(const opm_trace_diff *d);
OPM_API const opm_trace_diff_cat *opm_trace_diff_category(const opm_trace_diff *d, size_t i);
OPM_API const opm_trace_report *opm_trace_diff_report_a(const opm_trace_diff *d);
OPM_API const opm_trace_report *opm_trace_diff_report_b(const opm_trace_diff *d);

/* Contract §8, one JSON document. */
OPM_API char *opm_trace_diff_to_json(const opm_trace_diff *d, opm_error *err);
/* One row per pair, with a header row. */
OPM_API char *opm_trace_diff_to_csv(const opm_trace_diff *d, opm_error *err);
/* Terminal tables: timelines, categories, then the `top` largest
 * regressions and the `top` largest improvements (top = 0: every group). */
OPM_API char *opm_trace_diff_to_table(const opm_trace_diff *d, size_t top, opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
