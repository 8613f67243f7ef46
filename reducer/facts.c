/* Step 3 of the MPI shutdown: the job's facts (start, end, nodes, folded
 * files, the wide set, warnings...) in one Allreduce, and the log's name. */
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

static int wide_insert(red_key *t, red_key k) {
  size_t h = (size_t)(k.id ^ (k.id >> 29) ^ k.m) % RED_WIDE_SLOTS;
  for (size_t n = 0; n < RED_WIDE_SLOTS; n++, h = (h + 1) % RED_WIDE_SLOTS) {
    if (!t[h].aux) {
      t[h] = (red_key){k.id, k.m, 1};
      return 0;
    }
    if (t[h].id == k.id && t[h].m == k.m) return 0;
  }
  return -1;
}

static void facts_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int e = 0; e < *len; e++) { /* elements RED_FACTS_WIRE bytes apart */
    const red_facts *a = (const red_facts *)((const char *)in + e * RED_FACTS_WIRE);
    red_facts *b = (red_facts *)((char *)inout + e * RED_FACTS_WIRE);
    if (a->start < b->start) b->start = a->start;
    if (a->end > b->end) b->end = a->end;
    for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
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
    if (a->trace > b->trace) b->trace = a->trace;
    if (a->failed > b->failed) b->failed = a->failed;
    if (a->overflow > b->overflow) b->overflow = a->overflow;
    b->truncated += a->truncated;
    b->warned |= a->warned;
    if (a->dev > b->dev) b->dev = a->dev;
    if (a->ino > b->ino) b->ino = a->ino;
    if (a->dir_len > b->dir_len) b->dir_len = a->dir_len;
    for (int i = 0; i < RED_WIDE_SLOTS && !b->overflow; i++)
      if (a->wide[i].aux && wide_insert(b->wide, a->wide[i])) b->overflow = 1;
  }
}

/* Rank 0 names the log and creates its file (runtime/safefile.c), whose
 * dev/ino travel with the facts; rank 0 gives it the log's name at the end
 * (docs/security.md).  A file other ranks open by name (MPI-IO, or pwrite by
 * several ranks) must sit in a private directory beside the log (0700,
 * random name), where no other user can plant or swap a name.  For MPI-IO
 * it is made here.  Otherwise rank 0 creates the file unnamed (O_TMPFILE;
 * flat or private where the file system lacks it) and keeps its
 * descriptor: a small job's log is rank 0's alone, and a mkdir, a creation
 * in a fresh directory and an rmdir cost 1.5-2 ms of ext4 journal on the
 * shutdown's critical path.  The directory's name is chosen now and travels
 * with the facts; when the job turns out to need other ranks' writes,
 * tmp_private (write.c) puts the file in it before any rank opens it. */
static void name_log(red_ctx *x, red_facts *f) {
  f->path_ok = iochar_log_path(f->path, sizeof f->path, 0) == 0;
  if (f->path_ok && iochar_log_dir_make() != 0) { /* under a log root: its day directory */
    iochar_log_failed(f->path);
    f->path_ok = 0;
  }
  int by_name = red_collective_write(x), ok = 0;
  static iochar_tmpfile t; /* 8 KB: off the stack; handed to write.c */
  if (f->path_ok && iochar_tmp_create(f->path, &t, by_name) != 0 && errno == EXDEV) {
    /* Another user took the private directory's name at every try: the
     * ranks write their own logs (unnamed files: nothing to take), and the
     * fallback's warning says so. */
    f->failed = 1;
    f->dir[0] = f->tmp[0] = 0;
    f->dir_len = 0;
    return;
  }
  if (f->path_ok && t.fd >= 0) {
    ok = 1;
    if (t.kind != IOCHAR_TMP_PRIVATE && iochar_tmp_dir_name(f->path, &t) != 0) {
      iochar_tmp_discard(&t);
      ok = 0;
    }
  }
  if (ok && by_name) { /* every rank opens it by name: rank 0 too, through MPI-IO */
    close(t.fd);
    t.fd = -1;
  }
  if (ok) {
    f->dev = t.dev;
    f->ino = t.ino;
    f->ddev = t.ddev;
    f->dino = t.dino;
    f->shared = t.shared;
    memcpy(f->dir, t.dir, sizeof f->dir);
    memcpy(f->tmp, t.name, sizeof f->tmp);
    red_tmp_keep(&t); /* write.c takes it from here */
  } else {
    if (f->path_ok) iochar_log_failed(f->path);
    f->path_ok = 0;
    f->dir[0] = f->tmp[0] = 0;
  }
  f->dir_len = (int64_t)strlen(f->dir);
}

/* The facts' Allreduce is also a vote (facts.failed): -1 on every rank when
 * any failed. */
int red_job_facts(red_ctx *x, red_state *s, red_facts *g, double *shift, int failed) {
  iochar_job *j = &iochar_job_info;
  static red_facts spare; /* taking part must not depend on an allocation */
  red_facts *f = calloc(1, sizeof *f), *mine = f ? f : &spare;
  if (!f) memset(&spare, 0, sizeof spare);
  mine->failed = failed || !f || red_fault(x, "facts");
  if (f) {
    j->end_wall = red_wall_now();
    f->start = j->start_wall;
    f->end = j->end_wall;
    for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
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
    f->trace = iochar_trace_on;
    for (size_t i = 0; i < s->nwide_owned && !f->overflow; i++)
      if (wide_insert(f->wide, s->wide_owned[i])) f->overflow = 1;
    if (x->rank == 0) name_log(x, f);
  }
  MPI_Datatype t;
  MPI_Op op;
  iochar_pmpi.Type_contiguous((int)RED_FACTS_WIRE, MPI_BYTE, &t);
  iochar_pmpi.Type_commit(&t);
  iochar_pmpi.Op_create(facts_op, 1, &op);
  MPI_Request req;
  int rc = iochar_pmpi.Iallreduce(mine, g, 1, t, op, x->comm, &req) == MPI_SUCCESS ? 0 : -1;
  if (rc) req = MPI_REQUEST_NULL;
  if (red_answers_wait(s, &req)) rc = -1; /* the owners' answers come in the same polls */
  iochar_pmpi.Op_free(&op);
  iochar_pmpi.Type_free(&t);
  if (f && x->rank == 0) { /* rank 0's names: not on the wire */
    memcpy(g->path, f->path, sizeof g->path);
    memcpy(g->dir, f->dir, sizeof g->dir);
    memcpy(g->tmp, f->tmp, sizeof g->tmp);
    g->ddev = f->ddev;
    g->dino = f->dino;
    g->shared = f->shared;
  }
  free(f);
  if (rc || g->failed) return -1;
  *shift = j->start_wall - g->start;
  j->start_wall = g->start;
  j->end_wall = g->end;
  j->nnodes = g->nodes > 0 ? (int)g->nodes : 1;
  j->partial = (int)g->partial;
  j->truncated_paths = g->truncated;
  /* The job's log keeps what other ranks warned about (they print nothing). */
  for (int k = 0; k < IOCHAR_WARN_COUNT && x->rank == 0; k++)
    if ((g->warned & ~iochar_warned()) >> k & 1) {
      char line[128];
      snprintf(line, sizeof line, "another rank: %s", iochar_warn_describe(k));
      iochar_warn_keep(line);
    }
  memcpy(j->folded_files, g->folded, sizeof g->folded);
  j->nprocs = x->nprocs;
  j->finalized = 1;
  j->per_rank_log = 0;
  return 0;
}
