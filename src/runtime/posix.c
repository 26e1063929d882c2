/*
 * POSIX layer: open/close, read/write families, seeks, syncs, the stat
 * family, ftruncate, unlink, dup.  Only descriptors opened through these
 * wrappers on a non-excluded path are recorded; sockets, pipes, stdout and
 * MPI's own files pass straight through, untimed.
 */
#include "core.h"
#include "lustre.h"
#include "trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

static const unsigned char max_reduced[POSIX_NUM_COUNTERS] = {
    [POSIX_MAX_BYTE_READ] = 1,        [POSIX_MAX_BYTE_WRITTEN] = 1,     [POSIX_MAX_READ_SIZE] = 1,
    [POSIX_MAX_WRITE_SIZE] = 1,       [POSIX_FILE_ALIGNMENT] = 1,       [POSIX_FS_TYPE] = 1,
    [POSIX_LUSTRE_STRIPE_SIZE] = 1,   [POSIX_LUSTRE_STRIPE_COUNT] = 1,  [POSIX_LUSTRE_STRIPE_OFFSET] = 1,
    [POSIX_LUSTRE_COMPONENTS] = 1,
};

const struct pario_layer_desc pario_posix_desc = {
    PARIO_LAYER_DESC_COMMON(POSIX, posix),
    .c_max_byte_read = POSIX_MAX_BYTE_READ,
    .c_max_byte_written = POSIX_MAX_BYTE_WRITTEN,
    .c_max_read_size = POSIX_MAX_READ_SIZE,
    .c_max_write_size = POSIX_MAX_WRITE_SIZE,
    .c_max_reduced = max_reduced,
    .c_seq_reads = POSIX_SEQ_READS,
    .c_consec_reads = POSIX_CONSEC_READS,
    .c_rw_switches = POSIX_RW_SWITCHES,
    .c_size_read0 = POSIX_SIZE_READ_0_100,
    .c_size_write0 = POSIX_SIZE_WRITE_0_100,
    .f_max_read_time = POSIX_F_MAX_READ_TIME,
    .f_max_write_time = POSIX_F_MAX_WRITE_TIME,
};

/* The real symbols (see MAP in core.h). */
REAL(open); REAL(open64); REAL(openat); REAL(openat64); REAL(creat); REAL(creat64); REAL(close);
REAL(read); REAL(write); REAL(pread); REAL(pread64); REAL(pwrite); REAL(pwrite64);
REAL(readv); REAL(writev); REAL(preadv); REAL(pwritev); REAL(preadv64); REAL(pwritev64);
REAL(lseek); REAL(lseek64); REAL(fsync); REAL(fdatasync);
REAL(stat); REAL(stat64); REAL(lstat); REAL(lstat64); REAL(fstat); REAL(fstat64);
REAL(fstatat); REAL(fstatat64); REAL(ftruncate); REAL(ftruncate64); REAL(unlink);
REAL(dup); REAL(dup2); REAL(dup3);

/* ---- record updates ----------------------------------------------------- */

/* A read or write of `ret` bytes at `off` (off < 0: at the descriptor's
 * tracked offset, which then advances). */
static inline void posix_data(struct pario_thread *th, struct pario_fd *e, int is_write, int64_t off,
                              ssize_t ret, uint64_t t0, uint64_t t1)
{
    struct pario_record *r = atomic_load_explicit(&e->rec, memory_order_relaxed);
    if (!r)
        return;
    int64_t n = ret > 0 ? ret : 0;
    pario_rec_lock(r);
    int64_t offset = off;
    if (off < 0) {
        offset = e->offset;
        e->offset += n;
    }
    if (ret >= 0) {
        r->counters[is_write ? POSIX_WRITES : POSIX_READS]++;
        int64_t align = r->counters[POSIX_FILE_ALIGNMENT];
        /* block sizes are powers of two: a mask, not a division, on the hot path */
        int64_t misaligned = (align & (align - 1)) == 0 ? (offset & (align - 1)) : (align > 0 ? offset % align : 0);
        if (align > 0 && misaligned)
            r->counters[POSIX_FILE_NOT_ALIGNED]++;
        pario_rec_access(r, is_write, offset, n, t0, t1);
    } else {
        r->fcounters[is_write ? POSIX_F_WRITE_TIME : POSIX_F_READ_TIME] += (double)(t1 - t0);
    }
    pario_rec_unlock(r);
    pario_charge(th, is_write ? posix_write : posix_read, t0, t1);
    pario_trace_io(th, t0, t1, is_write ? PT_IO_WRITE : PT_IO_READ, PARIO_POSIX, r, offset, n);
}

