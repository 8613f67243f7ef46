/* POSIX asynchronous I/O: aio_read/aio_write and lio_listio submissions,
 * accounted when aio_return collects them. */
#include <aio.h>

#include "posix_internal.h"

/* ---- POSIX asynchronous I/O ---------------------------------------------
 * An aio_read/aio_write (or an lio_listio entry) is counted when the program
 * collects its result with aio_return, as Darshan does: only then are its
 * bytes known.  Its time runs from submission to collection, and the
 * overlap rule counts concurrent operations' time once.  An operation whose
 * result is never collected is not counted.  (glibc's AIO threads call its
 * internal pread/pwrite, which no wrapper sees: nothing is counted twice.) */
typedef struct aio_op {
  iochar_record *rec;
  int64_t off;
  uint64_t k0;
  const void *buf;
  int dir;
} aio_op;

#define NAIO 1024
static aio_op aio_items[NAIO];
static iochar_pool aio_pool = IOCHAR_POOL_OF(aio_items);
static iochar_spin aio_lock; /* guards the map's creation */
static iochar_hmap *aio_ops; /* aiocb address -> aio_op */

/* A submitted request on a tracked descriptor: remember when and where. */
static void aio_track(const void *cb, int fd, int dir, int64_t off, const void *buf, uint64_t k0) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (!d) return;
  iochar_spin_lock(&aio_lock);
  if (!aio_ops) aio_ops = iochar_hmap_create(NAIO);
  iochar_spin_unlock(&aio_lock);
  aio_op *op = aio_ops ? iochar_pool_get(&aio_pool) : NULL;
  if (!op) return; /* more in flight than we follow */
  *op = (aio_op){d->rec, off, k0, buf, dir};
  aio_op *old = iochar_hmap_del(aio_ops, (uint64_t)(uintptr_t)cb); /* resubmitted */
  if (old) iochar_pool_put(&aio_pool, old);
  if (iochar_hmap_put(aio_ops, (uint64_t)(uintptr_t)cb, op)) iochar_pool_put(&aio_pool, op);
}

static void aio_collect(const void *cb, ssize_t ret, uint64_t k1) {
  aio_op *op = aio_ops ? iochar_hmap_del(aio_ops, (uint64_t)(uintptr_t)cb) : NULL;
  if (!op) return;
  iochar_record *r = op->rec;
  double t0 = iochar_ticks_s(op->k0), t1 = iochar_ticks_s(k1);
  iochar_spin_lock(&r->lock);
  r = iochar_record_for_data(NULL, r); /* a metadata-only entry: its record */
  iochar_rw_state *s = iochar_rw_state_of(r);
  if (!iochar_rw_defer_timed(r, &layout, s, op->dir, op->off, ret, op->buf, t0, t1))
    iochar_rw_account(r, &layout, s, op->dir, op->off, ret, op->buf, t0, t1);
  iochar_spin_unlock(&r->lock);
  iochar_pool_put(&aio_pool, op);
}

/* Each wrapper: a submission on a tracked descriptor is timed from here
 * (aio_track); a collection ends the time and accounts the bytes. */
static inline int aio_watched(int fd) { return iochar_fd_get(fd) && iochar_active(); }
static inline int aio_collecting(void) { return aio_ops && iochar_active(); }

