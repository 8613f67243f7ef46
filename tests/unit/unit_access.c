/* Unit tests of the shared access accounting on synthetic calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/access.h"

enum {
  READS,
  WRITES,
  BR,
  BW,
  MBR,
  MBW,
  CR,
  CW,
  SR,
  SW,
  RW,
  FNA,
  FA,
  MNA,
  MA,
  MTS_R,
  MTS_W,
  BIN_R,
  BIN_W = BIN_R + 10,
  ACC = BIN_W + 10,
  STR = ACC + 9, /* 4 values, 4 counts, the _APPROX flag */
  NINT = STR + 9
};
enum { TR, TW, TM, MTR, MTW, RS, WS, RE, WE, NFLT };

static const iochar_rw_layout L = {.ops = {READS, WRITES},
                                   .bytes = {BR, BW},
                                   .max_byte = {MBR, MBW},
                                   .consec = {CR, CW},
                                   .seq = {SR, SW},
                                   .size_bin0 = {BIN_R, BIN_W},
                                   .max_time_size = {MTS_R, MTS_W},
                                   .rw_switches = RW,
                                   .access1 = ACC,
                                   .stride1 = STR,
                                   .file_not_aligned = FNA,
                                   .file_alignment = FA,
                                   .mem_not_aligned = MNA,
                                   .mem_alignment = MA,
                                   .f_time = {TR, TW, TM},
                                   .f_max_time = {MTR, MTW},
                                   .f_start = {RS, WS},
                                   .f_end = {RE, WE},
                                   .n_int = NINT};

/* The observers (runtime/observe.c): off. */
int iochar_observing;
void iochar_observe(iochar_record *r, int op, int64_t off, int64_t len, double t0, double t1) {
  (void)r, (void)op, (void)off, (void)len, (void)t0, (void)t1;
}

/* Stand-ins for the series (runtime/series.c): totals of what was flushed. */
_Atomic double iochar_series_inv_width[IOCHAR_MOD_COUNT];
static int64_t flushed_bytes[2], flushed_ops[2], flushes;
void iochar_series_flush(int m, iochar_rw_state *s) {
  (void)m;
  for (int d = 0; d < 2; d++) {
    flushed_bytes[d] += s->ser_bytes[d];
    flushed_ops[d] += s->ser_ops[d];
    s->ser_bytes[d] = s->ser_ops[d] = 0;
  }
  flushes++;
}

/* Stand-in for the record arena (runtime/records.c): one record (its
 * header, then its counters), one state with its tables just below it,
 * made at the record's first read or write as there. */
static union {
  iochar_record r;
  int64_t words[sizeof(iochar_record) / 8 + NINT + NFLT];
} mem;
static iochar_record *const rec = &mem.r;
static int64_t *const c = mem.r.c;
static double *const f = (double *)(mem.r.c + NINT);
static struct {
  iochar_rw_topk tables;
  iochar_rw_state st;
} chunk;
_Static_assert(offsetof(__typeof__(chunk), st) == IOCHAR_RW_TK_BYTES, "tables below the state");
static int states_made;
iochar_rw_state *iochar_rw_state_make(iochar_record *r) {
  states_made++;
  iochar_rw_state_init(&chunk.st);
  r->state = &chunk.st;
  return &chunk.st;
}

#include "expect.h"

/* A fresh record, whose state is made (the usual case below). */
static void reset(void) {
  memset(&mem, 0, sizeof mem);
  memset(&chunk, 0, sizeof chunk);
  iochar_rw_state_init(&chunk.st);
  rec->state = &chunk.st;
  c[FA] = 4096;
}

static void w(int64_t off, int64_t len, double t0, double t1) {
  iochar_rw_account(rec, &L, iochar_rw_state_of(rec), 1, off, len, (void *)8, t0, t1);
}

