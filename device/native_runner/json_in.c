/* Request headers. jsmn tokenizes but accepts more than JSON (a trailing comma, a raw control character in a
   string, a malformed number), and the protocol answers anything that is not JSON with bad_frame, as the Python
   runner's json.loads does: so a strict check of the grammar runs first, and jsmn only sees valid text. */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "json_in.h"
#include "json_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting than any request needs; Python's parser gives up too (RecursionError), at about twice this. */
#define MAX_DEPTH 500

typedef struct {
    const unsigned char *s;
    size_t n, i;
    const char *err;
} scan;

static int fail(scan *c, const char *err) {
    c->err = c->err ? c->err : err;
    return -1;
}

static void skip_ws(scan *c) {
    while (c->i < c->n && c->s[c->i] && strchr(" \t\n\r", c->s[c->i])) c->i++;
}

static int is_digit(scan *c) { return c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9'; }

static int is_hex(unsigned char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static int scan_string(scan *c) {
    c->i++;
    while (c->i < c->n) {
        unsigned char ch = c->s[c->i];
        if (ch == '"') {
            c->i++;
            return 0;
        }
        if (ch < 0x20) return fail(c, "a control character inside a string");
        if (ch == '\\') {
            if (++c->i >= c->n) break;
            ch = c->s[c->i];
            if (ch == 'u') {
                if (c->i + 4 >= c->n) break;
                for (int k = 1; k <= 4; k++)
                    if (!is_hex(c->s[c->i + k])) return fail(c, "a bad \\u escape");
                c->i += 4;
            } else if (!strchr("\"\\/bfnrt", ch) || ch == 0) {
                return fail(c, "a bad escape");
            }
        }
        c->i++;
    }
    return fail(c, "an unterminated string");
}

static int scan_number(scan *c) {
    if (c->s[c->i] == '-') c->i++;
    if (!is_digit(c)) return fail(c, "a bad number");
    if (c->s[c->i] == '0') c->i++;
    else while (is_digit(c)) c->i++;
    if (c->i < c->n && c->s[c->i] == '.') {
        c->i++;
        if (!is_digit(c)) return fail(c, "a bad number");
        while (is_digit(c)) c->i++;
    }
    if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (!is_digit(c)) return fail(c, "a bad number");
        while (is_digit(c)) c->i++;
    }
    return 0;
}

static int scan_word(scan *c, const char *word) {
    size_t k = strlen(word);
    if (c->n - c->i < k || memcmp(c->s + c->i, word, k) != 0) return fail(c, "an unexpected character");
    c->i += k;
    return 0;
}

static int scan_value(scan *c, int depth);

static int scan_items(scan *c, int depth, unsigned char close, int keyed) {
    c->i++;
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == close) {
        c->i++;
        return 0;
    }
    for (;;) {
        if (keyed) {
            skip_ws(c);
            if (c->i >= c->n || c->s[c->i] != '"') return fail(c, "expected a string key");
            if (scan_string(c)) return -1;
            skip_ws(c);
            if (c->i >= c->n || c->s[c->i] != ':') return fail(c, "expected ':'");
            c->i++;
        }
        if (scan_value(c, depth + 1)) return -1;
        skip_ws(c);
        if (c->i >= c->n) return fail(c, "an unterminated object or array");
        if (c->s[c->i] == close) {
            c->i++;
            return 0;
        }
        if (c->s[c->i] != ',') return fail(c, "expected ',' or a closing bracket");
        c->i++;
    }
}

static int scan_value(scan *c, int depth) {
    if (depth > MAX_DEPTH) return fail(c, "nested too deeply");
    skip_ws(c);
    if (c->i >= c->n) return fail(c, "expected a value");
    switch (c->s[c->i]) {
    case '{': return scan_items(c, depth, '}', 1);
    case '[': return scan_items(c, depth, ']', 0);
    case '"': return scan_string(c);
    case 't': return scan_word(c, "true");
    case 'f': return scan_word(c, "false");
    case 'n': return scan_word(c, "null");
    default: return scan_number(c);
    }
}

int wkv_json_parse(wkv_json *j, const char *text, size_t len, char *why, size_t why_len) {
    memset(j, 0, sizeof *j);
    j->text = text;
    j->len = len;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = wkv_utf8_next((const unsigned char *)text + i, len - i, &cp);
        if (!k) {
            snprintf(why, why_len, "header is not UTF-8 JSON: invalid UTF-8 at byte %zu", i);
            return -1;
        }
        i += k;
    }
    scan c = {(const unsigned char *)text, len, 0, NULL};
    if (scan_value(&c, 0) == 0) {
        skip_ws(&c);
        if (c.i < c.n) fail(&c, "extra data after the value");
    }
    if (c.err) {
        snprintf(why, why_len, "header is not UTF-8 JSON: %s at byte %zu", c.err, c.i);
        return -1;
    }
    jsmn_parser p;
    jsmn_init(&p);
    int n = jsmn_parse(&p, text, len, NULL, 0);
    if (n > 0 && (j->tokens = calloc((size_t)n, sizeof(jsmntok_t))) != NULL) {
        jsmn_init(&p);
        j->n = jsmn_parse(&p, text, len, j->tokens, (unsigned)n);
    }
    if (j->n <= 0) {
        snprintf(why, why_len, "header could not be tokenized (jsmn: %d)", n);
        wkv_json_free(j);
        return -1;
    }
    return 0;
}

