/* load.c — filling a workload from a file: the format detected by content
 * (JSONL ops, an EnergAIzer kernel list, a PyTorch profiler trace), and the
 * JSONL and trace readers (the kernel-list reader is energaizer.c).  A file
 * is added whole or not at all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../io/doc.h"
#include "../io/io_internal.h"
#include "../trace/trace_internal.h"
#include "workload_internal.h"

/* JSONL: one op per line, with an optional "count" (llm --emit-workload).
 * Identical lines are one op. */
int wl_read_jsonl(opm_workload *w, const char *text, size_t len, const char *source, opm_error *err)
{
    size_t line = 0;
    for (size_t at = 0; at < len;) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + 1;
        line++;
        size_t b = 0;
        while (b < n && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) b++;
        if (b == n) continue;
        if (line > INT32_MAX) return opm_err(err, OPM_EINVAL, NULL, "%s: more than %d lines", source, INT32_MAX);
        doc *d = doc_parse_json(s, n, source, (int)line, err);
        if (!d) return err ? err->code : OPM_EINVAL;
        doc_node *root = (doc_node *)doc_root(d);
        uint64_t count = 1;
        int rc = 0;
        if (!root || root->type != DOC_MAP) {
            rc = opm_err(err, OPM_EINVAL, NULL, "%s:%zu: expected one op object per line", source, line);
        } else {
            /* "count" is the workload's, not the op's: read it and take it
             * out of the map before the op reader sees it.  The tree lives
             * in the document's arena, so dropping a pair frees nothing. */
            for (size_t i = 0; i < root->n; i++) {
                if (strcmp(root->kids[2 * i]->text, "count")) continue;
                int64_t c;
                const doc_node *v = root->kids[2 * i + 1];
                if (v->type != DOC_SCALAR || v->quoted || doc_int(v, &c) || c < 1) {
                    char got[64];
                    doc_describe(v, got, sizeof got);
                    rc = opm_err(err, OPM_EINVAL, NULL, "%s:%zu: count: expected an integer >= 1, got %s", source,
                                 line, got);
                    if (err) opm_strlcpy(err->field, "count", sizeof err->field);
                    break;
                }
                count = (uint64_t)c;
                memmove(&root->kids[2 * i], &root->kids[2 * i + 2], (2 * (root->n - i - 1)) * sizeof *root->kids);
                root->n--;
                break;
            }
        }
        uint32_t idx = UINT32_MAX;
        if (!rc) idx = wl_find_key(w, s + b, n - b);
        if (!rc && idx == UINT32_MAX) {
            opm_op *op = opm_op_from_doc(d, err);
            if (!op) {
                rc = err ? err->code : OPM_EINVAL;
            } else {
                char name[96];
                const char *nm = opm_op_name(op);
                /* An op without its own name is named by kind and line, so
                 * the by-op breakdown does not merge every unnamed gemm. */
                if (!doc_get(root, "name")) {
                    snprintf(name, sizeof name, "%s (line %zu)", opm_kind_name(opm_op_kind(op)), line);
                    nm = name;
                }
                rc = wl_add_owned(w, op, nm, s + b, n - b, &idx, err);
            }
        }
        doc_free(d);
        if (!rc) rc = wl_launch_op(w, idx, count, err);
        if (rc) {
            if (err && err->field[0] && !strstr(err->message, source)) {
                char where[256];
                snprintf(where, sizeof where, "%s:%zu", source, line);
                opm_err_prefix(err, where);
            }
            return rc;
        }
    }
    return 0;
}

typedef struct inst_at {
    double t;
    size_t i;
} inst_at;

