/* A bundle's native tables (docs/native-tables.md, device/spec/native_tables.py): the ids, the suppress lists and
   the language tokens from native_tables.json, each token's bytes and the fp16 embeddings mapped from their files.
   The runner never parses tokenizer.json. */
#ifndef WKV_TABLES_H
#define WKV_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define WKV_MAX_LANGUAGES 128
#define WKV_MAX_BLANK 8

typedef struct {
    int n_vocab, n_text_ctx, n_text_state;
    /* special ids, the fields of core/model/tokenizer.py::SpecialTokens */
    int eot, sot, translate, transcribe, sot_lm, sot_prev, no_speech, no_timestamps, timestamp_begin;
    int n_languages;
    char language_code[WKV_MAX_LANGUAGES][8];   /* in the tokenizer's order */
    int language_id[WKV_MAX_LANGUAGES];
    int *non_speech, n_non_speech;              /* malloc'd */
    int special_from;
    int blank[WKV_MAX_BLANK], n_blank;
    double precision;                           /* seconds per timestamp token */
    int max_initial;                            /* the first timestamp is at most timestamp_begin + max_initial */
    const uint32_t *offsets;                    /* [n_vocab + 1] into bytes */
    const unsigned char *bytes;
    const uint16_t *token_embedding;            /* fp16 [n_vocab, n_text_state] */
    const uint16_t *positional_embedding;       /* fp16 [n_text_ctx, n_text_state] */
    void *map[3];                               /* the mapped files: token bytes, token and positional embedding */
    size_t map_len[3];
} wkv_tables;

/* Reads BUNDLE/native_tables.json (model.json's "native_tables" key names it) and maps its files, with every check
   of device/toolchain/native_tables.py::read_native_tables. 0, or -1 and one line (problem — fix) in err. */
int wkv_tables_read(wkv_tables *t, const char *bundle, char *err, size_t n);
void wkv_tables_free(wkv_tables *t);

/* Token id's bytes (none for a special token or an id out of range). */
const unsigned char *wkv_token_bytes(const wkv_tables *t, int id, size_t *len);
/* The language token of `code`, or -1. */
int wkv_language_id(const wkv_tables *t, const char *code);

#endif
