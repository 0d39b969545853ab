/* reader.c — streaming reader for torch.profiler Chrome-trace JSON, plain or
 * gzip: bytes go through zlib (when gzip) and yajl's callbacks in fixed-size
 * chunks straight into the event store, so memory grows with the events kept,
 * never with the file.
 *
 * Kept: complete events (ph "X") of the classes later stages use (operators,
 * user annotations, runtime launches, GPU kernels/memcpys/memsets and GPU
 * annotations), ac2g flow ends (ph "s"/"f"), and the deviceProperties array.
 * Everything else (python_function events, instant and metadata events, all
 * other args) is skipped without being stored or converted.
 *
 * Speed: the callbacks are a small state machine.  Keys are dispatched on
 * length and then memcmp; an event known to be dropped (its ph or cat says
 * so, and kineto writes those first) skips the rest of its keys and values
 * with one counter test per callback; nothing is allocated per event (the
 * scratch buffers are reused and only kept strings are interned). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>
#include "../core/internal.h"
#include "trace_internal.h"

/* Bytes handed to zlib and yajl per call: large enough that per-call costs
 * vanish, small enough that the reader's own memory stays flat. */
#define RD_CHUNK (256u * 1024u)

/* A reusable byte buffer: scratch text of the event being read. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

/* What the parser is inside of (only containers the reader cares about;
 * skipped and re-serialised values are tracked by counters instead). */
enum rd_ctx { C_NONE, C_TOP, C_EVENTS, C_EVENT, C_ARGS, C_DEVS, C_DEV };

/* What the next value in the current map is for. */
enum rd_slot {
    S_SKIP,
    S_EVENTS, S_DEVS,                               /* top-level object */
    S_PH, S_CAT, S_NAME, S_PID, S_TID, S_TS, S_DUR, S_ID, S_ARGS,   /* event */
    S_CORR, S_EXTID, S_SEQ, S_STREAM, S_DEVICE,     /* args: integers */
    S_KERNEL,                                       /* args.kernel of a launch (graph capture) */
    S_COLL, S_DTYPE, S_PG_RANKS,                    /* record_param_comms: strings */
    S_IN_NELEMS, S_OUT_NELEMS, S_GROUP_SIZE,        /* record_param_comms: integers */
    S_TEXT0,                                        /* args: re-serialised JSON, */
    S_DIMS = S_TEXT0, S_TYPES, S_STRIDES, S_CONCRETE, /* in opm_call_args order */
    S_DEV_ID, S_DEV_NAME, S_DEV_SMS, S_DEV_MEM      /* deviceProperties entry */
};

/* Event class from `cat`, before ph is combined with it. */
enum rd_cat {
    K_UNKNOWN = -1,
    K_CPU_OP = OPM_EV_CPU_OP,
    K_ANNOTATION = OPM_EV_ANNOTATION,
    K_LAUNCH = OPM_EV_LAUNCH,
    K_KERNEL = OPM_EV_KERNEL,
    K_MEMCPY = OPM_EV_MEMCPY,
    K_MEMSET = OPM_EV_MEMSET,
    K_GPU_ANNOTATION = OPM_EV_GPU_ANNOTATION,
    K_FLOW = OPM_EV_CLASS_COUNT,    /* ac2g */
    K_OTHER
};

/* A pid or tid as read: a small non-negative integer, or text to intern. */
enum { ID_ABSENT, ID_NUM, ID_TEXT };
typedef struct rd_id {
    int kind;
    int32_t num;
    sbuf text;
} rd_id;

#define RD_MAX_CTX 8
#define N_TEXTS 4
/* Entries of the reader's intern cache (a power of two). */
#define RD_CACHE 4096

typedef struct rd {
    opm_trace *t;
    opm_error *err;
    yajl_handle h;
    uint64_t chunk_base;    /* uncompressed bytes fed before the current chunk */
    int failed;             /* a callback stopped the parse and filled err */

    enum rd_ctx ctx[RD_MAX_CTX];
    int depth;              /* entries used in ctx */
    enum rd_slot slot;
    uint64_t skip;          /* > 0: inside a skipped container, its depth */
    int saw_events;         /* a traceEvents array (or a top-level array) was seen */

    /* Re-serialising one of the four call-argument values. */
    sbuf *ser;
    uint64_t ser_depth;

    /* The event being read. */
    char ph;                /* 0: not seen */
    int cat;                /* enum rd_cat */
    int drop;               /* known not to be kept: skip the rest */
    sbuf name;
    int has_name;
    rd_id pid, tid;
    int has_ts, has_dur, has_id;
    int64_t ts_ns, dur_ns, id;
    int64_t corr, extid, seq, stream, device;
    sbuf text[N_TEXTS];
    int has_text[N_TEXTS];
    sbuf kernel;            /* args.kernel: a captured launch names its kernel only here */
    int has_kernel;
    /* record_param_comms' args (opm_tcomm); texts in coll, dtype, pg_ranks. */
    sbuf coll, dtype, pg_ranks;
    int has_coll, has_dtype, has_pg_ranks;
    int64_t in_nelems, out_nelems, group_size;

    /* Earliest start and latest end of the complete events kept so far:
     * every later difference of two times must fit in int64. */
    int has_span;
    int64_t span_lo_ns, span_hi_ns;

    /* The deviceProperties entry being read. */
    size_t dev_index;
    opm_tdevice dev;

    /* Recently interned strings, id + 1 by a cheap hash (0: empty). */
    uint32_t cache[RD_CACHE];
} rd;

/* ---- errors ---- */

static uint64_t rd_offset(const rd *r)
{
    return r->chunk_base + (uint64_t)yajl_get_bytes_consumed(r->h);
}

