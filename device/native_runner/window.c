#define _POSIX_C_SOURCE 200809L

#include "window.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encode.h"
#include "events.h"
#include "rules.h"
#include "text.h"
#include "whisperkv_spec.h"

static const double FALLBACK_TEMPERATURES[] = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0};   /* quality.py, after greedy */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int wkv_window_init(wkv_window *w, wkv_model *m) {
    memset(w, 0, sizeof *w);
    w->m = m;
    size_t mel = (size_t)m->enc.slots->in[m->enc_mel].rows * m->enc.slots->in[m->enc_mel].row;
    w->sot_logits = malloc(sizeof(float) * (size_t)m->dims.n_vocab);
    w->last_mel = malloc(sizeof(float) * mel);
    return w->sot_logits && w->last_mel && !wkv_stepper_init(&w->s, m) ? 0 : -1;
}

void wkv_window_free(wkv_window *w) {
    wkv_stepper_free(&w->s);
    free(w->sot_logits);
    free(w->last_mel);
    wkv_out_free(&w->ev);
}

typedef struct {
    int *tokens, n;           /* sampled text tokens, no EOT */
    const char *reason;
    double sum_logprob, sum_entropy;
    int steps;
} sampled;

/* The prefix (<|startofprev|> + prompt, then the SOT sequence) from what the stepper holds on; the SOT step's
   logits kept when it is fed here. */
static int feed_prefix(wkv_window *w, const wkv_request *r, int language, char *err, size_t n) {
    const wkv_tables *t = &w->m->t;
    int prefix[2 + 224 + 4], k = 0;
    if (r->o.n_prompt) {
        prefix[k++] = t->sot_prev;
        for (int i = 0; i < r->o.n_prompt; i++) prefix[k++] = r->o.prompt[i];
    }
    prefix[k++] = t->sot;
    prefix[k++] = t->language_id[language];
    prefix[k++] = r->o.translate ? t->translate : t->transcribe;
    if (!(r->o.timestamps || r->o.seek_timestamps)) prefix[k++] = t->no_timestamps;
    for (int i = wkv_stepper_length(&w->s); i < k; i++) {
        if (wkv_stepper_advance(&w->s, prefix[i], err, n)) return -1;
        if (prefix[i] == t->sot) memcpy(w->sot_logits, w->s.logits, sizeof(float) * (size_t)t->n_vocab);
    }
    return 0;
}

static int stop_reason(wkv_window *w, const wkv_request *r, const sampled *out, wkv_sink *sink) {
    if (out->n >= r->o.max_tokens) return 1;
    if (wkv_stepper_full(&w->s)) return 2;
    return sink->cancelled(sink->ctx) ? 3 : 0;
}

static int main_loop(wkv_window *w, const wkv_request *r, double temperature, wkv_rng *rng, wkv_rules *rules,
                     sampled *out, double *t_step, wkv_sink *sink, char *err, size_t n) {
    static const char *const REASONS[] = {"", "max_tokens", "cache_full", "cancelled"};
    const wkv_tables *t = &w->m->t;
    wkv_utf8 text = {{0}, 0};
    wkv_pick p;
    char piece[3 * (256 + 4) + 1];
    for (int step = 0;; step++) {
        wkv_rules_pick_in_place(rules, w->s.logits, out->tokens, out->n, &p);
        int tok = p.top[0];
        float logprob = p.logprob[0];
        if (temperature > 0) tok = wkv_rules_sample(rules, w->s.logits, out->tokens, out->n, &p, temperature, rng,
                                                    &logprob);
        size_t len = 0;
        const unsigned char *bytes = wkv_token_bytes(t, tok, &len);
        if (len > 256) len = 256;
        wkv_utf8_push(&text, bytes, len, piece);
        wkv_token_info info = {step, tok, piece, bytes, len, tok >= t->eot, logprob, &p, wkv_stepper_length(&w->s),
                               wkv_stepper_bytes(&w->s), now_ms() - *t_step, temperature};
        if (wkv_emit_token(&w->ev, &info) == 0 && sink->send(sink->ctx, &w->ev)) return -2;
        out->sum_entropy += p.entropy;
        out->steps++;
        if (tok == t->eot) {
            out->reason = "eot";
            return 0;
        }
        out->tokens[out->n++] = tok;
        out->sum_logprob += logprob;
        int why = stop_reason(w, r, out, sink);
        if (why) {
            out->reason = REASONS[why];
            return 0;
        }
        *t_step = now_ms();
        if (wkv_stepper_advance(&w->s, tok, err, n)) return -1;
    }
}

