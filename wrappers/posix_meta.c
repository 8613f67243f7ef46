/* POSIX metadata calls: offsets, sync, truncate, mmap, the stat family and
 * the path calls (unlink, rename). */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_internal.h"

/* glibc < 2.33 routes stat calls through these; newer headers no longer
 * declare them, but old binaries still call them. */
int __xstat(int, const char *, struct stat *);
int __lxstat(int, const char *, struct stat *);
int __fxstat(int, int, struct stat *);
int __fxstatat(int, int, const char *, struct stat *, int);
int __xstat64(int, const char *, struct stat64 *);
int __lxstat64(int, const char *, struct stat64 *);
int __fxstat64(int, int, struct stat64 *);
int __fxstatat64(int, int, const char *, struct stat64 *, int);

/* ---- record steps (called with iochar_in_tool set) ---------------------- */

/* A successful call on an empty path had AT_EMPTY_PATH: it is about dirfd. */
static void record_path_meta(int dirfd, const char *path, int idx, double t0, double t1) {
  iochar_fdesc *d;
  iochar_record *r = path[0]                      ? path_record(dirfd, path)
                     : (d = iochar_fd_get(dirfd)) ? d->rec
                                                  : NULL;
  if (r) record_meta(r, idx, t0, t1);
}

/* ---- offsets ------------------------------------------------------------ */

/* The descriptor's offset follows every successful seek, recorded or not. */
static inline void seek_passed(iochar_fdesc *d, int64_t r) {
  if (d && r >= 0) iochar_fd_seek(d, r);
}
/* A successful seek on a recorded descriptor: its offset, POSIX_SEEKS and
 * the metadata time, inlined into both wrappers (IOR's POSIX back end pairs
 * every transfer with one).  As on the data path (posix_rw.c): the clock
 * readings become seconds only here, not across the real call, and errno is
 * not saved, for nothing here sets it (the contended lock and the observers
 * keep it themselves). */
static inline __attribute__((always_inline)) void seek_record(iochar_fdesc *d, int64_t r,
                                                              uint64_t k0, uint64_t k1) {
  iochar_fast_enter(); /* the guard's increment, and the lock's bracket (core.h) */
  iochar_fd_seek(d, r);
  record_meta_in(d->rec, POSIX_SEEKS, iochar_ticks_s(k0), iochar_ticks_s(k1));
  iochar_fast_leave();
}
/* The recorded path: the descriptor, the guard and the clock tested once,
 * the real function called without the lazy-resolution test (seeks_resolved,
 * below, resolved it before iochar_init could run), nothing else called.
 * The rest goes out of line (lseek_slow, below): seeks not recorded (no
 * descriptor in the table, or a call from the tool itself) and seeks timed
 * by clock_gettime (no usable TSC).  A descriptor in the table means
 * recording (core.h), as for data calls. */
static off_t lseek_slow(int fd, off_t off, int whence, iochar_fdesc *d);
static off64_t lseek64_slow(int fd, off64_t off, int whence, iochar_fdesc *d);

IOCHAR_WRAP(off_t, lseek, (int fd, off_t off, int whence)) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (__builtin_expect(!d || iochar_in_tool || !iochar_clock_is_tsc(), 0))
    return lseek_slow(fd, off, whence, d);
  uint64_t k0 = iochar_tsc();
  off_t r = real_lseek(fd, off, whence);
  uint64_t k1 = iochar_tsc();
  if (r >= 0) seek_record(d, r, k0, k1);
  return r;
}
IOCHAR_WRAP(off64_t, lseek64, (int fd, off64_t off, int whence)) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (__builtin_expect(!d || iochar_in_tool || !iochar_clock_is_tsc(), 0))
    return lseek64_slow(fd, off, whence, d);
  uint64_t k0 = iochar_tsc();
  off64_t r = real_lseek64(fd, off, whence);
  uint64_t k1 = iochar_tsc();
  if (r >= 0) seek_record(d, r, k0, k1);
  return r;
}

