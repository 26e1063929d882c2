/*
 * Files shared by several ranks, at MPI_Finalize (log.c's step 2):
 *   - found without a gather to rank 0: each (layer, id) key is sent to an
 *     owner rank chosen by hash (alltoallv), owners count the ranks holding
 *     it, and the keys held by two or more ranks are allgathered, so every
 *     rank knows the same sorted shared list;
 *   - their records reduced to rank 0 with a user-defined MPI_Op (a tree,
 *     not a funnel), together with a bitmap of the ranks that touched each
 *     file (MPI_BOR).
 */
#include "internal.h"
#include "shared.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared keys --------------------------------------------------------*/
static int key_cmp(const void *a, const void *b)
{
    const struct pario_shared_key *x = a, *y = b;
    if (x->layer != y->layer)
        return x->layer < y->layer ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->minrank > y->minrank) - (x->minrank < y->minrank);
}

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

struct collect {
    struct pario_shared_key *keys;
    int n, cap;
};
static void collect_key(struct pario_record *r, void *arg)
{
    struct collect *c = arg;
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        struct pario_shared_key *k = realloc(c->keys, sizeof *k * cap);
        if (!k)
            return;
        c->keys = k;
        c->cap = cap;
    }
    c->keys[c->n++] = (struct pario_shared_key){.id = r->id, .layer = r->layer, .minrank = pario_core.rank};
}

static int owner_of(const struct pario_shared_key *k, int nprocs)
{
    uint64_t h = k->id ^ ((uint64_t)k->layer * 0x9e3779b97f4a7c15ull);
    h ^= h >> 29;
    return (int)(h % (uint64_t)nprocs);
}

/* The keys held by two or more ranks, into pario_shared_keys.  Returns 0 or an MPI error. */
static int find_shared_keys(MPI_Comm comm, int nprocs)
{
    struct collect mine = {0};
    for (int l = 0; l < PARIO_NLAYERS; l++)
        pario_foreach_record(l, collect_key, &mine);

    int *scount = calloc(nprocs, sizeof(int)), *rcount = calloc(nprocs, sizeof(int));
    int *sdisp = calloc(nprocs, sizeof(int)), *rdisp = calloc(nprocs, sizeof(int));
    struct pario_shared_key *sorted = malloc(sizeof(struct pario_shared_key) * (mine.n ? mine.n : 1));
    if (!scount || !rcount || !sdisp || !rdisp || !sorted)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < mine.n; i++)
        scount[owner_of(&mine.keys[i], nprocs)]++;
    for (int p = 1; p < nprocs; p++)
        sdisp[p] = sdisp[p - 1] + scount[p - 1];
    int *fill = calloc(nprocs, sizeof(int));
    for (int i = 0; i < mine.n && fill; i++) {
        int o = owner_of(&mine.keys[i], nprocs);
        sorted[sdisp[o] + fill[o]++] = mine.keys[i];
    }
    free(fill);
    NEXT(PMPI_Alltoall)(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm);
    int nrecv = 0;
    for (int p = 0; p < nprocs; p++) {
        rdisp[p] = nrecv;
        nrecv += rcount[p];
    }
    struct pario_shared_key *recv = malloc(sizeof(struct pario_shared_key) * (nrecv ? nrecv : 1));
    MPI_Datatype kt;
    NEXT(PMPI_Type_contiguous)(sizeof(struct pario_shared_key), MPI_BYTE, &kt);
    NEXT(PMPI_Type_commit)(&kt);
    NEXT(PMPI_Alltoallv)(sorted, scount, sdisp, kt, recv, rcount, rdisp, kt, comm);

    /* Owner: keys held by >= 2 ranks (each rank sends a key once). */
    qsort(recv, nrecv, sizeof *recv, key_cmp);
    int nmine_shared = 0;
    for (int i = 0; i < nrecv;) {
        int j = i + 1;
        while (j < nrecv && recv[j].id == recv[i].id && recv[j].layer == recv[i].layer)
            j++;
        if (j - i >= 2)
            recv[nmine_shared++] = recv[i]; /* sorted: minrank first */
        i = j;
    }
    int *counts = calloc(nprocs, sizeof(int)), *disps = calloc(nprocs, sizeof(int));
    NEXT(PMPI_Allgather)(&nmine_shared, 1, MPI_INT, counts, 1, MPI_INT, comm);
    int total = 0;
    for (int p = 0; p < nprocs; p++) {
        disps[p] = total;
        total += counts[p];
    }
    pario_shared_keys = malloc(sizeof(struct pario_shared_key) * (total ? total : 1));
    NEXT(PMPI_Allgatherv)(recv, nmine_shared, kt, pario_shared_keys, counts, disps, kt, comm);
    qsort(pario_shared_keys, total, sizeof *pario_shared_keys, key_cmp);
    pario_nshared = total;
    NEXT(PMPI_Type_free)(&kt);
    free(mine.keys);
    free(scount);
    free(rcount);
    free(sdisp);
    free(rdisp);
    free(sorted);
    free(recv);
    free(counts);
    free(disps);
    return MPI_SUCCESS;
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

