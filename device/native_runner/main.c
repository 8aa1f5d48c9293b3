/* The native runner: serves docs/protocol.md on stdin/stdout on the dla backend, as `python -m device.runner
   --backend dla` does (README.md says what it leaves out). */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "say.h"
#include "serve.h"
#include "start.h"
#include "window.h"
#include "whisperkv_spec.h"

int main(int argc, char **argv) {
    wkv_flags flags;
    int parsed = wkv_parse_flags(argc, argv, &flags);
    if (parsed) return parsed == 1 ? 0 : 2;
    /* a host that is gone shows as a failed write, which ends the runner, not as a signal that kills it */
    signal(SIGPIPE, SIG_IGN);
    /* frames go to a private duplicate of stdout; fd 1 becomes stderr, so a library's stray printf lands in the log */
    int out_fd = dup(1);
    if (out_fd < 0 || dup2(2, 1) < 0) {
        perror("whisperkv-runner: cannot set up stdout");
        return 1;
    }
    static char model_error[8192];
    static wkv_model model;
    static wkv_window window;
    static wkv_server server;
    static wkv_reader reader;
    server.out_fd = out_fd;
    server.model_error = model_error;
    server.max_header = flags.max_header;
    server.max_payload = flags.max_payload;
    /* a failed load is kept as the reason and served as model_missing, never a dead runner */
    if (!wkv_model_problem(&flags, model_error, sizeof model_error)) {
        fprintf(stderr, "runner INFO loading model… (%s, backend dla)\n", flags.model ? flags.model : "model/");
        if (wkv_model_load(&model, &flags, model_error, sizeof model_error) == 0 && wkv_window_init(&window, &model))
            snprintf(model_error, sizeof model_error, "out of memory for the decoder's buffers");
        else if (!model_error[0]) {
            server.model = &model;
            server.window = &window;
            fprintf(stderr, "runner INFO model %.12s on dla (%s) loaded in %.1f s\n", model.sha256, model.lib.path,
                    model.load_ms / 1e3);
        }
    }
    static char model_fix[2048];
    if (!server.model) {
        fprintf(stderr, "runner ERROR model not loaded: %s\n", model_error);
        if (wkv_fix_parts()) server.model_fix = strncpy(model_fix, wkv_fix_parts(), sizeof model_fix - 1);
    }
    static wkv_inbox inbox;
    server.inbox = &inbox;
    wkv_reader_init(&reader, 0, flags.max_header, flags.max_payload);
    if (wkv_inbox_start(&inbox, &reader)) {
        perror("whisperkv-runner: cannot start the reader thread");
        return 1;
    }
    enum wkv_next next = WKV_SERVE_ON;
    int served;
    while (next == WKV_SERVE_ON) {
        next = wkv_serve_frame(&server, 1, &served);
        if (next == WKV_SERVE_ON) next = wkv_serve_queue(&server);
    }
    if (next == WKV_SERVE_GONE) fprintf(stderr, "runner WARNING stdout is broken: the host is gone\n");
    fprintf(stderr, "runner INFO bye\n");
    wkv_out_free(&server.ev);
    if (server.model) {
        wkv_window_free(&window);
        wkv_model_close(&model);
    }
    return 0;
}
