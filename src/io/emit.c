/* emit.c — text out: a growable string buffer, shortest round-trip number
 * formatting, and emitters of document trees as JSON and YAML (libyaml's
 * emitter).  Jansson is used to read JSON; it is not used to write because
 * it cannot print the shortest form of a double (0.7e-12 comes out as
 * 6.9999999999999996e-13) and because the batch path writes straight into
 * a buffer without building objects. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
/* Digits and string scans in SSE2 lanes where there are some (every
 * x86-64), else in 64- or 128-bit integers or in bytes. */
#if defined(__SSE2__) && defined(__GNUC__)
#define OPM_SSE2 1
#include <emmintrin.h>
#else
#define OPM_SSE2 0
#endif
#include "../core/internal.h"
#include "io_internal.h"

static int grow(strbuf *b, size_t extra)
{
    if (b->oom) return -1;
    if (b->n + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

char *sb_room(strbuf *b, size_t extra)
{
    return grow(b, extra) ? NULL : b->p + b->n;
}

void sb_putn(strbuf *b, const char *s, size_t n)
{
    if (grow(b, n)) return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void sb_puts(strbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

void sb_putc(strbuf *b, char c)
{
    if (grow(b, 1)) return;
    b->p[b->n++] = c;
    b->p[b->n] = '\0';
}

void sb_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        sb_putn(b, tmp, (size_t)n);
        return;
    }
    if (grow(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void opm_format_double(double v, char *buf, size_t cap)
{
    if (v == 0) {
        snprintf(buf, cap, "0");
        return;
    }
    /* Integers below 2^53 print without exponent or fraction. */
    if (v < 1e15 && v > -1e15 && v == (double)(int64_t)v) {
        snprintf(buf, cap, "%" PRId64, (int64_t)v);
        return;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* Exact powers of ten up to 1e22; beyond that two multiplications, whose
 * rounding is far below the 12th digit. */
static const double exact_p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static double pow10i(int k)
{
    double r = 1;
    while (k > 22) r *= exact_p10[22], k -= 22;
    return r * exact_p10[k];
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* floor(log10(v)) for finite v > 0, or one less: from the binary exponent
 * alone (log10 of v's power of two, floored), so no log10 call.  The loop in
 * opm_format_sig12 moves up when it is one less. */
static int dec_exp_estimate(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int b = (int)((bits >> 52) & 0x7ff);
    b = b ? b - 1023 : ilogb(v); /* subnormals */
    int t = b * 78913;            /* 78913 / 2^18 = log10(2) to 1e-7; exact floor for |b| < 2600 */
    return t >= 0 ? t >> 18 : -((-t + (1 << 18) - 1) >> 18);
}

/* Twelve ASCII digits, the first at the lowest address: in a 128-bit
 * integer on little-endian machines that have one (stores from registers,
 * shifted to skip digits), else in bytes. */
#if defined(__GNUC__) && defined(__SIZEOF_INT128__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OPM_SWAR_DIGITS 1
__extension__ typedef unsigned __int128 digits12;
#if !OPM_SSE2
static inline void put_digits(char *dst, const digits12 *d, int skip)
{
    digits12 x = *d >> (8 * skip);
    memcpy(dst, &x, 16);
}
#endif
#else
#define OPM_SWAR_DIGITS 0
typedef struct digits12 {
    char c[32];
} digits12;
static inline void put_digits(char *dst, const digits12 *d, int skip) { memcpy(dst, d->c + skip, 16); }
#endif

/* The 8 decimal digits of v < 10^8 as byte values 0-9, the first digit in
 * the lowest byte: the two halves of four digits divided at once in 32-bit
 * lanes (by 100: x * 5243 >> 19, exact below 43699), then the four pairs
 * in 16-bit lanes (by 10: y * 103 >> 10, exact below 179); no lane's
 * product reaches the next lane. */
static inline uint64_t digits8(uint32_t v)
{
    uint64_t x = (v / 10000) | (uint64_t)(v % 10000) << 32;
    uint64_t h = (x * 5243 >> 19) & 0x0000007F0000007FULL;
    uint64_t y = h | (x - 100 * h) << 16;
    uint64_t t = (y * 103 >> 10) & 0x000F000F000F000FULL;
    return t | (y - 10 * t) << 8;
}

#if !OPM_SSE2
/* digits8's second half for v < 10^4: four digit bytes. */
static inline uint32_t digits4(uint32_t v)
{
    uint32_t y = v / 100 | (v % 100) << 16;
    uint32_t t = (y * 103 >> 10) & 0x000F000FU;
    return t | (y - 10 * t) << 8;
}
#endif

/* 10^(e+1) for e in [-22, 21] as the literals give them (those below 1 are
 * the nearest doubles): floor(log10 v) is e + 1 when v reaches it. */
static const double up_p10[44] = {1e-21, 1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11,
                                  1e-10, 1e-9,  1e-8,  1e-7,  1e-6,  1e-5,  1e-4,  1e-3,  1e-2,  1e-1,  1e0,
                                  1e1,   1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,
                                  1e12,  1e13,  1e14,  1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22};

/* v's 12-digit mantissa m (v scaled by 10^(11-e), rounded half up) and
 * its exponent e. */
typedef struct sig12 {
    uint64_t m;
    int e;
} sig12;

#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
/* The whole search, for finite v > 0: what sig12_of leaves (subnormals,
 * exponents outside [-11, 22], a mantissa that rounds out of 12 digits)
 * and what the output has always been.  The estimate is floor(log10(v))
 * or one below; from one below the first step always goes up (v >= 10^e
 * makes m round to 1e12), so the mantissa and exponent are those found
 * from the exact floor. */
static sig12 sig12_slow(double v)
{
    int e = dec_exp_estimate(v);
    /* Within the exact powers' range, one compare makes the estimate the
     * floor (most values), so the loop below runs once. */
    if (e >= -22 && e < 22 && v >= up_p10[e + 22]) e++;
    /* The loop's first pass when 10^(11-e) is an exact power: one
     * multiplication or division, the same as the loop's. */
    uint64_t m = 0;
    int k0 = 11 - e;
    if (k0 >= -22 && k0 <= 22)
        m = (uint64_t)(int64_t)((k0 >= 0 ? v * exact_p10[k0] : v / exact_p10[-k0]) + 0.5);
    if (m < 100000000000ULL || m >= 1000000000000ULL) {
        for (int tries = 0;; tries++) {
            int k = 11 - e;
            double scaled = v;
            for (; k > 280; k -= 100) scaled *= 1e100;
            for (; k < -280; k += 100) scaled /= 1e100;
            scaled = k >= 0 ? scaled * pow10i(k) : scaled / pow10i(-k);
            /* round half away from zero, as llround: exact below 2^52 */
            m = (uint64_t)(int64_t)(scaled + 0.5);
            if (m >= 1000000000000ULL && tries < 3) e++;
            else if (m < 100000000000ULL && tries < 3) e--;
            else break;
        }
    }
    return (sig12){m, e};
}

/* sig12_slow's answer for finite v > 0 with biased binary exponent be,
 * step for step, without the loop where it would not run: the estimate
 * (from be alone: log10(2) ~ 78913 / 2^18, floored; the bias keeps the
 * shifted value non-negative) within [-11, 21], where both the compare and
 * the scaling use exact-power tables, and a mantissa that lands in 12
 * digits; anything else takes the whole search. */
static inline sig12 sig12_of(double v, unsigned be)
{
    int e = (int)((be * 78913u + (400u * 262144u - 1023u * 78913u)) >> 18) - 400;
    if (be && (unsigned)(e + 11) <= 32) {
        e += v >= up_p10[e + 22];
        int k = 11 - e;
        uint64_t m = (uint64_t)(int64_t)((k >= 0 ? v * exact_p10[k] : v / exact_p10[-k]) + 0.5);
        if (m - 100000000000ULL < 900000000000ULL) return (sig12){m, e};
    }
    return sig12_slow(v);
}

/* "e%+03d" at o; returns the end. */
static inline char *put_exp(char *o, int e)
{
    *o++ = 'e';
    *o++ = e < 0 ? '-' : '+';
    unsigned ae = (unsigned)(e < 0 ? -e : e);
    if (ae >= 100) *o++ = (char)('0' + ae / 100);
    memcpy(o, digit_pairs + 2 * (ae % 100), 2);
    return o + 2;
}

#if OPM_SSE2
/* The 12 digits of m < 10^12 as ASCII in the first 12 bytes (the first
 * digit lowest), '0' in the last four: three groups of four digits in
 * 16-bit lanes, each twice ([g0 g0 g1 g1 g2 g2 0 0]); every lane divided by
 * 100 (x * 5243 >> 19, exact below 43699), even lanes keep the quotient and
 * odd lanes the remainder; then each pair by 10 (y * 6554 >> 16, exact
 * below 16389), tens in the low byte and units in the high one. */
static inline __m128i digits12_sse2(uint64_t m)
{
    uint32_t hi = (uint32_t)(m / 100000000), lo = (uint32_t)(m % 100000000);
    uint64_t g = hi | (uint64_t)(lo / 10000) << 16 | (uint64_t)(lo % 10000) << 32;
    __m128i x = _mm_cvtsi64_si128((long long)g);
    x = _mm_unpacklo_epi16(x, x);
    __m128i q = _mm_srli_epi16(_mm_mulhi_epu16(x, _mm_set1_epi16(5243)), 3);
    __m128i y = _mm_sub_epi16(_mm_and_si128(x, _mm_set1_epi32((int)0xffff0000u)),
                              _mm_mullo_epi16(q, _mm_set1_epi32((int)(100u << 16 | 0xffffu))));
    __m128i t = _mm_mulhi_epu16(y, _mm_set1_epi16(6554));
    __m128i u = _mm_sub_epi16(y, _mm_mullo_epi16(t, _mm_set1_epi16(10)));
    return _mm_add_epi8(_mm_or_si128(t, _mm_slli_epi16(u, 8)), _mm_set1_epi8('0'));
}

/* ones_zeros + 16 - k: 16 bytes, the first k of them 0xff */
static const unsigned char ones_zeros[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* d's first k bytes, a '.', then the rest of d: one 16-byte vector. */
static inline __m128i insert_point(__m128i d, int k)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(ones_zeros + 16 - k));
    __m128i b = _mm_loadu_si128((const __m128i *)(ones_zeros + 15 - k));
    return _mm_or_si128(_mm_or_si128(_mm_and_si128(d, a), _mm_andnot_si128(b, _mm_slli_si128(d, 1))),
                        _mm_and_si128(_mm_andnot_si128(a, b), _mm_set1_epi8('.')));
}
#endif

char *opm_put_sig12(char *o, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned be = (unsigned)(bits >> 52 & 0x7ff);
    if (be - 1 >= 0x7fe) { /* zero, subnormal or not finite */
        if (!(bits << 1)) { /* either zero */
            *o = '0';
            return o + 1;
        }
        if (be) {
            memcpy(o, "null", 4);
            return o + 4;
        }
    }
    if (bits >> 63) *o++ = '-', v = -v;
    sig12 s = sig12_of(v, be);
    int e = s.e;
#if OPM_SSE2
    /* The digits in one vector, nd the count without trailing zeros (the
     * first digit is never '0'), then the %g rule at 12 digits with 16-byte
     * stores (the caller's room covers them; only the first bytes count). */
    __m128i d = digits12_sse2(s.m);
    unsigned zeros = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_set1_epi8('0')));
    int nd = 32 - __builtin_clz(~zeros & 0xfffu);
    if (e >= 0 && e < 12) { /* the integer part: e + 1 digits */
        if (nd > e + 1) {
            _mm_storeu_si128((__m128i *)o, insert_point(d, e + 1));
            return o + nd + 1;
        }
        _mm_storeu_si128((__m128i *)o, d);
        return o + e + 1;
    }
    if (e < 0 && e >= -4) { /* 0.000ddd */
        memcpy(o, "0.000", 5);
        _mm_storeu_si128((__m128i *)(o + 1 - e), d);
        return o + 1 - e + nd;
    }
    if (nd > 1) {
        _mm_storeu_si128((__m128i *)o, insert_point(d, 1));
        o += nd + 1;
    } else {
        _mm_storeu_si128((__m128i *)o, d);
        o++;
    }
    return put_exp(o, e);
#else
    uint64_t m = s.m;
    /* The 12 digits (d) and nd, the count without trailing zeros (the
     * first digit is never '0'). */
    int nd;
    digits12 d;
#if OPM_SWAR_DIGITS
    {
        /* digits 0-3 and 4-11 as byte values, in order; the last non-zero
         * byte of each gives nd */
        uint64_t lo8 = digits8((uint32_t)(m % 100000000));
        uint32_t hi4 = digits4((uint32_t)(m / 100000000));
        nd = lo8 ? 12 - __builtin_clzll(lo8) / 8 : 4 - __builtin_clz(hi4) / 8;
        d = (digits12)(lo8 + 0x3030303030303030ULL) << 32 | (hi4 + 0x30303030U);
    }
#else
    /* two halves of six digits in 32-bit arithmetic, three pairs each,
     * computed independently of one another */
    memset(d.c + 12, '0', sizeof d.c - 12);
    uint32_t hi = (uint32_t)(m / 1000000), lo = (uint32_t)(m % 1000000);
    memcpy(d.c, digit_pairs + 2 * (hi / 10000), 2);
    memcpy(d.c + 2, digit_pairs + 2 * (hi / 100 % 100), 2);
    memcpy(d.c + 4, digit_pairs + 2 * (hi % 100), 2);
    memcpy(d.c + 6, digit_pairs + 2 * (lo / 10000), 2);
    memcpy(d.c + 8, digit_pairs + 2 * (lo / 100 % 100), 2);
    memcpy(d.c + 10, digit_pairs + 2 * (lo % 100), 2);
    nd = 12;
    while (nd > 1 && d.c[nd - 1] == '0') nd--;
#endif
    /* The %g rule at 12 digits.  The digits go out 16 bytes at a time (the
     * caller's room covers them); only the first ones count. */
    if (e >= 0 && e < 12) {
        put_digits(o, &d, 0); /* the integer part: e + 1 digits */
        if (nd > e + 1) {
            put_digits(o + e + 2, &d, e + 1);
            o[e + 1] = '.';
            return o + nd + 1;
        }
        return o + e + 1;
    }
    if (e < 0 && e >= -4) { /* 0.000ddd */
        memcpy(o, "0.000", 5);
        put_digits(o + 1 - e, &d, 0);
        return o + 1 - e + nd;
    }
    put_digits(o, &d, 0);
    if (nd > 1) {
        put_digits(o + 2, &d, 1);
        o[1] = '.';
        o += nd + 1;
    } else {
        o++;
    }
    return put_exp(o, e);
#endif
}

size_t opm_format_sig12(double v, char *buf)
{
    char tmp[OPM_PUT_NUM_ROOM];
    size_t n = (size_t)(opm_put_sig12(tmp, v) - tmp);
    memcpy(buf, tmp, n);
    buf[n] = '\0';
    return n;
}

char *opm_put_u64(char *o, uint64_t v)
{
    if (v < 10) {
        *o = (char)('0' + v);
        return o + 1;
    }
    static const uint64_t p10[20] = {1ULL,
                                     10ULL,
                                     100ULL,
                                     1000ULL,
                                     10000ULL,
                                     100000ULL,
                                     1000000ULL,
                                     10000000ULL,
                                     100000000ULL,
                                     1000000000ULL,
                                     10000000000ULL,
                                     100000000000ULL,
                                     1000000000000ULL,
                                     10000000000000ULL,
                                     100000000000000ULL,
                                     1000000000000000ULL,
                                     10000000000000000ULL,
                                     100000000000000000ULL,
                                     1000000000000000000ULL,
                                     10000000000000000000ULL};
    /* digits from the bit length: log10(2) ~ 1233 / 4096, one too many at
     * most, which the table corrects */
#if defined(__GNUC__)
    int bits = 64 - __builtin_clzll(v);
#else
    int bits = 64;
    for (uint64_t t = v; !(t >> 63); t <<= 1) bits--;
#endif
    int t = bits * 1233 >> 12;
    int n = t + 1 - (v < p10[t]);
#if OPM_SWAR_DIGITS
    /* Up to 16 digits in one or two SWAR groups of 8, the leading zeros
     * shifted out of the first. */
    if (v < 100000000) {
        uint64_t w = (digits8((uint32_t)v) + 0x3030303030303030ULL) >> (8 * (8 - n));
        memcpy(o, &w, 8);
        return o + n;
    }
    if (v < 10000000000000000ULL) {
        uint64_t hi = (digits8((uint32_t)(v / 100000000)) + 0x3030303030303030ULL) >> (8 * (16 - n));
        uint64_t lo = digits8((uint32_t)(v % 100000000)) + 0x3030303030303030ULL;
        memcpy(o, &hi, 8);
        memcpy(o + n - 8, &lo, 8);
        return o + n;
    }
#endif
    char *end = o + n;
    char *q = end;
    if (v >> 32) {
        while (v >= 100) {
            q -= 2;
            memcpy(q, digit_pairs + 2 * (v % 100), 2);
            v /= 100;
        }
    }
    uint32_t w = (uint32_t)v; /* below 2^32 now: 32-bit division is cheaper */
    while (w >= 100) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * (w % 100), 2);
        w /= 100;
    }
    if (w >= 10) memcpy(q - 2, digit_pairs + 2 * w, 2);
    else q[-1] = (char)('0' + w);
    return end;
}

void sb_num(strbuf *b, double v)
{
    char *o = sb_room(b, OPM_PUT_NUM_ROOM);
    if (!o) return;
    b->n = (size_t)(opm_put_sig12(o, v) - b->p);
    b->p[b->n] = '\0';
}

void sb_double(strbuf *b, double v)
{
    char buf[40];
    opm_format_double(v, buf, sizeof buf);
    sb_puts(b, buf);
}

void sb_u64(strbuf *b, uint64_t v)
{
    char *o = sb_room(b, OPM_PUT_NUM_ROOM);
    if (!o) return;
    b->n = (size_t)(opm_put_u64(o, v) - b->p);
    b->p[b->n] = '\0';
}

void sb_csv_field(strbuf *b, const char *s)
{
    size_t len = strlen(s);
    if (!strpbrk(s, ",\"\r\n") && !(len && (s[0] == ' ' || s[len - 1] == ' '))) {
        sb_putn(b, s, len);
        return;
    }
    sb_putc(b, '"');
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
        sb_putn(b, s, (size_t)(q - s + 1));
        sb_putc(b, '"');
    }
    sb_puts(b, s);
    sb_putc(b, '"');
}

/* 1 for the bytes a JSON string holds as they are: printable ASCII but the
 * quote and the backslash (DEL included).  The batch line scanner reads it
 * too (op_line.c). */
const unsigned char opm_json_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* From the first byte of s[0..n) that opm_json_plain does not pass: escapes,
 * well-formed UTF-8 as is, other bytes as U+FFFD, up to a NUL or n.  Out of
 * line: few strings need it, and inlined it costs every call registers. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static char *json_escape_tail(char *o, const unsigned char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = s[i];
        if (opm_json_plain[c]) {
            *o++ = (char)c;
            continue;
        }
        if (c >= 0x80) {
            size_t k = opm_utf8_seq(s + i);
            if (k && k <= n - i) {
                memcpy(o, s + i, k);
                o += k;
                i += k - 1;
            } else {
                memcpy(o, "\xEF\xBF\xBD", 3);
                o += 3;
            }
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\n': *o++ = 'n'; break;
        case '\t': *o++ = 't'; break;
        case '\r': *o++ = 'r'; break;
        default:
            memcpy(o, "u00", 3);
            o[3] = hex[c >> 4];
            o[4] = hex[c & 15];
            o += 5;
            break;
        }
    }
    return o;
}

char *opm_put_json_string(char *o, const char *str, size_t cap)
{
    const unsigned char *s = (const unsigned char *)str;
    *o++ = '"';
    /* Most strings (names, models, hardware, diagnostics) need no escape. */
    size_t i = 0;
#if OPM_SSE2
    /* Sixteen bytes at a time while they are plain: a byte below 0x20 or
     * of 0x80 and above (both below 0x20 as signed bytes), the quote or the
     * backslash sets its bit in `bad`, whose lowest bit is where the byte
     * loop below would have stopped.  Stored before the test, as below. */
    for (; i + 16 <= cap; i += 16) {
        __m128i w = _mm_loadu_si128((const __m128i *)(s + i));
        _mm_storeu_si128((__m128i *)(o + i), w);
        __m128i flag = _mm_or_si128(_mm_cmplt_epi8(w, _mm_set1_epi8(0x20)),
                                    _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('"')),
                                                 _mm_cmpeq_epi8(w, _mm_set1_epi8('\\'))));
        unsigned bad = (unsigned)_mm_movemask_epi8(flag);
        if (bad) {
            i += (size_t)__builtin_ctz(bad);
            if (s[i]) goto bytes;
            o[i] = '"'; /* the NUL: most strings end here */
            return o + i + 1;
        }
    }
#elif OPM_SWAR_DIGITS
    /* Eight bytes at a time while they are plain: a byte below 0x20 (the
     * NUL included), the quote, the backslash or one of 0x80 and above
     * sets its top bit in `bad`.  A borrow can only flag bytes after a
     * flagged one, so the lowest flag is the first byte that is not plain,
     * where the byte loop below would have stopped too.  The eight bytes
     * are stored before the test: the room covers them (cap bytes). */
    {
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        for (; i + 8 <= cap; i += 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            memcpy(o + i, &w, 8);
            uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
            uint64_t bad = (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs) | w) & highs;
            if (bad) {
                i += (size_t)__builtin_ctzll(bad) / 8;
                break;
            }
        }
    }
