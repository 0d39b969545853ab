/* report_internal.h — what the four trace report emitters (JSON, CSV,
 * table, SVG) share: the text builder from io/, category and kind names
 * that tolerate out-of-range values, and handing a finished buffer back. */
#ifndef OPM_REPORT_INTERNAL_H
#define OPM_REPORT_INTERNAL_H

#include <stdlib.h>
#include "../core/internal.h"
#include "../io/io_internal.h"
#include "../trace/trace_internal.h"

/* The buffer's text, or NULL with OPM_ENOMEM when it ran out of memory
 * (the buffer is then freed).  `what` names the emitter in the message. */
static inline char *opm_report_finish(strbuf *b, const char *what, opm_error *err)
{
    if (b->oom || !b->p) {
        free(b->p);
        opm_err(err, OPM_ENOMEM, NULL, "%s: out of memory", what);
        return NULL;
    }
    return b->p;
}

/* A category's name; a corrupt value reads as "other" rather than
 * indexing past a table. */
static inline const char *opm_report_category(opm_trace_category c)
{
    return (unsigned)c < OPM_TCAT_COUNT ? opm_trace_category_name(c) : "other";
}

/* The group's kind name, NULL when it has none. */
static inline const char *opm_report_kind(const opm_trace_group *g)
{
    return g->has_kind && (unsigned)g->kind < OPM_KIND_COUNT ? opm_kind_name(g->kind) : NULL;
}

static inline const char *opm_report_str(const char *s) { return s ? s : ""; }

/* Categories with time; never more than the array holds. */
static inline size_t opm_report_ncats(const opm_trace_report *r)
{
    return r->n_cats < OPM_TCAT_COUNT ? r->n_cats : OPM_TCAT_COUNT;
}

/* s itself when it is well-formed UTF-8; else a copy in *tmp with each
 * stray byte replaced by U+FFFD, so XML readers (which reject malformed
 * UTF-8) still accept a chart of a trace with odd bytes.  (JSON strings get
 * the same treatment from sb_json_string.) */
static inline const char *opm_report_utf8(const char *s, strbuf *tmp)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, n;
    while (u[i] && (n = opm_utf8_seq(u + i)) != 0) i += n;
    if (!u[i]) return s;
    sb_putn(tmp, s, i);
    while (u[i]) {
        n = opm_utf8_seq(u + i);
        if (n) sb_putn(tmp, s + i, n), i += n;
        else sb_puts(tmp, "\xEF\xBF\xBD"), i++;
    }
    return tmp->oom ? "" : tmp->p;
}

#endif