/* A semantic error found inside a callback: "<source>: byte N: field: what". */
static int rd_fail(rd *r, const char *field, const char *what)
{
    opm_err(r->err, OPM_EINVAL, NULL, "%s: byte %llu: %s%s%s", r->t->source,
            (unsigned long long)rd_offset(r), field, *field ? ": " : "", what);
    if (r->err)
        opm_strlcpy(r->err->field, field, sizeof r->err->field);
    r->failed = 1;
    return 0;
}

static int rd_oom(rd *r)
{
    opm_err(r->err, OPM_ENOMEM, NULL, "%s: out of memory reading the trace", r->t->source);
    r->failed = 1;
    return 0;
}

/* ---- scratch buffers ---- */

static int sbuf_reserve(sbuf *b, size_t extra)
{
    if (b->cap - b->n >= extra)
        return 0;
    if (extra > SIZE_MAX / 2 - b->n)
        return -1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < extra)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int sbuf_set(sbuf *b, const void *s, size_t len)
{
    b->n = 0;
    if (len == 0)
        return 0;
    if (sbuf_reserve(b, len))
        return -1;
    memcpy(b->p, s, len);
    b->n = len;
    return 0;
}

/* ---- interning ---- */

static uint64_t load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* opm_trace_intern behind a direct-mapped cache.  The same kernel names and
 * argument texts come back millions of times; the store hashes every byte,
 * while a hit here costs a hash of three words and one memcmp. */
static uint32_t rd_intern(rd *r, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    uint64_t h = (uint64_t)len * 0x9e3779b97f4a7c15ull;
    if (len >= 8) {
        h ^= load8(s);
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
        h ^= load8(s + (len - 8) / 2);
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
        h ^= load8(s + len - 8);
    } else {
        for (size_t i = 0; i < len; i++)
            h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    }
    h = (h ^ (h >> 31)) * 0x94d049bb133111ebull;
    uint32_t *slot = &r->cache[(h >> 32) & (RD_CACHE - 1)];
    if (*slot) {
        uint32_t id = *slot - 1;
        if (opm_trace_strlen(r->t, id) == len && memcmp(opm_trace_str(r->t, id), s, len) == 0)
            return id;
    }
    uint32_t id = opm_trace_intern(r->t, s, len);
    if (id != OPM_NONE32)
        *slot = id + 1;
    return id;
}

/* ---- number text ---- */

/* Microseconds as JSON number text → nanoseconds, exactly: the decimal digits
 * are shifted by three places, never converted through a double, and the
 * first digit below a nanosecond rounds (half away from zero).  Returns -1
 * on text that is not a number or a value beyond int64. */
static int us_to_ns(const char *s, size_t len, int64_t *out)
{
    size_t i = 0, end = len;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    long exp10 = 0;
    for (size_t k = i; k < len; k++) {
        if (s[k] != 'e' && s[k] != 'E')
            continue;
        end = k;
        size_t j = k + 1;
        int eneg = 0;
        if (j < len && (s[j] == '-' || s[j] == '+'))
            eneg = s[j++] == '-';
        if (j == len)
            return -1;
        for (; j < len; j++) {
            if (s[j] < '0' || s[j] > '9')
                return -1;
            if (exp10 < 100000)     /* beyond this every value is 0 or overflows */
                exp10 = exp10 * 10 + (s[j] - '0');
        }
        if (eneg)
            exp10 = -exp10;
        break;
    }
    size_t int_digits = 0;
    while (i + int_digits < end && s[i + int_digits] != '.')
        int_digits++;
    /* Place value, in powers of ten of a nanosecond, of the first digit. */
    long place = (long)int_digits - 1 + 3 + exp10;
    uint64_t n = 0;
    int round_up = 0, digits = 0;
    for (size_t k = i; k < end; k++) {
        if (s[k] == '.')
            continue;
        unsigned d = (unsigned)(s[k] - '0');
        if (d > 9)
            return -1;
        digits++;
        if (place >= 0) {
            if (n > (UINT64_MAX - d) / 10)
                return -1;
            n = n * 10 + d;
        } else if (place == -1) {
            round_up = d >= 5;
        }
        place--;
    }
    if (digits == 0)
        return -1;
    for (; place >= 0; place--) {
        if (n > UINT64_MAX / 10) {
            if (n == 0)
                break;
            return -1;
        }
        n *= 10;
    }
    n += (uint64_t)round_up;
    if (n > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? -(int64_t)n : (int64_t)n;
    return 0;
}

/* An integer's text (no fraction or exponent) → int64; -1 otherwise. */
static int parse_i64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && s[i] == '-')
        neg = 1, i++;
    if (i == len)
        return -1;
    uint64_t v = 0;
    for (; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* ---- classification ---- */

static int ieq(const unsigned char *s, const char *lit, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + ('a' - 'A'));
        if (c != (unsigned char)lit[i])
            return 0;
    }
    return 1;
}

/* `cat` → class, case-insensitively: kineto writes lower_case categories,
 * older traces "Operator", "Runtime", "Kernel", "Memcpy", "Memset".
 * python_function events are dropped: they are the most numerous events of a
 * trace made with_stack and never own kernels (a launch always sits under a
 * cpu_op or a user annotation, which are kept). */
