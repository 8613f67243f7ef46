/* The log's sections from records, in one place: the serial log
 * (runtime/log_writer.c) and each rank's part of an MPI job's log
 * (reducer/write.c) are both this function's output; only where the rows come
 * from differs (this process's records, or the records a rank owns after the
 * reduction).  Also the in-memory row layout, and the sections that
 * describe the process (JOB, MOUNTS, SCHEMA). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "config.h"
#include "core.h"
#include "jobkey.h"
#include "log_buf.h"
#include "log_codec.h"
#include "log_sections.h"
#include "mounts.h"
#include "warn.h"

/* ---- rows --------------------------------------------------------------- */

/* The in-memory row carries, after the logged counters, each top-k table
 * whole (IOCHAR_TOPK_SLOTS values then counts, schema order): the
 * cross-rank merge needs more than the 4 logged entries to stay exact. */
size_t iochar_row_tail(int mi) {
  const iochar_module *m = iochar_modules[mi];
  int first[2];
  if (!m->rw) return 0;
  return (size_t)iochar_rw_tables(m->rw, NULL, first, NULL) * 16 * IOCHAR_TOPK_SLOTS;
}

size_t iochar_row_size(int mi) {
  return 16 + 8 * (size_t)(iochar_modules[mi]->n_int + iochar_modules[mi]->n_flt) +
         iochar_row_tail(mi);
}

/* A record seen by one rank: its own time and bytes are fastest and slowest. */
void iochar_rank_load(const iochar_module *m, const int64_t *c, const double *f, double *time,
                      int64_t *bytes) {
  double t = 0;
  int64_t by = 0;
  /* schema order, as reports/iochar/merge.py sums them */
  for (uint32_t i = 0; i < m->n_flt; i++)
    if (m->flts[i].op == IOCHAR_OP_TIME) t += f[i];
  for (uint32_t i = 0; i < m->n_int; i++)
    if (m->ints[i].op == IOCHAR_OP_BYTES) by += c[i];
  *time = t;
  *bytes = by;
}

int iochar_rank_totals(int mi, const uint8_t *rows, size_t n, int rank, uint8_t out[64]) {
  const iochar_module *m = iochar_modules[mi];
  const iochar_rw_layout *L = m->rw;
  int64_t v[5] = {rank, 0, 0, 0, 0};
  double t[3] = {0, 0, 0};
  size_t rs = iochar_row_size(mi);
  for (size_t i = 0; i < n; i++) {
    const int64_t *c = (const int64_t *)(rows + i * rs + 16);
    const double *f = (const double *)(c + m->n_int);
    for (int d = 0; d < 2 && L; d++) {
      if (L->ops[d] >= 0) v[1 + d] += c[L->ops[d]];
      for (int k = 0; k < m->n_more_ops; k++) v[1 + d] += c[m->more_ops[d][k]];
      if (L->bytes[d] >= 0) v[3 + d] += c[L->bytes[d]];
    }
    for (int k = 0; k < 3 && L; k++)
      if (L->f_time[k] >= 0) t[k] += f[L->f_time[k]];
  }
  memcpy(out, v, 40);
  memcpy(out + 40, t, 24);
  return 0;
}

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
  size_t clen = iochar_rows_to_columns(m, rows->p, n, iochar_row_size(m), cols); /* 0: it failed */
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

/* HEAT: f64 width, u32 nbins, u32 0, then n rows of IOCHAR_HEAT_ROW bytes. */
static int heat_section(iochar_buf *body, int m, double width, const iochar_buf *rows, size_t n) {
  iochar_buf b = {0};
  iochar_buf_f64(&b, width);
  iochar_buf_u32(&b, IOCHAR_HEAT_BINS);
  iochar_buf_u32(&b, 0);
  iochar_buf_put(&b, rows->p, n * IOCHAR_HEAT_ROW);
  int e = b.failed ||
          iochar_section_add(body, "HEAT", iochar_modules[m]->name, (uint32_t)n, b.p, b.len);
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
    if (p->heat && p->nheat[m]) {
      if (heat_section(body, m, p->heat_width[m], &p->heat[m], p->nheat[m])) return -1;
      (*nsec)++;
    }
  }
  return body->failed ? -1 : 0;
}

/* ---- job, mounts, schema ------------------------------------------------ */

static void put_str16(iochar_buf *b, const char *s) {
  size_t n = strlen(s);
  if (n > 65535) n = 65535;
  iochar_buf_u16(b, (uint16_t)n);
  iochar_buf_put(b, s, n);
}

