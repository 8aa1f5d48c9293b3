#define _POSIX_C_SOURCE 200809L

#include "serve.h"

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "hello.h"
#include "probe.h"
#include "sample.h"
#include "whisperkv_spec.h"

#define MAX_ID 128

static const char *const request_ops[] = WKV_REQUEST_OPS;

static enum wkv_next send_event(wkv_server *s, wkv_out *ev, const char *id) {
    if (id) wkv_field_str(ev, "id", id);
    wkv_event_end(ev);
    if (ev->failed) {
        fprintf(stderr, "runner ERROR no memory for an event\n");
        return WKV_SERVE_ON;
    }
    return wkv_write_frame(s->out_fd, ev->buf, ev->len) ? WKV_SERVE_GONE : WKV_SERVE_ON;
}

enum wkv_next wkv_send_error(wkv_server *s, const char *code, const char *message, const char *id,
                             const char *fix) {
    wkv_event_begin(&s->ev, "error");
    wkv_field_str(&s->ev, "code", code);
    wkv_field_str(&s->ev, "message", message);
    if (fix) wkv_field_raw(&s->ev, "fix", fix);
    if (s->ev.failed) fprintf(stderr, "runner ERROR no memory for an error event (%s: %s)\n", code, message);
    return send_event(s, &s->ev, id);
}

/* hello's protocol check: the host of another version is told which side to update. NULL when it is ours. */
static const char *protocol_problem(const wkv_json *j, char *msg, size_t len) {
    int t = wkv_json_field(j, "protocol");
    double asked;
    if (t < 0 || (wkv_json_number(j, t, &asked) && asked == WKV_PROTOCOL)) return NULL;
    char said[96];
    uint64_t older;
    wkv_python_repr(j, t, said, sizeof said);
    int is_int = wkv_json_kind(j, t) == WKV_J_BOOL || wkv_json_uint(j, t, &older) >= 0;
    if (is_int && (wkv_json_kind(j, t) == WKV_J_BOOL || wkv_json_uint(j, t, &older) == 0 || older < WKV_PROTOCOL))
        snprintf(msg, len, "this runner speaks protocol %d (one 30 s window per request, the host seeks), the host "
                 "%s; update whisperkv on the host", WKV_PROTOCOL, said);
    else
        snprintf(msg, len, "this runner speaks protocol %d, the host %s; deploy the host's runner with "
                 "`whisperkv deploy --device URL`", WKV_PROTOCOL, said);
    return msg;
}

static int is_request_op(const char *op) {
    for (int i = 0; i < WKV_REQUEST_OPS_COUNT; i++)
        if (!strcmp(op, request_ops[i])) return 1;
    return 0;
}

static int queued(const wkv_server *s, const char *rid) {
    for (int i = 0; i < s->n_queued; i++)
        if (!strcmp(rid, s->queue[i].id)) return 1;
    return s->running && !strcmp(rid, s->running);
}

static enum wkv_next submit(wkv_server *s, const wkv_json *j, const wkv_frame *f, const char *rid) {
    static char msg[16384];
    const char *code = NULL;
    wkv_job job = {NULL, 0, {0}};
    wkv_bounds bounds = {&s->model->t, "dla", s->model->windows, s->model->n_windows};
    if (wkv_request_read(&job.r, j, f->payload, f->payload_len, &bounds, &code, msg, sizeof msg))
        return wkv_send_error(s, code, msg, rid, NULL);
    if (queued(s, rid) || s->n_queued == WKV_QUEUE) {
        wkv_request_free(&job.r);
        snprintf(msg, sizeof msg, "request '%s' is still running; use a new id", rid);
        return wkv_send_error(s, WKV_BUSY, msg, rid, NULL);
    }
    job.id = strdup(rid);
    s->queue[s->n_queued++] = job;
    return WKV_SERVE_ON;
}

static enum wkv_next unknown_op(wkv_server *s, const wkv_json *j, int op_tok, const char *rid) {
    char said[96], msg[512];
    wkv_python_repr(j, op_tok, said, sizeof said);
    int n = snprintf(msg, sizeof msg, "unknown op %s; expected one of ", said);
    for (int i = 0; i < WKV_REQUEST_OPS_COUNT && n > 0 && (size_t)n < sizeof msg; i++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "%s%s", i ? ", " : "", request_ops[i]);
    return wkv_send_error(s, WKV_UNKNOWN_OP, msg, rid, NULL);
}

static enum wkv_next dispatch(wkv_server *s, const wkv_frame *f, const char *op, int op_tok, const char *rid) {
    const wkv_json *j = &f->header;
    char msg[512];
    if (!is_request_op(op)) return unknown_op(s, j, op_tok, rid);
    if (!strcmp(op, "hello")) {
        if (protocol_problem(j, msg, sizeof msg)) return wkv_send_error(s, WKV_BAD_PROTOCOL, msg, rid, NULL);
        if (!s->model) return wkv_send_error(s, WKV_MODEL_MISSING, s->model_error, rid, s->model_fix);
        wkv_emit_hello(&s->ev, s->model, s->max_header, s->max_payload);
        return send_event(s, &s->ev, NULL);
    }
    if (!strcmp(op, "transcribe") || !strcmp(op, "probe")) {
        if (!rid) return wkv_send_error(s, WKV_BAD_REQUEST, "transcribe needs an id", NULL, NULL);
        if (!s->model) return wkv_send_error(s, WKV_MODEL_MISSING, s->model_error, rid, s->model_fix);
        return submit(s, j, f, rid);
    }
    if (!strcmp(op, "cancel")) {
        if (!rid)
            return wkv_send_error(s, WKV_BAD_REQUEST, "cancel needs the id of the request to stop", NULL, NULL);
        /* an unknown or finished id is ignored: the race with a natural end is normal */
        if (s->running && !strcmp(rid, s->running)) s->cancel = 1;
        for (int i = 0; i < s->n_queued; i++)
            if (!strcmp(rid, s->queue[i].id)) s->queue[i].cancelled = 1;
        return WKV_SERVE_ON;
    }
    if (!strcmp(op, "bye")) return WKV_SERVE_BYE;
    return unknown_op(s, j, op_tok, rid);
}