#endif
#if OPM_SSE2
bytes:
#endif
    for (; i < cap && opm_json_plain[s[i]]; i++) o[i] = (char)s[i];
    o += i;
    if (i < cap && s[i]) o = json_escape_tail(o, s + i, cap - i);
    *o++ = '"';
    return o;
}

void sb_json_string(strbuf *b, const char *s)
{
    size_t n = strlen(s);
    char *o = sb_room(b, OPM_JSON_STRING_ROOM(n));
    if (!o) return;
    b->n = (size_t)(opm_put_json_string(o, s, n) - b->p);
    b->p[b->n] = '\0';
}

int doc_emit_json(const doc_node *n, strbuf *b)
{
    switch (n->type) {
    case DOC_SCALAR: {
        /* Unquoted scalars stay bare only when JSON reads them as numbers or
         * literals; every other word becomes a string. */
        char *end;
        strtod(n->text, &end);
        int bare = !n->quoted && *n->text && (!*end || !strcmp(n->text, "true") || !strcmp(n->text, "false") ||
                                              !strcmp(n->text, "null"));
        if (bare && (strchr(n->text, 'n') || strchr(n->text, 'N') || strchr(n->text, 'x')) && *end)
            bare = 0;
        if (bare) sb_puts(b, n->text);
        else sb_json_string(b, n->text);
        break;
    }
    case DOC_SEQ:
        sb_putc(b, '[');
        for (size_t i = 0; i < n->n; i++) {
            if (i) sb_puts(b, ", ");
            doc_emit_json(n->kids[i], b);
        }
        sb_putc(b, ']');
        break;
    case DOC_MAP:
        sb_putc(b, '{');
        for (size_t i = 0; i < n->n; i++) {
            if (i) sb_puts(b, ", ");
            sb_json_string(b, n->kids[2 * i]->text);
            sb_puts(b, ": ");
            doc_emit_json(n->kids[2 * i + 1], b);
        }
        sb_putc(b, '}');
        break;
    }
    return b->oom ? -1 : 0;
}

