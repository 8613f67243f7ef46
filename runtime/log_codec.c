/* Format-2 payload encodings (docs/log-format.md, "Format 2 encodings"):
 * RECORDS columns as varints (constant, same-as, plain, delta, difference
 * from an earlier column, or raw byte planes, whichever is smallest), time
 * columns as whole nanoseconds, and NAMES front-coded with ids implied by
 * the paths.  The Python mirror is reports/iochar/codec.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "log_codec.h"

enum { ENC_RAW, ENC_CONST, ENC_PLAIN, ENC_DELTA, ENC_SAME, ENC_DIFF, ENC_NS = 0x80 };
#define DIFF_WINDOW 8 /* DIFF refers to one of the 8 stored columns before it */
#define NS_LIMIT 9.0e9

static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static size_t vlen(uint64_t u) {
  size_t n = 1;
  while (u >= 128) u >>= 7, n++;
  return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t u) {
  while (u >= 128) *p++ = (uint8_t)(u | 128), u >>= 7;
  *p++ = (uint8_t)u;
  return p;
}

/* Floating counters in seconds (not the variances): logged to the nanosecond. */
static int is_seconds(uint8_t op) {
  return op == IOCHAR_OP_TIME || op == IOCHAR_OP_TS_START || op == IOCHAR_OP_TS_END ||
         op == IOCHAR_OP_MAXT || op == IOCHAR_OP_FAST_TIME || op == IOCHAR_OP_SLOW_TIME;
}

/* Whole nanoseconds of a column of seconds, when n / 1e9 gives back every
 * value exactly (after rounding the seconds columns to the nanosecond). */
static int to_ns(const double *f, size_t n, int quantize, int64_t *out) {
  for (size_t i = 0; i < n; i++) {
    double v = f[i];
    if (!(v > -NS_LIMIT && v < NS_LIMIT)) return 0; /* NaN fails too */
    double x = v * 1e9;                             /* rounded half away from zero, without libm */
    int64_t ns = (int64_t)(x + (x >= 0 ? 0.5 : -0.5));
    if (quantize) v = (double)ns / 1e9;
    double back = (double)ns / 1e9;
    if (memcmp(&back, &v, 8) != 0) return 0; /* bit for bit (-0.0 stays raw) */
    out[i] = ns;
  }
  return 1;
}

static size_t size_of(const int64_t *v, const int64_t *ref, size_t n, int delta) {
  size_t s = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t base = ref ? ref[i] : delta && i ? v[i - 1] : 0;
    s += vlen(zz((int64_t)((uint64_t)v[i] - (uint64_t)base)));
  }
  return s;
}

/* One column: the smallest encoding, ties to the first of PLAIN, DELTA,
 * DIFF (nearest column last), then RAW; the same choice as codec.py. */
static uint8_t *put_column(uint8_t *p, const int64_t *v, size_t n, int64_t **done, size_t k,
                           int ns) {
  uint8_t flag = ns ? ENC_NS : 0;
  size_t i;
  for (i = 1; i < n && v[i] == v[0]; i++)
    ;
  if (i == n) {
    *p++ = ENC_CONST | flag;
    return put_varint(p, zz(v[0]));
  }
  for (size_t j = 0; j < k; j++)
    if (memcmp(done[j], v, 8 * n) == 0) {
      *p++ = ENC_SAME | flag;
      return put_varint(p, j);
    }
  int best = -1;
  size_t best_size = 8 * n + 1, ref = 0;
  size_t s = size_of(v, NULL, n, 0);
  if (s < best_size) best = ENC_PLAIN, best_size = s;
  s = size_of(v, NULL, n, 1);
  if (s < best_size) best = ENC_DELTA, best_size = s;
  for (size_t j = k > DIFF_WINDOW ? k - DIFF_WINDOW : 0; j < k; j++) {
    s = vlen(j) + size_of(v, done[j], n, 0);
    if (s < best_size) best = ENC_DIFF, best_size = s, ref = j;
  }
  if (best < 0 || (!ns && best_size >= 8 * n)) { /* byte planes, as format 1 */
    *p++ = ENC_RAW | flag;
    p = put_varint(p, 8 * n);
    for (int b = 0; b < 8; b++)
      for (i = 0; i < n; i++) *p++ = (uint8_t)((uint64_t)v[i] >> (8 * b));
    return p;
  }
  *p++ = (uint8_t)best | flag;
  p = put_varint(p, best_size);
  if (best == ENC_DIFF) p = put_varint(p, ref);
  for (i = 0; i < n; i++) {
    int64_t base = best == ENC_DIFF ? done[ref][i] : best == ENC_DELTA && i ? v[i - 1] : 0;
    p = put_varint(p, zz((int64_t)((uint64_t)v[i] - (uint64_t)base)));
  }
  return p;
}

