/*
 * The shuffle of one cycle: every rank's pieces that fall in an aggregator's
 * window this cycle go into that aggregator's buffer.
 *   p2p        Irecv with an hindexed type straight into the buffer, Isend
 *              from the caller's memory (contiguous, or an hindexed type
 *              over its segments: no packing copy);
 *   rma-fence  MPI_Put into the aggregators' windows between two fences
 *              (the fences are the schedule's, in schedule.c);
 *   rma-lock   the aggregator sends a zero-byte "go" when its buffer is
 *              ready, the sender puts under a shared passive-target lock,
 *              unlocks (the data is then at the target) and sends "done".
 * Holes inside the data range of a window are read first (read-modify-
 * write, as ROMIO does), so existing bytes survive.
 */
#include "cw_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_SPAN 16384

static int tag_data(int64_t c) { return (int)(c % TAG_SPAN); }
static int tag_go(int64_t c) { return (int)(2 * (c % TAG_SPAN)); }
static int tag_done(int64_t c) { return (int)(2 * (c % TAG_SPAN) + 1); }

/* The window [lo, hi) of aggregator a in cycle c; empty when lo >= hi. */
static void agg_window(const struct cw_ctx *call, int a, int64_t c, int64_t *lo, int64_t *hi)
{
    *lo = call->agg_start[a] + c * call->buf_bytes;
    *hi = *lo + call->buf_bytes < call->agg_end[a] ? *lo + call->buf_bytes : call->agg_end[a];
}

/* Pieces list[cur..last) clipped to [lo, hi): how many (count only when out
 * is NULL); advances *cur / *skip when out is not NULL. */
static int64_t clip(const struct cw_piece *list, int64_t last, int64_t *cur, int64_t *skip, int64_t lo,
                    int64_t hi, struct cw_piece *out)
{
    int64_t i = *cur, s = *skip, n = 0;
    while (i < last) {
        int64_t off = list[i].off + s, len = list[i].len - s;
        if (off >= hi)
            break;
        if (off < lo) { /* cannot happen: windows sweep forward from the first piece */
            int64_t d = lo - off < len ? lo - off : len;
            off += d;
            len -= d;
            s += d;
            if (len == 0) {
                i++;
                s = 0;
                continue;
            }
        }
        int64_t take = off + len <= hi ? len : hi - off;
        if (out)
            out[n] = (struct cw_piece){off, take, list[i].pos + s};
        n++;
        if (take == len) {
            i++;
            s = 0;
        } else {
            s += take;
            break;
        }
    }
    if (out) {
        *cur = i;
        *skip = s;
    }
    return n;
}

static int cmp_piece(const void *a, const void *b)
{
    int64_t x = ((const struct cw_piece *)a)->off, y = ((const struct cw_piece *)b)->off;
    return (x > y) - (x < y);
}

/* Are there bytes in [first, end) that no piece covers? */
static int has_holes(const struct cw_ctx *call, const struct cw_cycle *cy)
{
    int64_t n = cy->src_first[call->f->nprocs], sum = 0;
    int sources = 0;
    for (int r = 0; r < call->f->nprocs; r++)
        sources += cy->src_first[r + 1] > cy->src_first[r];
    for (int64_t i = 0; i < n; i++)
        sum += cy->src_pieces[i].len;
    if (sources <= 1) /* one view: sorted, disjoint */
        return sum < cy->end - cy->first;
    struct cw_piece *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return 1; /* reading costs time, never bytes */
    memcpy(s, cy->src_pieces, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_piece);
    int64_t reach = cy->first;
    int holes = 0;
    for (int64_t i = 0; i < n && !holes; i++) {
        if (s[i].off > reach)
            holes = 1;
        if (s[i].off + s[i].len > reach)
            reach = s[i].off + s[i].len;
    }
    free(s);
    return holes || reach < cy->end;
}

