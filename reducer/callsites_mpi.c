/* MPI shutdown of call sites: identical stacks from all ranks are merged at an
 * owner rank chosen by stack hash (one Alltoallv), the log keeps the heaviest
 * stacks (global threshold from one Allreduce of histograms), and the rest
 * add up in one "other" entry per module at rank 0.  Collective. */
#include <stdlib.h>
#include <string.h>

#include "../runtime/callsites.h"
#include "../runtime/core.h"
#include "../runtime/log_buf.h"
#include "callsites_mpi.h"
#include "pmpi.h"

#define NB 64 /* log2 buckets of a site's ops and bytes */
/* Stacks kept per module in the whole log (about: ties in the threshold bucket). */
#define KEEP IOCHAR_CS_SITES

typedef struct wire { /* one site on the wire: 256 bytes */
  uint32_t module, pad;
  iochar_cs_entry e;
} wire;

typedef struct ctx {
  MPI_Comm comm;
  int rank, size;
} ctx;

static int bucket(int64_t v) { return v <= 0 ? 0 : 64 - __builtin_clzll((uint64_t)v) - 1; }

static int wire_cmp(const void *a, const void *b) {
  const wire *x = a, *y = b;
  if (x->module != y->module) return x->module < y->module ? -1 : 1;
  return x->e.hash < y->e.hash ? -1 : x->e.hash > y->e.hash;
}

/* Alltoallv of byte blocks grouped by destination (sc: bytes per rank, NULL
 * for none).  Failures are agreed on before each collective, so no rank waits. */
static int exchange(ctx *c, const void *sbuf, const int *sc, char **rbuf, size_t *rlen) {
  int *v = calloc((size_t)c->size * 4, sizeof(int)), err = !v, anyerr = 0;
  *rbuf = NULL;
  Y_Allreduce(&err, &anyerr, 1, MPI_INT, MPI_MAX, c->comm);
  if (anyerr) {
    free(v);
    return -1;
  }
  int *sd = v + c->size, *rc = v + 2 * c->size, *rd = v + 3 * c->size;
  if (sc) memcpy(v, sc, sizeof(int) * (size_t)c->size);
  err = Y_Alltoall(v, 1, MPI_INT, rc, 1, MPI_INT, c->comm) != MPI_SUCCESS;
  long long so = 0, ro = 0;
  for (int i = 0; i < c->size; i++) {
    sd[i] = (int)so, rd[i] = (int)ro;
    so += v[i], ro += rc[i];
  }
  err = err || so > INT32_MAX || ro > INT32_MAX;
  if (!err) *rbuf = malloc(ro ? (size_t)ro : 1);
  err = err || !*rbuf;
  Y_Allreduce(&err, &anyerr, 1, MPI_INT, MPI_MAX, c->comm);
  if (!anyerr)
    anyerr = Y_Alltoallv(sbuf, v, sd, MPI_BYTE, *rbuf, rc, rd, MPI_BYTE, c->comm) != MPI_SUCCESS;
  free(v);
  if (anyerr) {
    free(*rbuf);
    *rbuf = NULL;
    return -1;
  }
  *rlen = (size_t)ro;
  return 0;
}

/* Steps 1-2: every rank's sites go to owner hash % size; owners merge. */
static wire *merge_at_owners(ctx *c, iochar_cs_entry *other, size_t *nout, uint64_t **keys,
                             size_t *nkeys) {
  wire *send = NULL;
  size_t n = 0, cap = 0;
  *nkeys = 0;
  *keys = NULL;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    size_t k;
    iochar_cs_entry *v = iochar_callsites_export(m, &k);
    for (size_t i = 0; i < k; i++) {
      if (v[i].hash == 0) { /* 'other' */
        iochar_cs_merge(&other[m], &v[i]);
        continue;
      }
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        wire *w = realloc(send, cap * sizeof *w);
        if (!w) break;
        send = w;
      }
      send[n].module = (uint32_t)m, send[n].pad = 0;
      send[n++].e = v[i];
      for (uint32_t f = 0; f < v[i].nframes; f++) { /* objects to describe */
        uint64_t key = v[i].frame[f].object;
        size_t j = 0;
        while (j < *nkeys && (*keys)[j] != key) j++;
        if (!key || j < *nkeys) continue;
        uint64_t *nk = realloc(*keys, (*nkeys + 1) * sizeof *nk);
        if (!nk) continue;
        *keys = nk;
        (*keys)[(*nkeys)++] = key;
      }
    }
    free(v);
  }
  /* group by destination; on allocation failure this rank sends nothing */
  int *sc = calloc((size_t)c->size, sizeof(int));
  size_t *at = calloc((size_t)c->size + 1, sizeof(size_t));
  wire *sorted = malloc((n ? n : 1) * sizeof *sorted);
  char *recv = NULL;
  size_t rlen = 0;
  int ok = sc && sorted && at;
  for (size_t i = 0; ok && i < n; i++) at[send[i].e.hash % (uint64_t)c->size + 1]++;
  for (int d = 0; ok && d < c->size; d++) {
    sc[d] = (int)(at[d + 1] * sizeof(wire));
    at[d + 1] += at[d];
  }
  for (size_t i = 0; ok && i < n; i++) sorted[at[send[i].e.hash % (uint64_t)c->size]++] = send[i];
  int e = exchange(c, sorted, ok ? sc : NULL, &recv, &rlen);
  free(sc), free(sorted), free(at), free(send);
  *nout = 0;
  if (e) return NULL;
  wire *r = (wire *)recv;
  size_t nr = rlen / sizeof(wire), k = 0;
  qsort(r, nr, sizeof *r, wire_cmp);
  for (size_t i = 0; i < nr; i++) {
    if (k && r[k - 1].module == r[i].module && r[k - 1].e.hash == r[i].e.hash)
      iochar_cs_merge(&r[k - 1].e, &r[i].e);
    else
      r[k++] = r[i];
  }
  *nout = k;
  return r;
}