static int classify_cat(const unsigned char *s, size_t len)
{
    switch (len) {
    case 4:
        if (ieq(s, "ac2g", 4)) return K_FLOW;
        break;
    case 6:
        if (ieq(s, "cpu_op", 6)) return K_CPU_OP;
        if (ieq(s, "kernel", 6)) return K_KERNEL;
        if (ieq(s, "memcpy", 6)) return K_MEMCPY;
        if (ieq(s, "memset", 6)) return K_MEMSET;
        break;
    case 7:
        if (ieq(s, "runtime", 7)) return K_LAUNCH;
        break;
    case 8:
        if (ieq(s, "operator", 8)) return K_CPU_OP;
        break;
    case 10:
        if (ieq(s, "gpu_memcpy", 10)) return K_MEMCPY;
        if (ieq(s, "gpu_memset", 10)) return K_MEMSET;
        break;
    case 11:
        if (ieq(s, "cuda_driver", 11)) return K_LAUNCH;
        break;
    case 12:
        if (ieq(s, "cuda_runtime", 12)) return K_LAUNCH;
        break;
    case 15:
        if (ieq(s, "user_annotation", 15)) return K_ANNOTATION;
        break;
    case 19:
        if (ieq(s, "gpu_user_annotation", 19)) return K_GPU_ANNOTATION;
        break;
    default:
        break;
    }
    return K_OTHER;
}

/* Once ph or cat is known, an event that cannot be kept skips the rest. */
static void update_drop(rd *r)
{
    if (r->ph && r->ph != 'X' && r->ph != 's' && r->ph != 'f')
        r->drop = 1;
    else if (r->cat == K_OTHER)
        r->drop = 1;
    else if (r->ph && r->cat != K_UNKNOWN && (r->ph == 'X') != (r->cat != K_FLOW))
        r->drop = 1;
}

/* ---- event assembly ---- */

static void event_reset(rd *r)
{
    r->ph = 0;
    r->cat = K_UNKNOWN;
    r->drop = 0;
    r->has_name = 0;
    r->pid.kind = ID_ABSENT;
    r->tid.kind = ID_ABSENT;
    r->has_ts = r->has_dur = r->has_id = 0;
    r->corr = r->extid = r->seq = OPM_NO_ID;
    r->stream = r->device = -1;
    for (int i = 0; i < N_TEXTS; i++)
        r->has_text[i] = 0;
    r->has_kernel = 0;
    r->has_coll = r->has_dtype = r->has_pg_ranks = 0;
    r->in_nelems = r->out_nelems = r->group_size = -1;
}

/* A pid or tid value: numbers in [0, INT32_MAX] are kept as they are; any
 * other number, and any string, is kept as text and interned when the event
 * is kept (store: -(1 + string id)). */
static int read_id(rd *r, rd_id *id, const char *s, size_t len, int is_number)
{
    int64_t v;
    if (is_number && parse_i64(s, len, &v) == 0 && v >= 0 && v <= INT32_MAX) {
        id->kind = ID_NUM;
        id->num = (int32_t)v;
        return 1;
    }
    if (sbuf_set(&id->text, s, len))
        return rd_oom(r);
    id->kind = ID_TEXT;
    return 1;
}

static int resolve_id(rd *r, const rd_id *id, int32_t *out, const char *field)
{
    if (id->kind == ID_ABSENT) {
        *out = 0;
        return 1;
    }
    if (id->kind == ID_NUM) {
        *out = id->num;
        return 1;
    }
    uint32_t s = rd_intern(r, id->text.p ? id->text.p : "", id->text.n);
    if (s == OPM_NONE32)
        return rd_oom(r);
    if (s >= (uint32_t)INT32_MAX)
        return rd_fail(r, field, "more distinct string ids than fit in 31 bits");
    *out = -(int32_t)s - 1;
    return 1;
}

static int finish_flow(rd *r)
{
    /* A flow end without a usable id cannot connect anything: not kept. */
    if (!r->has_id)
        return 1;
    if (!r->has_ts)
        return rd_fail(r, "ts", "ac2g flow event without a timestamp");
    opm_tflow f;
    memset(&f, 0, sizeof f);    /* padding too: stores compare bytewise */
    f.id = r->id;
    f.ts_ns = r->ts_ns;
    f.is_start = r->ph == 's';
    if (!resolve_id(r, &r->pid, &f.pid, "pid") || !resolve_id(r, &r->tid, &f.tid, "tid"))
        return 0;
    if (opm_trace_add_flow(r->t, &f, r->err)) {
        r->failed = 1;
        return 0;
    }
    r->t->stats.flows++;
    return 1;
}

/* Links and timelines subtract any two event times: an event ending past
 * int64 nanoseconds, or more than 2^63 ns (292 years) from the others (a
 * clock mix-up, or a corrupt number), is refused here rather than wrapping
 * there. */
static int widen_span(rd *r, int64_t ts, int64_t dur)
{
    if (ts > INT64_MAX - dur)
        return rd_fail(r, "dur", "event ends beyond the int64 nanosecond range");
    int64_t lo = ts, hi = ts + dur;
    if (r->has_span) {
        lo = r->span_lo_ns < lo ? r->span_lo_ns : lo;
        hi = r->span_hi_ns > hi ? r->span_hi_ns : hi;
    }
    if ((uint64_t)hi - (uint64_t)lo > (uint64_t)INT64_MAX)
        return rd_fail(r, "ts", "events span more than 2^63 ns (292 years)");
    r->has_span = 1;
    r->span_lo_ns = lo;
    r->span_hi_ns = hi;
    return 1;
}

/* The collective of a record_param_comms event (its args), beside the event. */
static int finish_comm(rd *r, const opm_tev *e)
{
    opm_tcomm c = {e->ts_ns, e->dur_ns, e->pid, e->tid, 0, 0, 0, r->in_nelems, r->out_nelems, r->group_size};
    c.collective = rd_intern(r, r->coll.p, r->coll.n);
    c.dtype = r->has_dtype ? rd_intern(r, r->dtype.p, r->dtype.n) : 0;
    c.pg_ranks = r->has_pg_ranks ? rd_intern(r, r->pg_ranks.p, r->pg_ranks.n) : 0;
    if (c.collective == OPM_NONE32 || c.dtype == OPM_NONE32 || c.pg_ranks == OPM_NONE32)
        return rd_oom(r);
    if (opm_trace_add_comm(r->t, &c, r->err)) {
        r->failed = 1;
        return 0;
    }
    return 1;
}

