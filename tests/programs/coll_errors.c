/*
 * Collective writes that pario's collective-write engine must hand to the MPI
 * library, and a collective write that fails on one rank.
 * Usage: coll_errors MODE PATH [FAILRANK]
 *
 * Every rank writes NB blocks of BLK bytes through a strided view: block b of
 * rank r of region k lies at k*R + (b*P + r)*BLK, R = P*NB*BLK (P ranks).
 * Byte o of a region written in the native representation is
 * pattern(o) = (o*131 + (o>>8)*7 + 17) mod 256.  The file is opened on
 * MPI_COMM_WORLD with the hints cb_buffer_size=4096, cb_nodes=P and
 * cb_config_list=*:* (every rank aggregates), after rank 0 deleted it.
 *
 * MODE
 *   atomic     region 0: MPI_File_set_atomicity(1), MPI_File_write_all;
 *              region 1: still atomic, MPI_File_write_at_all_begin/_end;
 *              region 2: set_atomicity(0), MPI_File_write_at_all.
 *              The file is pattern(0 .. 3R).
 *   datarep    region 0: an "external32" view of MPI_INT (a vector of NB
 *              blocks of BLK/4 ints), MPI_File_write_all of the ints
 *              value(i) = i*40503 + 12345 (mod 2^32, i = offset/4): the file
 *              holds them big-endian; region 1: a native view, write_all of
 *              the pattern.
 *   sequential MPI_MODE_SEQUENTIAL: MPI_File_write_ordered of the pattern
 *              of bytes r*NB*BLK .. (r+1)*NB*BLK on rank r, then
 *              MPI_File_write_all of NB*BLK bytes 0xEE, which MPI does not
 *              allow in this mode (ROMIO: MPI_ERR_UNSUPPORTED_OPERATION).
 *              Without that write the file is pattern(0 .. R).
 *   efbig      MPI_File_write_at_all of region 0; then rank FAILRANK (default
 *              P-1) ignores SIGXFSZ and lowers its RLIMIT_FSIZE soft limit
 *              to 0, so that each pwrite it makes fails with EFBIG;
 *              MPI_File_write_all of region 0 again; the limit is restored;
 *              MPI_File_write_at_all of the same data, which must succeed.
 *              The file is pattern(0 .. R).
 *   efbig-first  the same without the first write: the failing write is the
 *              file's first.  The limit covers every file the rank creates,
 *              shared-memory segments included: Open MPI's MPI_Win_allocate
 *              hangs when rank 0 cannot size its segment (osc sm).
 *
 * The file's error handler is MPI_ERRORS_RETURN (MPI's default for files).
 * Rank 0 prints one line per rank and call, in rank order:
 *   "rank R call C CLASS count N"
 * CLASS is the MPI error class name of the call's return code (MPI_SUCCESS
 * ...), N the bytes MPI_Get_count gives for a successful call (-1 after an
 * error).  Every rank prints the error string of a failed call on stderr.
 * Exit 0 when the program ran to MPI_Finalize (whatever the calls
 * returned), 2 on a usage error, 1 when the file could not be opened.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define NB 8
#define BLK 1000
#define MAXCALLS 3

static int rank, nprocs;
static int codes[MAXCALLS];
static long long counts[MAXCALLS];
static int ncalls;

static unsigned char pattern(uint64_t o)
{
    return (unsigned char)((o * 131u + (o >> 8) * 7u + 17u) & 0xffu);
}

static const char *class_name(int cls)
{
    static const struct { int cls; const char *name; } names[] = {
        {MPI_SUCCESS, "MPI_SUCCESS"},
        {MPI_ERR_IO, "MPI_ERR_IO"},
        {MPI_ERR_FILE, "MPI_ERR_FILE"},
        {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE"},
        {MPI_ERR_QUOTA, "MPI_ERR_QUOTA"},
        {MPI_ERR_ACCESS, "MPI_ERR_ACCESS"},
        {MPI_ERR_AMODE, "MPI_ERR_AMODE"},
        {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY"},
        {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE"},
        {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
        {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP"},
        {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION"},
        {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM"},
        {MPI_ERR_ARG, "MPI_ERR_ARG"},
        {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
        {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
        {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
        {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
        {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].cls == cls)
            return names[i].name;
    return "MPI_ERR_UNKNOWN_CLASS";
}

/* Keep a call's return code and the bytes its status reports. */
static void record(const char *what, int rc, MPI_Status *status)
{
    int count = -1;
    if (rc == MPI_SUCCESS) {
        MPI_Get_count(status, MPI_BYTE, &count);
    } else {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "coll_errors: rank %d: %s: %s\n", rank, what, msg);
    }
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    codes[ncalls] = cls;
    counts[ncalls] = count;
    ncalls++;
}

/* The pattern bytes of this rank's blocks in region k, in view order. */
static void fill_region(unsigned char *buf, int k)
{
    uint64_t region = (uint64_t)nprocs * NB * BLK;
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < BLK; i++)
            buf[b * BLK + i] = pattern(k * region + ((uint64_t)b * nprocs + rank) * BLK + i);
}

