/* fuzz_gemm_csv.c — libFuzzer target for the two GEMM latency CSV loaders
 * (contract §4): validate-gemm-latency's dataset loader and calibrate's
 * reader + overhead fit, both on the shared reader in src/validate/csv.c.
 * The loaders take paths, so each input is written to one file in a
 * directory made once per process. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opmodel/opmodel.h"
#include "validate/calibrate.h"
#include "validate/gemm_latency.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[] = "/tmp/opm_fuzz_csv_XXXXXX", path[64];
    static opm_hardware *p4;
    opm_error err;
    if (!path[0]) {
        if (!mkdtemp(dir)) abort();
        snprintf(path, sizeof path, "%s/rows.csv", dir);
        p4 = opm_hardware_builtin("p4", &err);
        if (!p4) abort();
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) abort();

    opm_gemm_dataset ds;
    if (opm_gemm_dataset_load(dir, &ds, &err) == 0) opm_gemm_dataset_free(&ds);

    /* The overhead alone: one bounded parameter keeps each input fast. */
    opm_cal_options o = {path, NULL, NULL, 0, 1u << OPM_CAL_OVERHEAD};
    opm_calibration c;
    if (opm_calibrate(p4, &o, &c, &err) == 0) {
        if (!c.hw) abort();
    }
    opm_calibration_free(&c);
    return 0;
}
