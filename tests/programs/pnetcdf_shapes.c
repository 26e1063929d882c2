/*
 * The other PnetCDF call shapes, with known bytes per rank (any number of ranks,
 * every rank doing the same):
 *   a int [8][8]:   put_var_int_all (256 B), put_var1_int_all (4 B), put_vars_int_all
 *                   4x4 stride 2 (64 B), put_varm_int_all 2x3 (24 B), put_vara_all with
 *                   MPI_INT 1x8 (32 B); redef, def_var b, enddef, sync;
 *                   iget_vara_int 1x8 (32 B) + ncmpi_wait (independent mode);
 *                   get_varn_int_all {1x8, 1x4} (48 B);
 *   b double [8]:   get_var1_double (8 B, independent)
 *   then ncmpi_open (read-only), inq_varid a, get_var_int_all (256 B), close.
 * pnetcdf_shapes OUT.nc
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>

#include "program.h"

int main(int argc, char **argv)
{
    start_mpi(&argc, &argv, 1, -1, "pnetcdf_shapes OUT.nc");
    int ncid, dy, dx, a, b, buf[64], back[64];
    double one = 0;
    for (int i = 0; i < 64; i++)
        buf[i] = i;
    NC_CHECK(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER, MPI_INFO_NULL, &ncid));
    NC_CHECK(ncmpi_def_dim(ncid, "y", 8, &dy));
    NC_CHECK(ncmpi_def_dim(ncid, "x", 8, &dx));
    int d2[2] = {dy, dx};
    NC_CHECK(ncmpi_def_var(ncid, "a", NC_INT, 2, d2, &a));
    NC_CHECK(ncmpi_enddef(ncid));

    MPI_Offset start[2] = {0, 0}, c44[2] = {4, 4}, s22[2] = {2, 2}, c23[2] = {2, 3}, map[2] = {1, 2};
    MPI_Offset c18[2] = {1, 8};
    NC_CHECK(ncmpi_put_var_int_all(ncid, a, buf));
    NC_CHECK(ncmpi_put_var1_int_all(ncid, a, start, buf));
    NC_CHECK(ncmpi_put_vars_int_all(ncid, a, start, c44, s22, buf));
    NC_CHECK(ncmpi_put_varm_int_all(ncid, a, start, c23, NULL, map, buf));
    NC_CHECK(ncmpi_put_vara_all(ncid, a, start, c18, buf, 8, MPI_INT));

    NC_CHECK(ncmpi_redef(ncid));
    NC_CHECK(ncmpi_def_var(ncid, "b", NC_DOUBLE, 1, &dx, &b));
    NC_CHECK(ncmpi_enddef(ncid));
    NC_CHECK(ncmpi_sync(ncid));

    int req, st;
    NC_CHECK(ncmpi_begin_indep_data(ncid));
    NC_CHECK(ncmpi_iget_vara_int(ncid, a, start, c18, back, &req));
    NC_CHECK(ncmpi_wait(ncid, 1, &req, &st));
    MPI_Offset b0 = 3;
    NC_CHECK(ncmpi_get_var1_double(ncid, b, &b0, &one));
    NC_CHECK(ncmpi_end_indep_data(ncid));

    MPI_Offset n0[2] = {1, 0}, n1[2] = {2, 4}, k0[2] = {1, 8}, k1[2] = {1, 4};
    MPI_Offset *starts[2] = {n0, n1}, *counts[2] = {k0, k1};
    NC_CHECK(ncmpi_get_varn_int_all(ncid, a, 2, starts, counts, back));
    NC_CHECK(ncmpi_close(ncid));

    NC_CHECK(ncmpi_open(MPI_COMM_WORLD, argv[1], NC_NOWRITE, MPI_INFO_NULL, &ncid));
    NC_CHECK(ncmpi_inq_varid(ncid, "a", &a));
    NC_CHECK(ncmpi_get_var_int_all(ncid, a, back));
    NC_CHECK(ncmpi_close(ncid));
    MPI_Finalize();
    return 0;
}
