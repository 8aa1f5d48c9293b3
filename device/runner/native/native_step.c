// The decoder step of Whisper in C (device/runner/native/library.py builds it, native/step.py calls it).
//
// Why C: at step 100 the step reads ~100 MB (weights, cross K/V, cache) and ONNX Runtime's ~250 nodes keep it
// at ~75 % of the memory's speed. Here one call runs the whole step, fewer bytes are read (the cross K/V in
// int8, a scale per position and head: a quarter of the bytes, packed once a window) and the memory is streamed at
// its full speed (docs/benchmarks.md).
//
// Weights are onnx-int8b's, bit for bit: int8 with one fp32 scale per 16 inputs of a row (ONNX Runtime's
// symmetric 8-bit MatMulNBits blocks), activations stay fp32. Rows of a matrix are split over the OpenMP team;
// the small vectors (LayerNorm of x) are computed by every thread to save a barrier.
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native_step.h"

#define HIDDEN -1e30f   // masked scores: finite, since -ffast-math assumes no infinities

static inline __m512 load_q8(const int8_t *q) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)q)));
}

static inline float dot_q8(const int8_t *q, const float *s, const float *x, int in) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    for (int b = 0; b < in / 16; b += 2) {
        a0 = _mm512_fmadd_ps(_mm512_mul_ps(load_q8(q + 16 * b), _mm512_loadu_ps(x + 16 * b)), _mm512_set1_ps(s[b]), a0);
        a1 = _mm512_fmadd_ps(_mm512_mul_ps(load_q8(q + 16 * b + 16), _mm512_loadu_ps(x + 16 * b + 16)),
                             _mm512_set1_ps(s[b + 1]), a1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

// y = W x + b, or y += W x + b with `accumulate` (a residual); rows split over the team, a barrier at the end.
static void matvec(const QMat *m, const float *x, float *y, int accumulate) {
    #pragma omp for schedule(static)
    for (int r = 0; r < m->out; r++) {
        float v = dot_q8(m->q + (size_t)r * m->in, m->s + (size_t)r * (m->in / 16), x, m->in);
        if (m->b) v += m->b[r];
        y[r] = accumulate ? y[r] + v : v;
    }
}

static void layer_norm(const float *x, const float *w, const float *b, float *y, int d) {
    float mu = 0, var = 0;
    for (int i = 0; i < d; i++) mu += x[i];
    mu /= d;
    for (int i = 0; i < d; i++) { float c = x[i] - mu; var += c * c; }
    float r = 1.0f / sqrtf(var / d + 1e-5f);
    for (int i = 0; i < d; i++) y[i] = (x[i] - mu) * r * w[i] + b[i];
}

static void softmax(float *s, int n) {
    float mx = HIDDEN, sum = 0;
    for (int i = 0; i < n; i++) mx = s[i] > mx ? s[i] : mx;
    for (int i = 0; i < n; i++) { s[i] = expf(s[i] - mx); sum += s[i]; }
    float r = 1.0f / sum;
    for (int i = 0; i < n; i++) s[i] *= r;
}

static inline float dot64(const float *a, const float *b) {
    __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(a), _mm512_loadu_ps(b));
    for (int j = 16; j < DH; j += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + j), _mm512_loadu_ps(b + j), acc);
    return _mm512_reduce_add_ps(acc);
}

// One head of self-attention over the cache's slots [cap][DH] (those the additive mask hides are skipped) and
// the current token (mask[cap]).
static void self_head(const float *q, const float *kc, const float *vc, int cap, const float *mask,
                      const float *k_new, const float *v_new, float *out, float *sc) {
    for (int t = 0; t < cap; t++)
        sc[t] = mask[t] < -1e8f ? HIDDEN : dot64(q, kc + (size_t)t * DH) * 0.125f + mask[t];
    sc[cap] = dot64(q, k_new) * 0.125f + mask[cap];
    softmax(sc, cap + 1);
    __m512 o[DH / 16];
    for (int j = 0; j < DH / 16; j++) o[j] = _mm512_mul_ps(_mm512_set1_ps(sc[cap]), _mm512_loadu_ps(v_new + 16 * j));
    for (int t = 0; t < cap; t++) {
        if (sc[t] == 0.0f) continue;
        __m512 p = _mm512_set1_ps(sc[t]);
        const float *v = vc + (size_t)t * DH;
        for (int j = 0; j < DH / 16; j++) o[j] = _mm512_fmadd_ps(p, _mm512_loadu_ps(v + 16 * j), o[j]);
    }
    for (int j = 0; j < DH / 16; j++) _mm512_storeu_ps(out + 16 * j, o[j]);
}

