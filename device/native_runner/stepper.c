#include "stepper.h"

#include <stdlib.h>
#include <string.h>

#include "slot_io.h"

int wkv_stepper_init(wkv_stepper *s, wkv_model *m) {
    memset(s, 0, sizeof *s);
    s->m = m;
    s->fed = malloc(sizeof(int) * (size_t)(m->dims.n_text_ctx + 1));
    s->x = malloc(sizeof(float) * (size_t)m->dims.n_text_state);
    s->logits = malloc(sizeof(float) * (size_t)m->dims.n_vocab);
    return s->fed && s->x && s->logits ? 0 : -1;
}

void wkv_stepper_free(wkv_stepper *s) {
    free(s->fed);
    free(s->x);
    free(s->logits);
}

/* An empty cache: zeroed rows, every position hidden but the current token's (KVCache.mask). */
static void empty_cache(wkv_stepper *s) {
    wkv_model *m = s->m;
    wkv_graph *g = &m->step;
    memset(g->in[m->self_k], 0, g->in_len[m->self_k]);
    memset(g->in[m->self_v], 0, g->in_len[m->self_v]);
    const wkv_slot *mask = &g->slots->in[m->mask];
    size_t positions = wkv_slot_elements(mask);
    for (size_t i = 0; i < positions; i++)
        wkv_slot_set(mask, g->in[m->mask], i, i + 1 == positions ? 0.0f : m->mask_hidden);
    s->cache_len = 0;
}

void wkv_stepper_reset(wkv_stepper *s, int cached) {
    s->cached = cached;
    s->n_fed = 0;
    empty_cache(s);
}

/* One step graph call on the cache as it is, its new K/V written at cache_len. */
static int step(wkv_stepper *s, int token, char *err, size_t n) {
    wkv_model *m = s->m;
    wkv_graph *g = &m->step;
    int d = m->dims.n_text_state, layers = m->dims.n_text_layer, ctx = m->dims.n_text_ctx;
    const uint16_t *tok = m->t.token_embedding + (size_t)token * (size_t)d;
    const uint16_t *pos = m->t.positional_embedding + (size_t)s->cache_len * (size_t)d;
    /* the sum in fp32, then the slot's element (embed(); docs/native-tables.md) */
    for (int j = 0; j < d; j++) s->x[j] = wkv_f32_from_f16(tok[j]) + wkv_f32_from_f16(pos[j]);
    wkv_slot_put(&g->slots->in[m->x], g->in[m->x], 0, s->x, 1, (size_t)d);
    if (wkv_graph_run(g, err, n)) return -1;
    wkv_slot_get(&g->slots->out[m->logits], g->out[m->logits], 0, s->logits, 1, (size_t)m->dims.n_vocab);
    for (int l = 0; l < layers; l++) {
        size_t row = (size_t)l * (size_t)ctx + (size_t)s->cache_len;
        wkv_slot_copy(&g->slots->in[m->self_k], g->in[m->self_k], row, &g->slots->out[m->new_k], g->out[m->new_k],
                      (size_t)l, 1);
        wkv_slot_copy(&g->slots->in[m->self_v], g->in[m->self_v], row, &g->slots->out[m->new_v], g->out[m->new_v],
                      (size_t)l, 1);
    }
    wkv_slot_set(&g->slots->in[m->mask], g->in[m->mask], (size_t)s->cache_len, 0.0f);
    s->cache_len++;
    return 0;
}

int wkv_stepper_advance(wkv_stepper *s, int token, char *err, size_t n) {
    if (s->n_fed <= s->m->dims.n_text_ctx) s->fed[s->n_fed++] = token;
    if (s->cached) return step(s, token, err, n);
    empty_cache(s);
    for (int i = 0; i < s->n_fed; i++)
        if (step(s, s->fed[i], err, n)) return -1;
    return 0;
}

int wkv_stepper_length(const wkv_stepper *s) { return s->n_fed; }

int wkv_stepper_full(const wkv_stepper *s) { return s->n_fed >= s->m->dims.n_text_ctx; }

long long wkv_stepper_bytes(const wkv_stepper *s) {
    if (!s->cached) return 0;
    const wkv_slot *k = &s->m->step.slots->in[s->m->self_k];
    long long item = k->native == WKV_ELEM_F16 ? 2 : 4;
    return (long long)s->n_fed * 2 * s->m->dims.n_text_layer * s->m->dims.n_text_state * item;
}
