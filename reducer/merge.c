/* Cross-rank merge by the schema's reduction ops (docs/log-format.md): the
 * rules of reports/iochar/merge.py, on fixed-size partials.
 *
 * A partial is [header][row][tie-break ranks][top-k slots].  The header
 * carries what a row cannot: the rank count, the fastest/slowest rank, and
 * (n, mean, M2) of per-rank time and bytes, combined with Chan et al.'s
 * pairwise update so that any merge order gives the population variance.
 * Ties go to the lowest rank (ANY, MAXT, FASTEST/SLOWEST), which makes the
 * merge commutative: the tree reduction and the sequential fold agree.
 * Top-4 tables are merged whole: each rank's row carries its full table of
 * IOCHAR_TOPK_SLOTS (value, count) slots after the logged counters, and a
 * partial keeps as many while merging, so the result is exact while the
 * ranks hold at most that many distinct values together; past that, the
 * table's _APPROX counter is set. */
#include <stdlib.h>
#include <string.h>

#include "../runtime/access.h"
#include "../runtime/core.h"
#include "../runtime/log_sections.h"
#include "merge.h"

#define PTOPK IOCHAR_TOPK_SLOTS
#define MAXLIST 64

typedef struct hdr {
  int64_t n, lo_rank;
  int64_t fast_rank, slow_rank, fast_bytes, slow_bytes;
  double fast_time, slow_time;
  double t_mean, t_m2, b_mean, b_m2;
} hdr;

typedef struct desc {
  int ready;
  size_t row, size, src, topk;
  int nany, any[MAXLIST];           /* ANY int counters */
  int nmaxt, maxt[8], maxt_size[8]; /* MAXT floats, paired MAXT_SIZE ints */
  int ntab, tab[8], tabk[8];        /* top-k tables: first TOPK_VAL, k */
  int tabx[8];                      /* the table's _APPROX counter, -1 if none */
} desc;

static desc D[IOCHAR_MOD_COUNT];

static const desc *get_desc(int mi) {
  desc *d = &D[mi];
  if (d->ready) return d;
  const iochar_module *m = iochar_modules[mi];
  int nsize = 0;
  for (uint32_t i = 0; i < m->n_int; i++) {
    uint8_t op = m->ints[i].op;
    if (op == IOCHAR_OP_ANY && d->nany < MAXLIST) d->any[d->nany++] = (int)i;
    if (op == IOCHAR_OP_MAXT_SIZE && nsize < 8) d->maxt_size[nsize++] = (int)i;
    if (op == IOCHAR_OP_TOPK_VAL && (i == 0 || m->ints[i - 1].op != IOCHAR_OP_TOPK_VAL) &&
        d->ntab < 8) {
      int k = 0;
      while (i + k < m->n_int && m->ints[i + k].op == IOCHAR_OP_TOPK_VAL) k++;
      uint32_t x = i + 2 * (uint32_t)k; /* IOCHAR_TOP4: the flag follows the counts */
      d->tabx[d->ntab] = x < m->n_int && m->ints[x].op == IOCHAR_OP_MAX ? (int)x : -1;
      d->tab[d->ntab] = (int)i;
      d->tabk[d->ntab++] = k;
    }
  }
  for (uint32_t i = 0; i < m->n_flt; i++)
    if (m->flts[i].op == IOCHAR_OP_MAXT && d->nmaxt < 8) {
      d->maxt_size[d->nmaxt] = d->nmaxt < nsize ? d->maxt_size[d->nmaxt] : -1;
      d->maxt[d->nmaxt++] = (int)i;
    }
  for (int k = d->nmaxt; k < 8; k++) d->maxt_size[k] = -1;
  d->row = iochar_row_size(mi);
  d->src = sizeof(hdr) + d->row;
  d->topk = d->src + 8 * (size_t)(d->nany + d->nmaxt);
  d->size = d->topk + (size_t)d->ntab * PTOPK * 16;
  d->ready = 1;
  return d;
}

size_t iochar_partial_size(int mi) { return get_desc(mi)->size; }

/* Views into a partial. */
#define H(p) ((hdr *)(p))
#define ROW(d, p) ((uint8_t *)(p) + sizeof(hdr))
#define CNT(m, d, p) ((int64_t *)(ROW(d, p) + 16))
#define FLT(m, d, p) ((double *)(ROW(d, p) + 16 + 8 * (size_t)(m)->n_int))
#define SRC(d, p) ((int64_t *)((uint8_t *)(p) + (d)->src))
#define TVAL(d, p, t) ((int64_t *)((uint8_t *)(p) + (d)->topk) + (size_t)(t)*2 * PTOPK)
#define TCNT(d, p, t) (TVAL(d, p, t) + PTOPK)

void iochar_partial_empty(int mi, void *p) { memset(p, 0, get_desc(mi)->size); }

