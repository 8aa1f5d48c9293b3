/* One compiled .dla on the Neuron runtime with its slots (device/runner/neuron/dla_graph.py): the runtime created,
   each recorded slot's form derived from the runtime's sizes, a buffer per slot in that form. */
#ifndef WKV_GRAPH_H
#define WKV_GRAPH_H

#include <stddef.h>

#include "json_out.h"
#include "neuron.h"
#include "slots.h"

typedef struct {
    wkv_graph_slots *slots;
    wkv_neuron_graph g;
    void *in[WKV_GRAPH_SLOTS], *out[WKV_GRAPH_SLOTS];
    size_t in_len[WKV_GRAPH_SLOTS], out_len[WKV_GRAPH_SLOTS];
} wkv_graph;

/* Opens BUNDLE/<slots->file>; 0, or -1 and the line in err. */
int wkv_graph_open(wkv_graph *gr, wkv_graph_slots *slots, const char *bundle, const wkv_neuron_lib *lib, int threads,
                   char *err, size_t n);
int wkv_graph_run(wkv_graph *gr, char *err, size_t n);
void wkv_graph_close(wkv_graph *gr);
/* The index of the input (`input` 1) or output slot named `name`, or -1. */
int wkv_graph_slot(const wkv_graph *gr, int input, const char *name);

/* A slot's shape as a JSON list field, `"shape":[6, 1, 1500, 512]`, as the Python runner lists it. */
void wkv_field_shape(wkv_out *o, const char *key, const wkv_slot *s);

#endif
