/* coll_auto_mix OUTDIR: two collective writes of one shared file that auto serves with two
 * algorithms (tests/test_collective_cli.py).  OUTDIR/mix.dat, N = 4096 bytes per rank:
 *   1. MPI_File_write_at_all of each rank's own contiguous N bytes at rank * N
 *      (auto: direct, each rank writes its own range);
 *   2. through a view of one byte in every nprocs, from nprocs * N on, MPI_File_write_all of N
 *      bytes (interleaved: two-phase, one buffer cycle).
 * Byte i of rank r's buffer is (r * 7 + i) % 251 in both writes. */
#include <mpi.h>
#include <stdio.h>

#include "program.h"

enum { N = 4096 };

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 1, -1, "coll_auto_mix OUTDIR");
    int nprocs = world_size();
    unsigned char buf[N];
    for (int i = 0; i < N; i++)
        buf[i] = (unsigned char)((rank * 7 + i) % 251);
    char path[4200];
    snprintf(path, sizeof path, "%s/mix.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * N, buf, N, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Datatype strided, column;
    MPI_Type_vector(N, 1, nprocs, MPI_BYTE, &strided);
    MPI_Type_create_resized(strided, 0, (MPI_Aint)N * nprocs, &column);
    MPI_Type_commit(&column);
    MPI_File_set_view(fh, (MPI_Offset)nprocs * N + rank, MPI_BYTE, column, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, buf, N, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Type_free(&column);
    MPI_Type_free(&strided);
    MPI_Finalize();
    return 0;
}
