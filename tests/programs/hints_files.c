/*
 * Per-file hints (PARIO_HINTS sections): open several files, write, print their hints.
 * Usage: hints_files OUTDIR S [NAME...]   (names default to a.dat b.h5)
 *   for each NAME, in order: MPI_File_open(OUTDIR/NAME, MPI_INFO_NULL), every rank
 *   writes S bytes of 'a'+rank at rank*S (MPI_File_write_at_all), then rank 0 prints
 *   "NAME:<TAB>key=value<TAB>key=value..." of MPI_File_get_info (keys sorted as the library
 *   gives them) and the file is closed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

static void print_info(const char *name, MPI_File fh)
{
    MPI_Info info;
    if (MPI_File_get_info(fh, &info) != MPI_SUCCESS) {
        printf("%s: (no info)\n", name);
        return;
    }
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    printf("%s:", name);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
        if (flag)
            printf("\t%s=%s", key, val);
    }
    printf("\n");
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, -1, "hints_files OUTDIR S [NAME...]");
    static const char *const defaults[] = {"a.dat", "b.h5"};
    const char *const *names = argc > 3 ? (const char *const *)argv + 3 : defaults;
    int nnames = argc > 3 ? argc - 3 : 2;
    int s = atoi(argv[2]);
    char *buf = malloc((size_t)s);
    memset(buf, 'a' + rank, (size_t)s);
    for (int i = 0; i < nnames; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        MPI_File fh;
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) !=
            MPI_SUCCESS) {
            fprintf(stderr, "rank %d: cannot open %s\n", rank, path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_File_write_at_all(fh, (MPI_Offset)rank * s, buf, s, MPI_BYTE, MPI_STATUS_IGNORE);
        if (rank == 0)
            print_info(names[i], fh);
        MPI_File_close(&fh);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
