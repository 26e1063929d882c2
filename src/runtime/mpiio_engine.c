/*
 * The MPI-IO layer's glue to the collective-write engine (mpiio_engine.h).
 */
#include "core.h"
#include "config.h"
#include "mpiio_engine.h"
#include "../collective/hooks.h"

#include <pthread.h>
#include <stdlib.h>

static void engine_writer_started(void) { pario_thread()->depth++; } /* its pwrites are the call's */

static void engine_hooks(void)
{
    struct cw_hooks h = {.now = pario_now, .writer_thread_started = engine_writer_started, .warn = pario_warn,
                         .algorithm = pario_config.coll, .calls_path = pario_config.coll_calls};
    cw_set_hooks(&h);
}

struct cw_file *pario_engine_open(MPI_File fh, MPI_Comm comm, const char *path, int amode, MPI_Info info)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, engine_hooks);
    return path ? cw_file_open(fh, comm, path, amode, info) : NULL;
}

/* A request already complete: what MPI_Wait/MPI_Test of a nonblocking
 * collective write the engine served see (its bytes in the status). */
static int done_query(void *extra, MPI_Status *status)
{
    NEXT(PMPI_Status_set_elements_x)(status, MPI_BYTE, *(MPI_Count *)extra);
    NEXT(PMPI_Status_set_cancelled)(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}
static int done_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}
static int done_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* complete at once: nothing to cancel */
}

static int done_request(int64_t bytes, MPI_Request *rq)
{
    MPI_Count *extra = malloc(sizeof *extra);
    if (!extra)
        return MPI_ERR_NO_MEM;
    *extra = (MPI_Count)bytes;
    int rc = NEXT(PMPI_Grequest_start)(done_query, done_free, done_cancel, extra, rq);
    if (rc != MPI_SUCCESS) {
        free(extra);
        return rc;
    }
    return NEXT(PMPI_Grequest_complete)(*rq);
}

/* The MPI library's collective write of count elements (0 when this rank
 * wrote its own bytes already, stats->direct_bytes). */
static int library_write(MPI_File fh, int explicit_offset, MPI_Offset off, const void *buf, int count,
                         MPI_Datatype dt, MPI_Status *st, MPI_Request *rq, enum write_form form)
{
    switch (form) {
    case SPLIT:
        return explicit_offset ? NEXT(PMPI_File_write_at_all_begin)(fh, off, buf, count, dt)
                               : NEXT(PMPI_File_write_all_begin)(fh, buf, count, dt);
    case NONBLOCKING:
        return explicit_offset ? NEXT(PMPI_File_iwrite_at_all)(fh, off, buf, count, dt, rq)
                               : NEXT(PMPI_File_iwrite_all)(fh, buf, count, dt, rq);
    default:
        return explicit_offset ? NEXT(PMPI_File_write_at_all)(fh, off, buf, count, dt, st)
                               : NEXT(PMPI_File_write_all)(fh, buf, count, dt, st);
    }
}

int pario_engine_write(struct cw_file *engine, MPI_File fh, int explicit_offset, MPI_Offset off, const void *buf,
                       int count, MPI_Datatype dt, MPI_Status *st, MPI_Request *rq, enum write_form form,
                       struct cw_stats *stats)
{
    MPI_Status own;
    int rc = form == SPLIT ? cw_write_begin(engine, fh, explicit_offset, off, buf, count, dt, stats)
                           : cw_write(engine, fh, explicit_offset, off, buf, count, dt, form == NONBLOCKING ? &own : st,
                                      stats);
    if (!stats->served) {
        rc = library_write(fh, explicit_offset, off, buf, stats->direct_bytes ? 0 : count, dt, st, rq, form);
        if (rc == MPI_SUCCESS && stats->direct_bytes)
            cw_direct_done(engine, fh, explicit_offset, stats->direct_bytes, form == BLOCKING ? st : NULL);
    } else if (rc != MPI_SUCCESS) {
        NEXT(PMPI_File_call_errhandler)(fh, rc); /* what the MPI library does with an error */
    } else if (form == NONBLOCKING) {
        MPI_Count bytes = 0;
        NEXT(PMPI_Get_elements_x)(&own, MPI_BYTE, &bytes);
        rc = done_request((int64_t)bytes, rq);
    }
    return rc;
}
