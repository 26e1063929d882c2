! HDF5's Fortran API with known bytes (tests/test_fortran.py): on every rank,
! its K doubles of the 1-D dataset /values in OUTDIR/fortran.h5 (MPI-IO file
! driver) written collectively through h5dwrite_f with a hyperslab, then read
! back independently and checked (exit code 3 when wrong).
program h5_fortran
  use hdf5
  use mpi
  implicit none
  integer, parameter :: K = 1024
  integer :: ierr, rank, nprocs, hdferr, i
  integer(hid_t) :: fapl, file, space, memspace, dset, dxpl
  integer(hsize_t) :: dims(1), count(1), offset(1)
  double precision :: buf(K), back(K)
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, dir)
  do i = 1, K
    buf(i) = rank * K + i
  end do

  call h5open_f(hdferr)
  call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, hdferr)
  call h5pset_fapl_mpio_f(fapl, MPI_COMM_WORLD, MPI_INFO_NULL, hdferr)
  call h5fcreate_f(trim(dir)//'/fortran.h5', H5F_ACC_TRUNC_F, file, hdferr, access_prp=fapl)
  dims(1) = int(nprocs, hsize_t) * K
  call h5screate_simple_f(1, dims, space, hdferr)
  call h5dcreate_f(file, 'values', H5T_NATIVE_DOUBLE, space, dset, hdferr)
  count(1) = K
  offset(1) = int(rank, hsize_t) * K
  call h5sselect_hyperslab_f(space, H5S_SELECT_SET_F, offset, count, hdferr)
  call h5screate_simple_f(1, count, memspace, hdferr)
  call h5pcreate_f(H5P_DATASET_XFER_F, dxpl, hdferr)
  call h5pset_dxpl_mpio_f(dxpl, H5FD_MPIO_COLLECTIVE_F, hdferr)
  call h5dwrite_f(dset, H5T_NATIVE_DOUBLE, buf, count, hdferr, mem_space_id=memspace, &
                  file_space_id=space, xfer_prp=dxpl)
  if (hdferr /= 0) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  back = 0
  call h5dread_f(dset, H5T_NATIVE_DOUBLE, back, count, hdferr, mem_space_id=memspace, file_space_id=space)
  if (hdferr /= 0 .or. any(back /= buf)) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  call h5pclose_f(dxpl, hdferr)
  call h5sclose_f(memspace, hdferr)
  call h5sclose_f(space, hdferr)
  call h5dclose_f(dset, hdferr)
  call h5fclose_f(file, hdferr)
  call h5pclose_f(fapl, hdferr)
  call h5close_f(hdferr)
  call MPI_Finalize(ierr)
end program h5_fortran
