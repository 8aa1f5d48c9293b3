/* The loops that run once a token over the whole vocabulary (the logits' fp16 row, the exp sum) in one copy per
   x86-64 level, the one the CPU runs chosen at load (glibc's ifunc): the baseline is SSE2, while AVX2 and AVX-512
   with FMA quarter such a loop's instructions. Contraction into FMA is asked for in those functions only (C99 mode
   turns it off), where the result is a polynomial's and not NumPy's order of operations. */
#ifndef WKV_VECTOR_CLONES_H
#define WKV_VECTOR_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define CONTRACTED __attribute__((optimize("fp-contract=fast")))
#elif defined(__aarch64__) && defined(__GNUC__) && !defined(__clang__)
#define VECTOR_CLONES              /* Armv8-A always has Advanced SIMD with FMA: one copy */
#define CONTRACTED __attribute__((optimize("fp-contract=fast")))
#else
#define VECTOR_CLONES
#define CONTRACTED
#endif

#endif
