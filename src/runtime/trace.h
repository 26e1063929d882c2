/*
 * pario event trace (docs/trace.md): with PARIO_TRACE=1 every outermost
 * intercepted call of the traced thread (the one that initialised MPI; the
 * first thread to make a call in a program without MPI) becomes one fixed-size
 * event.  The layers call the pario_trace_* hooks below only after checking
 * pario_tracing, so the untraced hot path pays one predictable branch.
 *
 * Memory is bounded: PARIO_TRACE_BUFFER events in memory; a full buffer is
 * compressed into a TRACE block (log.c's pario_put_block) and appended to an
 * unlinked temporary file, up to PARIO_TRACE_MAX compressed bytes; past that,
 * events are dropped and counted.  Nothing here ever fails the application.
 *
 * The event record is also defined in python/pario/trace/format.py: keep the
 * two in step.
 */
#ifndef PARIO_TRACE_H
#define PARIO_TRACE_H

#include "core.h"

#include <stdint.h>
#include <stdio.h>

/* One event, 56 bytes, little-endian on disk (x86-64 and aarch64 are). */
struct pario_trace_event {
    uint64_t t0, t1;   /* ticks at entry / exit */
    uint16_t kind, flags;
    int32_t comm;      /* communicator index, -1 none */
    int32_t peer;      /* world rank, -1 none, -2 MPI_ANY_SOURCE as posted */
    int32_t tag;       /* -1 none, -2 MPI_ANY_TAG as posted */
    uint64_t bytes;
    int64_t aux;       /* I/O offset (-1 unknown) / request id / completed request id */
    uint64_t file;     /* file record id, 0 none */
};
_Static_assert(sizeof(struct pario_trace_event) == 56, "trace event is 56 bytes");

enum pario_trace_kind {
    PT_SEND = 1, PT_SSEND = 2, PT_RECV = 3, PT_ISEND = 4, PT_ISSEND = 5, PT_IRECV = 6,
    PT_WAIT = 7, PT_COMPLETE = 8, PT_MPI_OTHER = 9,
    PT_BARRIER = 20, PT_BCAST = 21, PT_GATHER = 22, PT_SCATTER = 23, PT_ALLGATHER = 24,
    PT_ALLTOALL = 25, PT_REDUCE = 26, PT_ALLREDUCE = 27, PT_REDUCE_SCATTER = 28, PT_SCAN = 29,
    PT_EXSCAN = 30,
    PT_IO_READ = 40, PT_IO_WRITE = 41, PT_IO_META = 42,
    PT_FINALIZE = 50,
};
#define PT_CONT 0x1
#define PT_NONBLOCKING 0x2
#define PT_COLLECTIVE 0x4
#define PT_LAYER(l) ((uint16_t)((l) << 8))
_Static_assert(PARIO_NLAYERS <= 8, "the layer bits 8-10 of an event's flags hold 8 layers");

#define PT_ANY (-2)
#define PT_NONE (-1)

/* Set once at start-up (before any other thread exists), read-only after. */
extern int pario_tracing;

/* Start-up: pario_trace_part (internal.h), under PARIO_TRACE, PARIO_TRACE_BUFFER and
 * PARIO_TRACE_MAX (config.h). */

/* A new event of the calling thread, with comm/peer/tag -1, aux 0, file 0
 * and the given times; NULL when the call is not traced: not the traced
 * thread (then counted in untraced_events), not the outermost call
 * (th->depth != 0), or the trace is full (counted in dropped). */
struct pario_trace_event *pario_trace_new(struct pario_thread *th, uint64_t t0, uint64_t t1, int kind,
                                          int flags);
/* 1 if th is the traced thread (for wrappers that must prepare before the call). */
int pario_trace_mine(const struct pario_thread *th);

/* An I/O event of a layer (enum pario_layer): aux when >= 0 (a request id),
 * else the offset. */
void pario_trace_io_event(struct pario_thread *th, uint64_t t0, uint64_t t1, int kind, int layer,
                          uint64_t file, int64_t offset, int64_t bytes, int flags, int comm, int64_t aux);
