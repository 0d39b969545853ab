/* test_trace_reader.c — the streaming trace reader: which events are kept
 * and how, exact nanosecond times, string pids, canonical argument text,
 * deviceProperties, gzip (single and concatenated members), the Chrome
 * "array format", chunk boundaries, the shipped traces, and every error path
 * (truncated and malformed input with its byte offset, missing files). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "testutil.h"
#include "trace/trace_internal.h"

/* ---- helpers ---- */

static opm_trace *rd_ok(const char *json)
{
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_buffer(json, strlen(json), "<test>", &err);
    cr_assert_not_null(t, "rejected: %s\n%s", err.message, json);
    return t;
}

/* Rejected with code, `needle` in a one-line message; returns the "byte N". */
static long long rd_bad_len(const void *data, size_t len, opm_status code, const char *needle)
{
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_buffer(data, len, "<test>", &err);
    cr_assert_null(t, "accepted: %.*s", (int)(len < 200 ? len : 200), (const char *)data);
    cr_assert_eq(err.code, code, "code %d: %s", err.code, err.message);
    cr_assert_null(strchr(err.message, '\n'), "%s", err.message);
    cr_assert(strstr(err.message, needle), "expected '%s' in: %s", needle, err.message);
    cr_assert(strncmp(err.message, "<test>: ", 8) == 0, "source first: %s", err.message);
    const char *b = strstr(err.message, "byte ");
    return b ? atoll(b + 5) : -1;
}

static long long rd_bad(const char *json, const char *needle)
{
    return rd_bad_len(json, strlen(json), OPM_EINVAL, needle);
}

static const char *str_of(const opm_trace *t, uint32_t id)
{
    return opm_trace_str(t, id);
}

/* The text of a string pid/tid (stored as -(1 + string id)). */
static const char *id_text(const opm_trace *t, int32_t v)
{
    cr_assert_lt(v, 0);
    return opm_trace_str(t, (uint32_t)(-(int64_t)v - 1));
}

/* Whether `s` is already interned (interning it again would not add one). */
static int interned(opm_trace *t, const char *s)
{
    size_t before = t->strings.count;
    opm_trace_intern(t, s, strlen(s));
    return t->strings.count == before;
}

