/* Collective writes in atomic mode, then out of it: OUT/atomic.dat gets NATOMIC
 * MPI_File_write_at_all calls with atomicity on (which pario's collective-write engine
 * gives to the MPI library) and then one with it off (which the engine serves).
 * Each call writes, on every rank, BLOCK bytes of the byte (call * 16 + rank) at
 * offset (call * nprocs + rank) * BLOCK.
 *
 * usage: coll_atomic OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "program.h"

#define BLOCK 4096
#define NATOMIC 2

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 1, 1, "coll_atomic OUTDIR");
    int nprocs = world_size();
    char path[4096];
    snprintf(path, sizeof path, "%s/atomic.dat", argv[1]);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) !=
        MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    static char buf[BLOCK];
    for (int call = 0; call <= NATOMIC; call++) {
        MPI_File_set_atomicity(fh, call < NATOMIC);
        memset(buf, call * 16 + rank, sizeof buf);
        MPI_Offset off = ((MPI_Offset)call * nprocs + rank) * BLOCK;
        if (MPI_File_write_at_all(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
