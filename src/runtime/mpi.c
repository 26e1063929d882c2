/*
 * MPI layer: PMPI interposition wrappers that charge the time, the number of
 * calls and the bytes of MPI communication to the rank's summary fields
 * (mpi_coll, mpi_p2p, mpi_other and their _calls / _bytes companions).
 *
 * Every wrapper is one WRAP*(...) line: when instrumentation is off it is a
 * plain tail call to PMPI; otherwise two timer stamps around the PMPI call
 * and three additions to the calling thread's accumulators.  No locks, no
 * allocation.  Bytes are computed after the call, only for an outermost
 * call that succeeded (so every datatype asked about has been validated).
 *
 * Nesting: each wrapper raises th->depth around its PMPI call, so MPI calls
 * made from inside MPI (ROMIO/OMPIO inside an MPI_File_* call, generalized
 * request callbacks, ...) and POSIX I/O done by the MPI library are not
 * charged to a second time class: the classes stay exclusive.
 *
 * Nonblocking collectives note their request in the thread's pending table
 * (core.h); MPI_Wait* / MPI_Test* look the requests up before the call
 * (handles become MPI_REQUEST_NULL on completion) and charge the call to
 * the class of the first completed tracked request (a file request of
 * MPI-IO also charges the file record), else to point-to-point.
 */
#include "core.h" /* first: defines _GNU_SOURCE */

#include <mpi.h>
#include <string.h>

#include "trace.h"

/* ---- accounting --------------------------------------------------------*/

/* The calls / bytes fields that go with a time class (-1: none). */
static inline int calls_field(int cls)
{
    return cls == mpi_coll ? mpi_coll_calls
           : cls == mpi_p2p ? mpi_p2p_calls
           : cls == mpi_other ? mpi_other_calls
                              : -1;
}
/* Bytes of the "other" class are one-sided transfers: point-to-point bytes. */
static inline int bytes_field(int cls) { return cls == mpi_coll ? mpi_coll_bytes : mpi_p2p_bytes; }

/* Charge one outermost call (the caller checked th->depth == 0). */
static inline void account(struct pario_thread *th, int cls, uint64_t t0, uint64_t t1,
                           uint64_t bytes)
{
    th->t[cls] += t1 - t0;
    th->t[calls_field(cls)] += 1;
    th->t[bytes_field(cls)] += bytes;
}

/* Time the PMPI call given as the variadic argument; charge `cls`, with
 * `bytes` evaluated after a successful outermost call (into b_).  `after`
 * runs after the call for an outermost call (rc and th in scope); `trace`
 * too, only when tracing (docs/trace.md), with t0, t1 and b_ in scope. */
#define WRAP_AFTER(cls, bytes, after, trace, ...)                            \
    do {                                                                     \
        if (!pario_active())                                                 \
            return __VA_ARGS__;                                              \
        struct pario_thread *th = pario_thread();                            \
        th->depth++;                                                         \
        uint64_t t0 = pario_now();                                           \
        int rc = __VA_ARGS__;                                                \
        uint64_t t1 = pario_now();                                           \
        if (--th->depth == 0) {                                              \
            uint64_t b_ = rc == MPI_SUCCESS ? (uint64_t)(bytes) : 0;         \
            account(th, (cls), t0, t1, b_);                                  \
            after;                                                           \
            if (__builtin_expect(pario_tracing, 0)) {                        \
                trace;                                                       \
            }                                                                \
        }                                                                    \
        return rc;                                                           \
    } while (0)

#define WRAP(cls, bytes, trace, ...) WRAP_AFTER(cls, bytes, (void)0, trace, __VA_ARGS__)
/* Point-to-point: the event is `trace`. */
#define P2P(bytes, trace, ...) WRAP(mpi_p2p, bytes, trace, __VA_ARGS__)
/* Collective of kind k on comm with root (world rank in the event; -1: none). */
#define COLL(k, comm, root, bytes, ...)                                      \
    WRAP(mpi_coll, bytes, tr_coll(th, t0, t1, k, 0, comm, root, b_, NULL, rc), __VA_ARGS__)
#define OTHER(bytes, ...) WRAP(mpi_other, bytes, tr_other(th, t0, t1), __VA_ARGS__)
/* Nonblocking collective: also note the request for MPI_Wait and MPI_Test. */
#define ICOLL(k, comm, root, req, bytes, ...)                                \
    WRAP_AFTER(mpi_coll, bytes, note_coll(th, rc, req),                     \
               tr_coll(th, t0, t1, k, PT_NONBLOCKING, comm, root, b_, req, rc), __VA_ARGS__)

/* ---- trace events (only called when tracing) --------------------------*/

