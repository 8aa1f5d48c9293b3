/* The logit rules, the pick, the sampling and the language (rules.h), as core/decode/logit_rules.py and
   core/decode/timestamps.py compute them. Where a value decides which tokens are possible (the timestamp rule's
   sum), the arithmetic is NumPy's, in its order; the reported log-probabilities may differ in their last bits. */
#include "rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vector_clones.h"

static void forbid(float *x, int from, int to) {
    for (int i = from < 0 ? 0 : from; i < to; i++) x[i] = -INFINITY;
}

static double shifted_exp(const float *x, size_t i, float m, int in_float32) {
    float d = x[i] - m;
    return in_float32 ? (double)expf(d) : exp((double)d);
}

/* NumPy's pairwise summation (add.reduce over a contiguous float64 array, from 0) of exp(x[i] - m): the same
   additions in the same order, so the same double. in_float32: exp taken in float32 first, as on a float32 array. */
static double pairwise_exp_sum(const float *x, size_t n, float m, int in_float32) {
    if (n < 8) {
        double sum = 0.0;
        for (size_t i = 0; i < n; i++) sum += shifted_exp(x, i, m, in_float32);
        return sum;
    }
    if (n <= 128) {
        double r[8];
        size_t i;
        for (int j = 0; j < 8; j++) r[j] = shifted_exp(x, (size_t)j, m, in_float32);
        for (i = 8; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; j++) r[j] += shifted_exp(x, i + (size_t)j, m, in_float32);
        double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) sum += shifted_exp(x, i, m, in_float32);
        return sum;
    }
    size_t half = n / 2;
    half -= half % 8;
    return pairwise_exp_sum(x, half, m, in_float32) + pairwise_exp_sum(x + half, n - half, m, in_float32);
}

