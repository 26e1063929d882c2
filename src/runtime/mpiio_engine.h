/*
 * The MPI-IO layer's glue to the collective-write engine (src/collective):
 * the hooks the engine gets, its state for a file at open, and a collective
 * write handed to the engine or, when it gives the call back, to the MPI
 * library.  mpiio.c keeps the handle table, the timing and what the log
 * records of each call (engine_record).
 */
#ifndef PARIO_MPIIO_ENGINE_H
#define PARIO_MPIIO_ENGINE_H

#include "../collective/engine.h"

#include <mpi.h>

/* How a collective write was called: blocking, split (_begin) or nonblocking (MPI_File_i*). */
enum write_form { BLOCKING, SPLIT, NONBLOCKING };

/* The engine's state for a file the MPI library just opened, or NULL when
 * the engine is not selected for it; path without ROMIO's "ufs:" prefix
 * (NULL: no engine).  The first call installs the engine's hooks. */
struct cw_file *pario_engine_open(MPI_File fh, MPI_Comm comm, const char *path, int amode, MPI_Info info);

/* A collective write of the given form through the engine, or through the
 * MPI library when the engine gives it back (stats->served 0; then with
 * none of the bytes this rank wrote itself).  A nonblocking write the engine
 * served returns a request already complete in *rq.  Returns the MPI code;
 * stats says what the engine did, for the log. */
int pario_engine_write(struct cw_file *engine, MPI_File fh, int explicit_offset, MPI_Offset off, const void *buf,
                       int count, MPI_Datatype dt, MPI_Status *st, MPI_Request *rq, enum write_form form,
                       struct cw_stats *stats);

#endif
