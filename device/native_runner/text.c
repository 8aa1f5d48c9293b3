/* Text from token bytes (text.h): CPython's UTF-8 decoder with errors="replace", the segments and seek of
   core/decode/timestamps.py, and core/decode/quality.py's compression ratio with the system's zlib. */
#define _POSIX_C_SOURCE 200809L

#include "text.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char REPLACEMENT[] = "\xEF\xBF\xBD";   /* U+FFFD */
#define FRAMES_PER_SECOND 100.0                     /* mel frames are 10 ms, as split_segments counts them */

/* The sequence at s (n bytes there): its length when whole and valid; 0 when the n bytes are a valid start of
   one that needs more; else minus the length of its maximal invalid subpart (Unicode's "maximal subpart", which
   CPython replaces by one U+FFFD). */
static int sequence(const unsigned char *s, size_t n) {
    unsigned lead = s[0], low = 0x80, high = 0xBF;
    int need;
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 3;
        if (lead == 0xE0) low = 0xA0;         /* no overlong form */
        if (lead == 0xED) high = 0x9F;        /* no surrogate */
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;        /* nothing past U+10FFFF */
    } else {
        return -1;
    }
    for (int i = 1; i < need; i++) {
        if ((size_t)i >= n) return 0;
        if (s[i] < (i == 1 ? low : 0x80) || s[i] > (i == 1 ? high : 0xBF)) return -i;
    }
    return need;
}

/* CPython's incremental decoder holds a truncated surrogate (ED A0..BF) at the end of its input, as it holds a
   valid start, though no byte can complete it. */
static int truncated_surrogate(const unsigned char *s, size_t n) {
    return n == 2 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF;
}

/* Decodes s[0..n) into out; without `final`, stops before a tail the next bytes may complete. The bytes used in
   *used. */
static size_t decode_run(const unsigned char *s, size_t n, int final, char *out, size_t *used) {
    size_t i = 0, o = 0;
    while (i < n) {
        int len = sequence(s + i, n - i);
        if (len > 0) {
            memcpy(out + o, s + i, (size_t)len);
            o += (size_t)len;
            i += (size_t)len;
            continue;
        }
        if (!final && (len == 0 || truncated_surrogate(s + i, n - i))) break;
        memcpy(out + o, REPLACEMENT, 3);
        o += 3;
        i = len == 0 ? n : i + (size_t)-len;
    }
    out[o] = 0;
    *used = i;
    return o;
}

size_t wkv_utf8_push(wkv_utf8 *u, const unsigned char *data, size_t n, char *out) {
    size_t o = 0, i = 0, used;
    while (u->n_held) {   /* the held bytes first, taking the new ones until they decode or break */
        int len = sequence(u->held, (size_t)u->n_held);
        if (len == 0 || (i == n && truncated_surrogate(u->held, (size_t)u->n_held))) {
            if (i == n) break;
            u->held[u->n_held++] = data[i++];
            continue;
        }
        size_t taken = len > 0 ? (size_t)len : (size_t)-len;
        memcpy(out + o, len > 0 ? (const char *)u->held : REPLACEMENT, len > 0 ? taken : 3);
        o += len > 0 ? taken : 3;
        u->n_held -= (int)taken;
        memmove(u->held, u->held + taken, (size_t)u->n_held);
    }
    if (!u->n_held) {
        o += decode_run(data + i, n - i, 0, out + o, &used);
        memcpy(u->held, data + i + used, n - i - used);
        u->n_held = (int)(n - i - used);
    }
    out[o] = 0;
    return o;
}

size_t wkv_utf8_flush(wkv_utf8 *u, char *out) {
    size_t used, o = decode_run(u->held, (size_t)u->n_held, 1, out, &used);
    u->n_held = 0;
    return o;
}

char *wkv_utf8_decode(const unsigned char *data, size_t n, size_t *len) {
    char *out = malloc(3 * n + 1);
    size_t used, o = out ? decode_run(data, n, 1, out, &used) : 0;
    if (len) *len = o;
    return out;
}

char *wkv_decode_tokens(const wkv_tables *t, const int *tokens, int n) {
    size_t total = 0, len;
    for (int i = 0; i < n; i++) {
        wkv_token_bytes(t, tokens[i], &len);
        total += len;
    }
    unsigned char *joined = malloc(total + 1);
    if (!joined) return NULL;
    total = 0;
    for (int i = 0; i < n; i++) {
        const unsigned char *piece = wkv_token_bytes(t, tokens[i], &len);
        if (len) memcpy(joined + total, piece, len);
        total += len;
    }
    char *text = wkv_utf8_decode(joined, total, NULL);
    free(joined);
    return text;
}

/* _segment_ends: after each pair of consecutive timestamps, and at the end when the window ends on a single
   timestamp; into ends (room for n + 1), their count. */
static int segment_ends(const wkv_tables *t, const int *tokens, int n, int *ends) {
    int tb = t->timestamp_begin, count = 0;
    for (int i = 0; i + 1 < n; i++)
        if (tokens[i] >= tb && tokens[i + 1] >= tb) ends[count++] = i + 1;
    if (count && n >= 2 && tokens[n - 2] < tb && tokens[n - 1] >= tb) ends[count++] = n;
    return count;
}

