/* POSIX data calls: read/write, their positioned, vector and fortified
 * forms, each timed and accounted inline (the module's hottest path). */
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "posix_internal.h"

/* ---- record steps (called with iochar_in_tool set) ---------------------- */

/* Where an appending write landed: the end of the file at that moment,
 * which the kernel chose.  write/writev move the description's offset to the
 * end of the data (SEEK_CUR asks for it without moving anything); a
 * positioned write on an O_APPEND descriptor appends too (Linux) but leaves
 * the offset alone, so the size tells.  Only O_APPEND descriptors get here:
 * the one extra system call is theirs alone, made with record_rw's bracket
 * paused (no system call inside one: core.h). */
static __attribute__((noinline)) int64_t append_offset(int fd, iochar_fdesc *d, int positioned,
                                                       ssize_t ret) {
  iochar_fast_pause();
  int saved = errno; /* the data path's only system call: the caller's errno stays */
  int64_t off;
  if (!positioned) {
    off_t end = lseek(fd, 0, SEEK_CUR); /* in the tool: our wrapper passes it through */
    if (end < 0) {
      off = atomic_load_explicit(&d->offset, memory_order_relaxed);
    } else {
      atomic_store_explicit(&d->offset, (int64_t)end, memory_order_relaxed);
      off = (int64_t)end - ret;
    }
  } else {
    struct stat st;
    off = fstat(fd, &st) != 0 || st.st_size < ret ? -1 : (int64_t)st.st_size - ret;
  }
  errno = saved;
  iochar_fast_resume();
  return off;
}

/* Data path: inlined per direction so the layout lookups fold to constants.
 * The guard matters for signal handlers: one doing I/O while this thread
 * holds the record lock passes straight through instead of deadlocking.
 * errno is not saved here: nothing on this path sets it (append_offset, the
 * contended lock and the observers keep it themselves), and the save and
 * restore would be a tenth of the path. */
static inline __attribute__((always_inline)) void record_rw(int fd, iochar_fdesc *d, int dir,
                                                            int64_t off, ssize_t ret,
                                                            const void *buf, uint64_t k0,
                                                            uint64_t k1) {
  iochar_fast_enter(); /* the guard's increment, and the lock's bracket (core.h) */
  iochar_record *r = d->rec;
  if (__builtin_expect(dir == 1 && d->append && ret > 0, 0))
    off = append_offset(fd, d, off >= 0, ret); /* before the lock: a system call */
  else if (dir == 1 && d->append && off < 0)
    off = atomic_load_explicit(&d->offset, memory_order_relaxed); /* 0 bytes: nothing moved */
  iochar_spin_lock_in(&r->lock);
  if (off < 0 && !(dir == 1 && d->append)) { /* implicit offset: the description's */
    off = atomic_load_explicit(&d->offset, memory_order_relaxed);
    if (ret > 0) atomic_store_explicit(&d->offset, off + ret, memory_order_relaxed);
  }
  /* the clock readings become seconds only now: no call left that would
   * make the compiler keep two doubles on the stack across it */
  double t0 = iochar_ticks_s(k0), t1 = iochar_ticks_s(k1);
  iochar_rw_state *s = r->state;
  if (__builtin_expect(!s, 0)) { /* the first read or write: an entry becomes a record */
    r = iochar_record_for_data(d, r);
    s = iochar_rw_state_of(r);
  }
  if (!iochar_rw_defer_timed(r, &layout, s, dir, off, ret, buf, t0, t1))
    iochar_rw_account(r, &layout, s, dir, off, ret, buf, t0, t1);
  iochar_spin_unlock_in(&r->lock);
  iochar_fast_leave();
}
/* The scalar calls (read, write, pread, pwrite and their 64 twins) take the
 * accounting inlined: the call, its spills and its argument moves were an
 * eighth of an 8-byte pwrite's cost.  The vector calls share one copy. */
static inline __attribute__((always_inline)) void record_read_hot(int fd, iochar_fdesc *d,
                                                                  int64_t off, ssize_t ret,
                                                                  const void *buf, uint64_t k0,
                                                                  uint64_t k1) {
  record_rw(fd, d, 0, off, ret, buf, k0, k1);
}
static inline __attribute__((always_inline)) void record_write_hot(int fd, iochar_fdesc *d,
                                                                   int64_t off, ssize_t ret,
                                                                   const void *buf, uint64_t k0,
                                                                   uint64_t k1) {
  record_rw(fd, d, 1, off, ret, buf, k0, k1);
}
static __attribute__((noinline)) void record_read(int fd, iochar_fdesc *d, int64_t off, ssize_t ret,
                                                  const void *buf, uint64_t k0, uint64_t k1) {
  record_read_hot(fd, d, off, ret, buf, k0, k1);
}
static __attribute__((noinline)) void record_write(int fd, iochar_fdesc *d, int64_t off,
                                                   ssize_t ret, const void *buf, uint64_t k0,
                                                   uint64_t k1) {
  record_write_hot(fd, d, off, ret, buf, k0, k1);
}

/* ---- data --------------------------------------------------------------- */

