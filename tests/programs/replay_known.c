/*
 * replay_known DIR [X_MS]: a traced run whose replays have answers known from its structure
 * (tests/test_replay.py).  "Computation" is sleeping, so its length does not depend on how
 * busy the machine is.  With P ranks and X = X_MS milliseconds:
 *
 *   1. rank r sleeps (r+1) X, then MPI_Allreduce        (the slowest: P X)
 *   2. rank r sleeps (P-r) X, then MPI_Barrier          (the slowest: P X, another rank)
 *   3. MPI_Sendrecv ring of 256 KiB
 *   4. MPI_Irecv(MPI_ANY_SOURCE) from every other rank, MPI_Isend to every other, Waitall
 *   5. sleep X/2, MPI_Ibarrier, sleep X/2, MPI_Wait
 *   6. rank 0 writes 8 MiB with POSIX write + fsync while the others wait in MPI_Barrier
 *   7. MPI_File_write_at_all: 256 KiB per rank
 *   8. ranks 1..P-1 MPI_Ssend to rank 0, which receives with MPI_ANY_SOURCE
 *
 * Every rank computes (P+2) X in all, while on ideal machines the run still takes about
 * (2P+1) X: SerE ~ (P+2) / (2P+1).  The serial write (6) is on every rank's critical path.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "program.h"

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000.0), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000.0)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 1, -1, "replay_known DIR [X_MS]");
    int size = world_size();
    double x = argc > 2 ? atof(argv[2]) : 20.0;
    const int n = 256 * 1024;
    char *sbuf = malloc(n), *rbuf = malloc((size_t)n * (size_t)size);
    memset(sbuf, 'a' + rank % 26, n);

    double v = rank, sum = 0;
    sleep_ms((rank + 1) * x);
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sleep_ms((size - rank) * x);
    MPI_Barrier(MPI_COMM_WORLD);

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(sbuf, n, MPI_CHAR, right, 1, rbuf, n, MPI_CHAR, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    int k = 0;
    for (int i = 0; i < size - 1; i++)
        MPI_Irecv(rbuf + (size_t)i * 1024, 1024, MPI_CHAR, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &req[k++]);
    for (int p = 0; p < size; p++)
        if (p != rank)
            MPI_Isend(sbuf, 1024, MPI_CHAR, p, 2, MPI_COMM_WORLD, &req[k++]);
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);

    MPI_Request ib;
    sleep_ms(x / 2);
    MPI_Ibarrier(MPI_COMM_WORLD, &ib);
    sleep_ms(x / 2);
    MPI_Wait(&ib, MPI_STATUS_IGNORE);

    char path[4096];
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/serial.dat", argv[1]);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int i = 0; i < 32; i++)
            if (write(fd, sbuf, n) != n)
                MPI_Abort(MPI_COMM_WORLD, 1);
        fsync(fd);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * n, sbuf, n, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);

    if (rank == 0) {
        for (int i = 1; i < size; i++)
            MPI_Recv(rbuf, 1024, MPI_CHAR, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Ssend(sbuf, 1024, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
    }
    free(req);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