static __attribute__((noinline)) off_t lseek_slow(int fd, off_t off, int whence, iochar_fdesc *d) {
  if (!d || (iochar_in_tool && !iochar_active())) {
    off_t r = IOCHAR_REAL(lseek)(fd, off, whence);
    seek_passed(d, r);
    return r;
  }
  uint64_t k0 = iochar_ticks();
  off_t r = real_lseek(fd, off, whence);
  uint64_t k1 = iochar_ticks();
  if (r >= 0) seek_record(d, r, k0, k1);
  return r;
}
static __attribute__((noinline)) off64_t lseek64_slow(int fd, off64_t off, int whence,
                                                      iochar_fdesc *d) {
  if (!d || (iochar_in_tool && !iochar_active())) {
    off64_t r = IOCHAR_REAL(lseek64)(fd, off, whence);
    seek_passed(d, r);
    return r;
  }
  uint64_t k0 = iochar_ticks();
  off64_t r = real_lseek64(fd, off, whence);
  uint64_t k1 = iochar_ticks();
  if (r >= 0) seek_record(d, r, k0, k1);
  return r;
}

/* Priority 101: before the runtime's own constructor (iochar_init, lifecycle.c),
 * so before any descriptor can be in the table. */
__attribute__((constructor(101))) static void seeks_resolved(void) {
  (void)IOCHAR_REAL(lseek), (void)IOCHAR_REAL(lseek64);
}

/* ---- sync, truncate, fstat, mmap ---------------------------------------- */

/* The descriptor's state when a call on it is recorded (NULL: pass through). */
static inline iochar_fdesc *meta_fd(int fd) {
  iochar_fdesc *d = iochar_fd_get(fd);
  return d && iochar_active() ? d : NULL;
}

IOCHAR_WRAP(int, fsync, (int fd)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(fsync)(fd);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fsync)(fd);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_FSYNCS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, fdatasync, (int fd)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(fdatasync)(fd);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fdatasync)(fd);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_FDSYNCS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, ftruncate, (int fd, off_t len)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(ftruncate)(fd, len);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(ftruncate)(fd, len);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_TRUNCATES, t0, t1));
  return r;
}
IOCHAR_WRAP(int, ftruncate64, (int fd, off64_t len)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(ftruncate64)(fd, len);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(ftruncate64)(fd, len);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_TRUNCATES, t0, t1));
  return r;
}
IOCHAR_WRAP(int, fstat, (int fd, struct stat *st)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(fstat)(fd, st);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fstat)(fd, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, fstat64, (int fd, struct stat64 *st)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(fstat64)(fd, st);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fstat64)(fd, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __fxstat, (int v, int fd, struct stat *st)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(__fxstat)(v, fd, st);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__fxstat)(v, fd, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __fxstat64, (int v, int fd, struct stat64 *st)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(__fxstat64)(v, fd, st);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__fxstat64)(v, fd, st);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(d->rec, POSIX_STATS, t0, t1));
  return r;
}

/* Loads and stores through a mapping are invisible: count the mmap, and
 * when it can write the file (shared and writable), say so in the log (JOB
 * partial bit 64) so the report warns that the write counters miss it. */
static void record_mmap(iochar_record *r, int prot, int fl, double t0, double t1) {
  record_meta(r, POSIX_MMAPS, t0, t1);
  if ((fl & MAP_SHARED) && (prot & PROT_WRITE))
    __atomic_fetch_or(&iochar_job_info.partial, IOCHAR_PARTIAL_SHARED_MMAP, __ATOMIC_RELAXED);
}

IOCHAR_WRAP(void *, mmap, (void *a, size_t n, int prot, int fl, int fd, off_t off)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(mmap)(a, n, prot, fl, fd, off);
  double t0 = iochar_now();
  void *r = IOCHAR_REAL(mmap)(a, n, prot, fl, fd, off);
  double t1 = iochar_now();
  if (r != MAP_FAILED) IOCHAR_RECORD(record_mmap(d->rec, prot, fl, t0, t1));
  return r;
}
IOCHAR_WRAP(void *, mmap64, (void *a, size_t n, int prot, int fl, int fd, off64_t off)) {
  iochar_fdesc *d = meta_fd(fd);
  if (!d) return IOCHAR_REAL(mmap64)(a, n, prot, fl, fd, off);
  double t0 = iochar_now();
  void *r = IOCHAR_REAL(mmap64)(a, n, prot, fl, fd, off);
  double t1 = iochar_now();
  if (r != MAP_FAILED) IOCHAR_RECORD(record_mmap(d->rec, prot, fl, t0, t1));
  return r;
}

/* ---- path metadata ------------------------------------------------------ */

