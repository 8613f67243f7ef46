/* The log writer: header, compressed sections, and this process's log.
 * docs/log-format.md is the byte layout; reports/iochar/log.py is the mirror. */
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
#include "internal.h"
#include "log_dict.h"
#include "safefile.h"

double iochar_ts_shift;

/* ---- buffers ------------------------------------------------------------ */

void *iochar_buf_grow(iochar_buf *b, size_t n) {
  if (b->failed) return NULL;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    if (!q) {
      b->failed = 1;
      return NULL;
    }
    b->p = q;
    b->cap = cap;
  }
  void *at = b->p + b->len;
  b->len += n;
  return at;
}

void iochar_buf_put(iochar_buf *b, const void *p, size_t n) {
  void *at = iochar_buf_grow(b, n);
  if (at && n) memcpy(at, p, n);
}
/* Little-endian on every platform iochar targets (x86-64, aarch64). */
void iochar_buf_u8(iochar_buf *b, uint8_t v) { iochar_buf_put(b, &v, 1); }
void iochar_buf_u16(iochar_buf *b, uint16_t v) { iochar_buf_put(b, &v, 2); }
void iochar_buf_u32(iochar_buf *b, uint32_t v) { iochar_buf_put(b, &v, 4); }
void iochar_buf_u64(iochar_buf *b, uint64_t v) { iochar_buf_put(b, &v, 8); }
void iochar_buf_f64(iochar_buf *b, double v) { iochar_buf_put(b, &v, 8); }
void iochar_buf_free(iochar_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

static void put_str16(iochar_buf *b, const char *s) {
  size_t n = strlen(s);
  if (n > 65535) n = 65535;
  iochar_buf_u16(b, (uint16_t)n);
  iochar_buf_put(b, s, n);
}

/* ---- header and sections ------------------------------------------------ */

void iochar_log_header(uint8_t out[IOCHAR_HEADER_SIZE], uint64_t total, uint32_t nsections) {
  uint32_t version = IOCHAR_FORMAT_VERSION, hsize = IOCHAR_HEADER_SIZE;
  memcpy(out, "IOCHARLG", 8);
  memcpy(out + 8, &version, 4);
  memcpy(out + 12, &hsize, 4);
  memcpy(out + 16, &total, 8);
  memcpy(out + 24, &nsections, 4);
  uint32_t crc = (uint32_t)crc32(0, out, 28);
  memcpy(out + 28, &crc, 4);
}

/* Small payloads (JOB, MOUNTS, SCHEMA, RANKS, a small job's NAMES and
 * RECORDS: a dozen sections in most logs) are compressed from a copy of one
 * stream taken right after the dictionary was loaded: loading it (hashing its
 * 12 KB) and clearing a full-size hash table cost more than compressing such
 * a payload.  That stream has a 16 KB window (the dictionary and a small
 * payload fit) and a smaller hash, so the copy is cheap too: 15 us a section
 * where a fresh level-9 stream took 53.  The copies' buffers are kept for the
 * next section (small_alloc): freed, they went back to the kernel and came
 * back as fresh zeroed pages, a dozen times a log.  Built at the first log
 * write; the lock covers the template, the copies and their buffers. */
#define SMALL_PAYLOAD 8192
static z_stream small_tpl;
static int small_tpl_ok;
static pthread_mutex_t small_tpl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *p;
  size_t n;
} small_kept[8]; /* a copy takes 5 buffers: state, window, prev, head, pending */

/* The smallest kept buffer that fits, else a new one. */
static voidpf small_alloc(voidpf opaque, uInt items, uInt size) {
  (void)opaque;
  size_t n = (size_t)items * size, best = SIZE_MAX, at = 0;
  for (size_t i = 0; i < sizeof small_kept / sizeof *small_kept; i++)
    if (small_kept[i].p && small_kept[i].n >= n && small_kept[i].n < best)
      best = small_kept[i].n, at = i;
  if (best == SIZE_MAX) return malloc(n ? n : 1);
  void *p = small_kept[at].p;
  small_kept[at].p = NULL;
  return p;
}