static int cmp_inst(const void *pa, const void *pb)
{
    const inst_at *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* A trace: every op instance the recogniser gives a model, in host launch
 * order; the rest are counted in skipped. */
static int read_trace(opm_workload *w, opm_trace *t, opm_error *err)
{
    opm_trace_report *r = opm_trace_report_new(t, NULL, NULL, err);
    if (!r) return err ? err->code : OPM_EINVAL;
    size_t ng = opm_trace_report_group_count(r), ni = opm_trace_report_instance_count(r);
    uint32_t *gop = malloc((ng ? ng : 1) * sizeof *gop);
    inst_at *order = malloc((ni ? ni : 1) * sizeof *order);
    int rc = 0;
    if (!gop || !order) {
        rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < ng && !rc; g++) {
        const opm_trace_group *grp = opm_trace_report_group(r, g);
        gop[g] = UINT32_MAX;
        if (!grp->has_kind) continue;
        opm_trace_call call = {grp->name, grp->input_dims, grp->input_types, grp->input_strides,
                               grp->concrete_inputs, grp->phase == OPM_PHASE_TRAIN_FWD};
        opm_trace_recog rec;
        if ((rc = opm_trace_recognize(opm_trace_op_lookup(grp->name), &call, &rec, err))) break;
        free(rec.params_json);
        if (rec.op) rc = wl_add_owned(w, rec.op, grp->name, NULL, 0, &gop[g], err);
    }
    for (size_t i = 0; i < ni; i++) {
        const opm_trace_instance *in = opm_trace_report_instance(r, i);
        order[i] = (inst_at){in->cpu_start_s, i};
    }
    qsort(order, ni, sizeof *order, cmp_inst);
    for (size_t j = 0; j < ni && !rc; j++) {
        const opm_trace_instance *in = opm_trace_report_instance(r, order[j].i);
        if (in->group < ng && gop[in->group] != UINT32_MAX) rc = wl_launch_op(w, gop[in->group], 1, err);
        else w->skipped++;
    }
out:
    free(gop);
    free(order);
    opm_trace_report_free(r);
    return rc;
}

/* A profiler trace is gzip or a JSON object; ops and kernel lists are
 * objects per line or an array. */
static int is_trace(const char *text, size_t len)
{
    if (len >= 2 && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b) return 1;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) i++;
    if (i == len || text[i] != '{') return 0;
    /* A JSONL op line is one object per line; a trace's first object spans
     * lines and names its events. */
    size_t scan = len - i < 65536 ? len - i : 65536;
    const char *te = NULL;
    for (size_t k = i; k + 13 <= i + scan; k++)
        if (!memcmp(text + k, "\"traceEvents\"", 13)) {
            te = text + k;
            break;
        }
    return te != NULL;
}

int opm_workload_add_text(opm_workload *w, const char *text, size_t len, const char *source, opm_error *err)
{
    if (!w || !text) return opm_err(err, OPM_EINVAL, NULL, "a workload and text are required");
    if (!source) source = "<text>";
    wl_mark m;
    wl_mark_get(w, &m);
    int rc;
    if (is_trace(text, len)) {
        opm_trace *t = opm_trace_read_buffer(text, len, source, err);
        rc = t ? read_trace(w, t, err) : (err ? (int)err->code : OPM_EINVAL);
        opm_trace_free(t);
    } else if (wl_is_energaizer(text, len)) {
        rc = wl_read_energaizer(w, text, len, source, err);
    } else {
        rc = wl_read_jsonl(w, text, len, source, err);
    }
    if (rc) wl_rollback(w, &m);
    else opm_error_clear(err);
    return rc;
}

int opm_workload_add_file(opm_workload *w, const char *path, opm_error *err)
{
    if (!w || !path) return opm_err(err, OPM_EINVAL, NULL, "a workload and a path are required");
    /* A trace may be larger than any op document: detect it from the
     * file's head and stream it through the trace reader. */
    if (strcmp(path, "-")) {
        FILE *f = fopen(path, "rb");
        if (f) {
            char head[65536];
            size_t n = fread(head, 1, sizeof head, f);
            fclose(f);
            if (is_trace(head, n)) {
                opm_trace *t = opm_trace_read_file(path, err);
                if (!t) return err ? err->code : OPM_EINVAL;
                wl_mark m;
                wl_mark_get(w, &m);
                int rc = read_trace(w, t, err);
                opm_trace_free(t);
                if (rc) wl_rollback(w, &m);
                else opm_error_clear(err);
                return rc;
            }
        }
    }
    size_t len;
    char *text = opm_read_file(path, &len, err);
    if (!text) return err ? err->code : OPM_EIO;
    int rc = opm_workload_add_text(w, text, len, path, err);
    free(text);
    return rc;
}
