/* The computing builds' glue (neuron_runtime.c includes this file unless INSTANT or WIRE): each call goes to
 * neuron_compute.NAME in the running Python, its GIL taken as a ctypes call released it. */
static PyObject* compute_module(void) {
    static PyObject* module = NULL;
    if (module == NULL) {
        PyObject* path = PySys_GetObject("path");   /* borrowed */
        PyObject* dir = PyUnicode_FromString(STANDIN_DIR);
        PyList_Insert(path, 0, dir);
        Py_DECREF(dir);
        module = PyImport_ImportModule("neuron_compute");
        if (module != NULL) {
            PyObject* apu = PyUnicode_FromString(STANDIN_APU);
            PyObject_SetAttrString(module, "APU", apu);
            Py_DECREF(apu);
        }
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

static long locked_call(const char* name, PyObject* (*build)(void*), void* arg) {
    PyGILState_STATE g = PyGILState_Ensure();
    long r = call_int(name, build(arg));
    PyGILState_Release(g);
    return r;
}
