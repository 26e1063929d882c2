/*
 * The collective-write engine: extended two-phase I/O (Thakur & Choudhary;
 * ROMIO's ADIOI_GEN_WriteStridedColl is the reference implementation) with
 * the overlap algorithms of Feki & Gabriel.  This file opens and closes a
 * file's engine state and runs each call, cw_write, as a short pipeline:
 *
 *   my pieces      the file view and the memory type flattened; the call's
 *                  bytes as (file offset, length, stream position) pieces
 *                  (view.c)
 *   extents        allgather of every rank's first and last byte, with its
 *                  agreement and auto's direct writes (here)
 *   file domains   [min, max) split evenly among the aggregators, the
 *                  boundaries aligned to striping_unit when it is set
 *                  (domains.c)
 *   requests       alltoall of counts, alltoallv of my pieces to the
 *                  aggregators of their domains (domains.c)
 *   schedule       the algorithm's, or auto's pick (auto.c)
 *   cycles         each aggregator's data range cut in buffers; every cycle
 *                  shuffles the pieces into a buffer (schedule.c, shuffle.c)
 *                  and writes it with pwrite on the aggregator's own
 *                  descriptor (writer.c)
 *
 * Which files it serves, and with what, is select.c's; what it needs from
 * the runtime comes through hooks.h.
 */
#include "cw_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- open / set_info / close ------------------------------------------------*/

/* PARIO_COLL_CALLS=PATH: rank 0 of each file's communicator appends one line
 * per call the engine served (bench/collective_auto.py --record), the
 * columns calls_line writes, opening PATH at its first line.  Unset, a call
 * pays one test of calls_path. */
static const char *calls_path;
static int calls_fd = -1;
static int64_t calls_files; /* files opened while the lines are on */
static pthread_once_t calls_once = PTHREAD_ONCE_INIT;

static void calls_env(void)
{
    calls_path = cw_hooks.calls_path;
}

static struct cw_file *new_file(MPI_Comm comm, const char *path, int amode, const struct cw_hints *h)
{
    struct cw_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    const char *p = path; /* without ROMIO's "ufs:" prefix (the caller strips it) */
    /* the MPI library opened it relative to the current directory: keep the
     * absolute path, since the descriptor is opened later */
    if (p[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || snprintf(f->path, sizeof f->path, "%s/%s", cwd, p) >= (int)sizeof f->path) {
            free(f);
            return NULL;
        }
    } else {
        snprintf(f->path, sizeof f->path, "%s", p);
    }
    f->amode = amode;
    f->hints = *h;
    f->fd = -1;
    struct stat st;
    f->fs_block = stat(f->path, &st) == 0 && st.st_blksize > 0 ? (int64_t)st.st_blksize : 0;
    f->win = MPI_WIN_NULL;
    f->comm = MPI_COMM_NULL;
    if (NEXT(PMPI_Comm_dup)(comm, &f->comm) != MPI_SUCCESS) {
        free(f);
        return NULL;
    }
    NEXT(PMPI_Comm_set_errhandler)(f->comm, MPI_ERRORS_RETURN);
    NEXT(PMPI_Comm_rank)(f->comm, &f->rank);
    NEXT(PMPI_Comm_size)(f->comm, &f->nprocs);
    return f;
}

struct cw_file *cw_file_open(MPI_File fh, MPI_Comm comm, const char *path, int amode, MPI_Info info)
{
    struct cw_hints h;
    cw_hints_default(&h);
    cw_hints_parse(&h, info);
    /* The decision depends on values every rank has alike (environment,
     * hints of a collective open), so all ranks agree without a message. */
    if (h.algorithm == CW_OFF || !path)
        return NULL;
    cw_hints_stripe(&h, fh, info);
    pthread_once(&calls_once, calls_env);
    struct cw_file *f = new_file(comm, path, amode, &h);
    if (f && calls_path)
        f->calls_file = calls_files++;
    return f;
}

