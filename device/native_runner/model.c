#define _POSIX_C_SOURCE 200809L

#include "model.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_in.h"
#include "say.h"
#include "whisperkv_spec.h"

static const int WINDOWS[] = WKV_DECODE_WINDOWS_S;

static void copy_field(const wkv_json *j, int obj, const char *key, char *out, size_t n) {
    char *s = wkv_json_string(j, wkv_json_member(j, obj, key), NULL);
    snprintf(out, n, "%s", s ? s : "");
    free(s);
}

static int dim(const wkv_json *j, int dims, const char *key) {
    uint64_t v = 0;
    return wkv_json_uint(j, wkv_json_member(j, dims, key), &v) == 1 ? (int)v : 0;
}

/* model.json's identity and dims (the slot contract is slots.c's to read). */
static int read_manifest(wkv_model *m, char *err, size_t n) {
    char path[4200], why[256];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/model.json", m->dir);
    char *text = wkv_read_file(path, &len);
    wkv_json j;
    if (!text || wkv_json_parse(&j, text, len, why, sizeof why)) {
        free(text);
        return say(err, n, WKV_NEURON_EXPORT_FIX, "%s is not a readable model.json", path);
    }
    char *format = wkv_json_string(&j, wkv_json_field(&j, "format"), NULL);
    int ours = format && !strcmp(format, WKV_BUNDLE_FORMAT);
    free(format);
    if (!ours) {
        wkv_json_free(&j);
        free(text);
        return say(err, n, WKV_NEURON_EXPORT_FIX, "%s is not a %s manifest", path, WKV_BUNDLE_FORMAT);
    }
    int d = wkv_json_field(&j, "dims"), dla = wkv_json_field(&j, "dla");
    wkv_dims *x = &m->dims;
    *x = (wkv_dims){dim(&j, d, "n_mels"), dim(&j, d, "n_audio_ctx"), dim(&j, d, "n_audio_state"),
                    dim(&j, d, "n_audio_head"), dim(&j, d, "n_audio_layer"), dim(&j, d, "n_vocab"),
                    dim(&j, d, "n_text_ctx"), dim(&j, d, "n_text_state"), dim(&j, d, "n_text_head"),
                    dim(&j, d, "n_text_layer")};
    copy_field(&j, 0, "model_sha256", m->sha256, sizeof m->sha256);
    copy_field(&j, 0, "dtype", m->dtype, sizeof m->dtype);
    copy_field(&j, 0, "cross", m->cross, sizeof m->cross);
    if (!m->cross[0]) snprintf(m->cross, sizeof m->cross, "kv");
    copy_field(&j, dla, "soc", m->soc, sizeof m->soc);
    static const char *const roles[] = {"encoder", "decoder_step"};
    for (int r = 0; r < 2; r++) {
        int g = wkv_json_member(&j, wkv_json_member(&j, dla, "graphs"), roles[r]);
        size_t len = 0;
        const char *flags = wkv_json_kind(&j, wkv_json_member(&j, g, "flags")) == WKV_J_ARRAY
                                ? wkv_json_raw(&j, wkv_json_member(&j, g, "flags"), &len) : "[]";
        snprintf(m->graph_flags[r], sizeof m->graph_flags[r], "%.*s", (int)(len ? len : 2), flags);
        copy_field(&j, g, "sha256", m->graph_sha256[r], sizeof m->graph_sha256[r]);
    }
    int listed = wkv_json_field(&j, "windows"), count = wkv_json_count(&j, listed);
    m->n_windows = 0;          /* as listed here; wkv_model_load keeps those the graphs serve */
    for (int i = 0; i < count && m->n_windows < WKV_DECODE_WINDOWS_S_COUNT; i++) {
        uint64_t v = 0;
        if (wkv_json_uint(&j, wkv_json_item(&j, listed, i), &v) == 1) m->windows[m->n_windows++] = (int)v;
    }
    char *version = wkv_json_string(&j, wkv_json_member(&j, dla, "version"), NULL);
    snprintf(m->compiler_version, sizeof m->compiler_version, "%s", version && *version ? version : "unknown");
    free(version);
    wkv_json_free(&j);
    free(text);
    if (!x->n_text_layer || !x->n_text_ctx || !x->n_text_state || !x->n_vocab)
        return say(err, n, WKV_NEURON_EXPORT_FIX, "%s has no decoder dims", path);
    return 0;
}

