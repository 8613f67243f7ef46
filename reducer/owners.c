/* Steps 1, 2 and 4 of the MPI shutdown: this rank's rows, their
 * classification by owner rank (LOCAL, MERGE, WIDE) and the merge of MERGE
 * rows at their owners. */
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

#include "steps.h"

static int key_cmp(const void *a, const void *b) { /* (id, module, aux) */
  const red_key *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  return (x->aux > y->aux) - (x->aux < y->aux);
}
int red_mkey_cmp(const void *a, const void *b) { /* (module, id, aux) */
  const red_key *x = a, *y = b;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return (x->aux > y->aux) - (x->aux < y->aux);
}

/* Indices into keys (the context), by key_cmp. */
static int where_cmp(const void *a, const void *b, void *keys) {
  const red_key *k = keys;
  return key_cmp(&k[*(const size_t *)a], &k[*(const size_t *)b]);
}
typedef struct rows_at {
  const uint8_t *base;
  const size_t *offs;
} rows_at;
static int row_cmp(const void *a, const void *b, void *ctx) { /* (module, id, rank) */
  const red_key *x = a, *y = b;
  const rows_at *r = ctx;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  int64_t rx, ry;
  memcpy(&rx, r->base + r->offs[x->aux] + 8, 8);
  memcpy(&ry, r->base + r->offs[y->aux] + 8, 8);
  return (rx > ry) - (rx < ry);
}

void red_state_free(red_state *s) {
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    iochar_buf_free(&s->rows[m]);
    iochar_buf_free(&s->names[m]);
    iochar_buf_free(&s->out[m]);
    free(s->name_off[m]);
  }
  iochar_buf_free(&s->outnames);
  free(s->sent);
  free(s->flags);
  free(s->merge_rc);
  free(s->mscount);
  free(s->msend);
  free(s->mrecv);
  free(s->wsnd);
  free(s->wrcv);
  iochar_buf_free(&s->gpack);
  free(s->gsizes);
  free(s->wide_owned);
  free(s->wide_local);
  for (int k = 0; k < 4; k++) free(s->akeep[k]); /* none pending: every path waited */
}

const uint8_t *red_row_at(red_state *s, int m, size_t i) {
  return s->rows[m].p + i * iochar_row_size(m);
}

static void emit_name(red_state *s, int m, size_t i) {
  const uint8_t *e = s->names[m].p + s->name_off[m][i];
  uint32_t len;
  memcpy(&len, e + 8, 4);
  iochar_buf_put(&s->outnames, e, 12 + (size_t)len);
  s->noutnames++;
}

