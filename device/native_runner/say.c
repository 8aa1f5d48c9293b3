#include "say.h"

#include <stdarg.h>
#include <stdio.h>

static char fix_parts[2048];

static int vsay(char *err, size_t n, const char *fix, const char *fmt, va_list ap) {
    int k = vsnprintf(err, n, fmt, ap);
    if (fix && k >= 0 && (size_t)k < n) snprintf(err + k, n - (size_t)k, " — %s", fix);
    return -1;
}

int say(char *err, size_t n, const char *fix, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fix_parts[0] = 0;
    vsay(err, n, fix, fmt, ap);
    va_end(ap);
    return -1;
}

int say_parts(char *err, size_t n, const char *fix, const char *parts, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay(err, n, fix, fmt, ap);
    va_end(ap);
    snprintf(fix_parts, sizeof fix_parts, "%s", parts);
    return -1;
}

const char *wkv_fix_parts(void) { return fix_parts[0] ? fix_parts : NULL; }
