/* The hello event of a runner serving a bundle (device/runner/serve/served_model.py hello_of): the backend and its
   account, the model, the cache, the board, the limits and the features this runner serves. */
#ifndef WKV_HELLO_H
#define WKV_HELLO_H

#include <stdint.h>

#include "json_out.h"
#include "model.h"

void wkv_emit_hello(wkv_out *o, const wkv_model *m, uint64_t max_header, uint64_t max_payload);

#endif