static size_t ncnt_of(int mi) { return iochar_modules[mi]->n_int + iochar_modules[mi]->n_flt; }

size_t iochar_columns_bound(int mi, size_t n) {
  return 8 * ((ncnt_of(mi) + 63) / 64) + (ncnt_of(mi) + 2) * (21 + 10 * n);
}

/* Presence bitmap (a counter zero in every record has no column), then the
 * columns ids, ranks and each present counter, encoded.  0 on no memory. */
size_t iochar_rows_to_columns(int mi, const uint8_t *rows, size_t n, size_t rs, uint8_t *out) {
  const iochar_module *m = iochar_modules[mi];
  size_t nw = (ncnt_of(mi) + 63) / 64, ncnt = ncnt_of(mi);
  uint64_t *present = (uint64_t *)out;
  memset(present, 0, 8 * nw);
  for (size_t i = 0; i < n; i++) {
    const uint64_t *row = (const uint64_t *)(rows + i * rs) + 2;
    for (size_t k = 0; k < ncnt; k++)
      if (row[k]) present[k / 64] |= 1ull << (k % 64);
  }
  uint8_t *p = out + 8 * nw;
  if (!n) return (size_t)(p - out);
  size_t ncols = 2;
  for (size_t k = 0; k < ncnt; k++) ncols += present[k / 64] >> (k % 64) & 1;
  int64_t *vals = malloc(8 * n * ncols), **done = malloc(sizeof *done * ncols);
  double *f = malloc(8 * n);
  if (!vals || !done || !f) {
    free(vals), free(done), free(f);
    return 0;
  }
  size_t k = 0;
  for (size_t col = 0; col < ncnt + 2; col++) {
    if (col >= 2 && !(present[(col - 2) / 64] >> ((col - 2) % 64) & 1)) continue;
    int64_t *v = vals + k * n;
    for (size_t i = 0; i < n; i++) memcpy(&v[i], rows + i * rs + 8 * col, 8);
    int ns = 0;
    if (col >= 2 + m->n_int) {
      memcpy(f, v, 8 * n);
      ns = to_ns(f, n, is_seconds(m->flts[col - 2 - m->n_int].op), v);
      if (!ns) memcpy(v, f, 8 * n); /* to_ns may have written part of v */
    }
    p = put_column(p, v, n, done, k, ns);
    done[k++] = v;
  }
  free(vals), free(done), free(f);
  return (size_t)(p - out);
}

/* ---- NAMES ---------------------------------------------------------------- */

size_t iochar_names_bound(size_t len, uint32_t count) { return len + 40 * (size_t)count + 40; }

/* Format-1 entries (u64 id, u32 len, path) -> format 2: varint-framed shared
 * prefix lengths and suffix lengths, the entries whose id is not FNV-1a of
 * their path, then the suffixes. */
size_t iochar_names_encode(const uint8_t *in, size_t len, uint32_t count, uint8_t *out) {
  size_t sa = 0, sb = 0, nexp = 0, sexp = 0, off = 0;
  const uint8_t *prev = NULL;
  uint32_t plen = 0;
  for (uint32_t e = 0; e < count && off + 12 <= len; e++) { /* sizes first */
    uint64_t id;
    uint32_t l;
    memcpy(&id, in + off, 8);
    memcpy(&l, in + off + 8, 4);
    const uint8_t *s = in + off + 12;
    uint32_t k = 0;
    while (prev && k < l && k < plen && s[k] == prev[k]) k++;
    sa += vlen(k), sb += vlen(l - k);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint32_t i = 0; i < l; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
    if (h != id) nexp++, sexp += vlen(e) + 8;
    prev = s, plen = l, off += 12 + (size_t)l;
  }
  uint8_t *p = put_varint(out, sa), *a = p, *b = a + sa + vlen(sb);
  put_varint(a + sa, sb);
  uint8_t *x = put_varint(b + sb, nexp), *t = x + sexp;
  prev = NULL, plen = 0, off = 0;
  for (uint32_t e = 0; e < count && off + 12 <= len; e++) {
    uint64_t id;
    uint32_t l;
    memcpy(&id, in + off, 8);
    memcpy(&l, in + off + 8, 4);
    const uint8_t *s = in + off + 12;
    uint32_t k = 0;
    while (prev && k < l && k < plen && s[k] == prev[k]) k++;
    a = put_varint(a, k), b = put_varint(b, l - k);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint32_t i = 0; i < l; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
    if (h != id) {
      x = put_varint(x, e);
      memcpy(x, &id, 8);
      x += 8;
    }
    memcpy(t, s + k, l - k);
    t += l - k;
    prev = s, plen = l, off += 12 + (size_t)l;
  }
  return (size_t)(t - out);
}
