/* pario-demo-io OUTDIR: a small MPI program whose I/O is known exactly,
 * used by `make demo` and by the tests of the profiler.
 *
 * With P ranks (MiB = 1048576 bytes):
 *   OUTDIR/shared.dat  rank 0 first unlinks an old copy (POSIX unlink, if it
 *                      exists); MPI_File_open on MPI_COMM_WORLD; each rank
 *                      4 x MPI_File_write_at_all of 1 MiB at offsets
 *                      (4r + i) MiB, MPI_File_sync, MPI_Barrier,
 *                      MPI_File_sync, then 4 x MPI_File_read_at of the same
 *                      1 MiB blocks; MPI_File_close.  File: 4P MiB.
 *   OUTDIR/rank<r>.dat each rank: open(O_CREAT|O_TRUNC), 16 x write() of
 *                      64 KiB, close.  File: 1 MiB.
 *   OUTDIR/demo.log    rank 0: fopen, 100 x fprintf of a 21-byte line
 *                      ("demo line 001 of 100\n"), fclose.  File: 2100 bytes.
 * plus about 0.1 s of computation per rank and one MPI_Allreduce (a double),
 * and one line on stdout from rank 0.  Missing or unwritable OUTDIR: one line
 * on stderr, exit 2 on every rank.  Data read back differing: exit 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1024 * 1024)
#define NSHARED 4
#define NPOSIX 16
#define POSIX_CHUNK (64 * 1024)
#define NLINES 100

static unsigned char value_at(long long off, int salt)
{
    return (unsigned char)((off * 2654435761LL + salt * 40503) >> 7);
}

/* Every rank learns whether any failed.  Rank 0 prints its message (or
 * "another rank failed"); with per_rank, failing ranks other than 0 print
 * theirs as well. */
static int agree_fail(int failed, const char *msg, int rank, int per_rank)
{
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && failed && rank == 0)
        fprintf(stderr, "pario-demo-io: error: %s\n", msg);
    if (any && !failed && rank == 0)
        fprintf(stderr, "pario-demo-io: error: another rank failed\n");
    if (any && failed && rank != 0 && per_rank)
        fprintf(stderr, "pario-demo-io: rank %d: %s\n", rank, msg);
    return any;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    char msg[8192] = "";
    int failed = 0;
    const char *dir = argc == 2 ? argv[1] : NULL;
    struct stat st;
    if (!dir || !*dir) {
        snprintf(msg, sizeof msg, "usage: pario-demo-io OUTDIR (an existing, writable directory)");
        failed = 1;
    } else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(msg, sizeof msg, "output directory %s does not exist (create it first)", dir);
        failed = 1;
    } else if (access(dir, W_OK | X_OK) != 0) {
        snprintf(msg, sizeof msg, "output directory %s is not writable", dir);
        failed = 1;
    }
    /* every rank checks; rank 0's message is the one printed */
    if (agree_fail(failed, msg, rank, 0)) {
        MPI_Finalize();
        return 2;
    }

    char path[4096];
    unsigned char *buf = malloc(MIB);
    if (!buf) {
        fprintf(stderr, "pario-demo-io: error: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double t0 = MPI_Wtime();

    /* ---- shared.dat: collective writes, independent reads ---- */
    snprintf(path, sizeof path, "%s/shared.dat", dir);
    if (rank == 0 && access(path, F_OK) == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "cannot open %s with MPI_File_open", path);
    if (agree_fail(rc != MPI_SUCCESS, msg, rank, 1)) {
        MPI_Finalize();
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < NSHARED; i++) {
        MPI_Offset off = ((MPI_Offset)rank * NSHARED + i) * MIB;
        for (int b = 0; b < MIB; b++)
            buf[b] = value_at(off + b, 1);
        if (MPI_File_write_at_all(fh, off, buf, MIB, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            bad = 1;
    }
    /* MPI's recipe for reading data another process may have written
     * (collective buffering: an aggregator wrote this rank's blocks; ompio
     * returns from write_at_all before the aggregators' writes are done):
     * sync, barrier, sync. */
    if (MPI_File_sync(fh) != MPI_SUCCESS)
        bad = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_File_sync(fh) != MPI_SUCCESS)
        bad = 1;
    for (int i = 0; i < NSHARED; i++) {
        MPI_Offset off = ((MPI_Offset)rank * NSHARED + i) * MIB;
        memset(buf, 0, MIB);
        if (MPI_File_read_at(fh, off, buf, MIB, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            bad = 1;
        for (int b = 0; b < MIB && !bad; b++)
            if (buf[b] != value_at(off + b, 1))
                bad = 2;
    }
    MPI_File_close(&fh);
    snprintf(msg, sizeof msg, "%s on %s", bad == 2 ? "data read back differs" : "I/O error", path);
    if (agree_fail(bad != 0, msg, rank, 1)) {
        MPI_Finalize();
        return 1;
    }

    /* ---- rank<r>.dat: POSIX writes ---- */
    snprintf(path, sizeof path, "%s/rank%d.dat", dir, rank);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    bad = fd < 0;
    for (int i = 0; i < NPOSIX && !bad; i++) {
        for (int b = 0; b < POSIX_CHUNK; b++)
            buf[b] = value_at((long long)i * POSIX_CHUNK + b, 2 + rank);
        if (write(fd, buf, POSIX_CHUNK) != POSIX_CHUNK)
            bad = 1;
    }
    if (fd >= 0 && close(fd) != 0)
        bad = 1;
    snprintf(msg, sizeof msg, "cannot write %s: %s", path, strerror(errno));
    if (agree_fail(bad, msg, rank, 1)) {
        MPI_Finalize();
        return 1;
    }

    /* ---- demo.log: STDIO from rank 0 ---- */
    bad = 0;
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/demo.log", dir);
        FILE *f = fopen(path, "w");
        bad = f == NULL;
        for (int i = 1; i <= NLINES && f; i++)
            fprintf(f, "demo line %03d of %d\n", i, NLINES);
        if (f && fclose(f) != 0)
            bad = 1;
        snprintf(msg, sizeof msg, "cannot write %s", path);
    }
    if (agree_fail(bad, msg, rank, 1)) {
        MPI_Finalize();
        return 1;
    }

    /* ---- a little computation and an Allreduce ---- */
    double acc = 0.0;
    for (long i = 1; i <= 4000000; i++)
        acc += sqrt((double)i + rank) / (double)i;
    double total = 0.0;
    MPI_Allreduce(&acc, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double elapsed = MPI_Wtime() - t0;

    if (rank == 0)
        printf("pario-demo-io: %d ranks wrote %d MiB to shared.dat (collective) and read it back, "
               "%d x 1 MiB rank<r>.dat (POSIX), %d bytes to demo.log (STDIO); checksum %.6f; %.3f s\n",
               nprocs, nprocs * NSHARED, nprocs, NLINES * 21, total, elapsed);
    free(buf);
    MPI_Finalize();
    return 0;
}
