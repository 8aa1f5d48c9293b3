#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wkv_graph_open(wkv_graph *gr, wkv_graph_slots *slots, const char *bundle, const wkv_neuron_lib *lib, int threads,
                   char *err, size_t n) {
    char dla[4608];
    memset(gr, 0, sizeof *gr);
    gr->slots = slots;
    snprintf(dla, sizeof dla, "%s/%s", bundle, slots->file);
    wkv_neuron_graph *g = &gr->g;
    if (wkv_neuron_graph_open(g, lib, dla, threads, err, n)) return -1;
    if (wkv_slots_derive(slots, 1, g->in_size, g->n_in, g->has_in_padded ? g->in_padded : NULL, lib->suppressed, err,
                         n) ||
        wkv_slots_derive(slots, 0, g->out_size, g->n_out, g->has_out_padded ? g->out_padded : NULL, lib->suppressed,
                         err, n))
        return -1;
    g->in_names = slots->in_names;
    g->out_names = slots->out_names;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < (k ? slots->n_out : slots->n_in); i++) {
            size_t bytes = wkv_slot_bytes(k ? &slots->out[i] : &slots->in[i]);
            (k ? gr->out_len : gr->in_len)[i] = bytes;
            if (!((k ? gr->out : gr->in)[i] = calloc(bytes ? bytes : 1, 1))) {
                snprintf(err, n, "out of memory for the %s slot %s of %s", k ? "output" : "input",
                         (k ? slots->out : slots->in)[i].name, slots->file);
                return -1;
            }
        }
    return 0;
}

int wkv_graph_run(wkv_graph *gr, char *err, size_t n) {
    return wkv_neuron_run(&gr->g, gr->in, gr->in_len, gr->out, gr->out_len, err, n);
}

void wkv_graph_close(wkv_graph *gr) {
    wkv_neuron_graph_release(&gr->g);
    for (int i = 0; i < WKV_GRAPH_SLOTS; i++) {
        free(gr->in[i]);
        free(gr->out[i]);
        gr->in[i] = gr->out[i] = NULL;
    }
}

int wkv_graph_slot(const wkv_graph *gr, int input, const char *name) {
    int count = input ? gr->slots->n_in : gr->slots->n_out;
    for (int i = 0; i < count; i++)
        if (!strcmp((input ? gr->slots->in : gr->slots->out)[i].name, name)) return i;
    return -1;
}

void wkv_field_shape(wkv_out *o, const char *key, const wkv_slot *s) {
    wkv_out shape = {0};
    wkv_out_raw(&shape, "[", 1);
    for (int i = 0; i < s->rank; i++) {
        char num[24];
        snprintf(num, sizeof num, "%s%llu", i ? ", " : "", (unsigned long long)s->shape[i]);
        wkv_out_raw(&shape, num, strlen(num));
    }
    wkv_out_raw(&shape, "]", 1);
    wkv_field_raw(o, key, shape.buf);
    wkv_out_free(&shape);
}
