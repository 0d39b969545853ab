/* fuzz_llm_config.c — libFuzzer target for model configs (src/llm): whatever
 * loads must build a decode, prefill and training step at small sizes and
 * predict it on a built-in GPU without crashing, and draw both charts; a
 * refused config or step gives a one-line error. */
#include <stdint.h>
#include <stdlib.h>
#include "llm/llm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const opm_error *err)
{
    for (const char *c = err->message; *c; c++)
        if ((unsigned char)*c < 0x20) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    opm_error err;
    llm_config *c = llm_config_load_string((const char *)data, size, "<fuzz>", &err);
    if (!c) {
        one_line(&err);
        return 0;
    }
    (void)llm_config_params(c);
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    static const llm_phase phases[] = {LLM_DECODE, LLM_PREFILL, LLM_TRAIN};
    for (size_t i = 0; hw && i < 3; i++) {
        llm_step_spec sp = {phases[i], 2, 16, 32, OPM_BF16, OPM_BF16, 1, 1, 1, "extended_roofline", 0};
        llm_step s;
        if (llm_step_build(c, &sp, &s, &err)) {
            one_line(&err);
            continue;
        }
        if (llm_step_predict(&s, &sp, hw, &err) == 0) {
            free(llm_svg_kinds(&s, "fuzz", &err));
            free(llm_svg_roofline(&s, hw, sp.dtype, "fuzz", &err));
        } else {
            one_line(&err);
        }
        llm_step_free(&s);
    }
    opm_hardware_free(hw);
    llm_config_free(c);
    return 0;
}
