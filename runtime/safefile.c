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

/* A directory every user can write without the sticky bit lets anyone
 * rename or replace our names there: refused (EPERM). */
static int dir_refused(const char *final_path) {
  const char *slash = strrchr(final_path, '/');
  char dir[4096 + 64];
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    snprintf(dir, sizeof dir, "%.*s", slash == final_path ? 1 : (int)(slash - final_path),
             final_path);
  struct stat st;
  if (stat(dir, &st) == 0 && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    errno = EPERM;
    return 1;
  }
  return 0;
}

int iochar_safe_create(const char *final_path, char *tmp, size_t n) {
  if (dir_refused(final_path)) return -1;
  for (int attempt = 0; attempt < 8; attempt++) {
    if (sibling_name(final_path, ".tmp", tmp, n)) return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return -1; /* a collision on 64 random bits: retry */
  }
  return -1;
}

int iochar_safe_mkdtemp(const char *final_path, char *dir, size_t n) {
  if (dir_refused(final_path)) return -1;
  for (int attempt = 0; attempt < 8; attempt++) {
    if (sibling_name(final_path, ".d", dir, n)) return -1;
    if (mkdir(dir, 0700) == 0) return 0;
    if (errno != EEXIST) return -1;
  }
  return -1;
}

int iochar_safe_dir_name(const char *final_path, char *dir, size_t n) {
  return sibling_name(final_path, ".d", dir, n);
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

void iochar_safe_discard(int fd, const char *tmp) {
  int e = errno;
  if (fd >= 0) close(fd);
  if (tmp && tmp[0]) unlink(tmp);
  errno = e;
}

int iochar_safe_close(int fd, const char *tmp) {
  if (fd >= 0 && close(fd) != 0) {
    iochar_safe_discard(-1, tmp);
    return -1;
  }
  return 0;
}

int iochar_safe_rename_noreplace(const char *tmp, const char *final_path) {
  int rc = (int)syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, final_path, RENAME_NOREPLACE);
  /* File systems without renameat2 flags: link() refuses to replace too. */
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
    rc = link(tmp, final_path);
    if (rc == 0) unlink(tmp);
  }
  return rc;
}

int iochar_safe_publish(int fd, const char *tmp, const char *final_path, int noreplace) {
  if (iochar_safe_close(fd, tmp)) return -1;
  int rc = noreplace ? iochar_safe_rename_noreplace(tmp, final_path) : rename(tmp, final_path);
  if (rc != 0) iochar_safe_discard(-1, tmp);
  return rc;
}
