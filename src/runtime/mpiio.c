/*
 * MPI-IO layer through PMPI: open/close/view/sync/size/info and every data
 * call (independent, collective, explicit offset, shared and ordered
 * pointer, nonblocking, split collective).  While an MPI-IO call runs, the
 * thread's depth is raised so the POSIX calls and MPI messages it makes
 * update their file counters but not the rank's time classes.
 *
 * At open the hints of PARIO_HINTS are injected, and afterwards the hints in
 * effect (MPI_File_get_info) and the file system type are recorded.  The
 * collective writes of a file the collective-write engine serves go through
 * mpiio_engine.c; this file times them and records what the engine did.
 */
#include "core.h"
#include "mpiio_engine.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "trace.h"

extern char **environ;

static const unsigned char max_reduced[MPIIO_NUM_COUNTERS] = {
    [MPIIO_MAX_READ_SIZE] = 1,
    [MPIIO_MAX_WRITE_SIZE] = 1,
    [MPIIO_FS_TYPE] = 1,
    [MPIIO_NONCONTIG_VIEW] = 1,
    [MPIIO_ENGINE_ALGORITHM] = 1,
    [MPIIO_ENGINE_SHUFFLE] = 1,
    [MPIIO_ENGINE_AGGREGATORS] = 1,
    [MPIIO_ENGINE_AUTO_KEPT_ONE] = 1,
    [MPIIO_ENGINE_AUTO_KEPT_MANY] = 1,
};

const struct pario_layer_desc pario_mpiio_desc = {
    PARIO_LAYER_DESC_COMMON(MPIIO, mpiio),
    PARIO_LAYER_DESC_AGGREGATE(MPIIO),
    .c_max_reduced = max_reduced,
};

/* ---- MPI_File -> record ----------------------------------------------------
 * Open addressing on the handle's bits.  Inserts and deletes (open, close)
 * take a lock; lookups on the data path only read atomics. */
#define FH_SLOTS 4096
#define FH_TOMBSTONE ((uintptr_t)1)
static _Atomic uintptr_t fh_keys[FH_SLOTS];
static struct pario_record *_Atomic fh_recs[FH_SLOTS];
static struct cw_file *_Atomic fh_engines[FH_SLOTS];   /* the collective-write engine's state, or NULL */
static _Atomic int fh_comms[FH_SLOTS];  /* tracing: the trace's index of the file's communicator */
static pthread_mutex_t fh_lock = PTHREAD_MUTEX_INITIALIZER;

static uintptr_t fh_key(MPI_File fh)
{
    uintptr_t k = 0;
    memcpy(&k, &fh, sizeof fh < sizeof k ? sizeof fh : sizeof k);
    return k;
}

static size_t fh_slot(uintptr_t k) { return (size_t)((k >> 4) * 0x9e3779b97f4a7c15ull % FH_SLOTS); }

static long fh_find(MPI_File fh)
{
    uintptr_t k = fh_key(fh);
    size_t s = fh_slot(k);
    for (int i = 0; i < FH_SLOTS; i++, s = (s + 1) % FH_SLOTS) {
        uintptr_t cur = atomic_load_explicit(&fh_keys[s], memory_order_acquire);
        if (cur == k)
            return (long)s;
        if (cur == 0)
            return -1;
    }
    return -1;
}

static struct pario_record *fh_get(MPI_File fh)
{
    long s = fh_find(fh);
    return s < 0 ? NULL : atomic_load_explicit(&fh_recs[s], memory_order_relaxed);
}

static struct cw_file *fh_engine(MPI_File fh)
{
    long s = fh_find(fh);
    return s < 0 ? NULL : atomic_load_explicit(&fh_engines[s], memory_order_relaxed);
}

/* The trace's index of fh's communicator (-1: unknown). */
static int fh_comm(MPI_File fh)
{
    long s = fh_find(fh);
    return s < 0 ? -1 : atomic_load_explicit(&fh_comms[s], memory_order_relaxed);
}

