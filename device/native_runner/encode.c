#include "encode.h"

#include <stdio.h>
#include <string.h>

#include "say.h"
#include "slot_io.h"

static const int WINDOWS[] = WKV_DECODE_WINDOWS_S;

wkv_graph *wkv_model_encoder(wkv_model *m, int window_s, char *err, size_t n) {
    if (window_s == WKV_DECODE_FULL_WINDOW_S) return &m->enc;
    int w = 0;
    while (w < WKV_DECODE_WINDOWS_S_COUNT - 1 && WINDOWS[w] != window_s) w++;
    wkv_graph *g = &m->enc_window[w];
    if (g->slots) return g;
    char role[48];
    wkv_window_role(window_s, role, sizeof role);
    wkv_graph_slots *slots = wkv_contract_graph(&m->contract, role);
    if (!slots) {
        say(err, n, WKV_NEURON_SLOT_FIX, "model.json records no %s graph", role);
        return NULL;
    }
    if (wkv_graph_open(g, slots, m->dir, &m->lib, 1, err, n)) {
        wkv_graph_close(g);
        memset(g, 0, sizeof *g);
        wkv_model_graph_failed(m, err, n);
        return NULL;
    }
    return g;
}

/* The encoder's [layers, 1, A', d] cross output into the step's [layers, 1, A, d] slot: each layer's A' rows first,
   zeros after (a row the mask hides must still hold no NaN: 0 × NaN is NaN). */
static void into_step(const wkv_slot *to, void *tbuf, const wkv_slot *from, const void *fbuf) {
    size_t positions = (size_t)from->shape[from->rank - 2], all = (size_t)to->shape[to->rank - 2];
    for (size_t l = 0; l < from->rows / positions; l++) {
        wkv_slot_copy(to, tbuf, l * all, from, fbuf, l * positions, positions);
        wkv_slot_zero(to, tbuf, l * all + positions, all - positions);
    }
}

int wkv_encode(wkv_model *m, const float *mel, int window_s, char *err, size_t n) {
    const char *const *cross = m->cross_names;
    wkv_graph *e = wkv_model_encoder(m, window_s, err, n), *g = &m->step;
    if (!e) return -1;
    int at = wkv_graph_slot(e, 1, "mel");
    if (at < 0) return say(err, n, WKV_NEURON_SLOT_FIX, "model.json records no input slot mel for %s", e->slots->file);
    const wkv_slot *in = &e->slots->in[at];
    wkv_slot_put(in, e->in[at], 0, mel, in->rows, WKV_N_FRAMES);     /* each mel row's first frames */
    if (wkv_graph_run(e, err, n)) return -1;
    size_t positions = 0;
    for (int i = 0; i < m->n_cross; i++) {
        if ((at = wkv_graph_slot(e, 0, cross[i])) < 0)
            return say(err, n, WKV_NEURON_SLOT_FIX, "model.json records no output slot %s for %s", cross[i],
                       e->slots->file);
        const wkv_slot *from = &e->slots->out[at];
        positions = (size_t)from->shape[from->rank - 2];
        into_step(&g->slots->in[m->step_cross[i]], g->in[m->step_cross[i]], from, e->out[at]);
    }
    if (m->cross_mask < 0) return 0;
    const wkv_slot *mask = &g->slots->in[m->cross_mask];
    float hidden = wkv_mask_hidden(mask);
    for (size_t i = 0; i < wkv_slot_elements(mask); i++)
        wkv_slot_set(mask, g->in[m->cross_mask], i, i < positions ? 0.0f : hidden);
    return 0;
}
