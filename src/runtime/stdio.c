/*
 * STDIO layer: streams opened with fopen/fdopen on non-excluded paths.
 * stdin/stdout/stderr and streams opened before pario started are not
 * recorded.  glibc's stdio calls the kernel through internal symbols, so
 * these calls never reach the POSIX wrappers (no double counting).
 */
#include "core.h"
#include "trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const unsigned char max_reduced[STDIO_NUM_COUNTERS] = {
    [STDIO_MAX_BYTE_READ] = 1,
    [STDIO_MAX_BYTE_WRITTEN] = 1,
};

const struct pario_layer_desc pario_stdio_desc = {
    PARIO_LAYER_DESC_COMMON(STDIO, stdio),
    .c_max_byte_read = STDIO_MAX_BYTE_READ,
    .c_max_byte_written = STDIO_MAX_BYTE_WRITTEN,
    .c_max_read_size = -1,
    .c_max_write_size = -1,
    .c_max_reduced = max_reduced,
    .c_seq_reads = -1,
    .c_consec_reads = -1,
    .c_rw_switches = -1,
    .c_size_read0 = STDIO_SIZE_READ_0_100,
    .c_size_write0 = STDIO_SIZE_WRITE_0_100,
    .f_max_read_time = -1,
    .f_max_write_time = -1,
};

/* The real symbols (see MAP in core.h). */
REAL(fopen); REAL(fopen64); REAL(fdopen); REAL(fclose); REAL(fread); REAL(fwrite);
REAL(vfprintf); REAL(fputs); REAL(fputc); REAL(fgets); REAL(vfscanf);
REAL(fseek); REAL(fseeko); REAL(ftell); REAL(ftello); REAL(rewind); REAL(fflush);

static inline struct pario_fd *stream_entry(FILE *fp)
{
    if (!fp || !pario_active())
        return NULL;
    return pario_fd_get(pario_stdio_fds, fileno_unlocked(fp));
}

/* One read or write of `bytes` at the stream's tracked offset. */
static inline void stdio_data(struct pario_thread *th, struct pario_fd *e, int is_write, int64_t bytes,
                              int ok, uint64_t t0, uint64_t t1)
{
    struct pario_record *r = atomic_load_explicit(&e->rec, memory_order_relaxed);
    if (!r)
        return;
    pario_rec_lock(r);
    int64_t offset = e->offset;
    if (ok) {
        r->counters[is_write ? STDIO_WRITES : STDIO_READS]++;
        pario_rec_access(r, is_write, e->offset, bytes, t0, t1);
        e->offset += bytes;
    } else {
        r->fcounters[is_write ? STDIO_F_WRITE_TIME : STDIO_F_READ_TIME] += (double)(t1 - t0);
    }
    pario_rec_unlock(r);
    pario_charge(th, is_write ? stdio_write : stdio_read, t0, t1);
    pario_trace_io(th, t0, t1, is_write ? PT_IO_WRITE : PT_IO_READ, PARIO_STDIO, r, offset, ok ? bytes : 0);
}

static void stdio_meta_op(struct pario_thread *th, struct pario_fd *e, int counter, int field, uint64_t t0,
                       uint64_t t1)
{
    struct pario_record *r = atomic_load(&e->rec);
    if (!r)
        return;
    pario_rec_meta(r, counter, field == stdio_write ? PARIO_META_WRITE : PARIO_META, t0, t1);
    pario_charge(th, field, t0, t1);
    pario_trace_io(th, t0, t1, PT_IO_META, PARIO_STDIO, r, -1, 0);
}

static void stdio_opened(struct pario_thread *th, struct pario_record *r, FILE *fp, const char *mode,
                         uint64_t t0, uint64_t t1)
{
    if (!r || !fp)
        return;
    int64_t offset = 0;
    if (mode && mode[0] == 'a') {
        struct stat st;
        if (fstat(fileno_unlocked(fp), &st) == 0) /* untracked fd: not counted */
            offset = st.st_size;
    }
    pario_rec_meta(r, STDIO_OPENS, PARIO_META_OPEN, t0, t1);
    pario_fd_set(pario_stdio_fds, fileno_unlocked(fp), r, offset);
    pario_charge(th, stdio_meta, t0, t1);
    pario_trace_io(th, t0, t1, PT_IO_META, PARIO_STDIO, r, -1, 0);
}

