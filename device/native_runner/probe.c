#include "probe.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "slot_io.h"

#define SAMPLE 4096
static const double GOLDEN = 0.6180339887498949;

static void base64(wkv_out *o, const unsigned char *data, size_t n) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char quad[4];
    wkv_out_raw(o, "\"", 1);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < n ? (uint32_t)data[i + 1] << 8 : 0) |
                     (i + 2 < n ? data[i + 2] : 0);
        for (int k = 0; k < 4; k++) quad[k] = A[(v >> (18 - 6 * k)) & 63];
        if (i + 1 >= n) quad[2] = '=';
        if (i + 2 >= n) quad[3] = '=';
        wkv_out_raw(o, quad, 4);
    }
    wkv_out_raw(o, "\"", 1);
}

/* float32 little-endian bytes: this runner runs on little-endian boards only (x86-64, aarch64 as Linux runs it) */
static void floats(wkv_out *o, const float *v, size_t n) { base64(o, (const unsigned char *)v, n * sizeof *v); }

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* sample_positions: a golden-ratio sequence seeded by the shape, sorted and unique, as NumPy computes it */
static size_t positions(const wkv_slot *s, int64_t *out) {
    int64_t size = 1;
    double seed = 0;
    for (int i = 0; i < s->rank; i++) {
        size *= (int64_t)s->shape[i];
        seed += (double)((int64_t)(i + 1) * (int64_t)s->shape[i]);
    }
    if (size <= SAMPLE) {
        for (int64_t i = 0; i < size; i++) out[i] = i;
        return (size_t)size;
    }
    seed = fmod(seed * GOLDEN, 1.0);
    for (int k = 0; k < SAMPLE; k++) out[k] = (int64_t)floor(fmod(seed + (double)k * GOLDEN, 1.0) * (double)size);
    qsort(out, SAMPLE, sizeof *out, by_value);
    size_t u = 0;
    for (size_t k = 0; k < SAMPLE; k++)
        if (!u || out[k] != out[u - 1]) out[u++] = out[k];
    return u;
}

static void output(wkv_out *list, const wkv_graph *g, int index) {
    const wkv_slot *s = &g->slots->out[index];
    int64_t at[SAMPLE];
    float values[SAMPLE];
    size_t count = positions(s, at);
    for (size_t k = 0; k < count; k++) values[k] = wkv_slot_value(s, g->out[index], (size_t)at[k]);
    wkv_out one = {0};
    wkv_field_str(&one, "name", s->name);
    wkv_field_shape(&one, "shape", s);
    wkv_out_raw(&one, ",\"values\":", 10);
    floats(&one, values, count);
    wkv_object_end(&one);
    if (list->len > 1) wkv_out_raw(list, ",", 1);
    wkv_out_raw(list, one.buf, one.len);
    wkv_out_free(&one);
}

int wkv_probe(wkv_window *w, const float *mel, wkv_out *o, char *err, size_t n) {
    wkv_model *m = w->m;
    w->holds_cross = 0;
    if (wkv_encode(m, mel, WKV_DECODE_FULL_WINDOW_S, err, n)) return -1;
    wkv_out list = {0};
    wkv_out_raw(&list, "[", 1);
    for (int i = 0; i < m->n_cross; i++) output(&list, &m->enc, m->enc_cross[i]);
    wkv_out_raw(&list, "]", 1);
    wkv_stepper_reset(&w->s, 1);
    int rc = wkv_stepper_advance(&w->s, m->t.sot, err, n);
    if (!rc) {
        wkv_event_begin(o, "probe");
        wkv_field_bool(o, "final", 1);
        wkv_field_raw(o, "outputs", list.buf);
        wkv_out_raw(o, ",\"logits\":", 10);
        floats(o, w->s.logits, (size_t)m->dims.n_vocab);
        wkv_field_int(o, "n_logits", m->dims.n_vocab);
    }
    wkv_out_free(&list);
    return rc ? -1 : 0;
}
