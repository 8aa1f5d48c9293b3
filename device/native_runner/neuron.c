/* A runtime per .dla through the Neuron runtime's two C APIs (device/runner/neuron/neuron_v1.py and neuron_v2.py say
   where each call and struct comes from: RuntimeAPI.h, RuntimeV2.h and Types.h as the public ports ship them); the
   library itself is opened by neuron_lib.c. */
#define _POSIX_C_SOURCE 200809L

#include "neuron.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "say.h"
#include "whisperkv_spec.h"

typedef struct {
    uint32_t deviceKind;
    int MDLACoreOption;
    uint8_t CPUThreadNum;
    bool suppressInputConversion;
    bool suppressOutputConversion;
} EnvOptions;
typedef struct { int ionFd; } BufferAttribute;
typedef struct {
    int preference, priority;
    uint8_t boostValue, maxBoostValue, minBoostValue;
    uint16_t deadline, abortTime;
    int32_t delayedPowerOffTime;
    int powerPolicy, applicationType;
    void *profiledQoSData;
} QoSOptions;
typedef struct {
    void *buffer;
    size_t length;
    int fd, offset;
    uint64_t reserved2, reserved3;
} IOBuffer;
typedef struct { IOBuffer *inputs, *outputs; } SyncInferenceRequest;

/* Types.h: deviceKind's APU bit; MDLA core "auto". */
#define K_ENV_OPT_HARDWARE (1u << 2)
/* As the public MT8371 ports set QoS: performance, high priority, boost 100, the default power-off delay and the
   sustainable power policy (Types.h RuntimeAPIQoS*; superLin006/MTK_model_zoo). */
static const QoSOptions QOS = {0, 2, 100, 0, 0, 0, 0, -1, 1, 0, NULL};
static const char DAMAGED[] = "the runtime library or the .dla is damaged: recompile and redeploy";

static void *sym(const wkv_neuron_lib *lib, const char *prefix, const char *name) {
    char full[128];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    return dlsym(lib->dl, full);
}

static const char *prefix_of(const wkv_neuron_lib *lib) { return lib->v1 ? "NeuronRuntime_" : "NeuronRuntimeV2_"; }


typedef int (*count_fn)(void *, size_t *);
typedef int (*size_fn)(void *, uint64_t, size_t *);

/* Each slot's bytes: from get{kind}Number where exported, else (older V1 headers) by probing get{kind}Size until
   an index fails, as the public ports do; then get{kind}PaddedSize where exported. */
static int sizes(wkv_neuron_graph *g, const char *kind, size_t *count, size_t *size, size_t *padded, int *has_padded,
                 char *err, size_t n) {
    const char *p = prefix_of(g->lib);
    char name[64];
    snprintf(name, sizeof name, "get%sNumber", kind);
    count_fn number = (count_fn)sym(g->lib, p, name);
    size_t slots = WKV_NEURON_MAX_SLOTS;
    int rc;
    if (number && (rc = number(g->handle, &slots)) != 0)
        return say(err, n, DAMAGED, "%s%s failed for %s with error code %d", p, name, g->file, rc);
    if (slots > WKV_NEURON_MAX_SLOTS)
        return say(err, n, DAMAGED, "%s%s gives %zu slots for %s", p, name, slots, g->file);
    snprintf(name, sizeof name, "get%sSize", kind);
    size_fn get = (size_fn)sym(g->lib, p, name);
    *count = 0;
    for (size_t i = 0; i < slots; i++) {
        rc = get(g->handle, i, &size[i]);
        if (rc != 0 && !number) break;
        if (rc != 0) return say(err, n, DAMAGED, "%s%s failed for %s with error code %d", p, name, g->file, rc);
        (*count)++;
    }
    snprintf(name, sizeof name, "get%sPaddedSize", kind);
    size_fn pad = (size_fn)sym(g->lib, p, name);
    *has_padded = pad != NULL;
    for (size_t i = 0; pad && i < *count; i++)
        if ((rc = pad(g->handle, i, &padded[i])) != 0)
            return say(err, n, DAMAGED, "%s%s failed for %s with error code %d", p, name, g->file, rc);
    return 0;
}

static int create(wkv_neuron_graph *g, const char *dla, int threads, char *err, size_t n) {
    const wkv_neuron_lib *lib = g->lib;
    int rc;
    if (!lib->v1) {
        int (*make)(const char *, size_t, void **, size_t) =
            (int (*)(const char *, size_t, void **, size_t))sym(lib, "NeuronRuntimeV2_", "create");
        if ((rc = make(dla, (size_t)threads, &g->handle, 1)) != 0 || !g->handle)
            return say(err, n, WKV_NEURON_DLA_FIX, "NeuronRuntimeV2_create failed for %s with error code %d (%s)",
                       g->file, rc, lib->path);
        return 0;
    }
    /* both conversions suppressed: each slot in the NPU's own form, as the Genio 720 Whisper runner feeds it
       (hhlqwq/mtk_models whisper_board_eval.cpp) */
    EnvOptions env = {K_ENV_OPT_HARDWARE, 0, (uint8_t)(threads < 1 ? 1 : threads > 255 ? 255 : threads),
                      lib->suppressed, lib->suppressed};
    int (*make)(const EnvOptions *, void **) = (int (*)(const EnvOptions *, void **))sym(lib, "NeuronRuntime_",
                                                                                          "create");
    if ((rc = make(&env, &g->handle)) != 0 || !g->handle)
        return say(err, n, WKV_NEURON_CREATE_FIX, "NeuronRuntime_create failed for %s with error code %d (%s)",
                   g->file, rc, lib->path);
    int (*load_dla)(void *, const char *) = (int (*)(void *, const char *))sym(lib, "NeuronRuntime_",
                                                                                "loadNetworkFromFile");
    if ((rc = load_dla(g->handle, dla)) != 0) {
        wkv_neuron_graph_release(g);
        return say(err, n, WKV_NEURON_DLA_FIX,
                   "NeuronRuntime_loadNetworkFromFile failed for %s with error code %d (%s)", g->file, rc, lib->path);
    }
    return 0;
}