static int yaml_out(void *data, unsigned char *buffer, size_t size)
{
    strbuf *b = data;
    sb_putn(b, (const char *)buffer, size);
    return !b->oom;
}

static int all_scalars(const doc_node *n)
{
    size_t count = n->type == DOC_MAP ? 2 * n->n : n->n;
    for (size_t i = 0; i < count; i++)
        if (n->kids[i]->type != DOC_SCALAR) return 0;
    return 1;
}

static int emit_node(yaml_emitter_t *e, const doc_node *n, int depth)
{
    yaml_event_t ev;
    int ok;
    if (n->type == DOC_SCALAR) {
        /* Unquoted scalars are numbers, booleans and bare words; strings
         * that would read back as something else get quotes. */
        ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)n->text, (int)strlen(n->text), 1, 1,
                                          n->quoted ? YAML_ANY_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
        if (ok && n->quoted) {
            char *end;
            strtod(n->text, &end);
            int numeric = *n->text && !*end;
            if (numeric || !*n->text || !strcmp(n->text, "true") || !strcmp(n->text, "false") ||
                !strcmp(n->text, "null"))
                ev.data.scalar.style = YAML_DOUBLE_QUOTED_SCALAR_STYLE, ev.data.scalar.plain_implicit = 0;
        }
        return ok && yaml_emitter_emit(e, &ev);
    }
    int flow = depth > 0 && all_scalars(n) && n->n <= 12;
    if (n->type == DOC_SEQ) {
        ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                  flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
        if (!ok || !yaml_emitter_emit(e, &ev)) return 0;
        for (size_t i = 0; i < n->n; i++)
            if (!emit_node(e, n->kids[i], depth + 1)) return 0;
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                             flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    if (!ok || !yaml_emitter_emit(e, &ev)) return 0;
    for (size_t i = 0; i < 2 * n->n; i++)
        if (!emit_node(e, n->kids[i], depth + 1)) return 0;
    return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
}