/* ---- open / close -------------------------------------------------------- */

#define FOPEN_BODY(call, path, mode)                                                               \
    if (!pario_active())                                                                           \
        return call;                                                                               \
    struct pario_thread *th = pario_thread();                                                     \
    uint64_t t0 = pario_now();                                                                     \
    FILE *fp = call;                                                                               \
    uint64_t t1 = pario_now();                                                                     \
    int saved = errno;                                                                             \
    if (fp)                                                                                        \
        stdio_opened(th, pario_record_for_path(PARIO_STDIO, path), fp, mode, t0, t1);             \
    errno = saved;                                                                                 \
    return fp

FILE *fopen(const char *path, const char *mode)
{
    MAP(fopen);
    FOPEN_BODY(real_fopen(path, mode), path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
    MAP(fopen64);
    FOPEN_BODY(real_fopen64(path, mode), path, mode);
}

FILE *fdopen(int fd, const char *mode)
{
    MAP(fdopen);
    /* The stream's name is that of the POSIX record of fd, if any. */
    struct pario_fd *pe = pario_active() ? pario_fd_get(pario_fds, fd) : NULL;
    struct pario_record *pr = pe ? atomic_load(&pe->rec) : NULL;
    const char *name = pr && pr->name ? pr->name : NULL;
    if (!name)
        return real_fdopen(fd, mode);
    FOPEN_BODY(real_fdopen(fd, mode), name, mode);
}

int fclose(FILE *fp)
{
    MAP(fclose);
    struct pario_fd *e = stream_entry(fp);
    if (!e)
        return real_fclose(fp);
    int fd = fileno_unlocked(fp);
    struct pario_record *r = atomic_load(&e->rec);
    pario_fd_clear(pario_stdio_fds, fd);
    struct pario_fd *pe = pario_fd_get(pario_fds, fd); /* fdopen'd: glibc closes fd internally */
    struct pario_thread *th = pario_thread();
    uint64_t t0 = pario_now();
    int rc = real_fclose(fp);
    uint64_t t1 = pario_now();
    int saved = errno;
    if (pe)
        pario_fd_clear(pario_fds, fd);
    pario_rec_meta(r, -1, PARIO_META_CLOSE, t0, t1);
    pario_charge(th, stdio_meta, t0, t1);
    pario_trace_io(th, t0, t1, PT_IO_META, PARIO_STDIO, r, -1, 0);
    errno = saved;
    return rc;
}

/* ---- data ------------------------------------------------------------------ */

/* The body of a wrapper: an untracked stream goes straight to `call`; a tracked one is timed,
 * then `record` runs with e, th, ret, t0 and t1 set, errno kept from the call. */
#define STDIO_WRAP(type, call, fp, record)                                                         \
    struct pario_fd *e = stream_entry(fp);                                                         \
    if (!e)                                                                                        \
        return call;                                                                               \
    struct pario_thread *th = pario_thread();                                                     \
    uint64_t t0 = pario_now();                                                                     \
    type ret = call;                                                                               \
    uint64_t t1 = pario_now();                                                                     \
    int saved = errno;                                                                             \
    record;                                                                                        \
    errno = saved;                                                                                 \
    return ret

#define STDIO_BODY(type, call, fp, is_write, bytes_expr, ok_expr)                                  \
    STDIO_WRAP(type, call, fp, stdio_data(th, e, is_write, (int64_t)(bytes_expr), ok_expr, t0, t1))

size_t fread(void *ptr, size_t size, size_t n, FILE *fp)
{
    MAP(fread);
    STDIO_BODY(size_t, real_fread(ptr, size, n, fp), fp, 0, ret * size, 1);
}

size_t fwrite(const void *ptr, size_t size, size_t n, FILE *fp)
{
    MAP(fwrite);
    STDIO_BODY(size_t, real_fwrite(ptr, size, n, fp), fp, 1, ret * size, 1);
}

int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
    MAP(vfprintf);
    STDIO_BODY(int, real_vfprintf(fp, fmt, ap), fp, 1, ret > 0 ? ret : 0, ret >= 0);
}

int fprintf(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfprintf(fp, fmt, ap);
    va_end(ap);
    return rc;
}

