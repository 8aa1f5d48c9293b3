// What Python and the C step share (device/runner/native/step.py mirrors it in ctypes): the structs the step
// reads its weights and scratch through, and the functions the library exports. Any change to a struct or a
// signature bumps WKV_ABI_VERSION; at load, Python checks the version and the struct sizes the library reports.
#ifndef WHISPERKV_NATIVE_STEP_H
#define WHISPERKV_NATIVE_STEP_H

#include <stddef.h>
#include <stdint.h>

#define WKV_ABI_VERSION 1
#define DH 64           // every Whisper has 64 dims a head

typedef struct { const int8_t *q; const float *s; const float *b; int out, in; } QMat;   // q [out][in], s [out][in/16]

typedef struct {
    int n_layer, n_head, d, d_ff, n_vocab, n_audio, a_pad;
    const QMat *qkv, *attn_out, *cross_q, *cross_out, *fc1, *fc2;   // [n_layer] each; qkv: query, key, value rows
    const float *ln;        // [n_layer][6][d]: attn_ln, cross_attn_ln, mlp_ln as (weight, bias)
    const float *ln_f;      // [2][d]
    QMat head;              // the tied embedding as the LM head, [n_vocab][d]
    float *x, *qkv_out, *q, *att, *ff;   // shared scratch: d, 3d, d, d, d_ff, each 64-byte aligned
} Model;

int wkv_abi_version(void);
size_t wkv_sizeof_qmat(void);
size_t wkv_sizeof_model(void);
void wkv_set_threads(int n);
void wkv_pack_cross(const float *k, const float *v, int n_layer, int n_head, int n_audio, int a_pad,
                    int8_t *kt, float *ks, int8_t *vo, float *vs);
void wkv_step(const Model *m, const float *x_in, const float *self_k, const float *self_v, int cap,
              const float *mask, const int8_t *cross_kt, const float *cross_ks, const int8_t *cross_v,
              const float *cross_vs, float *logits, float *new_k, float *new_v, float *attention);

#endif
