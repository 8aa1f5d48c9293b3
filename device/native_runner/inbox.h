/* The host's frames, read by a thread of their own as they come (device/runner/serve/agent.py's reader thread):
   stdin never waits on the decoder, so a host that sends while the runner writes never deadlocks with it, and
   the frames wait here for the main thread, which serves them between decode steps. */
#ifndef WKV_INBOX_H
#define WKV_INBOX_H

#include <pthread.h>

#include "frames.h"

typedef struct wkv_letter {
    enum wkv_read got;
    wkv_frame frame;
    struct wkv_letter *next;
} wkv_letter;

typedef struct {
    wkv_reader *reader;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t arrived;
    wkv_letter *head, *tail;
} wkv_inbox;

/* 0, or -1 when the thread cannot start. */
int wkv_inbox_start(wkv_inbox *in, wkv_reader *reader);
/* The next frame or end of input into *frame (the caller frees it); waits for one when `wait`. 1 when one was taken. */
int wkv_inbox_take(wkv_inbox *in, int wait, enum wkv_read *got, wkv_frame *frame);

#endif
