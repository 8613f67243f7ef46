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
  if (!iochar_rw_defer_timed(r, &layout, r->state, op->dir, op->off, ret, op->buf, t0, t1))
    iochar_rw_account(r, &layout, r->state, op->dir, op->off, ret, op->buf, t0, t1);
  iochar_spin_unlock(&r->lock);
  iochar_pool_put(&aio_pool, op);
}

#define DEFINE_AIO_SUBMIT(name, cbtype, dir)                                                  \
  IOCHAR_WRAP(int, name, (cbtype * cb)) {                                                     \
    if (!iochar_fd_get(cb->aio_fildes) || !iochar_active()) return IOCHAR_REAL(name)(cb);     \
    uint64_t k0 = iochar_ticks();                                                             \
    int r = IOCHAR_REAL(name)(cb);                                                            \
    if (r == 0)                                                                               \
      IOCHAR_RECORD(                                                                          \
          aio_track(cb, cb->aio_fildes, dir, cb->aio_offset, (const void *)cb->aio_buf, k0)); \
    return r;                                                                                 \
  }
#define DEFINE_AIO_RETURN(name, cbtype)                             \
  IOCHAR_WRAP(ssize_t, name, (cbtype * cb)) {                       \
    if (!aio_ops || !iochar_active()) return IOCHAR_REAL(name)(cb); \
    ssize_t r = IOCHAR_REAL(name)(cb);                              \
    uint64_t k1 = iochar_ticks();                                   \
    IOCHAR_RECORD(aio_collect(cb, r, k1));                          \
    return r;                                                       \
  }
/* lio_listio: every read or write entry is a submission; a failed call may
 * have queued some of them, and their aio_return still tells. */
#define DEFINE_LIO_LISTIO(name, cbtype)                                                            \
  IOCHAR_WRAP(int, name, (int mode, cbtype *const list[], int n, struct sigevent *sev)) {          \
    if (!iochar_active()) return IOCHAR_REAL(name)(mode, list, n, sev);                            \
    uint64_t k0 = iochar_ticks();                                                                  \
    int r = IOCHAR_REAL(name)(mode, list, n, sev);                                                 \
    for (int i = 0; i < n; i++) {                                                                  \
      cbtype *cb = list[i];                                                                        \
      if (!cb || (cb->aio_lio_opcode != LIO_READ && cb->aio_lio_opcode != LIO_WRITE)) continue;    \
      IOCHAR_RECORD(aio_track(cb, cb->aio_fildes, cb->aio_lio_opcode == LIO_WRITE, cb->aio_offset, \
                              (const void *)cb->aio_buf, k0));                                     \
    }                                                                                              \
    return r;                                                                                      \
  }
// clang-format off
DEFINE_AIO_SUBMIT(aio_read, struct aiocb, 0)
DEFINE_AIO_SUBMIT(aio_write, struct aiocb, 1)
DEFINE_AIO_SUBMIT(aio_read64, struct aiocb64, 0)
DEFINE_AIO_SUBMIT(aio_write64, struct aiocb64, 1)
DEFINE_AIO_RETURN(aio_return, struct aiocb)
DEFINE_AIO_RETURN(aio_return64, struct aiocb64)
DEFINE_LIO_LISTIO(lio_listio, struct aiocb)
DEFINE_LIO_LISTIO(lio_listio64, struct aiocb64)
// clang-format on
