/* A tooled parent turns the live files its ended children left (_exit in a
 * signal handler, killed) into their logs: at the reap, or at its own end.
 * The log is the one reports/iochar/live.py makes from the same file
 * (recovered_log: the same rows, counters, JOB keys and name); this is its
 * mirror in C, step for step, so the two read the same.  The live file is
 * untrusted input: read with pread into private memory (no mapping of it:
 * a file that shrinks cannot raise SIGBUS), every offset and pointer checked
 * against what was read; on any doubt it is left for the reader's settle or
 * the epilogue (reports/iochar/livedir.py), and nothing is said. */
#include "reap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access.h"
#include "bytes.h"
#include "config.h"
#include "core.h"
#include "jobkey.h"
#include "live.h"
#include "log_buf.h"
#include "log_sections.h"
#include "log_writer.h"
#include "logdir.h"
#include "rw_state.h"
#include "safefile.h"

#define LH iochar_live_header
/* Most directory entries one scan looks at: the work of a reap stays bounded
 * whatever is left in the directory (the rest waits for the reader). */
#define SCAN_MAX 4096
/* A child with more records than this (arena bytes: ~4,000 files) has its
 * log made at the parent's end, not in its waitpid: a reap stays within tens
 * of ms (bench/reap_cost.py: 6-25 ms for 2,000 files). */
#define REAP_NOW_MAX (4u << 20)

/* ---- the live file, read -------------------------------------------------- */

typedef struct live_src {
  LH h;          /* its header */
  uint8_t *buf;  /* the file's used parts at their offsets (anonymous, NORESERVE) */
  size_t size;   /* the file's size (== h.map_size) */
  size_t t0, t1; /* the tables area: file offsets [t0, t1) */
} live_src;

static int pread_all(int fd, void *p, size_t n, off_t at) {
  while (n) {
    ssize_t r = pread(fd, p, n, at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1; /* an error, or the file shrank */
    p = (uint8_t *)p + r, n -= (size_t)r, at += r;
  }
  return 0;
}

/* The header is one this library writes: the same record layout, the same
 * schema (so this library's module table reads its records), areas in
 * order inside the file.  As live.py's read_header and check_layout, and
 * stricter (version 4 only, the layout this library has). */
static int header_ok(const LH *h, size_t size, const uint8_t *schema) {
  const LH *me = iochar_live_self();
  if (!me || memcmp(h->magic, "IOCHARLV", 8) || h->version != IOCHAR_LIVE_VERSION ||
      h->header_size != IOCHAR_LIVE_HEADER || h->map_size != size)
    return 0;
  if (h->rec_size != me->rec_size || h->rec_module_off != me->rec_module_off ||
      memcmp(h->rw_off, me->rw_off, sizeof h->rw_off) || h->tk_off != me->tk_off ||
      h->rec_state_off != me->rec_state_off || h->tk_below != me->tk_below ||
      h->rec_flags_off != me->rec_flags_off || h->meta_full_off != me->meta_full_off ||
      h->meta_c_off != me->meta_c_off)
    return 0;
  if (h->schema_off != me->schema_off || h->schema_len != me->schema_len ||
      h->agg_off != me->agg_off || h->agg_size != me->agg_size)
    return 0;
  if (schema && memcmp(schema, (const uint8_t *)me + me->schema_off, me->schema_len)) return 0;
  if (!(h->agg_off + h->agg_size <= h->arena_off && h->arena_off <= size &&
        h->arena_size <= size - h->arena_off && h->arena_used <= h->tables_low &&
        h->tables_low <= h->arena_size))
    return 0;
  if (h->state > IOCHAR_LIVE_LOGGED || h->nprocs < 0 || h->rank < -1 ||
      h->rank >= (h->nprocs > 1 ? h->nprocs : 1))
    return 0;
  if (!(isfinite(h->start_wall) && h->start_wall >= 0 && h->start_wall < 1e11 &&
        isfinite(h->end_wall) && h->end_wall >= 0 && h->end_wall < 1e11))
    return 0;
  return 1;
}

/* Read fd's used parts: header, schema and aggregates, the records, the
 * tables.  0, or -1 (not one to read here). */
static int load(int fd, live_src *s) {
  struct stat st;
  memset(s, 0, sizeof *s);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
      (size_t)st.st_size < IOCHAR_LIVE_HEADER)
    return -1;
  s->size = (size_t)st.st_size;
  if (pread_all(fd, &s->h, sizeof s->h, 0) || !header_ok(&s->h, s->size, NULL)) return -1;
  const LH *h = &s->h;
  void *p = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return -1;
  s->buf = p;
  s->t0 = h->arena_off + h->tables_low;
  s->t1 = h->arena_off + h->arena_size;
  size_t used = h->arena_off + h->arena_used;
  if (pread_all(fd, s->buf, used, 0) ||
      (s->t1 > s->t0 && pread_all(fd, s->buf + s->t0, s->t1 - s->t0, (off_t)s->t0)) ||
      !header_ok((const LH *)s->buf, s->size, s->buf + h->schema_off) ||
      memcmp(s->buf, &s->h, sizeof s->h)) { /* changed while read */
    munmap(s->buf, s->size);
    s->buf = NULL;
    return -1;
  }
  return 0;
}

