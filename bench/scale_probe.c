/*
 * The program bench/scale.py runs at 4..N ranks (with and without the
 * runtime).  Usage: scale_probe OUTDIR SHAPE
 *   a      20 files of its own per rank (POSIX), plus 1 file shared by all
 *   b      1 file written collectively by all ranks (MPI-IO)
 *   one    1 file of its own per rank
 *   many   1,000 files of its own per rank
 *   mix    a, plus a file per pair of ranks and one per 3 ranks (files
 *          shared by some ranks, not all: the shared-file detection's cases)
 *   wide   150 files shared by all ranks but rank 0 skips every third one
 *          (more shared records than one reduction step holds)
 * Prints from every rank: "<seconds in MPI_Finalize> <VmHWM kB after it>".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void own_files(const char *dir, int rank, int n)
{
    char path[4096], buf[100] = {0};
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/r%d.f%d", dir, rank, i);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            exit(1);
        close(fd);
    }
}

static void some_file(const char *dir, const char *name, int at)
{
    char path[4096], buf[100] = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd < 0 || pwrite(fd, buf, sizeof buf, (off_t)at * 100) != (ssize_t)sizeof buf)
        exit(1);
    close(fd);
}

static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1], *shape = argv[2];
    char name[64];
    if (strcmp(shape, "a") == 0 || strcmp(shape, "mix") == 0) {
        own_files(dir, rank, 20);
        some_file(dir, "common", rank);
        if (strcmp(shape, "mix") == 0) {
            snprintf(name, sizeof name, "pair%d", rank / 2);
            some_file(dir, name, rank % 2);
            snprintf(name, sizeof name, "trio%d", rank / 3);
            some_file(dir, name, rank % 3);
        }
    } else if (strcmp(shape, "b") == 0) {
        char path[4096], buf[4096] = {0};
        snprintf(path, sizeof path, "%s/collective", dir);
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_write_at_all(fh, (MPI_Offset)rank * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    } else if (strcmp(shape, "wide") == 0) {
        for (int i = 0; i < 150; i++) {
            snprintf(name, sizeof name, "wide%d", i);
            if (rank != 0 || i % 3 != 2)
                some_file(dir, name, rank);
        }
    } else if (strcmp(shape, "one") == 0) {
        own_files(dir, rank, 1);
    } else if (strcmp(shape, "many") == 0) {
        own_files(dir, rank, 1000);
    } else {
        MPI_Finalize();
        return 2;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    MPI_Finalize();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.6f %ld\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9, vm_hwm_kb());
    return 0;
}
