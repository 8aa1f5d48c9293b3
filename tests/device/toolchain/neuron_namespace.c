/* The native runner's Neuron library search (device/native_runner/neuron_lib.c) with Android's dlopen replaced:
   every dlopen fails, dlerror saying what Android's linker says when a namespace refuses a library
   (STANDIN_NAMESPACE set) or that the library is not found. Prints the status, the refusal line and its fix's
   parts. A stand-in for a linker with namespaces, which Android 6's has not (test_bionic_build.py). */
#include <stdio.h>
#include <stdlib.h>

#include "neuron.h"
#include "say.h"

static char opened[4096];

void *dlopen(const char *path, int flags) {
    (void)flags;
    snprintf(opened, sizeof opened, "%s", path);
    return NULL;
}

char *dlerror(void) {
    static char why[4400];
    if (getenv("STANDIN_NAMESPACE"))
        snprintf(why, sizeof why, "dlopen failed: library \"%s\" needed or dlopened by \"/system/bin/sh\" is not "
                 "accessible for the namespace \"(default)\"", opened);
    else
        snprintf(why, sizeof why, "dlopen failed: library \"%s\" not found", opened);
    return why;
}

int main(int argc, char **argv) {
    wkv_neuron_lib lib;
    char err[2048] = "";
    int rc = wkv_neuron_open(&lib, argc > 1 ? argv[1] : NULL, NULL, err, sizeof err);
    const char *parts = wkv_fix_parts();
    printf("%d\n%s\n%s\n", rc, err, parts ? parts : "-");
    return 0;
}