int red_collect_rows(red_state *s) {
  iochar_ts_shift = 0; /* rows are shifted once the job start is known */
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
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
void red_shift_rows(red_state *s, double shift) {
  for (int m = 0; m < IOCHAR_MOD_COUNT && shift != 0; m++) {
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

/* The rank that owns a key: a hash of its id (murmur3's finalizer) mod nprocs. */
static inline int owner_of(red_ctx *x, uint64_t id) {
  id ^= id >> 33;
  id *= 0xff51afd7ed558ccdULL;
  id ^= id >> 33;
  return (int)(id % (uint64_t)x->nprocs);
}

/* Steps 1-2: every key (and one hostname key per rank) goes to its owner,
 * which counts the ranks holding it and answers LOCAL / MERGE / WIDE, with
 * NAME on the one key whose rank writes the path.  The owner also learns how
 * many MERGE bytes each rank will send it, so that exchange needs no counts.
 * failed: this rank could not collect its rows (the keys' Alltoall is the
 * vote).  The keys' receive buffer (RED_KEYS_RESERVE) is taken before that
 * vote too, so a job with fewer keys needs no other before their exchange.
 * The answers' buffer is taken before that vote, so the answers go back
 * without one: an owner that fails after it sends its answers' length from
 * the keys' buffer and returns 1 (the job facts vote next). */
int red_classify(red_ctx *x, red_state *s, int failed_rows) {
  size_t nk = 1, nfold = 0;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) nk += s->nrows[m];
  int64_t in_set[IOCHAR_MOD_COUNT];
  uint64_t *fids = NULL;
  int *fmods = NULL;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) nfold += (size_t)iochar_job_info.folded_files[m];
  if (nfold) {
    fids = malloc(sizeof(uint64_t) * nfold);
    fmods = malloc(sizeof(int) * nfold);
  }
  if (fids && fmods)
    nfold = iochar_folded_keys(fids, fmods, nfold, in_set);
  else
    nfold = 0, memset(in_set, 0, sizeof in_set);
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++)
    s->folded_extra[m] = iochar_job_info.folded_files[m] - in_set[m];
  nk += nfold;
  int *cnt = calloc((size_t)x->nprocs * 2, sizeof(int)), *pos = cnt ? cnt + x->nprocs : NULL;
  red_key *sent = s->sent = malloc(sizeof(red_key) * nk);
  s->flags = malloc(nk + 1);
  red_pre pre = {malloc(RED_KEYS_RESERVE), RED_KEYS_RESERVE,
                 malloc(sizeof(int) * (size_t)x->nprocs)};
  int failed = failed_rows || !cnt || !sent || !s->flags || !pre.buf || !pre.counts ||
               red_fault(x, "classify");
  red_key host = {iochar_hash_path(iochar_job_info.hostname), RED_HOST_MOD, 0};
  for (int pass = 0; pass < 2 && !failed; pass++) { /* count per owner, then place */
    if (pass) {
      for (int d = 0, o = 0; d < x->nprocs; d++) pos[d] = o, o += cnt[d];
      sent[pos[owner_of(x, host.id)]++] = host;
    } else
      cnt[owner_of(x, host.id)]++;
    for (int m = 0; m < IOCHAR_MOD_COUNT; m++)
      for (size_t i = 0; i < s->nrows[m]; i++) {
        red_key k = {0, (uint32_t)m, (uint32_t)i};
        memcpy(&k.id, red_row_at(s, m, i), 8);
        if (pass)
          sent[pos[owner_of(x, k.id)]++] = k;
        else
          cnt[owner_of(x, k.id)]++;
      }
    for (size_t i = 0; i < nfold; i++) {
      red_key k = {fids[i], (uint32_t)(RED_FOLD_MOD + fmods[i]), 0};
      if (pass)
        sent[pos[owner_of(x, k.id)]++] = k;
      else
        cnt[owner_of(x, k.id)]++;
    }
  }
  free(fids);
  free(fmods);
  s->nsent = nk;
  for (int d = 0; d < x->nprocs && !failed; d++) pos[d] = cnt[d] * (int)sizeof(red_key);
  void *rbuf;
  int *rcount;
  size_t rtotal;
  if (red_exchange(x, failed, sent, pos, NULL, &pre, &rbuf, &rcount, &rtotal)) {
    free(cnt);
    return -1;
  }
  size_t nr = rtotal / sizeof(red_key);
  red_key *rk = rbuf;
  size_t *where = malloc(sizeof(size_t) * (nr + 1));
  uint8_t *reply = calloc(nr + 1, 1);
  s->wide_owned = malloc(sizeof(red_key) * (nr + 1));
  s->merge_rc = calloc((size_t)x->nprocs, sizeof(int));
  int *src_of = malloc(sizeof(int) * (nr + 1));
  failed = !where || !reply || !s->wide_owned || !s->merge_rc || !src_of;
  if (failed) nr = 0; /* nothing to classify: the job facts vote it down */
  for (int src = 0, j = 0; src < x->nprocs && !failed; src++)
    for (int c = 0; c < rcount[src] / (int)sizeof(red_key); c++, j++) {
      rk[j].aux = (uint32_t)src;
      src_of[j] = src;
      where[j] = (size_t)j;
    }
  qsort_r(where, nr, sizeof(size_t), where_cmp, rk); /* by (id, module, source rank) */
  for (size_t a = 0; a < nr;) {                      /* one id: all its modules */
    uint64_t id = rk[where[a]].id;
    size_t b = a;
    uint32_t lo = UINT32_MAX;
    while (b < nr && rk[where[b]].id == id) {
      if (rk[where[b]].m < RED_HOST_MOD && rk[where[b]].aux < lo) lo = rk[where[b]].aux;
      b++;
    }
    int named = 0;
    for (size_t g = a; g < b;) { /* one (id, module) */
      size_t h = g;
      uint32_t m = rk[where[g]].m;
      while (h < b && rk[where[h]].m == m) h++;
      size_t n = h - g;
      if (m == RED_HOST_MOD) {
        s->nodes_owned++;
        g = h;
        continue;
      }
      if (m >= RED_FOLD_MOD) {
        if (m - RED_FOLD_MOD < IOCHAR_MOD_COUNT) s->folded_owned[m - RED_FOLD_MOD]++;
        g = h;
        continue;
      }
      int cls = n < 2                                            ? RED_LOCAL
                : (n == (size_t)x->nprocs || n > RED_WIDE_RANKS) ? RED_WIDE
                                                                 : RED_MERGE;
      for (size_t x = g; x < h; x++) {
        reply[where[x]] = (uint8_t)cls;
        if (cls == RED_MERGE) s->merge_rc[src_of[where[x]]] += 8 + (int)iochar_row_size((int)m);
        if (!named && rk[where[x]].aux == lo) {
          reply[where[x]] |= RED_NAME;
          named = 1;
        }
      }
      if (cls == RED_WIDE) s->wide_owned[s->nwide_owned++] = (red_key){id, m, 0};
      g = h;
    }
    a = b;
  }
  free(where);
  free(src_of);
  /* Answers go back in the order the keys came: both sides know the counts
   * (a failed owner sends as many bytes of its keys' buffer instead).
   * Posted only: they complete with the job facts' Allreduce (which needs
   * nothing from them), and their buffers live until then. */
  for (int d = 0; d < x->nprocs; d++) rcount[d] /= (int)sizeof(red_key);
  int rc = red_exchange_post(x, failed ? rbuf : reply, rcount, s->flags, cnt, &s->areq);
  s->akeep[0] = rbuf, s->akeep[1] = reply, s->akeep[2] = rcount, s->akeep[3] = cnt;
  return rc ? -1 : failed;
}

