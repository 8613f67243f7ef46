/* Safe creation and publication of the files the tool writes (logs, per-rank
 * logs, temporaries): see safefile.h and docs/security.md. */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

void iochar_random_bytes(void *out, size_t n) {
  uint8_t *p = out;
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(p + got, n - got, GRND_NONBLOCK);
    if (r > 0) {
      got += (size_t)r;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    break;
  }
  if (got == n) return;
  /* No entropy yet (early boot) or no syscall: mix clocks and ids; the
   * O_EXCL creation still makes a collision a failure, never a takeover. */
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  uint64_t x = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)t.tv_sec;
  x ^= (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&t;
  for (; got < n; got++) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    p[got] = (uint8_t)x;
  }
}

/* "<dir>/.<base>.<random hex><suffix>" beside final_path. */
static int sibling_name(const char *final_path, const char *suffix, char *out, size_t n) {
  const char *slash = strrchr(final_path, '/');
  int dirlen = slash ? (int)(slash - final_path + 1) : 0;
  const char *base = slash ? slash + 1 : final_path;
  uint8_t r[8];
  iochar_random_bytes(r, sizeof r);
  char hex[17];
  for (int i = 0; i < 8; i++) {
    hex[2 * i] = "0123456789abcdef"[r[i] >> 4];
    hex[2 * i + 1] = "0123456789abcdef"[r[i] & 15];
  }
  hex[16] = 0;
  /* Keep the base short enough that the name fits NAME_MAX (255). */
  int w = snprintf(out, n, "%.*s.%.200s.%s%s", dirlen, final_path, base, hex, suffix);
  if (w < 0 || (size_t)w >= n) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/* The directory part of final_path ("." for a bare name). */
static int dir_of(const char *final_path, char *dir, size_t n) {
  const char *slash = strrchr(final_path, '/');
  int w = !slash ? snprintf(dir, n, ".")
                 : snprintf(dir, n, "%.*s", slash == final_path ? 1 : (int)(slash - final_path),
                            final_path);
  if (w < 0 || (size_t)w >= n) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/* POSIX ACL entries as the kernel stores them in system.posix_acl_access
 * (little-endian: a u32 version, then u16 tag, u16 perm, u32 id each). */
enum {
  ACL_TAG_USER = 2,
  ACL_TAG_GROUP_OBJ = 4,
  ACL_TAG_GROUP = 8,
  ACL_TAG_MASK = 0x10,
  ACL_PERM_W = 2
};

/* Whether dir's group class may write, from its access ACL where it has
 * one with a mask (then the mode's group bits are only the mask): the mask
 * allows write and the owning group, a named group, or a named user other
 * than us has it.  -1: no such ACL (the mode's group bits decide).  An ACL
 * too long to read here counts as granting (the safe answer). */
static int acl_group_write(const char *dir) {
  uint8_t b[4 + 8 * 256];
  ssize_t n = getxattr(dir, "system.posix_acl_access", b, sizeof b);
  if (n < 0) return errno == ERANGE ? 1 : -1;
  int has_mask = 0;
  unsigned mask = 0, w = 0;
  for (ssize_t at = 4; at + 8 <= n; at += 8) {
    uint16_t tag = (uint16_t)(b[at] | b[at + 1] << 8),
             perm = (uint16_t)(b[at + 2] | b[at + 3] << 8);
    uint32_t id = (uint32_t)b[at + 4] | (uint32_t)b[at + 5] << 8 | (uint32_t)b[at + 6] << 16 |
                  (uint32_t)b[at + 7] << 24;
    if (tag == ACL_TAG_MASK) has_mask = 1, mask = perm;
    if ((tag == ACL_TAG_USER && id != (uint32_t)geteuid()) || tag == ACL_TAG_GROUP ||
        tag == ACL_TAG_GROUP_OBJ)
      w |= perm;
  }
  if (!has_mask) return -1;
  return (w & mask & ACL_PERM_W) != 0;
}

int iochar_dir_shared(const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0) return 0;
  /* Its owner may rename anything in it (root is out of scope: it may anyway). */
  if (st.st_uid != geteuid() && st.st_uid != 0) return 1;
  if (st.st_mode & S_IWOTH) return 1;
  if (st.st_mode & S_ISVTX) return 0; /* only the owner of a name may rename it */
  int acl = acl_group_write(dir);
  return acl >= 0 ? acl : (st.st_mode & S_IWGRP) != 0;
}

/* A directory every user can write without the sticky bit: refused (EPERM). */
static int dir_refused(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0 && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    errno = EPERM;
    return 1;
  }
  return 0;
}