void cw_file_set_info(struct cw_file *f, MPI_Info info)
{
    if (!f || info == MPI_INFO_NULL)
        return;
    struct cw_hints before = f->hints;
    cw_hints_parse(&f->hints, info);
    if (before.cb_nodes != f->hints.cb_nodes || strcmp(before.cb_config_list, f->hints.cb_config_list) != 0)
        f->aggs_valid = 0; /* chosen again at the next write (collective, as set_info is) */
}

void cw_file_view_changed(struct cw_file *f)
{
    if (f)
        cw_view_free(&f->view);
}

void cw_file_close(struct cw_file *f)
{
    if (!f)
        return;
    cw_free_buffers(f);
    cw_writer_stop(f->writer);
    if (f->fd >= 0)
        close(f->fd);
    cw_view_free(&f->view);
    free(f->aggs);
    if (f->comm != MPI_COMM_NULL)
        NEXT(PMPI_Comm_free)(&f->comm);
    free(f);
}

/* ---- the call ---------------------------------------------------------------*/

static void free_ctx(struct cw_ctx *call)
{
    for (int i = 0; i < CW_MAX_SLOTS; i++)
        if (call->cycles[i].number >= 0)
            cw_cycle_release(&call->cycles[i]);
    free(call->mine);
    free(call->my_first);
    free(call->my_cur);
    free(call->my_skip);
    pario_flat_free(&call->mem);
    free(call->mpos);
    free(call->fd_hi);
    free(call->agg_start);
    free(call->agg_end);
    free(call->peer_pieces);
    free(call->peer_first);
    free(call->peer_cur);
    free(call->peer_skip);
    free(call->written);
}

/* errno of a failed read/write -> MPI error class, as ROMIO maps them. */
static int error_class(int err)
{
    switch (err) {
    case 0:
        return MPI_SUCCESS;
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EBADF:
        return MPI_ERR_FILE;
    default:
        return MPI_ERR_IO;
    }
}

/* Local reasons to give the call to the MPI library (alike on every rank). */
static enum cw_fallback file_fallback(struct cw_file *f, MPI_File fh)
{
    int atomic = 0;
    if (NEXT(PMPI_File_get_atomicity)(fh, &atomic) != MPI_SUCCESS)
        return CW_FB_OTHER;
    if (atomic)
        return CW_FB_ATOMIC;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return CW_FB_SEQUENTIAL;
    if (f->amode & MPI_MODE_RDONLY)
        return CW_FB_OTHER; /* the MPI library reports the error */
    if (!f->view.native)
        return CW_FB_DATAREP;
    return CW_FB_NONE;
}

/* auto, as ROMIO's romio_cb_write=automatic: when every rank's bytes are
 * one contiguous range of the file and of memory, and no two ranks' ranges
 * interleave, two-phase would only add a copy: each rank writes its own.
 * A rank that can writes before the allgather, which then carries its
 * result: one collective per call, as ROMIO's independent path.  If another
 * rank cannot (two-phase or the MPI library then writes everything), the
 * same bytes are written again: correct, and the rare case.  Two single
 * ranges that overlap are writes to the same bytes, which MPI leaves
 * undefined outside atomic mode. */
static int direct_capable(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    if (call->nmine == 0)
        return 1;
    if (call->nmine > 1 || !call->mbase)
        return 0;
    if (f->fd < 0 && !f->fd_failed) {
        f->fd = open(f->path, O_RDWR | O_CLOEXEC);
        f->fd_failed = f->fd < 0;
    }
    return f->fd >= 0;
}

/* What each rank tells the others in the call's one allgather (extents,
 * agreement and auto's direct write), sent as int64s. */
