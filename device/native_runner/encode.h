/* The encoder of a request's window (device/runner/neuron/dla_backend.py encode_window): 30 s, or a shorter window's
   own graph over the mel's first window_s × 100 frames, its cross state written into the step's first positions,
   zeros after, and the step's cross mask hiding the rest (device/runner/tflite/cross_window.py). */
#ifndef WKV_ENCODE_H
#define WKV_ENCODE_H

#include "model.h"

/* The encoder graph of `window_s` (one of m->windows), opened on first use; NULL and the line in err. */
wkv_graph *wkv_model_encoder(wkv_model *m, int window_s, char *err, size_t n);
/* The window's cross state: `window_s`'s encoder run on `mel` ([80 * 3000] fp32) and its outputs written into the
   step's cross slots. 0, or -1 and the line. */
int wkv_encode(wkv_model *m, const float *mel, int window_s, char *err, size_t n);

#endif