static unsigned char *gzip_mem(const void *data, size_t len, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    cr_assert_not_null(out);
    zs.next_in = (unsigned char *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *out_len = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

/* Whole decompressed content of a gzip file (test side, with gzread). */
static char *gunzip_file(const char *path, size_t *len)
{
    gzFile g = gzopen(path, "rb");
    cr_assert_not_null(g, "%s", path);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (;;) {
        if (cap - n < 65536) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
        int got = gzread(g, buf + n, 65536);
        cr_assert_geq(got, 0);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(g);
    *len = n;
    return buf;
}

static void temp_path(char *buf, size_t cap)
{
    close(tmp_file(buf, cap, "opm_trace_reader_"));
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* ---- event classes ---- */

/* One event of every category the profiler writes; the comment after each
 * says what the reader must make of it. */
static const char classes_json[] =
    "{\"traceEvents\": [\n"
    " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 2, \"ts\": 10, \"dur\": 5},\n" /* cpu op */
    " {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step\", \"pid\": 1, \"tid\": 2, \"ts\": 9, \"dur\": 20},\n" /* annotation */
    " {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"py_fn_dropped\", \"pid\": 1, \"tid\": 2, \"ts\": 9, \"dur\": 20},\n" /* dropped */
    " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 2, \"ts\": 11, \"dur\": 1},\n"
    " {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"pid\": 1, \"tid\": 2, \"ts\": 12, \"dur\": 1},\n"
    " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_kernel\", \"pid\": 0, \"tid\": 7, \"ts\": 13, \"dur\": 3},\n"
    " {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 7, \"ts\": 17, \"dur\": 1},\n"
    " {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset\", \"pid\": 0, \"tid\": 7, \"ts\": 18, \"dur\": 1},\n"
    " {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"step\", \"pid\": 0, \"tid\": 7, \"ts\": 13, \"dur\": 6},\n"
    " {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"old_op\", \"pid\": 1, \"tid\": 2, \"ts\": 30, \"dur\": 5},\n" /* older names, */
    " {\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"old_launch\", \"pid\": 1, \"tid\": 2, \"ts\": 31, \"dur\": 1},\n" /* any case */
    " {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"old_kernel\", \"pid\": 0, \"tid\": 7, \"ts\": 32, \"dur\": 1},\n"
    " {\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"old_memcpy\", \"pid\": 0, \"tid\": 7, \"ts\": 33, \"dur\": 1},\n"
    " {\"ph\": \"X\", \"cat\": \"MEMSET\", \"name\": \"old_memset\", \"pid\": 0, \"tid\": 7, \"ts\": 34, \"dur\": 1},\n"
    " {\"ph\": \"s\", \"id\": 41, \"pid\": 1, \"tid\": 2, \"ts\": 11, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n" /* flows */
    " {\"ph\": \"f\", \"id\": 41, \"pid\": 0, \"tid\": 7, \"ts\": 13, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
    " {\"ph\": \"s\", \"id\": 42, \"pid\": 1, \"tid\": 2, \"ts\": 11, \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\"},\n" /* dropped */
    " {\"ph\": \"f\", \"pid\": 1, \"tid\": 2, \"ts\": 11, \"cat\": \"ac2g\", \"name\": \"no id\"},\n" /* dropped: no id */
    " {\"ph\": \"X\", \"cat\": \"ac2g\", \"name\": \"x_flow\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"dur\": 1},\n" /* dropped */
    " {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"instant\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"s\": \"t\"},\n"
    " {\"ph\": \"i\", \"cat\": \"cpu_op\", \"name\": \"instant_op\", \"pid\": 1, \"tid\": 2, \"ts\": 1},\n" /* dropped */
    " {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1, \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"python\"}},\n"
    " {\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 1, \"dur\": 100, \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"name\": \"span\"},\n"
    " {\"ph\": \"X\", \"name\": \"no_cat\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"dur\": 1},\n" /* dropped */
    " {\"cat\": \"kernel\", \"name\": \"no_ph\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"dur\": 1},\n" /* dropped */
    " 7, [1, 2], \"not an event\"\n" /* counted, nothing kept */
    "]}";

Test(trace_reader, every_event_class_kept_or_dropped)
{
    opm_trace *t = rd_ok(classes_json);
    static const struct {
        const char *name;
        int cls;
    } want[] = {
        {"aten::mm", OPM_EV_CPU_OP},        {"step", OPM_EV_ANNOTATION},
        {"cudaLaunchKernel", OPM_EV_LAUNCH}, {"cuLaunchKernel", OPM_EV_LAUNCH},
        {"gemm_kernel", OPM_EV_KERNEL},     {"Memcpy HtoD", OPM_EV_MEMCPY},
        {"Memset", OPM_EV_MEMSET},          {"step", OPM_EV_GPU_ANNOTATION},
        {"old_op", OPM_EV_CPU_OP},          {"old_launch", OPM_EV_LAUNCH},
        {"old_kernel", OPM_EV_KERNEL},      {"old_memcpy", OPM_EV_MEMCPY},
        {"old_memset", OPM_EV_MEMSET},
    };
    size_t n = sizeof want / sizeof want[0];
    cr_assert_eq(t->n_ev, n, "%zu events kept", t->n_ev);
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(str_of(t, t->ev[i].name), want[i].name, "event %zu", i);
        cr_assert_eq(t->ev[i].cls, want[i].cls, "event %zu (%s)", i, want[i].name);
    }
    cr_assert_eq(t->n_flows, 2);
    cr_assert_eq(t->flows[0].id, 41);
    cr_assert_eq(t->flows[0].is_start, 1);
    cr_assert_eq(t->flows[0].ts_ns, 11000);
    cr_assert_eq(t->flows[0].pid, 1);
    cr_assert_eq(t->flows[0].tid, 2);
    cr_assert_eq(t->flows[1].is_start, 0);
    cr_assert_eq(t->flows[1].ts_ns, 13000);
    cr_assert_eq(t->flows[1].tid, 7);
    opm_trace_stats st;
    opm_trace_get_stats(t, &st);
    cr_assert_eq(st.events, 28);            /* 25 objects + 3 non-object entries */
    cr_assert_eq(st.cpu_ops, 3);            /* aten::mm, step, old_op */
    cr_assert_eq(st.launches, 3);
    cr_assert_eq(st.gpu_events, 6);         /* gpu_user_annotation is not GPU work */
    cr_assert_eq(st.flows, 2);
    cr_assert_eq(st.json_bytes, strlen(classes_json));
    /* Dropped events leave nothing behind, not even their names. */
    cr_assert(!interned(t, "py_fn_dropped"));
    cr_assert(!interned(t, "instant_op"));
    cr_assert(!interned(t, "Spans"));
    cr_assert_eq(opm_trace_device_count(t), 0);
    opm_trace_free(t);
}

Test(trace_reader, key_order_does_not_matter)
{
    /* args and name before ph/cat, ts after everything. */
    opm_trace *t = rd_ok("{\"traceEvents\": [{\"args\": {\"correlation\": 5, \"stream\": 7, "
                         "\"device\": 1}, \"name\": \"k\", \"dur\": 2, \"tid\": 3, \"pid\": 4, "
                         "\"cat\": \"kernel\", \"ph\": \"X\", \"ts\": 1},"
                         "{\"name\": \"py\", \"args\": {\"Input Dims\": [[1]]}, \"ts\": 1, \"dur\": 1, "
                         "\"ph\": \"X\", \"cat\": \"python_function\"}]}");
    cr_assert_eq(t->n_ev, 1);
    const opm_tev *e = &t->ev[0];
    cr_assert_str_eq(str_of(t, e->name), "k");
    cr_assert_eq(e->cls, OPM_EV_KERNEL);
    cr_assert_eq(e->correlation, 5);
    cr_assert_eq(e->stream, 7);
    cr_assert_eq(e->device, 1);
    cr_assert_eq(e->pid, 4);
    cr_assert_eq(e->tid, 3);
    cr_assert_eq(e->ts_ns, 1000);
    cr_assert_eq(e->dur_ns, 2000);
    cr_assert_eq(t->n_args, 0);
    opm_trace_free(t);
}

Test(trace_reader, ids_and_gpu_only_fields)
{
    opm_trace *t = rd_ok(
        "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
        "\"dur\": 1, \"args\": {\"External id\": 17, \"Sequence number\": 99, \"stream\": 3, \"Fwd thread id\": 0,"
        " \"Record function id\": 0, \"correlation\": 8}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 2, \"dur\": 1,"
        " \"args\": {\"External id\": 17, \"device\": 3, \"stream\": 7, \"correlation\": 123456789012,"
        " \"grid\": [1, 2, 3], \"block\": [128, 1, 1]}},"
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"l\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1,"
        " \"args\": {\"correlation\": \"8\", \"External id\": 1.5}}]");
    cr_assert_eq(t->n_ev, 3);
    const opm_tev *op = &t->ev[0], *k = &t->ev[1], *l = &t->ev[2];
    cr_assert_eq(op->external_id, 17);
    cr_assert_eq(op->seq, 99);
    cr_assert_eq(op->correlation, 8);
    cr_assert_eq(op->stream, -1, "stream is kept for GPU events only");
    cr_assert_eq(op->device, -1);
    cr_assert_eq(op->args, OPM_NONE32, "no call arguments: no args record");
    cr_assert_eq(k->correlation, 123456789012LL);
    cr_assert_eq(k->external_id, 17);
    cr_assert_eq(k->seq, OPM_NO_ID);
    cr_assert_eq(k->stream, 7);
    cr_assert_eq(k->device, 3);
    /* Ids that are not integer numbers are absent, not guessed. */
    cr_assert_eq(l->correlation, OPM_NO_ID);
    cr_assert_eq(l->external_id, OPM_NO_ID);
    opm_trace_free(t);
}

/* ---- times ---- */

Test(trace_reader, times_are_exact_nanoseconds)
{
    static const struct {
        const char *text;
        long long ns;
    } cases[] = {
        {"3603029046213.755", 3603029046213755LL},   /* the usual form */
        {"1775078550000000", 1775078550000000000LL}, /* an epoch-sized integer */
        {"12", 12000},
        {"0", 0},
        {"22.534", 22534},
        {"0.5", 500},
        {"1.2345678", 1235},                          /* more decimals: nearest ns */
        {"1.2344999", 1234},
        {"0.0005", 1},                                /* halves round away from zero */
        {"0.0004999999", 0},
        {"-2.0005", -2001},
        {"-0.25", -250},
        {"1.5e3", 1500000},                           /* exponent forms */
        {"1E-3", 1},
        {"2.5e-4", 0},
        {"2.5E-4", 0},
        {"1.23456e2", 123456},
        {"5e+2", 500000},
        {"3603029046.213755e3", 3603029046213755LL},
        {"0.000000000000000000000000000001e30", 1000},
        {"9223372036854775.807", 9223372036854775807LL}, /* INT64_MAX ns */
    };
    /* Each text as a ts (dur 0) and, when not negative, as a dur (ts 0):
     * both must fit, not their sum. */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[256];
        snprintf(json, sizeof json,
                 "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": %s, \"dur\": 0},"
                 " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 0, \"dur\": %s}]",
                 cases[i].text, cases[i].text[0] == '-' ? "0" : cases[i].text);
        opm_trace *t = rd_ok(json);
        cr_assert_eq(t->n_ev, 2);
        cr_assert_eq(t->ev[0].ts_ns, cases[i].ns, "%s: got %lld", cases[i].text, (long long)t->ev[0].ts_ns);
        if (cases[i].text[0] != '-')
            cr_assert_eq(t->ev[1].dur_ns, cases[i].ns, "dur %s", cases[i].text);
        opm_trace_free(t);
    }
}

/* Later stages subtract any two times: an end past int64, or times more
 * than 2^63 ns apart, are refused with the event's offset, never wrapped. */
Test(trace_reader, times_whose_differences_overflow_are_refused)
{
    const char *end_past = "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                           "\"ts\": 9223372036854775, \"dur\": 9223372036854775}]";
    long long at = rd_bad(end_past, "dur: event ends beyond the int64 nanosecond range");
    cr_assert_eq(at, (long long)strlen(end_past) - 1, "offset of the event's closing brace");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": -9223372036854775, \"dur\": 5},"
           " {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"m\", \"ts\": 9223372036854775, \"dur\": 0}]",
           "ts: events span more than 2^63 ns (292 years)");
    /* The widest span that fits: the two ends INT64_MAX ns apart. */
    opm_trace *t = rd_ok("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 0, \"dur\": 0},"
                         " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                         "\"ts\": 9223372036854775.807, \"dur\": 0}]");
    cr_assert_eq(t->n_ev, 2);
    opm_trace_free(t);
}

Test(trace_reader, time_errors_name_the_field_and_offset)
{
    const char *ts_string = "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": \"12\", \"dur\": 1}]";
    long long at = rd_bad(ts_string, "ts: expected a number, got a string");
    /* The offset is just past the offending value. */
    cr_assert_eq(at, (long long)(strstr(ts_string, "\"12\"") - ts_string) + 4);
    opm_error err;
    opm_trace *t = opm_trace_read_buffer(ts_string, strlen(ts_string), "<test>", &err);
    cr_assert_null(t);
    cr_assert_str_eq(err.field, "ts");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k\", \"ts\": 1, \"dur\": null}]",
           "dur: expected a number, got null");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k\", \"ts\": [1], \"dur\": 1}]",
           "ts: expected a number, got an array");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k\", \"ts\": 1, \"dur\": true}]",
           "dur: expected a number, got a boolean");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k\", \"ts\": 1e400, \"dur\": 1}]",
           "ts: time in microseconds out of the int64 nanosecond range");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k\", \"ts\": 9223372036854775.808, \"dur\": 1}]",
           "out of the int64 nanosecond range");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k\", \"dur\": 1}]", "ts: event without a timestamp");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]",
           "dur: complete (ph X) event without a duration");
    rd_bad("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": -1}]", "dur: negative duration");
    rd_bad("[{\"ph\": \"s\", \"cat\": \"ac2g\", \"id\": 1}]", "ts: ac2g flow event without a timestamp");
    /* Dropped events are not checked: their times are never read. */
    t = rd_ok("[{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"k\", \"ts\": \"x\"}]");
    cr_assert_eq(t->n_ev, 0);
    opm_trace_free(t);
}

