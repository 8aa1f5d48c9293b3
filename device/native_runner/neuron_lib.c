/* The Neuron runtime library found and opened (neuron.h): the path given, else the spec's search order (on Android
   its /vendor entries only), else the sonames; Runtime V1 where it exports all of V1's calls, else V2
   (device/runner/neuron/neuron_runtime.py). */
#define _POSIX_C_SOURCE 200809L

#include "neuron.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "json_out.h"
#include "say.h"
#include "whisperkv_spec.h"

typedef struct { uint8_t major, minor, patch; } NeuronVersion;

/* WKV_NEURON_LIB_FIX's parts: its ?neuron_lib=PATH is a setting (device/runner/neuron/neuron_runtime.py LIB) */
static const char *lib_fix_parts(void) {
    static const char named[] = "?neuron_lib=PATH";
    static wkv_out parts;
    if (parts.len) return parts.buf;
    const char *at = strstr(WKV_NEURON_LIB_FIX, named);
    wkv_out_raw(&parts, "[", 1);
    wkv_out_str(&parts, WKV_NEURON_LIB_FIX, at ? (size_t)(at - WKV_NEURON_LIB_FIX) : strlen(WKV_NEURON_LIB_FIX));
    if (at) {
        static const char setting[] = ",{\"setting\":\"neuron_lib\",\"value\":\"PATH\"},";
        wkv_out_raw(&parts, setting, strlen(setting));
        wkv_out_str(&parts, at + strlen(named), strlen(at + strlen(named)));
    }
    wkv_out_raw(&parts, "]", 1);
    return parts.buf;
}

#define LIB_REFUSAL(err, n, ...) say_parts(err, n, WKV_NEURON_LIB_FIX, lib_fix_parts(), __VA_ARGS__)

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The symbols of `needs` the library lacks, worded as the Python runner words them; 0 when it lacks none. */
static int lacks(void *dl, const char *api, const char *const *needs, int count, char *out, size_t n) {
    int missing = 0;
    size_t k = 0;
    for (int i = 0; i < count; i++) {
        if (dlsym(dl, needs[i])) continue;
        if (missing < 2 && k < n)
            k += (size_t)snprintf(out + k, n - k, missing ? ", %s" : "%s lacks %s", missing ? needs[i] : api, needs[i]);
        missing++;
    }
    if (missing > 2 && k < n) snprintf(out + k, n - k, " and %d more", missing - 2);
    return missing;
}

/* Whether the search order's `path` is where this system keeps libraries: an Android image has no /usr, and
   keeps the Neuron runtime under /vendor (the MT8371's /vendor/lib64/mt8189 first, as the spec orders it). */
static int searched(const char *path) {
#ifdef __ANDROID__
    return strncmp(path, "/vendor/", 8) == 0;
#else
    (void)path;
    return 1;
#endif
}

#ifdef __ANDROID__
/* Android's linker namespaces may keep a program outside /vendor from opening /vendor's libraries; the public
   MT8371 ports run from /data/local/tmp and dlopen the absolute /vendor path (superLin006/MTK_model_zoo). */
static int namespace_refusal(const char *path, const char *why, char *err, size_t n) {
    static const char *const order[] = WKV_NEURON_SEARCH_ORDER;
    static const char setting[] = ",{\"setting\":\"neuron_lib\",\"value\":";
    static const char how[] = "run the runner from /data/local/tmp with LD_LIBRARY_PATH=/vendor/lib64/mt8189:"
                              "/vendor/lib64, or name the library by its absolute /vendor path: ";
    const char *named = path;
    for (int i = 0; named[0] != '/' && i < WKV_NEURON_SEARCH_ORDER_COUNT; i++)
        if (searched(order[i])) named = order[i];
    char fix[sizeof how + 4200];
    snprintf(fix, sizeof fix, "%s?neuron_lib=%s", how, named);
    wkv_out parts = {0};
    wkv_out_raw(&parts, "[", 1);
    wkv_out_str(&parts, how, strlen(how));
    wkv_out_raw(&parts, setting, sizeof setting - 1);
    wkv_out_str(&parts, named, strlen(named));
    wkv_out_raw(&parts, "}]", 2);
    say_parts(err, n, fix, parts.buf, "Android's linker namespace keeps this runner from the Neuron runtime library "
              "%s (%s)", path, why);
    wkv_out_free(&parts);
    return -1;
}
#endif

static int load(wkv_neuron_lib *lib, const char *path, char *err, size_t n) {
    snprintf(lib->path, sizeof lib->path, "%s", path);
    lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->dl) {
        const char *why = dlerror();
#ifdef __ANDROID__
        if (why && strstr(why, "namespace")) return namespace_refusal(path, why, err, n);
#endif
        return LIB_REFUSAL(err, n, "cannot load the Neuron runtime library %s (%s)", path, why);
    }
    return 0;
}

