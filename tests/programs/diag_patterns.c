/*
 * I/O patterns that each show one problem the diagnosis must find (and the
 * diagnosis tests' clean counterparts).  Usage: diag_patterns MODE DIR
 *
 *   rank0      rank 0 appends 60000 x 64 B to DIR/rank0.dat; the others do no I/O
 *   spread     rank r appends 40000 (r+1) x 64 B to DIR/spread.<r>
 *   straggler  rank P-1 appends 120000 x 64 B, the others 10000 x 64 B, to DIR/straggler.<r>
 *   balanced   every rank appends 20000 x 64 B to DIR/balanced.<r>, then computes for 0.5 s
 *              (so that scheduling jitter of 4 ranks on 2 cores stays small next to the run)
 *   random     every rank writes 64 blocks of 128 KiB of DIR/random.<r> in a shuffled order
 *   sequential every rank writes the same 64 blocks of 128 KiB in file order
 *   reread     rank 0 writes DIR/input.dat (1 MiB); every rank reads it 4 times (256 KiB reads)
 *   readonce   rank r reads its own quarter of DIR/input.dat once
 *   overwrite  every rank writes the same 1 MiB of DIR/over.<r> 8 times (256 KiB writes)
 *   tinysync   every rank writes 600 x 16 B to DIR/log.<r>, fsync after each
 *   stdio      every rank fwrite's 4 MiB in 1 KiB calls to DIR/stdio.<r>
 *   posixbulk  every rank write()s 4 MiB in 64 KiB calls to DIR/posixbulk.<r>
 *   meta       every rank writes 1 KiB to DIR/meta.<r>, then 6000 x (open, stat, lseek, close)
 *   fpp        every rank writes 8 files DIR/fpp.<r>.<i> of 64 KiB
 *   shared     every rank pwrites 512 KiB at its offset of one shared file DIR/shared.dat, then
 *              computes for 0.5 s (a run that is clearly not I/O-bound)
 *   strong     every rank appends 20000 x (64 / P) B to DIR/strong.<r>: the data stays the same
 *              whatever the rank count, the number of calls per rank does not shrink
 *   weak       every rank pwrites the same 64 KiB of its own file DIR/weak.<r> 16384 times (page
 *              cache, no fsync), then removes it: the data grows with the rank count, the work per
 *              rank does not, and all ranks' pages fit in the CPU caches, so a rank's I/O time grows
 *              by the oversubscription (P / cores), not by memory bandwidth
 *   computeimb every rank appends 2000 x 64 B to DIR/computeimb.<r>, then, in the phase before
 *              the 2nd MPI_Barrier, computes for 0.2 s, and in the phase before the 3rd, for 0.2 s
 *              (rank P-1: 1.2 s): computation imbalanced in that phase only, I/O balanced
 *
 * Every rank exits 0; MPI_Barrier separates the phases.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program.h"

#define MiB (1024 * 1024)

static char *buf;

static int open_w(const char *dir, const char *name, int rank)
{
    char path[4096];
    if (rank >= 0)
        snprintf(path, sizeof path, "%s/%s.%d", dir, name, rank);
    else
        snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return fd;
}

static void write_sync(int fd, int n, size_t size, int sync)
{
    for (int i = 0; i < n; i++) {
        if (pwrite(fd, buf, size, (off_t)i * (off_t)size) != (ssize_t)size)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (sync)
            fsync(fd);
    }
}

/* count appends of 64 bytes: I/O time proportional to the count (syscall-bound) */
static void many_writes(int fd, int count)
{
    for (int i = 0; i < count; i++)
        if (write(fd, buf, 64) != 64)
            MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Busy computation for `seconds` of wall time. */
static void compute(double seconds)
{
    volatile double x = 0;
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < seconds;)
        x += 1.0;
}

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, 2, "diag_patterns MODE DIR");
    int n = world_size();
    const char *mode = argv[1], *dir = argv[2];
    buf = malloc(4 * MiB);
    memset(buf, 'a' + rank % 26, 4 * MiB);
    char path[4096];

    if (!strcmp(mode, "rank0")) {
        if (rank == 0) {
            int fd = open_w(dir, "rank0.dat", -1);
            many_writes(fd, 60000);
            close(fd);
        }
    } else if (!strcmp(mode, "spread") || !strcmp(mode, "straggler") || !strcmp(mode, "balanced")) {
        int count = !strcmp(mode, "spread") ? 40000 * (rank + 1) : !strcmp(mode, "balanced") ? 20000
                    : (rank == n - 1 ? 120000 : 10000);
        int fd = open_w(dir, mode, rank);
        many_writes(fd, count);
        close(fd);
        if (!strcmp(mode, "balanced"))
            compute(0.5);
    } else if (!strcmp(mode, "random") || !strcmp(mode, "sequential")) {
        int order[64];
        for (int i = 0; i < 64; i++)
            order[i] = i;
        if (!strcmp(mode, "random")) {
            srand(12345u + (unsigned)rank);
            for (int i = 63; i > 0; i--) {
                int j = rand() % (i + 1), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        int fd = open_w(dir, mode, rank);
        for (int i = 0; i < 64; i++)
            if (pwrite(fd, buf, 128 * 1024, (off_t)order[i] * 128 * 1024) != 128 * 1024)
                MPI_Abort(MPI_COMM_WORLD, 1);
        close(fd);
    } else if (!strcmp(mode, "reread") || !strcmp(mode, "readonce")) {
        snprintf(path, sizeof path, "%s/input.dat", dir);
        if (rank == 0) {
            int fd = open_w(dir, "input.dat", -1);
            write_sync(fd, 1, MiB, 0);
            close(fd);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int fd = open(path, O_RDONLY);
        if (!strcmp(mode, "reread")) {
            for (int pass = 0; pass < 4; pass++)
                for (int i = 0; i < 4; i++)
                    if (pread(fd, buf, 256 * 1024, (off_t)i * 256 * 1024) != 256 * 1024)
                        MPI_Abort(MPI_COMM_WORLD, 1);
        } else {
            size_t part = MiB / (size_t)n;
            if (pread(fd, buf, part, (off_t)rank * (off_t)part) != (ssize_t)part)
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
    } else if (!strcmp(mode, "overwrite")) {
        int fd = open_w(dir, "over", rank);
        for (int pass = 0; pass < 8; pass++)
            write_sync(fd, 4, 256 * 1024, 0);
        close(fd);
    } else if (!strcmp(mode, "tinysync")) {
        int fd = open_w(dir, "log", rank);
        for (int i = 0; i < 600; i++) {
            if (write(fd, "step done ......\n", 16) != 16)
                MPI_Abort(MPI_COMM_WORLD, 1);
            fsync(fd);
        }
        close(fd);
    } else if (!strcmp(mode, "stdio")) {
        snprintf(path, sizeof path, "%s/stdio.%d", dir, rank);
        FILE *fp = fopen(path, "w");
        for (int i = 0; i < 4096; i++)
            fwrite(buf, 1, 1024, fp);
        fclose(fp);
    } else if (!strcmp(mode, "posixbulk")) {
        int fd = open_w(dir, "posixbulk", rank);
        for (int i = 0; i < 64; i++)
            if (write(fd, buf, 64 * 1024) != 64 * 1024)
                MPI_Abort(MPI_COMM_WORLD, 1);
        close(fd);
    } else if (!strcmp(mode, "meta")) {
        int fd = open_w(dir, "meta", rank);
        write_sync(fd, 1, 1024, 0);
        close(fd);
        snprintf(path, sizeof path, "%s/meta.%d", dir, rank);
        struct stat st;
        for (int i = 0; i < 6000; i++) {
            fd = open(path, O_RDONLY);
            stat(path, &st);
            lseek(fd, 0, SEEK_END);
            close(fd);
        }
    } else if (!strcmp(mode, "fpp")) {
        for (int i = 0; i < 8; i++) {
            snprintf(path, sizeof path, "fpp.%d.%d", rank, i);
            int fd = open_w(dir, path, -1);
            write_sync(fd, 1, 64 * 1024, 0);
            close(fd);
        }
    } else if (!strcmp(mode, "shared")) {
        snprintf(path, sizeof path, "%s/shared.dat", dir);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        if (pwrite(fd, buf, 512 * 1024, (off_t)rank * 512 * 1024) != 512 * 1024)
            MPI_Abort(MPI_COMM_WORLD, 1);
        close(fd);
        compute(0.5);
    } else if (!strcmp(mode, "computeimb")) {
        int fd = open_w(dir, "computeimb", rank);
        many_writes(fd, 2000);
        close(fd);
        MPI_Barrier(MPI_COMM_WORLD);
        compute(0.2);
        MPI_Barrier(MPI_COMM_WORLD);
        compute(rank == n - 1 ? 1.2 : 0.2);
    } else if (!strcmp(mode, "strong")) {
        int fd = open_w(dir, "strong", rank);
        size_t size = 64 / (size_t)n > 0 ? 64 / (size_t)n : 1;
        for (int i = 0; i < 20000; i++)
            if (write(fd, buf, size) != (ssize_t)size)
                MPI_Abort(MPI_COMM_WORLD, 1);
        close(fd);
    } else if (!strcmp(mode, "weak")) {
        int fd = open_w(dir, "weak", rank);
        for (int i = 0; i < 16384; i++)
            if (pwrite(fd, buf, 64 * 1024, 0) != 64 * 1024)
                MPI_Abort(MPI_COMM_WORLD, 1);
        close(fd);
        snprintf(path, sizeof path, "%s/weak.%d", dir, rank);
        unlink(path);
    } else {
        if (rank == 0)
            fprintf(stderr, "diag_patterns: unknown mode %s\n", mode);
        MPI_Finalize();
        return 2;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    MPI_Finalize();
    return 0;
}
