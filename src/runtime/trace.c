/*
 * The event trace (docs/trace.md): event buffer and spill file, clock
 * synchronisation, communicator table, request ids, and the TRACE /
 * TRACE_INDEX blocks.  See trace.h.
 *
 * Threads: only the traced thread records events, so the buffer, the
 * communicator table and the request table have a single writer and need no
 * lock; other threads only bump an atomic counter (untraced_events).
 */
#include "internal.h" /* first: defines _GNU_SOURCE */

#include <mpi.h>

#include "config.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int pario_tracing = 0;

#define SYNC_ROUNDS 5
#define SYNC_TAG 7411

static struct {
    unsigned char *mem;            /* 16 bytes of block header room, then the events */
    struct pario_trace_event *ev;
    uint32_t cap, n;
    uint64_t first;                /* index of ev[0] in the rank's trace */
    int spilled_blocks;
    int spill_fd;                  /* -1: none yet */
    int spill_failed;
    uint64_t spill_len, spill_max;
    int full;                      /* the cap was reached: every later event is dropped */
    uint64_t dropped, dropped_from;  /* dropped_from: ticks of the first dropped event */
    atomic_ullong untraced;
    uint64_t untracked_requests;
    uint64_t origin;
    int mpi;                       /* MPI_Init returned */
    struct pario_thread *_Atomic owner;
    int64_t next_request;
    struct pario_buf spillbuf;
    /* clock sync: this rank's ticks and rank 0's ticks at each sync point */
    int nsync;
    uint64_t sync_mine[2], sync_rank0[2];
    double sync_x[2], sync_off[2];
    int sync_shared;               /* sync_x / sync_off computed */
} T = {.spill_fd = -1};

/* ---- start-up ------------------------------------------------------------*/

static void alloc_buffer(uint64_t cap)
{
    T.mem = malloc(16 + cap * sizeof(struct pario_trace_event));
    if (!T.mem) {
        pario_warn("cannot allocate the trace buffer (%llu events); the trace records nothing",
                   (unsigned long long)cap);
        T.cap = 0;
        T.full = 1;
        return;
    }
    T.ev = (struct pario_trace_event *)(T.mem + 16);
    T.cap = (uint32_t)cap;
}

static void trace_start(const struct pario_config *cfg)
{
    if (!cfg->trace)
        return;
    T.spill_max = cfg->trace_max;
    alloc_buffer(cfg->trace_buffer);
    T.origin = pario_start_ticks();
    pario_tracing = 1;
}

/* ---- events --------------------------------------------------------------*/

static void warn_full(const char *why)
{
    pario_warn("rank %d: the trace %s; later events are dropped (counted in the log)", pario_core.rank, why);
}

static void spill_open(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/pario-trace-XXXXXX", pario_config.tmpdir);
    int fd = mkstemp(path);
    if (fd < 0) {
        T.spill_failed = 1;
        return;
    }
    /* the raw system call: our unlink wrapper would record the file */
    syscall(SYS_unlinkat, AT_FDCWD, path, 0);
    T.spill_fd = fd;
}

/* The buffer's events as one TRACE block's payload: u64 first, u32 n, events. */
static struct pario_buf buffer_payload(void)
{
    memcpy(T.mem + 4, &T.first, 8);
    memcpy(T.mem + 12, &T.n, 4);
    return (struct pario_buf){.p = T.mem + 4, .len = 12 + (size_t)T.n * sizeof(struct pario_trace_event)};
}

/* Compress the full buffer into a TRACE block and append it to the spill
 * file; 0, or -1 when the trace is full from now on. */
