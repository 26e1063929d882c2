/*
 * pario runtime core: the API every intercepted layer (posix.c, stdio.c,
 * mpiio.c, mpi.c) uses.  The core owns initialisation, the timer, per-thread
 * time accounting, the bounded record arena, the descriptor tables and the
 * shutdown (reduction + log writing).  It never names a specific layer's
 * counters: layers describe themselves with a struct pario_layer_desc.
 */
#ifndef PARIO_CORE_H
#define PARIO_CORE_H

#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "pario-log-format.h"
#include "pario-mpi-next.h"

/* ---- layers -------------------------------------------------------------
 * All made from the PARIO_LAYERS manifest (pario-log-format.h). */
#define PARIO_LAYER_ID(ID, name) PARIO_##ID,
enum pario_layer { PARIO_LAYERS(PARIO_LAYER_ID) PARIO_NLAYERS };
#undef PARIO_LAYER_ID

/* Counter indices: enum <name>_counter { <ID>_..., <ID>_NUM_COUNTERS } and
 * the same for fcounters. */
#define X(counter, doc) counter,
#define PARIO_LAYER_ENUMS(ID, name)                                                                \
    enum name##_counter { PARIO_##ID##_COUNTERS ID##_NUM_COUNTERS };                               \
    enum name##_fcounter { PARIO_##ID##_FCOUNTERS ID##_NUM_FCOUNTERS };
PARIO_LAYERS(PARIO_LAYER_ENUMS)
#undef PARIO_LAYER_ENUMS
enum rank_field { PARIO_RANK_FIELDS RANK_NUM_FIELDS };
#undef X

