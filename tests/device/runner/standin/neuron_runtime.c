/* STAND-IN for MediaTek's Neuron runtime library (test only; no APU exists here).
 *
 * It exports the RuntimeV2.h functions the dla backend calls, with the same structs, and really computes:
 * each call goes back into the running Python (the runner that loaded this library with ctypes, which
 * released the GIL) to tests/device/runner/standin/neuron_compute.py, which runs the TFLite graph that the
 * stand-in ncc-tflite stored inside the .dla in LiteRT. Built by the tests with
 *   cc -shared -fPIC -I<python include> -DSTANDIN_DIR='"<this folder>"' [-DFAIL_CREATE] [-DFAIL_RUN_AT=N]
 * FAIL_CREATE makes every create fail with code 4; FAIL_RUN_AT makes the Nth run (1-based) fail with code 5.
 * NeuronRuntime_getVersion reports 0.0.1 (no real runtime is that old); NO_VERSION leaves the symbol out, as a
 * library that reports none. It exports `whisperkv_standin`, so a runner can say in hello that its NPU is a
 * stand-in (device/runner/runner_kind.py).
 */
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
    void* buffer;
    size_t length;
    int fd;
    int offset;
    uint64_t reserved2_should_be_init_zero;
    uint64_t reserved3_should_be_init_zero;
} IOBuffer;

typedef struct {
    IOBuffer* inputs;
    IOBuffer* outputs;
} SyncInferenceRequest;

const char whisperkv_standin[] = "STAND-IN Neuron runtime (tests/device/runner/standin)";

static PyObject* compute_module(void) {
    static PyObject* module = NULL;
    if (module == NULL) {
        PyObject* path = PySys_GetObject("path");   /* borrowed */
        PyObject* dir = PyUnicode_FromString(STANDIN_DIR);
        PyList_Insert(path, 0, dir);
        Py_DECREF(dir);
        module = PyImport_ImportModule("neuron_compute");
    }
    return module;
}

/* A call of neuron_compute.NAME(args) returning an int (-1 and a printed traceback when it raised). */
static long call_int(const char* name, PyObject* args) {
    long out = -1;
    PyObject* m = compute_module();
    if (m != NULL && args != NULL) {
        PyObject* fn = PyObject_GetAttrString(m, name);
        PyObject* r = fn != NULL ? PyObject_CallObject(fn, args) : NULL;
        if (r != NULL) {
            out = PyLong_AsLong(r);
            Py_DECREF(r);
        }
        Py_XDECREF(fn);
    }
    if (PyErr_Occurred()) PyErr_Print();
    Py_XDECREF(args);
    return out;
}

int NeuronRuntimeV2_create(const char* pathToDlaFile, size_t nbThreads, void** runtime, size_t backlog) {
#ifdef FAIL_CREATE
    (void)pathToDlaFile; (void)nbThreads; (void)runtime; (void)backlog;
    return 4;
#else
    PyGILState_STATE g = PyGILState_Ensure();
    long handle = call_int("create", Py_BuildValue("(sn)", pathToDlaFile, (Py_ssize_t)nbThreads));
    PyGILState_Release(g);
    (void)backlog;
    if (handle <= 0) return 4;
    *runtime = (void*)(intptr_t)handle;
    return 0;
#endif
}

static PyObject* buffers(IOBuffer* b, long n) {
    PyObject* list = PyList_New(n);
    for (long i = 0; i < n; i++)
        PyList_SET_ITEM(list, i, Py_BuildValue("(Kn)", (unsigned long long)(uintptr_t)b[i].buffer,
                                               (Py_ssize_t)b[i].length));
    return list;
}

static long count(void* runtime, const char* kind) {
    return call_int("count", Py_BuildValue("(ls)", (long)(intptr_t)runtime, kind));
}

int NeuronRuntimeV2_run(void* runtime, SyncInferenceRequest request) {
    static long runs = 0;
    runs++;
#ifdef FAIL_RUN_AT
    if (runs == FAIL_RUN_AT) return 5;
#endif
    PyGILState_STATE g = PyGILState_Ensure();
    long n_in = count(runtime, "inputs"), n_out = count(runtime, "outputs");
    long rc = call_int("run", Py_BuildValue("(lNN)", (long)(intptr_t)runtime, buffers(request.inputs, n_in),
                                            buffers(request.outputs, n_out)));
    PyGILState_Release(g);
    return rc == 0 ? 0 : 5;
}

static int get(void* runtime, const char* kind, long handle, size_t* out) {
    PyGILState_STATE g = PyGILState_Ensure();
    long v = call_int("size", Py_BuildValue("(lsl)", (long)(intptr_t)runtime, kind, handle));
    PyGILState_Release(g);
    if (v < 0) return 1;
    *out = (size_t)v;
    return 0;
}

int NeuronRuntimeV2_getInputNumber(void* runtime, size_t* n) { return get(runtime, "inputs", -1, n); }
int NeuronRuntimeV2_getOutputNumber(void* runtime, size_t* n) { return get(runtime, "outputs", -1, n); }
int NeuronRuntimeV2_getInputSize(void* runtime, uint64_t h, size_t* n) { return get(runtime, "inputs", (long)h, n); }
int NeuronRuntimeV2_getOutputSize(void* runtime, uint64_t h, size_t* n) { return get(runtime, "outputs", (long)h, n); }
int NeuronRuntimeV2_getInputPaddedSize(void* runtime, uint64_t h, size_t* n) {
    return get(runtime, "inputs", (long)h, n);
}
int NeuronRuntimeV2_getOutputPaddedSize(void* runtime, uint64_t h, size_t* n) {
    return get(runtime, "outputs", (long)h, n);
}
int NeuronRuntimeV2_setQoSOption(void* runtime, const void* qos) { (void)runtime; (void)qos; return 0; }

#ifndef NO_VERSION
typedef struct {
    uint8_t major;
    uint8_t minor;
    uint8_t patch;
} NeuronVersion;

int NeuronRuntime_getVersion(NeuronVersion* version) {
    version->major = 0;
    version->minor = 0;
    version->patch = 1;
    return 0;
}
#endif

void NeuronRuntimeV2_release(void* runtime) {
    PyGILState_STATE g = PyGILState_Ensure();
    call_int("release", Py_BuildValue("(l)", (long)(intptr_t)runtime));
    PyGILState_Release(g);
}