struct cw_rank_report {
    int64_t first, end;       /* the file range of my bytes; INT64_MAX, 0: none */
    int64_t reason;           /* enum cw_fallback: why I cannot take part, or CW_FB_NONE */
    int64_t wrote;            /* 1: my bytes are in the file already (auto's direct write) */
    int64_t error_class;      /* of that write: MPI_SUCCESS or an MPI error class */
};
#define CW_REPORT_INT64S ((int)(sizeof(struct cw_rank_report) / sizeof(int64_t)))
_Static_assert(sizeof(struct cw_rank_report) == 5 * sizeof(int64_t), "a report is sent as MPI_INT64_Ts");

static int cmp_range(const void *a, const void *b)
{
    int64_t x = ((const struct cw_range *)a)->lo, y = ((const struct cw_range *)b)->lo;
    return (x > y) - (x < y);
}

/* The ranks' non-empty file ranges (with only_written, of those that wrote
 * their own bytes), sorted by start; NULL when out of memory. */
static struct cw_range *sorted_ranges(const struct cw_rank_report *all, int np, int only_written, int *n)
{
    struct cw_range *r = malloc((size_t)np * sizeof *r);
    *n = 0;
    if (!r)
        return NULL;
    for (int i = 0; i < np; i++)
        if ((!only_written || all[i].wrote) && all[i].end > all[i].first)
            r[(*n)++] = (struct cw_range){all[i].first, all[i].end};
    qsort(r, (size_t)*n, sizeof *r, cmp_range);
    return r;
}

/* Do the ranks' ranges overlap? */
static int interleaved(const struct cw_rank_report *all, int np)
{
    int n;
    struct cw_range *r = sorted_ranges(all, np, 0, &n);
    if (!r)
        return 1;
    int over = 0;
    for (int i = 1; i < n && !over; i++)
        over = r[i].lo < r[i - 1].hi;
    free(r);
    return over;
}

/* The file ranges of the ranks that wrote their own bytes, sorted and
 * merged, for the aggregators to skip. */
static int written_ranges(struct cw_ctx *call, const struct cw_rank_report *all)
{
    int n;
    struct cw_range *r = sorted_ranges(all, call->f->nprocs, 1, &n);
    if (!r)
        return -1;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && r[i].lo <= r[m - 1].hi) {
            if (r[i].hi > r[m - 1].hi)
                r[m - 1].hi = r[i].hi;
        } else {
            r[m++] = r[i];
        }
    }
    call->written = r;
    call->nwritten = m;
    return 0;
}

static void write_direct(struct cw_ctx *call)
{
    if (call->nmine == 0)
        return;
    uint64_t t0 = cw_now();
    call->err = cw_pwrite_all(call->f->fd, call->mbase, call->mine[0].len, call->mine[0].off);
    atomic_fetch_add(&call->t_write, cw_now() - t0);
}