static void fh_put(MPI_File fh, struct pario_record *r, struct cw_file *engine, int comm)
{
    uintptr_t k = fh_key(fh);
    size_t s = fh_slot(k);
    pthread_mutex_lock(&fh_lock);
    for (int i = 0; i < FH_SLOTS; i++, s = (s + 1) % FH_SLOTS) {
        uintptr_t cur = atomic_load(&fh_keys[s]);
        if (cur == 0 || cur == FH_TOMBSTONE || cur == k) {
            atomic_store(&fh_recs[s], r);
            atomic_store(&fh_engines[s], engine);
            atomic_store(&fh_comms[s], comm);
            atomic_store_explicit(&fh_keys[s], k, memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&fh_lock);
}

static void fh_del(uintptr_t k)
{
    size_t s = fh_slot(k);
    pthread_mutex_lock(&fh_lock);
    for (int i = 0; i < FH_SLOTS; i++, s = (s + 1) % FH_SLOTS) {
        uintptr_t cur = atomic_load(&fh_keys[s]);
        if (cur == k) {
            atomic_store(&fh_keys[s], FH_TOMBSTONE);
            break;
        }
        if (cur == 0)
            break;
    }
    pthread_mutex_unlock(&fh_lock);
}

/* ---- helpers ---------------------------------------------------------------*/

/* "ufs:/path" -> "/path" (ROMIO's file-system prefixes). */
static const char *strip_prefix(const char *name)
{
    const char *colon = strchr(name, ':');
    const char *slash = strchr(name, '/');
    if (colon && (!slash || colon < slash) && colon - name > 1)
        return colon + 1;
    return name;
}

/* Keep text (at most cap bytes) in *field of the record, unless it holds the same
 * already; with none_same, an unset field counts as the same as any text (nothing
 * is stored until there is something to say). */
static void store_text(struct pario_record *r, char **field, const char *text, size_t cap, int none_same)
{
    pario_rec_lock(r);
    int same = *field ? strcmp(*field, text) == 0 : none_same;
    pario_rec_unlock(r);
    if (same)
        return;
    char *copy = pario_arena_strdup(text, cap);
    if (copy) {
        pario_rec_lock(r);
        *field = copy;
        pario_rec_unlock(r);
    }
}

/* Store "key=value\n..." of the n hints pario injected at the file's open (kv:
 * key, value, ...), if they changed; nothing while no open injected any. */
static void record_injected(struct pario_record *r, const char *const *kv, int n)
{
    if (!kv)
        n = 0;
    char text[8192];
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(text + len, sizeof text - len, "%s=%s\n", kv[2 * i], kv[2 * i + 1]);
        if (w < 0 || (size_t)w >= sizeof text - len)
            break; /* bounded: the rest does not fit */
        len += (size_t)w;
    }
    text[len] = '\0';
    store_text(r, &r->injected, text, sizeof text, n == 0);
}

/* Store "key=value\n..." of the hints in effect, if they changed. */
static void record_hints(struct pario_record *r, MPI_File fh)
{
    MPI_Info info;
    if (NEXT(PMPI_File_get_info)(fh, &info) != MPI_SUCCESS)
        return;
    char text[4096];
    size_t len = 0;
    int nkeys = 0;
    NEXT(PMPI_Info_get_nkeys)(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[1024];
        int flag = 0;
        if (NEXT(PMPI_Info_get_nthkey)(info, i, key) != MPI_SUCCESS)
            continue;
        if (NEXT(PMPI_Info_get)(info, key, (int)sizeof val - 1, val, &flag) != MPI_SUCCESS || !flag)
            continue;
        int n = snprintf(text + len, sizeof text - len, "%s=%s\n", key, val);
        if (n < 0 || (size_t)n >= sizeof text - len)
            break; /* bounded: the rest does not fit */
        len += (size_t)n;
    }
    NEXT(PMPI_Info_free)(&info);
    /* Open MPI's OMPIO reports few hints; the MCA settings that choose and
     * tune the I/O component are the equivalent, so record them too. */
    static const char *const mca_prefixes[] = {"OMPI_MCA_io", "OMPI_MCA_fcoll", "OMPI_MCA_fbtl",
                                               "OMPI_MCA_fs", "OMPI_MCA_sharedfp", NULL};
    for (char **e = environ; e && *e; e++) {
        for (int i = 0; mca_prefixes[i]; i++) {
            if (strncmp(*e, mca_prefixes[i], strlen(mca_prefixes[i])) != 0)
                continue;
            int n = snprintf(text + len, sizeof text - len, "mca:%s\n", *e + strlen("OMPI_MCA_"));
            if (n > 0 && (size_t)n < sizeof text - len)
                len += (size_t)n;
            break;
        }
    }
    text[len] = '\0';
    store_text(r, &r->hints, text, sizeof text, 0);
}

static int64_t fs_type_of(const char *path)
{
    struct statfs sf;
    if (statfs(path, &sf) == 0)
        return (int64_t)(unsigned long)sf.f_type;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    if (statfs(dirname(dir), &sf) == 0)
        return (int64_t)(unsigned long)sf.f_type;
    return 0;
}

static int64_t type_bytes(int count, MPI_Datatype dt)
{
    int size = 0;
    if (count <= 0 || NEXT(PMPI_Type_size)(dt, &size) != MPI_SUCCESS)
        return 0;
    return (int64_t)count * size;
}

/* ---- trace events (docs/trace.md): layer 2, the file's record id, the
 * offset when explicit; a collective call carries the index of the file's
 * communicator (ci), an independent one INDEP. */
#define INDEP (-3)
static void trace_mpiio(struct pario_thread *th, int kind, const struct pario_record *r, int ci, int64_t off,
                        int64_t bytes, const MPI_Request *req, int rc, uint64_t t0, uint64_t t1)
{
    int flags = (ci != INDEP ? PT_COLLECTIVE : 0) | (req ? PT_NONBLOCKING : 0);
    struct pario_trace_event *e = pario_trace_new(th, t0, t1, kind, flags | PT_LAYER(PARIO_MPIIO));
    if (!e)
        return;
    e->file = r ? r->id : 0;
    e->bytes = bytes > 0 ? (uint64_t)bytes : 0;
    e->comm = ci != INDEP ? ci : -1;
    e->aux = req ? (rc == MPI_SUCCESS ? pario_trace_request(req, e->comm, 0) : 0) : off;
}

static int is_coll_op(int op, int extra)
{
    return op == MPIIO_COLL_READS || op == MPIIO_COLL_WRITES || op == MPIIO_SPLIT_READS ||
           op == MPIIO_SPLIT_WRITES || extra == MPIIO_COLL_READS || extra == MPIIO_COLL_WRITES;
}

/* A data call on fh: `op` is the operation counter; shared/nb flag extra
 * counters; req != NULL notes the request so its wait counts as I/O. */
static void mpiio_data(struct pario_thread *th, MPI_File fh, int is_write, int op, int extra, int count,
                       MPI_Datatype dt, uint64_t t0, uint64_t t1, MPI_Request *req, int64_t off, int rc)
{
    pario_charge(th, is_write ? mpiio_write : mpiio_read, t0, t1);
    struct pario_record *r = fh_get(fh);
    if (__builtin_expect(pario_tracing, 0))
        trace_mpiio(th, is_write ? PT_IO_WRITE : PT_IO_READ, r, is_coll_op(op, extra) ? fh_comm(fh) : INDEP, off,
                    type_bytes(count, dt), req, rc, t0, t1);
    if (!r)
        return;
    int64_t bytes = type_bytes(count, dt);
    pario_rec_lock(r);
    if (op >= 0)
        r->counters[op]++;
    if (extra >= 0)
        r->counters[extra]++;
    pario_rec_access(r, is_write, -1, bytes, t0, t1);
    pario_rec_unlock(r);
    if (req) {
        uint64_t key = 0;
        memcpy(&key, req, sizeof *req < sizeof key ? sizeof *req : sizeof key);
        pario_pending_add(th, key, is_write ? mpiio_write : mpiio_read, r, is_write);
    }
}

/* The end of a split collective: time only. */
static void mpiio_time(struct pario_thread *th, MPI_File fh, int is_write, uint64_t t0, uint64_t t1)
{
    pario_charge(th, is_write ? mpiio_write : mpiio_read, t0, t1);
    struct pario_record *r = fh_get(fh);
    if (__builtin_expect(pario_tracing, 0))
        trace_mpiio(th, is_write ? PT_IO_WRITE : PT_IO_READ, r, fh_comm(fh), -1, 0, NULL, MPI_SUCCESS, t0, t1);
    if (!r)
        return;
    pario_rec_lock(r);
    r->fcounters[is_write ? MPIIO_F_WRITE_TIME : MPIIO_F_READ_TIME] += (double)(t1 - t0);
    pario_rec_unlock(r);
}

/* ci: the trace's index of the file's communicator for a collective call, else INDEP. */
static void mpiio_meta_op(struct pario_thread *th, struct pario_record *r, int counter, int field,
                       uint64_t t0, uint64_t t1, int ci)
{
    pario_charge(th, field, t0, t1);
    if (__builtin_expect(pario_tracing, 0))
        trace_mpiio(th, PT_IO_META, r, ci, -1, 0, NULL, MPI_SUCCESS, t0, t1);
    if (r)
        pario_rec_meta(r, counter, field == mpiio_write ? PARIO_META_WRITE : PARIO_META, t0, t1);
}

/* Run `call` with the thread marked as inside MPI-IO, timing it. */
#define TIMED(call)                                                                                \
    struct pario_thread *th = pario_thread();                                                     \
    th->depth++;                                                                                   \
    uint64_t t0 = pario_now();                                                                     \
    int rc = call;                                                                                 \
    uint64_t t1 = pario_now();                                                                     \
    th->depth--

/* off: the explicit offset, -1 for the file pointers */
#define DATA(call, fh, is_write, op, extra, count, dt, req, off)                                  \
    if (!pario_active())                                                                           \
        return call;                                                                               \
    TIMED(call);                                                                                   \
    mpiio_data(th, fh, is_write, op, extra, count, dt, t0, t1, req, off, rc);                      \
    return rc

#define SPLIT_END(call, fh, is_write)                                                              \
    if (!pario_active())                                                                           \
        return call;                                                                               \
    TIMED(call);                                                                                   \
    mpiio_time(th, fh, is_write, t0, t1);                                                          \
    return rc

/* coll: the call is collective over the file's communicator */
#define META(call, fh, counter, field, coll)                                                       \
    if (!pario_active())                                                                           \
        return call;                                                                               \
    TIMED(call);                                                                                   \
    mpiio_meta_op(th, fh_get(fh), counter, field, t0, t1, (coll) && pario_tracing ? fh_comm(fh) : INDEP); \
    return rc

/* ---- the collective-write engine (src/collective, driven by mpiio_engine.c) --*/

/* Record what the engine did for one call: counts once per call (the file
 * communicator's rank 0), times on every rank. */
static void engine_record(MPI_File fh, const struct cw_stats *s)
{
    struct pario_record *r = fh_get(fh);
    if (!r)
        return;
    pario_rec_lock(r);
    if (s->served) {
        if (s->comm_rank == 0) {
            /* the calls of each algorithm (engine_algorithm keeps only the last one's) */
            static const int calls_counter[] = {
                [CW_NONE] = MPIIO_ENGINE_CALLS_NONE,          [CW_COMM] = MPIIO_ENGINE_CALLS_COMM,
                [CW_WRITE] = MPIIO_ENGINE_CALLS_WRITE,        [CW_WRITE_COMM] = MPIIO_ENGINE_CALLS_WRITE_COMM,
                [CW_WRITE_COMM_2] = MPIIO_ENGINE_CALLS_WRITE_COMM_2, [CW_DIRECT] = MPIIO_ENGINE_CALLS_DIRECT,
            };
            r->counters[MPIIO_ENGINE_WRITES]++;
            r->counters[MPIIO_ENGINE_CYCLES] += s->cycles;
            if (s->algorithm >= 0 && s->algorithm < (int)(sizeof calls_counter / sizeof *calls_counter) &&
                calls_counter[s->algorithm])
                r->counters[calls_counter[s->algorithm]]++;
            /* each algorithm:shuffle pair, laid out algorithm-major in the log */
            if (s->algorithm >= CW_NONE && s->algorithm <= CW_WRITE_COMM_2 && s->shuffle >= CW_P2P &&
                s->shuffle <= CW_RMA_LOCK) {
                int v = (s->algorithm - CW_NONE) * 3 + (s->shuffle - CW_P2P);
                r->counters[MPIIO_ENGINE_VARIANT_CALLS_NONE_P2P + v]++;
                r->fcounters[MPIIO_F_ENGINE_VARIANT_TIME_NONE_P2P + v] += (double)s->t_call;
            }
            r->counters[MPIIO_ENGINE_AUTO_EXPLORED] += s->auto_explored;
        }
        if (s->auto_kept)
            r->counters[s->auto_class ? MPIIO_ENGINE_AUTO_KEPT_MANY : MPIIO_ENGINE_AUTO_KEPT_ONE] = s->auto_kept;
        r->counters[MPIIO_ENGINE_ALGORITHM] = s->algorithm;
        r->counters[MPIIO_ENGINE_SHUFFLE] = s->shuffle;
        r->counters[MPIIO_ENGINE_AGGREGATORS] = s->aggregators;
        r->fcounters[MPIIO_F_ENGINE_SETUP_TIME] += (double)s->t_setup;
        r->fcounters[MPIIO_F_ENGINE_SHUFFLE_TIME] += (double)s->t_shuffle;
        r->fcounters[MPIIO_F_ENGINE_WRITE_TIME] += (double)s->t_write;
        r->fcounters[MPIIO_F_ENGINE_WAIT_TIME] += (double)s->t_wait;
    } else if (s->reason != CW_FB_NONE && s->comm_rank == 0) {
        static const int reason_counter[] = {
            [CW_FB_ATOMIC] = MPIIO_ENGINE_FB_ATOMIC,       [CW_FB_DATAREP] = MPIIO_ENGINE_FB_DATAREP,
            [CW_FB_SEQUENTIAL] = MPIIO_ENGINE_FB_SEQUENTIAL, [CW_FB_DATATYPE] = MPIIO_ENGINE_FB_DATATYPE,
            [CW_FB_OTHER] = MPIIO_ENGINE_FB_OTHER,
        };
        r->counters[MPIIO_ENGINE_FALLBACKS]++;
        r->counters[reason_counter[s->reason]]++;
    }
    pario_rec_unlock(r);
}

/* A collective write through the engine or the MPI library, measured; the
 * log says what the engine did, or why it gave the call back. */
static int engine_write(struct cw_file *engine, MPI_File fh, int explicit_offset, MPI_Offset off,
                        const void *buf, int count, MPI_Datatype dt, MPI_Status *st, MPI_Request *rq,
                        enum write_form form)
{
    struct cw_stats stats;
    struct pario_thread *th = pario_thread();
    th->depth++;
    uint64_t t0 = pario_now();
    int rc = pario_engine_write(engine, fh, explicit_offset, off, buf, count, dt, st, rq, form, &stats);
    uint64_t t1 = pario_now();
    th->depth--;
    int saved = errno;
    int op = form == SPLIT ? MPIIO_SPLIT_WRITES : form == NONBLOCKING ? MPIIO_NB_WRITES : MPIIO_COLL_WRITES;
    mpiio_data(th, fh, 1, op, form == NONBLOCKING ? MPIIO_COLL_WRITES : -1, count, dt, t0, t1,
               form == NONBLOCKING && rc == MPI_SUCCESS ? rq : NULL, explicit_offset ? (int64_t)off : -1, rc);
    engine_record(fh, &stats);
    errno = saved;
    return rc;
}

/* The _end of a split write whose _begin the MPI library got with none of
 * this rank's bytes (it wrote them itself): the status counts them. */
static int split_end_direct(MPI_File fh, const void *buf, MPI_Status *st, int64_t bytes, int explicit_offset)
{
    MPI_Status own;
    MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
    struct pario_thread *th = pario_thread();
    uint64_t t0 = pario_now();
    int rc = explicit_offset ? NEXT(PMPI_File_write_at_all_end)(fh, buf, s) : NEXT(PMPI_File_write_all_end)(fh, buf, s);
    uint64_t t1 = pario_now();
    if (rc == MPI_SUCCESS)
        NEXT(PMPI_Status_set_elements_x)(s, MPI_BYTE, (MPI_Count)bytes);
    mpiio_time(th, fh, 1, t0, t1);
    return rc;
}

/* The engine of fh when pario is on, else NULL: the collective writes' one lookup. */
static struct cw_file *active_engine(MPI_File fh) { return pario_active() ? fh_engine(fh) : NULL; }

/* ---- open / close ------------------------------------------------------------*/

/* An open with the injected hints that failed on every rank of comm is retried
 * without them (the program must not fail because of the profiler); the ranks
 * agree first, so that none retries alone.  Returns the open's result. */
static int open_without_hints(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh,
                              int rc)
{
    int failed = rc != MPI_SUCCESS, all = 0;
    if (NEXT(PMPI_Allreduce)(&failed, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !all)
        return rc;
    int again = NEXT(PMPI_File_open)(comm, filename, amode, info, fh);
    if (again == MPI_SUCCESS && atomic_fetch_add(&pario_hints_fallback_opens, 1) == 0 && pario_mpi_rank() == 0)
        pario_warn("MPI_File_open of %s failed with the PARIO_HINTS hints and was retried without them",
                   filename ? filename : "?");
    return again;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    if (!pario_active())
        return NEXT(PMPI_File_open)(comm, filename, amode, info, fh);
    /* PARIO_HINTS: the user's info plus (overriding) the hints for this file
     * (the global ones and those of the sections matching its name), built
     * before the engine reads its own hints from the info. */
    MPI_Info use = info, mine = MPI_INFO_NULL;
    const char *kv[2 * PARIO_MAX_HINTS];
    int nkv = pario_file_hints(filename, kv);
    if (nkv > 0) {
        int ok = info == MPI_INFO_NULL ? NEXT(PMPI_Info_create)(&mine) : NEXT(PMPI_Info_dup)(info, &mine);
        if (ok == MPI_SUCCESS) {
            for (int i = 0; i < nkv; i++)
                NEXT(PMPI_Info_set)(mine, kv[2 * i], kv[2 * i + 1]);
            use = mine;
        }
    }
    /* An open that fails with the injected hints must not reach an application's
     * fatal error handler: MPI_FILE_NULL returns errors meanwhile. */
    MPI_Errhandler user_eh = MPI_ERRHANDLER_NULL;
    if (mine != MPI_INFO_NULL && NEXT(PMPI_File_get_errhandler)(MPI_FILE_NULL, &user_eh) == MPI_SUCCESS &&
        user_eh != MPI_ERRORS_RETURN)
        NEXT(PMPI_File_set_errhandler)(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    TIMED(NEXT(PMPI_File_open)(comm, filename, amode, use, fh));
    struct cw_file *engine = NULL;
    const char *path = filename ? strip_prefix(filename) : NULL;
    if (rc == MPI_SUCCESS)
        engine = pario_engine_open(*fh, comm, path, amode, use);
    int first_rc = rc, mine_used = mine != MPI_INFO_NULL;
    if (mine != MPI_INFO_NULL) {
        NEXT(PMPI_Info_free)(&mine);
        int first = rc;
        rc = open_without_hints(comm, filename, amode, info, fh, rc);
        if (first != MPI_SUCCESS && rc == MPI_SUCCESS)
            engine = pario_engine_open(*fh, comm, path, amode, info);
        t1 = pario_now();
        if (user_eh != MPI_ERRHANDLER_NULL) {
            if (user_eh != MPI_ERRORS_RETURN) {
                NEXT(PMPI_File_set_errhandler)(MPI_FILE_NULL, user_eh);
                if (rc == MPI_SUCCESS)
                    NEXT(PMPI_File_set_errhandler)(*fh, user_eh); /* what it would have inherited */
                else
                    NEXT(PMPI_File_call_errhandler)(MPI_FILE_NULL, rc);
            }
            NEXT(PMPI_Errhandler_free)(&user_eh);
        }
    }
    int saved = errno;
    struct pario_record *r = NULL;
    if (rc == MPI_SUCCESS && filename)
        r = pario_record_for_path(PARIO_MPIIO, strip_prefix(filename));
    if (r) {
        th->depth++;
        record_hints(r, *fh);
        th->depth--;
        /* what pario injected: nothing when the open only worked without it */
        record_injected(r, first_rc == MPI_SUCCESS ? kv : NULL, mine_used ? nkv : 0);
        pario_rec_lock(r);
        if (r->counters[MPIIO_FS_TYPE] == 0 && !r->is_overflow)
            r->counters[MPIIO_FS_TYPE] = fs_type_of(strip_prefix(filename));
        if (r->fcounters[MPIIO_F_OPEN_START_TIMESTAMP] == 0)
            r->fcounters[MPIIO_F_OPEN_START_TIMESTAMP] = (double)t0;
        pario_rec_unlock(r);
    }
    int ci = INDEP;
    if (pario_tracing && th->depth == 0 && pario_trace_mine(th))
        ci = pario_trace_comm(comm);
    if (r || engine || (ci != INDEP && rc == MPI_SUCCESS))
        fh_put(*fh, r, engine, ci == INDEP ? -1 : ci);
    int size = 1;
    NEXT(PMPI_Comm_size)(comm, &size);
    mpiio_meta_op(th, r, size > 1 ? MPIIO_COLL_OPENS : MPIIO_INDEP_OPENS, mpiio_meta, t0, t1, ci == INDEP ? -1 : ci);
    errno = saved;
    return rc;
}

int MPI_File_close(MPI_File *fh)
{
    if (!pario_active())
        return NEXT(PMPI_File_close)(fh);
    uintptr_t key = fh_key(*fh);
    struct pario_record *r = fh_get(*fh);
    struct cw_file *engine = fh_engine(*fh);
    int ci = fh_comm(*fh);
    if (engine) { /* collective, as the close is: the engine's window and communicator */
        pario_thread()->depth++;
        cw_file_close(engine);
        pario_thread()->depth--;
    }
    TIMED(NEXT(PMPI_File_close)(fh));
    fh_del(key);
    mpiio_meta_op(th, r, -1, mpiio_meta, t0, t1, ci);
    if (r) {
        pario_rec_lock(r);
        r->fcounters[MPIIO_F_CLOSE_END_TIMESTAMP] = (double)t1;
        pario_rec_unlock(r);
    }
    return rc;
}

/* ---- metadata --------------------------------------------------------------*/

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    if (!pario_active())
        return NEXT(PMPI_File_set_view)(fh, disp, etype, filetype, datarep, info);
    TIMED(NEXT(PMPI_File_set_view)(fh, disp, etype, filetype, datarep, info));
    struct pario_record *r = fh_get(fh);
    struct cw_file *engine = fh_engine(fh);
    if (engine && rc == MPI_SUCCESS) {
        cw_file_view_changed(engine);
        cw_file_set_info(engine, info);
    }
    mpiio_meta_op(th, r, MPIIO_VIEWS, mpiio_meta, t0, t1, fh_comm(fh));
    /* A filetype with holes (size < extent) makes the access non-contiguous. */
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    if (r && NEXT(PMPI_Type_size)(filetype, &size) == MPI_SUCCESS &&
        NEXT(PMPI_Type_get_extent)(filetype, &lb, &extent) == MPI_SUCCESS && (MPI_Aint)size != extent) {
        pario_rec_lock(r);
        r->counters[MPIIO_NONCONTIG_VIEW] = 1;
        pario_rec_unlock(r);
    }
    return rc;
}

int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    if (!pario_active())
        return NEXT(PMPI_File_set_info)(fh, info);
    TIMED(NEXT(PMPI_File_set_info)(fh, info));
    struct pario_record *r = fh_get(fh);
    if (rc == MPI_SUCCESS)
        cw_file_set_info(fh_engine(fh), info);
    mpiio_meta_op(th, r, MPIIO_HINTS, mpiio_meta, t0, t1, fh_comm(fh));
    if (r && rc == MPI_SUCCESS) {
        th->depth++;
        record_hints(r, fh);
        th->depth--;
    }
    return rc;
}

/* A sync pushes written data: write time, as for POSIX fsync. */
int MPI_File_sync(MPI_File fh) { META(NEXT(PMPI_File_sync)(fh), fh, MPIIO_SYNCS, mpiio_write, 1); }
int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    META(NEXT(PMPI_File_set_size)(fh, size), fh, MPIIO_SET_SIZES, mpiio_meta, 1);
}
int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    META(NEXT(PMPI_File_preallocate)(fh, size), fh, MPIIO_SET_SIZES, mpiio_meta, 1);
}
int MPI_File_seek(MPI_File fh, MPI_Offset off, int whence)
{
    META(NEXT(PMPI_File_seek)(fh, off, whence), fh, -1, mpiio_meta, 0);
}
int MPI_File_seek_shared(MPI_File fh, MPI_Offset off, int whence)
{
    META(NEXT(PMPI_File_seek_shared)(fh, off, whence), fh, -1, mpiio_meta, 1);
}

