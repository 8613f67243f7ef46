/* The log's sections from records, in one place: the serial log
 * (runtime/log_writer.c) and each rank's part of an MPI job's log
 * (reducer/write.c) are both this function's output; only where the rows come
 * from differs (this process's records, or the records a rank owns after the
 * reduction). */
#include <stdlib.h>

#include "access.h"
#include "core.h"
#include "internal.h"

/* TOPK (per-rank logs only): each record's whole top-k tables, so that a
 * reader merging per-rank logs merges them as the MPI reduction does. */
static int topk_section(iochar_buf *body, int *nsec, int m, const uint8_t *rows, size_t n) {
  size_t tail = iochar_row_tail(m), rs = iochar_row_size(m);
  if (!tail || !n) return 0;
  iochar_buf b = {0};
  iochar_buf_u32(&b, IOCHAR_TOPK_SLOTS);
  iochar_buf_u32(&b, (uint32_t)(tail / (16 * IOCHAR_TOPK_SLOTS)));
  for (size_t i = 0; i < n; i++) {
    iochar_buf_put(&b, rows + i * rs, 8);
    iochar_buf_put(&b, rows + (i + 1) * rs - tail, tail);
  }
  int e = iochar_section_add(body, "TOPK", iochar_modules[m]->name, (uint32_t)n, b.p, b.len);
  iochar_buf_free(&b);
  if (!e) (*nsec)++;
  return e;
}

static int records_section(iochar_buf *body, int m, const iochar_buf *rows, size_t n) {
  uint8_t *cols = malloc(iochar_columns_bound(m, n));
  if (!cols) return -1;
  size_t clen = iochar_rows_to_columns(m, rows->p, n, cols); /* 0: it failed */
  int e = !clen ||
          iochar_section_add(body, "RECORDS", iochar_modules[m]->name, (uint32_t)n, cols, clen);
  free(cols);
  return e;
}

static int series_section(iochar_buf *body, int m, double width, uint32_t nbins,
                          const int64_t *bins) {
  iochar_buf b = {0};
  iochar_buf_f64(&b, width);
  iochar_buf_u32(&b, nbins);
  iochar_buf_u32(&b, 0);
  iochar_buf_put(&b, bins, 4 * IOCHAR_SERIES_BINS * 8);
  int e = iochar_section_add(body, "SERIES", iochar_modules[m]->name, nbins, b.p, b.len);
  iochar_buf_free(&b);
  return e;
}

int iochar_log_sections(iochar_buf *body, int *nsec, const iochar_log_parts *p) {
  if (p->head &&
      (iochar_job_sections(body, nsec) || iochar_schema_sections(body, nsec, p->present)))
    return -1;
  if (p->nnames) {
    if (iochar_section_add(body, "NAMES", NULL, p->nnames, p->names->p, p->names->len)) return -1;
    (*nsec)++;
  }
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    if (!p->present[m]) continue;
    if (p->nrecords[m]) {
      if (records_section(body, m, &p->records[m], p->nrecords[m])) return -1;
      (*nsec)++;
    }
    if (p->rank_totals && p->nrank_totals[m]) { /* RANKS rows made already (gathered) */
      if (iochar_section_add(body, "RANKS", iochar_modules[m]->name, (uint32_t)p->nrank_totals[m],
                             p->rank_totals[m].p, 64 * p->nrank_totals[m]))
        return -1;
      (*nsec)++;
    } else if (!p->rank_totals && p->nrank_rows[m]) {
      uint8_t tot[64];
      iochar_rank_totals(m, p->rank_rows[m].p, p->nrank_rows[m], p->rank, tot);
      if (iochar_section_add(body, "RANKS", iochar_modules[m]->name, 1, tot, 64)) return -1;
      (*nsec)++;
    }
    if (p->topk && topk_section(body, nsec, m, p->records[m].p, p->nrecords[m])) return -1;
    if (p->series && p->series[m].nbins) {
      if (series_section(body, m, p->series[m].width, p->series[m].nbins, p->series[m].bins))
        return -1;
      (*nsec)++;
    }
  }
  return body->failed ? -1 : 0;
}
