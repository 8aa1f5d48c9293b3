#include "events.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define COMPRESSION_RATIO_THRESHOLD 2.4   /* core/decode/quality.py: whisper's thresholds */
#define LOGPROB_THRESHOLD -1.0
#define NO_SPEECH_THRESHOLD 0.6

int wkv_emit_encoded(wkv_out *o, const wkv_encoded_info *e) {
    const wkv_model *m = e->m;
    wkv_event_begin(o, "encoded");
    wkv_field_int(o, "window", 0);
    wkv_field_num(o, "ms", e->ms);
    wkv_field_str(o, "language", m->t.language_code[e->language]);
    wkv_out probs = {0};
    for (int i = 0; i < e->n_probs; i++) wkv_field_num(&probs, m->t.language_code[e->order[i]], e->probs[i]);
    wkv_object_end(&probs);
    wkv_field_raw(o, "language_probs", probs.buf);
    wkv_out_free(&probs);
    wkv_field_bool(o, "cache_hit", e->cache_hit);
    wkv_field_num(o, "offset_s", 0.0);
    wkv_field_str(o, "cross_form", m->cross);
    const wkv_slot *cross = &m->enc.slots->out[m->enc_cross[0]];
    int fp16 = cross->native == WKV_ELEM_F16 && !cross->has_scale;
    size_t elements = wkv_slot_elements(cross) / WKV_DECODE_FULL_WINDOW_S * (size_t)e->window_s;
    /* as the Python backend holds it: the window's positions, in the slot's fp16 on the native path, else fp32 (an
       integer slot dequantized) */
    wkv_field_int(o, "cross_bytes", (long long)(m->n_cross * elements * (fp16 ? 2 : 4)));
    wkv_field_str(o, "cross_dtype", fp16 ? "float16" : "float32");
    if (e->window_s != WKV_DECODE_FULL_WINDOW_S) wkv_field_int(o, "window_s", e->window_s);   /* 30 s: unsaid */
    return o->failed ? -1 : 0;
}

int wkv_emit_token(wkv_out *o, const wkv_token_info *t) {
    static const char HEX[] = "0123456789abcdef";
    char hex[2 * 256 + 1], pair[64];
    size_t n = t->n_bytes < 256 ? t->n_bytes : 256;
    for (size_t i = 0; i < n; i++) hex[2 * i] = HEX[t->bytes[i] >> 4], hex[2 * i + 1] = HEX[t->bytes[i] & 15];
    hex[2 * n] = 0;
    wkv_event_begin(o, "token");
    wkv_field_int(o, "window", 0);
    wkv_field_int(o, "step", t->step);
    wkv_field_int(o, "token", t->token);
    wkv_field_str(o, "text", t->text);
    wkv_field_num(o, "logprob", t->logprob);
    wkv_field_num(o, "eot_prob", exp((double)t->p->eot_logprob));
    wkv_out_raw(o, ",\"top\":[", 8);
    for (int i = 0; i < t->p->n; i++) {
        snprintf(pair, sizeof pair, "%s[%d,", i ? "," : "", t->p->top[i]);
        wkv_out_raw(o, pair, strlen(pair));
        wkv_out_num(o, t->p->logprob[i]);
        wkv_out_raw(o, "]", 1);
    }
    wkv_out_raw(o, "]", 1);
    wkv_field_int(o, "cache_len", t->cache_len);
    wkv_field_int(o, "cache_bytes", t->cache_bytes);
    wkv_field_num(o, "ms", t->ms);
    wkv_field_str(o, "text_bytes", hex);
    wkv_field_bool(o, "is_special", t->is_special);
    wkv_field_num(o, "entropy", t->p->entropy);
    wkv_field_num(o, "temperature", t->temperature);
    wkv_field_bool(o, "drafted", 0);
    return o->failed ? -1 : 0;
}

static double compression(const wkv_done_info *d) {
    char *text = wkv_decode_tokens(&d->m->t, d->tokens, d->n);
    double ratio = text ? wkv_compression_ratio(text, strlen(text)) : 0.0;
    free(text);
    return ratio < 0 ? 0.0 : round(ratio * 1e4) / 1e4;
}

static int silent(const wkv_done_info *d) {
    return d->no_speech_prob > NO_SPEECH_THRESHOLD && d->avg_logprob < LOGPROB_THRESHOLD;
}

