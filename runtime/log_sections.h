/* The log's sections (runtime/log_sections.c): JOB, MOUNTS, SCHEMA, and
 * those of a set of rows, for the serial log and each MPI rank's part. */
#ifndef IOCHAR_LOG_SECTIONS_H
#define IOCHAR_LOG_SECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "log_buf.h"
#include "series.h"

/* The in-memory row of a record of module m (u64 id, i64 rank, i64 c[n_int],
 * f64 f[n_flt], then its whole top-k tables): its size. */
size_t iochar_row_size(int m);
/* Bytes of whole top-k tables at the end of a row (not logged as counters). */
size_t iochar_row_tail(int m);
/* A rank's load on one record: the sum of its TIME counters and of its BYTES
 * counters (what FASTEST/SLOWEST and the variances compare). */
void iochar_rank_load(const iochar_module *m, const int64_t *c, const double *f, double *time,
                      int64_t *bytes);
/* Per-rank totals (one RANKS row) of module m from rows. */
int iochar_rank_totals(int m, const uint8_t *rows, size_t n, int rank, uint8_t out[64]);
/* One JOB key and its value (docs/log-format.md, JOB): *n counts them. */
void iochar_kv_i64(iochar_buf *b, const char *k, int64_t v, uint32_t *n);
void iochar_kv_f64(iochar_buf *b, const char *k, double v, uint32_t *n);
void iochar_kv_strn(iochar_buf *b, const char *k, const char *v, size_t len, uint32_t *n);
/* Sections describing this process: JOB (when job != 0), MOUNTS, SCHEMA. */
int iochar_job_sections(iochar_buf *out, int *nsections);
int iochar_schema_sections(iochar_buf *out, int *nsections, const int present[IOCHAR_MOD_COUNT]);
/* One module's I/O-over-time bins for the SERIES section (nbins 0: none). */
typedef struct iochar_series_part {
  double width;
  uint32_t nbins;
  int64_t bins[4 * IOCHAR_SERIES_BINS];
} iochar_series_part;
/* What a log, or one MPI rank's part of it, holds. */
typedef struct iochar_log_parts {
  int head;                         /* JOB, MOUNTS, SCHEMA: serial log, rank 0 */
  const int *present;               /* [IOCHAR_MOD_COUNT]: modules with rows in the log */
  const iochar_buf *names;          /* NAMES entries ... */
  uint32_t nnames;                  /* ... and their count (0: no section) */
  const iochar_buf *records;        /* [IOCHAR_MOD_COUNT]: RECORDS rows ... */
  const size_t *nrecords;           /* ... and their counts */
  const iochar_buf *rank_rows;      /* [IOCHAR_MOD_COUNT]: this rank's own rows ... */
  const size_t *nrank_rows;         /* ... their counts (RANKS: their totals) */
  int rank;                         /* whose RANKS row */
  const iochar_buf *rank_totals;    /* or, when not NULL: RANKS rows made already ... */
  const size_t *nrank_totals;       /* ... and their counts */
  int topk;                         /* TOPK of the RECORDS rows (per-rank logs) */
  const iochar_series_part *series; /* [IOCHAR_MOD_COUNT] or NULL */
  const iochar_buf *heat;           /* [IOCHAR_MOD_COUNT]: HEAT rows (NULL: none) ... */
  const size_t *nheat;              /* ... their counts */
  const double *heat_width;         /* [IOCHAR_MOD_COUNT]: their bin width */
} iochar_log_parts;
/* Append the sections of p to body (*nsec counts them); 0 or -1. */
int iochar_log_sections(iochar_buf *body, int *nsec, const iochar_log_parts *p);

#endif
