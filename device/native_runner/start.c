#define _POSIX_C_SOURCE 200809L

#include "start.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "whisperkv_spec.h"

static const char *const neuron_api[] = WKV_FLAG_NEURON_API_CHOICES;
static const char *const neuron_qos[] = WKV_FLAG_NEURON_QOS_CHOICES;
static const char *const neuron_io[] = WKV_FLAG_NEURON_IO_CHOICES;
static const char *const neuron_create[] = WKV_FLAG_NEURON_CREATE_CHOICES;
static const char *const workload[] = WKV_FLAG_WORKLOAD_CHOICES;

typedef struct {
    const char *flag, *kind;
    const char *const *choices;
    int n_choices;
    const char **text;     /* text and choice rows */
    int *on;               /* flag rows */
} row;

#define ROWS(f)                                                                                                   \
    {                                                                                                             \
        {WKV_FLAG_MODEL_FLAG, WKV_FLAG_MODEL_KIND, NULL, 0, &(f)->model, NULL},                                   \
        {WKV_FLAG_BACKEND_FLAG, WKV_FLAG_BACKEND_KIND, NULL, 0, &(f)->backend, NULL},                             \
        {WKV_FLAG_DELEGATE_FLAG, WKV_FLAG_DELEGATE_KIND, NULL, 0, &(f)->delegate, NULL},                          \
        {WKV_FLAG_NEURON_LIB_FLAG, WKV_FLAG_NEURON_LIB_KIND, NULL, 0, &(f)->neuron_lib, NULL},                    \
        {WKV_FLAG_NEURON_API_FLAG, WKV_FLAG_NEURON_API_KIND, neuron_api, WKV_FLAG_NEURON_API_CHOICES_COUNT,       \
         &(f)->neuron_api, NULL},                                                                                 \
        {WKV_FLAG_NEURON_QOS_FLAG, WKV_FLAG_NEURON_QOS_KIND, neuron_qos, WKV_FLAG_NEURON_QOS_CHOICES_COUNT,       \
         &(f)->neuron_qos, NULL},                                                                                 \
        {WKV_FLAG_NEURON_IO_FLAG, WKV_FLAG_NEURON_IO_KIND, neuron_io, WKV_FLAG_NEURON_IO_CHOICES_COUNT,           \
         &(f)->neuron_io, NULL},                                                                                  \
        {WKV_FLAG_NEURON_CREATE_FLAG, WKV_FLAG_NEURON_CREATE_KIND, neuron_create,                                 \
         WKV_FLAG_NEURON_CREATE_CHOICES_COUNT, &(f)->neuron_create, NULL},                                        \
        {WKV_FLAG_NPU_PROFILE_FLAG, WKV_FLAG_NPU_PROFILE_KIND, NULL, 0, NULL, &(f)->npu_profile},                 \
        {WKV_FLAG_WORKLOAD_FLAG, WKV_FLAG_WORKLOAD_KIND, workload, WKV_FLAG_WORKLOAD_CHOICES_COUNT,               \
         &(f)->workload, NULL},                                                                                   \
    }

static int bad_flag(const char *what, const char *flag) {
    fprintf(stderr, "whisperkv-runner: error: %s: %s (the runner's flags: docs/protocol.md, the settings rows)\n",
            what, flag);
    return 2;
}

/* The Python runner's own limits flags, which the protocol tests start runners with. */
static int limit(const char *value, uint64_t *out) {
    char *end;
    if (!value || !*value || *value == '-') return -1;
    unsigned long long v = strtoull(value, &end, 10);
    if (*end) return -1;
    *out = v;
    return 0;
}

int wkv_parse_flags(int argc, char **argv, wkv_flags *f) {
    memset(f, 0, sizeof *f);
    f->backend = WKV_FLAG_BACKEND_DEFAULT;
    f->workload = WKV_FLAG_WORKLOAD_DEFAULT;
    f->npu_profile = WKV_FLAG_NPU_PROFILE_DEFAULT;
    f->max_header = WKV_MAX_HEADER;
    f->max_payload = WKV_MAX_PAYLOAD;
    row rows[] = ROWS(f);
    size_t n_rows = sizeof rows / sizeof rows[0];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fprintf(stderr, "usage: whisperkv-runner [--model DIR] [--max-header N] [--max-payload N]");
            for (size_t r = 0; r < n_rows; r++) fprintf(stderr, " [%s%s]", rows[r].flag, rows[r].on ? "" : " X");
            fprintf(stderr, "\nServes docs/protocol.md on stdin/stdout; logs go to stderr.\n");
            return 1;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (!strncmp(arg, "--max-header", name_len) && name_len == 12) {
            if (!value && i + 1 < argc) value = argv[++i];
            if (limit(value, &f->max_header)) return bad_flag("--max-header takes a number of bytes", arg);
            continue;
        }
        if (!strncmp(arg, "--max-payload", name_len) && name_len == 13) {
            if (!value && i + 1 < argc) value = argv[++i];
            if (limit(value, &f->max_payload)) return bad_flag("--max-payload takes a number of bytes", arg);
            continue;
        }
        const row *hit = NULL;
        for (size_t r = 0; r < n_rows; r++)
            if (strlen(rows[r].flag) == name_len && !strncmp(arg, rows[r].flag, name_len)) hit = &rows[r];
        if (!hit) return bad_flag("unrecognized argument", arg);
        if (!strcmp(hit->kind, "flag")) {
            if (eq) return bad_flag("this flag takes no value", arg);
            *hit->on = 1;
            continue;
        }
        if (!value) {
            if (i + 1 >= argc) return bad_flag("expected one argument", arg);
            value = argv[++i];
        }
        int ok = hit->n_choices == 0;
        for (int c = 0; c < hit->n_choices; c++) ok |= !strcmp(value, hit->choices[c]);
        if (!ok) return bad_flag("invalid choice", value);
        *hit->text = value;
    }
    return 0;
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* As deploy lays a board out: the runner's folder beside model/ (device/deploy/deploy.py). */
void wkv_default_bundle(char *out, size_t len) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(out, len, "model");
        return;
    }
    exe[n] = 0;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
    }
    snprintf(out, len, "%s/model", *exe ? exe : "");
}

#define FIX "deploy a compiled bundle with `whisperkv deploy --device URL --model BUNDLE --backend dla`, or start " \
            "the runner with --model DIR (a bundle with model.json)"

int wkv_model_problem(const wkv_flags *f, char *msg, size_t len) {
    char dir[4200], manifest[4300];
    if (f->model) snprintf(dir, sizeof dir, "%s", f->model);
    else wkv_default_bundle(dir, sizeof dir);
    snprintf(manifest, sizeof manifest, "%s/%s", dir, "model.json");
    msg[0] = 0;
    if (!is_dir(dir))
        snprintf(msg, len, "model directory not found: %s — " FIX, dir);
    else if (access(manifest, R_OK) != 0)
        snprintf(msg, len, "%s is not an exported bundle (no model.json) — " FIX, dir);
    return msg[0] != 0;
}
