/* fuzz_hardware.c — libFuzzer target for the hardware loader: whatever
 * loads must emit, reload to an equal object, and rescale its clock; a
 * GEMM predicted on it with every model is finite or refused with a
 * one-line error (never a printed null); a refused file gives one line. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "opmodel/opmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string((const char *)data, size, "<fuzz>", &err);
    if (!hw) {
        for (const char *c = err.message; *c; c++)
            if ((unsigned char)*c < 0x20) abort();
        return 0;
    }
    opm_op *op = opm_op_gemm(8192, 8192, 8192, OPM_BF16, &err);
    for (size_t m = 0; op && m < opm_model_count(); m++) {
        opm_profile p;
        if (opm_predict(opm_model_at(m)->name, op, hw, &p, &err) == 0 && !isfinite(p.latency_s)) abort();
    }
    opm_op_free(op);
    char *y = opm_hardware_to_yaml(hw, &err);
    if (y) {
        opm_hardware *back = opm_hardware_load_string(y, strlen(y), "<emitted>", &err);
        if (!back || !opm_hardware_equal(hw, back)) abort();
        opm_hardware_free(back);
        free(y);
    }
    opm_hardware *slow = opm_hardware_with_clock(hw, opm_hardware_clock_hz(hw) / 2, &err);
    opm_hardware_free(slow);
    opm_hardware_free(hw);
    return 0;
}
