/* Groups and attributes through HDF5's MPI-IO driver, for tests/test_hdf5_groups.py:
 * groups.h5 in DIR gets NG groups /g<i>, each with a 1000-byte attribute "step"
 * (125 int64 = i*1000 + k), and the root an attribute "title"; the file is then
 * reopened and every group and attribute read back through H5Gopen2/H5Aopen/
 * H5Aopen_by_name/H5Oopen (the object headers are read through MPI-IO then).
 * Every call is made by every rank, in this order:
 *   H5Fcreate; NG x (H5Gcreate2 H5Acreate2 H5Awrite H5Aclose H5Gclose);
 *   H5Acreate_by_name H5Awrite H5Aclose; H5Fclose;
 *   H5Fopen; NG x (H5Gopen2 H5Aopen H5Aread H5Aclose H5Gclose);
 *   H5Aopen_by_name H5Aread H5Aclose; H5Oopen H5Oclose; H5Fclose.
 * Usage: h5_groups DIR.  Exit 1 on any failure or wrong value. */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "program.h"

#define NG 8
#define NV 125

static hid_t mpio_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5_CHECK(fapl);
    H5_CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    return fapl;
}

static void check_values(const int64_t *v, int g)
{
    for (int k = 0; k < NV; k++)
        if (v[k] != (int64_t)g * 1000 + k) {
            fprintf(stderr, "h5_groups: /g%d step[%d] = %lld\n", g, k, (long long)v[k]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

int main(int argc, char **argv)
{
    start_mpi(&argc, &argv, 1, 1, "h5_groups DIR");
    char path[4096], name[32];
    snprintf(path, sizeof path, "%s/groups.h5", argv[1]);
    int64_t v[NV];
    hsize_t nv = NV;
    hid_t space = H5Screate_simple(1, &nv, NULL), scalar = H5Screate(H5S_SCALAR);
    H5_CHECK(space);
    H5_CHECK(scalar);

    hid_t fapl = mpio_fapl();
    hid_t fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5_CHECK(fid);
    for (int g = 0; g < NG; g++) {
        snprintf(name, sizeof name, "/g%d", g);
        hid_t gid = H5Gcreate2(fid, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5_CHECK(gid);
        hid_t aid = H5Acreate2(gid, "step", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
        H5_CHECK(aid);
        for (int k = 0; k < NV; k++)
            v[k] = (int64_t)g * 1000 + k;
        H5_CHECK(H5Awrite(aid, H5T_NATIVE_INT64, v));
        H5_CHECK(H5Aclose(aid));
        H5_CHECK(H5Gclose(gid));
    }
    double title = 3.25;
    hid_t aid = H5Acreate_by_name(fid, ".", "title", H5T_IEEE_F64LE, scalar, H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT);
    H5_CHECK(aid);
    H5_CHECK(H5Awrite(aid, H5T_NATIVE_DOUBLE, &title));
    H5_CHECK(H5Aclose(aid));
    H5_CHECK(H5Fclose(fid));

    fid = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5_CHECK(fid);
    for (int g = 0; g < NG; g++) {
        snprintf(name, sizeof name, "/g%d", g);
        hid_t gid = H5Gopen2(fid, name, H5P_DEFAULT);
        H5_CHECK(gid);
        aid = H5Aopen(gid, "step", H5P_DEFAULT);
        H5_CHECK(aid);
        H5_CHECK(H5Aread(aid, H5T_NATIVE_INT64, v));
        check_values(v, g);
        H5_CHECK(H5Aclose(aid));
        H5_CHECK(H5Gclose(gid));
    }
    aid = H5Aopen_by_name(fid, "/g3", "step", H5P_DEFAULT, H5P_DEFAULT);
    H5_CHECK(aid);
    H5_CHECK(H5Aread(aid, H5T_NATIVE_INT64, v));
    check_values(v, 3);
    H5_CHECK(H5Aclose(aid));
    hid_t obj = H5Oopen(fid, "/g5", H5P_DEFAULT);
    H5_CHECK(obj);
    H5_CHECK(H5Oclose(obj));
    H5_CHECK(H5Fclose(fid));

    H5Pclose(fapl);
    H5Sclose(space);
    H5Sclose(scalar);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("ok %d groups\n", NG);
    MPI_Finalize();
    return 0;
}