/* This rank's strided view of region k: NB blocks of BLK etypes of 'unit' bytes. */
static int strided_view(MPI_File fh, int k, MPI_Datatype etype, int unit, const char *datarep)
{
    MPI_Datatype filetype;
    int per = BLK / unit;
    MPI_Type_vector(NB, per, per * nprocs, etype, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Offset disp = (MPI_Offset)k * nprocs * NB * BLK + (MPI_Offset)rank * BLK;
    int rc = MPI_File_set_view(fh, disp, etype, filetype, datarep, MPI_INFO_NULL);
    MPI_Type_free(&filetype);
    return rc;
}

static void print_report(void)
{
    int all_codes[MAXCALLS * 64];
    long long all_counts[MAXCALLS * 64];
    if (nprocs > 64) {
        if (rank == 0)
            fprintf(stderr, "coll_errors: at most 64 ranks\n");
        return;
    }
    MPI_Gather(codes, MAXCALLS, MPI_INT, all_codes, MAXCALLS, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(counts, MAXCALLS, MPI_LONG_LONG, all_counts, MAXCALLS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < nprocs; r++)
            for (int c = 0; c < ncalls; c++)
                printf("rank %d call %d %s count %lld\n", r, c, class_name(all_codes[r * MAXCALLS + c]),
                       all_counts[r * MAXCALLS + c]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *modes[] = {"atomic", "datarep", "sequential", "efbig", "efbig-first"};
    int mode = -1;
    for (int i = 0; argc >= 3 && i < 5; i++)
        if (strcmp(argv[1], modes[i]) == 0)
            mode = i;
    if (mode < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_errors atomic|datarep|sequential|efbig|efbig-first PATH [FAILRANK]\n");
        MPI_Finalize();
        return 2;
    }
    const char *path = argv[2];
    int failrank = argc > 3 ? atoi(argv[3]) : nprocs - 1;

    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);  /* may not exist */
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Info info;
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", nprocs);
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_Info_set(info, "cb_nodes", nodes);
    MPI_Info_set(info, "cb_config_list", "*:*");
    int amode = MPI_MODE_CREATE | (mode == 2 ? MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL : MPI_MODE_RDWR);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "coll_errors: rank %d: cannot open %s\n", rank, path);
        MPI_Finalize();
        return 1;
    }

    unsigned char buf[NB * BLK];
    MPI_Status status;
    if (mode == 0) {  /* atomic */
        MPI_File_set_atomicity(fh, 1);
        strided_view(fh, 0, MPI_BYTE, 1, "native");
        fill_region(buf, 0);
        record("write_all (atomic)", MPI_File_write_all(fh, buf, NB * BLK, MPI_BYTE, &status), &status);
        strided_view(fh, 1, MPI_BYTE, 1, "native");
        fill_region(buf, 1);
        rc = MPI_File_write_at_all_begin(fh, 0, buf, NB * BLK, MPI_BYTE);
        if (rc == MPI_SUCCESS)
            rc = MPI_File_write_at_all_end(fh, buf, &status);
        record("write_at_all_begin/end (atomic)", rc, &status);
        MPI_File_set_atomicity(fh, 0);
        strided_view(fh, 2, MPI_BYTE, 1, "native");
        fill_region(buf, 2);
        record("write_at_all", MPI_File_write_at_all(fh, 0, buf, NB * BLK, MPI_BYTE, &status), &status);
    } else if (mode == 1) {  /* datarep */
        int ints[NB * BLK / 4];
        rc = strided_view(fh, 0, MPI_INT, 4, "external32");
        for (int b = 0; b < NB; b++)
            for (int i = 0; i < BLK / 4; i++) {
                uint32_t index = (uint32_t)((((uint64_t)b * nprocs + rank) * BLK) / 4 + i);
                uint32_t v = index * 40503u + 12345u;
                memcpy(&ints[b * (BLK / 4) + i], &v, 4);
            }
        if (rc == MPI_SUCCESS)
            rc = MPI_File_write_all(fh, ints, NB * BLK / 4, MPI_INT, &status);
        record("write_all (external32)", rc, &status);
        strided_view(fh, 1, MPI_BYTE, 1, "native");
        fill_region(buf, 1);
        record("write_all", MPI_File_write_all(fh, buf, NB * BLK, MPI_BYTE, &status), &status);
    } else if (mode == 2) {  /* sequential */
        for (int i = 0; i < NB * BLK; i++)
            buf[i] = pattern((uint64_t)rank * NB * BLK + i);
        record("write_ordered", MPI_File_write_ordered(fh, buf, NB * BLK, MPI_BYTE, &status), &status);
        memset(buf, 0xEE, sizeof buf);
        record("write_all (sequential)", MPI_File_write_all(fh, buf, NB * BLK, MPI_BYTE, &status), &status);
    } else {  /* efbig */
        struct rlimit old, low;
        strided_view(fh, 0, MPI_BYTE, 1, "native");
        fill_region(buf, 0);
        if (mode == 3)  /* explicit offset: the individual file pointer stays at 0 */
            record("write_at_all", MPI_File_write_at_all(fh, 0, buf, NB * BLK, MPI_BYTE, &status), &status);
        if (rank == failrank) {
            signal(SIGXFSZ, SIG_IGN);
            getrlimit(RLIMIT_FSIZE, &old);
            low = old;
            low.rlim_cur = 0;
            if (setrlimit(RLIMIT_FSIZE, &low) != 0)
                perror("coll_errors: setrlimit");
        }
        record("write_all (EFBIG)", MPI_File_write_all(fh, buf, NB * BLK, MPI_BYTE, &status), &status);
        if (rank == failrank)
            setrlimit(RLIMIT_FSIZE, &old);
        MPI_Barrier(MPI_COMM_WORLD);
        record("write_at_all", MPI_File_write_at_all(fh, 0, buf, NB * BLK, MPI_BYTE, &status), &status);
    }
    MPI_File_close(&fh);
    print_report();
    MPI_Finalize();
    return 0;
}