static int finish_event(rd *r)
{
    if (r->drop || r->ph == 0 || r->cat == K_UNKNOWN)
        return 1;
    if (r->cat == K_FLOW)
        return finish_flow(r);
    if (!r->has_ts)
        return rd_fail(r, "ts", "event without a timestamp");
    if (!r->has_dur)
        return rd_fail(r, "dur", "complete (ph X) event without a duration");
    if (r->dur_ns < 0)
        return rd_fail(r, "dur", "negative duration");
    if (!widen_span(r, r->ts_ns, r->dur_ns))
        return 0;
    opm_tev e;
    opm_tev_init(&e);
    e.ts_ns = r->ts_ns;
    e.dur_ns = r->dur_ns;
    e.correlation = r->corr;
    e.external_id = r->extid;
    e.seq = r->seq;
    e.cls = (uint8_t)r->cat;
    if (!resolve_id(r, &r->pid, &e.pid, "pid") || !resolve_id(r, &r->tid, &e.tid, "tid"))
        return 0;
    e.name = rd_intern(r, r->has_name ? r->name.p : "", r->has_name ? r->name.n : 0);
    if (e.name == OPM_NONE32)
        return rd_oom(r);
    if (opm_ev_is_gpu(r->cat) || r->cat == K_GPU_ANNOTATION) {
        if (r->stream >= INT32_MIN && r->stream <= INT32_MAX)
            e.stream = (int32_t)r->stream;
        if (r->device >= INT16_MIN && r->device <= INT16_MAX)
            e.device = (int16_t)r->device;
    }
    if (r->cat == K_CPU_OP &&
        (r->has_text[0] | r->has_text[1] | r->has_text[2] | r->has_text[3])) {
        uint32_t ids[N_TEXTS];
        for (int i = 0; i < N_TEXTS; i++) {
            ids[i] = r->has_text[i] ? rd_intern(r, r->text[i].p, r->text[i].n) : 0;
            if (ids[i] == OPM_NONE32)
                return rd_oom(r);
        }
        opm_call_args a = {ids[0], ids[1], ids[2], ids[3]};
        if (opm_trace_add_args(r->t, &a, &e.args, r->err)) {
            r->failed = 1;
            return 0;
        }
    }
    if (r->cat == K_LAUNCH && r->has_kernel) {
        /* Launches have no call arguments, so `args` holds the kernel's
         * string id (graph.c pairs captured launches with replayed kernels
         * by it); the event stays 64 bytes. */
        e.args = rd_intern(r, r->kernel.p, r->kernel.n);
        if (e.args == OPM_NONE32)
            return rd_oom(r);
    }
    if (opm_trace_add_event(r->t, &e, r->err)) {
        r->failed = 1;
        return 0;
    }
    if (r->cat == K_CPU_OP && r->has_coll && !finish_comm(r, &e))
        return 0;
    opm_trace_stats *st = &r->t->stats;
    if (r->cat == K_CPU_OP || r->cat == K_ANNOTATION)
        st->cpu_ops++;
    else if (r->cat == K_LAUNCH)
        st->launches++;
    else if (opm_ev_is_gpu(r->cat))
        st->gpu_events++;
    return 1;
}

static int finish_device(rd *r)
{
    /* Only the name is used (hardware detection): a nameless entry would
     * be detected as the empty string. */
    if (r->dev.name == 0)
        return 1;
    if (opm_trace_add_device(r->t, &r->dev, r->err)) {
        r->failed = 1;
        return 0;
    }
    return 1;
}

/* ---- re-serialising call arguments as canonical compact JSON ---- */

static int ser_sep(sbuf *b)
{
    if (b->n) {
        char last = b->p[b->n - 1];
        if (last != '[' && last != '{' && last != ':') {
            if (sbuf_reserve(b, 1))
                return -1;
            b->p[b->n++] = ',';
        }
    }
    return 0;
}

static int ser_raw(sbuf *b, const char *s, size_t len)
{
    if (ser_sep(b) || sbuf_reserve(b, len))
        return -1;
    memcpy(b->p + b->n, s, len);
    b->n += len;
    return 0;
}

static int ser_string(sbuf *b, const unsigned char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t out = len + 2;   /* exact size: escapes are rare, strings may be long */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f')
            out += 1;
        else if (c < 0x20)
            out += 5;
    }
    if (ser_sep(b) || out < len || sbuf_reserve(b, out))
        return -1;
    char *o = b->p + b->n;
    *o++ = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c >= 0x20) {
            *o++ = (char)c;
        } else if (c == '\n') {
            *o++ = '\\', *o++ = 'n';
        } else if (c == '\t') {
            *o++ = '\\', *o++ = 't';
        } else if (c == '\r') {
            *o++ = '\\', *o++ = 'r';
        } else if (c == '\b') {
            *o++ = '\\', *o++ = 'b';
        } else if (c == '\f') {
            *o++ = '\\', *o++ = 'f';
        } else {
            memcpy(o, "\\u00", 4);
            o[4] = hex[c >> 4];
            o[5] = hex[c & 15];
            o += 6;
        }
    }
    *o++ = '"';
    b->n = (size_t)(o - b->p);
    return 0;
}

/* The value being re-serialised is complete once its depth returns to 0. */
static void ser_done_if_closed(rd *r)
{
    if (r->ser_depth == 0) {
        r->has_text[r->slot - S_TEXT0] = 1;
        r->ser = NULL;
        r->slot = S_SKIP;
    }
}

