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
#define PARIO_LOG_VERSION 2 /* 2: TRACE and TRACE_INDEX blocks (docs/trace.md) */

/* Block kinds of the log container. */
enum pario_block_kind {
    PARIO_BLOCK_META = 1,   /* JSON: job metadata and counter names */
    PARIO_BLOCK_RANK = 2,   /* one rank: summary row + its own file records */
    PARIO_BLOCK_SHARED = 3, /* records reduced over the ranks sharing a file */
    PARIO_BLOCK_END = 4,    /* trailer: number of blocks before it */
    PARIO_BLOCK_TRACE = 5,  /* one rank's trace events (docs/trace.md), after the RANK blocks */
    PARIO_BLOCK_TRACE_INDEX = 6, /* one rank's trace index: JSON (docs/trace.md) */
};

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
    PARIO_SHARED_FCOUNTERS(MPIIO)

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
