#define _POSIX_C_SOURCE 200809L

#include "frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "whisperkv_spec.h"

void wkv_reader_init(wkv_reader *r, int fd, uint64_t max_header, uint64_t max_payload) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->max_header = max_header;
    r->max_payload = max_payload;
}

/* Bytes buffered, reading more when none are; 0 at the end of input (a failed read ends it too: the host is gone). */
static size_t fill(wkv_reader *r) {
    if (r->pos < r->end) return r->end - r->pos;
    ssize_t n;
    do n = read(r->fd, r->buf, sizeof r->buf);
    while (n < 0 && errno == EINTR);
    if (n < 0) fprintf(stderr, "runner WARNING stdin failed: %s\n", strerror(errno));
    r->pos = 0;
    r->end = n > 0 ? (size_t)n : 0;
    return r->end;
}

static int read_exact(wkv_reader *r, unsigned char *dst, size_t n) {
    while (n) {
        size_t have = fill(r);
        if (!have) return -1;
        size_t k = have < n ? have : n;
        memcpy(dst, r->buf + r->pos, k);
        r->pos += k;
        dst += k;
        n -= k;
    }
    return 0;
}

/* An oversize frame is counted past, never buffered: memory stays bounded whatever arrives. */
static int skip(wkv_reader *r) {
    while (r->skip) {
        size_t have = fill(r);
        if (!have) return -1;
        size_t k = have < r->skip ? have : (size_t)r->skip;
        r->pos += k;
        r->skip -= k;
    }
    return 0;
}

static enum wkv_read bad(wkv_frame *f, const char *code, const char *message) {
    f->code = code;
    snprintf(f->message, sizeof f->message, "%s", message);
    wkv_json_free(&f->header);
    return WKV_READ_BAD;
}

enum wkv_read wkv_read_frame(wkv_reader *r, wkv_frame *f) {
    memset(f, 0, sizeof *f);
    if (r->skip && skip(r)) return WKV_READ_EOF_INSIDE;
    if (!fill(r)) return WKV_READ_EOF;
    unsigned char len4[WKV_LENGTH_BYTES];
    if (read_exact(r, len4, sizeof len4)) return WKV_READ_EOF_INSIDE;
    uint64_t n = 0;
    for (size_t i = 0; i < sizeof len4; i++) n = n << 8 | len4[i];    /* WKV_LENGTH_BYTE_ORDER: big */
    char message[sizeof f->message];
    if (n > r->max_header) {
        r->skip = n;
        snprintf(message, sizeof message, "header of %llu bytes exceeds the limit of %llu; skipped",
                 (unsigned long long)n, (unsigned long long)r->max_header);
        return bad(f, WKV_FRAME_TOO_LARGE, message);
    }
    f->text = malloc((size_t)n + 1);
    if (!f->text) {
        r->skip = n;
        return bad(f, WKV_FRAME_TOO_LARGE, "no memory for the header; skipped");
    }
    f->text_len = (size_t)n;
    if (read_exact(r, (unsigned char *)f->text, f->text_len)) return WKV_READ_EOF_INSIDE;
    f->text[n] = 0;
    if (wkv_json_parse(&f->header, f->text, f->text_len, message, sizeof message))
        return bad(f, WKV_BAD_FRAME, message);
    if (wkv_json_kind(&f->header, 0) != WKV_J_OBJECT) return bad(f, WKV_BAD_FRAME, "header must be a JSON object");
    if (wkv_json_kind(&f->header, wkv_json_field(&f->header, "id")) == WKV_J_STRING)
        f->id = wkv_json_string(&f->header, wkv_json_field(&f->header, "id"), NULL);
    int t = wkv_json_field(&f->header, "payload_bytes");
    uint64_t size = 0;
    if (t >= 0 && wkv_json_uint(&f->header, t, &size) != 1)
        return bad(f, WKV_BAD_FRAME, "payload_bytes must be a non-negative integer");
    if (size > r->max_payload) {
        r->skip = size;
        snprintf(message, sizeof message, "payload of %llu bytes exceeds the limit of %llu; skipped",
                 (unsigned long long)size, (unsigned long long)r->max_payload);
        return bad(f, WKV_FRAME_TOO_LARGE, message);
    }
    if (size) {
        f->payload = malloc((size_t)size);
        if (!f->payload) {
            r->skip = size;
            return bad(f, WKV_FRAME_TOO_LARGE, "no memory for the payload; skipped");
        }
        f->payload_len = (size_t)size;
        if (read_exact(r, f->payload, f->payload_len)) return WKV_READ_EOF_INSIDE;
    }
    return WKV_READ_FRAME;
}

void wkv_frame_free(wkv_frame *f) {
    wkv_json_free(&f->header);
    free(f->text);
    free(f->payload);
    free(f->id);
    memset(f, 0, sizeof *f);
}

int wkv_write_frame(int fd, const char *header, size_t len) {
    unsigned char *buf = malloc(len + WKV_LENGTH_BYTES);
    if (!buf) return -1;
    for (int i = 0; i < WKV_LENGTH_BYTES; i++) buf[i] = (unsigned char)(len >> (8 * (WKV_LENGTH_BYTES - 1 - i)));
    memcpy(buf + WKV_LENGTH_BYTES, header, len);
    size_t total = len + WKV_LENGTH_BYTES, done = 0;
    while (done < total) {
        ssize_t k = write(fd, buf + done, total - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        done += (size_t)k;
    }
    free(buf);
    return done == total ? 0 : -1;
}
