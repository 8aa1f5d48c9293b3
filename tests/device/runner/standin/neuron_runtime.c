/* STAND-IN for MediaTek's Neuron runtime library (test only; no APU exists here).
 *
 * It exports the Runtime V1 (RuntimeAPI.h) and/or V2 (RuntimeV2.h) functions the dla backend calls, with the
 * same structs, and really computes: each call goes back into the running Python (the runner that loaded this
 * library with ctypes, which released the GIL) to tests/device/runner/standin/neuron_compute.py, which runs in
 * LiteRT the TFLite graph held in the .dla. Built by the tests (build.py) with
 *   cc -shared -fPIC -I<python include> -DSTANDIN_DIR='"<this folder>"' [defines]
 * WITH_V1, WITH_V2: the APIs exported (neither given: both). NO_NUMBER leaves V1's get{Input,Output}Number out
 * (older headers). PADDED makes get*PaddedSize report each input's innermost rows padded to 16 elements (the
 * outputs unpadded, as the Genio 720 runner's logits came); PAD_OUTPUTS pads the outputs' rows too.
 * V1 with conversion suppressed (EnvOptions): float slots are fp16 in the NPU's form (get*Size 2 bytes an element)
 * and setInput/setOutput refuse (code 4) a buffer that is not the padded size; with conversion on (and every V2
 * runtime) the slots are the .tflite's own types and sizes. neuron_compute.py holds the rules.
 * FAIL_CREATE makes every create fail with code 4; FAIL_RUN_AT=N makes the Nth run (1-based) fail with code 5.
 * NeuronRuntime_getVersion reports 0.0.1 (no real runtime is that old); NO_VERSION leaves the symbol out.
 * WITH_MARKER exports `whisperkv_standin`, which a runner reports in hello (device/spec/runner_kind.py) and
 * nothing else reads: the tests' default builds go without it, as MediaTek's library does.
 * STANDIN_APU="SOCKET": every call is computed by the STAND-IN APU listening there (apu.py), a process apart.
 * OWN_PYTHON: for a process without Python (the native runner): the library starts its own interpreter (own_python.c).
 * INSTANT: no Python and no computing (instant.c): the slots are read from the .dla's graph, each run returns success
 * at once with its outputs left as they are, so a runner's own cost per token can be timed (bench/native_runner.py).
 * WIRE: no Python in the library (wire.c), for a board that has none (Android: built for bionic, build.py): each
 * call goes as a binary message to the STAND-IN APU at STANDIN_APU (apu_wire.py).
 * Without INSTANT or WIRE, each call goes to the running Python (python_call.c).
 */
#if defined(INSTANT) || defined(WIRE)
typedef void PyObject;                /* the argument builders below are compiled but never called */
#define Py_BuildValue(...) NULL
#define PyList_New(n) NULL
#define PyList_SET_ITEM(list, i, item) ((void)(item))
#ifdef INSTANT
#define DIRECT_CALL instant_call
#else
#define DIRECT_CALL wire_call
#endif
static long DIRECT_CALL(const char* name, void* arg);
#define locked_call(name, build, arg) DIRECT_CALL(name, arg)
#else
#include <Python.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#if !defined(WITH_V1) && !defined(WITH_V2)
#define WITH_V1
#define WITH_V2
#endif
#ifndef STANDIN_APU
#define STANDIN_APU ""
#endif

#if !defined(INSTANT) && !defined(WIRE)
#include "python_call.c"
#endif

#ifdef WITH_MARKER
const char whisperkv_standin[] = "STAND-IN Neuron runtime (tests/device/runner/standin)";
#endif


typedef struct { long rt; const char* kind; long slot; int padded; } SizeQuery;
static PyObject* size_args(void* q) {
    SizeQuery* s = q;
    return Py_BuildValue("(lsli)", s->rt, s->kind, s->slot, s->padded);
}

static int get(long rt, const char* kind, long slot, int padded, size_t* out) {
    SizeQuery q = {rt, kind, slot, padded};
    long v = locked_call("size", size_args, &q);
    if (v < 0) return 4;              /* no such slot (probing stops here) */
    *out = (size_t)v;
    return 0;
}

#if defined(PAD_OUTPUTS)
#define PAD 2
#elif defined(PADDED)
#define PAD 1
#else
#define PAD 0
#endif

typedef struct { void* buffer; size_t length; } Buf;
typedef struct { long rt; Buf* ins; long n_in; Buf* outs; long n_out; } RunArgs;
static PyObject* buffers(Buf* b, long n) {
    PyObject* list = PyList_New(n);
    for (long i = 0; i < n; i++)
        PyList_SET_ITEM(list, i, Py_BuildValue("(Kn)", (unsigned long long)(uintptr_t)b[i].buffer,
                                               (Py_ssize_t)b[i].length));
    return list;
}
static PyObject* run_args(void* a) {
    RunArgs* r = a;
    return Py_BuildValue("(lNN)", r->rt, buffers(r->ins, r->n_in), buffers(r->outs, r->n_out));
}

