/*
 * Notes for `pario run`: why a process wrote no log.
 *
 * `pario run` names a directory in PARIO_RUN_NOTES (beside the log, so
 * that ranks on other nodes reach it).  Every process that loads the
 * runtime writes "<dir>/<pid>" when it starts ("started") and rewrites it
 * when it leaves without writing a log, saying why.  When a job leaves no
 * log, `pario run` reads them: no note at all means the runtime never
 * reached the program's processes; "started" alone means a process died
 * without exiting; the exit notes say whether MPI was used and whether
 * pario saw it start.  Without PARIO_RUN_NOTES nothing is written.
 *
 * Both calls happen while the wrappers pass through (before profiling is
 * switched on, after it is switched off), so the note files are not
 * recorded as the program's.
 */
#include "core.h" /* first: defines _GNU_SOURCE */
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
    const char *dir = getenv("PARIO_RUN_NOTES");
    if (!dir || !*dir)
        return;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%ld", dir, (long)getpid()) >= (int)sizeof path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, text, strlen(text));
    (void)w;
    close(fd);
}

void pario_note_started(void) { write_note("started\n"); }

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
    snprintf(text, sizeof text, "exited %s\nmpi_used %d\nmpi_init_seen %d\nmpi_library %.400s\n", why, used,
             pario_core.mpi_initialized, version);
    write_note(text);
    /* said on stderr too (once per job where the launcher names the rank),
     * for jobs started by a script under `pario env` */
    if (used && pario_launcher_rank() == 0)
        pario_warn("this program started MPI through an entry point pario does not intercept (its MPI_Init "
                   "was not seen), so no log is written; MPI library: %s", version);
}
