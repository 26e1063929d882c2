/*
 * What one collective of the kinds the runtime could run at MPI_Finalize
 * costs at P ranks, each alone after a barrier (the slowest rank's time,
 * median of 7 rounds).  It is how the runtime's choice of collectives was
 * made: with Open MPI 4.1, MPI_Exscan is a chain through every rank.
 *
 *   mpicc -O2 -o /tmp/mpi_steps bench/mpi_steps.c
 *   mpirun --oversubscribe -np 256 /tmp/mpi_steps
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 7

enum { DUP_FREE, EXSCAN, GATHER, SCATTER, BCAST_24, BCAST_4K, GATHERV_270, ALLREDUCE_3, REDUCE_7, NSTEPS };

static const char *const names[NSTEPS] = {
    "MPI_Comm_dup + free", "MPI_Exscan, 3 u64", "MPI_Gather, 4 u64", "MPI_Scatter, 4 u64", "MPI_Bcast, 24 B",
    "MPI_Bcast, 4 KiB",    "MPI_Gatherv, 270 B", "MPI_Allreduce, 3 i64", "MPI_Reduce, 7 double",
};

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    uint64_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    static char plan[4096], part[270];
    uint64_t *all = malloc(4 * sizeof *all * (size_t)nprocs);
    int *cnt = malloc(2 * sizeof *cnt * (size_t)nprocs), *dsp = cnt + nprocs;
    char *win = malloc(sizeof part * (size_t)nprocs);
    if (!all || !cnt || !win)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r < nprocs; r++)
        cnt[r] = (int)sizeof part, dsp[r] = r * (int)sizeof part;
    double took[NSTEPS][ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        for (int s = 0; s < NSTEPS; s++) {
            MPI_Comm c;
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            switch (s) {
            case DUP_FREE:
                MPI_Comm_dup(MPI_COMM_WORLD, &c);
                MPI_Comm_free(&c);
                break;
            case EXSCAN: MPI_Exscan(in, out, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD); break;
            case GATHER: MPI_Gather(in, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD); break;
            case SCATTER: MPI_Scatter(all, 4, MPI_UINT64_T, out, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD); break;
            case BCAST_24: MPI_Bcast(plan, 24, MPI_BYTE, 0, MPI_COMM_WORLD); break;
            case BCAST_4K: MPI_Bcast(plan, (int)sizeof plan, MPI_BYTE, 0, MPI_COMM_WORLD); break;
            case GATHERV_270:
                MPI_Gatherv(part, (int)sizeof part, MPI_BYTE, win, cnt, dsp, MPI_BYTE, 0, MPI_COMM_WORLD);
                break;
            case ALLREDUCE_3: MPI_Allreduce(in, out, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD); break;
            case REDUCE_7: MPI_Reduce(in, out, 7, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD); break;
            }
            double mine = MPI_Wtime() - t;
            MPI_Reduce(&mine, &took[s][k], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        }
    if (rank == 0)
        for (int s = 0; s < NSTEPS; s++) {
            qsort(took[s], ROUNDS, sizeof took[s][0], by_value);
            printf("%-22s %.4f s\n", names[s], took[s][ROUNDS / 2]);
        }
    free(all);
    free(cnt);
    free(win);
    MPI_Finalize();
    return 0;
}
