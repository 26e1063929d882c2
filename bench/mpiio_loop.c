/* The C twin of mpiio_loop.F90: one rank writes 8 bytes CALLS times with
 * MPI_File_write_at and prints the nanoseconds per call.
 * Usage: mpiio_loop CALLS PATH */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3)
        MPI_Abort(MPI_COMM_WORLD, 2);
    long calls = atol(argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, argv[2], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    double value = 1.0;
    double t0 = MPI_Wtime();
    for (long i = 1; i <= calls; i++)
        MPI_File_write_at(fh, (MPI_Offset)(i % 512) * 8, &value, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
    double t1 = MPI_Wtime();
    MPI_File_close(&fh);
    printf("%.1f\n", (t1 - t0) * 1e9 / (double)calls);
    MPI_Finalize();
    return 0;
}
