#include "say.h"

#include <stdarg.h>
#include <stdio.h>

int say(char *err, size_t n, const char *fix, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(err, n, fmt, ap);
    va_end(ap);
    if (fix && k >= 0 && (size_t)k < n) snprintf(err + k, n - (size_t)k, " — %s", fix);
    return -1;
}