// One head of cross-attention over int8 keys and values with a scale per position. kt [DH][a_pad]: the keys
// transposed, so the scores are one AXPY over the audio positions per dim (no horizontal sums), then scaled per
// position by ks; v [a_pad][DH] with vs folded into the softmax weights. `weights` (may be NULL) gets the softmax.
static void cross_head(const float *q, const int8_t *kt, const float *ks, const int8_t *v, const float *vs,
                       int n_audio, int a_pad, float *out, float *sc, float *weights) {
    for (int t = 0; t < a_pad; t += 16) _mm512_storeu_ps(sc + t, _mm512_setzero_ps());
    for (int j = 0; j < DH; j++) {
        __m512 qj = _mm512_set1_ps(q[j] * 0.125f);
        const int8_t *row = kt + (size_t)j * a_pad;
        for (int t = 0; t < a_pad; t += 16)
            _mm512_storeu_ps(sc + t, _mm512_fmadd_ps(qj, load_q8(row + t), _mm512_loadu_ps(sc + t)));
    }
    for (int t = 0; t < a_pad; t += 16)
        _mm512_storeu_ps(sc + t, _mm512_mul_ps(_mm512_loadu_ps(sc + t), _mm512_loadu_ps(ks + t)));
    softmax(sc, n_audio);
    if (weights) memcpy(weights, sc, sizeof(float) * n_audio);
    __m512 o[DH / 16];
    for (int j = 0; j < DH / 16; j++) o[j] = _mm512_setzero_ps();
    for (int t = 0; t < n_audio; t++) {
        __m512 p = _mm512_set1_ps(sc[t] * vs[t]);
        const int8_t *vt = v + (size_t)t * DH;
        for (int j = 0; j < DH / 16; j++) o[j] = _mm512_fmadd_ps(p, load_q8(vt + 16 * j), o[j]);
    }
    for (int j = 0; j < DH / 16; j++) _mm512_storeu_ps(out + 16 * j, o[j]);
}

static float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

void wkv_set_threads(int n) { if (n > 0) omp_set_num_threads(n); }

int wkv_abi_version(void) { return WKV_ABI_VERSION; }
size_t wkv_sizeof_qmat(void) { return sizeof(QMat); }
size_t wkv_sizeof_model(void) { return sizeof(Model); }

static void quantize_row(const float *x, int n, int stride, int8_t *q, float *scale) {
    float mx = 0;
    for (int j = 0; j < n; j++) mx = fabsf(x[j]) > mx ? fabsf(x[j]) : mx;
    float s = mx / 127.0f, inv = mx > 0 ? 127.0f / mx : 0.0f;
    for (int j = 0; j < n; j++) q[(size_t)j * stride] = (int8_t)lrintf(x[j] * inv);
    *scale = s;
}

// k, v [L][H][A][DH] fp32 (the encoder's head-major cross K/V) -> int8 with an fp32 scale per position and head:
// kt [L][H][DH][a_pad], ks [L][H][a_pad], vo [L][H][a_pad][DH], vs [L][H][a_pad]; the padding zero. Once a window.
void wkv_pack_cross(const float *k, const float *v, int n_layer, int n_head, int n_audio, int a_pad,
                    int8_t *kt, float *ks, int8_t *vo, float *vs) {
    #pragma omp parallel for schedule(static)
    for (int lh = 0; lh < n_layer * n_head; lh++) {
        const float *ksrc = k + (size_t)lh * n_audio * DH, *vsrc = v + (size_t)lh * n_audio * DH;
        int8_t *kd = kt + (size_t)lh * DH * a_pad, *vd = vo + (size_t)lh * a_pad * DH;
        float *ksd = ks + (size_t)lh * a_pad, *vsd = vs + (size_t)lh * a_pad;
        memset(kd, 0, (size_t)DH * a_pad);
        memset(vd, 0, (size_t)a_pad * DH);
        for (int t = n_audio; t < a_pad; t++) ksd[t] = vsd[t] = 0.0f;
        for (int t = 0; t < n_audio; t++) {
            quantize_row(ksrc + (size_t)t * DH, DH, a_pad, kd + t, ksd + t);
            quantize_row(vsrc + (size_t)t * DH, DH, 1, vd + (size_t)t * DH, vsd + t);
        }
    }
}