/* Every data wrapper: the descriptor's state when this call is recorded
 * (NULL: pass straight through), then clock, real call, clock, record. */
static inline iochar_fdesc *data_fd(int fd) {
  iochar_fdesc *d = iochar_fd_get(fd); /* NULL whenever not recording (core.h) */
  if (!d) return NULL;
  return __builtin_expect(!iochar_in_tool, 1) || iochar_active() ? d : NULL;
}

/* The scalar calls' recorded path (a descriptor in the table: the runtime
 * has started) calls the real function without the lazy-resolution test;
 * data_calls_resolved, below, resolved it before iochar_init could run. */
IOCHAR_WRAP(ssize_t, read, (int fd, void *buf, size_t n)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(read)(fd, buf, n);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = real_read(fd, buf, n); /* resolved at load: data_calls_resolved */
  uint64_t k1 = iochar_ticks();
  record_read_hot(fd, d, -1, ret, buf, k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, write, (int fd, const void *buf, size_t n)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(write)(fd, buf, n);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = real_write(fd, buf, n); /* resolved at load: data_calls_resolved */
  uint64_t k1 = iochar_ticks();
  record_write_hot(fd, d, -1, ret, buf, k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pread, (int fd, void *buf, size_t n, off_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pread)(fd, buf, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = real_pread(fd, buf, n, off); /* resolved at load: data_calls_resolved */
  uint64_t k1 = iochar_ticks();
  record_read_hot(fd, d, off, ret, buf, k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwrite)(fd, buf, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = real_pwrite(fd, buf, n, off); /* resolved at load: data_calls_resolved */
  uint64_t k1 = iochar_ticks();
  record_write_hot(fd, d, off, ret, buf, k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pread64, (int fd, void *buf, size_t n, off64_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pread64)(fd, buf, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = real_pread64(fd, buf, n, off); /* resolved at load: data_calls_resolved */
  uint64_t k1 = iochar_ticks();
  record_read_hot(fd, d, off, ret, buf, k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwrite64)(fd, buf, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = real_pwrite64(fd, buf, n, off); /* resolved at load: data_calls_resolved */
  uint64_t k1 = iochar_ticks();
  record_write_hot(fd, d, off, ret, buf, k0, k1);
  return ret;
}

/* Priority 101: before the runtime's own constructor (iochar_init, lifecycle.c),
 * so before any descriptor can be in the table. */
__attribute__((constructor(101))) static void data_calls_resolved(void) {
  (void)IOCHAR_REAL(read), (void)IOCHAR_REAL(write), (void)IOCHAR_REAL(pread);
  (void)IOCHAR_REAL(pwrite), (void)IOCHAR_REAL(pread64), (void)IOCHAR_REAL(pwrite64);
}

/* Vector calls: the first buffer decides memory alignment. */
static inline const void *iov0(const struct iovec *iov, int n) {
  return n > 0 ? iov[0].iov_base : NULL;
}
IOCHAR_WRAP(ssize_t, readv, (int fd, const struct iovec *iov, int n)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(readv)(fd, iov, n);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(readv)(fd, iov, n);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, -1, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, writev, (int fd, const struct iovec *iov, int n)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(writev)(fd, iov, n);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(writev)(fd, iov, n);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, -1, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, preadv, (int fd, const struct iovec *iov, int n, off_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev, (int fd, const struct iovec *iov, int n, off_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, preadv64, (int fd, const struct iovec *iov, int n, off64_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv64)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv64)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev64, (int fd, const struct iovec *iov, int n, off64_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev64)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev64)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}
/* v2: offset -1 means the current file offset. */
IOCHAR_WRAP(ssize_t, preadv2, (int fd, const struct iovec *iov, int n, off_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev2, (int fd, const struct iovec *iov, int n, off_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, preadv64v2, (int fd, const struct iovec *iov, int n, off64_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv64v2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv64v2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int n, off64_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev64v2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev64v2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, iov0(iov, n), k0, k1);
  return ret;
}

/* ---- fortified entry points --------------------------------------------- */
/* -D_FORTIFY_SOURCE builds call glibc's checked variants instead of the plain
 * names; the real checked function still does the check. */
ssize_t __read_chk(int, void *, size_t, size_t);
ssize_t __pread_chk(int, void *, size_t, off_t, size_t);
ssize_t __pread64_chk(int, void *, size_t, off64_t, size_t);

IOCHAR_WRAP(ssize_t, __read_chk, (int fd, void *buf, size_t n, size_t len)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(__read_chk)(fd, buf, n, len);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(__read_chk)(fd, buf, n, len);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, -1, ret, buf, k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, __pread_chk, (int fd, void *buf, size_t n, off_t off, size_t len)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(__pread_chk)(fd, buf, n, off, len);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(__pread_chk)(fd, buf, n, off, len);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, buf, k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, __pread64_chk, (int fd, void *buf, size_t n, off64_t off, size_t len)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(__pread64_chk)(fd, buf, n, off, len);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(__pread64_chk)(fd, buf, n, off, len);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, buf, k0, k1);
  return ret;
}
