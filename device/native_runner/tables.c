/* A bundle's native tables (tables.h), read with the checks and the words of
   device/toolchain/native_tables.py::read_native_tables, so that a damaged table gives the Python reader's line. */
#define _POSIX_C_SOURCE 200809L

#include "tables.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_in.h"
#include "say.h"
#include "whisperkv_spec.h"

/* device/toolchain/native_tables.py's EXPORT_FIX: the test holds this line to the Python reader's */
static const char *const JSON_FIELDS[] = WKV_TABLES_JSON_FIELDS;
static const char *const DIMS_FIELDS[] = WKV_TABLES_DIMS_FIELDS;
static const char *const SPECIAL_FIELDS[] = WKV_TABLES_SPECIAL_FIELDS;
static const char *const SUPPRESS_FIELDS[] = WKV_TABLES_SUPPRESS_FIELDS;
static const char *const TIMESTAMP_FIELDS[] = WKV_TABLES_TIMESTAMP_FIELDS;
enum { FORMAT, VERSION, DIMS, SPECIAL, LANGUAGES, SUPPRESS, TIMESTAMPS, FILES };
enum { NON_SPEECH, SPECIAL_FROM, BLANK };
enum { TOKEN_BYTES, TOKEN_EMBEDDING, POSITIONAL_EMBEDDING };
static const char *const FILE_KEYS[] = {"token_bytes", "token_embedding", "positional_embedding"};

/* The name model.json gives the tables' JSON; the spec's name for a folder of tables alone. */
static int json_name(const char *bundle, char *name, size_t n, char *err, size_t en) {
    char path[4096];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/model.json", bundle);
    char *text = wkv_read_file(path, &len), why[160];
    snprintf(name, n, "%s", WKV_TABLES_JSON_FILE);
    if (!text) return 0;
    wkv_json j;
    int rc = 0;
    if (wkv_json_parse(&j, text, len, why, sizeof why) == 0) {
        char *given = wkv_json_string(&j, wkv_json_field(&j, WKV_TABLES_MANIFEST_KEY), NULL);
        if (given && !strchr(given, '/')) snprintf(name, n, "%s", given);
        else rc = say(err, en, WKV_TABLES_FIX, "%s names no native tables (%s): it was exported before they existed",
                      path, WKV_TABLES_MANIFEST_KEY);
        free(given);
        wkv_json_free(&j);
    }
    free(text);
    return rc;
}

static int read_int(const wkv_json *j, int tok, int *out) {
    uint64_t v;
    if (wkv_json_uint(j, tok, &v) != 1 || v > 0x7fffffff) return -1;
    *out = (int)v;
    return 0;
}

/* Python's repr of a bytes object, as the Python reader words a wrong magic. */
static void bytes_repr(const unsigned char *b, size_t n, char *out) {
    char quote = memchr(b, '\'', n) && !memchr(b, '"', n) ? '"' : '\'';
    char *o = out;
    *o++ = 'b', *o++ = quote;
    for (size_t i = 0; i < n; i++) {
        unsigned c = b[i];
        if (c == '\\' || c == (unsigned)quote) o += sprintf(o, "\\%c", c);
        else if (c == '\t' || c == '\n' || c == '\r') o += sprintf(o, "\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
        else if (c >= 0x20 && c < 0x7f) *o++ = (char)c;
        else o += sprintf(o, "\\x%02x", c);
    }
    *o++ = quote, *o = 0;
}

/* 0 and the file mapped (an empty file: none), or -1 with errno set. */
static int map_file(const char *path, void **p, size_t *len) {
    struct stat st;
    int fd = open(path, O_RDONLY), rc = -1;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        *len = (size_t)st.st_size;
        *p = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
        if (*p == MAP_FAILED) *p = NULL;
        else rc = 0;
    }
    if (fd >= 0) close(fd);
    return rc;
}

#define TOKEN_BYTES_REFUSE(...) say(err, n, WKV_TABLES_FIX, "the native token bytes table " __VA_ARGS__)

static int check_token_bytes(wkv_tables *t, char *err, size_t n) {
    const unsigned char *d = t->map[TOKEN_BYTES];
    size_t len = t->map_len[TOKEN_BYTES], head = WKV_TABLES_TOKEN_BYTES_HEADER;
    uint32_t version, count, size;
    char magic[40];
    if (len < head) return TOKEN_BYTES_REFUSE("is %zu bytes, shorter than its %zu-byte header", len, head);
    memcpy(&version, d + 4, 4), memcpy(&count, d + 8, 4), memcpy(&size, d + 12, 4);
    if (memcmp(d, WKV_TABLES_TOKEN_BYTES_MAGIC, 4) != 0) {
        bytes_repr(d, 4, magic);
        return TOKEN_BYTES_REFUSE("starts with %s, not '%s'", magic, WKV_TABLES_TOKEN_BYTES_MAGIC);
    }
    if (version != WKV_TABLES_VERSION)
        return TOKEN_BYTES_REFUSE("is version %u, this runner reads %d", version, WKV_TABLES_VERSION);
    if (count != (uint32_t)t->n_vocab) return TOKEN_BYTES_REFUSE("holds %u tokens, the model %d", count, t->n_vocab);
    size_t start = head + 4 * ((size_t)count + 1);
    if (len != start + size) return TOKEN_BYTES_REFUSE("is %zu bytes where its header says %zu", len, start + size);
    t->offsets = (const uint32_t *)(d + head);
    t->bytes = d + start;
    int ordered = t->offsets[0] == 0 && t->offsets[count] == size;
    for (uint32_t i = 0; ordered && i < count; i++) ordered = t->offsets[i] <= t->offsets[i + 1];
    if (!ordered) return TOKEN_BYTES_REFUSE("has offsets that do not run from 0 to its byte count in order");
    return 0;
}

