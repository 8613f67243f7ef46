/* MPI-IO operations that end in a later call: the nonblocking read/write
 * forms (counted at post, timed until an MPI_Wait or MPI_Test call is seen
 * to complete their request) and the split collectives' end (timed from
 * their begin, in mpiio_data.c).  The completion wrappers look only at the
 * requests posted here. */
#include <stdlib.h>
#include <string.h>

#include "mpiio_internal.h"

/* ---- pending requests: MPI_Request -> operation (mpiio_requests) -------- */

typedef struct pending {
  iochar_record *rec;
  double t0;
  int64_t len;
  int dir;
} pending;

static pending pending_items[MPIIO_NPENDING];
static iochar_pool pool = IOCHAR_POOL_OF(pending_items);
static atomic_int npending; /* 0: completion wrappers pass straight through */

static inline uint64_t req_key(MPI_Request rq) { return mpiio_key(&rq, sizeof rq); }

/* An operation [t0, t1] (nonblocking post to completion, or a split
 * collective's begin to end) is over: extend its time, max time and end. */
static void record_done(iochar_record *r, int dir, double t0, int64_t len, double t1) {
  const iochar_rw_layout *L = &mpiio_layouts[K_NB];
  iochar_spin_lock(&r->lock);
  iochar_time_add(r, L, iochar_rw_state_of(r), dir, t0, t1);
  double *f = iochar_rec_f(r, L);
  if (t1 - t0 > f[L->f_max_time[dir]]) {
    f[L->f_max_time[dir]] = t1 - t0;
    r->c[L->max_time_size[dir]] = len < 0 ? 0 : len;
  }
  if (t1 > f[L->f_end[dir]]) f[L->f_end[dir]] = t1;
  iochar_spin_unlock(&r->lock);
}

/* A nonblocking call posted: account it, and keep its request until completion.
 * Inlined: a call more per post would cost more than the code it saves. */
static inline __attribute__((always_inline)) void
record_post(iochar_record *r, int dir, int ret, int64_t count, MPI_Datatype dt, const void *buf,
            const MPI_Request *rq, double t0, double t1) {
  int64_t len = mpiio_record_rw(r, K_NB, dir, ret, count, dt, buf, t0, t1);
  if (ret != MPI_SUCCESS || !mpiio_requests) return;
  pending *p = iochar_pool_get(&pool);
  if (!p) return; /* more in flight than we track: the post time stays */
  *p = (pending){r, t0, len, dir};
  if (iochar_hmap_put(mpiio_requests, req_key(*rq), p) == 0)
    atomic_fetch_add(&npending, 1);
  else
    iochar_pool_put(&pool, p);
}

static void request_done(MPI_Request h, double t1) {
  pending *p = iochar_hmap_del(mpiio_requests, req_key(h));
  if (!p) return;
  atomic_fetch_sub(&npending, 1);
  record_done(p->rec, p->dir, p->t0, p->len, t1);
  iochar_pool_put(&pool, p);
}

/* A request freed before its completion is seen: forget it (its handle may
 * be reused), keeping the time up to the post.  A cancelled one still
 * completes through Wait/Test. */
static void request_forget(MPI_Request h) {
  pending *p = iochar_hmap_del(mpiio_requests, req_key(h));
  if (!p) return;
  atomic_fetch_sub(&npending, 1);
  iochar_pool_put(&pool, p);
}

/* ---- nonblocking read/write --------------------------------------------- */

MPI_WRAP(int, MPI_File_iread, (MPI_File fh, void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_at,
         (MPI_File fh, MPI_Offset o, void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_at)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_at)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_at,
         (MPI_File fh, MPI_Offset o, const void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_at)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_at)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_shared,
         (MPI_File fh, void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_shared)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_shared)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_shared,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_shared)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_shared)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_all,
         (MPI_File fh, void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_all)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_all)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_all,
         (MPI_File fh, const void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_all)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_all)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_at_all,
         (MPI_File fh, MPI_Offset o, void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_at_all)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_at_all)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_at_all,
         (MPI_File fh, MPI_Offset o, const void *buf, int n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_at_all)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_at_all)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