/* The file offset of the n bytes at address ptr of the process, when they
 * are in its aggregates area or its tables area (live.py's _at), else 0. */
static size_t at_addr(const live_src *s, uint64_t ptr, size_t n) {
  uint64_t a = s->h.map_addr;
  if (!ptr || ptr < a) return 0;
  uint64_t off = ptr - a;
  if (off >= s->h.agg_off && off <= s->h.agg_off + s->h.agg_size &&
      n <= s->h.agg_off + s->h.agg_size - off)
    return (size_t)off;
  if (off >= s->t0 && off <= s->t1 && n <= s->t1 - off) return (size_t)off;
  return 0;
}

/* ---- a record finished, as live.py's _finish and _rank_stats ------------- */

/* Python's c[i] for i = -1 is the last counter: the same here, so that a
 * layout with a counter missing reads as the reference does. */
static int64_t *ci(int64_t *c, int n, int i) { return &c[i < 0 ? n + i : i]; }
static double *fi(double *f, int n, int i) { return &f[i < 0 ? n + i : i]; }

/* x += v, wrapping (counts from a corrupt file may be anything: no overflow) */
static void add(int64_t *x, int64_t v) { *x = (int64_t)((uint64_t)*x + (uint64_t)v); }

/* A table as live.py's _topk_read takes it: n clamped, last 0 when out of
 * range. */
static void topk_fix(iochar_topk *t) {
  if (t->n < 0 || t->n > IOCHAR_TOPK_SLOTS || t->last < 0 || t->last >= IOCHAR_TOPK_SLOTS) {
    t->n = t->n < 0 ? 0 : t->n > IOCHAR_TOPK_SLOTS ? IOCHAR_TOPK_SLOTS : t->n;
    t->last = 0;
  }
}

static void topk_add_k(iochar_topk *t, int64_t v, int64_t k) {
  if (t->n > 0 && t->val[t->last] == v) {
    add(&t->cnt[t->last], 1);
  } else {
    int mn = 0, found = 0;
    for (int i = 0; i < t->n; i++) {
      if (t->val[i] == v) {
        add(&t->cnt[i], 1);
        t->last = i, found = 1;
        break;
      }
      if (t->cnt[i] < t->cnt[mn]) mn = i;
    }
    if (!found) {
      if (t->n < IOCHAR_TOPK_SLOTS) {
        t->val[t->n] = v, t->cnt[t->n] = 1;
        t->last = t->n++;
      } else {
        t->val[mn] = v;
        add(&t->cnt[mn], 1);
        t->last = mn;
      }
    }
  }
  add(&t->cnt[t->last], k - 1);
}

/* The four most counted (count desc, value asc) into c[first..first+7];
 * the APPROX counter after them stays as recorded (live.py). */