/* ---- pids, tids, flows ---- */

Test(trace_reader, string_and_large_pids)
{
    opm_trace *t = rd_ok(
        "[{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"a\", \"pid\": \"Spans\", "
        "\"tid\": \"PyTorch Profiler\", \"ts\": 1, \"dur\": 1},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 4294967296, \"tid\": -3, \"ts\": 1, \"dur\": 1},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 2147483647, \"tid\": \"7\", \"ts\": 1, \"dur\": 1},"
        "{\"ph\": \"f\", \"cat\": \"ac2g\", \"id\": \"77\", \"pid\": \"Spans\", \"tid\": 0, \"ts\": 5}]");
    cr_assert_eq(t->n_ev, 3);
    cr_assert_str_eq(id_text(t, t->ev[0].pid), "Spans");
    cr_assert_str_eq(id_text(t, t->ev[0].tid), "PyTorch Profiler");
    cr_assert_str_eq(id_text(t, t->ev[1].pid), "4294967296");   /* beyond int32: text */
    cr_assert_str_eq(id_text(t, t->ev[1].tid), "-3");           /* negatives are reserved */
    cr_assert_eq(t->ev[2].pid, 2147483647);
    cr_assert_str_eq(id_text(t, t->ev[2].tid), "7");            /* a string stays a string */
    cr_assert_eq(t->n_flows, 1);
    cr_assert_eq(t->flows[0].id, 77);
    cr_assert_eq(t->flows[0].pid, t->ev[0].pid, "same string, same id");
    opm_trace_free(t);
}