/* A point-to-point part: peer and tag as given (a receive's from its status). */
static void tr_p2p(struct pario_thread *th, uint64_t t0, uint64_t t1, int kind, int flags, MPI_Comm comm,
                   int peer, int tag, uint64_t bytes, const MPI_Request *req, int rc)
{
    struct pario_trace_event *e = pario_trace_new(th, t0, t1, kind, flags);
    if (!e)
        return;
    int ci = pario_trace_comm(comm);
    e->comm = ci;
    e->peer = peer == MPI_PROC_NULL ? -1 : pario_trace_world(comm, ci, peer);
    e->tag = peer == MPI_PROC_NULL ? -1 : tag == MPI_ANY_TAG ? PT_ANY : tag;
    e->bytes = bytes;
    if (req && rc == MPI_SUCCESS) {
        e->flags |= PT_NONBLOCKING;
        e->aux = pario_trace_request(req, ci, kind == PT_IRECV);
    }
}
/* A blocking receive part: source, tag and bytes from the status. */
static void tr_recv(struct pario_thread *th, uint64_t t0, uint64_t t1, int flags, MPI_Comm comm, int source,
                    const MPI_Status *st, uint64_t bytes)
{
    int known = st != MPI_STATUS_IGNORE && source != MPI_PROC_NULL;
    tr_p2p(th, t0, t1, PT_RECV, flags, comm, known ? st->MPI_SOURCE : source == MPI_ANY_SOURCE ? -1 : source,
           known ? st->MPI_TAG : -1, bytes, NULL, MPI_SUCCESS);
}
static void tr_coll(struct pario_thread *th, uint64_t t0, uint64_t t1, int kind, int flags, MPI_Comm comm,
                    int root, uint64_t bytes, const MPI_Request *req, int rc)
{
    struct pario_trace_event *e = pario_trace_new(th, t0, t1, kind, flags);
    if (!e)
        return;
    int ci = pario_trace_comm(comm);
    e->comm = ci;
    e->peer = root >= 0 ? pario_trace_world(comm, ci, root) : -1;
    e->bytes = bytes;
    if (req && rc == MPI_SUCCESS)
        e->aux = pario_trace_request(req, ci, 0);
}
static void tr_other(struct pario_thread *th, uint64_t t0, uint64_t t1)
{
    pario_trace_new(th, t0, t1, PT_MPI_OTHER, 0);
}
/* A matched receive: the message handle names no communicator. */
static void tr_mrecv(struct pario_thread *th, uint64_t t0, uint64_t t1, const MPI_Status *st, uint64_t bytes)
{
    struct pario_trace_event *e = pario_trace_new(th, t0, t1, PT_RECV, 0);
    if (e) {
        e->tag = st != MPI_STATUS_IGNORE ? st->MPI_TAG : -1;
        e->bytes = bytes;
    }
}
static void tr_imrecv(struct pario_thread *th, uint64_t t0, uint64_t t1, uint64_t bytes, const MPI_Request *req,
                      int rc)
{
    struct pario_trace_event *e = pario_trace_new(th, t0, t1, PT_IRECV, PT_NONBLOCKING);
    if (e) {
        e->peer = e->tag = PT_ANY;
        e->bytes = bytes;
        e->aux = rc == MPI_SUCCESS ? pario_trace_request(req, -1, 1) : 0;
    }
}
/* The status to give PMPI: a local one when tracing and the caller ignores it
 * (a receive's source must be known). */
#define TRACE_STATUS(status, local) ((status) == MPI_STATUS_IGNORE && pario_tracing ? (local) : (status))

/* ---- bytes ---------------------------------------------------------------*/

