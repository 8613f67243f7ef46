/* Issue 15 workloads with exactly known I/O: `fidelity_workload MODE DIR`
 * (asserted in tests/integration/test_fidelity.py). */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"

static char buf[1 << 16];
static const char *dir;

static char *path(const char *name) {
  static char p[4][4096];
  static int i;
  char *s = p[i++ & 3];
  snprintf(s, 4096, "%s/%s", dir, name);
  return s;
}

/* 100 B, 0 B, 100 B consecutive; then pwrites leaving a 100-byte gap, a
 * rewind, an overlap, a 1000-byte gap and a 100-byte gap; reads the same. */
static void zero(void) {
  int fd = open(path("zero.dat"), O_CREAT | O_TRUNC | O_RDWR, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, buf, 100) == 100 && write(fd, buf, 0) == 0 && write(fd, buf, 100) == 100);
  static const int at[] = {300, 0, 50, 1150, 1350};
  for (int i = 0; i < 5; i++) CHECK(pwrite(fd, buf, 100, at[i]) == 100);
  CHECK(pread(fd, buf, 100, 0) == 100 && pread(fd, buf, 0, 100) == 0);
  CHECK(pread(fd, buf, 100, 300) == 100);
  CHECK(close(fd) == 0);
}

/* 4 x 100 B, close; reopen (no truncation), 100 B at offset 1, then at 200.
 * The reopen restarts the pattern: offset 1 follows "last byte" 0. */
static void reopen(void) {
  char *p = path("reopen.dat");
  int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  for (int i = 0; i < 4; i++) CHECK(write(fd, buf, 100) == 100);
  CHECK(close(fd) == 0);
  fd = open(p, O_WRONLY);
  CHECK(fd >= 0 && pwrite(fd, buf, 100, 1) == 100 && pwrite(fd, buf, 100, 200) == 100);
  CHECK(close(fd) == 0);
}

/* Two O_APPEND descriptors taking turns (100 B each, 6 writes), then a
 * 50 B pwrite on one (Linux appends it anyway), then a read through an
 * O_RDWR|O_APPEND descriptor (from offset 0, as the kernel reads). */
static void append2(void) {
  char *p = path("append2.dat");
  int a = open(p, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
  int b = open(p, O_WRONLY | O_APPEND);
  CHECK(a >= 0 && b >= 0);
  for (int i = 0; i < 6; i++) CHECK(write(i % 2 ? b : a, buf, 100) == 100);
  CHECK(pwrite(a, buf, 50, 0) == 50);
  int c = open(p, O_RDWR | O_APPEND);
  CHECK(c >= 0 && read(c, buf, 10) == 10);
  CHECK(close(a) == 0 && close(b) == 0 && close(c) == 0);
}

/* copy_file_range 10000 B (implicit offsets) then 3000 B from 1000 to 20000
 * (explicit); sendfile 4096 B from 5000 to the destination's offset; splice
 * 2048 B from the source (offset 0) into a pipe and out to dst at 30000. */
static void xfer(void) {
  int src = open(path("xsrc.dat"), O_CREAT | O_TRUNC | O_RDWR, 0644);
  CHECK(src >= 0 && write(src, buf, 16384) == 16384 && lseek(src, 0, SEEK_SET) == 0);
  int dst = open(path("xdst.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(dst >= 0);
  CHECK(copy_file_range(src, NULL, dst, NULL, 10000, 0) == 10000);
  off64_t si = 1000, di = 20000;
  CHECK(copy_file_range(src, &si, dst, &di, 3000, 0) == 3000);
  off_t so = 5000;
  CHECK(sendfile(dst, src, &so, 4096) == 4096); /* dst offset: 10000 */
  int pp[2];
  CHECK(pipe(pp) == 0);
  off64_t s0 = 0, d0 = 30000;
  CHECK(splice(src, &s0, pp[1], NULL, 2048, 0) == 2048);
  CHECK(splice(pp[0], NULL, dst, &d0, 2048, 0) == 2048);
  CHECK(close(src) == 0 && close(dst) == 0 && close(pp[0]) == 0 && close(pp[1]) == 0);
}

/* A read-only private mapping, then (with `shared`) a shared writable one
 * written through. */
static void mapped(int shared) {
  int fd = open(path("map.dat"), O_CREAT | O_TRUNC | O_RDWR, 0644);
  CHECK(fd >= 0 && ftruncate(fd, 8192) == 0);
  void *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(m != MAP_FAILED && munmap(m, 8192) == 0);
  if (shared) {
    char *w = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(w != MAP_FAILED);
    memset(w, 1, 8192);
    CHECK(munmap(w, 8192) == 0);
  }
  CHECK(close(fd) == 0);
}

/* An io_uring set up through the raw system call (what liburing does). */
static void uring(void) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  long fd = syscall(SYS_io_uring_setup, 4, &p);
  printf("io_uring_setup %s\n", fd >= 0 ? "ok" : "failed");
  if (fd >= 0) CHECK(close((int)fd) == 0);
  int f = open(path("uring.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(f >= 0 && write(f, buf, 10) == 10 && close(f) == 0);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  dir = argv[2];
  const char *m = argv[1];
  if (!strcmp(m, "zero"))
    zero();
  else if (!strcmp(m, "reopen"))
    reopen();
  else if (!strcmp(m, "append2"))
    append2();
  else if (!strcmp(m, "xfer"))
    xfer();
  else if (!strcmp(m, "mmap"))
    mapped(0);
  else if (!strcmp(m, "mmap-shared"))
    mapped(1);
  else if (!strcmp(m, "uring"))
    uring();
  else
    return 2;
  return 0;
}