#if MPI_VERSION >= 4 /* large-count forms */

MPI_WRAP(int, MPI_File_iread_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_c)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_c)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_c)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_c)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_at_c,
         (MPI_File fh, MPI_Offset o, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_at_c)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_at_c)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_at_c,
         (MPI_File fh, MPI_Offset o, const void *buf, MPI_Count n, MPI_Datatype dt,
          MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_at_c)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_at_c)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_shared_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_shared_c)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_shared_c)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_shared_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_shared_c)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_shared_c)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_all_c,
         (MPI_File fh, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_all_c)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_all_c)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_all_c,
         (MPI_File fh, const void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_all_c)(fh, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_all_c)(fh, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iread_at_all_c,
         (MPI_File fh, MPI_Offset o, void *buf, MPI_Count n, MPI_Datatype dt, MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iread_at_all_c)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iread_at_all_c)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_READ, ret, n, dt, buf, rq, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_iwrite_at_all_c,
         (MPI_File fh, MPI_Offset o, const void *buf, MPI_Count n, MPI_Datatype dt,
          MPI_Request *rq)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_iwrite_at_all_c)(fh, o, buf, n, dt, rq);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_iwrite_at_all_c)(fh, o, buf, n, dt, rq);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_post(r, DIR_WRITE, ret, n, dt, buf, rq, t0, t1));
  return ret;
}
#endif

/* ---- split collectives' end -------------------------------------------- */

static void record_split_end(iochar_record *r, int dir, double t1) {
  iochar_spin_lock(&r->lock);
  mpiio_state *s = r->state; /* none: no split begun */
  double t0 = s ? s->split_t0[dir] : 0;
  int64_t len = s ? s->split_len[dir] : 0;
  iochar_spin_unlock(&r->lock);
  if (t0 > 0) record_done(r, dir, t0, len, t1);
}

