/* user_model.c — a model of one's own next to the built-in ones, without
 * forking: registered in an opm_registry (no global state) and used by
 * opm_predict_with.  This one scales the roofline by a measured efficiency
 * per op kind.  Exits 0 when the registered model answers. */
#include <opmodel/opmodel.h>
#include <stdio.h>

/* Fraction of the roofline a kernel reaches (a user's own calibration). */
static double efficiency(opm_kind k) { return k == OPM_KIND_GEMM ? 0.7 : 0.5; }

static int derated_predict(const opm_op *op, const opm_hardware *hw, opm_profile *out, opm_error *err)
{
    int rc = opm_predict("roofline", op, hw, out, err);
    if (rc) return rc;
    double stretch = 1 / efficiency(out->kind);
    out->latency_s = out->overhead_s + (out->latency_s - out->overhead_s) * stretch;
    out->static_energy_j *= stretch;
    return 0;
}

int main(void)
{
    opm_error err;
    opm_registry *reg = opm_registry_new(&err);
    opm_model derated = {"derated_roofline", "roofline / a per-kind efficiency", derated_predict};
    if (!reg || opm_model_register(reg, &derated, &err)) {
        fprintf(stderr, "user_model: %s\n", err.message);
        return 2;
    }
    for (size_t i = 0; i < opm_registry_model_count(reg); i++)
        printf("model %-20s %s\n", opm_registry_model_at(reg, i)->name, opm_registry_model_at(reg, i)->description);
    opm_hardware *hw = opm_hardware_builtin("a100_80gb_sxm", &err);
    opm_op *op = hw ? opm_op_gemm(2048, 2048, 2048, OPM_FP16, &err) : NULL;
    opm_profile a, b;
    int rc = !op || opm_predict_with(reg, "roofline", op, hw, &a, &err) ||
             opm_predict_with(reg, "derated_roofline", op, hw, &b, &err);
    if (rc) fprintf(stderr, "user_model: %s\n", err.message);
    else printf("%s: roofline %.2f us, %s %.2f us\n", b.name, a.latency_s * 1e6, b.model, b.latency_s * 1e6);
    opm_op_free(op);
    opm_hardware_free(hw);
    opm_registry_free(reg);
    return rc ? 2 : b.latency_s > a.latency_s ? 0 : 1;
}
