! PnetCDF's Fortran API (nfmpi_*) with known bytes (tests/test_fortran.py):
! OUTDIR/fortran.nc with one float variable "temperature" of K values per
! rank; each rank posts its K values with the nonblocking nfmpi_iput_vara_real,
! waits for them collectively (nfmpi_wait_all), then reads them back with
! nfmpi_get_vara_real_all and checks them (exit code 3 when wrong).
program pnetcdf_fortran
  use mpi
  use pnetcdf
  implicit none
  integer, parameter :: K = 1024
  integer :: err, ierr, rank, nprocs, ncid, dimid(1), varid, req(1), st(1), i
  integer(kind=MPI_OFFSET_KIND) :: glen, start(1), count(1)
  real :: buf(K), back(K)
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, dir)
  do i = 1, K
    buf(i) = real(rank * K + i)
  end do

  err = nfmpi_create(MPI_COMM_WORLD, trim(dir)//'/fortran.nc', NF_CLOBBER, MPI_INFO_NULL, ncid)
  glen = int(nprocs, MPI_OFFSET_KIND) * K
  err = nfmpi_def_dim(ncid, 'x', glen, dimid(1))
  err = nfmpi_def_var(ncid, 'temperature', NF_FLOAT, 1, dimid, varid)
  err = nfmpi_enddef(ncid)
  start(1) = int(rank, MPI_OFFSET_KIND) * K + 1
  count(1) = K
  err = nfmpi_iput_vara_real(ncid, varid, start, count, buf, req(1))
  if (err /= NF_NOERR) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  err = nfmpi_wait_all(ncid, 1, req, st)
  if (err /= NF_NOERR .or. st(1) /= NF_NOERR) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  back = 0
  err = nfmpi_get_vara_real_all(ncid, varid, start, count, back)
  if (err /= NF_NOERR .or. any(back /= buf)) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  err = nfmpi_close(ncid)
  call MPI_Finalize(ierr)
end program pnetcdf_fortran
