/* The native runner: serves docs/protocol.md on stdin/stdout, as `python -m device.runner` does (issue 53).
   Today its protocol core: frames, rejections and errors; its model loading is still to come (README.md). */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "frames.h"
#include "serve.h"
#include "start.h"
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
    char model_error[8192];
    wkv_model_problem(&flags, model_error, sizeof model_error);
    fprintf(stderr, "runner ERROR model not loaded: %s\n", model_error);

    wkv_server server = {out_fd, {0}, model_error};
    wkv_reader *reader = malloc(sizeof *reader);
    if (!reader) return 1;
    wkv_reader_init(reader, 0, flags.max_header, flags.max_payload);
    enum wkv_next next = WKV_SERVE_ON;
    while (next == WKV_SERVE_ON) {
        wkv_frame frame;
        enum wkv_read got = wkv_read_frame(reader, &frame);
        if (got == WKV_READ_FRAME) next = wkv_handle(&server, &frame);
        else if (got == WKV_READ_BAD) next = wkv_send_error(&server, frame.code, frame.message, frame.id);
        else {
            if (got == WKV_READ_EOF_INSIDE) fprintf(stderr, "runner WARNING EOF inside a frame; the last request was "
                                               "truncated\n");
            next = WKV_SERVE_BYE;
        }
        wkv_frame_free(&frame);
    }
    if (next == WKV_SERVE_GONE) fprintf(stderr, "runner WARNING stdout is broken: the host is gone\n");
    fprintf(stderr, "runner INFO bye\n");
    free(reader);
    wkv_out_free(&server.ev);
    return 0;
}
