/* embed.c — a program that embeds libopmodel as an outside user would: only
 * the installed headers, linked against the static archive by another
 * compiler (tests/abi/link_static.sh).  Prints one line and exits 0 when the
 * library answers. */
#include <opmodel/opmodel.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    if (opm_version_number() != OPM_VERSION_NUMBER || strcmp(opm_version(), OPM_VERSION_STRING) != 0) {
        fprintf(stderr, "embed: headers say %s, library says %s\n", OPM_VERSION_STRING, opm_version());
        return 1;
    }
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    opm_op *op = hw ? opm_op_gemm(4096, 8192, 8192, OPM_BF16, &err) : NULL;
    opm_profile p;
    int rc = op ? opm_predict("roofline", op, hw, &p, &err) : 1;
    if (rc == 0) {
        char *json = opm_profile_to_json(&p, &err);
        rc = json == NULL || p.latency_s <= 0;
        if (!rc) printf("embed %s: %.3g us %s-bound, %zu bytes of JSON\n", opm_version(),
                        p.latency_s * 1e6, opm_bound_name(p.bound), strlen(json));
        opm_free(json);
    }
    if (rc) fprintf(stderr, "embed: %s (%s)\n", err.message, opm_errstr(err.code));
    opm_op_free(op);
    opm_hardware_free(hw);
    return rc ? 1 : 0;
}
