/* A module's read/write layout from its counter list: the shared accounting
 * (runtime/access.h) finds each counter it moves by the naming convention of
 * iochar_rw_layout's fields (<P>_BYTES_READ, <P>_F_READ_TIME...), so a module
 * has a counter the accounting moves exactly when its list names it. */
#include <stddef.h>
#include <string.h>

#include "core.h"

void iochar_layout_from_names(iochar_rw_layout *L, const char *P, const iochar_counter_def *ints,
                              uint32_t n_int, const iochar_counter_def *flts, uint32_t n_flt,
                              const char *reads, const char *writes) {
  static const struct {
    size_t off;
    const char *suffix;
    uint8_t len, flt;
  } S[] = {
#define SLOT(field, suffix, flt) {offsetof(iochar_rw_layout, field), suffix, sizeof suffix - 1, flt}
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
  /* One pass over each list (this runs in every process, launchers too, 14
   * times: it was most of a launcher's start-up instructions): a counter
   * named <P>_<suffix> fills the slots whose suffix it carries, found by the
   * suffix's length first (a bit set of the slots per length); a name's
   * first match wins, as names are unique anyway. */
  enum { NS = sizeof S / sizeof *S, MAXLEN = 32 };
  _Static_assert(NS <= 32, "one 32-bit set per length");
  uint32_t by_len[2][MAXLEN] = {{0}};
  for (unsigned k = 0; k < NS; k++) by_len[S[k].flt][S[k].len] |= 1u << k;
  memset(L, 0xff, sizeof *L); /* every slot -1: the module has no such counter */
  L->n_int = (int16_t)n_int;
  size_t plen = strlen(P), rlen = reads ? strlen(reads) : 0, wlen = writes ? strlen(writes) : 0;
  for (int flt = 0; flt < 2; flt++) {
    const iochar_counter_def *defs = flt ? flts : ints;
    uint32_t n = flt ? n_flt : n_int;
    for (uint32_t i = n; i-- > 0;) { /* backwards: the lowest index is written last */
      const char *nm = defs[i].name;
      if (strncmp(nm, P, plen) != 0 || nm[plen] != '_') continue;
      const char *sfx = nm + plen + 1;
      size_t len = strlen(sfx);
      int16_t v = (int16_t)i;
      if (!flt && reads && len == rlen && !memcmp(sfx, reads, len)) L->ops[0] = v;
      if (!flt && writes && len == wlen && !memcmp(sfx, writes, len)) L->ops[1] = v;
      for (uint32_t m = len < MAXLEN ? by_len[flt][len] : 0; m; m &= m - 1) {
        unsigned k = (unsigned)__builtin_ctz(m);
        if (!memcmp(S[k].suffix, sfx, len)) memcpy((char *)L + S[k].off, &v, sizeof v);
      }
    }
  }
}
