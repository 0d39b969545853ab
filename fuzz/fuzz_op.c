/* fuzz_op.c — libFuzzer target for the operation parsers: the bytes are
 * read as YAML and as JSON; anything that parses is also expanded back to
 * text, counted and predicted, none of which may crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include "opmodel/opmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static opm_hardware *hw;
    opm_error err;
    if (!hw) hw = opm_hardware_builtin("h100_sxm", &err);
    for (int fmt = 0; fmt < 2; fmt++) {
        opm_op *op = opm_op_parse_string((const char *)data, size, fmt ? OPM_FORMAT_JSON : OPM_FORMAT_YAML,
                                         "<fuzz>", 1, &err);
        if (!op) continue;
        opm_profile p;
        if (hw && opm_predict("roofline", op, hw, &p, &err) == 0) {
            char *j = opm_profile_to_json(&p, &err);
            free(j);
        }
        char *t = opm_op_to_text(op, fmt ? OPM_FORMAT_JSON : OPM_FORMAT_YAML, &err);
        free(t);
        opm_op_free(op);
    }
    return 0;
}
