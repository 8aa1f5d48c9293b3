/* A bundle's slot contract (model.json's "dla": device/spec/slot_contract.py) and each slot's form as the runtime
   takes it, derived from its sizes as device/runner/neuron/neuron_slots.py `derive` does. */
#ifndef WKV_SLOTS_H
#define WKV_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#define WKV_SLOT_RANK 8
#define WKV_GRAPH_SLOTS 16

enum wkv_elem { WKV_ELEM_NONE, WKV_ELEM_F16, WKV_ELEM_F32, WKV_ELEM_I8, WKV_ELEM_I16, WKV_ELEM_U8 };

typedef struct {
    char name[64];
    char dtype[16];             /* the .tflite's TensorType name */
    int rank;
    uint64_t shape[WKV_SLOT_RANK];
    int has_scale;
    double scale;               /* an integer slot's quantization */
    long zero_point;
    /* derived at load */
    enum wkv_elem native;       /* the buffer's element type */
    size_t elem_bytes;
    size_t size, padded;        /* get*Size, get*PaddedSize (has_padded: where exported) */
    int has_padded;
    size_t row, rows, pitch;    /* rows of `row` values, `pitch` elements apart */
} wkv_slot;

typedef struct {
    char role[48];              /* encoder, decoder_step, ... */
    char file[256];
    int n_in, n_out;
    wkv_slot in[WKV_GRAPH_SLOTS], out[WKV_GRAPH_SLOTS];
    const char *in_names[WKV_GRAPH_SLOTS], *out_names[WKV_GRAPH_SLOTS];
} wkv_graph_slots;

typedef struct {
    int n;
    wkv_graph_slots graphs[8];  /* encoder, decoder_step, decoder_step_attention and each shorter window's encoder */
} wkv_contract;

/* model.json of `bundle`: its "dla" section with the encoder and decoder_step, of this runner's contract, each
   graph's recorded slots. 0, or -1 and the line (problem — fix) in `err`. */
int wkv_contract_read(wkv_contract *c, const char *bundle, char *err, size_t n);
wkv_graph_slots *wkv_contract_graph(wkv_contract *c, const char *role);
/* The encoder graph of a window: "encoder" for 30 s, "encoder_10s" for 10 s (device/runner/bundle.py window_role). */
void wkv_window_role(int window_s, char *out, size_t n);

/* Each recorded slot's form from the runtime's sizes (`padded` NULL when it reports none), `suppressed` when
   conversion is. 0, or -1 and one line naming the slot and both sizes. */
int wkv_slots_derive(wkv_graph_slots *g, int input, const size_t *sizes, size_t count, const size_t *padded,
                     int suppressed, char *err, size_t n);

size_t wkv_slot_bytes(const wkv_slot *s);      /* the buffer's bytes: rows × pitch × element */
size_t wkv_slot_elements(const wkv_slot *s);

#endif
