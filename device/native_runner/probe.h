/* The probe request (device/runner/serve/probe.py, docs/protocol.md): the encoder's outputs sampled at positions
   that are a function of their shape alone, and the first step's logits (<|startoftranscript|> on an empty cache)
   whole, as base64 of little-endian float32, for the doctor's numbers rung to hold against the PC's run. */
#ifndef WKV_PROBE_H
#define WKV_PROBE_H

#include <stddef.h>

#include "json_out.h"
#include "window.h"

/* The probe event (without id and sent_t; with final) into `o`. The step's cross slots then hold this mel's
   state, so the window's encoder cache is dropped. 0, or -1 and the runtime's line in err. */
int wkv_probe(wkv_window *w, const float *mel, wkv_out *o, char *err, size_t n);

#endif
