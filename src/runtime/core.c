/*
 * pario runtime core: the bounded record arena, the id -> record registry,
 * descriptor tables, per-thread time accumulators, the timer, path
 * normalisation and exclusion.  It calls nothing above it: start-up and exit
 * are init.c's.
 */
#include "core.h"
#include "internal.h"
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int pario_use_tsc = 0;
atomic_int pario_enabled = 0;
__thread struct pario_thread *pario_tl __attribute__((tls_model("initial-exec"))) = NULL;
struct pario_fd *pario_fds = NULL;
struct pario_fd *pario_stdio_fds = NULL;

/* The layers of the PARIO_LAYERS manifest: their counter names, written
 * into every log's META, and their descriptors, indexed by enum pario_layer. */
#define X(counter, doc) #counter,
#define PARIO_LAYER_NAMES(ID, name)                                                                \
    const char *const pario_##name##_counter_names[ID##_NUM_COUNTERS] = {PARIO_##ID##_COUNTERS};   \
    const char *const pario_##name##_fcounter_names[ID##_NUM_FCOUNTERS] = {PARIO_##ID##_FCOUNTERS};
PARIO_LAYERS(PARIO_LAYER_NAMES)
#undef PARIO_LAYER_NAMES
#undef X

#define PARIO_LAYER_ENTRY(ID, name) [PARIO_##ID] = &pario_##name##_desc,
const struct pario_layer_desc *const pario_layers[PARIO_NLAYERS] = {PARIO_LAYERS(PARIO_LAYER_ENTRY)};
#undef PARIO_LAYER_ENTRY

struct pario_core pario_core;

/* The registry's lock serialises record creation (the first open, stat or
 * unlink of a file).  Records are only ever pushed on the front of a bucket,
 * with a release store once filled in, so a lookup reads the chains without
 * the lock: an open of a known file takes no lock. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
#define REGISTRY_BUCKETS 4096
static _Atomic(struct pario_record *) registry[PARIO_NLAYERS][REGISTRY_BUCKETS];

/* ---- hashing and paths ------------------------------------------------- */

/* FNV-1a, 64 bit: cheap, stable across runs and machines (the id must be
 * the same on every rank for the shared-file reduction). */