int iochar_tmp_unnamed_off;

static void proc_fd_path(char *out, size_t n, int fd) { snprintf(out, n, "/proc/self/fd/%d", fd); }

/* An unnamed file in dir that linkat can give a name later: through
 * /proc/self/fd (any user), or AT_EMPTY_PATH (root; any user since Linux
 * 6.10).  -1 with errno EOPNOTSUPP when the file system or the kernel has
 * no O_TMPFILE, or there is no way to link it. */
static int unnamed_create(const char *dir) {
  if (iochar_tmp_unnamed_off) {
    errno = EOPNOTSUPP;
    return -1;
  }
  /* O_RDWR: read back by iochar_tmp_renew when a name of it is taken. */
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EISDIR || errno == EINVAL || errno == ENOTSUP) errno = EOPNOTSUPP;
    return -1;
  }
  char proc[64];
  struct stat a, b;
  proc_fd_path(proc, sizeof proc, fd);
  if (geteuid() != 0 &&
      (fstat(fd, &a) != 0 || stat(proc, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
    close(fd);
    errno = EOPNOTSUPP;
    return -1;
  }
  return fd;
}

/* Link fd's unnamed file at (at, name), never replacing. */
static int link_fd(int fd, int at, const char *name) {
  char proc[64];
  proc_fd_path(proc, sizeof proc, fd);
  if (linkat(AT_FDCWD, proc, at, name, AT_SYMLINK_FOLLOW) == 0) return 0;
  if (errno == EEXIST) return -1;
  int e = errno; /* no /proc: AT_EMPTY_PATH, which may need privilege */
  if (linkat(fd, "", at, name, AT_EMPTY_PATH) == 0) return 0;
  if (errno == EEXIST || (errno != EPERM && errno != ENOENT)) e = errno;
  errno = e;
  return -1;
}

int iochar_tmp_open_dir(const char *dir, uint64_t ddev, uint64_t dino) {
  int d = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (d >= 0 && fstat(d, &st) == 0 && (uint64_t)st.st_dev == ddev && (uint64_t)st.st_ino == dino)
    return d;
  if (d >= 0) close(d);
  errno = EXDEV;
  return -1;
}

/* Make t->dir (0700) and check that the name then holds the directory we
 * made: ours, closed to others (a directory put in its place between mkdir
 * and open is refused, and left alone). */
static int private_make(iochar_tmpfile *t) {
  if (mkdir(t->dir, 0700) != 0) return -1;
  t->dir_made = 1;
  int d = open(t->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (d < 0 || fstat(d, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
    if (d >= 0) close(d);
    t->dir_made = 0; /* what is at the name now is not ours */
    errno = EXDEV;
    return -1;
  }
  t->ddev = (uint64_t)st.st_dev;
  t->dino = (uint64_t)st.st_ino;
  t->dfd = d;
  return d;
}

static int fill_ids(iochar_tmpfile *t) {
  struct stat st;
  if (fstat(t->fd, &st) != 0) return -1;
  t->dev = (uint64_t)st.st_dev;
  t->ino = (uint64_t)st.st_ino;
  return 0;
}

int iochar_tmp_dir_name(const char *final_path, iochar_tmpfile *t) {
  return sibling_name(final_path, ".d", t->dir, sizeof t->dir);
}

int iochar_tmp_create(const char *final_path, iochar_tmpfile *t, int by_name) {
  char dir[IOCHAR_TMP_PATH];
  memset(t, 0, sizeof *t);
  t->fd = t->dfd = -1;
  if (dir_of(final_path, dir, sizeof dir) || dir_refused(dir)) return -1;
  t->shared = iochar_dir_shared(dir);
  if (!by_name) {
    t->fd = unnamed_create(dir);
    if (t->fd >= 0) {
      t->kind = IOCHAR_TMP_UNNAMED;
    } else if (errno != EOPNOTSUPP) {
      return -1;
    }
  }
  if (t->fd < 0 && (by_name || t->shared)) {
    int d = -1;
    for (int attempt = 0; attempt < 8 && d < 0; attempt++) {
      if (iochar_tmp_dir_name(final_path, t)) return -1;
      d = private_make(t); /* EXDEV: another directory at its name: try another */
      if (d < 0 && errno != EEXIST && errno != EXDEV) break;
    }
    if (d < 0) {
      iochar_tmp_discard(t);
      return -1;
    }
    t->kind = IOCHAR_TMP_PRIVATE;
    snprintf(t->name, sizeof t->name, "%s/log", t->dir);
    t->fd = openat(d, "log", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (t->fd < 0) t->name[0] = 0; /* not ours */
  } else if (t->fd < 0) {
    t->kind = IOCHAR_TMP_FLAT;
    for (int attempt = 0; attempt < 8 && t->fd < 0; attempt++) {
      if (sibling_name(final_path, ".tmp", t->name, sizeof t->name)) break;
      t->fd = open(t->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (t->fd < 0 && errno != EEXIST) break; /* EEXIST: 64 random bits collided: retry */
    }
    if (t->fd < 0) t->name[0] = 0;
  }
  if (t->fd < 0 || fill_ids(t) != 0) {
    iochar_tmp_discard(t);
    return -1;
  }
  return 0;
}

/* rename(2) that never replaces: renameat2(RENAME_NOREPLACE), or, where the
 * file system lacks the flag, link (which never replaces) and unlink. */
static int rename_noreplace(int from_at, const char *from, int to_at, const char *to) {
  int rc = (int)syscall(SYS_renameat2, from_at, from, to_at, to, RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
    rc = linkat(from_at, from, to_at, to, 0);
    if (rc == 0) unlinkat(from_at, from, 0);
  }
  return rc;
}

int iochar_tmp_private(iochar_tmpfile *t) {
  if (t->kind == IOCHAR_TMP_PRIVATE) return 0;
  if (!t->dir[0] || (t->kind != IOCHAR_TMP_UNNAMED && t->kind != IOCHAR_TMP_FLAT)) {
    errno = EINVAL;
    return -1;
  }
  int d = private_make(t);
  if (d < 0) return -1;
  int rc = t->kind == IOCHAR_TMP_UNNAMED ? link_fd(t->fd, d, "log")
                                         : rename_noreplace(AT_FDCWD, t->name, d, "log");
  if (rc != 0) {
    int e = errno;
    close(d);
    t->dfd = -1;
    rmdir(t->dir);
    t->dir_made = 0;
    errno = e;
    return -1;
  }
  t->kind = IOCHAR_TMP_PRIVATE;
  snprintf(t->name, sizeof t->name, "%s/log", t->dir);
  return 0;
}

int iochar_tmp_place(iochar_tmpfile *t, const char *path) {
  int rc = -1, e = EINVAL;
  if (t->kind == IOCHAR_TMP_UNNAMED && t->fd >= 0) {
    rc = link_fd(t->fd, AT_FDCWD, path);
    e = errno;
  } else if (t->kind == IOCHAR_TMP_FLAT && t->name[0]) {
    rc = rename_noreplace(AT_FDCWD, t->name, AT_FDCWD, path);
    e = errno;
    if (rc == 0) t->name[0] = 0;
  } else if (t->kind == IOCHAR_TMP_PRIVATE && t->name[0]) {
    /* Through the descriptor kept since the directory was made: whatever
     * someone puts at its name, or wherever they move it, the file moved
     * is ours. */
    rc = t->dfd < 0 ? -1 : rename_noreplace(t->dfd, "log", AT_FDCWD, path);
    e = t->dfd < 0 ? EBADF : errno;
    if (rc == 0) t->name[0] = 0;
  }
  errno = e;
  return rc;
}

int iochar_tmp_renew(iochar_tmpfile *t, const char *final_path) {
  char dir[IOCHAR_TMP_PATH];
  if (t->kind != IOCHAR_TMP_UNNAMED || t->fd < 0) {
    errno = EINVAL;
    return -1;
  }
  if (dir_of(final_path, dir, sizeof dir)) return -1;
  int fd = unnamed_create(dir), e = 0;
  if (fd < 0) return -1;
  char buf[16384];
  for (off_t at = 0;;) {
    ssize_t r = pread(t->fd, buf, sizeof buf, at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r < 0) e = errno;
      break;
    }
    if (iochar_write_all(fd, buf, (size_t)r) != 0) {
      e = errno;
      break;
    }
    at += r;
  }
  if (e) {
    close(fd);
    errno = e;
    return -1;
  }
  close(t->fd);
  t->fd = fd;
  return fill_ids(t);
}

int iochar_tmp_check(const iochar_tmpfile *t, const char *path) {
  struct stat st;
  if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0) return 1;
  return (uint64_t)st.st_dev == t->dev && (uint64_t)st.st_ino == t->ino ? 0 : 1;
}

/* Remove t's private directory (and the file in it, if still there): the
 * directory by name only while the name still holds it. */
static void private_remove(iochar_tmpfile *t) {
  if (t->dfd >= 0) {
    if (t->name[0]) unlinkat(t->dfd, "log", 0);
    close(t->dfd);
  }
  t->dfd = -1;
  t->name[0] = 0;
  if (!t->dir_made) return;
  int d = iochar_tmp_open_dir(t->dir, t->ddev, t->dino);
  if (d >= 0) {
    close(d);
    rmdir(t->dir);
  }
  t->dir_made = 0;
}

int iochar_tmp_close(iochar_tmpfile *t) {
  int rc = 0, e = 0;
  if (t->fd >= 0 && close(t->fd) != 0) rc = -1, e = errno;
  t->fd = -1;
  if (t->kind == IOCHAR_TMP_PRIVATE) private_remove(t);
  errno = e;
  return rc;
}

void iochar_tmp_discard(iochar_tmpfile *t) {
  int e = errno;
  if (t->fd >= 0) close(t->fd);
  t->fd = -1;
  if (t->kind == IOCHAR_TMP_FLAT && t->name[0]) unlink(t->name); /* no other user can write there */
  if (t->kind == IOCHAR_TMP_PRIVATE || t->dir_made || t->dfd >= 0) private_remove(t);
  t->name[0] = 0;
  t->kind = IOCHAR_TMP_NONE;
  errno = e;
}

void iochar_xfsz_hold(iochar_xfsz *h) {
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &h->old);
  sigpending(&pending);
  h->was_pending = sigismember(&pending, SIGXFSZ);
}

void iochar_xfsz_release(iochar_xfsz *h) {
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  /* A SIGXFSZ that our write raised is ours: take it back, unless one was
   * already pending for the application before we started. */
  sigpending(&pending);
  if (sigismember(&pending, SIGXFSZ) && !h->was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&xfsz, NULL, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &h->old, NULL);
}

int iochar_write_all(int fd, const void *p, size_t n) {
  iochar_xfsz h;
  iochar_xfsz_hold(&h);
  int rc = 0, err = 0;
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : ENOSPC;
      rc = -1;
      break;
    }
    c += w;
    n -= (size_t)w;
  }
  iochar_xfsz_release(&h);
  errno = err;
  return rc;
}
