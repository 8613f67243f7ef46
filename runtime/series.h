/* I/O over time (runtime/series.c); the hot path's part is in access.h. */
#ifndef IOCHAR_SERIES_H
#define IOCHAR_SERIES_H

#include <stdint.h>

void iochar_series_reset(void);
/* Copy module m's series: width, and 4 x nbins int64 (bytes r/w, ops r/w). */
int iochar_series_get(int m, double *width, int64_t *bins, int nbins_max);
#define IOCHAR_SERIES_BINS 128
/* The per-rank heatmap (HEAT sections, MPI jobs): IOCHAR_HEAT_BINS bins of
 * bytes read and written per rank, each IOCHAR_SERIES_BINS / IOCHAR_HEAT_BINS
 * of the job's series bins; a row is i64 rank, i64 read[], i64 written[]. */
#define IOCHAR_HEAT_BINS 32
#define IOCHAR_HEAT_ROW (8 + 16 * IOCHAR_HEAT_BINS)

#endif
