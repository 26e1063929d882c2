/*
 * h5_known OUTDIR: HDF5 I/O with known bytes on every rank (tests/test_hdf5_layer.py).
 * File OUTDIR/known.h5 through the MPI-IO driver:
 *   /contig        double[N*K], contiguous: each rank writes its K elements collectively
 *                  (regular hyperslab), then reads 10 + 20 of them independently
 *                  (irregular hyperslab: two blocks);
 *   /grid/chunked  int[N*8][64], chunks 8 x 16: each rank writes its 8 rows independently;
 *   /points        int64[N*4]: each rank writes 3 points independently;
 * H5Fflush, close; reopen read-only, read /contig whole (H5S_ALL) collectively.
 * Rank 0 prints "offset /contig <address>" (H5Dget_offset) for the alignment tests.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "program.h"

#define K 1024

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 1, -1, "h5_known OUTDIR");
    int n = world_size();
    char path[4096];
    snprintf(path, sizeof path, "%s/known.h5", argv[1]);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5_CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5_CHECK(f);
    hid_t coll = H5Pcreate(H5P_DATASET_XFER);
    H5_CHECK(H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE));

    /* /contig: collective regular hyperslab writes */
    hsize_t dim = (hsize_t)n * K;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    hid_t d = H5Dcreate2(f, "contig", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5_CHECK(d);
    double *buf = malloc(sizeof(double) * (size_t)n * K);
    for (int i = 0; i < K; i++)
        buf[i] = rank * K + i;
    hsize_t start = (hsize_t)rank * K, count = K;
    hid_t fs = H5Dget_space(d);
    H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
    hid_t ms = H5Screate_simple(1, &count, NULL);
    H5_CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, coll, buf));
    H5Sclose(ms);
    /* independent irregular read: [rank*K, +10) and [rank*K+100, +20) */
    hsize_t s1 = start, c1 = 10, s2 = start + 100, c2 = 20, m = 30;
    H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &s1, NULL, &c1, NULL));
    H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_OR, &s2, NULL, &c2, NULL));
    ms = H5Screate_simple(1, &m, NULL);
    H5_CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf));
    if (buf[0] != rank * K || buf[10] != rank * K + 100) {
        fprintf(stderr, "h5_known: read back %g %g\n", buf[0], buf[10]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    H5Sclose(ms);
    H5Sclose(fs);
    if (rank == 0)
        printf("offset /contig %llu\n", (unsigned long long)H5Dget_offset(d));
    H5Dclose(d);
    H5Sclose(space);

    /* /grid/chunked: independent writes of 8 rows x 64 */
    hid_t g = H5Gcreate2(f, "grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims2[2] = {(hsize_t)n * 8, 64}, chunk[2] = {8, 16};
    space = H5Screate_simple(2, dims2, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5_CHECK(H5Pset_chunk(dcpl, 2, chunk));
    d = H5Dcreate2(g, "chunked", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5_CHECK(d);
    int ibuf[8 * 64];
    for (int i = 0; i < 8 * 64; i++)
        ibuf[i] = rank;
    hsize_t st2[2] = {(hsize_t)rank * 8, 0}, ct2[2] = {8, 64};
    fs = H5Dget_space(d);
    H5_CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st2, NULL, ct2, NULL));
    ms = H5Screate_simple(2, ct2, NULL);
    H5_CHECK(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, ibuf));
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Gclose(g);

    /* /points: 3 points per rank, independent */
    hsize_t np = (hsize_t)n * 4;
    space = H5Screate_simple(1, &np, NULL);
    d = H5Dcreate2(f, "points", H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5_CHECK(d);
    hsize_t pts[3] = {(hsize_t)rank * 4, (hsize_t)rank * 4 + 1, (hsize_t)rank * 4 + 3}, three = 3;
    long long lbuf[3] = {rank, rank, rank};
    fs = H5Dget_space(d);
    H5_CHECK(H5Sselect_elements(fs, H5S_SELECT_SET, 3, pts));
    ms = H5Screate_simple(1, &three, NULL);
    H5_CHECK(H5Dwrite(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, lbuf));
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Sclose(space);

    H5_CHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    H5_CHECK(H5Fclose(f));

    /* reopen, read /contig whole, collectively */
    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5_CHECK(f);
    d = H5Dopen2(f, "/contig", H5P_DEFAULT);
    H5_CHECK(d);
    H5_CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, coll, buf));
    for (int r = 0; r < n; r++)
        if (buf[(size_t)r * K + 7] != r * K + 7) {
            fprintf(stderr, "h5_known: whole read %d\n", r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    H5Dclose(d);
    H5_CHECK(H5Fclose(f));
    H5Pclose(coll);
    H5Pclose(fapl);
    free(buf);
    MPI_Finalize();
    return 0;
}
