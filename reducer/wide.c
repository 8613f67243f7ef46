/* Step 5 of the MPI shutdown: the records too many ranks share (wide), and
 * the I/O-over-time series, reduced by MPI_Reduce in bounded chunks. */
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

/* The wide list, in the same order on every rank: from the facts' set (at
 * most RED_WIDE_SLOTS keys: static storage, nothing can fail), or by Exscan
 * offsets and an Allreduce of key slices after a vote (NULL on every rank
 * when it failed).  *own: w was allocated. */
static red_key *wide_list(red_ctx *x, red_state *s, const red_facts *g, size_t *n, int failed,
                          int *own) {
  static red_key from_set[RED_WIDE_SLOTS + 1];
  size_t total = (size_t)g->nwide;
  red_key *w = from_set;
  *own = 0;
  if (!g->overflow) {
    size_t k = 0;
    for (int i = 0; i < RED_WIDE_SLOTS; i++)
      if (g->wide[i].aux && k < total) w[k++] = (red_key){g->wide[i].id, g->wide[i].m, 0};
    total = k;
  } else {
    w = failed ? NULL : malloc(sizeof(red_key) * (total + 1));
    uint64_t *a = w ? calloc(total * 2 + 1, 8) : NULL, *b = w ? malloc((total * 2 + 1) * 8) : NULL;
    if (red_vote(x, !w || !a || !b)) {
      free(w), free(a), free(b);
      return NULL;
    }
    *own = 1;
    uint64_t mine = s->nwide_owned, before = 0;
    Y_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, x->comm);
    if (x->rank == 0) before = 0;
    for (size_t i = 0; i < s->nwide_owned; i++) {
      a[2 * (before + i)] = s->wide_owned[i].id;
      a[2 * (before + i) + 1] = s->wide_owned[i].m;
    }
    Y_Allreduce(a, b, (int)(total * 2), MPI_UINT64_T, MPI_BOR, x->comm);
    for (size_t i = 0; i < total; i++) w[i] = (red_key){b[2 * i], (uint32_t)b[2 * i + 1], 0};
    free(a), free(b);
  }
  qsort(w, total, sizeof(red_key), red_mkey_cmp);
  *n = total;
  return w;
}

/* Before the job facts (whose Allreduce is the vote): the first chunk's
 * buffers, sized for the most it can hold when the wide keys fit the facts'
 * set (the series and RED_WIDE_SLOTS partials of the largest module), so that
 * chunk needs no vote of its own.  Not zeroed (untouched pages cost
 * nothing): the chunk's series are zeroed when it is built, its partials
 * written whole. */
int red_wide_prepare(red_ctx *x, red_state *s, int failed) {
  if (failed || red_fault(x, "wide")) return 1;
  size_t maxp = 0;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++)
    if (iochar_modules[m] && iochar_partial_size(m) > maxp) maxp = iochar_partial_size(m);
  size_t cap = 8 * (size_t)IOCHAR_MOD_COUNT * 4 * IOCHAR_SERIES_BINS + RED_WIDE_SLOTS * maxp;
  if (cap > RED_WIDE_CHUNK + maxp) cap = RED_WIDE_CHUNK + maxp;
  if (x->nprocs <= RED_GATHER_SIZES_RANKS) { /* a small job's block sizes (reducer/write.c) */
    cap += 8 * (size_t)x->nprocs;
    if (x->rank == 0 && !(s->gsizes = calloc((size_t)x->nprocs, sizeof(int)))) return 1;
  }
  s->wsnd = malloc(cap);
  s->wrcv = x->rank == 0 ? malloc(cap) : NULL; /* chunk 0's root */
  s->wcap = cap;
  return !s->wsnd || (x->rank == 0 && !s->wrcv);
}

/* A chunk is [series (first chunk only)][partials of wide keys a..b).  The
 * series are those of the modules with a bin width somewhere (4 x 128 int64
 * each: 4 KB a module instead of 36 KB for all nine; each module's series
 * is in the facts' width), then a small job's block sizes.  An
 * MPI_Op's function has no context argument: the chunk being reduced is
 * this static, set before each MPI_Reduce (the shutdown is single-threaded). */
