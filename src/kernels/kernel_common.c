/* The pario I/O kernels' shared run: errors, helpers, files, verification,
 * agreement, phases and main (see kernel_common.h); the data pattern, JSON,
 * options and hints are in pattern.c, json.c, options.c and hints.c. */
#define _POSIX_C_SOURCE 200809L
#include "kernel_common.h"
#include "kernel_parts.h"
#include "pario-hint-line.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ==== small helpers =================================================================== */

void kc_fail(kc_ctx *ctx, const char *fmt, ...)
{
    if (ctx->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
    va_end(ap);
    ctx->failed = 1;
}

/* when the kernel started (kc_main) and last printed its progress; the
 * interval in seconds (PARIO_KERNEL_PROGRESS, default 10) */
static double progress_start, progress_last, progress_every = 10.0;

void kc_progress(kc_ctx *ctx, const char *what, long long done, long long total)
{
    double now = MPI_Wtime();
    if (ctx->rank != 0 || now - progress_last < progress_every)
        return;
    progress_last = now;
    fprintf(stderr, "pario-kernel-%s: %s %lld/%lld (%.0f s)\n", ctx->k->name, what, done, total,
            now - progress_start);
}

static void kc_fail_mpi(kc_ctx *ctx, int rc, const char *what, const char *file)
{
    char msg[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    msg[len < 0 ? 0 : (len > MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING : len)] = '\0';
    /* MPI error strings may contain newlines: keep the report on one line */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    kc_fail(ctx, "%s %s: %s", what, file, msg);
}

long long kc_isqrt(long long n)
{
    if (n <= 0)
        return 0;
    long long r = (long long)sqrt((double)n);
    while (r * r > n)
        r--;
    while ((r + 1) * (r + 1) <= n)
        r++;
    return r;
}

void kc_dims(int nprocs, int ndims, int *dims)
{
    MPI_Dims_create(nprocs, ndims, dims);
}

void kc_commit(kc_ctx *ctx, MPI_Datatype *t)
{
    int rc = MPI_Type_commit(t);
    if (rc != MPI_SUCCESS)
        kc_fail_mpi(ctx, rc, "MPI_Type_commit for", "a file view");
}

void kc_req_contig(kc_req *r, uint64_t off, size_t nbytes)
{
    r->view_id = -1;
    r->disp = 0;
    r->offset = (MPI_Offset)off;
    r->memtype = MPI_BYTE;
    r->count = (int)nbytes;
    r->nbytes = nbytes;
    r->one.off = 0;
    r->one.len = nbytes;
    r->runs = &r->one;
    r->nruns = 1;
    r->run_base = off;
}

/* ==== files ================================================================================== */

typedef struct kc_file {
    char name[4096];
    uint64_t seed;
    MPI_File fh;
    int fd;
    int is_open;
    int cur_view;
    MPI_Offset cur_disp;
} kc_file;

/* A ROMIO-style "fstype:" prefix (ufs:, lustre:, nfs:, ...) is not part of
 * the path in the file system. */
static const char *fs_path(const char *p)
{
    const char *q = p;
    while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
        q++;
    if (*q == ':' && q - p >= 2)
        return q + 1;
    return p;
}

static void file_name(kc_ctx *ctx, kc_file *f)
{
    if (ctx->fpp)
        snprintf(f->name, sizeof f->name, "%s.%08d", ctx->path, ctx->rank);
    else
        snprintf(f->name, sizeof f->name, "%s", ctx->path);
    uint64_t index = ctx->fpp ? (uint64_t)ctx->rank : 0;
    f->seed = ((uint64_t)ctx->seed << 32) + index;
    f->fh = MPI_FILE_NULL;
    f->fd = -1;
    f->is_open = 0;
    f->cur_view = -1;
    f->cur_disp = 0;
}

static void check_target(kc_ctx *ctx, const kc_file *f, int writing)
{
    if (!ctx->fpp && ctx->rank != 0)
        return;
    const char *p = fs_path(f->name);
    struct stat st;
    if (!writing) {
        if (stat(p, &st) != 0)
            kc_fail(ctx, "cannot read %s: %s (run without --read-only first to write it)", p, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            kc_fail(ctx, "%s is a directory; --path names a file", p);
        else if (access(p, R_OK) != 0)
            kc_fail(ctx, "cannot read %s: %s", p, strerror(errno));
        return;
    }
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
        kc_fail(ctx, "%s is a directory; --path names a file", p);
        return;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", p);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (stat(dir, &st) != 0) {
        kc_fail(ctx, "directory %s does not exist (create it, or choose another --path)", dir);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        kc_fail(ctx, "%s is not a directory (choose another --path)", dir);
        return;
    }
    if (access(dir, W_OK | X_OK) != 0)
        kc_fail(ctx, "directory %s is not writable: %s", dir, strerror(errno));
}

static void remove_file(kc_ctx *ctx, const kc_file *f)
{
    if (!ctx->fpp && ctx->rank != 0)
        return;
    const char *p = fs_path(f->name);
    if (access(p, F_OK) != 0)
        return;
    if (ctx->posix) {
        if (unlink(p) != 0)
            kc_fail(ctx, "cannot remove %s: %s", p, strerror(errno));
    } else {
        int rc = MPI_File_delete(f->name, MPI_INFO_NULL);
        if (rc != MPI_SUCCESS)
            kc_fail_mpi(ctx, rc, "MPI_File_delete", f->name);
    }
}

static uint64_t file_size(const kc_ctx *ctx, const kc_file *f)
{
    if (!ctx->fpp && ctx->rank != 0)
        return 0;
    struct stat st;
    if (stat(fs_path(f->name), &st) != 0)
        return 0;
    return (uint64_t)st.st_size;
}

static void file_open(kc_ctx *ctx, kc_file *f, int writing, MPI_Info info)
{
    f->cur_view = -1;
    f->cur_disp = 0;
    if (ctx->posix) {
        f->fd = open(fs_path(f->name), writing ? (O_WRONLY | O_CREAT) : O_RDONLY, 0644);
        if (f->fd < 0)
            kc_fail(ctx, "cannot open %s: %s", f->name, strerror(errno));
        else
            f->is_open = 1;
        return;
    }
    int amode = writing ? (MPI_MODE_CREATE | MPI_MODE_RDWR) : MPI_MODE_RDONLY;
    MPI_Comm comm = ctx->fpp ? MPI_COMM_SELF : MPI_COMM_WORLD;
    int rc = MPI_File_open(comm, f->name, amode, info, &f->fh);
    if (rc != MPI_SUCCESS) {
        kc_fail_mpi(ctx, rc, "MPI_File_open", f->name);
        f->fh = MPI_FILE_NULL;
    } else {
        f->is_open = 1;
    }
}

static void file_close(kc_ctx *ctx, kc_file *f)
{
    if (!f->is_open)
        return;
    f->is_open = 0;
    if (ctx->posix) {
        if (close(f->fd) != 0)
            kc_fail(ctx, "close %s: %s", f->name, strerror(errno));
        f->fd = -1;
        return;
    }
    int rc = MPI_File_close(&f->fh);
    if (rc != MPI_SUCCESS)
        kc_fail_mpi(ctx, rc, "MPI_File_close", f->name);
}

static void posix_io(kc_ctx *ctx, kc_file *f, int writing, unsigned char *buf, const kc_req *r)
{
    size_t pos = 0;
    for (size_t i = 0; i < r->nruns && !ctx->failed; i++) {
        uint64_t off = r->run_base + r->runs[i].off;
        uint64_t left = r->runs[i].len;
        while (left > 0) {
            ssize_t n = writing ? pwrite(f->fd, buf + pos, (size_t)left, (off_t)off)
                                : pread(f->fd, buf + pos, (size_t)left, (off_t)off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                kc_fail(ctx, "%s %s at offset %llu: %s", writing ? "pwrite" : "pread", f->name,
                        (unsigned long long)off, n < 0 ? strerror(errno) : "unexpected end of file");
                return;
            }
            pos += (size_t)n;
            off += (uint64_t)n;
            left -= (uint64_t)n;
        }
    }
}

/* One request through MPI-IO (or POSIX); returns the seconds spent in the calls. */
static double do_request(kc_ctx *ctx, kc_file *f, int writing, unsigned char *buf, const kc_req *r)
{
    double t0 = MPI_Wtime();
    if (ctx->posix) {
        if (f->is_open)
            posix_io(ctx, f, writing, buf, r);
        return MPI_Wtime() - t0;
    }
    int rc;
    if (r->view_id != f->cur_view || (r->view_id >= 0 && r->disp != f->cur_disp)) {
        if (r->view_id < 0)
            rc = MPI_File_set_view(f->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        else
            rc = MPI_File_set_view(f->fh, r->disp, r->etype, r->ftype, "native", MPI_INFO_NULL);
        if (rc != MPI_SUCCESS)
            kc_fail_mpi(ctx, rc, "MPI_File_set_view on", f->name);
        f->cur_view = r->view_id;
        f->cur_disp = r->view_id < 0 ? 0 : r->disp;
    }
    MPI_Status st;
    if (writing)
        rc = ctx->collective ? MPI_File_write_at_all(f->fh, r->offset, buf, r->count, r->memtype, &st)
                             : MPI_File_write_at(f->fh, r->offset, buf, r->count, r->memtype, &st);
    else
        rc = ctx->collective ? MPI_File_read_at_all(f->fh, r->offset, buf, r->count, r->memtype, &st)
                             : MPI_File_read_at(f->fh, r->offset, buf, r->count, r->memtype, &st);
    double dt = MPI_Wtime() - t0;
    if (rc != MPI_SUCCESS) {
        kc_fail_mpi(ctx, rc, writing ? "write to" : "read from", f->name);
    } else {
        int got = 0;
        MPI_Get_count(&st, r->memtype, &got);
        if (got != r->count)
            kc_fail(ctx, "short %s %s: %d of %d elements (file shorter than expected?)",
                    writing ? "write to" : "read from", f->name, got, r->count);
    }
    return dt;
}

/* ==== verification ============================================================================= */

typedef struct kc_verify {
    uint64_t bad_bytes;
    int have_first;
    uint64_t first_off;
    unsigned first_exp, first_got;
} kc_verify;

static void verify_req(const kc_file *f, const unsigned char *buf, const kc_req *r, kc_verify *v)
{
    unsigned char tmp[65536];
    size_t pos = 0;
    for (size_t i = 0; i < r->nruns; i++) {
        uint64_t off = r->run_base + r->runs[i].off;
        uint64_t left = r->runs[i].len;
        while (left > 0) {
            size_t n = left > sizeof tmp ? sizeof tmp : (size_t)left;
            kc_pattern_fill(tmp, off, n, f->seed);
            if (memcmp(tmp, buf + pos, n) != 0) {
                for (size_t b = 0; b < n; b++) {
                    if (tmp[b] != buf[pos + b]) {
                        if (!v->have_first) {
                            v->have_first = 1;
                            v->first_off = off + b;
                            v->first_exp = tmp[b];
                            v->first_got = buf[pos + b];
                        }
                        v->bad_bytes++;
                    }
                }
            }
            pos += n;
            off += n;
            left -= n;
        }
    }
}

/* ==== agreement ================================================================================== */

/* Everyone learns whether any rank failed; rank 0 prints the message of the
 * lowest failing rank (one line).  Returns 1 if some rank failed. */
static int agree(kc_ctx *ctx)
{
    int me = ctx->failed ? ctx->rank : ctx->nprocs, first = ctx->nprocs;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == ctx->nprocs)
        return 0;
    if (ctx->reported) /* printed by an earlier agree(); every rank knows it */
        return 1;
    char msg[KC_MSG];
    memset(msg, 0, sizeof msg);
    if (ctx->rank == first)
        snprintf(msg, sizeof msg, "%s", ctx->err);
    if (first != 0) {
        if (ctx->rank == first)
            MPI_Send(msg, KC_MSG, MPI_CHAR, 0, 77, MPI_COMM_WORLD);
        else if (ctx->rank == 0)
            MPI_Recv(msg, KC_MSG, MPI_CHAR, first, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (ctx->rank == 0) {
        if (first != 0)
            fprintf(stderr, "pario-kernel-%s: error: %s (rank %d)\n", ctx->k->name, msg, first);
        else
            fprintf(stderr, "pario-kernel-%s: error: %s\n", ctx->k->name, msg);
        fflush(stderr);
    }
    ctx->failed = 1;
    ctx->reported = 1;
    return 1;
}

int kc_agree(kc_ctx *ctx) { return agree(ctx); }

/* ==== phases ========================================================================================= */

typedef struct kc_times {
    double open, io, close;
    uint64_t bytes;
} kc_times;

static void run_phase(kc_ctx *ctx, kc_file *f, int writing, MPI_Info info, unsigned char *buf, kc_times *t,
                      kc_verify *v, MPI_Info *info_used)
{
    double t0 = MPI_Wtime();
    file_open(ctx, f, writing, info);
    t->open += MPI_Wtime() - t0;
    if (agree(ctx)) {
        /* a shared file is opened collectively: it failed everywhere */
        if (ctx->fpp || ctx->posix)
            file_close(ctx, f);
        return;
    }
    if (info_used && !ctx->posix) {
        if (MPI_File_get_info(f->fh, info_used) != MPI_SUCCESS)
            *info_used = MPI_INFO_NULL;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (long long s = 0; s < ctx->steps; s++) {
        for (long long i = 0; i < ctx->nreq; i++) {
            kc_req r;
            memset(&r, 0, sizeof r);
            r.view_id = -1;
            r.memtype = MPI_BYTE;
            r.etype = MPI_BYTE;
            r.ftype = MPI_BYTE;
            ctx->k->request(ctx, (int)s, i, &r);
            if (writing) {
                size_t pos = 0;
                for (size_t k = 0; k < r.nruns; k++) {
                    kc_pattern_fill(buf + pos, r.run_base + r.runs[k].off, (size_t)r.runs[k].len, f->seed);
                    pos += (size_t)r.runs[k].len;
                }
            } else if (v) {
                memset(buf, 0, r.nbytes);
            }
            t->io += do_request(ctx, f, writing, buf, &r);
            t->bytes += r.nbytes;
            if (!writing && v && !ctx->failed)
                verify_req(f, buf, &r, v);
        }
        kc_progress(ctx, writing ? "steps written" : "steps read", s + 1, ctx->steps);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    file_close(ctx, f);
    t->close += MPI_Wtime() - t0;
}

/* A library mode's phase (kc_lib): the same barriers as run_phase around the
 * kernel's own open / steps / close. */
static void lib_phase(kc_ctx *ctx, int writing, MPI_Info info, kc_times *t, kc_verify *v, kc_lib_result *res,
                      MPI_Info *info_used)
{
    memset(res, 0, sizeof *res);
    res->used = MPI_INFO_NULL;
    ctx->lib->phase(ctx, writing, info, res);
    t->open += res->open;
    t->io += res->io;
    t->close += res->close;
    t->bytes += res->bytes;
    if (v && res->bad) {
        v->bad_bytes += res->bad;
        v->have_first = 1;
    }
    if (info_used && *info_used == MPI_INFO_NULL)
        *info_used = res->used;
    else if (res->used != MPI_INFO_NULL)
        MPI_Info_free(&res->used);
}

/* ==== main ================================================================================================ */

/* The checks of the common options that need neither MPI nor the kernel's setup. */
static void check_common(kc_ctx *ctx, int f_coll, int f_indep)
{
    if (ctx->failed)
        return;
    if (f_coll && f_indep)
        kc_fail(ctx, "--collective and --independent exclude each other");
    ctx->mode_given = f_coll || f_indep;
    if (f_indep)
        ctx->collective = 0;
    if (ctx->verify || ctx->read_only)
        ctx->do_read = 1;
    if (ctx->steps < 1 || ctx->steps > 1000000)
        kc_fail(ctx, "--steps must be between 1 and 1000000 (got %lld)", ctx->steps);
    if (ctx->seed < 0 || ctx->seed > 0x7fffffffLL)
        kc_fail(ctx, "--seed must be between 0 and 2147483647");
    if (!ctx->path[0])
        kc_fail(ctx, "--path must not be empty");
}

int kc_main(const kc_kernel *k, int argc, char **argv)
{
    kc_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.k = k;
    ctx.collective = 1;
    ctx.steps = 1;
    char default_path[256];
    snprintf(default_path, sizeof default_path, "pario-%s.dat", k->name);
    ctx.path = default_path;

    int f_coll = 0, f_indep = 0;
    kc_opt common[] = {
        {"path", KC_STR, &ctx.path, NULL, "file to write (default ./pario-<kernel>.dat; -o is short for it)", 0},
        {"collective", KC_FLAG, &f_coll, NULL, "collective MPI-IO calls (*_all) (default)", 0},
        {"independent", KC_FLAG, &f_indep, NULL, "independent MPI-IO calls", 0},
        {"steps", KC_INT, &ctx.steps, NULL, "time steps / checkpoints appended to the file (default 1)", 0},
        {"read", KC_FLAG, &ctx.do_read, NULL, "read the file back after writing it", 0},
        {"verify", KC_FLAG, &ctx.verify, NULL, "read back and check every byte against the pattern", 0},
        {"read-only", KC_FLAG, &ctx.read_only, NULL, "do not write: read an existing file (with --verify: check it)",
         0},
        {"delete", KC_FLAG, &ctx.delete_after, NULL, "remove the file(s) at the end", 0},
        {"seed", KC_INT, &ctx.seed, NULL, "seed of the data pattern (default 0)", 0},
        {"hints", KC_STR, &ctx.hints_cli, NULL, "MPI-IO hints key=value,key=value (after the environment's)", 0},
        {NULL, 0, NULL, NULL, NULL, 0},
    };
    /* --help needs no MPI: it works without a launcher (and prints once under one). */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            if (pario_launcher_rank() == 0)
                kc_usage(k, common);
            return 0;
        }
    /* --check-options first: parse the options only, without MPI and without writing anything, and
     * say what is wrong (pario kernel runs it before it starts the launcher and its banner). */
    if (argc > 1 && strcmp(argv[1], "--check-options") == 0) {
        kc_opt *check_tables[2] = {k->opts, common};
        ctx.nprocs = 1;
        kc_parse_args(&ctx, check_tables, argc - 1, argv + 1);
        check_common(&ctx, f_coll, f_indep);
        if (ctx.failed) {
            fprintf(stderr, "pario-kernel-%s: error: %s\n", k->name, ctx.err);
            return 2;
        }
        return 0;
    }
    MPI_Init(&argc, &argv);
    progress_start = progress_last = MPI_Wtime();
    const char *every = getenv("PARIO_KERNEL_PROGRESS");
    if (every && *every)
        progress_every = atof(every);
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.nprocs);
    kc_opt *tables[2] = {k->opts, common};
    int help = kc_parse_args(&ctx, tables, argc, argv);
    if (help && !ctx.failed) {
        if (ctx.rank == 0)
            kc_usage(k, common);
        MPI_Finalize();
        return 0;
    }
    check_common(&ctx, f_coll, f_indep);
    if (!ctx.failed)
        k->setup(&ctx);
    if (!ctx.failed && ctx.nreq > 0 && ctx.max_req_bytes == 0)
        ctx.max_req_bytes = 1;
    MPI_Info info = MPI_INFO_NULL;
    if (!ctx.failed)
        kc_build_hints(&ctx, &info);
    kc_file f;
    memset(&f, 0, sizeof f);
    if (!ctx.failed) {
        file_name(&ctx, &f);
        check_target(&ctx, &f, !ctx.read_only);
    }
    if (!ctx.failed && ctx.lib && ctx.fpp)
        kc_fail(&ctx, "the %s mode writes one shared file (no file per process)", ctx.lib->api);
    unsigned char *buf = NULL;
    if (!ctx.failed && !ctx.lib) {
        buf = malloc(ctx.max_req_bytes ? ctx.max_req_bytes : 1);
        if (!buf)
            kc_fail(&ctx, "cannot allocate a buffer of %zu bytes", ctx.max_req_bytes);
    }
    if (agree(&ctx)) {
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        if (k->cleanup)
            k->cleanup(&ctx);
        free(buf);
        MPI_Finalize();
        return 2;
    }

    /* ---- write, then read ---- */
    int rc = 0;
    kc_times tw = {0, 0, 0, 0}, tr = {0, 0, 0, 0};
    kc_verify v;
    memset(&v, 0, sizeof v);
    kc_lib_result lres;
    char lib_bad[sizeof lres.first_bad] = "";
    MPI_Info used = MPI_INFO_NULL;
    uint64_t fbytes = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (!ctx.read_only) {
        remove_file(&ctx, &f);
        if (agree(&ctx))
            rc = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        if (!rc) {
            if (ctx.lib)
                lib_phase(&ctx, 1, info, &tw, NULL, &lres, &used);
            else
                run_phase(&ctx, &f, 1, info, buf, &tw, NULL, &used);
            if (agree(&ctx))
                rc = 1;
        }
    }
    if (!rc && ctx.do_read) {
        if (ctx.lib) {
            lib_phase(&ctx, 0, info, &tr, ctx.verify ? &v : NULL, &lres, ctx.read_only ? &used : NULL);
            snprintf(lib_bad, sizeof lib_bad, "%s", lres.first_bad);
        } else {
            run_phase(&ctx, &f, 0, info, buf, &tr, ctx.verify ? &v : NULL, ctx.read_only ? &used : NULL);
        }
        if (agree(&ctx))
            rc = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double total = MPI_Wtime() - start;
    if (!rc)
        fbytes = file_size(&ctx, &f);

    /* ---- results ---- */
    double loc[6] = {tw.open + tr.open, tw.io, tr.io, tw.close + tr.close, 0, 0}, mx[6];
    MPI_Reduce(loc, mx, 6, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    unsigned long long lsum[4] = {tw.bytes, tr.bytes, fbytes, v.bad_bytes}, sum[4];
    MPI_Allreduce(lsum, sum, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);

    int verify_failed = 0;
    if (!rc && ctx.verify && sum[3] > 0) {
        verify_failed = 1;
        int me = v.have_first ? ctx.rank : ctx.nprocs, first;
        MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        unsigned long long info3[3] = {v.first_off, v.first_exp, v.first_got};
        char fname[4096];
        snprintf(fname, sizeof fname, "%s", f.name);
        if (first != 0) {
            if (ctx.rank == first) {
                MPI_Send(info3, 3, MPI_UNSIGNED_LONG_LONG, 0, 78, MPI_COMM_WORLD);
                MPI_Send(fname, (int)sizeof fname, MPI_CHAR, 0, 79, MPI_COMM_WORLD);
            } else if (ctx.rank == 0) {
                MPI_Recv(info3, 3, MPI_UNSIGNED_LONG_LONG, first, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(fname, (int)sizeof fname, MPI_CHAR, first, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
        if (ctx.lib) {
            if (first != 0) {
                if (ctx.rank == first)
                    MPI_Send(lib_bad, (int)sizeof lib_bad, MPI_CHAR, 0, 80, MPI_COMM_WORLD);
                else if (ctx.rank == 0)
                    MPI_Recv(lib_bad, (int)sizeof lib_bad, MPI_CHAR, first, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            if (ctx.rank == 0)
                fprintf(stderr, "pario-kernel-%s: verify failed: %s %s (rank %d; %llu differing values read in all)\n",
                        k->name, fname, lib_bad, first, sum[3]);
        } else if (ctx.rank == 0)
            fprintf(stderr,
                    "pario-kernel-%s: verify failed: %s offset %llu: expected 0x%02llx, read 0x%02llx "
                    "(rank %d; %llu differing bytes read in all)\n",
                    k->name, fname, info3[0], info3[1], info3[2], first, sum[3]);
    }

    if (!rc && ctx.rank == 0) {
        kc_json j = {0};
        kc_json_open(&j, NULL);
        kc_json_str(&j, "kernel", k->name);
        kc_json_str(&j, "pattern", k->pattern);
        kc_json_int(&j, "nprocs", ctx.nprocs);
        kc_json_str(&j, "api", ctx.lib ? ctx.lib->api : (ctx.posix ? "posix" : "mpiio"));
        kc_json_str(&j, "mode", ctx.posix ? "independent" : (ctx.collective ? "collective" : "independent"));
        kc_json_str(&j, "path", ctx.path);
        kc_json_bool(&j, "file_per_process", ctx.fpp);
        kc_json_int(&j, "files", ctx.fpp ? ctx.nprocs : 1);
        kc_json_int(&j, "steps", ctx.steps);
        kc_json_int(&j, "seed", ctx.seed);
        kc_json_key(&j, "phases");
        kc_json_raw(&j, ctx.read_only ? "[\"read\"]" : (ctx.do_read ? "[\"write\",\"read\"]" : "[\"write\"]"));
        kc_json_open(&j, "params");
        if (ctx.layout)
            kc_json_str(&j, "layout", ctx.layout);
        k->params(&ctx, &j);
        kc_json_close(&j);
        kc_json_u64(&j, "bytes_written", sum[0]);
        kc_json_u64(&j, "bytes_read", sum[1]);
        kc_json_u64(&j, "step_bytes", ctx.step_bytes * (ctx.fpp ? (uint64_t)ctx.nprocs : 1));
        kc_json_u64(&j, "file_bytes", sum[2]);
        kc_json_open(&j, "time_s");
        kc_json_dbl(&j, "open", mx[0]);
        kc_json_dbl(&j, "write", mx[1]);
        kc_json_dbl(&j, "read", mx[2]);
        kc_json_dbl(&j, "close", mx[3]);
        kc_json_dbl(&j, "total", total);
        kc_json_close(&j);
        const double mib = 1048576.0;
        kc_json_open(&j, "bandwidth_mib_s");
        if (sum[0] > 0 && mx[1] > 0)
            kc_json_dbl(&j, "write", (double)sum[0] / mib / mx[1]);
        else
            kc_json_null(&j, "write");
        if (sum[1] > 0 && mx[2] > 0)
            kc_json_dbl(&j, "read", (double)sum[1] / mib / mx[2]);
        else
            kc_json_null(&j, "read");
        kc_json_close(&j);
        if (ctx.verify)
            kc_json_bool(&j, "verified", !verify_failed);
        else
            kc_json_null(&j, "verified");
        kc_json_info(&j, "hints_requested", info);
        kc_json_info(&j, "hints", used);
        if (ctx.lib && ctx.lib->json) {
            kc_json_open(&j, ctx.lib->api);
            ctx.lib->json(&ctx, &j);
            kc_json_close(&j);
        }
        kc_json_close(&j);
        printf("%s\n", j.buf);
        fflush(stdout);
        free(j.buf);
    }

    if (!rc && ctx.delete_after) {
        remove_file(&ctx, &f);
        if (agree(&ctx))
            rc = 1;
    }
    if (used != MPI_INFO_NULL)
        MPI_Info_free(&used);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (k->cleanup)
        k->cleanup(&ctx);
    free(buf);
    MPI_Finalize();
    if (rc)
        return rc;
    return verify_failed ? 1 : 0;
}
