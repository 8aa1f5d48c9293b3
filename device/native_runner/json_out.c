#define _POSIX_C_SOURCE 200809L

#include "json_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

size_t wkv_utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char c = s[0];
    size_t k;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c < 0xE0) k = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c < 0xF0) k = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c < 0xF5) k = 4, v = c & 0x07, min = 0x10000;
    else return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return 0;
    *cp = v;
    return k;
}

size_t wkv_utf8_put(char *out, uint32_t cp) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

void wkv_out_raw(wkv_out *o, const char *text, size_t n) {
    if (o->failed) return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n + 1) cap *= 2;
        char *buf = realloc(o->buf, cap);
        if (!buf) {
            o->failed = 1;
            return;
        }
        o->buf = buf;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, text, n);
    o->len += n;
    o->buf[o->len] = 0;
}

void wkv_out_str(wkv_out *o, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0;      /* bytes copied as they are, written in one go */
    wkv_out_raw(o, "\"", 1);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = wkv_utf8_next(u + i, n - i, &cp);
        if (k && cp >= 0x20 && cp != '"' && cp != '\\') {
            i += k;
            run += k;
            continue;
        }
        wkv_out_raw(o, s + i - run, run);
        run = 0;
        char esc[8];
        if (!k) {
            wkv_out_raw(o, "\xEF\xBF\xBD", 3);
            i++;
            continue;
        }
        const char *named = cp == '"' ? "\\\"" : cp == '\\' ? "\\\\" : cp == '\n' ? "\\n" : cp == '\r' ? "\\r"
                          : cp == '\t' ? "\\t" : cp == '\b' ? "\\b" : cp == '\f' ? "\\f" : NULL;
        if (!named) {
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
            named = esc;
        }
        wkv_out_raw(o, named, strlen(named));
        i += k;
    }
    wkv_out_raw(o, s + n - run, run);
    wkv_out_raw(o, "\"", 1);
}

static void key(wkv_out *o, const char *name) {
    wkv_out_raw(o, o->fields++ ? "," : "{", 1);
    wkv_out_str(o, name, strlen(name));
    wkv_out_raw(o, ":", 1);
}

void wkv_field_str(wkv_out *o, const char *name, const char *value) {
    key(o, name);
    wkv_out_str(o, value, strlen(value));
}

void wkv_field_raw(wkv_out *o, const char *name, const char *json) {
    key(o, name);
    wkv_out_raw(o, json, strlen(json));
}

void wkv_field_int(wkv_out *o, const char *name, long long value) {
    char num[32];
    snprintf(num, sizeof num, "%lld", value);
    wkv_field_raw(o, name, num);
}

void wkv_field_bool(wkv_out *o, const char *name, int value) { wkv_field_raw(o, name, value ? "true" : "false"); }

void wkv_out_num(wkv_out *o, double value) {
    char num[40];
    if (isfinite(value)) snprintf(num, sizeof num, "%.9g", value);
    else snprintf(num, sizeof num, "null");
    wkv_out_raw(o, num, strlen(num));
}

void wkv_field_num(wkv_out *o, const char *name, double value) {
    key(o, name);
    wkv_out_num(o, value);
}

void wkv_object_end(wkv_out *o) { wkv_out_raw(o, o->fields ? "}" : "{}", o->fields ? 1 : 2); }

void wkv_event_begin(wkv_out *o, const char *type) {
    o->len = 0;
    o->fields = 0;
    o->failed = 0;
    wkv_field_str(o, "type", type);
}

void wkv_event_end(wkv_out *o) {
    /* sent_t: the runner's monotonic clock just before the frame is written (docs/protocol.md, Events) */
    struct timespec ts;
    char num[48];
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(num, sizeof num, "%.6f", (double)ts.tv_sec + ts.tv_nsec / 1e9);
    wkv_field_raw(o, "sent_t", num);
    wkv_out_raw(o, "}", 1);
}

void wkv_out_free(wkv_out *o) {
    free(o->buf);
    *o = (wkv_out){0};
}
