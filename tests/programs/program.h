/*
 * What the C test programs share (each includes "program.h" from tests/programs).
 *
 * start_mpi(&argc, &argv, lo, hi, usage): MPI_Init, then this rank (MPI_Comm_rank of
 *   MPI_COMM_WORLD: no other MPI call, so the calls a test counts are the program's own).
 *   With fewer than lo arguments or more than hi (hi < 0: no most), rank 0 prints
 *   "usage: USAGE" and every rank ends with MPI_Finalize and exit code 2.
 * world_size(): MPI_Comm_size of MPI_COMM_WORLD.
 * H5_CHECK(x): an HDF5 call that returns a negative value ends the job (MPI_Abort 1).
 * NC_CHECK(x): a PnetCDF call that returns other than NC_NOERR ends the job (MPI_Abort 1).
 */
#ifndef PARIO_TEST_PROGRAM_H
#define PARIO_TEST_PROGRAM_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static inline int start_mpi(int *argc, char ***argv, int lo, int hi, const char *usage)
{
    MPI_Init(argc, argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int given = *argc - 1;
    if (given < lo || (hi >= 0 && given > hi)) {
        if (rank == 0)
            fprintf(stderr, "usage: %s\n", usage);
        MPI_Finalize();
        exit(2);
    }
    return rank;
}

static inline int world_size(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

#define H5_CHECK(x)                                                                                \
    do {                                                                                           \
        if ((x) < 0) {                                                                             \
            fprintf(stderr, "%s:%d %s failed\n", __FILE__, __LINE__, #x);                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define NC_CHECK(x)                                                                                \
    do {                                                                                           \
        int e_ = (x);                                                                              \
        if (e_ != NC_NOERR) {                                                                      \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncmpi_strerror(e_));         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#endif
