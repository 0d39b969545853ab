/* predict.c — the smallest embedding: a built-in GPU, a GEMM, one
 * prediction, its typed GEMM details and its JSON.  docs/c_api.md walks
 * through it.  usage: predict [HARDWARE] [MODEL] */
#include <opmodel/opmodel.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *hw_name = argc > 1 ? argv[1] : "h100_sxm";
    const char *model = argc > 2 ? argv[2] : "effective_roofline";
    opm_error err;
    opm_hardware *hw = opm_hardware_open(hw_name, &err); /* a built-in name or a YAML file */
    opm_op *op = hw ? opm_op_gemm(4096, 8192, 8192, OPM_BF16, &err) : NULL;
    opm_profile p;
    if (!op || opm_predict(model, op, hw, &p, &err) != 0) {
        fprintf(stderr, "predict: %s\n", err.message);
        opm_op_free(op);
        opm_hardware_free(hw);
        return 2;
    }
    /* The profile owns its strings: it outlives the op and the hardware. */
    opm_op_free(op);
    opm_hardware_free(hw);
    printf("%s on %s by %s: %.3f us, %s-bound%s\n", p.name, p.hardware, p.model, p.latency_s * 1e6,
           opm_bound_name(p.bound), p.fell_back ? " (the roofline answered)" : "");
    const opm_gemm_details *g = opm_profile_gemm(&p);
    if (g)
        printf("kernel %s (%s): tile %lldx%lldx%lld, split-K %lld, %lld stages, %.2f waves\n", g->kernel,
               g->kernel_family, (long long)g->tile_m, (long long)g->tile_n, (long long)g->tile_k,
               (long long)g->split_k, (long long)g->pipeline_stages, g->waves);
    for (size_t i = 0; i < opm_profile_diag_count(&p); i++) {
        const opm_diag *d = opm_profile_diag_at(&p, i);
        if (d->is_text) printf("  %-28s %s\n", d->key, d->text);
        else printf("  %-28s %g\n", d->key, d->number);
    }
    if (opm_profile_diags_dropped(&p)) printf("  (%zu more diagnostics dropped)\n", opm_profile_diags_dropped(&p));
    char *json = opm_profile_to_json(&p, &err);
    if (!json) {
        fprintf(stderr, "predict: %s\n", err.message);
        return 2;
    }
    printf("%s\n", json);
    opm_free(json);
    return 0;
}