/* ---- independent, explicit offset and individual pointer ---------------- */

int MPI_File_read_at(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_read_at)(fh, off, buf, count, dt, st), fh, 0, MPIIO_INDEP_READS, -1, count, dt, NULL, off);
}
int MPI_File_write_at(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype dt,
                      MPI_Status *st)
{
    DATA(NEXT(PMPI_File_write_at)(fh, off, buf, count, dt, st), fh, 1, MPIIO_INDEP_WRITES, -1, count, dt, NULL, off);
}
int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_read)(fh, buf, count, dt, st), fh, 0, MPIIO_INDEP_READS, -1, count, dt, NULL, -1);
}
int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_write)(fh, buf, count, dt, st), fh, 1, MPIIO_INDEP_WRITES, -1, count, dt, NULL, -1);
}

/* ---- collective ------------------------------------------------------------*/

int MPI_File_read_at_all(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype dt,
                         MPI_Status *st)
{
    DATA(NEXT(PMPI_File_read_at_all)(fh, off, buf, count, dt, st), fh, 0, MPIIO_COLL_READS, -1, count, dt, NULL, off);
}
int MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype dt,
                          MPI_Status *st)
{
    struct cw_file *engine = active_engine(fh);
    if (engine)
        return engine_write(engine, fh, 1, off, buf, count, dt, st, NULL, BLOCKING);
    DATA(NEXT(PMPI_File_write_at_all)(fh, off, buf, count, dt, st), fh, 1, MPIIO_COLL_WRITES, -1, count, dt, NULL, off);
}
int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_read_all)(fh, buf, count, dt, st), fh, 0, MPIIO_COLL_READS, -1, count, dt, NULL, -1);
}
int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    struct cw_file *engine = active_engine(fh);
    if (engine)
        return engine_write(engine, fh, 0, 0, buf, count, dt, st, NULL, BLOCKING);
    DATA(NEXT(PMPI_File_write_all)(fh, buf, count, dt, st), fh, 1, MPIIO_COLL_WRITES, -1, count, dt, NULL, -1);
}