static inline uint64_t nbytes(int64_t count, MPI_Datatype dt)
{
    if (count <= 0 || dt == MPI_DATATYPE_NULL)
        return 0;
    MPI_Count size = 0;
    if (NEXT(PMPI_Type_size_x)(dt, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* Bytes sent to or posted for a peer (nothing moves with MPI_PROC_NULL). */
static inline uint64_t moved(int count, MPI_Datatype dt, int peer)
{
    return peer == MPI_PROC_NULL ? 0 : nbytes(count, dt);
}

/* Bytes received: the status' count when there is one, else the posted count. */
static uint64_t received(const MPI_Status *st, int count, MPI_Datatype dt, int peer)
{
    if (peer == MPI_PROC_NULL)
        return 0;
    if (st != MPI_STATUS_IGNORE) {
        MPI_Count n = 0;
        if (NEXT(PMPI_Get_elements_x)(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0)
            return (uint64_t)n;
    }
    return nbytes(count, dt);
}

static int64_t sum_counts(const int *counts, int n)
{
    int64_t s = 0;
    for (int i = 0; counts && i < n; i++)
        s += counts[i];
    return s;
}

/* What the MPI library's query (PMPI_Comm_rank, ...) says of comm; 0 if it fails. */
static int comm_int(int (*query)(MPI_Comm, int *), MPI_Comm comm)
{
    int v = 0;
    query(comm, &v);
    return v;
}
static int is_inter(MPI_Comm comm) { return comm_int(NEXT(PMPI_Comm_test_inter), comm); }
static int my_rank(MPI_Comm comm) { return comm_int(NEXT(PMPI_Comm_rank), comm); }
static int local_size(MPI_Comm comm) { return comm_int(NEXT(PMPI_Comm_size), comm); }
/* Number of blocks in an all-to-all / scatter buffer: the (remote) group. */
static int peer_count(MPI_Comm comm)
{
    return is_inter(comm) ? comm_int(NEXT(PMPI_Comm_remote_size), comm) : local_size(comm);
}
/* The root of a rooted collective: MPI_ROOT (intercommunicator) or the rank. */
static int is_root(MPI_Comm comm, int root)
{
    if (root == MPI_ROOT)
        return 1;
    if (root == MPI_PROC_NULL || is_inter(comm))
        return 0;
    return my_rank(comm) == root;
}
/* Ranks that send to the root of Gather/Reduce (not the idle root group of
 * an intercommunicator collective). */
static inline int sends_to_root(int root) { return root != MPI_ROOT && root != MPI_PROC_NULL; }

/* What this rank contributes to each collective (send side; MPI_IN_PLACE
 * uses the receive-side description of the same data). */
static uint64_t bcast_bytes(int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    return is_root(comm, root) ? nbytes(count, dt) : 0;
}
static uint64_t gather_bytes(const void *sbuf, int scount, MPI_Datatype stype, int rcount,
                             MPI_Datatype rtype, int root)
{
    if (!sends_to_root(root))
        return 0;
    return sbuf == MPI_IN_PLACE ? nbytes(rcount, rtype) : nbytes(scount, stype);
}
static uint64_t gatherv_bytes(const void *sbuf, int scount, MPI_Datatype stype,
                              const int *rcounts, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (!sends_to_root(root))
        return 0;
    if (sbuf == MPI_IN_PLACE)
        return rcounts ? nbytes(rcounts[my_rank(comm)], rtype) : 0;
    return nbytes(scount, stype);
}
static uint64_t scatter_bytes(int scount, MPI_Datatype stype, int root, MPI_Comm comm)
{
    return is_root(comm, root) ? nbytes((int64_t)scount * peer_count(comm), stype) : 0;
}
static uint64_t scatterv_bytes(const int *scounts, MPI_Datatype stype, int root, MPI_Comm comm)
{
    return is_root(comm, root) ? nbytes(sum_counts(scounts, peer_count(comm)), stype) : 0;
}
static uint64_t allgather_bytes(const void *sbuf, int scount, MPI_Datatype stype, int rcount,
                                MPI_Datatype rtype)
{
    return sbuf == MPI_IN_PLACE ? nbytes(rcount, rtype) : nbytes(scount, stype);
}
static uint64_t allgatherv_bytes(const void *sbuf, int scount, MPI_Datatype stype,
                                 const int *rcounts, MPI_Datatype rtype, MPI_Comm comm)
{
    if (sbuf == MPI_IN_PLACE)
        return rcounts ? nbytes(rcounts[my_rank(comm)], rtype) : 0;
    return nbytes(scount, stype);
}
static uint64_t alltoall_bytes(const void *sbuf, int scount, MPI_Datatype stype, int rcount,
                               MPI_Datatype rtype, MPI_Comm comm)
{
    int n = peer_count(comm);
    return sbuf == MPI_IN_PLACE ? nbytes((int64_t)rcount * n, rtype)
                                : nbytes((int64_t)scount * n, stype);
}
static uint64_t alltoallv_bytes(const void *sbuf, const int *scounts, MPI_Datatype stype,
                                const int *rcounts, MPI_Datatype rtype, MPI_Comm comm)
{
    int n = peer_count(comm);
    return sbuf == MPI_IN_PLACE ? nbytes(sum_counts(rcounts, n), rtype)
                                : nbytes(sum_counts(scounts, n), stype);
}
static uint64_t alltoallw_bytes(const void *sbuf, const int *scounts, const MPI_Datatype *stypes,
                                const int *rcounts, const MPI_Datatype *rtypes, MPI_Comm comm)
{
    const int *c = sbuf == MPI_IN_PLACE ? rcounts : scounts;
    const MPI_Datatype *t = sbuf == MPI_IN_PLACE ? rtypes : stypes;
    uint64_t s = 0;
    for (int i = 0, n = peer_count(comm); c && t && i < n; i++)
        s += nbytes(c[i], t[i]);
    return s;
}
static uint64_t reduce_bytes(int count, MPI_Datatype dt, int root)
{
    return sends_to_root(root) ? nbytes(count, dt) : 0;
}
static uint64_t reduce_scatter_bytes(const int *rcounts, MPI_Datatype dt, MPI_Comm comm)
{
    return nbytes(sum_counts(rcounts, local_size(comm)), dt);
}
static uint64_t reduce_scatter_block_bytes(int rcount, MPI_Datatype dt, MPI_Comm comm)
{
    return nbytes((int64_t)rcount * local_size(comm), dt);
}

/* ---- requests ------------------------------------------------------------*/

static inline uint64_t req_key(const MPI_Request *request)
{
    uint64_t key = 0;
    memcpy(&key, request, sizeof *request < 8 ? sizeof *request : 8);
    return key;
}

static inline void note_coll(struct pario_thread *th, int rc, const MPI_Request *request)
{
    if (rc == MPI_SUCCESS && request && *request != MPI_REQUEST_NULL)
        pario_pending_add(th, req_key(request), mpi_coll, NULL, 0);
}

/* The tracked requests among those handed to a wait/test (at most the
 * table's size: each is a distinct pending entry). */
struct tracked {
    int n;
    int idx[PARIO_PENDING_MAX];
    uint64_t key[PARIO_PENDING_MAX];
};

static inline void track_scan(struct pario_thread *th, int count, const MPI_Request *reqs,
                              struct tracked *tr)
{
    tr->n = 0;
    if (th->npending == 0 || !reqs)
        return;
    struct pario_pending e;
    for (int i = 0; i < count && tr->n < th->npending && tr->n < PARIO_PENDING_MAX; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        uint64_t key = req_key(&reqs[i]);
        if (pario_pending_find(th, key, &e)) {
            tr->idx[tr->n] = i;
            tr->key[tr->n] = key;
            tr->n++;
        }
    }
}

/* After a wait/test: a tracked request completed iff its handle is now
 * MPI_REQUEST_NULL (they are all nonpersistent), which is exactly what the
 * flag / index / outcount report.  The call's time goes once to the class
 * of the first completed tracked request, else to point-to-point. */
static void wait_done(struct pario_thread *th, const struct tracked *tr, const MPI_Request *reqs,
                      uint64_t t0, uint64_t t1)
{
    int charged = 0;
    for (int j = 0; j < tr->n; j++) {
        struct pario_pending e;
        if (reqs[tr->idx[j]] != MPI_REQUEST_NULL || !pario_pending_find(th, tr->key[j], &e))
            continue;
        if (!charged && th->depth == 0) {
            pario_pending_charge(th, &e, t0, t1);
            int cf = calls_field(e.field);
            if (cf >= 0)
                th->t[cf] += 1;
        }
        charged = 1;
        pario_pending_remove(th, tr->key[j]);
    }
    if (!charged && th->depth == 0)
        account(th, mpi_p2p, t0, t1, 0);
}

/* A wait or test: `st` names the statuses argument (replaced by st_ in the
 * call, local ones when tracing needs them), nstat how many it holds, and
 * END the completion arguments of pario_trace_wait_end (trace.h). */
#define WAIT(count, reqs, st, nstat, END, ...)                               \
    do {                                                                     \
        MPI_Status *st_ = (st);                                              \
        if (!pario_active())                                                 \
            return __VA_ARGS__;                                              \
        struct pario_thread *th = pario_thread();                            \
        struct pario_trace_wait *tw_ = NULL;                                 \
        if (__builtin_expect(pario_tracing, 0))                              \
            tw_ = pario_trace_wait_begin(th, (count), (reqs), &st_, (nstat)); \
        struct tracked tr;                                                   \
        track_scan(th, (count), (reqs), &tr);                                \
        th->depth++;                                                         \
        uint64_t t0 = pario_now();                                           \
        int rc = __VA_ARGS__;                                                \
        uint64_t t1 = pario_now();                                           \
        th->depth--;                                                         \
        wait_done(th, &tr, (reqs), t0, t1);                                  \
        if (tw_)                                                             \
            pario_trace_wait_end(tw_, th, t0, t1, rc, (reqs), st_, END);     \
        return rc;                                                           \
    } while (0)

#define WAIT_ONE(index) PT_W_ONE, (index), 0, NULL
#define WAIT_ALL PT_W_ALL, 0, 0, NULL
#define WAIT_SOME(outcount, indices) PT_W_SOME, 0, (outcount), (indices)

/* ---- initialisation and shutdown ---------------------------------------*/

/* MPI_Init's time goes to its own field, outside wall and the MPI classes
 * (as in Darshan, whose run time starts after MPI_Init); the library's own
 * start-up I/O is not recorded (quiet) and not charged (depth > 0).  An
 * MPI_Init_thread the library's MPI_Init calls passes straight through. */
#define INIT(...)                                                            \
    do {                                                                     \
        pario_init();                                                        \
        struct pario_thread *th = pario_active() ? pario_thread() : NULL;    \
        if (th && th->depth) /* an MPI library's init calling its other */   \
            return __VA_ARGS__;                                              \
        if (th) {                                                            \
            th->depth++;                                                     \
            th->quiet++; /* files opened in MPI_Init are MPI's, not ours */  \
        }                                                                    \
        uint64_t t0 = pario_now();                                           \
        int rc = __VA_ARGS__;                                                \
        if (rc == MPI_SUCCESS) /* quiet: a step log's reservation is ours */ \
            pario_mpi_initialized();                                         \
        uint64_t t1 = pario_now();                                           \
        if (th)                                                              \
            th->quiet--;                                                     \
        if (th && --th->depth == 0 && pario_active())                        \
            { /* counted as a call, timed apart: not the application's */    \
                th->t[mpi_init] += t1 - t0;                                  \
                th->t[mpi_other_calls] += 1;                                 \
            }                                                                \
        return rc;                                                           \
    } while (0)

int MPI_Init(int *argc, char ***argv) { INIT(NEXT(PMPI_Init)(argc, argv)); }

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    INIT(NEXT(PMPI_Init_thread)(argc, argv, required, provided));
}

int MPI_Finalize(void)
{ /* the trace's FINALIZE event is recorded in there */
    pario_mpi_finalizing(); /* collective: reduces and writes the log, then disables us */
    return NEXT(PMPI_Finalize)();
}

/* ---- point-to-point ------------------------------------------------------*/

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_SEND, 0, comm, dest, tag, b_, NULL, rc),
        NEXT(PMPI_Send)(buf, count, dt, dest, tag, comm));
}
int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_SSEND, 0, comm, dest, tag, b_, NULL, rc),
        NEXT(PMPI_Ssend)(buf, count, dt, dest, tag, comm));
}
int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_SEND, 0, comm, dest, tag, b_, NULL, rc),
        NEXT(PMPI_Bsend)(buf, count, dt, dest, tag, comm));
}
int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_SEND, 0, comm, dest, tag, b_, NULL, rc),
        NEXT(PMPI_Rsend)(buf, count, dt, dest, tag, comm));
}
int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_ISEND, 0, comm, dest, tag, b_, request, rc),
        NEXT(PMPI_Isend)(buf, count, dt, dest, tag, comm, request));
}
int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_ISSEND, 0, comm, dest, tag, b_, request, rc),
        NEXT(PMPI_Issend)(buf, count, dt, dest, tag, comm, request));
}
int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_ISEND, 0, comm, dest, tag, b_, request, rc),
        NEXT(PMPI_Ibsend)(buf, count, dt, dest, tag, comm, request));
}
int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    P2P(moved(count, dt, dest), tr_p2p(th, t0, t1, PT_ISEND, 0, comm, dest, tag, b_, request, rc),
        NEXT(PMPI_Irsend)(buf, count, dt, dest, tag, comm, request));
}
int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Status local;
    MPI_Status *st = TRACE_STATUS(status, &local);
    P2P(received(st, count, dt, source), tr_recv(th, t0, t1, 0, comm, source, st, b_),
        NEXT(PMPI_Recv)(buf, count, dt, source, tag, comm, st));
}
int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    P2P(moved(count, dt, source), tr_p2p(th, t0, t1, PT_IRECV, 0, comm, source, tag, b_, request, rc),
        NEXT(PMPI_Irecv)(buf, count, dt, source, tag, comm, request));
}
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local;
    MPI_Status *st = TRACE_STATUS(status, &local);
    P2P(moved(sendcount, sendtype, dest) + received(st, recvcount, recvtype, source),
        (tr_p2p(th, t0, t1, PT_SEND, 0, comm, dest, sendtag, moved(sendcount, sendtype, dest), NULL, rc),
         tr_recv(th, t0, t1, PT_CONT, comm, source, st, received(st, recvcount, recvtype, source))),
        NEXT(PMPI_Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                      source, recvtag, comm, st));
}
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local;
    MPI_Status *st = TRACE_STATUS(status, &local);
    P2P(moved(count, dt, dest) + received(st, count, dt, source),
        (tr_p2p(th, t0, t1, PT_SEND, 0, comm, dest, sendtag, moved(count, dt, dest), NULL, rc),
         tr_recv(th, t0, t1, PT_CONT, comm, source, st, received(st, count, dt, source))),
        NEXT(PMPI_Sendrecv_replace)(buf, count, dt, dest, sendtag, source, recvtag, comm, st));
}
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    P2P(0, tr_other(th, t0, t1), NEXT(PMPI_Probe)(source, tag, comm, status));
}
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    P2P(0, tr_other(th, t0, t1), NEXT(PMPI_Iprobe)(source, tag, comm, flag, status));
}
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    P2P(0, tr_other(th, t0, t1), NEXT(PMPI_Mprobe)(source, tag, comm, message, status));
}
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    P2P(0, tr_other(th, t0, t1), NEXT(PMPI_Improbe)(source, tag, comm, flag, message, status));
}
int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    /* MPI_MESSAGE_NO_PROC yields an empty status; with MPI_STATUS_IGNORE
     * the posted count is all we know */
    MPI_Status local;
    MPI_Status *st = TRACE_STATUS(status, &local);
    P2P(received(st, count, dt, 0), tr_mrecv(th, t0, t1, st, b_), NEXT(PMPI_Mrecv)(buf, count, dt, message, st));
}
int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *request)
{
    P2P(nbytes(count, dt), tr_imrecv(th, t0, t1, b_, request, rc), NEXT(PMPI_Imrecv)(buf, count, dt, message, request));
}

