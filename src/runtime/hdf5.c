/*
 * HDF5 layer: files (H5F) and datasets (H5D) of programs that call libhdf5.
 * This file so far holds the two layers' descriptions (counter names, where
 * the generic code finds bytes, times and the shared-file statistics); the
 * wrappers come with the HDF5 capture (issue 11).
 */
#include "core.h"

#define X(name, doc) #name,
static const char *const h5f_counter_names[] = {PARIO_H5F_COUNTERS};
static const char *const h5f_fcounter_names[] = {PARIO_H5F_FCOUNTERS};
static const char *const h5d_counter_names[] = {PARIO_H5D_COUNTERS};
static const char *const h5d_fcounter_names[] = {PARIO_H5D_FCOUNTERS};
#undef X

_Static_assert(H5F_NUM_COUNTERS <= PARIO_MAX_COUNTERS && H5D_NUM_COUNTERS <= PARIO_MAX_COUNTERS,
               "HDF5 counters exceed PARIO_MAX_COUNTERS");
_Static_assert(H5F_NUM_FCOUNTERS <= PARIO_MAX_FCOUNTERS && H5D_NUM_FCOUNTERS <= PARIO_MAX_FCOUNTERS,
               "HDF5 float counters exceed PARIO_MAX_FCOUNTERS");

/* What every rank sees alike, and per-rank maxima: reduced by max. */
static const unsigned char h5f_max_reduced[H5F_NUM_COUNTERS] = {
    [H5F_USE_MPIIO] = 1,          [H5F_ALIGN_THRESHOLD] = 1,      [H5F_ALIGNMENT] = 1,
    [H5F_META_BLOCK_SIZE] = 1,    [H5F_SIEVE_BUF_SIZE] = 1,       [H5F_COLL_METADATA_READS] = 1,
    [H5F_COLL_METADATA_WRITES] = 1,
};
static const unsigned char h5d_max_reduced[H5D_NUM_COUNTERS] = {
    [H5D_MAX_READ_SIZE] = 1,   [H5D_MAX_WRITE_SIZE] = 1,  [H5D_DATASPACE_NDIMS] = 1,
    [H5D_DATASPACE_NPOINTS] = 1, [H5D_DATATYPE_SIZE] = 1, [H5D_LAYOUT] = 1,
    [H5D_CHUNK_SIZE_D1] = 1,   [H5D_CHUNK_SIZE_D2] = 1,   [H5D_CHUNK_SIZE_D3] = 1,
    [H5D_CHUNK_SIZE_D4] = 1,   [H5D_CHUNK_SIZE_D5] = 1,   [H5D_USE_MPIIO_COLLECTIVE] = 1,
    [H5D_FILE_REC_ID] = 1,
};

const struct pario_layer_desc pario_h5f_desc = {
    .name = "h5f",
    .ncounters = H5F_NUM_COUNTERS,
    .nfcounters = H5F_NUM_FCOUNTERS,
    .counter_names = h5f_counter_names,
    .fcounter_names = h5f_fcounter_names,
    .c_bytes_read = H5F_BYTES_READ,
    .c_bytes_written = H5F_BYTES_WRITTEN,
    .c_max_byte_read = -1,
    .c_max_byte_written = -1,
    .c_max_read_size = -1,
    .c_max_write_size = -1,
    .c_nranks = H5F_NRANKS,
    .c_fastest_rank = H5F_FASTEST_RANK,
    .c_fastest_bytes = H5F_FASTEST_RANK_BYTES,
    .c_slowest_rank = H5F_SLOWEST_RANK,
    .c_slowest_bytes = H5F_SLOWEST_RANK_BYTES,
    .c_max_reduced = h5f_max_reduced,
    .c_seq_reads = -1,
    .c_consec_reads = -1,
    .c_rw_switches = -1,
    .c_size_read0 = -1,
    .c_size_write0 = -1,
    .f_open_start = H5F_F_OPEN_START_TIMESTAMP,
    .f_close_end = H5F_F_CLOSE_END_TIMESTAMP,
    .f_read_time = H5F_F_READ_TIME,
    .f_write_time = H5F_F_WRITE_TIME,
    .f_meta_time = H5F_F_META_TIME,
    .f_max_read_time = -1,
    .f_max_write_time = -1,
    .f_fastest_time = H5F_F_FASTEST_RANK_TIME,
    .f_slowest_time = H5F_F_SLOWEST_RANK_TIME,
    .f_var_time = H5F_F_VARIANCE_RANK_TIME,
    .f_var_bytes = H5F_F_VARIANCE_RANK_BYTES,
};

const struct pario_layer_desc pario_h5d_desc = {
    .name = "h5d",
    .ncounters = H5D_NUM_COUNTERS,
    .nfcounters = H5D_NUM_FCOUNTERS,
    .counter_names = h5d_counter_names,
    .fcounter_names = h5d_fcounter_names,
    .c_bytes_read = H5D_BYTES_READ,
    .c_bytes_written = H5D_BYTES_WRITTEN,
    .c_max_byte_read = -1,
    .c_max_byte_written = -1,
    .c_max_read_size = H5D_MAX_READ_SIZE,
    .c_max_write_size = H5D_MAX_WRITE_SIZE,
    .c_nranks = H5D_NRANKS,
    .c_fastest_rank = H5D_FASTEST_RANK,
    .c_fastest_bytes = H5D_FASTEST_RANK_BYTES,
    .c_slowest_rank = H5D_SLOWEST_RANK,
    .c_slowest_bytes = H5D_SLOWEST_RANK_BYTES,
    .c_max_reduced = h5d_max_reduced,
    .c_seq_reads = -1,
    .c_consec_reads = -1,
    .c_rw_switches = H5D_RW_SWITCHES,
    .c_size_read0 = H5D_SIZE_READ_AGG_0_100,
    .c_size_write0 = H5D_SIZE_WRITE_AGG_0_100,
    .f_open_start = H5D_F_OPEN_START_TIMESTAMP,
    .f_close_end = H5D_F_CLOSE_END_TIMESTAMP,
    .f_read_time = H5D_F_READ_TIME,
    .f_write_time = H5D_F_WRITE_TIME,
    .f_meta_time = H5D_F_META_TIME,
    .f_max_read_time = H5D_F_MAX_READ_TIME,
    .f_max_write_time = H5D_F_MAX_WRITE_TIME,
    .f_fastest_time = H5D_F_FASTEST_RANK_TIME,
    .f_slowest_time = H5D_F_SLOWEST_RANK_TIME,
    .f_var_time = H5D_F_VARIANCE_RANK_TIME,
    .f_var_bytes = H5D_F_VARIANCE_RANK_BYTES,
};
