/*
 * hdf5_loop MODE N FILE: ns per call of N HDF5 dataset transfers of one double (a 1-element
 * regular hyperslab of a 1-D dataset of N doubles), timed around the loop only; prints the
 * mean ns per call.  MODE: "write" (H5Dwrite) or "read" (H5Dread), through the sec2 driver
 * (serial: the cost is HDF5's own) or "write-mpio" (the MPI-IO driver, independent).
 * One process (MPI singleton).  Used by bench/hdf5_overhead.py.
 */
#include <hdf5.h>
#include <mpi.h>
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
    if (argc < 4) {
        fprintf(stderr, "usage: hdf5_loop write|read|write-mpio N FILE\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = atol(argv[2]);
    int mpio = strcmp(mode, "write-mpio") == 0, reading = strcmp(mode, "read") == 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (mpio)
        H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t f = H5Fcreate(argv[3], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dim = (hsize_t)n, one = 1;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ms = H5Screate_simple(1, &one, NULL);
    double v = 1.0;
    if (reading) /* something to read */
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, calloc((size_t)n, sizeof(double)));
    double t0 = now();
    for (long i = 0; i < n; i++) {
        hsize_t start = (hsize_t)i;
        H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &one, NULL);
        herr_t rc = reading ? H5Dread(d, H5T_NATIVE_DOUBLE, ms, space, H5P_DEFAULT, &v)
                            : H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, space, H5P_DEFAULT, &v);
        if (rc < 0)
            return 1;
    }
    double t1 = now();
    H5Sclose(ms);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    printf("%.1f\n", (t1 - t0) * 1e9 / (double)n);
    MPI_Finalize();
    return 0;
}