/* ---- collectives ---------------------------------------------------------*/

int MPI_Barrier(MPI_Comm comm) { COLL(PT_BARRIER, comm, -1, 0, NEXT(PMPI_Barrier)(comm)); }

int MPI_Bcast(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    COLL(PT_BCAST, comm, root, bcast_bytes(count, dt, root, comm), NEXT(PMPI_Bcast)(buffer, count, dt, root, comm));
}
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL(PT_GATHER, comm, root, gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, root),
         NEXT(PMPI_Gather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    COLL(PT_GATHER, comm, root, gatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, root, comm),
         NEXT(PMPI_Gatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm));
}
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL(PT_SCATTER, comm, root, scatter_bytes(sendcount, sendtype, root, comm),
         NEXT(PMPI_Scatter)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    COLL(PT_SCATTER, comm, root, scatterv_bytes(sendcounts, sendtype, root, comm),
         NEXT(PMPI_Scatterv)(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                       comm));
}
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL(PT_ALLGATHER, comm, -1, allgather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype),
         NEXT(PMPI_Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    COLL(PT_ALLGATHER, comm, -1, allgatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm),
         NEXT(PMPI_Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         comm));
}
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL(PT_ALLTOALL, comm, -1, alltoall_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, comm),
         NEXT(PMPI_Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL(PT_ALLTOALL, comm, -1, alltoallv_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
         NEXT(PMPI_Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm));
}
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    COLL(PT_ALLTOALL, comm, -1, alltoallw_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm),
         NEXT(PMPI_Alltoallw)(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                        recvtypes, comm));
}
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
               int root, MPI_Comm comm)
{
    COLL(PT_REDUCE, comm, root, reduce_bytes(count, dt, root), NEXT(PMPI_Reduce)(sendbuf, recvbuf, count, dt, op, root, comm));
}
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    COLL(PT_ALLREDUCE, comm, -1, nbytes(count, dt), NEXT(PMPI_Allreduce)(sendbuf, recvbuf, count, dt, op, comm));
}
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    COLL(PT_REDUCE_SCATTER, comm, -1, reduce_scatter_bytes(recvcounts, dt, comm),
         NEXT(PMPI_Reduce_scatter)(sendbuf, recvbuf, recvcounts, dt, op, comm));
}
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm)
{
    COLL(PT_REDUCE_SCATTER, comm, -1, reduce_scatter_block_bytes(recvcount, dt, comm),
         NEXT(PMPI_Reduce_scatter_block)(sendbuf, recvbuf, recvcount, dt, op, comm));
}
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
             MPI_Comm comm)
{
    COLL(PT_SCAN, comm, -1, nbytes(count, dt), NEXT(PMPI_Scan)(sendbuf, recvbuf, count, dt, op, comm));
}
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm)
{
    COLL(PT_EXSCAN, comm, -1, nbytes(count, dt), NEXT(PMPI_Exscan)(sendbuf, recvbuf, count, dt, op, comm));
}