/* ---- shared and ordered pointer ------------------------------------------*/

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_read_shared)(fh, buf, count, dt, st), fh, 0, MPIIO_INDEP_READS, MPIIO_SHARED_READS, count,
         dt, NULL, -1);
}
int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_write_shared)(fh, buf, count, dt, st), fh, 1, MPIIO_INDEP_WRITES, MPIIO_SHARED_WRITES,
         count, dt, NULL, -1);
}
int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_read_ordered)(fh, buf, count, dt, st), fh, 0, MPIIO_COLL_READS, MPIIO_SHARED_READS, count,
         dt, NULL, -1);
}
int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
    DATA(NEXT(PMPI_File_write_ordered)(fh, buf, count, dt, st), fh, 1, MPIIO_COLL_WRITES, MPIIO_SHARED_WRITES,
         count, dt, NULL, -1);
}

/* ---- nonblocking: bytes at issue, the wait's time joins through the
 * pending-request table ------------------------------------------------------*/

int MPI_File_iread_at(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype dt, MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iread_at)(fh, off, buf, count, dt, rq), fh, 0, MPIIO_NB_READS, -1, count, dt, rq, off);
}
int MPI_File_iwrite_at(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype dt,
                       MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iwrite_at)(fh, off, buf, count, dt, rq), fh, 1, MPIIO_NB_WRITES, -1, count, dt, rq, off);
}
int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iread)(fh, buf, count, dt, rq), fh, 0, MPIIO_NB_READS, -1, count, dt, rq, -1);
}
int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iwrite)(fh, buf, count, dt, rq), fh, 1, MPIIO_NB_WRITES, -1, count, dt, rq, -1);
}
int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iread_shared)(fh, buf, count, dt, rq), fh, 0, MPIIO_NB_READS, MPIIO_SHARED_READS, count, dt,
         rq, -1);
}
int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iwrite_shared)(fh, buf, count, dt, rq), fh, 1, MPIIO_NB_WRITES, MPIIO_SHARED_WRITES, count,
         dt, rq, -1);
}
int MPI_File_iread_at_all(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype dt,
                          MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iread_at_all)(fh, off, buf, count, dt, rq), fh, 0, MPIIO_NB_READS, MPIIO_COLL_READS, count,
         dt, rq, off);
}
int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype dt,
                           MPI_Request *rq)
{
    struct cw_file *engine = active_engine(fh);
    if (engine)
        return engine_write(engine, fh, 1, off, buf, count, dt, MPI_STATUS_IGNORE, rq, NONBLOCKING);
    DATA(NEXT(PMPI_File_iwrite_at_all)(fh, off, buf, count, dt, rq), fh, 1, MPIIO_NB_WRITES, MPIIO_COLL_WRITES,
         count, dt, rq, off);
}
int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Request *rq)
{
    DATA(NEXT(PMPI_File_iread_all)(fh, buf, count, dt, rq), fh, 0, MPIIO_NB_READS, MPIIO_COLL_READS, count, dt, rq, -1);
}
int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Request *rq)
{
    struct cw_file *engine = active_engine(fh);
    if (engine)
        return engine_write(engine, fh, 0, 0, buf, count, dt, MPI_STATUS_IGNORE, rq, NONBLOCKING);
    DATA(NEXT(PMPI_File_iwrite_all)(fh, buf, count, dt, rq), fh, 1, MPIIO_NB_WRITES, MPIIO_COLL_WRITES, count, dt,
         rq, -1);
}

