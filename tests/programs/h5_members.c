/*
 * h5_members OUTDIR MODE: a compound dataset written member by member, or whole
 * (tests/test_library_layers.py).  File OUTDIR/particles.h5 through the MPI-IO driver, one
 * dataset /particles of N*K elements {double x, y, z; int64 id}; every rank writes its own K
 * elements, independently:
 *   members  four H5Dwrite calls, each with a memory type of one member: HDF5 reads the
 *            rank's elements back before each write to keep the other members (its
 *            "background"), so each rank re-reads its own bytes;
 *   whole    one H5Dwrite of all four members: nothing is read.
 * Rank 0 prints "wrote N*K" after the file is closed.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

#define K 65536

struct particle {
    double x, y, z;
    long long id;
};

static const char *const MEMBERS[4] = {"x", "y", "z", "id"};

/* A memory type of one member of struct particle, laid out as the struct is. */
static hid_t member_type(int m)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct particle));
    size_t at[4] = {offsetof(struct particle, x), offsetof(struct particle, y),
                    offsetof(struct particle, z), offsetof(struct particle, id)};
    H5_CHECK(H5Tinsert(t, MEMBERS[m], at[m], m == 3 ? H5T_NATIVE_LLONG : H5T_NATIVE_DOUBLE));
    return t;
}

static hid_t whole_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct particle));
    H5_CHECK(H5Tinsert(t, "x", offsetof(struct particle, x), H5T_NATIVE_DOUBLE));
    H5_CHECK(H5Tinsert(t, "y", offsetof(struct particle, y), H5T_NATIVE_DOUBLE));
    H5_CHECK(H5Tinsert(t, "z", offsetof(struct particle, z), H5T_NATIVE_DOUBLE));
    H5_CHECK(H5Tinsert(t, "id", offsetof(struct particle, id), H5T_NATIVE_LLONG));
    return t;
}

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, 2, "h5_members OUTDIR members|whole");
    int n = world_size();
    int members = !strcmp(argv[2], "members");
    char path[4096];
    snprintf(path, sizeof path, "%s/particles.h5", argv[1]);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5_CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5_CHECK(f);
    hid_t file_type = whole_type();
    hsize_t dim = (hsize_t)n * K;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    hid_t d = H5Dcreate2(f, "particles", file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5_CHECK(d);

    struct particle *buf = malloc(sizeof(struct particle) * K);
    for (int i = 0; i < K; i++) {
        long long id = (long long)rank * K + i;
        buf[i] = (struct particle){(double)id, 2.0 * (double)id, 3.0 * (double)id, id};
    }
    hsize_t start = (hsize_t)rank * K, count = K;
    H5_CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL));
    hid_t mem = H5Screate_simple(1, &count, NULL);
    if (members) {
        for (int m = 0; m < 4; m++) {
            hid_t t = member_type(m);
            H5_CHECK(H5Dwrite(d, t, mem, space, H5P_DEFAULT, buf));
            H5Tclose(t);
        }
    } else {
        H5_CHECK(H5Dwrite(d, file_type, mem, space, H5P_DEFAULT, buf));
    }
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(d);
    H5Tclose(file_type);
    H5Pclose(fapl);
    H5Fclose(f);
    free(buf);
    if (rank == 0)
        printf("wrote %lld\n", (long long)n * K);
    MPI_Finalize();
    return 0;
}
