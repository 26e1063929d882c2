/*
 * Files shared by several ranks, found and reduced at MPI_Finalize (shared.c).
 */
#ifndef PARIO_SHARED_H
#define PARIO_SHARED_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

struct pario_shared_key {
    uint64_t id;
    int64_t layer;
    int64_t minrank; /* lowest rank holding it (writes its name and hints) */
};

/* One shared record on its way to rank 0, and the sums for the variances. */
struct pario_shared_elem {
    int64_t layer;
    int64_t counters[PARIO_MAX_COUNTERS];
    double fcounters[PARIO_MAX_FCOUNTERS];
    double sum_t, sum_t2, sum_b, sum_b2;
};

/* The keys every rank agrees on, sorted by (layer, id): set by pario_shared_reduce. */
extern struct pario_shared_key *pario_shared_keys;
extern int pario_nshared;

/* The index of (layer, id) among the shared keys (and its lowest rank), -1 if not shared. */
int pario_shared_index(int layer, uint64_t id, int64_t *minrank);

struct pario_shared_reduction {
    struct pario_shared_elem *result; /* rank 0: the reduced records, pario_nshared of them */
    unsigned char *bitmap;            /* rank 0: bm_bytes per record, the ranks that touched it */
    size_t bm_bytes;                  /* 0: too many files x ranks, counts only */
    double find_seconds;              /* of which finding the shared keys (MPI_Wtime) */
    int64_t records_overflowed;       /* records no rank had room for, summed over the ranks */
    int log_oom;                      /* some rank passed log_oom */
};

/* Collective over comm: find the shared keys and reduce their records to rank
 * 0.  log_oom (whether this rank lacks the memory to write the log) rides on
 * the detection's closing MPI_Allreduce, so that every rank learns without a
 * collective of its own whether any rank does. */
void pario_shared_reduce(MPI_Comm comm, int rank, int nprocs, int log_oom, struct pario_shared_reduction *out);
/* Free the reduction and the keys. */
void pario_shared_free(struct pario_shared_reduction *r);

#endif