/* Both APIs' runs: FAIL_RUN_AT counts them together. */
static int run(long rt, Buf* ins, long n_in, Buf* outs, long n_out) {
    static long runs = 0;
    runs++;
#ifdef FAIL_RUN_AT
    if (runs == FAIL_RUN_AT) return 5;
#endif
    RunArgs a = {rt, ins, n_in, outs, n_out};
    return locked_call("run", run_args, &a) == 0 ? 0 : 5;
}

static long count(long rt, const char* kind) {
    size_t n = 0;
    return get(rt, kind, -1, 0, &n) == 0 ? (long)n : 0;
}

typedef struct { const char* path; long threads; int suppress_in, suppress_out; } CreateArgs;
static PyObject* create_args(void* a) {
    CreateArgs* c = a;
    return Py_BuildValue("(sliii)", c->path, c->threads, c->suppress_in, c->suppress_out, PAD);
}

typedef struct { long rt; const char* kind; long slot; size_t length; } AcceptArgs;
static PyObject* accept_args(void* a) {
    AcceptArgs* s = a;
    return Py_BuildValue("(lsln)", s->rt, s->kind, s->slot, (Py_ssize_t)s->length);
}
static PyObject* handle_args(void* a) { return Py_BuildValue("(l)", (long)(intptr_t)a); }

typedef struct { int preference; int priority; uint8_t boostValue, maxBoostValue, minBoostValue;
                 uint16_t deadline, abortTime; int32_t delayedPowerOffTime; int powerPolicy, applicationType;
                 void* profiledQoSData; } QoSOptions;
typedef struct { long rt; const QoSOptions* q; } QoSArgs;
static PyObject* qos_args(void* a) {
    QoSArgs* s = a;
    return Py_BuildValue("(liiii)", s->rt, s->q->preference, s->q->priority, (int)s->q->boostValue,
                         s->q->powerPolicy);
}
static int set_qos(long rt, const QoSOptions* q) {
    QoSArgs a = {rt, q};
    return locked_call("qos", qos_args, &a) == 0 ? 0 : 4;
}

#ifdef WITH_V1
#define MAX_SLOTS 64
typedef enum { Auto = 0, Single = 1, Dual = 2 } MDLACoreMode;
typedef struct { uint32_t deviceKind; MDLACoreMode MDLACoreOption; uint8_t CPUThreadNum;
                 bool suppressInputConversion; bool suppressOutputConversion; } EnvOptions;
typedef struct { int ionFd; } BufferAttribute;
typedef struct { EnvOptions env; long rt; Buf ins[MAX_SLOTS]; Buf outs[MAX_SLOTS]; } V1Runtime;

int NeuronRuntime_create(const EnvOptions* options, void** runtime) {
#ifdef FAIL_CREATE
    (void)options; (void)runtime;
    return 4;
#else
    V1Runtime* r = calloc(1, sizeof(V1Runtime));
    if (r == NULL) return 1;
    r->env = *options;
    *runtime = r;
    return 0;
#endif
}

int NeuronRuntime_create_with_options(const char* opts, const EnvOptions* options, void** runtime) {
    (void)opts;
    return NeuronRuntime_create(options, runtime);
}

int NeuronRuntime_loadNetworkFromFile(void* runtime, const char* pathToDla) {
    V1Runtime* r = runtime;
    CreateArgs c = {pathToDla, r->env.CPUThreadNum, r->env.suppressInputConversion, r->env.suppressOutputConversion};
    long h = locked_call("create", create_args, &c);
    if (h <= 0) return 4;
    r->rt = h;
    return 0;
}