IOCHAR_WRAP(int, aio_read, (struct aiocb * cb)) {
  if (!aio_watched(cb->aio_fildes)) return IOCHAR_REAL(aio_read)(cb);
  uint64_t k0 = iochar_ticks();
  int r = IOCHAR_REAL(aio_read)(cb);
  if (r == 0)
    IOCHAR_RECORD(aio_track(cb, cb->aio_fildes, 0, cb->aio_offset, (const void *)cb->aio_buf, k0));
  return r;
}
IOCHAR_WRAP(int, aio_write, (struct aiocb * cb)) {
  if (!aio_watched(cb->aio_fildes)) return IOCHAR_REAL(aio_write)(cb);
  uint64_t k0 = iochar_ticks();
  int r = IOCHAR_REAL(aio_write)(cb);
  if (r == 0)
    IOCHAR_RECORD(aio_track(cb, cb->aio_fildes, 1, cb->aio_offset, (const void *)cb->aio_buf, k0));
  return r;
}
IOCHAR_WRAP(int, aio_read64, (struct aiocb64 * cb)) {
  if (!aio_watched(cb->aio_fildes)) return IOCHAR_REAL(aio_read64)(cb);
  uint64_t k0 = iochar_ticks();
  int r = IOCHAR_REAL(aio_read64)(cb);
  if (r == 0)
    IOCHAR_RECORD(aio_track(cb, cb->aio_fildes, 0, cb->aio_offset, (const void *)cb->aio_buf, k0));
  return r;
}
IOCHAR_WRAP(int, aio_write64, (struct aiocb64 * cb)) {
  if (!aio_watched(cb->aio_fildes)) return IOCHAR_REAL(aio_write64)(cb);
  uint64_t k0 = iochar_ticks();
  int r = IOCHAR_REAL(aio_write64)(cb);
  if (r == 0)
    IOCHAR_RECORD(aio_track(cb, cb->aio_fildes, 1, cb->aio_offset, (const void *)cb->aio_buf, k0));
  return r;
}
IOCHAR_WRAP(ssize_t, aio_return, (struct aiocb * cb)) {
  if (!aio_collecting()) return IOCHAR_REAL(aio_return)(cb);
  ssize_t r = IOCHAR_REAL(aio_return)(cb);
  uint64_t k1 = iochar_ticks();
  IOCHAR_RECORD(aio_collect(cb, r, k1));
  return r;
}
IOCHAR_WRAP(ssize_t, aio_return64, (struct aiocb64 * cb)) {
  if (!aio_collecting()) return IOCHAR_REAL(aio_return64)(cb);
  ssize_t r = IOCHAR_REAL(aio_return64)(cb);
  uint64_t k1 = iochar_ticks();
  IOCHAR_RECORD(aio_collect(cb, r, k1));
  return r;
}

/* lio_listio: every read or write entry is a submission; a failed call may
 * have queued some of them, and their aio_return still tells. */
static inline void lio_entry(const void *cb, int fd, int opcode, int64_t off, const void *buf,
                             uint64_t k0) {
  if (opcode == LIO_READ || opcode == LIO_WRITE)
    IOCHAR_RECORD(aio_track(cb, fd, opcode == LIO_WRITE, off, buf, k0));
}

IOCHAR_WRAP(int, lio_listio, (int mode, struct aiocb *const list[], int n, struct sigevent *sev)) {
  if (!iochar_active()) return IOCHAR_REAL(lio_listio)(mode, list, n, sev);
  uint64_t k0 = iochar_ticks();
  int r = IOCHAR_REAL(lio_listio)(mode, list, n, sev);
  for (int i = 0; i < n; i++) {
    const struct aiocb *cb = list[i];
    if (cb)
      lio_entry(cb, cb->aio_fildes, cb->aio_lio_opcode, cb->aio_offset, (const void *)cb->aio_buf,
                k0);
  }
  return r;
}
IOCHAR_WRAP(int, lio_listio64,
            (int mode, struct aiocb64 *const list[], int n, struct sigevent *sev)) {
  if (!iochar_active()) return IOCHAR_REAL(lio_listio64)(mode, list, n, sev);
  uint64_t k0 = iochar_ticks();
  int r = IOCHAR_REAL(lio_listio64)(mode, list, n, sev);
  for (int i = 0; i < n; i++) {
    const struct aiocb64 *cb = list[i];
    if (cb)
      lio_entry(cb, cb->aio_fildes, cb->aio_lio_opcode, cb->aio_offset, (const void *)cb->aio_buf,
                k0);
  }
  return r;
}
