/* op_emit.c — an operation written back out in its full form (what
 * `opmodel expand` prints), and a prediction as one JSON line (contract §3). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "io_internal.h"

static doc_node *num_node(doc *d, double v)
{
    char buf[40];
    opm_format_double(v, buf, sizeof buf);
    return doc_new_scalar(d, buf, 0);
}

static doc_node *int_node(doc *d, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return doc_new_scalar(d, buf, 0);
}

doc *opm_op_to_doc(const opm_op *op, opm_error *err)
{
    doc *d = doc_new_empty("<op>");
    if (!d) goto oom;
    doc_node *root = doc_new_collection(d, DOC_MAP);
    doc_node *tensors = doc_new_collection(d, DOC_SEQ);
    if (!root || !tensors) goto oom;
    doc_set_root(d, root);
    int bad = doc_append(d, root, "name", doc_new_scalar(d, opm_op_name(op), 1)) ||
              doc_append(d, root, "kind", doc_new_scalar(d, opm_kind_name(opm_op_kind(op)), 0)) ||
              doc_append(d, root, "phase", doc_new_scalar(d, opm_phase_name(opm_op_phase(op)), 0)) ||
              doc_append(d, root, "tensors", tensors);
    for (size_t i = 0; !bad && i < opm_op_tensor_count(op); i++) {
        const opm_tensor *t = opm_op_tensor(op, i);
        doc_node *tn = doc_new_collection(d, DOC_MAP), *shape = doc_new_collection(d, DOC_SEQ);
        if (!tn || !shape) goto oom;
        for (int k = 0; !bad && k < t->rank; k++) bad = doc_append(d, shape, NULL, int_node(d, t->shape[k]));
        bad = bad || doc_append(d, tn, "role", doc_new_scalar(d, opm_role_name(t->role), 0)) ||
              doc_append(d, tn, "shape", shape) ||
              doc_append(d, tn, "dtype", doc_new_scalar(d, opm_dtype_name(t->dtype), 0)) ||
              (t->layout[0] && doc_append(d, tn, "layout", doc_new_scalar(d, t->layout, 1))) ||
              doc_append(d, tensors, NULL, tn);
    }
    if (!bad && opm_op_attr_count(op)) {
        doc_node *attrs = doc_new_collection(d, DOC_MAP);
        bad = !attrs || doc_append(d, root, "attrs", attrs);
        for (size_t i = 0; !bad && i < opm_op_attr_count(op); i++) {
            const char *key = opm_op_attr_key(op, i);
            doc_node *v = NULL;
            switch (opm_op_attr_type(op, i)) {
            case OPM_ATTR_BOOL: v = doc_new_scalar(d, opm_op_get_bool(op, key, 0) ? "true" : "false", 0); break;
            case OPM_ATTR_INT: v = int_node(d, opm_op_get_int(op, key, 0)); break;
            case OPM_ATTR_DOUBLE: v = num_node(d, opm_op_get_double(op, key, 0)); break;
            case OPM_ATTR_STRING: v = doc_new_scalar(d, opm_op_get_string(op, key, ""), 1); break;
            case OPM_ATTR_INTS: {
                const int64_t *vals;
                size_t n = opm_op_get_ints(op, key, &vals);
                v = doc_new_collection(d, DOC_SEQ);
                for (size_t k = 0; v && k < n; k++)
                    if (doc_append(d, v, NULL, int_node(d, vals[k]))) v = NULL;
                break;
            }
            }
            bad = doc_append(d, attrs, key, v);
        }
    }
    if (bad) goto oom;
    return d;
oom:
    doc_free(d);
    opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    return NULL;
}

char *opm_op_to_text(const opm_op *op, opm_format format, opm_error *err)
{
    opm_error_clear(err);
    doc *d = opm_op_to_doc(op, err);
    if (!d) return NULL;
    strbuf b = {0};
    int rc = format == OPM_FORMAT_JSON ? doc_emit_json(doc_root(d), &b) : doc_emit_yaml(doc_root(d), &b);
    doc_free(d);
    if (rc || b.oom) {
        free(b.p);
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    return b.p;
}

void opm_profile_write_json(const opm_profile *p, strbuf *b)
{
    SB_LIT(b, "{\"name\": ");
    sb_json_string(b, p->name);
    SB_LIT(b, ", \"kind\": \"");
    sb_puts(b, opm_kind_name(p->kind));
    SB_LIT(b, "\", \"phase\": \"");
    sb_puts(b, opm_phase_name(p->phase));
    SB_LIT(b, "\", \"model\": ");
    sb_json_string(b, p->model);
    SB_LIT(b, ", \"hardware\": ");
    sb_json_string(b, p->hardware);
    SB_LIT(b, ", \"latency_s\": ");
    sb_num(b, p->latency_s);
    SB_LIT(b, ", \"flops\": ");
    sb_u64(b, p->flops);
    SB_LIT(b, ", \"engine\": \"");
    sb_puts(b, opm_engine_name(p->engine));
    SB_LIT(b, "\", \"bound\": \"");
    sb_puts(b, opm_bound_name(p->bound));
    SB_LIT(b, "\", \"arithmetic_intensity\": ");
    sb_num(b, p->arithmetic_intensity);
    SB_LIT(b, ", \"memory_access\": {");
    for (size_t i = 0; i < p->level_count; i++) {
        sb_puts(b, i ? ", \"" : "\"");
        sb_puts(b, p->levels[i].name);
        SB_LIT(b, "\": {\"read_bytes\": ");
        sb_u64(b, p->levels[i].read_bytes);
        SB_LIT(b, ", \"write_bytes\": ");
        sb_u64(b, p->levels[i].write_bytes);
        sb_putc(b, '}');
    }
    SB_LIT(b, "}, \"footprint\": {\"input_bytes\": ");
    sb_u64(b, p->input_bytes);
    SB_LIT(b, ", \"weight_bytes\": ");
    sb_u64(b, p->weight_bytes);
    SB_LIT(b, ", \"output_bytes\": ");
    sb_u64(b, p->output_bytes);
    SB_LIT(b, ", \"workspace_bytes\": ");
    sb_u64(b, p->workspace_bytes);
    SB_LIT(b, "}, \"energy_j\": ");
    sb_num(b, p->energy_j);
    SB_LIT(b, ", \"energy_breakdown\": {\"compute_j\": ");
    sb_num(b, p->compute_energy_j);
    for (size_t i = 0; i < p->level_count; i++) {
        SB_LIT(b, ", \"");
        sb_puts(b, p->levels[i].name);
        SB_LIT(b, "_j\": ");
        sb_num(b, p->levels[i].energy_j);
    }
    SB_LIT(b, ", \"static_j\": ");
    sb_num(b, p->static_energy_j);
    SB_LIT(b, "}, \"average_power_w\": ");
    sb_num(b, p->average_power_w);
    SB_LIT(b, ", \"diagnostics\": {");
    for (size_t i = 0; i < p->diag_count; i++) {
        const opm_diag *dg = &p->diags[i];
        if (i) SB_LIT(b, ", ");
        sb_json_string(b, dg->key);
        SB_LIT(b, ": ");
        if (dg->is_text) sb_json_string(b, dg->text);
        else sb_num(b, dg->number);
    }
    /* fell_back: the requested model left this op to the roofline;
     * diagnostics_dropped: diagnostics past the profile's capacity. */
    if (p->fell_back) SB_LIT(b, "}, \"fell_back\": true");
    else SB_LIT(b, "}, \"fell_back\": false");
    SB_LIT(b, ", \"diagnostics_dropped\": ");
    sb_u64(b, p->diags_dropped);
    sb_putc(b, '}');
}

char *opm_profile_to_json(const opm_profile *p, opm_error *err)
{
    opm_error_clear(err);
    strbuf b = {0};
    opm_profile_write_json(p, &b);
    if (b.oom) {
        free(b.p);
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    return b.p;
}
