/* I/O over time (runtime/series.c), and its hot part: a record's pending
 * counts (iochar_series_note) and the deferred repeats that add to them
 * (iochar_rw_flush_run), which the series applies before it is read. */
#ifndef IOCHAR_SERIES_H
#define IOCHAR_SERIES_H

#include <stdint.h>

#include "core.h"
#include "rw_state.h"

void iochar_series_reset(void);
/* Copy module m's series: width, and 4 x nbins int64 (bytes r/w, ops r/w). */
int iochar_series_get(int m, double *width, int64_t *bins, int nbins_max);
#define IOCHAR_SERIES_BINS 128
/* The per-rank heatmap (HEAT sections, MPI jobs): IOCHAR_HEAT_BINS bins of
 * bytes read and written per rank, each IOCHAR_SERIES_BINS / IOCHAR_HEAT_BINS
 * of the job's series bins; a row is i64 rank, i64 read[], i64 written[]. */
#define IOCHAR_HEAT_BINS 32
#define IOCHAR_HEAT_ROW (8 + 16 * IOCHAR_HEAT_BINS)

#pragma GCC visibility push(hidden)
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

#pragma GCC visibility pop

#endif