static void topk_emit(const iochar_topk *t, int64_t *c, int first) {
  int idx[IOCHAR_TOPK_SLOTS];
  iochar_topk_order(t, idx); /* t->n clamped by topk_fix */
  for (int k = 0; k < 4; k++) {
    c[first + k] = k < t->n ? t->val[idx[k]] : 0;
    c[first + 4 + k] = k < t->n ? t->cnt[idx[k]] : 0;
  }
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* How many of off, off+n, ..., off+(k-1)n are not multiples of a (live.py's
 * _misses); -1 when the answer would take too long (a corrupt file). */
static int64_t misses(int64_t off, int64_t n, int64_t a, int64_t k) {
  if (a <= 0 || k <= 0) return 0;
  int64_t g = gcd64(n, a);
  if (off % g) return k;
  int64_t period = a / g, full = k / period, rem = k % period, hits = full;
  if (rem > (1 << 20)) return -1;
  for (int64_t i = 0; i < rem; i++)
    if (((__int128)off + (__int128)i * n) % a == 0) hits++;
  return k - hits;
}

/* The deferred run and the top-4 tables of a record (state: the file offset
 * of its state, 0: none).  0, or -1 (a corrupt file). */
static int finish(const live_src *s, const iochar_module *m, int64_t *c, double *f, size_t state) {
  const iochar_rw_layout *L = m->rw;
  int ni = (int)m->n_int, nf = (int)m->n_flt;
  iochar_topk tk[2];
  memset(tk, 0, sizeof tk);
  if (state) {
    iochar_rw_state st;
    memcpy(&st, s->buf + state, sizeof st);
    iochar_rw_topk t;
    memcpy(&t, s->buf + state - IOCHAR_RW_TK_BYTES, sizeof t);
    tk[0] = t.access, tk[1] = t.stride;
    topk_fix(&tk[0]), topk_fix(&tk[1]);
    int64_t k = st.run_k, n = st.run_len, nxt = st.run_next, off;
    int d = (uint8_t)st.run_dir, timed = (uint8_t)st.run_timed;
    double t0 = st.run_t;
    if (k > 0 && d <= 1 && n > 0 && (__int128)k * n < (__int128)1 << 62) {
      if (__builtin_sub_overflow(nxt, k * n, &off)) return -1;
      if (!timed && L->ops[d] >= 0) {
        add(&c[L->ops[d]], k);
        if (L->f_start[d] >= 0 && isfinite(t0)) {
          double *fs = fi(f, nf, L->f_start[d]), *fe = fi(f, nf, L->f_end[d]);
          if (*fs == 0 || t0 < *fs) *fs = t0;
          if (t0 > *fe) *fe = t0;
        }
      }
      if (L->bytes[d] >= 0) add(&c[L->bytes[d]], k * n);
      if (L->size_bin0[d] >= 0) add(&c[L->size_bin0[d] + iochar_size_bin(n)], k);
      if (L->access1 >= 0) topk_add_k(&tk[0], n, k);
      if (L->file_not_aligned >= 0) {
        int64_t miss = misses(off, n, *ci(c, ni, L->file_alignment), k);
        if (miss < 0) return -1;
        add(&c[L->file_not_aligned], miss);
      }
      if (L->consec[d] >= 0) add(&c[L->consec[d]], k);
      if (L->seq[d] >= 0) add(&c[L->seq[d]], k);
      if (L->max_byte[d] >= 0 && nxt - 1 > c[L->max_byte[d]]) c[L->max_byte[d]] = nxt - 1;
    }
  }
  if (L->access1 >= 0) topk_emit(&tk[0], c, L->access1);
  if (L->stride1 >= 0) topk_emit(&tk[1], c, L->stride1);
  return 0;
}

/* live.py's _touched: a counter other than the two alignments, or a time. */
static int touched(const iochar_module *m, const int64_t *c, const double *f) {
  const iochar_rw_layout *L = m->rw;
  for (int i = 0; i < (int)m->n_int; i++)
    if (c[i] && !(L && (i == L->mem_alignment || i == L->file_alignment))) return 1;
  for (uint32_t i = 0; i < m->n_flt; i++)
    if (f[i] != 0) return 1;
  return 0;
}

/* ---- the walk: live.py's _walk_v3 and _entry ------------------------------ */

typedef struct walk {
  const live_src *s;
  int64_t rank;
  iochar_buf rows[IOCHAR_MOD_COUNT], names;
  size_t nrows[IOCHAR_MOD_COUNT];
  double tend;
  int64_t truncated;
  int64_t *c; /* one record's counters (the most any module has) */
  struct made {
    uint64_t id;
    int mi;
  } * made;
  size_t nmade, cap;
  size_t *entries; /* file offsets of the entries not made full */
  size_t nentries, ecap;
} walk;

static int made_cmp(const void *a, const void *b) {
  const struct made *x = a, *y = b;
  if (x->mi != y->mi) return x->mi < y->mi ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t c = *cap ? *cap * 2 : 256;
  void *q = realloc(*p, c * size);
  if (!q) return -1;
  *p = q, *cap = c;
  return 0;
}

/* One record's row (when touched): finished, its rank statistics, its name. */
static int row(walk *w, int mi, uint64_t id, int64_t *c, const uint8_t *name, size_t len,
               size_t state, int trunc) {
  const iochar_module *m = iochar_modules[mi];
  double *f = (double *)(c + m->n_int);
  if (!touched(m, c, f)) return 0;
  if (m->rw && finish(w->s, m, c, f, state)) return -1;
  double t;
  int64_t by;
  iochar_rank_load(m, c, f, &t, &by); /* live.py's _rank_stats */
  for (uint32_t i = 0; i < m->n_int; i++) {
    uint8_t op = m->ints[i].op;
    if (op == IOCHAR_OP_FAST_RANK || op == IOCHAR_OP_SLOW_RANK) c[i] = w->rank;
    if (op == IOCHAR_OP_FAST_BYTES || op == IOCHAR_OP_SLOW_BYTES) c[i] = by;
  }
  for (uint32_t i = 0; i < m->n_flt; i++) {
    uint8_t op = m->flts[i].op;
    if (op == IOCHAR_OP_FAST_TIME || op == IOCHAR_OP_SLOW_TIME) f[i] = t;
    if (op == IOCHAR_OP_VAR_TIME || op == IOCHAR_OP_VAR_BYTES) f[i] = 0;
    if (op == IOCHAR_OP_TS_END && isfinite(f[i]) && f[i] > w->tend) w->tend = f[i];
  }
  size_t rs = iochar_row_size(mi);
  uint8_t *r = iochar_buf_grow(&w->rows[mi], rs);
  if (!r) return -1;
  memset(r, 0, rs);
  memcpy(r, &id, 8);
  memcpy(r + 8, &w->rank, 8);
  memcpy(r + 16, c, 8 * (size_t)(m->n_int + m->n_flt));
  iochar_buf_u64(&w->names, id);
  iochar_buf_u32(&w->names, (uint32_t)len);
  iochar_buf_put(&w->names, name, len);
  w->nrows[mi]++;
  w->truncated += trunc;
  return w->names.failed || w->rows[mi].failed ? -1 : 0;
}

/* The module of the record at off, or -1 (past the end, unknown). */
static int head_at(const walk *w, size_t off, size_t end) {
  const live_src *s = w->s;
  if (off + s->h.rec_size > end) return -1;
  uint16_t mi = iochar_u16_at(s->buf + off + s->h.rec_module_off);
  return mi < IOCHAR_MOD_COUNT && iochar_modules[mi] ? mi : -1;
}

/* The name at p (NUL-ended before end) with its truncation mark when flags
 * say so: its length (mark included), or -1. */
static long name_at(const uint8_t *buf, size_t p, size_t end, int trunc, size_t *nul) {
  if (p > end) return -1;
  const uint8_t *z = memchr(buf + p, 0, end - p);
  if (!z) return -1;
  *nul = (size_t)(z - buf);
  size_t len = *nul - p;
  if (trunc) {
    if (*nul + IOCHAR_TRUNC_MARK_LEN >= end || memcmp(z, IOCHAR_TRUNC_MARK, IOCHAR_TRUNC_MARK_LEN))
      return -1;
    len += IOCHAR_TRUNC_MARK_LEN;
  }
  return (long)len;
}

static int walk_area(walk *w, size_t start, size_t end, int agg) {
  const live_src *s = w->s;
  const uint8_t *buf = s->buf;
  size_t rs = s->h.rec_size;
  w->nmade = w->nentries = 0;
  for (size_t off = start; off < end;) {
    int mi = head_at(w, off, end);
    if (mi < 0) return -1;
    const iochar_module *m = iochar_modules[mi];
    uint64_t id = iochar_u64_at(buf + off);
    uint16_t flags = iochar_u16_at(buf + off + s->h.rec_flags_off);
    int trunc = flags & IOCHAR_REC_TRUNCATED;
    size_t nul;
    if (flags & IOCHAR_REC_META) {
      size_t p = off + s->h.meta_c_off + 8 * (size_t)iochar_meta_count[mi];
      long len = name_at(buf, p, end, trunc, &nul);
      if (len < 0) return -1;
      if (!iochar_u64_at(buf + off + s->h.meta_full_off)) {
        if (grow((void **)&w->entries, &w->ecap, w->nentries, sizeof *w->entries)) return -1;
        w->entries[w->nentries++] = off;
      }
      off += (s->h.meta_c_off + 8 * (size_t)iochar_meta_count[mi] + (size_t)len + 1 + 7) & ~7ul;
      continue;
    }
    if (grow((void **)&w->made, &w->cap, w->nmade, sizeof *w->made)) return -1;
    w->made[w->nmade++] = (struct made){id, mi};
    size_t nc = m->n_int + m->n_flt, p = off + rs + 8 * nc;
    long len = name_at(buf, p, end, trunc, &nul);
    if (len < 0) return -1;
    size_t state = 0;
    if (m->rw) {
      uint64_t ptr = iochar_u64_at(buf + off + s->h.rec_state_off);
      size_t below = s->h.tk_below;
      size_t at = ptr >= below ? at_addr(s, ptr - below, below + m->state_size) : 0;
      state = at ? at + below : 0;
    }
    memcpy(w->c, buf + off + rs, 8 * nc);
    if (row(w, mi, id, w->c, buf + p, (size_t)len, state, trunc)) return -1;
    off += (rs + 8 * nc + (agg ? 16 : (size_t)len) + 1 + 7) & ~7ul;
    if (agg && m->rw) off += s->h.tk_below + ((m->state_size + 7) & ~7ul);
  }
  /* an entry whose record is there too was made full just before the end:
   * the record has everything it counted */
  qsort(w->made, w->nmade, sizeof *w->made, made_cmp);
  for (size_t k = 0; k < w->nentries; k++) {
    size_t off = w->entries[k], nul;
    int mi = iochar_u16_at(buf + off + s->h.rec_module_off);
    const iochar_module *m = iochar_modules[mi];
    struct made key = {iochar_u64_at(buf + off), mi};
    if (bsearch(&key, w->made, w->nmade, sizeof key, made_cmp)) continue;
    int trunc = iochar_u16_at(buf + off + s->h.rec_flags_off) & IOCHAR_REC_TRUNCATED;
    size_t c_off = off + s->h.meta_c_off, p = c_off + 8 * (size_t)iochar_meta_count[mi];
    long len = name_at(buf, p, end, trunc, &nul);
    memset(w->c, 0, 8 * (size_t)(m->n_int + m->n_flt));
    for (int j = 0; j < iochar_meta_count[mi]; j++) /* floating ones stored as doubles */
      memcpy(&w->c[iochar_meta_index[mi][j]], buf + c_off + 8 * (size_t)j, 8);
    if (row(w, mi, key.id, w->c, buf + p, (size_t)len, 0, trunc)) return -1;
  }
  return 0;
}

/* ---- the log --------------------------------------------------------------- */

static void kv_field(iochar_buf *b, const char *k, const char *v, size_t size, uint32_t *n) {
  iochar_kv_strn(b, k, v, strnlen(v, size), n);
}
#define KV_FIELD(b, k, field, n) kv_field(b, k, field, sizeof(field), n)
static int field_set(const char *v) { return v[0] != 0; }

/* live.py's JOB of a recovered log, key for key and in its order. */
static int job_section(iochar_buf *out, const LH *h, const walk *w) {
  static const char *const ended[] = {"killed", "_exit", "MPI_Abort", "logged"};
  iochar_buf b = {0};
  uint32_t n = 0;
  int mpi = h->mpi_initialized != 0;
  iochar_kv_strn(&b, "version", "recovered", 9, &n);
  iochar_kv_i64(&b, "format", 1, &n);
  iochar_kv_i64(&b, "nprocs", mpi ? (h->nprocs > 1 ? h->nprocs : 1) : 1, &n);
  iochar_kv_i64(&b, "nnodes", 1, &n);
  iochar_kv_i64(&b, "uid", h->uid, &n);
  iochar_kv_i64(&b, "pid", h->pid, &n);
  if (mpi) iochar_kv_i64(&b, "rank", h->rank, &n);
  double end = (h->state == IOCHAR_LIVE_EXIT || h->state == IOCHAR_LIVE_ABORT) && h->end_wall
                   ? h->end_wall
                   : h->start_wall + w->tend;
  iochar_kv_f64(&b, "start_time", h->start_wall, &n);
  iochar_kv_f64(&b, "end_time", end > h->start_wall ? end : h->start_wall, &n);
  KV_FIELD(&b, "exe", h->exe, &n);
  KV_FIELD(&b, "cmdline", h->cmdline, &n);
  KV_FIELD(&b, "jobid", h->jobid, &n);
  KV_FIELD(&b, "hostname", h->hostname, &n);
  KV_FIELD(&b, "user", h->user, &n);
  iochar_kv_i64(&b, "memory_bound", (int64_t)h->memory_bound, &n);
  iochar_kv_i64(&b, "finalized", 0, &n);
  if (field_set(h->mpi_version)) KV_FIELD(&b, "mpi", h->mpi_version, &n);
  /* the process's job (live.py's _jobkey): an MPI rank keeps its program only */
  if (field_set(h->program)) KV_FIELD(&b, "program", h->program, &n);
  if (field_set(h->interpreter)) KV_FIELD(&b, "interpreter", h->interpreter, &n);
  if (!mpi && field_set(h->job_key)) {
    KV_FIELD(&b, "job_key", h->job_key, &n);
    KV_FIELD(&b, "job_key_from", h->job_key_from, &n);
    iochar_kv_i64(&b, "proc_start", h->proc_start, &n);
    if (h->task_rank >= 0 && field_set(h->rank_from)) {
      iochar_kv_i64(&b, "task_rank", h->task_rank, &n);
      KV_FIELD(&b, "task_rank_from", h->rank_from, &n);
      if (h->world_size > 0) {
        iochar_kv_i64(&b, "world_size", h->world_size, &n);
        KV_FIELD(&b, "world_size_from", h->world_from, &n);
      }
    }
    if (h->parent_pid > 0) {
      iochar_kv_i64(&b, "parent_pid", h->parent_pid, &n);
      iochar_kv_i64(&b, "parent_start", h->parent_start, &n);
    }
  }
  int64_t folded = 0;
  for (int mi = 0; mi < IOCHAR_MOD_COUNT && mi < 16; mi++) { /* the schema's order */
    if (!iochar_modules[mi] || h->folded[mi] <= 0) continue;
    char key[64];
    snprintf(key, sizeof key, "folded.%s", iochar_modules[mi]->name);
    iochar_kv_i64(&b, key, h->folded[mi], &n);
    folded += h->folded[mi];
  }
  iochar_kv_i64(&b, "folded_files", folded, &n);
  iochar_kv_i64(&b, "partial",
                (h->partial & 0xff) | IOCHAR_PARTIAL_RECOVERED |
                    (mpi ? IOCHAR_PARTIAL_PER_RANK : 0) |
                    (w->truncated ? IOCHAR_PARTIAL_TRUNCATED_PATHS : 0),
                &n);
  if (w->truncated) iochar_kv_i64(&b, "truncated_paths", w->truncated, &n);
  iochar_kv_i64(&b, "recovered", 1, &n);
  const char *e = ended[h->state];
  iochar_kv_strn(&b, "ended_by", e, strlen(e), &n);
  if (h->state == IOCHAR_LIVE_EXIT) iochar_kv_i64(&b, "exit_status", h->status, &n);
  if (h->state == IOCHAR_LIVE_ABORT) iochar_kv_i64(&b, "abort_code", h->status, &n);
  int rc = b.failed || iochar_section_add(out, "JOB", NULL, n, b.p, b.len);
  iochar_buf_free(&b);
  return rc ? -1 : 0;
}

/* The log's bytes into file (header and sections). 0 or -1. */
static int build(const live_src *s, iochar_buf *file) {
  walk w;
  memset(&w, 0, sizeof w);
  w.s = s;
  w.rank = s->h.mpi_initialized ? s->h.rank : 0;
  size_t most = 0;
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++)
    if (iochar_modules[mi] && iochar_modules[mi]->n_int + iochar_modules[mi]->n_flt > most)
      most = iochar_modules[mi]->n_int + iochar_modules[mi]->n_flt;
  w.c = malloc(8 * most);
  int rc = -1, nsec = 0, present[IOCHAR_MOD_COUNT] = {0};
  iochar_buf body = {0};
  if (!w.c || walk_area(&w, s->h.agg_off, s->h.agg_off + s->h.agg_size, 1) ||
      walk_area(&w, s->h.arena_off, s->h.arena_off + s->h.arena_used, 0))
    goto out;
  uint32_t nnames = 0;
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) {
    present[mi] = w.nrows[mi] > 0;
    nnames += (uint32_t)w.nrows[mi];
  }
  iochar_log_parts parts = {.present = present,
                            .names = &w.names,
                            .nnames = nnames,
                            .records = w.rows,
                            .nrecords = w.nrows,
                            .rank_rows = w.rows,
                            .nrank_rows = w.nrows,
                            .rank = (int)w.rank};
  if (job_section(&body, &s->h, &w)) goto out;
  nsec++;
  if (iochar_schema_sections(&body, &nsec, present) || iochar_log_sections(&body, &nsec, &parts) ||
      body.failed)
    goto out;
  uint8_t hdr[IOCHAR_HEADER_SIZE];
  iochar_log_header(hdr, IOCHAR_HEADER_SIZE + body.len, (uint32_t)nsec);
  iochar_buf_put(file, hdr, sizeof hdr);
  iochar_buf_put(file, body.p, body.len);
  rc = file->failed ? -1 : 0;
