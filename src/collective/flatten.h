/*
 * Flattened MPI datatypes: the (offset, length) byte segments of a datatype's
 * type map, which the collective-write engine needs for the file view and the
 * memory buffer of every collective write.
 *
 * Segments are in type-map order (the order in which MPI_Pack takes the
 * bytes), not sorted: a struct with decreasing displacements or a hindexed
 * type with negative displacements comes out as MPI defines it.  Two
 * consecutive segments are merged when the second starts where the first
 * ends, so a contiguous-in-memory vector is one segment.  Offsets are bytes
 * from the type's origin (a buffer address, or a view's displacement).
 *
 * Every result is bounded by the caller's max_segments: a type that needs
 * more gives MPI_ERR_NO_MEM and nothing is kept, so the caller falls back to
 * the MPI library instead of allocating without bound.
 *
 * The calls go to PMPI_ (this file is linked into libpario.so, which
 * intercepts MPI_).  Thread-safe: the cache is guarded by a mutex.
 */
#ifndef PARIO_FLATTEN_H
#define PARIO_FLATTEN_H

#include <mpi.h>
#include <stdint.h>

#include "pario-mpi-next.h"

struct pario_flat {
    int64_t nseg;    /* number of segments */
    int64_t *off;    /* byte offsets from the origin, in type-map order */
    int64_t *len;    /* byte lengths, all > 0 */
    int64_t size;    /* sum of len == MPI_Type_size (times count for pario_flat_count) */
    int64_t lb;      /* MPI_Type_get_extent's lb */
    int64_t extent;  /* MPI_Type_get_extent's extent */
};

/* Flatten 'type' (committed or not).  On MPI_SUCCESS '*out' points to the
 * result cached on the datatype as an attribute: the same pointer for every
 * later call on the same type, valid until the type is freed (MPI_Type_free
 * runs the attribute's delete callback, so a freed-then-reused handle never
 * sees a stale result).  Do not free it.  Errors: MPI_ERR_NO_MEM if the
 * type has more than max_segments segments, MPI_ERR_INTERN if malloc
 * fails, MPI_ERR_TYPE for a type this code does not understand (a named
 * type with holes other than the C pair types, a size that does not add
 * up, an arithmetic overflow), or what a PMPI_ call returned. */
int pario_flatten(MPI_Datatype type, int64_t max_segments, const struct pario_flat **out);

/* 'count' copies of 'f' at its extent's stride, merged, into the caller's
 * '*out' (as for MPI_Type_contiguous(count, type): size*count, and lb and
 * extent by MPI's rule for contiguous).  Free with pario_flat_free.
 * Same errors as pario_flatten; '*out' is empty on error. */
int pario_flat_count(const struct pario_flat *f, int64_t count, int64_t max_segments,
                     struct pario_flat *out);

/* Free the arrays of a result of pario_flat_count and zero it (not the
 * struct itself, which is the caller's).  Never call it on a cached result. */
void pario_flat_free(struct pario_flat *f);

#endif
