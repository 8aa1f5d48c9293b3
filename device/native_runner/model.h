/* The bundle the runner serves on the dla backend (device/runner/neuron/dla_backend.py): its native tables, its
   slot contract, the Neuron runtime and one runtime per graph (encoder, decoder step), each slot found by name;
   and what hello says of them. */
#ifndef WKV_MODEL_H
#define WKV_MODEL_H

#include "graph.h"
#include "json_out.h"
#include "neuron.h"
#include "slots.h"
#include "start.h"
#include "tables.h"
#include "whisperkv_spec.h"

typedef struct {
    int n_mels, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer;
    int n_vocab, n_text_ctx, n_text_state, n_text_head, n_text_layer;
} wkv_dims;

typedef struct {
    char dir[4096];
    wkv_dims dims;
    char sha256[80], dtype[32], cross[16], soc[64], compiler_version[64];
    char library_version[32];
    char version_warning[512];   /* the .dla's compiler and the runtime of other major versions, else "" */
    char graph_sha256[2][80];    /* the encoder's and the step's, as model.json records them */
    char graph_flags[2][1024];   /* their compile flags, as JSON */
    wkv_tables t;
    wkv_contract contract;
    wkv_neuron_lib lib;
    wkv_graph enc, step;
    int n_cross;                 /* 2: cross_k and cross_v; 1: the absorbed form's F */
    const char *const *cross_names;   /* their slots' names */
    int enc_mel, enc_cross[2];   /* slot indices */
    int x, self_k, self_v, mask, step_cross[2], logits, new_k, new_v;
    int cross_mask;              /* the step's cross_mask input (a bundle with shorter windows), else -1 */
    int windows[WKV_DECODE_WINDOWS_S_COUNT], n_windows;   /* the encoder windows served, seconds, shortest first */
    wkv_graph enc_window[WKV_DECODE_WINDOWS_S_COUNT];     /* each shorter window's encoder, opened when first asked */
    float mask_hidden;           /* the mask's hidden value: -10000 in fp16 (dla_backend.MASK_FP16), else -1e9 */
    double load_ms;
} wkv_model;

/* Loads the bundle the flags name, in the Python dla backend's order of checks. 0, or -1 and the one line. */
int wkv_model_load(wkv_model *m, const wkv_flags *f, char *err, size_t n);
void wkv_model_close(wkv_model *m);
/* A graph that failed to open: -1, the line in err saying the likely reason where the versions differ. */
int wkv_model_graph_failed(const wkv_model *m, char *err, size_t n);
/* A mask slot's hidden value: -10000 in fp16 (dla_backend.MASK_FP16: fp16's -1e9 is -inf), else -1e9. */
float wkv_mask_hidden(const wkv_slot *s);
/* hello's backend_detail, an object written into `o` (zeroed). */
void wkv_model_describe(const wkv_model *m, wkv_out *o);
/* "stand-in" or "real" (device/spec/runner_kind.py library_kind). */
const char *wkv_model_npu(const wkv_model *m);

#endif
