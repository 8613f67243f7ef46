/* The MPI shutdown: job-wide facts, cross-rank record reduction (by owner
 * through all-to-all, or by tree for records many ranks share), per-rank
 * compression and one collective write.  docs/reduction.md is the algorithm. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/config.h"
#include "../runtime/core.h"
#include "../runtime/internal.h"
#include "../runtime/live.h"
#include "../runtime/observe.h"
#include "../runtime/safefile.h"
#include "merge.h"
#include "pmpi.h"

#define NMOD IOCHAR_MOD_COUNT
#define P iochar_pmpi
/* A record shared by more ranks than this (or by all) is reduced by tree. */
#define WIDE_RANKS 64
/* Bytes of partials per MPI_Reduce: bounds the wide path's memory. */
#define WIDE_CHUNK (8u << 20)
/* Wide keys carried inside the job-facts Allreduce (more: one more round). */
#define WIDE_SLOTS 256
/* Up to this many ranks write their parts with pwrite, beyond with MPI-IO. */
#define COLLECTIVE_WRITE_RANKS 256
#define HOST_MOD NMOD /* pseudo-module of the hostname keys (node count) */
/* pseudo-modules FOLD_MOD + m: files folded in module m, counted once each
 * by their owner (a file folded on several ranks is one file) */
#define FOLD_MOD (NMOD + 1)

enum { LOCAL = 0, MERGE = 1, WIDE = 2, NAME = 4 };

static MPI_Comm comm;
static int rank, nprocs;

typedef struct key { /* 16 bytes on the wire */
  uint64_t id;
  uint32_t m, aux; /* aux: local row index at the sender, source rank at the owner */
} key;

static inline int owner_of(uint64_t id) {
  id ^= id >> 33;
  id *= 0xff51afd7ed558ccdULL;
  id ^= id >> 33;
  return (int)(id % (uint64_t)nprocs);
}

static int key_cmp(const void *a, const void *b) { /* (id, module, aux) */
  const key *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  return (x->aux > y->aux) - (x->aux < y->aux);
}
static int mkey_cmp(const void *a, const void *b) { /* (module, id, aux) */
  const key *x = a, *y = b;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return (x->aux > y->aux) - (x->aux < y->aux);
}

/* qsort has no context argument: the shutdown is single-threaded. */
static const key *sort_ctx;
static int where_cmp(const void *a, const void *b) {
  return key_cmp(&sort_ctx[*(const size_t *)a], &sort_ctx[*(const size_t *)b]);
}
static const uint8_t *row_base;
static const size_t *row_offs;
static int row_cmp(const void *a, const void *b) { /* (module, id, rank) */
  const key *x = a, *y = b;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  int64_t rx, ry;
  memcpy(&rx, row_base + row_offs[x->aux] + 8, 8);
  memcpy(&ry, row_base + row_offs[y->aux] + 8, 8);
  return (rx > ry) - (rx < ry);
}

/* ---- failures ---------------------------------------------------------------
 * A rank that fails alone (memory, mostly) must not leave the others waiting
 * in a collective it will never call.  So a rank that fails goes on taking
 * part, with nothing to contribute, up to the next vote: before each
 * collective that needs data, every rank says whether it failed since the
 * last one, and on any failure all of them stop at the same point and each
 * writes its own per-rank log instead (fall_back).  Phases return -1 when
 * all ranks stopped together, 1 when only this rank failed after its last
 * vote (the next phase votes first), 0 otherwise. */

/* Per-nprocs scratch, taken before any vote: counts and displacements. */
static int *xbuf, *zeros;

