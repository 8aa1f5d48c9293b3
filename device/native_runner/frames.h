/* Frames (docs/protocol.md, 1. Frames): a 4-byte big-endian header length, a UTF-8 JSON header, and the payload
   of `payload_bytes` bytes. Read from stdin, written to the runner's private duplicate of stdout. */
#ifndef WKV_FRAMES_H
#define WKV_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "json_in.h"

typedef struct {
    int fd;
    uint64_t max_header, max_payload;
    uint64_t skip;               /* bytes of an oversize frame still to discard before the next frame */
    unsigned char buf[1 << 16];
    size_t pos, end;
} wkv_reader;

enum wkv_read { WKV_READ_FRAME, WKV_READ_BAD, WKV_READ_EOF, WKV_READ_EOF_INSIDE };

typedef struct {
    char *text;                  /* the header's bytes */
    size_t text_len;
    wkv_json header;             /* parsed from text (WKV_READ_FRAME) */
    unsigned char *payload;
    size_t payload_len;
    /* WKV_READ_BAD: what the error event says, as the Python FrameParser words it */
    const char *code;
    char message[256];
    char *id;                    /* the header's string id, when it had one */
} wkv_frame;

void wkv_reader_init(wkv_reader *r, int fd, uint64_t max_header, uint64_t max_payload);

/* The next frame, or why there is none: a bad frame (its bytes consumed or, when oversize, skipped by count on the
   next call, so the error goes out before the skip), or the end of input, clean or inside a frame. */
enum wkv_read wkv_read_frame(wkv_reader *r, wkv_frame *f);
void wkv_frame_free(wkv_frame *f);

/* One frame of a header and no payload; -1 when the host is gone (a broken pipe). */
int wkv_write_frame(int fd, const char *header, size_t len);

#endif
