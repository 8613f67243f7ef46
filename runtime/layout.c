/* A module's read/write layout from its counter list: the shared accounting
 * (runtime/access.h) finds each counter it moves by the naming convention of
 * iochar_rw_layout's fields (<P>_BYTES_READ, <P>_F_READ_TIME...), so a module
 * has a counter the accounting moves exactly when its list names it. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

static int16_t find(const char *P, const char *suffix, const iochar_counter_def *defs, uint32_t n) {
  char want[96];
  if (!suffix || snprintf(want, sizeof want, "%s_%s", P, suffix) >= (int)sizeof want) return -1;
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(defs[i].name, want)) return (int16_t)i;
  return -1;
}

void iochar_layout_from_names(iochar_rw_layout *L, const char *P, const iochar_counter_def *ints,
                              uint32_t n_int, const iochar_counter_def *flts, uint32_t n_flt,
                              const char *reads, const char *writes) {
  static const struct {
    size_t off;
    const char *suffix;
    int flt;
  } S[] = {
#define SLOT(field, suffix, flt) {offsetof(iochar_rw_layout, field), suffix, flt}
      SLOT(bytes[0], "BYTES_READ", 0),
      SLOT(bytes[1], "BYTES_WRITTEN", 0),
      SLOT(max_byte[0], "MAX_BYTE_READ", 0),
      SLOT(max_byte[1], "MAX_BYTE_WRITTEN", 0),
      SLOT(consec[0], "CONSEC_READS", 0),
      SLOT(consec[1], "CONSEC_WRITES", 0),
      SLOT(seq[0], "SEQ_READS", 0),
      SLOT(seq[1], "SEQ_WRITES", 0),
      SLOT(size_bin0[0], "SIZE_READ_0_100", 0),
      SLOT(size_bin0[1], "SIZE_WRITE_0_100", 0),
      SLOT(max_time_size[0], "MAX_READ_TIME_SIZE", 0),
      SLOT(max_time_size[1], "MAX_WRITE_TIME_SIZE", 0),
      SLOT(rw_switches, "RW_SWITCHES", 0),
      SLOT(access1, "ACCESS1_ACCESS", 0),
      SLOT(stride1, "STRIDE1_STRIDE", 0),
      SLOT(file_not_aligned, "FILE_NOT_ALIGNED", 0),
      SLOT(file_alignment, "FILE_ALIGNMENT", 0),
      SLOT(mem_not_aligned, "MEM_NOT_ALIGNED", 0),
      SLOT(mem_alignment, "MEM_ALIGNMENT", 0),
      SLOT(f_time[0], "F_READ_TIME", 1),
      SLOT(f_time[1], "F_WRITE_TIME", 1),
      SLOT(f_time[2], "F_META_TIME", 1),
      SLOT(f_max_time[0], "F_MAX_READ_TIME", 1),
      SLOT(f_max_time[1], "F_MAX_WRITE_TIME", 1),
      SLOT(f_start[0], "F_READ_START_TIMESTAMP", 1),
      SLOT(f_start[1], "F_WRITE_START_TIMESTAMP", 1),
      SLOT(f_end[0], "F_READ_END_TIMESTAMP", 1),
      SLOT(f_end[1], "F_WRITE_END_TIMESTAMP", 1),
#undef SLOT
  };
  L->ops[0] = find(P, reads, ints, n_int);
  L->ops[1] = find(P, writes, ints, n_int);
  for (size_t i = 0; i < sizeof S / sizeof *S; i++) {
    int16_t v = S[i].flt ? find(P, S[i].suffix, flts, n_flt) : find(P, S[i].suffix, ints, n_int);
    memcpy((char *)L + S[i].off, &v, sizeof v);
  }
}
