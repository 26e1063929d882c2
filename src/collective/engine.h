/*
 * pario's collective-write engine: two-phase I/O (Thakur & Choudhary's
 * extended two-phase method, as ROMIO does it) with the overlap variants of
 * Feki & Gabriel, "On Overlapping Communication and File I/O in Collective
 * Write Operation".  The runtime's MPI-IO layer (src/runtime/mpiio.c, its
 * glue in mpiio_engine.c) calls it from MPI_File_write_all,
 * MPI_File_write_at_all and their split and nonblocking forms when the
 * engine is selected for a file; everything else stays with the MPI
 * library.  What the engine needs from the runtime is in hooks.h.
 *
 * Selection: PARIO_COLL=ALGO[:SHUFFLE] for every file, or per file the
 * hints pario_cb_algorithm (an algorithm, or "mpi" for off) and
 * pario_cb_shuffle.  cb_nodes, cb_buffer_size, cb_config_list and
 * striping_unit mean what they mean for ROMIO.
 */
#ifndef PARIO_ENGINE_H
#define PARIO_ENGINE_H

#include <mpi.h>
#include <stdint.h>

enum cw_algorithm {
    CW_OFF = 0,
    CW_NONE = 1,          /* blocking two-phase */
    CW_COMM = 2,          /* next cycle's shuffle in flight during this cycle's write */
    CW_WRITE = 3,         /* writer thread writes one buffer while the next is filled */
    CW_WRITE_COMM = 4,    /* both */
    CW_WRITE_COMM_2 = 5,  /* two shuffles and two writes in flight */
    CW_AUTO = 6,          /* one of the above with a shuffle, picked per file from the calls' times */
    CW_DIRECT = 7,        /* what auto ran: every rank wrote its own contiguous, non-interleaved range */
};

enum cw_shuffle { CW_P2P = 1, CW_RMA_FENCE = 2, CW_RMA_LOCK = 3 };

/* Why a collective write went to the MPI library. */
enum cw_fallback {
    CW_FB_NONE = 0,
    CW_FB_ATOMIC,      /* MPI_File_set_atomicity(fh, 1) */
    CW_FB_DATAREP,     /* a view with a data representation other than "native" */
    CW_FB_SEQUENTIAL,  /* MPI_MODE_SEQUENTIAL */
    CW_FB_DATATYPE,    /* a datatype or view beyond the engine (segment cap, overlapping tiles) */
    CW_FB_OTHER,       /* read-only file, own descriptor not opened, an MPI call failed */
};

/* What one call did, for the profile. Times are in the hooks' clock ticks. */
struct cw_stats {
    int served;               /* 1: the engine wrote; 0: the caller must call the MPI library */
    enum cw_fallback reason;  /* when not served (CW_FB_NONE: engine off for this file) */
    int comm_rank;            /* rank in the file's communicator (counts are kept once per call) */
    int algorithm, shuffle;   /* what ran (auto resolved) */
    int64_t cycles;           /* buffer cycles of the call */
    int aggregators;
    uint64_t t_setup;         /* views, extents, domains, the exchange of requests, buffers */
    uint64_t t_shuffle;       /* posting messages / puts and waiting for them */
    uint64_t t_write;         /* this rank's pread/pwrite, whichever thread made them */
    uint64_t t_wait;          /* the caller blocked on writer threads */
    uint64_t t_call;          /* the call, slowest rank (what auto compares); 0 for direct calls */
    int auto_explored;        /* auto ran this call's variant to measure it, not as its best */
    int auto_class;           /* auto's class of the call: 0 one buffer cycle, 1 several, -1 not auto's */
    int auto_kept;            /* auto's best variant for the class after this call (cw_variant_code), 0 */
    int64_t direct_bytes;     /* not served: bytes this rank wrote itself before the call went to the
                               * MPI library; the caller gives the library none of them */
};

struct cw_file;

/* Engine state for a file just opened by the MPI library, or NULL when the
 * engine is not selected for it (PARIO_COLL and the hints in 'info').  Local:
 * collective setup happens at the first write. */
struct cw_file *cw_file_open(MPI_File fh, MPI_Comm comm, const char *path, int amode, MPI_Info info);

/* The hints of MPI_File_set_info / MPI_File_set_view: cb_* and the algorithm
 * ("mpi" turns the engine off for the file).  A file opened without the
 * engine stays without it. */
void cw_file_set_info(struct cw_file *f, MPI_Info info);

/* The view changed: forget the flattened view. */
void cw_file_view_changed(struct cw_file *f);

/* Before MPI_File_close (collective): frees the windows, buffers, descriptor. */
void cw_file_close(struct cw_file *f);

/* A collective write: explicit != 0 for the _at_ forms (offset in etypes
 * of the view), else at the individual file pointer, which it advances.
 * Returns an MPI error code; with stats->served == 0 nothing was done and
 * the caller calls the MPI library. */
int cw_write(struct cw_file *f, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
             int count, MPI_Datatype type, MPI_Status *status, struct cw_stats *stats);

/* After a call this rank wrote itself (stats->direct_bytes) and the MPI library
 * was given none of: the individual file pointer moved past those bytes (when
 * explicit_offset is 0) and the status saying so (status may be NULL). */
void cw_direct_done(struct cw_file *f, MPI_File fh, int explicit_offset, int64_t bytes, MPI_Status *status);

/* Split collectives: begin writes (as cw_write) and keeps the status for end.
 * end returns 1 and the status if the begin was the engine's, else 0 (also for f NULL). */
int cw_write_begin(struct cw_file *f, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
                   int count, MPI_Datatype type, struct cw_stats *stats);
int cw_write_end(struct cw_file *f, MPI_Status *status, int *rc);
/* At the _end of a split write the MPI library got: the bytes this rank wrote
 * itself at _begin (stats->direct_bytes), for the status; 0 otherwise. */
int64_t cw_split_direct_bytes(struct cw_file *f);

/* Nonblocking collective writes (MPI_File_iwrite_all, iwrite_at_all) are
 * served as blocking ones by cw_write; the runtime hands back a request that
 * is already complete. */

/* An algorithm and a shuffle in one number, as the log keeps auto's choice: 10 * algorithm + shuffle
 * (43: write-comm with rma-lock). */
static inline int cw_variant_code(int algorithm, int shuffle) { return 10 * algorithm + shuffle; }

/* "write-comm" -> CW_WRITE_COMM; -1 if unknown. */
int cw_algorithm_from_name(const char *name);
int cw_shuffle_from_name(const char *name);

#endif
