/* Steps 6-7 of the MPI shutdown: this rank's sections, the offsets by one
 * scan, one collective write; and the fallback to per-rank logs. */
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

#include "callsites_mpi.h"
#include "steps.h"

/* Rank 0's log file, named and created with the job's facts (facts.c,
 * name_log), from then on this file's: its descriptor while rank 0 writes
 * through it (the pwrite path), its private directory once made. */
static iochar_tmpfile tmp0 = {.fd = -1, .dfd = -1};

void red_tmp_keep(const iochar_tmpfile *t) { tmp0 = *t; }

/* The file and its private directory, gone (errno kept). */
void red_drop_tmp(void) { iochar_tmp_discard(&tmp0); }

/* Rank 0, once every rank wrote its part: the file becomes the log, never
 * over an existing file, checked to be ours at that name after (a failure
 * removes it), and the private directory, if one was made, goes. */
static void tmp_publish(red_facts *g) {
  if (iochar_log_publish(&tmp0, g->path) != 0) iochar_log_failed(g->path);
  g->tmp[0] = 0; /* moved, or removed: that name is no longer ours */
}

/* Rank 0, before the ranks but 0 open the file by name (a job whose log is
 * not rank 0's alone, written by pwrite): the private directory, and the
 * file linked or moved into it; every rank then knows it as <dir>/log.
 * Called before the collective that precedes any other rank's open (the
 * offsets' Scan, whose results need rank 0's part, and which carries the
 * name and the directory's dev/ino).  1 when it failed (the file stays or
 * goes where red_drop_tmp finds it; the others' opens then fail and the
 * write's vote stops every rank). */
static int tmp_private(red_facts *g) {
  if (iochar_tmp_private(&tmp0) != 0) return 1;
  memcpy(g->tmp, tmp0.name, sizeof g->tmp);
  g->ddev = tmp0.ddev;
  g->dino = tmp0.dino;
  return 0;
}

/* The ranks but 0: rank 0's private directory (from the offsets' Scan) and
 * the file in it.  1 when there is none. */
static int tmp_named(red_facts *g, const char *dir) {
  int w = snprintf(g->tmp, sizeof g->tmp, "%s/log", dir);
  if (!dir[0] || w < 0 || (size_t)w >= sizeof g->tmp) return 1;
  snprintf(g->dir, sizeof g->dir, "%s", dir);
  return 0;
}

/* A small job (at most RED_GATHER_ROWS rows in all) sends its NAMES entries,
 * RECORDS rows, RANKS totals and MERGE rows to rank 0, which folds the MERGE
 * rows (as their owners would have) and writes each kind as one section: a
 * section per rank and kind cost more in headers and in compression restarts
 * than the few rows themselves (a 16-rank IOR log was 1.25x Darshan's).
 * Every rank calls this (one exchange); -1 on all when any failed.  all[m]:
 * RECORDS rows, all[IOCHAR_MOD_COUNT]: NAMES, all[IOCHAR_MOD_COUNT + 1 + m]: RANKS rows; ntot the
 * counts. */
static void present_of(const red_facts *g, int present[IOCHAR_MOD_COUNT]) {
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) present[m] = g->present[m] > 0;
}

/* This rank's block for rank 0: names, per module its rows and RANKS
 * totals, then its MERGE rows. */
static void pack_small(red_ctx *x, red_state *s, const int present[IOCHAR_MOD_COUNT],
                       iochar_buf *p) {
  iochar_buf_u32(p, s->noutnames);
  iochar_buf_put(p, s->outnames.p, s->outnames.len);
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    if (!present[m]) continue;
    iochar_buf_u32(p, (uint32_t)s->nout[m]);
    iochar_buf_put(p, s->out[m].p, s->nout[m] * iochar_row_size(m));
    uint8_t tot[64] = {0};
    if (s->nrows[m]) iochar_rank_totals(m, s->rows[m].p, s->nrows[m], x->rank, tot);
    iochar_buf_u8(p, s->nrows[m] > 0);
    iochar_buf_put(p, tot, 64);
  }
  iochar_buf_u64(p, s->msend_len);
  iochar_buf_put(p, s->msend, s->msend_len);
}

