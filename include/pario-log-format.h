/*
 * pario log format: counter lists shared by the runtime (which writes them)
 * and, through the names the runtime writes into every log's META block, by
 * the Python reader (which never hand-copies them).
 *
 * Each list is an X-macro: X(NAME, "comment").  Integer counters are int64,
 * float counters are double (seconds unless the name says otherwise).
 * Counter names follow Darshan's where the meaning is the same, so that a
 * Darshan log and a pario log map onto the same model columns.
 *
 * The byte layout of a log is described in docs/log-format.md.
 */
#ifndef PARIO_LOG_FORMAT_H
#define PARIO_LOG_FORMAT_H

#include <stdint.h>

#define PARIO_LOG_MAGIC "PARIOLOG"
#define PARIO_LOG_VERSION 4 /* 2: TRACE and TRACE_INDEX blocks (docs/trace.md); 3: column-major records;
                              4: counter columns split into high-byte planes */

/* Block kinds of the log container. */
enum pario_block_kind {
    PARIO_BLOCK_META = 1,   /* JSON: job metadata and counter names */
    PARIO_BLOCK_RANK = 2,   /* one rank: summary row + its own file records */
    PARIO_BLOCK_SHARED = 3, /* records reduced over the ranks sharing a file */
    PARIO_BLOCK_END = 4,    /* trailer: number of blocks before it */
    PARIO_BLOCK_TRACE = 5,  /* one rank's trace events (docs/trace.md), after the RANK blocks */
    PARIO_BLOCK_TRACE_INDEX = 6, /* one rank's trace index: JSON (docs/trace.md) */
};

/* ---- the layers -------------------------------------------------------------
 * Every layer the runtime keeps file records of, in the order of their
 * numbers (enum pario_layer: the layer bits of a trace event, the layer
 * column of a RANK block's hints sections, the order of META's "layers").
 * L(ID, name): the counters are PARIO_<ID>_COUNTERS and PARIO_<ID>_FCOUNTERS
 * below, named <ID>_...; the layer's own file in src/runtime/ defines its
 * descriptor pario_<name>_desc; "name" is its name in META and the Python
 * model (python/pario/model.py LAYER_TABLE, tests/test_layer_manifest.py).
 * A new layer is one line here, its two counter lists, and its file. */
#define PARIO_LAYERS(L)                                                       \
    L(POSIX, posix)                                                           \
    L(STDIO, stdio)                                                           \
    L(MPIIO, mpiio)                                                           \
    L(H5F, h5f)                   /* HDF5 files (hdf5.c) */                   \
    L(H5D, h5d)                   /* HDF5 datasets (hdf5.c) */                \
    L(PNETCDF_FILE, pnetcdf_file) /* PnetCDF files (pnetcdf.c) */             \
    L(PNETCDF_VAR, pnetcdf_var)   /* PnetCDF variables (pnetcdf.c) */

/* The I/O libraries whose calls the runtime records (their layers above):
 * L(name), the key of META's "library_layers"; the library's file defines
 * struct pario_library_status pario_<name>_status. */
#define PARIO_LIBRARIES(L) L(hdf5) L(pnetcdf)

