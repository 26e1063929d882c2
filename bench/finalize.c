/*
 * Time spent in MPI_Finalize (where pario reduces shared records and writes
 * the log).  Every rank writes to a shared file with MPI-IO, to FILES files
 * of its own with POSIX, and to one file shared by all ranks with POSIX, so
 * the reduction has work to do.  Prints, from every rank, the seconds spent
 * in MPI_Finalize; bench/overhead.py takes the maximum.
 * Usage: finalize OUTDIR FILES
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        MPI_Finalize();
        return 2;
    }
    int nfiles = atoi(argv[2]);
    char path[4096], buf[4096] = {0};
    for (int i = 0; i < nfiles; i++) {
        snprintf(path, sizeof path, "%s/r%d.f%d", argv[1], rank, i);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, buf, 100) != 100)
            return 1;
        close(fd);
    }
    snprintf(path, sizeof path, "%s/common", argv[1]);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd < 0 || pwrite(fd, buf, 100, rank * 100) != 100)
        return 1;
    close(fd);
    snprintf(path, sizeof path, "%s/mpiio", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, rank * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    MPI_Finalize();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
    return 0;
}
