/*
 * Notes for `pario run`: why a job wrote no log.
 *
 * `pario run` names a file in PARIO_RUN_NOTES (beside the log, so that
 * ranks on other nodes reach it; it does not exist until a line is
 * written).  Lines are appended (O_APPEND, one write each):
 *   "started <n> <launcher>": at start, by the launcher's rank 0 only, <n>
 *       the launcher's process count ("launcher" 1); a process no launcher
 *       names (launcher 0) writes "started 1 0";
 *   "exited <why> <mpi_used> <mpi_init_seen> <library>": by a process that
 *       leaves without writing a log, saying why;
 *   "wrote <path>": by the process that wrote a log (rank 0 of a job), so
 *       that a log written where the job's own PARIO_LOG said (a job script
 *       that runs pario env itself) is found too.
 * So a job whose ranks all write the log adds two lines, and no process
 * creates a file of its own.  When a job leaves no log, `pario run` reads
 * them (python/pario/run_notes.py): no line means the runtime never reached
 * the program's processes; processes started but fewer exit lines mean
 * processes died without exiting.  Without PARIO_RUN_NOTES nothing is
 * written.
 *
 * Both calls happen while the wrappers pass through (before profiling is
 * switched on, after it is switched off), so the notes are not recorded as
 * the program's.
 */
#include "core.h" /* first: defines _GNU_SOURCE */
#include "config.h"
#include "internal.h"

#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_note(const char *text)
{
    const char *path = pario_config.run_notes;
    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, text, strlen(text));
    (void)w;
    close(fd);
}

static void notes_start(const struct pario_config *cfg)
{
    long n = cfg->launcher_size;
    if (n > 0 && cfg->launcher_rank != 0)
        return;
    char text[64];
    snprintf(text, sizeof text, "started %ld %d\n", n > 0 ? n : 1, n > 0);
    write_note(text);
}

const struct pario_part pario_notes_part = {.name = "notes", .start = notes_start};

/* Did the program initialise MPI (through an entry point pario did not see)? */
static int mpi_was_initialized(void)
{
    int flag = 0;
    return NEXT(PMPI_Initialized)(&flag) == MPI_SUCCESS && flag;
}

void pario_note_no_log(const char *why)
{
    char text[600], version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int used = !pario_core.mpi_initialized && mpi_was_initialized();
    if (used) {
        int len = 0;
        if (NEXT(PMPI_Get_library_version)(version, &len) == MPI_SUCCESS)
            version[strcspn(version, "\n")] = '\0';
    }
    snprintf(text, sizeof text, "exited %s %d %d %.400s\n", why, used, pario_core.mpi_initialized, version);
    write_note(text);
    /* said on stderr too (once per job where the launcher names the rank),
     * for jobs started by a script under `pario env` */
    if (used && pario_config.launcher_rank == 0)
        pario_warn("this program started MPI through an entry point pario does not intercept (its MPI_Init "
                   "was not seen), so no log is written; MPI library: %s", version);
}

void pario_note_wrote(const char *path)
{
    char text[PATH_MAX + 16];
    if (snprintf(text, sizeof text, "wrote %s\n", path) < (int)sizeof text)
        write_note(text);
}
