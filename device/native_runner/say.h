/* One refusal line, as the Python runner's WhisperKVError prints it: the problem, " — ", then the fix. */
#ifndef WKV_SAY_H
#define WKV_SAY_H

#include <stddef.h>

/* Writes the line into err[n] (fix may be NULL) and returns -1, for `return say(...)`. */
int say(char *err, size_t n, const char *fix, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
