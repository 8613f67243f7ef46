/* The page floor under a new file's record: `pagecost DIR [MiB]` prints the
 * ns per 4 KiB page first written in three mappings, each touched one page
 * at a time and, separately, populated 64 KiB at a time with
 * MADV_POPULATE_WRITE: anonymous private memory, a MAP_SHARED file in DIR
 * (the live file's case: beside the log), and a MAP_SHARED file in /dev/shm
 * (tmpfs).  A last row: the file's pages first written with zeros by pwrite,
 * 256 KiB at a time, then populated (runtime/live.c does not: it would need
 * the live file reopened by name or held open).  Each figure is the fastest
 * of 5 runs; minor faults per page beside it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

/* One run: map `bytes` (a file in dir, or anonymous when dir is NULL), touch
 * every page (populate 0) or populate in 64 KiB steps; ns and faults per page. */
static int run(const char *dir, size_t bytes, int populate, int prewrite, double *ns, double *flt) {
  static char zeros[256 << 10];
  int fd = -1;
  char path[4096];
  if (dir) {
    snprintf(path, sizeof path, "%s/pagecost.%d.tmp", dir, (int)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return -1;
    unlink(path);
  }
  char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 dir ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) return -1;
  long f0 = faults();
  double t0 = now();
  if (prewrite) {
    for (size_t at = 0; at < bytes; at += sizeof zeros)
      if (pwrite(fd, zeros, sizeof zeros, (off_t)at) != (ssize_t)sizeof zeros ||
          madvise(p + at, sizeof zeros, MADV_POPULATE_WRITE) != 0)
        return -1;
  } else if (populate) {
    for (size_t at = 0; at < bytes; at += 64 << 10)
      if (madvise(p + at, 64 << 10, MADV_POPULATE_WRITE) != 0) return -1;
  } else {
    for (size_t at = 0; at < bytes; at += 4096) p[at] = 1;
  }
  double t1 = now();
  long f1 = faults();
  size_t pages = bytes / 4096;
  *ns = (t1 - t0) * 1e9 / pages;
  *flt = (double)(f1 - f0) / pages;
  munmap(p, bytes);
  if (fd >= 0) close(fd);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pagecost DIR [MiB]\n");
    return 2;
  }
  size_t bytes = (size_t)(argc > 2 ? atol(argv[2]) : 16) << 20;
  const char *where[3] = {NULL, argv[1], "/dev/shm"};
  const char *name[3] = {"anonymous", "shared file in DIR", "shared file in /dev/shm"};
  printf("%-26s %14s %10s %16s %10s\n", "mapping", "touch ns/page", "faults", "populate ns/page",
         "faults");
  for (int w = 0; w < 3; w++) {
    double best[2] = {1e30, 1e30}, fl[2] = {0, 0};
    for (int rep = 0; rep < 5; rep++)
      for (int pop = 0; pop < 2; pop++) {
        double ns, f;
        if (run(where[w], bytes, pop, 0, &ns, &f) != 0) {
          perror(name[w]);
          return 3;
        }
        if (ns < best[pop]) best[pop] = ns, fl[pop] = f;
      }
    printf("%-26s %14.0f %10.2f %16.0f %10.2f\n", name[w], best[0], fl[0], best[1], fl[1]);
  }
  double best = 1e30, fl = 0;
  for (int rep = 0; rep < 5; rep++) {
    double ns, f;
    if (run(argv[1], bytes, 1, 1, &ns, &f) != 0) {
      perror("written, then populated");
      return 3;
    }
    if (ns < best) best = ns, fl = f;
  }
  printf("%-26s %14s %10s %16.0f %10.2f\n", "DIR, written then populated", "-", "-", best, fl);
  return 0;
}