/* 1 when any rank failed (a failing vote counts as a failure). */
static int vote(int failed) {
  int any = 1;
  if (Y_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return 1;
  return any;
}

/* Testing knob: IOCHAR_TEST_FAULT=phase:rank makes that rank fail there, as
 * when an allocation fails. */
static int fault(const char *phase) {
  const char *f = getenv("IOCHAR_TEST_FAULT");
  size_t n = strlen(phase);
  return f && strncmp(f, phase, n) == 0 && f[n] == ':' && atoi(f + n + 1) == rank;
}

/* Alltoallv of byte blocks grouped by destination; the receive counts are
 * passed in (known already) or exchanged by one Alltoall (rcount NULL).  A
 * rank that failed before (failed) sends nothing and votes the exchange
 * down; -1 on every rank when any failed. */
static int exchange(int failed, const void *sbuf, const int *scount, const int *rcount_known,
                    void **rbuf, int **rcount_out, size_t *rtotal) {
  int *sd = xbuf, *rc = xbuf + nprocs, *rd = xbuf + 2 * nprocs;
  if (failed) scount = zeros;
  if (rcount_known)
    memcpy(rc, rcount_known, sizeof(int) * (size_t)nprocs);
  else if (Y_Alltoall(scount, 1, MPI_INT, rc, 1, MPI_INT, comm) != MPI_SUCCESS)
    failed = 1;
  long long so = 0, ro = 0;
  for (int i = 0; i < nprocs; i++) {
    sd[i] = (int)so, rd[i] = (int)ro;
    so += scount[i], ro += rc[i];
  }
  char *r = failed ? NULL : malloc(ro ? (size_t)ro : 1);
  int *counts = failed ? NULL : malloc(sizeof(int) * (size_t)nprocs);
  if (vote(!r || !counts || so > INT_MAX || ro > INT_MAX) ||
      Y_Alltoallv(sbuf, scount, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, comm) != MPI_SUCCESS) {
    free(r);
    free(counts);
    return -1;
  }
  memcpy(counts, rc, sizeof(int) * (size_t)nprocs); /* hand back the receive counts */
  *rbuf = r;
  *rcount_out = counts;
  *rtotal = (size_t)ro;
  return 0;
}

/* ---- what each rank contributes and ends up writing ---------------------- */

typedef struct state {
  iochar_buf rows[NMOD], names[NMOD]; /* this rank's rows and their names */
  size_t nrows[NMOD];
  size_t *name_off[NMOD]; /* row i's entry in names[m] */
  iochar_buf out[NMOD];   /* rows this rank writes (RECORDS) */
  size_t nout[NMOD];
  iochar_buf outnames; /* NAMES entries this rank writes */
  uint32_t noutnames;
  key *sent; /* keys in the order sent (by owner) */
  size_t nsent;
  uint8_t *flags;  /* the owners' answers, same order */
  int *merge_rc;   /* bytes of MERGE rows each rank will send us */
  key *wide_owned; /* wide keys this rank owns */
  size_t nwide_owned;
  int64_t nodes_owned;                            /* distinct hostnames this rank owns */
  int64_t folded_owned[NMOD], folded_extra[NMOD]; /* distinct folded files owned; beyond the set */
  /* this rank's I/O-over-time bins, read once (recording has stopped) */
  double width[NMOD];
  int64_t series[NMOD][4 * IOCHAR_SERIES_BINS];
  key *wide_local; /* this rank's rows of wide records */
  size_t nwide_local;
} state;

static void state_free(state *s) {
  for (int m = 0; m < NMOD; m++) {
    iochar_buf_free(&s->rows[m]);
    iochar_buf_free(&s->names[m]);
    iochar_buf_free(&s->out[m]);
    free(s->name_off[m]);
  }
  iochar_buf_free(&s->outnames);
  free(s->sent);
  free(s->flags);
  free(s->merge_rc);
  free(s->wide_owned);
  free(s->wide_local);
}

static const uint8_t *row_at(state *s, int m, size_t i) {
  return s->rows[m].p + i * iochar_row_size(m);
}

static void emit_name(state *s, int m, size_t i) {
  const uint8_t *e = s->names[m].p + s->name_off[m][i];
  uint32_t len;
  memcpy(&len, e + 8, 4);
  iochar_buf_put(&s->outnames, e, 12 + (size_t)len);
  s->noutnames++;
}

static int collect_rows(state *s) {
  iochar_ts_shift = 0; /* rows are shifted once the job start is known */
  for (int m = 0; m < NMOD; m++) {
    if (!iochar_modules[m]) continue;
    s->nrows[m] = iochar_module_rows(m, &s->rows[m], &s->names[m]);
    s->name_off[m] = malloc(sizeof(size_t) * (s->nrows[m] + 1));
    if (!s->name_off[m] || s->rows[m].failed || s->names[m].failed) return -1;
    size_t off = 0;
    for (size_t i = 0; i < s->nrows[m]; i++) {
      uint32_t len;
      s->name_off[m][i] = off;
      memcpy(&len, s->names[m].p + off + 8, 4);
      off += 12 + len;
    }
  }
  return 0;
}

/* Timestamps relative to the job start: add this rank's offset to it. */
static void shift_rows(state *s, double shift) {
  for (int m = 0; m < NMOD && shift != 0; m++) {
    const iochar_module *mod = iochar_modules[m];
    size_t rs = iochar_row_size(m);
    for (size_t i = 0; i < s->nrows[m]; i++) {
      double *f = (double *)(s->rows[m].p + i * rs + 16 + 8 * (size_t)mod->n_int);
      for (uint32_t k = 0; k < mod->n_flt; k++)
        if ((mod->flts[k].op == IOCHAR_OP_TS_START || mod->flts[k].op == IOCHAR_OP_TS_END) &&
            f[k] != 0)
          f[k] += shift;
    }
  }
}

/* Steps 1-2: every key (and one hostname key per rank) goes to its owner,
 * which counts the ranks holding it and answers LOCAL / MERGE / WIDE, with
 * NAME on the one key whose rank writes the path.  The owner also learns how
 * many MERGE bytes each rank will send it, so that exchange needs no counts. */
static int classify(state *s) {
  size_t nk = 1, nfold = 0;
  for (int m = 0; m < NMOD; m++) nk += s->nrows[m];
  int64_t in_set[NMOD];
  uint64_t *fids = NULL;
  int *fmods = NULL;
  for (int m = 0; m < NMOD; m++) nfold += (size_t)iochar_job_info.folded_files[m];
  if (nfold) {
    fids = malloc(sizeof(uint64_t) * nfold);
    fmods = malloc(sizeof(int) * nfold);
  }
  if (fids && fmods)
    nfold = iochar_folded_keys(fids, fmods, nfold, in_set);
  else
    nfold = 0, memset(in_set, 0, sizeof in_set);
  for (int m = 0; m < NMOD; m++) s->folded_extra[m] = iochar_job_info.folded_files[m] - in_set[m];
  nk += nfold;
  int *cnt = calloc((size_t)nprocs * 2, sizeof(int)), *pos = cnt ? cnt + nprocs : NULL;
  key *sent = s->sent = malloc(sizeof(key) * nk);
  int failed = !cnt || !sent || fault("classify");
  key host = {iochar_hash_path(iochar_job_info.hostname), HOST_MOD, 0};
  for (int pass = 0; pass < 2 && !failed; pass++) { /* count per owner, then place */
    if (pass) {
      for (int d = 0, o = 0; d < nprocs; d++) pos[d] = o, o += cnt[d];
      sent[pos[owner_of(host.id)]++] = host;
    } else
      cnt[owner_of(host.id)]++;
    for (int m = 0; m < NMOD; m++)
      for (size_t i = 0; i < s->nrows[m]; i++) {
        key k = {0, (uint32_t)m, (uint32_t)i};
        memcpy(&k.id, row_at(s, m, i), 8);
        if (pass)
          sent[pos[owner_of(k.id)]++] = k;
        else
          cnt[owner_of(k.id)]++;
      }
    for (size_t i = 0; i < nfold; i++) {
      key k = {fids[i], (uint32_t)(FOLD_MOD + fmods[i]), 0};
      if (pass)
        sent[pos[owner_of(k.id)]++] = k;
      else
        cnt[owner_of(k.id)]++;
    }
  }
  free(fids);
  free(fmods);
  s->nsent = nk;
  for (int d = 0; d < nprocs && !failed; d++) pos[d] = cnt[d] * (int)sizeof(key);
  void *rbuf;
  int *rcount;
  size_t rtotal;
  if (exchange(failed, sent, pos, NULL, &rbuf, &rcount, &rtotal)) {
    free(cnt);
    return -1;
  }
  size_t nr = rtotal / sizeof(key);
  key *rk = rbuf;
  size_t *where = malloc(sizeof(size_t) * (nr + 1));
  uint8_t *reply = calloc(nr + 1, 1);
  s->wide_owned = malloc(sizeof(key) * (nr + 1));
  s->merge_rc = calloc((size_t)nprocs, sizeof(int));
  int *src_of = malloc(sizeof(int) * (nr + 1));
  failed = !where || !reply || !s->wide_owned || !s->merge_rc || !src_of;
  if (failed) nr = 0; /* nothing to classify: the answers' exchange votes it down */
  for (int src = 0, j = 0; src < nprocs && !failed; src++)
    for (int c = 0; c < rcount[src] / (int)sizeof(key); c++, j++) {
      rk[j].aux = (uint32_t)src;
      src_of[j] = src;
      where[j] = (size_t)j;
    }
  sort_ctx = rk;
  qsort(where, nr, sizeof(size_t), where_cmp); /* by (id, module, source rank) */
  for (size_t a = 0; a < nr;) {                /* one id: all its modules */
    uint64_t id = rk[where[a]].id;
    size_t b = a;
    uint32_t lo = UINT32_MAX;
    while (b < nr && rk[where[b]].id == id) {
      if (rk[where[b]].m < HOST_MOD && rk[where[b]].aux < lo) lo = rk[where[b]].aux;
      b++;
    }
    int named = 0;
    for (size_t g = a; g < b;) { /* one (id, module) */
      size_t h = g;
      uint32_t m = rk[where[g]].m;
      while (h < b && rk[where[h]].m == m) h++;
      size_t n = h - g;
      if (m == HOST_MOD) {
        s->nodes_owned++;
        g = h;
        continue;
      }
      if (m >= FOLD_MOD) {
        if (m - FOLD_MOD < NMOD) s->folded_owned[m - FOLD_MOD]++;
        g = h;
        continue;
      }
      int cls = n < 2 ? LOCAL : (n == (size_t)nprocs || n > WIDE_RANKS) ? WIDE : MERGE;
      for (size_t x = g; x < h; x++) {
        reply[where[x]] = (uint8_t)cls;
        if (cls == MERGE) s->merge_rc[src_of[where[x]]] += 8 + (int)iochar_row_size((int)m);
        if (!named && rk[where[x]].aux == lo) {
          reply[where[x]] |= NAME;
          named = 1;
        }
      }
      if (cls == WIDE) s->wide_owned[s->nwide_owned++] = (key){id, m, 0};
      g = h;
    }
    a = b;
  }
  free(where);
  free(src_of);
  free(rbuf);
  /* Answers go back in the order the keys came: both sides know the counts. */
  for (int d = 0; d < nprocs; d++) rcount[d] /= (int)sizeof(key);
  void *fbuf;
  int *fcount;
  size_t ftotal;
  int rc = exchange(failed, reply, rcount, cnt, &fbuf, &fcount, &ftotal);
  free(reply);
  free(rcount);
  free(cnt);
  if (rc) return -1;
  free(fcount);
  s->flags = fbuf;
  return ftotal == nk ? 0 : 1;
}

/* Step 4: MERGE rows travel to their owner, which folds each record's rows
 * (in rank order) into one rank -1 row. */
static int merge_at_owners(state *s) {
  int *scount = calloc((size_t)nprocs, sizeof(int));
  iochar_buf sb = {0};
  s->wide_local = malloc(sizeof(key) * (s->nsent + 1));
  int failed = !scount || !s->wide_local || fault("merge");
  for (size_t j = 0; j < s->nsent && !failed; j++) { /* sent is grouped by owner already */
    if (s->sent[j].m >= HOST_MOD) continue;          /* hostname and folded-file keys */
    int m = (int)s->sent[j].m;
    size_t i = s->sent[j].aux;
    if (s->flags[j] & NAME) emit_name(s, m, i);
    switch (s->flags[j] & 3) {
    case LOCAL:
      iochar_buf_put(&s->out[m], row_at(s, m, i), iochar_row_size(m));
      s->nout[m]++;
      break;
    case MERGE: {
      uint64_t mm = (uint64_t)m;
      iochar_buf_put(&sb, &mm, 8);
      iochar_buf_put(&sb, row_at(s, m, i), iochar_row_size(m));
      scount[owner_of(s->sent[j].id)] += 8 + (int)iochar_row_size(m);
      break;
    }
    default: s->wide_local[s->nwide_local++] = s->sent[j];
    }
  }
  void *rbuf;
  int *rcount;
  size_t rtotal;
  failed |= sb.failed;
  int rc = exchange(failed, sb.p, scount, s->merge_rc, &rbuf, &rcount, &rtotal);
  iochar_buf_free(&sb);
  free(scount);
  if (rc) return -1;
  free(rcount);
  size_t n = 0;
  for (size_t o = 0; o < rtotal; n++) {
    uint64_t mm;
    memcpy(&mm, (uint8_t *)rbuf + o, 8);
    o += 8 + iochar_row_size((int)mm);
  }
  key *ix = malloc(sizeof(key) * (n + 1));
  size_t *off = malloc(sizeof(size_t) * (n + 1));
  if (!ix || !off) {
    free(rbuf), free(ix), free(off);
    return 1;
  }
  for (size_t o = 0, j = 0; o < rtotal; j++) {
    uint64_t mm;
    memcpy(&mm, (uint8_t *)rbuf + o, 8);
    memcpy(&ix[j].id, (uint8_t *)rbuf + o + 8, 8);
    ix[j].m = (uint32_t)mm;
    ix[j].aux = (uint32_t)j;
    off[j] = o + 8;
    o += 8 + iochar_row_size((int)mm);
  }
  row_base = rbuf;
  row_offs = off;
  qsort(ix, n, sizeof(key), row_cmp);
  void *acc = NULL, *one = NULL, *row = NULL;
  int cur = -1;
  for (size_t a = 0; a < n;) {
    int m = (int)ix[a].m;
    if (m != cur) {
      free(acc), free(one), free(row);
      acc = malloc(iochar_partial_size(m));
      one = malloc(iochar_partial_size(m));
      row = malloc(iochar_row_size(m));
      cur = m;
      if (!acc || !one || !row) {
        failed = 1;
        break;
      }
    }
    size_t b = a;
    iochar_partial_empty(m, acc);
    while (b < n && ix[b].m == ix[a].m && ix[b].id == ix[a].id) {
      iochar_partial_from_row(m, one, (uint8_t *)rbuf + off[ix[b].aux]);
      iochar_partial_merge(m, acc, one);
      b++;
    }
    iochar_partial_to_row(m, acc, row);
    iochar_buf_put(&s->out[m], row, iochar_row_size(m));
    s->nout[m]++;
    a = b;
  }
  free(acc), free(one), free(row);
  free(ix);
  free(off);
  free(rbuf);
  return failed;
}

/* ---- step 3: the job's facts in one Allreduce ----------------------------- */

typedef struct facts {
  double start, end;     /* MIN, MAX */
  double width[NMOD];    /* series bin width: MAX */
  int64_t folded[NMOD];  /* SUM */
  int64_t present[NMOD]; /* module has rows somewhere: MAX */
  int64_t rows;          /* rows of all modules before reduction: SUM */
  int64_t nodes, nwide;  /* SUM */
  int64_t partial;       /* OR */
  int64_t overflow;      /* wide keys past WIDE_SLOTS: MAX */
  int64_t path_ok;       /* rank 0's: MAX */
  int64_t callsites;     /* some rank records call sites: MAX */
  int64_t failed;        /* some rank failed since the last vote: MAX */
  int64_t truncated;     /* names past the path limit: SUM */
  uint64_t warned;       /* warning keys raised: OR */
  uint64_t dev, ino;     /* rank 0's temporary file: MAX */
  key wide[WIDE_SLOTS];  /* set union (open addressing); aux 1 marks a used slot */
  /* rank 0's: the final name, its private directory and the file in it */
  char path[IOCHAR_PATH_MAX], dir[IOCHAR_PATH_MAX + 64], tmp[IOCHAR_PATH_MAX + 80];
} facts;

static int wide_insert(key *t, key k) {
  size_t h = (size_t)(k.id ^ (k.id >> 29) ^ k.m) % WIDE_SLOTS;
  for (size_t n = 0; n < WIDE_SLOTS; n++, h = (h + 1) % WIDE_SLOTS) {
    if (!t[h].aux) {
      t[h] = (key){k.id, k.m, 1};
      return 0;
    }
    if (t[h].id == k.id && t[h].m == k.m) return 0;
  }
  return -1;
}

static void facts_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int e = 0; e < *len; e++) {
    const facts *a = (const facts *)in + e;
    facts *b = (facts *)inout + e;
    if (a->start < b->start) b->start = a->start;
    if (a->end > b->end) b->end = a->end;
    for (int m = 0; m < NMOD; m++) {
      if (a->width[m] > b->width[m]) b->width[m] = a->width[m];
      b->folded[m] += a->folded[m];
      if (a->present[m] > b->present[m]) b->present[m] = a->present[m];
    }
    b->rows += a->rows;
    b->nodes += a->nodes;
    b->nwide += a->nwide;
    b->partial |= a->partial;
    if (a->path_ok > b->path_ok) b->path_ok = a->path_ok;
    if (a->callsites > b->callsites) b->callsites = a->callsites;
    if (a->failed > b->failed) b->failed = a->failed;
    if (a->overflow > b->overflow) b->overflow = a->overflow;
    b->truncated += a->truncated;
    b->warned |= a->warned;
    if (a->dev > b->dev) b->dev = a->dev;
    if (a->ino > b->ino) b->ino = a->ino;
    for (int i = 0; i < WIDE_SLOTS && !b->overflow; i++)
      if (a->wide[i].aux && wide_insert(b->wide, a->wide[i])) b->overflow = 1;
    if (a->path[0]) memcpy(b->path, a->path, sizeof b->path);
    if (a->tmp[0]) memcpy(b->tmp, a->tmp, sizeof b->tmp);
    if (a->dir[0]) memcpy(b->dir, a->dir, sizeof b->dir);
  }
}