/* A metadata call on a record: bump `counter` (-1: none), add meta time. */
static void posix_meta_op(struct pario_thread *th, struct pario_record *r, int counter, uint64_t t0, uint64_t t1,
                       int charge_field)
{
    pario_rec_meta(r, counter, charge_field == posix_write ? PARIO_META_WRITE : PARIO_META, t0, t1);
    pario_charge(th, charge_field, t0, t1);
    pario_trace_io(th, t0, t1, PT_IO_META, PARIO_POSIX, r, -1, 0);
}

/* What a file's first open records about where it lives. */
struct file_facts {
    int64_t blksize;                     /* st_blksize, 0 if unknown */
    int64_t size;                        /* st_size at open */
    int64_t fs_type;                     /* statfs f_type, 0 if unknown */
    int is_dir;                          /* a directory: not recorded */
    struct pario_lustre_layout lustre;   /* all 0 unless on Lustre */
};

/* An fstat and an fstatfs; only a file on Lustre costs more: one fgetxattr for
 * the layout's size and one for the layout (errno is the caller's to restore). */
static void posix_file_facts(int fd, struct file_facts *out)
{
    memset(out, 0, sizeof *out);
    MAP(fstat);
    struct stat st;
    if (real_fstat && real_fstat(fd, &st) == 0) {
        out->blksize = st.st_blksize;
        out->size = st.st_size;
        out->is_dir = S_ISDIR(st.st_mode);
        if (out->is_dir)
            return;
    }
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return;
    out->fs_type = (int64_t)(unsigned long)sf.f_type;
    if (out->fs_type == PARIO_LUSTRE_SUPER_MAGIC)
        (void)pario_lustre_read_fd(fd, &out->lustre);
}

static void store_layout(struct pario_record *r, const struct pario_lustre_layout *l)
{
    r->counters[POSIX_LUSTRE_STRIPE_SIZE] = l->stripe_size;
    r->counters[POSIX_LUSTRE_STRIPE_COUNT] = l->stripe_count;
    r->counters[POSIX_LUSTRE_STRIPE_OFFSET] = l->stripe_offset;
    r->counters[POSIX_LUSTRE_COMPONENTS] = l->components;
    atomic_store_explicit(&r->composite_layout, l->components > 1, memory_order_relaxed);
}

/* A composite (PFL) layout grows as writes reach further components: read it
 * again when a descriptor of the file is closed, so that the record holds the
 * components the run instantiated (a file the job creates has only its first
 * one at open).  For plain layouts and files off Lustre this is only a look
 * at the record's flag, no lock and no system call. */
static void posix_refresh_layout(struct pario_record *r, int fd)
{
    struct pario_lustre_layout l;
    if (!atomic_load_explicit(&r->composite_layout, memory_order_relaxed) || pario_lustre_read_fd(fd, &l) != 0)
        return;
    pario_rec_lock(r);
    store_layout(r, &l);
    pario_rec_unlock(r);
}

static void posix_opened(struct pario_thread *th, const char *path, int fd, int flags, uint64_t t0,
                         uint64_t t1)
{
    if (fd < 0 || !path || (flags & O_DIRECTORY))
        return; /* a directory is not a file (opendir opens with O_DIRECTORY) */
    int saved = errno;
    struct pario_record *r = pario_record_for_path(PARIO_POSIX, path);
    if (!r) {
        errno = saved;
        return;
    }
    int first = !r->is_overflow && !atomic_load_explicit(&r->facts_read, memory_order_acquire);
    /* The file system facts are read without holding the record (reading
     * a Lustre layout may ask the server); two threads opening the file
     * for the first time at once both read them, and store the same.  Later
     * opens make no system call, except an fstat for O_APPEND's offset. */
    struct file_facts facts = {0};
    if (first)
        posix_file_facts(fd, &facts);
    if (facts.is_dir) {
        /* opened without O_DIRECTORY: found at the first open, whose record stays
         * empty (no open counted, no facts stored: the next open looks again; the log leaves it out) */
        errno = saved;
        return;
    }
    int64_t offset = 0;
    if (flags & O_APPEND) {
        MAP(fstat);
        struct stat st;
        if (first)
            offset = facts.size;
        else if (real_fstat && real_fstat(fd, &st) == 0)
            offset = st.st_size;
    }
    if (first) {
        pario_rec_lock(r);
        if (facts.blksize > 0)
            r->counters[POSIX_FILE_ALIGNMENT] = facts.blksize;
        r->counters[POSIX_FS_TYPE] = facts.fs_type;
        store_layout(r, &facts.lustre);
        pario_rec_unlock(r);
        atomic_store_explicit(&r->facts_read, 1, memory_order_release);
    }
    pario_rec_meta(r, POSIX_OPENS, PARIO_META_OPEN, t0, t1);
    pario_fd_set(pario_fds, fd, r, offset);
    pario_charge(th, posix_meta, t0, t1);
    pario_trace_io(th, t0, t1, PT_IO_META, PARIO_POSIX, r, -1, 0);
    errno = saved;
}

