/*
 * Internals shared by the engine's files: select.c (PARIO_COLL and the
 * hints), engine.c (open/close and the call's pipeline), view.c (my pieces),
 * domains.c (aggregators, file domains, requests), auto.c (the auto policy),
 * schedule.c (the cycle schedules), shuffle.c (moving each cycle's pieces to
 * the aggregators: p2p, rma-fence, rma-lock) and writer.c (the writer
 * threads of the write-overlap algorithms).
 */
#ifndef PARIO_CW_INTERNAL_H
#define PARIO_CW_INTERNAL_H

#include "engine.h"
#include "flatten.h"
#include "hooks.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* Bounds: a call whose view or memory type needs more pieces than this goes
 * to the MPI library (reason "datatype"), so the engine's memory stays
 * bounded (24 bytes a piece). */
#define CW_MAX_PIECES ((int64_t)1 << 21)
#define CW_MAX_BUFFER ((int64_t)1 << 30)   /* cb_buffer_size cap */
#define CW_MAX_SLOTS 4                      /* buffers in flight (write-comm-2) */

struct cw_writer;

/* The last i in [0, n) with prefix[i] <= pos: the segment holding byte pos
 * of a stream whose segments start at the ascending positions prefix[]. */
static inline int64_t cw_segment_at(const int64_t *prefix, int64_t n, int64_t pos)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (prefix[mid] <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Hints, parsed once per open / set_info into a typed struct. */
struct cw_hints {
    int algorithm;            /* enum cw_algorithm; CW_OFF: the MPI library writes */
    int shuffle;              /* enum cw_shuffle */
    int64_t cb_buffer_size;   /* bytes; ROMIO's default 16 MiB */
    int cb_nodes;             /* aggregators wanted; 0: one per node */
    char cb_config_list[256]; /* "" : not given */
    int64_t striping_unit;    /* bytes; 0: domains not aligned */
};

/* select.c */
/* The defaults: PARIO_COLL's algorithm and shuffle, ROMIO's cb_buffer_size. */
void cw_hints_default(struct cw_hints *h);
/* Update h from the keys present in info (absent keys keep their value). */
void cw_hints_parse(struct cw_hints *h, MPI_Info info);
/* The striping_unit the MPI library reports for fh as the default, the keys
 * of info over it (a file the engine serves, at open). */
void cw_hints_stripe(struct cw_hints *h, MPI_File fh, MPI_Info info);

/* The file's bytes [lo, hi). */
struct cw_range {
    int64_t lo, hi;
};

/* A byte range of the file, with where its bytes sit in the caller's data
 * stream (the packed order of buf/count/type). */
struct cw_piece {
    int64_t off, len, pos;
};

/* The flattened file view: filetype segments relative to disp. */
struct cw_view {
    int valid;
    int native;               /* datarep is "native" */
    int usable;               /* monotonic, non-overlapping tiles, non-negative */
    int64_t disp, etype_size;
    struct pario_flat ft;     /* own copy */
    int64_t *prefix;          /* [ft.nseg + 1] data bytes before each segment */
};

/* auto: what it measured of each candidate variant on one class of calls of a
 * file (one buffer cycle or several, and the size of the call's file range
 * within a factor of 2), identical on every rank. */
#define CW_AUTO_MAX_CANDIDATES 8
#define CW_AUTO_CLASSES 4         /* per file; the least recently used gives way */
struct cw_auto {
    int used, cycles, size_log2;  /* the class: cycles 0 one, 1 several; floor(log2(file range)) */
    int64_t last_call;        /* the file's call number of its last call */
    int64_t calls;            /* calls of the class served so far */
    double total_ns;          /* their time, slowest rank */
    double excess_ns;         /* what trying variants cost beyond the best known */
    int best;                 /* candidate index, -1 before the first call */
    int64_t last_try;         /* call number of the last exploration */
    struct {
        int64_t calls, last;  /* calls measured, the number of the last one */
        double cost;          /* ns per byte of the call's file range, recent calls weighing most */
    } measured[CW_AUTO_MAX_CANDIDATES]; /* by candidate index */
};

struct cw_file {
    char path[PATH_MAX];
    int amode;
    struct cw_hints hints;
    MPI_Comm comm;            /* the engine's duplicate of the file's communicator */
    int rank, nprocs;
    int aggs_valid;
    int naggs, my_agg;        /* my_agg: my index among the aggregators, or -1 */
    int *aggs;                /* [naggs] ranks, domain order */
    int fd;                   /* own descriptor (aggregators), -1 */
    int64_t fs_block;         /* the file system's block size: domains align to it without striping_unit */
    int fd_failed;
    struct cw_view view;
    /* the aggregator's cycle buffers and the RMA window over them, kept
     * while the file is open so that every call does not allocate them */
    char *buf;
    int64_t buf_size;
    MPI_Win win;
    int64_t win_size;
    struct cw_writer *writer; /* writer threads, started at the first call that needs them */
    int nwriters;
    struct cw_auto autos[CW_AUTO_CLASSES];
    int64_t auto_calls;       /* calls auto served with two-phase */
    int64_t calls_file;       /* PARIO_COLL_CALLS: the file's number in the lines, */
    int64_t calls_served;     /* and its calls the engine served so far */
    /* split collective */
    int split_pending;
    int split_rc;
    MPI_Status split_status;
    int64_t split_direct;     /* bytes this rank wrote itself at a _begin the MPI library got */
};

/* One cycle in flight: its window, pieces and requests. */
struct cw_cycle {
    int64_t number;           /* the cycle's number in the call, -1: slot free */
    int slot;                 /* buffer index */
    char *bufp;               /* f->buf + slot * buf_bytes (aggregators) */
    /* aggregator side */
    int64_t wlo, whi;         /* my window this cycle */
    int64_t first, end;       /* range to write: first..end of the data in the window */
    int has_data;
    int64_t *src_first;       /* [nprocs + 1] index into src_pieces per source */
    struct cw_piece *src_pieces;
    /* sender side: my pieces for each aggregator this cycle */
    int64_t *dst_first;       /* [naggs + 1] index into dst_pieces */
    struct cw_piece *dst_pieces;
    /* requests and datatypes to free on completion */
    MPI_Request *reqs;
    int nreqs, cap_reqs;
    int ntested;              /* reqs[0..ntested) are complete */
    MPI_Datatype *types;
    int ntypes, cap_types;
    /* rma-lock: go tokens still awaited from aggregators (sender side) */
    MPI_Request *go;
    int *go_agg;
    int ngo;
    int shuffled;             /* the data is in the aggregator's buffer */
    /* the write, by the caller or a writer thread */
    atomic_int write_state;   /* 0 none, 1 queued, 2 done */
    int write_err;            /* errno */
};

/* Per-call context (the pipeline's state, instead of 30 arguments). */
struct cw_ctx {
    struct cw_file *f;
    int algorithm, shuffle;
    int nbuf, depth, nwriters;
    int64_t buf_bytes;                       /* bytes per buffer */
    /* my request, split at the domains */
    struct cw_piece *mine;
    int64_t nmine;
    int64_t *my_first;                /* [naggs + 1] */
    int64_t *my_cur;                  /* [naggs] cursor (piece index) */
    int64_t *my_skip;                 /* [naggs] bytes of that piece already sent */
    /* memory */
    const char *mbase;                /* contiguous data, or NULL */
    struct pario_flat mem;            /* count copies of the memory type (non-contiguous) */
    int64_t *mpos;                    /* [mem.nseg + 1] stream position of each segment */
    const void *buf;
    /* domains and each aggregator's data range */
    int64_t *fd_hi;                   /* [naggs] end of each file domain (the next one's start) */
    int64_t *agg_start, *agg_end;        /* [naggs] */
    int64_t ncycles;
    /* aggregator: the pieces of every source in my domain */
    struct cw_piece *peer_pieces;             /* pos unused */
    int64_t *peer_first;               /* [nprocs + 1] */
    int64_t *peer_cur, *peer_skip;      /* [nprocs] */
    struct cw_cycle cycles[CW_MAX_SLOTS];
    struct cw_writer *writer;
    int err;                          /* first errno of my reads/writes */
    int agreed, agreed_rc;            /* direct: the allgather already agreed on the result */
    int64_t span;                     /* bytes from the call's first byte to its last, all ranks */
    int64_t direct_bytes;             /* bytes this rank wrote itself before the agreement */
    struct cw_range *written;         /* [nwritten] sorted, disjoint file ranges ranks wrote
                                       * themselves: the aggregators' writes skip them */
    int64_t nwritten;
    int auto_class, auto_candidate;   /* auto: f->autos index and candidate of this call, -1 */
    int auto_explored;
    _Atomic uint64_t t_write;
    uint64_t t_setup, t_shuffle, t_wait;
};

/* view.c */
/* Flatten fh's view into f->view (usable: the engine can serve it); an MPI code. */
int cw_view_load(struct cw_file *f, MPI_File fh);
void cw_view_free(struct cw_view *v);
/* The file pieces of data bytes [p0, p0 + nbytes) of the view, merged; 0 or
 * -1 (memory, or more than CW_MAX_PIECES). */
int cw_view_pieces(const struct cw_view *v, int64_t p0, int64_t nbytes, struct cw_piece **out, int64_t *n);
/* The caller's data: contiguous (call->mbase) or its segments with stream
 * positions (call->mem, call->mpos); 0 or -1. */
int cw_memory_layout(struct cw_ctx *call, const void *buf, int count, MPI_Datatype type);

/* domains.c (all collective over f->comm but cw_file_domains, cw_split_at_domains) */
/* f->aggs: cb_nodes aggregators spread over the nodes, as cb_config_list allows. */
int cw_choose_aggregators(struct cw_file *f);
/* call->fd_hi: [min_st, max_end) split among the aggregators; 0 or -1 (memory). */
int cw_file_domains(struct cw_ctx *call, int64_t min_st, int64_t max_end);
/* call->mine cut at the domain boundaries, call->my_first indexing them; 0 or -1. */
int cw_split_at_domains(struct cw_ctx *call);
/* Every aggregator learns the pieces each rank holds in its domain
 * (call->peer_*), every rank each aggregator's data range; an MPI code. */
int cw_exchange_requests(struct cw_ctx *call);

/* auto.c: the auto policy (collective: every rank decides alike) */
/* Choose this call's variant (call->algorithm, shuffle, schedule) from the
 * file's earlier calls of its class. */
void cw_auto_pick(struct cw_ctx *call);
/* After the call: learn from its slowest rank's time, known on every rank. */
void cw_auto_learn(struct cw_file *f, const struct cw_ctx *call, uint64_t t_call);
/* auto's best variant for the class of this call (cw_variant_code), or 0. */
int cw_auto_kept(const struct cw_file *f, const struct cw_ctx *call);

/* schedule.c */
/* The buffer cycles of the aggregator with the longest data range. */
int64_t cw_count_cycles(const struct cw_ctx *call, int64_t buf_bytes);
/* The shape of algorithm alg's schedule: buffers, depth, writer threads, cycles. */
void cw_set_schedule(struct cw_ctx *call, int alg);
/* The aggregator's buffers for the call: in the RMA window, or malloc'd for p2p
 * (collective when a window is made or freed); an MPI code. */
int cw_cycle_buffers(struct cw_ctx *call);
/* Free the aggregator's cycle buffers and window (collective if a window exists). */
void cw_free_buffers(struct cw_file *f);
/* Run the call's cycles on the schedule cw_set_schedule chose; an MPI code. */
int cw_run_cycles(struct cw_ctx *call);

/* shuffle.c */
int cw_cycle_prepare(struct cw_ctx *call, struct cw_cycle *cy);     /* pieces, RMW read; MPI code */
int cw_cycle_post(struct cw_ctx *call, struct cw_cycle *cy);        /* p2p/rma-lock: post messages */
int cw_cycle_test(struct cw_ctx *call, struct cw_cycle *cy, int *done); /* p2p/rma-lock progress */
int cw_cycle_puts(struct cw_ctx *call, struct cw_cycle *cy);        /* rma-fence: the puts */
void cw_cycle_release(struct cw_cycle *cy);                      /* free pieces, types, requests */
int cw_window_for(struct cw_ctx *call, int64_t bytes);              /* collective */

/* writer.c */
struct cw_writer *cw_writer_start(int nthreads);
void cw_writer_submit(struct cw_writer *w, struct cw_ctx *call, struct cw_cycle *cy);
void cw_writer_stop(struct cw_writer *w);
/* pwrite all of [p, p + len) at off, retrying short writes; 0 or an errno. */
int cw_pwrite_all(int fd, const char *p, int64_t len, int64_t off);
/* Write a cycle's buffer [first, end) with pwrite (the caller or a writer). */
void cw_write_cycle(struct cw_ctx *call, struct cw_cycle *cy);

#endif