void iochar_partial_from_row(int mi, void *p, const void *row) {
  const desc *d = get_desc(mi);
  const iochar_module *m = iochar_modules[mi];
  memset(p, 0, d->size);
  memcpy(ROW(d, p), row, d->row);
  int64_t rank, *c = CNT(m, d, p);
  double *f = FLT(m, d, p), t;
  int64_t by;
  memcpy(&rank, (const uint8_t *)row + 8, 8);
  iochar_rank_load(m, c, f, &t, &by);
  *H(p) = (hdr){.n = 1,
                .lo_rank = rank,
                .fast_rank = rank,
                .slow_rank = rank,
                .fast_bytes = by,
                .slow_bytes = by,
                .fast_time = t,
                .slow_time = t,
                .t_mean = t,
                .b_mean = (double)by};
  int64_t *src = SRC(d, p);
  for (int k = 0; k < d->nany; k++) src[k] = c[d->any[k]] ? rank : INT64_MAX;
  for (int k = 0; k < d->nmaxt; k++) src[d->nany + k] = rank;
  /* the whole tables, from the row's tail (iochar_row_tail: schema order) */
  size_t tail = iochar_row_tail(mi) / 8;
  const int64_t *whole = (const int64_t *)((const uint8_t *)row + d->row) - tail;
  for (int t2 = 0; t2 < d->ntab; t2++) {
    if ((size_t)(t2 + 1) * 2 * PTOPK <= tail) {
      memcpy(TVAL(d, p, t2), whole + (size_t)t2 * 2 * PTOPK, 16 * PTOPK);
      continue;
    }
    int k = d->tabk[t2], n = 0; /* no tail: the logged entries */
    for (int j = 0; j < k && j < PTOPK; j++) {
      if (!c[d->tab[t2] + k + j]) continue;
      TVAL(d, p, t2)[n] = c[d->tab[t2] + j];
      TCNT(d, p, t2)[n++] = c[d->tab[t2] + k + j];
    }
  }
}

static int slot_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b; /* (value, count): count desc, value asc */
  if (x[1] != y[1]) return x[1] > y[1] ? -1 : 1;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Returns 1 when the union held more values than the slots: dropped ones
 * may come back later with a partial count, so the table is approximate. */
static int topk_merge(int64_t *av, int64_t *ac, const int64_t *bv, const int64_t *bc) {
  int64_t s[2 * PTOPK][2];
  int n = 0;
  for (int i = 0; i < PTOPK && ac[i]; i++, n++) s[n][0] = av[i], s[n][1] = ac[i];
  for (int i = 0; i < PTOPK && bc[i]; i++) {
    int j = 0;
    while (j < n && s[j][0] != bv[i]) j++;
    if (j < n)
      s[j][1] += bc[i];
    else
      s[n][0] = bv[i], s[n++][1] = bc[i];
  }
  qsort(s, (size_t)n, sizeof s[0], slot_cmp);
  for (int i = 0; i < PTOPK; i++) {
    av[i] = i < n ? s[i][0] : 0;
    ac[i] = i < n ? s[i][1] : 0;
  }
  return n > PTOPK;
}

