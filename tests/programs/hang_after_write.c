/*
 * An MPI program that writes and then waits to be killed: every rank writes 100 bytes to
 * OUTDIR/hang.<rank>, prints "rank R waiting", then sleeps SECONDS before MPI_Finalize.
 * Usage: hang_after_write OUTDIR SECONDS
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
    memset(buf, 'h', sizeof buf);
    snprintf(path, sizeof path, "%s/hang.%d", argv[1], rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        return 1;
    close(fd);
    printf("rank %d waiting\n", rank);
    fflush(stdout);
    sleep((unsigned)atoi(argv[2]));
    MPI_Finalize();
    return 0;
}
