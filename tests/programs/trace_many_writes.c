/*
 * Rank R makes COUNT * (R + 1) 1-byte pwrite calls to OUTDIR/w.<R>, the i-th
 * at offset (i * 7) % 1000: a trace large enough that the log spans several
 * of the runtime's write windows.  Usage: trace_many_writes OUTDIR COUNT
 */
#define _XOPEN_SOURCE 700
#include "program.h"
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, 2, "trace_many_writes OUTDIR COUNT");
    char path[4096];
    snprintf(path, sizeof path, "%s/w.%d", argv[1], rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long count = atol(argv[2]) * (rank + 1);
    char c = 'w';
    for (long i = 0; i < count; i++)
        if (pwrite(fd, &c, 1, (off_t)((i * 7) % 1000)) != 1)
            MPI_Abort(MPI_COMM_WORLD, 1);
    close(fd);
    MPI_Finalize();
    return 0;
}
