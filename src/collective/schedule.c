/*
 * The cycle schedules of the two-phase write.  Each aggregator's data range
 * is cut in buffers of cb_buffer_size / nbuf bytes; every cycle shuffles the
 * pieces into one buffer (shuffle.c) and writes it (writer.c).  The
 * algorithms differ only in three numbers: buffers (nbuf), shuffles in
 * flight (depth) and writer threads (0: the caller writes).  See
 * docs/collective.md for their timelines.
 */
#include "cw_internal.h"

#include <sched.h>
#include <stdlib.h>

int64_t cw_count_cycles(const struct cw_ctx *call, int64_t buf_bytes)
{
    int64_t n = 0;
    for (int a = 0; a < call->f->naggs; a++) {
        int64_t span = call->agg_end[a] - call->agg_start[a];
        int64_t c = span > 0 ? (span + buf_bytes - 1) / buf_bytes : 0;
        if (c > n)
            n = c;
    }
    return n;
}

/* The shape of each algorithm's schedule. */
void cw_set_schedule(struct cw_ctx *call, int alg)
{
    static const struct { int nbuf, depth, nwriters; } shapes[] = {
        [CW_NONE] = {1, 1, 0},       [CW_COMM] = {2, 2, 0},       [CW_WRITE] = {2, 1, 1},
        [CW_WRITE_COMM] = {2, 2, 1}, [CW_WRITE_COMM_2] = {4, 2, 2},
    };
    call->algorithm = alg;
    call->nbuf = shapes[alg].nbuf;
    call->depth = shapes[alg].depth;
    call->nwriters = shapes[alg].nwriters;
    call->buf_bytes = call->f->hints.cb_buffer_size / call->nbuf;
    if (call->buf_bytes < 1)
        call->buf_bytes = 1;
    call->ncycles = call->agg_start ? cw_count_cycles(call, call->buf_bytes) : 0;
}

void cw_free_buffers(struct cw_file *f)
{
    if (f->win != MPI_WIN_NULL)
        NEXT(PMPI_Win_free)(&f->win); /* owns f->buf */
    else
        free(f->buf);
    f->win = MPI_WIN_NULL;
    f->buf = NULL;
    f->buf_size = f->win_size = 0;
}