void iochar_kv_i64(iochar_buf *b, const char *k, int64_t v, uint32_t *n) {
  put_str16(b, k);
  iochar_buf_u8(b, 1);
  iochar_buf_u64(b, (uint64_t)v);
  (*n)++;
}
void iochar_kv_f64(iochar_buf *b, const char *k, double v, uint32_t *n) {
  put_str16(b, k);
  iochar_buf_u8(b, 2);
  iochar_buf_f64(b, v);
  (*n)++;
}
void iochar_kv_strn(iochar_buf *b, const char *k, const char *v, size_t len, uint32_t *n) {
  put_str16(b, k);
  iochar_buf_u8(b, 3);
  iochar_buf_u32(b, (uint32_t)len);
  iochar_buf_put(b, v, len);
  (*n)++;
}
static void kv_str(iochar_buf *b, const char *k, const char *v, uint32_t *n) {
  iochar_kv_strn(b, k, v, strlen(v), n);
}

/* Kernel pseudo file systems hold no job data: a mount of one is listed only
 * when a recorded file was found on it (its block size was asked for), as
 * Darshan also leaves them out; a container's dozen cgroup mounts were a
 * tenth of a small job's log.  A mount point mounted over again is listed
 * once, as the later mount (the one paths reach, and the one readers'
 * longest-prefix match picks). */
static int mount_listed(const iochar_mount *mt, int nm, int i) {
  static const char *const pseudo[] = {
      "proc",       "sysfs",    "devtmpfs",  "devpts", "cgroup",      "cgroup2",
      "securityfs", "debugfs",  "tracefs",   "pstore", "bpf",         "hugetlbfs",
      "fusectl",    "configfs", "mqueue",    "autofs", "binfmt_misc", "rpc_pipefs",
      "nsfs",       "efivarfs", "selinuxfs", "nfsd"};
  for (int j = i + 1; j < nm; j++)
    if (strcmp(mt[j].point, mt[i].point) == 0) return 0;
  if (mt[i].block_size) return 1;
  for (size_t k = 0; k < sizeof pseudo / sizeof *pseudo; k++)
    if (strcmp(mt[i].type, pseudo[k]) == 0) return 0;
  return 1;
}

/* The job of a process that is no MPI rank (runtime/jobkey.c; docs/log-format.md
 * "Jobs"), and every process's program name. */
static void jobkey_keys(iochar_buf *b, uint32_t *n, int mpi) {
  const iochar_jobkey *k = &iochar_jobkey_info;
  kv_str(b, "program", k->program, n);
  if (k->interpreter[0]) kv_str(b, "interpreter", k->interpreter, n);
  if (mpi || !k->key[0]) return;
  kv_str(b, "job_key", k->key, n);
  kv_str(b, "job_key_from", k->key_from, n);
  iochar_kv_i64(b, "proc_start", k->start, n);
  if (k->task_rank >= 0) {
    iochar_kv_i64(b, "task_rank", k->task_rank, n);
    kv_str(b, "task_rank_from", k->rank_from, n);
  }
  if (k->task_rank >= 0 && k->world_size > 0) {
    iochar_kv_i64(b, "world_size", k->world_size, n);
    kv_str(b, "world_size_from", k->world_from, n);
  }
  if (k->parent_pid > 0) {
    iochar_kv_i64(b, "parent_pid", k->parent_pid, n);
    iochar_kv_i64(b, "parent_start", k->parent_start, n);
  }
}