int wkv_neuron_graph_open(wkv_neuron_graph *g, const wkv_neuron_lib *lib, const char *dla, int threads, char *err,
                          size_t n) {
    memset(g, 0, sizeof *g);
    g->lib = lib;
    const char *slash = strrchr(dla, '/');
    snprintf(g->file, sizeof g->file, "%s", slash ? slash + 1 : dla);
    if (create(g, dla, threads, err, n)) return -1;
    g->qos = "off";
    if (lib->qos) {
        int (*set)(void *, const QoSOptions *) = (int (*)(void *, const QoSOptions *))sym(lib, prefix_of(lib),
                                                                                           "setQoSOption");
        g->qos = !set ? "not exported" : set(g->handle, &QOS) == 0 ? "on" : "refused";
    }
    if (sizes(g, "Input", &g->n_in, g->in_size, g->in_padded, &g->has_in_padded, err, n) ||
        sizes(g, "Output", &g->n_out, g->out_size, g->out_padded, &g->has_out_padded, err, n)) {
        wkv_neuron_graph_release(g);
        return -1;
    }
    return 0;
}

static int set_slots(wkv_neuron_graph *g, int input, void *const *bufs, const size_t *lens, char *err, size_t n) {
    const char *call = input ? "setInput" : "setOutput", *kind = input ? "input" : "output";
    int (*set)(void *, uint64_t, void *, size_t, BufferAttribute) =
        (int (*)(void *, uint64_t, void *, size_t, BufferAttribute))sym(g->lib, "NeuronRuntime_", call);
    const char *const *names = input ? g->in_names : g->out_names;
    BufferAttribute plain = {-1};
    for (size_t i = 0; i < (input ? g->n_in : g->n_out); i++) {
        int rc = set(g->handle, i, bufs[i], lens[i], plain);
        if (rc == 0) continue;
        char slot[160];
        if (names) snprintf(slot, sizeof slot, " %s slot %zu (%s, %zu bytes given)", kind, i, names[i], lens[i]);
        else snprintf(slot, sizeof slot, " %s slot %zu (%zu bytes given)", kind, i, lens[i]);
        return say(err, n, WKV_NEURON_RUN_FIX, "NeuronRuntime_%s failed for %s%s with error code %d", call, g->file,
                   slot, rc);
    }
    return 0;
}

int wkv_neuron_run(wkv_neuron_graph *g, void *const *ins, const size_t *in_len, void *const *outs,
                   const size_t *out_len, char *err, size_t n) {
    int rc;
    if (!g->handle)
        return say(err, n, "restart the runner; if it persists check the APU driver's log (dmesg) on the board",
                   "the runtime of %s was released and could not be created again", g->file);
    if (g->lib->v1) {
        if (set_slots(g, 1, ins, in_len, err, n) || set_slots(g, 0, outs, out_len, err, n)) return -1;
        int (*infer)(void *) = (int (*)(void *))sym(g->lib, "NeuronRuntime_", "inference");
        if ((rc = infer(g->handle)) != 0)
            return say(err, n, WKV_NEURON_RUN_FIX, "NeuronRuntime_inference failed for %s with error code %d",
                       g->file, rc);
        return 0;
    }
    IOBuffer in_bufs[WKV_NEURON_MAX_SLOTS], out_bufs[WKV_NEURON_MAX_SLOTS];
    for (size_t i = 0; i < g->n_in; i++) in_bufs[i] = (IOBuffer){ins[i], in_len[i], -1, 0, 0, 0};
    for (size_t i = 0; i < g->n_out; i++) out_bufs[i] = (IOBuffer){outs[i], out_len[i], -1, 0, 0, 0};
    int (*run)(void *, SyncInferenceRequest) = (int (*)(void *, SyncInferenceRequest))sym(g->lib, "NeuronRuntimeV2_",
                                                                                         "run");
    if ((rc = run(g->handle, (SyncInferenceRequest){in_bufs, out_bufs})) != 0)
        return say(err, n, WKV_NEURON_RUN_FIX, "NeuronRuntimeV2_run failed for %s with error code %d", g->file, rc);
    return 0;
}

void wkv_neuron_graph_release(wkv_neuron_graph *g) {
    if (!g->handle) return;
    void (*release)(void *) = (void (*)(void *))sym(g->lib, prefix_of(g->lib), "release");
    release(g->handle);
    g->handle = NULL;
}
