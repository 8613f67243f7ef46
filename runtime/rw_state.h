/* The shared access accounting's per-record state (iochar_rw_state, its
 * top-k tables) and the arithmetic every step does on it (time spans,
 * timestamps): what the record table and the time series stand on.  The
 * steps are records.h's (metadata), series.h's (the series, deferred repeats)
 * and access.h's (reads and writes). */
#ifndef IOCHAR_RW_STATE_H
#define IOCHAR_RW_STATE_H

#include <string.h>

#include "core.h"

/* The library's own (hidden: direct access, no GOT; as in core.h). */
#pragma GCC visibility push(hidden)

#define IOCHAR_TOPK_SLOTS 16

/* Space-Saving top-k: exact while <= IOCHAR_TOPK_SLOTS distinct values;
 * `approx` says a value was evicted (the counts may over-estimate). */
typedef struct iochar_topk {
  int64_t val[IOCHAR_TOPK_SLOTS];
  int64_t cnt[IOCHAR_TOPK_SLOTS];
  int n, last; /* last: slot of the previous value (repeats are the norm) */
  int approx;
} iochar_topk;

static inline __attribute__((always_inline)) void iochar_topk_add(iochar_topk *t, int64_t v) {
  if (__builtin_expect(t->n > 0 && t->val[t->last] == v, 1)) {
    t->cnt[t->last]++;
    return;
  }
  int min = 0;
  for (int i = 0; i < t->n; i++) {
    if (t->val[i] == v) {
      t->cnt[i]++;
      t->last = i;
      return;
    }
    if (t->cnt[i] < t->cnt[min]) min = i;
  }
  if (t->n < IOCHAR_TOPK_SLOTS) {
    t->val[t->n] = v;
    t->cnt[t->n] = 1;
    t->last = t->n++;
    return;
  }
  t->val[min] = v; /* evict the least counted; inherit its count */
  t->cnt[min]++;
  t->approx = 1;
  t->last = min;
}

/* Add k occurrences of v: exactly k calls of iochar_topk_add(t, v). */
static inline void iochar_topk_add_k(iochar_topk *t, int64_t v, int64_t k) {
  iochar_topk_add(t, v);
  t->cnt[t->last] += k - 1;
}

/* A record's two top-k tables (544 bytes). */
typedef struct iochar_rw_topk {
  iochar_topk access, stride;
} iochar_rw_topk;

/* Per-record state of the shared accounting; modules put it first in theirs.
 * It is memory of its own, with the record's top-k tables just below it
 * (IOCHAR_RW_TK_BYTES), made at the record's first read or write
 * (records.c): a record only ever stat'ed or opened is its counters and
 * name alone, and never faults the state's pages in (a page costs 1-4 us on
 * a virtual machine: most of a new file's cost).  Metadata calls need only
 * the end of the last one (iochar_record.meta_end). */
typedef struct iochar_rw_state {
  /* I/O-over-time bytes and ops not yet added to the module's series: they
   * are added once per bin change, not per call (no atomics on the hot path) */
  int64_t ser_bytes[2], ser_ops[2];
  int64_t ser_bin;
  double ser_iw, ser_t;
  int64_t last_byte[2];
  double last_end[2]; /* per direction, to count overlapping calls once */
  int8_t have[2];
  int8_t last_dir; /* -1 none */
  /* A run of untimed repeats (same direction and size, each at the end of
   * the previous) is counted in bulk: run_k repeats are not yet applied. */
  int8_t run_dir;
  int8_t run_timed; /* 1: the repeats' ops and times are already counted */
  int64_t run_len, run_next, run_k;
  double run_t;
} iochar_rw_state;

/* The tables sit this many bytes below the state (a multiple of 8, as every
 * record and state is 8-aligned). */
#define IOCHAR_RW_TK_BYTES ((sizeof(iochar_rw_topk) + 7) & ~(size_t)7)
static inline __attribute__((always_inline)) iochar_rw_topk *iochar_rw_tk(iochar_rw_state *s) {
  return (iochar_rw_topk *)((char *)s - IOCHAR_RW_TK_BYTES);
}

/* run_timed is 1 whenever no repeats are pending (run_k 0), so a timed
 * repeat checks one flag (iochar_rw_defer_timed). */
static inline void iochar_rw_state_init(iochar_rw_state *s) {
  s->last_dir = -1;
  s->run_timed = 1;
}

/* Add [t0,t1] to time kind k (0 read, 1 write, 2 metadata), whose calls
 * so far ended at *last at the latest, without counting overlap with them. */
static inline __attribute__((always_inline)) void iochar_time_span(iochar_record *r,
                                                                   const iochar_rw_layout *L,
                                                                   double *last_end, int k,
                                                                   double t0, double t1) {
  double last = *last_end, d;
  if (__builtin_expect(t0 >= last, 1)) { /* the usual case: t1 >= t0 >= last */
    d = t1 - t0;
    *last_end = t1;
  } else {
    d = t1 > last ? t1 - last : 0.0;
    if (t1 > last) *last_end = t1;
  }
  if (L->f_time[k] >= 0) iochar_rec_f(r, L)[L->f_time[k]] += d;
}
/* The same for a read (dir 0) or write (dir 1) of a record with state s. */
static inline __attribute__((always_inline)) void iochar_time_add(iochar_record *r,
                                                                  const iochar_rw_layout *L,
                                                                  iochar_rw_state *s, int dir,
                                                                  double t0, double t1) {
  iochar_time_span(r, L, &s->last_end[dir], dir, t0, t1);
}

static inline void iochar_ts(double *start, double *end, double t0, double t1) {
  /* "unset" tested on the bits: an integer test, not an unordered compare
   * (a start is never -0.0: times are (int64) ticks times a positive scale) */
  uint64_t unset;
  memcpy(&unset, start, sizeof unset);
  if (unset == 0 || t0 < *start) *start = t0;
  if (t1 > *end) *end = t1;
}

#pragma GCC visibility pop

#endif