/* ---- nonblocking collectives --------------------------------------------*/

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_BARRIER, comm, -1, request, 0, NEXT(PMPI_Ibarrier)(comm, request));
}
int MPI_Ibcast(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm,
               MPI_Request *request)
{
    ICOLL(PT_BCAST, comm, root, request, bcast_bytes(count, dt, root, comm),
          NEXT(PMPI_Ibcast)(buffer, count, dt, root, comm, request));
}
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    ICOLL(PT_GATHER, comm, root, request, gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, root),
          NEXT(PMPI_Igather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request));
}
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_GATHER, comm, root, request, gatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, root, comm),
          NEXT(PMPI_Igatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, request));
}
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    ICOLL(PT_SCATTER, comm, root, request, scatter_bytes(sendcount, sendtype, root, comm),
          NEXT(PMPI_Iscatter)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request));
}
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_SCATTER, comm, root, request, scatterv_bytes(sendcounts, sendtype, root, comm),
          NEXT(PMPI_Iscatterv)(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                         root, comm, request));
}
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_ALLGATHER, comm, -1, request, allgather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype),
          NEXT(PMPI_Iallgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          request));
}
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_ALLGATHER, comm, -1, request, allgatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm),
          NEXT(PMPI_Iallgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, request));
}
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_ALLTOALL, comm, -1, request, alltoall_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, comm),
          NEXT(PMPI_Ialltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         request));
}
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    ICOLL(PT_ALLTOALL, comm, -1, request, alltoallv_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
          NEXT(PMPI_Ialltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, request));
}
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    ICOLL(PT_ALLTOALL, comm, -1, request, alltoallw_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm),
          NEXT(PMPI_Ialltoallw)(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm, request));
}
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_REDUCE, comm, root, request, reduce_bytes(count, dt, root),
          NEXT(PMPI_Ireduce)(sendbuf, recvbuf, count, dt, op, root, comm, request));
}
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_ALLREDUCE, comm, -1, request, nbytes(count, dt),
          NEXT(PMPI_Iallreduce)(sendbuf, recvbuf, count, dt, op, comm, request));
}
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_REDUCE_SCATTER, comm, -1, request, reduce_scatter_bytes(recvcounts, dt, comm),
          NEXT(PMPI_Ireduce_scatter)(sendbuf, recvbuf, recvcounts, dt, op, comm, request));
}
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_REDUCE_SCATTER, comm, -1, request, reduce_scatter_block_bytes(recvcount, dt, comm),
          NEXT(PMPI_Ireduce_scatter_block)(sendbuf, recvbuf, recvcount, dt, op, comm, request));
}
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_SCAN, comm, -1, request, nbytes(count, dt), NEXT(PMPI_Iscan)(sendbuf, recvbuf, count, dt, op, comm, request));
}
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    ICOLL(PT_EXSCAN, comm, -1, request, nbytes(count, dt),
          NEXT(PMPI_Iexscan)(sendbuf, recvbuf, count, dt, op, comm, request));
}

