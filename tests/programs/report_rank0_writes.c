/*
 * Only rank 0 does I/O, for the report's end-to-end tests.
 * Usage: report_rank0_writes OUTDIR M
 *   rank 0 writes M requests of 1 MiB with write() to OUTDIR/rank0.dat and
 *   fsyncs it; the other ranks do no file I/O at all and wait in one
 *   MPI_Barrier. So the I/O load balance is exactly 1/P, and the job writes
 *   M MiB in M requests of the 100K-1M size bucket (Darshan's buckets include
 *   their upper bound).
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"

#define MIB (1 << 20)

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, 2, "report_rank0_writes OUTDIR M");
    if (rank == 0) {
        int m = atoi(argv[2]);
        char path[4096];
        snprintf(path, sizeof path, "%s/rank0.dat", argv[1]);
        char *buf = malloc(MIB);
        memset(buf, 'x', MIB);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int i = 0; i < m; i++) {
            if (write(fd, buf, MIB) != MIB) {
                perror("write");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        fsync(fd);
        close(fd);
        free(buf);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
