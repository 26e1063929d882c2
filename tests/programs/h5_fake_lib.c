/*
 * A stand-in libhdf5 of another version (tests/test_hdf5_layer.py): H5get_libversion says
 * 1.14.0 and the wrapped calls pario intercepts succeed without doing anything, so a
 * program linked with it checks that pario's HDF5 layer stays silent and passes every
 * call through when the library is not the major.minor it was built against.
 */
#include <stdint.h>

typedef int64_t hid_t;
typedef int herr_t;

herr_t H5get_libversion(unsigned *maj, unsigned *min, unsigned *rel)
{
    *maj = 1;
    *min = 14;
    *rel = 0;
    return 0;
}
hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl)
{
    (void)name, (void)flags, (void)fcpl, (void)fapl;
    return 72057594037927936; /* what a real file id looks like */
}
hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl)
{
    (void)loc, (void)name, (void)type, (void)space, (void)lcpl, (void)dcpl, (void)dapl;
    return 360287970189639680;
}
herr_t H5Dwrite(hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, const void *buf)
{
    (void)d, (void)mt, (void)ms, (void)fs, (void)dxpl, (void)buf;
    return 0;
}
herr_t H5Dclose(hid_t d) { return d == 360287970189639680 ? 0 : -1; }
herr_t H5Fclose(hid_t f) { return f == 72057594037927936 ? 0 : -1; }
