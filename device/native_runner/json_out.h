/* Event headers: a growing buffer of JSON text, and UTF-8 read and written one character at a time. */
#ifndef WKV_JSON_OUT_H
#define WKV_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int failed;          /* out of memory: the event is dropped, never sent cut short */
    int fields;          /* fields written so far in the open object */
} wkv_out;

/* `{"type":TYPE`; the fields follow; wkv_event_end adds sent_t and closes it. */
void wkv_event_begin(wkv_out *o, const char *type);
void wkv_event_end(wkv_out *o);
void wkv_out_free(wkv_out *o);

/* A field whose value is a string, escaped so that the event is valid JSON whatever the bytes (a bad UTF-8
   sequence becomes U+FFFD); or a value already in JSON form. */
void wkv_field_str(wkv_out *o, const char *key, const char *value);
void wkv_field_raw(wkv_out *o, const char *key, const char *json);
void wkv_field_int(wkv_out *o, const char *key, long long value);
void wkv_field_bool(wkv_out *o, const char *key, int value);
/* A number with the digits a float32 needs; null when not finite (JSON has no -inf or NaN: docs/protocol.md). */
void wkv_field_num(wkv_out *o, const char *key, double value);
void wkv_out_num(wkv_out *o, double value);
/* A nested object: its fields written into its own wkv_out (zeroed), then closed here ("{}" when it has none). */
void wkv_object_end(wkv_out *o);
void wkv_out_raw(wkv_out *o, const char *text, size_t n);
void wkv_out_str(wkv_out *o, const char *s, size_t n);

/* The length of the UTF-8 sequence at s (and its code point), or 0 when it is not valid UTF-8: an overlong form,
   a surrogate, past U+10FFFF, or cut short. */
size_t wkv_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);
/* Writes cp as UTF-8 into out (room for 4 bytes); its length. */
size_t wkv_utf8_put(char *out, uint32_t cp);

#endif
