/* The record table's life (runtime/records.c): set-up, reset, the live file
 * behind it, what the log and the reduction read from it, and the descriptor
 * table's opens and closes over its pool of descriptions.  The hot lookups
 * are core.h's. */
#ifndef IOCHAR_RECORDS_H
#define IOCHAR_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "observe.h"
#include "rw_state.h"

int iochar_records_init(void);
void iochar_records_reset(void);
void iochar_records_lock(void);
void iochar_records_unlock(void);
int iochar_record_touched(const iochar_record *r);
int iochar_records_any_touched(void);
/* The record memory into a fresh live file (runtime/live.c): again, for a
 * fork child or after a failed exec; now, at MPI_Init. */
void iochar_records_live_again(void);
void iochar_records_live_now(void);
/* The distinct folded (id, module) pairs of this process (at most max), and
 * per module how many of its folded_files they are (the rest were counted
 * once the set was full, maybe twice). */
size_t iochar_folded_keys(uint64_t *ids, int *mods, size_t max, int64_t in_set[]);

/* ---- a record's first state; the metadata steps, on an entry or a record -- */
#pragma GCC visibility push(hidden)
/* Make record r's state (and tables), fresh (iochar_rw_state_init); caller
 * holds r->lock.  Never NULL.  runtime/records.c */
iochar_rw_state *iochar_rw_state_make(iochar_record *r);
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
#pragma GCC visibility pop

/* ---- descriptions of the fd table (core.h: iochar_fds, iochar_fd_get) ---- */
#pragma GCC visibility push(hidden)
/* Every descriptor number has a home description, iochar_fdesc_home[fd]:
 * an open of fd takes it, without a lock or a pool, whenever nothing refers
 * to it any more (refs 0: the last close or dup2 over it let it go).  Only
 * when a dup of fd's previous description outlives it (dup, then close, then
 * an open that gets fd again) does an open take a description from the pool
 * (records.c), which its last release gives back. */
extern iochar_fdesc *iochar_fdesc_home;
/* A pooled description nothing refers to any more, back to the pool. */
void iochar_fdesc_put(iochar_fdesc *d);
/* Drop one reference to d: the last one frees it (a home description is
 * free by its count alone). */
static inline void iochar_fdesc_release(iochar_fdesc *d) {
  if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1 &&
      (size_t)(d - iochar_fdesc_home) >= IOCHAR_FDS_CAP)
    iochar_fdesc_put(d);
}
/* A description of rec as an open leaves it (offset 0: the kernel starts
 * every description there, O_APPEND included); plain stores, published by
 * whatever puts it in the table. */
static inline void iochar_fdesc_fill(iochar_fdesc *d, iochar_record *rec, int append) {
  d->rec = rec;
  d->append = append;
  atomic_store_explicit(&d->offset, 0, memory_order_relaxed);
}
/* The open below when fd's home description is still referred to. */
void iochar_fd_open_pooled(int fd, iochar_record *rec, int append);
/* An open: fd gets a new description of rec (offset 0: the kernel starts
 * every description there, O_APPEND included); replaces and releases what
 * fd had.  Without a free description, fd is just forgotten. */
static inline void iochar_fd_open(int fd, iochar_record *rec, int append) {
  if ((unsigned)fd >= (unsigned)iochar_fds_max) return;
  iochar_fdesc *d = &iochar_fdesc_home[fd];
  /* Taking it: one thread needs no atomic (a signal handler is turned away
   * by the in-tool guard); threads that raced for one descriptor number (a
   * close and an open between another thread's open and its record) take it
   * by compare and swap, the loser from the pool. */
  iochar_fdesc *old;
  if (__builtin_expect(iochar_single_threaded(), 1)) {
    if (__builtin_expect(atomic_load_explicit(&d->refs, memory_order_relaxed) != 0, 0)) {
      iochar_fd_open_pooled(fd, rec, append);
      return;
    }
    iochar_fdesc_fill(d, rec, append);
    atomic_store_explicit(&d->refs, 1, memory_order_relaxed); /* the table's */
    old = atomic_load_explicit(&iochar_fds[fd], memory_order_relaxed);
    atomic_store_explicit(&iochar_fds[fd], d, memory_order_relaxed);
  } else {
    int zero = 0;
    if (!atomic_compare_exchange_strong_explicit(&d->refs, &zero, 1, memory_order_acquire,
                                                 memory_order_relaxed)) {
      iochar_fd_open_pooled(fd, rec, append);
      return;
    }
    iochar_fdesc_fill(d, rec, append); /* the exchange below publishes it */
    old = atomic_exchange(&iochar_fds[fd], d);
  }
  if (__builtin_expect(old != NULL, 0)) iochar_fdesc_release(old);
}
/* Point fd at d (taking a reference); replaces and releases what was there. */
void iochar_fd_set(int fd, iochar_fdesc *d);
/* The close of fd, whose slot held d (iochar_fd_get) when the close began:
 * forget fd and drop its reference.  One thread: plain loads and stores
 * (nothing else can change the slot or the count; a signal handler is
 * turned away by the in-tool guard).  Threads: the slot is exchanged, for
 * another thread may have put something else there meanwhile. */
static inline void iochar_fd_close(int fd, iochar_fdesc *d) {
  if (__builtin_expect(iochar_single_threaded(), 1)) {
    atomic_store_explicit(&iochar_fds[fd], NULL, memory_order_relaxed);
    int n = atomic_load_explicit(&d->refs, memory_order_relaxed) - 1;
    atomic_store_explicit(&d->refs, n, memory_order_relaxed);
    if (__builtin_expect(n == 0, 1) && (size_t)(d - iochar_fdesc_home) >= IOCHAR_FDS_CAP)
      iochar_fdesc_put(d);
    return;
  }
  iochar_fdesc *old = atomic_exchange(&iochar_fds[fd], NULL);
  if (old) iochar_fdesc_release(old);
}
/* Forget fd (close): drops its reference. */
static inline void iochar_fd_clear(int fd) {
  if ((unsigned)fd >= (unsigned)__atomic_load_n(&iochar_fds_max, __ATOMIC_ACQUIRE)) return;
  iochar_fdesc *d = atomic_exchange(&iochar_fds[fd], NULL);
  if (d) iochar_fdesc_release(d);
}
#pragma GCC visibility pop

#endif