int wkv_needs_fallback(const wkv_done_info *d) {
    return !silent(d) && (compression(d) > COMPRESSION_RATIO_THRESHOLD || d->avg_logprob < LOGPROB_THRESHOLD);
}

void wkv_fallback_note(const wkv_done_info *d, char *out, size_t n) {
    double ratio = compression(d);
    int k = 0;
    out[0] = 0;
    if (ratio > COMPRESSION_RATIO_THRESHOLD)
        k = snprintf(out, n, "compression ratio %.2f > %.1f", ratio, COMPRESSION_RATIO_THRESHOLD);
    if (d->avg_logprob < LOGPROB_THRESHOLD && k >= 0 && (size_t)k < n)
        k += snprintf(out + k, n - (size_t)k, "%savg logprob %.2f < %.1f", k ? " and " : "", d->avg_logprob,
                      LOGPROB_THRESHOLD);
    if (k >= 0 && (size_t)k < n) snprintf(out + k, n - (size_t)k, " at T=%.1f", d->temperature);
}

static void segments(wkv_out *o, const wkv_done_info *d, int *seek) {
    wkv_segment *seg = NULL;
    int count = 0;
    *seek = d->segment_frames;
    wkv_out_raw(o, ",\"segments\":[", 13);
    if (d->timed && !wkv_split_segments(&d->m->t, d->tokens, d->n, 0.0, d->segment_frames, &seg, &count, seek))
        for (int i = 0; d->timestamps && i < count; i++) {
            wkv_out g = {0};
            wkv_field_num(&g, "start", round(seg[i].start * 1e3) / 1e3);
            wkv_field_num(&g, "end", round(seg[i].end * 1e3) / 1e3);
            wkv_field_str(&g, "text", seg[i].text);
            wkv_object_end(&g);
            if (i) wkv_out_raw(o, ",", 1);
            wkv_out_raw(o, g.buf, g.len);
            wkv_out_free(&g);
        }
    wkv_segments_free(seg, count);
    wkv_out_raw(o, "]", 1);
}

int wkv_emit_done(wkv_out *o, const wkv_done_info *d) {
    const wkv_tables *t = &d->m->t;
    char num[32];
    int kept = d->timed ? wkv_kept_length(t, d->tokens, d->n) : d->n, seek;
    char *text = wkv_decode_tokens(t, d->tokens, kept);
    wkv_event_begin(o, "done");
    wkv_field_int(o, "window", 0);
    wkv_field_str(o, "reason", d->reason);
    wkv_out_raw(o, ",\"tokens\":[", 11);
    for (int i = 0; i < d->n; i++) {
        snprintf(num, sizeof num, "%s%d", i ? "," : "", d->tokens[i]);
        wkv_out_raw(o, num, strlen(num));
    }
    wkv_out_raw(o, "]", 1);
    wkv_field_str(o, "text", text ? text : "");
    free(text);
    wkv_field_num(o, "ms_total", d->ms_total);
    wkv_field_str(o, "language", t->language_code[d->language]);
    wkv_field_num(o, "no_speech_prob", d->no_speech_prob);
    wkv_field_num(o, "avg_logprob", d->avg_logprob);
    wkv_field_num(o, "offset_s", 0.0);
    segments(o, d, &seek);
    wkv_field_int(o, "seek_frames", seek > 1 ? seek : 1);
    wkv_out q = {0};
    wkv_field_num(&q, "compression_ratio", compression(d));
    wkv_field_num(&q, "avg_logprob", d->avg_logprob);
    wkv_field_num(&q, "no_speech_prob", d->no_speech_prob);
    wkv_field_num(&q, "mean_entropy", d->mean_entropy);
    wkv_field_num(&q, "temperature", d->temperature);
    wkv_out_raw(&q, ",\"fallbacks\":[", 14);
    for (int i = 0; i < d->n_notes; i++) {
        if (i) wkv_out_raw(&q, ",", 1);
        wkv_out_str(&q, d->notes[i], strlen(d->notes[i]));
    }
    wkv_out_raw(&q, "]", 1);
    wkv_object_end(&q);
    wkv_field_raw(o, "quality", q.buf ? q.buf : "{}");
    wkv_out_free(&q);
    wkv_field_raw(o, "words", "[]");
    wkv_field_bool(o, "final", 1);
    return o->failed ? -1 : 0;
}
