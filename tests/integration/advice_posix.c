/* Serial I/O patterns, each meant to trip one advice rule (or none):
 * `advice_posix MODE` in the current directory. The rules each mode must fire
 * (and no others) are asserted in tests/integration/test_advice_real.py; sizes are
 * chosen against the thresholds in reports/iochar/advice/config.py. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KiB 1024
#define MiB (1024 * 1024)

static char buf[4 * MiB] __attribute__((aligned(4096)));

#include "check.h"

static int create(const char *name) {
  int fd = open(name, O_CREAT | O_TRUNC | O_RDWR, 0644);
  CHECK(fd >= 0);
  return fd;
}

/* small-io: 2000 sequential, aligned 4 KiB writes (>= 1000 small ops). */
static void small(void) {
  int fd = create("small.dat");
  for (int i = 0; i < 2000; i++) CHECK(write(fd, buf, 4 * KiB) == 4 * KiB);
  CHECK(close(fd) == 0);
}

/* random-access (and small-io): 2048 aligned 4 KiB writes at descending
 * offsets, so every write but the first lands before the previous one. */
static void random_(void) {
  int fd = create("random.dat");
  for (int i = 2047; i >= 0; i--) CHECK(pwrite(fd, buf, 4 * KiB, (off_t)i * 4 * KiB) == 4 * KiB);
  CHECK(close(fd) == 0);
}

/* misaligned: a 64-byte header, then 150 records of 64 KiB behind it, so every
 * record starts 64 bytes past a block boundary (fewer than 1000 small ops). */
static void misaligned(void) {
  int fd = create("misaligned.dat");
  CHECK(write(fd, buf, 64) == 64);
  for (int i = 0; i < 150; i++) CHECK(write(fd, buf, 64 * KiB) == 64 * KiB);
  CHECK(close(fd) == 0);
}

/* stdio-heavy: 20000 fprintf lines (>= 10000 STDIO ops, all of the job's ops). */
static void stdio_(void) {
  FILE *f = fopen("stdio.txt", "w");
  CHECK(f != NULL);
  for (int i = 0; i < 20000; i++) CHECK(fprintf(f, "step %d value %.6f\n", i, i * 0.5) > 0);
  CHECK(fclose(f) == 0);
}

/* metadata-heavy: 100 tiny files, then 60 passes that stat and open/close each
 * (12,100 opens/stats for 10,000 bytes of data). */
static void meta(void) {
  char name[64];
  CHECK(mkdir("meta", 0755) == 0);
  for (int i = 0; i < 100; i++) {
    snprintf(name, sizeof name, "meta/f%03d", i);
    int fd = create(name);
    CHECK(write(fd, buf, 100) == 100);
    CHECK(close(fd) == 0);
  }
  struct stat st;
  for (int pass = 0; pass < 60; pass++)
    for (int i = 0; i < 100; i++) {
      snprintf(name, sizeof name, "meta/f%03d", i);
      CHECK(stat(name, &st) == 0 && st.st_size == 100);
      int fd = open(name, O_RDONLY);
      CHECK(fd >= 0);
      CHECK(close(fd) == 0);
    }
}

/* redundant-reads: a 16 MiB file (4 x 4 MiB writes) read whole 6 times
 * (96 MiB read: 6x its size, 80 MiB more than once). */
static void reread(void) {
  int fd = create("reread.dat");
  for (int i = 0; i < 4; i++) CHECK(write(fd, buf, 4 * MiB) == 4 * MiB);
  CHECK(close(fd) == 0);
  for (int pass = 0; pass < 6; pass++) {
    fd = open("reread.dat", O_RDONLY);
    CHECK(fd >= 0);
    for (int i = 0; i < 4; i++) CHECK(read(fd, buf, 4 * MiB) == 4 * MiB);
    CHECK(close(fd) == 0);
  }
}

/* fsync-storm: 120 x (64 KiB write, fsync): 120 syncs, one per write. */
static void fsync_(void) {
  int fd = create("fsync.dat");
  for (int i = 0; i < 120; i++) {
    CHECK(write(fd, buf, 64 * KiB) == 64 * KiB);
    CHECK(fsync(fd) == 0);
  }
  CHECK(close(fd) == 0);
}

/* rw-switches: read-modify-write of 600 4 KiB records in place after one
 * 2400 KiB write: 1200 direction changes, but only 600 small ops per direction
 * (small-io counts each direction against its 1000-op floor). */
static void rmw(void) {
  int fd = create("rmw.dat");
  CHECK(write(fd, buf, 600 * 4 * KiB) == 600 * 4 * KiB);
  for (int i = 0; i < 600; i++) {
    CHECK(pread(fd, buf, 4 * KiB, (off_t)i * 4 * KiB) == 4 * KiB);
    buf[0]++;
    CHECK(pwrite(fd, buf, 4 * KiB, (off_t)i * 4 * KiB) == 4 * KiB);
  }
  CHECK(close(fd) == 0);
}

/* many-seeks: 600 records of 64 KiB, each positioned with lseek(SEEK_SET) and
 * its position checked with lseek(SEEK_CUR): 1200 seeks for 600 writes. */
static void seeks(void) {
  int fd = create("seeks.dat");
  for (int i = 0; i < 600; i++) {
    CHECK(lseek(fd, (off_t)i * 64 * KiB, SEEK_SET) == (off_t)i * 64 * KiB);
    CHECK(write(fd, buf, 64 * KiB) == 64 * KiB);
    CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)(i + 1) * 64 * KiB);
  }
  CHECK(close(fd) == 0);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*fn)(void);
  } modes[] = {{"small", small},  {"random", random_}, {"misaligned", misaligned},
               {"stdio", stdio_}, {"meta", meta},      {"reread", reread},
               {"fsync", fsync_}, {"rmw", rmw},        {"seeks", seeks}};
  memset(buf, 'x', sizeof buf);
  for (size_t i = 0; argc == 2 && i < sizeof modes / sizeof modes[0]; i++)
    if (!strcmp(argv[1], modes[i].name)) {
      modes[i].fn();
      return 0;
    }
  fprintf(stderr, "usage: advice_posix small|random|misaligned|stdio|meta|reread|fsync|"
                  "rmw|seeks\n");
  return 2;
}