static int spill(void)
{
    if (T.full)
        return -1;
    if (T.spill_fd < 0 && !T.spill_failed)
        spill_open();
    if (T.spill_fd < 0) {
        T.full = 1;
        warn_full("cannot create its temporary file");
        return -1;
    }
    struct pario_buf payload = buffer_payload();
    T.spillbuf.len = 0;
    T.spillbuf.oom = 0;
    pario_put_block(&T.spillbuf, PARIO_BLOCK_TRACE, pario_core.rank, &payload);
    if (T.spillbuf.oom) {
        T.full = 1;
        warn_full("ran out of memory");
        return -1;
    }
    if (T.spill_len + T.spillbuf.len > T.spill_max) {
        T.full = 1;
        warn_full("reached PARIO_TRACE_MAX");
        return -1;
    }
    size_t done = 0;
    while (done < T.spillbuf.len) {
        ssize_t w = pwrite(T.spill_fd, T.spillbuf.p + done, T.spillbuf.len - done,
                           (off_t)(T.spill_len + done));
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            T.full = 1;
            warn_full("cannot write its temporary file");
            return -1;
        }
        done += (size_t)w;
    }
    T.spill_len += T.spillbuf.len;
    T.spilled_blocks++;
    T.first += T.n;
    T.n = 0;
    return 0;
}

int pario_trace_mine(const struct pario_thread *th)
{
    struct pario_thread *o = atomic_load_explicit(&T.owner, memory_order_relaxed);
    if (o == th)
        return 1;
    if (o == NULL && !T.mpi) {
        /* no MPI yet: the first thread to make a call is the traced one */
        struct pario_thread *expected = NULL;
        if (atomic_compare_exchange_strong(&T.owner, &expected, (struct pario_thread *)th))
            return 1;
        return expected == th;
    }
    return 0;
}

struct pario_trace_event *pario_trace_new(struct pario_thread *th, uint64_t t0, uint64_t t1, int kind, int flags)
{
    if (th->depth != 0)
        return NULL;
    if (!pario_trace_mine(th)) {
        atomic_fetch_add_explicit(&T.untraced, 1, memory_order_relaxed);
        return NULL;
    }
    if (T.n == T.cap && spill() != 0) {
        if (T.dropped++ == 0)
            T.dropped_from = t0;
        return NULL;
    }
    struct pario_trace_event *e = &T.ev[T.n++];
    *e = (struct pario_trace_event){.t0 = t0, .t1 = t1, .kind = (uint16_t)kind, .flags = (uint16_t)flags,
                                    .comm = -1, .peer = -1, .tag = -1};
    return e;
}

void pario_trace_io_event(struct pario_thread *th, uint64_t t0, uint64_t t1, int kind, int layer, uint64_t file,
                          int64_t offset, int64_t bytes, int flags, int comm, int64_t aux)
{
    struct pario_trace_event *e = pario_trace_new(th, t0, t1, kind, flags | PT_LAYER(layer));
    if (!e)
        return;
    e->file = file;
    e->bytes = bytes > 0 ? (uint64_t)bytes : 0;
    e->aux = aux >= 0 ? aux : offset;
    e->comm = comm;
}

/* ---- communicators ---------------------------------------------------------
 * Index -> world ranks of the members (local group; for an intercommunicator
 * also the remote group, which point-to-point ranks refer to).  A freed
 * communicator's entry is kept (its index stays valid in the events) and is
 * reused by a later communicator with the same members. */
#define PT_COMMS 1024
struct comm_entry {
    uint64_t key;
    int live, inter;
    int n, first, stride;   /* arithmetic members, when ranks == NULL */
    int *ranks;
    int rn;                 /* remote group of an intercommunicator */
    int *rranks;
};
static struct comm_entry comms[PT_COMMS];
static int ncomms, last_comm;

static uint64_t handle_key(const void *h, size_t size)
{
    uint64_t k = 0;
    memcpy(&k, h, size < 8 ? size : 8);
    return k;
}

