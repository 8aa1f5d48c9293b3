/* One refusal line, as the Python runner's WhisperKVError prints it: the problem, " — ", then the fix. */
#ifndef WKV_SAY_H
#define WKV_SAY_H

#include <stddef.h>

#if defined(__GNUC__)
#define WKV_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define WKV_PRINTF(fmt, args)
#endif

/* Writes the line into err[n] (fix may be NULL) and returns -1, for `return say(...)`. */
int say(char *err, size_t n, const char *fix, const char *fmt, ...) WKV_PRINTF(4, 5);

/* say(), keeping also the fix's parts as an error event's `fix` carries them (core/errors.py Fix.to_wire: text, and
   each device setting it names as an object), as JSON; until the next say, wkv_fix_parts() gives them. */
int say_parts(char *err, size_t n, const char *fix, const char *parts, const char *fmt, ...) WKV_PRINTF(5, 6);

/* The parts of the last refusal's fix when it names a setting, else NULL. */
const char *wkv_fix_parts(void);

#endif
