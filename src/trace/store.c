/* store.c — the event store behind opm_trace: growable arrays of events,
 * flows, call arguments and devices, and the string interning table that
 * keeps one copy of every op name, kernel name and argument text however
 * many million events repeat it. */
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "trace_internal.h"

#define OPM_ARENA_BLOCK (256u * 1024u)

static uint64_t hash_bytes(const char *s, size_t len)
{
    /* FNV-1a: short keys, no need for anything heavier. */
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static char *arena_alloc(opm_strtab *st, size_t len)
{
    if (st->block == NULL || st->block_cap - st->block_used < len) {
        size_t cap = len > OPM_ARENA_BLOCK ? len : OPM_ARENA_BLOCK;
        char *b = malloc(cap);
        if (!b)
            return NULL;
        if (opm_array_grow((void **)&st->blocks, &st->blocks_cap, st->nblocks + 1, sizeof *st->blocks)) {
            free(b);
            return NULL;
        }
        st->blocks[st->nblocks++] = b;
        st->block = b;
        st->block_used = 0;
        st->block_cap = cap;
    }
    char *p = st->block + st->block_used;
    st->block_used += len;
    return p;
}

static int rehash(opm_strtab *st, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t id = 0; id < st->count; id++) {
        size_t i = (size_t)hash_bytes(st->strs[id], st->lens[id]) & (nslots - 1);
        while (slots[i])
            i = (i + 1) & (nslots - 1);
        slots[i] = (uint32_t)id + 1;
    }
    free(st->slots);
    st->slots = slots;
    st->nslots = nslots;
    return 0;
}

uint32_t opm_trace_intern(opm_trace *t, const char *s, size_t len)
{
    opm_strtab *st = &t->strings;
    if (len > UINT32_MAX - 1 || st->count >= OPM_NONE32 - 1)
        return OPM_NONE32;
    if ((st->count + 1) * 2 > st->nslots && rehash(st, st->nslots ? st->nslots * 2 : 1024))
        return OPM_NONE32;
    size_t i = (size_t)hash_bytes(s, len) & (st->nslots - 1);
    while (st->slots[i]) {
        uint32_t id = st->slots[i] - 1;
        if (st->lens[id] == len && memcmp(st->strs[id], s, len) == 0)
            return id;
        i = (i + 1) & (st->nslots - 1);
    }
    if (st->count + 1 > st->cap) {
        /* lens shares strs' capacity: grow both to the same size. */
        size_t cap = st->cap;
        if (opm_array_grow((void **)&st->strs, &cap, st->count + 1, sizeof *st->strs))
            return OPM_NONE32;
        uint32_t *lens = realloc(st->lens, cap * sizeof *lens);
        if (!lens)
            return OPM_NONE32;
        st->lens = lens;
        st->cap = cap;
    }
    char *copy = arena_alloc(st, len + 1);
    if (!copy)
        return OPM_NONE32;
    memcpy(copy, s, len);
    copy[len] = '\0';
    uint32_t id = (uint32_t)st->count++;
    st->strs[id] = copy;
    st->lens[id] = (uint32_t)len;
    st->slots[i] = id + 1;
    return id;
}

const char *opm_trace_str(const opm_trace *t, uint32_t id)
{
    return id < t->strings.count ? t->strings.strs[id] : "";
}

size_t opm_trace_strlen(const opm_trace *t, uint32_t id)
{
    return id < t->strings.count ? t->strings.lens[id] : 0;
}

opm_trace *opm_trace_new_empty(const char *source, opm_error *err)
{
    opm_trace *t = calloc(1, sizeof *t);
    if (!t) {
        opm_err(err, OPM_ENOMEM, "", "out of memory");
        return NULL;
    }
    t->source = strdup(source ? source : "");
    if (!t->source || opm_trace_intern(t, "", 0) != 0) {
        opm_trace_free(t);
        opm_err(err, OPM_ENOMEM, "", "out of memory");
        return NULL;
    }
    return t;
}

void opm_trace_free(opm_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->strings.nblocks; i++)
        free(t->strings.blocks[i]);
    free(t->strings.blocks);
    free(t->strings.strs);
    free(t->strings.lens);
    free(t->strings.slots);
    free(t->ev);
    free(t->flows);
    free(t->call_args);
    free(t->devices);
    free(t->source);
    free(t);
}

void opm_tev_init(opm_tev *e)
{
    memset(e, 0, sizeof *e);
    e->correlation = OPM_NO_ID;
    e->external_id = OPM_NO_ID;
    e->seq = OPM_NO_ID;
    e->args = OPM_NONE32;
    e->stream = -1;
    e->device = -1;
}

/* Appends one item; the link stage indexes events and flows with uint32_t
 * (OPM_NONE32 meaning none), so neither may reach 2^32 - 1 entries. */
#define PUSH(arr, n, cap, item)                                                                   \
    do {                                                                                          \
        if ((n) >= OPM_NONE32 - 1)                                                                \
            return opm_err(err, OPM_EOVERFLOW, "", "%s: more than 2^32 - 2 entries", t->source);  \
        if (opm_array_grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr)))                      \
            return opm_err(err, OPM_ENOMEM, "", "%s: out of memory after %zu entries", t->source, \
                           (size_t)(n));                                                          \
        (arr)[(n)++] = *(item);                                                                   \
    } while (0)

int opm_trace_add_event(opm_trace *t, const opm_tev *e, opm_error *err)
{
    PUSH(t->ev, t->n_ev, t->cap_ev, e);
    return 0;
}

int opm_trace_add_flow(opm_trace *t, const opm_tflow *f, opm_error *err)
{
    PUSH(t->flows, t->n_flows, t->cap_flows, f);
    return 0;
}

int opm_trace_add_args(opm_trace *t, const opm_call_args *a, uint32_t *index, opm_error *err)
{
    PUSH(t->call_args, t->n_args, t->cap_args, a);
    *index = (uint32_t)(t->n_args - 1);
    return 0;
}

int opm_trace_add_device(opm_trace *t, const opm_tdevice *d, opm_error *err)
{
    PUSH(t->devices, t->n_devices, t->cap_devices, d);
    return 0;
}

void opm_trace_get_stats(const opm_trace *t, opm_trace_stats *out)
{
    *out = t->stats;
}

size_t opm_trace_device_count(const opm_trace *t)
{
    return t->n_devices;
}

const char *opm_trace_device_name(const opm_trace *t, size_t i)
{
    return i < t->n_devices ? opm_trace_str(t, t->devices[i].name) : NULL;
}