static int run_call(struct cw_ctx *call, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
                    int count, MPI_Datatype type, int64_t *bytes_out, struct cw_stats *stats)
{
    struct cw_file *f = call->f;
    int rc;
    uint64_t t0 = cw_now();
    int tsize = 0;
    NEXT(PMPI_Type_size)(type, &tsize);
    int64_t bytes = count > 0 ? (int64_t)count * tsize : 0;
    *bytes_out = bytes;
    /* where the data starts in the view, in bytes of data */
    MPI_Offset pos = offset;
    if (!explicit_offset && NEXT(PMPI_File_get_position)(fh, &pos) != MPI_SUCCESS)
        pos = -1;
    /* what this rank can do: 0 fine, else a reason (the worst one wins) */
    int reason = CW_FB_NONE;
    if (!f->view.usable)
        reason = CW_FB_DATATYPE;
    else if (count < 0 || pos < 0 || bytes % f->view.etype_size != 0)
        reason = CW_FB_OTHER; /* the MPI library reports the error */
    else if (cw_memory_layout(call, buf, count, type) != 0 ||
             cw_view_pieces(&f->view, pos * f->view.etype_size, bytes, &call->mine, &call->nmine) != 0)
        reason = CW_FB_DATATYPE;
    if (reason == CW_FB_NONE && f->my_agg >= 0 && f->fd < 0 && !f->fd_failed) {
        f->fd = open(f->path, O_RDWR | O_CLOEXEC);
        if (f->fd < 0)
            f->fd_failed = 1;
    }
    if (f->my_agg >= 0 && f->fd < 0 && reason == CW_FB_NONE)
        reason = CW_FB_OTHER;
    int direct_ok = reason == CW_FB_NONE && f->hints.algorithm == CW_AUTO && direct_capable(call);
    if (direct_ok)
        write_direct(call);
    /* extents, agreement and the direct writes' results in one allgather */
    int wrote = direct_ok && !call->err; /* this rank's bytes are in the file */
    struct cw_rank_report mine = {INT64_MAX, 0, reason, wrote, error_class(call->err)};
    struct cw_rank_report *all = malloc((size_t)f->nprocs * sizeof *all);
    if (!all)
        return MPI_ERR_NO_MEM;
    if (call->nmine > 0) {
        mine.first = call->mine[0].off;
        mine.end = call->mine[call->nmine - 1].off + call->mine[call->nmine - 1].len;
    }
    rc = NEXT(PMPI_Allgather)(&mine, CW_REPORT_INT64S, MPI_INT64_T, all, CW_REPORT_INT64S, MPI_INT64_T, f->comm);
    /* the file range of the call, and of the ranks that still have bytes to write */
    int64_t min_st = INT64_MAX, max_end = 0, left_st = INT64_MAX, left_end = 0;
    int64_t worst = 0, direct = 1, direct_rc = MPI_SUCCESS;
    for (int r = 0; rc == MPI_SUCCESS && r < f->nprocs; r++) {
        const struct cw_rank_report *a = &all[r];
        min_st = a->first < min_st ? a->first : min_st;
        max_end = a->end > max_end ? a->end : max_end;
        if (!a->wrote) {
            left_st = a->first < left_st ? a->first : left_st;
            left_end = a->end > left_end ? a->end : left_end;
        }
        worst = a->reason > worst ? a->reason : worst;
        direct &= a->wrote;
        direct_rc = a->error_class > direct_rc ? a->error_class : direct_rc;
    }
    int all_direct = (int)direct;
    if (rc == MPI_SUCCESS && direct)
        direct = !interleaved(all, f->nprocs);
    if (rc == MPI_SUCCESS && !all_direct && worst == CW_FB_NONE && written_ranges(call, all) != 0)
        rc = MPI_ERR_NO_MEM;
    free(all);
    if (rc != MPI_SUCCESS)
        return rc;
    call->span = max_end > min_st ? max_end - min_st : 0;
    /* What a rank wrote itself stays written once: with ranks that cannot,
     * it gives the MPI library or the two-phase write none of its bytes (the
     * aggregators read them back as holes, after this allgather). */
    if (wrote && !all_direct)
        call->direct_bytes = bytes;
    if (worst != CW_FB_NONE) {
        stats->reason = (enum cw_fallback)worst;
        stats->direct_bytes = call->direct_bytes;
        return MPI_SUCCESS; /* served stays 0: the MPI library writes */
    }
    if (!all_direct) {
        if (wrote)
            call->nmine = 0;
        min_st = left_st;
        max_end = left_end;
    }
    stats->served = 1;
    call->t_setup = cw_now() - t0 - atomic_load(&call->t_write); /* a direct write is write time */
    if (direct) {
        call->algorithm = CW_DIRECT;
        call->ncycles = 0;
        call->agreed = 1;
        call->agreed_rc = (int)direct_rc;
        return MPI_SUCCESS;
    }
    if (max_end <= min_st) { /* nobody writes anything (under auto, direct took it) */
        cw_set_schedule(call, f->hints.algorithm);
        return MPI_SUCCESS;
    }
    if (cw_file_domains(call, min_st, max_end) != 0 || cw_split_at_domains(call) != 0)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = cw_exchange_requests(call);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->hints.algorithm == CW_AUTO)
        cw_auto_pick(call);
    else
        cw_set_schedule(call, f->hints.algorithm);
    rc = cw_cycle_buffers(call);
    call->t_setup = cw_now() - t0;
    if (rc != MPI_SUCCESS)
        return rc;
    return cw_run_cycles(call);
}

