/* decode-check: the decoding pieces (tables.c, rules.c, text.c) driven one command line at a time, so that a test
   compares each answer with core/decode's Python (tests/device/native_runner/test_decode_pieces.py).

     decode-check BUNDLE < COMMANDS

   It reads BUNDLE's native tables (a refusal: the one line on stderr, status 1), then answers each line of stdin
   with one line on stdout. TS, SEOT: 0 or 1 (timestamp tokens sampled, EOT suppressed); FILE: raw float32 logits,
   rows of n_vocab; t...: token ids (the tokens sampled before, for pick and sample); HEX: bytes, "-" for none.

     info                          n_vocab eot timestamp_begin n_languages n_suppressed(ts=0) precision max_initial
     bytes                         every token's bytes, HEX each
     embed ID POS                  the token's and the position's fp16 rows, in hex (4 digits an element)
     lang CODE                     its language token, or -1
     pick TS SEOT K FILE ROW t...  n top... | logprob... | eot_logprob entropy norm
     sample TS SEOT K FILE ROW T U t...   the token drawn at uniform U, at temperature T, and its logprob
     detect FILE ROW               the top 5 languages: index probability ...
     push HEX...                   each chunk pushed, then the flush: the text of each, HEX
     decode HEX                    the whole decode, HEX
     text t...                     the tokens' text, HEX
     segments OFFSET FRAMES t...   seek kept_length, then each segment's start end HEX, all on the line
     ratio HEX                     the compression ratio of those bytes
     rng SEED N                    the generator's first N uniforms
     time TS K FILE ROW N          CPU microseconds per pick over N picks */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules.h"
#include "tables.h"
#include "text.h"

static wkv_tables tables;
static char *logits_path;
static float *logits_rows;
static size_t logits_count;

static void put_hex(const void *data, size_t n) {
    const unsigned char *b = data;
    if (!n) fputs("-", stdout);
    for (size_t i = 0; i < n; i++) printf("%02x", b[i]);
}

/* HEX into bytes (malloc'd, the count in *n); "-" is none. */
static unsigned char *from_hex(const char *hex, size_t *n) {
    size_t len = strcmp(hex, "-") == 0 ? 0 : strlen(hex) / 2;
    unsigned char *out = malloc(len + 1);
    for (size_t i = 0; out && i < len; i++) {
        unsigned byte;
        sscanf(hex + 2 * i, "%2x", &byte);
        out[i] = (unsigned char)byte;
    }
    *n = len;
    return out;
}

/* Row `row` of the logits file `path` (read once, kept while the next command names the same file). */
static const float *logits_row(const char *path, long row) {
    if (!logits_path || strcmp(path, logits_path) != 0) {
        free(logits_path);
        free(logits_rows);
        logits_path = strdup(path);
        logits_rows = NULL;
        logits_count = 0;
        FILE *f = fopen(path, "rb");
        long size = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
        if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (logits_rows = malloc((size_t)size)) != NULL)
            logits_count = fread(logits_rows, 1, (size_t)size, f) / sizeof(float);
        if (f) fclose(f);
    }
    size_t vocab = (size_t)tables.n_vocab;
    return row >= 0 && ((size_t)row + 1) * vocab <= logits_count ? logits_rows + (size_t)row * vocab : NULL;
}

/* The remaining words as token ids, into a malloc'd array. */
static int *token_list(char **save, int *n) {
    int *ids = NULL, cap = 0;
    *n = 0;
    for (char *w; (w = strtok_r(NULL, " \t\n", save)) != NULL;) {
        if (*n == cap) {
            int *more = realloc(ids, sizeof(int) * (size_t)(cap = cap ? 2 * cap : 64));
            if (!more) break;
            ids = more;
        }
        ids[(*n)++] = atoi(w);
    }
    return ids;
}

static char *word(char **save) {
    char *w = strtok_r(NULL, " \t\n", save);
    return w ? w : "";
}

static int rules_from(char **save, int timestamps, int suppress_eot, wkv_rules *r, const float **logits) {
    wkv_rule_options o = {timestamps, suppress_eot, atoi(word(save))};
    const char *path = word(save);
    *logits = logits_row(path, atol(word(save)));
    return *logits && wkv_rules_init(r, &tables, o) == 0 ? 0 : -1;
}

static void pick(char **save) {
    int timestamps = atoi(word(save)), suppress_eot = atoi(word(save)), n;
    wkv_rules r;
    const float *logits;
    wkv_pick p;
    if (rules_from(save, timestamps, suppress_eot, &r, &logits)) {
        printf("error");
        return;
    }
    int *sampled = token_list(save, &n);
    wkv_rules_pick(&r, logits, sampled, n, &p);
    printf("%d", p.n);
    for (int i = 0; i < p.n; i++) printf(" %d", p.top[i]);
    printf(" |");
    for (int i = 0; i < p.n; i++) printf(" %.9g", p.logprob[i]);
    printf(" | %.9g %.9g %.9g", p.eot_logprob, p.entropy, p.norm);
    free(sampled);
    wkv_rules_free(&r);
}

static void sample(char **save) {
    int timestamps = atoi(word(save)), suppress_eot = atoi(word(save)), n;
    wkv_rules r;
    const float *logits;
    wkv_pick p;
    float logprob;
    if (rules_from(save, timestamps, suppress_eot, &r, &logits)) {
        printf("error");
        return;
    }
    double temperature = atof(word(save)), u = atof(word(save));
    int *sampled = token_list(save, &n);
    wkv_rules_pick(&r, logits, sampled, n, &p);
    int token = wkv_rules_sample_at(&r, logits, sampled, n, &p, temperature, u, &logprob);
    printf("%d %.9g", token, logprob);
    free(sampled);
    wkv_rules_free(&r);
}

