/* testutil.h — helpers the unit tests share: paths into the source tree and
 * loading fixtures without ../shared. */
#ifndef OPM_TESTUTIL_H
#define OPM_TESTUTIL_H

#include <stddef.h>
#include "opmodel/opmodel.h"

/* "$OPM_SOURCE_DIR/rel" in a static buffer per call site (copy if kept). */
const char *src_path(const char *rel, char *buf, size_t cap);
/* A new empty file "$TMPDIR/<stem>XXXXXX" (TMPDIR defaulting to /tmp), its
 * path in buf; returns the open descriptor.  Fails the test on error. */
int tmp_file(char *buf, size_t cap, const char *stem);
/* A new empty directory made the same way; returns buf. */
char *tmp_dir(char *buf, size_t cap, const char *stem);
/* Relative difference |a-b|/max(|a|,|b|). */
double rel_diff(double a, double b);
/* Parses an op from inline YAML; fails the test on error. */
opm_op *op_yaml(const char *text);
/* Counts of the op in inline YAML; fails the test on error. */
opm_counts counts_of(const char *yaml);
/* Inline YAML that must be rejected with `needle` in the one-line message. */
void rejected(const char *yaml, const char *needle);
/* A built-in hardware entry; fails the test when unknown. */
opm_hardware *builtin_hw(const char *name);
/* A copy of built-in `name` whose L2 level has the given far-hit latency
 * (cycles) and partition count; fails the test on error. */
opm_hardware *builtin_hw_with_l2(const char *name, double far_latency_cycles, double partitions);
/* model's prediction of op on hw; fails the test on error. */
opm_profile predict_ok(const char *model, const opm_op *op, const opm_hardware *hw);
/* Parses an op from inline JSON; fails the test on error. */
opm_op *op_json(const char *json);

/* The one group of a trace report named `name`, NULL when none; fails on two. */
const opm_trace_group *group_named(const opm_trace_report *r, const char *name);

#endif
