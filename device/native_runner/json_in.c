/* JSON text (a request header, a bundle's model.json): checked by json_grammar.c, then tokenized by jsmn. */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "json_in.h"
#include "json_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wkv_json_parse(wkv_json *j, const char *text, size_t len, char *why, size_t why_len) {
    memset(j, 0, sizeof *j);
    j->text = text;
    j->len = len;
    if (wkv_json_check(text, len, why, why_len)) return -1;
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

/* The token after `t` and everything inside it. */
static int next_sibling(const wkv_json *j, int t) {
    const jsmntok_t *tk = j->tokens;
    int end = tk[t].end, u = t + 1;
    while (u < j->n && tk[u].start < end) u++;
    return u;
}

int wkv_json_member(const wkv_json *j, int obj, const char *key) {
    const jsmntok_t *tk = tok_at(j, obj);
    int found = -1;
    if (!tk || tk->type != JSMN_OBJECT) return -1;
    size_t klen = strlen(key);
    for (int t = obj + 1; t + 1 < j->n && ((const jsmntok_t *)j->tokens)[t].parent == obj;
         t = next_sibling(j, t + 1)) {
        const jsmntok_t *k = (const jsmntok_t *)j->tokens + t;
        const char *raw = j->text + k->start;
        size_t n = (size_t)(k->end - k->start);
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

int wkv_json_field(const wkv_json *j, const char *key) { return wkv_json_member(j, 0, key); }

int wkv_json_count(const wkv_json *j, int t) {
    const jsmntok_t *tk = tok_at(j, t);
    return tk && (tk->type == JSMN_ARRAY || tk->type == JSMN_OBJECT) ? tk->size : -1;
}

int wkv_json_item(const wkv_json *j, int arr, int index) {
    const jsmntok_t *tk = tok_at(j, arr);
    if (!tk || tk->type != JSMN_ARRAY || index < 0 || index >= tk->size) return -1;
    int t = arr + 1;
    for (int i = 0; i < index; i++) t = next_sibling(j, t);
    return t;
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

char *wkv_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1)) != NULL &&
        fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[*len = (size_t)size] = 0;
    return buf;
}