static void read_holes(struct cw_ctx *call, struct cw_cycle *cy)
{
    uint64_t t0 = cw_now();
    char *p = cy->bufp + (cy->first - cy->wlo);
    int64_t left = cy->end - cy->first, off = cy->first;
    while (left > 0) {
        ssize_t n = pread(call->f->fd, p, (size_t)left, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && !call->err)
            call->err = errno;
        if (n <= 0)
            break;
        p += n;
        off += n;
        left -= n;
    }
    if (left > 0)
        memset(p, 0, (size_t)left); /* beyond the end of the file: zeros, as a sparse file reads */
    atomic_fetch_add(&call->t_write, cw_now() - t0);
}

int cw_cycle_prepare(struct cw_ctx *call, struct cw_cycle *cy)
{
    struct cw_file *f = call->f;
    int nagg = f->naggs, np = f->nprocs;
    /* sender side: my pieces for each aggregator's window */
    cy->dst_first = calloc((size_t)nagg + 1, sizeof *cy->dst_first);
    if (!cy->dst_first)
        return MPI_ERR_NO_MEM;
    for (int a = 0; a < nagg; a++) {
        int64_t lo, hi, cur = call->my_cur[a], skip = call->my_skip[a];
        agg_window(call, a, cy->number, &lo, &hi);
        int64_t n = lo < hi ? clip(call->mine, call->my_first[a + 1], &cur, &skip, lo, hi, NULL) : 0;
        cy->dst_first[a + 1] = cy->dst_first[a] + n;
    }
    if (cy->dst_first[nagg] > 0) {
        cy->dst_pieces = malloc((size_t)cy->dst_first[nagg] * sizeof *cy->dst_pieces);
        if (!cy->dst_pieces)
            return MPI_ERR_NO_MEM;
        for (int a = 0; a < nagg; a++) {
            int64_t lo, hi;
            agg_window(call, a, cy->number, &lo, &hi);
            if (lo < hi)
                clip(call->mine, call->my_first[a + 1], &call->my_cur[a], &call->my_skip[a], lo, hi,
                     cy->dst_pieces + cy->dst_first[a]);
        }
    }
    if (f->my_agg < 0)
        return MPI_SUCCESS;
    /* aggregator side: every source's pieces in my window */
    agg_window(call, f->my_agg, cy->number, &cy->wlo, &cy->whi);
    cy->src_first = calloc((size_t)np + 1, sizeof *cy->src_first);
    if (!cy->src_first)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < np; r++) {
        int64_t cur = call->peer_cur[r], skip = call->peer_skip[r];
        int64_t n = cy->wlo < cy->whi ? clip(call->peer_pieces, call->peer_first[r + 1], &cur, &skip, cy->wlo, cy->whi, NULL)
                                      : 0;
        cy->src_first[r + 1] = cy->src_first[r] + n;
    }
    int64_t total = cy->src_first[np];
    if (total == 0)
        return MPI_SUCCESS;
    cy->src_pieces = malloc((size_t)total * sizeof *cy->src_pieces);
    if (!cy->src_pieces)
        return MPI_ERR_NO_MEM;
    cy->first = INT64_MAX;
    cy->end = 0;
    for (int r = 0; r < np; r++) {
        struct cw_piece *out = cy->src_pieces + cy->src_first[r];
        int64_t n = clip(call->peer_pieces, call->peer_first[r + 1], &call->peer_cur[r], &call->peer_skip[r], cy->wlo, cy->whi, out);
        for (int64_t i = 0; i < n; i++) {
            if (out[i].off < cy->first)
                cy->first = out[i].off;
            if (out[i].off + out[i].len > cy->end)
                cy->end = out[i].off + out[i].len;
        }
    }
    cy->has_data = 1;
    if (has_holes(call, cy))
        read_holes(call, cy);
    return MPI_SUCCESS;
}

