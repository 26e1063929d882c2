/* State and functions the runtime's own parts share (core.c, init.c, config.c, hints_file.c,
 * log.c, notes.c, shared.c, trace.c), not the intercepted layers. */
#ifndef PARIO_INTERNAL_H
#define PARIO_INTERNAL_H

#include "core.h"

#include <mpi.h>

struct pario_core {
    double start_mono, start_epoch, sec_per_tick;
    uint64_t start_ticks, end_ticks;
    int nrecords[PARIO_NLAYERS];
    int64_t records_overflowed;
    struct pario_record overflow[PARIO_NLAYERS];
    int is_fork_child;
    int log_written;
    int mpi_initialized;     /* MPI_Init returned */
    int mpi_finalized;
    int rank, nprocs;
    int pid;                 /* the process that owns the records */
};
extern struct pario_core pario_core;

uint64_t pario_hash_path(const char *s);
int pario_normalize_path(const char *path, char *out, size_t outsz);
void pario_foreach_record(int layer, void (*fn)(struct pario_record *, void *), void *arg);
uint64_t pario_threads_sum(int field);
int pario_thread_count(void);
void pario_timer_calibrate(void);

/* PARIO_HINTS lines skipped (hints_file.c), written by log.c as rejected_hints: the
 * first PARIO_MAX_REJECTED of them, and how many in all. */
#define PARIO_MAX_REJECTED 16
struct pario_rejected_hint {
    int line;
    char text[48];   /* the start of the line, non-printable bytes as '?' */
    char reason[96];
};
extern struct pario_rejected_hint pario_rejected_hints[PARIO_MAX_REJECTED];
extern int pario_nrejected_hints, pario_rejected_hints_total;
/* The "[GLOB]" sections of PARIO_HINTS (hints_file.c), written by log.c as
 * injected_hint_sections: hints first..first+n-1 of the sections' list. */
struct pario_hint_section {
    const char *glob;
    int first, n;
};
extern struct pario_hint_section pario_hint_sections[PARIO_MAX_HINT_SECTIONS];
extern int pario_nhint_sections;
/* The i-th key (value = 0) or value (value = 1) of a section. */
const char *pario_hint_section_kv(const struct pario_hint_section *s, int i, int value);
/* A "[GLOB]" header line parsed in place: 0 not a header, 1 *glob set, -1 why. */
int pario_parse_section_header(char *s, size_t len, char **glob, char *why, size_t whysz);
/* pario_parse_hint_line, shared with the kernels */
#include "pario-hint-line.h"

/* log.c: a growable byte buffer (oom set, and later puts ignored, when
 * memory runs out) and one compressed block appended to it. */
struct pario_buf {
    unsigned char *p;
    size_t len, cap;
    int oom;
};
void pario_buf_put(struct pario_buf *b, const void *src, size_t n);
void pario_put_block(struct pario_buf *out, uint32_t kind, int rank, const struct pario_buf *payload);

/* heap.c: the heap of the log's writing (log.c, shared.c), counted: what the
 * runtime holds now, and the most it held since pario_heap_reset_peak. */
void *pario_malloc(size_t n);
void *pario_calloc(size_t count, size_t size);
void *pario_realloc(void *p, size_t n);
void pario_free(void *p);
size_t pario_heap_held(void);
size_t pario_heap_peak(void);
void pario_heap_reset_peak(void);

/* What a part of the runtime does when the process starts and when it ends; init.c
 * conducts, calling each part through this table (its list of parts: started in order, ended
 * in reverse) instead of the core calling up into the parts. */
struct pario_config;
/* What the conductor tells the parts of the MPI job, at MPI_Init and at MPI_Finalize. */
struct pario_mpi {
    int rank, nprocs;          /* in MPI_COMM_WORLD */
    MPI_Comm comm;             /* the runtime's own duplicate of MPI_COMM_WORLD, whose errors return;
                                * MPI_COMM_NULL at MPI_Init when nothing will be written */
    double dup_seconds;        /* what that duplicate took at MPI_Init */
    uint64_t finalize_ticks;   /* MPI_Finalize: its entry (the run's end), in the timer's ticks */
    double finalize_wtime;     /* and in MPI_Wtime */
};
struct pario_part {
    const char *name;
    /* at start-up, after the core's own set-up and before recording begins (NULL: nothing) */
    void (*start)(const struct pario_config *cfg);
    /* at exit without MPI_Finalize, while the records are still this process's (NULL: nothing) */
    void (*at_exit)(void);
    /* when MPI_Init returns (NULL: nothing) */
    void (*mpi_init)(const struct pario_mpi *mpi);
    /* in MPI_Finalize, recording off, before the MPI library's (NULL: nothing); collective over
     * mpi->comm; the parts end in the reverse of their order (init.c): the trace's last clock
     * sync, then the log */
    void (*mpi_finalize)(const struct pario_mpi *mpi);
};
/* hints_file.c: reads PARIO_HINTS (before any thread opens a file) */
extern const struct pario_part pario_hints_part;
/* trace.c: the event buffer, under PARIO_TRACE */
extern const struct pario_part pario_trace_part;
/* notes.c: tells `pario run` that the program started */
extern const struct pario_part pario_notes_part;
/* log.c: writes the log at exit (non-MPI program, or a rank that never reached MPI_Finalize);
 * never fails the program */
extern const struct pario_part pario_log_part;

/* core.c: the core's own start-up (timer, arena, descriptor tables, exclusions); 0, or -1
 * when profiling cannot run; and whether it ran. */
int pario_core_start(const struct pario_config *cfg);
int pario_core_started(void);

/* hints_file.c: the global hints injected (NULL-terminated key/value list: the lines before
 * any "[GLOB]" section), NULL when none; log.c writes them as injected_hints. */
const char *const *pario_injected_hints(void);

/* notes.c: why a process wrote no log, for `pario run` (PARIO_RUN_NOTES) */
void pario_note_no_log(const char *why);
void pario_note_wrote(const char *path);

#endif