static int need(int index, const wkv_graph *g, int input, const char *name, char *err, size_t n) {
    if (index >= 0) return 0;
    return say(err, n, WKV_NEURON_SLOT_FIX, "model.json records no %s slot %s for %s", input ? "input" : "output",
               name, g->slots->file);
}

/* Each slot the decoder feeds or reads, by the contract's names. */
static int find_slots(wkv_model *m, char *err, size_t n) {
    static const char *const kv[] = {"cross_k", "cross_v"}, *const absorbed[] = {"F"};
    const char *const *cross = m->cross_names = m->n_cross == 2 ? kv : absorbed;
    int rc = need(m->enc_mel = wkv_graph_slot(&m->enc, 1, "mel"), &m->enc, 1, "mel", err, n);
    for (int i = 0; i < m->n_cross && !rc; i++)
        rc = need(m->enc_cross[i] = wkv_graph_slot(&m->enc, 0, cross[i]), &m->enc, 0, cross[i], err, n) ||
             need(m->step_cross[i] = wkv_graph_slot(&m->step, 1, cross[i]), &m->step, 1, cross[i], err, n);
    static const char *const ins[] = {"x", "self_k", "self_v", "mask"}, *const outs[] = {"logits", "new_k", "new_v"};
    int *in_at[] = {&m->x, &m->self_k, &m->self_v, &m->mask}, *out_at[] = {&m->logits, &m->new_k, &m->new_v};
    for (int i = 0; i < 4 && !rc; i++)
        rc = need(*in_at[i] = wkv_graph_slot(&m->step, 1, ins[i]), &m->step, 1, ins[i], err, n);
    for (int i = 0; i < 3 && !rc; i++)
        rc = need(*out_at[i] = wkv_graph_slot(&m->step, 0, outs[i]), &m->step, 0, outs[i], err, n);
    m->cross_mask = wkv_graph_slot(&m->step, 1, "cross_mask");
    return rc ? -1 : 0;
}

/* dla_backend.py: 30 s, and each shorter window model.json lists where the step takes the cross mask and the
   window's encoder was compiled. */
static void served_windows(wkv_model *m) {
    int listed[WKV_DECODE_WINDOWS_S_COUNT], n_listed = m->n_windows;
    memcpy(listed, m->windows, sizeof listed);
    m->n_windows = 0;
    for (int w = 0; w < WKV_DECODE_WINDOWS_S_COUNT; w++) {
        char role[48];
        int is_listed = 0;
        for (int i = 0; i < n_listed; i++) is_listed |= listed[i] == WINDOWS[w];
        wkv_window_role(WINDOWS[w], role, sizeof role);
        if (WINDOWS[w] == WKV_DECODE_FULL_WINDOW_S || (is_listed && m->cross_mask >= 0 &&
                                                 wkv_contract_graph(&m->contract, role)))
            m->windows[m->n_windows++] = WINDOWS[w];
    }
}

float wkv_mask_hidden(const wkv_slot *s) { return s->native == WKV_ELEM_F16 ? -10000.0f : -1e9f; }

/* The major version in a version text ("8.2.16", "ncc-tflite version 8.0.10-rc"): the first "N.N"; -1 for none. */
static int major(const char *text) {
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || (p > text && p[-1] >= '0' && p[-1] <= '9')) continue;
        char *end;
        long v = strtol(p, &end, 10);
        if (*end == '.' && end[1] >= '0' && end[1] <= '9') return (int)v;
    }
    return -1;
}

