/* MediaTek's Neuron runtime through dlopen, as the Python dla backend drives it (device/runner/neuron/): the library
   found in the spec's search order, Runtime V1 where it is exported whole, else V2, and one runtime per .dla.
   Every failure is one line, the problem then " — " and the fix, worded as the Python runner's. */
#ifndef WKV_NEURON_H
#define WKV_NEURON_H

#include <stddef.h>

#define WKV_NEURON_LINE 4096
#define WKV_NEURON_MAX_SLOTS 256

typedef struct {
    char path[1024];     /* where it was found: a path, or the soname the loader resolved */
    void *dl;
    int v1;              /* 1: driven through Runtime V1, 0: V2 */
    int suppressed;      /* conversion suppressed: slots in the NPU's native form (V1 only) */
    int qos;             /* set the public ports' QoS after create, where exported */
} wkv_neuron_lib;

typedef struct {
    const wkv_neuron_lib *lib;
    void *handle;
    char file[256];      /* the .dla's file name, for messages */
    size_t n_in, n_out;
    size_t in_size[WKV_NEURON_MAX_SLOTS], out_size[WKV_NEURON_MAX_SLOTS];
    size_t in_padded[WKV_NEURON_MAX_SLOTS], out_padded[WKV_NEURON_MAX_SLOTS];
    int has_in_padded, has_out_padded;
    const char *qos;     /* "on", "off", "not exported" or "refused" */
    const char *const *in_names, *const *out_names;   /* the contract's slot names, for messages; may be NULL */
} wkv_neuron_graph;

/* `path` when given (NULL or ""), else the search order's first file, else the sonames; `api` NULL, "v1" or "v2".
   0, or -1 and the line in `err`. */
int wkv_neuron_open(wkv_neuron_lib *lib, const char *path, const char *api, char *err, size_t n);
void wkv_neuron_close(wkv_neuron_lib *lib);
/* "major.minor.patch" into `out` when the library reports a version; 0 when it does. */
int wkv_neuron_version(const wkv_neuron_lib *lib, char *out, size_t n);

/* One runtime holding `dla`: created, loaded, QoS set, its slots' sizes and padded sizes read. */
int wkv_neuron_graph_open(wkv_neuron_graph *g, const wkv_neuron_lib *lib, const char *dla, int threads, char *err,
                          size_t n);
/* One synchronous inference over the caller's buffers, in slot order. */
int wkv_neuron_run(wkv_neuron_graph *g, void *const *ins, const size_t *in_len, void *const *outs,
                   const size_t *out_len, char *err, size_t n);
void wkv_neuron_graph_release(wkv_neuron_graph *g);

#endif
