/* What the runner is started with: its flags (the settings rows' runner flags, from whisperkv_spec.h) and the
   bundle they point it at. */
#ifndef WKV_START_H
#define WKV_START_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *model, *backend, *delegate, *workload;
    const char *neuron_lib, *neuron_api, *neuron_qos, *neuron_io, *neuron_create;
    int npu_profile;
    uint64_t max_header, max_payload;
} wkv_flags;

/* 0: parsed; 1: --help was printed (exit 0); 2: a bad flag, said in one line on stderr (exit 2, as argparse). */
int wkv_parse_flags(int argc, char **argv, wkv_flags *flags);

/* The bundle deploy lays out beside the runner: model/ in the parent of the executable's folder. */
void wkv_default_bundle(char *out, size_t len);

/* Why no bundle is there to load, as the one-line model_missing message (the problem, " — ", the fix), into msg:
   1; 0 (msg empty) when there is one. */
int wkv_model_problem(const wkv_flags *flags, char *msg, size_t len);

#endif