static void ser_begin(rd *r)
{
    r->ser = &r->text[r->slot - S_TEXT0];
    r->ser->n = 0;
    r->ser_depth = 0;
}

/* ---- values in the containers the reader follows ---- */

enum { V_NULL, V_BOOL, V_NUMBER, V_STRING };

static int scalar_type_error(rd *r, const char *field, int type)
{
    static const char *const got[] = {"null", "a boolean", "a number", "a string"};
    char what[64];
    snprintf(what, sizeof what, "expected a number, got %s", got[type]);
    return rd_fail(r, field, what);
}

static int event_scalar(rd *r, int type, const char *s, size_t len)
{
    enum rd_slot slot = r->slot;
    r->slot = S_SKIP;
    switch (slot) {
    case S_PH:
        if (type == V_STRING)
            r->ph = len == 1 ? s[0] : '?';
        else
            r->ph = '?';
        update_drop(r);
        return 1;
    case S_CAT:
        r->cat = type == V_STRING ? classify_cat((const unsigned char *)s, len) : K_OTHER;
        update_drop(r);
        return 1;
    case S_NAME:
        if (type == V_STRING) {
            if (sbuf_set(&r->name, s, len))
                return rd_oom(r);
            r->has_name = 1;
        }
        return 1;
    case S_PID:
    case S_TID:
        if (type == V_STRING || type == V_NUMBER)
            return read_id(r, slot == S_PID ? &r->pid : &r->tid, s, len, type == V_NUMBER);
        return 1;
    case S_TS:
    case S_DUR: {
        const char *field = slot == S_TS ? "ts" : "dur";
        if (type != V_NUMBER)
            return scalar_type_error(r, field, type);
        int64_t *dst = slot == S_TS ? &r->ts_ns : &r->dur_ns;
        if (us_to_ns(s, len, dst))
            return rd_fail(r, field, "time in microseconds out of the int64 nanosecond range");
        *(slot == S_TS ? &r->has_ts : &r->has_dur) = 1;
        return 1;
    }
    case S_ID:
        /* Flow ids are integers; a decimal string is accepted too. */
        if ((type == V_NUMBER || type == V_STRING) && parse_i64(s, len, &r->id) == 0)
            r->has_id = 1;
        return 1;
    case S_CORR:
    case S_EXTID:
    case S_SEQ:
    case S_STREAM:
    case S_DEVICE: {
        int64_t v;
        if (type != V_NUMBER || parse_i64(s, len, &v))
            return 1;
        int64_t *dst = slot == S_CORR ? &r->corr : slot == S_EXTID ? &r->extid
                     : slot == S_SEQ ? &r->seq : slot == S_STREAM ? &r->stream : &r->device;
        *dst = v;
        return 1;
    }
    case S_KERNEL:
        if (type == V_STRING) {
            if (sbuf_set(&r->kernel, s, len))
                return rd_oom(r);
            r->has_kernel = 1;
        }
        return 1;
    case S_COLL:
    case S_DTYPE:
    case S_PG_RANKS:
        if (type == V_STRING) {
            sbuf *b = slot == S_COLL ? &r->coll : slot == S_DTYPE ? &r->dtype : &r->pg_ranks;
            if (sbuf_set(b, s, len))
                return rd_oom(r);
            *(slot == S_COLL ? &r->has_coll : slot == S_DTYPE ? &r->has_dtype : &r->has_pg_ranks) = 1;
        }
        return 1;
    case S_IN_NELEMS:
    case S_OUT_NELEMS:
    case S_GROUP_SIZE: {
        int64_t v;
        if (type == V_NUMBER && parse_i64(s, len, &v) == 0 && v >= 0)
            *(slot == S_IN_NELEMS ? &r->in_nelems : slot == S_OUT_NELEMS ? &r->out_nelems : &r->group_size) = v;
        return 1;
    }
    case S_DIMS:
    case S_TYPES:
    case S_STRIDES:
    case S_CONCRETE: {
        /* A scalar where a list is usual: kept as its own JSON text. */
        sbuf *b = &r->text[slot - S_TEXT0];
        b->n = 0;
        if (type == V_STRING ? ser_string(b, (const unsigned char *)s, len) : ser_raw(b, s, len))
            return rd_oom(r);
        r->has_text[slot - S_TEXT0] = 1;
        return 1;
    }
    default:
        return 1;
    }
}

static int device_scalar(rd *r, int type, const char *s, size_t len)
{
    enum rd_slot slot = r->slot;
    r->slot = S_SKIP;
    if (slot == S_DEV_NAME) {
        if (type == V_STRING) {
            r->dev.name = opm_trace_intern(r->t, s, len);
            if (r->dev.name == OPM_NONE32)
                return rd_oom(r);
        }
        return 1;
    }
    int64_t v;
    if (type != V_NUMBER || parse_i64(s, len, &v))
        return 1;
    if (slot == S_DEV_ID)
        r->dev.id = v;
    else if (slot == S_DEV_SMS)
        r->dev.num_sms = v;
    else if (slot == S_DEV_MEM)
        r->dev.total_global_mem = v;
    return 1;
}

static int on_scalar(rd *r, int type, const char *s, size_t len)
{
    switch (r->ctx[r->depth - 1]) {
    case C_EVENTS:
        r->t->stats.events++;
        return 1;
    case C_EVENT:
    case C_ARGS:
        return event_scalar(r, type, s, len);
    case C_DEV:
        return device_scalar(r, type, s, len);
    case C_TOP:
        if (r->slot == S_EVENTS)
            return rd_fail(r, "traceEvents", "expected an array of events");
        r->slot = S_SKIP;
        return 1;
    case C_DEVS:
        return 1;
    default:
        return rd_fail(r, "", "expected a JSON object or array at the top level");
    }
}