/* Empty strings everywhere (found by the fuzzer: an empty name once
 * reached memcpy with a NULL buffer). */
Test(trace_reader, empty_strings)
{
    opm_trace *t = rd_ok("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"\", \"pid\": \"\", "
                         "\"tid\": \"\", \"ts\": 1, \"dur\": 1, \"args\": {\"Input Dims\": [], "
                         "\"Concrete Inputs\": \"\"}}]");
    cr_assert_eq(t->n_ev, 1);
    cr_assert_eq(t->ev[0].name, 0, "the empty string is id 0");
    cr_assert_eq(t->ev[0].pid, -1, "empty string pid: -(1 + id 0)");
    cr_assert_str_eq(id_text(t, t->ev[0].tid), "");
    const opm_call_args *a = &t->call_args[t->ev[0].args];
    cr_assert_str_eq(str_of(t, a->input_dims), "[]");
    cr_assert_str_eq(str_of(t, a->concrete_inputs), "\"\"");
    opm_trace_free(t);
}

/* ---- call arguments ---- */

Test(trace_reader, call_arguments_canonical_text)
{
    opm_trace *t = rd_ok(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, "
        "\"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\n"
        "  \"Input Dims\": [ [512] , [141,   512], [ ] ],\n"
        "  \"Input type\": [\"c10::BFloat16\", \"Scalar\"],\n"
        "  \"Input Strides\": [[1], [512, 1], []],\n"
        "  \"Concrete Inputs\": [\"\", \"a\\\"b\\\\c\\nd\\u0001\\/\", \"\\u00e9\", 1.50, -2, true, null, {\"k\": [1, {}]}]\n"
        "}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"pid\": 1, \"tid\": 1, \"ts\": 2, "
        "\"dur\": 1, \"args\": {\"Input type\": [\"float\"], \"Input Dims\": [[2, 3]]}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::view\", \"pid\": 1, \"tid\": 1, \"ts\": 3, "
        "\"dur\": 1, \"args\": {\"Concrete Inputs\": \"odd\"}},\n"
        "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"u\", \"pid\": 1, \"tid\": 1, \"ts\": 3, "
        "\"dur\": 1, \"args\": {\"Input Dims\": [[1]]}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 1, \"tid\": 1, \"ts\": 4, "
        "\"dur\": 1, \"args\": {\"External id\": 3}}]}");
    cr_assert_eq(t->n_ev, 5);
    cr_assert_eq(t->n_args, 3, "one record per cpu_op with call arguments");
    const opm_call_args *a = &t->call_args[t->ev[0].args];
    cr_assert_str_eq(str_of(t, a->input_dims), "[[512],[141,512],[]]");
    cr_assert_str_eq(str_of(t, a->input_types), "[\"c10::BFloat16\",\"Scalar\"]");
    cr_assert_str_eq(str_of(t, a->input_strides), "[[1],[512,1],[]]");
    /* Strings re-escaped (control bytes as \u00XX, '/' needs none); non-ASCII
     * stays UTF-8; numbers keep their text. */
    cr_assert_str_eq(str_of(t, a->concrete_inputs),
                     "[\"\",\"a\\\"b\\\\c\\nd\\u0001/\",\"\xc3\xa9\",1.50,-2,true,null,{\"k\":[1,{}]}]");
    const opm_call_args *b = &t->call_args[t->ev[1].args];
    cr_assert_str_eq(str_of(t, b->input_dims), "[[2,3]]");
    cr_assert_str_eq(str_of(t, b->input_types), "[\"float\"]");
    cr_assert_eq(b->input_strides, 0, "absent: the empty string");
    cr_assert_eq(b->concrete_inputs, 0);
    const opm_call_args *c = &t->call_args[t->ev[2].args];
    cr_assert_str_eq(str_of(t, c->concrete_inputs), "\"odd\"");
    cr_assert_eq(t->ev[3].args, OPM_NONE32, "annotations carry no call arguments");
    cr_assert_eq(t->ev[4].args, OPM_NONE32);
    opm_trace_free(t);
}

