/*
 * An MPI program that never calls MPI_Finalize: every rank writes 5 x 100
 * bytes to OUTDIR/nf.<rank>, prints "rank R out", waits SECONDS (default 0: a job
 * killed meanwhile, as by a timeout around mpirun) and returns EXITCODE.
 * Usage: no_finalize OUTDIR EXITCODE [SECONDS]
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096], buf[100];
    memset(buf, 'n', sizeof buf);
    snprintf(path, sizeof path, "%s/nf.%d", argv[1], rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 5; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            return 1;
    close(fd);
    printf("rank %d out\n", rank);
    fflush(stdout);
    if (argc > 3)
        sleep((unsigned)atoi(argv[3]));
    return atoi(argv[2]);
}
