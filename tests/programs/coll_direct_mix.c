/* coll_direct_mix OUTDIR MODE: one MPI_File_write_all of a shared file where, under the
 * engine's auto, the even ranks can write their own bytes directly and the odd ranks cannot
 * (tests/test_collective_auto.py).  Every rank writes N bytes at rank * N (MPI_File_seek to
 * it, the individual file pointer): even ranks from a contiguous buffer, odd ranks through a
 * memory vector of N one-byte blocks, stride 2.  MODE twophase: N = 65536 (the odd ranks' bytes
 * go through two-phase); MODE library: N = 2^21 + 8, more pieces than the engine takes, so the
 * call goes to the MPI library.  Byte i of rank r is (r * 13 + i) % 251.  Each rank prints
 * {"rank":R,"err":E,"count":C,"pos":P} (count of MPI_BYTE in the status, position after). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

int main(int argc, char **argv)
{
    int rank = start_mpi(&argc, &argv, 2, -1, "coll_direct_mix OUTDIR MODE");
    long n = strcmp(argv[2], "library") == 0 ? (1L << 21) + 8 : 65536;
    unsigned char *buf = calloc((size_t)n * 2, 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int odd = rank % 2;
    for (long i = 0; i < n; i++)
        buf[odd ? 2 * i : i] = (unsigned char)((rank * 13 + i) % 251);
    MPI_Datatype mem = MPI_BYTE;
    int count = (int)n;
    if (odd) {
        MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &mem);
        MPI_Type_commit(&mem);
        count = 1;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/mix.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_seek(fh, (MPI_Offset)rank * n, MPI_SEEK_SET);
    MPI_Status st;
    int err = MPI_File_write_all(fh, buf, count, mem, &st);
    int got = -1;
    MPI_Offset pos = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    MPI_File_get_position(fh, &pos);
    printf("{\"rank\":%d,\"err\":%d,\"count\":%d,\"pos\":%lld}\n", rank, err, got, (long long)pos);
    MPI_File_close(&fh);
    if (odd)
        MPI_Type_free(&mem);
    free(buf);
    MPI_Finalize();
    return 0;
}
