/* A transcribe or probe request, read and checked as the Python runner reads it (request.h). */
#include "request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whisperkv_spec.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *const mel_dtypes[] = WKV_MEL_DTYPES;

typedef struct {
    const wkv_json *j;
    const char **code;
    char *msg, *shown;   /* the message, and a value as the message shows it, both of n bytes */
    size_t n;
} check;

/* A message cut to its buffer ends on a whole UTF-8 character. */
static int whole(char *s) {
    size_t n = strlen(s), k = n;
    while (k > 0 && ((unsigned char)s[k - 1] & 0xC0) == 0x80) k--;
    unsigned char lead = k ? (unsigned char)s[k - 1] : 0;
    if (lead >= 0xC0 && n - k + 1 < (size_t)(lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2)) s[k - 1] = 0;
    return -1;
}

#define REFUSE(c, code_, ...) (*(c)->code = (code_), snprintf((c)->msg, (c)->n, __VA_ARGS__), whole((c)->msg))
#define BAD(c, ...) REFUSE(c, WKV_BAD_REQUEST, __VA_ARGS__)

/* Token t as a Python f-string shows it: {x!r}, or {x} (`quoted` 0: a string as its text). */
static const char *shown(check *c, int t, int quoted) {
    char *s = quoted ? NULL : wkv_json_string(c->j, t, NULL);
    if (s) snprintf(c->shown, c->n, "%s", s);
    else wkv_python_repr(c->j, t, c->shown, c->n);
    free(s);
    return c->shown;
}

/* Field `name`, when sent, as a Python int (a JSON number without fraction or exponent: not a bool, not 1.0) in
   lo..hi; `range` words the bounds. Absent, *v keeps its default; null is refused unless `null_ok`. */
static int int_field(check *c, const char *name, uint64_t lo, uint64_t hi, const char *range, int null_ok,
                     uint64_t *v) {
    int f = wkv_json_field(c->j, name);
    if (f < 0 || (null_ok && wkv_json_kind(c->j, f) == WKV_J_NULL)) return 0;
    if (wkv_json_uint(c->j, f, v) == 1 && *v >= lo && *v <= hi) return 0;
    return BAD(c, "%s %s is not an integer in %s", name, shown(c, f, 1), range);
}

static float half(unsigned h) {
    unsigned e = h >> 10 & 0x1F, f = h & 0x3FF;
    float v = e == 0x1F ? (f ? NAN : INFINITY) : e ? ldexpf((float)(f | 0x400), (int)e - 25) : ldexpf((float)f, -24);
    return h & 0x8000 ? -v : v;
}

