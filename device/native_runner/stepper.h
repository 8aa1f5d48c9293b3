/* How the decoder advances one token through the step graph (core/decode/steppers.py): the self K/V cache held in
   the step's own input buffers (each new row written in place, the mask opened one position a step), or, with
   the cache off, every token so far replayed from an empty cache (core/model/kv_cache.py uncached_by_steps). */
#ifndef WKV_STEPPER_H
#define WKV_STEPPER_H

#include "model.h"

typedef struct {
    wkv_model *m;
    int cached;          /* cache on */
    int cache_len;       /* rows in the self cache */
    int *fed, n_fed;     /* every token fed in this decode (the uncached replay's) */
    float *x;            /* [n_text_state]: the step's input before it is written into its slot */
    float *logits;       /* [n_vocab]: the last step's */
} wkv_stepper;

int wkv_stepper_init(wkv_stepper *s, wkv_model *m);
void wkv_stepper_free(wkv_stepper *s);
/* A fresh decode: the cache emptied. */
void wkv_stepper_reset(wkv_stepper *s, int cached);
/* The logits after `token` into s->logits; 0, or -1 and the runtime's line. */
int wkv_stepper_advance(wkv_stepper *s, int token, char *err, size_t n);
int wkv_stepper_length(const wkv_stepper *s);
int wkv_stepper_full(const wkv_stepper *s);
long long wkv_stepper_bytes(const wkv_stepper *s);


#endif