static int find(wkv_neuron_lib *lib, const char *path, char *err, size_t n) {
    static const char *const order[] = WKV_NEURON_SEARCH_ORDER, *const sonames[] = WKV_NEURON_SONAMES;
    if (path && *path) {
        if (!is_file(path))
            return LIB_REFUSAL(err, n, "the Neuron runtime library %s does not exist", path);
        return load(lib, path, err, n);
    }
    for (int i = 0; i < WKV_NEURON_SEARCH_ORDER_COUNT; i++)
        if (searched(order[i]) && is_file(order[i])) return load(lib, order[i], err, n);
    for (int i = 0; i < WKV_NEURON_SONAMES_COUNT; i++) {
        if ((lib->dl = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL)) != NULL) {
            snprintf(lib->path, sizeof lib->path, "%s", sonames[i]);
            return 0;
        }
#ifdef __ANDROID__
        const char *why = dlerror();
        if (why && strstr(why, "namespace")) return namespace_refusal(sonames[i], why, err, n);
#endif
    }
    char tried[WKV_NEURON_LINE];
    size_t k = 0;
    for (int i = 0; i < WKV_NEURON_SEARCH_ORDER_COUNT && k < sizeof tried; i++)
        if (searched(order[i])) k += (size_t)snprintf(tried + k, sizeof tried - k, "%s%s", k ? ", " : "", order[i]);
    for (int i = 0; i < WKV_NEURON_SONAMES_COUNT && k < sizeof tried; i++)
        k += (size_t)snprintf(tried + k, sizeof tried - k, ", %s (the loader's search)", sonames[i]);
    return LIB_REFUSAL(err, n, "no Neuron runtime library here (tried %s)", tried);
}

int wkv_neuron_open(wkv_neuron_lib *lib, const char *path, const char *api, char *err, size_t n) {
    static const char *const v1_needs[] = WKV_NEURON_V1_NEEDS, *const v2_needs[] = WKV_NEURON_V2_NEEDS;
    memset(lib, 0, sizeof *lib);
    lib->qos = 1;
    if (find(lib, path, err, n)) return -1;
    char v1_lack[512] = "", v2_lack[512] = "";
    int has_v1 = !lacks(lib->dl, "V1", v1_needs, WKV_NEURON_V1_NEEDS_COUNT, v1_lack, sizeof v1_lack);
    int has_v2 = !lacks(lib->dl, "V2", v2_needs, WKV_NEURON_V2_NEEDS_COUNT, v2_lack, sizeof v2_lack);
    if (!has_v1 && !has_v2) {
        LIB_REFUSAL(err, n, "%s is not a Neuron runtime library: it exports neither Runtime API (%s; %s)",
            lib->path, v1_lack, v2_lack);
        wkv_neuron_close(lib);
        return -1;
    }
    const char *first = has_v1 ? "v1" : "v2";
    if (api && strcmp(api, "v1") != 0 && strcmp(api, "v2") != 0) {
        say(err, n, "use ?neuron_api=v1 or ?neuron_api=v2", "unknown Neuron runtime API '%s'", api);
        wkv_neuron_close(lib);
        return -1;
    }
    if (api && !(api[1] == '1' ? has_v1 : has_v2)) {
        char fix[128], parts[256];
        snprintf(fix, sizeof fix, "drop ?neuron_api=%s or use ?neuron_api=%s", api, first);
        snprintf(parts, sizeof parts, "[{\"setting\":\"neuron_api\",\"value\":\"%s\",\"verb\":\"drop\"},\" or use \","
                 "{\"setting\":\"neuron_api\",\"value\":\"%s\"}]", api, first);
        say_parts(err, n, fix, parts, "%s does not export Neuron Runtime V%c (it has V%c)", lib->path, api[1],
                  first[1]);
        wkv_neuron_close(lib);
        return -1;
    }
    lib->v1 = (api ? api : first)[1] == '1';
    /* V2 has no public way to suppress the runtime's conversion (WKV_NEURON_V2_CONVERTS) */
    lib->suppressed = lib->v1;
    return 0;
}

void wkv_neuron_close(wkv_neuron_lib *lib) {
    if (lib->dl) dlclose(lib->dl);
    lib->dl = NULL;
}

int wkv_neuron_version(const wkv_neuron_lib *lib, char *out, size_t n) {
    int (*get)(NeuronVersion *) = (int (*)(NeuronVersion *))dlsym(lib->dl, "NeuronRuntime_getVersion");
    NeuronVersion v = {0, 0, 0};
    if (!get || get(&v) != 0) return -1;
    snprintf(out, n, "%u.%u.%u", v.major, v.minor, v.patch);
    return 0;
}