/* World ranks of a group's members (malloc'd), NULL on failure. */
static int *group_world_ranks(MPI_Group g, int *n)
{
    *n = 0;
    MPI_Group world;
    if (NEXT(PMPI_Group_size)(g, n) != MPI_SUCCESS || *n <= 0 || NEXT(PMPI_Comm_group)(MPI_COMM_WORLD, &world) != MPI_SUCCESS)
        return NULL;
    int *in = malloc(sizeof(int) * (size_t)*n), *out = malloc(sizeof(int) * (size_t)*n);
    if (!in || !out) {
        free(in);
        free(out);
        NEXT(PMPI_Group_free)(&world);
        return NULL;
    }
    for (int i = 0; i < *n; i++)
        in[i] = i;
    if (NEXT(PMPI_Group_translate_ranks)(g, *n, in, world, out) != MPI_SUCCESS)
        for (int i = 0; i < *n; i++)
            out[i] = MPI_UNDEFINED;
    for (int i = 0; i < *n; i++)
        if (out[i] == MPI_UNDEFINED)
            out[i] = -1;
    free(in);
    NEXT(PMPI_Group_free)(&world);
    return out;
}

/* Keep an arithmetic member list as (first, n, stride). */
static void set_members(struct comm_entry *c, int *ranks, int n)
{
    c->n = n;
    int arith = n >= 1 && ranks[0] >= 0;
    int stride = n >= 2 ? ranks[1] - ranks[0] : 1;
    for (int i = 1; arith && i < n; i++)
        arith = ranks[i] == ranks[0] + i * stride && ranks[i] >= 0;
    if (arith) {
        c->first = ranks[0];
        c->stride = stride;
        c->ranks = NULL;
        free(ranks);
    } else {
        c->ranks = ranks;
    }
}

static int member(const struct comm_entry *c, int i)
{
    if (i < 0 || i >= c->n)
        return -1;
    return c->ranks ? c->ranks[i] : c->first + i * c->stride;
}

static int same_members(const struct comm_entry *a, const struct comm_entry *b)
{
    if (a->n != b->n || a->inter != b->inter || a->rn != b->rn)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (member(a, i) != member(b, i))
            return 0;
    for (int i = 0; i < a->rn; i++)
        if (a->rranks[i] != b->rranks[i])
            return 0;
    return 1;
}

static void entry_free(struct comm_entry *c)
{
    free(c->ranks);
    free(c->rranks);
    memset(c, 0, sizeof *c);
}

static void comms_reset(int nprocs)
{
    for (int i = 0; i < ncomms; i++)
        entry_free(&comms[i]);
    comms[0] = (struct comm_entry){.live = 1, .n = nprocs, .first = 0, .stride = 1};
    ncomms = 1;
    last_comm = 0;
}

int pario_trace_comm(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return 0;
    if (comm == MPI_COMM_NULL)
        return -1;
    uint64_t key = handle_key(&comm, sizeof comm);
    if (comms[last_comm].live && comms[last_comm].key == key && last_comm != 0)
        return last_comm;
    for (int i = 1; i < ncomms; i++)
        if (comms[i].live && comms[i].key == key)
            return last_comm = i;
    struct comm_entry c = {.key = key, .live = 1};
    MPI_Group g;
    if (NEXT(PMPI_Comm_group)(comm, &g) != MPI_SUCCESS)
        return -1;
    int n = 0;
    int *ranks = group_world_ranks(g, &n);
    NEXT(PMPI_Group_free)(&g);
    if (!ranks)
        return -1;
    set_members(&c, ranks, n);
    NEXT(PMPI_Comm_test_inter)(comm, &c.inter);
    if (c.inter && NEXT(PMPI_Comm_remote_group)(comm, &g) == MPI_SUCCESS) {
        c.rranks = group_world_ranks(g, &c.rn);
        NEXT(PMPI_Group_free)(&g);
        if (!c.rranks)
            c.rn = 0;
    }
    for (int i = 1; i < ncomms; i++) {
        if (!comms[i].live && same_members(&comms[i], &c)) {
            free(c.ranks);
            free(c.rranks);
            comms[i].key = key;
            comms[i].live = 1;
            return last_comm = i;
        }
    }
    if (ncomms == PT_COMMS) {
        free(c.ranks);
        free(c.rranks);
        return -1;
    }
    comms[ncomms] = c;
    return last_comm = ncomms++;
}

