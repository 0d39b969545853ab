/* fuzz_hardware.c — libFuzzer target for the hardware loader: whatever
 * loads must emit, reload to an equal object, and rescale its clock. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "opmodel/opmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_load_string((const char *)data, size, "<fuzz>", &err);
    if (!hw) return 0;
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