int iochar_coll_wait(MPI_Request *req) {
  int done = 0;
  while (!done) {
    if (P.Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return MPI_ERR_OTHER;
    if (!done) sched_yield();
  }
  return MPI_SUCCESS;
}

/* The temporary file and its private directory, gone (errno kept). */
static void drop_tmp(const facts *f) {
  int e = errno;
  if (f->tmp[0]) unlink(f->tmp);
  if (f->dir[0]) rmdir(f->dir);
  errno = e;
}

static double wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Rank 0 names the log and creates, inside a private directory beside it
 * (0700, random name), the file every rank then writes by name: no other
 * user can plant or swap a name in there.  The file is created exclusively
 * (0600, no symlink followed) and its dev/ino travel with the facts; rank 0
 * renames it into place at the end (docs/security.md). */
static void name_log(facts *f) {
  f->path_ok = iochar_log_path(f->path, sizeof f->path, 0) == 0;
  int fd = -1;
  if (f->path_ok && iochar_safe_mkdtemp(f->path, f->dir, sizeof f->dir) == 0) {
    snprintf(f->tmp, sizeof f->tmp, "%s/log", f->dir);
    fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
      f->dev = (uint64_t)st.st_dev;
      f->ino = (uint64_t)st.st_ino;
    } else if (fd >= 0) {
      close(fd);
      fd = -1;
    }
    if (fd < 0) drop_tmp(f);
  }
  if (fd < 0) {
    if (f->path_ok) iochar_log_failed(f->path);
    f->path_ok = 0;
    f->dir[0] = f->tmp[0] = 0;
  } else {
    close(fd);
  }
}