void pario_trace_comm_free(MPI_Comm comm)
{
    uint64_t key = handle_key(&comm, sizeof comm);
    for (int i = 1; i < ncomms; i++)
        if (comms[i].live && comms[i].key == key)
            comms[i].live = 0;
}

static int world_of(int ci, int r, int remote)
{
    if (r == MPI_ANY_SOURCE)
        return PT_ANY;
    if (ci < 0 || ci >= ncomms || r < 0)
        return -1;
    const struct comm_entry *c = &comms[ci];
    if (c->inter && remote)
        return r < c->rn && c->rranks ? c->rranks[r] : -1;
    return member(c, r);
}

int pario_trace_world(MPI_Comm comm, int ci, int r)
{
    (void)comm;
    return world_of(ci, r, 1);
}

/* ---- requests ----------------------------------------------------------------
 * MPI_Request -> id: open addressing, linear probing, deletion by backward
 * shift (no tombstones); kept at most 3/4 full. */
#define PT_REQS 4096
struct req_entry {
    uint64_t key;
    int64_t id;
    int32_t comm, is_recv;
};
static struct req_entry reqs[PT_REQS];
static int nreqs;

static size_t req_slot(uint64_t key) { return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) % PT_REQS; }

int64_t pario_trace_request(const MPI_Request *req, int comm, int is_recv)
{
    uint64_t key = handle_key(req, sizeof *req);
    if (*req == MPI_REQUEST_NULL || key == 0)
        return 0;
    if (nreqs >= PT_REQS * 3 / 4) {
        T.untracked_requests++;
        return 0;
    }
    int64_t id = ++T.next_request;
    size_t s = req_slot(key);
    while (reqs[s].key != 0 && reqs[s].key != key)
        s = (s + 1) % PT_REQS;
    if (reqs[s].key == 0)
        nreqs++;
    reqs[s] = (struct req_entry){.key = key, .id = id, .comm = comm, .is_recv = is_recv};
    return id;
}

static int req_take(uint64_t key, struct req_entry *out)
{
    if (key == 0 || nreqs == 0)
        return 0;
    size_t s = req_slot(key);
    while (reqs[s].key != key) {
        if (reqs[s].key == 0)
            return 0;
        s = (s + 1) % PT_REQS;
    }
    *out = reqs[s];
    /* backward shift: move later members of the run into the hole */
    size_t hole = s, j = s;
    for (;;) {
        j = (j + 1) % PT_REQS;
        if (reqs[j].key == 0)
            break;
        size_t home = req_slot(reqs[j].key);
        /* j may move to hole if home is not cyclically in (hole, j] */
        int stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            reqs[hole] = reqs[j];
            hole = j;
        }
    }
    reqs[hole].key = 0;
    nreqs--;
    return 1;
}

void pario_trace_request_free(const MPI_Request *req)
{
    struct req_entry e;
    req_take(handle_key(req, sizeof *req), &e);
}