/* ---- deviceProperties ---- */

Test(trace_reader, device_properties)
{
    opm_trace *t = rd_ok(
        "{\"schemaVersion\": 1, \"deviceProperties\": [\n"
        " {\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85045870592, "
        "\"computeMajor\": 9, \"numSms\": 132, \"extra\": {\"x\": [1, 2]}},\n"
        " {\"name\": \"AMD Instinct MI300X\", \"numSms\": 304}\n"
        "], \"traceEvents\": [], \"traceName\": \"x\"}");
    cr_assert_eq(opm_trace_device_count(t), 2);
    cr_assert_str_eq(opm_trace_device_name(t, 0), "NVIDIA H100 80GB HBM3");
    cr_assert_str_eq(opm_trace_device_name(t, 1), "AMD Instinct MI300X");
    cr_assert_null(opm_trace_device_name(t, 2));
    cr_assert_eq(t->devices[0].id, 0);
    cr_assert_eq(t->devices[0].num_sms, 132);
    cr_assert_eq(t->devices[0].total_global_mem, 85045870592LL);
    cr_assert_eq(t->devices[1].id, 1, "no id: its index");
    cr_assert_eq(t->devices[1].total_global_mem, -1);
    opm_trace_free(t);
    /* After traceEvents works the same. */
    t = rd_ok("{\"traceEvents\": [], \"deviceProperties\": [{\"id\": 3, \"name\": \"g\"}]}");
    cr_assert_eq(opm_trace_device_count(t), 1);
    cr_assert_eq(t->devices[0].id, 3);
    cr_assert_eq(t->devices[0].num_sms, -1);
    opm_trace_free(t);
    /* Entries with no usable name are not devices (detection would try
     * the empty string) but still take their index as default id; values
     * that are not objects are skipped. */
    t = rd_ok("{\"traceEvents\": [], \"deviceProperties\": [{\"id\": \"x\", \"name\": 5}, {\"name\": \"\"},"
              " 7, [], {\"name\": \"NVIDIA H100 80GB HBM3\"}]}");
    cr_assert_eq(opm_trace_device_count(t), 1);
    cr_assert_str_eq(opm_trace_device_name(t, 0), "NVIDIA H100 80GB HBM3");
    cr_assert_eq(t->devices[0].id, 2);
    opm_trace_free(t);
}

/* ---- formats ---- */

Test(trace_reader, array_format_and_empty_traces)
{
    opm_trace *t = rd_ok("[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1}]");
    cr_assert_eq(t->n_ev, 1);
    opm_trace_free(t);
    t = rd_ok("[]");
    cr_assert_eq(t->n_ev, 0);
    opm_trace_free(t);
    t = rd_ok("{\"traceEvents\": [], \"deviceProperties\": []}");
    opm_trace_stats st;
    opm_trace_get_stats(t, &st);
    cr_assert_eq(st.events, 0);
    cr_assert_eq(t->n_ev + t->n_flows + t->n_devices, 0);
    opm_trace_free(t);
    /* CPU only: operators, no GPU activity. */
    t = rd_ok("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 1, "
              "\"dur\": 1, \"pid\": 1, \"tid\": 1}]}");
    opm_trace_get_stats(t, &st);
    cr_assert_eq(st.cpu_ops, 1);
    cr_assert_eq(st.gpu_events + st.launches + st.flows, 0);
    opm_trace_free(t);
}

Test(trace_reader, not_a_trace)
{
    rd_bad("42", "expected a JSON object or array at the top level");
    rd_bad("\"trace\"", "expected a JSON object or array at the top level");
    rd_bad("{\"schemaVersion\": 1}", "not a trace: the top-level object has no traceEvents array");
    rd_bad("{\"traceEvents\": {}}", "traceEvents: expected an array of events, got an object");
    rd_bad("{\"traceEvents\": 3}", "traceEvents: expected an array of events");
    /* zlib (not gzip) framing is not a trace format. */
    size_t zlen = 64;
    unsigned char z[64];
    uLongf zl = zlen;
    cr_assert_eq(compress2(z, &zl, (const Bytef *)"[]", 2, 6), Z_OK);
    rd_bad_len(z, zl, OPM_EINVAL, "truncated or malformed trace");
}

/* A trace big enough to cross several 256 KiB chunks, with names long
 * enough that tokens straddle chunk boundaries. */
static char *big_trace(size_t n_events, size_t *len)
{
    size_t cap = n_events * 400 + 64, n = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    n += (size_t)snprintf(s + n, cap - n, "{\"traceEvents\": [");
    for (size_t i = 0; i < n_events; i++)
        n += (size_t)snprintf(s + n, cap - n,
                              "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"kernel_%zu_"
                              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", "
                              "\"pid\": %zu, \"tid\": 1, \"ts\": %zu.%03zu, \"dur\": 1.5, "
                              "\"args\": {\"correlation\": %zu, \"Input Dims\": [[%zu, 2]]}}",
                              i ? ",\n" : "", i % 3 == 2 ? "python_function" : (i % 3 ? "kernel" : "cpu_op"), i,
                              i % 5, 1000000 + i, i % 1000, i, i);
    n += (size_t)snprintf(s + n, cap - n, "]}");
    cr_assert_lt(n, cap);
    *len = n;
    return s;
}

