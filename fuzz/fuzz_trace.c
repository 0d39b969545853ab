/* fuzz_trace.c — libFuzzer target for the trace reader: any bytes either
 * read into a trace whose counts agree with what it stores, or fail with a
 * one-line error and nothing leaked.  Small inputs are also gzip-compressed
 * and read again, which must give the same answer (the two input paths
 * share one parser); whatever reads is then linked into op instances and
 * reported in every format, searched for iterations, reported as one rank,
 * and its GEMM groups checked against their kernel names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "opmodel/opmodel.h"
#include "opmodel/trace_analysis.h"
#include "../src/trace/trace_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const opm_error *err)
{
    if (err->code == OPM_OK || err->message[0] == '\0' || strchr(err->message, '\n'))
        abort();
}

static void check_trace(const opm_trace *t)
{
    opm_trace_stats st;
    opm_trace_get_stats(t, &st);
    if (st.cpu_ops + st.launches + st.gpu_events > t->n_ev || st.flows != t->n_flows ||
        t->n_ev > st.events)
        abort();
    for (size_t i = 0; i < t->n_ev; i++) {
        const opm_tev *e = &t->ev[i];
        /* A launch's args is a string id (its args.kernel), a cpu_op's an
         * index into the call arguments. */
        size_t args_cap = e->cls == OPM_EV_LAUNCH ? t->strings.count : t->n_args;
        if (e->cls >= OPM_EV_CLASS_COUNT || e->dur_ns < 0 || e->name >= t->strings.count ||
            (e->args != OPM_NONE32 && e->args >= args_cap))
            abort();
    }
    for (size_t i = 0; i < opm_trace_device_count(t); i++)
        if (!opm_trace_device_name(t, i))
            abort();
    for (size_t i = 0; i < t->n_comms; i++) {
        const opm_tcomm *c = &t->comms[i];
        if (c->collective >= t->strings.count || c->dtype >= t->strings.count || c->pg_ranks >= t->strings.count ||
            c->dur_ns < 0)
            abort();
    }
}

/* Every emitter's text, or its one-line error. */
static void check_text(char *text, const opm_error *err)
{
    if (!text)
        check_error(err);
    free(text);
}

/* Recognition, grouping and the emitters on whatever was read: argument
 * texts the fuzzer made up reach the shape parsers and the predictions
 * there.  A hardware (one per process: parsing it is not what is fuzzed)
 * turns on the roofline columns and the SVG. */
static void check_report(const opm_trace *t)
{
    static opm_hardware *hw;
    opm_error err;
    if (!hw && !(hw = opm_hardware_builtin("h100_sxm", &err)))
        abort();
    opm_trace_report *r = opm_trace_report_new(t, hw, NULL, &err);
    if (!r) {
        check_error(&err);
        return;
    }
    if (opm_trace_report_instance_count(r) > t->n_ev)
        abort();
    check_text(opm_trace_report_to_json(r, &err), &err);
    check_text(opm_trace_report_to_csv(r, 0, &err), &err);
    check_text(opm_trace_report_to_csv(r, 1, &err), &err);
    check_text(opm_trace_report_to_table(r, 0, &err), &err);
    check_text(opm_trace_report_to_svg(r, &err), &err);
    opm_trace_kernel_checks *kc = opm_trace_kernel_checks_new(r, hw, NULL, &err);
    if (!kc) {
        check_error(&err);
    } else {
        if (opm_trace_kernel_check_count(kc) > opm_trace_report_group_count(r))
            abort();
        check_text(opm_trace_kernel_checks_to_json(kc, r, &err), &err);
        check_text(opm_trace_kernel_checks_to_table(kc, r, &err), &err);
        opm_trace_kernel_checks_free(kc);
    }
    opm_trace_report_free(r);
}

/* Iterations and a one-rank report: counts within the trace's, texts or
 * one-line errors. */
static void check_analysis(const opm_trace *t)
{
    opm_error err;
    opm_trace_iterations *it = opm_trace_iterations_new(t, &err);
    if (!it) {
        check_error(&err);
    } else {
        if (opm_trace_iterations_count(it) > t->n_ev)
            abort();
        check_text(opm_trace_iterations_to_json(it, &err), &err);
        check_text(opm_trace_iterations_to_table(it, &err), &err);
        opm_trace_iterations_free(it);
    }
    const opm_trace *one[1] = {t};
    opm_trace_ranks *rk = opm_trace_ranks_new(one, 1, &err);
    if (!rk) {
        check_error(&err);
    } else {
        if (opm_trace_ranks_collective_count(rk) > t->n_ev)
            abort();
        check_text(opm_trace_ranks_to_json(rk, &err), &err);
        check_text(opm_trace_ranks_to_table(rk, 0, &err), &err);
        opm_trace_ranks_free(rk);
    }
    for (size_t i = 0; i < t->n_ev; i++) {
        opm_trace_kernel_hint h;
        if (t->ev[i].cls == OPM_EV_KERNEL && opm_trace_parse_kernel_name(opm_trace_str(t, t->ev[i].name), &h) &&
            (h.tile_m < 1 || h.tile_n < 1 || h.tile_m > 4096 || h.tile_n > 4096 || h.stages < 0 || h.split_k < 0))
            abort();
    }
}

/* gzip framing of `data`, NULL when zlib cannot (out of memory). */
static unsigned char *gzip_bytes(const uint8_t *data, size_t size, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&zs, (uLong)size) + 32;
    unsigned char *out = malloc(cap);
    if (out) {
        zs.next_in = (unsigned char *)(uintptr_t)data;
        zs.avail_in = (uInt)size;
        zs.next_out = out;
        zs.avail_out = (uInt)cap;
        if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
            free(out);
            out = NULL;
        }
        *out_len = cap - zs.avail_out;
    }
    deflateEnd(&zs);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    opm_error err;
    opm_trace *t = opm_trace_read_buffer(data, size, "<fuzz>", &err);
    int is_gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if (!t) {
        check_error(&err);
    } else {
        check_trace(t);
        opm_trace_stats st;
        opm_trace_get_stats(t, &st);
        if (!is_gzip && st.json_bytes != size)
            abort();
    }

    if (!is_gzip && size <= 4096) {
        size_t zlen = 0;
        unsigned char *z = gzip_bytes(data, size, &zlen);
        if (z) {
            opm_error zerr;
            opm_trace *zt = opm_trace_read_buffer(z, zlen, "<fuzz>", &zerr);
            if (!t != !zt)
                abort();
            if (!zt && strcmp(err.message, zerr.message) != 0)
                abort();
            if (zt && (zt->n_ev != t->n_ev || zt->n_flows != t->n_flows || zt->n_args != t->n_args ||
                       (t->n_ev && memcmp(zt->ev, t->ev, t->n_ev * sizeof *t->ev) != 0)))
                abort();
            opm_trace_free(zt);
            free(z);
        }
    }

    if (t) {
        opm_trace_link *l = opm_trace_link_build(t, &err);
        if (!l)
            check_error(&err);
        opm_trace_link_free(l);
        check_report(t);
        check_analysis(t);
    }
    opm_trace_free(t);
    return 0;
}