/* ---- split collectives: bytes at _begin, time of both halves ------------ */

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype dt)
{
    DATA(NEXT(PMPI_File_read_at_all_begin)(fh, off, buf, count, dt), fh, 0, MPIIO_SPLIT_READS, -1, count, dt, NULL, off);
}
int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *st)
{
    SPLIT_END(NEXT(PMPI_File_read_at_all_end)(fh, buf, st), fh, 0);
}
int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype dt)
{
    struct cw_file *engine = active_engine(fh);
    if (engine)
        return engine_write(engine, fh, 1, off, buf, count, dt, MPI_STATUS_IGNORE, NULL, SPLIT);
    DATA(NEXT(PMPI_File_write_at_all_begin)(fh, off, buf, count, dt), fh, 1, MPIIO_SPLIT_WRITES, -1, count, dt,
         NULL, off);
}
int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    int erc;
    struct cw_file *engine = active_engine(fh);
    if (cw_write_end(engine, st, &erc)) /* the engine wrote at _begin */
        return erc;
    int64_t direct = cw_split_direct_bytes(engine);
    if (direct)
        return split_end_direct(fh, buf, st, direct, 1);
    SPLIT_END(NEXT(PMPI_File_write_at_all_end)(fh, buf, st), fh, 1);
}
int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype dt)
{
    DATA(NEXT(PMPI_File_read_all_begin)(fh, buf, count, dt), fh, 0, MPIIO_SPLIT_READS, -1, count, dt, NULL, -1);
}
int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *st)
{
    SPLIT_END(NEXT(PMPI_File_read_all_end)(fh, buf, st), fh, 0);
}
int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype dt)
{
    struct cw_file *engine = active_engine(fh);
    if (engine)
        return engine_write(engine, fh, 0, 0, buf, count, dt, MPI_STATUS_IGNORE, NULL, SPLIT);
    DATA(NEXT(PMPI_File_write_all_begin)(fh, buf, count, dt), fh, 1, MPIIO_SPLIT_WRITES, -1, count, dt, NULL, -1);
}
int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    int erc;
    struct cw_file *engine = active_engine(fh);
    if (cw_write_end(engine, st, &erc)) /* the engine wrote at _begin */
        return erc;
    int64_t direct = cw_split_direct_bytes(engine);
    if (direct)
        return split_end_direct(fh, buf, st, direct, 0);
    SPLIT_END(NEXT(PMPI_File_write_all_end)(fh, buf, st), fh, 1);
}
int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype dt)
{
    DATA(NEXT(PMPI_File_read_ordered_begin)(fh, buf, count, dt), fh, 0, MPIIO_SPLIT_READS, MPIIO_SHARED_READS, count,
         dt, NULL, -1);
}
int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *st)
{
    SPLIT_END(NEXT(PMPI_File_read_ordered_end)(fh, buf, st), fh, 0);
}
int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype dt)
{
    DATA(NEXT(PMPI_File_write_ordered_begin)(fh, buf, count, dt), fh, 1, MPIIO_SPLIT_WRITES, MPIIO_SHARED_WRITES,
         count, dt, NULL, -1);
}
int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *st)
{
    SPLIT_END(NEXT(PMPI_File_write_ordered_end)(fh, buf, st), fh, 1);
}