int main(void) {
  /* the state and its tables: none for metadata (whose time still counts
   * overlapping calls once), made once at the first data op, and a record
   * without them emits empty top-4 counters */
  reset();
  rec->state = NULL;
  states_made = 0;
  iochar_rw_open(rec, &L);
  iochar_meta_account(rec, &L, 1, 2);
  iochar_meta_account(rec, &L, 1.5, 2.5); /* overlaps: 0.5 s more */
  iochar_meta_account(rec, &L, 1.6, 1.7); /* inside: nothing more */
  EXPECT(states_made, 0);
  EXPECT(rec->state == NULL, 1);
  EXPECT(f[TM] * 10, 15);
  c[ACC] = c[STR + 4] = 7;
  iochar_rw_finish(rec, &L);
  EXPECT(c[ACC], 0);
  EXPECT(c[STR + 4], 0);
  w(0, 8, 3, 4);
  w(8, 8, 5, 6);
  EXPECT(states_made, 1);
  EXPECT(rec->state == &chunk.st, 1);
  EXPECT(chunk.tables.access.cnt[0], 2);
  EXPECT(f[TM] * 10, 15);
  EXPECT(f[TW] * 10, 20);

  /* consecutive: first access at 0 is neither; then 99 consecutive */
  reset();
  for (int i = 0; i < 100; i++) w(i * 4096, 4096, i, i + 0.5);
  EXPECT(c[WRITES], 100);
  EXPECT(c[CW], 99);
  EXPECT(c[SW], 99);
  EXPECT(c[BIN_W + 2], 100);
  EXPECT(c[MBW], 100 * 4096 - 1);
  EXPECT(c[FNA], 0);
  iochar_rw_finish(rec, &L);
  EXPECT(c[ACC], 4096);
  EXPECT(c[ACC + 4], 100);
  EXPECT(c[STR], 0); /* consecutive accesses have no stride (Darshan) */
  EXPECT(c[STR + 4], 0);
  EXPECT(f[TW] * 10, 500);

  /* issue 15.1: a 0-byte write is an op and a 0_100 bin entry but no access
   * size; only forward gaps are strides (a rewind, an overlap, a consecutive
   * write are not) */
  reset();
  w(0, 100, 0, 0);    /* first: no stride */
  w(100, 0, 0, 0);    /* 0 bytes: a write, no size, no stride (consecutive) */
  w(100, 100, 0, 0);  /* consecutive */
  w(300, 100, 0, 0);  /* gap of 100 */
  w(0, 100, 0, 0);    /* rewind: no stride */
  w(50, 100, 0, 0);   /* overlap: no stride */
  w(1150, 100, 0, 0); /* gap of 1000 */
  w(1350, 100, 0, 0); /* gap of 100 */
  iochar_rw_finish(rec, &L);
  EXPECT(c[WRITES], 8);
  EXPECT(c[BIN_W], 8);
  EXPECT(c[ACC], 100);
  EXPECT(c[ACC + 4], 7);
  EXPECT(c[ACC + 1], 0);
  EXPECT(c[ACC + 5], 0);
  EXPECT(c[STR], 100);
  EXPECT(c[STR + 4], 2);
  EXPECT(c[STR + 1], 1000);
  EXPECT(c[STR + 5], 1);
  EXPECT(c[STR + 6], 0);
  EXPECT(c[SW], 5); /* 100 (0-byte), 100, 300, 1150, 1350 */
  EXPECT(c[CW], 2); /* the 0-byte one and the one after it */

  /* issue 15.2: an open restarts the pattern (Darshan): rewriting from 0
   * after a reopen, the second block is sequential and consecutive, and the
   * first is neither; without the reset, neither would be */
  reset();
  for (int i = 0; i < 4; i++) w(i * 100, 100, 0, 0);
  iochar_rw_open(rec, &L);
  w(0, 100, 0, 0);
  w(100, 100, 0, 0);
  EXPECT(c[SW], 3 + 1);
  EXPECT(c[CW], 3 + 1);
  iochar_rw_open(rec, &L);
  w(50, 10, 0, 0); /* after a reopen, any offset > 0 is sequential */
  w(1, 10, 0, 0);  /* 1 < 59: neither */
  EXPECT(c[SW], 5);
  EXPECT(c[CW], 4);
  iochar_rw_finish(rec, &L);
  EXPECT(c[STR + 4], 0); /* a first access after a reopen has no stride */
  /* a deferred run is applied before the reset */
  reset();
  w(0, 10, 0, 0);
  for (int i = 1; i < 5; i++) EXPECT(iochar_rw_defer(&chunk.st, 1, i * 10, 10, 0), 1);
  iochar_rw_open(rec, &L);
  EXPECT(c[WRITES], 5);
  EXPECT(c[CW], 4);
  EXPECT(c[MBW], 49);

  /* a first access at offset 1 is consecutive and sequential (Darshan) */
  reset();
  w(1, 10, 0, 1);
  EXPECT(c[CW], 1);
  EXPECT(c[SW], 1);
  EXPECT(c[FNA], 1);

  /* overlapping calls count their union once */
  reset();
  w(0, 1, 0.0, 2.0);
  w(1, 1, 1.0, 3.0);
  w(2, 1, 1.5, 2.5);
  EXPECT(f[TW] * 10, 30);

  /* bins: upper bounds inclusive */
  reset();
  const int64_t sz[] = {100, 101, 1024, 1025, 1073741824, 1073741825};
  const int bin[] = {0, 1, 1, 2, 8, 9};
  for (int i = 0; i < 6; i++) {
    int64_t before = c[BIN_W + bin[i]];
    w(0, sz[i], 0, 0);
    EXPECT(c[BIN_W + bin[i]], before + 1);
  }

  /* failed call: not counted at all (Darshan's rule) */
  reset();
  w(0, -1, 0, 1);
  EXPECT(c[WRITES], 0);
  EXPECT(f[TW] * 1e9, 0);
  EXPECT(c[BW], 0);
  for (int i = 0; i < 10; i++) EXPECT(c[BIN_W + i], 0);

  /* Space-Saving: 20 distinct values then a heavy one stays on top */
  iochar_topk t = {0};
  for (int v = 0; v < 20; v++) iochar_topk_add(&t, v);
  for (int i = 0; i < 50; i++) iochar_topk_add(&t, 1000);
  int64_t out[8];
  iochar_topk_emit(&t, out, 0);
  EXPECT(out[0], 1000);
  EXPECT(out[4] >= 50, 1);
  int64_t out9[9];
  iochar_topk_emit(&t, out9, 0);
  EXPECT(out9[8], 1); /* 21 distinct values in 16 slots: approximate */
  iochar_topk t16 = {0};
  for (int v = 1; v <= 16; v++)
    for (int i = 0; i < v; i++) iochar_topk_add(&t16, v * 10);
  iochar_topk_emit(&t16, out9, 0);
  EXPECT(out9[8], 0); /* 16 distinct: exact */
  EXPECT(out9[0], 160);
  EXPECT(out9[4], 16);
  EXPECT(out9[3], 130);
  int64_t whole[2 * IOCHAR_TOPK_SLOTS];
  iochar_topk_dump(&t16, whole);
  EXPECT(whole[15], 10); /* the 16th, count 1 */
  EXPECT(whole[IOCHAR_TOPK_SLOTS + 15], 1);

  /* rw switches */
  reset();
  w(0, 10, 0, 0);
  iochar_rw_account(rec, &L, &chunk.st, 0, 0, 10, (void *)8, 0, 0);
  w(10, 10, 0, 0);
  EXPECT(c[RW], 2);

  /* series: pending counts move out once per bin change, totals exact */
  reset();
  memset(flushed_bytes, 0, sizeof flushed_bytes);
  memset(flushed_ops, 0, sizeof flushed_ops);
  flushes = 0;
  iochar_series_inv_width[0] = 1.0;                               /* 1-second bins */
  for (int i = 0; i < 10; i++) w(i * 10, 10, i * 0.25, i * 0.25); /* bins 0,0,0,0,1,1,1,1,2,2 */
  iochar_series_flush(0, &chunk.st);
  EXPECT(flushed_bytes[1], 100);
  EXPECT(flushed_ops[1], 10);
  EXPECT(flushes, 4); /* first use, bin 1, bin 2, final */

  /* deferred runs: bulk accounting equals one-by-one accounting */
  {
    int64_t c1[NINT];
    double f1[NFLT];
    reset();
    w(0, 4096, 1, 2);
    for (int i = 1; i < 50; i++) w(i * 100 + 3996, 100, 5, 5);
    w(50000, 7, 6, 6);
    iochar_rw_finish(rec, &L);
    memcpy(c1, c, sizeof c1);
    memcpy(f1, f, sizeof f1);
    reset();
    w(0, 4096, 1, 2);
    w(4096, 100, 5, 5);
    for (int i = 2; i < 50; i++) EXPECT(iochar_rw_defer(&chunk.st, 1, i * 100 + 3996, 100, 5), 1);
    EXPECT(iochar_rw_defer(&chunk.st, 1, 9999, 100, 5), 0); /* not at the run's end */
    w(50000, 7, 6, 6);
    iochar_rw_finish(rec, &L);
    for (int i = 0; i < NINT; i++) EXPECT(c[i], c1[i]);
    for (int i = 0; i < NFLT; i++) EXPECT(f[i] * 1e9, f1[i] * 1e9);
  }

  /* timed runs: the same, with real durations, one overlapping call, a
   * slowest call inside the run, and an unaligned buffer */
  {
    int64_t c1[NINT];
    double f1[NFLT];
    static const double t0s[] = {1, 2, 3, 3.5, 5, 6, 7.5, 9};
    static const double t1s[] = {1.5, 2.5, 4, 3.9, 5.1, 7.4, 8, 9.2}; /* #3 overlaps #2 */
    for (int pass = 0; pass < 2; pass++) {
      reset();
      for (int i = 0; i < 8; i++) {
        void *b = (void *)(uintptr_t)(i == 5 ? 9 : 8);
        if (pass == 0 || i == 0 ||
            !iochar_rw_defer_timed(rec, &L, &chunk.st, 1, i * 512, 512, b, t0s[i], t1s[i]))
          iochar_rw_account(rec, &L, &chunk.st, 1, i * 512, 512, b, t0s[i], t1s[i]);
        /* an lseek-like metadata call between repeats keeps the run */
        iochar_meta_account(rec, &L, t1s[i], t1s[i] + 0.01);
      }
      w(4096 * 3, 7, 10, 11);
      iochar_rw_finish(rec, &L);
      if (pass == 0) {
        memcpy(c1, c, sizeof c1);
        memcpy(f1, f, sizeof f1);
      }
    }
    for (int i = 0; i < NINT; i++) EXPECT(c[i], c1[i]);
    for (int i = 0; i < NFLT; i++) EXPECT(f[i] * 1e9, f1[i] * 1e9);
    EXPECT(c[WRITES], 9);
    EXPECT(c[MNA], 1);
    EXPECT(f[MTW] * 10, 14); /* the 1.4 s call, inside the run */
  }

  /* block-multiple repeats share the first one's alignment (O(1) path) */
  for (int start = 0; start < 2; start++) {
    reset();
    w(start, 8192, 0, 0);
    for (int i = 1; i < 10; i++)
      EXPECT(iochar_rw_defer_timed(rec, &L, &chunk.st, 1, start + i * 8192, 8192, (void *)8, i, i),
             1);
    iochar_rw_finish(rec, &L);
    EXPECT(c[FNA], start ? 10 : 0);
    EXPECT(c[CW], start ? 10 : 9);
  }

  /* power-of-two sizes under the block (closed-form count): bulk equals one
   * by one, for runs that start on, off and between multiples of the size */
  {
    static const int64_t sizes[] = {8, 512, 1024, 2048, 96};
    static const int64_t starts[] = {0, 8, 4, 4088, 4096, 3072, 8184, 13};
    static const int64_t ks[] = {1, 7, 8, 511, 513, 2000};
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
      for (size_t b = 0; b < sizeof starts / sizeof *starts; b++)
        for (size_t kk = 0; kk < sizeof ks / sizeof *ks; kk++) {
          int64_t n = sizes[a], off = starts[b], k = ks[kk], want;
          reset();
          for (int64_t i = 0; i <= k; i++) w(off + i * n, n, (double)i, (double)i);
          want = c[FNA];
          reset();
          w(off, n, 0, 0);
          for (int64_t i = 1; i <= k; i++)
            iochar_rw_defer_timed(rec, &L, &chunk.st, 1, off + i * n, n, (void *)8, (double)i,
                                  (double)i);
          iochar_rw_finish(rec, &L);
          EXPECT(c[FNA], want);
        }
  }

  if (failures) return 1;
  printf("unit_access: all passed\n");
  return 0;
}