/* The facts' Allreduce is also a vote (facts.failed): -1 on every rank when
 * any failed. */
static int job_facts(state *s, facts *g, double *shift, int failed) {
  iochar_job *j = &iochar_job_info;
  static facts spare; /* taking part must not depend on an allocation */
  facts *f = calloc(1, sizeof *f), *mine = f ? f : &spare;
  if (!f) memset(&spare, 0, sizeof spare);
  mine->failed = failed || !f || fault("facts");
  if (f) {
    j->end_wall = wall_now();
    f->start = j->start_wall;
    f->end = j->end_wall;
    for (int m = 0; m < NMOD; m++) {
      if (!iochar_series_get(m, &s->width[m], s->series[m], IOCHAR_SERIES_BINS)) s->width[m] = 0;
      f->width[m] = s->width[m];
      f->folded[m] = s->folded_owned[m] + s->folded_extra[m];
      f->present[m] = s->nrows[m] > 0;
      f->rows += (int64_t)s->nrows[m];
    }
    f->nodes = s->nodes_owned;
    f->nwide = (int64_t)s->nwide_owned;
    f->partial = j->partial;
    f->truncated = j->truncated_paths;
    f->warned = iochar_warned();
    f->callsites = iochar_callsites_on;
    for (size_t i = 0; i < s->nwide_owned && !f->overflow; i++)
      if (wide_insert(f->wide, s->wide_owned[i])) f->overflow = 1;
    if (rank == 0) name_log(f);
  }
  MPI_Datatype t;
  MPI_Op op;
  P.Type_contiguous((int)sizeof *f, MPI_BYTE, &t);
  P.Type_commit(&t);
  P.Op_create(facts_op, 1, &op);
  int rc = Y_Allreduce(mine, g, 1, t, op, comm) == MPI_SUCCESS ? 0 : -1;
  P.Op_free(&op);
  P.Type_free(&t);
  free(f);
  if (rc || g->failed) return -1;
  *shift = j->start_wall - g->start;
  j->start_wall = g->start;
  j->end_wall = g->end;
  j->nnodes = g->nodes > 0 ? (int)g->nodes : 1;
  j->partial = (int)g->partial;
  j->truncated_paths = g->truncated;
  /* The job's log keeps what other ranks warned about (they print nothing). */
  for (int k = 0; k < IOCHAR_WARN_COUNT && rank == 0; k++)
    if ((g->warned & ~iochar_warned()) >> k & 1) {
      char line[128];
      snprintf(line, sizeof line, "another rank: %s", iochar_warn_describe(k));
      iochar_warn_keep(line);
    }
  memcpy(j->folded_files, g->folded, sizeof g->folded);
  j->nprocs = nprocs;
  j->finalized = 1;
  j->per_rank_log = 0;
  return 0;
}