static struct {
  const red_key *keys;
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

int red_wide_and_series(red_ctx *x, red_state *s, const red_facts *g, double shift,
                        iochar_series_part *series, int failed) {
  enum { NB = IOCHAR_SERIES_BINS };
  size_t nw = 0;
  int own_w, mr;
  /* The MERGE rows' exchange (reducer/owners.c) completes with the first
   * chunk's Reduce when that needs no vote, else before anything else. */
  if (g->overflow && (mr = red_merge_wait(s, NULL)) != 0) {
    if (mr < 0) return -1;
    failed = 1;
  }
  red_key *w = wide_list(x, s, g, &nw, failed, &own_w);
  if (!w) return -1; /* every rank stopped at the list's vote */
  qsort(s->wide_local, s->nwide_local, sizeof(red_key), red_mkey_cmp);
  MPI_Op op;
  iochar_pmpi.Op_create(chunk_op, 1, &op);
  size_t a = 0, li = 0, chunk_no = 0, nmser = 0;
  int at[IOCHAR_MOD_COUNT]; /* a module's series in the chunk, -1: none */
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) at[m] = g->width[m] > 0 ? (int)nmser++ : -1;
  int rc = 0;
  do {
    size_t nsizes = chunk_no == 0 && red_small_sizes(x, g) ? (size_t)x->nprocs : 0;
    size_t nser = chunk_no == 0 ? nmser * 4 * NB + nsizes : 0, bytes = 8 * nser, b = a;
    while (b < nw && (b == a || bytes + iochar_partial_size((int)w[b].m) <= RED_WIDE_CHUNK))
      bytes += iochar_partial_size((int)w[b++].m);
    int root = (int)(chunk_no++ % (size_t)x->nprocs); /* spread the results */
    /* The first chunk from the facts' set has its buffers already (taken
     * before the facts' vote): no vote; a failure since goes on to the
     * write's.  Otherwise each chunk votes on its own buffers. */
    int pre = root == 0 && chunk_no == 1 && !g->overflow && bytes <= s->wcap;
    if (!pre && (mr = red_merge_wait(s, NULL)) != 0) {
      if (mr < 0) {
        rc = -1;
        break;
      }
      failed = 1;
    }
    uint8_t *snd = pre ? s->wsnd : calloc(bytes, 1);
    uint8_t *rcv = pre ? s->wrcv : x->rank == root ? malloc(bytes) : NULL;
    if (!pre && red_vote(x, failed || !snd || (x->rank == root && !rcv))) {
      rc = -1;
      free(snd), free(rcv);
      break;
    }
    if (!pre) failed = 0; /* voted */
    memset(snd, 0, 8 * nser);
    if (nsizes && x->rank != 0 && !s->gpack.failed) /* summed: each rank fills its slot */
      ((int64_t *)snd)[nmser * 4 * NB + (size_t)x->rank] = (int64_t)s->gpack.len;
    if (nser) { /* this rank's series, re-binned to the widest and shifted */
      int64_t *ser = (int64_t *)snd;
      for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
        double wm = s->width[m];
        const int64_t *bins = s->series[m];
        if (g->width[m] <= 0 || wm <= 0) continue;
        for (int i = 0; i < NB; i++) {
          int jb = (int)((i * wm + shift) / g->width[m] + 1e-9);
          if (jb >= NB) jb = NB - 1;
          for (int k = 0; k < 4; k++) ser[((size_t)at[m] * 4 + k) * NB + jb] += bins[k * NB + i];
        }
      }
    }
    uint8_t *p = snd + 8 * nser;
    for (size_t i = a; i < b; i++) {
      int m = (int)w[i].m;
      while (li < s->nwide_local && red_mkey_cmp(&s->wide_local[li], &w[i]) < 0) li++;
      if (li < s->nwide_local && s->wide_local[li].m == w[i].m && s->wide_local[li].id == w[i].id)
        iochar_partial_from_row(m, p, red_row_at(s, m, s->wide_local[li].aux));
      else
        iochar_partial_empty(m, p);
      p += iochar_partial_size(m);
    }
    MPI_Datatype t;
    iochar_pmpi.Type_contiguous((int)bytes, MPI_BYTE, &t);
    iochar_pmpi.Type_commit(&t);
    chunk.keys = w + a;
    chunk.nkeys = b - a;
    chunk.series = nser;
    MPI_Request req;
    if (iochar_pmpi.Ireduce(snd, rcv, 1, t, op, root, x->comm, &req) != MPI_SUCCESS)
      req = MPI_REQUEST_NULL;
    if (req == MPI_REQUEST_NULL) rc = -1;
    if ((mr = red_merge_wait(s, &req)) < 0) rc = -1; /* the MERGE rows folded first */
    failed |= mr > 0;
    iochar_pmpi.Type_free(&t);
    if (x->rank == root && !rc) {
      for (size_t i = 0; i < nsizes && s->gsizes; i++) {
        int64_t v;
        memcpy(&v, rcv + 8 * (nmser * 4 * NB + i), 8);
        s->gsizes[i] = (int)v;
      }
      for (int m = 0; m < IOCHAR_MOD_COUNT && nser; m++) { /* the job's series: rank 0 writes it */
        if (at[m] >= 0) memcpy(series[m].bins, rcv + (size_t)at[m] * 4 * NB * 8, 4 * NB * 8);
        series[m].width = g->width[m];
        series[m].nbins = g->width[m] > 0 ? NB : 0;
      }
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
    if (!pre) free(snd), free(rcv);
    a = b;
  } while (a < nw && !rc);
  iochar_pmpi.Op_free(&op);
  if (own_w) free(w);
  return rc ? rc : failed;
}
