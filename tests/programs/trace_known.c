/* Known MPI and I/O calls for the trace tests (tests/test_trace_runtime.py):
 * run on 3 ranks as `trace_known OUTDIR`.  Every call, peer, tag, byte count
 * and offset below is what the test expects to find in each rank's trace. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3 || argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 3 trace_known OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char buf[4096];
    memset(buf, rank + 1, sizeof buf);

    /* 1. blocking send 0 -> 1, tag 5, 400 bytes; received with MPI_ANY_TAG */
    if (rank == 0)
        MPI_Send(buf, 100, MPI_INT, 1, 5, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(buf, 100, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    /* 2. nonblocking: 2 -> 0 (tag 7, 64 bytes, received from MPI_ANY_SOURCE),
     *    0 -> 1 (tag 8, 16 bytes); statuses ignored */
    MPI_Request rq[2];
    if (rank == 0) {
        MPI_Irecv(buf, 8, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(buf + 1024, 16, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        MPI_Irecv(buf, 16, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &rq[0]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    } else {
        MPI_Isend(buf, 8, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Waitall(1, rq, MPI_STATUSES_IGNORE);
    }

    /* 3. a ring: 12 bytes to rank+1, from rank-1, tag 9 */
    MPI_Sendrecv(buf, 12, MPI_BYTE, (rank + 1) % 3, 9, buf + 2048, 12, MPI_BYTE, (rank + 2) % 3, 9,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    /* 4. collectives: a broadcast from rank 1 (32 bytes), an all-reduce of 32 bytes */
    MPI_Bcast(buf, 8, MPI_INT, 1, MPI_COMM_WORLD);
    double x[4] = {1, 2, 3, 4}, y[4];
    MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    /* 5. a communicator whose members, in order, are world ranks 2, 0, 1 */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + 1) % 3, &sub);
    MPI_Barrier(sub);
    MPI_Bcast(buf, 2, MPI_INT, 0, sub); /* root: sub rank 0 = world rank 2, 8 bytes */

    /* 6. a collective MPI-IO write: 1000 bytes at offset 1000 * rank */
    char path[4096];
    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)1000 * rank, buf, 1000, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);

    /* 7. POSIX: 100 bytes at offset 50 * rank + 7 of the rank's own file */
    snprintf(path, sizeof path, "%s/posix.%d", argv[1], rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (pwrite(fd, buf, 100, 50 * rank + 7) != 100)
        MPI_Abort(MPI_COMM_WORLD, 3);
    close(fd);

    /* 8. a test that completes nothing: rank 1 sends only after the barrier */
    int flag = -1;
    if (rank == 0) {
        MPI_Irecv(buf, 4, MPI_BYTE, 1, 11, MPI_COMM_WORLD, &rq[0]);
        MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            MPI_Send(buf, 4, MPI_BYTE, 0, 11, MPI_COMM_WORLD);
    }
    if (flag == 1)
        fprintf(stderr, "trace_known: MPI_Test completed a request that cannot have been sent\n");

    MPI_Comm_free(&sub);
    MPI_Finalize();
    return 0;
}
