/* The events a window sends (core/decode/events.py, docs/protocol.md): encoded, token and done, with the done's
   text, segments and quality (core/decode/quality.py) made from its tokens. */
#ifndef WKV_EVENTS_H
#define WKV_EVENTS_H

#include "json_out.h"
#include "model.h"
#include "rules.h"

#define WKV_LANGUAGE_PROBS 5
#define WKV_MAX_FALLBACKS 5       /* the fallback's temperatures after greedy */
#define WKV_NOTE 160

typedef struct {
    const wkv_model *m;
    double ms;
    int language;                 /* index into the tables' languages */
    int n_probs;                  /* 0 when the request named the language */
    int order[WKV_LANGUAGE_PROBS];
    double probs[WKV_LANGUAGE_PROBS];
    int cache_hit;
    int window_s;                 /* the encoder window, seconds */
} wkv_encoded_info;

typedef struct {
    int step, token;
    const char *text;             /* the printable piece this token completes */
    const unsigned char *bytes;
    size_t n_bytes;
    int is_special;
    float logprob;
    const wkv_pick *p;
    int cache_len;
    long long cache_bytes;
    double ms, temperature;
} wkv_token_info;

typedef struct {
    const wkv_model *m;
    const int *tokens;
    int n;
    const char *reason;
    int language;
    double no_speech_prob, avg_logprob, mean_entropy, temperature;
    int timestamps;               /* segments shown */
    int timed;                    /* timestamp tokens sampled (shown, or only to seek) */
    int segment_frames;
    double ms_total;
    char (*notes)[WKV_NOTE];      /* the fallbacks that fired before this decode */
    int n_notes;
} wkv_done_info;

/* Each writes the event (without id, sent_t or the closing brace: the sink adds them) into `o`; -1 when out of
   memory. */
int wkv_emit_encoded(wkv_out *o, const wkv_encoded_info *e);
int wkv_emit_token(wkv_out *o, const wkv_token_info *t);
int wkv_emit_done(wkv_out *o, const wkv_done_info *d);

/* WindowQuality.needs_fallback, and the line recorded when the decode is thrown away (fallback_note). */
int wkv_needs_fallback(const wkv_done_info *d);
void wkv_fallback_note(const wkv_done_info *d, char *out, size_t n);

#endif