static void small_free(voidpf opaque, voidpf p) {
  (void)opaque;
  for (size_t i = 0; i < sizeof small_kept / sizeof *small_kept; i++)
    if (!small_kept[i].p) {
      small_kept[i].p = p;
      small_kept[i].n = malloc_usable_size(p);
      return;
    }
  free(p);
}

static int deflate_start(z_stream *zs, int level, int wbits, int memlevel) {
  if (deflateInit2(zs, level, Z_DEFLATED, wbits, memlevel, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
  if (deflateSetDictionary(zs, iochar_log_dictionary, (uInt)iochar_log_dictionary_len) != Z_OK) {
    deflateEnd(zs);
    return -1;
  }
  return 0;
}

static int deflate_run(z_stream *zs, const void *raw, size_t rawlen, uint8_t *z, uLongf *clen) {
  zs->next_in = (Bytef *)(uintptr_t)(raw ? raw : (const void *)"");
  zs->avail_in = (uInt)rawlen;
  zs->next_out = z;
  zs->avail_out = (uInt)*clen;
  int rc = deflate(zs, Z_FINISH);
  *clen = zs->total_out;
  deflateEnd(zs);
  return rc == Z_STREAM_END ? 0 : -1;
}

/* One raw deflate stream (the section CRC covers it) against the preset
 * dictionary.  The level by size, measured on IOR and 16 x 1,000-file logs:
 * small payloads at 8 (the dictionary pays most there; 9 searched its hash
 * chains 3x longer for at most a byte a log), up to 64 KB at 6 (NAMES and a
 * rank's RECORDS: 9 took 4x the time for +-0.01% of bytes), 1 beyond.
 * runs: a SERIES payload (4 KB, mostly zero bins), where run-length matching
 * takes 3.5 us instead of 55 for 3-4 bytes more. */
static int deflate_all(const void *raw, size_t rawlen, uint8_t *z, uLongf *clen, int runs) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (rawlen > SMALL_PAYLOAD)
    return deflate_start(&zs, rawlen < (64u << 10) ? 6 : 1, -15, 9)
               ? -1
               : deflate_run(&zs, raw, rawlen, z, clen);
  /* Busy (another thread writes a log now, or a fork child inherited the
   * lock held): a stream of its own, same bytes. */
  if (pthread_mutex_trylock(&small_tpl_lock) != 0) {
    if (deflate_start(&zs, 8, -14, 7)) return -1;
    if (runs && deflateParams(&zs, 8, Z_RLE) != Z_OK) return deflateEnd(&zs), -1;
    return deflate_run(&zs, raw, rawlen, z, clen);
  }
  if (!small_tpl_ok) {
    small_tpl.zalloc = small_alloc;
    small_tpl.zfree = small_free;
    small_tpl_ok = deflate_start(&small_tpl, 8, -14, 7) == 0;
  }
  int rc = -1;
  if (small_tpl_ok && deflateCopy(&zs, &small_tpl) == Z_OK) { /* takes small_alloc along */
    if (runs && deflateParams(&zs, 8, Z_RLE) != Z_OK)         /* before any input: no flush */
      deflateEnd(&zs);
    else
      rc = deflate_run(&zs, raw, rawlen, z, clen);
  }
  pthread_mutex_unlock(&small_tpl_lock);
  return rc;
}

static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  for (; v >= 0x80; v >>= 7) p[n++] = (uint8_t)(v | 0x80);
  p[n++] = (uint8_t)v;
  return n;
}