/* ---- waits and tests -----------------------------------------------------*/

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    WAIT(1, request, status, 1, WAIT_ONE(-1), NEXT(PMPI_Wait)(request, st_));
}
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    WAIT(count, array_of_requests, array_of_statuses, count, WAIT_ALL,
         NEXT(PMPI_Waitall)(count, array_of_requests, st_));
}
int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    WAIT(count, array_of_requests, status, 1, WAIT_ONE(*index),
         NEXT(PMPI_Waitany)(count, array_of_requests, index, st_));
}
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    WAIT(incount, array_of_requests, array_of_statuses, incount, WAIT_SOME(*outcount, array_of_indices),
         NEXT(PMPI_Waitsome)(incount, array_of_requests, outcount, array_of_indices, st_));
}
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    WAIT(1, request, status, 1, WAIT_ONE(-1), NEXT(PMPI_Test)(request, flag, st_));
}
int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
    WAIT(count, array_of_requests, array_of_statuses, count, WAIT_ALL,
         NEXT(PMPI_Testall)(count, array_of_requests, flag, st_));
}
int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
    WAIT(count, array_of_requests, status, 1, WAIT_ONE(*flag ? *index : MPI_UNDEFINED),
         NEXT(PMPI_Testany)(count, array_of_requests, index, flag, st_));
}
int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    WAIT(incount, array_of_requests, array_of_statuses, incount, WAIT_SOME(*outcount, array_of_indices),
         NEXT(PMPI_Testsome)(incount, array_of_requests, outcount, array_of_indices, st_));
}

