/* The request loop (device/runner/serve/agent.py): a frame in, the events it gets out; transcribe and probe queued
   and run one after another, the host's frames read between decode steps so that `cancel` lands there. */
#ifndef WKV_SERVE_H
#define WKV_SERVE_H

#include "frames.h"
#include "inbox.h"
#include "json_out.h"
#include "model.h"
#include "neuron.h"
#include "request.h"
#include "window.h"

#define WKV_QUEUE 16

typedef struct {
    char *id;
    int cancelled;           /* cancelled while queued: it stops after its first step, as the Python runner's */
    wkv_request r;
} wkv_job;

typedef struct {
    int out_fd;              /* the private duplicate of stdout: frames only */
    wkv_out ev;
    const char *model_error; /* why no model is served: every request that needs one gets it (model_missing) */
    const char *model_fix;   /* its fix's parts when they name a setting (JSON), else NULL */
    wkv_model *model;        /* NULL without one */
    wkv_window *window;
    wkv_inbox *inbox;
    uint64_t max_header, max_payload;
    wkv_job queue[WKV_QUEUE];
    int n_queued;
    const char *running;     /* the id of the request being decoded */
    int cancel, leaving;
    double sample_s, next_sample_ms, t0_ms;
    char err[WKV_NEURON_LINE];
} wkv_server;

enum wkv_next { WKV_SERVE_ON, WKV_SERVE_BYE, WKV_SERVE_GONE };

/* An error event (`fix`: its parts as JSON, or NULL); WKV_SERVE_GONE when stdout is broken (the host is gone). */
enum wkv_next wkv_send_error(wkv_server *s, const char *code, const char *message, const char *id, const char *fix);

/* Serves the next frame the host sent, waiting for one when `wait`; EOF is WKV_SERVE_BYE. *served says whether
   there was one. */
enum wkv_next wkv_serve_frame(wkv_server *s, int wait, int *served);
/* Runs what is queued, reading the host's frames between decode steps. */
enum wkv_next wkv_serve_queue(wkv_server *s);

#endif
