/* testutil.c — see testutil.h. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

const char *src_path(const char *rel, char *buf, size_t cap)
{
    const char *root = getenv("OPM_SOURCE_DIR");
    snprintf(buf, cap, "%s/%s", root ? root : ".", rel);
    return buf;
}

double rel_diff(double a, double b)
{
    double m = fmax(fabs(a), fabs(b));
    return m == 0 ? 0 : fabs(a - b) / m;
}

opm_op *op_yaml(const char *text)
{
    opm_error err;
    opm_error_clear(&err);
    opm_op *op = opm_op_parse_string(text, strlen(text), OPM_FORMAT_YAML, "<test>", 1, &err);
    cr_assert_not_null(op, "parse failed: %s", err.message);
    return op;
}

opm_counts counts_of(const char *yaml)
{
    opm_op *op = op_yaml(yaml);
    opm_counts c;
    opm_error err;
    cr_assert_eq(opm_op_count(op, &c, &err), 0, "%s", err.message);
    opm_op_free(op);
    return c;
}

void rejected(const char *yaml, const char *needle)
{
    opm_error err;
    opm_error_clear(&err);
    opm_op *op = opm_op_parse_string(yaml, strlen(yaml), OPM_FORMAT_YAML, "<test>", 1, &err);
    cr_assert_null(op, "accepted: %s", yaml);
    cr_assert_neq(err.code, OPM_OK);
    cr_assert_null(strchr(err.message, '\n'));
    cr_assert(strstr(err.message, needle), "expected '%s' in: %s", needle, err.message);
}

static void tmp_template(char *buf, size_t cap, const char *stem)
{
    const char *base = getenv("TMPDIR");
    int n = snprintf(buf, cap, "%s/%sXXXXXX", base && *base ? base : "/tmp", stem);
    cr_assert(n > 0 && (size_t)n < cap, "temporary path too long for its buffer");
}

int tmp_file(char *buf, size_t cap, const char *stem)
{
    tmp_template(buf, cap, stem);
    int fd = mkstemp(buf);
    cr_assert_geq(fd, 0, "mkstemp %s failed", buf);
    return fd;
}

char *tmp_dir(char *buf, size_t cap, const char *stem)
{
    tmp_template(buf, cap, stem);
    cr_assert_not_null(mkdtemp(buf), "mkdtemp %s failed", buf);
    return buf;
}

opm_hardware *builtin_hw(const char *name)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin(name, &err);
    cr_assert_not_null(hw, "%s", err.message);
    return hw;
}

opm_hardware *builtin_hw_with_l2(const char *name, double far_latency_cycles, double partitions)
{
    opm_hardware *hw = builtin_hw(name);
    opm_error err;
    opm_hardware_builder *b = opm_hardware_builder_from(hw, &err);
    cr_assert_not_null(b, "%s", err.message);
    opm_memory_level l2 = *opm_hardware_find_level(hw, "l2");
    l2.far_latency_cycles = far_latency_cycles;
    l2.partitions = partitions;
    cr_assert_eq(opm_hardware_builder_add_level(b, &l2, &err), 0, "%s", err.message);
    opm_hardware *out = opm_hardware_builder_build(b, &err);
    cr_assert_not_null(out, "%s", err.message);
    opm_hardware_builder_free(b);
    opm_hardware_free(hw);
    return out;
}

opm_profile predict_ok(const char *model, const opm_op *op, const opm_hardware *hw)
{
    opm_error err;
    opm_profile p;
    cr_assert_eq(opm_predict(model, op, hw, &p, &err), 0, "%s", err.message);
    return p;
}

opm_op *op_json(const char *json)
{
    opm_error err;
    opm_op *op = opm_op_parse_string(json, strlen(json), OPM_FORMAT_JSON, "test", 1, &err);
    cr_assert_not_null(op, "%s: %s", json, err.message);
    return op;
}

/* The one group of a report named `name` (NULL when none; two is a failure). */
const opm_trace_group *group_named(const opm_trace_report *r, const char *name)
{
    const opm_trace_group *found = NULL;
    for (size_t i = 0; i < opm_trace_report_group_count(r); i++) {
        const opm_trace_group *g = opm_trace_report_group(r, i);
        if (strcmp(g->name, name) == 0) {
            cr_assert_null(found, "two groups named %s", name);
            found = g;
        }
    }
    return found;
}