/* neuron_paths.version_warning: a .dla loads only on a runtime of its compiler's major version */
static void version_warning(wkv_model *m) {
    int c = major(m->compiler_version), r = major(m->library_version);
    m->version_warning[0] = 0;
    if (c < 0 || r < 0 || c == r) return;
    snprintf(m->version_warning, sizeof m->version_warning,
             "the .dla graphs were compiled by ncc-tflite %d.x (%s) but the Neuron runtime is %s: a .dla loads only "
             "on a runtime of its compiler's major version; recompile with an ncc-tflite %d.x", c, m->compiler_version,
             m->library_version, r);
    fprintf(stderr, "runner WARNING %s\n", m->version_warning);
}

/* A graph that failed to open while the versions differ: the line says the likely reason and its fix. */
int wkv_model_graph_failed(const wkv_model *m, char *err, size_t n) {
    if (!m->version_warning[0]) return -1;
    char problem[WKV_NEURON_LINE];
    const char *dash = strstr(err, " — "), *colon = strstr(m->version_warning, ": "),
               *fix = strrchr(m->version_warning, ';');
    snprintf(problem, sizeof problem, "%.*s", (int)(dash ? (size_t)(dash - err) : strlen(err)), err);
    return say(err, n, fix + 2, "%s; %.*s", problem, (int)(colon - m->version_warning), m->version_warning);
}

static const char *bundle_dir(const wkv_flags *f, char *out, size_t n) {
    if (f->model) snprintf(out, n, "%s", f->model);
    else wkv_default_bundle(out, n);
    return out;
}

int wkv_model_load(wkv_model *m, const wkv_flags *f, char *err, size_t n) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(m, 0, sizeof *m);
    bundle_dir(f, m->dir, sizeof m->dir);
    if (f->neuron_create && !strcmp(f->neuron_create, "options"))
        return say(err, n, "drop ?neuron_create=options, or use the Python runner (?runner=python)",
                   "the native runner creates each runtime with NeuronRuntime_create only, not create_with_options");
    if (read_manifest(m, err, n) || wkv_contract_read(&m->contract, m->dir, err, n) ||
        wkv_tables_read(&m->t, m->dir, err, n) || wkv_neuron_open(&m->lib, f->neuron_lib, f->neuron_api, err, n))
        return -1;
    m->lib.qos = !(f->neuron_qos && !strcmp(f->neuron_qos, "off"));
    if (f->neuron_io && !strcmp(f->neuron_io, "converted")) m->lib.suppressed = 0;
    if (wkv_neuron_version(&m->lib, m->library_version, sizeof m->library_version)) m->library_version[0] = 0;
    m->n_cross = strcmp(m->cross, "absorbed") ? 2 : 1;
    version_warning(m);
    if (wkv_graph_open(&m->enc, wkv_contract_graph(&m->contract, "encoder"), m->dir, &m->lib, 1, err, n) ||
        wkv_graph_open(&m->step, wkv_contract_graph(&m->contract, "decoder_step"), m->dir, &m->lib, 1, err, n))
        return wkv_model_graph_failed(m, err, n);
    if (find_slots(m, err, n)) return -1;
    served_windows(m);
    m->mask_hidden = wkv_mask_hidden(&m->step.slots->in[m->mask]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    m->load_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    return 0;
}

void wkv_model_close(wkv_model *m) {
    wkv_graph_close(&m->enc);
    for (int w = 0; w < WKV_DECODE_WINDOWS_S_COUNT; w++)
        if (m->enc_window[w].slots) wkv_graph_close(&m->enc_window[w]);
    wkv_graph_close(&m->step);
    wkv_neuron_close(&m->lib);
    wkv_tables_free(&m->t);
}

static const char *const ELEMENT[] = {"", "float16", "float32", "int8", "int16", "uint8"};

