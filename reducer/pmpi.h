/* The PMPI entry points the tool itself calls, resolved at run time so that
 * libiochar.so never links libmpi and still loads in non-MPI programs. */
#ifndef IOCHAR_PMPI_H
#define IOCHAR_PMPI_H

#include <mpi.h>

#ifdef OPEN_MPI
/* Open MPI's predefined handles are addresses of library objects: weak
 * references keep the library loadable where libmpi is absent (they are only
 * used after MPI_Init, when libmpi is there). */
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_info_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_double
#pragma weak ompi_mpi_uint64_t
#pragma weak ompi_mpi_int64_t
#pragma weak ompi_mpi_op_sum
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_op_bor
#pragma weak ompi_mpi_errors_return
#pragma weak ompi_request_null
#pragma weak ompi_mpi_file_null
#pragma weak ompi_mpi_datatype_null

/* ... and the tool's own uses of them go through addresses looked up when
 * the PMPI table is (iochar_pmpi_load, after MPI_Init): a libmpi loaded by
 * dlopen after this library (Python's mpi4py) is seen too, where the weak
 * references above stayed NULL. */
typedef struct iochar_ompi_handles {
  void *comm_world, *comm_null, *info_null, *byte, *int_, *double_, *uint64, *int64, *op_sum,
      *op_min, *op_max, *op_bor, *errors_return, *request_null, *file_null, *datatype_null;
} iochar_ompi_handles;
extern iochar_ompi_handles iochar_ompi;
#undef MPI_COMM_WORLD
#define MPI_COMM_WORLD ((MPI_Comm)iochar_ompi.comm_world)
#undef MPI_COMM_NULL
#define MPI_COMM_NULL ((MPI_Comm)iochar_ompi.comm_null)
#undef MPI_INFO_NULL
#define MPI_INFO_NULL ((MPI_Info)iochar_ompi.info_null)
#undef MPI_BYTE
#define MPI_BYTE ((MPI_Datatype)iochar_ompi.byte)
#undef MPI_INT
#define MPI_INT ((MPI_Datatype)iochar_ompi.int_)
#undef MPI_DOUBLE
#define MPI_DOUBLE ((MPI_Datatype)iochar_ompi.double_)
#undef MPI_UINT64_T
#define MPI_UINT64_T ((MPI_Datatype)iochar_ompi.uint64)
#undef MPI_INT64_T
#define MPI_INT64_T ((MPI_Datatype)iochar_ompi.int64)
#undef MPI_SUM
#define MPI_SUM ((MPI_Op)iochar_ompi.op_sum)
#undef MPI_MIN
#define MPI_MIN ((MPI_Op)iochar_ompi.op_min)
#undef MPI_MAX
#define MPI_MAX ((MPI_Op)iochar_ompi.op_max)
#undef MPI_BOR
#define MPI_BOR ((MPI_Op)iochar_ompi.op_bor)
#undef MPI_ERRORS_RETURN
#define MPI_ERRORS_RETURN ((MPI_Errhandler)iochar_ompi.errors_return)
#undef MPI_REQUEST_NULL
#define MPI_REQUEST_NULL ((MPI_Request)iochar_ompi.request_null)
#undef MPI_FILE_NULL
#define MPI_FILE_NULL ((MPI_File)iochar_ompi.file_null)
#undef MPI_DATATYPE_NULL
#define MPI_DATATYPE_NULL ((MPI_Datatype)iochar_ompi.datatype_null)
#endif

// clang-format off
#define IOCHAR_PMPI_FUNCS(X)                                                   \
  X(Comm_rank) X(Comm_size) X(Comm_dup) X(Comm_free) X(Comm_split_type)        \
  X(Comm_set_errhandler) X(Type_size_x) X(Type_contiguous) X(Type_commit)      \
  X(Type_free) X(Op_create) X(Op_free) X(Allreduce) X(Exscan) X(Alltoall)      \
  X(Alltoallv) X(Reduce) X(Bcast) X(Barrier) X(Get_library_version) X(Scan)           \
  X(File_open) X(File_close) X(File_write_at_all) X(File_write_at) X(File_get_info)            \
  X(Info_get) X(Info_free) X(Finalized) X(Iallreduce) X(Ialltoall)            \
  X(Ialltoallv) X(Ireduce) X(Iscan) X(Iexscan) X(Test)
// clang-format on

#define IOCHAR_PMPI_FIELD(n) __typeof__(&PMPI_##n) n;
typedef struct iochar_pmpi_table {
  IOCHAR_PMPI_FUNCS(IOCHAR_PMPI_FIELD)
} iochar_pmpi_table;
#undef IOCHAR_PMPI_FIELD

extern iochar_pmpi_table iochar_pmpi;
/* Resolve every entry once; 0 when all exist, else -1 (one `iochar:` line). */
int iochar_pmpi_load(void);

/* The tool's collectives, as nonblocking calls completed by polling, with
 * sched_yield and then short sleeps between polls (reducer/pmpi.c): where
 * ranks outnumber cores (or share them with the app's helper threads), a
 * rank waiting for the others gives its core to the ranks still compressing
 * instead of spinning on it.  Same results as the blocking forms. */
int iochar_coll_wait(MPI_Request *req);
/* n of them at once (MPI_REQUEST_NULL: none), in the same polls: where ranks
 * outnumber cores, two collectives completed together cost about one. */
int iochar_coll_waitall(MPI_Request *req, int n);
/* Collectives issued so far, and in how many waits (IOCHAR_TIMING=1). */
extern int red_ncoll, red_nwait;
#define IOCHAR_Y(call, ...)                                   \
  ({                                                          \
    MPI_Request y_req_;                                       \
    int y_rc_ = iochar_pmpi.call(__VA_ARGS__, &y_req_);       \
    y_rc_ == MPI_SUCCESS ? iochar_coll_wait(&y_req_) : y_rc_; \
  })
#define Y_Allreduce(...) IOCHAR_Y(Iallreduce, __VA_ARGS__)
#define Y_Alltoall(...) IOCHAR_Y(Ialltoall, __VA_ARGS__)
#define Y_Alltoallv(...) IOCHAR_Y(Ialltoallv, __VA_ARGS__)
#define Y_Reduce(...) IOCHAR_Y(Ireduce, __VA_ARGS__)
#define Y_Scan(...) IOCHAR_Y(Iscan, __VA_ARGS__)
#define Y_Exscan(...) IOCHAR_Y(Iexscan, __VA_ARGS__)

#endif
