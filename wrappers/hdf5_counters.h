/* H5F and H5D module counters: the one declaration the enums, records, log and
 * reader use. */
#ifndef IOCHAR_HDF5_COUNTERS_H
#define IOCHAR_HDF5_COUNTERS_H
#include "../runtime/counters.h"

#define H5F_COUNTERS(X)                                                        \
  X(H5F_OPENS, SUM)                   /* H5Fcreate + H5Fopen (as Darshan) */   \
  X(H5F_FLUSHES, SUM)                 /* H5Fflush */                           \
  X(H5F_USE_MPIIO, SET_MAX)           /* 1: the fapl uses the MPI-IO driver */ \
  X(H5F_ALIGNMENT, ANY)               /* H5Pget_alignment: alignment */        \
  X(H5F_ALIGNMENT_THRESHOLD, ANY)     /* H5Pget_alignment: threshold */        \
  X(H5F_COLL_METADATA_OPS, SET_MAX)   /* 1: H5Pset_all_coll_metadata_ops */    \
  X(H5F_COLL_METADATA_WRITE, SET_MAX) /* 1: H5Pset_coll_metadata_write */

#define H5F_F_COUNTERS(X)                  \
  X(H5F_F_OPEN_START_TIMESTAMP, TS_START)  \
  X(H5F_F_CLOSE_START_TIMESTAMP, TS_START) \
  X(H5F_F_OPEN_END_TIMESTAMP, TS_END)      \
  X(H5F_F_CLOSE_END_TIMESTAMP, TS_END)     \
  X(H5F_F_META_TIME, TIME) /* create/open/flush/close */

#define H5D_COUNTERS(X)                                                                  \
  X(H5D_OPENS, SUM)        /* H5Dcreate2/_anon/H5Dopen2/H5Oopen */                       \
  X(H5D_READS, SUM)        /* H5Dread(_async) calls */                                   \
  X(H5D_WRITES, SUM)       /* H5Dwrite(_async) calls */                                  \
  X(H5D_FLUSHES, SUM)      /* H5Dflush */                                                \
  X(H5D_BYTES_READ, BYTES) /* selected points x memory type size */                      \
  X(H5D_BYTES_WRITTEN, BYTES)                                                            \
  X(H5D_RW_SWITCHES, SUM)                 /* direction changes between accesses */       \
  X(H5D_REGULAR_HYPERSLAB_SELECTS, SUM)   /* file selection all or regular */            \
  X(H5D_IRREGULAR_HYPERSLAB_SELECTS, SUM) /* union of hyperslabs */                      \
  X(H5D_POINT_SELECTS, SUM)               /* H5Sselect_elements */                       \
  IOCHAR_SIZE_BINS(X, H5D, READ)                                                         \
  IOCHAR_SIZE_BINS(X, H5D, WRITE)                                                        \
  IOCHAR_TOP4(X, H5D, ACCESS) /* access sizes in bytes */                                \
  X(H5D_DATASPACE_NDIMS, SET_MAX)                                                        \
  X(H5D_DATASPACE_NPOINTS, SET_MAX) /* elements in the dataset's extent */               \
  X(H5D_DATATYPE_SIZE, SET_MAX)     /* bytes per element in the file */                  \
  X(H5D_CHUNK_SIZE_D1, ANY)         /* chunk dims, slowest first; 0 unchunked */         \
  X(H5D_CHUNK_SIZE_D2, ANY)                                                              \
  X(H5D_CHUNK_SIZE_D3, ANY)                                                              \
  X(H5D_CHUNK_SIZE_D4, ANY)                                                              \
  X(H5D_CHUNK_SIZE_D5, ANY)                                                              \
  X(H5D_LAYOUT, ANY)      /* 0 unknown, 1 compact, 2 contiguous, 3 chunked, 4 virtual */ \
  X(H5D_FILTERS, SET_MAX) /* bits: 1 deflate, 2 szip, 4 any other filter */              \
  X(H5D_USE_MPIIO_COLLECTIVE, SET_MAX) /* 1: a transfer used H5FD_MPIO_COLLECTIVE */     \
  IOCHAR_RANK_STATS(X, H5D)

#define H5D_F_COUNTERS(X)                                \
  IOCHAR_F_TIMESTAMPS(X, H5D)                            \
  X(H5D_F_READ_TIME, TIME)                               \
  X(H5D_F_WRITE_TIME, TIME)                              \
  X(H5D_F_META_TIME, TIME) /* create/open/flush/close */ \
  IOCHAR_F_RANK_STATS(X, H5D)

enum { H5F_COUNTERS(IOCHAR_ENUM_ENTRY) H5F_NUM_INDICES };
enum { H5F_F_COUNTERS(IOCHAR_ENUM_ENTRY) H5F_F_NUM_INDICES };
enum { H5D_COUNTERS(IOCHAR_ENUM_ENTRY) H5D_NUM_INDICES };
enum { H5D_F_COUNTERS(IOCHAR_ENUM_ENTRY) H5D_F_NUM_INDICES };

#endif