out:
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) iochar_buf_free(&w.rows[mi]);
  iochar_buf_free(&w.names);
  iochar_buf_free(&body);
  free(w.c);
  free(w.made);
  free(w.entries);
  return rc;
}

/* The log of the live file fd into a new file at out (".pid<pid>" beside
 * when the name is taken: never replacing one).  0 or -1. */
static int convert_fd(int fd, const char *out, int pid) {
  live_src s;
  if (load(fd, &s)) return -1;
  iochar_buf file = {0};
  int rc = build(&s, &file);
  munmap(s.buf, s.size);
  iochar_tmpfile t;
  if (!rc) rc = iochar_tmp_create(out, &t, 0);
  if (!rc && iochar_write_all(t.fd, file.p, file.len) != 0) {
    iochar_tmp_discard(&t);
    rc = -1;
  } else if (!rc) {
    rc = iochar_log_publish_as(&t, out, pid);
  }
  iochar_buf_free(&file);
  return rc;
}

__attribute__((visibility("default"))) int iochar_reap_convert(const char *live, const char *out) {
  int e = errno;
  iochar_in_tool++;
  int fd = open(live, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  int rc = fd < 0 ? -1 : convert_fd(fd, out, (int)getpid());
  if (fd >= 0) close(fd);
  iochar_in_tool--;
  errno = e;
  return rc;
}

/* ---- finding a child's live file -------------------------------------------- */

/* Does process pid, started at start (clock ticks after boot, as the
 * header's proc_start), still run?  Gone, a zombie, or another process
 * with its pid: no. */
static int alive(int pid, long long start) {
  char p[64], b[1024];
  snprintf(p, sizeof p, "/proc/%d/stat", pid);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return 0;
  b[n] = 0;
  char *q = strrchr(b, ')');
  if (!q || q[1] != ' ' || q[2] == 'Z' || q[2] == 'X') return 0;
  q += 2; /* the state, field 3; the start is field 22 */
  for (int k = 3; k < 22 && q; k++) q = strchr(q, ' '), q = q ? q + 1 : NULL;
  if (!q || !start) return 1; /* not known: the safe side */
  return strtoll(q, NULL, 10) == start;
}

static int private_at(int dfd, const char *name) {
  int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077))) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The key directory's name of log directory real (live.c, create_file). */
