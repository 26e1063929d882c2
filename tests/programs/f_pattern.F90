! The Fortran known-I/O program, for the mpif.h binding (built with -DMPIF_H)
! and the `use mpi` one; f_pattern_f08.f90 is the `use mpi_f08` twin and
! f_pattern.c the C one: the same calls, bytes and files in all four.
!
! Run on 4 ranks with an output directory as argument.  Each rank
!   - writes L*L integers (4096 B) to unit_<rank>.dat through a Fortran
!     stream unit (one write);
!   - on mpiio.dat: MPI_File_write_at of its block at rank*4096, then a view
!     of its LxL block of the 2L x 2L global array (a subarray, displacement
!     16384), MPI_File_write_all, MPI_File_seek to its start and
!     MPI_File_read_all through it, then the
!     default view again and MPI_File_read_at of its first block;
!   - MPI communication: MPI_Bcast of 4 integers from rank 0, MPI_Sendrecv
!     of its block to the next rank, MPI_Allreduce of one integer.
! Every read is checked; a wrong value stops the program with exit code 3.
program f_pattern
#ifndef MPIF_H
  use mpi
#endif
  implicit none
#ifdef MPIF_H
  include 'mpif.h'
#endif
  integer, parameter :: L = 32, N = L * L
  integer :: ierr, rank, nprocs, fh, view, i, total, u
  integer :: buf(N), back(N), ring(N), hdr(4)
  integer :: sizes(2), subsizes(2), starts(2)
  integer :: st(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: disp, off
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 4) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  call get_command_argument(1, dir)
  do i = 1, N
    buf(i) = rank * N + i
  end do

  ! a Fortran stream unit: POSIX writes underneath
  open(newunit=u, file=trim(dir)//'/unit_'//char(48 + rank)//'.dat', access='stream', &
       form='unformatted', status='replace')
  write(u) buf
  close(u)

  call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/mpiio.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  off = int(rank, MPI_OFFSET_KIND) * N * 4
  call MPI_File_write_at(fh, off, buf, N, MPI_INTEGER, st, ierr)

  sizes = (/ 2 * L, 2 * L /)
  subsizes = (/ L, L /)
  starts = (/ mod(rank, 2) * L, (rank / 2) * L /)
  call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, view, ierr)
  call MPI_Type_commit(view, ierr)
  disp = int(nprocs, MPI_OFFSET_KIND) * N * 4
  call MPI_File_set_view(fh, disp, MPI_INTEGER, view, 'native', MPI_INFO_NULL, ierr)
  call MPI_File_write_all(fh, buf, N, MPI_INTEGER, st, ierr)
  off = 0
  call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
  back = 0
  call MPI_File_read_all(fh, back, N, MPI_INTEGER, st, ierr)
  if (any(back /= buf)) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  off = int(rank, MPI_OFFSET_KIND) * N * 4
  back = 0
  call MPI_File_read_at(fh, off, back, N, MPI_INTEGER, st, ierr)
  if (any(back /= buf)) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Type_free(view, ierr)

  hdr = 0
  if (rank == 0) hdr = (/ 1, 2, 3, 4 /)
  call MPI_Bcast(hdr, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Sendrecv(buf, N, MPI_INTEGER, mod(rank + 1, nprocs), 7, ring, N, MPI_INTEGER, &
                    mod(rank + nprocs - 1, nprocs), 7, MPI_COMM_WORLD, st, ierr)
  if (ring(1) /= mod(rank + nprocs - 1, nprocs) * N + 1) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= 6 .or. hdr(4) /= 4) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  call MPI_Finalize(ierr)
end program f_pattern
