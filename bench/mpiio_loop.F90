! One rank writes 8 bytes CALLS times with MPI_File_write_at (through the
! mpif.h binding, or `use mpi` with -DUSE_MPI) and prints the nanoseconds
! per call.  Usage: mpiio_loop CALLS PATH
program mpiio_loop
#ifdef USE_MPI
  use mpi
#endif
  implicit none
#ifndef USE_MPI
  include 'mpif.h'
#endif
  integer :: ierr, fh, i, calls
  integer(kind=MPI_OFFSET_KIND) :: off
  integer :: st(MPI_STATUS_SIZE)
  double precision :: t0, t1, value
  character(len=4096) :: arg, path

  call MPI_Init(ierr)
  call get_command_argument(1, arg)
  read(arg, *) calls
  call get_command_argument(2, path)
  call MPI_File_open(MPI_COMM_SELF, trim(path), MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  value = 1.0d0
  t0 = MPI_Wtime()
  do i = 1, calls
    off = int(mod(i, 512), MPI_OFFSET_KIND) * 8
    call MPI_File_write_at(fh, off, value, 1, MPI_DOUBLE_PRECISION, st, ierr)
  end do
  t1 = MPI_Wtime()
  call MPI_File_close(fh, ierr)
  print '(F0.1)', (t1 - t0) * 1.0d9 / calls
  call MPI_Finalize(ierr)
end program mpiio_loop