static inline int64_t min_nz_i(int64_t a, int64_t b) { return !a ? b : !b ? a : a < b ? a : b; }
static inline double min_nz_f(double a, double b) {
  return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

void iochar_partial_merge(int mi, void *into, const void *from) {
  const desc *d = get_desc(mi);
  const iochar_module *m = iochar_modules[mi];
  hdr *a = H(into);
  const hdr *b = H(from);
  if (b->n == 0) return;
  if (a->n == 0) {
    memcpy(into, from, d->size);
    return;
  }
  int64_t *ac = CNT(m, d, into), *bc = CNT(m, d, (void *)from);
  double *af = FLT(m, d, into), *bf = FLT(m, d, (void *)from);
  for (uint32_t i = 0; i < m->n_int; i++) {
    switch (m->ints[i].op) {
    case IOCHAR_OP_SUM:
    case IOCHAR_OP_BYTES:
    case IOCHAR_OP_TIME: ac[i] += bc[i]; break;
    case IOCHAR_OP_MAX:
    case IOCHAR_OP_TS_END:
    case IOCHAR_OP_MAXT:
      if (bc[i] > ac[i]) ac[i] = bc[i];
      break;
    case IOCHAR_OP_MIN_NZ:
    case IOCHAR_OP_TS_START: ac[i] = min_nz_i(ac[i], bc[i]); break;
    default: break; /* ANY, top-k, MAXT_SIZE, rank stats: below */
    }
  }
  for (uint32_t i = 0; i < m->n_flt; i++) {
    switch (m->flts[i].op) {
    case IOCHAR_OP_SUM:
    case IOCHAR_OP_BYTES:
    case IOCHAR_OP_TIME: af[i] += bf[i]; break;
    case IOCHAR_OP_MAX:
    case IOCHAR_OP_TS_END:
      if (bf[i] > af[i]) af[i] = bf[i];
      break;
    case IOCHAR_OP_MIN_NZ:
    case IOCHAR_OP_TS_START: af[i] = min_nz_f(af[i], bf[i]); break;
    default: break;
    }
  }
  int64_t *as = SRC(d, into);
  const int64_t *bs = SRC(d, from);
  for (int k = 0; k < d->nany; k++)
    if (bs[k] < as[k]) {
      as[k] = bs[k];
      ac[d->any[k]] = bc[d->any[k]];
    }
  for (int k = 0; k < d->nmaxt; k++) {
    int fi = d->maxt[k], si = d->maxt_size[k];
    if (bf[fi] > af[fi] || (bf[fi] == af[fi] && bs[d->nany + k] < as[d->nany + k])) {
      af[fi] = bf[fi];
      as[d->nany + k] = bs[d->nany + k];
      if (si >= 0) ac[si] = bc[si];
    }
  }
  for (int t = 0; t < d->ntab; t++)
    if (topk_merge(TVAL(d, into, t), TCNT(d, into, t), TVAL(d, from, t), TCNT(d, from, t)) &&
        d->tabx[t] >= 0)
      ac[d->tabx[t]] = 1;
  if (b->fast_time < a->fast_time ||
      (b->fast_time == a->fast_time && b->fast_rank < a->fast_rank)) {
    a->fast_time = b->fast_time;
    a->fast_rank = b->fast_rank;
    a->fast_bytes = b->fast_bytes;
  }
  if (b->slow_time > a->slow_time ||
      (b->slow_time == a->slow_time && b->slow_rank < a->slow_rank)) {
    a->slow_time = b->slow_time;
    a->slow_rank = b->slow_rank;
    a->slow_bytes = b->slow_bytes;
  }
  double na = (double)a->n, nb = (double)b->n, n = na + nb;
  double dt = b->t_mean - a->t_mean, db = b->b_mean - a->b_mean;
  a->t_m2 += b->t_m2 + dt * dt * na * nb / n;
  a->b_m2 += b->b_m2 + db * db * na * nb / n;
  a->t_mean += dt * nb / n;
  a->b_mean += db * nb / n;
  a->n += b->n;
  if (b->lo_rank < a->lo_rank) a->lo_rank = b->lo_rank;
}

void iochar_partial_to_row(int mi, const void *p, void *row) {
  const desc *d = get_desc(mi);
  const iochar_module *m = iochar_modules[mi];
  const hdr *h = H(p);
  memcpy(row, ROW(d, (void *)p), d->row);
  if (h->n < 2) return; /* one rank's row keeps its rank and its own stats */
  int64_t rank = -1, *c = (int64_t *)((uint8_t *)row + 16);
  double *f = (double *)(c + m->n_int);
  memcpy((uint8_t *)row + 8, &rank, 8);
  for (uint32_t i = 0; i < m->n_int; i++) {
    switch (m->ints[i].op) {
    case IOCHAR_OP_FAST_RANK: c[i] = h->fast_rank; break;
    case IOCHAR_OP_SLOW_RANK: c[i] = h->slow_rank; break;
    case IOCHAR_OP_FAST_BYTES: c[i] = h->fast_bytes; break;
    case IOCHAR_OP_SLOW_BYTES: c[i] = h->slow_bytes; break;
    default: break;
    }
  }
  for (uint32_t i = 0; i < m->n_flt; i++) {
    switch (m->flts[i].op) {
    case IOCHAR_OP_FAST_TIME: f[i] = h->fast_time; break;
    case IOCHAR_OP_SLOW_TIME: f[i] = h->slow_time; break;
    case IOCHAR_OP_VAR_TIME: f[i] = h->t_m2 / (double)h->n; break;
    case IOCHAR_OP_VAR_BYTES: f[i] = h->b_m2 / (double)h->n; break;
    default: break;
    }
  }
  size_t tail = iochar_row_tail(mi) / 8;
  int64_t *whole = (int64_t *)((uint8_t *)row + d->row) - tail;
  for (int t = 0; t < d->ntab; t++) {
    int k = d->tabk[t];
    for (int j = 0; j < k; j++) {
      c[d->tab[t] + j] = j < PTOPK ? TVAL(d, p, t)[j] : 0;
      c[d->tab[t] + k + j] = j < PTOPK ? TCNT(d, p, t)[j] : 0;
    }
    if ((size_t)(t + 1) * 2 * PTOPK <= tail)
      memcpy(whole + (size_t)t * 2 * PTOPK, TVAL(d, p, t), 16 * PTOPK);
  }
}