#define PARIO_MAX_COUNTERS 88  /* MPI-IO has 83, PnetCDF variables 72 */
#define PARIO_MAX_FCOUNTERS 32 /* MPI-IO has 30 (the engine's time per variant) */
#define PARIO_LAYER_FITS(ID, name)                                                                 \
    _Static_assert(ID##_NUM_COUNTERS <= PARIO_MAX_COUNTERS, #ID " counters exceed PARIO_MAX_COUNTERS"); \
    _Static_assert(ID##_NUM_FCOUNTERS <= PARIO_MAX_FCOUNTERS, #ID " fcounters exceed PARIO_MAX_FCOUNTERS");
PARIO_LAYERS(PARIO_LAYER_FITS)
#undef PARIO_LAYER_FITS

/* Where, inside a layer's counter arrays, the generic code finds things.
 * Each layer's file fills one in with PARIO_LAYER_DESC_COMMON and designated
 * initializers for the rest. */
struct pario_layer_desc {
    const char *name;            /* "posix", "stdio", "mpiio", ... */
    int ncounters, nfcounters;
    const char *const *counter_names;
    const char *const *fcounter_names;
    int c_bytes_read, c_bytes_written;          /* for rank byte totals */
    int c_max_byte_read, c_max_byte_written;    /* -1 when absent */
    int c_max_read_size, c_max_write_size;
    int c_nranks, c_fastest_rank, c_fastest_bytes, c_slowest_rank, c_slowest_bytes;
    /* [ncounters]: 1 for the counters a shared record reduces by max, not
     * by sum: per-rank maxima, flags, and what every rank sees alike (block
     * size, file system type, Lustre layout). */
    const unsigned char *c_max_reduced;
    int c_seq_reads, c_consec_reads;            /* writes follow reads; -1 if none */
    int c_rw_switches;                          /* -1 if none */
    int c_size_read0, c_size_write0;            /* first histogram bucket */
    int f_open_start, f_close_end;              /* min / max reduced */
    int f_read_time, f_write_time, f_meta_time;
    int f_max_read_time, f_max_write_time;      /* max reduced */
    int f_fastest_time, f_slowest_time, f_var_time, f_var_bytes;
};

/* The fields every layer has under the same names (its counter names are
 * defined once, in core.c): the name, the counts, the byte and time totals,
 * the timestamps and the shared-file statistics. */
#define PARIO_LAYER_DESC_COMMON(ID, name_)                                                         \
    .name = #name_, .ncounters = ID##_NUM_COUNTERS, .nfcounters = ID##_NUM_FCOUNTERS,              \
    .counter_names = pario_##name_##_counter_names, .fcounter_names = pario_##name_##_fcounter_names, \
    .c_bytes_read = ID##_BYTES_READ, .c_bytes_written = ID##_BYTES_WRITTEN,                        \
    .c_nranks = ID##_NRANKS, .c_fastest_rank = ID##_FASTEST_RANK,                                  \
    .c_fastest_bytes = ID##_FASTEST_RANK_BYTES, .c_slowest_rank = ID##_SLOWEST_RANK,               \
    .c_slowest_bytes = ID##_SLOWEST_RANK_BYTES,                                                    \
    .f_open_start = ID##_F_OPEN_START_TIMESTAMP, .f_close_end = ID##_F_CLOSE_END_TIMESTAMP,        \
    .f_read_time = ID##_F_READ_TIME, .f_write_time = ID##_F_WRITE_TIME,                            \
    .f_meta_time = ID##_F_META_TIME, .f_fastest_time = ID##_F_FASTEST_RANK_TIME,                   \
    .f_slowest_time = ID##_F_SLOWEST_RANK_TIME, .f_var_time = ID##_F_VARIANCE_RANK_TIME,           \
    .f_var_bytes = ID##_F_VARIANCE_RANK_BYTES

/* The request statistics of a layer that keeps them as Darshan's MPI-IO module does (MPI-IO,
 * HDF5 datasets, PnetCDF variables): the largest request and its time, read/write switches and
 * the _AGG size histograms; no byte offsets, no sequential counts. */
#define PARIO_LAYER_DESC_AGGREGATE(ID)                                                             \
    .c_max_byte_read = -1, .c_max_byte_written = -1,                                               \
    .c_max_read_size = ID##_MAX_READ_SIZE, .c_max_write_size = ID##_MAX_WRITE_SIZE,                \
    .c_seq_reads = -1, .c_consec_reads = -1, .c_rw_switches = ID##_RW_SWITCHES,                    \
    .c_size_read0 = ID##_SIZE_READ_AGG_0_100, .c_size_write0 = ID##_SIZE_WRITE_AGG_0_100,          \
    .f_max_read_time = ID##_F_MAX_READ_TIME, .f_max_write_time = ID##_F_MAX_WRITE_TIME

/* A layer that keeps no request statistics (the files of HDF5 and PnetCDF: their datasets and
 * variables do). */
#define PARIO_LAYER_DESC_NO_REQUESTS                                                               \
    .c_max_byte_read = -1, .c_max_byte_written = -1, .c_max_read_size = -1, .c_max_write_size = -1, \
    .c_seq_reads = -1, .c_consec_reads = -1, .c_rw_switches = -1, .c_size_read0 = -1,              \
    .c_size_write0 = -1, .f_max_read_time = -1, .f_max_write_time = -1

#define PARIO_LAYER_EXTERNS(ID, name)                                                              \
    extern const struct pario_layer_desc pario_##name##_desc;                                     \
    extern const char *const pario_##name##_counter_names[ID##_NUM_COUNTERS];                      \
    extern const char *const pario_##name##_fcounter_names[ID##_NUM_FCOUNTERS];
PARIO_LAYERS(PARIO_LAYER_EXTERNS)
#undef PARIO_LAYER_EXTERNS
extern const struct pario_layer_desc *const pario_layers[PARIO_NLAYERS];

/* ---- file records -------------------------------------------------------
 * One record per (layer, file) per rank.  Counters are updated under the
 * record's own spin flag (never a global lock); times are accumulated in
 * timer ticks and turned into seconds when the log is written. */
struct pario_record {
    uint64_t id;                 /* 64-bit hash of the absolute path */
    int layer;
    int is_overflow;             /* the aggregate "other files" record */
    atomic_flag busy;
    const char *name;            /* in the arena; NULL for overflow */
    char *hints;                 /* MPI-IO: "key=value\n..." (arena), or NULL */
    char *injected;              /* MPI-IO: the PARIO_HINTS hints given to its last open, same form */
    int64_t counters[PARIO_MAX_COUNTERS];
    double fcounters[PARIO_MAX_FCOUNTERS];  /* ticks while running, seconds in the log */
    /* run-time state, not written */
    int64_t last_end[2];         /* end offset of previous read [0] / write [1] */
    int last_op;                 /* 0 none, 1 read, 2 write */
    atomic_int facts_read;       /* POSIX: the first open's file system facts are stored */
    atomic_int composite_layout; /* POSIX: a Lustre layout of several components */
    struct pario_record *next;   /* id hash chain */
};

static inline void pario_rec_lock(struct pario_record *r)
{
    while (atomic_flag_test_and_set_explicit(&r->busy, memory_order_acquire))
        ;
}
static inline void pario_rec_unlock(struct pario_record *r)
{
    atomic_flag_clear_explicit(&r->busy, memory_order_release);
}

/* ---- timer ---------------------------------------------------------------
 * RATIONALE: clock_gettime costs ~33 ns here, rdtsc ~12 ns; the per-call
 * budget is 40 ns for two stamps and an update, so we read the TSC when the
 * CPU says it is invariant (constant_tsc + nonstop_tsc) and convert ticks to
 * seconds once, at shutdown, from a pair of (TSC, CLOCK_MONOTONIC) readings
 * taken at start and end.  Elsewhere ticks are nanoseconds. */
extern int pario_use_tsc;
static inline uint64_t pario_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(pario_use_tsc, 1))
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- state ---------------------------------------------------------------*/
/* Instrumentation is on while this is 1.  Relaxed atomic load, never a lock
 * (the lesson of Darshan's global lock in MAP_OR_FAIL). */
extern atomic_int pario_enabled;
static inline int pario_active(void)
{
    return atomic_load_explicit(&pario_enabled, memory_order_relaxed);
}

/* Per-thread time accumulators (ticks) for the rank's time classes.  They
 * live in the arena, not in TLS, so a thread that exits before shutdown
 * still counts.  depth > 0 means "inside an outer I/O or MPI call": inner
 * calls update file counters but not the time classes (exclusive classes). */
/* A nonblocking request whose completion time belongs to a class other
 * than point-to-point (a nonblocking collective, an MPI_File_i* call):
 * noted when issued, looked up by the MPI_Wait and MPI_Test calls of the same thread. */
#define PARIO_PENDING_MAX 128
struct pario_pending {
    uint64_t key;                /* the MPI_Request handle's bits; 0 = free */
    int field;                   /* rank field to charge: mpi_coll, mpiio_read, ... */
    int is_write;
    struct pario_record *rec;    /* file record to charge, or NULL */
};

#define PARIO_RECENT_PATHS 4
struct pario_thread {
    uint64_t t[RANK_NUM_FIELDS];
    int depth;
    int quiet;                   /* > 0: files opened now are the MPI library's (MPI_Init) */
    int npending;
    struct pario_pending pending[PARIO_PENDING_MAX];
    /* The records this thread found by path last (any layer), so that a file
     * opened again by the same path costs a string compare, not a hash. */
    struct pario_record *recent[PARIO_RECENT_PATHS];
    unsigned recent_next;
    struct pario_thread *next;
};
extern __thread struct pario_thread *pario_tl __attribute__((tls_model("initial-exec")));
struct pario_thread *pario_thread_register(void);
static inline struct pario_thread *pario_thread(void)
{
    struct pario_thread *t = pario_tl;
    if (__builtin_expect(t == NULL, 0))
        t = pario_thread_register();
    return t;
}
/* Charge [t0, t1) to a rank time class if this is the outermost call. */
static inline void pario_charge(struct pario_thread *th, int field, uint64_t t0, uint64_t t1)
{
    if (th->depth == 0)
        th->t[field] += t1 - t0;
}

/* Pending-request table of the calling thread (full table: the request is
 * simply not tracked and its wait counts as point-to-point). */
void pario_pending_add(struct pario_thread *th, uint64_t key, int field, struct pario_record *rec,
                       int is_write);
/* Copy the entry for key into *out; 1 if found, 0 if not. */
int pario_pending_find(struct pario_thread *th, uint64_t key, struct pario_pending *out);
void pario_pending_remove(struct pario_thread *th, uint64_t key);
/* Charge a completed request's wait [t0, t1) to its class and, for file
 * requests, to the record's read/write time. */
void pario_pending_charge(struct pario_thread *th, const struct pario_pending *p, uint64_t t0,
                          uint64_t t1);

/* ---- descriptors -------------------------------------------------------
 * fd -> (record, offset): a flat array indexed by the descriptor, so the
 * read/write path needs no lock and no hashing.  Bounded by PARIO_MAX_FD. */
#define PARIO_MAX_FD 65536
struct pario_fd {
    _Atomic(struct pario_record *) rec;
    int64_t offset;
};
extern struct pario_fd *pario_fds;          /* POSIX descriptors */
extern struct pario_fd *pario_stdio_fds;    /* FILE* streams, by fileno */
static inline struct pario_fd *pario_fd_get(struct pario_fd *table, int fd)
{
    if (__builtin_expect(fd < 0 || fd >= PARIO_MAX_FD || table == NULL, 0))
        return NULL;
    struct pario_fd *e = &table[fd];
    return atomic_load_explicit(&e->rec, memory_order_acquire) ? e : NULL;
}

/* ---- core API used by the layers ---------------------------------------*/
void pario_init(void);                       /* idempotent */
/* Record for a path in a layer, created if needed; NULL if the path is
 * excluded (/proc, /sys, /dev, MPI session dirs, ...).  Metadata path only. */
struct pario_record *pario_record_for_path(int layer, const char *path);
/* Record of a layer by id (e.g. STDIO finding POSIX data), or NULL. */
struct pario_record *pario_record_find(int layer, uint64_t id);
/* Attach a record to a descriptor slot / clear it. */
void pario_fd_set(struct pario_fd *table, int fd, struct pario_record *rec, int64_t offset);
void pario_fd_clear(struct pario_fd *table, int fd);
/* Copy a string into the arena (bounded); NULL when the arena is full. */
char *pario_arena_strdup(const char *s, size_t maxlen);
/* The timer reading taken at start-up (pario_now ticks). */
uint64_t pario_start_ticks(void);

/* Common counter updates (common.c). */
int pario_size_bucket(int64_t size);
void pario_rec_access(struct pario_record *r, int is_write, int64_t offset, int64_t size,
                      uint64_t t0, uint64_t t1);
/* What a metadata call on a record was, for pario_rec_meta. */
enum pario_meta_kind {
    PARIO_META,       /* its time is meta time */
    PARIO_META_WRITE, /* it pushes written data (a sync, a flush): its time is write time */
    PARIO_META_OPEN,  /* an open: meta time, and the first open's timestamp */
    PARIO_META_CLOSE, /* a close: meta time, and the last close's timestamp */
};
/* A metadata call of [t0, t1) on a record: bump `counter` (-1: none), add the call's time and
 * the timestamp `kind` says, under the record's lock. */
void pario_rec_meta(struct pario_record *r, int counter, enum pario_meta_kind kind, uint64_t t0, uint64_t t1);

/* ---- MPI hand-off --------------------------------------------------------
 * mpi.c tells the runtime when MPI starts and ends; init.c, the conductor,
 * then has each part (the trace, the log) do its share.  Declared without
 * mpi.h so posix/stdio stay MPI-free. */
void pario_mpi_initialized(void);
void pario_mpi_finalizing(void);
int pario_mpi_rank(void);

/* Hint injection (PARIO_HINTS, hints_file.c): the hints read once at start-up. */
#define PARIO_MAX_HINTS 64          /* hints kept in all, globals and sections */
#define PARIO_MAX_HINT_SECTIONS 16
#define PARIO_MAX_HINT_GLOB 255     /* characters of a section's glob */
/* The MPI-IO hints for a file opened as `filename` (as given to MPI_File_open),
 * library keys (hdf5.*) left out: the global hints, then those of every section whose glob matches, in file order,
 * a later one overriding an earlier one's value for the same key.  Fills kv
 * (room for 2 * PARIO_MAX_HINTS pointers) with key, value, ...; returns the
 * number of hints.  Lock-free: the lists are read-only after start-up. */
int pario_file_hints(const char *filename, const char **kv);
/* Keys of the library layers (hdf5.c): never set in an MPI_Info (pario_file_hints
 * leaves them out); a layer asks for its own with pario_library_hints. */
#define PARIO_HDF5_HINT_PREFIX "hdf5."
/* As pario_file_hints, only the keys that start with prefix. */
int pario_library_hints(const char *filename, const char *prefix, const char **kv);
/* MPI_File_open calls that failed with the injected hints and succeeded without them. */
extern atomic_int pario_hints_fallback_opens;

/* ---- library layers (hdf5.c, pnetcdf.c) ------------------------------------
 * What a library layer found at its first intercepted call: the version the
 * runtime was built against, the one the program loaded, and whether the layer
 * records (another major.minor, or a helper symbol missing: it stays silent and
 * passes every call through).  Written by log.c into META as
 * "library_layers": {"<name>": {"built", "found", "active", "why"}}. */
struct pario_library_status {
    const char *name;  /* "pnetcdf", "hdf5" */
    const char *built; /* version the runtime was built against, "" if built without the library */
    char found[64];    /* version the program loaded, "" while it made no call */
    int active;        /* 1: the layer records */
    char why[256];     /* why it does not ("" when active) */
};
#define PARIO_LIBRARY_EXTERN(name) extern struct pario_library_status pario_##name##_status;
PARIO_LIBRARIES(PARIO_LIBRARY_EXTERN)
#undef PARIO_LIBRARY_EXTERN
extern struct pario_library_status *const pario_library_status[]; /* NULL-terminated (log.c) */

/* A size from the environment: digits with an optional k/m/g suffix (powers of 1024); dflt
 * when s is NULL, empty or not a number. */
size_t pario_parse_size(const char *s, size_t dflt);

/* The arena's size in bytes (PARIO_MEM), written as META's mem_cap. */
size_t pario_arena_cap(void);

/* The real symbol behind a wrapper, resolved once with dlsym(RTLD_NEXT) (the layer file
 * includes <dlfcn.h> under _GNU_SOURCE): REAL(f) declares real_f, MAP(f) resolves it. */
#define REAL(name) static __typeof__(&name) real_##name
#define MAP(name)                                                                                  \
    do {                                                                                           \
        if (__builtin_expect(real_##name == NULL, 0))                                              \
            real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name);                        \
    } while (0)

/* Warn once on stderr, prefixed "pario: ". */
void pario_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
