! f_pattern.F90 through the `use mpi_f08` binding: the same calls, bytes and
! files (see there), with the f08 handle types and no ierr arguments.
program f_pattern_f08
  use mpi_f08
  implicit none
  integer, parameter :: L = 32, N = L * L
  integer :: rank, nprocs, i, total, u
  integer :: buf(N), back(N), ring(N), hdr(4)
  integer :: sizes(2), subsizes(2), starts(2)
  type(MPI_File) :: fh
  type(MPI_Datatype) :: view
  type(MPI_Status) :: st
  integer(kind=MPI_OFFSET_KIND) :: disp, off
  character(len=4096) :: dir

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (nprocs /= 4) call MPI_Abort(MPI_COMM_WORLD, 2)
  call get_command_argument(1, dir)
  do i = 1, N
    buf(i) = rank * N + i
  end do

  open(newunit=u, file=trim(dir)//'/unit_'//char(48 + rank)//'.dat', access='stream', &
       form='unformatted', status='replace')
  write(u) buf
  close(u)

  call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/mpiio.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh)
  off = int(rank, MPI_OFFSET_KIND) * N * 4
  call MPI_File_write_at(fh, off, buf, N, MPI_INTEGER, st)

  sizes = [2 * L, 2 * L]
  subsizes = [L, L]
  starts = [mod(rank, 2) * L, (rank / 2) * L]
  call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, view)
  call MPI_Type_commit(view)
  disp = int(nprocs, MPI_OFFSET_KIND) * N * 4
  call MPI_File_set_view(fh, disp, MPI_INTEGER, view, 'native', MPI_INFO_NULL)
  call MPI_File_write_all(fh, buf, N, MPI_INTEGER, st)
  call MPI_File_seek(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_SET)
  back = 0
  call MPI_File_read_all(fh, back, N, MPI_INTEGER, st)
  if (any(back /= buf)) call MPI_Abort(MPI_COMM_WORLD, 3)
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL)
  back = 0
  call MPI_File_read_at(fh, off, back, N, MPI_INTEGER, st)
  if (any(back /= buf)) call MPI_Abort(MPI_COMM_WORLD, 3)
  call MPI_File_close(fh)
  call MPI_Type_free(view)

  hdr = 0
  if (rank == 0) hdr = [1, 2, 3, 4]
  call MPI_Bcast(hdr, 4, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Sendrecv(buf, N, MPI_INTEGER, mod(rank + 1, nprocs), 7, ring, N, MPI_INTEGER, &
                    mod(rank + nprocs - 1, nprocs), 7, MPI_COMM_WORLD, st)
  if (ring(1) /= mod(rank + nprocs - 1, nprocs) * N + 1) call MPI_Abort(MPI_COMM_WORLD, 3)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (total /= 6 .or. hdr(4) /= 4) call MPI_Abort(MPI_COMM_WORLD, 3)
  call MPI_Finalize()
end program f_pattern_f08