uint64_t pario_hash_path(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

/* Whether `path` is already absolute and lexically normal: no "//", no "."
 * or ".." component, no trailing '/' (but "/" itself). */
static int is_normal_absolute(const char *path)
{
    if (path[0] != '/')
        return 0;
    if (path[1] == '\0')
        return 1;
    for (const char *p = path; *p; p++) {
        if (*p != '/')
            continue;
        /* a component starts at p + 1 */
        if (p[1] == '/' || p[1] == '\0')
            return 0;
        if (p[1] == '.' && (p[2] == '/' || p[2] == '\0' || (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
            return 0;
    }
    return 1;
}

/* Make `path` absolute and lexically normal (no ".", "..", "//") in `out`.
 * Returns 0, or -1 if it does not fit. */
int pario_normalize_path(const char *path, char *out, size_t outsz)
{
    char buf[PATH_MAX * 2];
    if (path[0] == '/') {
        if (strlen(path) >= sizeof buf)
            return -1;
        strcpy(buf, path);
    } else {
        if (!getcwd(buf, PATH_MAX))
            return -1;
        size_t n = strlen(buf);
        if (n + 1 + strlen(path) >= sizeof buf)
            return -1;
        buf[n] = '/';
        strcpy(buf + n + 1, path);
    }
    size_t o = 0;
    const char *p = buf;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 1 && p[0] == '.') {
            /* skip */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else {
            if (o + 1 + len + 1 > outsz)
                return -1;
            out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p += len;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return 0;
}

/* Files no one asked about: system and MPI-runtime internals. */
static const char *default_excludes[] = {"/proc/", "/sys/", "/dev/", "/etc/", "/usr/",
                                         "/lib/", "/lib64/", "/run/", "/var/run/", NULL};
static char *user_excludes[32];

/* `abs` is `dir` or below it ("/sys" and "/sys/x" match "/sys/"). */
static int under(const char *abs, const char *dir)
{
    size_t n = strlen(dir);
    if (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(abs, dir, n) == 0 && (abs[n] == '/' || abs[n] == '\0');
}

static int path_excluded(const char *abs)
{
    if (strcmp(abs, "/") == 0)
        return 1;
    /* /dev/shm is a file system users write data to (tmpfs); the MPI
     * libraries' own segments there are caught by name below */
    int shm = under(abs, "/dev/shm/") && strcmp(abs, "/dev/shm") != 0;
    for (int i = 0; default_excludes[i]; i++)
        if (under(abs, default_excludes[i]) && !shm)
            return 1;
    for (int i = 0; user_excludes[i]; i++)
        if (under(abs, user_excludes[i]))
            return 1;
    /* Open MPI / PMIx / PRRTE session directories and shared-memory segments
     * (of the BTL and of RMA windows), MPICH's shared-memory segments. */
    if (strstr(abs, "/ompi.") || strstr(abs, "/prte.") || strstr(abs, "/openmpi-sessions") ||
        strstr(abs, "/.pmix") || strstr(abs, "/pmix-") ||
        strstr(abs, "/vader_segment") || strstr(abs, "/sm_segment") || strstr(abs, "/osc_rdma.") ||
        strstr(abs, "/osc_sm.") || strstr(abs, "/mpich_shar_tmp"))
        return 1;
    return 0;
}

/* ---- arena --------------------------------------------------------------
 * One mmap'd region sized by PARIO_MEM: records are taken from the front,
 * strings from the back.  When they meet, new files go to the per-layer
 * overflow record and records_overflowed counts them. */
static char *arena;
static size_t arena_cap, arena_front, arena_back;
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;

static void *arena_take_front(size_t n)
{
    n = (n + 63) & ~(size_t)63;
    void *p = NULL;
    pthread_mutex_lock(&arena_lock);
    if (arena && arena_front + n <= arena_back) {
        p = arena + arena_front;
        arena_front += n;
    }
    pthread_mutex_unlock(&arena_lock);
    return p;
}

char *pario_arena_strdup(const char *s, size_t maxlen)
{
    size_t n = strnlen(s, maxlen);
    char *p = NULL;
    pthread_mutex_lock(&arena_lock);
    if (arena && arena_back >= arena_front + n + 1) {
        arena_back -= n + 1;
        p = arena + arena_back;
        memcpy(p, s, n);
        p[n] = '\0';
    }
    pthread_mutex_unlock(&arena_lock);
    return p;
}

size_t pario_arena_cap(void) { return arena_cap; }

size_t pario_parse_size(const char *s, size_t dflt)
{
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return dflt;
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
    }
    return (size_t)v;
}

/* ---- records ------------------------------------------------------------*/

static void record_reset(struct pario_record *r, int layer, uint64_t id)
{
    const struct pario_layer_desc *d = pario_layers[layer];
    memset(r, 0, sizeof *r);
    atomic_flag_clear(&r->busy);
    r->id = id;
    r->layer = layer;
    r->last_end[0] = r->last_end[1] = -1;
    if (d->c_max_byte_read >= 0)
        r->counters[d->c_max_byte_read] = -1;
    if (d->c_max_byte_written >= 0)
        r->counters[d->c_max_byte_written] = -1;
}

/* Lock-free: see registry_lock. */
struct pario_record *pario_record_find(int layer, uint64_t id)
{
    struct pario_record *r = atomic_load_explicit(&registry[layer][id % REGISTRY_BUCKETS], memory_order_acquire);
    for (; r; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

/* The record of a file not seen before (NULL if its path is excluded): made
 * under the registry's lock, which a second thread creating it waits on. */
static struct pario_record *record_create(int layer, uint64_t id, const char *abs)
{
    if (strlen(abs) >= PATH_MAX || path_excluded(abs))
        return NULL;
    struct pario_record *r;
    pthread_mutex_lock(&registry_lock);
    r = pario_record_find(layer, id);
    if (!r) {
        r = arena_take_front(sizeof *r);
        const char *name = r ? pario_arena_strdup(abs, PATH_MAX) : NULL;
        if (r && name) {
            record_reset(r, layer, id);
            r->name = name;
            r->next = atomic_load_explicit(&registry[layer][id % REGISTRY_BUCKETS], memory_order_relaxed);
            atomic_store_explicit(&registry[layer][id % REGISTRY_BUCKETS], r, memory_order_release);
            pario_core.nrecords[layer]++;
        } else {
            r = &pario_core.overflow[layer];
            pario_core.records_overflowed++;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return r;
}

/* The record of the file at `path` (made absolute and normal), created at its
 * first call; NULL for an excluded path.  A file that has a record is not
 * excluded, so a known file's call skips the exclusion checks. */
struct pario_record *pario_record_for_path(int layer, const char *path)
{
    char buf[PATH_MAX];
    struct pario_thread *th = pario_tl;
    if (!path || (th && th->quiet))
        return NULL;
    /* A record's name is absolute and normal: a path equal to it needs neither step. */
    for (int i = 0; th && i < PARIO_RECENT_PATHS; i++) {
        struct pario_record *seen = th->recent[i];
        if (seen && seen->layer == layer && strcmp(seen->name, path) == 0)
            return seen;
    }
    const char *abs = path;
    if (!is_normal_absolute(path)) {
        if (pario_normalize_path(path, buf, sizeof buf) != 0)
            return NULL;
        abs = buf;
    }
    uint64_t id = pario_hash_path(abs);
    struct pario_record *r = pario_record_find(layer, id);
    if (!r)
        r = record_create(layer, id, abs);
    if (th && r && !r->is_overflow)
        th->recent[th->recent_next++ % PARIO_RECENT_PATHS] = r;
    return r;
}

/* Visit every record of a layer (registry order), overflow last if used. */
void pario_foreach_record(int layer, void (*fn)(struct pario_record *, void *), void *arg)
{
    for (int b = 0; b < REGISTRY_BUCKETS; b++)
        for (struct pario_record *r = atomic_load_explicit(&registry[layer][b], memory_order_acquire); r;
             r = r->next)
            fn(r, arg);
    struct pario_record *o = &pario_core.overflow[layer];
    if (o->counters[pario_layers[layer]->c_bytes_read] || o->counters[pario_layers[layer]->c_bytes_written] ||
        pario_core.records_overflowed)
        fn(o, arg);
}

void pario_fd_set(struct pario_fd *table, int fd, struct pario_record *rec, int64_t offset)
{
    if (!table || fd < 0 || fd >= PARIO_MAX_FD)
        return;
    table[fd].offset = offset;
    atomic_store_explicit(&table[fd].rec, rec, memory_order_release);
}

void pario_fd_clear(struct pario_fd *table, int fd)
{
    if (!table || fd < 0 || fd >= PARIO_MAX_FD)
        return;
    atomic_store_explicit(&table[fd].rec, NULL, memory_order_release);
}

/* ---- thread_list ------------------------------------------------------------*/
static struct pario_thread main_thread_state;
static struct pario_thread *thread_list;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static int nthreads;

struct pario_thread *pario_thread_register(void)
{
    static int main_used;
    struct pario_thread *t;
    pthread_mutex_lock(&threads_lock);
    if (!main_used) {
        t = &main_thread_state;
        main_used = 1;
    } else {
        t = arena_take_front(sizeof *t); /* zero-filled: the arena is fresh mmap */
    }
    if (t) {
        t->next = thread_list;
        thread_list = t;
        nthreads++;
    } else {
        /* Arena full: share the first accumulator (times still counted,
         * but two such thread_list may race on it). */
        t = &main_thread_state;
    }
    pthread_mutex_unlock(&threads_lock);
    pario_tl = t;
    return t;
}

void pario_pending_add(struct pario_thread *th, uint64_t key, int field, struct pario_record *rec,
                       int is_write)
{
    if (key == 0)
        return;
    for (int i = 0; i < PARIO_PENDING_MAX; i++) {
        if (th->pending[i].key == 0) {
            th->pending[i] = (struct pario_pending){.key = key, .field = field, .rec = rec, .is_write = is_write};
            th->npending++;
            return;
        }
    }
}

int pario_pending_find(struct pario_thread *th, uint64_t key, struct pario_pending *out)
{
    if (th->npending == 0 || key == 0)
        return 0;
    for (int i = 0; i < PARIO_PENDING_MAX; i++) {
        if (th->pending[i].key == key) {
            *out = th->pending[i];
            return 1;
        }
    }
    return 0;
}

void pario_pending_remove(struct pario_thread *th, uint64_t key)
{
    if (th->npending == 0 || key == 0)
        return;
    for (int i = 0; i < PARIO_PENDING_MAX; i++) {
        if (th->pending[i].key == key) {
            th->pending[i].key = 0;
            th->npending--;
            return;
        }
    }
}

void pario_pending_charge(struct pario_thread *th, const struct pario_pending *p, uint64_t t0, uint64_t t1)
{
    pario_charge(th, p->field, t0, t1);
    struct pario_record *r = p->rec;
    if (r) {
        const struct pario_layer_desc *d = pario_layers[r->layer];
        pario_rec_lock(r);
        r->fcounters[p->is_write ? d->f_write_time : d->f_read_time] += (double)(t1 - t0);
        pario_rec_unlock(r);
    }
}

/* Sum of the thread_list' accumulators for one field, in ticks. */
uint64_t pario_threads_sum(int field)
{
    uint64_t s = 0;
    pthread_mutex_lock(&threads_lock);
    for (struct pario_thread *t = thread_list; t; t = t->next)
        s += t->t[field];
    pthread_mutex_unlock(&threads_lock);
    return s;
}

int pario_thread_count(void) { return nthreads; }

/* ---- timer --------------------------------------------------------------*/

static int tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    }
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

static double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t pario_start_ticks(void) { return pario_core.start_ticks; }

/* Fix the tick -> second ratio from the readings at start and now. */
void pario_timer_calibrate(void)
{
    uint64_t t1 = pario_now();
    double m1 = mono_seconds();
    if (!pario_use_tsc || t1 <= pario_core.start_ticks || m1 - pario_core.start_mono < 1e-4) {
        /* Too short to calibrate against the run itself: measure 2 ms. */
        if (pario_use_tsc) {
            uint64_t a = pario_now();
            double ma = mono_seconds();
            while (mono_seconds() - ma < 0.002)
                ;
            pario_core.sec_per_tick = (mono_seconds() - ma) / (double)(pario_now() - a);
        } else {
            pario_core.sec_per_tick = 1e-9;
        }
    } else {
        pario_core.sec_per_tick = (m1 - pario_core.start_mono) / (double)(t1 - pario_core.start_ticks);
    }
    pario_core.end_ticks = t1;
}

/* ---- start-up -----------------------------------------------------------*/

/* The core's own state at start-up (init.c calls it first): the timer's origin, the record
 * arena, the descriptor tables, the overflow records and the paths excluded. */
int pario_core_start(const struct pario_config *cfg)
{
    pario_use_tsc = tsc_is_invariant();
    pario_core.start_mono = mono_seconds();
    pario_core.start_ticks = pario_now();
    pario_core.start_epoch = (double)time(NULL);
    pario_core.pid = getpid();

    arena_cap = cfg->mem;
    void *m = mmap(NULL, arena_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        pario_warn("cannot reserve %zu bytes for records; profiling disabled", arena_cap);
        return -1;
    }
    arena = m;
    arena_front = 0;
    arena_back = arena_cap;

    /* The descriptor tables are outside PARIO_MEM: 1 MiB each, fixed. */
    pario_fds = mmap(NULL, sizeof(struct pario_fd) * PARIO_MAX_FD, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pario_stdio_fds = mmap(NULL, sizeof(struct pario_fd) * PARIO_MAX_FD, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pario_fds == MAP_FAILED || pario_stdio_fds == MAP_FAILED) {
        pario_fds = pario_stdio_fds = NULL;
        pario_warn("cannot map descriptor tables; profiling disabled");
        return -1;
    }
    for (int l = 0; l < PARIO_NLAYERS; l++)
        record_reset(&pario_core.overflow[l], l, 0);
    for (int l = 0; l < PARIO_NLAYERS; l++)
        pario_core.overflow[l].is_overflow = 1;

    if (cfg->exclude) {
        char *copy = pario_arena_strdup(cfg->exclude, 4096);
        int n = 0;
        for (char *tok = copy ? strtok(copy, ":") : NULL; tok && n < 31; tok = strtok(NULL, ":"))
            user_excludes[n++] = tok;
    }
    return 0;
}

int pario_core_started(void) { return arena != NULL; }

/* ---- messages -----------------------------------------------------------*/

void pario_warn(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[1100];
    int n = snprintf(line, sizeof line, "pario: %s\n", msg);
    if (n > (int)sizeof line - 1)
        n = sizeof line - 1;
    /* write(2) directly: our own write wrapper ignores untracked fds. */
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}
