/* Counter declaration vocabulary shared by every module's X-macro list. */
#ifndef IOCHAR_COUNTERS_H
#define IOCHAR_COUNTERS_H

#include <stdint.h>

/* Reduction ops; the numeric values are part of the log format (SCHEMA). */
enum iochar_op {
  IOCHAR_OP_SUM = 0,
  IOCHAR_OP_MAX = 1,
  IOCHAR_OP_MIN_NZ = 2,
  IOCHAR_OP_ANY = 3,
  IOCHAR_OP_TOPK_VAL = 4,
  IOCHAR_OP_TOPK_CNT = 5,
  IOCHAR_OP_BYTES = 6,
  IOCHAR_OP_TIME = 7,
  IOCHAR_OP_TS_START = 8,
  IOCHAR_OP_TS_END = 9,
  IOCHAR_OP_MAXT = 10,
  IOCHAR_OP_MAXT_SIZE = 11,
  IOCHAR_OP_FAST_RANK = 12,
  IOCHAR_OP_FAST_BYTES = 13,
  IOCHAR_OP_FAST_TIME = 14,
  IOCHAR_OP_SLOW_RANK = 15,
  IOCHAR_OP_SLOW_BYTES = 16,
  IOCHAR_OP_SLOW_TIME = 17,
  IOCHAR_OP_VAR_TIME = 18,
  IOCHAR_OP_VAR_BYTES = 19,
};

/* What a counter is, for readers (the ROLES section, docs/log-format.md): the
 * reduction op says how ranks combine, the role what the value means.  The
 * numeric values are part of the log format. */
enum iochar_role {
  IOCHAR_ROLE_TOTAL = 0,      /* additive count or bytes: sums to the module's total */
  IOCHAR_ROLE_BIN = 1,        /* one bin of a histogram (the SIZE_* access sizes) */
  IOCHAR_ROLE_MAX = 2,        /* a maximum (highest offset, slowest single op) */
  IOCHAR_ROLE_MIN = 3,        /* a minimum */
  IOCHAR_ROLE_SETTING = 4,    /* describes the file or its use (mode, hints, dims, flags) */
  IOCHAR_ROLE_TIMESTAMP = 5,  /* seconds after the job start */
  IOCHAR_ROLE_TIME = 6,       /* cumulative seconds */
  IOCHAR_ROLE_TOPK_VALUE = 7, /* value of a top-4 table */
  IOCHAR_ROLE_TOPK_COUNT = 8, /* count of a top-4 table */
  IOCHAR_ROLE_RANK = 9,       /* a rank number */
  IOCHAR_ROLE_RANK_STAT = 10, /* about one rank or op chosen by another counter, a variance */
};

typedef struct iochar_counter_def {
  const char *name;
  uint8_t op, role;
} iochar_counter_def;

/* The second field of an X(NAME, KIND) entry: its reduction op and role.
 * Most kinds are an op with its usual role; BIN and SET_MAX are the sums and
 * maxima whose role is not the op's usual one. */
#define IOCHAR_KIND_SUM IOCHAR_OP_SUM, IOCHAR_ROLE_TOTAL
#define IOCHAR_KIND_BIN IOCHAR_OP_SUM, IOCHAR_ROLE_BIN
#define IOCHAR_KIND_MAX IOCHAR_OP_MAX, IOCHAR_ROLE_MAX
#define IOCHAR_KIND_SET_MAX IOCHAR_OP_MAX, IOCHAR_ROLE_SETTING
#define IOCHAR_KIND_MIN_NZ IOCHAR_OP_MIN_NZ, IOCHAR_ROLE_MIN
#define IOCHAR_KIND_ANY IOCHAR_OP_ANY, IOCHAR_ROLE_SETTING
#define IOCHAR_KIND_TOPK_VAL IOCHAR_OP_TOPK_VAL, IOCHAR_ROLE_TOPK_VALUE
#define IOCHAR_KIND_TOPK_CNT IOCHAR_OP_TOPK_CNT, IOCHAR_ROLE_TOPK_COUNT
#define IOCHAR_KIND_BYTES IOCHAR_OP_BYTES, IOCHAR_ROLE_TOTAL
#define IOCHAR_KIND_TIME IOCHAR_OP_TIME, IOCHAR_ROLE_TIME
#define IOCHAR_KIND_TS_START IOCHAR_OP_TS_START, IOCHAR_ROLE_TIMESTAMP
#define IOCHAR_KIND_TS_END IOCHAR_OP_TS_END, IOCHAR_ROLE_TIMESTAMP
#define IOCHAR_KIND_MAXT IOCHAR_OP_MAXT, IOCHAR_ROLE_MAX
#define IOCHAR_KIND_MAXT_SIZE IOCHAR_OP_MAXT_SIZE, IOCHAR_ROLE_RANK_STAT
#define IOCHAR_KIND_FAST_RANK IOCHAR_OP_FAST_RANK, IOCHAR_ROLE_RANK
#define IOCHAR_KIND_FAST_BYTES IOCHAR_OP_FAST_BYTES, IOCHAR_ROLE_RANK_STAT
#define IOCHAR_KIND_FAST_TIME IOCHAR_OP_FAST_TIME, IOCHAR_ROLE_RANK_STAT
#define IOCHAR_KIND_SLOW_RANK IOCHAR_OP_SLOW_RANK, IOCHAR_ROLE_RANK
#define IOCHAR_KIND_SLOW_BYTES IOCHAR_OP_SLOW_BYTES, IOCHAR_ROLE_RANK_STAT
#define IOCHAR_KIND_SLOW_TIME IOCHAR_OP_SLOW_TIME, IOCHAR_ROLE_RANK_STAT
#define IOCHAR_KIND_VAR_TIME IOCHAR_OP_VAR_TIME, IOCHAR_ROLE_RANK_STAT
#define IOCHAR_KIND_VAR_BYTES IOCHAR_OP_VAR_BYTES, IOCHAR_ROLE_RANK_STAT

