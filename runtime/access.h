/* Access accounting shared by every module with reads and writes (POSIX, STDIO,
 * MPIIO, H5D, NC_VAR, PNETCDF_VAR): sizes, patterns, top-4 tables, times. */
#ifndef IOCHAR_ACCESS_H
#define IOCHAR_ACCESS_H

#include "core.h"

#define IOCHAR_TOPK_SLOTS 16

/* Space-Saving top-k: exact while <= IOCHAR_TOPK_SLOTS distinct values. */
typedef struct iochar_topk {
  int64_t val[IOCHAR_TOPK_SLOTS];
  int64_t cnt[IOCHAR_TOPK_SLOTS];
  int n;
} iochar_topk;

static inline void iochar_topk_add(iochar_topk *t, int64_t v) {
  int min = 0;
  for (int i = 0; i < t->n; i++) {
    if (t->val[i] == v) {
      t->cnt[i]++;
      return;
    }
    if (t->cnt[i] < t->cnt[min]) min = i;
  }
  if (t->n < IOCHAR_TOPK_SLOTS) {
    t->val[t->n] = v;
    t->cnt[t->n++] = 1;
    return;
  }
  t->val[min] = v; /* evict the least counted; inherit its count */
  t->cnt[min]++;
}

/* Write the 4 largest (count desc, value asc) into c[first..first+7]. */
void iochar_topk_emit(const iochar_topk *t, int64_t *c, int first);

/* Per-record state of the shared accounting; modules put it first in theirs. */
typedef struct iochar_rw_state {
  int64_t last_byte[2];
  double last_end[3]; /* per time kind, to count overlapping calls once */
  int8_t have[2];
  int8_t last_dir; /* -1 none */
  iochar_topk access, stride;
} iochar_rw_state;

static inline void iochar_rw_state_init(iochar_rw_state *s) {
  s->last_dir = -1;
}

/* Add [t0,t1] to time kind k without counting overlap with earlier calls. */
static inline void iochar_time_add(iochar_record *r, const iochar_rw_layout *L,
                                   iochar_rw_state *s, int k, double t0,
                                   double t1) {
  double d = t0 >= s->last_end[k] ? t1 - t0
             : t1 > s->last_end[k] ? t1 - s->last_end[k]
                                   : 0.0;
  if (t1 > s->last_end[k]) s->last_end[k] = t1;
  if (L->f_time[k] >= 0) r->f[L->f_time[k]] += d;
}

static inline void iochar_ts(double *start, double *end, double t0, double t1) {
  if (*start == 0 || t0 < *start) *start = t0;
  if (t1 > *end) *end = t1;
}

/* One read (dir 0) or write (dir 1) of len bytes at off, done in [t0,t1].
 * len < 0 is a failed call: counted as an op, nothing else.  Caller holds
 * r->lock.  off < 0 means "no offset" (pattern counters are skipped). */
static inline void iochar_rw_account(iochar_record *r, const iochar_rw_layout *L,
                                     iochar_rw_state *s, int dir, int64_t off,
                                     int64_t len, const void *buf, double t0,
                                     double t1) {
  int64_t *c = r->c;
  double *f = r->f;
  c[L->ops[dir]]++;
  iochar_time_add(r, L, s, dir, t0, t1);
  if (L->f_start[dir] >= 0) iochar_ts(&f[L->f_start[dir]], &f[L->f_end[dir]], t0, t1);
  if (L->f_max_time[dir] >= 0 && t1 - t0 > f[L->f_max_time[dir]]) {
    f[L->f_max_time[dir]] = t1 - t0;
    if (L->max_time_size[dir] >= 0) c[L->max_time_size[dir]] = len < 0 ? 0 : len;
  }
  if (L->rw_switches >= 0 && s->last_dir >= 0 && s->last_dir != dir)
    c[L->rw_switches]++;
  s->last_dir = (int8_t)dir;
  if (len < 0) return;
  c[L->bytes[dir]] += len;
  c[L->size_bin0[dir] + iochar_size_bin(len)]++;
  if (L->access1 >= 0) iochar_topk_add(&s->access, len);
  if (L->mem_not_aligned >= 0 && ((uintptr_t)buf & 7)) c[L->mem_not_aligned]++;
  if (off < 0) return;
  if (L->file_not_aligned >= 0 && c[L->file_alignment] > 0 &&
      off % c[L->file_alignment] != 0)
    c[L->file_not_aligned]++;
  int64_t last = s->last_byte[dir];
  if (L->consec[dir] >= 0 && off == last + 1) c[L->consec[dir]]++;
  if (L->seq[dir] >= 0 && off > last) c[L->seq[dir]]++;
  if (L->stride1 >= 0 && s->have[dir]) iochar_topk_add(&s->stride, off - last - 1);
  s->have[dir] = 1;
  if (len > 0) {
    s->last_byte[dir] = off + len - 1;
    if (L->max_byte[dir] >= 0 && off + len - 1 > c[L->max_byte[dir]])
      c[L->max_byte[dir]] = off + len - 1;
  }
}

static inline void iochar_meta_account(iochar_record *r, const iochar_rw_layout *L,
                                       iochar_rw_state *s, double t0, double t1) {
  iochar_time_add(r, L, s, 2, t0, t1);
}

/* Move the top-k tables into their counters (before the log is written). */
void iochar_rw_finish(iochar_record *r, const iochar_rw_layout *L);

#endif