static void check_big(const opm_trace *t, size_t n_events)
{
    size_t kept = 0;
    for (size_t i = 0; i < n_events; i++) {
        if (i % 3 == 2)
            continue;
        const opm_tev *e = &t->ev[kept++];
        char name[64];
        snprintf(name, sizeof name, "kernel_%zu_", i);
        cr_assert(strncmp(str_of(t, e->name), name, strlen(name)) == 0, "event %zu: %s", i, str_of(t, e->name));
        cr_assert_eq(e->ts_ns, (int64_t)(1000000 + i) * 1000 + (int64_t)(i % 1000), "event %zu", i);
        cr_assert_eq(e->dur_ns, 1500);
        cr_assert_eq(e->correlation, (int64_t)i);
        cr_assert_eq(e->pid, (int32_t)(i % 5));
        cr_assert_eq(e->cls, i % 3 ? OPM_EV_KERNEL : OPM_EV_CPU_OP);
        if (i % 3 == 0) {
            char dims[64];
            snprintf(dims, sizeof dims, "[[%zu,2]]", i);
            cr_assert_str_eq(str_of(t, t->call_args[e->args].input_dims), dims);
        }
    }
    cr_assert_eq(t->n_ev, kept);
}

Test(trace_reader, chunk_boundaries_plain_and_gzip)
{
    size_t len, n_events = 6000;
    char *json = big_trace(n_events, &len);
    cr_assert_gt(len, 4u * 256u * 1024u, "must span several chunks");
    opm_error err;
    opm_trace *t = opm_trace_read_buffer(json, len, "<big>", &err);
    cr_assert_not_null(t, "%s", err.message);
    check_big(t, n_events);
    opm_trace_free(t);

    size_t zlen;
    unsigned char *z = gzip_mem(json, len, &zlen);
    t = opm_trace_read_buffer(z, zlen, "<big.gz>", &err);
    cr_assert_not_null(t, "%s", err.message);
    check_big(t, n_events);
    opm_trace_stats st;
    opm_trace_get_stats(t, &st);
    cr_assert_eq(st.json_bytes, len, "uncompressed bytes");
    opm_trace_free(t);

    /* The same from files. */
    char path[64];
    temp_path(path, sizeof path);
    write_file(path, json, len);
    t = opm_trace_read_file(path, &err);
    cr_assert_not_null(t, "%s", err.message);
    check_big(t, n_events);
    opm_trace_free(t);
    write_file(path, z, zlen);
    t = opm_trace_read_file(path, &err);
    cr_assert_not_null(t, "%s", err.message);
    check_big(t, n_events);
    opm_trace_free(t);
    unlink(path);
    free(z);
    free(json);
}

Test(trace_reader, gzip_file_and_concatenated_members)
{
    const char *part1 = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"ts\": 1, ";
    const char *part2 = "\"dur\": 2}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\", \"ts\": 3, \"dur\": 4}]}";
    char path[64];
    temp_path(path, sizeof path);
    gzFile g = gzopen(path, "wb");
    cr_assert_not_null(g);
    cr_assert_gt(gzwrite(g, part1, (unsigned)strlen(part1)), 0);
    gzclose(g);
    g = gzopen(path, "ab");     /* appending opens a second gzip member */
    cr_assert_not_null(g);
    cr_assert_gt(gzwrite(g, part2, (unsigned)strlen(part2)), 0);
    gzclose(g);
    opm_error err;
    opm_trace *t = opm_trace_read_file(path, &err);
    cr_assert_not_null(t, "%s", err.message);
    cr_assert_eq(t->n_ev, 2);
    cr_assert_str_eq(str_of(t, t->ev[1].name), "k2");
    cr_assert_eq(t->ev[1].dur_ns, 4000);
    opm_trace_free(t);
    unlink(path);
}

/* ---- truncated and malformed input ---- */

Test(trace_reader, truncated_plain_json_reports_the_offset)
{
    char rel[256];
    size_t len;
    char *json = gunzip_file(src_path("tests/data/traces/torch_compile/trace.json.gz", rel, sizeof rel), &len);
    size_t cuts[] = {1, 2, 17, 100, 1000, len / 3, len / 2, len - 1000, len - 2};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        long long at = rd_bad_len(json, cuts[i], OPM_EINVAL, "(truncated or malformed trace)");
        /* Reading stops where the bytes stop. */
        cr_assert_eq(at, (long long)cuts[i], "cut at %zu, reported byte %lld", cuts[i], at);
    }
    /* And from a file. */
    char path[64];
    temp_path(path, sizeof path);
    write_file(path, json, len / 2);
    opm_error err;
    cr_assert_null(opm_trace_read_file(path, &err));
    char want[128];
    snprintf(want, sizeof want, "%s: byte %zu: ", path, len / 2);
    cr_assert(strstr(err.message, want), "expected '%s' in: %s", want, err.message);
    unlink(path);
    free(json);
}

