/* error.c — filling and decorating opm_error values, and the two small
 * helpers every module shares: a bounded string copy and array growth. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

void opm_error_clear(opm_error *err)
{
    if (!err) return;
    err->code = OPM_OK;
    err->field[0] = '\0';
    err->message[0] = '\0';
}

const char *opm_errstr(int status)
{
    switch (status) {
    case OPM_OK: return "success";
    case OPM_EINVAL: return "invalid input";
    case OPM_EIO: return "input/output error";
    case OPM_ENOMEM: return "out of memory";
    case OPM_EUNSUPPORTED: return "not supported by this model or hardware";
    case OPM_EOVERFLOW: return "count overflows 64 bits";
    case OPM_ENOTFOUND: return "not found";
    default: return "unknown status";
    }
}

void opm_free(void *p) { free(p); }

/* Rewrites control characters in place as \n, \t, \r or \xHH (truncating
 * at the buffer's end), so a message built from input text stays one line. */
void opm_escape_controls(char *s, size_t cap)
{
    char tmp[OPM_ERROR_MESSAGE_MAX];
    size_t o = 0;
    int any = 0;
    for (const char *p = s; *p; p++) any |= (unsigned char)*p < 0x20 || *p == 0x7f;
    if (!any) return;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < sizeof tmp; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            tmp[o++] = (char)*p;
            continue;
        }
        char c = *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : 0;
        if (c) o += (size_t)snprintf(tmp + o, sizeof tmp - o, "\\%c", c);
        else o += (size_t)snprintf(tmp + o, sizeof tmp - o, "\\x%02x", *p);
    }
    tmp[o] = '\0';
    opm_strlcpy(s, tmp, cap);
}

static int verr(opm_error *err, opm_status code, const char *field, const char *fmt, va_list ap)
{
    if (!err) return (int)code;
    err->code = code;
    opm_strlcpy(err->field, field ? field : "", sizeof err->field);
    char body[OPM_ERROR_MESSAGE_MAX];
    vsnprintf(body, sizeof body, fmt, ap);
    if (field && *field)
        snprintf(err->message, sizeof err->message, "%s: %s", field, body);
    else
        opm_strlcpy(err->message, body, sizeof err->message);
    opm_escape_controls(err->message, sizeof err->message);
    return (int)code;
}

int opm_err(opm_error *err, opm_status code, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verr(err, code, field, fmt, ap);
    va_end(ap);
    return rc;
}

int opm_error_set(opm_error *err, opm_status code, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verr(err, code, field, fmt ? fmt : "", ap);
    va_end(ap);
    return rc;
}

void opm_err_prefix(opm_error *err, const char *prefix)
{
    if (!err || !prefix || !*prefix) return;
    char tmp[OPM_ERROR_MESSAGE_MAX];
    snprintf(tmp, sizeof tmp, "%s: %s", prefix, err->message);
    memcpy(err->message, tmp, sizeof tmp);
    opm_escape_controls(err->message, sizeof err->message);
}

void opm_strlcpy(char *dst, const char *src, size_t cap)
{
    if (cap == 0) return;
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int opm_array_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem) return -1;
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return (size_t)-1;
    size_t prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++) prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}

const char *opm_closest(const char *word, const char *const *candidates)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; candidates && candidates[i]; i++) {
        size_t d = edit_distance(word, candidates[i]);
        if (d < best_d) { best_d = d; best = candidates[i]; }
    }
    /* A suggestion further than a third of the word away helps nobody. */
    size_t limit = strlen(word) / 3 + 1;
    return best_d <= limit ? best : NULL;
}