// One token. x_in [d]; self_k/self_v [L][H][cap][DH] (the KV cache, head-major); mask [cap+1] (additive, the last
// the current token); cross_kt/cross_v from wkv_pack_cross -> logits [V], new_k/new_v [L][d] (the caller writes
// them into the cache), and with `attention` non-NULL every head's cross-attention weights [L][H][n_audio].
void wkv_step(const Model *m, const float *x_in, const float *self_k, const float *self_v, int cap,
              const float *mask, const int8_t *cross_kt, const float *cross_ks, const int8_t *cross_v,
              const float *cross_vs, float *logits,
              float *new_k, float *new_v, float *attention) {
    const int d = m->d, H = m->n_head;
    const int n_sc = cap + 1 > m->a_pad ? cap + 1 : m->a_pad;
    memcpy(m->x, x_in, sizeof(float) * d);
    #pragma omp parallel
    {
        // This thread's LayerNorm of x and attention scores, 64-byte aligned: the compiler's vector loops over them
        // (sums, exp) start with a scalar run up to the first aligned element, so an address that moved between
        // runs would move where the vector lanes fall, and the last bits of a sum with it.
        float *h = aligned_alloc(64, sizeof(float) * ((d + n_sc + 31) / 16 * 16)), *sc = h + (d + 15) / 16 * 16;
        for (int l = 0; l < m->n_layer; l++) {
            const float *ln = m->ln + (size_t)l * 6 * d;
            layer_norm(m->x, ln, ln + d, h, d);
            matvec(&m->qkv[l], h, m->qkv_out, 0);
            #pragma omp for schedule(static)
            for (int i = 0; i < H; i++) {
                size_t off = ((size_t)l * H + i) * cap * DH;
                self_head(m->qkv_out + i * DH, self_k + off, self_v + off, cap, mask,
                          m->qkv_out + d + i * DH, m->qkv_out + 2 * d + i * DH, m->att + i * DH, sc);
            }
            #pragma omp single nowait
            {
                memcpy(new_k + (size_t)l * d, m->qkv_out + d, sizeof(float) * d);
                memcpy(new_v + (size_t)l * d, m->qkv_out + 2 * d, sizeof(float) * d);
            }
            matvec(&m->attn_out[l], m->att, m->x, 1);
            layer_norm(m->x, ln + 2 * d, ln + 3 * d, h, d);
            matvec(&m->cross_q[l], h, m->q, 0);
            #pragma omp for schedule(static)
            for (int i = 0; i < H; i++) {
                size_t off = ((size_t)l * H + i) * DH * m->a_pad, soff = ((size_t)l * H + i) * m->a_pad;
                cross_head(m->q + i * DH, cross_kt + off, cross_ks + soff, cross_v + off, cross_vs + soff, m->n_audio,
                           m->a_pad, m->att + i * DH, sc,
                           attention ? attention + ((size_t)l * H + i) * m->n_audio : NULL);
            }
            matvec(&m->cross_out[l], m->att, m->x, 1);
            layer_norm(m->x, ln + 4 * d, ln + 5 * d, h, d);
            matvec(&m->fc1[l], h, m->ff, 0);
            #pragma omp for schedule(static)
            for (int i = 0; i < m->d_ff; i++) m->ff[i] = gelu(m->ff[i]);
            matvec(&m->fc2[l], m->ff, m->x, 1);
        }
        layer_norm(m->x, m->ln_f, m->ln_f + d, h, d);
        matvec(&m->head, h, logits, 0);
        free(h);
    }
}