static inline void pario_trace_io(struct pario_thread *th, uint64_t t0, uint64_t t1, int kind, int layer,
                                  const struct pario_record *r, int64_t offset, int64_t bytes)
{
    if (__builtin_expect(pario_tracing, 0))
        pario_trace_io_event(th, t0, t1, kind, layer, r ? r->id : 0, offset, bytes, 0, -1, -1);
}

/* Log writing (log.c).  The trace's blocks are: the spilled ones (read from
 * the temporary file with pario_trace_read_spill), then `tail` (the events
 * still in memory as TRACE blocks, and the TRACE_INDEX block), built by
 * pario_trace_finish once the timer is calibrated.  *nblocks counts them. */
struct pario_buf;
void pario_trace_finish(struct pario_buf *tail, int rank, int *nblocks);
uint64_t pario_trace_spill_bytes(void);
/* Copy n bytes of the spill file at offset off into dst; 0 or -1. */
int pario_trace_read_spill(void *dst, uint64_t off, size_t n);
/* Stream the spill file into a stdio stream; 0 or -1. */
int pario_trace_copy_spill(FILE *out);

#ifdef MPI_VERSION
/* Index of a communicator in the trace's table (0: MPI_COMM_WORLD), built at
 * first sight; -1 when the table is full.  Traced thread only. */
int pario_trace_comm(MPI_Comm comm);
/* World rank of rank `r` of communicator comm (index ci): -1 for
 * MPI_PROC_NULL or unknown, -2 for MPI_ANY_SOURCE. */
int pario_trace_world(MPI_Comm comm, int ci, int r);
/* A communicator is about to be freed: forget its handle. */
void pario_trace_comm_free(MPI_Comm comm);
/* A nonblocking call's request: its id (a per-rank sequence from 1), or 0
 * when the table is full (counted in untracked_requests). */
int64_t pario_trace_request(const MPI_Request *req, int comm, int is_recv);
void pario_trace_request_free(const MPI_Request *req);

/* Waits and tests: the request ids are looked up before the call (the
 * handles become MPI_REQUEST_NULL) and, when the caller ignores the statuses,
 * local ones are substituted so that a receive's source is known.  One state,
 * the traced thread's (only its outermost calls are traced). */
#define PT_WAIT_MAX 4096   /* requests looked up per call; beyond, untracked */
#define PT_STATUS_MAX 1024 /* statuses substituted per call; beyond, peer -1 */
struct pario_trace_wait {
    int n;
    uint64_t key[PT_WAIT_MAX];
    unsigned char was[PT_WAIT_MAX];  /* non-null before the call */
    MPI_Status local[PT_STATUS_MAX];
};
enum pt_wait_mode { PT_W_ONE, PT_W_ALL, PT_W_SOME };
/* Before the call: NULL if the call is not traced; else the state, and
 * *statuses replaced by local ones if it is an IGNORE and nstat fits. */
struct pario_trace_wait *pario_trace_wait_begin(struct pario_thread *th, int count, const MPI_Request *reqs,
                                                MPI_Status **statuses, int nstat);
/* After the call: the WAIT record and one COMPLETE part per completed request.
 * ONE (wait, test, *any): index -1 = request 0 if its handle was nulled,
 * MPI_UNDEFINED = none, else that request; `statuses` is its status.
 * ALL: every request whose handle was nulled, statuses[i].
 * SOME: indices[0..outcount), statuses[j]. */
void pario_trace_wait_end(struct pario_trace_wait *w, struct pario_thread *th, uint64_t t0, uint64_t t1,
                          int rc, const MPI_Request *reqs, MPI_Status *statuses, enum pt_wait_mode mode,
                          int index, int outcount, const int *indices);
/* Bytes in a status (MPI_BYTE elements), 0 if unknown. */
uint64_t pario_trace_status_bytes(const MPI_Status *st);
#endif

#endif
