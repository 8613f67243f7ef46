/* Access accounting shared by every module with reads and writes (POSIX, STDIO,
 * MPIIO, H5D, NC_VAR, PNETCDF_VAR): sizes, patterns, top-4 tables, times.  The
 * steps of a read or write (and a metadata call's, taking the lock) stand on
 * the state (rw_state.h), the record table (records.h: a record's first state,
 * the metadata steps), the series (series.h) and the observers (observe.h);
 * access.c writes the tables out for the log. */
#ifndef IOCHAR_ACCESS_H
#define IOCHAR_ACCESS_H

#include <string.h>

#include "core.h"
#include "observe.h"
#include "records.h"
#include "rw_state.h"
#include "series.h"

/* The library's own (hidden: direct access, no GOT; as in core.h). */
#pragma GCC visibility push(hidden)

/* Write the 4 largest (count desc, value asc) into c[first..first+7] and
 * the approximate flag into c[first+8] (IOCHAR_TOP4's _APPROX counter). */
void iochar_topk_emit(const iochar_topk *t, int64_t *c, int first);
/* The slots of t by count desc, value asc (the order every table is shown in):
 * idx[0..t->n) (t->n at most IOCHAR_TOPK_SLOTS). */
void iochar_topk_order(const iochar_topk *t, int *idx);
/* The whole table, ordered as emitted: val[IOCHAR_TOPK_SLOTS] then
 * cnt[IOCHAR_TOPK_SLOTS] (empty slots 0), what the cross-rank merge takes. */
void iochar_topk_dump(const iochar_topk *t, int64_t *out);

/* Empty tables: what a record without a state has (read only). */
extern const iochar_rw_topk iochar_rw_topk_none;
/* Record r's state, made at the first call that needs it; caller holds
 * r->lock. */
static inline __attribute__((always_inline)) iochar_rw_state *iochar_rw_state_of(iochar_record *r) {
  iochar_rw_state *s = r->state;
  if (__builtin_expect(!s, 0)) s = iochar_rw_state_make(r);
  return s;
}

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
/* iochar_meta_apply (records.h), taking r->lock. */
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