int iochar_job_sections(iochar_buf *out, int *nsec) {
  const iochar_job *j = &iochar_job_info;
  iochar_buf b = {0};
  uint32_t n = 0;
  int64_t folded = 0;
  kv_str(&b, "version", IOCHAR_VERSION, &n);
  iochar_kv_i64(&b, "format", IOCHAR_FORMAT_VERSION, &n);
  iochar_kv_i64(&b, "nprocs", j->nprocs, &n);
  iochar_kv_i64(&b, "nnodes", j->nnodes > 0 ? j->nnodes : 1, &n);
  iochar_kv_i64(&b, "uid", (int64_t)getuid(), &n);
  iochar_kv_i64(&b, "pid", (int64_t)getpid(), &n);
  if (j->per_rank_log) iochar_kv_i64(&b, "rank", j->rank, &n);
  iochar_kv_f64(&b, "start_time", j->start_wall, &n);
  iochar_kv_f64(&b, "end_time", j->end_wall, &n);
  /* what timestamps count from: JOB start_time, the earliest moment a
   * process of the job started recording (not MPI_Init, Darshan's origin) */
  kv_str(&b, "time_origin", "start_time", &n);
  kv_str(&b, "exe", j->exe, &n);
  kv_str(&b, "cmdline", j->cmdline, &n);
  kv_str(&b, "jobid", j->jobid, &n);
  kv_str(&b, "hostname", j->hostname, &n);
  kv_str(&b, "user", j->user, &n);
  jobkey_keys(&b, &n, j->mpi_initialized);
  iochar_kv_i64(&b, "memory_bound", (int64_t)iochar_cfg.memory, &n);
  iochar_kv_i64(&b, "finalized", j->finalized, &n);
  if (j->mpi_version[0]) kv_str(&b, "mpi", j->mpi_version, &n);
  if (j->ended_by) kv_str(&b, "ended_by", j->ended_by, &n);
  if (j->ended_by && !strcmp(j->ended_by, "MPI_Abort"))
    iochar_kv_i64(&b, "abort_code", j->abort_code, &n);
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    if (!j->folded_files[m] || !iochar_modules[m]) continue;
    char key[64];
    snprintf(key, sizeof key, "folded.%s", iochar_modules[m]->name);
    iochar_kv_i64(&b, key, j->folded_files[m], &n);
    folded += j->folded_files[m];
  }
  iochar_kv_i64(&b, "folded_files", folded, &n);
  if (j->truncated_paths) iochar_kv_i64(&b, "truncated_paths", j->truncated_paths, &n);
  if (iochar_warnings_text()[0]) kv_str(&b, "warnings", iochar_warnings_text(), &n);
  /* issue 41: the knobs that leave things out, so readers say so */
  int64_t ranks_left_out = 0;
  {
    char text[1024];
    iochar_modules_off_text(text, sizeof text);
    if (text[0]) kv_str(&b, "modules_off", text, &n);
    if (iochar_cfg.max_records)
      iochar_kv_i64(&b, "max_records", (int64_t)iochar_cfg.max_records, &n);
    if ((iochar_cfg.ranks || iochar_cfg.ranks_exclude) &&
        iochar_ranks_kept_text(j->nprocs, text, sizeof text)) {
      kv_str(&b, "ranks_kept", text, &n);
      ranks_left_out = IOCHAR_PARTIAL_RANKS_LEFT_OUT;
    }
  }
  iochar_kv_i64(&b, "partial",
                j->partial | (j->per_rank_log ? IOCHAR_PARTIAL_PER_RANK : 0) |
                    (j->truncated_paths ? IOCHAR_PARTIAL_TRUNCATED_PATHS : 0) | ranks_left_out,
                &n);
  int rc = iochar_section_add(out, "JOB", NULL, n, b.p, b.len);
  iochar_buf_free(&b);
  if (rc) return -1;
  (*nsec)++;

  const iochar_mount *mt;
  int nm = iochar_mounts(&mt);
  uint32_t listed = 0;
  for (int i = 0; i < nm; i++) {
    if (!mount_listed(mt, nm, i)) continue;
    iochar_buf_u32(&b, (uint32_t)mt[i].block_size);
    put_str16(&b, mt[i].type);
    put_str16(&b, mt[i].point);
    listed++;
  }
  rc = iochar_section_add(out, "MOUNTS", NULL, listed, b.p, b.len);
  iochar_buf_free(&b);
  if (rc) return -1;
  (*nsec)++;
  return 0;
}

int iochar_schema_sections(iochar_buf *out, int *nsec, const int present[IOCHAR_MOD_COUNT]) {
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) {
    const iochar_module *m = iochar_modules[mi];
    if (!m || !present[mi]) continue;
    iochar_buf b = {0};
    iochar_buf_u32(&b, m->version);
    iochar_buf_u32(&b, m->n_int);
    iochar_buf_u32(&b, m->n_flt);
    for (uint32_t i = 0; i < m->n_int; i++) {
      put_str16(&b, m->ints[i].name);
      iochar_buf_u8(&b, m->ints[i].op);
    }
    for (uint32_t i = 0; i < m->n_flt; i++) {
      put_str16(&b, m->flts[i].name);
      iochar_buf_u8(&b, m->flts[i].op);
    }
    int rc = iochar_section_add(out, "SCHEMA", m->name, m->n_int + m->n_flt, b.p, b.len);
    /* ROLES: one byte per counter, schema order (a kind of its own, so that
     * readers that predate it skip it). */
    b.len = 0;
    for (uint32_t i = 0; i < m->n_int; i++) iochar_buf_u8(&b, m->ints[i].role);
    for (uint32_t i = 0; i < m->n_flt; i++) iochar_buf_u8(&b, m->flts[i].role);
    if (!rc) rc = iochar_section_add(out, "ROLES", m->name, m->n_int + m->n_flt, b.p, b.len);
    iochar_buf_free(&b);
    if (rc) return -1;
    (*nsec) += 2;
  }
  return 0;
}