int doc_emit_yaml(const doc_node *n, strbuf *b)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e)) return -1;
    yaml_emitter_set_output(&e, yaml_out, b);
    yaml_emitter_set_width(&e, 120);
    yaml_emitter_set_unicode(&e, 1);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&e, &ev) &&
             emit_node(&e, n, 0) && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev) &&
             yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev);
    yaml_emitter_delete(&e);
    return ok && !b->oom ? 0 : -1;
}

char *opm_read_file(const char *path, size_t *len, opm_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        opm_err(err, OPM_EIO, NULL, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    strbuf b = {0};
    char tmp[65536];
    size_t n;
    /* Stop at the first failed allocation or past the document cap: an
     * endless file (/dev/zero) ends with an error, not a hang. */
    while (!b.oom && b.n <= OPM_DOCUMENT_MAX_BYTES && (n = fread(tmp, 1, sizeof tmp, f)) > 0) sb_putn(&b, tmp, n);
    int bad = ferror(f), big = !b.oom && b.n > OPM_DOCUMENT_MAX_BYTES;
    if (f != stdin) fclose(f);
    if (bad || b.oom || big) {
        free(b.p);
        if (big)
            opm_err(err, OPM_EINVAL, NULL, "%s: expected a document of at most %zu MiB, got a longer one", path,
                    OPM_DOCUMENT_MAX_BYTES >> 20);
        else
            opm_err(err, bad ? OPM_EIO : OPM_ENOMEM, NULL, "%s: %s", path, bad ? "read error" : "out of memory");
        return NULL;
    }
    if (!b.p) sb_putn(&b, "", 0);
    if (!b.p) {
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    *len = b.n;
    return b.p;
}
