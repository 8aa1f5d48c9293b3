/* The slot contract and the slots' forms (slots.h); each refusal worded as device/runner/neuron/neuron_slots.py and
   dla_backend.py word it. */
#define _POSIX_C_SOURCE 200809L

#include "slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "say.h"
#include "json_in.h"
#include "whisperkv_spec.h"

static const char *const ROLES[] = {"encoder", "decoder_step", "decoder_step_attention"};
static const char PERSISTS[] = "; if it persists, send `whisperkv doctor --out DIR`'s report with a bug";

static void copy_string(const wkv_json *j, int tok, char *out, size_t n) {
    char *s = wkv_json_string(j, tok, NULL);
    snprintf(out, n, "%s", s ? s : "");
    free(s);
}

static int read_slot(const wkv_json *j, int tok, wkv_slot *s) {
    memset(s, 0, sizeof *s);
    int shape = wkv_json_member(j, tok, "shape"), name = wkv_json_member(j, tok, "name");
    int dtype = wkv_json_member(j, tok, "dtype"), scale = wkv_json_member(j, tok, "scale");
    int count = wkv_json_count(j, shape);
    if (wkv_json_kind(j, name) != WKV_J_STRING || wkv_json_kind(j, dtype) != WKV_J_STRING || count < 0 ||
        count > WKV_SLOT_RANK)
        return -1;
    copy_string(j, name, s->name, sizeof s->name);
    copy_string(j, dtype, s->dtype, sizeof s->dtype);
    s->rank = count;
    for (int i = 0; i < count; i++)
        if (wkv_json_uint(j, wkv_json_item(j, shape, i), &s->shape[i]) != 1) return -1;
    s->has_scale = wkv_json_number(j, scale, &s->scale);
    double zero = 0;
    if (wkv_json_number(j, wkv_json_member(j, tok, "zero_point"), &zero)) s->zero_point = (long)zero;
    return 0;
}

static int read_graph(const wkv_json *j, int tok, const char *role, wkv_graph_slots *g, char *err, size_t n) {
    memset(g, 0, sizeof *g);
    snprintf(g->role, sizeof g->role, "%s", role);
    copy_string(j, wkv_json_member(j, tok, "file"), g->file, sizeof g->file);
    int kinds[2] = {wkv_json_member(j, tok, "inputs"), wkv_json_member(j, tok, "outputs")};
    for (int k = 0; k < 2; k++) {
        int count = wkv_json_count(j, kinds[k]);
        wkv_slot *slots = k ? g->out : g->in;
        if (count > WKV_GRAPH_SLOTS)
            return say(err, n, WKV_NEURON_SLOT_FIX, "model.json records %d slots for %s, more than this runner takes",
                       count, g->file);
        for (int i = 0; i < count; i++) {
            if (read_slot(j, wkv_json_item(j, kinds[k], i), &slots[i]))
                return say(err, n, WKV_NEURON_SLOT_FIX, "model.json records a malformed %s slot %d for %s",
                           k ? "output" : "input", i, g->file);
            (k ? g->out_names : g->in_names)[i] = slots[i].name;
        }
        *(k ? &g->n_out : &g->n_in) = count < 0 ? 0 : count;
    }
    return 0;
}