/* Up to RED_GATHER_SIZES_RANKS ranks the blocks' sizes reach rank 0 inside the
 * first wide chunk (reducer/wide.c), so the gather needs no Alltoall of
 * counts: the ranks but 0 pack theirs before it (their rows are final after
 * the merge; rank 0, the chunk's root, receives the wide rows).  1 when this
 * rank failed (its size travels as 0; the gather votes it down). */
int red_small_pack(red_ctx *x, red_state *s, const red_facts *g) {
  if (!red_small_sizes(x, g) || x->rank == 0) return 0;
  int present[IOCHAR_MOD_COUNT];
  present_of(g, present);
  pack_small(x, s, present, &s->gpack);
  return s->gpack.failed || s->gpack.len > INT_MAX;
}

static int gather_small(red_ctx *x, red_state *s, const red_facts *g,
                        const int present[IOCHAR_MOD_COUNT], int failed, iochar_buf *all,
                        size_t *ntot) {
  int sizes = red_small_sizes(x, g), pre = sizes && x->rank != 0; /* packed already */
  iochar_buf own = {0};
  const iochar_buf *p = pre ? &s->gpack : &own;
  if (!pre) pack_small(x, s, present, &own);
  int *scount = calloc((size_t)x->nprocs, sizeof(int));
  failed |= p->failed || !scount || p->len > INT_MAX || (sizes && x->rank == 0 && !s->gsizes);
  if (scount && !failed) scount[0] = (int)p->len;
  void *r = NULL;
  int *rc = NULL;
  size_t rt = 0;
  const int *known = NULL; /* NULL: the counts by one Alltoall */
  if (sizes && x->rank == 0 && s->gsizes) {
    s->gsizes[0] = (int)p->len; /* the others' came with the first wide chunk */
    known = s->gsizes;
  } else if (sizes) {
    known = x->zeros; /* only rank 0 receives */
  }
  int rc_x = red_exchange(x, failed, p->p, scount ? scount : x->zeros, known, NULL, &r, &rc, &rt);
  iochar_buf_free(&own);
  free(scount);
  if (rc_x) return -1;
  /* rank 0: each rank's block in rank order; split it by kind */
  const uint8_t *q = r, *end = q + rt;
  uint32_t n, nn = 0;
  iochar_buf merge = {0};
  for (int i = 0; i < x->nprocs && x->rank == 0; i++) { /* names: count, entries */
    if (!rc[i]) continue;
    memcpy(&n, q, 4), q += 4;
    nn += n;
    const uint8_t *e = q;
    for (uint32_t k = 0; k < n; k++) {
      uint32_t len;
      memcpy(&len, e + 8, 4);
      e += 12 + (size_t)len;
    }
    iochar_buf_put(&all[IOCHAR_MOD_COUNT], q, (size_t)(e - q));
    q = e;
    for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
      if (!present[m]) continue;
      memcpy(&n, q, 4), q += 4;
      size_t bytes = (size_t)n * iochar_row_size(m);
      iochar_buf_put(&all[m], q, bytes);
      ntot[m] += n;
      q += bytes;
      if (*q++) {
        iochar_buf_put(&all[IOCHAR_MOD_COUNT + 1 + m], q, 64);
        ntot[IOCHAR_MOD_COUNT + 1 + m]++;
      }
      q += 64;
    }
    uint64_t mlen;
    memcpy(&mlen, q, 8), q += 8;
    iochar_buf_put(&merge, q, (size_t)mlen);
    q += mlen;
  }
  ntot[IOCHAR_MOD_COUNT] = nn;
  int folded = x->rank != 0 || (!merge.failed && red_fold_rows(merge.p, merge.len, all, ntot) == 0);
  iochar_buf_free(&merge);
  free(r);
  free(rc);
  return (q == end || x->rank != 0) && folded ? 0 : -1;
}

/* This rank's sections, but the call sites (below): the same assembly as
 * the serial log's (runtime/log_sections.c), from the rows this rank owns
 * after the reduction (a small job: every rank's rows, gathered at rank 0);
 * rank 0 adds the job's head and the series. */