static int push(rd *r, enum rd_ctx c)
{
    if (r->depth == RD_MAX_CTX)   /* cannot happen: the followed containers nest 4 deep */
        return rd_fail(r, "", "internal nesting limit");
    r->ctx[r->depth++] = c;
    r->slot = S_SKIP;
    return 1;
}

static int on_open(rd *r, int is_map)
{
    enum rd_slot slot = r->slot;
    switch (r->ctx[r->depth - 1]) {
    case C_NONE:
        if (is_map)
            return push(r, C_TOP);
        r->saw_events = 1;
        return push(r, C_EVENTS);
    case C_EVENTS:
        r->t->stats.events++;
        if (!is_map)
            break;
        event_reset(r);
        return push(r, C_EVENT);
    case C_DEVS:
        if (!is_map)
            break;
        r->dev.id = (int64_t)r->dev_index++;
        r->dev.name = 0;
        r->dev.num_sms = -1;
        r->dev.total_global_mem = -1;
        return push(r, C_DEV);
    case C_TOP:
        if (slot == S_EVENTS) {
            if (is_map)
                return rd_fail(r, "traceEvents", "expected an array of events, got an object");
            r->saw_events = 1;
            return push(r, C_EVENTS);
        }
        if (slot == S_DEVS && !is_map)
            return push(r, C_DEVS);
        break;
    case C_EVENT:
        if (slot == S_ARGS && is_map)
            return push(r, C_ARGS);
        if (slot == S_TS || slot == S_DUR)
            return rd_fail(r, slot == S_TS ? "ts" : "dur",
                           is_map ? "expected a number, got an object" : "expected a number, got an array");
        break;
    case C_ARGS:
        if (slot >= S_TEXT0 && slot < S_TEXT0 + N_TEXTS) {
            ser_begin(r);
            if (ser_raw(r->ser, is_map ? "{" : "[", 1))
                return rd_oom(r);
            r->ser_depth = 1;
            return 1;
        }
        break;
    default:
        break;
    }
    r->slot = S_SKIP;
    r->skip = 1;
    return 1;
}

static int on_close(rd *r)
{
    enum rd_ctx c = r->ctx[--r->depth];
    r->slot = S_SKIP;
    if (c == C_EVENT)
        return finish_event(r);
    if (c == C_DEV)
        return finish_device(r);
    return 1;
}

#define KEY_IS(lit) (len == sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)

static enum rd_slot event_key(const rd *r, const unsigned char *k, size_t len)
{
    if (r->drop)
        return S_SKIP;
    switch (len) {
    case 2:
        if (k[0] == 'p' && k[1] == 'h') return S_PH;
        if (k[0] == 't' && k[1] == 's') return S_TS;
        if (k[0] == 'i' && k[1] == 'd') return S_ID;
        return S_SKIP;
    case 3:
        if (KEY_IS("cat")) return S_CAT;
        if (KEY_IS("pid")) return S_PID;
        if (KEY_IS("tid")) return S_TID;
        if (KEY_IS("dur")) return S_DUR;
        return S_SKIP;
    case 4:
        if (KEY_IS("name")) return S_NAME;
        if (KEY_IS("args")) return S_ARGS;
        return S_SKIP;
    default:
        return S_SKIP;
    }
}

static enum rd_slot args_key(const rd *r, const unsigned char *k, size_t len)
{
    if (r->drop)
        return S_SKIP;
    switch (len) {
    case 5:
        if (KEY_IS("dtype")) return S_DTYPE;
        return S_SKIP;
    case 6:
        if (KEY_IS("stream")) return S_STREAM;
        if (KEY_IS("device")) return S_DEVICE;
        if (KEY_IS("kernel")) return S_KERNEL;
        return S_SKIP;
    case 10:
        if (KEY_IS("Input Dims")) return S_DIMS;
        if (KEY_IS("Input type")) return S_TYPES;
        if (KEY_IS("Group size")) return S_GROUP_SIZE;
        return S_SKIP;
    case 11:
        if (KEY_IS("correlation")) return S_CORR;
        if (KEY_IS("External id")) return S_EXTID;
        return S_SKIP;
    case 13:
        if (KEY_IS("Input Strides")) return S_STRIDES;
        if (KEY_IS("In msg nelems")) return S_IN_NELEMS;
        return S_SKIP;
    case 14:
        if (KEY_IS("Out msg nelems")) return S_OUT_NELEMS;
        return S_SKIP;
    case 15:
        if (KEY_IS("Sequence number")) return S_SEQ;
        if (KEY_IS("Concrete Inputs")) return S_CONCRETE;
        if (KEY_IS("Collective name")) return S_COLL;
        return S_SKIP;
    case 19:
        if (KEY_IS("Process Group Ranks")) return S_PG_RANKS;
        return S_SKIP;
    default:
        return S_SKIP;
    }
}

static enum rd_slot device_key(const unsigned char *k, size_t len)
{
    if (KEY_IS("id")) return S_DEV_ID;
    if (KEY_IS("name")) return S_DEV_NAME;
    if (KEY_IS("numSms")) return S_DEV_SMS;
    if (KEY_IS("totalGlobalMem")) return S_DEV_MEM;
    return S_SKIP;
}

static enum rd_slot top_key(const unsigned char *k, size_t len)
{
    if (KEY_IS("traceEvents")) return S_EVENTS;
    if (KEY_IS("deviceProperties")) return S_DEVS;
    return S_SKIP;
}

/* ---- yajl callbacks ---- */