static int read_mel(check *c, wkv_request *r, const unsigned char *p, size_t len) {
    const wkv_json *j = c->j;
    int mel = wkv_json_field(j, "mel"), d = -1, ok;
    if (wkv_json_kind(j, mel) != WKV_J_OBJECT) return BAD(c, "transcribe needs mel: {shape, dtype}");
    int shape = wkv_json_member(j, mel, "shape"), dtype = wkv_json_member(j, mel, "dtype");
    char names[96] = "";
    for (int k = 0; k < WKV_MEL_DTYPES_COUNT; k++) {
        d = wkv_text_is(j, dtype, mel_dtypes[k]) ? k : d;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s'%s'", k ? ", " : "", mel_dtypes[k]);
    }
    if (d < 0) return REFUSE(c, WKV_BAD_MEL, "mel dtype %s is not one of [%s]", shown(c, dtype, 1), names);
    uint64_t dim[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};   /* a negative int stays so: an int, no size */
    ok = wkv_json_kind(j, shape) == WKV_J_ARRAY && wkv_json_count(j, shape) == 3;
    for (int k = 0, u = shape + 1; ok && k < 3; k++, u = wkv_token_after(j, u)) ok = wkv_json_uint(j, u, &dim[k]) >= 0;
    if (!ok || dim[1] != WKV_N_MELS || dim[2] != WKV_N_FRAMES)
        return REFUSE(c, WKV_BAD_MEL, "mel shape %s is not [1, %d, %d]", shown(c, shape, 0), WKV_N_MELS, WKV_N_FRAMES);
    if (dim[0] != 1)
        return REFUSE(c, WKV_BAD_MEL, "mel shape %s: protocol %d takes one 30 s window per request, [1, %d, %d], and "
                      "the host seeks; update whisperkv on the host to one that speaks protocol %d",
                      shown(c, shape, 0), WKV_PROTOCOL, WKV_N_MELS, WKV_N_FRAMES, WKV_PROTOCOL);
    size_t size = (size_t)atoi(mel_dtypes[d] + strlen("float")) / 8, count = (size_t)WKV_N_MELS * WKV_N_FRAMES;
    if (len != count * size)
        return REFUSE(c, WKV_BAD_MEL, "mel %s %s needs %zu payload bytes, got %zu", shown(c, shape, 0), mel_dtypes[d],
                      count * size, len);
    if (!(r->mel = malloc(count * sizeof *r->mel))) return REFUSE(c, WKV_INTERNAL, "no memory for the mel");
    for (size_t i = 0; i < count; i++, p += size) {
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8;
        if (size == 4) u |= (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        if (size == 2) r->mel[i] = half(u);
        else memcpy(&r->mel[i], &u, sizeof u);
        if (!isfinite(r->mel[i])) return REFUSE(c, WKV_BAD_MEL, "mel contains NaN or Inf values");
    }
    return 0;
}

/* prompt or draft: token ids of the vocabulary, at most n_text_ctx // 2 - 1 of them */
static int read_ids(check *c, const char *name, const wkv_tables *t, int **ids, int *count) {
    int f = wkv_json_field(c->j, name), n = wkv_json_count(c->j, f), ok = wkv_json_kind(c->j, f) == WKV_J_ARRAY;
    uint64_t v;
    if (f < 0) return 0;
    if (ok && n > 0 && !(*ids = malloc((size_t)n * sizeof **ids))) return REFUSE(c, WKV_INTERNAL, "no memory");
    for (int k = 0, u = f + 1; ok && k < n; k++, u = wkv_token_after(c->j, u))
        if ((ok = wkv_json_uint(c->j, u, &v) == 1 && v < (uint64_t)t->n_vocab)) (*ids)[k] = (int)v;
    if (!ok) return BAD(c, "%s must be a list of token ids in 0..%d", name, t->n_vocab - 1);
    if (n > t->n_text_ctx / 2 - 1)
        return BAD(c, "%s has %d tokens; at most %d fit the %d-position decoder context (keep the last ones)", name, n,
                   t->n_text_ctx / 2 - 1, t->n_text_ctx);
    *count = n;
    return 0;
}

/* window_s, when sent: a Python int among the windows served (core/decode/options.py check_window). */
static int window_field(check *c, wkv_options *o, const wkv_bounds *b) {
    int f = wkv_json_field(c->j, "window_s"), found = 0;
    uint64_t v = 0;
    char listed[64] = "";
    o->window_s = WKV_DECODE_FULL_WINDOW_S;
    for (int k = 0; k < b->n_windows; k++)
        snprintf(listed + strlen(listed), sizeof listed - strlen(listed), "%s%d", k ? ", " : "", b->windows[k]);
    if (f < 0) return 0;
    if (wkv_json_uint(c->j, f, &v) == 1)
        for (int k = 0; k < b->n_windows; k++) found |= v == (uint64_t)b->windows[k];
    if (!found)
        return BAD(c, "window_s %s is not a window this runner serves: %s (seconds)", shown(c, f, 1), listed);
    o->window_s = (int)v;
    return 0;
}

static int read_options(check *c, wkv_options *o, const wkv_bounds *b) {
    const wkv_json *j = c->j;
    const wkv_tables *t = b->t;
    static const char *const flags[] = {"timestamps", "suppress_eot", "attention", "word_timestamps",
                                        "seek_timestamps", "temperature_fallback"};
    int *flag[] = {&o->timestamps, &o->suppress_eot, &o->attention, &o->word_timestamps, &o->seek_timestamps,
                   &o->temperature_fallback};
    int f = wkv_json_field(j, "cache");
    if (f >= 0 && !wkv_text_is(j, f, "on") && !wkv_text_is(j, f, "off"))
        return BAD(c, "cache %s is not 'on' or 'off'", shown(c, f, 1));
    o->cache = f < 0 || wkv_text_is(j, f, "on");
    o->language = -1;
    f = wkv_json_field(j, "language");
    if (f >= 0 && wkv_json_kind(j, f) != WKV_J_NULL && !wkv_text_is(j, f, "") && !wkv_text_is(j, f, "auto")) {
        for (int k = 0; k < t->n_languages; k++) o->language = wkv_text_is(j, f, t->language_code[k]) ? k : o->language;
        if (o->language < 0)
            return BAD(c, "unknown language %s; use null for auto-detect or a code such as 'en'", shown(c, f, 1));
    }
    f = wkv_json_field(j, "task");
    if (f >= 0 && !wkv_text_is(j, f, "transcribe") && !(o->translate = wkv_text_is(j, f, "translate")))
        return BAD(c, "task %s is not 'transcribe' or 'translate'", shown(c, f, 1));
    uint64_t max_tokens = WKV_DECODE_MAX_TOKENS, top_k = WKV_DECODE_TOP_K;
    char range[32];
    snprintf(range, sizeof range, "1..%d", t->n_text_ctx);
    if (int_field(c, "max_tokens", 1, (uint64_t)t->n_text_ctx, range, 0, &max_tokens) ||
        int_field(c, "top_k", 1, WKV_DECODE_MAX_TOP_K, "1.." STR(WKV_DECODE_MAX_TOP_K), 0, &top_k))
        return -1;
    o->max_tokens = (int)max_tokens;
    o->top_k = (int)top_k;
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) {
        size_t len;
        if ((f = wkv_json_field(j, flags[k])) >= 0 && wkv_json_kind(j, f) != WKV_J_BOOL)
            return BAD(c, "%s %s is not true or false", flags[k], shown(c, f, 1));
        *flag[k] = f >= 0 && *wkv_json_raw(j, f, &len) == 't';
    }
    if (int_field(c, "seed", 0, INT64_MAX, "0..2**63-1", 0, &o->seed) ||
        read_ids(c, "prompt", t, &o->prompt, &o->n_prompt) || read_ids(c, "draft", t, &o->draft, &o->n_draft))
        return -1;
    const char *asked = o->word_timestamps ? "word_timestamps" : "attention";
    if ((o->attention || o->word_timestamps) && !o->cache)
        return BAD(c, "%s needs cache on: the uncached reference runs the full decoder graph, which has no attention "
                   "output; turn the cache on or leave %s off", asked, asked);
    if (window_field(c, o, b)) return -1;
    if (!o->attention && !o->word_timestamps) return 0;
    return BAD(c, "%s: backend '%s' has no step_with_attention here, so it cannot report cross-attention; on dla "
               "compile a float bundle with this whisperkv (`whisperkv compile DIR`: it adds the step's attention "
               "variant), else use a numpy, onnx or tflite runner, or leave attention off", asked, b->backend);
}