MPI_WRAP(int, MPI_File_read_all_end, (MPI_File fh, void *buf, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_all_end)(fh, buf, st);
  int ret = PREAL(MPI_File_read_all_end)(fh, buf, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_split_end(r, DIR_READ, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_all_end)(fh, buf, st);
  int ret = PREAL(MPI_File_write_all_end)(fh, buf, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_split_end(r, DIR_WRITE, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_at_all_end)(fh, buf, st);
  int ret = PREAL(MPI_File_read_at_all_end)(fh, buf, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_split_end(r, DIR_READ, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_at_all_end)(fh, buf, st);
  int ret = PREAL(MPI_File_write_at_all_end)(fh, buf, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_split_end(r, DIR_WRITE, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_read_ordered_end)(fh, buf, st);
  int ret = PREAL(MPI_File_read_ordered_end)(fh, buf, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_split_end(r, DIR_READ, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *st)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_write_ordered_end)(fh, buf, st);
  int ret = PREAL(MPI_File_write_ordered_end)(fh, buf, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_split_end(r, DIR_WRITE, t1));
  return ret;
}

/* ---- request completion: only requests we posted are looked at ---------- */

static inline int tracking(void) {
  return atomic_load_explicit(&npending, memory_order_relaxed) > 0 &&
         (!iochar_in_tool || iochar_active());
}

/* Handles are copied before the call (completion overwrites them); only
 * the requests found in the pending map are ours. */
MPI_WRAP(int, MPI_Wait, (MPI_Request * rq, MPI_Status *st)) {
  if (!tracking()) return PREAL(MPI_Wait)(rq, st);
  MPI_Request h = *rq;
  int ret = PREAL(MPI_Wait)(rq, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(request_done(h, t1));
  return ret;
}

MPI_WRAP(int, MPI_Test, (MPI_Request * rq, int *flag, MPI_Status *st)) {
  if (!tracking()) return PREAL(MPI_Test)(rq, flag, st);
  MPI_Request h = *rq;
  int ret = PREAL(MPI_Test)(rq, flag, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS && *flag) IOCHAR_RECORD(request_done(h, t1));
  return ret;
}

MPI_WRAP(int, MPI_Request_free, (MPI_Request * rq)) {
  if (!tracking()) return PREAL(MPI_Request_free)(rq);
  MPI_Request h = *rq;
  int ret = PREAL(MPI_Request_free)(rq);
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(request_forget(h));
  return ret;
}

/* The handles of an array of requests, copied before a completion call
 * overwrites them: on the stack up to 64, else on the heap. */
typedef struct handles {
  MPI_Request small[64];
  MPI_Request *h;
} handles;

/* 0 when there is nothing to look at (n <= 0, or no memory for the copy). */
static inline int handles_copy(handles *c, const MPI_Request *rq, int n) {
  if (n <= 0) return 0;
  c->h = n <= 64 ? c->small : malloc(sizeof(MPI_Request) * (size_t)n);
  if (!c->h) return 0;
  memcpy(c->h, rq, sizeof(MPI_Request) * (size_t)n);
  return 1;
}

static inline void handles_free(handles *c) {
  if (c->h != c->small) free(c->h);
}

static void done_all(const handles *c, int n, double t1) {
  for (int i = 0; i < n; i++) request_done(c->h[i], t1);
}
static void done_some(const handles *c, int out, const int *idx, double t1) {
  for (int i = 0; i < out && out != MPI_UNDEFINED; i++) request_done(c->h[idx[i]], t1);
}

MPI_WRAP(int, MPI_Waitall, (int n, MPI_Request rq[], MPI_Status st[])) {
  handles c;
  if (!tracking() || !handles_copy(&c, rq, n)) return PREAL(MPI_Waitall)(n, rq, st);
  int ret = PREAL(MPI_Waitall)(n, rq, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(done_all(&c, n, t1));
  handles_free(&c);
  return ret;
}

MPI_WRAP(int, MPI_Testall, (int n, MPI_Request rq[], int *flag, MPI_Status st[])) {
  handles c;
  if (!tracking() || !handles_copy(&c, rq, n)) return PREAL(MPI_Testall)(n, rq, flag, st);
  int ret = PREAL(MPI_Testall)(n, rq, flag, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS && *flag) IOCHAR_RECORD(done_all(&c, n, t1));
  handles_free(&c);
  return ret;
}

MPI_WRAP(int, MPI_Waitany, (int n, MPI_Request rq[], int *idx, MPI_Status *st)) {
  handles c;
  if (!tracking() || !handles_copy(&c, rq, n)) return PREAL(MPI_Waitany)(n, rq, idx, st);
  int ret = PREAL(MPI_Waitany)(n, rq, idx, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS && *idx != MPI_UNDEFINED) IOCHAR_RECORD(request_done(c.h[*idx], t1));
  handles_free(&c);
  return ret;
}

MPI_WRAP(int, MPI_Testany, (int n, MPI_Request rq[], int *idx, int *flag, MPI_Status *st)) {
  handles c;
  if (!tracking() || !handles_copy(&c, rq, n)) return PREAL(MPI_Testany)(n, rq, idx, flag, st);
  int ret = PREAL(MPI_Testany)(n, rq, idx, flag, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS && *flag && *idx != MPI_UNDEFINED)
    IOCHAR_RECORD(request_done(c.h[*idx], t1));
  handles_free(&c);
  return ret;
}

MPI_WRAP(int, MPI_Waitsome, (int n, MPI_Request rq[], int *out, int idx[], MPI_Status st[])) {
  handles c;
  if (!tracking() || !handles_copy(&c, rq, n)) return PREAL(MPI_Waitsome)(n, rq, out, idx, st);
  int ret = PREAL(MPI_Waitsome)(n, rq, out, idx, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(done_some(&c, *out, idx, t1));
  handles_free(&c);
  return ret;
}

MPI_WRAP(int, MPI_Testsome, (int n, MPI_Request rq[], int *out, int idx[], MPI_Status st[])) {
  handles c;
  if (!tracking() || !handles_copy(&c, rq, n)) return PREAL(MPI_Testsome)(n, rq, out, idx, st);
  int ret = PREAL(MPI_Testsome)(n, rq, out, idx, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(done_some(&c, *out, idx, t1));
  handles_free(&c);
  return ret;
}