/* Building blocks that several modules repeat with their own prefix.  Each
 * expands X(NAME, OP) entries; M is the module prefix (POSIX, STDIO...). */
#define IOCHAR_SIZE_BINS(X, M, D) \
  X(M##_SIZE_##D##_0_100, BIN)    \
  X(M##_SIZE_##D##_100_1K, BIN)   \
  X(M##_SIZE_##D##_1K_10K, BIN)   \
  X(M##_SIZE_##D##_10K_100K, BIN) \
  X(M##_SIZE_##D##_100K_1M, BIN)  \
  X(M##_SIZE_##D##_1M_4M, BIN)    \
  X(M##_SIZE_##D##_4M_10M, BIN)   \
  X(M##_SIZE_##D##_10M_100M, BIN) \
  X(M##_SIZE_##D##_100M_1G, BIN)  \
  X(M##_SIZE_##D##_1G_PLUS, BIN)

/* Top-4 table: four values then their four counts (T is ACCESS or STRIDE),
 * then 1 when the table is approximate: more distinct values occurred than
 * a table holds, on some rank or across ranks (docs/log-format.md). */
#define IOCHAR_TOP4(X, M, T)    \
  X(M##_##T##1_##T, TOPK_VAL)   \
  X(M##_##T##2_##T, TOPK_VAL)   \
  X(M##_##T##3_##T, TOPK_VAL)   \
  X(M##_##T##4_##T, TOPK_VAL)   \
  X(M##_##T##1_COUNT, TOPK_CNT) \
  X(M##_##T##2_COUNT, TOPK_CNT) \
  X(M##_##T##3_COUNT, TOPK_CNT) \
  X(M##_##T##4_COUNT, TOPK_CNT) \
  X(M##_##T##_APPROX, SET_MAX)

/* First open/read/write/close start, last end: seconds after the job start. */
#define IOCHAR_F_TIMESTAMPS(X, M)          \
  X(M##_F_OPEN_START_TIMESTAMP, TS_START)  \
  X(M##_F_READ_START_TIMESTAMP, TS_START)  \
  X(M##_F_WRITE_START_TIMESTAMP, TS_START) \
  X(M##_F_CLOSE_START_TIMESTAMP, TS_START) \
  X(M##_F_OPEN_END_TIMESTAMP, TS_END)      \
  X(M##_F_READ_END_TIMESTAMP, TS_END)      \
  X(M##_F_WRITE_END_TIMESTAMP, TS_END)     \
  X(M##_F_CLOSE_END_TIMESTAMP, TS_END)

/* Integer side of the cross-rank block (after reduction). */
#define IOCHAR_RANK_STATS(X, M)         \
  X(M##_FASTEST_RANK, FAST_RANK)        \
  X(M##_FASTEST_RANK_BYTES, FAST_BYTES) \
  X(M##_SLOWEST_RANK, SLOW_RANK)        \
  X(M##_SLOWEST_RANK_BYTES, SLOW_BYTES)

#define IOCHAR_F_RANK_STATS(X, M)       \
  X(M##_F_FASTEST_RANK_TIME, FAST_TIME) \
  X(M##_F_SLOWEST_RANK_TIME, SLOW_TIME) \
  X(M##_F_VARIANCE_RANK_TIME, VAR_TIME) \
  X(M##_F_VARIANCE_RANK_BYTES, VAR_BYTES)

/* From one X-macro list, generate the enum and the definition table. */
#define IOCHAR_ENUM_ENTRY(name, kind) name,
#define IOCHAR_DEF_ENTRY(name, kind) {#name, IOCHAR_KIND_##kind},

/* Size bin index (upper bounds inclusive), shared by every module. */
static inline int iochar_size_bin(int64_t n) {
  if (n <= 100) return 0;
  if (n <= 1024) return 1;
  if (n <= 10240) return 2;
  if (n <= 102400) return 3;
  if (n <= 1048576) return 4;
  if (n <= 4194304) return 5;
  if (n <= 10485760) return 6;
  if (n <= 104857600) return 7;
  if (n <= 1073741824) return 8;
  return 9;
}

#endif