/* Path of `path` relative to directory descriptor `dirfd`, into buf. */
static const char *at_path(int dirfd, const char *path, char *buf, size_t n)
{
    if (!path || path[0] == '/' || dirfd == AT_FDCWD)
        return path;
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t len = readlink(link, buf, n - 1);
    if (len <= 0 || (size_t)len + 1 + strlen(path) >= n)
        return NULL;
    buf[len] = '/';
    strcpy(buf + len + 1, path);
    return buf;
}

static int needs_mode(int flags)
{
#ifdef O_TMPFILE
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return 1;
#endif
    return (flags & O_CREAT) != 0;
}

/* ---- open / close ------------------------------------------------------- */

/* The optional mode argument of the open family (va_start must run in the
 * variadic function itself, hence a macro). */
#define MODE_ARG(mode, flags)                                                                      \
    mode_t mode = 0;                                                                               \
    if (needs_mode(flags)) {                                                                       \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode = va_arg(ap, mode_t);                                                                 \
        va_end(ap);                                                                                \
    }

#define OPEN_BODY(call, path, flags)                                                               \
    if (!pario_active())                                                                           \
        return call;                                                                               \
    struct pario_thread *th = pario_thread();                                                     \
    uint64_t t0 = pario_now();                                                                     \
    int fd = call;                                                                                 \
    uint64_t t1 = pario_now();                                                                     \
    posix_opened(th, path, fd, flags, t0, t1);                                                     \
    return fd

int open(const char *path, int flags, ...)
{
    MODE_ARG(mode, flags);
    MAP(open);
    OPEN_BODY(real_open(path, flags, mode), path, flags);
}

int open64(const char *path, int flags, ...)
{
    MODE_ARG(mode, flags);
    MAP(open64);
    OPEN_BODY(real_open64(path, flags, mode), path, flags);
}

int openat(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG(mode, flags);
    MAP(openat);
    char buf[PATH_MAX];
    OPEN_BODY(real_openat(dirfd, path, flags, mode), at_path(dirfd, path, buf, sizeof buf), flags);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG(mode, flags);
    MAP(openat64);
    char buf[PATH_MAX];
    OPEN_BODY(real_openat64(dirfd, path, flags, mode), at_path(dirfd, path, buf, sizeof buf), flags);
}

int creat(const char *path, mode_t mode)
{
    MAP(creat);
    OPEN_BODY(real_creat(path, mode), path, O_CREAT | O_WRONLY | O_TRUNC);
}

int creat64(const char *path, mode_t mode)
{
    MAP(creat64);
    OPEN_BODY(real_creat64(path, mode), path, O_CREAT | O_WRONLY | O_TRUNC);
}

int close(int fd)
{
    MAP(close);
    struct pario_fd *e = pario_active() ? pario_fd_get(pario_fds, fd) : NULL;
    if (!e)
        return real_close(fd);
    struct pario_record *r = atomic_load(&e->rec);
    int saved = errno;
    posix_refresh_layout(r, fd);
    errno = saved;
    /* Clear before closing: once closed, another thread may reuse fd. */
    pario_fd_clear(pario_fds, fd);
    struct pario_thread *th = pario_thread();
    uint64_t t0 = pario_now();
    int rc = real_close(fd);
    uint64_t t1 = pario_now();
    saved = errno;
    pario_rec_meta(r, -1, PARIO_META_CLOSE, t0, t1);
    pario_charge(th, posix_meta, t0, t1);
    pario_trace_io(th, t0, t1, PT_IO_META, PARIO_POSIX, r, -1, 0);
    errno = saved;
    return rc;
}