/* The wide list in the same order on every rank: from the facts' set, or
 * (more than WIDE_SLOTS) by Exscan offsets and an Allreduce of key slices.
 * Votes first: NULL on every rank when any failed. */
static key *wide_list(state *s, const facts *g, size_t *n, int failed) {
  size_t total = (size_t)g->nwide;
  key *w = failed ? NULL : malloc(sizeof(key) * (total + 1));
  uint64_t *a = NULL, *b = NULL;
  if (w && g->overflow) {
    a = calloc(total * 2 + 1, 8);
    b = malloc((total * 2 + 1) * 8);
  }
  if (vote(!w || (g->overflow && (!a || !b)) || fault("wide"))) {
    free(w), free(a), free(b);
    return NULL;
  }
  if (!g->overflow) {
    size_t k = 0;
    for (int i = 0; i < WIDE_SLOTS; i++)
      if (g->wide[i].aux && k < total) w[k++] = (key){g->wide[i].id, g->wide[i].m, 0};
    total = k;
  } else {
    uint64_t mine = s->nwide_owned, before = 0;
    Y_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (rank == 0) before = 0;
    for (size_t i = 0; i < s->nwide_owned; i++) {
      a[2 * (before + i)] = s->wide_owned[i].id;
      a[2 * (before + i) + 1] = s->wide_owned[i].m;
    }
    Y_Allreduce(a, b, (int)(total * 2), MPI_UINT64_T, MPI_BOR, comm);
    for (size_t i = 0; i < total; i++) w[i] = (key){b[2 * i], (uint32_t)b[2 * i + 1], 0};
    free(a), free(b);
  }
  qsort(w, total, sizeof(key), mkey_cmp);
  *n = total;
  return w;
}

/* ---- step 5: wide records and the series, one MPI_Reduce per chunk ------- */

/* A chunk is [series (first chunk only)][partials of wide keys a..b). */
static struct {
  const key *keys;
  size_t nkeys, series; /* series: int64 count at the front */
} chunk;

static void chunk_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  (void)len; /* always one element: the whole chunk */
  int64_t *a = in, *b = inout;
  for (size_t i = 0; i < chunk.series; i++) b[i] += a[i];
  uint8_t *pa = (uint8_t *)in + 8 * chunk.series, *pb = (uint8_t *)inout + 8 * chunk.series;
  for (size_t i = 0; i < chunk.nkeys; i++) {
    int m = (int)chunk.keys[i].m;
    iochar_partial_merge(m, pb, pa);
    pa += iochar_partial_size(m);
    pb += iochar_partial_size(m);
  }
}

