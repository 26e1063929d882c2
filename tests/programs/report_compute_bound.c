/*
 * A compute-bound MPI program for the report's end-to-end tests.
 * Usage: report_compute_bound OUTDIR SECONDS
 *   every rank computes (a floating-point loop) for about SECONDS of wall
 *   time, then writes 64 bytes to OUTDIR/out.<rank>; one MPI_Allreduce.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "program.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, 2, "report_compute_bound OUTDIR SECONDS");
    double seconds = atof(argv[2]);
    volatile double x = 1.0;
    double start = now();
    while (now() - start < seconds)
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
    char path[4096], line[64];
    snprintf(path, sizeof path, "%s/out.%d", argv[1], rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    snprintf(line, sizeof line, "%63.6f", (double)x);
    if (fd < 0 || write(fd, line, 64) != 64)
        MPI_Abort(MPI_COMM_WORLD, 1);
    close(fd);
    double in = x, out = 0.0;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