static int read_contract(wkv_contract *c, const wkv_json *j, const char *where, char *err, size_t n) {
    int dla = wkv_json_field(j, WKV_CONTRACT_SECTION), graphs = wkv_json_member(j, dla, "graphs");
    if (wkv_json_count(j, dla) < 1 || wkv_json_member(j, graphs, "encoder") < 0 ||
        wkv_json_member(j, graphs, "decoder_step") < 0)
        return say(err, n, WKV_NEURON_BUNDLE_FIX, "the bundle at %s has no compiled .dla graphs", where);
    int version = wkv_json_member(j, dla, "contract");
    uint64_t got = 0;
    if (wkv_json_uint(j, version, &got) != 1 || got != WKV_CONTRACT) {
        enum wkv_jkind kind = wkv_json_kind(j, version);
        char found[128] = "before the slot contract";
        size_t len = 0;
        const char *raw = wkv_json_raw(j, version, &len);
        if (kind == WKV_J_STRING) {
            char *s = wkv_json_string(j, version, NULL);
            snprintf(found, sizeof found, "with slot contract %s", s ? s : "");
            free(s);
        } else if (kind != WKV_J_NONE && kind != WKV_J_NULL) {
            snprintf(found, sizeof found, "with slot contract %.*s", (int)(len < 64 ? len : 64), raw);
        }
        return say(err, n, WKV_NEURON_SLOT_FIX, "the bundle at %s was compiled %s; this runner reads contract %d",
                   where, found, WKV_CONTRACT);
    }
    static const int windows[] = WKV_DECODE_WINDOWS_S;
    size_t roles = sizeof ROLES / sizeof *ROLES;
    for (size_t r = 0; r < roles + WKV_DECODE_WINDOWS_S_COUNT - 1; r++) {     /* the shorter windows: all but 30 s */
        char role[48];
        if (r < roles) snprintf(role, sizeof role, "%s", ROLES[r]);
        else wkv_window_role(windows[r - roles], role, sizeof role);
        int tok = wkv_json_member(j, graphs, role);
        if (tok >= 0 && read_graph(j, tok, role, &c->graphs[c->n++], err, n)) return -1;
    }
    return 0;
}

void wkv_window_role(int window_s, char *out, size_t n) {
    if (window_s == WKV_DECODE_FULL_WINDOW_S) snprintf(out, n, "encoder");
    else snprintf(out, n, WKV_WINDOW_GRAPH, window_s);
}

int wkv_contract_read(wkv_contract *c, const char *bundle, char *err, size_t n) {
    memset(c, 0, sizeof *c);
    char where[1024], path[1100], why[256];
    snprintf(where, sizeof where, "%s", bundle);
    for (size_t k = strlen(where); k > 1 && where[k - 1] == '/'; k--) where[k - 1] = 0;
    snprintf(path, sizeof path, "%s/model.json", where);
    size_t len = 0;
    char *text = wkv_read_file(path, &len);
    if (!text) return say(err, n, WKV_NEURON_EXPORT_FIX, "%s is not a model bundle (no model.json)", where);
    wkv_json j;
    if (wkv_json_parse(&j, text, len, why, sizeof why)) {
        free(text);
        return say(err, n, WKV_NEURON_EXPORT_FIX, "%s/model.json is not valid JSON (%s)", where, why);
    }
    int rc = read_contract(c, &j, where, err, n);
    wkv_json_free(&j);
    free(text);
    return rc;
}

wkv_graph_slots *wkv_contract_graph(wkv_contract *c, const char *role) {
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->graphs[i].role, role) == 0) return &c->graphs[i];
    return NULL;
}

size_t wkv_slot_elements(const wkv_slot *s) {
    size_t e = 1;
    for (int i = 0; i < s->rank; i++) e *= (size_t)s->shape[i];
    return e;
}

size_t wkv_slot_bytes(const wkv_slot *s) { return s->rows * s->pitch * s->elem_bytes; }

static int refuse(const char *file, const char *kind, int i, const wkv_slot *s, const char *why, char *err, size_t n) {
    char shape[160] = "[", padded[32] = "not reported", fix[sizeof WKV_NEURON_SLOT_FIX + sizeof PERSISTS];
    size_t k = 1;
    for (int d = 0; d < s->rank && k < sizeof shape; d++)
        k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%llu", d ? ", " : "", (unsigned long long)s->shape[d]);
    if (k < sizeof shape - 1) strcat(shape, "]");
    if (s->has_padded) snprintf(padded, sizeof padded, "%zu", s->padded);
    snprintf(fix, sizeof fix, "%s%s", WKV_NEURON_SLOT_FIX, PERSISTS);
    return say(err, n, fix, "%s %s slot %d (%s %s %s) is %zu bytes in the runtime (padded %s): %s", file, kind, i,
               s->name, s->dtype, shape, s->size, padded, why);
}