/* Step 3: keep a site when its ops or its bytes are among the ~KEEP largest of
 * its module in the whole job; fold the others into that module's 'other'. */
static void keep_heaviest(ctx *c, wire *w, size_t *n, iochar_cs_entry *other) {
  static int64_t h[2][IOCHAR_MOD_COUNT][NB], g[2][IOCHAR_MOD_COUNT][NB];
  int thr[2][IOCHAR_MOD_COUNT];
  memset(h, 0, sizeof h);
  for (size_t i = 0; i < *n; i++) {
    const iochar_cs_entry *e = &w[i].e;
    h[0][w[i].module][bucket(e->ops[0] + e->ops[1] + e->ops[2])]++;
    h[1][w[i].module][bucket(e->bytes[0] + e->bytes[1])]++;
  }
  Y_Allreduce(h, g, 2 * IOCHAR_MOD_COUNT * NB, MPI_INT64_T, MPI_SUM, c->comm);
  for (int k = 0; k < 2; k++)
    for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
      int64_t above = 0;
      thr[k][m] = NB; /* lowest bucket whose sites and those above fit in KEEP */
      for (int b = NB - 1; b >= 0 && above + g[k][m][b] <= KEEP; b--) {
        above += g[k][m][b];
        thr[k][m] = b;
      }
    }
  size_t kept = 0;
  for (size_t i = 0; i < *n; i++) {
    const iochar_cs_entry *e = &w[i].e;
    int m = (int)w[i].module;
    if (bucket(e->ops[0] + e->ops[1] + e->ops[2]) >= thr[0][m] ||
        bucket(e->bytes[0] + e->bytes[1]) >= thr[1][m]) {
      w[kept++] = w[i];
    } else {
      iochar_cs_entry folded = *e;
      folded.nranks = 0; /* 'other' counts ranks with overflowing tables only */
      iochar_cs_merge(&other[m], &folded);
    }
  }
  *n = kept;
}

/* Step 4: the 'other' entries of all ranks and owners, summed at rank 0. */
static void reduce_other(ctx *c, iochar_cs_entry *other) {
  int64_t iv[IOCHAR_MOD_COUNT][6], ig[IOCHAR_MOD_COUNT][6];
  double fv[IOCHAR_MOD_COUNT][3], fg[IOCHAR_MOD_COUNT][3];
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    const iochar_cs_entry *e = &other[m];
    int64_t v[6] = {e->ops[0], e->ops[1], e->ops[2], e->bytes[0], e->bytes[1], e->nranks};
    memcpy(iv[m], v, sizeof v);
    memcpy(fv[m], e->time, sizeof fv[m]);
  }
  Y_Reduce(iv, ig, IOCHAR_MOD_COUNT * 6, MPI_INT64_T, MPI_SUM, 0, c->comm);
  Y_Reduce(fv, fg, IOCHAR_MOD_COUNT * 3, MPI_DOUBLE, MPI_SUM, 0, c->comm);
  memset(other, 0, sizeof(iochar_cs_entry) * IOCHAR_MOD_COUNT);
  if (c->rank) return;
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    iochar_cs_entry *e = &other[m];
    for (int k = 0; k < 3; k++) e->ops[k] = ig[m][k], e->time[k] = fg[m][k];
    e->bytes[0] = ig[m][3], e->bytes[1] = ig[m][4];
    e->nranks = (uint32_t)ig[m][5];
    e->size_other = 0; /* sizes are not kept for the 'other' entry in MPI logs */
  }
}

