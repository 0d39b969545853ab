/* io_internal.h — what the io files share: file reading, the text builder,
 * emitters of document trees, and the doc-level parsers. */
#ifndef OPM_IO_INTERNAL_H
#define OPM_IO_INTERNAL_H

#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include "opmodel/opmodel.h"
#include "doc.h"

/* Whole file ("-" = stdin) into a NUL-terminated malloc'ed buffer. */
char *opm_read_file(const char *path, size_t *len, opm_error *err);

struct opm_num_cache;
typedef struct strbuf {
    char *p;
    size_t n, cap;
    int oom;
    /* Optional (NULL: none): texts of numbers opm_profile_write_json
     * printed before, for a writer that prints many predictions. */
    struct opm_num_cache *nums;
} strbuf;

void sb_putn(strbuf *b, const char *s, size_t n);
/* Where the next bytes go, with room for `extra` of them and a NUL (the
 * buffer grows as needed); NULL when out of memory.  For writers that fill
 * the room directly and then set b->n. */
char *sb_room(strbuf *b, size_t extra);
/* sb_putn without the call when the bytes fit: the batch path writes a few
 * dozen pieces per line. */
static inline void sb_putn_inline(strbuf *b, const char *s, size_t n)
{
    if (!b->oom && b->n + n < b->cap) {
        memcpy(b->p + b->n, s, n);
        b->n += n;
        b->p[b->n] = '\0';
    } else {
        sb_putn(b, s, n);
    }
}
/* A string literal. */
#define SB_LIT(b, lit) sb_putn_inline((b), "" lit, sizeof(lit) - 1)
void sb_puts(strbuf *b, const char *s);
void sb_putc(strbuf *b, char c);
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shortest decimal text that reads back as exactly v. */
void sb_double(strbuf *b, double v);
void sb_u64(strbuf *b, uint64_t v);
/* v with 12 significant digits in the shortest %g-like form ("1.5e-05",
 * "989400000000000", "0.25"): what predictions print.  Non-finite values
 * print as null. */
void sb_num(strbuf *b, double v);
/* Writes sb_num's text into buf (at least 32 bytes); returns its length. */
size_t opm_format_sig12(double v, char *buf);
/* Raw writers for room the caller holds (sb_room): each writes its text at
 * o and returns its end.  The number writers need OPM_PUT_NUM_ROOM bytes of
 * room (they store fixed-size pieces; bytes past the end returned are
 * scratch); opm_put_json_string needs OPM_JSON_STRING_ROOM(cap). */
#define OPM_PUT_NUM_ROOM 32
/* sb_num's text. */
char *opm_put_sig12(char *o, double v);
/* v in decimal. */
char *opm_put_u64(char *o, uint64_t v);
/* The text opm_put_sig12 wrote for a double, keyed on its exact bits, in a
 * direct-mapped table: a batch prints the same per-hardware and per-dtype
 * figures (overhead_s, peak_flops_per_s, knee_flops_per_byte, a capped
 * average_power_w) on line after line, and copying 24 bytes is a fifth of
 * formatting them.  Owned by the caller (zeroed: empty), no global state. */
#define OPM_NUM_CACHE_BITS 8
typedef struct opm_num_text {
    uint64_t bits;
    unsigned char len; /* 0: empty */
    char text[24];
} opm_num_text;
typedef struct opm_num_cache {
    opm_num_text e[1u << OPM_NUM_CACHE_BITS];
} opm_num_cache;
/* sb_json_string's text of s: up to its NUL or cap bytes, whichever comes
 * first. */
char *opm_put_json_string(char *o, const char *s, size_t cap);
/* 1 for each byte a JSON string writes as it is (printable ASCII but the
 * quote and the backslash). */
extern const unsigned char opm_json_plain[256];
/* Every byte escaped as \u00XX at worst, and the quotes. */
#define OPM_JSON_STRING_ROOM(cap) (6 * (cap) + 2)
/* A JSON string literal, escaped.  Bytes that are not well-formed UTF-8
 * become U+FFFD, so the output is valid JSON whatever the input bytes
 * (names from profiler traces can hold anything). */
void sb_json_string(strbuf *b, const char *s);
/* A CSV cell (RFC 4180): as is, or quoted with quotes doubled when it
 * holds a comma, a quote or a line break, or starts or ends with a space
 * (which readers trim), so that it reads back the same. */
void sb_csv_field(strbuf *b, const char *s);
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

/* Shortest round-trip text of v into buf (at least 32 bytes). */
void opm_format_double(double v, char *buf, size_t cap);

/* Tree emitters; 0 or -1 (out of memory / emitter failure). */
int doc_emit_json(const doc_node *n, strbuf *b);
int doc_emit_yaml(const doc_node *n, strbuf *b);

opm_op *opm_op_from_doc(const doc *d, opm_error *err);
/* One JSONL line (`predict --batch`): the same op, or the same error, as
 * opm_op_parse_string(text, len, OPM_FORMAT_JSON, source, line, err), faster
 * for flat short forms (op_line.c).  reuse (NULL, or the op an earlier call
 * returned) is taken over: rebuilt in place and returned when the line
 * allows, else freed, so a reader of many lines allocates once. */
opm_op *opm_op_parse_json_line(const char *text, size_t len, const char *source, int line, opm_op *reuse,
                               opm_error *err);
opm_format opm_guess_format(const char *text, size_t len);
opm_hardware *opm_hardware_from_doc(const doc *d, opm_error *err);
/* Builds the tree an op is written as. */
doc *opm_op_to_doc(const opm_op *op, opm_error *err);
/* Writes a prediction as one JSON line into b (no newline). */
void opm_profile_write_json(const opm_profile *p, strbuf *b);

/* Reads one line, without its newline, into *buf (NUL-terminated; *len
 * bytes, which may include NULs; *buf grows as needed and is the caller's):
 * 1, 0 at the end of the input, -1 for a line longer than
 * OPM_DOCUMENT_MAX_BYTES, -2 when out of memory.  Unlike getline, an
 * endless line (/dev/zero) ends with an error, not with memory exhausted. */
int opm_read_line(FILE *f, char **buf, size_t *cap, size_t *len);

#endif
