/* Access accounting shared by every module with reads and writes (POSIX, STDIO,
 * MPIIO, H5D, NC_VAR, PNETCDF_VAR): sizes, patterns, top-4 tables, times. */
#ifndef IOCHAR_ACCESS_H
#define IOCHAR_ACCESS_H

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

/* Write the 4 largest (count desc, value asc) into c[first..first+7] and
 * the approximate flag into c[first+8] (IOCHAR_TOP4's _APPROX counter). */
void iochar_topk_emit(const iochar_topk *t, int64_t *c, int first);
/* The whole table, ordered as emitted: val[IOCHAR_TOPK_SLOTS] then
 * cnt[IOCHAR_TOPK_SLOTS] (empty slots 0), what the cross-rank merge takes. */
void iochar_topk_dump(const iochar_topk *t, int64_t *out);

/* A record's two top-k tables (544 bytes). */
typedef struct iochar_rw_topk {
  iochar_topk access, stride;
} iochar_rw_topk;
/* Empty tables: what a record without a state has (read only). */
extern const iochar_rw_topk iochar_rw_topk_none;

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
/* Make record r's state (and tables), fresh (iochar_rw_state_init); caller
 * holds r->lock.  Never NULL.  runtime/records.c */
iochar_rw_state *iochar_rw_state_make(iochar_record *r);
/* Record r's state, made at the first call that needs it; caller holds
 * r->lock. */
static inline __attribute__((always_inline)) iochar_rw_state *iochar_rw_state_of(iochar_record *r) {
  iochar_rw_state *s = r->state;
  if (__builtin_expect(!s, 0)) s = iochar_rw_state_make(r);
  return s;
}

/* run_timed is 1 whenever no repeats are pending (run_k 0), so a timed
 * repeat checks one flag (iochar_rw_defer_timed). */
static inline void iochar_rw_state_init(iochar_rw_state *s) {
  s->last_dir = -1;
  s->run_timed = 1;
}

/* Current 1/width of module m's time series (the first width before its
 * first use; never 0). */
extern _Atomic double iochar_series_inv_width[IOCHAR_MOD_COUNT];
/* Move a record's pending series counts into the module's series. */
void iochar_series_flush(int m, iochar_rw_state *s);