/* The largest value (-inf for none), eight lanes at a time so that the compiler vectorizes it. */
static float max_of(const float *x, int from, int to) {
    float lane[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    float m = -INFINITY;
    int i = from;
    for (; i + 8 <= to; i += 8)
        for (int j = 0; j < 8; j++) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
    for (; i < to; i++) m = x[i] > m ? x[i] : m;
    for (int j = 0; j < 8; j++) m = lane[j] > m ? lane[j] : m;
    return m;
}

/* apply_timestamp_rules, on logits whose suppressed entries are already -inf. */
static void timestamp_rules(float *x, const wkv_tables *t, const int *sampled, int n) {
    int tb = t->timestamp_begin, vocab = t->n_vocab;
    int last_ts = n >= 1 && sampled[n - 1] >= tb;
    int penultimate_ts = n < 2 || sampled[n - 2] >= tb;
    if (last_ts) {
        if (penultimate_ts) forbid(x, tb, vocab);   /* a pair closed: text must follow */
        else forbid(x, 0, t->eot);                  /* an open timestamp: another timestamp or EOT */
    }
    for (int i = n - 1; i >= 0; i--)
        if (sampled[i] >= tb) {                     /* time never goes backwards */
            int last = last_ts && !penultimate_ts ? sampled[i] : sampled[i] + 1;
            forbid(x, tb, last < vocab ? last : vocab);
            break;
        }
    if (n == 0) {
        forbid(x, 0, tb);
        forbid(x, tb + t->max_initial + 1, vocab);
    }
    float stamps_max = max_of(x, tb, vocab), text_max = max_of(x, 0, tb);
    if (stamps_max == -INFINITY) return;
    /* lse >= stamps_max, and lse <= stamps_max + log(count) (each term at most 1): the sum decides only between */
    int undecided = (double)stamps_max <= (double)text_max &&
                    (double)stamps_max + log((double)(vocab - tb)) + 1e-6 > (double)text_max;
    if (undecided) {
        double lse = (double)stamps_max + log(pairwise_exp_sum(x + tb, (size_t)(vocab - tb), stamps_max, 0));
        undecided = lse > (double)text_max;
    }
    if ((double)stamps_max > (double)text_max || undecided) forbid(x, 0, tb);
}

int wkv_rules_init(wkv_rules *r, const wkv_tables *t, wkv_rule_options o) {
    memset(r, 0, sizeof *r);
    r->t = t;
    r->o = o;
    if (r->o.top_k < 1) r->o.top_k = 1;
    if (r->o.top_k > WKV_MAX_TOP_K) r->o.top_k = WKV_MAX_TOP_K;
    /* docs/native-tables.md: the non-speech ids, every id from special_from up but the timestamps when they are
       sampled, and EOT when the request forbids it */
    unsigned char *mask = calloc((size_t)t->n_vocab, 1);
    r->x = malloc(sizeof(float) * (size_t)t->n_vocab);
    r->suppressed = malloc(sizeof(int) * (size_t)t->n_vocab);
    if (!mask || !r->x || !r->suppressed) {
        free(mask);
        wkv_rules_free(r);
        return -1;
    }
    for (int i = 0; i < t->n_non_speech; i++) mask[t->non_speech[i]] = 1;
    int end = o.timestamps ? t->timestamp_begin : t->n_vocab;
    for (int i = t->special_from; i < end; i++) mask[i] = 1;
    if (o.suppress_eot) mask[t->eot] = 1;
    for (int i = 0; i < t->n_vocab; i++)
        if (mask[i]) r->suppressed[r->n_suppressed++] = i;
    free(mask);
    return 0;
}

void wkv_rules_free(wkv_rules *r) {
    free(r->suppressed);
    free(r->x);
    memset(r, 0, sizeof *r);
}

/* LogitRules.apply on x, in place. Applied twice it gives what it gave once: what it forbids stays forbidden and
   the timestamps' sum against the text's best decides the same way. */
static float *apply_in_place(wkv_rules *r, float *x, const int *sampled, int n_sampled) {
    const wkv_tables *t = r->t;
    for (int i = 0; i < r->n_suppressed; i++) x[r->suppressed[i]] = -INFINITY;
    if (n_sampled == 0)
        for (int i = 0; i < t->n_blank; i++) x[t->blank[i]] = -INFINITY;
    if (r->o.timestamps) timestamp_rules(x, t, sampled, n_sampled);
    return x;
}

/* LogitRules.apply, into r->x. */
static float *apply(wkv_rules *r, const float *logits, const int *sampled, int n_sampled) {
    memcpy(r->x, logits, sizeof(float) * (size_t)r->t->n_vocab);
    return apply_in_place(r, r->x, sampled, n_sampled);
}

static float bits_float(int32_t bits) { float f; memcpy(&f, &bits, sizeof f); return f; }
static int32_t float_bits(float f) { int32_t bits; memcpy(&bits, &f, sizeof bits); return bits; }

#define CHUNK 256

/* Z = sum(exp(x - m)) and sum(exp(x - m) * (x - m)) over the vocabulary (-inf adds nothing). Its exp is a float32
   polynomial within an ulp or two of expf (expf over 51865 logits cost the pick ~250 µs): written with fixed trip
   counts and bit-mask selects (no branch), so that the compiler vectorizes it. A chunk's terms are summed as a
   tree, in float32, the chunks' sums in double. Below -87, where expf is under 2^-125, a term counts 0. */
VECTOR_CLONES CONTRACTED static void sum_exp(const float *x, int n, float m, double *total, double *weighted) {
    float e[CHUNK], w[CHUNK];
    double z = 0.0, zw = 0.0;
    int i = 0;
    for (; i + CHUNK <= n; i += CHUNK) {
        for (int j = 0; j < CHUNK; j++) {
            float d = x[i + j] - m;
            int32_t in_range = -(int32_t)(d >= -87.0f);
            float c = bits_float((float_bits(d) & in_range) | (float_bits(-87.0f) & ~in_range));
            float k = (c * 1.44269504f + 12582912.0f) - 12582912.0f;    /* round(c / ln 2), by 1.5 * 2^23 */
            float r = (c - k * 0.693145752f) - k * 1.42860677e-6f;      /* c - k ln 2, ln 2 in two parts */
            float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
                      r * (8.33333377e-3f + r * (1.38888892e-3f + r * 1.98412701e-4f))))));
            e[j] = bits_float(float_bits(p * bits_float(((int32_t)k + 127) * (1 << 23))) & in_range);
            w[j] = e[j] * c;
        }
        /* halves folded onto halves down to 8, each fold a loop of fixed count (one of variable count stays
           scalar); a chunk of 256 leaves the scalar sums in double a quarter of the work they were at 64 */
        for (int j = 0; j < 128; j++) e[j] += e[j + 128], w[j] += w[j + 128];
        for (int j = 0; j < 64; j++) e[j] += e[j + 64], w[j] += w[j + 64];
        for (int j = 0; j < 32; j++) e[j] += e[j + 32], w[j] += w[j + 32];
        for (int j = 0; j < 16; j++) e[j] += e[j + 16], w[j] += w[j + 16];
        for (int j = 0; j < 8; j++) e[j] += e[j + 8], w[j] += w[j + 8];
        z += (((double)e[0] + e[1]) + ((double)e[2] + e[3])) + (((double)e[4] + e[5]) + ((double)e[6] + e[7]));
        zw += (((double)w[0] + w[1]) + ((double)w[2] + w[3])) + (((double)w[4] + w[5]) + ((double)w[6] + w[7]));
    }
    for (; i < n; i++) {
        float d = x[i] - m;
        if (!(d >= -87.0f)) continue;
        double ed = (double)expf(d);
        z += ed;
        zw += ed * (double)d;
    }
    *total = z;
    *weighted = zw;
}

/* The k best of the finite values, best first; an equal value keeps the lower index ahead. A block of BLOCK
   values none of which would enter the list is passed over in one vectorized test. */
