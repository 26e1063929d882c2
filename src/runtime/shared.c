/*
 * Files shared by several ranks, at MPI_Finalize (log.c's step 2):
 *   - found in O(log P) steps with one peer each (find_shared_keys): each
 *     (layer, id) key is routed to an owner rank chosen by hash through a
 *     hypercube, combined with its copies on the way; owners keep the keys
 *     held by two or more ranks and those are merged by recursive doubling,
 *     so every rank knows the same sorted shared list;
 *   - their records reduced to rank 0 with a user-defined MPI_Op (a tree,
 *     not a funnel), together with a bitmap of the ranks that touched each
 *     file (OR-ed), both in steps of bounded size, one MPI_Reduce each:
 *     rank 0 alone holds the whole result (the bitmap at most 16 MiB).
 * No rank allocates anything sized by the number of ranks but rank 0's
 * bitmap.
 */
#include "internal.h"
#include "shared.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared keys --------------------------------------------------------*/
struct pario_shared_key *pario_shared_keys;
int pario_nshared;

int pario_shared_index(int layer, uint64_t id, int64_t *minrank)
{
    struct pario_shared_key k = {.id = id, .layer = layer, .minrank = 0};
    int lo = 0, hi = pario_nshared - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        struct pario_shared_key *m = &pario_shared_keys[mid];
        int c = (m->layer != k.layer) ? (m->layer < k.layer ? -1 : 1)
                                      : (m->id != k.id ? (m->id < k.id ? -1 : 1) : 0);
        if (c == 0) {
            if (minrank)
                *minrank = m->minrank;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* A (layer, id) key on its way to its owner rank, with the ranks seen so far
 * (1, or 2 for "two or more") and the lowest of them. */
struct route_key {
    uint64_t id;
    int32_t layer;
    int32_t nranks;
    int64_t minrank;
};

struct key_list {
    struct route_key *k;
    int n, cap;
    int oom;
};

static void list_push(struct key_list *l, const struct route_key *k)
{
    if (l->oom)
        return;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        struct route_key *p = pario_realloc(l->k, sizeof *p * (size_t)cap);
        if (!p) {
            l->oom = 1;
            return;
        }
        l->k = p;
        l->cap = cap;
    }
    l->k[l->n++] = *k;
}

static int route_cmp(const struct route_key *x, const struct route_key *y)
{
    if (x->layer != y->layer)
        return x->layer < y->layer ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return 0;
}
static int route_qcmp(const void *a, const void *b) { return route_cmp(a, b); }

static void collect_key(struct pario_record *r, void *arg)
{
    struct route_key k = {.id = r->id, .layer = r->layer, .nranks = 1, .minrank = pario_core.rank};
    list_push(arg, &k);
}

/* The union of two sorted lists, sorted; equal keys (held by different
 * ranks) are combined. */
static void merge_into(struct key_list *out, const struct route_key *a, int na, const struct route_key *b, int nb)
{
    int i = 0, j = 0;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : route_cmp(&a[i], &b[j]);
        if (c < 0) {
            list_push(out, &a[i++]);
        } else if (c > 0) {
            list_push(out, &b[j++]);
        } else {
            struct route_key k = a[i++];
            const struct route_key *o = &b[j++];
            k.nranks = k.nranks + o->nranks >= 2 ? 2 : k.nranks + o->nranks;
            if (o->minrank < k.minrank)
                k.minrank = o->minrank;
            list_push(out, &k);
        }
    }
}

/* The owner of a key among the first p2 ranks (p2 a power of two). */
static int owner_of(const struct route_key *k, int p2)
{
    uint64_t h = k->id ^ ((uint64_t)k->layer * 0x9e3779b97f4a7c15ull);
    h ^= h >> 29;
    return (int)(h & (uint64_t)(p2 - 1));
}

/* Message tags of the steps below (the communicator is the runtime's own). */
enum { TAG_ROUTE = 1, TAG_SHARED, TAG_EXTRA_KEYS, TAG_EXTRA_SHARED };

/* Receive the keys `peer` sends with `tag` (allocated, *got of them), the
 * count read from the probed message. Short of memory, the message is still
 * received (and dropped). */
