#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whisperkv_spec.h"

#define MAX_ID 128

static const char *const request_ops[] = WKV_REQUEST_OPS;

enum wkv_next wkv_send_error(wkv_server *s, const char *code, const char *message, const char *id) {
    wkv_event_begin(&s->ev, "error");
    wkv_field_str(&s->ev, "code", code);
    wkv_field_str(&s->ev, "message", message);
    if (id) wkv_field_str(&s->ev, "id", id);
    wkv_event_end(&s->ev);
    if (s->ev.failed) {
        fprintf(stderr, "runner ERROR no memory for an error event (%s: %s)\n", code, message);
        return WKV_SERVE_ON;
    }
    return wkv_write_frame(s->out_fd, s->ev.buf, s->ev.len) ? WKV_SERVE_GONE : WKV_SERVE_ON;
}

/* Python's repr of what the host sent, as the Python runner's message shows it: 'text', None, True, 3. */
static void python_repr(const wkv_json *j, int t, char *out, size_t len) {
    size_t n;
    const char *raw = wkv_json_raw(j, t, &n);
    enum wkv_jkind kind = wkv_json_kind(j, t);
    if (kind == WKV_J_STRING) {
        char *text = wkv_json_string(j, t, NULL);
        snprintf(out, len, "'%s'", text ? text : "");
        free(text);
    } else if (kind == WKV_J_NULL) {
        snprintf(out, len, "None");
    } else if (kind == WKV_J_BOOL) {
        snprintf(out, len, raw[0] == 't' ? "True" : "False");
    } else {
        snprintf(out, len, "%.*s", (int)(n < 80 ? n : 80), raw);
    }
}

/* hello's protocol check: the host of another version is told which side to update. NULL when it is ours. */
static const char *protocol_problem(const wkv_json *j, char *msg, size_t len) {
    int t = wkv_json_field(j, "protocol");
    double asked;
    if (t < 0 || (wkv_json_number(j, t, &asked) && asked == WKV_PROTOCOL)) return NULL;
    char said[96];
    uint64_t older;
    python_repr(j, t, said, sizeof said);
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

static enum wkv_next unknown_op(wkv_server *s, const wkv_json *j, int op_tok, const char *rid) {
    char said[96], msg[512];
    python_repr(j, op_tok, said, sizeof said);
    int n = snprintf(msg, sizeof msg, "unknown op %s; expected one of ", said);
    for (int i = 0; i < WKV_REQUEST_OPS_COUNT && n > 0 && (size_t)n < sizeof msg; i++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "%s%s", i ? ", " : "", request_ops[i]);
    return wkv_send_error(s, WKV_UNKNOWN_OP, msg, rid);
}

static enum wkv_next dispatch(wkv_server *s, const wkv_json *j, const char *op, int op_tok, const char *rid) {
    char msg[512];
    if (!is_request_op(op)) return unknown_op(s, j, op_tok, rid);
    if (!strcmp(op, "hello")) {
        if (protocol_problem(j, msg, sizeof msg)) return wkv_send_error(s, WKV_BAD_PROTOCOL, msg, rid);
        return wkv_send_error(s, WKV_MODEL_MISSING, s->model_error, rid);
    }
    if (!strcmp(op, "transcribe") || !strcmp(op, "probe")) {
        if (!rid) return wkv_send_error(s, WKV_BAD_REQUEST, "transcribe needs an id", NULL);
        return wkv_send_error(s, WKV_MODEL_MISSING, s->model_error, rid);
    }
    if (!strcmp(op, "cancel")) {
        /* nothing is ever queued yet; an unknown or finished id is ignored, as the race with a natural end is normal */
        if (!rid) return wkv_send_error(s, WKV_BAD_REQUEST, "cancel needs the id of the request to stop", NULL);
        return WKV_SERVE_ON;
    }
    if (!strcmp(op, "bye")) return WKV_SERVE_BYE;
    return unknown_op(s, j, op_tok, rid);
}

enum wkv_next wkv_handle(wkv_server *s, const wkv_frame *f) {
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
            return wkv_send_error(s, WKV_BAD_REQUEST, msg, NULL);
        }
    }
    int op_tok = wkv_json_field(j, "op");
    op = wkv_json_string(j, op_tok, NULL);
    if (!op) next = wkv_send_error(s, WKV_BAD_FRAME, "header has no string 'op'", rid);
    else next = dispatch(s, j, op, op_tok, rid);
    free(op);
    free(rid);
    return next;
}
