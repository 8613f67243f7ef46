/* The serial log writer: this process's records as rows, and its whole log
 * (the sections from runtime/log_sections.c, the bytes from log_buf.c). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "access.h"
#include "config.h"
#include "core.h"
#include "log_buf.h"
#include "log_sections.h"
#include "log_writer.h"
#include "logdir.h"
#include "paths.h"
#include "records.h"
#include "safefile.h"
#include "series.h"
#include "warn.h"

/* ---- records ------------------------------------------------------------ */

typedef struct rows_ctx {
  int mi;
  iochar_buf *rows, *names;
  size_t n;
} rows_ctx;

static void fill_rank_stats(const iochar_module *m, int64_t *c, double *f, int rank) {
  double t;
  int64_t by;
  iochar_rank_load(m, c, f, &t, &by);
  for (uint32_t i = 0; i < m->n_int; i++) {
    uint8_t op = m->ints[i].op;
    if (op == IOCHAR_OP_FAST_RANK || op == IOCHAR_OP_SLOW_RANK) c[i] = rank;
    if (op == IOCHAR_OP_FAST_BYTES || op == IOCHAR_OP_SLOW_BYTES) c[i] = by;
  }
  for (uint32_t i = 0; i < m->n_flt; i++) {
    uint8_t op = m->flts[i].op;
    if (op == IOCHAR_OP_FAST_TIME || op == IOCHAR_OP_SLOW_TIME) f[i] = t;
    if (op == IOCHAR_OP_VAR_TIME || op == IOCHAR_OP_VAR_BYTES) f[i] = 0;
    if ((op == IOCHAR_OP_TS_START || op == IOCHAR_OP_TS_END) && f[i] != 0) f[i] += iochar_ts_shift;
  }
}

static void row_of(iochar_record *r, void *arg) {
  rows_ctx *x = arg;
  const iochar_module *m = iochar_modules[x->mi];
  if (!iochar_record_touched(r)) return;
  if (m->finish) m->finish(r);
  size_t rs = iochar_row_size(x->mi);
  uint8_t *row = iochar_buf_grow(x->rows, rs);
  if (!row) return;
  iochar_spin_lock(&r->lock);
  if (m->rw) iochar_rw_finish(r, m->rw);
  int64_t rank = iochar_job_info.rank;
  memcpy(row, &r->id, 8);
  memcpy(row + 8, &rank, 8);
  memcpy(row + 16, r->c, 8 * m->n_int);
  memcpy(row + 16 + 8 * m->n_int, r->c + m->n_int, 8 * m->n_flt);
  if (m->rw) {
    int first[2];
    const iochar_topk *t[2];
    int64_t *tail = (int64_t *)(row + 16 + 8 * (m->n_int + m->n_flt));
    int nt = iochar_rw_tables(m->rw, r->state, first, t);
    for (int k = 0; k < nt; k++) iochar_topk_dump(t[k], tail + 2 * IOCHAR_TOPK_SLOTS * k);
  }
  iochar_spin_unlock(&r->lock);
  fill_rank_stats(m, (int64_t *)(row + 16), (double *)(row + 16 + 8 * m->n_int), (int)rank);
  if (x->names) { /* a truncated name carries its "\0TRUNCATED" (records.c) */
    const char *path = iochar_record_path(r);
    size_t len = strlen(path) + (r->flags & IOCHAR_REC_TRUNCATED ? IOCHAR_TRUNC_MARK_LEN : 0);
    iochar_buf_u64(x->names, r->id);
    iochar_buf_u32(x->names, (uint32_t)len);
    iochar_buf_put(x->names, path, len);
  }
  x->n++;
}

size_t iochar_module_rows(int mi, iochar_buf *rows, iochar_buf *names) {
  rows_ctx x = {mi, rows, names, 0};
  if (iochar_modules[mi]) iochar_record_foreach(mi, row_of, &x);
  return x.n;
}

/* ---- whole log of this process ----------------------------------------- */

/* Set when iochar_log_publish gave its own warning (the log's name was
 * taken): the caller's iochar_log_failed then says nothing more. */
static int publish_warned;

void iochar_log_failed(const char *path) {
  if (publish_warned) {
    publish_warned = 0;
    return;
  }
  if (iochar_warned() & (1ull << IOCHAR_WARN_LOGDIR)) return; /* said at start */
  if (errno == EXDEV) /* safefile.h: its private directory's name, taken at every try */
    iochar_warn_once(IOCHAR_WARN_LOG_TAKEN,
                     "cannot write log %s: another user's directory took the name of its "
                     "private directory (left alone)",
                     path);
  else
    iochar_warn_once(IOCHAR_WARN_LOG_WRITE, "cannot write log %s: %s", path, strerror(errno));
}

/* path with ".pid<pid>" (and ".<k>" from the second try) before a final
 * ".iochar": the documented name of a log whose name was taken. */