uint64_t pario_trace_status_bytes(const MPI_Status *st)
{
    MPI_Count n = 0;
    if (NEXT(PMPI_Get_elements_x)(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0)
        return (uint64_t)n;
    return 0;
}

/* ---- waits and tests ---------------------------------------------------------*/

static struct pario_trace_wait wait_state; /* the traced thread's, one call at a time */

struct pario_trace_wait *pario_trace_wait_begin(struct pario_thread *th, int count, const MPI_Request *rq,
                                                MPI_Status **statuses, int nstat)
{
    if (th->depth != 0 || !pario_trace_mine(th))
        return NULL;
    struct pario_trace_wait *w = &wait_state;
    w->n = count < 0 || !rq ? 0 : (count < PT_WAIT_MAX ? count : PT_WAIT_MAX);
    for (int i = 0; i < w->n; i++) {
        w->was[i] = rq[i] != MPI_REQUEST_NULL;
        w->key[i] = handle_key(&rq[i], sizeof rq[i]);
    }
    if ((*statuses == MPI_STATUS_IGNORE || *statuses == MPI_STATUSES_IGNORE) && nstat >= 0 &&
        nstat <= PT_STATUS_MAX)
        *statuses = w->local;
    return w;
}

static void complete_part(struct pario_thread *th, uint64_t t0, uint64_t t1, uint64_t key, const MPI_Status *st)
{
    struct req_entry r = {.id = 0, .comm = -1};
    req_take(key, &r);
    struct pario_trace_event *e = pario_trace_new(th, t0, t1, PT_COMPLETE, PT_CONT);
    if (!e)
        return;
    e->aux = r.id;
    e->comm = r.comm;
    if (r.is_recv && st && st != MPI_STATUS_IGNORE) {
        e->peer = st->MPI_SOURCE == MPI_PROC_NULL ? -1 : world_of(r.comm, st->MPI_SOURCE, 1);
        e->tag = st->MPI_SOURCE == MPI_PROC_NULL ? -1 : st->MPI_TAG;
        e->bytes = st->MPI_SOURCE == MPI_PROC_NULL ? 0 : pario_trace_status_bytes(st);
    }
}

void pario_trace_wait_end(struct pario_trace_wait *w, struct pario_thread *th, uint64_t t0, uint64_t t1, int rc,
                          const MPI_Request *rq, MPI_Status *statuses, enum pt_wait_mode mode, int index,
                          int outcount, const int *indices)
{
    (void)rc;
    /* the completed requests leave the table (and are counted as dropped) even if the
     * trace is full */
    pario_trace_new(th, t0, t1, PT_WAIT, 0);
    int ignore = statuses == MPI_STATUS_IGNORE || statuses == MPI_STATUSES_IGNORE;
    if (mode == PT_W_ONE) {
        int i = index == -1 ? 0 : index;
        if (index == MPI_UNDEFINED || i < 0 || i >= w->n || !w->was[i])
            return;
        if (index == -1 && rq[0] != MPI_REQUEST_NULL)
            return; /* a test that completed nothing */
        complete_part(th, t0, t1, w->key[i], ignore ? NULL : statuses);
    } else if (mode == PT_W_ALL) {
        for (int i = 0; i < w->n; i++)
            if (w->was[i] && rq[i] == MPI_REQUEST_NULL)
                complete_part(th, t0, t1, w->key[i], ignore ? NULL : &statuses[i]);
    } else {
        for (int j = 0; outcount != MPI_UNDEFINED && j < outcount; j++) {
            int i = indices[j];
            if (i >= 0 && i < w->n && w->was[i])
                complete_part(th, t0, t1, w->key[i], ignore ? NULL : &statuses[j]);
        }
    }
}

/* ---- clocks ------------------------------------------------------------------
 * Cristian's algorithm, rank 0 against each rank in turn: a few ping-pongs,
 * the one with the shortest round trip kept.  Ticks are stored; they become
 * seconds in pario_trace_share_clock, once every rank's timer is calibrated. */
static void clock_sync(MPI_Comm comm)
{
    int rank = 0, size = 1;
    NEXT(PMPI_Comm_rank)(comm, &rank);
    NEXT(PMPI_Comm_size)(comm, &size);
    uint64_t mine = 0, theirs = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            uint64_t best = UINT64_MAX, msg[2] = {0, 0};
            for (int k = 0; k < SYNC_ROUNDS; k++) {
                uint64_t tr = 0, a = pario_now();
                NEXT(PMPI_Send)(NULL, 0, MPI_BYTE, r, SYNC_TAG, comm);
                NEXT(PMPI_Recv)(&tr, 1, MPI_UINT64_T, r, SYNC_TAG, comm, MPI_STATUS_IGNORE);
                uint64_t b = pario_now();
                if (b - a < best) {
                    best = b - a;
                    msg[0] = (uint64_t)k;
                    msg[1] = a + (b - a) / 2;
                }
            }
            NEXT(PMPI_Send)(msg, 2, MPI_UINT64_T, r, SYNC_TAG, comm);
        }
        mine = theirs = pario_now();
    } else {
        uint64_t tr[SYNC_ROUNDS], msg[2];
        for (int k = 0; k < SYNC_ROUNDS; k++) {
            NEXT(PMPI_Recv)(NULL, 0, MPI_BYTE, 0, SYNC_TAG, comm, MPI_STATUS_IGNORE);
            tr[k] = pario_now();
            NEXT(PMPI_Send)(&tr[k], 1, MPI_UINT64_T, 0, SYNC_TAG, comm);
        }
        NEXT(PMPI_Recv)(msg, 2, MPI_UINT64_T, 0, SYNC_TAG, comm, MPI_STATUS_IGNORE);
        mine = tr[msg[0] < SYNC_ROUNDS ? msg[0] : 0];
        theirs = msg[1];
    }
    if (T.nsync < 2) {
        T.sync_mine[T.nsync] = mine;
        T.sync_rank0[T.nsync] = theirs;
        T.nsync++;
    }
}

