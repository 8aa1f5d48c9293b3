/* A window's text from its tokens' bytes, as Python decodes them (UTF-8 with errors="replace": each maximal
   invalid subsequence becomes one U+FFFD), live token by token and whole; its segments and seek, as
   core/decode/timestamps.py cuts them; its compression ratio, as core/decode/quality.py measures it. */
#ifndef WKV_TEXT_H
#define WKV_TEXT_H

#include <stddef.h>

#include "tables.h"

/* codecs' incremental UTF-8 decoder (final=False): an incomplete tail is held for the next push (at most 3
   bytes). */
typedef struct {
    unsigned char held[4];
    int n_held;
} wkv_utf8;

/* The text `data` completes, into out (room for 3 * (n + 4) + 1 bytes), NUL-terminated; its length. */
size_t wkv_utf8_push(wkv_utf8 *u, const unsigned char *data, size_t n, char *out);
/* The end of the stream (final=True, Utf8Assembler.flush): the held tail's U+FFFD (two for a truncated surrogate
   ED A0..BF, which CPython holds too) into out (room for 10 bytes), NUL-terminated; its length. The decoder is empty
   again. */
size_t wkv_utf8_flush(wkv_utf8 *u, char *out);
/* A whole byte string (final=True), the same way; malloc'd, NUL-terminated. */
char *wkv_utf8_decode(const unsigned char *data, size_t n, size_t *len);

/* tokenizer.decode: the bytes of `tokens` joined (special tokens have none), decoded; malloc'd. */
char *wkv_decode_tokens(const wkv_tables *t, const int *tokens, int n);

typedef struct {
    double start, end;     /* seconds, offset_s added */
    char *text;            /* malloc'd */
} wkv_segment;

/* split_segments: the window's complete segments (malloc'd array in *out, *n_out) and the frames to seek in *seek.
   0, or -1 when out of memory. */
int wkv_split_segments(const wkv_tables *t, const int *tokens, int n, double offset_s, int segment_frames,
                       wkv_segment **out, int *n_out, int *seek);
void wkv_segments_free(wkv_segment *s, int n);
/* kept_length: how many of the tokens the complete segments hold; -1 when out of memory. */
int wkv_kept_length(const wkv_tables *t, const int *tokens, int n);

/* len(text) / len(zlib.compress(text)) in bytes, 0 for no text, with the system's zlib (libz.so.1, libz.so), loaded
   at first use; -1 when the system has none. */
double wkv_compression_ratio(const char *text, size_t n);

#endif