/* _FORTIFY_SOURCE builds call the checking variants. */
int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
    (void)flag;
    return vfprintf(fp, fmt, ap);
}

int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int rc = vfprintf(fp, fmt, ap);
    va_end(ap);
    return rc;
}

int fputs(const char *s, FILE *fp)
{
    MAP(fputs);
    STDIO_BODY(int, real_fputs(s, fp), fp, 1, ret >= 0 ? strlen(s) : 0, ret >= 0);
}

int fputc(int ch, FILE *fp)
{
    MAP(fputc);
    STDIO_BODY(int, real_fputc(ch, fp), fp, 1, ret != EOF ? 1 : 0, ret != EOF);
}

char *fgets(char *s, int n, FILE *fp)
{
    MAP(fgets);
    STDIO_BODY(char *, real_fgets(s, n, fp), fp, 0, ret ? strlen(ret) : 0, ret != NULL);
}

/* fscanf does not say how many bytes it consumed: the stream position does.
 * In C99 mode glibc's headers rename fscanf/vfscanf to __isoc99_fscanf /
 * __isoc99_vfscanf, which is what these definitions become, and what
 * programs built against them call. */
int vfscanf(FILE *fp, const char *fmt, va_list ap)
{
    if (__builtin_expect(real_vfscanf == NULL, 0))
        real_vfscanf = (__typeof__(real_vfscanf))dlsym(RTLD_NEXT, "__isoc99_vfscanf");
    MAP(ftello);
    struct pario_fd *e = stream_entry(fp);
    if (!e)
        return real_vfscanf(fp, fmt, ap);
    struct pario_thread *th = pario_thread();
    off_t before = real_ftello(fp);
    uint64_t t0 = pario_now();
    int ret = real_vfscanf(fp, fmt, ap);
    uint64_t t1 = pario_now();
    int saved = errno;
    off_t after = real_ftello(fp);
    int64_t bytes = (before >= 0 && after >= before) ? (int64_t)(after - before) : 0;
    stdio_data(th, e, 0, bytes, ret != EOF || bytes > 0, t0, t1);
    errno = saved;
    return ret;
}

int fscanf(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfscanf(fp, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- positioning and flushing ------------------------------------------- */

#define STDIO_META_BODY(type, call, fp, counter, field, after)                                     \
    STDIO_WRAP(type, call, fp, after; stdio_meta_op(th, e, counter, field, t0, t1))

static void reposition(struct pario_fd *e, FILE *fp)
{
    MAP(ftello);
    off_t pos = real_ftello(fp);
    if (pos >= 0)
        e->offset = (int64_t)pos;
}

int fseek(FILE *fp, long off, int whence)
{
    MAP(fseek);
    STDIO_META_BODY(int, real_fseek(fp, off, whence), fp, STDIO_SEEKS, stdio_meta,
                    if (ret == 0) reposition(e, fp));
}

int fseeko(FILE *fp, off_t off, int whence)
{
    MAP(fseeko);
    STDIO_META_BODY(int, real_fseeko(fp, off, whence), fp, STDIO_SEEKS, stdio_meta,
                    if (ret == 0) reposition(e, fp));
}

long ftell(FILE *fp)
{
    MAP(ftell);
    STDIO_META_BODY(long, real_ftell(fp), fp, STDIO_SEEKS, stdio_meta, (void)0);
}

off_t ftello(FILE *fp)
{
    MAP(ftello);
    STDIO_META_BODY(off_t, real_ftello(fp), fp, STDIO_SEEKS, stdio_meta, (void)0);
}

void rewind(FILE *fp)
{
    MAP(rewind);
    struct pario_fd *e = stream_entry(fp);
    if (!e) {
        real_rewind(fp);
        return;
    }
    struct pario_thread *th = pario_thread();
    uint64_t t0 = pario_now();
    real_rewind(fp);
    uint64_t t1 = pario_now();
    int saved = errno;
    e->offset = 0;
    stdio_meta_op(th, e, STDIO_SEEKS, stdio_meta, t0, t1);
    errno = saved;
}

/* A flush pushes buffered writes: its time is write time, as in Darshan. */
int fflush(FILE *fp)
{
    MAP(fflush);
    STDIO_META_BODY(int, real_fflush(fp), fp, STDIO_FLUSHES, stdio_write, (void)0);
}