static int derived_name(const char *path, int pid, int k, char *out, size_t n) {
  size_t l = strlen(path);
  int ext = l > 7 && strcmp(path + l - 7, ".iochar") == 0;
  size_t stem = ext ? l - 7 : l;
  char more[16] = "";
  if (k > 1) snprintf(more, sizeof more, ".%d", k);
  int w = snprintf(out, n, "%.*s.pid%d%s%s", (int)stem, path, pid, more, ext ? ".iochar" : "");
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

int iochar_log_publish(iochar_tmpfile *t, const char *path) {
  return iochar_log_publish_as(t, path, (int)getpid());
}

int iochar_log_publish_as(iochar_tmpfile *t, const char *path, int pid) {
  /* A named temporary is closed first (EIO or EDQUOT at close on NFS: no log
   * published); an unnamed one needs its descriptor to be linked. */
  if (t->kind != IOCHAR_TMP_UNNAMED) {
    int fd = t->fd;
    t->fd = -1;
    if (fd >= 0 && close(fd) != 0) {
      iochar_tmp_discard(t);
      return -1;
    }
  }
  /* Never replace: what is at path may be a log another process of this run
   * just wrote (IOCHAR_LOGFILE shared), a symlink, or another user's file.
   * In a directory another user can write, the name can also be taken over
   * between our link or rename and the check: an unnamed file is still ours
   * through its descriptor, and a copy of it is linked beside it (the kernel
   * does not link again a file that lost its name); a named one is gone.
   * The other file is left alone. */
  char alt[IOCHAR_PATH_MAX + 32];
  for (int k = 0;; k++) {
    const char *at = k ? alt : path;
    if (k && derived_name(path, pid, k, alt, sizeof alt) != 0) {
      errno = ENAMETOOLONG;
      break;
    }
    if (iochar_tmp_place(t, at) != 0) {
      if (errno == EEXIST && k < 64) continue;
      break;
    }
    if (!iochar_tmp_check(t, at)) {
      if (iochar_tmp_close(t) == 0) return 0;
      int e = errno; /* an unnamed file's close failed: its data is suspect */
      unlink(at);
      errno = e;
      return -1;
    }
    if (t->kind == IOCHAR_TMP_UNNAMED && k < 64 && iochar_tmp_renew(t, path) == 0) continue;
    iochar_tmp_close(t);
    iochar_warn_once(IOCHAR_WARN_LOG_TAKEN,
                     "log %s: another file took its name as it was written (left alone: not "
                     "the job's log); the log is lost",
                     at);
    publish_warned = 1;
    errno = EEXIST;
    return -1;
  }
  iochar_tmp_discard(t);
  return -1;
}

/* Write buf to a fresh file for path, then give it that name (runtime/
 * safefile.c: unnamed or private where another user could write, exclusive,
 * 0600, no SIGXFSZ).  Any failure (EFBIG, ENOSPC, EDQUOT, EIO...) removes
 * what was made. */
static int write_file(const char *path, const iochar_buf *b) {
  iochar_tmpfile t;
  if (iochar_log_dir_make() != 0) return -1;
  if (iochar_tmp_create(path, &t, 0) != 0) return -1;
  if (iochar_write_all(t.fd, b->p, b->len) != 0) {
    iochar_tmp_discard(&t);
    return -1;
  }
  return iochar_log_publish(&t, path);
}

int iochar_log_write_local(const char *path) {
  iochar_buf body = {0};
  int nsec = 0, present[IOCHAR_MOD_COUNT] = {0}, rc = -1;
  iochar_buf rows[IOCHAR_MOD_COUNT] = {0}, names = {0};
  size_t nrows[IOCHAR_MOD_COUNT] = {0};
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    if (!iochar_modules[m]) continue;
    nrows[m] = iochar_module_rows(m, &rows[m], &names);
    present[m] = nrows[m] > 0;
  }
  iochar_series_part *series = malloc(sizeof(iochar_series_part) * IOCHAR_MOD_COUNT);
  if (!series) goto out;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    int nb =
        present[m] ? iochar_series_get(m, &series[m].width, series[m].bins, IOCHAR_SERIES_BINS) : 0;
    series[m].nbins = (uint32_t)nb;
  }
  uint32_t nnames = 0;
  for (int m = 0; m < IOCHAR_MOD_COUNT && names.len; m++) nnames += (uint32_t)nrows[m];
  iochar_log_parts parts = {.head = 1,
                            .present = present,
                            .names = &names,
                            .nnames = nnames,
                            .records = rows,
                            .nrecords = nrows,
                            .rank_rows = rows,
                            .nrank_rows = nrows,
                            .rank = iochar_job_info.rank,
                            .topk = iochar_job_info.per_rank_log,
                            .series = series};
  int e = iochar_log_sections(&body, &nsec, &parts);
  free(series);
  if (e) goto out;
  if (iochar_extra_sections && iochar_extra_sections(&body, &nsec)) goto out;
  if (body.failed) goto out;
  {
    iochar_buf file = {0};
    uint8_t hdr[IOCHAR_HEADER_SIZE];
    iochar_log_header(hdr, IOCHAR_HEADER_SIZE + body.len, (uint32_t)nsec);
    iochar_buf_put(&file, hdr, sizeof hdr);
    iochar_buf_put(&file, body.p, body.len);
    rc = file.failed ? -1 : write_file(path, &file);
    iochar_buf_free(&file);
  }
out:
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) iochar_buf_free(&rows[m]);
  iochar_buf_free(&names);
  iochar_buf_free(&body);
  return rc;
}
