/*
 * A program whose I/O is known exactly, for the runtime's tests.
 * Usage: io_known OUTDIR K S
 *   - every rank writes K requests of S bytes with MPI_File_write_at_all to
 *     OUTDIR/shared.dat, interleaved: request i of rank r at (i*P + r)*S;
 *   - MPI_File_sync, MPI_Barrier, MPI_File_sync;
 *   - every rank reads its K requests back with MPI_File_read_at;
 *   - every rank writes OUTDIR/fpp.<r> with POSIX: 16 writes of 1000 bytes,
 *     then one pread of 500 bytes at offset 100, one lseek, one fsync;
 *   - rank 0 fprintf's 10 lines "line NN\n" (8 bytes each) to OUTDIR/log.txt
 *     and reads them back with 10 fgets;
 *   - ranks 1 and 2 (only) each write 3 x 100 bytes with pwrite to
 *     OUTDIR/pair.dat (a file shared by two ranks of four);
 *   - one MPI_Allreduce of 8 doubles and one MPI_Barrier (two barriers in all).
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 3, 3, "io_known OUTDIR K S");
    int nprocs = world_size();
    const char *dir = argv[1];
    int k = atoi(argv[2]), s = atoi(argv[3]);
    char path[4096];
    char *buf = malloc((size_t)s);
    memset(buf, 'a' + rank, (size_t)s);

    snprintf(path, sizeof path, "%s/shared.dat", dir);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (int i = 0; i < k; i++)
        MPI_File_write_at_all(fh, (MPI_Offset)(i * nprocs + rank) * s, buf, s, MPI_BYTE, MPI_STATUS_IGNORE);
    /* MPI's consistency rule: sync-barrier-sync before reading what the
     * aggregators wrote (without it a rank may read a region not yet written). */
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    for (int i = 0; i < k; i++)
        MPI_File_read_at(fh, (MPI_Offset)(i * nprocs + rank) * s, buf, s, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);

    snprintf(path, sizeof path, "%s/fpp.%d", dir, rank);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    char block[1000];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 16; i++)
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
            return 1;
    if (pread(fd, block, 500, 100) != 500)
        return 1;
    lseek(fd, 0, SEEK_SET);
    fsync(fd);
    close(fd);

    if (rank == 0) {
        snprintf(path, sizeof path, "%s/log.txt", dir);
        FILE *f = fopen(path, "w+");
        for (int i = 0; i < 10; i++)
            fprintf(f, "line %02d\n", i);
        rewind(f);
        char line[64];
        while (fgets(line, sizeof line, f))
            ;
        fclose(f);
    }

    if (rank == 1 || rank == 2) {
        snprintf(path, sizeof path, "%s/pair.dat", dir);
        int pfd = open(path, O_CREAT | O_WRONLY, 0644);
        char small[100];
        memset(small, 'p', sizeof small);
        for (int i = 0; i < 3; i++)
            if (pwrite(pfd, small, sizeof small, (off_t)((rank - 1) * 300 + i * 100)) != 100)
                return 1;
        close(pfd);
    }

    double in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    MPI_Finalize();
    return 0;
}