static int build_local(red_ctx *x, red_state *s, const red_facts *g,
                       const iochar_series_part *series, iochar_buf *body, int *nsec, int failed) {
  int present[IOCHAR_MOD_COUNT];
  present_of(g, present);
  iochar_log_parts parts = {.head = x->rank == 0,
                            .present = present,
                            .names = &s->outnames,
                            .nnames = s->noutnames,
                            .records = s->out,
                            .nrecords = s->nout,
                            .rank_rows = s->rows,
                            .nrank_rows = s->nrows,
                            .rank = x->rank,
                            .series = x->rank == 0 ? series : NULL};
  int rc = 0, gathered = red_gathered(x, g);
  iochar_buf all[2 * IOCHAR_MOD_COUNT + 1];
  size_t ntot[2 * IOCHAR_MOD_COUNT + 1] = {0};
  memset(all, 0, sizeof all);
  if (gathered) {
    rc = gather_small(x, s, g, present, failed, all, ntot);
    for (int k = 0; k < 2 * IOCHAR_MOD_COUNT + 1; k++) rc |= all[k].failed;
    parts.names = &all[IOCHAR_MOD_COUNT], parts.nnames = (uint32_t)ntot[IOCHAR_MOD_COUNT];
    parts.records = all, parts.nrecords = ntot;
    parts.rank_totals = &all[IOCHAR_MOD_COUNT + 1],
    parts.nrank_totals = &ntot[IOCHAR_MOD_COUNT + 1];
  }
  if (!rc && (!gathered || x->rank == 0)) rc = iochar_log_sections(body, nsec, &parts);
  for (int k = 0; k < 2 * IOCHAR_MOD_COUNT + 1; k++) iochar_buf_free(&all[k]);
  if (rc) return -1;
  if (iochar_trace_on && iochar_trace_sections(body, nsec)) return -1; /* each rank's own */
  return body->failed ? -1 : 0;
}

/* Call sites are merged across ranks: every rank takes part (that code
 * votes on its own failures), whatever happened to its own sections.  A
 * failure here is this rank's: write_log makes it everybody's. */
int red_build_body(red_ctx *x, red_state *s, const red_facts *g, const iochar_series_part *series,
                   iochar_buf *body, int *nsec, int failed) {
  int bad = build_local(x, s, g, series, body, nsec, failed) != 0 || failed || red_fault(x, "body");
  if (g->callsites && iochar_callsites_mpi_sections(&x->comm, body, nsec)) bad = 1;
  return bad || body->failed ? -1 : 0;
}

/* Each rank's part at its offset: with pwrite into the file rank 0 created
 * (few ranks: one collective less than MPI_File_open, which duplicates a
 * communicator), or one collective MPI-IO write (many ranks: aggregation). */
