/*
 * How pario calls the MPI library.  The runtime exports both names of every
 * MPI function it intercepts: MPI_X, which C and C++ programs call, and
 * PMPI_X, which the Fortran bindings call (Open MPI's mpif.h, `use mpi` and
 * `use mpi_f08` libraries call PMPI_X; MPICH's call MPI_X for some functions
 * and PMPI_X for others).  A call from pario to the name PMPI_X would reach
 * pario itself, so pario's own calls go through NEXT(PMPI_X): the next
 * definition after pario's in the lookup order, the MPI library's, found
 * with dlsym(RTLD_NEXT) on a call site's first use and kept.
 */
#ifndef PARIO_MPI_NEXT_H
#define PARIO_MPI_NEXT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* The MPI library's definition of `name`; a library without it cannot run
 * the program pario wraps, so its absence ends the process with a message. */
static inline void *pario_next_symbol(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "pario: the MPI library has no %s (%s)\n", name, dlerror());
        abort();
    }
    return fn;
}

#define NEXT(fn)                                                               \
    (*__extension__({                                                          \
        static __typeof__(&fn) next_;                                          \
        __typeof__(&fn) p_ = __atomic_load_n(&next_, __ATOMIC_RELAXED);        \
        if (__builtin_expect(!p_, 0)) {                                        \
            p_ = (__typeof__(&fn))pario_next_symbol(#fn);                      \
            __atomic_store_n(&next_, p_, __ATOMIC_RELAXED);                    \
        }                                                                      \
        p_;                                                                    \
    }))

/* Export PMPI_X as a second name of pario's wrapper MPI_X. */
#define PMPI_NAME(x) extern __typeof__(MPI_##x) PMPI_##x __attribute__((alias("MPI_" #x)))

#endif