static int recv_keys(MPI_Comm comm, MPI_Datatype kt, int peer, int tag, struct route_key **recv, int *got)
{
    MPI_Status st;
    int theirs = 0;
    *got = 0;
    int rc = NEXT(PMPI_Probe)(peer, tag, comm, &st);
    if (rc == MPI_SUCCESS)
        rc = NEXT(PMPI_Get_count)(&st, kt, &theirs);
    *recv = pario_malloc(sizeof **recv * (size_t)(theirs > 0 ? theirs : 1));
    struct route_key dummy;
    int rc2 = NEXT(PMPI_Recv)(*recv ? *recv : &dummy, *recv ? theirs : 0, kt, peer, tag, comm, MPI_STATUS_IGNORE);
    if (!*recv)
        return MPI_ERR_NO_MEM;
    *got = theirs;
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Send `n` keys to `peer` and receive its keys: one message each way. */
static int swap_keys(MPI_Comm comm, MPI_Datatype kt, int peer, int tag, const struct route_key *send, int n,
                     struct route_key **recv, int *got)
{
    MPI_Request req;
    int rc = NEXT(PMPI_Isend)(send, n, kt, peer, tag, comm, &req);
    if (rc != MPI_SUCCESS) {
        *recv = NULL;
        *got = 0;
        return rc;
    }
    int rc2 = recv_keys(comm, kt, peer, tag, recv, got);
    int rc3 = NEXT(PMPI_Wait)(&req, MPI_STATUS_IGNORE);
    return rc2 != MPI_SUCCESS ? rc2 : rc3;
}

/* Replace `l` by its union with the `n` keys of `got`, which it frees. */
static void absorb(struct key_list *l, struct route_key *got, int n)
{
    struct key_list merged = {0};
    merge_into(&merged, l->k, l->n, got, n);
    pario_free(got);
    pario_free(l->k);
    merged.oom |= l->oom;
    *l = merged;
}

/* Replace `l` by its union with the keys `peer` sends while it is sent `send`
 * (which may be l's own keys). */
static int swap_and_merge(MPI_Comm comm, MPI_Datatype kt, int peer, int tag, struct key_list *l,
                          const struct route_key *send, int nsend)
{
    struct route_key *got;
    int ngot;
    int rc = swap_keys(comm, kt, peer, tag, send, nsend, &got, &ngot);
    absorb(l, got, ngot);
    return rc;
}

/*
 * The keys held by two or more ranks, into pario_shared_keys (the same sorted
 * list on every rank).  O(log P) steps, each with one peer, on the first p2
 * ranks (the largest power of two <= P; rank p2 + i hands its keys to rank i
 * first and gets the answer from it last):
 *   1. routing: in step b each rank keeps the keys whose owner (a hash of the
 *      key) agrees with its own rank in bit b and swaps the others with rank
 *      ^ (1 << b); equal keys are combined on the way, so a rank holds each
 *      key once, however many ranks share it, and after log2(p2) steps the
 *      owner holds every copy of its keys, combined: the ranks that hold it
 *      (1 or "2 or more") and the lowest of them;
 *   2. recursive doubling: each owner's shared keys are swapped and merged
 *      with the same peers until every rank holds them all.
 * Memory and messages are bounded by the keys a rank holds and the shared
 * keys, not by P.  Returns 0 or an MPI error (then no key is shared, on every
 * rank); *overflowed: the records all ranks could not hold, summed; *log_oom:
 * this rank's flag in, the sum over the ranks out.
 */
static int find_shared_keys(MPI_Comm comm, int rank, int nprocs, int64_t *overflowed, int64_t *log_oom)
{
    struct key_list l = {0};
    for (int lay = 0; lay < PARIO_NLAYERS; lay++)
        pario_foreach_record(lay, collect_key, &l);
    if (l.n > 1)
        qsort(l.k, (size_t)l.n, sizeof *l.k, route_qcmp);
    MPI_Datatype kt;
    NEXT(PMPI_Type_contiguous)(sizeof(struct route_key), MPI_BYTE, &kt);
    NEXT(PMPI_Type_commit)(&kt);
    int p2 = 1;
    while (p2 <= nprocs / 2)
        p2 *= 2;
    int bad = 0;
    struct key_list shared = {0};
    if (rank >= p2) {
        /* an extra rank: its keys go to rank - p2, the shared list comes back */
        bad |= NEXT(PMPI_Send)(l.k, l.n, kt, rank - p2, TAG_EXTRA_KEYS, comm) != MPI_SUCCESS;
        int n = 0;
        bad |= recv_keys(comm, kt, rank - p2, TAG_EXTRA_SHARED, &shared.k, &n) != MPI_SUCCESS;
        shared.n = shared.cap = n;
    } else {
        if (rank + p2 < nprocs) {
            struct route_key *got;
            int n = 0;
            bad |= recv_keys(comm, kt, rank + p2, TAG_EXTRA_KEYS, &got, &n) != MPI_SUCCESS;
            absorb(&l, got, n);
        }
        for (int bit = 1; bit < p2; bit <<= 1) {
            /* keep what stays on this side of bit `bit`, in place; send the rest */
            struct key_list give = {0};
            int keep = 0;
            for (int i = 0; i < l.n; i++) {
                if ((owner_of(&l.k[i], p2) & bit) == (rank & bit))
                    l.k[keep++] = l.k[i];
                else
                    list_push(&give, &l.k[i]);
            }
            l.n = keep;
            bad |= give.oom;
            bad |= swap_and_merge(comm, kt, rank ^ bit, TAG_ROUTE, &l, give.k, give.n) != MPI_SUCCESS;
            pario_free(give.k);
        }
        for (int i = 0; i < l.n; i++)
            if (l.k[i].nranks >= 2)
                list_push(&shared, &l.k[i]);
        for (int bit = 1; bit < p2; bit <<= 1)
            bad |= swap_and_merge(comm, kt, rank ^ bit, TAG_SHARED, &shared, shared.k, shared.n) != MPI_SUCCESS;
        if (rank + p2 < nprocs) {
            bad |= NEXT(PMPI_Send)(shared.k, shared.n, kt, rank + p2, TAG_EXTRA_SHARED, comm) != MPI_SUCCESS;
        }
    }
    bad |= l.oom | shared.oom;
    NEXT(PMPI_Type_free)(&kt);
    pario_free(l.k);
    pario_nshared = 0;
    pario_shared_keys = pario_malloc(sizeof *pario_shared_keys * (size_t)(shared.n ? shared.n : 1));
    bad |= !pario_shared_keys;
    /* with the ranks' overflowed records and log_oom flags, summed on the way:
     * two collectives less */
    int64_t mine[3] = {bad, pario_core.records_overflowed, *log_oom}, sums[3] = {1, 0, 1};
    NEXT(PMPI_Allreduce)(mine, sums, 3, MPI_INT64_T, MPI_SUM, comm);
    int anybad = sums[0] != 0;
    *overflowed = sums[1];
    *log_oom = sums[2];
    if (!anybad)
        for (int i = 0; i < shared.n; i++)
            pario_shared_keys[pario_nshared++] = (struct pario_shared_key){
                .id = shared.k[i].id, .layer = shared.k[i].layer, .minrank = shared.k[i].minrank};
    pario_free(shared.k);
    return anybad ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* ---- reduction of shared records ---------------------------------------*/

static void elem_combine(const struct pario_shared_elem *a, struct pario_shared_elem *b)
{
    const struct pario_layer_desc *d = pario_layers[a->layer];
    if (a->counters[d->c_nranks] == 0)
        return;
    if (b->counters[d->c_nranks] == 0) {
        *b = *a;
        return;
    }
    int fastest = a->fcounters[d->f_fastest_time] < b->fcounters[d->f_fastest_time] ||
                  (a->fcounters[d->f_fastest_time] == b->fcounters[d->f_fastest_time] &&
                   a->counters[d->c_fastest_rank] < b->counters[d->c_fastest_rank]);
    int slowest = a->fcounters[d->f_slowest_time] > b->fcounters[d->f_slowest_time] ||
                  (a->fcounters[d->f_slowest_time] == b->fcounters[d->f_slowest_time] &&
                   a->counters[d->c_slowest_rank] < b->counters[d->c_slowest_rank]);
    for (int i = 0; i < d->ncounters; i++) {
        if (i == d->c_fastest_rank || i == d->c_fastest_bytes || i == d->c_slowest_rank ||
            i == d->c_slowest_bytes)
            continue;
        if (d->c_max_reduced[i]) {
            if (a->counters[i] > b->counters[i])
                b->counters[i] = a->counters[i];
        } else {
            b->counters[i] += a->counters[i];
        }
    }
    if (fastest) {
        b->counters[d->c_fastest_rank] = a->counters[d->c_fastest_rank];
        b->counters[d->c_fastest_bytes] = a->counters[d->c_fastest_bytes];
        b->fcounters[d->f_fastest_time] = a->fcounters[d->f_fastest_time];
    }
    if (slowest) {
        b->counters[d->c_slowest_rank] = a->counters[d->c_slowest_rank];
        b->counters[d->c_slowest_bytes] = a->counters[d->c_slowest_bytes];
        b->fcounters[d->f_slowest_time] = a->fcounters[d->f_slowest_time];
    }
    for (int i = 0; i < d->nfcounters; i++) {
        if (i == d->f_fastest_time || i == d->f_slowest_time || i == d->f_var_time ||
            i == d->f_var_bytes)
            continue;
        if (i == d->f_open_start) {
            if (a->fcounters[i] > 0 && (b->fcounters[i] == 0 || a->fcounters[i] < b->fcounters[i]))
                b->fcounters[i] = a->fcounters[i];
        } else if (i == d->f_close_end || i == d->f_max_read_time || i == d->f_max_write_time) {
            if (a->fcounters[i] > b->fcounters[i])
                b->fcounters[i] = a->fcounters[i];
        } else {
            b->fcounters[i] += a->fcounters[i];
        }
    }
    b->sum_t += a->sum_t;
    b->sum_t2 += a->sum_t2;
    b->sum_b += a->sum_b;
    b->sum_b2 += a->sum_b2;
}

/* Shared records reduced per step, and bitmap bytes per step: what a rank
 * other than 0 holds at once. */
#define ELEM_CHUNK 64
#define BITMAP_CHUNK ((size_t)64 << 10)

/* One step of the reduction, one MPI_Reduce of one opaque value: up to
 * ELEM_CHUNK records, then up to BITMAP_CHUNK bytes of the bitmap right after
 * them (records combined, bits OR-ed).  Every rank runs the same steps, and
 * the operator reads the step's shape from here. */
#define STEP_BYTES (ELEM_CHUNK * sizeof(struct pario_shared_elem) + BITMAP_CHUNK)
static int step_elems;
static size_t step_bits;

static void reduce_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    (void)len; /* always one value */
    struct pario_shared_elem *a = in, *b = inout;
    for (int i = 0; i < step_elems; i++)
        elem_combine(&a[i], &b[i]);
    const unsigned char *abits = (const unsigned char *)(a + step_elems);
    unsigned char *bbits = (unsigned char *)(b + step_elems);
    for (size_t i = 0; i < step_bits; i++)
        bbits[i] |= abits[i];
}

/* This rank's records of shared files, by shared index. */
struct mine {
    struct pario_record **rec; /* pario_nshared entries, NULL where not held */
    int oom;
};
static void find_mine(struct pario_record *r, void *arg)
{
    struct mine *m = arg;
    int i = pario_shared_index(r->layer, r->id, NULL);
    if (i >= 0)
        m->rec[i] = r;
}

static void fill_elem(struct pario_shared_elem *e, int layer, const struct pario_record *r)
{
    memset(e, 0, sizeof *e);
    e->layer = layer;
    if (!r)
        return;
    const struct pario_layer_desc *d = pario_layers[r->layer];
    memcpy(e->counters, r->counters, sizeof e->counters);
    memcpy(e->fcounters, r->fcounters, sizeof e->fcounters);
    double t = r->fcounters[d->f_fastest_time], b = (double)r->counters[d->c_fastest_bytes];
    e->sum_t = t;
    e->sum_t2 = t * t;
    e->sum_b = b;
    e->sum_b2 = b * b;
}

void pario_shared_reduce(MPI_Comm comm, int rank, int nprocs, int log_oom, struct pario_shared_reduction *out)
{
    double t0 = NEXT(PMPI_Wtime)();
    int64_t overflowed = 0, oom = log_oom;
    find_shared_keys(comm, rank, nprocs, &overflowed, &oom);
    double found = NEXT(PMPI_Wtime)() - t0;
    int n = pario_nshared ? pario_nshared : 1;
    size_t bm_bytes = ((size_t)nprocs + 7) / 8;
    if ((size_t)pario_nshared * bm_bytes > ((size_t)16 << 20))
        bm_bytes = 0; /* too many shared files x ranks: keep counts only */
    size_t bm_size = (size_t)n * (bm_bytes ? bm_bytes : 1);
    *out = (struct pario_shared_reduction){
        .result = rank == 0 ? pario_calloc((size_t)n, sizeof *out->result) : NULL,
        .bitmap = rank == 0 ? pario_calloc(bm_size, 1) : NULL,
        .bm_bytes = bm_bytes,
        .find_seconds = found,
        .records_overflowed = overflowed,
        .log_oom = oom != 0,
    };
    if (pario_nshared == 0)
        return;
    struct mine m = {.rec = pario_calloc((size_t)n, sizeof *m.rec)};
    if (m.rec)
        for (int l = 0; l < PARIO_NLAYERS; l++)
            pario_foreach_record(l, find_mine, &m);
    /* static: no allocation to fail mid-collective; `got` is touched on rank 0 alone */
    static _Alignas(struct pario_shared_elem) unsigned char step[STEP_BYTES], got[STEP_BYTES];
    MPI_Op op;
    NEXT(PMPI_Op_create)(reduce_op, 1, &op);
    /* A rank short of memory for m.rec sends empty records: the reduction
     * stays collective, and the result misses that rank's share.  The
     * bitmap: this rank's bit in the byte rank / 8 of each shared file's
     * bm_bytes. */
    size_t total = (size_t)pario_nshared * bm_bytes;
    for (size_t c0 = 0, b0 = 0; c0 < (size_t)pario_nshared || b0 < total; c0 += ELEM_CHUNK, b0 += BITMAP_CHUNK) {
        size_t cn = c0 < (size_t)pario_nshared ? (size_t)pario_nshared - c0 : 0;
        size_t bn = b0 < total ? total - b0 : 0;
        step_elems = (int)(cn < ELEM_CHUNK ? cn : ELEM_CHUNK);
        step_bits = bn < BITMAP_CHUNK ? bn : BITMAP_CHUNK;
        struct pario_shared_elem *elems = (struct pario_shared_elem *)step;
        unsigned char *bits = (unsigned char *)(elems + step_elems);
        for (int i = 0; i < step_elems; i++)
            fill_elem(&elems[i], (int)pario_shared_keys[c0 + (size_t)i].layer, m.rec ? m.rec[c0 + (size_t)i] : NULL);
        memset(bits, 0, step_bits);
        if (step_bits && m.rec) {
            size_t first = b0 / bm_bytes, last = (b0 + step_bits - 1) / bm_bytes;
            for (size_t i = first; i <= last; i++) {
                size_t at = i * bm_bytes + (size_t)rank / 8;
                if (m.rec[i] && at >= b0 && at < b0 + step_bits)
                    bits[at - b0] |= (unsigned char)(1u << (rank % 8));
            }
        }
        size_t elem_bytes = (size_t)step_elems * sizeof *elems;
        MPI_Datatype st;
        NEXT(PMPI_Type_contiguous)((int)(elem_bytes + step_bits), MPI_BYTE, &st);
        NEXT(PMPI_Type_commit)(&st);
        NEXT(PMPI_Reduce)(step, got, 1, st, op, 0, comm);
        NEXT(PMPI_Type_free)(&st);
        if (rank == 0) {
            memcpy(out->result + c0, got, elem_bytes);
            memcpy(out->bitmap + b0, got + elem_bytes, step_bits);
        }
    }
    NEXT(PMPI_Op_free)(&op);
    pario_free(m.rec);
}

void pario_shared_free(struct pario_shared_reduction *r)
{
    pario_free(r->result);
    pario_free(r->bitmap);
    pario_free(pario_shared_keys);
    pario_shared_keys = NULL;
    pario_nshared = 0;
}