static int reduce_wide_and_series(state *s, const facts *g, double shift, int64_t *series,
                                  int failed) {
  enum { NB = IOCHAR_SERIES_BINS };
  size_t nw = 0;
  key *w = wide_list(s, g, &nw, failed);
  if (!w) return -1;
  qsort(s->wide_local, s->nwide_local, sizeof(key), mkey_cmp);
  MPI_Op op;
  P.Op_create(chunk_op, 1, &op);
  size_t a = 0, li = 0, chunk_no = 0;
  int rc = 0;
  do {
    size_t nser = chunk_no == 0 ? (size_t)NMOD * 4 * NB : 0, bytes = 8 * nser, b = a;
    while (b < nw && (b == a || bytes + iochar_partial_size((int)w[b].m) <= WIDE_CHUNK))
      bytes += iochar_partial_size((int)w[b++].m);
    int root = (int)(chunk_no++ % (size_t)nprocs); /* spread the results */
    uint8_t *snd = calloc(bytes, 1), *rcv = rank == root ? malloc(bytes) : NULL;
    if (vote(!snd || (rank == root && !rcv))) {
      rc = -1;
      free(snd), free(rcv);
      break;
    }
    if (nser) { /* this rank's series, re-binned to the widest and shifted */
      int64_t *ser = (int64_t *)snd;
      for (int m = 0; m < NMOD; m++) {
        double wm = s->width[m];
        const int64_t *bins = s->series[m];
        if (g->width[m] <= 0 || wm <= 0) continue;
        for (int i = 0; i < NB; i++) {
          int jb = (int)((i * wm + shift) / g->width[m] + 1e-9);
          if (jb >= NB) jb = NB - 1;
          for (int k = 0; k < 4; k++) ser[((size_t)m * 4 + k) * NB + jb] += bins[k * NB + i];
        }
      }
    }
    uint8_t *p = snd + 8 * nser;
    for (size_t i = a; i < b; i++) {
      int m = (int)w[i].m;
      while (li < s->nwide_local && mkey_cmp(&s->wide_local[li], &w[i]) < 0) li++;
      if (li < s->nwide_local && s->wide_local[li].m == w[i].m && s->wide_local[li].id == w[i].id)
        iochar_partial_from_row(m, p, row_at(s, m, s->wide_local[li].aux));
      else
        iochar_partial_empty(m, p);
      p += iochar_partial_size(m);
    }
    MPI_Datatype t;
    P.Type_contiguous((int)bytes, MPI_BYTE, &t);
    P.Type_commit(&t);
    chunk.keys = w + a;
    chunk.nkeys = b - a;
    chunk.series = nser;
    if (Y_Reduce(snd, rcv, 1, t, op, root, comm) != MPI_SUCCESS) rc = -1;
    P.Type_free(&t);
    if (rank == root && !rc) {
      if (nser) memcpy(series, rcv, 8 * nser);
      p = rcv + 8 * nser;
      for (size_t i = a; i < b; i++) {
        int m = (int)w[i].m;
        uint8_t row[16 + 8 * 512];
        if (iochar_row_size(m) <= sizeof row) {
          iochar_partial_to_row(m, p, row);
          iochar_buf_put(&s->out[m], row, iochar_row_size(m));
          s->nout[m]++;
        }
        p += iochar_partial_size(m);
      }
    }
    free(snd), free(rcv);
    a = b;
  } while (a < nw && !rc);
  P.Op_free(&op);
  free(w);
  return rc;
}

/* ---- steps 6-7: sections, offsets, one collective write ------------------ */

/* A small job (at most GATHER_ROWS rows in all) sends its NAMES entries,
 * RECORDS rows and RANKS totals to rank 0, which writes each kind as one
 * section: a section per rank and kind cost more in headers and in
 * compression restarts than the few rows themselves (a 16-rank IOR log was
 * 1.25x Darshan's).  Every rank calls this (one exchange); -1 on all when any
 * failed. */
#define GATHER_ROWS 1024
static int gather_small(state *s, const int present[NMOD], int failed, iochar_buf *all,
                        size_t *ntot) {
  iochar_buf p = {0};
  iochar_buf_u32(&p, s->noutnames);
  iochar_buf_put(&p, s->outnames.p, s->outnames.len);
  for (int m = 0; m < NMOD; m++) {
    if (!present[m]) continue;
    iochar_buf_u32(&p, (uint32_t)s->nout[m]);
    iochar_buf_put(&p, s->out[m].p, s->nout[m] * iochar_row_size(m));
    uint8_t tot[64] = {0};
    if (s->nrows[m]) iochar_rank_totals(m, s->rows[m].p, s->nrows[m], rank, tot);
    iochar_buf_u8(&p, s->nrows[m] > 0);
    iochar_buf_put(&p, tot, 64);
  }
  int *scount = calloc((size_t)nprocs, sizeof(int));
  failed |= p.failed || !scount || p.len > INT_MAX;
  if (scount && !failed) scount[0] = (int)p.len;
  void *r = NULL;
  int *rc = NULL;
  size_t rt = 0;
  int rc_x = exchange(failed, p.p, scount ? scount : zeros, NULL, &r, &rc, &rt);
  iochar_buf_free(&p);
  free(scount);
  if (rc_x) return -1;
  /* rank 0: each rank's block in rank order; split it by kind */
  const uint8_t *q = r, *end = q + rt;
  uint32_t n, nn = 0;
  for (int i = 0; i < nprocs && rank == 0; i++) { /* names: count, entries */
    if (!rc[i]) continue;
    memcpy(&n, q, 4), q += 4;
    nn += n;
    const uint8_t *e = q;
    for (uint32_t k = 0; k < n; k++) {
      uint32_t len;
      memcpy(&len, e + 8, 4);
      e += 12 + (size_t)len;
    }
    iochar_buf_put(&all[NMOD], q, (size_t)(e - q));
    q = e;
    for (int m = 0; m < NMOD; m++) {
      if (!present[m]) continue;
      memcpy(&n, q, 4), q += 4;
      size_t bytes = (size_t)n * iochar_row_size(m);
      iochar_buf_put(&all[m], q, bytes);
      ntot[m] += n;
      q += bytes;
      if (*q++) {
        iochar_buf_put(&all[NMOD + 1 + m], q, 64);
        ntot[NMOD + 1 + m]++;
      }
      q += 64;
    }
  }
  ntot[NMOD] = nn;
  free(r);
  free(rc);
  return q == end || rank != 0 ? 0 : -1;
}

static int series_section(const facts *g, const int64_t *series, int m, iochar_buf *body,
                          int *nsec);

/* Rank 0's sections of a gathered small job: as build_local writes them, but
 * one NAMES, RECORDS and RANKS section for all ranks. */
static int build_gathered(iochar_buf *all, const size_t *ntot, const int present[NMOD],
                          const facts *g, const int64_t *series, iochar_buf *body, int *nsec) {
  if (iochar_job_sections(body, nsec) || iochar_schema_sections(body, nsec, present)) return -1;
  for (int k = 0; k < 2 * NMOD + 1; k++)
    if (all[k].failed) return -1;
  if (ntot[NMOD]) {
    if (iochar_section_add(body, "NAMES", NULL, (uint32_t)ntot[NMOD], all[NMOD].p, all[NMOD].len))
      return -1;
    (*nsec)++;
  }
  for (int m = 0; m < NMOD; m++) {
    if (!present[m]) continue;
    const char *mn = iochar_modules[m]->name;
    if (ntot[m]) {
      uint8_t *cols = malloc(iochar_columns_bound(m, ntot[m]));
      size_t clen = cols ? iochar_rows_to_columns(m, all[m].p, ntot[m], cols) : 0;
      int e = !clen || iochar_section_add(body, "RECORDS", mn, (uint32_t)ntot[m], cols, clen);
      free(cols);
      if (e) return -1;
      (*nsec)++;
    }
    size_t nr = ntot[NMOD + 1 + m];
    if (nr) {
      if (iochar_section_add(body, "RANKS", mn, (uint32_t)nr, all[NMOD + 1 + m].p, 64 * nr))
        return -1;
      (*nsec)++;
    }
    if (series_section(g, series, m, body, nsec)) return -1;
  }
  return 0;
}

