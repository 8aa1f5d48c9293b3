/* What a request costs the board, sampled while it runs (device/runner/serve/sampler.py, docs/protocol.md
   `sample`): the runner's CPU time and resident memory, the board's available memory, every thermal zone's
   temperature and whether one has reached a passive trip point. A file the board lacks is left out, never guessed. */
#ifndef WKV_SAMPLE_H
#define WKV_SAMPLE_H

#include "json_out.h"

/* The sample event (without id and sent_t) into `o`; `t_s`: seconds since the request's sampler started. */
void wkv_emit_sample(wkv_out *o, double t_s);

#endif