static int write_parts(red_ctx *x, const red_facts *g, const uint8_t *hdr, const iochar_buf *body,
                       uint64_t at, int collective) {
  int err = 0;
  iochar_xfsz hold; /* past RLIMIT_FSIZE: EFBIG for us, no SIGXFSZ for the application */
  iochar_xfsz_hold(&hold);
  if (!collective) {
    /* Rank 0 writes through the descriptor it created the file with.  The
     * others open "log" in rank 0's private directory through a descriptor
     * of that directory checked to be rank 0's (dev/ino), and check the file
     * too: nothing another user put at either name is written. */
    int own = x->rank == 0 && tmp0.fd >= 0, fd = own ? tmp0.fd : -1;
    if (!own) {
      int d = iochar_tmp_open_dir(g->dir, g->ddev, g->dino);
      fd = d < 0 ? -1 : openat(d, "log", O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (d >= 0) close(d);
      struct stat st;
      if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != g->dev ||
          (uint64_t)st.st_ino != g->ino)
        err = 1;
    }
    if (!err && hdr && pwrite(fd, hdr, IOCHAR_HEADER_SIZE, 0) != IOCHAR_HEADER_SIZE) err = 1;
    for (size_t o = 0; o < body->len && !err;) {
      ssize_t w = pwrite(fd, body->p + o, body->len - o, (off_t)(at + o));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        err = 1;
      else
        o += (size_t)w;
    }
    if (!own && fd >= 0 && close(fd) != 0) err = 1; /* rank 0's closes when published */
    iochar_xfsz_release(&hold);
    return err;
  }
  /* MPI_File_open opens by name on every rank: the name is that of "log"
   * under a descriptor of the private directory, checked to be rank 0's,
   * reached through /proc/self/fd, so that no directory another user puts
   * at the private directory's name is entered.  Without /proc the plain
   * name serves only where no other user can write the log's directory; a
   * rank that has no safe name opens "" (the open fails on every rank). */
  int d = iochar_tmp_open_dir(g->dir, g->ddev, g->dino);
  char name[sizeof g->tmp];
  struct stat st;
  snprintf(name, sizeof name, "/proc/self/fd/%d", d);
  if (d >= 0 && stat(name, &st) == 0 && (uint64_t)st.st_dev == g->ddev &&
      (uint64_t)st.st_ino == g->dino)
    snprintf(name, sizeof name, "/proc/self/fd/%d/log", d);
  else if (d >= 0 && !g->shared)
    snprintf(name, sizeof name, "%s", g->tmp);
  else
    name[0] = 0, err = 1;
  MPI_File fh;
  MPI_Status st_;
  if (iochar_pmpi.File_open(x->comm, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
    if (d >= 0) close(d);
    iochar_xfsz_release(&hold);
    return 1;
  }
  if (hdr &&
      iochar_pmpi.File_write_at(fh, 0, hdr, IOCHAR_HEADER_SIZE, MPI_BYTE, &st_) != MPI_SUCCESS)
    err = 1;
  int n = body->len > INT_MAX ? 0 : (int)body->len;
  err |= body->len > INT_MAX;
  if (iochar_pmpi.File_write_at_all(fh, (MPI_Offset)at, body->p, n, MPI_BYTE, &st_) != MPI_SUCCESS)
    err = 1;
  if (iochar_pmpi.File_close(&fh) != MPI_SUCCESS) err = 1;
  if (d >= 0) close(d);
  iochar_xfsz_release(&hold);
  return err;
}

/* The offsets' Scan element: [u64 bytes][u64 sections][rank 0's private
 * directory: u64 dev, u64 ino, u64 shared (another user could write the
 * log's directory), its name in dir_len + 1 bytes].  Sums, and the
 * directory from the one rank that has it (rank 0). */
#define SCAN_HEAD 40
static size_t scan_dir_len;
static void scan_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  size_t el = SCAN_HEAD + scan_dir_len + 1;
  for (int e = 0; e < *len; e++) {
    const uint8_t *a = (const uint8_t *)in + (size_t)e * el;
    uint8_t *b = (uint8_t *)inout + (size_t)e * el;
    for (int k = 0; k < 2; k++) {
      uint64_t u, v;
      memcpy(&u, a + 8 * k, 8);
      memcpy(&v, b + 8 * k, 8);
      v += u;
      memcpy(b + 8 * k, &v, 8);
    }
    if (a[SCAN_HEAD]) memcpy(b + 16, a + 16, SCAN_HEAD - 16 + scan_dir_len + 1);
  }
}

/* Offsets by one inclusive Scan of (bytes, sections), which also brings the
 * ranks but 0 the private directory where the file is (the name and
 * dev/ino are rank 0's; the facts' Allreduce carries only the name's
 * length).  1 when it failed. */
static int scan_offsets(red_ctx *x, red_facts *g, const uint64_t mine[2], uint64_t incl[2]) {
  size_t dl = (size_t)g->dir_len < sizeof g->dir ? (size_t)g->dir_len : sizeof g->dir - 1;
  uint8_t a[SCAN_HEAD + sizeof g->dir], b[SCAN_HEAD + sizeof g->dir];
  memset(a, 0, SCAN_HEAD + dl + 1);
  memcpy(a, mine, 16);
  if (x->rank == 0) {
    uint64_t id[3] = {g->ddev, g->dino, (uint64_t)g->shared};
    memcpy(a + 16, id, sizeof id);
    memcpy(a + SCAN_HEAD, g->dir, dl);
  }
  MPI_Datatype t;
  MPI_Op op;
  scan_dir_len = dl;
  iochar_pmpi.Type_contiguous((int)(SCAN_HEAD + dl + 1), MPI_BYTE, &t);
  iochar_pmpi.Type_commit(&t);
  iochar_pmpi.Op_create(scan_op, 1, &op);
  int rc = Y_Scan(a, b, 1, t, op, x->comm) != MPI_SUCCESS;
  iochar_pmpi.Op_free(&op);
  iochar_pmpi.Type_free(&t);
  memcpy(incl, b, 16);
  b[SCAN_HEAD + dl] = 0;
  if (rc || x->rank == 0) return rc;
  uint64_t id[3];
  memcpy(id, b + 16, sizeof id);
  g->ddev = id[0];
  g->dino = id[1];
  g->shared = (int64_t)id[2];
  return tmp_named(g, (const char *)b + SCAN_HEAD);
}

