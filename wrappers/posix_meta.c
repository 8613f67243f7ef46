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

#define DEFINE_LSEEK(name, type)                               \
  IOCHAR_WRAP(type, name, (int fd, type off, int whence)) {    \
    iochar_fdesc *d = iochar_fd_get(fd);                       \
    if (!d || !iochar_active()) {                              \
      type r = IOCHAR_REAL(name)(fd, off, whence);             \
      if (d && r >= 0) iochar_fd_seek(d, r);                   \
      return r;                                                \
    }                                                          \
    double t0 = iochar_now();                                  \
    type r = IOCHAR_REAL(name)(fd, off, whence);               \
    double t1 = iochar_now();                                  \
    if (r >= 0) {                                              \
      iochar_fd_seek(d, r);                                    \
      IOCHAR_RECORD(record_meta(d->rec, POSIX_SEEKS, t0, t1)); \
    }                                                          \
    return r;                                                  \
  }
// clang-format off
DEFINE_LSEEK(lseek, off_t)
DEFINE_LSEEK(lseek64, off64_t)
// clang-format on

/* ---- sync, truncate, mmap ---------------------------------------------- */

#define FD_META(name, idx, params, call)                       \
  IOCHAR_WRAP(int, name, params) {                             \
    iochar_fdesc *d = iochar_fd_get(fd);                       \
    if (!d || !iochar_active()) return IOCHAR_REAL(name) call; \
    double t0 = iochar_now();                                  \
    int r = IOCHAR_REAL(name) call;                            \
    double t1 = iochar_now();                                  \
    IOCHAR_RECORD(record_meta(d->rec, idx, t0, t1));           \
    return r;                                                  \
  }
// clang-format off
FD_META(fsync, POSIX_FSYNCS, (int fd), (fd))
FD_META(fdatasync, POSIX_FDSYNCS, (int fd), (fd))
FD_META(ftruncate, POSIX_TRUNCATES, (int fd, off_t len), (fd, len))
FD_META(ftruncate64, POSIX_TRUNCATES, (int fd, off64_t len), (fd, len))
FD_META(fstat, POSIX_STATS, (int fd, struct stat *st), (fd, st))
FD_META(fstat64, POSIX_STATS, (int fd, struct stat64 *st), (fd, st))
FD_META(__fxstat, POSIX_STATS, (int v, int fd, struct stat *st), (v, fd, st))
FD_META(__fxstat64, POSIX_STATS, (int v, int fd, struct stat64 *st), (v, fd, st))
// clang-format on

/* Loads and stores through a mapping are invisible: count the mmap, and
 * when it can write the file (shared and writable), say so in the log (JOB
 * partial bit 64) so the report warns that the write counters miss it. */
static void record_mmap(iochar_record *r, int prot, int fl, double t0, double t1) {
  record_meta(r, POSIX_MMAPS, t0, t1);
  if ((fl & MAP_SHARED) && (prot & PROT_WRITE))
    __atomic_fetch_or(&iochar_job_info.partial, IOCHAR_PARTIAL_SHARED_MMAP, __ATOMIC_RELAXED);
}

#define DEFINE_MMAP(name, type)                                                        \
  IOCHAR_WRAP(void *, name, (void *a, size_t n, int prot, int fl, int fd, type off)) { \
    iochar_fdesc *d = iochar_fd_get(fd);                                               \
    if (!d || !iochar_active()) return IOCHAR_REAL(name)(a, n, prot, fl, fd, off);     \
    double t0 = iochar_now();                                                          \
    void *r = IOCHAR_REAL(name)(a, n, prot, fl, fd, off);                              \
    double t1 = iochar_now();                                                          \
    if (r != MAP_FAILED) IOCHAR_RECORD(record_mmap(d->rec, prot, fl, t0, t1));         \
    return r;                                                                          \
  }
// clang-format off
DEFINE_MMAP(mmap, off_t)
DEFINE_MMAP(mmap64, off64_t)
// clang-format on

/* ---- path metadata ------------------------------------------------------ */

/* Path calls record only successes: failed probes create no records. */
#define PATH_META(name, idx, dirfd, path, params, call)                    \
  IOCHAR_WRAP(int, name, params) {                                         \
    if (!iochar_active()) return IOCHAR_REAL(name) call;                   \
    double t0 = iochar_now();                                              \
    int r = IOCHAR_REAL(name) call;                                        \
    double t1 = iochar_now();                                              \
    if (r == 0) IOCHAR_RECORD(record_path_meta(dirfd, path, idx, t0, t1)); \
    return r;                                                              \
  }
// clang-format off
PATH_META(stat, POSIX_STATS, AT_FDCWD, p, (const char *p, struct stat *s), (p, s))
PATH_META(lstat, POSIX_STATS, AT_FDCWD, p, (const char *p, struct stat *s), (p, s))
PATH_META(stat64, POSIX_STATS, AT_FDCWD, p, (const char *p, struct stat64 *s), (p, s))
PATH_META(lstat64, POSIX_STATS, AT_FDCWD, p, (const char *p, struct stat64 *s), (p, s))
PATH_META(fstatat, POSIX_STATS, dfd, p, (int dfd, const char *p, struct stat *s, int f), (dfd, p, s, f))
PATH_META(fstatat64, POSIX_STATS, dfd, p, (int dfd, const char *p, struct stat64 *s, int f), (dfd, p, s, f))
PATH_META(__xstat, POSIX_STATS, AT_FDCWD, p, (int v, const char *p, struct stat *s), (v, p, s))
PATH_META(__lxstat, POSIX_STATS, AT_FDCWD, p, (int v, const char *p, struct stat *s), (v, p, s))
PATH_META(__xstat64, POSIX_STATS, AT_FDCWD, p, (int v, const char *p, struct stat64 *s), (v, p, s))
PATH_META(__lxstat64, POSIX_STATS, AT_FDCWD, p, (int v, const char *p, struct stat64 *s), (v, p, s))
PATH_META(__fxstatat, POSIX_STATS, dfd, p, (int v, int dfd, const char *p, struct stat *s, int f), (v, dfd, p, s, f))
PATH_META(__fxstatat64, POSIX_STATS, dfd, p, (int v, int dfd, const char *p, struct stat64 *s, int f), (v, dfd, p, s, f))
PATH_META(statx, POSIX_STATS, dfd, p, (int dfd, const char *p, int f, unsigned m, struct statx *s), (dfd, p, f, m, s))
PATH_META(truncate, POSIX_TRUNCATES, AT_FDCWD, p, (const char *p, off_t n), (p, n))
PATH_META(truncate64, POSIX_TRUNCATES, AT_FDCWD, p, (const char *p, off64_t n), (p, n))
PATH_META(unlink, POSIX_UNLINKS, AT_FDCWD, p, (const char *p), (p))
PATH_META(unlinkat, POSIX_UNLINKS, dfd, p, (int dfd, const char *p, int f), (dfd, p, f))
// clang-format on

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
