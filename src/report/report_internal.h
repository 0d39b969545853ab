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

/* Length of the well-formed UTF-8 sequence at s (1 to 4 bytes; overlong
 * forms and surrogates are not well-formed), 0 when there is none. */
static inline size_t opm_utf8_seq(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (!n || s[0] > 0xF4) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (n == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 0;
    if (n == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 0;
    return n;
}

/* s itself when it is well-formed UTF-8; else a copy in *tmp with each
 * stray byte replaced by U+FFFD, so JSON and XML readers (which reject
 * malformed UTF-8) still accept a report of a trace with odd bytes. */
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

/* A JSON string literal of any byte string (see opm_report_utf8). */
static inline void opm_report_json_string(strbuf *b, const char *s)
{
    strbuf tmp = {0};
    const char *clean = opm_report_utf8(opm_report_str(s), &tmp);
    if (tmp.oom) b->oom = 1;
    sb_json_string(b, clean);
    free(tmp.p);
}

#endif
