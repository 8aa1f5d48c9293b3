/* OWN_PYTHON (included by neuron_runtime.c): the stand-in for a process without Python, the native runner in C.
 * Loaded there, the library starts an interpreter of its own, isolated from the environment, with the home and
 * module paths of the Python that built it (STANDIN_HOME, STANDIN_PATH, STANDIN_LIBPYTHON: build.py), and
 * releases the GIL as a ctypes call would have, so that each call takes it as under the Python runner. Loaded into a Python, it does
 * nothing: that process's interpreter computes. The runner it serves knows none of this. */
#include <dlfcn.h>
#include <string.h>

__attribute__((constructor)) static void own_python(void) {
    if (Py_IsInitialized()) return;
    /* the runner opened this library RTLD_LOCAL: Python's own symbols made global, for its extension modules */
    dlopen(STANDIN_LIBPYTHON, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.install_signal_handlers = 0;
    PyStatus status = PyConfig_SetBytesString(&config, &config.home, STANDIN_HOME);
    config.module_search_paths_set = 1;
    char paths[] = STANDIN_PATH;
    for (char* part = strtok(paths, ":"); part != NULL && !PyStatus_Exception(status); part = strtok(NULL, ":")) {
        wchar_t* wide = Py_DecodeLocale(part, NULL);
        status = wide ? PyWideStringList_Append(&config.module_search_paths, wide) : PyStatus_NoMemory();
        PyMem_RawFree(wide);
    }
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) Py_ExitStatusException(status);
    PyEval_SaveThread();
}
