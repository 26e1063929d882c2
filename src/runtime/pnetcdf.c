/*
 * PnetCDF layer: files and variables of programs that call libpnetcdf.
 * This file so far holds the two layers' descriptions (counter names, where
 * the generic code finds bytes, times and the shared-file statistics); the
 * wrappers come with the HDF5 capture (issue 11).
 */
#include "core.h"

#define X(name, doc) #name,
static const char *const pnetcdf_file_counter_names[] = {PARIO_PNETCDF_FILE_COUNTERS};
static const char *const pnetcdf_file_fcounter_names[] = {PARIO_PNETCDF_FILE_FCOUNTERS};
static const char *const pnetcdf_var_counter_names[] = {PARIO_PNETCDF_VAR_COUNTERS};
static const char *const pnetcdf_var_fcounter_names[] = {PARIO_PNETCDF_VAR_FCOUNTERS};
#undef X

_Static_assert(PNETCDF_FILE_NUM_COUNTERS <= PARIO_MAX_COUNTERS && PNETCDF_VAR_NUM_COUNTERS <= PARIO_MAX_COUNTERS,
               "PnetCDF counters exceed PARIO_MAX_COUNTERS");
_Static_assert(PNETCDF_FILE_NUM_FCOUNTERS <= PARIO_MAX_FCOUNTERS && PNETCDF_VAR_NUM_FCOUNTERS <= PARIO_MAX_FCOUNTERS,
               "PnetCDF float counters exceed PARIO_MAX_FCOUNTERS");

/* What every rank sees alike, and per-rank maxima: reduced by max. */
static const unsigned char pnetcdf_file_max_reduced[PNETCDF_FILE_NUM_COUNTERS] = {
    [PNETCDF_FILE_HEADER_SIZE] = 1,  [PNETCDF_FILE_HEADER_EXTENT] = 1, [PNETCDF_FILE_HEADER_ALIGN] = 1,
    [PNETCDF_FILE_VAR_ALIGN] = 1,    [PNETCDF_FILE_RECORD_ALIGN] = 1,
};
static const unsigned char pnetcdf_var_max_reduced[PNETCDF_VAR_NUM_COUNTERS] = {
    [PNETCDF_VAR_MAX_READ_SIZE] = 1, [PNETCDF_VAR_MAX_WRITE_SIZE] = 1, [PNETCDF_VAR_NDIMS] = 1,
    [PNETCDF_VAR_NPOINTS] = 1,       [PNETCDF_VAR_DATATYPE_SIZE] = 1,  [PNETCDF_VAR_IS_RECORD_VAR] = 1,
    [PNETCDF_VAR_FILE_REC_ID] = 1,
};

const struct pario_layer_desc pario_pnetcdf_file_desc = {
    .name = "pnetcdf_file",
    .ncounters = PNETCDF_FILE_NUM_COUNTERS,
    .nfcounters = PNETCDF_FILE_NUM_FCOUNTERS,
    .counter_names = pnetcdf_file_counter_names,
    .fcounter_names = pnetcdf_file_fcounter_names,
    .c_bytes_read = PNETCDF_FILE_BYTES_READ,
    .c_bytes_written = PNETCDF_FILE_BYTES_WRITTEN,
    .c_max_byte_read = -1,
    .c_max_byte_written = -1,
    .c_max_read_size = -1,
    .c_max_write_size = -1,
    .c_nranks = PNETCDF_FILE_NRANKS,
    .c_fastest_rank = PNETCDF_FILE_FASTEST_RANK,
    .c_fastest_bytes = PNETCDF_FILE_FASTEST_RANK_BYTES,
    .c_slowest_rank = PNETCDF_FILE_SLOWEST_RANK,
    .c_slowest_bytes = PNETCDF_FILE_SLOWEST_RANK_BYTES,
    .c_max_reduced = pnetcdf_file_max_reduced,
    .c_seq_reads = -1,
    .c_consec_reads = -1,
    .c_rw_switches = -1,
    .c_size_read0 = -1,
    .c_size_write0 = -1,
    .f_open_start = PNETCDF_FILE_F_OPEN_START_TIMESTAMP,
    .f_close_end = PNETCDF_FILE_F_CLOSE_END_TIMESTAMP,
    .f_read_time = PNETCDF_FILE_F_READ_TIME,
    .f_write_time = PNETCDF_FILE_F_WRITE_TIME,
    .f_meta_time = PNETCDF_FILE_F_META_TIME,
    .f_max_read_time = -1,
    .f_max_write_time = -1,
    .f_fastest_time = PNETCDF_FILE_F_FASTEST_RANK_TIME,
    .f_slowest_time = PNETCDF_FILE_F_SLOWEST_RANK_TIME,
    .f_var_time = PNETCDF_FILE_F_VARIANCE_RANK_TIME,
    .f_var_bytes = PNETCDF_FILE_F_VARIANCE_RANK_BYTES,
};

const struct pario_layer_desc pario_pnetcdf_var_desc = {
    .name = "pnetcdf_var",
    .ncounters = PNETCDF_VAR_NUM_COUNTERS,
    .nfcounters = PNETCDF_VAR_NUM_FCOUNTERS,
    .counter_names = pnetcdf_var_counter_names,
    .fcounter_names = pnetcdf_var_fcounter_names,
    .c_bytes_read = PNETCDF_VAR_BYTES_READ,
    .c_bytes_written = PNETCDF_VAR_BYTES_WRITTEN,
    .c_max_byte_read = -1,
    .c_max_byte_written = -1,
    .c_max_read_size = PNETCDF_VAR_MAX_READ_SIZE,
    .c_max_write_size = PNETCDF_VAR_MAX_WRITE_SIZE,
    .c_nranks = PNETCDF_VAR_NRANKS,
    .c_fastest_rank = PNETCDF_VAR_FASTEST_RANK,
    .c_fastest_bytes = PNETCDF_VAR_FASTEST_RANK_BYTES,
    .c_slowest_rank = PNETCDF_VAR_SLOWEST_RANK,
    .c_slowest_bytes = PNETCDF_VAR_SLOWEST_RANK_BYTES,
    .c_max_reduced = pnetcdf_var_max_reduced,
    .c_seq_reads = -1,
    .c_consec_reads = -1,
    .c_rw_switches = PNETCDF_VAR_RW_SWITCHES,
    .c_size_read0 = PNETCDF_VAR_SIZE_READ_AGG_0_100,
    .c_size_write0 = PNETCDF_VAR_SIZE_WRITE_AGG_0_100,
    .f_open_start = PNETCDF_VAR_F_OPEN_START_TIMESTAMP,
    .f_close_end = PNETCDF_VAR_F_CLOSE_END_TIMESTAMP,
    .f_read_time = PNETCDF_VAR_F_READ_TIME,
    .f_write_time = PNETCDF_VAR_F_WRITE_TIME,
    .f_meta_time = PNETCDF_VAR_F_META_TIME,
    .f_max_read_time = PNETCDF_VAR_F_MAX_READ_TIME,
    .f_max_write_time = PNETCDF_VAR_F_MAX_WRITE_TIME,
    .f_fastest_time = PNETCDF_VAR_F_FASTEST_RANK_TIME,
    .f_slowest_time = PNETCDF_VAR_F_SLOWEST_RANK_TIME,
    .f_var_time = PNETCDF_VAR_F_VARIANCE_RANK_TIME,
    .f_var_bytes = PNETCDF_VAR_F_VARIANCE_RANK_BYTES,
};