int iochar_section_add(iochar_buf *out, const char *kind, const char *module, uint32_t count,
                       const void *raw, size_t rawlen) {
  uint8_t *names = NULL; /* NAMES entries are built as format 1, encoded here */
  if (strcmp(kind, "NAMES") == 0) {
    names = malloc(iochar_names_bound(rawlen, count));
    if (!names) return -1;
    rawlen = iochar_names_encode(raw, rawlen, count, names);
    raw = names;
  }
  uLongf clen = compressBound(rawlen) + 16;
  uint8_t *z = malloc(clen);
  if (!z || rawlen > UINT32_MAX || deflate_all(raw, rawlen, z, &clen, !strcmp(kind, "SERIES")) ||
      clen > UINT32_MAX) {
    free(z), free(names);
    return -1;
  }
  free(names);
  /* Format 3's section header (docs/log-format.md): kind and module as
   * length-prefixed names, count, raw and compressed lengths as LEB128
   * varints, then the payload's and the header's CRC-32: ~24 bytes where
   * format 2 spent a fixed 48, a sixth of a small job's log. */
  uint8_t h[IOCHAR_SECTION_HEADER_MAX];
  size_t hn = 0, kn = strnlen(kind, 8), mn = module ? strnlen(module, 16) : 0;
  h[hn++] = (uint8_t)kn;
  memcpy(h + hn, kind, kn), hn += kn;
  h[hn++] = (uint8_t)mn;
  if (mn) memcpy(h + hn, module, mn), hn += mn;
  hn += put_varint(h + hn, count);
  hn += put_varint(h + hn, rawlen);
  hn += put_varint(h + hn, clen);
  uint32_t pcrc = (uint32_t)crc32(0, z, clen);
  memcpy(h + hn, &pcrc, 4), hn += 4;
  uint32_t hcrc = (uint32_t)crc32(0, h, (uInt)hn);
  memcpy(h + hn, &hcrc, 4), hn += 4;
  iochar_buf_put(out, h, hn);
  iochar_buf_put(out, z, clen);
  free(z);
  return out->failed ? -1 : 0;
}

/* ---- job, mounts, schema ------------------------------------------------ */

