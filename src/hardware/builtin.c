/* builtin.c — the built-in hardware database: YAML texts compiled into the
 * binary from configs/hardware/, and what the loader makes of each, compiled
 * in at build time (tools/hwgen.c runs the same loader), so a built-in is a
 * copy, not a parse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "builtin_data.h"
#include "hw_internal.h"

size_t opm_hardware_builtin_count(void) { return opm_builtin_count; }

const char *opm_hardware_builtin_name(size_t i)
{
    return i < opm_builtin_count ? opm_builtin_entries[i].name : NULL;
}

const char *opm_hardware_builtin_text(size_t i)
{
    return i < opm_builtin_count ? opm_builtin_entries[i].text : NULL;
}

opm_hardware *opm_hardware_builtin(const char *name, opm_error *err)
{
    opm_error_clear(err); /* no stale message after success */
    for (size_t i = 0; i < opm_builtin_count; i++)
        if (strcmp(opm_builtin_entries[i].name, name) == 0) {
            if (opm_builtin_images[i]) {
                opm_hardware *hw = malloc(sizeof *hw);
                if (!hw) opm_err(err, OPM_ENOMEM, NULL, "out of memory");
                else memcpy(hw, opm_builtin_images[i], sizeof *hw);
                return hw;
            }
            char source[96];
            snprintf(source, sizeof source, "configs/hardware/%s.yaml", name);
            return opm_hardware_load_string(opm_builtin_entries[i].text, opm_builtin_entries[i].len, source, err);
        }
    opm_err(err, OPM_ENOTFOUND, "hardware", "no built-in hardware named '%s' (see `opmodel hardware list`)", name);
    return NULL;
}