static double local_seconds(uint64_t t, uint64_t origin, double spt)
{
    return (double)(int64_t)(t - origin) * spt;
}

/* After the timer's calibration, collective: rank 0's origin and tick length reach every
 * rank, which turns its sync points into seconds. */
static void share_clock(MPI_Comm comm)
{
    struct {
        uint64_t origin;
        double spt;
    } zero = {T.origin, pario_core.sec_per_tick};
    NEXT(PMPI_Bcast)(&zero, (int)sizeof zero, MPI_BYTE, 0, comm);
    for (int i = 0; i < T.nsync; i++) {
        T.sync_x[i] = local_seconds(T.sync_mine[i], T.origin, pario_core.sec_per_tick);
        T.sync_off[i] = local_seconds(T.sync_rank0[i], zero.origin, zero.spt) - T.sync_x[i];
    }
    T.sync_shared = 1;
}

/* MPI_Init returned: the calling thread becomes the traced one, events before are discarded,
 * the clocks are synchronised over the runtime's communicator (none: not synchronised) and
 * the origin is taken. */
static void trace_mpi_init(const struct pario_mpi *mpi)
{
    if (!pario_tracing)
        return;
    struct pario_thread *th = pario_thread();
    /* the timeline starts here: what the first thread did before is dropped */
    T.n = 0;
    T.first = 0;
    T.spilled_blocks = 0;
    T.spill_len = 0;
    T.dropped = 0;
    T.full = T.cap == 0;
    atomic_store(&T.untraced, 0);
    T.untracked_requests = 0;
    T.next_request = 0;
    memset(reqs, 0, sizeof reqs);
    nreqs = 0;
    comms_reset(mpi->nprocs);
    atomic_store(&T.owner, th);
    T.mpi = 1;
    if (mpi->comm != MPI_COMM_NULL)
        clock_sync(mpi->comm);
    T.origin = pario_now();
}

/* MPI_Finalize (the timer calibrated): the FINALIZE event at its entry, the second clock
 * sync, and rank 0's clock to every rank. */
static void trace_mpi_finalize(const struct pario_mpi *mpi)
{
    if (!pario_tracing)
        return;
    struct pario_thread *th = pario_thread();
    pario_trace_new(th, mpi->finalize_ticks, mpi->finalize_ticks, PT_FINALIZE, 0);
    clock_sync(mpi->comm);
    share_clock(mpi->comm);
}

const struct pario_part pario_trace_part = {
    .name = "trace", .start = trace_start, .mpi_init = trace_mpi_init, .mpi_finalize = trace_mpi_finalize};

/* ---- the blocks ----------------------------------------------------------------*/

uint64_t pario_trace_spill_bytes(void) { return T.spill_len; }

int pario_trace_read_spill(void *dst, uint64_t off, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(T.spill_fd, (char *)dst + done, n - done, (off_t)(off + done));
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return -1;
        }
        done += (size_t)r;
    }
    return 0;
}

