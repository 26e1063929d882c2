/*
 * MPI communication with exactly known per-rank calls and bytes, for
 * checking the MPI layer of libpario (run on 4 ranks; any size works).
 *
 * Expected per rank r (n ranks), as counted by src/runtime/mpi.c:
 *   mpi_p2p_calls  = 6     Sendrecv; Irecv + Isend + Waitall; Irecv + Isend
 *   mpi_p2p_bytes  = 8808  8000 (1000 ints each way) + 800 (50 doubles each
 *                          way) + 8 (one int each way)
 *   mpi_coll_calls = 7     Allreduce, Barrier, Ibcast, Wait (on the Ibcast),
 *                          Ibarrier, Waitall (holding the Ibarrier), Gather
 *   mpi_coll_bytes = 100, + 400 on rank 0
 *                          80 (Allreduce of 10 doubles) + 20 (Gather of
 *                          5 ints; MPI_IN_PLACE on the root) + 400 (the
 *                          Ibcast root's 100 ints)
 *   mpi_other_calls = 3    MPI_Init, Comm_dup, Comm_free
 *
 * Usage: mpi_comm [exit-code]   (every rank exits with it after MPI_Finalize)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int right = (rank + 1) % n, left = (rank - 1 + n) % n;
    int errors = 0;

    /* 1. ring exchange of 1000 ints */
    int sbuf[1000], rbuf[1000];
    for (int i = 0; i < 1000; i++)
        sbuf[i] = rank * 1000 + i;
    MPI_Status st;
    MPI_Sendrecv(sbuf, 1000, MPI_INT, right, 1, rbuf, 1000, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    errors += rbuf[999] != left * 1000 + 999;

    /* 2, 3. Allreduce of 10 doubles, Barrier */
    double d[10], dsum[10];
    for (int i = 0; i < 10; i++)
        d[i] = rank + i;
    MPI_Allreduce(d, dsum, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    errors += dsum[0] != (double)n * (n - 1) / 2;
    MPI_Barrier(MPI_COMM_WORLD);

    /* 4. Ibcast of 100 ints + Wait */
    int b[100];
    for (int i = 0; i < 100; i++)
        b[i] = rank == 0 ? 7 * i : -1;
    MPI_Request req;
    MPI_Ibcast(b, 100, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    errors += b[99] != 7 * 99;

    /* 5. Irecv + Isend of 50 doubles, Waitall (point-to-point) */
    double ps[50], pr[50];
    for (int i = 0; i < 50; i++)
        ps[i] = rank;
    MPI_Request rq[3];
    MPI_Irecv(pr, 50, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(ps, 50, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    errors += pr[49] != left;

    /* 6. Comm_dup + Comm_free */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_free(&dup);

    /* 7. one int each way and an Ibarrier, completed by one Waitall */
    int one = rank, got = -1;
    MPI_Irecv(&got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&one, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[2]);
    MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    errors += got != left;

    /* 8. Gather of 5 ints, in place on the root */
    int g[5 * 64] = {0};
    for (int i = 0; i < 5; i++)
        g[rank * 5 + i] = rank;
    if (rank == 0)
        MPI_Gather(MPI_IN_PLACE, 5, MPI_INT, g, 5, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Gather(&g[rank * 5], 5, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0 && n <= 64)
        errors += g[5 * (n - 1)] != n - 1;

    /* compute */
    double x = 0;
    for (long i = 1; i < 20000000; i++)
        x += 1.0 / (double)i;
    sink = x;

    if (errors)
        fprintf(stderr, "mpi_comm: rank %d: %d wrong results\n", rank, errors);
    MPI_Finalize();
    if (errors)
        return 1;
    return argc > 1 ? atoi(argv[1]) : 0;
}
