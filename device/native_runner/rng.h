/* The temperature fallback's generator: a splitmix64-seeded xoshiro256**, this runner's own (the same seed gives the
   same draws here, not NumPy's). */
#ifndef WKV_RNG_H
#define WKV_RNG_H

#include <stdint.h>

typedef struct { uint64_t s[4]; } wkv_rng;

void wkv_rng_seed(wkv_rng *r, uint64_t seed);
double wkv_rng_uniform(wkv_rng *r);     /* [0, 1) */

#endif