static void describe_slot(wkv_out *o, const wkv_slot *s, const char *kind) {
    wkv_out slot = {0};
    wkv_field_str(&slot, "kind", kind);
    wkv_field_str(&slot, "name", s->name);
    wkv_field_shape(&slot, "shape", s);
    wkv_field_str(&slot, "tflite", s->dtype);
    wkv_field_int(&slot, "size", (long long)s->size);
    if (s->has_padded) wkv_field_int(&slot, "padded_size", (long long)s->padded);
    else wkv_field_raw(&slot, "padded_size", "null");
    wkv_field_str(&slot, "element", ELEMENT[s->native]);
    wkv_field_int(&slot, "element_bytes", (long long)s->elem_bytes);
    wkv_field_int(&slot, "row", (long long)s->row);
    wkv_field_int(&slot, "pitch", (long long)s->pitch);
    wkv_object_end(&slot);
    wkv_out_raw(o, o->len > 1 ? "," : "", o->len > 1);
    wkv_out_raw(o, slot.buf, slot.len);
    wkv_out_free(&slot);
}

static void describe_graph(wkv_out *list, const wkv_model *m, int index) {
    static const char *const roles[] = {"encoder", "decoder_step"};
    const wkv_graph *g = index ? &m->step : &m->enc;
    const char *role = roles[index];
    wkv_out o = {0}, slots = {0};
    wkv_out_raw(&slots, "[", 1);
    wkv_field_str(&o, "graph", role);
    wkv_field_str(&o, "file", g->slots->file);
    wkv_field_str(&o, "sha256", m->graph_sha256[index]);
    wkv_field_str(&o, "runs_on", "dla");
    wkv_field_raw(&o, "flags", m->graph_flags[index]);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < (k ? g->slots->n_out : g->slots->n_in); i++)
            describe_slot(&slots, k ? &g->slots->out[i] : &g->slots->in[i], k ? "output" : "input");
    wkv_out_raw(&slots, "]", 1);
    wkv_field_raw(&o, "slots", slots.buf);
    wkv_object_end(&o);
    wkv_out_raw(list, list->len > 1 ? "," : "", list->len > 1);
    wkv_out_raw(list, o.buf, o.len);
    wkv_out_free(&o);
    wkv_out_free(&slots);
}

const char *wkv_model_npu(const wkv_model *m) {
    return dlsym(m->lib.dl, WKV_KIND_STANDIN_SYMBOL) || !strcmp(m->library_version, WKV_KIND_STANDIN_VERSION)
               ? "stand-in" : "real";
}

void wkv_model_describe(const wkv_model *m, wkv_out *o) {
    wkv_field_str(o, "runtime", "neuron");
    wkv_field_str(o, "library", m->lib.path);
    if (m->library_version[0]) wkv_field_str(o, "library_version", m->library_version);
    wkv_field_str(o, "api", m->lib.v1 ? "V1" : "V2");
    wkv_field_str(o, "io", m->lib.suppressed ? "native" : "converted");
    if (!m->lib.v1) wkv_field_str(o, "io_note", WKV_NEURON_V2_CONVERTS);
    wkv_field_str(o, "create", "plain");
    wkv_field_str(o, "qos", m->enc.g.qos);
    wkv_field_str(o, "compiler_version", m->compiler_version);
    if (m->version_warning[0]) wkv_field_str(o, "version_warning", m->version_warning);
    wkv_field_str(o, "soc", m->soc);
    wkv_field_str(o, "weights", m->dtype);
    wkv_field_str(o, "cross", m->cross);
    wkv_field_str(o, "cache_dtype", m->step.slots->in[m->self_k].native == WKV_ELEM_F16 ? "float16" : "float32");
    wkv_out graphs = {0};
    wkv_out_raw(&graphs, "[", 1);
    describe_graph(&graphs, m, 0);
    describe_graph(&graphs, m, 1);
    wkv_out_raw(&graphs, "]", 1);
    wkv_field_raw(o, "graphs", graphs.buf);
    wkv_out_free(&graphs);
    wkv_object_end(o);
}
