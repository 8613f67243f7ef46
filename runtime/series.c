/* I/O over time: per module, a fixed number of bins whose width doubles as the
 * run outgrows them, so any run length fits in constant memory. */
#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "rw_state.h"
#include "series.h"

#define NB IOCHAR_SERIES_BINS
#define WIDTH0 1e-3

/* Adds are lock-free atomics on the current width; only coarsening takes the
 * lock.  An add racing with a coarsening may land one bin off, never lost. */
typedef struct series {
  iochar_spin lock;
  atomic_int started; /* width set: the series has had an add */
  double width;
  int64_t bins[4][NB]; /* bytes read, bytes written, reads, writes */
} series;

static series S[IOCHAR_MOD_COUNT];
/* The first width's until a series starts, so that a record's pending
 * counts (access.h) never see 0 and start on the bins they will land in. */
_Atomic double iochar_series_inv_width[IOCHAR_MOD_COUNT] = {[0 ... IOCHAR_MOD_COUNT - 1] =
                                                                1 / WIDTH0};

void iochar_series_reset(void) {
  memset(S, 0, sizeof S);
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) atomic_store(&iochar_series_inv_width[m], 1 / WIDTH0);
}

/* Halve the resolution: bin i takes bins 2i and 2i+1. */
static void coarsen(series *s, double t) {
  iochar_spin_lock(&s->lock);
  if (s->width == 0) {
    s->width = WIDTH0;
    atomic_store_explicit(&iochar_series_inv_width[s - S], 1 / WIDTH0, memory_order_release);
    atomic_store_explicit(&s->started, 1, memory_order_release);
  }
  while (t >= s->width * NB) {
    for (int k = 0; k < 4; k++) {
      for (int i = 0; i < NB / 2; i++)
        s->bins[k][i] = __atomic_exchange_n(&s->bins[k][2 * i], 0, __ATOMIC_RELAXED) +
                        __atomic_exchange_n(&s->bins[k][2 * i + 1], 0, __ATOMIC_RELAXED);
    }
    s->width *= 2;
    atomic_store_explicit(&iochar_series_inv_width[s - S], 1 / s->width, memory_order_release);
  }
  iochar_spin_unlock(&s->lock);
}

void iochar_series_add(int m, int dir, double t, int64_t bytes, int64_t ops) {
  series *s = &S[m];
  if (t < 0) t = 0;
  double iw = atomic_load_explicit(&iochar_series_inv_width[s - S], memory_order_acquire);
  int64_t i = (int64_t)(t * iw);
  if (__builtin_expect(i >= NB || !atomic_load_explicit(&s->started, memory_order_acquire), 0)) {
    coarsen(s, t);
    iw = atomic_load_explicit(&iochar_series_inv_width[s - S], memory_order_acquire);
    i = (int64_t)(t * iw);
    if (i >= NB) i = NB - 1;
  }
  if (bytes > 0) __atomic_fetch_add(&s->bins[dir][i], bytes, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->bins[2 + dir][i], ops, __ATOMIC_RELAXED);
}

void iochar_series_flush(int m, iochar_rw_state *st) {
  for (int d = 0; d < 2; d++) {
    if (st->ser_ops[d]) iochar_series_add(m, d, st->ser_t, st->ser_bytes[d], st->ser_ops[d]);
    st->ser_ops[d] = st->ser_bytes[d] = 0;
  }
}

static void flush_record(iochar_record *r, void *arg) {
  (void)arg;
  iochar_spin_lock(&r->lock);
  if (r->state) { /* else no read or write yet: nothing pending */
    iochar_rw_flush_run(r, iochar_modules[r->module]->rw, r->state);
    iochar_series_flush(r->module, r->state);
  }
  iochar_spin_unlock(&r->lock);
}

int iochar_series_get(int m, double *width, int64_t *out, int nmax) {
  series *s = &S[m];
  if (iochar_modules[m] && iochar_modules[m]->rw) iochar_record_foreach(m, flush_record, NULL);
  iochar_spin_lock(&s->lock);
  int n = s->width == 0 ? 0 : NB;
  if (n > nmax) n = 0;
  *width = s->width;
  for (int k = 0; k < 4 && n; k++) memcpy(out + k * NB, s->bins[k], sizeof s->bins[k]);
  iochar_spin_unlock(&s->lock);
  return n;
}
