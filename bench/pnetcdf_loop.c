/*
 * Per-call cost of an intercepted PnetCDF call, on one MPI rank.
 * Usage: pnetcdf_loop iput|put N PATH
 *   iput: N ncmpi_iput_var1_int posts (timed), completed by ncmpi_wait_all every 1000
 *         posts (not timed): the library's own work is a copy, so the wrapper shows
 *   put:  N ncmpi_put_var1_int in independent mode: a 4-byte write through MPI-IO each
 * Prints the mean nanoseconds per timed call.  bench/pnetcdf_overhead.py runs it with and
 * without the runtime, interleaved.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: pnetcdf_loop iput|put N PATH\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[2]);
    int ncid, dim, var, value = 7, put = strcmp(argv[1], "put") == 0;
    if (ncmpi_create(MPI_COMM_SELF, argv[3], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid) != NC_NOERR ||
        ncmpi_def_dim(ncid, "x", 1000, &dim) != NC_NOERR ||
        ncmpi_def_var(ncid, "v", NC_INT, 1, &dim, &var) != NC_NOERR || ncmpi_enddef(ncid) != NC_NOERR)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double spent = 0;
    if (put) {
        ncmpi_begin_indep_data(ncid);
        double t0 = now();
        for (long i = 0; i < n; i++) {
            MPI_Offset at = i % 1000;
            ncmpi_put_var1_int(ncid, var, &at, &value);
        }
        spent = now() - t0;
        ncmpi_end_indep_data(ncid);
    } else {
        for (long done = 0; done < n;) {
            long batch = n - done < 1000 ? n - done : 1000;
            double t0 = now();
            for (long i = 0; i < batch; i++) {
                MPI_Offset at = i;
                int req;
                ncmpi_iput_var1_int(ncid, var, &at, &value, &req);
            }
            spent += now() - t0;
            ncmpi_wait_all(ncid, NC_REQ_ALL, NULL, NULL);
            done += batch;
        }
    }
    ncmpi_close(ncid);
    printf("%.2f\n", spent * 1e9 / (double)n);
    MPI_Finalize();
    return 0;
}
