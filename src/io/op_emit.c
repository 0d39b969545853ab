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

/* A string literal at o. */
#define PUT_LIT(o, lit) (memcpy((o), "" lit, sizeof(lit) - 1), (o) += sizeof(lit) - 1)

/* A short name the library chose (kind, phase, engine, bound, level): no
 * escapes; at most cap bytes. */
static char *put_plain(char *o, const char *s, size_t cap)
{
    size_t i = 0;
    for (; i < cap && s[i]; i++) o[i] = s[i];
    return o + i;
}

/* opm_put_sig12 through the cache c (NULL: none).  The same bits give the
 * same text, so the output is the one without the cache. */
static inline char *put_num(char *o, double v, opm_num_cache *c)
{
    if (!c) return opm_put_sig12(o, v);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    opm_num_text *e = &c->e[(bits * 0x9E3779B97F4A7C15u) >> (64 - OPM_NUM_CACHE_BITS)];
    if (e->len && e->bits == bits) {
        memcpy(o, e->text, sizeof e->text); /* within OPM_PUT_NUM_ROOM */
        return o + e->len;
    }
    char *end = opm_put_sig12(o, v);
    size_t n = (size_t)(end - o);
    /* The whole piece, past the text's end too (room the caller holds):
     * one fixed-size copy instead of a call. */
    if (n > 0 && n <= sizeof e->text) {
        e->bits = bits;
        e->len = (unsigned char)n;
        memcpy(e->text, o, sizeof e->text);
    }
    return end;
}

void opm_profile_write_json(const opm_profile *p, strbuf *b)
{
    /* Every piece has a bound (the profile's strings are fixed arrays), so
     * the room is reserved once and the pieces are written without a
     * check each: this runs once per line of `predict --batch`. */
    size_t nl = p->level_count < OPM_MAX_LEVELS ? p->level_count : OPM_MAX_LEVELS;
    size_t nd = p->diag_count < OPM_MAX_DIAGS ? p->diag_count : OPM_MAX_DIAGS;
    enum { NAME = sizeof p->levels[0].name, KEY = sizeof p->diags[0].key, TEXT = sizeof p->diags[0].text };
    size_t room = 2048 + OPM_JSON_STRING_ROOM(sizeof p->name) + OPM_JSON_STRING_ROOM(sizeof p->model) +
                  OPM_JSON_STRING_ROOM(sizeof p->hardware) + nl * (2 * NAME + 128 + 4 * OPM_PUT_NUM_ROOM) +
                  nd * (OPM_JSON_STRING_ROOM(KEY) + OPM_JSON_STRING_ROOM(TEXT) + OPM_PUT_NUM_ROOM + 8);
    char *o = sb_room(b, room);
    if (!o) return;
    PUT_LIT(o, "{\"name\": ");
    o = opm_put_json_string(o, p->name, sizeof p->name);
    PUT_LIT(o, ", \"kind\": \"");
    o = put_plain(o, opm_kind_name(p->kind), 64);
    PUT_LIT(o, "\", \"phase\": \"");
    o = put_plain(o, opm_phase_name(p->phase), 64);
    PUT_LIT(o, "\", \"model\": ");
    o = opm_put_json_string(o, p->model, sizeof p->model);
    PUT_LIT(o, ", \"hardware\": ");
    o = opm_put_json_string(o, p->hardware, sizeof p->hardware);
    PUT_LIT(o, ", \"latency_s\": ");
    o = opm_put_sig12(o, p->latency_s);
    PUT_LIT(o, ", \"flops\": ");
    o = opm_put_u64(o, p->flops);
    PUT_LIT(o, ", \"engine\": \"");
    o = put_plain(o, opm_engine_name(p->engine), 64);
    PUT_LIT(o, "\", \"bound\": \"");
    o = put_plain(o, opm_bound_name(p->bound), 64);
    PUT_LIT(o, "\", \"arithmetic_intensity\": ");
    o = opm_put_sig12(o, p->arithmetic_intensity);
    PUT_LIT(o, ", \"memory_access\": {");
    for (size_t i = 0; i < nl; i++) {
        if (i) PUT_LIT(o, ", ");
        *o++ = '"';
        o = put_plain(o, p->levels[i].name, NAME);
        PUT_LIT(o, "\": {\"read_bytes\": ");
        o = opm_put_u64(o, p->levels[i].read_bytes);
        PUT_LIT(o, ", \"write_bytes\": ");
        o = opm_put_u64(o, p->levels[i].write_bytes);
        *o++ = '}';
    }
    PUT_LIT(o, "}, \"footprint\": {\"input_bytes\": ");
    o = opm_put_u64(o, p->input_bytes);
    PUT_LIT(o, ", \"weight_bytes\": ");
    o = opm_put_u64(o, p->weight_bytes);
    PUT_LIT(o, ", \"output_bytes\": ");
    o = opm_put_u64(o, p->output_bytes);
    PUT_LIT(o, ", \"workspace_bytes\": ");
    o = opm_put_u64(o, p->workspace_bytes);
    PUT_LIT(o, "}, \"energy_j\": ");
    o = opm_put_sig12(o, p->energy_j);
    PUT_LIT(o, ", \"energy_breakdown\": {\"compute_j\": ");
    o = opm_put_sig12(o, p->compute_energy_j);
    for (size_t i = 0; i < nl; i++) {
        PUT_LIT(o, ", \"");
        o = put_plain(o, p->levels[i].name, NAME);
        PUT_LIT(o, "_j\": ");
        o = opm_put_sig12(o, p->levels[i].energy_j);
    }
    PUT_LIT(o, ", \"static_j\": ");
    o = opm_put_sig12(o, p->static_energy_j);
    PUT_LIT(o, "}, \"average_power_w\": ");
    o = put_num(o, p->average_power_w, b->nums);
    PUT_LIT(o, ", \"diagnostics\": {");
    for (size_t i = 0; i < nd; i++) {
        const opm_diag *dg = &p->diags[i];
        if (i) PUT_LIT(o, ", ");
        o = opm_put_json_string(o, dg->key, KEY);
        PUT_LIT(o, ": ");
        if (dg->is_text) o = opm_put_json_string(o, dg->text, TEXT);
        else o = put_num(o, dg->number, b->nums);
    }
    /* fell_back: the requested model left this op to the roofline;
     * diagnostics_dropped: diagnostics past the profile's capacity. */
    if (p->fell_back) PUT_LIT(o, "}, \"fell_back\": true");
    else PUT_LIT(o, "}, \"fell_back\": false");
    PUT_LIT(o, ", \"diagnostics_dropped\": ");
    o = opm_put_u64(o, p->diags_dropped);
    *o++ = '}';
    b->n = (size_t)(o - b->p);
    b->p[b->n] = '\0';
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
