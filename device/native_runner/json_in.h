/* A request header: checked as strict UTF-8 JSON, tokenized by jsmn, its top-level fields read by name. */
#ifndef WKV_JSON_IN_H
#define WKV_JSON_IN_H

#include <stddef.h>
#include <stdint.h>

enum wkv_jkind { WKV_J_NONE, WKV_J_OBJECT, WKV_J_ARRAY, WKV_J_STRING, WKV_J_NUMBER, WKV_J_BOOL, WKV_J_NULL };

typedef struct {
    const char *text;   /* the header's bytes, not owned */
    size_t len;
    void *tokens;       /* jsmntok_t[]: jsmn.h stays inside json_in.c */
    int n;
} wkv_json;

/* A whole file (model.json, the native tables' JSON) as NUL-terminated text, malloc'd, its length in *len; NULL when it
   cannot be read. */
char *wkv_read_file(const char *path, size_t *len);

/* 0 when `text` is one UTF-8 JSON value (an object or not: wkv_json_kind(j, 0) says); else -1 and why. */
int wkv_json_parse(wkv_json *j, const char *text, size_t len, char *why, size_t why_len);
void wkv_json_free(wkv_json *j);

/* 0 when `text` is UTF-8 and JSON's grammar (json_grammar.c); else -1 and why. */
int wkv_json_check(const char *text, size_t len, char *why, size_t why_len);

/* The token of the top-level object's field `key` (the last one when repeated, as Python's json keeps), or -1. */
int wkv_json_field(const wkv_json *j, const char *key);
/* The same in the object at token `obj`; -1 when `obj` is no object or has no such key. */
int wkv_json_member(const wkv_json *j, int obj, const char *key);
/* An array's or object's number of items (keys), -1 for another token; the array's item `index`, or -1. */
int wkv_json_count(const wkv_json *j, int tok);
int wkv_json_item(const wkv_json *j, int arr, int index);
enum wkv_jkind wkv_json_kind(const wkv_json *j, int tok);

/* A string token's value as NUL-terminated UTF-8 (malloc'd; \u escapes decoded, a lone surrogate becomes U+FFFD),
   its length in characters as Python counts them in *chars. NULL when it is no string. */
char *wkv_json_string(const wkv_json *j, int tok, size_t *chars);

/* An integer number token (no fraction, no exponent): 1 and *out when it is >= 0 (saturating), 0 when negative,
   -1 when it is not an integer. */
int wkv_json_uint(const wkv_json *j, int tok, uint64_t *out);

/* A number token's value; 0 when it is not a number. */
int wkv_json_number(const wkv_json *j, int tok, double *out);

/* The token's JSON text, as sent. */
const char *wkv_json_raw(const wkv_json *j, int tok, size_t *len);

#endif