static int map_tables(wkv_tables *t, const char *bundle, const wkv_json *j, const char *json_path, char *err,
                      size_t n) {
    int files = wkv_json_field(j, JSON_FIELDS[FILES]);
    size_t rows[3] = {0, (size_t)t->n_vocab, (size_t)t->n_text_ctx};
    for (int k = TOKEN_BYTES; k <= POSITIONAL_EMBEDDING; k++) {
        int entry = wkv_json_member(j, files, FILE_KEYS[k]);
        char *file = wkv_json_string(j, wkv_json_member(j, entry, "file"), NULL), path[4096];
        char *dtype = wkv_json_string(j, wkv_json_member(j, entry, "dtype"), NULL);
        int named = file && !strchr(file, '/') &&
                    (k == TOKEN_BYTES || (dtype && strcmp(dtype, WKV_TABLES_EMBEDDING_DTYPE) == 0));
        snprintf(path, sizeof path, "%s/%s", bundle, named ? file : "");
        free(dtype);
        int rc = 0, mapped = named && map_file(path, &t->map[k], &t->map_len[k]) == 0;
        size_t want = rows[k] * (size_t)t->n_text_state * 2;
        if (!named) {
            rc = say(err, n, WKV_TABLES_FIX, "%s has a malformed %s.%s", json_path, JSON_FIELDS[FILES], FILE_KEYS[k]);
        } else if (k == TOKEN_BYTES) {
            rc = mapped ? check_token_bytes(t, err, n)
                        : say(err, n, WKV_TABLES_FIX, "cannot read %s (%s)", path, strerror(errno));
        } else if (!mapped || t->map_len[k] != want) {
            char got[48];
            snprintf(got, sizeof got, mapped ? "%zu bytes" : "missing", t->map_len[k]);
            rc = say(err, n, WKV_TABLES_FIX, "the native table %s is %s, %zu bytes for [%zu, %d] fp16 expected", file,
                     got, want, rows[k], t->n_text_state);
        }
        free(file);
        if (rc) return -1;
    }
    t->token_embedding = t->map[TOKEN_EMBEDDING];
    t->positional_embedding = t->map[POSITIONAL_EMBEDDING];
    return 0;
}

static int read_ints(const wkv_json *j, int arr, int *out, int max) {
    int count = wkv_json_count(j, arr);
    if (wkv_json_kind(j, arr) != WKV_J_ARRAY || count > max) return -1;
    for (int i = 0; i < count; i++)
        if (read_int(j, wkv_json_item(j, arr, i), &out[i])) return -1;
    return count;
}

static int read_languages(wkv_tables *t, const wkv_json *j, int arr) {
    t->n_languages = wkv_json_count(j, arr);
    if (wkv_json_kind(j, arr) != WKV_J_ARRAY || t->n_languages > WKV_MAX_LANGUAGES) return -1;
    for (int i = 0; i < t->n_languages; i++) {
        int item = wkv_json_item(j, arr, i);
        char *code = wkv_json_string(j, wkv_json_member(j, item, "code"), NULL);
        int bad = !code || strlen(code) >= sizeof t->language_code[i] ||
                  read_int(j, wkv_json_member(j, item, "id"), &t->language_id[i]);
        bad = bad || t->language_id[i] >= t->n_vocab;
        if (!bad) strcpy(t->language_code[i], code);
        free(code);
        if (bad) return -1;
    }
    return 0;
}