static const char *key_name(const char *real, char key[17]) {
  uint64_t v = iochar_hash_path(real);
  for (int i = 15; i >= 0; i--, v >>= 4) key[i] = "0123456789abcdef"[v & 15];
  key[16] = 0;
  return key;
}

/* This process's log directory (real) and its key directory in the live
 * directory (runtime/live.c, create_file), opened; ufd: the user's
 * directory.  -1 when either is missing (nothing left there). */
static int key_dir(char *real, size_t n, int *ufd) {
  if (iochar_log_dir_real(real, n) != 0) return -1;
  int top = open(iochar_cfg.livedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top < 0) return -1;
  char name[32];
  snprintf(name, sizeof name, "iochar-%u", (unsigned)getuid());
  *ufd = private_at(top, name);
  close(top);
  if (*ufd < 0) return -1;
  char key[17];
  int fd = private_at(*ufd, key_name(real, key));
  if (fd < 0) close(*ufd);
  return fd;
}

/* .<log>.<16 hex>.live: the log's name (without .iochar) into out. */
static int log_stem(const char *name, char *out, size_t n) {
  size_t l = strlen(name);
  if (name[0] != '.' || l < 1 + 1 + 1 + 16 + 5 || strcmp(name + l - 5, ".live") ||
      name[l - 5 - 16 - 1] != '.')
    return -1;
  for (size_t i = l - 5 - 16; i < l - 5; i++)
    if (!strchr("0123456789abcdef", name[i])) return -1;
  size_t stem = l - 5 - 16 - 1 - 1;
  if (stem >= 7 && !memcmp(name + 1 + stem - 7, ".iochar", 7)) stem -= 7;
  if (stem + 1 > n) return -1;
  memcpy(out, name + 1, stem);
  out[stem] = 0;
  return 0;
}