static enum wkv_elem int_type(const char *dtype, size_t *bytes) {
    static const char *const ints[] = WKV_INT_SLOT_DTYPES;
    static const enum wkv_elem elems[] = {WKV_ELEM_I8, WKV_ELEM_I16, WKV_ELEM_U8};
    static const size_t widths[] = {1, 2, 1};
    for (int i = 0; i < WKV_INT_SLOT_DTYPES_COUNT; i++)
        if (strcmp(dtype, ints[i]) == 0) return *bytes = widths[i], elems[i];
    return WKV_ELEM_NONE;
}

static int is_float(const char *dtype) {
    static const char *const floats[] = WKV_FLOAT_SLOT_DTYPES;
    for (int i = 0; i < WKV_FLOAT_SLOT_DTYPES_COUNT; i++)
        if (strcmp(dtype, floats[i]) == 0) return 1;
    return 0;
}

static int derive(const char *file, const char *kind, int i, wkv_slot *s, int suppressed, char *err, size_t n) {
    size_t elements = wkv_slot_elements(s), bytes = 0;
    char why[160];
    s->native = int_type(s->dtype, &bytes);
    if (s->native != WKV_ELEM_NONE && !s->has_scale)
        return say(err, n, WKV_NEURON_SLOT_FIX, "model.json records no scale for the integer %s %s of %s", kind,
                   s->name, file);
    if (s->native == WKV_ELEM_NONE && is_float(s->dtype) && elements && s->size % elements == 0) {
        bytes = s->size / elements;
        s->native = bytes == 2 ? WKV_ELEM_F16 : bytes == 4 ? WKV_ELEM_F32 : WKV_ELEM_NONE;
    }
    if (s->native == WKV_ELEM_NONE || s->size != elements * bytes) {
        snprintf(why, sizeof why, "not %zu elements of a type the slot can take", elements);
        return refuse(file, kind, i, s, why, err, n);
    }
    s->elem_bytes = bytes;
    s->row = s->rank ? (size_t)s->shape[s->rank - 1] : 1;
    s->rows = s->row ? elements / s->row : 0;
    s->pitch = s->row;
    if (suppressed && s->has_padded && s->padded != s->size) {
        size_t per_row = s->rows * bytes;
        if (s->padded < s->size || !per_row || s->padded % per_row) {
            snprintf(why, sizeof why, "the padded size is not %zu rows of at least %zu elements", s->rows, s->row);
            return refuse(file, kind, i, s, why, err, n);
        }
        s->pitch = s->padded / per_row;
    } else if (!suppressed && s->has_padded && s->padded < s->size) {
        return refuse(file, kind, i, s, "the padded size is smaller than the size", err, n);
    }
    return 0;
}

int wkv_slots_derive(wkv_graph_slots *g, int input, const size_t *sizes, size_t count, const size_t *padded,
                     int suppressed, char *err, size_t n) {
    const char *kind = input ? "input" : "output";
    int recorded = input ? g->n_in : g->n_out;
    wkv_slot *slots = input ? g->in : g->out;
    if (!g->n_in || !g->n_out)
        return say(err, n, WKV_NEURON_SLOT_FIX, "model.json records no input/output slots for %s", g->file);
    if (count != (size_t)recorded)
        return say(err, n, WKV_NEURON_SLOT_FIX, "%s has %zu %s slots in the runtime but model.json records %d", g->file,
                   count, kind, recorded);
    for (int i = 0; i < recorded; i++) {
        slots[i].size = sizes[i];
        slots[i].has_padded = padded != NULL;
        slots[i].padded = padded ? padded[i] : 0;
        if (derive(g->file, kind, i, &slots[i], suppressed, err, n)) return -1;
    }
    return 0;
}
