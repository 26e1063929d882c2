/*
 * h5_fake_app OUTDIR: HDF5 calls into the stand-in library of h5_fake_lib.c (version 1.14),
 * then a POSIX write of 100 bytes to OUTDIR/after.dat.  Exits 0 when every call returned
 * what the library returns (pario passed them through).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

typedef int64_t hid_t;
hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl);
hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl);
int H5Dwrite(hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, const void *buf);
int H5Dclose(hid_t d);
int H5Fclose(hid_t f);

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/fake.h5", argv[1]);
    hid_t f = H5Fcreate(path, 0, 0, 0);
    hid_t d = H5Dcreate2(f, "x", 1, 2, 0, 0, 0);
    double x[4] = {0};
    if (f != 72057594037927936 || d != 360287970189639680 || H5Dwrite(d, 1, 0, 0, 0, x) != 0 || H5Dclose(d) != 0 ||
        H5Fclose(f) != 0) {
        fprintf(stderr, "h5_fake_app: a call did not return the library's value\n");
        return 1;
    }
    snprintf(path, sizeof path, "%s/after.dat", argv[1]);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    char buf[100] = {0};
    if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || close(fd) != 0)
        return 1;
    return 0;
}
