/*
 * A small MPI-IO program for the hints tests.
 * Usage: hints_open OUTDIR S [fatal]
 *   - every rank writes S bytes of 'a'+rank at rank*S to OUTDIR/hints.dat
 *     (MPI_File_open with MPI_INFO_NULL, MPI_File_write_at_all, close);
 *   - then opens OUTDIR/missing.dat read-only, which does not exist: the open
 *     must fail with an error code (the default MPI_ERRORS_RETURN of files);
 *   - with "fatal": MPI_FILE_NULL's error handler is MPI_ERRORS_ARE_FATAL
 *     first, the open of missing.dat is left out, and the program says whether
 *     the file handle of hints.dat inherited that handler.
 * Rank 0 prints "hints_open: wrote N bytes" (N = file size) and
 * "missing: error" / "inherited fatal: yes|no".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, -1, "hints_open OUTDIR S [fatal]");
    int s = atoi(argv[2]), fatal = argc > 3 && strcmp(argv[3], "fatal") == 0;
    char path[4096];
    char *buf = malloc((size_t)s);
    memset(buf, 'a' + rank, (size_t)s);
    if (fatal)
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);

    snprintf(path, sizeof path, "%s/hints.dat", argv[1]);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: cannot open %s\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int inherited = 0;
    if (fatal) {
        MPI_Errhandler eh;
        MPI_File_get_errhandler(fh, &eh);
        inherited = eh == MPI_ERRORS_ARE_FATAL;
        MPI_Errhandler_free(&eh);
    }
    MPI_File_write_at_all(fh, (MPI_Offset)rank * s, buf, s, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Offset size = 0;
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_get_size(fh, &size);
    MPI_File_close(&fh);
    if (rank == 0)
        printf("hints_open: wrote %lld bytes\n", (long long)size);

    if (fatal) {
        if (rank == 0)
            printf("inherited fatal: %s\n", inherited ? "yes" : "no");
    } else {
        snprintf(path, sizeof path, "%s/missing.dat", argv[1]);
        rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        if (rank == 0)
            printf("missing: %s\n", rc == MPI_SUCCESS ? "opened" : "error");
        if (rc == MPI_SUCCESS)
            MPI_File_close(&fh);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