static void kv_i64(iochar_buf *b, const char *k, int64_t v, uint32_t *n) {
  put_str16(b, k);
  iochar_buf_u8(b, 1);
  iochar_buf_u64(b, (uint64_t)v);
  (*n)++;
}
static void kv_f64(iochar_buf *b, const char *k, double v, uint32_t *n) {
  put_str16(b, k);
  iochar_buf_u8(b, 2);
  iochar_buf_f64(b, v);
  (*n)++;
}
static void kv_str(iochar_buf *b, const char *k, const char *v, uint32_t *n) {
  put_str16(b, k);
  iochar_buf_u8(b, 3);
  iochar_buf_u32(b, (uint32_t)strlen(v));
  iochar_buf_put(b, v, strlen(v));
  (*n)++;
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

int iochar_job_sections(iochar_buf *out, int *nsec) {
  const iochar_job *j = &iochar_job_info;
  iochar_buf b = {0};
  uint32_t n = 0;
  int64_t folded = 0;
  kv_str(&b, "version", IOCHAR_VERSION, &n);
  kv_i64(&b, "format", IOCHAR_FORMAT_VERSION, &n);
  kv_i64(&b, "nprocs", j->nprocs, &n);
  kv_i64(&b, "nnodes", j->nnodes > 0 ? j->nnodes : 1, &n);
  kv_i64(&b, "uid", (int64_t)getuid(), &n);
  kv_i64(&b, "pid", (int64_t)getpid(), &n);
  if (j->per_rank_log) kv_i64(&b, "rank", j->rank, &n);
  kv_f64(&b, "start_time", j->start_wall, &n);
  kv_f64(&b, "end_time", j->end_wall, &n);
  /* what timestamps count from: JOB start_time, the earliest moment a
   * process of the job started recording (not MPI_Init, Darshan's origin) */
  kv_str(&b, "time_origin", "start_time", &n);
  kv_str(&b, "exe", j->exe, &n);
  kv_str(&b, "cmdline", j->cmdline, &n);
  kv_str(&b, "jobid", j->jobid, &n);
  kv_str(&b, "hostname", j->hostname, &n);
  kv_str(&b, "user", j->user, &n);
  kv_i64(&b, "memory_bound", (int64_t)iochar_cfg.memory, &n);
  kv_i64(&b, "finalized", j->finalized, &n);
  if (j->mpi_version[0]) kv_str(&b, "mpi", j->mpi_version, &n);
  if (j->ended_by) kv_str(&b, "ended_by", j->ended_by, &n);
  if (j->ended_by && !strcmp(j->ended_by, "MPI_Abort")) kv_i64(&b, "abort_code", j->abort_code, &n);
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    if (!j->folded_files[m] || !iochar_modules[m]) continue;
    char key[64];
    snprintf(key, sizeof key, "folded.%s", iochar_modules[m]->name);
    kv_i64(&b, key, j->folded_files[m], &n);
    folded += j->folded_files[m];
  }
  kv_i64(&b, "folded_files", folded, &n);
  if (j->truncated_paths) kv_i64(&b, "truncated_paths", j->truncated_paths, &n);
  if (iochar_warnings_text()[0]) kv_str(&b, "warnings", iochar_warnings_text(), &n);
  kv_i64(&b, "partial",
         j->partial | (j->per_rank_log ? IOCHAR_PARTIAL_PER_RANK : 0) |
             (j->truncated_paths ? IOCHAR_PARTIAL_TRUNCATED_PATHS : 0),
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

/* ---- records ------------------------------------------------------------ */

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

typedef struct rows_ctx {
  int mi;
  iochar_buf *rows, *names;
  size_t n;
} rows_ctx;

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

/* ---- whole log of this process ----------------------------------------- */

void iochar_log_failed(const char *path) {
  if (iochar_warned() & (1ull << IOCHAR_WARN_LOGDIR)) return; /* said at start */
  iochar_warn_once(IOCHAR_WARN_LOG_WRITE, "cannot write log %s: %s", path, strerror(errno));
}

/* path with ".pid<pid>" (and ".<k>" from the second try) before a final
 * ".iochar": the documented name of a log whose name was taken. */
static int derived_name(const char *path, int k, char *out, size_t n) {
  size_t l = strlen(path);
  int ext = l > 7 && strcmp(path + l - 7, ".iochar") == 0;
  size_t stem = ext ? l - 7 : l;
  char more[16] = "";
  if (k > 1) snprintf(more, sizeof more, ".%d", k);
  int w = snprintf(out, n, "%.*s.pid%d%s%s", (int)stem, path, (int)getpid(), more,
                   ext ? ".iochar" : "");
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

int iochar_log_publish(int fd, const char *tmp, const char *path) {
  if (iochar_safe_close(fd, tmp)) return -1;
  /* Never replace: what is at path may be a log another process of this run
   * just wrote (IOCHAR_LOGFILE shared), a symlink, or another user's file. */
  int rc = iochar_safe_rename_noreplace(tmp, path);
  char alt[IOCHAR_PATH_MAX + 32];
  for (int k = 1; rc != 0 && errno == EEXIST && k <= 64; k++)
    if (derived_name(path, k, alt, sizeof alt) == 0) rc = iochar_safe_rename_noreplace(tmp, alt);
  if (rc != 0) iochar_safe_discard(-1, tmp);
  return rc;
}

/* Write buf to a fresh temporary beside path, then rename into place
 * (runtime/safefile.c: exclusive, unpredictable, 0600, no SIGXFSZ).  Any
 * failure (EFBIG, ENOSPC, EDQUOT, EIO...) removes the temporary. */
static int write_file(const char *path, const iochar_buf *b) {
  char tmp[IOCHAR_PATH_MAX + 64];
  if (iochar_log_dir_make() != 0) return -1;
  int fd = iochar_safe_create(path, tmp, sizeof tmp);
  if (fd < 0) return -1;
  if (iochar_write_all(fd, b->p, b->len) != 0) {
    iochar_safe_discard(fd, tmp);
    return -1;
  }
  return iochar_log_publish(fd, tmp, path);
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
