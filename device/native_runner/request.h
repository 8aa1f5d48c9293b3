/* A transcribe or probe request, read and checked as the Python runner reads it (device/runner/serve/agent.py
   `submit`, device/protocol.py `mel_from_payload`, core/decode/options.py `DecodeOptions.from_wire` and
   `check_options`): the same checks in the same order, the same error codes and messages. */
#ifndef WKV_REQUEST_H
#define WKV_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "json_in.h"
#include "tables.h"

typedef struct {
    int language;            /* index into the tables' languages; -1: detect (null, "" or "auto") */
    int translate;           /* task */
    int cache;
    int max_tokens, top_k;
    int timestamps, seek_timestamps, suppress_eot, attention, word_timestamps, temperature_fallback;
    uint64_t seed;
    int *prompt, n_prompt;   /* malloc'd token ids */
    int *draft, n_draft;
    int window_s;            /* the encoder window, seconds: one of the model's windows (30 unless asked) */
} wkv_options;

typedef struct {
    int probe;               /* op "probe": only the mel is read */
    wkv_options o;
    float *mel;              /* [80 * 3000] float32, malloc'd, finite */
    int n_frames;            /* 0: not given */
    double sample_s;         /* 0: not given */
} wkv_request;

/* What the served model bounds a request by (the Python runner's DecodeOptions bounds): its tables, the backend
   named in the attention refusal, the encoder windows it serves. */
typedef struct {
    const wkv_tables *t;
    const char *backend;
    const int *windows;
    int n_windows;
} wkv_bounds;

/* Reads the request in header `j` with its payload. `b->backend` names the backend in the attention refusal (this
   runner has no step_with_attention: attention and word_timestamps are refused as the Python runner refuses them
   on such a backend). 0; or -1 with the protocol's error code (WKV_BAD_REQUEST, WKV_BAD_MEL; WKV_INTERNAL when
   out of memory) in *code and the message in msg, cut to n - 1 bytes on a whole character, nothing left to free.
   A probe reads only the mel; a field not sent keeps DecodeOptions' default. */
int wkv_request_read(wkv_request *r, const wkv_json *j, const unsigned char *payload, size_t payload_len,
                     const wkv_bounds *b, const char **code, char *msg, size_t n);
void wkv_request_free(wkv_request *r);

/* Python's repr of a JSON value as the Python runner's messages show it: 'text', None, True, 3, 1.5, [1, 2],
   {'a': 1} (python_repr.c); cut to len - 1 bytes. A token of -1 (a field not sent) is None. */
void wkv_python_repr(const wkv_json *j, int tok, char *out, size_t len);

/* Whether token `tok` is a JSON string equal to the ASCII text `s` once its escapes are decoded. */
int wkv_text_is(const wkv_json *j, int tok, const char *s);
/* The token after `tok` and everything inside it: an array's next item, or an object's next key. */
int wkv_token_after(const wkv_json *j, int tok);

#endif