/* Step 5: each object described once, by owner key % size. */
static int loadmap_at_owners(ctx *c, const uint64_t *keys, size_t nkeys, iochar_buf *out,
                             int *nsec) {
  iochar_buf *per = calloc((size_t)c->size, sizeof *per);
  int *sc = calloc((size_t)c->size, sizeof(int)), rc = 0;
  iochar_buf all = {0};
  if (!per || !sc) rc = -1;
  for (size_t i = 0; !rc && i < nkeys; i++) {
    uint32_t cnt = 0;
    iochar_loadmap_put(&per[keys[i] % (uint64_t)c->size], &keys[i], 1, &cnt);
  }
  for (int d = 0; !rc && d < c->size; d++) {
    iochar_buf_put(&all, per[d].p, per[d].len);
    sc[d] = (int)per[d].len;
  }
  char *recv = NULL;
  size_t rlen = 0;
  if (exchange(c, all.p, rc || all.failed ? NULL : sc, &recv, &rlen)) rc = -1;
  /* entries: u64 key, u64 base, u16 blen + bytes, u16 plen + bytes */
  iochar_buf uniq = {0};
  uint64_t *seen = NULL;
  uint32_t n = 0;
  for (size_t off = 0; !rc && off + 18 <= rlen;) {
    uint64_t key;
    uint16_t bl, pl;
    memcpy(&key, recv + off, 8);
    memcpy(&bl, recv + off + 16, 2);
    memcpy(&pl, recv + off + 18 + bl, 2);
    size_t len = 20 + (size_t)bl + pl;
    uint32_t j = 0;
    while (j < n && seen[j] != key) j++;
    if (j == n) {
      uint64_t *s2 = realloc(seen, (n + 1) * sizeof *s2);
      if (!s2) {
        rc = -1;
        break;
      }
      seen = s2;
      seen[n++] = key;
      iochar_buf_put(&uniq, recv + off, len);
    }
    off += len;
  }
  if (!rc && n) {
    rc = iochar_section_add(out, "LOADMAP", NULL, n, uniq.p, uniq.len);
    if (!rc) (*nsec)++;
  }
  for (int d = 0; per && d < c->size; d++) iochar_buf_free(&per[d]);
  free(per), free(sc), free(recv), free(seen);
  iochar_buf_free(&all);
  iochar_buf_free(&uniq);
  return rc;
}

int iochar_callsites_mpi_sections(void *comm, iochar_buf *out, int *nsec) {
  ctx c = {*(MPI_Comm *)comm, 0, 1};
  int rc = 0; /* called on every rank when any rank records call sites */
  iochar_pmpi.Comm_rank(c.comm, &c.rank);
  iochar_pmpi.Comm_size(c.comm, &c.size);
  static iochar_cs_entry other[IOCHAR_MOD_COUNT];
  memset(other, 0, sizeof other);
  size_t n = 0, nkeys = 0;
  uint64_t *keys = NULL;
  wire *w = merge_at_owners(&c, other, &n, &keys, &nkeys);
  int fail = !w && n, anyfail = 0;
  Y_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, c.comm);
  keep_heaviest(&c, w, &n, other);
  reduce_other(&c, other);
  /* Step 6: this rank's share, one CALLSITE section per module. */
  for (int m = 0, i = 0; m < IOCHAR_MOD_COUNT && !rc; m++) {
    iochar_buf b = {0};
    uint32_t cnt = 0;
    for (; (size_t)i < n && w[i].module == (uint32_t)m; i++, cnt++)
      iochar_buf_put(&b, &w[i].e, sizeof w[i].e);
    const iochar_cs_entry *o = &other[m];
    if (c.rank == 0 && o->ops[0] + o->ops[1] + o->ops[2] > 0) {
      iochar_buf_put(&b, o, sizeof *o);
      cnt++;
    }
    if (cnt && iochar_modules[m]) {
      rc = iochar_section_add(out, "CALLSITE", iochar_modules[m]->name, cnt, b.p, b.len);
      if (!rc) (*nsec)++;
    }
    iochar_buf_free(&b);
  }
  if (loadmap_at_owners(&c, keys, nkeys, out, nsec)) rc = -1;
  free(w);
  free(keys);
  return rc || anyfail ? -1 : 0;
}