static int set_buf(V1Runtime* r, const char* kind, Buf* slots, uint64_t handle, const void* buffer, size_t length,
                   BufferAttribute attr) {
    if (handle >= MAX_SLOTS || attr.ionFd != -1) return 4;    /* only ordinary buffers here */
    AcceptArgs a = {r->rt, kind, (long)handle, length};
    if (locked_call("accepts", accept_args, &a) != 1) return 4;  /* a buffer of another size than the slot takes */
    slots[handle].buffer = (void*)buffer;
    slots[handle].length = length;
    return 0;
}
int NeuronRuntime_setInput(void* runtime, uint64_t handle, const void* buffer, size_t length, BufferAttribute attr) {
    V1Runtime* r = runtime;
    return set_buf(r, "inputs", r->ins, handle, buffer, length, attr);
}
int NeuronRuntime_setOutput(void* runtime, uint64_t handle, void* buffer, size_t length, BufferAttribute attr) {
    V1Runtime* r = runtime;
    return set_buf(r, "outputs", r->outs, handle, buffer, length, attr);
}
int NeuronRuntime_inference(void* runtime) {
    V1Runtime* r = runtime;
    return run(r->rt, r->ins, count(r->rt, "inputs"), r->outs, count(r->rt, "outputs"));
}
#ifndef NO_NUMBER
int NeuronRuntime_getInputNumber(void* rt, size_t* n) { return get(((V1Runtime*)rt)->rt, "inputs", -1, 0, n); }
int NeuronRuntime_getOutputNumber(void* rt, size_t* n) { return get(((V1Runtime*)rt)->rt, "outputs", -1, 0, n); }
#endif
int NeuronRuntime_getInputSize(void* runtime, uint64_t h, size_t* n) {
    return get(((V1Runtime*)runtime)->rt, "inputs", (long)h, 0, n);
}
int NeuronRuntime_getOutputSize(void* runtime, uint64_t h, size_t* n) {
    return get(((V1Runtime*)runtime)->rt, "outputs", (long)h, 0, n);
}
int NeuronRuntime_getInputPaddedSize(void* runtime, uint64_t h, size_t* n) {
    return get(((V1Runtime*)runtime)->rt, "inputs", (long)h, 1, n);
}
int NeuronRuntime_getOutputPaddedSize(void* runtime, uint64_t h, size_t* n) {
    return get(((V1Runtime*)runtime)->rt, "outputs", (long)h, 1, n);
}
int NeuronRuntime_setQoSOption(void* runtime, const QoSOptions* qos) { return set_qos(((V1Runtime*)runtime)->rt, qos); }
void NeuronRuntime_release(void* runtime) {
    V1Runtime* r = runtime;
    if (r->rt > 0) locked_call("release", handle_args, (void*)(intptr_t)r->rt);
    free(r);
}
#endif

#ifdef WITH_V2
typedef struct { void* buffer; size_t length; int fd; int offset; uint64_t reserved2_should_be_init_zero;
                 uint64_t reserved3_should_be_init_zero; } IOBuffer;
typedef struct { IOBuffer* inputs; IOBuffer* outputs; } SyncInferenceRequest;

int NeuronRuntimeV2_create(const char* pathToDlaFile, size_t nbThreads, void** runtime, size_t backlog) {
    (void)backlog;
#ifdef FAIL_CREATE
    (void)pathToDlaFile; (void)nbThreads; (void)runtime;
    return 4;
#else
    CreateArgs c = {pathToDlaFile, (long)nbThreads, 0, 0};
    long handle = locked_call("create", create_args, &c);
    if (handle <= 0) return 4;
    *runtime = (void*)(intptr_t)handle;
    return 0;
#endif
}

static Buf* plain(IOBuffer* b, long n) {
    Buf* out = calloc(n > 0 ? n : 1, sizeof(Buf));
    for (long i = 0; i < n; i++) {
        out[i].buffer = b[i].buffer;
        out[i].length = b[i].fd == -1 ? b[i].length : 0;     /* only ordinary buffers here */
    }
    return out;
}

int NeuronRuntimeV2_run(void* runtime, SyncInferenceRequest request) {
    long rt = (long)(intptr_t)runtime, n_in = count(rt, "inputs"), n_out = count(rt, "outputs");
    Buf* ins = plain(request.inputs, n_in);
    Buf* outs = plain(request.outputs, n_out);
    int rc = run(rt, ins, n_in, outs, n_out);
    free(ins);
    free(outs);
    return rc;
}

int NeuronRuntimeV2_getInputNumber(void* rt, size_t* n) { return get((long)(intptr_t)rt, "inputs", -1, 0, n); }
int NeuronRuntimeV2_getOutputNumber(void* rt, size_t* n) { return get((long)(intptr_t)rt, "outputs", -1, 0, n); }
int NeuronRuntimeV2_getInputSize(void* runtime, uint64_t h, size_t* n) {
    return get((long)(intptr_t)runtime, "inputs", (long)h, 0, n);
}
int NeuronRuntimeV2_getOutputSize(void* runtime, uint64_t h, size_t* n) {
    return get((long)(intptr_t)runtime, "outputs", (long)h, 0, n);
}
int NeuronRuntimeV2_getInputPaddedSize(void* runtime, uint64_t h, size_t* n) {
    return get((long)(intptr_t)runtime, "inputs", (long)h, 1, n);
}
int NeuronRuntimeV2_getOutputPaddedSize(void* runtime, uint64_t h, size_t* n) {
    return get((long)(intptr_t)runtime, "outputs", (long)h, 1, n);
}
int NeuronRuntimeV2_setQoSOption(void* runtime, const QoSOptions* qos) { return set_qos((long)(intptr_t)runtime, qos); }
void NeuronRuntimeV2_release(void* runtime) { locked_call("release", handle_args, runtime); }
#endif

#ifndef NO_VERSION
typedef struct { uint8_t major, minor, patch; } NeuronVersion;

int NeuronRuntime_getVersion(NeuronVersion* version) {
    *version = (NeuronVersion){0, 0, 1};
    return 0;
}
#endif

#ifdef INSTANT
#include "instant.c"
#endif
#ifdef WIRE
#include "wire.c"
#endif
#ifdef OWN_PYTHON
#include "own_python.c"
#endif