/* Every field but the files; the name of the first malformed one, or NULL. */
static const char *read_fields(wkv_tables *t, const wkv_json *j) {
    int dims = wkv_json_field(j, JSON_FIELDS[DIMS]), special = wkv_json_field(j, JSON_FIELDS[SPECIAL]);
    int *dim_of[] = {&t->n_vocab, &t->n_text_ctx, &t->n_text_state};
    int *special_of[] = {&t->eot, &t->sot, &t->translate, &t->transcribe, &t->sot_lm, &t->sot_prev, &t->no_speech,
                         &t->no_timestamps, &t->timestamp_begin};
    for (int i = 0; i < WKV_TABLES_DIMS_FIELDS_COUNT; i++)
        if (read_int(j, wkv_json_member(j, dims, DIMS_FIELDS[i]), dim_of[i]) || *dim_of[i] <= 0)
            return JSON_FIELDS[DIMS];
    for (int i = 0; i < WKV_TABLES_SPECIAL_FIELDS_COUNT; i++)
        if (read_int(j, wkv_json_member(j, special, SPECIAL_FIELDS[i]), special_of[i]) || *special_of[i] >= t->n_vocab)
            return JSON_FIELDS[SPECIAL];
    if (read_languages(t, j, wkv_json_field(j, JSON_FIELDS[LANGUAGES]))) return JSON_FIELDS[LANGUAGES];
    int suppress = wkv_json_field(j, JSON_FIELDS[SUPPRESS]);
    int non_speech = wkv_json_member(j, suppress, SUPPRESS_FIELDS[NON_SPEECH]);
    t->n_non_speech = wkv_json_count(j, non_speech);
    t->non_speech = malloc(sizeof(int) * (size_t)(t->n_non_speech > 0 ? t->n_non_speech : 1));
    if (!t->non_speech || read_ints(j, non_speech, t->non_speech, t->n_non_speech) < 0 ||
        read_int(j, wkv_json_member(j, suppress, SUPPRESS_FIELDS[SPECIAL_FROM]), &t->special_from) ||
        (t->n_blank = read_ints(j, wkv_json_member(j, suppress, SUPPRESS_FIELDS[BLANK]), t->blank, WKV_MAX_BLANK)) < 0)
        return JSON_FIELDS[SUPPRESS];
    int in_range = t->special_from <= t->n_vocab;
    for (int i = 0; i < t->n_non_speech; i++) in_range = in_range && t->non_speech[i] < t->n_vocab;
    for (int i = 0; i < t->n_blank; i++) in_range = in_range && t->blank[i] < t->n_vocab;
    if (!in_range) return JSON_FIELDS[SUPPRESS];
    int stamps = wkv_json_field(j, JSON_FIELDS[TIMESTAMPS]);
    if (!wkv_json_number(j, wkv_json_member(j, stamps, TIMESTAMP_FIELDS[0]), &t->precision) || t->precision <= 0 ||
        read_int(j, wkv_json_member(j, stamps, TIMESTAMP_FIELDS[1]), &t->max_initial))
        return JSON_FIELDS[TIMESTAMPS];
    return NULL;
}

static int read_doc(wkv_tables *t, const char *bundle, const wkv_json *j, const char *path, char *err, size_t n) {
    uint64_t version = 0;
    char *format = wkv_json_string(j, wkv_json_field(j, JSON_FIELDS[FORMAT]), NULL);
    int ours = format && strcmp(format, WKV_TABLES_FORMAT) == 0 &&
               wkv_json_uint(j, wkv_json_field(j, JSON_FIELDS[VERSION]), &version) == 1 &&
               version == WKV_TABLES_VERSION;
    free(format);
    if (!ours)
        return say(err, n, WKV_TABLES_FIX, "%s is not %s version %d", path, WKV_TABLES_FORMAT, WKV_TABLES_VERSION);
    char missing[256] = "";
    for (int i = 0; i < WKV_TABLES_JSON_FIELDS_COUNT; i++)
        if (wkv_json_field(j, JSON_FIELDS[i]) < 0)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", *missing ? ", " : "",
                     JSON_FIELDS[i]);
    if (*missing) return say(err, n, WKV_TABLES_FIX, "%s lacks %s", path, missing);
    const char *bad = read_fields(t, j);
    if (bad) return say(err, n, WKV_TABLES_FIX, "%s has a malformed %s", path, bad);
    return map_tables(t, bundle, j, path, err, n);
}

int wkv_tables_read(wkv_tables *t, const char *bundle, char *err, size_t n) {
    memset(t, 0, sizeof *t);
    char name[256], path[4096], why[160];
    if (json_name(bundle, name, sizeof name, err, n)) return -1;
    snprintf(path, sizeof path, "%s/%s", bundle, name);
    size_t len = 0;
    char *text = wkv_read_file(path, &len);
    if (!text) return say(err, n, WKV_TABLES_FIX, "cannot read %s (%s)", path, strerror(errno));
    wkv_json j;
    int rc = wkv_json_parse(&j, text, len, why, sizeof why) == 0 && wkv_json_kind(&j, 0) == WKV_J_OBJECT
                 ? read_doc(t, bundle, &j, path, err, n)
                 : say(err, n, WKV_TABLES_FIX, "cannot read %s (%s)", path, j.n ? "not a JSON object" : why);
    wkv_json_free(&j);
    free(text);
    if (rc) wkv_tables_free(t);
    return rc;
}

void wkv_tables_free(wkv_tables *t) {
    for (int k = 0; k < 3; k++)
        if (t->map[k]) munmap(t->map[k], t->map_len[k]);
    free(t->non_speech);
    memset(t, 0, sizeof *t);
}

const unsigned char *wkv_token_bytes(const wkv_tables *t, int id, size_t *len) {
    *len = 0;
    if (id < 0 || id >= t->n_vocab || !t->offsets) return NULL;
    *len = t->offsets[id + 1] - t->offsets[id];
    return t->bytes + t->offsets[id];
}

int wkv_language_id(const wkv_tables *t, const char *code) {
    for (int i = 0; i < t->n_languages; i++)
        if (strcmp(t->language_code[i], code) == 0) return t->language_id[i];
    return -1;
}
