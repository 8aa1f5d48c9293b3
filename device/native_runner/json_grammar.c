/* The strict JSON grammar check. jsmn tokenizes but accepts more than JSON (a trailing comma, a raw control
   character in a string, a malformed number), and the protocol answers anything that is not JSON with bad_frame, as
   the Python runner's json.loads does: so this check runs first, and jsmn only sees valid text. */
#include "json_in.h"
#include "json_out.h"

#include <stdio.h>
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

int wkv_json_check(const char *text, size_t len, char *why, size_t why_len) {
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
    return 0;
}
