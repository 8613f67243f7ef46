/* Unit test of iochar_layout_from_names (runtime/layout.c): a module's
 * layout comes from its counter list, each field the counter of that name,
 * -1 when the list has none. */
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "../runtime/core.h"
#include "../wrappers/posix_counters.h"
#include "../wrappers/stdio_counters.h"

// clang-format off
#define T_COUNTERS(X)                                                                   \
  X(T_OPENS, SUM) X(T_READS, SUM) X(T_WRITES, SUM) X(T_BYTES_READ, BYTES)               \
  X(T_BYTES_WRITTEN, BYTES) X(T_RW_SWITCHES, SUM) IOCHAR_SIZE_BINS(X, T, READ)          \
  IOCHAR_SIZE_BINS(X, T, WRITE) IOCHAR_TOP4(X, T, ACCESS)                               \
  X(T_MAX_READ_TIME_SIZE, MAXT_SIZE) X(T_NUM_INDICES, SUM)
#define T_F_COUNTERS(X)                                                                 \
  X(T_F_READ_TIME, TIME) X(T_F_WRITE_TIME, TIME) X(T_F_META_TIME, TIME)                 \
  X(T_F_MAX_WRITE_TIME, MAXT) IOCHAR_F_TIMESTAMPS(X, T) X(T_F_NUM_INDICES, SUM)
// clang-format on
enum { T_COUNTERS(IOCHAR_ENUM_ENTRY) };
enum { IOCHAR_MOD_T = 5 }; /* the module id IOCHAR_LAYOUT_INIT records */
enum { T_F_COUNTERS(IOCHAR_ENUM_ENTRY) };
static const iochar_counter_def ints[] = {T_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def flts[] = {T_F_COUNTERS(IOCHAR_DEF_ENTRY)};

static const iochar_counter_def posix_ints[] = {POSIX_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def posix_flts[] = {POSIX_F_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def stdio_ints[] = {STDIO_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def stdio_flts[] = {STDIO_F_COUNTERS(IOCHAR_DEF_ENTRY)};

static int failed;
#define EQ(a, b)                                                                      \
  do {                                                                                \
    if ((a) != (b)) {                                                                 \
      fprintf(stderr, "%s:%d: %s = %d, want %d\n", __FILE__, __LINE__, #a, (a), (b)); \
      failed = 1;                                                                     \
    }                                                                                 \
  } while (0)

int main(void) {
  iochar_rw_layout L;
  IOCHAR_LAYOUT_INIT(&L, T, ints, flts, "READS", "WRITES");
  EQ(L.ops[0], T_READS);
  EQ(L.ops[1], T_WRITES);
  EQ(L.bytes[0], T_BYTES_READ);
  EQ(L.bytes[1], T_BYTES_WRITTEN);
  EQ(L.max_byte[0], -1); /* not in the list */
  EQ(L.consec[1], -1);
  EQ(L.seq[0], -1);
  EQ(L.size_bin0[0], T_SIZE_READ_0_100);
  EQ(L.size_bin0[1], T_SIZE_WRITE_0_100);
  EQ(L.max_time_size[0], T_MAX_READ_TIME_SIZE);
  EQ(L.max_time_size[1], -1);
  EQ(L.rw_switches, T_RW_SWITCHES);
  EQ(L.access1, T_ACCESS1_ACCESS);
  EQ(L.stride1, -1);
  EQ(L.mem_alignment, -1);
  EQ(L.f_time[0], T_F_READ_TIME);
  EQ(L.f_time[2], T_F_META_TIME);
  EQ(L.f_max_time[0], -1);
  EQ(L.f_max_time[1], T_F_MAX_WRITE_TIME);
  EQ(L.f_start[1], T_F_WRITE_START_TIMESTAMP);
  EQ(L.f_end[0], T_F_READ_END_TIMESTAMP);
  EQ(L.module, IOCHAR_MOD_T);
  EQ(L.n_int, T_NUM_INDICES);
  IOCHAR_LAYOUT_INIT(&L, T, ints, flts, NULL, "OPENS"); /* a metadata-only module: no reads */
  EQ(L.ops[0], -1);
  EQ(L.ops[1], T_OPENS);
  /* The constant layouts of the hot modules say what their names say. */
  static const iochar_rw_layout posix = POSIX_RW_LAYOUT, stdio = STDIO_RW_LAYOUT;
  iochar_rw_layout want;
  IOCHAR_LAYOUT_INIT(&want, POSIX, posix_ints, posix_flts, "READS", "WRITES");
  EQ(memcmp(&posix, &want, sizeof want), 0);
  EQ(posix.stride1, POSIX_STRIDE1_STRIDE); /* a field the constant sets by hand */
  IOCHAR_LAYOUT_INIT(&want, STDIO, stdio_ints, stdio_flts, "READS", "WRITES");
  EQ(memcmp(&stdio, &want, sizeof want), 0);
  EQ(stdio.file_alignment, -1);
  if (!failed) printf("unit_layout: ok\n");
  return failed;
}