static int encode(wkv_window *w, const wkv_request *r, int *hit, char *err, size_t n) {
    const wkv_slot *in = &w->m->enc.slots->in[w->m->enc_mel];
    size_t bytes = sizeof(float) * in->rows * in->row;
    *hit = w->holds_cross == r->o.window_s && !memcmp(w->last_mel, r->mel, bytes);
    if (*hit) return 0;
    w->holds_cross = 0;
    if (wkv_encode(w->m, r->mel, r->o.window_s, err, n)) return -1;
    memcpy(w->last_mel, r->mel, bytes);
    w->holds_cross = r->o.window_s;
    return 0;
}

int wkv_window_decode(wkv_window *w, const wkv_request *r, wkv_sink *sink, char *err, size_t n) {
    wkv_model *m = w->m;
    const wkv_tables *t = &m->t;
    double t0 = now_ms();
    int hit, language = r->o.language, rc = -1;
    if (encode(w, r, &hit, err, n)) return -1;
    double enc_ms = now_ms() - t0, t_step = now_ms();
    wkv_stepper_reset(&w->s, r->o.cache);
    wkv_encoded_info enc = {m, enc_ms, -1, 0, {0}, {0}, hit, r->o.window_s};
    if (language < 0) {
        if (wkv_stepper_advance(&w->s, t->sot, err, n)) return -1;
        memcpy(w->sot_logits, w->s.logits, sizeof(float) * (size_t)t->n_vocab);
        language = wkv_detect_language(t, w->sot_logits, WKV_LANGUAGE_PROBS, enc.order, enc.probs);
        enc.n_probs = WKV_LANGUAGE_PROBS;
        if (r->o.n_prompt) wkv_stepper_reset(&w->s, r->o.cache);
    }
    enc.language = language;
    if (wkv_emit_encoded(&w->ev, &enc) == 0 && sink->send(sink->ctx, &w->ev)) return 1;
    wkv_rules rules;
    wkv_rule_options ro = {r->o.timestamps || r->o.seek_timestamps, r->o.suppress_eot, r->o.top_k};
    sampled out = {malloc(sizeof(int) * (size_t)(m->dims.n_text_ctx + 1)), 0, "", 0, 0, 0};
    wkv_rng rng;
    wkv_rng_seed(&rng, r->o.seed);
    char notes[WKV_MAX_FALLBACKS][WKV_NOTE];
    wkv_done_info done = {0};
    int attempts = r->o.temperature_fallback ? WKV_MAX_FALLBACKS + 1 : 1, gone = 0;
    if (!out.tokens || wkv_rules_init(&rules, t, ro)) {
        snprintf(err, n, "out of memory for the decoder's buffers");
        free(out.tokens);
        return -1;
    }
    for (int i = 0; i < attempts; i++) {
        double temperature = FALLBACK_TEMPERATURES[i];
        if (i) {
            wkv_stepper_reset(&w->s, r->o.cache);
            t_step = now_ms();
        }
        out = (sampled){out.tokens, 0, "", 0, 0, 0};
        if (feed_prefix(w, r, language, err, n)) goto end;
        double no_speech = expf(w->sot_logits[t->no_speech] - wkv_log_softmax_norm(w->sot_logits, t->n_vocab));
        int looped = main_loop(w, r, temperature, &rng, &rules, &out, &t_step, sink, err, n);
        if (looped == -1) goto end;
        if ((gone = looped == -2)) break;
        done = (wkv_done_info){m, out.tokens, out.n, out.reason, language, no_speech,
                               out.sum_logprob / (out.n >= 1 ? out.n : 1),
                               out.steps ? round(out.sum_entropy / out.steps * 1e4) / 1e4 : 0.0, temperature,
                               r->o.timestamps, r->o.timestamps || r->o.seek_timestamps,
                               r->n_frames ? r->n_frames : WKV_N_FRAMES, 0.0, notes, i};
        if (!strcmp(out.reason, "cancelled") || i == attempts - 1 || !wkv_needs_fallback(&done)) break;
        wkv_fallback_note(&done, notes[i], WKV_NOTE);
    }
    rc = gone;
    if (!gone) {
        done.ms_total = now_ms() - t0;
        rc = wkv_emit_done(&w->ev, &done) == 0 && sink->send(sink->ctx, &w->ev) ? 1 : 0;
    }
end:
    wkv_rules_free(&rules);
    free(out.tokens);
    return rc;
}