int wkv_request_read(wkv_request *r, const wkv_json *j, const unsigned char *payload, size_t payload_len,
                     const wkv_bounds *b, const char **code, char *msg, size_t n) {
    memset(r, 0, sizeof *r);
    check c = {j, code, msg, malloc(n ? n : 1), n};
    uint64_t frames = 0;
    int f = wkv_json_field(j, "sample_s"), rc = c.shown ? 0 : REFUSE(&c, WKV_INTERNAL, "no memory");
    r->probe = wkv_text_is(j, wkv_json_field(j, "op"), "probe");
    rc = rc ? rc : read_mel(&c, r, payload, payload_len);
    if (!rc && !r->probe) {
        rc = read_options(&c, &r->o, b) ||
             int_field(&c, "n_frames", 1, WKV_N_FRAMES, "1.." STR(WKV_N_FRAMES), 1, &frames) ? -1 : 0;
        r->n_frames = (int)frames;
        int held = r->o.window_s * WKV_N_FRAMES / WKV_DECODE_FULL_WINDOW_S;
        if (!rc && (frames ? (int)frames : WKV_N_FRAMES) > held)    /* the Python agent's check */
            rc = BAD(&c, "n_frames %d (absent: the whole window) is more than the %d s window's %d frames: the audio "
                     "past it would go unheard; send n_frames, or a longer window_s",
                     frames ? (int)frames : WKV_N_FRAMES, r->o.window_s, held);
    }
    /* Python: type(sample_s) in (int, float), so a bool is refused; an int past a double's range reads as inf */
    if (!rc && !r->probe && f >= 0 && wkv_json_kind(j, f) != WKV_J_NULL &&
        !(wkv_json_number(j, f, &r->sample_s) && r->sample_s >= 0.1 && r->sample_s <= 60))
        rc = BAD(&c, "sample_s %s is not a number of seconds in 0.1..60", shown(&c, f, 1));
    free(c.shown);
    if (rc) wkv_request_free(r);
    return rc;
}

void wkv_request_free(wkv_request *r) {
    free(r->mel);
    free(r->o.prompt);
    free(r->o.draft);
    r->mel = NULL;
    r->o.prompt = r->o.draft = NULL;
}