/* Child pid's (want > 0) or any ended child's (want 0) live file name in
 * the key directory dfd, made its log and removed.  As livedir.py's settle:
 * the log goes where the header says the process's log goes (here: this
 * process's log directory, real), named as `recover` names it; a file
 * marked logged only goes. */
static int complete(int dfd, const char *name, const char *real, int want) {
  char stem[512], out[IOCHAR_PATH_MAX + 600];
  LH *h = NULL;
  int gone = 0;
  if (log_stem(name, stem, sizeof stem)) return 0;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return 0;
  struct {
    char magic[8];
    uint32_t version, header_size;
    uint64_t map_size;
    uint32_t state;
    int32_t status, pid;
  } head;
  int32_t ppid = 0;
  _Static_assert(offsetof(LH, pid) == 32, "pid");
  if (pread_all(fd, &head, sizeof head, 0) || memcmp(head.magic, "IOCHARLV", 8) ||
      (want && head.pid != want) || head.pid <= 0 || head.pid == getpid() ||
      pread_all(fd, &ppid, 4, offsetof(LH, parent_pid)) || ppid != getpid())
    goto done;
  /* one maker at a time: another reader (settle, the epilogue) holds it
   * while it makes the log and removes the file */
  struct stat a, b;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &a) != 0 ||
      fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) != 0 || a.st_ino != b.st_ino ||
      a.st_dev != b.st_dev)
    goto done; /* made a log and removed meanwhile */
  h = malloc(sizeof *h);
  if (!h || pread_all(fd, h, sizeof *h, 0) || !header_ok(h, (size_t)a.st_size, NULL) ||
      alive(h->pid, h->proc_start) || (want && h->arena_used > REAP_NOW_MAX))
    goto out;
  if (h->state == IOCHAR_LIVE_LOGGED) { /* its log is there: the file only goes */
    gone = unlinkat(dfd, name, 0) == 0;
    goto out;
  }
  /* killed in its end (end_wall set: its log being written, maybe there), or
   * an MPI_Abort (its rank's log may be there): the reader tells by the
   * logs' identities */
  if (h->state == IOCHAR_LIVE_ABORT || (h->state == IOCHAR_LIVE_RUNNING && h->end_wall != 0))
    goto out;
  /* where its log goes: this process's log directory */
  size_t dl = strnlen(h->log_dest, sizeof h->log_dest);
  const char *slash = dl < sizeof h->log_dest ? strrchr(h->log_dest, '/') : NULL;
  if (!slash || (size_t)(slash - h->log_dest) != strlen(real) ||
      memcmp(h->log_dest, real, strlen(real)))
    goto out;
  char rank[32] = "";
  if (h->mpi_initialized) {
    snprintf(rank, sizeof rank, ".rank%d", h->rank);
    if (strstr(stem, rank)) rank[0] = 0;
  }
  if (snprintf(out, sizeof out, "%s/%s%s.recovered.iochar", real, stem, rank) >= (int)sizeof out)
    goto out;
  if (convert_fd(fd, out, h->pid) == 0) gone = unlinkat(dfd, name, 0) == 0;
