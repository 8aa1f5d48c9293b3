#define _POSIX_C_SOURCE 200809L

#include "inbox.h"

#include <stdlib.h>
#include <string.h>

static void post(wkv_inbox *in, enum wkv_read got, const wkv_frame *frame) {
    wkv_letter *l = calloc(1, sizeof *l);
    if (!l) abort();      /* no memory for a frame already read: the stream can no longer be kept in sync */
    l->got = got;
    l->frame = *frame;
    pthread_mutex_lock(&in->lock);
    if (in->tail) in->tail->next = l;
    else in->head = l;
    in->tail = l;
    pthread_cond_signal(&in->arrived);
    pthread_mutex_unlock(&in->lock);
}

static void *read_all(void *arg) {
    wkv_inbox *in = arg;
    for (;;) {
        wkv_frame frame;
        enum wkv_read got = wkv_read_frame(in->reader, &frame);
        post(in, got, &frame);
        if (got == WKV_READ_EOF || got == WKV_READ_EOF_INSIDE) return NULL;
    }
}

int wkv_inbox_start(wkv_inbox *in, wkv_reader *reader) {
    memset(in, 0, sizeof *in);
    in->reader = reader;
    pthread_mutex_init(&in->lock, NULL);
    pthread_cond_init(&in->arrived, NULL);
    if (pthread_create(&in->thread, NULL, read_all, in)) return -1;
    return pthread_detach(in->thread) ? -1 : 0;
}

int wkv_inbox_take(wkv_inbox *in, int wait, enum wkv_read *got, wkv_frame *frame) {
    pthread_mutex_lock(&in->lock);
    while (wait && !in->head) pthread_cond_wait(&in->arrived, &in->lock);
    wkv_letter *l = in->head;
    if (l) {
        in->head = l->next;
        if (!in->head) in->tail = NULL;
    }
    pthread_mutex_unlock(&in->lock);
    if (!l) return 0;
    *got = l->got;
    *frame = l->frame;
    free(l);
    return 1;
}