void cw_direct_done(struct cw_file *f, MPI_File fh, int explicit_offset, int64_t bytes, MPI_Status *status)
{
    if (!explicit_offset && bytes > 0) {
        MPI_Offset pos;
        NEXT(PMPI_File_get_position)(fh, &pos);
        NEXT(PMPI_File_seek)(fh, pos + bytes / f->view.etype_size, MPI_SEEK_SET);
    }
    if (status != MPI_STATUS_IGNORE && status != NULL)
        NEXT(PMPI_Status_set_elements_x)(status, MPI_BYTE, (MPI_Count)bytes);
}

/* One line of PARIO_COLL_CALLS for the call just served (rank 0 of the
 * file's communicator), its columns: pid, file (the file's number in the
 * process), call (the file's served calls before it), variant
 * (cw_variant_code; 7x: every rank wrote its own bytes), span (the call's
 * file range), cycles (buffer cycles at cb_buffer_size: what auto classes
 * the call by), ncycles (the cycles it ran), aggregators, slowest_ticks (the
 * slowest rank's time in the hooks' ticks; 0 for a direct call), auto_slot,
 * auto_candidate, auto_explored (-1, -1, 0 when auto did not choose), and
 * now_ticks, now_ns: the hooks' clock and CLOCK_MONOTONIC read together,
 * which convert ticks to time. */
