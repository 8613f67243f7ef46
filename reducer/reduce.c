/* The MPI shutdown: job-wide facts, cross-rank record reduction (by owner
 * through all-to-all, or by tree for records many ranks share), per-rank
 * compression and one collective write.  docs/reduction.md is the algorithm;
 * steps.h lists where each step lives. */
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

#include "reduce.h"
#include "steps.h"

/* The exchanges' count scratch, for a rank that cannot allocate its own:
 * up to SPARE_RANKS ranks the first exchange is also the first vote, and a
 * rank must be able to take part in it whatever failed (beyond, one vote
 * goes first, as that costs nothing there).  Untouched: no memory used. */
#define SPARE_RANKS 16384
static int spare_counts[5 * SPARE_RANKS];

int iochar_mpi_reduce_and_write(void) {
  iochar_job *j = &iochar_job_info;
  int fin = 0;
  if (iochar_pmpi_load() || (iochar_pmpi.Finalized(&fin), fin)) return -1;
  if (__atomic_exchange_n(&j->written, 1, __ATOMIC_ACQ_REL)) return 0;
  __atomic_store_n(&iochar_ready, 0, __ATOMIC_RELEASE);   /* stop recording */
  __atomic_store_n(&iochar_fds_max, 0, __ATOMIC_RELEASE); /* (core.h, iochar_fd_get) */
  int e = errno;
  /* The application has finished communicating (it is in MPI_Finalize), so
   * the tool's collectives use MPI_COMM_WORLD directly: creating a
   * communicator costs several collectives, each dear when ranks share cores. */
  red_ctx ctx = {.comm = MPI_COMM_WORLD}, *x = &ctx;
  iochar_pmpi.Comm_rank(x->comm, &x->rank);
  iochar_pmpi.Comm_size(x->comm, &x->nprocs);
  static iochar_job before;
  before = *j;
  red_state s;
  memset(&s, 0, sizeof s);
  s.mreq = s.areq = MPI_REQUEST_NULL;
  red_facts *g = calloc(1, sizeof *g);
  iochar_series_part *series = calloc(IOCHAR_MOD_COUNT, sizeof *series);
  x->xbuf = malloc(sizeof(int) * 4 * (size_t)x->nprocs);
  x->zeros = calloc((size_t)x->nprocs, sizeof(int));
  int own_counts = x->xbuf && x->zeros;
  iochar_buf body = {0};
  int nsec = 0, rc = -1, failed;
  double shift = 0;
  double t[8]; /* phase ends, for IOCHAR_TIMING=1 */
  t[0] = red_wall_now();
  failed = !g || !series || !own_counts || red_collect_rows(&s) || red_fault(x, "rows");
  if (x->nprocs > SPARE_RANKS) { /* without these a rank cannot even take part */
    if (red_vote(x, failed)) goto stop;
  } else if (!own_counts) {
    free(x->xbuf), free(x->zeros);
    memset(spare_counts, 0, sizeof spare_counts);
    x->xbuf = spare_counts, x->zeros = spare_counts + 4 * SPARE_RANKS;
  } /* else the keys' Alltoall in classify is the first vote */
  t[1] = red_wall_now();
  if ((failed = red_classify(x, &s, failed)) < 0) goto stop;
  failed = red_merge_prepare(x, &s, failed);
  failed = red_wide_prepare(x, &s, failed);
  t[2] = red_wall_now();
  if (red_job_facts(x, &s, g, &shift, failed)) goto stop;
  red_shift_rows(&s, shift);
  t[3] = red_wall_now();
  if ((failed = red_merge_at_owners(x, &s, red_gathered(x, g))) < 0) goto stop;
  failed |= red_small_pack(x, &s, g);
  t[4] = red_wall_now();
  /* 1: this rank failed after the last vote; the gather's or the write's
   * is the next. */
  if ((failed = red_wide_and_series(x, &s, g, shift, series, failed)) < 0) goto stop;
  t[5] = red_wall_now();
  if (g->path_ok) {
    int bad = red_build_body(x, &s, g, series, &body, &nsec, failed) != 0;
    t[6] = red_wall_now();
    if (red_write_log(x, g, &body, nsec, bad)) goto stop;
    rc = 0;
  } /* else rank 0's name_log said why; every rank knows path_ok */
  t[7] = red_wall_now();
  if (x->rank == 0 && iochar_cfg.timing && !rc)
    iochar_warn_once(
        IOCHAR_WARN_TIMING,
        "shutdown %.3f s on rank 0: rows %.3f, classify %.3f, job facts "
        "%.3f, merge %.3f, wide+series %.3f, compress %.3f, write %.3f; %d collectives in %d "
        "waits",
        t[7] - t[0], t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4], t[6] - t[5],
        t[7] - t[6], red_ncoll, red_nwait);
  goto out;
stop:
  red_fall_back(x, &before);
out:
  free(g);
  free(series);
  if (own_counts) free(x->xbuf), free(x->zeros);
  iochar_buf_free(&body);
  red_state_free(&s);
  errno = e;
  return rc;
}
