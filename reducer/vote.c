/* The vote protocol of the MPI shutdown.
 *
 * A rank that fails alone (memory, mostly) must not leave the others waiting
 * in a collective it will never call.  So a rank that fails goes on taking
 * part, with nothing to contribute, up to the next vote: before each
 * collective that needs data, every rank says whether it failed since the
 * last one, and on any failure all of them stop at the same point and each
 * writes its own per-rank log instead (red_fall_back).  Phases return -1 when
 * all ranks stopped together, 1 when only this rank failed after its last
 * vote (the next phase votes first), 0 otherwise. */
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

/* The wall clock, for the job's end and the phases' times (every step). */
double red_wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* 1 when any rank failed (a failing vote counts as a failure). */
int red_vote(red_ctx *x, int failed) {
  int any = 1;
  if (Y_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, x->comm) != MPI_SUCCESS) return 1;
  return any;
}

/* Testing knob: IOCHAR_TEST_FAULT=phase:rank makes that rank fail there, as
 * when an allocation fails. */
int red_fault(red_ctx *x, const char *phase) {
  const char *f = iochar_cfg.test_fault;
  size_t n = strlen(phase);
  return f && strncmp(f, phase, n) == 0 && f[n] == ':' && atoi(f + n + 1) == x->rank;
}

/* Alltoallv of byte blocks grouped by destination; the receive counts are
 * passed in (known already) or exchanged by one Alltoall (rcount NULL).  A
 * rank that failed before (failed) sends nothing and votes the exchange
 * down; -1 on every rank when any failed.  With the counts exchanged, the
 * Alltoall is that vote: a failed rank sends every rank -1 (each rank hears
 * from each), so no separate vote needs to precede this exchange.
 *
 * The receive buffer and counts are taken once the counts are known, and a
 * vote on them precedes the Alltoallv, unless pre holds buffers every rank
 * took before the counts' Alltoall (its vote): each rank sends every rank
 * its total with its count, so all learn the job's total, and when that
 * fits pre->cap (the same on every rank) every rank's receive fits the
 * buffer it has, and no vote is needed.  pre's buffers pass to this call
 * (handed back as *rbuf and *rcount_out, or freed). */
int red_exchange(red_ctx *x, int failed, const void *sbuf, const int *scount,
                 const int *rcount_known, red_pre *pre, void **rbuf, int **rcount_out,
                 size_t *rtotal) {
  int n = x->nprocs, *sd = x->xbuf, *rc = x->xbuf + 2 * n, *rd = x->xbuf + 3 * n;
  long long mine = 0, so = 0, ro = 0, all = 0;
  char *r = NULL;
  int *counts = NULL;
  if (failed) scount = x->zeros;
  for (int i = 0; i < n; i++) mine += scount[i];
  if (rcount_known) {
    memcpy(rc, rcount_known, sizeof(int) * (size_t)n);
  } else { /* pairs (count, sender's total), compacted to counts */
    for (int i = 0; i < n; i++) {
      sd[2 * i] = failed ? -1 : scount[i];
      sd[2 * i + 1] = mine > INT_MAX ? INT_MAX : (int)mine;
    }
    if (Y_Alltoall(sd, 2, MPI_INT, rc, 2, MPI_INT, x->comm) != MPI_SUCCESS) failed = -1;
    for (int i = 0; i < n && failed >= 0; i++) {
      if (rc[2 * i] < 0) failed = -1; /* some rank failed: every rank saw its -1 */
      all += rc[2 * i + 1];
      rc[i] = rc[2 * i]; /* in place: i <= 2i */
    }
  }
  for (int i = 0; i < n && failed >= 0; i++) {
    sd[i] = (int)so, rd[i] = (int)ro;
    so += scount[i], ro += rc[i];
  }
  if (pre && failed >= 0 && !rcount_known && all <= (long long)pre->cap) {
    r = pre->buf, counts = pre->counts; /* every rank's receive fits: no vote */
    pre->buf = NULL, pre->counts = NULL;
  } else if (failed >= 0) {
    r = failed ? NULL : malloc(ro ? (size_t)ro : 1);
    counts = failed ? NULL : malloc(sizeof(int) * (size_t)n);
    if (red_vote(x, !r || !counts || so > INT_MAX || ro > INT_MAX)) failed = -1;
  }
  if (pre) free(pre->buf), free(pre->counts), pre->buf = NULL, pre->counts = NULL;
  if (failed < 0 ||
      Y_Alltoallv(sbuf, scount, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, x->comm) != MPI_SUCCESS) {
    free(r);
    free(counts);
    return -1;
  }
  memcpy(counts, rc, sizeof(int) * (size_t)n); /* hand back the receive counts */
  *rbuf = r;
  *rcount_out = counts;
  *rtotal = (size_t)ro;
  return 0;
}

/* Alltoallv with no vote: both sides' counts are known and the receive
 * buffer was taken before the last vote, so no rank can have failed in
 * between (a rank that fails after it sends what it promised, from any
 * buffer that long, and says so at the next vote).  The caller keeps rbuf.
 * Posted only: the buffers, counts and the displacements (in x->xbuf) stay
 * untouched until *req completes. */
int red_exchange_post(red_ctx *x, const void *sbuf, const int *scount, void *rbuf,
                      const int *rcount, MPI_Request *req) {
  int *sd = x->xbuf, *rd = x->xbuf + 3 * x->nprocs;
  long long so = 0, ro = 0;
  for (int i = 0; i < x->nprocs; i++) {
    sd[i] = (int)so, rd[i] = (int)ro;
    so += scount[i], ro += rcount[i];
  }
  return iochar_pmpi.Ialltoallv(sbuf, scount, sd, MPI_BYTE, rbuf, rcount, rd, MPI_BYTE, x->comm,
                                req) == MPI_SUCCESS
             ? 0
             : -1;
}
