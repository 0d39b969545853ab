/* fuzz_workload.c — libFuzzer target for the workload readers
 * (opm_workload_add_text: JSONL ops, EnergAIzer kernel lists, traces):
 * whatever the bytes, reading either fails with one printable line and
 * leaves the workload as it was, or succeeds and the workload evaluates in
 * both modes with finite totals; lists named after a known model get their
 * implied kernels too. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "opmodel/opmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const opm_error *err)
{
    if (err->code == OPM_OK || !err->message[0]) abort();
    for (const unsigned char *c = (const unsigned char *)err->message; *c; c++)
        if (*c < 0x20 || *c == 0x7f) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static opm_hardware *hw;
    opm_error err;
    if (!hw) hw = opm_hardware_builtin("a100_40gb_pcie", &err);
    opm_workload *w = opm_workload_new(&err);
    if (!w || !hw) abort();
    /* The input's length picks the list name: none, or a model whose
     * architecture adds implied kernels. */
    static const char *const names[] = {"<fuzz>", "resnet101__fuzz.json", "mobilevitmodel_fuzz.json",
                                        "gpt2model_fuzz.json"};
    if (opm_workload_add_text(w, (const char *)data, size, names[size % 4], &err)) {
        check_error(&err);
        if (opm_workload_kernel_count(w) || opm_workload_op_count(w)) abort();
    } else {
        for (int mode = 0; mode < 2; mode++) {
            opm_workload_options o;
            opm_workload_options_init(&o);
            o.mode = mode ? OPM_WORKLOAD_GRAPH : OPM_WORKLOAD_EAGER;
            opm_workload_result *r = opm_workload_evaluate(w, hw, &o, &err);
            if (!r) {
                check_error(&err);
                continue;
            }
            const opm_workload_totals *t = opm_workload_result_totals(r);
            if (!isfinite(t->latency_s) || !isfinite(t->energy_j) || t->kernels != opm_workload_kernel_count(w) ||
                opm_workload_implied(w) > t->kernels)
                abort();
            opm_workload_result_free(r);
        }
    }
    opm_workload_free(w);
    return 0;
}