int wkv_kept_length(const wkv_tables *t, const int *tokens, int n) {
    int *ends = malloc(sizeof(int) * ((size_t)n + 1));
    if (!ends) return -1;
    int count = segment_ends(t, tokens, n, ends), kept = count ? ends[count - 1] : n;
    free(ends);
    return kept;
}

/* A segment of the text tokens (below EOT) of tokens[0..n), when there are any; -1 when out of memory. */
static int add_segment(const wkv_tables *t, const int *tokens, int n, double start, double end, wkv_segment *s,
                       int *count) {
    int *text = malloc(sizeof(int) * ((size_t)n + 1)), n_text = 0;
    if (!text) return -1;
    for (int i = 0; i < n; i++)
        if (tokens[i] < t->eot) text[n_text++] = tokens[i];
    if (n_text) {
        s[*count].start = start;
        s[*count].end = end;
        if (!(s[*count].text = wkv_decode_tokens(t, text, n_text))) n_text = -1;
        else (*count)++;
    }
    free(text);
    return n_text < 0 ? -1 : 0;
}

static double time_of(const wkv_tables *t, int token, int segment_frames) {
    double at = (double)(token - t->timestamp_begin) * t->precision, end = segment_frames / FRAMES_PER_SECOND;
    return at <= end ? at : end;    /* whisper may stamp past the end of the audio */
}

int wkv_split_segments(const wkv_tables *t, const int *tokens, int n, double offset_s, int segment_frames,
                       wkv_segment **out, int *n_out, int *seek) {
    int tb = t->timestamp_begin, *ends = malloc(sizeof(int) * ((size_t)n + 1)), rc = 0;
    wkv_segment *s = calloc((size_t)n + 1, sizeof *s);
    *out = NULL;
    *n_out = 0;
    if (!ends || !s) {
        free(ends);
        free(s);
        return -1;
    }
    int count = segment_ends(t, tokens, n, ends);
    if (count) {
        int last = 0;
        for (int c = 0; c < count && !rc; c++) {
            const int *part = tokens + last;
            int len = ends[c] - last;
            rc = add_segment(t, part, len, offset_s + time_of(t, part[0], segment_frames),
                             offset_s + time_of(t, part[len - 1], segment_frames), s, n_out);
            last = ends[c];
        }
        long frames_per_timestamp = lround(t->precision * FRAMES_PER_SECOND);
        *seek = ends[count - 1] == n ? segment_frames : (int)((tokens[last - 1] - tb) * frames_per_timestamp);
    } else {
        double duration = segment_frames / FRAMES_PER_SECOND;
        for (int i = n - 1; i >= 0; i--)
            if (tokens[i] >= tb) {
                if (tokens[i] != tb) duration = time_of(t, tokens[i], segment_frames);
                break;
            }
        rc = add_segment(t, tokens, n, offset_s, offset_s + duration, s, n_out);
        *seek = segment_frames;
    }
    if (*seek < 1) *seek = 1;
    free(ends);
    if (rc) {
        wkv_segments_free(s, *n_out);
        *n_out = 0;
        return -1;
    }
    *out = s;
    return 0;
}

void wkv_segments_free(wkv_segment *s, int n) {
    for (int i = 0; s && i < n; i++) free(s[i].text);
    free(s);
}

/* zlib's compress2 and compressBound, from the system's library: the board may have libz.so.1 and no -dev
   package to link against. */
typedef int (*compress2_fn)(unsigned char *dest, unsigned long *dest_len, const unsigned char *src,
                            unsigned long src_len, int level);
typedef unsigned long (*compress_bound_fn)(unsigned long src_len);
static compress2_fn zlib_compress2;
static compress_bound_fn zlib_compress_bound;
static pthread_once_t zlib_once = PTHREAD_ONCE_INIT;
#define Z_DEFAULT_COMPRESSION (-1)   /* Python's zlib.compress level */

static void load_zlib(void) {
    static const char *const NAMES[] = {"libz.so.1", "libz.so"};
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES && !zlib_compress2; i++) {
        void *lib = dlopen(NAMES[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) continue;
        zlib_compress2 = (compress2_fn)dlsym(lib, "compress2");
        zlib_compress_bound = (compress_bound_fn)dlsym(lib, "compressBound");
        if (!zlib_compress2 || !zlib_compress_bound) {
            zlib_compress2 = NULL;
            dlclose(lib);
        }
    }
}

double wkv_compression_ratio(const char *text, size_t n) {
    if (n == 0) return 0;
    pthread_once(&zlib_once, load_zlib);
    if (!zlib_compress2) return -1;
    unsigned long size = zlib_compress_bound((unsigned long)n);
    unsigned char *packed = malloc(size);
    int rc = packed ? zlib_compress2(packed, &size, (const unsigned char *)text, (unsigned long)n,
                                     Z_DEFAULT_COMPRESSION)
                    : -1;
    free(packed);
    return rc == 0 && size ? (double)n / (double)size : -1;
}
