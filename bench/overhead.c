/*
 * Per-call cost of an intercepted call: a loop of N calls, timed as a whole.
 * Usage: overhead pwrite|fwrite|pwrite1m|openclose|rdtsc|clock N PATH
 * Prints the mean nanoseconds per call.  bench/overhead.py runs it with and
 * without the runtime, interleaved, and reports medians and the difference.
 * rdtsc and clock time the two timer reads a wrapper can make (nothing
 * intercepted).  Built with -DOVERHEAD_MPI, the loops run between MPI_Init
 * and MPI_Finalize (an MPI program, started by mpirun -np 1).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#ifdef OVERHEAD_MPI
#include <mpi.h>
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: overhead pwrite|fwrite|pwrite1m|openclose|rdtsc|clock N PATH\n");
        return 2;
    }
#ifdef OVERHEAD_MPI
    MPI_Init(&argc, &argv);
#endif
    long n = atol(argv[2]);
    double t0 = 0, t1 = 0;
    volatile unsigned long long sink = 0;
    if (strcmp(argv[1], "rdtsc") == 0) {
        t0 = now();
        for (long i = 0; i < n; i++)
            sink += __rdtsc();
        t1 = now();
    } else if (strcmp(argv[1], "clock") == 0) {
        struct timespec ts;
        t0 = now();
        for (long i = 0; i < n; i++) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
            sink += (unsigned long long)ts.tv_nsec;
        }
        t1 = now();
    } else if (strcmp(argv[1], "fwrite") == 0) {
        FILE *f = fopen(argv[3], "w");
        if (!f)
            return 1;
        char c = 'x';
        t0 = now();
        for (long i = 0; i < n; i++)
            fwrite(&c, 1, 1, f);
        t1 = now();
        fclose(f);
    } else if (strcmp(argv[1], "openclose") == 0) {
        /* one open + close per iteration of an existing file: the metadata path */
        int fd = open(argv[3], O_CREAT | O_WRONLY, 0644);
        if (fd < 0)
            return 1;
        close(fd);
        t0 = now();
        for (long i = 0; i < n; i++) {
            fd = open(argv[3], O_WRONLY);
            if (fd < 0 || close(fd) != 0)
                return 1;
        }
        t1 = now();
    } else {
        size_t size = strcmp(argv[1], "pwrite1m") == 0 ? (size_t)1 << 20 : 1;
        char *buf = calloc(size, 1);
        int fd = open(argv[3], O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || !buf)
            return 1;
        /* rewrite the same small region: the page cache, not the disk, is measured */
        t0 = now();
        for (long i = 0; i < n; i++)
            if (pwrite(fd, buf, size, (off_t)((i % 16) * size)) != (ssize_t)size)
                return 1;
        t1 = now();
        close(fd);
        free(buf);
    }
    printf("%.3f\n", (t1 - t0) * 1e9 / (double)n);
#ifdef OVERHEAD_MPI
    MPI_Finalize();
#endif
    return 0;
}
