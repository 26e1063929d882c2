/*
 * Start-up and exit: the conductor.  At start-up it reads the settings (config.c), has the core
 * set up its own state (core.c), then starts each part of the runtime through its table entry
 * (struct pario_part, internal.h), and turns recording on.  At exit, a process that did not
 * write its log in MPI_Finalize (a non-MPI program, a rank that never reached it) has each
 * part finish through the same table: the log part writes the log.
 */
#include "core.h" /* first: defines _GNU_SOURCE */
#include "config.h"
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The parts, in the order they start: the hints before anything can open a file, the trace
 * before the first event, the notes last (the program has started). */
static const struct pario_part *const parts[] = {&pario_hints_part, &pario_trace_part, &pario_notes_part,
                                                  &pario_log_part};
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
    for (size_t i = 0; i < NPARTS; i++)
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