/* The answers' exchange completed (with the collective *with, when not
 * NULL: both in the same polls), its buffers freed.  -1 when it failed. */
int red_answers_wait(red_state *s, MPI_Request *with) {
  MPI_Request r[2] = {s->areq, with ? *with : MPI_REQUEST_NULL};
  int rc = iochar_coll_waitall(r, 2) == MPI_SUCCESS ? 0 : -1;
  s->areq = r[0];
  if (with) *with = r[1];
  for (int k = 0; k < 4; k++) free(s->akeep[k]), s->akeep[k] = NULL;
  return rc;
}

/* b with room for n bytes in all (no copy of what it holds when it grows
 * later, one at most). */
static void reserve(iochar_buf *b, size_t n) {
  if (b->failed || b->cap >= n) return;
  uint8_t *q = realloc(b->p, n);
  if (!q) {
    b->failed = 1;
    return;
  }
  b->p = q;
  b->cap = n;
}

/* This rank's MERGE rows' bytes for each owner (mscount), from the owners'
 * answers; their total. */
static long long merge_counts(red_ctx *x, red_state *s) {
  long long so = 0;
  memset(s->mscount, 0, sizeof(int) * (size_t)x->nprocs);
  for (size_t j = 0; j < s->nsent; j++) {
    if (s->sent[j].m >= RED_HOST_MOD || (s->flags[j] & 3) != RED_MERGE) continue;
    int b = 8 + (int)iochar_row_size((int)s->sent[j].m);
    s->mscount[owner_of(x, s->sent[j].id)] += b;
    so += b;
  }
  return so;
}

/* Step 4, before the job facts (whose Allreduce is the vote): the buffers
 * of the MERGE rows this rank sends and of those it receives as owner, so
 * that their exchange needs no vote.  The answers are still on their way
 * (they complete with the facts), so the send buffer is sized for all this
 * rank's rows (untouched pages cost nothing), unless that is more than
 * RED_MSEND_AHEAD: then this rank completes the answers first (the collectives
 * are issued in the same order either way) and sizes it from them. */
int red_merge_prepare(red_ctx *x, red_state *s, int failed) {
  s->mscount = calloc((size_t)x->nprocs, sizeof(int));
  s->wide_local = malloc(sizeof(red_key) * (s->nsent + 1));
  failed = failed || !s->mscount || !s->wide_local || red_fault(x, "merge");
  if (failed) return 1;
  long long so = 0, ro = 0;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++)
    so += (long long)s->nrows[m] * (8 + (long long)iochar_row_size(m));
  if (so > RED_MSEND_AHEAD) {
    if (red_answers_wait(s, NULL)) return 1;
    so = merge_counts(x, s);
  }
  for (int d = 0; d < x->nprocs; d++) ro += s->merge_rc[d];
  if (so > INT_MAX || ro > INT_MAX) return 1;
  s->msend = malloc((size_t)so + 1);
  s->mrecv = malloc((size_t)ro + 1);
  s->mrecv_len = (size_t)ro;
  return !s->msend || !s->mrecv;
}

