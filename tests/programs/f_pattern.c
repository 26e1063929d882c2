/* The C twin of f_pattern.F90 (see there): the same calls, bytes and files,
 * the Fortran unit's write done with write(2). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { L = 32, N = L * L };

int main(int argc, char **argv)
{
    int rank, nprocs, buf[N], back[N], ring[N], hdr[4] = {0}, total;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 4 || argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < N; i++)
        buf[i] = rank * N + i + 1;

    char path[4200];
    snprintf(path, sizeof path, "%s/unit_%d.dat", argv[1], rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        MPI_Abort(MPI_COMM_WORLD, 3);
    close(fd);

    MPI_File fh;
    snprintf(path, sizeof path, "%s/mpiio.dat", argv[1]);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Offset off = (MPI_Offset)rank * N * 4;
    MPI_File_write_at(fh, off, buf, N, MPI_INT, MPI_STATUS_IGNORE);

    int sizes[2] = {2 * L, 2 * L}, subsizes[2] = {L, L}, starts[2] = {rank % 2 * L, rank / 2 * L};
    MPI_Datatype view;
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &view);
    MPI_Type_commit(&view);
    MPI_File_set_view(fh, (MPI_Offset)nprocs * N * 4, MPI_INT, view, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, buf, N, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    memset(back, 0, sizeof back);
    MPI_File_read_all(fh, back, N, MPI_INT, MPI_STATUS_IGNORE);
    if (memcmp(back, buf, sizeof buf))
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    memset(back, 0, sizeof back);
    MPI_File_read_at(fh, off, back, N, MPI_INT, MPI_STATUS_IGNORE);
    if (memcmp(back, buf, sizeof buf))
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_File_close(&fh);
    MPI_Type_free(&view);

    if (rank == 0)
        hdr[0] = 1, hdr[1] = 2, hdr[2] = 3, hdr[3] = 4;
    MPI_Bcast(hdr, 4, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Sendrecv(buf, N, MPI_INT, (rank + 1) % nprocs, 7, ring, N, MPI_INT, (rank + nprocs - 1) % nprocs, 7,
                 MPI_COMM_WORLD, &st);
    if (ring[0] != (rank + nprocs - 1) % nprocs * N + 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total != 6 || hdr[3] != 4)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Finalize();
    return 0;
}