int pario_trace_copy_spill(FILE *out)
{
    static char chunk[1 << 16];
    for (uint64_t off = 0; off < T.spill_len;) {
        size_t n = T.spill_len - off < sizeof chunk ? (size_t)(T.spill_len - off) : sizeof chunk;
        if (pario_trace_read_spill(chunk, off, n) != 0 || fwrite(chunk, 1, n, out) != n)
            return -1;
        off += n;
    }
    return 0;
}

static void put_str(struct pario_buf *b, const char *s) { pario_buf_put(b, s, strlen(s)); }

static void put_fmt(struct pario_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_fmt(struct pario_buf *b, const char *fmt, ...)
{
    char s[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    if (n > 0)
        pario_buf_put(b, s, (size_t)n < sizeof s ? (size_t)n : sizeof s - 1);
}

static void put_comms(struct pario_buf *b)
{
    put_str(b, "[");
    for (int i = 0; i < ncomms; i++) {
        const struct comm_entry *c = &comms[i];
        if (i)
            put_str(b, ",");
        if (!c->ranks) {
            put_fmt(b, "{\"range\":[%d,%d,%d]}", c->first, c->n, c->stride);
            continue;
        }
        put_str(b, "{\"ranks\":[");
        for (int j = 0; j < c->n; j++)
            put_fmt(b, j ? ",%d" : "%d", c->ranks[j]);
        put_str(b, "]}");
    }
    put_str(b, "]");
}

void pario_trace_finish(struct pario_buf *tail, int rank, int *nblocks)
{
    *nblocks = 0;
    if (!pario_tracing)
        return;
    if (ncomms == 0) /* no MPI: the one process */
        comms_reset(1);
    double spt = pario_core.sec_per_tick;
    if (T.n > 0) {
        struct pario_buf payload = buffer_payload();
        pario_put_block(tail, PARIO_BLOCK_TRACE, rank, &payload);
        ++*nblocks;
    }
    *nblocks += T.spilled_blocks;
    struct pario_buf idx = {0};
    put_fmt(&idx, "{\"events\":%llu,\"blocks\":%d,\"dropped\":%llu,\"dropped_from\":",
            (unsigned long long)(T.first + T.n), *nblocks, (unsigned long long)T.dropped);
    if (T.dropped)
        put_fmt(&idx, "%.9f", local_seconds(T.dropped_from, T.origin, spt));
    else
        put_str(&idx, "null");
    put_fmt(&idx, ",\"untraced_events\":%llu,\"untracked_requests\":%llu,\"origin_ticks\":%llu",
            (unsigned long long)atomic_load(&T.untraced), (unsigned long long)T.untracked_requests,
            (unsigned long long)T.origin);
    /* The time from the library's start to MPI_Init's entry: in the profile's wall time (which
     * leaves out only MPI_Init itself), so the reader starts the rank's timeline that much
     * before its origin and the trace's computation is the profile's. */
    double pre_init = 0.0;
    struct pario_thread *owner = atomic_load(&T.owner);
    if (T.mpi && owner && T.origin > pario_start_ticks())
        pre_init = (double)(T.origin - pario_start_ticks()) * spt - (double)owner->t[mpi_init] * spt;
    put_fmt(&idx, ",\"pre_init\":%.9f", pre_init > 0.0 ? pre_init : 0.0);
    put_fmt(&idx, ",\"ticks_per_second\":%.17g,\"sync\":[", spt > 0 ? 1.0 / spt : 1e9);
    if (!T.mpi) {
        put_str(&idx, "[0.0,0.0]");
    } else if (T.sync_shared) {
        for (int i = 0; i < T.nsync; i++)
            put_fmt(&idx, "%s[%.9f,%.9f]", i ? "," : "", T.sync_x[i], T.sync_off[i]);
    }
    put_str(&idx, "],\"comms\":");
    put_comms(&idx);
    put_str(&idx, "}");
    pario_put_block(tail, PARIO_BLOCK_TRACE_INDEX, rank, &idx);
    ++*nblocks;
    pario_free(idx.p);
    if (idx.oom)
        tail->oom = 1;
}
