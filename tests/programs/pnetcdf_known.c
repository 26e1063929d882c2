/*
 * PnetCDF calls with known counts and bytes, for the pnetcdf layer's tests.
 * pnetcdf_known OUT.nc  (any number of ranks P; rank r owns rows 4r .. 4r+3)
 *
 *   temp  double [4P][8]   put_vara_double_all: 4x8 (256 B) and 1x(r+1) (8(r+1) B);
 *                          get_vara_double_all of the 4x8 block (256 B), checked
 *   step  int    [time][8] record variable: put_vara_int of record r (32 B),
 *                          independent, inside begin/end_indep_data
 *   nb    float  [4P][8]   iput_vara_float of 2x8 twice (64 B each) + wait_all(2)
 *   bp    short  [4P][8]   bput_vara_short of 4x8 (64 B), attach/detach, wait_all(NC_REQ_ALL)
 *   vn    int    [4P][8]   put_varn_int_all of {1x8, 2x4} (64 B)
 *
 * Prints "offset <temp's file offset> extent <header extent>" on rank 0.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>

#include "program.h"

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 1, -1, "pnetcdf_known OUT.nc");
    int np = world_size();
    int ncid, dy, dx, dt, temp, step, nb, bp, vn;
    NC_CHECK(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid));
    NC_CHECK(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dt));
    NC_CHECK(ncmpi_def_dim(ncid, "y", 4 * np, &dy));
    NC_CHECK(ncmpi_def_dim(ncid, "x", 8, &dx));
    int d2[2] = {dy, dx}, rec2[2] = {dt, dx};
    NC_CHECK(ncmpi_def_var(ncid, "temp", NC_DOUBLE, 2, d2, &temp));
    NC_CHECK(ncmpi_def_var(ncid, "step", NC_INT, 2, rec2, &step));
    NC_CHECK(ncmpi_def_var(ncid, "nb", NC_FLOAT, 2, d2, &nb));
    NC_CHECK(ncmpi_def_var(ncid, "bp", NC_SHORT, 2, d2, &bp));
    NC_CHECK(ncmpi_def_var(ncid, "vn", NC_INT, 2, d2, &vn));
    NC_CHECK(ncmpi_enddef(ncid));

    double t[32], back[32];
    float f[32];
    short s[32];
    int iv[16], sv[8];
    for (int i = 0; i < 32; i++) {
        t[i] = rank * 100 + i;
        f[i] = (float)i;
        s[i] = (short)i;
    }
    for (int i = 0; i < 16; i++)
        iv[i] = rank * 10 + i;
    for (int i = 0; i < 8; i++)
        sv[i] = rank;

    MPI_Offset start[2] = {4 * rank, 0}, count[2] = {4, 8};
    NC_CHECK(ncmpi_put_vara_double_all(ncid, temp, start, count, t));
    MPI_Offset c1[2] = {1, rank + 1};
    NC_CHECK(ncmpi_put_vara_double_all(ncid, temp, start, c1, t));

    NC_CHECK(ncmpi_begin_indep_data(ncid));
    MPI_Offset rs[2] = {rank, 0}, rc[2] = {1, 8};
    NC_CHECK(ncmpi_put_vara_int(ncid, step, rs, rc, sv));
    NC_CHECK(ncmpi_end_indep_data(ncid));

    int req[2], st[2];
    MPI_Offset s0[2] = {4 * rank, 0}, s1[2] = {4 * rank + 2, 0}, half[2] = {2, 8};
    NC_CHECK(ncmpi_iput_vara_float(ncid, nb, s0, half, f, &req[0]));
    NC_CHECK(ncmpi_iput_vara_float(ncid, nb, s1, half, f + 16, &req[1]));
    NC_CHECK(ncmpi_wait_all(ncid, 2, req, st));

    int breq;
    NC_CHECK(ncmpi_buffer_attach(ncid, 1024));
    NC_CHECK(ncmpi_bput_vara_short(ncid, bp, start, count, s, &breq));
    NC_CHECK(ncmpi_wait_all(ncid, NC_REQ_ALL, NULL, NULL));
    NC_CHECK(ncmpi_buffer_detach(ncid));

    MPI_Offset n0[2] = {4 * rank, 0}, n1[2] = {4 * rank + 2, 0}, k0[2] = {1, 8}, k1[2] = {2, 4};
    MPI_Offset *starts[2] = {n0, n1}, *counts[2] = {k0, k1};
    NC_CHECK(ncmpi_put_varn_int_all(ncid, vn, 2, starts, counts, iv));

    NC_CHECK(ncmpi_get_vara_double_all(ncid, temp, start, count, back));
    for (int i = 0; i < 32; i++)
        if (back[i] != t[i]) {
            fprintf(stderr, "rank %d: temp[%d] = %g, wrote %g\n", rank, i, back[i], t[i]);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    MPI_Offset off = 0, extent = 0;
    NC_CHECK(ncmpi_inq_varoffset(ncid, temp, &off));
    NC_CHECK(ncmpi_inq_header_extent(ncid, &extent));
    NC_CHECK(ncmpi_close(ncid));
    if (rank == 0)
        printf("offset %lld extent %lld\n", (long long)off, (long long)extent);
    MPI_Finalize();
    return 0;
}
