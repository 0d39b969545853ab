/* test_examples.c — every example in examples/ predicted by every
 * registered model on a GPU, and every JSONL line of examples/ops.jsonl. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

Test(examples, every_example_every_model)
{
    char dir[512];
    DIR *d = opendir(src_path("examples", dir, sizeof dir));
    cr_assert_not_null(d);
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || (strcmp(dot, ".yaml") && strcmp(dot, ".json"))) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        opm_op *op = opm_op_parse_file(path, &err);
        cr_assert_not_null(op, "%s", err.message);
        for (size_t m = 0; m < opm_model_count(); m++) {
            opm_profile p;
            cr_assert_eq(opm_model_at(m)->predict(op, hw, &p, &err), 0, "%s with %s: %s", e->d_name,
                         opm_model_at(m)->name, err.message);
            cr_assert_gt(p.latency_s, 0, "%s", e->d_name);
        }
        opm_op_free(op);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 10);
    opm_hardware_free(hw);
}

Test(examples, jsonl_batch_lines)
{
    char p[512];
    FILE *f = fopen(src_path("examples/ops.jsonl", p, sizeof p), "r");
    cr_assert_not_null(f);
    char line[4096];
    int n = 0;
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("mi300x", &err);
    while (fgets(line, sizeof line, f)) {
        opm_op *op = opm_op_parse_string(line, strlen(line), OPM_FORMAT_JSON, "ops.jsonl", ++n, &err);
        cr_assert_not_null(op, "%s", err.message);
        opm_profile prof;
        cr_assert_eq(opm_predict("roofline", op, hw, &prof, &err), 0, "%s", err.message);
        opm_op_free(op);
    }
    fclose(f);
    cr_assert_geq(n, 5);
    opm_hardware_free(hw);
}