void wkv_json_free(wkv_json *j) {
    free(j->tokens);
    j->tokens = NULL;
    j->n = 0;
}

static const jsmntok_t *tok_at(const wkv_json *j, int t) {
    return t >= 0 && t < j->n ? (const jsmntok_t *)j->tokens + t : NULL;
}

enum wkv_jkind wkv_json_kind(const wkv_json *j, int t) {
    const jsmntok_t *tk = tok_at(j, t);
    if (!tk) return WKV_J_NONE;
    switch (tk->type) {
    case JSMN_OBJECT: return WKV_J_OBJECT;
    case JSMN_ARRAY: return WKV_J_ARRAY;
    case JSMN_STRING: return WKV_J_STRING;
    case JSMN_PRIMITIVE: {
        char ch = j->text[tk->start];
        return ch == 't' || ch == 'f' ? WKV_J_BOOL : ch == 'n' ? WKV_J_NULL : WKV_J_NUMBER;
    }
    default: return WKV_J_NONE;
    }
}

const char *wkv_json_raw(const wkv_json *j, int t, size_t *len) {
    const jsmntok_t *tk = tok_at(j, t);
    if (!tk) return NULL;
    /* a string's token excludes its quotes: give the JSON text as sent */
    int quoted = tk->type == JSMN_STRING;
    *len = (size_t)(tk->end - tk->start) + (quoted ? 2 : 0);
    return j->text + tk->start - quoted;
}

static unsigned hex4(const char *s) {
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char ch = s[k];
        v = v * 16 + (unsigned)(ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
    }
    return v;
}

char *wkv_json_string(const wkv_json *j, int t, size_t *chars) {
    const jsmntok_t *tk = tok_at(j, t);
    if (!tk || tk->type != JSMN_STRING) return NULL;
    const char *s = j->text + tk->start;
    size_t n = (size_t)(tk->end - tk->start), o = 0, count = 0;
    char *out = malloc(n + 1);   /* an escape never decodes to more bytes than it takes */
    if (!out) return NULL;
    for (size_t i = 0; i < n; count++) {
        if (s[i] != '\\') {
            size_t k = 1;
            while (i + k < n && ((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
            continue;
        }
        char e = s[i + 1];
        i += 2;
        if (e != 'u') {
            out[o++] = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
            continue;
        }
        uint32_t cp = hex4(s + i);
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
            uint32_t lo = hex4(s + i + 2);
            if (lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
        }
        if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
        o += wkv_utf8_put(out + o, cp);
    }
    out[o] = 0;
    if (chars) *chars = count;
    return out;
}

int wkv_json_field(const wkv_json *j, const char *key) {
    const jsmntok_t *tk = j->tokens;
    int found = -1;
    if (!tk || tk[0].type != JSMN_OBJECT) return -1;
    size_t klen = strlen(key);
    for (int t = 1; t + 1 < j->n; t++) {
        if (tk[t].parent != 0 || tk[t].type != JSMN_STRING) continue;
        const char *raw = j->text + tk[t].start;
        size_t n = (size_t)(tk[t].end - tk[t].start);
        if (memchr(raw, '\\', n)) {
            char *name = wkv_json_string(j, t, NULL);
            if (name && strcmp(name, key) == 0) found = t + 1;
            free(name);
        } else if (n == klen && memcmp(raw, key, n) == 0) {
            found = t + 1;
        }
    }
    return found;
}

int wkv_json_uint(const wkv_json *j, int t, uint64_t *out) {
    size_t n;
    const char *s = wkv_json_raw(j, t, &n);
    if (!s || wkv_json_kind(j, t) != WKV_J_NUMBER || memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n))
        return -1;
    uint64_t v = 0;
    for (size_t i = s[0] == '-'; i < n; i++)
        v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(s[i] - '0');
    if (s[0] == '-' && v) return 0;
    *out = v;
    return 1;
}

int wkv_json_number(const wkv_json *j, int t, double *out) {
    size_t n;
    const char *s = wkv_json_raw(j, t, &n);
    if (!s || wkv_json_kind(j, t) != WKV_J_NUMBER) return 0;
    char *copy = malloc(n + 1);
    if (!copy) return 0;
    memcpy(copy, s, n);
    copy[n] = 0;
    *out = strtod(copy, NULL);
    free(copy);
    return 1;
}
