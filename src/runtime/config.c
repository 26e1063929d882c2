/*
 * The runtime's settings: every environment variable it reads, read here at start-up (init.c)
 * into pario_config, and again at an exit without MPI_Finalize: a shell that exports new values
 * (eval "$(pario env)" in a job script) changes what its exit does, nothing else.
 */
#include "config.h"

#include "core.h"
#include "pario-hint-line.h"

#include <stdlib.h>
#include <string.h>

struct pario_config pario_config;

static const char *text(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Set and not "0". */
static int flag(const char *name)
{
    const char *v = text(name);
    return v && strcmp(v, "0") != 0;
}

/* The launcher's process count, 0 where no launcher names this process. */
static long launcher_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = text(vars[i]);
        if (v && atol(v) > 0)
            return atol(v);
    }
    return 0;
}

void pario_config_read(void)
{
    struct pario_config *c = &pario_config;
    c->disabled = flag("PARIO_DISABLE");
    c->mem = pario_parse_size(text("PARIO_MEM"), (size_t)8 << 20);
    if (c->mem < 65536)
        c->mem = 65536;
    c->exclude = text("PARIO_EXCLUDE");
    c->hints = text("PARIO_HINTS");
    c->log = text("PARIO_LOG");
    c->launch = text("PARIO_LAUNCH");
    c->steps = flag("PARIO_STEPS");
    c->parent_pid = text("PARIO_PARENT_PID");
    const char *times = text("PARIO_FINALIZE_TIMES");
    c->finalize_times = times && strcmp(times, "1") == 0;
    c->run_notes = text("PARIO_RUN_NOTES");
    c->trace = flag("PARIO_TRACE");
    c->trace_buffer = pario_parse_size(text("PARIO_TRACE_BUFFER"), 65536);
    if (c->trace_buffer < 1)
        c->trace_buffer = 1;
    if (c->trace_buffer > ((uint64_t)1 << 26))
        c->trace_buffer = (uint64_t)1 << 26;
    c->trace_max = pario_parse_size(text("PARIO_TRACE_MAX"), (size_t)256 << 20);
    const char *tmp = text("TMPDIR");
    c->tmpdir = tmp ? tmp : "/tmp";
    c->slurm_job = getenv("SLURM_JOB_ID");
    c->slurm_step = getenv("SLURM_STEP_ID");
    c->launcher_size = launcher_size();
    c->launcher_rank = pario_launcher_rank();
    c->coll = text("PARIO_COLL");
    c->coll_calls = text("PARIO_COLL_CALLS");
}
