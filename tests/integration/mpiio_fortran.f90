! MPI-IO from Fortran with exactly known I/O per rank (any rank count), on one
! shared file: 10 write_at of 1024 B, one write_at_all of 1024 B, one
! iwrite_at of 512 B completed by MPI_Wait, 5 read_at of 1024 B, one sync.
! Open MPI's Fortran bindings call PMPI_* directly, past the C MPI_* symbols.
program mpiio_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, fh, i, req
  integer(kind=MPI_OFFSET_KIND) :: off, base
  integer :: status(MPI_STATUS_SIZE)
  character(len=1024) :: buf
  character(len=4096) :: path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, path)
  buf = repeat('x', 1024)
  base = int(rank, MPI_OFFSET_KIND) * 16 * 1024

  call MPI_File_open(MPI_COMM_WORLD, trim(path), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                     MPI_INFO_NULL, fh, ierr)
  call check(ierr, 'open')
  do i = 0, 9
    off = base + i * 1024
    call MPI_File_write_at(fh, off, buf, 1024, MPI_CHARACTER, status, ierr)
    call check(ierr, 'write_at')
  end do
  off = base + 10 * 1024
  call MPI_File_write_at_all(fh, off, buf, 1024, MPI_CHARACTER, status, ierr)
  call check(ierr, 'write_at_all')
  off = base + 11 * 1024
  call MPI_File_iwrite_at(fh, off, buf, 512, MPI_CHARACTER, req, ierr)
  call check(ierr, 'iwrite_at')
  call MPI_Wait(req, status, ierr)
  call check(ierr, 'wait')
  do i = 0, 4
    off = base + i * 1024
    call MPI_File_read_at(fh, off, buf, 1024, MPI_CHARACTER, status, ierr)
    call check(ierr, 'read_at')
  end do
  call MPI_File_sync(fh, ierr)
  call check(ierr, 'sync')
  call MPI_File_close(fh, ierr)
  call check(ierr, 'close')
  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'done'

contains

  subroutine check(err, what)
    integer, intent(in) :: err
    character(len=*), intent(in) :: what
    integer :: e
    if (err /= MPI_SUCCESS) then
      print '(2a)', 'failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 3, e)
    end if
  end subroutine check
end program mpiio_fortran
