/* Python's repr of a JSON value as json.loads gives it (request.h): the Python runner's messages show what the host
   sent this way. */
#include "request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t len, cap;   /* cap counts the NUL; text past it is cut, as a message is */
} text;

static void put(text *b, const char *s, size_t k) {
    if (b->len + 1 >= b->cap) return;
    if (k > b->cap - 1 - b->len) {
        /* cut on a whole character, and nothing after the cut */
        for (k = b->cap - 1 - b->len; k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80; k--) {}
        b->cap = b->len + k + 1;
    }
    memcpy(b->s + b->len, s, k);
    b->s[b->len += k] = 0;
}
#define PUTS(b, s) put(b, s, strlen(s))

static uint32_t hex4(const char *s) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v = v * 16 + (uint32_t)(s[k] <= '9' ? s[k] - '0' : (s[k] | 0x20) - 'a' + 10);
    return v;
}

/* The next code point of a JSON string's inner text (checked UTF-8 and escapes); a lone surrogate escape stays
   itself, as Python's json keeps it. */
static uint32_t next_cp(const char *s, size_t n, size_t *i) {
    unsigned char ch = (unsigned char)s[*i];
    if (ch != '\\') {
        int k = ch < 0x80 ? 1 : ch < 0xE0 ? 2 : ch < 0xF0 ? 3 : 4;
        uint32_t cp = k == 1 ? ch : ch & (0x3Fu >> (k - 1));
        for (int m = 1; m < k; m++) cp = cp << 6 | ((unsigned char)s[*i + (size_t)m] & 0x3F);
        *i += (size_t)k;
        return cp;
    }
    char e = s[*i + 1];
    *i += 2;
    if (e != 'u')
        return (uint32_t)(e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e);
    uint32_t cp = hex4(s + *i), lo;
    *i += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && *i + 6 <= n && s[*i] == '\\' && s[*i + 1] == 'u' &&
        (lo = hex4(s + *i + 2)) >= 0xDC00 && lo < 0xE000) {
        *i += 6;
        return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    return cp;
}

/* A string token's text between its quotes. */
static const char *inner(const wkv_json *j, int t, size_t *n) {
    const char *raw = wkv_json_raw(j, t, n);
    *n -= 2;
    return raw + 1;
}

int wkv_text_is(const wkv_json *j, int t, const char *s) {
    if (wkv_json_kind(j, t) != WKV_J_STRING) return 0;
    size_t n, i = 0, k = 0;
    const char *in = inner(j, t, &n);
    while (i < n)
        if (!s[k] || next_cp(in, n, &i) != (unsigned char)s[k++]) return 0;
    return !s[k];
}

/* What Python's str.isprintable() refuses past ASCII's controls: every separator, format character, surrogate and
   private use of Unicode 14 (Python 3.11), and the widest unassigned ranges; other unassigned points print raw. */
static const uint32_t unprintable[][2] = {
    {0x7F, 0xA0}, {0xAD, 0xAD}, {0x378, 0x379}, {0x600, 0x605}, {0x61C, 0x61C}, {0x6DD, 0x6DD}, {0x70F, 0x70F},
    {0x890, 0x891}, {0x8E2, 0x8E2}, {0x1680, 0x1680}, {0x180E, 0x180E}, {0x2000, 0x200F}, {0x2028, 0x202F},
    {0x205F, 0x206F}, {0x3000, 0x3000}, {0xD800, 0xF8FF}, {0xFEFF, 0xFEFF}, {0xFFF0, 0xFFFB}, {0xFFFE, 0xFFFF},
    {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x13438}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
    {0x2FA1E, 0x2FFFF}, {0x3134B, 0xE00FF}, {0xE01F0, 0x10FFFF},
};

