/* store.c — the event store behind opm_trace: growable arrays of events,
 * flows, call arguments and devices, and its strings, interned in core's
 * opm_strtab (one copy of every op name, kernel name and argument text
 * however many million events repeat it). */
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "trace_internal.h"

uint32_t opm_trace_intern(opm_trace *t, const char *s, size_t len)
{
    return opm_strtab_intern(&t->strings, s, len); /* UINT32_MAX is OPM_NONE32 */
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
    opm_strtab_free(&t->strings);
    free(t->ev);
    free(t->flows);
    free(t->call_args);
    free(t->devices);
    free(t->comms);
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

int opm_trace_add_comm(opm_trace *t, const opm_tcomm *c, opm_error *err)
{
    PUSH(t->comms, t->n_comms, t->cap_comms, c);
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
