! Every collective write form through the mpif.h binding (tests/test_fortran.py):
! on 4 ranks, OUTDIR/forms.dat viewed as rows of a 4-column integer matrix
! (each rank owns one column: a vector filetype), then one call of each form
! writes one row block of L rows per rank, each at its own place:
!   mpi_file_write_all, mpi_file_write_at_all, mpi_file_write_all_begin/_end,
!   mpi_file_write_at_all_begin/_end.
! The file is 4 blocks x L rows x 4 columns of integers whose values name the
! form, the row and the rank.
program f_coll_forms
  implicit none
  include 'mpif.h'
  integer, parameter :: L = 256
  integer :: ierr, rank, nprocs, fh, strided, column, i, form
  integer :: buf(L)
  integer :: st(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: disp, off
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, dir)
  call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/forms.dat', MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                     MPI_INFO_NULL, fh, ierr)
  ! one integer in every row of nprocs integers: the rank's column, L rows a block
  call MPI_Type_vector(L, 1, nprocs, MPI_INTEGER, strided, ierr)
  lb = 0
  extent = int(L, MPI_ADDRESS_KIND) * nprocs * 4
  call MPI_Type_create_resized(strided, lb, extent, column, ierr)
  call MPI_Type_commit(column, ierr)
  call MPI_Type_free(strided, ierr)
  disp = int(rank, MPI_OFFSET_KIND) * 4
  call MPI_File_set_view(fh, disp, MPI_INTEGER, column, 'native', MPI_INFO_NULL, ierr)
  do form = 1, 4
    do i = 1, L
      buf(i) = form * 1000000 + i * 100 + rank
    end do
    off = int(form - 1, MPI_OFFSET_KIND) * L  ! in etypes of the view: block number form
    select case (form)
    case (1)
      call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
      call MPI_File_write_all(fh, buf, L, MPI_INTEGER, st, ierr)
    case (2)
      call MPI_File_write_at_all(fh, off, buf, L, MPI_INTEGER, st, ierr)
    case (3)
      call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
      call MPI_File_write_all_begin(fh, buf, L, MPI_INTEGER, ierr)
      call MPI_File_write_all_end(fh, buf, st, ierr)
    case (4)
      call MPI_File_write_at_all_begin(fh, off, buf, L, MPI_INTEGER, ierr)
      call MPI_File_write_at_all_end(fh, buf, st, ierr)
    end select
  end do
  call MPI_File_close(fh, ierr)
  call MPI_Type_free(column, ierr)
  call MPI_Finalize(ierr)
end program f_coll_forms
