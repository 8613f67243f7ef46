/* PNETCDF_FILE and PNETCDF_VAR module counters: the one declaration the enums,
 * records, log and reader use. */
#ifndef IOCHAR_PNETCDF_COUNTERS_H
#define IOCHAR_PNETCDF_COUNTERS_H
#include "../runtime/counters.h"

#define PNETCDF_FILE_COUNTERS(X)                        \
  X(PNETCDF_FILE_CREATES, SUM)     /* ncmpi_create */   \
  X(PNETCDF_FILE_OPENS, SUM)       /* ncmpi_open */     \
  X(PNETCDF_FILE_REDEFS, SUM)      /* ncmpi_redef */    \
  X(PNETCDF_FILE_SYNCS, SUM)       /* ncmpi_sync */     \
  X(PNETCDF_FILE_INDEP_WAITS, SUM) /* ncmpi_wait */     \
  X(PNETCDF_FILE_COLL_WAITS, SUM)  /* ncmpi_wait_all */ \
  X(PNETCDF_FILE_FORMAT, ANY)      /* 1 classic, 2 64-bit offset, 5 CDF5 */

#define PNETCDF_FILE_F_COUNTERS(X)                                            \
  X(PNETCDF_FILE_F_OPEN_START_TIMESTAMP, TS_START)                            \
  X(PNETCDF_FILE_F_CLOSE_START_TIMESTAMP, TS_START)                           \
  X(PNETCDF_FILE_F_OPEN_END_TIMESTAMP, TS_END)                                \
  X(PNETCDF_FILE_F_CLOSE_END_TIMESTAMP, TS_END)                               \
  X(PNETCDF_FILE_F_META_TIME, TIME) /* create/open/redef/enddef/sync/close */ \
  X(PNETCDF_FILE_F_WAIT_TIME, TIME) /* ncmpi_wait(_all): nonblocking I/O done */

#define PNETCDF_VAR_COUNTERS(X)                                                   \
  X(PNETCDF_VAR_PUTS, SUM) /* every put call: indep + coll + nb */                \
  X(PNETCDF_VAR_GETS, SUM)                                                        \
  X(PNETCDF_VAR_INDEP_PUTS, SUM) /* ncmpi_put_* (independent mode) */             \
  X(PNETCDF_VAR_INDEP_GETS, SUM)                                                  \
  X(PNETCDF_VAR_COLL_PUTS, SUM) /* ncmpi_put_*_all */                             \
  X(PNETCDF_VAR_COLL_GETS, SUM)                                                   \
  X(PNETCDF_VAR_NB_PUTS, SUM)         /* ncmpi_iput_* and ncmpi_bput_* posted */  \
  X(PNETCDF_VAR_NB_GETS, SUM)         /* ncmpi_iget_* posted */                   \
  X(PNETCDF_VAR_BYTES_WRITTEN, BYTES) /* elements x external type size */         \
  X(PNETCDF_VAR_BYTES_READ, BYTES)                                                \
  X(PNETCDF_VAR_STRIDED_ACCESSES, SUM) /* vars/varm with a stride other than 1 */ \
  IOCHAR_SIZE_BINS(X, PNETCDF_VAR, READ)                                          \
  IOCHAR_SIZE_BINS(X, PNETCDF_VAR, WRITE)                                         \
  IOCHAR_TOP4(X, PNETCDF_VAR, ACCESS) /* access sizes in bytes */                 \
  X(PNETCDF_VAR_NDIMS, SET_MAX)                                                   \
  X(PNETCDF_VAR_IS_RECORD_VAR, SET_MAX) /* 1: the first dimension is unlimited */ \
  X(PNETCDF_VAR_DATATYPE_SIZE, SET_MAX) /* bytes per element in the file */       \
  IOCHAR_RANK_STATS(X, PNETCDF_VAR)

#define PNETCDF_VAR_F_COUNTERS(X)                                            \
  X(PNETCDF_VAR_F_READ_START_TIMESTAMP, TS_START)                            \
  X(PNETCDF_VAR_F_WRITE_START_TIMESTAMP, TS_START)                           \
  X(PNETCDF_VAR_F_READ_END_TIMESTAMP, TS_END)                                \
  X(PNETCDF_VAR_F_WRITE_END_TIMESTAMP, TS_END)                               \
  X(PNETCDF_VAR_F_READ_TIME, TIME) /* nonblocking calls: the posting only */ \
  X(PNETCDF_VAR_F_WRITE_TIME, TIME)                                          \
  X(PNETCDF_VAR_F_META_TIME, TIME) /* ncmpi_def_var */                       \
  IOCHAR_F_RANK_STATS(X, PNETCDF_VAR)

enum { PNETCDF_FILE_COUNTERS(IOCHAR_ENUM_ENTRY) PNETCDF_FILE_NUM_INDICES };
enum { PNETCDF_FILE_F_COUNTERS(IOCHAR_ENUM_ENTRY) PNETCDF_FILE_F_NUM_INDICES };
enum { PNETCDF_VAR_COUNTERS(IOCHAR_ENUM_ENTRY) PNETCDF_VAR_NUM_INDICES };
enum { PNETCDF_VAR_F_COUNTERS(IOCHAR_ENUM_ENTRY) PNETCDF_VAR_F_NUM_INDICES };

#endif
