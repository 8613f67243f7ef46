/* MPI-IO module counters: the one declaration the enum, record, log and reader use. */
#ifndef IOCHAR_MPIIO_COUNTERS_H
#define IOCHAR_MPIIO_COUNTERS_H
#include "../runtime/counters.h"

/* Effective hints (MPI_File_get_info after open): numbers as given; the
 * romio_* switches are 1 enable, 2 disable, 3 automatic, 0 not reported. */
#define MPIIO_COUNTERS(X)                                                              \
  X(MPIIO_INDEP_OPENS, SUM)  /* MPI_File_open on a 1-rank communicator */              \
  X(MPIIO_COLL_OPENS, SUM)   /* MPI_File_open on a larger communicator */              \
  X(MPIIO_INDEP_READS, SUM)  /* read, read_at, read_shared */                          \
  X(MPIIO_INDEP_WRITES, SUM) /* write, write_at, write_shared */                       \
  X(MPIIO_COLL_READS, SUM)   /* read_all, read_at_all, read_ordered */                 \
  X(MPIIO_COLL_WRITES, SUM)  /* write_all, write_at_all, write_ordered */              \
  X(MPIIO_SPLIT_READS, SUM)  /* *_begin of the split collectives */                    \
  X(MPIIO_SPLIT_WRITES, SUM)                                                           \
  X(MPIIO_NB_READS, SUM) /* iread, iread_at, iread_all, ... */                         \
  X(MPIIO_NB_WRITES, SUM)                                                              \
  X(MPIIO_SYNCS, SUM)        /* MPI_File_sync */                                       \
  X(MPIIO_HINTS, SUM)        /* opens with an info, set_info, set_view with an info */ \
  X(MPIIO_VIEWS, SUM)        /* MPI_File_set_view */                                   \
  X(MPIIO_MODE, ANY)         /* amode of the first open */                             \
  X(MPIIO_BYTES_READ, BYTES) /* type size x count of the calls */                      \
  X(MPIIO_BYTES_WRITTEN, BYTES)                                                        \
  X(MPIIO_RW_SWITCHES, SUM) /* direction changes between accesses */                   \
  X(MPIIO_MAX_READ_TIME_SIZE, MAXT_SIZE)                                               \
  X(MPIIO_MAX_WRITE_TIME_SIZE, MAXT_SIZE)                                              \
  IOCHAR_SIZE_BINS(X, MPIIO, READ)                                                     \
  IOCHAR_SIZE_BINS(X, MPIIO, WRITE)                                                    \
  IOCHAR_TOP4(X, MPIIO, ACCESS)                                                        \
  X(MPIIO_HINT_CB_NODES, ANY)        /* collective buffering aggregators */            \
  X(MPIIO_HINT_CB_BUFFER_SIZE, ANY)  /* bytes */                                       \
  X(MPIIO_HINT_CB_CONFIG_NODES, ANY) /* nodes in cb_config_list (*:N -> N) */          \
  X(MPIIO_HINT_ROMIO_CB_READ, ANY)   /* 1 enable, 2 disable, 3 automatic */            \
  X(MPIIO_HINT_ROMIO_CB_WRITE, ANY)                                                    \
  X(MPIIO_HINT_ROMIO_DS_READ, ANY) /* data sieving */                                  \
  X(MPIIO_HINT_ROMIO_DS_WRITE, ANY)                                                    \
  X(MPIIO_HINT_IND_RD_BUFFER_SIZE, ANY)                                                \
  X(MPIIO_HINT_IND_WR_BUFFER_SIZE, ANY)                                                \
  X(MPIIO_HINT_STRIPING_FACTOR, ANY) /* Lustre/GPFS stripe count */                    \
  X(MPIIO_HINT_STRIPING_UNIT, ANY)   /* stripe size, bytes */                          \
  IOCHAR_RANK_STATS(X, MPIIO)

#define MPIIO_F_COUNTERS(X)                                                  \
  IOCHAR_F_TIMESTAMPS(X, MPIIO)                                              \
  X(MPIIO_F_READ_TIME, TIME) /* nonblocking: post to completion seen */      \
  X(MPIIO_F_WRITE_TIME, TIME)                                                \
  X(MPIIO_F_META_TIME, TIME) /* open/close/sync/set_view/set_size/seek... */ \
  X(MPIIO_F_MAX_READ_TIME, MAXT)                                             \
  X(MPIIO_F_MAX_WRITE_TIME, MAXT)                                            \
  IOCHAR_F_RANK_STATS(X, MPIIO)

enum { MPIIO_COUNTERS(IOCHAR_ENUM_ENTRY) MPIIO_NUM_INDICES };
enum { MPIIO_F_COUNTERS(IOCHAR_ENUM_ENTRY) MPIIO_F_NUM_INDICES };

#endif