/* The aggregator's buffers: in the RMA window, or malloc'd for p2p. */
int cw_cycle_buffers(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    int64_t bytes = call->buf_bytes * call->nbuf;
    if (call->shuffle != CW_P2P) {
        if (f->win == MPI_WIN_NULL && f->buf) {
            free(f->buf);
            f->buf = NULL;
            f->buf_size = 0;
        }
        return cw_window_for(call, bytes);
    }
    if (f->win != MPI_WIN_NULL) { /* left by an RMA call: every rank decides alike */
        if (f->win_size >= bytes)
            return MPI_SUCCESS;
        cw_free_buffers(f);
    }
    if (f->my_agg < 0 || f->buf_size >= bytes)
        return MPI_SUCCESS;
    free(f->buf);
    f->buf = malloc((size_t)bytes);
    f->buf_size = f->buf ? bytes : 0;
    return f->buf ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static struct cw_cycle *slot_of(struct cw_ctx *call, int64_t c) { return &call->cycles[c % call->nbuf]; }

/* Wait until cycle cy's write is done (the buffer is free), moving the
 * shuffles in flight meanwhile. */
static void wait_write(struct cw_ctx *call, struct cw_cycle *cy)
{
    if (atomic_load_explicit(&cy->write_state, memory_order_acquire) != 1)
        return;
    uint64_t t0 = cw_now();
    while (atomic_load_explicit(&cy->write_state, memory_order_acquire) == 1) {
        for (int i = 0; i < call->nbuf; i++) {
            struct cw_cycle *o = &call->cycles[i];
            int done;
            if (o->number >= 0 && !o->shuffled && call->shuffle != CW_RMA_FENCE)
                cw_cycle_test(call, o, &done);
        }
        sched_yield();
    }
    call->t_wait += cw_now() - t0;
}

static void finish_cycle(struct cw_ctx *call, struct cw_cycle *cy)
{
    if (cy->number < 0)
        return;
    wait_write(call, cy);
    if (cy->write_err && !call->err)
        call->err = cy->write_err;
    cw_cycle_release(cy);
}

/* Claim the slot of cycle c (its buffer free) and prepare it. */
static int start_cycle(struct cw_ctx *call, int64_t c)
{
    struct cw_cycle *cy = slot_of(call, c);
    finish_cycle(call, cy);
    cy->number = c;
    cy->slot = (int)(c % call->nbuf);
    cy->bufp = call->f->buf ? call->f->buf + (int64_t)cy->slot * call->buf_bytes : NULL;
    return cw_cycle_prepare(call, cy);
}

static void write_cycle(struct cw_ctx *call, struct cw_cycle *cy)
{
    if (call->f->my_agg < 0 || !cy->has_data || call->err) {
        atomic_store(&cy->write_state, 2); /* after an error: keep shuffling, write nothing */
        return;
    }
    if (call->writer)
        cw_writer_submit(call->writer, call, cy);
    else
        cw_write_cycle(call, cy);
}

/* p2p and rma-lock: messages, in cycle order, 'depth' shuffles in flight. */
static int run_messages(struct cw_ctx *call)
{
    int64_t posted = 0;
    int rc = MPI_SUCCESS;
    for (int64_t c = 0; c < call->ncycles && rc == MPI_SUCCESS; c++) {
        while (posted < call->ncycles && posted < c + call->depth && rc == MPI_SUCCESS) {
            rc = start_cycle(call, posted);
            if (rc == MPI_SUCCESS)
                rc = cw_cycle_post(call, slot_of(call, posted));
            posted++;
        }
        struct cw_cycle *cy = slot_of(call, c);
        int done = 0;
        uint64_t t0 = cw_now();
        while (rc == MPI_SUCCESS && !done) {
            rc = cw_cycle_test(call, cy, &done);
            if (!done)
                sched_yield(); /* 2 cores, many ranks: let the writers and peers run */
        }
        call->t_shuffle += cw_now() - t0; /* waiting for the peers is the shuffle's time */
        if (rc == MPI_SUCCESS)
            write_cycle(call, cy);
    }
    return rc;
}

/* rma-fence: one fence per cycle closes its epoch and opens the next's;
 * with one buffer (none) the write sits between two fences. */
static int run_fences(struct cw_ctx *call)
{
    MPI_Win win = call->f->win;
    int rc = MPI_SUCCESS;
    if (call->ncycles == 0)
        return MPI_SUCCESS;
    rc = start_cycle(call, 0);
    uint64_t t0 = cw_now();
    if (rc == MPI_SUCCESS)
        rc = NEXT(PMPI_Win_fence)(MPI_MODE_NOPRECEDE, win);
    call->t_shuffle += cw_now() - t0;
    if (rc == MPI_SUCCESS)
        rc = cw_cycle_puts(call, slot_of(call, 0));
    for (int64_t c = 0; c < call->ncycles && rc == MPI_SUCCESS; c++) {
        struct cw_cycle *cy = slot_of(call, c);
        int more = c + 1 < call->ncycles;
        if (call->nbuf == 1) {
            t0 = cw_now();
            rc = NEXT(PMPI_Win_fence)(MPI_MODE_NOSUCCEED, win);
            call->t_shuffle += cw_now() - t0;
            cy->shuffled = 1;
            write_cycle(call, cy);
            if (more && rc == MPI_SUCCESS) {
                rc = start_cycle(call, c + 1);
                t0 = cw_now();
                if (rc == MPI_SUCCESS)
                    rc = NEXT(PMPI_Win_fence)(MPI_MODE_NOPRECEDE, win);
                call->t_shuffle += cw_now() - t0;
                if (rc == MPI_SUCCESS)
                    rc = cw_cycle_puts(call, slot_of(call, c + 1));
            }
            continue;
        }
        if (more)
            rc = start_cycle(call, c + 1); /* buffer free and holes read before the epoch opens */
        t0 = cw_now();
        if (rc == MPI_SUCCESS)
            rc = NEXT(PMPI_Win_fence)(more ? 0 : MPI_MODE_NOSUCCEED, win);
        call->t_shuffle += cw_now() - t0;
        cy->shuffled = 1;
        if (more && rc == MPI_SUCCESS)
            rc = cw_cycle_puts(call, slot_of(call, c + 1));
        write_cycle(call, cy);
    }
    return rc;
}

/* The writer threads the schedule needs, the cycles, then every slot's
 * write waited for and its resources freed. */
int cw_run_cycles(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    if (call->nwriters > 0 && f->my_agg >= 0 && call->ncycles > 1) {
        /* the threads live as long as the file: a call does not pay their start */
        if (f->writer && f->nwriters < call->nwriters) {
            cw_writer_stop(f->writer);
            f->writer = NULL;
        }
        if (!f->writer && (f->writer = cw_writer_start(call->nwriters)) != NULL)
            f->nwriters = call->nwriters;
        call->writer = f->writer;
    }
    int rc = call->shuffle == CW_RMA_FENCE ? run_fences(call) : run_messages(call);
    for (int i = 0; i < CW_MAX_SLOTS; i++)
        finish_cycle(call, &call->cycles[i]);
    return rc;
}
