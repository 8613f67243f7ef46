/* I/O over time: per module, a fixed number of bins whose width doubles as the
 * run outgrows them, so any run length fits in constant memory. */
#include <string.h>

#include "core.h"
#include "internal.h"

#define NB IOCHAR_SERIES_BINS
#define WIDTH0 1e-3

typedef struct series {
  iochar_spin lock;
  double width;
  int64_t bins[4][NB]; /* bytes read, bytes written, reads, writes */
} series;

static series S[IOCHAR_MOD_COUNT];

void iochar_series_reset(void) { memset(S, 0, sizeof S); }

/* Halve the resolution: bin i takes bins 2i and 2i+1. */
static void coarsen(series *s) {
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < NB / 2; i++)
      s->bins[k][i] = s->bins[k][2 * i] + s->bins[k][2 * i + 1];
    memset(&s->bins[k][NB / 2], 0, sizeof(int64_t) * NB / 2);
  }
  s->width *= 2;
}

void iochar_series_add(int m, int dir, double t, int64_t bytes) {
  series *s = &S[m];
  iochar_spin_lock(&s->lock);
  if (s->width == 0) s->width = WIDTH0;
  if (t < 0) t = 0;
  while (t >= s->width * NB) coarsen(s);
  int i = (int)(t / s->width);
  if (bytes > 0) s->bins[dir][i] += bytes;
  s->bins[2 + dir][i]++;
  iochar_spin_unlock(&s->lock);
}

int iochar_series_get(int m, double *width, int64_t *out, int nmax) {
  series *s = &S[m];
  iochar_spin_lock(&s->lock);
  int n = s->width == 0 ? 0 : NB;
  if (n > nmax) n = 0;
  *width = s->width;
  for (int k = 0; k < 4 && n; k++) memcpy(out + k * NB, s->bins[k], sizeof s->bins[k]);
  iochar_spin_unlock(&s->lock);
  return n;
}
