/* NC_FILE and NC_VAR module counters (the netCDF-C API): the one declaration
 * the enums, records, log and reader use. */
#ifndef IOCHAR_NETCDF_COUNTERS_H
#define IOCHAR_NETCDF_COUNTERS_H
#include "../runtime/counters.h"

#define NC_FILE_COUNTERS(X)                                                        \
  X(NC_FILE_CREATES, SUM) /* nc_create/nc__create/nc_create_par */                 \
  X(NC_FILE_OPENS, SUM)   /* nc_open/nc__open/nc_open_par */                       \
  X(NC_FILE_REDEFS, SUM)  /* nc_redef */                                           \
  X(NC_FILE_SYNCS, SUM)   /* nc_sync */                                            \
  X(NC_FILE_FORMAT, ANY)  /* 1 classic, 2 64-bit offset, 3 netCDF-4 classic model, \
                             4 netCDF-4, 5 CDF5 (64-bit data); 0 other */

#define NC_FILE_F_COUNTERS(X)                  \
  X(NC_FILE_F_OPEN_START_TIMESTAMP, TS_START)  \
  X(NC_FILE_F_CLOSE_START_TIMESTAMP, TS_START) \
  X(NC_FILE_F_OPEN_END_TIMESTAMP, TS_END)      \
  X(NC_FILE_F_CLOSE_END_TIMESTAMP, TS_END)     \
  X(NC_FILE_F_META_TIME, TIME) /* create/open/redef/enddef/sync/close */

#define NC_VAR_COUNTERS(X)                                                   \
  X(NC_VAR_PUTS, SUM)            /* nc_put_var* calls (every type, form) */  \
  X(NC_VAR_GETS, SUM)            /* nc_get_var* calls */                     \
  X(NC_VAR_BYTES_WRITTEN, BYTES) /* elements x external type size */         \
  X(NC_VAR_BYTES_READ, BYTES)                                                \
  X(NC_VAR_STRIDED_ACCESSES, SUM) /* vars/varm with a stride other than 1 */ \
  IOCHAR_SIZE_BINS(X, NC_VAR, READ)                                          \
  IOCHAR_SIZE_BINS(X, NC_VAR, WRITE)                                         \
  IOCHAR_TOP4(X, NC_VAR, ACCESS) /* access sizes in bytes */                 \
  X(NC_VAR_NDIMS, SET_MAX)                                                   \
  X(NC_VAR_IS_RECORD_VAR, SET_MAX) /* 1: a dimension is unlimited */         \
  X(NC_VAR_DATATYPE_SIZE, SET_MAX) /* bytes per element in the file */       \
  X(NC_VAR_CHUNK_SIZE_D1, ANY)     /* netCDF-4 chunk dims; 0 contiguous */   \
  X(NC_VAR_CHUNK_SIZE_D2, ANY)                                               \
  X(NC_VAR_CHUNK_SIZE_D3, ANY)                                               \
  X(NC_VAR_CHUNK_SIZE_D4, ANY)                                               \
  X(NC_VAR_CHUNK_SIZE_D5, ANY)                                               \
  X(NC_VAR_DEFLATE_LEVEL, SET_MAX) /* 0: no deflate filter */                \
  IOCHAR_RANK_STATS(X, NC_VAR)

#define NC_VAR_F_COUNTERS(X)                                    \
  X(NC_VAR_F_READ_START_TIMESTAMP, TS_START)                    \
  X(NC_VAR_F_WRITE_START_TIMESTAMP, TS_START)                   \
  X(NC_VAR_F_READ_END_TIMESTAMP, TS_END)                        \
  X(NC_VAR_F_WRITE_END_TIMESTAMP, TS_END)                       \
  X(NC_VAR_F_READ_TIME, TIME)                                   \
  X(NC_VAR_F_WRITE_TIME, TIME)                                  \
  X(NC_VAR_F_META_TIME, TIME) /* nc_def_var and its settings */ \
  IOCHAR_F_RANK_STATS(X, NC_VAR)

enum { NC_FILE_COUNTERS(IOCHAR_ENUM_ENTRY) NC_FILE_NUM_INDICES };
enum { NC_FILE_F_COUNTERS(IOCHAR_ENUM_ENTRY) NC_FILE_F_NUM_INDICES };
enum { NC_VAR_COUNTERS(IOCHAR_ENUM_ENTRY) NC_VAR_NUM_INDICES };
enum { NC_VAR_F_COUNTERS(IOCHAR_ENUM_ENTRY) NC_VAR_F_NUM_INDICES };

#endif