/* ---- the profiling names ------------------------------------------------*/

/* Every wrapper above is exported as PMPI_X too: the Fortran bindings call
 * those names (pario-mpi-next.h). */
PMPI_NAME(File_open);
PMPI_NAME(File_close);
PMPI_NAME(File_set_view);
PMPI_NAME(File_set_info);
PMPI_NAME(File_sync);
PMPI_NAME(File_set_size);
PMPI_NAME(File_preallocate);
PMPI_NAME(File_seek);
PMPI_NAME(File_seek_shared);
PMPI_NAME(File_read_at);
PMPI_NAME(File_write_at);
PMPI_NAME(File_read);
PMPI_NAME(File_write);
PMPI_NAME(File_read_at_all);
PMPI_NAME(File_write_at_all);
PMPI_NAME(File_read_all);
PMPI_NAME(File_write_all);
PMPI_NAME(File_read_shared);
PMPI_NAME(File_write_shared);
PMPI_NAME(File_read_ordered);
PMPI_NAME(File_write_ordered);
PMPI_NAME(File_iread_at);
PMPI_NAME(File_iwrite_at);
PMPI_NAME(File_iread);
PMPI_NAME(File_iwrite);
PMPI_NAME(File_iread_shared);
PMPI_NAME(File_iwrite_shared);
PMPI_NAME(File_iread_at_all);
PMPI_NAME(File_iwrite_at_all);
PMPI_NAME(File_iread_all);
PMPI_NAME(File_iwrite_all);
PMPI_NAME(File_read_at_all_begin);
PMPI_NAME(File_read_at_all_end);
PMPI_NAME(File_write_at_all_begin);
PMPI_NAME(File_write_at_all_end);
PMPI_NAME(File_read_all_begin);
PMPI_NAME(File_read_all_end);
PMPI_NAME(File_write_all_begin);
PMPI_NAME(File_write_all_end);
PMPI_NAME(File_read_ordered_begin);
PMPI_NAME(File_read_ordered_end);
PMPI_NAME(File_write_ordered_begin);
PMPI_NAME(File_write_ordered_end);