static void calls_line(struct cw_file *f, const struct cw_ctx *call, uint64_t t_call)
{
    if (calls_fd < 0)
        calls_fd = open(calls_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (calls_fd < 0) {
        if (cw_hooks.warn)
            cw_hooks.warn("PARIO_COLL_CALLS=%s: cannot open it; no lines written", calls_path);
        calls_path = NULL;
        return;
    }
    int64_t cycles = call->agg_start ? cw_count_cycles(call, f->hints.cb_buffer_size) : 0;
    uint64_t ticks = cw_now();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char line[512];
    int n = snprintf(line, sizeof line,
                     "%ld,%lld,%lld,%d,%lld,%lld,%lld,%d,%llu,%d,%d,%d,%llu,%llu\n", (long)getpid(),
                     (long long)f->calls_file, (long long)f->calls_served, cw_variant_code(call->algorithm, call->shuffle),
                     (long long)call->span, (long long)cycles, (long long)call->ncycles, f->naggs,
                     (unsigned long long)t_call, call->auto_class, call->auto_class < 0 ? -1 : call->auto_candidate,
                     call->auto_explored, (unsigned long long)ticks,
                     (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    if (n > 0 && n < (int)sizeof line && write(calls_fd, line, (size_t)n) != n && cw_hooks.warn)
        cw_hooks.warn("PARIO_COLL_CALLS: a line was not written");
}

/* What every rank learns at the end of a call: the worst result and the
 * slowest rank's time (MPI_MAX of both, as int64s). */
struct cw_call_result {
    int64_t rc;               /* MPI_SUCCESS or an MPI error class */
    int64_t t_call;           /* the call's time, in the hooks' clock ticks */
};
#define CW_RESULT_INT64S ((int)(sizeof(struct cw_call_result) / sizeof(int64_t)))

int cw_write(struct cw_file *f, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
             int count, MPI_Datatype type, MPI_Status *status, struct cw_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->comm_rank = f->rank;
    stats->auto_class = -1;
    if (f->hints.algorithm == CW_OFF)
        return MPI_SUCCESS;
    uint64_t t_start = cw_now();
    if (!f->view.valid && cw_view_load(f, fh) != MPI_SUCCESS) {
        stats->reason = CW_FB_OTHER;
        return MPI_SUCCESS;
    }
    enum cw_fallback fb = file_fallback(f, fh);
    if (fb != CW_FB_NONE) {
        stats->reason = fb;
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    if (!f->aggs_valid)
        rc = cw_choose_aggregators(f);
    if (rc != MPI_SUCCESS) {
        stats->reason = CW_FB_OTHER;
        return MPI_SUCCESS;
    }
    struct cw_ctx call;
    memset(&call, 0, sizeof call);
    call.f = f;
    call.shuffle = f->hints.shuffle ? f->hints.shuffle : CW_P2P;
    call.auto_class = -1;
    for (int i = 0; i < CW_MAX_SLOTS; i++)
        call.cycles[i].number = -1;
    int64_t bytes = 0;
    rc = run_call(&call, fh, explicit_offset, offset, buf, count, type, &bytes, stats);
    if (stats->served) {
        /* every rank returns the same result, the worst error anywhere, and
         * learns the slowest rank's time (auto compares variants by it) */
        struct cw_call_result mine = {rc != MPI_SUCCESS ? rc : error_class(call.err), (int64_t)(cw_now() - t_start)};
        struct cw_call_result worst = mine;
        if (call.agreed)
            worst.rc = call.agreed_rc; /* the allgather carried every rank's result */
        else if (NEXT(PMPI_Allreduce)(&mine, &worst, CW_RESULT_INT64S, MPI_INT64_T, MPI_MAX, f->comm) != MPI_SUCCESS)
            worst.rc = mine.rc != MPI_SUCCESS ? mine.rc : MPI_ERR_OTHER;
        rc = (int)worst.rc;
        if (!call.agreed) {
            stats->t_call = (uint64_t)worst.t_call;
            cw_auto_learn(f, &call, (uint64_t)worst.t_call);
        }
        stats->algorithm = call.algorithm;
        stats->shuffle = call.shuffle;
        stats->cycles = call.ncycles;
        stats->aggregators = f->naggs;
        stats->t_setup = call.t_setup;
        stats->t_shuffle = call.t_shuffle;
        stats->t_write = atomic_load(&call.t_write);
        stats->t_wait = call.t_wait;
        stats->auto_explored = call.auto_explored;
        stats->auto_class = call.auto_class < 0 ? -1 : f->autos[call.auto_class].cycles;
        stats->auto_kept = cw_auto_kept(f, &call);
        if (rc == MPI_SUCCESS)
            cw_direct_done(f, fh, explicit_offset, bytes, status);
        if (calls_path && f->rank == 0)
            calls_line(f, &call, stats->t_call);
        f->calls_served++;
    }
    free_ctx(&call);
    return rc;
}

int cw_write_begin(struct cw_file *f, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
                   int count, MPI_Datatype type, struct cw_stats *stats)
{
    int rc = cw_write(f, fh, explicit_offset, offset, buf, count, type, &f->split_status, stats);
    if (stats->served) {
        f->split_pending = 1;
        f->split_rc = rc;
    }
    f->split_direct = stats->served ? 0 : stats->direct_bytes;
    return rc;
}

int64_t cw_split_direct_bytes(struct cw_file *f)
{
    if (!f)
        return 0;
    int64_t bytes = f->split_direct;
    f->split_direct = 0;
    return bytes;
}

int cw_write_end(struct cw_file *f, MPI_Status *status, int *rc)
{
    if (!f || !f->split_pending)
        return 0;
    f->split_pending = 0;
    *rc = f->split_rc;
    if (status != MPI_STATUS_IGNORE && f->split_rc == MPI_SUCCESS)
        *status = f->split_status; /* what the write at _begin set */
    return 1;
}