static void put_cp(text *b, uint32_t cp) {
    int printable = cp >= 0x20;
    for (size_t k = 0; k < sizeof unprintable / sizeof unprintable[0]; k++)
        printable &= cp < unprintable[k][0] || cp > unprintable[k][1];
    char u[12];
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (!printable) {
        put(b, u, (size_t)snprintf(u, sizeof u, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x", cp));
        return;
    }
    for (size_t m = n - 1; m > 0; m--, cp >>= 6) u[m] = (char)(0x80 | (cp & 0x3F));
    u[0] = (char)(n == 1 ? cp : ((0xF00u >> n) & 0xF0) | cp);
    put(b, u, n);
}

static void repr_string(text *b, const wkv_json *j, int t) {
    size_t n, i = 0;
    const char *in = inner(j, t, &n);
    int single = 0, dbl = 0;
    while (i < n) {
        uint32_t cp = next_cp(in, n, &i);
        single |= cp == '\'';
        dbl |= cp == '"';
    }
    char q = single && !dbl ? '"' : '\'';
    put(b, &q, 1);
    for (i = 0; i < n && b->len + 1 < b->cap;) {
        uint32_t cp = next_cp(in, n, &i);
        const char *esc = cp == '\n' ? "\\n" : cp == '\r' ? "\\r" : cp == '\t' ? "\\t" : cp == '\\' ? "\\\\" : NULL;
        if (cp == (uint32_t)q) put(b, "\\", 1), put(b, &q, 1);
        else if (esc) PUTS(b, esc);
        else put_cp(b, cp);
    }
    put(b, &q, 1);
}

/* repr(float): the fewest digits that read back the same double; fixed notation for 1e-4 <= |v| < 1e16, else
   d.ddde+XX. */
static void repr_float(text *b, double v) {
    char e[40], d[20];
    size_t nd = 0;
    if (isinf(v)) {
        PUTS(b, v < 0 ? "-inf" : "inf");
        return;
    }
    for (int p = 0; p < 17; p++)
        if (snprintf(e, sizeof e, "%.*e", p, v) > 0 && strtod(e, NULL) == v) break;
    const char *s = e + (e[0] == '-');
    for (; *s != 'e'; s++)
        if (*s != '.') d[nd++] = *s;
    while (nd > 1 && d[nd - 1] == '0') nd--;
    int x = atoi(s + 1), k = (int)nd;   /* the value is d[0].d[1..] times 10**x */
    if (e[0] == '-') PUTS(b, "-");
    if (x >= 16 || x < -4) {
        snprintf(e, sizeof e, "%c%s%.*se%c%02d", d[0], k > 1 ? "." : "", k - 1, d + 1, x < 0 ? '-' : '+', abs(x));
    } else if (x < 0) {
        snprintf(e, sizeof e, "0.%.*s%.*s", -x - 1, "000", k, d);
    } else if (x + 1 >= k) {
        snprintf(e, sizeof e, "%.*s%.*s.0", k, d, x + 1 - k, "0000000000000000");
    } else {
        snprintf(e, sizeof e, "%.*s.%.*s", x + 1, d, k - x - 1, d + x + 1);
    }
    PUTS(b, e);
}

int wkv_token_after(const wkv_json *j, int t) {
    size_t n, m;
    const char *end = wkv_json_raw(j, t, &n) + n;
    int u = t + 1;
    while (u < j->n && wkv_json_raw(j, u, &m) < end) u++;
    return u;
}

static int same_key(const wkv_json *j, int a, int b) {
    size_t n, m, i = 0, k = 0;
    const char *x = wkv_json_raw(j, a, &n), *y = wkv_json_raw(j, b, &m);
    if (n == m && !memcmp(x, y, n)) return 1;
    if (!memchr(x, '\\', n) && !memchr(y, '\\', m)) return 0;
    x = inner(j, a, &n);
    y = inner(j, b, &m);
    while (i < n && k < m)
        if (next_cp(x, n, &i) != next_cp(y, m, &k)) return 0;
    return i == n && k == m;
}

static void repr_into(text *b, const wkv_json *j, int t) {
    enum wkv_jkind kind = wkv_json_kind(j, t);
    size_t n;
    const char *raw = wkv_json_raw(j, t, &n);
    int count = wkv_json_count(j, t), first = 1;
    double v;
    if (kind == WKV_J_STRING) repr_string(b, j, t);
    else if (kind == WKV_J_NULL || kind == WKV_J_BOOL)
        PUTS(b, kind == WKV_J_NULL ? "None" : *raw == 't' ? "True" : "False");
    else if (kind == WKV_J_NUMBER && wkv_json_uint(j, t, &(uint64_t){0}) < 0 && wkv_json_number(j, t, &v))
        repr_float(b, v);
    else if (kind == WKV_J_NUMBER && n == 2 && !memcmp(raw, "-0", 2)) PUTS(b, "0");   /* Python's int("-0") */
    else if (kind == WKV_J_NUMBER) put(b, raw, n);
    if (kind == WKV_J_ARRAY) {
        PUTS(b, "[");
        for (int i = 0, u = t + 1; i < count && b->len + 1 < b->cap; i++, u = wkv_token_after(j, u)) {
            PUTS(b, i ? ", " : "");
            repr_into(b, j, u);
        }
        PUTS(b, "]");
    } else if (kind == WKV_J_OBJECT) {
        /* Python's dict keeps a repeated key where it first came, with its last value */
        PUTS(b, "{");
        for (int i = 0, k = t + 1; i < count && b->len + 1 < b->cap; i++, k = wkv_token_after(j, k + 1)) {
            int seen = 0, last = k;
            for (int e = t + 1; e != k && !seen; e = wkv_token_after(j, e + 1)) seen = same_key(j, e, k);
            for (int e = wkv_token_after(j, k + 1), m = i + 1; !seen && m < count;
                 m++, e = wkv_token_after(j, e + 1))
                last = same_key(j, e, k) ? e : last;
            if (seen) continue;
            PUTS(b, first ? "" : ", ");
            first = 0;
            repr_into(b, j, k);
            PUTS(b, ": ");
            repr_into(b, j, last + 1);
        }
        PUTS(b, "}");
    }
}

void wkv_python_repr(const wkv_json *j, int tok, char *out, size_t len) {
    text b = {out, 0, len};
    if (!len) return;
    out[0] = 0;
    if (tok < 0) PUTS(&b, "None");   /* a field not sent: Python's h.get() gives None */
    else repr_into(&b, j, tok);
}
