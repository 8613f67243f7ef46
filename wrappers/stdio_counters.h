/* STDIO module counters: the one declaration the enum, record, log and reader use. */
#ifndef IOCHAR_STDIO_COUNTERS_H
#define IOCHAR_STDIO_COUNTERS_H
#include "../runtime/counters.h"

#define STDIO_COUNTERS(X)                                           \
  X(STDIO_OPENS, SUM)   /* fopen/fdopen/freopen that succeeded */   \
  X(STDIO_FDOPENS, SUM) /* of which fdopen */                       \
  X(STDIO_READS, SUM)   /* fread/fgetc/getc/fgets/fscanf calls */   \
  X(STDIO_WRITES, SUM)  /* fwrite/fputc/putc/fputs/fprintf calls */ \
  X(STDIO_SEEKS, SUM)   /* fseek/fseeko/rewind/fsetpos */           \
  X(STDIO_FLUSHES, SUM) /* fflush */                                \
  X(STDIO_BYTES_READ, BYTES)                                        \
  X(STDIO_BYTES_WRITTEN, BYTES)                                     \
  X(STDIO_MAX_BYTE_READ, MAX)                                       \
  X(STDIO_MAX_BYTE_WRITTEN, MAX)                                    \
  X(STDIO_CONSEC_READS, SUM)                                        \
  X(STDIO_CONSEC_WRITES, SUM)                                       \
  X(STDIO_SEQ_READS, SUM)                                           \
  X(STDIO_SEQ_WRITES, SUM)                                          \
  X(STDIO_RW_SWITCHES, SUM)                                         \
  X(STDIO_MAX_READ_TIME_SIZE, MAXT_SIZE)                            \
  X(STDIO_MAX_WRITE_TIME_SIZE, MAXT_SIZE)                           \
  IOCHAR_SIZE_BINS(X, STDIO, READ)                                  \
  IOCHAR_SIZE_BINS(X, STDIO, WRITE)                                 \
  IOCHAR_TOP4(X, STDIO, ACCESS)                                     \
  IOCHAR_RANK_STATS(X, STDIO)

#define STDIO_F_COUNTERS(X)                                  \
  IOCHAR_F_TIMESTAMPS(X, STDIO)                              \
  X(STDIO_F_READ_TIME, TIME)                                 \
  X(STDIO_F_WRITE_TIME, TIME)                                \
  X(STDIO_F_META_TIME, TIME) /* fopen/fclose/fseek/fflush */ \
  X(STDIO_F_MAX_READ_TIME, MAXT)                             \
  X(STDIO_F_MAX_WRITE_TIME, MAXT)                            \
  IOCHAR_F_RANK_STATS(X, STDIO)

enum { STDIO_COUNTERS(IOCHAR_ENUM_ENTRY) STDIO_NUM_INDICES };
enum { STDIO_F_COUNTERS(IOCHAR_ENUM_ENTRY) STDIO_F_NUM_INDICES };

/* Where the shared accounting finds each counter (runtime/access.h), as a
 * constant: the same as the layout from the names (tests/unit/unit_layout.c). */
#define STDIO_RW_LAYOUT                                                                       \
  IOCHAR_RW_LAYOUT_CONST(STDIO, .access1 = STDIO_ACCESS1_ACCESS, .stride1 = -1,               \
                         .file_not_aligned = -1, .file_alignment = -1, .mem_not_aligned = -1, \
                         .mem_alignment = -1)

#endif
