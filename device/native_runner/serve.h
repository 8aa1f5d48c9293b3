/* The request loop's one step: a frame in, the events it gets out (docs/protocol.md, 2. Requests). */
#ifndef WKV_SERVE_H
#define WKV_SERVE_H

#include "frames.h"
#include "json_out.h"

typedef struct {
    int out_fd;              /* the private duplicate of stdout: frames only */
    wkv_out ev;
    const char *model_error; /* why no model is served: every request that needs one gets it (model_missing) */
} wkv_server;

enum wkv_next { WKV_SERVE_ON, WKV_SERVE_BYE, WKV_SERVE_GONE };

/* An error event; WKV_SERVE_GONE when stdout is broken (the host is gone). */
enum wkv_next wkv_send_error(wkv_server *s, const char *code, const char *message, const char *id);

/* Serves one well-formed frame, as device/runner/serve/agent.py's Agent.handle does. */
enum wkv_next wkv_handle(wkv_server *s, const wkv_frame *f);

#endif