/* This rank's sections, but the call sites (below). */
static int build_local(state *s, const facts *g, const int64_t *series, iochar_buf *body,
                       int *nsec) {
  enum { NB = IOCHAR_SERIES_BINS };
  int present[NMOD];
  for (int m = 0; m < NMOD; m++) present[m] = g->present[m] > 0;
  if (g->rows <= GATHER_ROWS && nprocs > 1) { /* all ranks agree: g is reduced */
    iochar_buf all[2 * NMOD + 1];
    size_t ntot[2 * NMOD + 1] = {0};
    memset(all, 0, sizeof all);
    int rc = gather_small(s, present, 0, all, ntot);
    if (!rc && rank == 0) rc = build_gathered(all, ntot, present, g, series, body, nsec);
    for (int k = 0; k < 2 * NMOD + 1; k++) iochar_buf_free(&all[k]);
    if (rc || (iochar_trace_on && iochar_trace_sections(body, nsec))) return -1;
    return body->failed ? -1 : 0;
  }
  if (rank == 0 && (iochar_job_sections(body, nsec) || iochar_schema_sections(body, nsec, present)))
    return -1;
  if (s->noutnames) {
    if (iochar_section_add(body, "NAMES", NULL, s->noutnames, s->outnames.p, s->outnames.len))
      return -1;
    (*nsec)++;
  }
  for (int m = 0; m < NMOD; m++) {
    if (!present[m]) continue;
    const char *mn = iochar_modules[m]->name;
    if (s->nout[m]) {
      uint8_t *cols = malloc(iochar_columns_bound(m, s->nout[m]));
      if (!cols) return -1;
      size_t clen = iochar_rows_to_columns(m, s->out[m].p, s->nout[m], cols);
      int e = !clen || iochar_section_add(body, "RECORDS", mn, (uint32_t)s->nout[m], cols, clen);
      free(cols);
      if (e) return -1;
      (*nsec)++;
    }
    if (s->nrows[m]) {
      uint8_t tot[64];
      iochar_rank_totals(m, s->rows[m].p, s->nrows[m], rank, tot);
      if (iochar_section_add(body, "RANKS", mn, 1, tot, 64)) return -1;
      (*nsec)++;
    }
    if (rank == 0 && series_section(g, series, m, body, nsec)) return -1;
  }
  if (iochar_trace_on && iochar_trace_sections(body, nsec)) return -1; /* each rank's own */
  return body->failed ? -1 : 0;
}

static int series_section(const facts *g, const int64_t *series, int m, iochar_buf *body,
                          int *nsec) {
  enum { NB = IOCHAR_SERIES_BINS };
  if (g->width[m] <= 0) return 0;
  iochar_buf b = {0};
  iochar_buf_f64(&b, g->width[m]);
  iochar_buf_u32(&b, NB);
  iochar_buf_u32(&b, 0);
  iochar_buf_put(&b, series + (size_t)m * 4 * NB, 4 * NB * 8);
  int e = iochar_section_add(body, "SERIES", iochar_modules[m]->name, NB, b.p, b.len);
  iochar_buf_free(&b);
  if (e) return -1;
  (*nsec)++;
  return 0;
}

/* Call sites are merged across ranks: every rank takes part (that code
 * votes on its own failures), whatever happened to its own sections.  A
 * failure here is this rank's: write_log makes it everybody's. */
static int build_body(state *s, const facts *g, const int64_t *series, iochar_buf *body,
                      int *nsec) {
  int bad = build_local(s, g, series, body, nsec) != 0 || fault("body");
  if (g->callsites && iochar_callsites_mpi_sections(&comm, body, nsec)) bad = 1;
  return bad || body->failed ? -1 : 0;
}

/* Each rank's part at its offset: with pwrite into the file rank 0 created
 * (few ranks: one collective less than MPI_File_open, which duplicates a
 * communicator), or one collective MPI-IO write (many ranks: aggregation). */