out:
  free(h);
done:
  close(fd); /* the lock with it */
  return gone;
}

/* One pass over this process's key directory. */
static void scan(int want) {
  if (!iochar_ready || iochar_envs.live_off) return;
  int e = errno;
  iochar_in_tool++;
  char real[IOCHAR_PATH_MAX];
  int ufd = -1, dfd = key_dir(real, sizeof real, &ufd);
  if (dfd >= 0) {
    int d2 = fcntl(dfd, F_DUPFD_CLOEXEC, 0); /* closedir closes it */
    DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!d && d2 >= 0) close(d2);
    int seen = 0, gone = 0;
    for (struct dirent *x; d && seen < SCAN_MAX && (x = readdir(d)); seen++)
      if (x->d_name[0] == '.' && (x->d_type == DT_REG || x->d_type == DT_UNKNOWN))
        gone += complete(dfd, x->d_name, real, want);
    if (d) closedir(d);
    close(dfd);
    /* the last live file of that directory: it goes too (as live.c; one
     * made meanwhile retries: create_file) */
    if (gone) unlinkat(ufd, key_name(real, (char[17]){0}), AT_REMOVEDIR);
    close(ufd);
  }
  iochar_in_tool--;
  errno = e;
}

int iochar_had_children;

void iochar_reap_child(pid_t pid) {
  if (pid > 0) scan((int)pid);
}

void iochar_reap_at_end(void) {
  if (iochar_had_children) scan(0);
}