/* Not timed: only forgets a tracked request (MPI-IO requests may be freed
 * instead of waited for), so that a recycled handle is not misclassified. */
int MPI_Request_free(MPI_Request *request)
{
    if (pario_active() && request && *request != MPI_REQUEST_NULL) {
        struct pario_thread *th = pario_thread();
        if (th->npending)
            pario_pending_remove(th, req_key(request));
        if (pario_tracing && th->depth == 0 && pario_trace_mine(th))
            pario_trace_request_free(request);
    }
    return NEXT(PMPI_Request_free)(request);
}

/* ---- communicators, windows, one-sided ---------------------------------*/

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    OTHER(0, NEXT(PMPI_Comm_split)(comm, color, key, newcomm));
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) { OTHER(0, NEXT(PMPI_Comm_dup)(comm, newcomm)); }
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    OTHER(0, NEXT(PMPI_Comm_create)(comm, group, newcomm));
}
int MPI_Comm_free(MPI_Comm *comm)
{
    if (pario_tracing && pario_active() && comm && pario_thread()->depth == 0 && pario_trace_mine(pario_thread()))
        pario_trace_comm_free(*comm); /* a later communicator may get the same handle */
    OTHER(0, NEXT(PMPI_Comm_free)(comm));
}
int MPI_Cart_create(MPI_Comm old_comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    OTHER(0, NEXT(PMPI_Cart_create)(old_comm, ndims, dims, periods, reorder, comm_cart));
}
int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    OTHER(0, NEXT(PMPI_Win_create)(base, size, disp_unit, info, comm, win));
}
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    OTHER(0, NEXT(PMPI_Win_allocate)(size, disp_unit, info, comm, baseptr, win));
}
int MPI_Win_free(MPI_Win *win) { OTHER(0, NEXT(PMPI_Win_free)(win)); }
int MPI_Win_fence(int assert, MPI_Win win) { OTHER(0, NEXT(PMPI_Win_fence)(assert, win)); }
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    OTHER(0, NEXT(PMPI_Win_lock)(lock_type, rank, assert, win));
}
int MPI_Win_unlock(int rank, MPI_Win win) { OTHER(0, NEXT(PMPI_Win_unlock)(rank, win)); }
int MPI_Win_lock_all(int assert, MPI_Win win) { OTHER(0, NEXT(PMPI_Win_lock_all)(assert, win)); }
int MPI_Win_unlock_all(MPI_Win win) { OTHER(0, NEXT(PMPI_Win_unlock_all)(win)); }
int MPI_Win_flush(int rank, MPI_Win win) { OTHER(0, NEXT(PMPI_Win_flush)(rank, win)); }

