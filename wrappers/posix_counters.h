/* POSIX module counters: the one declaration the enum, record, log and reader use. */
#ifndef IOCHAR_POSIX_COUNTERS_H
#define IOCHAR_POSIX_COUNTERS_H
#include "../runtime/counters.h"

#define POSIX_COUNTERS(X)                                                          \
  X(POSIX_OPENS, SUM)          /* open/openat/creat that succeeded */              \
  X(POSIX_DUPS, SUM)           /* dup/dup2/dup3/fcntl(F_DUPFD*) */                 \
  X(POSIX_READS, SUM)          /* read/pread/readv/preadv calls */                 \
  X(POSIX_WRITES, SUM)         /* write/pwrite/writev/pwritev calls */             \
  X(POSIX_SEEKS, SUM)          /* successful lseek calls */                        \
  X(POSIX_STATS, SUM)          /* stat/lstat/fstat/fstatat family */               \
  X(POSIX_MMAPS, SUM)          /* mmap of the file */                              \
  X(POSIX_FSYNCS, SUM)         /* fsync */                                         \
  X(POSIX_FDSYNCS, SUM)        /* fdatasync */                                     \
  X(POSIX_RENAME_SOURCES, SUM) /* renamed away from this path */                   \
  X(POSIX_RENAME_TARGETS, SUM) /* renamed onto this path */                        \
  X(POSIX_UNLINKS, SUM)        /* unlink of this path */                           \
  X(POSIX_TRUNCATES, SUM)      /* truncate/ftruncate */                            \
  X(POSIX_MODE, ANY)           /* mode bits of the first create */                 \
  X(POSIX_BYTES_READ, BYTES)                                                       \
  X(POSIX_BYTES_WRITTEN, BYTES)                                                    \
  X(POSIX_MAX_BYTE_READ, MAX)    /* highest offset read */                         \
  X(POSIX_MAX_BYTE_WRITTEN, MAX) /* highest offset written */                      \
  X(POSIX_CONSEC_READS, SUM)     /* offset == last byte read + 1 */                \
  X(POSIX_CONSEC_WRITES, SUM)                                                      \
  X(POSIX_SEQ_READS, SUM) /* offset > last byte read */                            \
  X(POSIX_SEQ_WRITES, SUM)                                                         \
  X(POSIX_RW_SWITCHES, SUM)     /* direction changes between accesses */           \
  X(POSIX_MEM_NOT_ALIGNED, SUM) /* buffer not a multiple of MEM_ALIGNMENT */       \
  X(POSIX_MEM_ALIGNMENT, ANY)                                                      \
  X(POSIX_FILE_NOT_ALIGNED, SUM)     /* offset not multiple of FILE_ALIGNMENT */   \
  X(POSIX_FILE_ALIGNMENT, ANY)       /* statfs block size of the mount */          \
  X(POSIX_FILE_BLKSIZE, ANY)         /* st_blksize at first open: preferred I/O */ \
  X(POSIX_FILE_TYPE, ANY)            /* (st_mode & S_IFMT) >> 12 at first open */  \
  X(POSIX_LUSTRE_STRIPE_SIZE, ANY)   /* Lustre layout (lustre.lov) at first */     \
  X(POSIX_LUSTRE_STRIPE_COUNT, ANY)  /* open, 0 elsewhere; if composite, of */     \
  X(POSIX_LUSTRE_STRIPE_OFFSET, ANY) /* one, again at the end: log-format.md */    \
  X(POSIX_LUSTRE_COMPONENTS, ANY)    /* layout components: > 1 for PFL/FLR */      \
  X(POSIX_MAX_READ_TIME_SIZE, MAXT_SIZE)                                           \
  X(POSIX_MAX_WRITE_TIME_SIZE, MAXT_SIZE)                                          \
  IOCHAR_SIZE_BINS(X, POSIX, READ)                                                 \
  IOCHAR_SIZE_BINS(X, POSIX, WRITE)                                                \
  IOCHAR_TOP4(X, POSIX, STRIDE)                                                    \
  IOCHAR_TOP4(X, POSIX, ACCESS)                                                    \
  IOCHAR_RANK_STATS(X, POSIX)

#define POSIX_F_COUNTERS(X)                                      \
  IOCHAR_F_TIMESTAMPS(X, POSIX)                                  \
  X(POSIX_F_READ_TIME, TIME)                                     \
  X(POSIX_F_WRITE_TIME, TIME)                                    \
  X(POSIX_F_META_TIME, TIME) /* open/close/seek/stat/sync/... */ \
  X(POSIX_F_MAX_READ_TIME, MAXT)                                 \
  X(POSIX_F_MAX_WRITE_TIME, MAXT)                                \
  IOCHAR_F_RANK_STATS(X, POSIX)

enum { POSIX_COUNTERS(IOCHAR_ENUM_ENTRY) POSIX_NUM_INDICES };
enum { POSIX_F_COUNTERS(IOCHAR_ENUM_ENTRY) POSIX_F_NUM_INDICES };

/* Where the shared accounting finds each counter (runtime/access.h), as a
 * constant: the same as the layout from the names (tests/unit/unit_layout.c). */
#define POSIX_RW_LAYOUT                                                                   \
  IOCHAR_RW_LAYOUT_CONST(                                                                 \
      POSIX, .access1 = POSIX_ACCESS1_ACCESS, .stride1 = POSIX_STRIDE1_STRIDE,            \
      .file_not_aligned = POSIX_FILE_NOT_ALIGNED, .file_alignment = POSIX_FILE_ALIGNMENT, \
      .mem_not_aligned = POSIX_MEM_NOT_ALIGNED, .mem_alignment = POSIX_MEM_ALIGNMENT)

#endif