/* Path calls record only successes: failed probes create no records. */
IOCHAR_WRAP(int, stat, (const char *p, struct stat *s)) {
  if (!iochar_active()) return IOCHAR_REAL(stat)(p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(stat)(p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, lstat, (const char *p, struct stat *s)) {
  if (!iochar_active()) return IOCHAR_REAL(lstat)(p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(lstat)(p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, stat64, (const char *p, struct stat64 *s)) {
  if (!iochar_active()) return IOCHAR_REAL(stat64)(p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(stat64)(p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, lstat64, (const char *p, struct stat64 *s)) {
  if (!iochar_active()) return IOCHAR_REAL(lstat64)(p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(lstat64)(p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, fstatat, (int dfd, const char *p, struct stat *s, int f)) {
  if (!iochar_active()) return IOCHAR_REAL(fstatat)(dfd, p, s, f);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fstatat)(dfd, p, s, f);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(dfd, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, fstatat64, (int dfd, const char *p, struct stat64 *s, int f)) {
  if (!iochar_active()) return IOCHAR_REAL(fstatat64)(dfd, p, s, f);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fstatat64)(dfd, p, s, f);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(dfd, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __xstat, (int v, const char *p, struct stat *s)) {
  if (!iochar_active()) return IOCHAR_REAL(__xstat)(v, p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__xstat)(v, p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __lxstat, (int v, const char *p, struct stat *s)) {
  if (!iochar_active()) return IOCHAR_REAL(__lxstat)(v, p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__lxstat)(v, p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __xstat64, (int v, const char *p, struct stat64 *s)) {
  if (!iochar_active()) return IOCHAR_REAL(__xstat64)(v, p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__xstat64)(v, p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __lxstat64, (int v, const char *p, struct stat64 *s)) {
  if (!iochar_active()) return IOCHAR_REAL(__lxstat64)(v, p, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__lxstat64)(v, p, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __fxstatat, (int v, int dfd, const char *p, struct stat *s, int f)) {
  if (!iochar_active()) return IOCHAR_REAL(__fxstatat)(v, dfd, p, s, f);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__fxstatat)(v, dfd, p, s, f);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(dfd, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, __fxstatat64, (int v, int dfd, const char *p, struct stat64 *s, int f)) {
  if (!iochar_active()) return IOCHAR_REAL(__fxstatat64)(v, dfd, p, s, f);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(__fxstatat64)(v, dfd, p, s, f);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(dfd, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, statx, (int dfd, const char *p, int f, unsigned m, struct statx *s)) {
  if (!iochar_active()) return IOCHAR_REAL(statx)(dfd, p, f, m, s);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(statx)(dfd, p, f, m, s);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(dfd, p, POSIX_STATS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, truncate, (const char *p, off_t n)) {
  if (!iochar_active()) return IOCHAR_REAL(truncate)(p, n);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(truncate)(p, n);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_TRUNCATES, t0, t1));
  return r;
}
IOCHAR_WRAP(int, truncate64, (const char *p, off64_t n)) {
  if (!iochar_active()) return IOCHAR_REAL(truncate64)(p, n);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(truncate64)(p, n);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_TRUNCATES, t0, t1));
  return r;
}
IOCHAR_WRAP(int, unlink, (const char *p)) {
  if (!iochar_active()) return IOCHAR_REAL(unlink)(p);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(unlink)(p);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(AT_FDCWD, p, POSIX_UNLINKS, t0, t1));
  return r;
}
IOCHAR_WRAP(int, unlinkat, (int dfd, const char *p, int f)) {
  if (!iochar_active()) return IOCHAR_REAL(unlinkat)(dfd, p, f);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(unlinkat)(dfd, p, f);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_path_meta(dfd, p, POSIX_UNLINKS, t0, t1));
  return r;
}

static void record_rename(int sdir, const char *src, int ddir, const char *dst, double t0,
                          double t1) {
  record_path_meta(sdir, src, POSIX_RENAME_SOURCES, t0, t1);
  record_path_meta(ddir, dst, POSIX_RENAME_TARGETS, t0, t1);
}

IOCHAR_WRAP(int, rename, (const char *src, const char *dst)) {
  if (!iochar_active()) return IOCHAR_REAL(rename)(src, dst);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(rename)(src, dst);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_rename(AT_FDCWD, src, AT_FDCWD, dst, t0, t1));
  return r;
}
IOCHAR_WRAP(int, renameat, (int sd, const char *src, int dd, const char *dst)) {
  if (!iochar_active()) return IOCHAR_REAL(renameat)(sd, src, dd, dst);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(renameat)(sd, src, dd, dst);
  double t1 = iochar_now();
  if (r == 0) IOCHAR_RECORD(record_rename(sd, src, dd, dst, t0, t1));
  return r;
}