Test(trace_reader, truncated_gzip_reports_the_uncompressed_offset)
{
    char rel[256];
    size_t len;
    char *json = gunzip_file(src_path("tests/data/traces/torch_compile/trace.json.gz", rel, sizeof rel), &len);
    size_t zlen;
    unsigned char *z = gzip_mem(json, len, &zlen);
    size_t cuts[] = {2, 11, 40, zlen / 4, zlen / 2, zlen - 9, zlen - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        long long at = rd_bad_len(z, cuts[i], OPM_EINVAL, "gzip: compressed stream ends before its end marker");
        /* Not more than was in the file, and (past the header) the inflated
         * bytes a cut that far in must have produced. */
        cr_assert_leq(at, (long long)len, "cut %zu", cuts[i]);
        if (cuts[i] >= zlen / 2)
            cr_assert_geq(at, (long long)len / 4, "cut %zu at byte %lld", cuts[i], at);
    }
    /* Only the 8-byte trailer missing: the JSON is whole, the file is not. */
    long long at = rd_bad_len(z, zlen - 8, OPM_EINVAL, "gzip");
    cr_assert_eq(at, (long long)len);
    /* Corrupt data. */
    z[zlen / 2] ^= 0x55;
    z[zlen / 2 + 1] ^= 0xaa;
    rd_bad_len(z, zlen, OPM_EINVAL, "(truncated or malformed trace)");
    free(z);
    free(json);
}

Test(trace_reader, malformed_json)
{
    const char *bad = "{\"traceEvents\": [{\"ph\": \"X\",, \"cat\": \"kernel\"}]}";
    long long at = rd_bad(bad, "(truncated or malformed trace)");
    long long comma = (long long)(strstr(bad, ",,") - bad);
    cr_assert(at >= comma && at <= comma + 2, "byte %lld, bad comma at %lld", at, comma);
    rd_bad("", "byte 0: ");
    rd_bad("   ", "byte 3: ");
    rd_bad("[1, 2", "byte 5: ");
    rd_bad("{\"traceEvents\": []} x", "trailing garbage");
    rd_bad("{\"traceEvents\": [tru]}", "(truncated or malformed trace)");
    rd_bad("{\"traceEvents\": [\"unterminated]}", "(truncated or malformed trace)");
    rd_bad("{'traceEvents': []}", "(truncated or malformed trace)");
}

Test(trace_reader, missing_file_is_an_io_error)
{
    opm_error err;
    opm_trace *t = opm_trace_read_file("/nonexistent/dir/trace.json.gz", &err);
    cr_assert_null(t);
    cr_assert_eq(err.code, OPM_EIO);
    cr_assert(strstr(err.message, "/nonexistent/dir/trace.json.gz"), "%s", err.message);
    cr_assert(strstr(err.message, strerror(ENOENT)), "%s", err.message);
    cr_assert_null(strchr(err.message, '\n'));
    /* A directory opens but cannot be read. */
    t = opm_trace_read_file("/tmp", &err);
    cr_assert_null(t);
    cr_assert_eq(err.code, OPM_EIO, "%s", err.message);
}

/* ---- the shipped traces ---- */

/* Expected counts per shipped trace, computed once with Python's json module
 * (python3: json.loads(gzip.open(f).read(), parse_float=decimal.Decimal);
 * for each entry of traceEvents, ph "X" events counted by lower-cased cat,
 * ph "s"/"f" with cat "ac2g" as flows, cpu_ops with any of the four call
 * arguments as args records; kernel_dur_ns is the sum over kernels of
 * round-half-up(dur * 1000) in Decimal arithmetic). */
static const struct shipped {
    const char *dir;
    uint64_t json_bytes, events;
    uint64_t cpu_op, annotation, launch, kernel, memcpy, memset, gpu_annotation, flows, args;
    long long kernel_dur_ns;
    const char *device;
    size_t n_devices;
} shipped[] = {
    {"h100_bert", 1078563, 2551, 479, 1, 132, 60, 1, 0, 1, 193, 479, 307197LL, "NVIDIA H100 80GB HBM3", 1},
    {"h100_falcon", 2309646, 5138, 1258, 1, 383, 154, 0, 2, 1, 539, 1258, 1220926LL, "NVIDIA H100 80GB HBM3", 1},
    {"h100_qwen", 8647357, 18221, 4186, 1, 1922, 1465, 1, 241, 1, 3629, 4186, 45432698LL, "NVIDIA H100 80GB HBM3", 1},
    {"mi300_bert", 1201774, 2653, 519, 1, 161, 60, 1, 0, 1, 222, 519, 388344LL, "AMD Instinct MI300X VF", 1},
    {"mi300_falcon", 2600564, 5371, 1381, 1, 437, 155, 0, 0, 1, 592, 1381, 1716301LL, "AMD Instinct MI300X VF", 1},
    {"mi300_qwen", 9675686, 18090, 4619, 1, 1707, 1516, 1, 0, 1, 3224, 4619, 43062042LL, "AMD Instinct MI300X VF", 1},
    {"mi300_resnet_ckpt", 16810209, 56451, 8004, 24, 3100, 2995, 550, 108, 21, 6753, 7605, 97255826LL,
     "AMD Instinct MI300X", 8},
    {"normalization", 2563780, 8500, 978, 30, 236, 168, 0, 5, 30, 409, 900, 991996LL, "AMD Instinct MI300X", 8},
    {"sglang_decode", 594892, 2058, 61, 2, 29, 555, 3, 0, 0, 587, 61, 9765437LL, "AMD Instinct MI300X", 1},
    {"torch_compile", 64557, 246, 41, 1, 59, 12, 0, 0, 1, 71, 37, 12549021LL, "AMD Instinct MI300X", 1},
};