static int cb_scalar(rd *r, int type, const char *s, size_t len)
{
    if (r->skip)
        return 1;
    if (r->ser) {
        int rc = type == V_STRING ? ser_string(r->ser, (const unsigned char *)s, len)
                                  : ser_raw(r->ser, s, len);
        if (rc)
            return rd_oom(r);
        ser_done_if_closed(r);
        return 1;
    }
    return on_scalar(r, type, s, len);
}

static int cb_null(void *ctx)
{
    return cb_scalar(ctx, V_NULL, "null", 4);
}

static int cb_bool(void *ctx, int b)
{
    return cb_scalar(ctx, V_BOOL, b ? "true" : "false", b ? 4 : 5);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    return cb_scalar(ctx, V_NUMBER, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    return cb_scalar(ctx, V_STRING, (const char *)s, len);
}

static int cb_open(rd *r, int is_map)
{
    if (r->skip) {
        r->skip++;
        return 1;
    }
    if (r->ser) {
        if (ser_raw(r->ser, is_map ? "{" : "[", 1))
            return rd_oom(r);
        r->ser_depth++;
        return 1;
    }
    return on_open(r, is_map);
}

static int cb_close(rd *r, int is_map)
{
    if (r->skip) {
        r->skip--;
        return 1;
    }
    if (r->ser) {
        if (sbuf_reserve(r->ser, 1))
            return rd_oom(r);
        r->ser->p[r->ser->n++] = is_map ? '}' : ']';
        r->ser_depth--;
        ser_done_if_closed(r);
        return 1;
    }
    return on_close(r);
}

static int cb_start_map(void *ctx)
{
    return cb_open(ctx, 1);
}

static int cb_end_map(void *ctx)
{
    return cb_close(ctx, 1);
}

static int cb_start_array(void *ctx)
{
    return cb_open(ctx, 0);
}

static int cb_end_array(void *ctx)
{
    return cb_close(ctx, 0);
}

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
    rd *r = ctx;
    if (r->skip)
        return 1;
    if (r->ser) {
        if (ser_string(r->ser, k, len) || sbuf_reserve(r->ser, 1))
            return rd_oom(r);
        r->ser->p[r->ser->n++] = ':';
        return 1;
    }
    switch (r->ctx[r->depth - 1]) {
    case C_EVENT:
        r->slot = event_key(r, k, len);
        break;
    case C_ARGS:
        r->slot = args_key(r, k, len);
        break;
    case C_DEV:
        r->slot = device_key(k, len);
        break;
    case C_TOP:
        r->slot = top_key(k, len);
        break;
    default:
        r->slot = S_SKIP;
        break;
    }
    return 1;
}

static const yajl_callbacks rd_callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_key, cb_end_map, cb_start_array, cb_end_array,
};

/* ---- driving yajl ---- */

static void rd_free_scratch(rd *r)
{
    free(r->name.p);
    free(r->pid.text.p);
    free(r->tid.text.p);
    for (int i = 0; i < N_TEXTS; i++)
        free(r->text[i].p);
    free(r->kernel.p);
    free(r->coll.p);
    free(r->dtype.p);
    free(r->pg_ranks.p);
    if (r->h)
        yajl_free(r->h);
}

/* yajl's own error, first line only, as "<source>: byte N: what (...)". */
static int rd_yajl_error(rd *r, const unsigned char *chunk, size_t len, uint64_t offset)
{
    if (r->failed)
        return -1;
    unsigned char *msg = yajl_get_error(r->h, 0, chunk, len);
    char *nl = msg ? strchr((char *)msg, '\n') : NULL;
    if (nl)
        *nl = '\0';
    opm_err(r->err, OPM_EINVAL, NULL, "%s: byte %llu: %s (truncated or malformed trace)",
            r->t->source, (unsigned long long)offset, msg ? (const char *)msg : "invalid JSON");
    if (msg)
        yajl_free_error(r->h, msg);
    return -1;
}

/* Parses one chunk of uncompressed JSON; 0 or -1 (err filled). */
static int rd_feed(rd *r, const unsigned char *p, size_t n)
{
    yajl_status st = yajl_parse(r->h, p, n);
    if (st != yajl_status_ok) {
        uint64_t off = r->chunk_base + (uint64_t)yajl_get_bytes_consumed(r->h);
        return rd_yajl_error(r, p, n, off);
    }
    r->chunk_base += n;
    return 0;
}

static int rd_finish(rd *r)
{
    yajl_status st = yajl_complete_parse(r->h);
    if (st != yajl_status_ok)
        return rd_yajl_error(r, (const unsigned char *)"", 0, r->chunk_base);
    if (!r->saw_events) {
        opm_err(r->err, OPM_EINVAL, "", "%s: byte %llu: not a trace: the top-level object has no traceEvents array",
                r->t->source, (unsigned long long)r->chunk_base);
        return -1;
    }
    r->t->stats.json_bytes = r->chunk_base;
    return 0;
}

/* ---- input: memory or a FILE, plain or gzip ---- */

typedef struct rd_in {
    FILE *f;                    /* NULL: reading `mem` */
    const char *path;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    unsigned char *buf;         /* RD_CHUNK bytes when reading a FILE */
    const unsigned char *pending;   /* bytes peeked for the gzip magic */
    size_t pending_len;
} rd_in;

/* The next raw bytes (without copying when reading memory): the count, 0 at
 * the end, or -1 on a read error (err filled). */
