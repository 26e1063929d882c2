/*
 * Start-up, MPI's start and end, and exit: the conductor.  At start-up it reads the settings
 * (config.c), has the core set up its own state (core.c), then starts each part of the runtime
 * through its table entry (struct pario_part, internal.h), and turns recording on.  When
 * MPI_Init returns it learns the rank, makes the runtime's own communicator and tells the parts
 * (the trace synchronises the clocks); in MPI_Finalize it turns recording off, calibrates the
 * timer and has the parts finish over that communicator (the trace's last clock sync, then the
 * log).  At exit, a process that did not write its log in MPI_Finalize (a non-MPI program, a
 * rank that never reached it) has each part finish through the same table: the log part writes
 * the log.
 */
#include "core.h" /* first: defines _GNU_SOURCE */
#include "config.h"
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The parts.  They start (and hear of MPI_Init) in this order, and end (MPI_Finalize, exit) in
 * the reverse order: the hints before anything can open a file; the trace last at MPI_Init, so
 * that its timeline begins as MPI_Init returns, and first at MPI_Finalize, so that its last
 * clock sync and event are in the log the log part then writes.  Recording begins after every
 * part has started. */
static const struct pario_part *const parts[] = {&pario_hints_part, &pario_notes_part, &pario_log_part,
                                                  &pario_trace_part};
#define NPARTS (sizeof parts / sizeof parts[0])

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void atfork_child(void)
{
    /* The parent owns the records; a forked child stays silent (if it
     * execs, the new image starts its own, independent profile). */
    atomic_store(&pario_enabled, 0);
    pario_core.is_fork_child = 1;
}

static void do_init(void)
{
    pario_config_read();
    if (pario_config.disabled || pario_core_start(&pario_config) != 0)
        return;
    for (size_t i = 0; i < NPARTS; i++)
        if (parts[i]->start)
            parts[i]->start(&pario_config);
    pthread_atfork(NULL, NULL, atfork_child);
    pario_tl = NULL;
    atomic_store(&pario_enabled, 1);
}

void pario_init(void) { pthread_once(&init_once, do_init); }

__attribute__((constructor)) static void pario_constructor(void) { pario_init(); }

/* ---- MPI -------------------------------------------------------------------*/

/* The runtime's own communicator, dup'd at MPI_Init as Darshan does.  The
 * dup is a collective whose cost grows with the job: at MPI_Init it waits
 * for the last rank to leave MPI_Init, a wait the job's first collective
 * would make anyway, and MPI_Finalize is left with the log's collectives.
 * MPI_COMM_NULL where the runtime is off, or the dup failed (then
 * MPI_Finalize dups one). */
static MPI_Comm runtime_comm = MPI_COMM_NULL;
static double dup_seconds; /* what that dup took (PARIO_FINALIZE_TIMES) */

/* A duplicate of MPI_COMM_WORLD whose errors return: an error in the
 * runtime's own messages is its to handle, never the job's end. */
static MPI_Comm dup_world(void)
{
    MPI_Comm c;
    if (NEXT(PMPI_Comm_dup)(MPI_COMM_WORLD, &c) != MPI_SUCCESS)
        return MPI_COMM_NULL;
    NEXT(PMPI_Comm_set_errhandler)(c, MPI_ERRORS_RETURN);
    return c;
}

void pario_mpi_initialized(void)
{
    NEXT(PMPI_Comm_rank)(MPI_COMM_WORLD, &pario_core.rank);
    NEXT(PMPI_Comm_size)(MPI_COMM_WORLD, &pario_core.nprocs);
    pario_core.mpi_initialized = 1;
    if (atomic_load(&pario_enabled) && !pario_core.is_fork_child) { /* else no log to write */
        double t0 = NEXT(PMPI_Wtime)();
        runtime_comm = dup_world();
        dup_seconds = NEXT(PMPI_Wtime)() - t0;
    }
    struct pario_mpi mpi = {.rank = pario_core.rank, .nprocs = pario_core.nprocs, .comm = runtime_comm,
                            .dup_seconds = dup_seconds};
    for (size_t i = 0; i < NPARTS; i++)
        if (parts[i]->mpi_init)
            parts[i]->mpi_init(&mpi);
}

int pario_mpi_rank(void) { return pario_core.rank; }

void pario_mpi_finalizing(void)
{
    uint64_t entered = pario_now();
    if (!atomic_load(&pario_enabled) || pario_core.is_fork_child || pario_core.log_written)
        return;
    double t_enter = NEXT(PMPI_Wtime)();
    atomic_store(&pario_enabled, 0);
    pario_core.log_written = 1;
    pario_core.mpi_finalized = 1;
    MPI_Comm comm = runtime_comm != MPI_COMM_NULL ? runtime_comm : dup_world();
    runtime_comm = MPI_COMM_NULL;
    if (comm == MPI_COMM_NULL) {
        if (pario_core.rank == 0)
            pario_warn("could not duplicate MPI_COMM_WORLD at MPI_Finalize; profile lost");
        return;
    }
    pario_timer_calibrate();
    /* The wall time ends at MPI_Finalize's entry, as the trace's timeline does: not after the
     * communicator dup and the clock sync, which are pario's own work. */
    pario_core.end_ticks = entered;
    struct pario_mpi mpi = {.rank = pario_core.rank, .nprocs = pario_core.nprocs, .comm = comm,
                            .dup_seconds = dup_seconds, .finalize_ticks = entered, .finalize_wtime = t_enter};
    for (size_t i = NPARTS; i-- > 0;)
        if (parts[i]->mpi_finalize)
            parts[i]->mpi_finalize(&mpi);
    NEXT(PMPI_Comm_free)(&comm);
}

/*
 * Exit path.  MPI programs normally wrote their log in MPI_Finalize.  A
 * rank that exits without it writes a log of its own data (marked
 * incomplete) beside the job log; a non-MPI program writes its log here.
 */
static void exit_hook(void)
{
    /* getpid() differs in a vfork child, which shares our memory and must
     * not write (or mark written) the parent's log. */
    if (pario_core.is_fork_child || pario_core.log_written || !pario_core_started() ||
        !atomic_load(&pario_enabled) || getpid() != pario_core.pid)
        return;
    /* A shell's environment changes while it runs (a job script's eval "$(pario env)" makes
     * it no longer the profiled program): the exit path takes the settings as they are now. */
    pario_config_read();
    atomic_store(&pario_enabled, 0);
    pario_core.log_written = 1;
    for (size_t i = NPARTS; i-- > 0;)
        if (parts[i]->at_exit)
            parts[i]->at_exit();
}

__attribute__((destructor)) static void pario_destructor(void) { exit_hook(); }

/* Programs that leave through _exit (dash, for one) skip the destructors:
 * write the log here too, then leave as asked. */
void _exit(int status)
{
    exit_hook();
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
    exit_hook();
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_Exit");
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}
