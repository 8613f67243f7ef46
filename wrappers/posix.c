/* POSIX interception: descriptors, data calls, offsets and metadata calls. */
#include <aio.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../runtime/access.h"
#include "../runtime/interpose.h"
#include "../runtime/lustre.h"
#include "posix_counters.h"

static const iochar_counter_def ints[] = {POSIX_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def flts[] = {POSIX_F_COUNTERS(IOCHAR_DEF_ENTRY)};

/* A constant, so the inlined accounting folds its lookups (runtime/core.h). */
static const iochar_rw_layout layout = POSIX_RW_LAYOUT;

const iochar_module iochar_mod_posix =
    IOCHAR_MODULE_DEF(POSIX, ints, flts, iochar_rw_state, &layout);
const iochar_rw_layout *const iochar_posix_layout = &layout; /* wrappers/posix_xfer.c */

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

/* Each thread remembers the last path it named (from the working directory)
 * and its record, NULL when excluded: a loop that opens or stats one file
 * again and again skips resolving, checking and hashing the path.  Records
 * live as long as the process, so the pointer stays good. */
static __thread struct {
  iochar_record *rec;
  unsigned cwd_gen; /* for a relative path: the working directory it meant */
  int valid;
  char path[240];
} last_path __attribute__((tls_model("initial-exec")));

/* A name other than the last: resolve, check, find or make its record.  Out
 * of line, so that its 4 KiB buffer (stack probes) and saved registers cost
 * nothing to the repeat below. */
static __attribute__((noinline)) iochar_record *path_record_lookup(int dirfd, const char *path,
                                                                   int cacheable, unsigned gen) {
  char abs[IOCHAR_PATH_MAX];
  if (iochar_path_resolve(dirfd, path, abs, sizeof abs)) return NULL;
  iochar_record *r = iochar_path_excluded(abs) ? NULL : iochar_record_get(IOCHAR_MOD_POSIX, abs);
  size_t n = strlen(path);
  if (cacheable && n < sizeof last_path.path) {
    memcpy(last_path.path, path, n + 1);
    last_path.rec = r, last_path.cwd_gen = gen, last_path.valid = 1;
  }
  if (!r) return NULL;
  if (r->c[POSIX_FILE_ALIGNMENT] == 0 && r->id != IOCHAR_AGG_ID) {
    int64_t bs = iochar_fs_block_size(abs);
    iochar_spin_lock(&r->lock);
    r->c[POSIX_FILE_ALIGNMENT] = bs;
    iochar_spin_unlock(&r->lock);
  }
  return r;
}

static inline __attribute__((always_inline)) iochar_record *path_record(int dirfd,
                                                                        const char *path) {
  int abs = path[0] == '/', cacheable = abs || dirfd == AT_FDCWD;
  unsigned gen = abs ? 0 : atomic_load_explicit(&iochar_cwd_gen, memory_order_acquire);
  if (cacheable && last_path.valid && (abs || last_path.cwd_gen == gen) &&
      strcmp(path, last_path.path) == 0)
    return last_path.rec;
  return path_record_lookup(dirfd, path, cacheable, gen);
}

static __typeof__(&fstat) real_fstat; /* the fstat wrapper's (FD_META, below) */

/* File-system facts of a record, once (its first open): the preferred I/O
 * size, and on Lustre the layout from the `lustre.lov` attribute. */
static void record_fs_facts(int fd, iochar_record *r) {
  struct stat st;
  /* the real fstat, not this file's wrapper of it (which would pass through) */
  int64_t bs = IOCHAR_REAL(fstat)(fd, &st) == 0 && st.st_blksize > 0 ? (int64_t)st.st_blksize : -1;
  iochar_lustre_layout lo = {0};
  if (iochar_on_lustre(r->path)) {
    uint8_t lov[4096];
    ssize_t n = fgetxattr(fd, "lustre.lov", lov, sizeof lov);
    if (n <= 0 || iochar_lustre_parse(lov, (size_t)n, &lo)) lo = (iochar_lustre_layout){0};
  }
  iochar_spin_lock(&r->lock);
  r->c[POSIX_FILE_BLKSIZE] = bs;
  r->c[POSIX_LUSTRE_STRIPE_SIZE] = lo.stripe_size;
  r->c[POSIX_LUSTRE_STRIPE_COUNT] = lo.stripe_count;
  r->c[POSIX_LUSTRE_STRIPE_OFFSET] = lo.stripe_count ? lo.first_ost : 0;
  r->c[POSIX_LUSTRE_COMPONENTS] = lo.components;
  iochar_spin_unlock(&r->lock);
}

static inline __attribute__((always_inline)) void
record_open(int fd, int dirfd, const char *path, int flags, mode_t mode, double t0, double t1) {
  iochar_record *r = path_record(dirfd, path);
  if (!r) return;
  if (!r->c[POSIX_FILE_BLKSIZE] && r->id != IOCHAR_AGG_ID) record_fs_facts(fd, r);
  /* The kernel starts every description at offset 0, O_APPEND included (a
   * read there reads from 0); an appending write finds its own offset. */
  iochar_fd_open(fd, r, (flags & O_APPEND) != 0);
  iochar_spin_lock(&r->lock);
  r->c[POSIX_OPENS]++;
  iochar_rw_open(r, &layout, r->state);
  if ((flags & O_CREAT) && !r->c[POSIX_MODE]) r->c[POSIX_MODE] = mode & 07777;
  iochar_ts(&r->f[POSIX_F_OPEN_START_TIMESTAMP], &r->f[POSIX_F_OPEN_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &layout, r->state, t0, t1);
  iochar_spin_unlock(&r->lock);
}

/* Where an appending write landed: the end of the file at that moment,
 * which the kernel chose.  write/writev move the description's offset to the
 * end of the data (SEEK_CUR asks for it without moving anything); a
 * positioned write on an O_APPEND descriptor appends too (Linux) but leaves
 * the offset alone, so the size tells.  Only O_APPEND descriptors get here:
 * the one extra system call is theirs alone. */
static __attribute__((noinline)) int64_t append_offset(int fd, iochar_fdesc *d, int positioned,
                                                       ssize_t ret) {
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
  iochar_in_tool++;
  iochar_record *r = d->rec;
  if (__builtin_expect(dir == 1 && d->append && ret > 0, 0))
    off = append_offset(fd, d, off >= 0, ret); /* before the lock: a system call */
  else if (dir == 1 && d->append && off < 0)
    off = atomic_load_explicit(&d->offset, memory_order_relaxed); /* 0 bytes: nothing moved */
  iochar_spin_lock(&r->lock);
  if (off < 0 && !(dir == 1 && d->append)) { /* implicit offset: the description's */
    off = atomic_load_explicit(&d->offset, memory_order_relaxed);
    if (ret > 0) atomic_store_explicit(&d->offset, off + ret, memory_order_relaxed);
  }
  /* the clock readings become seconds only now: no call left that would
   * make the compiler keep two doubles on the stack across it */
  double t0 = iochar_ticks_s(k0), t1 = iochar_ticks_s(k1);
  if (!iochar_rw_defer_timed(r, &layout, r->state, dir, off, ret, buf, t0, t1))
    iochar_rw_account(r, &layout, r->state, dir, off, ret, buf, t0, t1);
  iochar_spin_unlock(&r->lock);
  iochar_in_tool--;
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

/* Metadata call on a tracked record: bump counter idx and meta time. */
static void record_meta(iochar_record *r, int idx, double t0, double t1) {
  iochar_meta_event(r, &layout, idx, -1, -1, t0, t1);
}

static void record_close(int fd, iochar_fdesc *d, double t0, double t1) {
  iochar_record *r = d->rec;
  iochar_meta_event(r, &layout, -1, POSIX_F_CLOSE_START_TIMESTAMP, POSIX_F_CLOSE_END_TIMESTAMP, t0,
                    t1);
  iochar_fd_close(fd, d);
}

static void record_dup(int newfd, iochar_fdesc *d, double t0, double t1) {
  iochar_fd_set(newfd, d);
  record_meta(d->rec, POSIX_DUPS, t0, t1);
}

/* A successful call on an empty path had AT_EMPTY_PATH: it is about dirfd. */
static void record_path_meta(int dirfd, const char *path, int idx, double t0, double t1) {
  iochar_fdesc *d;
  iochar_record *r = path[0]                      ? path_record(dirfd, path)
                     : (d = iochar_fd_get(dirfd)) ? d->rec
                                                  : NULL;
  if (r) record_meta(r, idx, t0, t1);
}

/* ---- open family -------------------------------------------------------- */

#define OPEN_MODE(flags, mode)           \
  if ((flags) & (O_CREAT | O_TMPFILE)) { \
    va_list ap;                          \
    va_start(ap, flags);                 \
    mode = va_arg(ap, mode_t);           \
    va_end(ap);                          \
  }

/* The shape of every open wrapper: guard, clock, real call, clock, record. */
IOCHAR_WRAP(int, open, (const char *path, int flags, ...)) {
  mode_t mode = 0;
  OPEN_MODE(flags, mode);
  if (!iochar_active()) return IOCHAR_REAL(open)(path, flags, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(open)(path, flags, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, mode, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, open64, (const char *path, int flags, ...)) {
  mode_t mode = 0;
  OPEN_MODE(flags, mode);
  if (!iochar_active()) return IOCHAR_REAL(open64)(path, flags, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(open64)(path, flags, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, mode, t0, t1));
  return fd;
}

#define DEFINE_OPENAT(name)                                                        \
  IOCHAR_WRAP(int, name, (int dirfd, const char *path, int flags, ...)) {          \
    mode_t mode = 0;                                                               \
    OPEN_MODE(flags, mode);                                                        \
    if (!iochar_active()) return IOCHAR_REAL(name)(dirfd, path, flags, mode);      \
    double t0 = iochar_now();                                                      \
    int fd = IOCHAR_REAL(name)(dirfd, path, flags, mode);                          \
    double t1 = iochar_now();                                                      \
    if (fd >= 0) IOCHAR_RECORD(record_open(fd, dirfd, path, flags, mode, t0, t1)); \
    return fd;                                                                     \
  }
// clang-format off
DEFINE_OPENAT(openat)
DEFINE_OPENAT(openat64)
// clang-format on

#define DEFINE_CREAT(name)                                                                        \
  IOCHAR_WRAP(int, name, (const char *path, mode_t mode)) {                                       \
    if (!iochar_active()) return IOCHAR_REAL(name)(path, mode);                                   \
    double t0 = iochar_now();                                                                     \
    int fd = IOCHAR_REAL(name)(path, mode);                                                       \
    double t1 = iochar_now();                                                                     \
    if (fd >= 0)                                                                                  \
      IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, t0, t1)); \
    return fd;                                                                                    \
  }
// clang-format off
DEFINE_CREAT(creat)
DEFINE_CREAT(creat64)
// clang-format on

IOCHAR_WRAP(int, close, (int fd)) {
  iochar_fdesc *d = iochar_fd_get(fd); /* NULL whenever not recording (core.h) */
  if (!d || (__builtin_expect(iochar_in_tool, 0) && !iochar_active())) {
    if (d && !iochar_in_vfork_child()) iochar_fd_clear(fd);
    return IOCHAR_REAL(close)(fd);
  }
  double t0 = iochar_now();
  int ret = IOCHAR_REAL(close)(fd);
  double t1 = iochar_now();
  /* IOCHAR_RECORD without the errno save: nothing in record_close sets it
   * (the contended lock and the observers keep it themselves) */
  iochar_in_tool++;
  record_close(fd, d, t0, t1);
  iochar_in_tool--;
  return ret;
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

/* Priority 101: before the runtime's own constructor (iochar_init, core.c),
 * so before any descriptor can be in the table. */
__attribute__((constructor(101))) static void data_calls_resolved(void) {
  (void)IOCHAR_REAL(read), (void)IOCHAR_REAL(write), (void)IOCHAR_REAL(pread);
  (void)IOCHAR_REAL(pwrite), (void)IOCHAR_REAL(pread64), (void)IOCHAR_REAL(pwrite64);
}

/* Vector calls: the first buffer decides memory alignment. */
#define IOV0(iov, n) ((n) > 0 ? (iov)[0].iov_base : NULL)
IOCHAR_WRAP(ssize_t, readv, (int fd, const struct iovec *iov, int n)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(readv)(fd, iov, n);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(readv)(fd, iov, n);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, -1, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, writev, (int fd, const struct iovec *iov, int n)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(writev)(fd, iov, n);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(writev)(fd, iov, n);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, -1, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, preadv, (int fd, const struct iovec *iov, int n, off_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev, (int fd, const struct iovec *iov, int n, off_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, preadv64, (int fd, const struct iovec *iov, int n, off64_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv64)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv64)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev64, (int fd, const struct iovec *iov, int n, off64_t off)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev64)(fd, iov, n, off);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev64)(fd, iov, n, off);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
}
/* v2: offset -1 means the current file offset. */
IOCHAR_WRAP(ssize_t, preadv2, (int fd, const struct iovec *iov, int n, off_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev2, (int fd, const struct iovec *iov, int n, off_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, preadv64v2, (int fd, const struct iovec *iov, int n, off64_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(preadv64v2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(preadv64v2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_read(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
}
IOCHAR_WRAP(ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int n, off64_t off, int fl)) {
  iochar_fdesc *d = data_fd(fd);
  if (!d) return IOCHAR_REAL(pwritev64v2)(fd, iov, n, off, fl);
  uint64_t k0 = iochar_ticks();
  ssize_t ret = IOCHAR_REAL(pwritev64v2)(fd, iov, n, off, fl);
  uint64_t k1 = iochar_ticks();
  record_write(fd, d, off, ret, IOV0(iov, n), k0, k1);
  return ret;
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

/* ---- descriptor duplication --------------------------------------------- */

IOCHAR_WRAP(int, dup, (int fd)) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (!d || !iochar_active()) return IOCHAR_REAL(dup)(fd);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(dup)(fd);
  double t1 = iochar_now();
  if (r >= 0) IOCHAR_RECORD(record_dup(r, d, t0, t1));
  return r;
}

/* dup2/dup3 onto a tracked fd close it implicitly: forget it either way. */
#define DEFINE_DUP2(name, params, call)                                       \
  IOCHAR_WRAP(int, name, params) {                                            \
    iochar_fdesc *d = iochar_fd_get(fd);                                      \
    if (!iochar_active()) {                                                   \
      int r = IOCHAR_REAL(name) call;                                         \
      if (r >= 0 && r != fd && !iochar_in_vfork_child()) iochar_fd_set(r, d); \
      return r;                                                               \
    }                                                                         \
    double t0 = iochar_now();                                                 \
    int r = IOCHAR_REAL(name) call;                                           \
    double t1 = iochar_now();                                                 \
    if (r >= 0 && r != fd) {                                                  \
      if (d)                                                                  \
        IOCHAR_RECORD(record_dup(r, d, t0, t1));                              \
      else                                                                    \
        iochar_fd_clear(r);                                                   \
    }                                                                         \
    return r;                                                                 \
  }
// clang-format off
DEFINE_DUP2(dup2, (int fd, int nfd), (fd, nfd))
DEFINE_DUP2(dup3, (int fd, int nfd, int fl), (fd, nfd, fl))
// clang-format on

/* F_SETFL can turn O_APPEND on or off for the whole description. */
static int set_flags(iochar_fdesc *d, int ret, void *arg) {
  if (ret == 0) d->append = ((int)(intptr_t)arg & O_APPEND) != 0;
  return ret;
}

IOCHAR_WRAP(int, fcntl, (int fd, int cmd, ...)) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *); /* every fcntl argument fits a pointer */
  va_end(ap);
  iochar_fdesc *d = iochar_fd_get(fd);
  int dupcmd = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
  if (d && cmd == F_SETFL) return set_flags(d, IOCHAR_REAL(fcntl)(fd, cmd, arg), arg);
  if (!d || !dupcmd || !iochar_active()) return IOCHAR_REAL(fcntl)(fd, cmd, arg);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fcntl)(fd, cmd, arg);
  double t1 = iochar_now();
  if (r >= 0) IOCHAR_RECORD(record_dup(r, d, t0, t1));
  return r;
}
IOCHAR_WRAP(int, fcntl64, (int fd, int cmd, ...)) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  iochar_fdesc *d = iochar_fd_get(fd);
  int dupcmd = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
  if (d && cmd == F_SETFL) return set_flags(d, IOCHAR_REAL(fcntl64)(fd, cmd, arg), arg);
  if (!d || !dupcmd || !iochar_active()) return IOCHAR_REAL(fcntl64)(fd, cmd, arg);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fcntl64)(fd, cmd, arg);
  double t1 = iochar_now();
  if (r >= 0) IOCHAR_RECORD(record_dup(r, d, t0, t1));
  return r;
}

/* ---- working directory (relative paths are resolved against a cache) ---- */

IOCHAR_WRAP(int, chdir, (const char *p)) {
  int r = IOCHAR_REAL(chdir)(p);
  if (r == 0 && iochar_ready) IOCHAR_RECORD(iochar_cwd_changed());
  return r;
}
IOCHAR_WRAP(int, fchdir, (int fd)) {
  int r = IOCHAR_REAL(fchdir)(fd);
  if (r == 0 && iochar_ready) IOCHAR_RECORD(iochar_cwd_changed());
  return r;
}

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

/* ---- fortified entry points --------------------------------------------- */
/* -D_FORTIFY_SOURCE builds call glibc's checked variants instead of the plain
 * names; the real checked function still does the check. */
int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);
ssize_t __read_chk(int, void *, size_t, size_t);
ssize_t __pread_chk(int, void *, size_t, off_t, size_t);
ssize_t __pread64_chk(int, void *, size_t, off64_t, size_t);

IOCHAR_WRAP(int, __open_2, (const char *path, int flags)) {
  if (!iochar_active()) return IOCHAR_REAL(__open_2)(path, flags);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(__open_2)(path, flags);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, 0, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, __open64_2, (const char *path, int flags)) {
  if (!iochar_active()) return IOCHAR_REAL(__open64_2)(path, flags);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(__open64_2)(path, flags);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, 0, t0, t1));
  return fd;
}

#define DEFINE_OPENAT_2(name)                                                   \
  IOCHAR_WRAP(int, name, (int dirfd, const char *path, int flags)) {            \
    if (!iochar_active()) return IOCHAR_REAL(name)(dirfd, path, flags);         \
    double t0 = iochar_now();                                                   \
    int fd = IOCHAR_REAL(name)(dirfd, path, flags);                             \
    double t1 = iochar_now();                                                   \
    if (fd >= 0) IOCHAR_RECORD(record_open(fd, dirfd, path, flags, 0, t0, t1)); \
    return fd;                                                                  \
  }
// clang-format off
DEFINE_OPENAT_2(__openat_2)
DEFINE_OPENAT_2(__openat64_2)
// clang-format on

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
