/*
 * Writer threads for the write-overlap algorithms: the caller fills the next
 * buffer (shuffle) while a writer pwrites the previous one.  One thread for
 * write and write-comm, two for write-comm-2 (two writes in flight).  The
 * threads make no MPI call, so MPI_THREAD_SINGLE is enough.  A cycle's
 * write_state goes 1 (queued) -> 2 (done); the caller polls it.
 */
#include "cw_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define QUEUE_LEN 8   /* more than CW_MAX_SLOTS: a submit never waits */

struct cw_writer {
    pthread_t threads[2];
    int nthreads;
    pthread_mutex_t lock;
    pthread_cond_t work;
    struct cw_ctx *ctx[QUEUE_LEN];
    struct cw_cycle *queue[QUEUE_LEN];
    int head, tail, stop;
};

int cw_pwrite_all(int fd, const char *p, int64_t len, int64_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, p, (size_t)len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : ENOSPC; /* 0 bytes written: the device is full */
        p += n;
        off += n;
        len -= n;
    }
    return 0;
}

/* [lo, hi) of the buffer, without the ranges ranks wrote themselves (sorted, disjoint). */
static int write_around(const struct cw_ctx *call, const struct cw_cycle *cy, int64_t lo, int64_t hi)
{
    int fd = call->f->fd;
    for (int64_t i = 0; i < call->nwritten && lo < hi; i++) {
        int64_t a = call->written[i].lo, b = call->written[i].hi;
        if (b <= lo || a >= hi)
            continue;
        if (a > lo) {
            int err = cw_pwrite_all(fd, cy->bufp + (lo - cy->wlo), a - lo, lo);
            if (err)
                return err;
        }
        lo = b;
    }
    return lo < hi ? cw_pwrite_all(fd, cy->bufp + (lo - cy->wlo), hi - lo, lo) : 0;
}

void cw_write_cycle(struct cw_ctx *call, struct cw_cycle *cy)
{
    uint64_t t0 = cw_now();
    int err = 0;
    if (cy->has_data)
        err = call->f->fd >= 0 ? write_around(call, cy, cy->first, cy->end) : EBADF;
    cy->write_err = err;
    atomic_fetch_add(&call->t_write, cw_now() - t0);
    atomic_store_explicit(&cy->write_state, 2, memory_order_release);
}

static void *writer_main(void *arg)
{
    struct cw_writer *w = arg;
    if (cw_hooks.writer_thread_started)
        cw_hooks.writer_thread_started();
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->head == w->tail && !w->stop)
            pthread_cond_wait(&w->work, &w->lock);
        if (w->head == w->tail)
            break; /* stop, and nothing left */
        struct cw_ctx *call = w->ctx[w->head];
        struct cw_cycle *cy = w->queue[w->head];
        w->head = (w->head + 1) % QUEUE_LEN;
        pthread_mutex_unlock(&w->lock);
        cw_write_cycle(call, cy);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct cw_writer *cw_writer_start(int nthreads)
{
    struct cw_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->work, NULL);
    for (int i = 0; i < nthreads && i < 2; i++) {
        if (pthread_create(&w->threads[i], NULL, writer_main, w) != 0)
            break;
        w->nthreads++;
    }
    if (w->nthreads == 0) {
        pthread_cond_destroy(&w->work);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL; /* the caller writes itself */
    }
    return w;
}

void cw_writer_submit(struct cw_writer *w, struct cw_ctx *call, struct cw_cycle *cy)
{
    atomic_store(&cy->write_state, 1);
    pthread_mutex_lock(&w->lock);
    w->ctx[w->tail] = call;
    w->queue[w->tail] = cy;
    w->tail = (w->tail + 1) % QUEUE_LEN;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
}

void cw_writer_stop(struct cw_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_broadcast(&w->work);
    pthread_mutex_unlock(&w->lock);
    for (int i = 0; i < w->nthreads; i++)
        pthread_join(w->threads[i], NULL);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