static int add_req(struct cw_cycle *cy, MPI_Request **slot)
{
    if (cy->nreqs == cy->cap_reqs) {
        int cap = cy->cap_reqs ? 2 * cy->cap_reqs : 16;
        MPI_Request *r = realloc(cy->reqs, (size_t)cap * sizeof *r);
        if (!r)
            return MPI_ERR_NO_MEM;
        cy->reqs = r;
        cy->cap_reqs = cap;
    }
    *slot = &cy->reqs[cy->nreqs++];
    **slot = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

static int keep_type(struct cw_cycle *cy, MPI_Datatype t)
{
    if (cy->ntypes == cy->cap_types) {
        int cap = cy->cap_types ? 2 * cy->cap_types : 16;
        MPI_Datatype *n = realloc(cy->types, (size_t)cap * sizeof *n);
        if (!n) {
            NEXT(PMPI_Type_free)(&t);
            return MPI_ERR_NO_MEM;
        }
        cy->types = n;
        cy->cap_types = cap;
    }
    cy->types[cy->ntypes++] = t;
    return MPI_SUCCESS;
}

/* An hindexed type of n byte blocks, committed and kept on the cycle (freed
 * with it); frees lens and disps, which may be NULL (malloc failed). */
static int kept_hindexed(struct cw_cycle *cy, int64_t n, int *lens, MPI_Aint *disps, MPI_Datatype *type)
{
    int rc = MPI_ERR_NO_MEM;
    if (lens && disps) {
        rc = NEXT(PMPI_Type_create_hindexed)((int)n, lens, disps, MPI_BYTE, type);
        if (rc == MPI_SUCCESS)
            rc = NEXT(PMPI_Type_commit)(type);
        if (rc == MPI_SUCCESS)
            rc = keep_type(cy, *type);
    }
    free(lens);
    free(disps);
    return rc;
}

/* An hindexed type of pieces at (off - base) bytes, or count bytes when one
 * piece (*type = MPI_BYTE, *disp0 = its displacement). */
static int pieces_type(struct cw_cycle *cy, const struct cw_piece *p, int64_t n, int64_t base,
                       MPI_Datatype *type, int *count, MPI_Aint *disp0)
{
    if (n == 1) {
        *type = MPI_BYTE;
        *count = (int)p[0].len;
        *disp0 = (MPI_Aint)(p[0].off - base);
        return MPI_SUCCESS;
    }
    int *lens = malloc((size_t)n * sizeof *lens);
    MPI_Aint *disps = malloc((size_t)n * sizeof *disps);
    for (int64_t i = 0; lens && disps && i < n; i++) {
        lens[i] = (int)p[i].len;
        disps[i] = (MPI_Aint)(p[i].off - base);
    }
    *count = 1;
    *disp0 = 0;
    return kept_hindexed(cy, n, lens, disps, type);
}

/* The caller's bytes [s_lo, s_hi) of its data stream, as (addr, count, type). */
static int stream_type(struct cw_ctx *call, struct cw_cycle *cy, int64_t s_lo, int64_t s_hi, const void **addr,
                       int *count, MPI_Datatype *type)
{
    if (call->mbase) {
        *addr = call->mbase + s_lo;
        *count = (int)(s_hi - s_lo);
        *type = MPI_BYTE;
        return MPI_SUCCESS;
    }
    int64_t lo = cw_segment_at(call->mpos, call->mem.nseg, s_lo), n = 0;
    for (int64_t i = lo; i < call->mem.nseg && call->mpos[i] < s_hi; i++)
        n++;
    int *lens = malloc((size_t)n * sizeof *lens);
    MPI_Aint *disps = malloc((size_t)n * sizeof *disps);
    MPI_Aint base;
    NEXT(PMPI_Get_address)(call->buf, &base);
    for (int64_t k = 0, i = lo; lens && disps && k < n; k++, i++) {
        int64_t a = call->mpos[i] > s_lo ? call->mpos[i] : s_lo;
        int64_t b = call->mpos[i] + call->mem.len[i] < s_hi ? call->mpos[i] + call->mem.len[i] : s_hi;
        disps[k] = MPI_Aint_add(base, (MPI_Aint)(call->mem.off[i] + (a - call->mpos[i])));
        lens[k] = (int)(b - a);
    }
    *addr = MPI_BOTTOM;
    *count = 1;
    return kept_hindexed(cy, n, lens, disps, type);
}

/* My pieces for aggregator a this cycle: origin (addr, count, type). */
static int origin_of(struct cw_ctx *call, struct cw_cycle *cy, int a, const void **addr, int *count,
                     MPI_Datatype *type)
{
    const struct cw_piece *p = cy->dst_pieces + cy->dst_first[a];
    int64_t n = cy->dst_first[a + 1] - cy->dst_first[a];
    return stream_type(call, cy, p[0].pos, p[n - 1].pos + p[n - 1].len, addr, count, type);
}

/* Put my pieces for aggregator a into its window. */
static int put_to(struct cw_ctx *call, struct cw_cycle *cy, int a)
{
    const void *addr;
    int count, tcount, rc;
    MPI_Datatype type, ttype;
    MPI_Aint tdisp;
    int64_t lo, hi;
    agg_window(call, a, cy->number, &lo, &hi);
    rc = origin_of(call, cy, a, &addr, &count, &type);
    if (rc == MPI_SUCCESS)
        rc = pieces_type(cy, cy->dst_pieces + cy->dst_first[a], cy->dst_first[a + 1] - cy->dst_first[a], lo, &ttype,
                         &tcount, &tdisp);
    if (rc == MPI_SUCCESS)
        rc = NEXT(PMPI_Put)(addr, count, type, call->f->aggs[a], (MPI_Aint)cy->slot * call->buf_bytes + tdisp, tcount, ttype,
                      call->f->win);
    return rc;
}

int cw_cycle_post(struct cw_ctx *call, struct cw_cycle *cy)
{
    struct cw_file *f = call->f;
    uint64_t t0 = cw_now();
    int rc = MPI_SUCCESS;
    MPI_Request *rq;
    if (f->my_agg >= 0 && cy->has_data) {
        for (int r = 0; r < f->nprocs && rc == MPI_SUCCESS; r++) {
            int64_t n = cy->src_first[r + 1] - cy->src_first[r];
            if (n == 0)
                continue;
            if (call->shuffle == CW_P2P) {
                MPI_Datatype type;
                int count;
                MPI_Aint d0;
                rc = pieces_type(cy, cy->src_pieces + cy->src_first[r], n, cy->wlo, &type, &count, &d0);
                if (rc == MPI_SUCCESS)
                    rc = add_req(cy, &rq);
                if (rc == MPI_SUCCESS)
                    rc = NEXT(PMPI_Irecv)(cy->bufp + d0, count, type, r, tag_data(cy->number), f->comm, rq);
            } else { /* rma-lock: go now, done later */
                rc = add_req(cy, &rq);
                if (rc == MPI_SUCCESS)
                    rc = NEXT(PMPI_Isend)(NULL, 0, MPI_BYTE, r, tag_go(cy->number), f->comm, rq);
                if (rc == MPI_SUCCESS)
                    rc = add_req(cy, &rq);
                if (rc == MPI_SUCCESS)
                    rc = NEXT(PMPI_Irecv)(NULL, 0, MPI_BYTE, r, tag_done(cy->number), f->comm, rq);
            }
        }
    }
    int nagg = f->naggs;
    if (call->shuffle == CW_RMA_LOCK && cy->dst_first[nagg] > 0) {
        cy->go = malloc((size_t)nagg * sizeof *cy->go);
        cy->go_agg = malloc((size_t)nagg * sizeof *cy->go_agg);
        if (!cy->go || !cy->go_agg)
            rc = MPI_ERR_NO_MEM;
    }
    for (int a = 0; a < nagg && rc == MPI_SUCCESS; a++) {
        if (cy->dst_first[a + 1] == cy->dst_first[a])
            continue;
        if (call->shuffle == CW_P2P) {
            const void *addr;
            int count;
            MPI_Datatype type;
            rc = origin_of(call, cy, a, &addr, &count, &type);
            if (rc == MPI_SUCCESS)
                rc = add_req(cy, &rq);
            if (rc == MPI_SUCCESS)
                rc = NEXT(PMPI_Isend)(addr, count, type, f->aggs[a], tag_data(cy->number), f->comm, rq);
        } else {
            cy->go_agg[cy->ngo] = a;
            rc = NEXT(PMPI_Irecv)(NULL, 0, MPI_BYTE, f->aggs[a], tag_go(cy->number), f->comm, &cy->go[cy->ngo]);
            cy->ngo++;
        }
    }
    call->t_shuffle += cw_now() - t0;
    return rc;
}

int cw_cycle_test(struct cw_ctx *call, struct cw_cycle *cy, int *done)
{
    int rc = MPI_SUCCESS, pending = 0;
    for (int i = 0; i < cy->ngo && rc == MPI_SUCCESS; i++) {
        if (cy->go[i] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        rc = NEXT(PMPI_Test)(&cy->go[i], &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || !flag) {
            pending = 1;
            continue;
        }
        int a = cy->go_agg[i], target = call->f->aggs[a];
        MPI_Request *rq;
        rc = NEXT(PMPI_Win_lock)(MPI_LOCK_SHARED, target, 0, call->f->win);
        if (rc == MPI_SUCCESS)
            rc = put_to(call, cy, a);
        if (rc == MPI_SUCCESS)
            rc = NEXT(PMPI_Win_unlock)(target, call->f->win);
        if (rc == MPI_SUCCESS)
            rc = add_req(cy, &rq);
        if (rc == MPI_SUCCESS)
            rc = NEXT(PMPI_Isend)(NULL, 0, MPI_BYTE, target, tag_done(cy->number), call->f->comm, rq);
    }
    /* one by one, from the first not yet complete: a completed request is
     * MPI_REQUEST_NULL, so each is finished only once */
    int flag = 1;
    while (rc == MPI_SUCCESS && cy->ntested < cy->nreqs && flag) {
        rc = NEXT(PMPI_Test)(&cy->reqs[cy->ntested], &flag, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && flag)
            cy->ntested++;
    }
    *done = rc != MPI_SUCCESS || (flag && !pending);
    if (*done)
        cy->shuffled = 1;
    return rc; /* the caller times the wait */
}

int cw_cycle_puts(struct cw_ctx *call, struct cw_cycle *cy)
{
    uint64_t t0 = cw_now();
    int rc = MPI_SUCCESS;
    for (int a = 0; a < call->f->naggs && rc == MPI_SUCCESS; a++)
        if (cy->dst_first[a + 1] > cy->dst_first[a])
            rc = put_to(call, cy, a);
    call->t_shuffle += cw_now() - t0;
    return rc;
}

void cw_cycle_release(struct cw_cycle *cy)
{
    for (int i = 0; i < cy->ntypes; i++)
        NEXT(PMPI_Type_free)(&cy->types[i]);
    free(cy->types);
    free(cy->reqs);
    free(cy->go);
    free(cy->go_agg);
    free(cy->src_first);
    free(cy->src_pieces);
    free(cy->dst_first);
    free(cy->dst_pieces);
    memset(cy, 0, sizeof *cy);
    cy->number = -1;
}

int cw_window_for(struct cw_ctx *call, int64_t bytes)
{
    struct cw_file *f = call->f;
    if (f->win != MPI_WIN_NULL && f->win_size == bytes)
        return MPI_SUCCESS;
    if (f->win != MPI_WIN_NULL) {
        NEXT(PMPI_Win_free)(&f->win);
        f->buf = NULL;
        f->buf_size = 0;
    }
    void *base = NULL;
    MPI_Aint mine = f->my_agg >= 0 ? (MPI_Aint)bytes : 0;
    int rc = NEXT(PMPI_Win_allocate)(mine, 1, MPI_INFO_NULL, f->comm, &base, &f->win);
    if (rc != MPI_SUCCESS) {
        f->win = MPI_WIN_NULL;
        return rc;
    }
    f->win_size = bytes;
    f->buf = f->my_agg >= 0 ? base : NULL;
    f->buf_size = f->my_agg >= 0 ? bytes : 0;
    return MPI_SUCCESS;
}
