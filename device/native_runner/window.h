/* One 30 s window decoded greedily, in the steps of core/decode/decoding.py's WindowDecoder: the encoder (or the
   last window's cross state when the same mel comes again), the language, the prefix, the main loop, the result;
   with temperature_fallback, whisper's re-decodes at rising temperatures. Every event goes out as it happens. */
#ifndef WKV_WINDOW_H
#define WKV_WINDOW_H

#include "json_out.h"
#include "model.h"
#include "request.h"
#include "stepper.h"

typedef struct {
    void *ctx;
    /* ends and writes the event with the request's id (the caller's); -1 when the host is gone */
    int (*send)(void *ctx, wkv_out *ev);
    /* read between steps: whether the host cancelled this request (or left) */
    int (*cancelled)(void *ctx);
} wkv_sink;

typedef struct {
    wkv_model *m;
    wkv_stepper s;
    float *sot_logits;        /* [n_vocab] */
    float *last_mel;          /* the mel whose cross state the step's slots hold (an encoder cache of one) */
    int holds_cross;       /* the window, seconds, whose cross state the step holds for last_mel; 0: none */
    wkv_out ev;
} wkv_window;

int wkv_window_init(wkv_window *w, wkv_model *m);
void wkv_window_free(wkv_window *w);
/* Decodes the request's window; the encoded, token and done events (done with final) go to `sink`.
   0; 1 when the host is gone; -1 and the runtime's line in err when a graph failed (events sent before it stay
   sent). */
int wkv_window_decode(wkv_window *w, const wkv_request *r, wkv_sink *sink, char *err, size_t n);

#endif
