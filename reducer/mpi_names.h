/* Every MPI function the tool intercepts (the lifecycle in reducer/lifecycle.c,
 * the MPI-IO calls in wrappers/mpiio*.c), in one list: the dual-MPI build
 * (reducer/mpi_dispatch.c) exports one trampoline per name and each MPI's
 * copy exports its wrappers in this order (reducer/mpi_table.c). */
#ifndef IOCHAR_MPI_NAMES_H
#define IOCHAR_MPI_NAMES_H

// clang-format off
/* The read/write families; S is empty or _c (MPI-4 large-count forms). */
#define IOCHAR_MPI_RW_NAMES(X, S)                                                  \
  X(MPI_File_read##S) X(MPI_File_write##S) X(MPI_File_read_at##S)                  \
  X(MPI_File_write_at##S) X(MPI_File_read_shared##S) X(MPI_File_write_shared##S)   \
  X(MPI_File_read_all##S) X(MPI_File_write_all##S) X(MPI_File_read_at_all##S)      \
  X(MPI_File_write_at_all##S) X(MPI_File_read_ordered##S)                          \
  X(MPI_File_write_ordered##S) X(MPI_File_iread##S) X(MPI_File_iwrite##S)          \
  X(MPI_File_iread_at##S) X(MPI_File_iwrite_at##S) X(MPI_File_iread_shared##S)     \
  X(MPI_File_iwrite_shared##S) X(MPI_File_iread_all##S) X(MPI_File_iwrite_all##S)  \
  X(MPI_File_iread_at_all##S) X(MPI_File_iwrite_at_all##S)                         \
  X(MPI_File_read_all_begin##S) X(MPI_File_write_all_begin##S)                     \
  X(MPI_File_read_at_all_begin##S) X(MPI_File_write_at_all_begin##S)               \
  X(MPI_File_read_ordered_begin##S) X(MPI_File_write_ordered_begin##S)

#define IOCHAR_MPI_NAMES(X)                                                        \
  X(MPI_Init) X(MPI_Init_thread) X(MPI_Finalize) X(MPI_Abort) X(MPI_File_open)      \
  X(MPI_File_close) X(MPI_File_sync) X(MPI_File_set_info) X(MPI_File_set_size)     \
  X(MPI_File_preallocate) X(MPI_File_seek) X(MPI_File_seek_shared)                 \
  X(MPI_File_set_view) IOCHAR_MPI_RW_NAMES(X, )                                    \
  X(MPI_File_read_all_end) X(MPI_File_write_all_end) X(MPI_File_read_at_all_end)   \
  X(MPI_File_write_at_all_end) X(MPI_File_read_ordered_end)                        \
  X(MPI_File_write_ordered_end) X(MPI_Type_free) X(MPI_Wait) X(MPI_Request_free)   \
  X(MPI_Test) X(MPI_Waitall) X(MPI_Testall) X(MPI_Waitany) X(MPI_Testany)          \
  X(MPI_Waitsome) X(MPI_Testsome)

/* Only where the MPI's headers are MPI-4 (MPICH 4; not Open MPI 4). */
#define IOCHAR_MPI_NAMES_C(X) IOCHAR_MPI_RW_NAMES(X, _c)
// clang-format on

#define IOCHAR_MPI_COUNT_(n) +1
#define IOCHAR_MPI_NNAMES \
  (0 IOCHAR_MPI_NAMES(IOCHAR_MPI_COUNT_) IOCHAR_MPI_NAMES_C(IOCHAR_MPI_COUNT_))

#endif