/* The last rank, which alone knows the totals, writes the file header.  A
 * small job's log is rank 0's alone (no call sites or traces, which each
 * rank adds): no scan (but for a collective write), and rank 0 writes the
 * header.  Rank 0 renames the temporary file once every rank reports
 * success. */
int red_write_log(red_ctx *x, red_facts *g, iochar_buf *body, int nsec, int bad) {
  bad |= red_fault(x, "write");
  uint64_t mine[2] = {bad ? 0 : body->len, bad ? 0 : (uint64_t)nsec}, incl[2];
  if (bad) body->len = 0;
  /* (one rank: its log is its own whatever it holds, so no private
   * directory and no scan) */
  int solo = x->nprocs == 1 || (red_gathered(x, g) && !g->callsites && !g->trace);
  int last = solo ? 0 : x->nprocs - 1; /* the header's writer */
  int collective = red_collective_write(x);
  /* Other ranks write too, by name: rank 0 moves the file into the private
   * directory first (before the Scan, which no rank leaves before rank 0 is
   * in); a collective write's file is there already. */
  if (!solo && !collective && x->rank == 0) bad |= tmp_private(g);
  if (bad) body->len = 0, mine[0] = mine[1] = 0;
  /* A collective write opens the file on every rank, by the name the Scan
   * brings them: a small job's Scan there just hands back rank 0's totals. */
  if (solo && !collective)
    memcpy(incl, mine, sizeof incl); /* rank 0's totals; the others write nothing */
  else if (scan_offsets(x, g, mine, incl))
    bad = 1, body->len = 0; /* no name, or no offsets: this rank writes nothing */
  uint8_t hdr[IOCHAR_HEADER_SIZE];
  if (x->rank == last) iochar_log_header(hdr, IOCHAR_HEADER_SIZE + incl[0], (uint32_t)incl[1]);
  int err = bad;
  if (collective || x->rank == last || body->len)
    err |= write_parts(x, g, x->rank == last ? hdr : NULL, body,
                       IOCHAR_HEADER_SIZE + incl[0] - mine[0], collective);
  int anyerr = 0;
  Y_Allreduce(&err, &anyerr, 1, MPI_INT, MPI_MAX, x->comm);
  if (anyerr) return -1; /* every rank knows: each writes its own log */
  if (x->rank == 0) tmp_publish(g);
  return 0;
}

/* Every rank stopped at the same vote: each writes its own log, as a job
 * that never reached MPI_Finalize does, with its own job facts. */
void red_fall_back(red_ctx *x, const iochar_job *before) {
  iochar_job *j = &iochar_job_info;
  j->start_wall = before->start_wall;
  j->nnodes = before->nnodes;
  j->partial = before->partial;
  memcpy(j->folded_files, before->folded_files, sizeof j->folded_files);
  j->end_wall = red_wall_now();
  j->finalized = 1; /* it did: the report tells this case from a job that did not */
  j->per_rank_log = 1;
  if (x->rank == 0) red_drop_tmp(); /* created, never published */
  char path[IOCHAR_PATH_MAX];
  if (iochar_log_path(path, sizeof path, 1) != 0)
    iochar_warn_once(IOCHAR_WARN_LOG_PATH, "log path too long; no log written");
  else if (iochar_log_write_local(path) != 0)
    iochar_log_failed(path);
  else
    iochar_live_done(); /* its counters are in the log now */
  if (x->rank == 0)
    iochar_warn_once(IOCHAR_WARN_REDUCE_FALLBACK,
                     "a rank could not take part in reducing the job's records; "
                     "each rank wrote its own log");
}
