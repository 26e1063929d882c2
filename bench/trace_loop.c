/*
 * Per-call cost of traced MPI calls: a loop of N iterations on one rank, timed
 * as a whole.  Usage: trace_loop iprobe|isendrecv N
 *   iprobe:    one MPI_Iprobe per iteration (1 event: MPI_OTHER);
 *   isendrecv: MPI_Irecv + MPI_Isend to itself + MPI_Waitall of both
 *              (5 events: IRECV, ISEND, WAIT and two COMPLETE parts).
 * Prints the mean nanoseconds per iteration.  bench/trace_overhead.py runs it
 * without the runtime, with it, and with it tracing, interleaved.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 3) {
        fprintf(stderr, "usage: trace_loop iprobe|isendrecv N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[2]);
    int flag = 0;
    char a[8] = {0}, b[8];
    MPI_Request rq[2];
    double t0 = MPI_Wtime();
    if (strcmp(argv[1], "iprobe") == 0) {
        for (long i = 0; i < n; i++)
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    } else {
        for (long i = 0; i < n; i++) {
            MPI_Irecv(b, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(a, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        }
    }
    double t1 = MPI_Wtime();
    printf("%.3f\n", (t1 - t0) * 1e9 / (double)n);
    MPI_Finalize();
    return 0;
}
