/* Every setting the runtime takes from its environment, read at start-up (config.c) into
 * pario_config: no other file of the runtime or the collective engine calls getenv.  Strings
 * are the environment's own, NULL where a variable is unset or empty. */
#ifndef PARIO_CONFIG_H
#define PARIO_CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct pario_config {
    int disabled;               /* PARIO_DISABLE set and not "0": nothing is recorded */
    size_t mem;                 /* PARIO_MEM: bytes for records (8 MiB; at least 64 KiB) */
    const char *exclude;        /* PARIO_EXCLUDE: ':'-separated paths not to record */
    const char *hints;          /* PARIO_HINTS: the hints file to inject */
    const char *log;            /* PARIO_LOG: the log's file, or a directory for it */
    const char *launch;         /* PARIO_LAUNCH: the command given to pario run (a JSON list) */
    int steps;                  /* PARIO_STEPS set and not "0": each MPI job writes a step log */
    const char *parent_pid;     /* PARIO_PARENT_PID: the pid of `pario run` */
    int finalize_times;         /* PARIO_FINALIZE_TIMES=1: MPI_Finalize prints its phases */
    const char *run_notes;      /* PARIO_RUN_NOTES: the notes file `pario run` reads */
    int trace;                  /* PARIO_TRACE set and not "0": record the event trace */
    uint64_t trace_buffer;      /* PARIO_TRACE_BUFFER: events kept in memory (65536; 1 to 2^26) */
    size_t trace_max;           /* PARIO_TRACE_MAX: trace bytes spilled per rank (256 MiB) */
    const char *tmpdir;         /* TMPDIR, else "/tmp" */
    const char *slurm_job;      /* SLURM_JOB_ID */
    const char *slurm_step;     /* SLURM_STEP_ID */
    long launcher_size;         /* OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS; 0: no launcher */
    int launcher_rank;          /* the launcher's rank of this process (before MPI_Init); 0 unknown */
    const char *coll;           /* PARIO_COLL: the collective engine's ALGO[:SHUFFLE] */
    const char *coll_calls;     /* PARIO_COLL_CALLS: a line per engine call, to this file */
};

extern struct pario_config pario_config;

/* Read the environment into pario_config: at start-up, and again at an exit without
 * MPI_Finalize (init.c), where a shell's own exports since start-up count. */
void pario_config_read(void);

#endif