static long long in_next(rd_in *in, const unsigned char **p, opm_error *err)
{
    if (in->pending_len) {
        size_t n = in->pending_len;
        *p = in->pending;
        in->pending_len = 0;
        return (long long)n;
    }
    if (!in->f) {
        size_t n = in->mem_len - in->mem_pos;
        if (n > RD_CHUNK)
            n = RD_CHUNK;
        *p = in->mem + in->mem_pos;
        in->mem_pos += n;
        return (long long)n;
    }
    size_t n = fread(in->buf, 1, RD_CHUNK, in->f);
    if (n == 0 && ferror(in->f)) {
        opm_err(err, OPM_EIO, "", "%s: read error: %s", in->path, strerror(errno));
        return -1;
    }
    *p = in->buf;
    return (long long)n;
}

static int pump_plain(rd *r, rd_in *in)
{
    for (;;) {
        const unsigned char *p;
        long long n = in_next(in, &p, r->err);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (rd_feed(r, p, (size_t)n))
            return -1;
    }
}

static int gz_error(rd *r, const char *what)
{
    opm_err(r->err, OPM_EINVAL, "", "%s: byte %llu: gzip: %s (truncated or malformed trace)",
            r->t->source, (unsigned long long)r->chunk_base, what);
    return -1;
}

/* Inflates member after member (a concatenation of gzip members is one
 * stream, as gzip(1) reads it) and parses the output as it comes. */
static int pump_gzip(rd *r, rd_in *in)
{
    unsigned char *out = malloc(RD_CHUNK);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (!out || inflateInit2(&zs, 15 + 32) != Z_OK) {
        free(out);
        opm_err(r->err, OPM_ENOMEM, "", "%s: out of memory starting zlib", r->t->source);
        return -1;
    }
    /* member_open: inside a member whose end marker has not been seen.  At
     * the end of the input inflate still runs (with no input) to flush what
     * it holds; only then is an open member a truncation. */
    int rc = 0, member_open = 0, eof = 0;
    for (;;) {
        if (zs.avail_in == 0 && !eof) {
            const unsigned char *p;
            long long n = in_next(in, &p, r->err);
            if (n < 0) {
                rc = -1;
                break;
            }
            eof = n == 0;
            zs.next_in = (unsigned char *)(uintptr_t)p;
            zs.avail_in = (uInt)n;
        }
        if (eof && zs.avail_in == 0 && !member_open)
            break;
        zs.next_out = out;
        zs.avail_out = RD_CHUNK;
        int zr = inflate(&zs, Z_NO_FLUSH);
        size_t produced = RD_CHUNK - zs.avail_out;
        if (produced && rd_feed(r, out, produced)) {
            rc = -1;
            break;
        }
        if (zr == Z_STREAM_END) {
            member_open = 0;
            inflateReset(&zs);
        } else if (zr == Z_OK || (zr == Z_BUF_ERROR && !eof)) {
            member_open = 1;
        } else if (zr == Z_BUF_ERROR) {
            rc = gz_error(r, "compressed stream ends before its end marker");
            break;
        } else {
            rc = gz_error(r, zr == Z_MEM_ERROR ? "out of memory"
                             : zs.msg ? zs.msg : "corrupt compressed data");
            if (zr == Z_MEM_ERROR && r->err)
                r->err->code = OPM_ENOMEM;
            break;
        }
    }
    inflateEnd(&zs);
    free(out);
    return rc;
}

static opm_trace *read_input(rd_in *in, const char *source, opm_error *err)
{
    rd r;
    memset(&r, 0, sizeof r);
    r.err = err;
    r.t = opm_trace_new_empty(source, err);
    if (!r.t)
        return NULL;
    r.h = yajl_alloc(&rd_callbacks, NULL, &r);
    if (!r.h) {
        opm_trace_free(r.t);
        opm_err(err, OPM_ENOMEM, "", "%s: out of memory starting the JSON parser", source);
        return NULL;
    }
    /* Strings are only compared with known keys and categories, or interned
     * as names: UTF-8 validation would cost time and change nothing. */
    yajl_config(r.h, yajl_dont_validate_strings, 1);
    r.ctx[0] = C_NONE;
    r.depth = 1;

    /* Peek at the first chunk for the gzip magic; hand it back afterwards. */
    const unsigned char *first;
    long long n = in_next(in, &first, err);
    int rc = n < 0 ? -1 : 0;
    if (rc == 0) {
        in->pending = first;
        in->pending_len = (size_t)n;
        int gz = n >= 2 && first[0] == 0x1f && first[1] == 0x8b;
        rc = gz ? pump_gzip(&r, in) : pump_plain(&r, in);
    }
    if (rc == 0)
        rc = rd_finish(&r);
    rd_free_scratch(&r);
    if (rc) {
        opm_trace_free(r.t);
        return NULL;
    }
    return r.t;
}

opm_trace *opm_trace_read_buffer(const void *data, size_t len, const char *source,
                                 opm_error *err)
{
    opm_error_clear(err);
    if (!source)
        source = "<buffer>";
    if (!data && len) {
        opm_err(err, OPM_EINVAL, "", "%s: no data", source);
        return NULL;
    }
    rd_in in = {.mem = data ? data : (const void *)"", .mem_len = len};
    return read_input(&in, source, err);
}

opm_trace *opm_trace_read_file(const char *path, opm_error *err)
{
    opm_error_clear(err);
    if (!path) {
        opm_err(err, OPM_EINVAL, "", "no trace path given");
        return NULL;
    }
    int is_stdin = strcmp(path, "-") == 0;
    const char *source = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        opm_err(err, OPM_EIO, "", "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    rd_in in = {.f = f, .path = source, .buf = malloc(RD_CHUNK)};
    opm_trace *t = NULL;
    if (!in.buf)
        opm_err(err, OPM_ENOMEM, "", "%s: out of memory", source);
    else
        t = read_input(&in, source, err);
    free(in.buf);
    if (!is_stdin)
        fclose(f);
    return t;
}