static int write_parts(const facts *g, const uint8_t *hdr, const iochar_buf *body, uint64_t at,
                       int collective) {
  int err = 0;
  iochar_xfsz hold; /* past RLIMIT_FSIZE: EFBIG for us, no SIGXFSZ for the application */
  iochar_xfsz_hold(&hold);
  if (!collective) {
    /* The name is inside rank 0's private directory; the dev/ino check
     * makes sure anyway that it is the file rank 0 created. */
    int fd = open(g->tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_dev != g->dev ||
        (uint64_t)st.st_ino != g->ino)
      err = 1;
    if (!err && hdr && pwrite(fd, hdr, IOCHAR_HEADER_SIZE, 0) != IOCHAR_HEADER_SIZE) err = 1;
    for (size_t o = 0; o < body->len && !err;) {
      ssize_t w = pwrite(fd, body->p + o, body->len - o, (off_t)(at + o));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        err = 1;
      else
        o += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0) err = 1;
    iochar_xfsz_release(&hold);
    return err;
  }
  /* MPI_File_open opens by name on every rank: the private directory is
   * what makes that name safe (nobody else can create or rename in it). */
  MPI_File fh;
  MPI_Status st;
  if (P.File_open(comm, g->tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
    iochar_xfsz_release(&hold);
    return 1;
  }
  if (hdr && P.File_write_at(fh, 0, hdr, IOCHAR_HEADER_SIZE, MPI_BYTE, &st) != MPI_SUCCESS) err = 1;
  int n = body->len > INT_MAX ? 0 : (int)body->len;
  err |= body->len > INT_MAX;
  if (P.File_write_at_all(fh, (MPI_Offset)at, body->p, n, MPI_BYTE, &st) != MPI_SUCCESS) err = 1;
  if (P.File_close(&fh) != MPI_SUCCESS) err = 1;
  iochar_xfsz_release(&hold);
  return err;
}

/* Offsets by one inclusive scan of (bytes, sections); the last rank, which
 * alone knows the totals, writes the file header.  Rank 0 renames the
 * temporary file once every rank reports success. */
static int write_log(const facts *g, iochar_buf *body, int nsec, int bad) {
  bad |= fault("write");
  uint64_t mine[2] = {bad ? 0 : body->len, bad ? 0 : (uint64_t)nsec}, incl[2];
  if (bad) body->len = 0;
  Y_Scan(mine, incl, 2, MPI_UINT64_T, MPI_SUM, comm);
  uint8_t hdr[IOCHAR_HEADER_SIZE];
  if (rank == nprocs - 1) iochar_log_header(hdr, IOCHAR_HEADER_SIZE + incl[0], (uint32_t)incl[1]);
  const char *cw = getenv("IOCHAR_COLLECTIVE_WRITE"); /* testing knob: 1 / 0 */
  int collective = cw ? atoi(cw) != 0 : nprocs > COLLECTIVE_WRITE_RANKS;
  int err = bad | write_parts(g, rank == nprocs - 1 ? hdr : NULL, body,
                              IOCHAR_HEADER_SIZE + incl[0] - mine[0], collective);
  int anyerr = 0;
  Y_Allreduce(&err, &anyerr, 1, MPI_INT, MPI_MAX, comm);
  if (anyerr) return -1; /* every rank knows: each writes its own log */
  if (rank == 0) {       /* out of the private directory, never over an existing file */
    if (iochar_log_publish(-1, g->tmp, g->path) != 0) iochar_log_failed(g->path);
    drop_tmp(g);
  }
  return 0;
}

/* Every rank stopped at the same vote: each writes its own log, as a job
 * that never reached MPI_Finalize does, with its own job facts. */
static void fall_back(const iochar_job *before, const facts *g) {
  iochar_job *j = &iochar_job_info;
  j->start_wall = before->start_wall;
  j->nnodes = before->nnodes;
  j->partial = before->partial;
  memcpy(j->folded_files, before->folded_files, sizeof j->folded_files);
  j->end_wall = wall_now();
  j->finalized = 1; /* it did: the report tells this case from a job that did not */
  j->per_rank_log = 1;
  if (rank == 0 && g) drop_tmp(g); /* created, never published */
  char path[IOCHAR_PATH_MAX];
  if (iochar_log_path(path, sizeof path, 1) != 0)
    iochar_warn_once(IOCHAR_WARN_LOG_PATH, "log path too long; no log written");
  else if (iochar_log_write_local(path) != 0)
    iochar_log_failed(path);
  else
    iochar_live_done(); /* its counters are in the log now */
  if (rank == 0)
    iochar_warn_once(IOCHAR_WARN_REDUCE_FALLBACK,
                     "a rank could not take part in reducing the job's records; "
                     "each rank wrote its own log");
}

int iochar_mpi_reduce_and_write(void) {
  iochar_job *j = &iochar_job_info;
  int fin = 0;
  if (iochar_pmpi_load() || (P.Finalized(&fin), fin)) return -1;
  if (__atomic_exchange_n(&j->written, 1, __ATOMIC_ACQ_REL)) return 0;
  __atomic_store_n(&iochar_ready, 0, __ATOMIC_RELEASE); /* stop recording */
  int e = errno;
  /* The application has finished communicating (it is in MPI_Finalize), so
   * the tool's collectives use MPI_COMM_WORLD directly: creating a
   * communicator costs several collectives, each dear when ranks share cores. */
  comm = MPI_COMM_WORLD;
  P.Comm_rank(comm, &rank);
  P.Comm_size(comm, &nprocs);
  static iochar_job before;
  before = *j;
  state s;
  memset(&s, 0, sizeof s);
  facts *g = calloc(1, sizeof *g);
  int64_t *series = calloc((size_t)NMOD * 4 * IOCHAR_SERIES_BINS, 8);
  xbuf = malloc(sizeof(int) * 3 * (size_t)nprocs);
  zeros = calloc((size_t)nprocs, sizeof(int));
  iochar_buf body = {0};
  int nsec = 0, rc = -1, failed;
  double shift = 0;
  double t[8]; /* phase ends, for IOCHAR_TIMING=1 */
  t[0] = wall_now();
  /* The first vote: without these a rank cannot even take part. */
  failed = !g || !series || !xbuf || !zeros || collect_rows(&s) || fault("rows");
  if (vote(failed)) goto stop;
  t[1] = wall_now();
  if ((failed = classify(&s)) < 0) goto stop;
  t[2] = wall_now();
  if (job_facts(&s, g, &shift, failed)) goto stop;
  shift_rows(&s, shift);
  t[3] = wall_now();
  if ((failed = merge_at_owners(&s)) < 0) goto stop;
  t[4] = wall_now();
  if (reduce_wide_and_series(&s, g, shift, series, failed)) goto stop;
  t[5] = wall_now();
  if (g->path_ok) {
    int bad = build_body(&s, g, series, &body, &nsec) != 0;
    t[6] = wall_now();
    if (write_log(g, &body, nsec, bad)) goto stop;
    rc = 0;
  } /* else rank 0's name_log said why; every rank knows path_ok */
  t[7] = wall_now();
  const char *timing = getenv("IOCHAR_TIMING");
  if (rank == 0 && timing && *timing == '1' && !rc)
    iochar_warn_once(IOCHAR_WARN_TIMING,
                     "shutdown %.3f s on rank 0: rows %.3f, classify %.3f, job facts "
                     "%.3f, merge %.3f, wide+series %.3f, compress %.3f, write %.3f",
                     t[7] - t[0], t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4],
                     t[6] - t[5], t[7] - t[6]);
  goto out;
stop:
  fall_back(&before, g);
out:
  free(g);
  free(series);
  free(xbuf), free(zeros);
  xbuf = zeros = NULL;
  iochar_buf_free(&body);
  state_free(&s);
  errno = e;
  return rc;
}