static enum wkv_next handle(wkv_server *s, const wkv_frame *f) {
    const wkv_json *j = &f->header;
    char *rid = NULL, *op = NULL, msg[128];
    enum wkv_next next;
    int t = wkv_json_field(j, "id");
    enum wkv_jkind kind = wkv_json_kind(j, t);
    /* a JSON null id is no id, as the Python runner's h.get("id") reads it */
    if (kind != WKV_J_NONE && kind != WKV_J_NULL) {
        size_t chars = 0;
        rid = wkv_json_string(j, t, &chars);
        if (!rid || chars < 1 || chars > MAX_ID) {
            free(rid);
            snprintf(msg, sizeof msg, "id must be a string of 1..%d characters", MAX_ID);
            return wkv_send_error(s, WKV_BAD_REQUEST, msg, NULL, NULL);
        }
    }
    int op_tok = wkv_json_field(j, "op");
    op = wkv_json_string(j, op_tok, NULL);
    if (!op) next = wkv_send_error(s, WKV_BAD_FRAME, "header has no string 'op'", rid, NULL);
    else next = dispatch(s, f, op, op_tok, rid);
    free(op);
    free(rid);
    return next;
}

enum wkv_next wkv_serve_frame(wkv_server *s, int wait, int *served) {
    wkv_frame frame;
    enum wkv_next next;
    enum wkv_read got;
    if (!(*served = wkv_inbox_take(s->inbox, wait, &got, &frame))) return WKV_SERVE_ON;
    if (got == WKV_READ_FRAME) next = handle(s, &frame);
    else if (got == WKV_READ_BAD) next = wkv_send_error(s, frame.code, frame.message, frame.id, NULL);
    else {
        if (got == WKV_READ_EOF_INSIDE) fprintf(stderr, "runner WARNING EOF inside a frame; the last request was "
                                           "truncated\n");
        next = WKV_SERVE_BYE;
    }
    wkv_frame_free(&frame);
    return next;
}

static int send_from_window(void *ctx, wkv_out *ev) {
    wkv_server *s = ctx;
    if (s->leaving) return 0;
    enum wkv_next next = send_event(s, ev, s->running);
    if (next == WKV_SERVE_GONE) s->leaving = s->cancel = 1;
    return next == WKV_SERVE_GONE ? -1 : 0;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* With sample_s: a sample when one is due (at the start, then every sample_s), between steps only, so that none
   comes after the request's last event. */
static void send_sample(wkv_server *s) {
    double t = now_ms();
    if (!s->sample_s || t < s->next_sample_ms) return;
    s->next_sample_ms = t + s->sample_s * 1e3;
    wkv_emit_sample(&s->ev, (t - s->t0_ms) / 1e3);
    if (send_event(s, &s->ev, s->running) == WKV_SERVE_GONE) s->leaving = s->cancel = 1;
}

/* Between two decode steps: every frame the host has sent meanwhile is served (a cancel, a hello, more requests);
   bye, EOF or a broken stdout cancel the running request, as nobody is listening any more. */
static int read_between_steps(void *ctx) {
    wkv_server *s = ctx;
    int served = 1;
    while (!s->leaving && served)
        if (wkv_serve_frame(s, 0, &served) != WKV_SERVE_ON) s->leaving = s->cancel = 1;
    send_sample(s);
    return s->cancel;
}

static enum wkv_next run(wkv_server *s, wkv_job *job) {
    s->running = job->id;
    s->cancel = job->cancelled || s->leaving;
    s->sample_s = job->r.probe ? 0 : job->r.sample_s;
    s->t0_ms = s->next_sample_ms = now_ms();
    wkv_sink sink = {s, send_from_window, read_between_steps};
    int rc;
    if (job->r.probe) {
        rc = wkv_probe(s->window, job->r.mel, &s->window->ev, s->err, sizeof s->err);
        if (!rc) rc = send_from_window(s, &s->window->ev) ? 1 : 0;
    } else {
        send_sample(s);
        rc = wkv_window_decode(s->window, &job->r, &sink, s->err, sizeof s->err);
    }
    enum wkv_next next = rc == 1 ? WKV_SERVE_GONE : WKV_SERVE_ON;
    if (rc < 0) {
        /* as the Python runner words what a backend raised (device/protocol.py internal_error) */
        char *msg = malloc(strlen(s->err) + 256 + sizeof WKV_INTERNAL_FIX);
        if (msg) sprintf(msg, "the runner failed unexpectedly (NeuronError: %s) — %s", s->err, WKV_INTERNAL_FIX);
        fprintf(stderr, "runner ERROR request %s failed: %s\n", job->id, s->err);
        if (!s->leaving) next = wkv_send_error(s, WKV_INTERNAL, msg ? msg : s->err, job->id, NULL);
        free(msg);
    }
    s->running = NULL;
    return next;
}

enum wkv_next wkv_serve_queue(wkv_server *s) {
    enum wkv_next next = WKV_SERVE_ON;
    while (s->n_queued && next == WKV_SERVE_ON) {
        wkv_job job = s->queue[0];
        memmove(s->queue, s->queue + 1, sizeof s->queue[0] * (size_t)--s->n_queued);
        next = run(s, &job);
        wkv_request_free(&job.r);
        free(job.id);
    }
    return s->leaving && next == WKV_SERVE_ON ? WKV_SERVE_BYE : next;
}
