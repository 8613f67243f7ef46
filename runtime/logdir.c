/* Where a process's log goes: IOCHAR_LOGFILE, IOCHAR_LOGDIR, the dated tree
 * ROOT/YYYY/M/D/ under IOCHAR_LOGROOT (day directories made on demand:
 * docs/security.md), or the working directory; and the start-up check. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "logdir.h"
#include "warn.h"

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* The tree is used when neither IOCHAR_LOGFILE nor IOCHAR_LOGDIR is set. */
static int in_tree(void) { return iochar_cfg.logroot && !iochar_cfg.logfile && !iochar_cfg.logdir; }

/* The day of t in local time, unpadded as Darshan's tree: "2026", "3", "7". */
static void day_parts(double t, char parts[3][12]) {
  time_t s = (time_t)t;
  struct tm tm;
  localtime_r(&s, &tm);
  snprintf(parts[0], 12, "%d", tm.tm_year + 1900);
  snprintf(parts[1], 12, "%d", tm.tm_mon + 1);
  snprintf(parts[2], 12, "%d", tm.tm_mday);
}

/* The directory the log lands in: IOCHAR_LOGFILE's, IOCHAR_LOGDIR, the day
 * directory of the job's start under the root, or the working directory. */
static int log_dir(char *out, size_t n, double start) {
  const char *lf = iochar_cfg.logfile;
  int w;
  if (lf) {
    const char *slash = strrchr(lf, '/');
    if (!slash)
      w = snprintf(out, n, ".");
    else if (slash == lf)
      w = snprintf(out, n, "/");
    else
      w = snprintf(out, n, "%.*s", (int)(slash - lf), lf);
  } else if (in_tree()) {
    char d[3][12];
    day_parts(start, d);
    w = snprintf(out, n, "%s/%s/%s/%s", iochar_cfg.logroot, d[0], d[1], d[2]);
  } else {
    w = snprintf(out, n, "%s", iochar_cfg.logdir ? iochar_cfg.logdir : ".");
  }
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

int iochar_log_path(char *out, size_t n, int per_rank) {
  const iochar_job *j = &iochar_job_info;
  char suffix[128] = "";
  if (per_rank) snprintf(suffix, sizeof suffix, ".rank%d", j->rank);
  if (j->forked)
    snprintf(suffix + strlen(suffix), sizeof suffix - strlen(suffix), ".pid%d", (int)getpid());
  if (j->log_tag[0])
    snprintf(suffix + strlen(suffix), sizeof suffix - strlen(suffix), "%s", j->log_tag);
  if (iochar_cfg.logfile) {
    const char *lf = iochar_cfg.logfile;
    size_t l = strlen(lf);
    if (!suffix[0]) return snprintf(out, n, "%s", lf) >= (int)n ? -1 : 0;
    if (l > 7 && strcmp(lf + l - 7, ".iochar") == 0)
      return snprintf(out, n, "%.*s%s.iochar", (int)(l - 7), lf, suffix) >= (int)n ? -1 : 0;
    return snprintf(out, n, "%s%s.iochar", lf, suffix) >= (int)n ? -1 : 0;
  }
  char date[32], dir[IOCHAR_PATH_MAX];
  time_t t = (time_t)j->start_wall;
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(date, sizeof date, "%Y%m%d-%H%M%S", &tm);
  if (log_dir(dir, sizeof dir, j->start_wall) != 0) return -1;
  return snprintf(out, n, "%s/%s_%s_id%s_%s_%d%s.iochar", dir, j->user, base_name(j->exe), j->jobid,
                  date, j->log_pid, suffix) >= (int)n
             ? -1
             : 0;
}

/* Why a directory that exists cannot take the log (NULL: it can).  need_w:
 * the tool creates names in it. */
static const char *dir_unusable(const char *dir, int need_w) {
  struct stat st;
  if (stat(dir, &st) != 0) return strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (need_w && access(dir, W_OK | X_OK) != 0) return strerror(errno);
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    return "every user can write it and it has no sticky bit (others could replace the "
           "log's names)";
  return NULL;
}

/* The root, then its year, month and day of now as far as they exist: each
 * must be usable, and the deepest writable (the log, or the next
 * directory, is made in it). */
static void tree_check(void) {
  char path[IOCHAR_PATH_MAX], d[3][12];
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  day_parts((double)now.tv_sec, d);
  const char *root = iochar_cfg.logroot, *why = NULL;
  snprintf(path, sizeof path, "%s", root);
  int depth = 0;
  for (; depth < 3; depth++) {
    char next[IOCHAR_PATH_MAX];
    struct stat st;
    if (snprintf(next, sizeof next, "%s/%s", path, d[depth]) >= (int)sizeof next ||
        lstat(next, &st) != 0)
      break;
    if ((why = dir_unusable(path, 0)) != NULL) break;
    if (S_ISLNK(st.st_mode)) {
      memcpy(path, next, sizeof path);
      why = "a symbolic link (refused)";
      break;
    }
    memcpy(path, next, sizeof path);
  }
  if (!why) why = dir_unusable(path, 1);
  if (why)
    iochar_warn_once(IOCHAR_WARN_LOGDIR,
                     "log root %s: %s%s%s; the log will not be written (its counters stay in "
                     "the live file for the epilogue: iochar-parser --recover)",
                     root, strcmp(path, root) ? path + strlen(root) + 1 : "",
                     strcmp(path, root) ? ": " : "", why);
}

void iochar_log_dir_check(void) {
  if (in_tree()) {
    tree_check();
    return;
  }
  char dir[IOCHAR_PATH_MAX];
  if (log_dir(dir, sizeof dir, 0) != 0) return;
  const char *why = dir_unusable(dir, 1);
  if (why)
    iochar_warn_once(IOCHAR_WARN_LOGDIR, "log directory %s: %s; the log will not be written", dir,
                     why);
}

/* One level of the tree under the directory fd: opened if it exists (a
 * symlink or a file there is refused: ELOOP, ENOTDIR), else made with the
 * root's mode (0700 first, then widened on the descriptor: never wider than
 * asked, whatever the umask).  An existing level every user can write
 * without the sticky bit is refused (EPERM).  The new descriptor, or -1. */
static int tree_level(int fd, const char *name, mode_t mode) {
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int made = 0, d = openat(fd, name, flags);
  if (d < 0 && errno == ENOENT) {
    if (mkdirat(fd, name, 0700) == 0)
      made = 1;
    else if (errno != EEXIST) /* another job made it meanwhile: open theirs */
      return -1;
    d = openat(fd, name, flags);
  }
  struct stat st;
  if (d < 0 || fstat(d, &st) != 0) goto fail;
  if (made ? fchmod(d, mode) != 0 : (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    if (!made) errno = EPERM;
    goto fail;
  }
  return d;
fail:
  if (d >= 0) {
    int e = errno;
    close(d);
    errno = e;
  }
  return -1;
}

int iochar_log_dir_make(void) {
  if (!in_tree()) return 0;
  char d[3][12];
  day_parts(iochar_job_info.start_wall, d);
  int fd = open(iochar_cfg.logroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  for (int k = 0; k < 3 && fd >= 0; k++) {
    int next = tree_level(fd, d[k], st.st_mode & 07777);
    int e = errno;
    close(fd);
    errno = e;
    fd = next;
  }
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

int iochar_log_dir_real(char *out, size_t n) {
  char dir[IOCHAR_PATH_MAX], real[PATH_MAX];
  if (log_dir(dir, sizeof dir, iochar_job_info.start_wall) != 0) return -1;
  if (realpath(dir, real)) return snprintf(out, n, "%s", real) >= (int)n ? -1 : 0;
  /* A day directory not made yet: the root's real name and the rest. */
  if (in_tree() && realpath(iochar_cfg.logroot, real))
    return snprintf(out, n, "%s%s", real, dir + strlen(iochar_cfg.logroot)) >= (int)n ? -1 : 0;
  if (dir[0] == '/') return snprintf(out, n, "%s", dir) >= (int)n ? -1 : 0;
  char cwd[IOCHAR_PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return -1;
  return snprintf(out, n, "%s/%s", cwd, dir) >= (int)n ? -1 : 0;
}