/* The ten request-size buckets (Darshan's boundaries). */
#define PARIO_SIZE_BUCKETS(P, D)                                              \
    X(P##_SIZE_##D##_0_100, "requests of 0-100 bytes")                       \
    X(P##_SIZE_##D##_100_1K, "requests of 101 B - 1 KiB")                    \
    X(P##_SIZE_##D##_1K_10K, "requests of 1 KiB - 10 KiB")                   \
    X(P##_SIZE_##D##_10K_100K, "requests of 10 KiB - 100 KiB")               \
    X(P##_SIZE_##D##_100K_1M, "requests of 100 KiB - 1 MiB")                 \
    X(P##_SIZE_##D##_1M_4M, "requests of 1 MiB - 4 MiB")                     \
    X(P##_SIZE_##D##_4M_10M, "requests of 4 MiB - 10 MiB")                   \
    X(P##_SIZE_##D##_10M_100M, "requests of 10 MiB - 100 MiB")               \
    X(P##_SIZE_##D##_100M_1G, "requests of 100 MiB - 1 GiB")                 \
    X(P##_SIZE_##D##_1G_PLUS, "requests of more than 1 GiB")

/* Counters kept by every file record whatever the layer: time statistics
 * over the ranks, filled in by the shared-file reduction (for a record of a
 * single rank, fastest = slowest = that rank). */
#define PARIO_SHARED_COUNTERS(P)                                              \
    X(P##_NRANKS, "number of ranks that touched the file")                    \
    X(P##_FASTEST_RANK, "rank with the least I/O time on the file")          \
    X(P##_FASTEST_RANK_BYTES, "bytes moved by the fastest rank")             \
    X(P##_SLOWEST_RANK, "rank with the most I/O time on the file")           \
    X(P##_SLOWEST_RANK_BYTES, "bytes moved by the slowest rank")

#define PARIO_SHARED_FCOUNTERS(P)                                             \
    X(P##_F_FASTEST_RANK_TIME, "I/O time of the fastest rank")               \
    X(P##_F_SLOWEST_RANK_TIME, "I/O time of the slowest rank")               \
    X(P##_F_VARIANCE_RANK_TIME, "variance over ranks of I/O time")           \
    X(P##_F_VARIANCE_RANK_BYTES, "variance over ranks of bytes moved")

/* ---- POSIX ---------------------------------------------------------------- */
#define PARIO_POSIX_COUNTERS                                                  \
    X(POSIX_OPENS, "open, open64, openat, creat calls")                       \
    X(POSIX_READS, "read, pread, readv, preadv calls")                        \
    X(POSIX_WRITES, "write, pwrite, writev, pwritev calls")                   \
    X(POSIX_SEEKS, "lseek calls")                                             \
    X(POSIX_STATS, "stat family calls on the path or descriptor")            \
    X(POSIX_FSYNCS, "fsync calls")                                            \
    X(POSIX_FDSYNCS, "fdatasync calls")                                       \
    X(POSIX_TRUNCATES, "ftruncate calls")                                     \
    X(POSIX_UNLINKS, "unlink calls")                                          \
    X(POSIX_BYTES_READ, "bytes read")                                         \
    X(POSIX_BYTES_WRITTEN, "bytes written")                                   \
    X(POSIX_MAX_BYTE_READ, "highest offset read (last byte), -1 if none")     \
    X(POSIX_MAX_BYTE_WRITTEN, "highest offset written (last byte), -1 if none") \
    X(POSIX_CONSEC_READS, "reads starting exactly where the previous ended")  \
    X(POSIX_CONSEC_WRITES, "writes starting exactly where the previous ended") \
    X(POSIX_SEQ_READS, "reads at an offset >= the end of the previous")      \
    X(POSIX_SEQ_WRITES, "writes at an offset >= the end of the previous")    \
    X(POSIX_RW_SWITCHES, "changes between reading and writing")              \
    X(POSIX_FILE_NOT_ALIGNED, "requests not aligned to POSIX_FILE_ALIGNMENT") \
    X(POSIX_FILE_ALIGNMENT, "file system block size (st_blksize)")           \
    X(POSIX_MAX_READ_SIZE, "largest read request in bytes")                   \
    X(POSIX_MAX_WRITE_SIZE, "largest write request in bytes")                 \
    X(POSIX_FS_TYPE, "statfs f_type magic of the file system")               \
    /* Lustre layout read at the first open ("lustre.lov" xattr); for a   \
     * composite (PFL) layout, the last instantiated component's, read    \
     * again at each close.  All 0 when the file is not on Lustre or its  \
     * layout could not be read. */                                        \
    X(POSIX_LUSTRE_STRIPE_SIZE, "Lustre stripe size in bytes")               \
    X(POSIX_LUSTRE_STRIPE_COUNT, "Lustre stripe count (OSTs)")               \
    X(POSIX_LUSTRE_STRIPE_OFFSET, "OST index of the first object, -1: none") \
    X(POSIX_LUSTRE_COMPONENTS, "layout components: 1 plain, n composite")    \
    PARIO_SIZE_BUCKETS(POSIX, READ)                                           \
    PARIO_SIZE_BUCKETS(POSIX, WRITE)                                          \
    PARIO_SHARED_COUNTERS(POSIX)

#define PARIO_POSIX_FCOUNTERS                                                 \
    X(POSIX_F_OPEN_START_TIMESTAMP, "first open, seconds since job start")    \
    X(POSIX_F_CLOSE_END_TIMESTAMP, "last close, seconds since job start")     \
    X(POSIX_F_READ_TIME, "time in read calls")                                \
    X(POSIX_F_WRITE_TIME, "time in write calls")                              \
    X(POSIX_F_META_TIME, "time in open/close/seek/stat/sync/truncate/unlink") \
    X(POSIX_F_MAX_READ_TIME, "longest single read")                           \
    X(POSIX_F_MAX_WRITE_TIME, "longest single write")                         \
    PARIO_SHARED_FCOUNTERS(POSIX)

/* ---- STDIO ---------------------------------------------------------------- */
#define PARIO_STDIO_COUNTERS                                                  \
    X(STDIO_OPENS, "fopen, fdopen calls")                                     \
    X(STDIO_READS, "fread, fgets, fscanf calls")                              \
    X(STDIO_WRITES, "fwrite, fprintf, vfprintf, fputs, fputc calls")          \
    X(STDIO_SEEKS, "fseek, ftell, rewind calls")                              \
    X(STDIO_FLUSHES, "fflush calls")                                          \
    X(STDIO_BYTES_READ, "bytes read")                                         \
    X(STDIO_BYTES_WRITTEN, "bytes written")                                   \
    X(STDIO_MAX_BYTE_READ, "highest offset read, -1 if none")                 \
    X(STDIO_MAX_BYTE_WRITTEN, "highest offset written, -1 if none")           \
    PARIO_SIZE_BUCKETS(STDIO, READ)                                           \
    PARIO_SIZE_BUCKETS(STDIO, WRITE)                                          \
    PARIO_SHARED_COUNTERS(STDIO)

#define PARIO_STDIO_FCOUNTERS                                                 \
    X(STDIO_F_OPEN_START_TIMESTAMP, "first open, seconds since job start")    \
    X(STDIO_F_CLOSE_END_TIMESTAMP, "last close, seconds since job start")     \
    X(STDIO_F_READ_TIME, "time in read calls")                                \
    X(STDIO_F_WRITE_TIME, "time in write calls")                              \
    X(STDIO_F_META_TIME, "time in open/close/seek/flush")                     \
    PARIO_SHARED_FCOUNTERS(STDIO)

/* ---- MPI-IO --------------------------------------------------------------- */
#define PARIO_MPIIO_COUNTERS                                                  \
    X(MPIIO_INDEP_OPENS, "MPI_File_open on MPI_COMM_SELF")                    \
    X(MPIIO_COLL_OPENS, "MPI_File_open on a larger communicator")            \
    X(MPIIO_INDEP_READS, "independent reads (explicit offset or pointer)")    \
    X(MPIIO_INDEP_WRITES, "independent writes")                               \
    X(MPIIO_COLL_READS, "collective reads (_all)")                            \
    X(MPIIO_COLL_WRITES, "collective writes (_all)")                          \
    X(MPIIO_SPLIT_READS, "split collective reads (_begin)")                   \
    X(MPIIO_SPLIT_WRITES, "split collective writes (_begin)")                 \
    X(MPIIO_NB_READS, "nonblocking reads (MPI_File_i*)")                      \
    X(MPIIO_NB_WRITES, "nonblocking writes")                                  \
    X(MPIIO_SHARED_READS, "reads through the shared or ordered pointer")      \
    X(MPIIO_SHARED_WRITES, "writes through the shared or ordered pointer")    \
    X(MPIIO_SYNCS, "MPI_File_sync calls")                                     \
    X(MPIIO_HINTS, "MPI_File_set_info calls")                                 \
    X(MPIIO_VIEWS, "MPI_File_set_view calls")                                 \
    X(MPIIO_SET_SIZES, "MPI_File_set_size and preallocate calls")            \
    X(MPIIO_BYTES_READ, "bytes read")                                         \
    X(MPIIO_BYTES_WRITTEN, "bytes written")                                   \
    X(MPIIO_RW_SWITCHES, "changes between reading and writing")              \
    X(MPIIO_MAX_READ_SIZE, "largest read request in bytes")                   \
    X(MPIIO_MAX_WRITE_SIZE, "largest write request in bytes")                 \
    X(MPIIO_NONCONTIG_VIEW, "1 if a view with a non-contiguous filetype was set") \
    X(MPIIO_FS_TYPE, "statfs f_type magic of the file system")               \
    X(MPIIO_ENGINE_WRITES, "collective writes served by pario's engine (counted once per call)") \
    X(MPIIO_ENGINE_ALGORITHM, "engine algorithm: 1 none, 2 comm, 3 write, 4 write-comm, 5 write-comm-2, 7 direct (auto: each rank wrote its own range)") \
    X(MPIIO_ENGINE_SHUFFLE, "engine shuffle: 1 p2p, 2 rma-fence, 3 rma-lock") \
    X(MPIIO_ENGINE_CYCLES, "buffer cycles of the engine's collective writes (once per call)") \
    X(MPIIO_ENGINE_AGGREGATORS, "aggregators of the engine's last collective write") \
    X(MPIIO_ENGINE_FALLBACKS, "collective writes the engine gave to the MPI library (once per call)") \
    X(MPIIO_ENGINE_FB_ATOMIC, "... of them because the file is in atomic mode") \
    X(MPIIO_ENGINE_FB_DATAREP, "... because the view's data representation is not native") \
    X(MPIIO_ENGINE_FB_SEQUENTIAL, "... because the file was opened MPI_MODE_SEQUENTIAL") \
    X(MPIIO_ENGINE_FB_DATATYPE, "... because a datatype or view is beyond the engine's limits") \
    X(MPIIO_ENGINE_FB_OTHER, "... for another reason (own descriptor, read-only, an MPI error)") \
    X(MPIIO_ENGINE_CALLS_NONE, "collective writes the engine served with the algorithm none (once per call)") \
    X(MPIIO_ENGINE_CALLS_COMM, "... with comm")                              \
    X(MPIIO_ENGINE_CALLS_WRITE, "... with write")                            \
    X(MPIIO_ENGINE_CALLS_WRITE_COMM, "... with write-comm")                  \
    X(MPIIO_ENGINE_CALLS_WRITE_COMM_2, "... with write-comm-2")              \
    X(MPIIO_ENGINE_CALLS_DIRECT, "... directly (auto: each rank wrote its own range)") \
    X(MPIIO_ENGINE_VARIANT_CALLS_NONE_P2P, "collective writes the engine served with none:p2p (once per call)") \
    X(MPIIO_ENGINE_VARIANT_CALLS_NONE_RMA_FENCE, "... with none:rma-fence") \
    X(MPIIO_ENGINE_VARIANT_CALLS_NONE_RMA_LOCK, "... with none:rma-lock") \
    X(MPIIO_ENGINE_VARIANT_CALLS_COMM_P2P, "... with comm:p2p") \
    X(MPIIO_ENGINE_VARIANT_CALLS_COMM_RMA_FENCE, "... with comm:rma-fence") \
    X(MPIIO_ENGINE_VARIANT_CALLS_COMM_RMA_LOCK, "... with comm:rma-lock") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_P2P, "... with write:p2p") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_RMA_FENCE, "... with write:rma-fence") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_RMA_LOCK, "... with write:rma-lock") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_COMM_P2P, "... with write-comm:p2p") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_COMM_RMA_FENCE, "... with write-comm:rma-fence") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_COMM_RMA_LOCK, "... with write-comm:rma-lock") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_COMM_2_P2P, "... with write-comm-2:p2p") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_COMM_2_RMA_FENCE, "... with write-comm-2:rma-fence") \
    X(MPIIO_ENGINE_VARIANT_CALLS_WRITE_COMM_2_RMA_LOCK, "... with write-comm-2:rma-lock") \
    X(MPIIO_ENGINE_AUTO_EXPLORED, "auto: calls that ran a variant to measure it, not as the best known (once per call)") \
    X(MPIIO_ENGINE_AUTO_KEPT_ONE, "auto: its best variant for calls of one buffer cycle, 10 * algorithm + shuffle (0: none)") \
    X(MPIIO_ENGINE_AUTO_KEPT_MANY, "auto: its best variant for calls of several buffer cycles (0: none)") \
    PARIO_SIZE_BUCKETS(MPIIO, READ_AGG)                                       \
    PARIO_SIZE_BUCKETS(MPIIO, WRITE_AGG)                                      \
    PARIO_SHARED_COUNTERS(MPIIO)

#define PARIO_MPIIO_FCOUNTERS                                                 \
    X(MPIIO_F_OPEN_START_TIMESTAMP, "first open, seconds since job start")    \
    X(MPIIO_F_CLOSE_END_TIMESTAMP, "last close, seconds since job start")     \
    X(MPIIO_F_READ_TIME, "time in read calls (incl. waits on file requests)") \
    X(MPIIO_F_WRITE_TIME, "time in write calls")                              \
    X(MPIIO_F_META_TIME, "time in open/close/set_view/sync/set_size/...")    \
    X(MPIIO_F_MAX_READ_TIME, "longest single read")                           \
    X(MPIIO_F_MAX_WRITE_TIME, "longest single write")                         \
    X(MPIIO_F_ENGINE_SETUP_TIME, "engine: seconds agreeing on the call and exchanging requests") \
    X(MPIIO_F_ENGINE_SHUFFLE_TIME, "engine: seconds posting and completing the shuffle") \
    X(MPIIO_F_ENGINE_WRITE_TIME, "engine: seconds in the aggregators' pread/pwrite") \
    X(MPIIO_F_ENGINE_WAIT_TIME, "engine: seconds the caller waited on writer threads") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_NONE_P2P, "engine: seconds of its none:p2p calls, slowest rank (once per call)") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_NONE_RMA_FENCE, "... of its none:rma-fence calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_NONE_RMA_LOCK, "... of its none:rma-lock calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_COMM_P2P, "... of its comm:p2p calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_COMM_RMA_FENCE, "... of its comm:rma-fence calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_COMM_RMA_LOCK, "... of its comm:rma-lock calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_P2P, "... of its write:p2p calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_RMA_FENCE, "... of its write:rma-fence calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_RMA_LOCK, "... of its write:rma-lock calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_COMM_P2P, "... of its write-comm:p2p calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_COMM_RMA_FENCE, "... of its write-comm:rma-fence calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_COMM_RMA_LOCK, "... of its write-comm:rma-lock calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_COMM_2_P2P, "... of its write-comm-2:p2p calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_COMM_2_RMA_FENCE, "... of its write-comm-2:rma-fence calls") \
    X(MPIIO_F_ENGINE_VARIANT_TIME_WRITE_COMM_2_RMA_LOCK, "... of its write-comm-2:rma-lock calls") \
    PARIO_SHARED_FCOUNTERS(MPIIO)

/* ---- HDF5 (H5F: files, H5D: datasets) ----------------------------------
 * Recorded when the program calls libhdf5 (linked dynamically).  A dataset
 * record's id is the hash of "<file path>:<dataset path>", its name that
 * text (Darshan's convention).  Property values are those in effect at the
 * last create/open (after any PARIO_HINTS hdf5.* injection); -1 unknown. */
#define PARIO_H5F_COUNTERS                                                    \
    X(H5F_OPENS, "H5Fopen calls")                                             \
    X(H5F_CREATES, "H5Fcreate calls")                                         \
    X(H5F_FLUSHES, "H5Fflush calls")                                          \
    X(H5F_USE_MPIIO, "1 if the file access property list uses the MPI-IO driver") \
    X(H5F_BYTES_READ, "bytes read by H5Dread on the file's datasets")        \
    X(H5F_BYTES_WRITTEN, "bytes written by H5Dwrite on the file's datasets") \
    X(H5F_ALIGN_THRESHOLD, "H5Pset_alignment threshold in effect (bytes)")   \
    X(H5F_ALIGNMENT, "H5Pset_alignment alignment in effect (bytes; 1: none)") \
    X(H5F_META_BLOCK_SIZE, "metadata block size in effect (bytes)")          \
    X(H5F_SIEVE_BUF_SIZE, "sieve buffer size in effect (bytes)")             \
    X(H5F_COLL_METADATA_READS, "1 if metadata reads are collective (H5Pset_all_coll_metadata_ops)") \
    X(H5F_COLL_METADATA_WRITES, "1 if metadata writes are collective (H5Pset_coll_metadata_write)") \
    PARIO_SHARED_COUNTERS(H5F)

#define PARIO_H5F_FCOUNTERS                                                   \
    X(H5F_F_OPEN_START_TIMESTAMP, "first create/open, seconds since job start") \
    X(H5F_F_CLOSE_END_TIMESTAMP, "last close, seconds since job start")       \
    X(H5F_F_READ_TIME, "time in H5Dread on the file's datasets")             \
    X(H5F_F_WRITE_TIME, "time in H5Dwrite on the file's datasets")           \
    X(H5F_F_META_TIME, "time in H5Fcreate/open/flush/close and the file's group, attribute and H5Oopen/close calls") \
    PARIO_SHARED_FCOUNTERS(H5F)

#define PARIO_H5D_COUNTERS                                                    \
    X(H5D_OPENS, "H5Dopen calls")                                             \
    X(H5D_CREATES, "H5Dcreate calls")                                         \
    X(H5D_READS, "H5Dread calls")                                             \
    X(H5D_WRITES, "H5Dwrite calls")                                           \
    X(H5D_FLUSHES, "H5Dflush calls")                                          \
    X(H5D_BYTES_READ, "bytes read (selected elements x element size)")       \
    X(H5D_BYTES_WRITTEN, "bytes written")                                     \
    X(H5D_RW_SWITCHES, "changes between reading and writing")                \
    X(H5D_REGULAR_HYPERSLAB_SELECTS, "transfers with a regular hyperslab (or H5S_ALL) file selection") \
    X(H5D_IRREGULAR_HYPERSLAB_SELECTS, "transfers with an irregular hyperslab selection") \
    X(H5D_POINT_SELECTS, "transfers with a point selection")                  \
    X(H5D_COLL_READS, "reads with H5FD_MPIO_COLLECTIVE in the transfer property list") \
    X(H5D_COLL_WRITES, "writes with H5FD_MPIO_COLLECTIVE")                    \
    X(H5D_MAX_READ_SIZE, "largest read in bytes")                            \
    X(H5D_MAX_WRITE_SIZE, "largest write in bytes")                          \
    PARIO_SIZE_BUCKETS(H5D, READ_AGG)                                         \
    PARIO_SIZE_BUCKETS(H5D, WRITE_AGG)                                        \
    X(H5D_DATASPACE_NDIMS, "dimensions of the dataset's dataspace")          \
    X(H5D_DATASPACE_NPOINTS, "elements in the dataset's dataspace")          \
    X(H5D_DATATYPE_SIZE, "element size in bytes")                             \
    X(H5D_LAYOUT, "0 compact, 1 contiguous, 2 chunked, 3 virtual, -1 unknown") \
    X(H5D_CHUNK_SIZE_D1, "chunk size, fastest-varying (last) dimension (elements; 0 if not chunked; Darshan's order)") \
    X(H5D_CHUNK_SIZE_D2, "chunk size, the dimension before it")               \
    X(H5D_CHUNK_SIZE_D3, "chunk size, third dimension from the last")         \
    X(H5D_CHUNK_SIZE_D4, "chunk size, fourth dimension from the last")        \
    X(H5D_CHUNK_SIZE_D5, "chunk size, fifth dimension from the last")         \
    X(H5D_USE_MPIIO_COLLECTIVE, "1 if any transfer was collective")          \
    X(H5D_FILE_REC_ID, "record id of the dataset's file (H5F), as int64 bits") \
    PARIO_SHARED_COUNTERS(H5D)

#define PARIO_H5D_FCOUNTERS                                                   \
    X(H5D_F_OPEN_START_TIMESTAMP, "first create/open, seconds since job start") \
    X(H5D_F_CLOSE_END_TIMESTAMP, "last close, seconds since job start")       \
    X(H5D_F_READ_TIME, "time in H5Dread")                                     \
    X(H5D_F_WRITE_TIME, "time in H5Dwrite")                                   \
    X(H5D_F_META_TIME, "time in H5Dcreate/open/flush/close")                 \
    X(H5D_F_MAX_READ_TIME, "longest single read")                             \
    X(H5D_F_MAX_WRITE_TIME, "longest single write")                           \
    PARIO_SHARED_FCOUNTERS(H5D)

/* ---- PnetCDF (files and variables) ---------------------------------------
 * A variable record's id is the hash of "<file path>:<variable name>", its
 * name that text.  Alignments are those in effect after enddef. */
#define PARIO_PNETCDF_FILE_COUNTERS                                           \
    X(PNETCDF_FILE_CREATES, "ncmpi_create calls")                             \
    X(PNETCDF_FILE_OPENS, "ncmpi_open calls")                                 \
    X(PNETCDF_FILE_REDEFS, "ncmpi_redef calls")                               \
    X(PNETCDF_FILE_ENDDEFS, "ncmpi_enddef calls")                             \
    X(PNETCDF_FILE_INDEP_WAITS, "ncmpi_wait calls")                           \
    X(PNETCDF_FILE_COLL_WAITS, "ncmpi_wait_all calls")                        \
    X(PNETCDF_FILE_SYNCS, "ncmpi_sync calls")                                 \
    X(PNETCDF_FILE_BYTES_READ, "bytes read by get calls on the file's variables") \
    X(PNETCDF_FILE_BYTES_WRITTEN, "bytes written by put calls on the file's variables") \
    X(PNETCDF_FILE_WAIT_FAILURES, "requests that wait calls reported as failed") \
    X(PNETCDF_FILE_HEADER_SIZE, "header size in bytes (ncmpi_inq_header_size)") \
    X(PNETCDF_FILE_HEADER_EXTENT, "header extent in bytes (ncmpi_inq_header_extent)") \
    X(PNETCDF_FILE_HEADER_ALIGN, "nc_header_align_size in effect (bytes)")    \
    X(PNETCDF_FILE_VAR_ALIGN, "nc_var_align_size in effect (bytes)")          \
    X(PNETCDF_FILE_RECORD_ALIGN, "nc_record_align_size in effect (bytes)")    \
    PARIO_SHARED_COUNTERS(PNETCDF_FILE)

#define PARIO_PNETCDF_FILE_FCOUNTERS                                          \
    X(PNETCDF_FILE_F_OPEN_START_TIMESTAMP, "first create/open, seconds since job start") \
    X(PNETCDF_FILE_F_CLOSE_END_TIMESTAMP, "last close, seconds since job start") \
    X(PNETCDF_FILE_F_READ_TIME, "time in get calls on the file's variables")  \
    X(PNETCDF_FILE_F_WRITE_TIME, "time in put calls on the file's variables") \
    X(PNETCDF_FILE_F_META_TIME, "time in create/open/redef/enddef/sync/close") \
    X(PNETCDF_FILE_F_WAIT_TIME, "time in ncmpi_wait/ncmpi_wait_all")          \
    PARIO_SHARED_FCOUNTERS(PNETCDF_FILE)

#define PARIO_PNETCDF_VAR_API(D)                                              \
    X(PNETCDF_VAR_##D##_VAR, "ncmpi_" #D "_var* calls (whole variable)")     \
    X(PNETCDF_VAR_##D##_VAR1, "... _var1 (one element)")                      \
    X(PNETCDF_VAR_##D##_VARA, "... _vara (subarray)")                         \
    X(PNETCDF_VAR_##D##_VARS, "... _vars (strided subarray)")                 \
    X(PNETCDF_VAR_##D##_VARM, "... _varm (mapped)")                           \
    X(PNETCDF_VAR_##D##_VARN, "... _varn (several subarrays)")

#define PARIO_PNETCDF_VAR_COUNTERS                                            \
    X(PNETCDF_VAR_OPENS, "ncmpi_def_var and ncmpi_inq_varid calls")          \
    X(PNETCDF_VAR_INDEP_READS, "independent blocking get calls")              \
    X(PNETCDF_VAR_INDEP_WRITES, "independent blocking put calls")             \
    X(PNETCDF_VAR_COLL_READS, "collective blocking get calls (_all)")         \
    X(PNETCDF_VAR_COLL_WRITES, "collective blocking put calls (_all)")        \
    X(PNETCDF_VAR_NB_READS, "nonblocking get calls (iget)")                   \
    X(PNETCDF_VAR_NB_WRITES, "nonblocking put calls (iput, bput)")            \
    X(PNETCDF_VAR_BYTES_READ, "bytes read (elements x external type size)")   \
    X(PNETCDF_VAR_BYTES_WRITTEN, "bytes written")                             \
    X(PNETCDF_VAR_RW_SWITCHES, "changes between reading and writing")        \
    PARIO_PNETCDF_VAR_API(PUT)                                                \
    PARIO_PNETCDF_VAR_API(GET)                                                \
    PARIO_PNETCDF_VAR_API(IPUT)                                               \
    PARIO_PNETCDF_VAR_API(IGET)                                               \
    PARIO_PNETCDF_VAR_API(BPUT)                                               \
    X(PNETCDF_VAR_MAX_READ_SIZE, "largest get in bytes")                      \
    X(PNETCDF_VAR_MAX_WRITE_SIZE, "largest put in bytes")                     \
    PARIO_SIZE_BUCKETS(PNETCDF_VAR, READ_AGG)                                 \
    PARIO_SIZE_BUCKETS(PNETCDF_VAR, WRITE_AGG)                                \
    X(PNETCDF_VAR_NDIMS, "dimensions of the variable")                        \
    X(PNETCDF_VAR_NPOINTS, "elements of the variable (one record for a record variable)") \
    X(PNETCDF_VAR_DATATYPE_SIZE, "external element size in bytes")            \
    X(PNETCDF_VAR_IS_RECORD_VAR, "1 if the variable has the unlimited dimension") \
    X(PNETCDF_VAR_FILE_REC_ID, "record id of the variable's file, as int64 bits") \
    PARIO_SHARED_COUNTERS(PNETCDF_VAR)

#define PARIO_PNETCDF_VAR_FCOUNTERS                                           \
    X(PNETCDF_VAR_F_OPEN_START_TIMESTAMP, "first def/inq, seconds since job start") \
    X(PNETCDF_VAR_F_CLOSE_END_TIMESTAMP, "the file's last close, seconds since job start") \
    X(PNETCDF_VAR_F_READ_TIME, "time in get calls (blocking; waits on igets)") \
    X(PNETCDF_VAR_F_WRITE_TIME, "time in put calls (blocking; waits on iputs/bputs)") \
    X(PNETCDF_VAR_F_META_TIME, "time in def_var/inq_varid")                  \
    X(PNETCDF_VAR_F_MAX_READ_TIME, "longest single get")                      \
    X(PNETCDF_VAR_F_MAX_WRITE_TIME, "longest single put")                     \
    PARIO_SHARED_FCOUNTERS(PNETCDF_VAR)

/* ---- Per-rank summary (all doubles; seconds, bytes or counts) ---------- */
#define PARIO_RANK_FIELDS                                                     \
    X(wall, "seconds from library start to MPI_Finalize/exit, less mpi_init") \
    X(posix_read, "seconds in POSIX reads (outermost layer only)")            \
    X(posix_write, "seconds in POSIX writes")                                 \
    X(posix_meta, "seconds in POSIX metadata calls")                          \
    X(stdio_read, "seconds in STDIO reads")                                   \
    X(stdio_write, "seconds in STDIO writes")                                 \
    X(stdio_meta, "seconds in STDIO metadata calls")                          \
    X(mpiio_read, "seconds in MPI-IO reads")                                  \
    X(mpiio_write, "seconds in MPI-IO writes")                                \
    X(mpiio_meta, "seconds in MPI-IO metadata calls")                         \
    X(hdf5_read, "seconds in HDF5 dataset reads (outermost: MPI-IO and POSIX beneath not counted here)") \
    X(hdf5_write, "seconds in HDF5 dataset writes")                           \
    X(hdf5_meta, "seconds in other HDF5 file and dataset calls")              \
    X(pnetcdf_read, "seconds in PnetCDF get calls (and waits on igets)")      \
    X(pnetcdf_write, "seconds in PnetCDF put calls (and waits on iputs/bputs)") \
    X(pnetcdf_meta, "seconds in other PnetCDF calls")                         \
    X(mpi_coll, "seconds in MPI collectives (blocking, and waits on them)")   \
    X(mpi_p2p, "seconds in point-to-point calls and their waits/tests")       \
    X(mpi_other, "seconds in other MPI calls")                                \
    X(mpi_init, "seconds in MPI_Init/MPI_Init_thread (not in wall nor MPI)")  \
    X(mpi_coll_bytes, "bytes this rank contributed to collectives")           \
    X(mpi_p2p_bytes, "bytes sent and received point-to-point")               \
    X(mpi_coll_calls, "collective calls")                                     \
    X(mpi_p2p_calls, "point-to-point calls")                                  \
    X(mpi_other_calls, "other MPI calls")                                     \
    X(maxrss, "memory high-water mark in bytes (ru_maxrss)")                  \
    X(cpu_user, "user CPU seconds")                                           \
    X(cpu_sys, "system CPU seconds")                                          \
    X(threads, "threads that made intercepted calls")                         \
    X(records_overflowed, "file records folded into the overflow record")     \
    X(finalized, "1 if the rank reached MPI_Finalize or a clean exit")

#endif