/* One-sided transfers: time to mpi_other, origin bytes to mpi_p2p_bytes. */
int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win)
{
    OTHER(moved(origin_count, origin_datatype, target_rank),
          NEXT(PMPI_Put)(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win));
}
int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    OTHER(moved(origin_count, origin_datatype, target_rank),
          NEXT(PMPI_Get)(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win));
}
int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    OTHER(moved(origin_count, origin_datatype, target_rank),
          NEXT(PMPI_Accumulate)(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, op, win));
}
/* Bytes sent (none for MPI_NO_OP, whose origin buffer is ignored) + fetched. */
int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    OTHER((op == MPI_NO_OP ? 0 : moved(origin_count, origin_datatype, target_rank)) +
              moved(result_count, result_datatype, target_rank),
          NEXT(PMPI_Get_accumulate)(origin_addr, origin_count, origin_datatype, result_addr,
                              result_count, result_datatype, target_rank, target_disp,
                              target_count, target_datatype, op, win));
}

/* ---- the profiling names ------------------------------------------------*/

/* Every wrapper above is exported as PMPI_X too: the Fortran bindings call
 * those names (pario-mpi-next.h). */
PMPI_NAME(Init);
PMPI_NAME(Init_thread);
PMPI_NAME(Finalize);
PMPI_NAME(Send);
PMPI_NAME(Ssend);
PMPI_NAME(Bsend);
PMPI_NAME(Rsend);
PMPI_NAME(Isend);
PMPI_NAME(Issend);
PMPI_NAME(Ibsend);
PMPI_NAME(Irsend);
PMPI_NAME(Recv);
PMPI_NAME(Irecv);
PMPI_NAME(Sendrecv);
PMPI_NAME(Sendrecv_replace);
PMPI_NAME(Probe);
PMPI_NAME(Iprobe);
PMPI_NAME(Mprobe);
PMPI_NAME(Improbe);
PMPI_NAME(Mrecv);
PMPI_NAME(Imrecv);
PMPI_NAME(Barrier);
PMPI_NAME(Bcast);
PMPI_NAME(Gather);
PMPI_NAME(Gatherv);
PMPI_NAME(Scatter);
PMPI_NAME(Scatterv);
PMPI_NAME(Allgather);
PMPI_NAME(Allgatherv);
PMPI_NAME(Alltoall);
PMPI_NAME(Alltoallv);
PMPI_NAME(Alltoallw);
PMPI_NAME(Reduce);
PMPI_NAME(Allreduce);
PMPI_NAME(Reduce_scatter);
PMPI_NAME(Reduce_scatter_block);
PMPI_NAME(Scan);
PMPI_NAME(Exscan);
PMPI_NAME(Ibarrier);
PMPI_NAME(Ibcast);
PMPI_NAME(Igather);
PMPI_NAME(Igatherv);
PMPI_NAME(Iscatter);
PMPI_NAME(Iscatterv);
PMPI_NAME(Iallgather);
PMPI_NAME(Iallgatherv);
PMPI_NAME(Ialltoall);
PMPI_NAME(Ialltoallv);
PMPI_NAME(Ialltoallw);
PMPI_NAME(Ireduce);
PMPI_NAME(Iallreduce);
PMPI_NAME(Ireduce_scatter);
PMPI_NAME(Ireduce_scatter_block);
PMPI_NAME(Iscan);
PMPI_NAME(Iexscan);
PMPI_NAME(Wait);
PMPI_NAME(Waitall);
PMPI_NAME(Waitany);
PMPI_NAME(Waitsome);
PMPI_NAME(Test);
PMPI_NAME(Testall);
PMPI_NAME(Testany);
PMPI_NAME(Testsome);
PMPI_NAME(Request_free);
PMPI_NAME(Comm_split);
PMPI_NAME(Comm_dup);
PMPI_NAME(Comm_create);
PMPI_NAME(Comm_free);
PMPI_NAME(Cart_create);
PMPI_NAME(Win_create);
PMPI_NAME(Win_allocate);
PMPI_NAME(Win_free);
PMPI_NAME(Win_fence);
PMPI_NAME(Win_lock);
PMPI_NAME(Win_unlock);
PMPI_NAME(Win_lock_all);
PMPI_NAME(Win_unlock_all);
PMPI_NAME(Win_flush);
PMPI_NAME(Put);
PMPI_NAME(Get);
PMPI_NAME(Accumulate);
PMPI_NAME(Get_accumulate);