/* ---- data ----------------------------------------------------------------
 * The hot path: one table lookup, two timestamps, one record update. */

#define DATA_BODY(call, fd, is_write, off)                                                         \
    struct pario_fd *e = pario_active() ? pario_fd_get(pario_fds, fd) : NULL;                     \
    if (!e)                                                                                        \
        return call;                                                                               \
    struct pario_thread *th = pario_thread();                                                     \
    uint64_t t0 = pario_now();                                                                     \
    ssize_t ret = call;                                                                            \
    uint64_t t1 = pario_now();                                                                     \
    int saved = errno;                                                                             \
    posix_data(th, e, is_write, off, ret, t0, t1);                                                 \
    errno = saved;                                                                                 \
    return ret

ssize_t read(int fd, void *buf, size_t n)
{
    MAP(read);
    DATA_BODY(real_read(fd, buf, n), fd, 0, -1);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    MAP(write);
    DATA_BODY(real_write(fd, buf, n), fd, 1, -1);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    MAP(pread);
    DATA_BODY(real_pread(fd, buf, n, off), fd, 0, (int64_t)off);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    MAP(pread64);
    DATA_BODY(real_pread64(fd, buf, n, off), fd, 0, (int64_t)off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    MAP(pwrite);
    DATA_BODY(real_pwrite(fd, buf, n, off), fd, 1, (int64_t)off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    MAP(pwrite64);
    DATA_BODY(real_pwrite64(fd, buf, n, off), fd, 1, (int64_t)off);
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    MAP(readv);
    DATA_BODY(real_readv(fd, iov, cnt), fd, 0, -1);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    MAP(writev);
    DATA_BODY(real_writev(fd, iov, cnt), fd, 1, -1);
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    MAP(preadv);
    DATA_BODY(real_preadv(fd, iov, cnt, off), fd, 0, (int64_t)off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    MAP(pwritev);
    DATA_BODY(real_pwritev(fd, iov, cnt, off), fd, 1, (int64_t)off);
}

ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    MAP(preadv64);
    DATA_BODY(real_preadv64(fd, iov, cnt, off), fd, 0, (int64_t)off);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    MAP(pwritev64);
    DATA_BODY(real_pwritev64(fd, iov, cnt, off), fd, 1, (int64_t)off);
}

/* ---- seeks, syncs, truncation ------------------------------------------ */

#define FD_META_BODY(type, call, fd, counter, field, on_success)                                   \
    struct pario_fd *e = pario_active() ? pario_fd_get(pario_fds, fd) : NULL;                     \
    if (!e)                                                                                        \
        return call;                                                                               \
    struct pario_thread *th = pario_thread();                                                     \
    uint64_t t0 = pario_now();                                                                     \
    type ret = call;                                                                               \
    uint64_t t1 = pario_now();                                                                     \
    int saved = errno;                                                                             \
    struct pario_record *r = atomic_load(&e->rec);                                                 \
    if (r) {                                                                                       \
        on_success;                                                                                \
        posix_meta_op(th, r, counter, t0, t1, field);                                                 \
    }                                                                                              \
    errno = saved;                                                                                 \
    return ret

off_t lseek(int fd, off_t off, int whence)
{
    MAP(lseek);
    FD_META_BODY(off_t, real_lseek(fd, off, whence), fd, POSIX_SEEKS, posix_meta,
                 if (ret >= 0) e->offset = (int64_t)ret);
}

off64_t lseek64(int fd, off64_t off, int whence)
{
    MAP(lseek64);
    FD_META_BODY(off64_t, real_lseek64(fd, off, whence), fd, POSIX_SEEKS, posix_meta,
                 if (ret >= 0) e->offset = (int64_t)ret);
}

/* A sync pushes written data: its time is write time, as in Darshan. */
int fsync(int fd)
{
    MAP(fsync);
    FD_META_BODY(int, real_fsync(fd), fd, POSIX_FSYNCS, posix_write, (void)0);
}

int fdatasync(int fd)
{
    MAP(fdatasync);
    FD_META_BODY(int, real_fdatasync(fd), fd, POSIX_FDSYNCS, posix_write, (void)0);
}

int ftruncate(int fd, off_t len)
{
    MAP(ftruncate);
    FD_META_BODY(int, real_ftruncate(fd, len), fd, POSIX_TRUNCATES, posix_meta, (void)0);
}

int ftruncate64(int fd, off64_t len)
{
    MAP(ftruncate64);
    FD_META_BODY(int, real_ftruncate64(fd, len), fd, POSIX_TRUNCATES, posix_meta, (void)0);
}

int fstat(int fd, struct stat *st)
{
    MAP(fstat);
    FD_META_BODY(int, real_fstat(fd, st), fd, POSIX_STATS, posix_meta, (void)0);
}

int fstat64(int fd, struct stat64 *st)
{
    MAP(fstat64);
    FD_META_BODY(int, real_fstat64(fd, st), fd, POSIX_STATS, posix_meta, (void)0);
}

/* ---- calls on paths ----------------------------------------------------- */

/* A directory is not a file: a stat that finds one (dir) records nothing. */
#define PATH_META_BODY(call, path, counter, dir)                                                   \
    if (!pario_active())                                                                           \
        return call;                                                                               \
    struct pario_thread *th = pario_thread();                                                     \
    uint64_t t0 = pario_now();                                                                     \
    int ret = call;                                                                                \
    uint64_t t1 = pario_now();                                                                     \
    int saved = errno;                                                                             \
    struct pario_record *r = ret == 0 && (dir) ? NULL : pario_record_for_path(PARIO_POSIX, path); \
    if (r)                                                                                         \
        posix_meta_op(th, r, counter, t0, t1, posix_meta);                                            \
    errno = saved;                                                                                 \
    return ret

int stat(const char *path, struct stat *st)
{
    MAP(stat);
    PATH_META_BODY(real_stat(path, st), path, POSIX_STATS, S_ISDIR(st->st_mode));
}

int stat64(const char *path, struct stat64 *st)
{
    MAP(stat64);
    PATH_META_BODY(real_stat64(path, st), path, POSIX_STATS, S_ISDIR(st->st_mode));
}

int lstat(const char *path, struct stat *st)
{
    MAP(lstat);
    PATH_META_BODY(real_lstat(path, st), path, POSIX_STATS, S_ISDIR(st->st_mode));
}

int lstat64(const char *path, struct stat64 *st)
{
    MAP(lstat64);
    PATH_META_BODY(real_lstat64(path, st), path, POSIX_STATS, S_ISDIR(st->st_mode));
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    MAP(fstatat);
    char buf[PATH_MAX];
    const char *full = (flags & AT_EMPTY_PATH) && !path[0] ? NULL : at_path(dirfd, path, buf, sizeof buf);
    PATH_META_BODY(real_fstatat(dirfd, path, st, flags), full, POSIX_STATS, S_ISDIR(st->st_mode));
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    MAP(fstatat64);
    char buf[PATH_MAX];
    const char *full = (flags & AT_EMPTY_PATH) && !path[0] ? NULL : at_path(dirfd, path, buf, sizeof buf);
    PATH_META_BODY(real_fstatat64(dirfd, path, st, flags), full, POSIX_STATS, S_ISDIR(st->st_mode));
}

int unlink(const char *path)
{
    MAP(unlink);
    PATH_META_BODY(real_unlink(path), path, POSIX_UNLINKS, 0);
}

/* ---- descriptor duplication: the copy shares the record ---------------- */

static int dup_done(int oldfd, int newfd)
{
    if (newfd >= 0 && pario_active()) {
        struct pario_fd *e = pario_fd_get(pario_fds, oldfd);
        if (e)
            pario_fd_set(pario_fds, newfd, atomic_load(&e->rec), e->offset);
        else
            pario_fd_clear(pario_fds, newfd);
    }
    return newfd;
}

int dup(int fd)
{
    MAP(dup);
    int saved, nfd = real_dup(fd);
    saved = errno;
    dup_done(fd, nfd);
    errno = saved;
    return nfd;
}

int dup2(int fd, int fd2)
{
    MAP(dup2);
    int saved, nfd = real_dup2(fd, fd2);
    saved = errno;
    dup_done(fd, nfd);
    errno = saved;
    return nfd;
}

int dup3(int fd, int fd2, int flags)
{
    MAP(dup3);
    int saved, nfd = real_dup3(fd, fd2, flags);
    saved = errno;
    dup_done(fd, nfd);
    errno = saved;
    return nfd;
}
