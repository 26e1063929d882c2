/*
 * h5_convert OUTDIR MODE: collective HDF5 writes that HDF5 may do independently
 * (tests/test_library_layers.py).  File OUTDIR/convert.h5 through the MPI-IO driver, one
 * dataset /values of N*K elements; every rank writes its K elements in 8 H5Dwrite calls of
 * K/8, each with H5FD_MPIO_COLLECTIVE in the transfer list:
 *   convert  the memory type is int, the file type 64-bit: HDF5 converts, and (1.10, 1.12)
 *            does the transfers independently;
 *   same     the memory type is the file's: HDF5 does them collectively.
 * Rank 0 prints "cause LOCAL GLOBAL" (H5Pget_mpio_no_collective_cause after the last write).
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

#define K 4096
#define PARTS 8

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, 2, "h5_convert OUTDIR convert|same");
    int n = world_size();
    int convert = !strcmp(argv[2], "convert");
    char path[4096];
    snprintf(path, sizeof path, "%s/convert.h5", argv[1]);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5_CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5_CHECK(f);
    hid_t coll = H5Pcreate(H5P_DATASET_XFER);
    H5_CHECK(H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE));

    hsize_t dim = (hsize_t)n * K;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    hid_t file_type = convert ? H5T_STD_I64LE : H5T_NATIVE_INT;
    hid_t d = H5Dcreate2(f, "values", file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5_CHECK(d);
    int *buf = malloc(sizeof(int) * K);
    for (int i = 0; i < K; i++)
        buf[i] = rank * K + i;
    hsize_t count = K / PARTS;
    hid_t mem = H5Screate_simple(1, &count, NULL);
    for (int p = 0; p < PARTS; p++) {
        hsize_t start = (hsize_t)rank * K + (hsize_t)p * count;
        H5_CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL));
        H5_CHECK(H5Dwrite(d, H5T_NATIVE_INT, mem, space, coll, buf + p * count));
    }
    uint32_t local = 0, global = 0;
    H5_CHECK(H5Pget_mpio_no_collective_cause(coll, &local, &global));
    if (rank == 0)
        printf("cause %u %u\n", (unsigned)local, (unsigned)global);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(d);
    H5Pclose(coll);
    H5Pclose(fapl);
    H5Fclose(f);
    free(buf);
    MPI_Finalize();
    return 0;
}
