/* Workloads for the shared-directory and abnormal-end tests
 * (tests/integration/test_security.py): `security_workload MODE DIR [N]`. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static const char *dir;

/* N files DIR/f<i>, one byte written to each. */
static void many(int n) {
  char p[4096];
  for (int i = 0; i < n; i++) {
    snprintf(p, sizeof p, "%s/f%05d", dir, i);
    int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, "x", 1) == 1);
    CHECK(close(fd) == 0);
  }
}

/* The application closes fd 2 and opens a data file, which gets fd 2; then
 * opens N more files (past a small IOCHAR_MEMORY: the tool has a warning). */
static void fd2_reused(int n) {
  char p[4096];
  snprintf(p, sizeof p, "%s/data.bin", dir);
  CHECK(close(2) == 0);
  int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd != 2) exit(4);
  CHECK(write(fd, "DATA\n", 5) == 5);
  many(n);
  CHECK(write(fd, "MORE\n", 5) == 5);
  CHECK(close(fd) == 0);
}

/* A 200-byte directory name, nested levels deep, made one level at a time
 * (no call sees a path longer than the kernel's limit). */
static char seg[201];
static int descend(int from, int levels) {
  int d = from;
  for (int i = 0; i < levels; i++) {
    if (mkdirat(d, seg, 0755) != 0 && errno != EEXIST) CHECK(0);
    int n = openat(d, seg, O_RDONLY | O_DIRECTORY);
    CHECK(n >= 0);
    if (d != from) close(d);
    d = n;
  }
  return d;
}

/* Names past 4096 bytes, three ways: a cwd of 15 levels and a relative name
 * of 10 more ("near", 100 bytes written); a cwd of 25 levels, deeper than
 * IOCHAR_PATH_MAX, and a plain name ("deep", 50 bytes); openat on a
 * directory descriptor of that depth ("at", 30 bytes). */
static void longpath(void) {
  memset(seg, 'd', 200);
  int top = open(dir, O_RDONLY | O_DIRECTORY);
  CHECK(top >= 0);
  close(descend(top, 25));
  CHECK(chdir(dir) == 0);
  for (int i = 0; i < 15; i++) CHECK(chdir(seg) == 0);
  char rel[4096] = "";
  for (int i = 0; i < 10; i++) {
    strcat(rel, seg);
    strcat(rel, "/");
  }
  strcat(rel, "near");
  int fd = open(rel, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, rel, 100) == 100);
  CHECK(close(fd) == 0);
  for (int i = 0; i < 10; i++) CHECK(chdir(seg) == 0);
  fd = open("deep", O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, rel, 50) == 50);
  CHECK(close(fd) == 0);
  int d = open(".", O_RDONLY | O_DIRECTORY);
  CHECK(d >= 0);
  fd = openat(d, "at", O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, rel, 30) == 30);
  CHECK(close(fd) == 0);
  CHECK(close(d) == 0);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *mode = argv[1];
  dir = argv[2];
  int n = argc > 3 ? atoi(argv[3]) : 0;
  if (strcmp(mode, "many") == 0) {
    many(n);
  } else if (strcmp(mode, "status-many") == 0) {
    /* buffered stdout still unwritten when the tool writes its log */
    printf("wrote %d files\n", n);
    many(n);
    exit(7);
  } else if (strcmp(mode, "fd2") == 0) {
    fd2_reused(n);
  } else if (strcmp(mode, "longpath") == 0) {
    longpath();
  } else if (strcmp(mode, "longpath_exit") == 0) { /* the same, its live file left */
    longpath();
    _exit(0);
  } else {
    return 2;
  }
  return 0;
}