#define BLOCK 16
VECTOR_CLONES static int top_k(const float *x, int vocab, int k, int *top, float *value) {
    int n = 0;
    for (int block = 0; block < vocab; block += BLOCK) {
        float threshold = n < k ? -INFINITY : value[k - 1];
        int end = block + BLOCK <= vocab ? block + BLOCK : vocab, entering = 0;
        if (end - block == BLOCK)
            for (int j = 0; j < BLOCK; j++) entering |= x[block + j] > threshold;
        else
            entering = 1;
        for (int i = block; entering && i < end; i++) {
            float v = x[i];
            if (!(v > -INFINITY) || (n == k && !(v > value[k - 1]))) continue;
            int at = n < k ? n++ : k - 1;
            while (at > 0 && value[at - 1] < v) {
                top[at] = top[at - 1];
                value[at] = value[at - 1];
                at--;
            }
            top[at] = i;
            value[at] = v;
        }
    }
    return n;
}

static void pick(wkv_rules *r, const float *x, wkv_pick *out) {
    const wkv_tables *t = r->t;
    float chosen[WKV_MAX_TOP_K];
    out->n = top_k(x, t->n_vocab, r->o.top_k, out->top, chosen);
    out->entropy = 0;
    if (out->n == 0) {           /* the rules left no token possible: EOT in top[0] ends a loop that reads it */
        out->top[0] = t->eot;
        out->norm = out->eot_logprob = out->logprob[0] = -INFINITY;
        return;
    }
    float m = chosen[0];
    double total = 0.0, weighted = 0.0;
    sum_exp(x, t->n_vocab, m, &total, &weighted);
    float log_total = logf((float)total);
    out->norm = m + log_total;
    for (int i = 0; i < out->n; i++) out->logprob[i] = chosen[i] - out->norm;
    out->eot_logprob = x[t->eot] - out->norm;
    /* H = log Z - sum(e * (x - m)) / Z: the Python's formula, with x - m summed rather than x, whose sum nearly
       cancels against m * Z */
    double h = log(total) - weighted / total;
    out->entropy = h > 0 ? (float)h : 0.0f;
}

void wkv_rules_pick(wkv_rules *r, const float *logits, const int *sampled, int n_sampled, wkv_pick *out) {
    pick(r, apply(r, logits, sampled, n_sampled), out);
}

void wkv_rules_pick_in_place(wkv_rules *r, float *logits, const int *sampled, int n_sampled, wkv_pick *out) {
    pick(r, apply_in_place(r, logits, sampled, n_sampled), out);
}

int wkv_rules_sample_at(wkv_rules *r, const float *logits, const int *sampled, int n_sampled, const wkv_pick *pick,
                        double temperature, double u, float *logprob) {
    const wkv_tables *t = r->t;
    *logprob = -INFINITY;
    if (pick->n == 0) return t->eot;
    const float *x = apply(r, logits, sampled, n_sampled);
    float m = x[pick->top[0]], inverse = (float)(1.0 / temperature);
    /* the cumulative sum in double, as np.cumsum(e, dtype=float64), walked twice rather than stored */
    double total = 0.0, cumulative = 0.0;
    for (int i = 0; i < t->n_vocab; i++) total += (double)expf((x[i] - m) * inverse);
    double target = u * total;
    int tok = t->n_vocab - 1;
    for (int i = 0; i < t->n_vocab; i++) {
        cumulative += (double)expf((x[i] - m) * inverse);
        if (cumulative > target) {   /* searchsorted side="right": the first sum past the target */
            tok = i;
            break;
        }
    }
    *logprob = x[tok] - pick->norm;
    return tok;
}

int wkv_rules_sample(wkv_rules *r, const float *logits, const int *sampled, int n_sampled, const wkv_pick *pick,
                     double temperature, wkv_rng *rng, float *logprob) {
    return wkv_rules_sample_at(r, logits, sampled, n_sampled, pick, temperature, wkv_rng_uniform(rng), logprob);
}

float wkv_log_softmax_norm(const float *x, int n) {
    /* float32, its sum of float32 exps in float64 */
    float m = max_of(x, 0, n);
    return m + (float)log(pairwise_exp_sum(x, (size_t)n, m, 1));
}

int wkv_detect_language(const wkv_tables *t, const float *sot_logits, int k, int *order, double *probs) {
    int n = t->n_languages, best[WKV_MAX_LANGUAGES];
    float value[WKV_MAX_LANGUAGES] = {0}, lp[WKV_MAX_LANGUAGES];
    if (n == 0) return -1;
    for (int i = 0; i < n; i++) value[i] = sot_logits[t->language_id[i]];
    float shift = wkv_log_softmax_norm(value, n);
    for (int i = 0; i < n; i++) lp[i] = value[i] - shift;
    float sorted[WKV_MAX_LANGUAGES];
    int found = top_k(lp, n, n, best, sorted);
    if (k > found) k = found;
    for (int j = 0; j < k; j++) {
        order[j] = best[j];
        probs[j] = (double)expf(lp[best[j]]);
    }
    return best[0];
}