static void detect(char **save) {
    const char *path = word(save);
    const float *logits = logits_row(path, atol(word(save)));
    int order[5];
    double probs[5];
    if (!logits) {
        printf("error");
        return;
    }
    wkv_detect_language(&tables, logits, 5, order, probs);
    for (int i = 0; i < 5 && i < tables.n_languages; i++) printf("%s%d %.9g", i ? " " : "", order[i], probs[i]);
}

static void push(char **save) {
    wkv_utf8 u = {{0}, 0};
    size_t n;
    for (char *w; (w = strtok_r(NULL, " \t\n", save)) != NULL;) {
        unsigned char *chunk = from_hex(w, &n);
        char *out = malloc(3 * (n + 4) + 1);
        put_hex(out, wkv_utf8_push(&u, chunk, n, out));
        putchar(' ');
        free(chunk);
        free(out);
    }
    char tail[16];
    put_hex(tail, wkv_utf8_flush(&u, tail));
}

static void segments(char **save) {
    double offset = atof(word(save));
    int frames = atoi(word(save)), n, n_segments, seek;
    int *tokens = token_list(save, &n);
    wkv_segment *s;
    if (wkv_split_segments(&tables, tokens, n, offset, frames, &s, &n_segments, &seek) == 0) {
        printf("%d %d", seek, wkv_kept_length(&tables, tokens, n));
        for (int i = 0; i < n_segments; i++) {
            printf(" %.17g %.17g ", s[i].start, s[i].end);
            put_hex(s[i].text, strlen(s[i].text));
        }
        wkv_segments_free(s, n_segments);
    }
    free(tokens);
}

static void time_picks(char **save) {
    int timestamps = atoi(word(save));
    wkv_rules r;
    const float *logits;
    wkv_pick p;
    if (rules_from(save, timestamps, 0, &r, &logits)) {
        printf("error");
        return;
    }
    long count = atol(word(save));
    int sampled[3] = {1, 2, 3};   /* text after text: the timestamp rules' whole sum runs */
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long i = 0; i < count; i++) wkv_rules_pick(&r, logits, sampled, 3, &p);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    printf("%.3f", ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3) / (double)count);
    wkv_rules_free(&r);
}

static void answer(char *line) {
    char *save, *cmd = strtok_r(line, " \t\n", &save);
    size_t n, len;
    if (!cmd) return;
    if (strcmp(cmd, "info") == 0) {
        wkv_rules r;
        wkv_rule_options o = {0, 0, 1};
        int ok = wkv_rules_init(&r, &tables, o) == 0;
        printf("%d %d %d %d %d %.17g %d", tables.n_vocab, tables.eot, tables.timestamp_begin, tables.n_languages,
               ok ? r.n_suppressed : -1, tables.precision, tables.max_initial);
        if (ok) wkv_rules_free(&r);
    } else if (strcmp(cmd, "bytes") == 0) {
        for (int id = 0; id < tables.n_vocab; id++) {
            const unsigned char *piece = wkv_token_bytes(&tables, id, &len);
            if (id) putchar(' ');
            put_hex(piece, len);
        }
    } else if (strcmp(cmd, "embed") == 0) {
        long id = atol(word(&save)), pos = atol(word(&save)), width = tables.n_text_state;
        if (id >= 0 && id < tables.n_vocab && pos >= 0 && pos < tables.n_text_ctx) {
            for (long j = 0; j < width; j++) printf("%04x", tables.token_embedding[id * width + j]);
            putchar(' ');
            for (long j = 0; j < width; j++) printf("%04x", tables.positional_embedding[pos * width + j]);
        }
    } else if (strcmp(cmd, "lang") == 0) {
        printf("%d", wkv_language_id(&tables, word(&save)));
    } else if (strcmp(cmd, "pick") == 0) {
        pick(&save);
    } else if (strcmp(cmd, "sample") == 0) {
        sample(&save);
    } else if (strcmp(cmd, "detect") == 0) {
        detect(&save);
    } else if (strcmp(cmd, "push") == 0) {
        push(&save);
    } else if (strcmp(cmd, "decode") == 0 || strcmp(cmd, "ratio") == 0) {
        unsigned char *data = from_hex(word(&save), &n);
        char *text = wkv_utf8_decode(data, n, &len);
        if (cmd[0] == 'd') put_hex(text, len);
        else printf("%.17g", wkv_compression_ratio((const char *)data, n));
        free(text);
        free(data);
    } else if (strcmp(cmd, "text") == 0) {
        int count, *tokens = token_list(&save, &count);
        char *text = wkv_decode_tokens(&tables, tokens, count);
        put_hex(text, text ? strlen(text) : 0);
        free(text);
        free(tokens);
    } else if (strcmp(cmd, "segments") == 0) {
        segments(&save);
    } else if (strcmp(cmd, "rng") == 0) {
        wkv_rng rng;
        wkv_rng_seed(&rng, strtoull(word(&save), NULL, 10));
        for (long i = 0, count = atol(word(&save)); i < count; i++)
            printf("%s%.17g", i ? " " : "", wkv_rng_uniform(&rng));
    } else if (strcmp(cmd, "time") == 0) {
        time_picks(&save);
    } else {
        printf("unknown %s", cmd);
    }
}

int main(int argc, char **argv) {
    char err[1024];
    if (argc != 2) {
        fprintf(stderr, "usage: decode-check BUNDLE < COMMANDS\n");
        return 2;
    }
    if (wkv_tables_read(&tables, argv[1], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        answer(line);
        putchar('\n');
        fflush(stdout);
    }
    free(line);
    free(logits_path);
    free(logits_rows);
    wkv_tables_free(&tables);
    return 0;
}
