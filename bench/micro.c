/* Per-call micro-benchmark: `micro OP N DIR` prints ns per call of OP.
 * bench/run compares bare and preloaded runs of this same binary. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: micro OP N DIR\n");
    return 2;
  }
  const char *op = argv[1];
  long n = atol(argv[2]);
  char path[4096], buf[64] = {0};
  snprintf(path, sizeof path, "%s/micro.dat", argv[3]);
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, buf, 64, 0) != 64) return 3;
  char rpath[4096]; /* 1 MiB to read through a stream */
  snprintf(rpath, sizeof rpath, "%s/micro_read.dat", argv[3]);
  FILE *w = fopen(rpath, "w");
  static char mib[1 << 20];
  if (!w || fwrite(mib, 1, sizeof mib, w) != sizeof mib || fclose(w)) return 3;
  FILE *f = fopen(rpath, "r");
  char wpath[4096];
  snprintf(wpath, sizeof wpath, "%s/micro_write.dat", argv[3]);
  FILE *devnull = fopen(wpath, "w");
  struct stat st;
  double t0 = now();
  if (!strcmp(op, "pwrite")) {
    for (long i = 0; i < n; i++) pwrite(fd, buf, 8, (i & 7) * 8);
  } else if (!strcmp(op, "pread")) {
    for (long i = 0; i < n; i++) pread(fd, buf, 8, (i & 7) * 8);
  } else if (!strcmp(op, "fwrite")) {
    for (long i = 0; i < n; i++) {
      fwrite(buf, 1, 8, devnull);
      if ((i & 65535) == 65535) rewind(devnull);
    }
  } else if (!strcmp(op, "fread")) {
    for (long i = 0; i < n; i++) {
      if (fread(buf, 1, 8, f) != 8) rewind(f);
    }
  } else if (!strcmp(op, "fprintf")) {
    for (long i = 0; i < n; i++) {
      fprintf(devnull, "%d", 7);
      if ((i & 65535) == 65535) rewind(devnull);
    }
  } else if (!strcmp(op, "seek_write")) { /* IOR's pattern: lseek, then write 1 KiB */
    static char kib[1024];
    for (long i = 0; i < n; i++) {
      lseek(fd, (i & 1023) * 1024, SEEK_SET);
      if (write(fd, kib, sizeof kib) != (ssize_t)sizeof kib) return 4;
    }
  } else if (!strcmp(op, "open_close")) {
    for (long i = 0; i < n; i++) close(open(path, O_RDONLY));
  } else if (!strcmp(op, "stat")) {
    for (long i = 0; i < n; i++) stat(path, &st);
  } else {
    return 2;
  }
  double t1 = now();
  printf("%.2f\n", (t1 - t0) * 1e9 / n);
  fclose(f);
  fclose(devnull);
  close(fd);
  return 0;
}