static void reduce_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    struct pario_shared_elem *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        elem_combine(&a[i], &b[i]);
}

struct fill_ctx {
    struct pario_shared_elem *elems;
    unsigned char *bitmap;
    size_t bm_bytes;
};
static void fill_shared(struct pario_record *r, void *arg)
{
    struct fill_ctx *fc = arg;
    int i = pario_shared_index(r->layer, r->id, NULL);
    if (i < 0)
        return;
    const struct pario_layer_desc *d = pario_layers[r->layer];
    struct pario_shared_elem *e = &fc->elems[i];
    e->layer = r->layer;
    memcpy(e->counters, r->counters, sizeof e->counters);
    memcpy(e->fcounters, r->fcounters, sizeof e->fcounters);
    double t = r->fcounters[d->f_fastest_time], b = (double)r->counters[d->c_fastest_bytes];
    e->sum_t = t;
    e->sum_t2 = t * t;
    e->sum_b = b;
    e->sum_b2 = b * b;
    if (fc->bm_bytes)
        fc->bitmap[(size_t)i * fc->bm_bytes + pario_core.rank / 8] |= (unsigned char)(1u << (pario_core.rank % 8));
}

void pario_shared_reduce(MPI_Comm comm, int rank, int nprocs, struct pario_shared_reduction *out)
{
    find_shared_keys(comm, nprocs);
    int n = pario_nshared ? pario_nshared : 1;
    struct pario_shared_elem *elems = calloc(n, sizeof *elems);
    size_t bm_bytes = ((size_t)nprocs + 7) / 8;
    if ((size_t)pario_nshared * bm_bytes > ((size_t)16 << 20))
        bm_bytes = 0; /* too many shared files x ranks: keep counts only */
    size_t bm_size = (size_t)n * (bm_bytes ? bm_bytes : 1);
    unsigned char *bitmap = calloc(bm_size, 1);
    *out = (struct pario_shared_reduction){
        .result = rank == 0 ? calloc(n, sizeof *elems) : NULL,
        .bitmap = rank == 0 ? calloc(bm_size, 1) : NULL,
        .bm_bytes = bm_bytes,
    };
    struct fill_ctx fc = {.elems = elems, .bitmap = bitmap, .bm_bytes = bm_bytes};
    for (int l = 0; l < PARIO_NLAYERS; l++)
        pario_foreach_record(l, fill_shared, &fc);
    for (int i = 0; i < pario_nshared; i++)
        elems[i].layer = pario_shared_keys[i].layer;
    if (pario_nshared > 0) {
        MPI_Datatype et;
        MPI_Op op;
        NEXT(PMPI_Type_contiguous)(sizeof(struct pario_shared_elem), MPI_BYTE, &et);
        NEXT(PMPI_Type_commit)(&et);
        NEXT(PMPI_Op_create)(reduce_op, 1, &op);
        NEXT(PMPI_Reduce)(elems, out->result, pario_nshared, et, op, 0, comm);
        NEXT(PMPI_Op_free)(&op);
        NEXT(PMPI_Type_free)(&et);
        if (bm_bytes)
            NEXT(PMPI_Reduce)(bitmap, out->bitmap, (int)(pario_nshared * bm_bytes), MPI_UNSIGNED_CHAR, MPI_BOR, 0,
                              comm);
    }
    free(elems);
    free(bitmap);
}

void pario_shared_free(struct pario_shared_reduction *r)
{
    free(r->result);
    free(r->bitmap);
    free(pario_shared_keys);
    pario_shared_keys = NULL;
    pario_nshared = 0;
}
