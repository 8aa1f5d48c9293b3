/* What a decoding step does with its logits, as core/decode/logit_rules.py and core/decode/timestamps.py do:
   the logit rules (suppressed tokens, the blank rule, the timestamp rules), the top-k pick with its log-probabilities,
   EOT's and the entropy; the fallback's sampling at a temperature with this runner's own seeded generator; the
   language read off the SOT step's logits. The same float32 arithmetic, so the same greedy tokens. */
#ifndef WKV_RULES_H
#define WKV_RULES_H

#include <stdint.h>

#include "rng.h"
#include "tables.h"

#define WKV_MAX_TOP_K 100

typedef struct {
    int timestamps;       /* timestamp tokens are sampled (timestamps or seek_timestamps) */
    int suppress_eot;
    int top_k;            /* 1..WKV_MAX_TOP_K */
} wkv_rule_options;

typedef struct {
    const wkv_tables *t;
    wkv_rule_options o;
    int *suppressed, n_suppressed;   /* every step's, sorted */
    float *x;                        /* [n_vocab]: the rule-applied logits of the last pick */
} wkv_rules;

typedef struct {
    int n;                           /* <= top_k: fewer when the rules left fewer tokens possible */
    int top[WKV_MAX_TOP_K];          /* best first; ties: the lower id */
    float logprob[WKV_MAX_TOP_K];
    float eot_logprob;               /* -INFINITY when EOT is forbidden */
    float entropy;                   /* nats, of the rule-applied distribution */
    float norm;                      /* its log-normaliser: a token's logprob is its rule-applied logit - norm */
} wkv_pick;


/* 0, or -1 when out of memory. */
int wkv_rules_init(wkv_rules *r, const wkv_tables *t, wkv_rule_options o);
void wkv_rules_free(wkv_rules *r);

/* LogitRules.pick: `sampled` are the tokens sampled so far in this decode (not the prefix). out->n is 0 when the
   rules leave no token possible (the Python pick then fails on top[0]); top[0] then holds EOT, logprob[0] -inf. */
void wkv_rules_pick(wkv_rules *r, const float *logits, const int *sampled, int n_sampled, wkv_pick *out);

/* The same, the rules applied to `logits` in place (the decoder's buffer, rewritten by its next step): a copy of
   the vocabulary saved a step. A sample after it takes these logits as they are now. */
void wkv_rules_pick_in_place(wkv_rules *r, float *logits, const int *sampled, int n_sampled, wkv_pick *out);

/* LogitRules.sample: a token drawn from softmax(rule-applied logits / temperature) of the logits `pick` just saw
   (pass the same logits and sampled), its logprob at T=1 in *logprob; EOT, logprob -inf, when `pick` found none. */
int wkv_rules_sample(wkv_rules *r, const float *logits, const int *sampled, int n_sampled, const wkv_pick *pick,
                     double temperature, wkv_rng *rng, float *logprob);
/* The same draw at a given uniform u in [0, 1) (what rng.random() returned): for a test against the Python's. */
int wkv_rules_sample_at(wkv_rules *r, const float *logits, const int *sampled, int n_sampled, const wkv_pick *pick,
                        double temperature, double u, float *logprob);

/* logit_rules.log_softmax's normaliser of x[0..n): log_softmax(x)[i] is x[i] minus it. */
float wkv_log_softmax_norm(const float *x, int n);

/* detect_language: the index (into t->language_*) of the most likely language, and the top `k` (<= 5) indices
   with their probabilities, most likely first. */
int wkv_detect_language(const wkv_tables *t, const float *sot_logits, int k, int *order, double *probs);

#endif
