/*
 * An I/O-bound MPI program for the report's end-to-end tests.
 * Usage: report_io_bound OUTDIR N [total]
 *   every rank opens OUTDIR/io.<rank> and makes N requests of 4096 bytes,
 *   alternating pwrite and pread over the first 64 KiB of its file (so the
 *   file stays small while the time goes into I/O calls); with "total", N is
 *   the number of requests of the whole job, split evenly over the ranks
 *   (strong scaling), otherwise every rank makes N (weak scaling).
 *   Apart from that: one MPI_Barrier and one MPI_Allreduce, no computation.
 *   Bytes written per rank: ceil(n/2) * 4096, read: floor(n/2) * 4096, with
 *   n the rank's request count.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"

#define REQ 4096

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, -1, "report_io_bound OUTDIR N [total]");
    int nprocs = world_size();
    long n = atol(argv[2]);
    if (argc > 3 && strcmp(argv[3], "total") == 0)
        n = n / nprocs + (rank < n % nprocs ? 1 : 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/io.%d", argv[1], rank);
    char buf[REQ];
    memset(buf, 'a' + rank % 26, sizeof buf);

    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < n; i++) {
        off_t off = (off_t)(i % 16) * REQ;
        ssize_t got = (i % 2 == 0) ? pwrite(fd, buf, REQ, off) : pread(fd, buf, REQ, off - REQ);
        if (got != REQ) {
            perror("pwrite/pread");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    close(fd);
    double mine = (double)n, total = 0.0;
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