static inline __attribute__((always_inline)) void iochar_series_note(const iochar_rw_layout *L,
                                                                     iochar_rw_state *s, int dir,
                                                                     double t, int64_t len,
                                                                     int64_t ops) {
  /* L->module, not the record's: the same, and a constant with a constant L */
  double iw = atomic_load_explicit(&iochar_series_inv_width[L->module], memory_order_relaxed);
  int64_t bin = (int64_t)(t * iw);
  /* the widths compared as bits: integer compares, no unordered cases.  The
   * module's width is never 0 (series.c), a fresh record's is: its first op
   * flushes (nothing) and takes the current width */
  uint64_t iwb, oldb;
  memcpy(&iwb, &iw, sizeof iwb);
  memcpy(&oldb, &s->ser_iw, sizeof oldb);
  if (__builtin_expect((bin != s->ser_bin) | (iwb != oldb), 0)) {
    iochar_series_flush(L->module, s);
    s->ser_bin = bin;
    s->ser_iw = iw;
    s->ser_t = t;
  }
  if (len > 0) s->ser_bytes[dir] += len;
  s->ser_ops[dir] += ops;
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

/* Optional observers (call sites, trace): off unless enabled at start-up.
 * op: 0 read, 1 write, 2 metadata; called with r->lock held. */
extern int iochar_observing;
void iochar_observe(iochar_record *r, int op, int64_t off, int64_t len, double t0, double t1);

static inline void iochar_rw_flush_run(iochar_record *r, const iochar_rw_layout *L,
                                       iochar_rw_state *s);

/* One read (dir 0) or write (dir 1) of len bytes at off, done in [t0,t1].
 * len < 0 is a failed call: not counted at all (as Darshan).  Caller holds
 * r->lock; s is the record's state (iochar_rw_state_of).  off < 0 means "no
 * offset" (pattern counters are skipped). */
static inline __attribute__((always_inline)) void
iochar_rw_account(iochar_record *r, const iochar_rw_layout *L, iochar_rw_state *s, int dir,
                  int64_t off, int64_t len, const void *buf, double t0, double t1) {
  int64_t *c = r->c;
  double *f = iochar_rec_f(r, L);
  if (len < 0) return;
  if (s->run_k) iochar_rw_flush_run(r, L, s);
  c[L->ops[dir]]++;
  int observing = iochar_observing; /* set once, at start-up: read once */
  if (__builtin_expect(observing, 0)) iochar_observe(r, dir, off, len, t0, t1);
  iochar_time_add(r, L, s, dir, t0, t1);
  if (L->f_start[dir] >= 0) iochar_ts(&f[L->f_start[dir]], &f[L->f_end[dir]], t0, t1);
  if (L->f_max_time[dir] >= 0 && t1 - t0 > f[L->f_max_time[dir]]) {
    f[L->f_max_time[dir]] = t1 - t0;
    if (L->max_time_size[dir] >= 0) c[L->max_time_size[dir]] = len;
  }
  if (L->rw_switches >= 0 && s->last_dir >= 0 && s->last_dir != dir) c[L->rw_switches]++;
  s->last_dir = (int8_t)dir;
  iochar_series_note(L, s, dir, t0, len, 1);
  s->run_len = 0;
  c[L->bytes[dir]] += len;
  c[L->size_bin0[dir] + iochar_size_bin(len)]++;
  /* Darshan's rule: a 0-byte access counts as an op, never as a size */
  if (L->access1 >= 0 && len > 0) iochar_topk_add(&iochar_rw_tk(s)->access, len);
  if (L->mem_not_aligned >= 0 && ((uintptr_t)buf & 7)) c[L->mem_not_aligned]++;
  if (off < 0) return;
  if (L->file_not_aligned >= 0) {
    int64_t a = c[L->file_alignment]; /* a power of two in practice: no divide */
    if (a > 0 && ((a & (a - 1)) ? off % a : off & (a - 1)) != 0) c[L->file_not_aligned]++;
  }
  int64_t last = s->last_byte[dir];
  if (L->consec[dir] >= 0 && off == last + 1) c[L->consec[dir]]++;
  if (L->seq[dir] >= 0 && off > last) c[L->seq[dir]]++;
  /* a stride is a forward gap only (Darshan): consecutive, rewinding and
   * overlapping accesses leave the table alone */
  if (L->stride1 >= 0 && s->have[dir] && off > last + 1)
    iochar_topk_add(&iochar_rw_tk(s)->stride, off - last - 1);
  s->have[dir] = 1;
  if (len > 0) {
    s->last_byte[dir] = off + len - 1;
    if (L->max_byte[dir] >= 0 && off + len - 1 > c[L->max_byte[dir]])
      c[L->max_byte[dir]] = off + len - 1;
    /* later repeats of this op may be deferred, but not while observers run:
     * they want every op (run_len 0 matches no op, so iochar_rw_defer and
     * iochar_rw_defer_timed need not test for them) */
    s->run_dir = (int8_t)dir;
    s->run_len = __builtin_expect(observing, 0) ? 0 : len;
    s->run_next = off + len;
  }
}

/* Apply the deferred repeats: each is a consecutive, sequential access of
 * run_len bytes in run_dir, untimed (zero duration at run_t), exactly as if
 * iochar_rw_account had seen them one by one.  A run starts in
 * iochar_rw_account, so the record has its state and tables. */
static inline void iochar_rw_flush_run(iochar_record *r, const iochar_rw_layout *L,
                                       iochar_rw_state *s) {
  int64_t k = s->run_k, n = s->run_len, *c = r->c;
  int dir = s->run_dir;
  if (!k) return;
  s->run_k = 0;
  int64_t off = s->run_next - k * n;
  if (!s->run_timed) {
    c[L->ops[dir]] += k;
    iochar_time_add(r, L, s, dir, s->run_t, s->run_t);
    double *f = iochar_rec_f(r, L);
    if (L->f_start[dir] >= 0) iochar_ts(&f[L->f_start[dir]], &f[L->f_end[dir]], s->run_t, s->run_t);
    iochar_series_note(L, s, dir, s->run_t, k * n, k);
  }
  s->run_timed = 1; /* nothing pending (iochar_rw_state_init) */
  c[L->bytes[dir]] += k * n;
  c[L->size_bin0[dir] + iochar_size_bin(n)] += k;
  if (L->access1 >= 0) iochar_topk_add_k(&iochar_rw_tk(s)->access, n, k);
  if (L->file_not_aligned >= 0) {
    int64_t a = c[L->file_alignment];
    int64_t miss = 0;
    if (a > 0 && !(a & (a - 1))) { /* a power of two in practice: masks, no divide */
      if (!(n & (a - 1)))          /* every repeat shares the first one's alignment */
        miss = off & (a - 1) ? k : 0;
      else if (!(n & (n - 1))) {
        /* both powers of two, n < a: the repeats step through every multiple
         * of n, so they hit every multiple of a in their span when off is a
         * multiple of n, and none otherwise */
        int64_t last = off + (k - 1) * n, first_a = (off + a - 1) & ~(a - 1);
        int64_t hit = (off & (n - 1)) || first_a > last
                          ? 0
                          : ((last - first_a) >> __builtin_ctzll((uint64_t)a)) + 1;
        miss = k - hit;
      } else
        for (int64_t i = 0; i < k; i++) miss += ((off + i * n) & (a - 1)) != 0;
    } else if (a > 0 && n % a == 0) /* every repeat shares the first one's alignment */
      miss = off % a ? k : 0;
    else
      for (int64_t i = 0; a > 0 && i < k; i++) miss += (off + i * n) % a != 0;
    c[L->file_not_aligned] += miss;
  }
  if (L->consec[dir] >= 0) c[L->consec[dir]] += k;
  if (L->seq[dir] >= 0) c[L->seq[dir]] += k;
  s->last_byte[dir] = s->run_next - 1;
  if (L->max_byte[dir] >= 0 && s->run_next - 1 > c[L->max_byte[dir]])
    c[L->max_byte[dir]] = s->run_next - 1;
}

/* An untimed op (served from a user-space buffer) that repeats the last one:
 * absorb it into the run (three adds) and return 1; else 0 and the caller
 * accounts it normally.  Caller holds r->lock.  Off while observers run (no
 * run starts then: iochar_rw_account). */
static inline int iochar_rw_defer(iochar_rw_state *s, int dir, int64_t off, int64_t len, double t) {
  if (len <= 0 || len != s->run_len || off != s->run_next || dir != s->run_dir ||
      (s->run_k && s->run_timed))
    return 0;
  if (!s->run_k) s->run_t = t;
  s->run_timed = 0;
  s->run_k++;
  s->run_next += len;
  return 1;
}

/* The same for a timed op (a system call) that repeats the last one and does
 * not overlap it: its op, time, timestamps and series count now; only the
 * size and pattern work (bins, top-4 tables, consecutive...) waits for the
 * run to end.  Returns 0 when the caller must account it normally. */
static inline __attribute__((always_inline)) int
iochar_rw_defer_timed(iochar_record *r, const iochar_rw_layout *L, iochar_rw_state *s, int dir,
                      int64_t off, int64_t len, const void *buf, double t0, double t1) {
  if (len <= 0 || len != s->run_len || off != s->run_next || dir != s->run_dir || !s->run_timed ||
      t0 < s->last_end[dir])
    return 0;
  int64_t *c = r->c;
  double *f = iochar_rec_f(r, L);
  c[L->ops[dir]]++;
  /* What iochar_time_add and iochar_ts do, knowing more: this op starts no
   * earlier than the end of every earlier op in its direction (checked
   * above), so its whole time counts and it moves no start timestamp. */
  if (L->f_time[dir] >= 0) f[L->f_time[dir]] += t1 - t0;
  if (t1 > s->last_end[dir]) s->last_end[dir] = t1;
  if (L->f_end[dir] >= 0 && t1 > f[L->f_end[dir]]) f[L->f_end[dir]] = t1;
  if (L->f_max_time[dir] >= 0 && t1 - t0 > f[L->f_max_time[dir]]) {
    f[L->f_max_time[dir]] = t1 - t0;
    if (L->max_time_size[dir] >= 0) c[L->max_time_size[dir]] = len;
  }
  if (L->mem_not_aligned >= 0 && ((uintptr_t)buf & 7)) c[L->mem_not_aligned]++;
  iochar_series_note(L, s, dir, t0, len, 1);
  s->run_k++; /* run_timed is 1 already: checked above */
  s->run_next += len;
  return 1;
}

/* An open of the record (not a dup): the pattern starts again, as Darshan's
 * does, so the "last byte" of each direction is back to 0.  The direction of
 * the last access stays (RW_SWITCHES spans opens in Darshan too).  A record
 * without a state has had no access: nothing to start again. */
static inline void iochar_rw_open(iochar_record *r, const iochar_rw_layout *L) {
  iochar_rw_state *s = r->state;
  if (!s) return;
  if (s->run_k) iochar_rw_flush_run(r, L, s);
  s->run_len = 0;
  s->last_byte[0] = s->last_byte[1] = 0;
  s->have[0] = s->have[1] = 0;
}

/* A metadata call's time; caller holds r->lock.  No state needed: a
 * pending run is left alone (metadata counters and the data counters it
 * holds back are independent: an lseek between repeats keeps the run). */
static inline void iochar_meta_account(iochar_record *r, const iochar_rw_layout *L, double t0,
                                       double t1) {
  if (__builtin_expect(iochar_observing, 0)) iochar_observe(r, 2, -1, 0, t0, t1);
  iochar_time_span(r, L, &r->meta_end, 2, t0, t1);
}

/* A metadata call on record r: count it (counter idx), stamp it (the start
 * and end timestamp counters ts_start, ts_end) and add its time; -1 skips a
 * part.  Caller holds r->lock. */
/* The same on what a metadata-only entry became, made now if need be
 * (records.c). */
void iochar_meta_entry_apply(iochar_record *r, int idx, int ts_start, int ts_end, double t0,
                             double t1);
/* The same on a metadata-only entry (core.h): its slots, found from L's
 * module (a constant with a constant L); caller holds its lock. */
static inline __attribute__((always_inline)) void
iochar_meta_entry_in(iochar_record *r, const iochar_rw_layout *L, int idx, int ts_start, int ts_end,
                     double t0, double t1) {
  iochar_meta_entry *e = (iochar_meta_entry *)r;
  const int16_t *slot = iochar_meta_slot[L->module];
  int a = ts_start >= 0 ? slot[L->n_int + ts_start] : 0;
  int b = ts_start >= 0 ? slot[L->n_int + ts_end] : 0;
  /* what it became, or a counter it does not carry (the module's rare ones,
   * records.c): the call goes to its full record, made now if need be */
  if (__builtin_expect(__atomic_load_n(&e->full, __ATOMIC_ACQUIRE) != NULL ||
                           (idx >= 0 && slot[idx] < 0) || a < 0 || b < 0,
                       0)) {
    iochar_meta_entry_apply(r, idx, ts_start, ts_end, t0, t1);
    return;
  }
  if (idx >= 0) e->c[slot[idx]]++;
  if (ts_start >= 0) iochar_ts((double *)&e->c[a], (double *)&e->c[b], t0, t1);
  if (__builtin_expect(iochar_observing, 0)) iochar_observe(r, 2, -1, 0, t0, t1);
  double last = r->meta_end, d;
  if (__builtin_expect(t0 >= last, 1)) { /* as iochar_time_span */
    d = t1 - t0;
    r->meta_end = t1;
  } else {
    d = t1 > last ? t1 - last : 0.0;
    if (t1 > last) r->meta_end = t1;
  }
  int k = L->f_time[2] < 0 ? -1 : slot[L->n_int + L->f_time[2]];
  if (k >= 0) *(double *)&e->c[k] += d;
}
static inline __attribute__((always_inline)) void
iochar_meta_apply(iochar_record *r, const iochar_rw_layout *L, int idx, int ts_start, int ts_end,
                  double t0, double t1) {
  if (__builtin_expect(r->flags & IOCHAR_REC_META, 0)) {
    iochar_meta_entry_in(r, L, idx, ts_start, ts_end, t0, t1);
    return;
  }
  if (idx >= 0) r->c[idx]++;
  if (ts_start >= 0) iochar_ts(&iochar_rec_f(r, L)[ts_start], &iochar_rec_f(r, L)[ts_end], t0, t1);
  iochar_meta_account(r, L, t0, t1);
}
/* The same, taking r->lock. */
static inline void iochar_meta_event(iochar_record *r, const iochar_rw_layout *L, int idx,
                                     int ts_start, int ts_end, double t0, double t1) {
  iochar_spin_lock(&r->lock);
  iochar_meta_apply(r, L, idx, ts_start, ts_end, t0, t1);
  iochar_spin_unlock(&r->lock);
}
/* The same inside the caller's bracket (core.h, iochar_fast_enter), r->lock
 * taken by the fast rule: for the hot steps only (the seek). */
static inline void iochar_meta_event_in(iochar_record *r, const iochar_rw_layout *L, int idx,
                                        int ts_start, int ts_end, double t0, double t1) {
  iochar_spin_lock_in(&r->lock);
  iochar_meta_apply(r, L, idx, ts_start, ts_end, t0, t1);
  iochar_spin_unlock_in(&r->lock);
}

/* Move the top-k tables into their counters (before the log is written). */
void iochar_rw_finish(iochar_record *r, const iochar_rw_layout *L);
/* Top-k tables of a layout, in schema (counter index) order: their first
 * counters into first[], and when t is given the tables of the record
 * whose state is s into t[] (empty ones when s is NULL); returns 0..2. */
int iochar_rw_tables(const iochar_rw_layout *L, iochar_rw_state *s, int first[2],
                     const iochar_topk *t[2]);

#pragma GCC visibility pop

#endif
