#define _POSIX_C_SOURCE 200809L

#include "hello.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "soc.h"
#include "whisperkv_spec.h"

/* What this runner serves of the protocol's optional fields (docs/protocol.md, hello): the spec's, and the
   fallback; not attention nor word timings, which need the step's attention variant, which it does not drive.
   A draft is accepted and changes nothing on a backend without a prefill, as on the Python runner's dla backend. */
static const char *const SPEC_FEATURES[] = WKV_FEATURES;

/* Whether the file's first 64 KiB, lower-cased, hold `sign`. */
static int shows(const char *path, const char *sign) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static char text[65537];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    for (size_t i = 0; i < n; i++) text[i] = (char)tolower((unsigned char)text[i]);
    return strstr(text, sign) != NULL;
}

/* device/spec/runner_kind.py runner_kind: pc, emulated or board, from what the system shows of itself */
static const char *runner_kind(const char *arch) {
    static const char *const pc[] = WKV_KIND_PC_ARCHES, *const signs[][2] = WKV_KIND_EMULATION_SIGNS;
    for (int i = 0; i < WKV_KIND_PC_ARCHES_COUNT; i++)
        if (!strcasecmp(arch, pc[i])) return "pc";
    if (getenv("QEMU_CPU")) return "emulated";
    for (int i = 0; i < WKV_KIND_EMULATION_SIGNS_COUNT; i++)
        if (shows(signs[i][0], signs[i][1])) return "emulated";
    return shows("/proc/cpuinfo", "genuineintel") || shows("/proc/cpuinfo", "authenticamd") ? "emulated" : "board";
}

static void dims(wkv_out *o, const wkv_dims *d) {
    wkv_field_int(o, "n_mels", d->n_mels);
    wkv_field_int(o, "n_audio_ctx", d->n_audio_ctx);
    wkv_field_int(o, "n_audio_state", d->n_audio_state);
    wkv_field_int(o, "n_audio_head", d->n_audio_head);
    wkv_field_int(o, "n_audio_layer", d->n_audio_layer);
    wkv_field_int(o, "n_vocab", d->n_vocab);
    wkv_field_int(o, "n_text_ctx", d->n_text_ctx);
    wkv_field_int(o, "n_text_state", d->n_text_state);
    wkv_field_int(o, "n_text_head", d->n_text_head);
    wkv_field_int(o, "n_text_layer", d->n_text_layer);
    wkv_object_end(o);
}

static void field_object(wkv_out *o, const char *key, wkv_out *sub) {
    wkv_field_raw(o, key, sub->buf ? sub->buf : "{}");
    wkv_out_free(sub);
}

static void list(wkv_out *o, const char *key, const char *const *items, int n) {
    wkv_out l = {0};
    wkv_out_raw(&l, "[", 1);
    for (int i = 0; i < n; i++) {
        if (i) wkv_out_raw(&l, ",", 1);
        wkv_out_str(&l, items[i], strlen(items[i]));
    }
    wkv_out_raw(&l, "]", 1);
    wkv_field_raw(o, key, l.buf);
    wkv_out_free(&l);
}

void wkv_emit_hello(wkv_out *o, const wkv_model *m, uint64_t max_header, uint64_t max_payload) {
    static const char *const mel_dtypes[] = WKV_MEL_DTYPES;
    struct utsname u;
    const char *arch = uname(&u) == 0 ? u.machine : "unknown";
    int fp16 = m->step.slots->in[m->self_k].native == WKV_ELEM_F16;
    wkv_out sub = {0}, model = {0};
    wkv_event_begin(o, "hello");
    wkv_field_int(o, "protocol", WKV_PROTOCOL);
    wkv_field_str(o, "runner_version", WKV_RUNNER_VERSION);
    wkv_field_str(o, "runner", "native");
    wkv_field_str(o, "backend", "dla");
    wkv_model_describe(m, &sub);
    field_object(o, "backend_detail", &sub);
    dims(&sub, &m->dims);
    wkv_field_raw(&model, "dims", sub.buf);
    wkv_out_free(&sub);
    wkv_field_str(&model, "sha256", m->sha256);
    char source[4200];
    snprintf(source, sizeof source, "bundle:%s", m->dir);
    wkv_field_str(&model, "source", source);
    wkv_object_end(&model);
    field_object(o, "model", &model);
    wkv_field_int(&sub, "max_len", m->dims.n_text_ctx);
    wkv_field_int(&sub, "bytes_per_token", 2LL * m->dims.n_text_layer * m->dims.n_text_state * (fp16 ? 2 : 4));
    wkv_field_str(&sub, "dtype", fp16 ? "float16" : "float32");
    wkv_object_end(&sub);
    field_object(o, "cache", &sub);
    wkv_board_soc(&sub);
    field_object(o, "soc", &sub);
    wkv_field_str(o, "os", wkv_board_os());
    wkv_field_str(o, "runner_kind", runner_kind(arch));
    wkv_field_str(o, "npu", wkv_model_npu(m));
    wkv_field_str(&sub, "arch", arch);
    wkv_field_int(&sub, "cores", sysconf(_SC_NPROCESSORS_ONLN));
    wkv_object_end(&sub);
    field_object(o, "machine", &sub);
    wkv_field_int(&sub, "max_header", (long long)max_header);
    wkv_field_int(&sub, "max_payload", (long long)max_payload);
    wkv_object_end(&sub);
    field_object(o, "limits", &sub);
    list(o, "mel_dtypes", mel_dtypes, WKV_MEL_DTYPES_COUNT);
    if (m->n_windows > 1) {      /* served_model.windows_hello: left out where 30 s is the only one */
        char windows[64] = "[";
        for (int i = 0; i < m->n_windows; i++)
            snprintf(windows + strlen(windows), sizeof windows - strlen(windows), "%s%d", i ? "," : "", m->windows[i]);
        strcat(windows, "]");
        wkv_field_raw(o, "windows", windows);
    }
    const char *features[1 + WKV_FEATURES_COUNT] = {"temperature_fallback"};
    memcpy(features + 1, SPEC_FEATURES, sizeof SPEC_FEATURES);
    list(o, "features", features, 1 + WKV_FEATURES_COUNT);
    wkv_field_num(o, "load_ms", round(m->load_ms * 10) / 10);   /* as the Python runner rounds it */
}
