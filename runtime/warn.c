/* Warnings: printed once per job on the process's own stderr, never into a
 * descriptor the application reused, and kept for the log (JOB `warnings`). */
#include "warn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

static uint64_t warned;
/* What fd 2 was at start.  A process that closes fd 2 and opens a data file
 * (which gets fd 2) must not find our lines in its data. */
static struct {
  int ok;
  dev_t dev, rdev;
  ino_t ino;
  mode_t mode;
} err0;
static int quiet; /* an MPI rank > 0: the job's first process speaks */

/* Kept lines: fixed, so a warning needs no allocation wherever it is raised. */
static char kept[4096];
static size_t kept_len;
static iochar_spin kept_lock;

static const char *const describe[] = {
#define IOCHAR_WARN_TEXT_(name, text) text,
    IOCHAR_WARNINGS(IOCHAR_WARN_TEXT_)
#undef IOCHAR_WARN_TEXT_
};

const char *iochar_warn_describe(enum iochar_warning key) {
  return (unsigned)key < IOCHAR_WARN_COUNT ? describe[key] : "unknown warning";
}

/* The tool's own fstat calls reach our wrapper, which passes them straight
 * through while iochar_in_tool is set (it records nothing, changes nothing). */
static int stat_fd2(struct stat *st) {
  iochar_in_tool++;
  int rc = fstat(2, st);
  iochar_in_tool--;
  return rc;
}

void iochar_warn_init(int launcher_rank) {
  int e = errno;
  struct stat st;
  if (stat_fd2(&st) == 0) {
    err0.dev = st.st_dev;
    err0.rdev = st.st_rdev;
    err0.ino = st.st_ino;
    err0.mode = st.st_mode;
    err0.ok = 1;
  }
  quiet = launcher_rank > 0;
  errno = e;
}

void iochar_warn_set_rank(int rank) {
  if (rank > 0) quiet = 1;
}

static int stderr_is_ours(void) {
  struct stat st;
  if (!err0.ok || stat_fd2(&st) != 0) return 0;
  return st.st_dev == err0.dev && st.st_ino == err0.ino && st.st_rdev == err0.rdev &&
         st.st_mode == err0.mode;
}

void iochar_warn_keep(const char *line) {
  size_t n = strlen(line);
  iochar_spin_lock(&kept_lock);
  /* Whole lines only: one that no longer fits is dropped, not cut. */
  if (kept_len + n + 2 <= sizeof kept) {
    if (kept_len) kept[kept_len++] = '\n';
    memcpy(kept + kept_len, line, n);
    kept_len += n;
    kept[kept_len] = 0;
  }
  iochar_spin_unlock(&kept_lock);
}

void iochar_warn_once(enum iochar_warning key, const char *fmt, ...) {
  uint64_t bit = 1ull << ((unsigned)key & 63);
  if (__atomic_fetch_or(&warned, bit, __ATOMIC_RELAXED) & bit) return;
  int e = errno;
  char line[1024];
  const size_t pre = sizeof "iochar: " - 1;
  memcpy(line, "iochar: ", pre);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line + pre, sizeof line - pre - 1, fmt, ap);
  va_end(ap);
  size_t len = pre + (n < 0 ? 0 : (size_t)n);
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len] = 0;
  iochar_warn_keep(line + pre);
  if (!quiet && stderr_is_ours()) {
    line[len++] = '\n';
    iochar_in_tool++;
    ssize_t w = write(2, line, len);
    (void)w;
    iochar_in_tool--;
  }
  errno = e;
}

uint64_t iochar_warned(void) { return __atomic_load_n(&warned, __ATOMIC_RELAXED); }

const char *iochar_warnings_text(void) { return kept; }