/* Step 4, after the job facts (rows shifted): this rank's LOCAL rows and
 * names, and its MERGE rows to their owner, which folds each record's rows
 * (in rank order) into one rank -1 row.  A small job (gathered) sends its
 * MERGE rows to rank 0 with the rest instead (reducer/write.c), one
 * exchange less.  The exchange is posted here and completed by the wide
 * step, with its first collective (red_merge_wait).  -1 when it could not
 * be posted. */
int red_merge_at_owners(red_ctx *x, red_state *s, int gathered) {
  size_t o = 0, nlocal[IOCHAR_MOD_COUNT] = {0};
  merge_counts(x, s); /* the answers are in: the facts' Allreduce completed them */
  for (size_t j = 0; j < s->nsent; j++) /* room for the LOCAL rows at once: no regrowth */
    if (s->sent[j].m < RED_HOST_MOD && (s->flags[j] & 3) == RED_LOCAL) nlocal[s->sent[j].m]++;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++)
    reserve(&s->out[m], (nlocal[m] + 1) * iochar_row_size(m));
  for (size_t j = 0; j < s->nsent; j++) {       /* sent is grouped by owner already */
    if (s->sent[j].m >= RED_HOST_MOD) continue; /* hostname and folded-file keys */
    int m = (int)s->sent[j].m;
    size_t i = s->sent[j].aux;
    if (s->flags[j] & RED_NAME) emit_name(s, m, i);
    switch (s->flags[j] & 3) {
    case RED_LOCAL:
      iochar_buf_put(&s->out[m], red_row_at(s, m, i), iochar_row_size(m));
      s->nout[m]++;
      break;
    case RED_MERGE: {
      uint64_t mm = (uint64_t)m;
      memcpy(s->msend + o, &mm, 8);
      memcpy(s->msend + o + 8, red_row_at(s, m, i), iochar_row_size(m));
      o += 8 + iochar_row_size(m);
      break;
    }
    default: s->wide_local[s->nwide_local++] = s->sent[j];
    }
  }
  s->msend_len = o;
  if (gathered) return 0;
  return red_exchange_post(x, s->msend, s->mscount, s->mrecv, s->merge_rc, &s->mreq);
}

/* The MERGE rows' exchange, if one is pending, completed (with the
 * collective *with, when not NULL: both in the same polls) and its rows
 * folded.  -1 when a collective failed, 1 when this rank failed (out of
 * memory: the next vote says so). */
int red_merge_wait(red_state *s, MPI_Request *with) {
  MPI_Request r[2] = {s->mreq, with ? *with : MPI_REQUEST_NULL};
  int pending = s->mreq != MPI_REQUEST_NULL;
  int rc = iochar_coll_waitall(r, 2) == MPI_SUCCESS ? 0 : -1;
  s->mreq = r[0];
  if (with) *with = r[1];
  if (rc || !pending) return rc;
  return red_fold_rows(s->mrecv, s->mrecv_len, s->out, s->nout);
}

/* MERGE rows ([module u64][row] each, any order) folded per record, by
 * (module, id, rank), into one row each, appended to out[m].  1 when out of
 * memory. */
int red_fold_rows(const uint8_t *rbuf, size_t rtotal, iochar_buf *out, size_t *nout) {
  size_t n = 0;
  for (size_t o = 0; o < rtotal; n++) {
    uint64_t mm;
    memcpy(&mm, rbuf + o, 8);
    o += 8 + iochar_row_size((int)mm);
  }
  red_key *ix = malloc(sizeof(red_key) * (n + 1));
  size_t *off = malloc(sizeof(size_t) * (n + 1));
  if (!ix || !off) {
    free(ix), free(off);
    return 1;
  }
  for (size_t o = 0, j = 0; o < rtotal; j++) {
    uint64_t mm;
    memcpy(&mm, rbuf + o, 8);
    memcpy(&ix[j].id, rbuf + o + 8, 8);
    ix[j].m = (uint32_t)mm;
    ix[j].aux = (uint32_t)j;
    off[j] = o + 8;
    o += 8 + iochar_row_size((int)mm);
  }
  rows_at ra = {rbuf, off};
  qsort_r(ix, n, sizeof(red_key), row_cmp, &ra);
  void *acc = NULL, *one = NULL, *row = NULL;
  int cur = -1, failed = 0;
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
      iochar_partial_from_row(m, one, rbuf + off[ix[b].aux]);
      iochar_partial_merge(m, acc, one);
      b++;
    }
    iochar_partial_to_row(m, acc, row);
    iochar_buf_put(&out[m], row, iochar_row_size(m));
    nout[m]++;
    a = b;
  }
  free(acc), free(one), free(row);
  free(ix);
  free(off);
  return failed;
}