Test(trace_reader, shipped_traces_load_with_expected_counts)
{
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        const struct shipped *w = &shipped[i];
        char rel[128], path[512];
        snprintf(rel, sizeof rel, "tests/data/traces/%s/trace.json.gz", w->dir);
        opm_error err;
        opm_trace *t = opm_trace_read_file(src_path(rel, path, sizeof path), &err);
        cr_assert_not_null(t, "%s: %s", w->dir, err.message);
        uint64_t by_cls[OPM_EV_CLASS_COUNT] = {0};
        long long kdur = 0;
        for (size_t k = 0; k < t->n_ev; k++) {
            by_cls[t->ev[k].cls]++;
            if (t->ev[k].cls == OPM_EV_KERNEL)
                kdur += t->ev[k].dur_ns;
        }
        cr_assert_eq(by_cls[OPM_EV_CPU_OP], w->cpu_op, "%s", w->dir);
        cr_assert_eq(by_cls[OPM_EV_ANNOTATION], w->annotation, "%s", w->dir);
        cr_assert_eq(by_cls[OPM_EV_LAUNCH], w->launch, "%s", w->dir);
        cr_assert_eq(by_cls[OPM_EV_KERNEL], w->kernel, "%s", w->dir);
        cr_assert_eq(by_cls[OPM_EV_MEMCPY], w->memcpy, "%s", w->dir);
        cr_assert_eq(by_cls[OPM_EV_MEMSET], w->memset, "%s", w->dir);
        cr_assert_eq(by_cls[OPM_EV_GPU_ANNOTATION], w->gpu_annotation, "%s", w->dir);
        cr_assert_eq(t->n_flows, w->flows, "%s", w->dir);
        cr_assert_eq(t->n_args, w->args, "%s", w->dir);
        cr_assert_eq(kdur, w->kernel_dur_ns, "%s: kernel time %lld ns", w->dir, kdur);
        cr_assert_eq(opm_trace_device_count(t), w->n_devices, "%s", w->dir);
        cr_assert_str_eq(opm_trace_device_name(t, 0), w->device, "%s", w->dir);
        opm_trace_stats st;
        opm_trace_get_stats(t, &st);
        cr_assert_eq(st.json_bytes, w->json_bytes, "%s", w->dir);
        cr_assert_eq(st.events, w->events, "%s", w->dir);
        cr_assert_eq(st.cpu_ops, w->cpu_op + w->annotation, "%s", w->dir);
        cr_assert_eq(st.launches, w->launch, "%s", w->dir);
        cr_assert_eq(st.gpu_events, w->kernel + w->memcpy + w->memset, "%s", w->dir);
        cr_assert_eq(st.flows, w->flows, "%s", w->dir);
        opm_trace_free(t);
    }
}

Test(trace_reader, torch_compile_details)
{
    char rel[256];
    opm_error err;
    opm_trace *t = opm_trace_read_file(src_path("tests/data/traces/torch_compile/trace.json.gz", rel, sizeof rel), &err);
    cr_assert_not_null(t, "%s", err.message);
    /* The first event, as written: ts 3603029046213.755, dur 22.534. */
    cr_assert_str_eq(str_of(t, t->ev[0].name), "TorchDynamo Cache Lookup");
    cr_assert_eq(t->ev[0].ts_ns, 3603029046213755LL);
    cr_assert_eq(t->ev[0].dur_ns, 22534);
    cr_assert_eq(t->ev[0].pid, 3182306);
    cr_assert_eq(t->ev[0].external_id, 1);
    /* The first aten::mm and its arguments. */
    size_t i = 0;
    while (i < t->n_ev && strcmp(str_of(t, t->ev[i].name), "aten::mm") != 0)
        i++;
    cr_assert_lt(i, t->n_ev);
    const opm_call_args *a = &t->call_args[t->ev[i].args];
    cr_assert_str_eq(str_of(t, a->input_dims), "[[32768,2048],[2048,2048],[32768,2048]]");
    cr_assert_str_eq(str_of(t, a->input_types), "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]");
    cr_assert_str_eq(str_of(t, a->input_strides), "[[2048,1],[1,2048],[2048,1]]");
    cr_assert_str_eq(str_of(t, a->concrete_inputs), "[\"\",\"\",\"\"]");
    /* Device 0's memory and SMs from deviceProperties. */
    cr_assert_eq(t->devices[0].total_global_mem, 206141652992LL);
    cr_assert_eq(t->devices[0].num_sms, 304);
    opm_trace_free(t);
}

/* Reading the same bytes from memory and from the file gives the same trace. */
Test(trace_reader, buffer_and_file_agree)
{
    char rel[256];
    const char *path = src_path("tests/data/traces/sglang_decode/trace.json.gz", rel, sizeof rel);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static unsigned char gz[1 << 20];
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    cr_assert_lt(n, sizeof gz);
    opm_error err;
    opm_trace *a = opm_trace_read_file(path, &err);
    opm_trace *b = opm_trace_read_buffer(gz, n, path, &err);
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    cr_assert_eq(a->n_ev, b->n_ev);
    cr_assert_eq(memcmp(a->ev, b->ev, a->n_ev * sizeof *a->ev), 0);
    cr_assert_eq(a->n_flows, b->n_flows);
    for (size_t i = 0; i < a->n_flows; i++) {
        cr_assert_eq(a->flows[i].id, b->flows[i].id);
        cr_assert_eq(a->flows[i].ts_ns, b->flows[i].ts_ns);
        cr_assert_eq(a->flows[i].pid, b->flows[i].pid);
        cr_assert_eq(a->flows[i].tid, b->flows[i].tid);
        cr_assert_eq(a->flows[i].is_start, b->flows[i].is_start);
    }
    opm_trace_free(a);
    opm_trace_free(b);
}
