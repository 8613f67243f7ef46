/* Known I/O, then an abnormal end (tests/integration/test_abnormal.py):
 *   kill_workload DIR N MODE [PROG ARGS...]
 * Always first: N write()s of 100 bytes to DIR/k.dat (one run of repeats),
 * N fwrite()s of 10 bytes to DIR/k.txt, N/2 pread()s of 50 bytes of k.dat.
 * MODE: exit (exit(0)), _exit (_exit(0)), ready (print "ready", then wait to
 * be killed), exec (execv PROG ARGS), execfail (execv a missing program,
 * then N more writes and exit(0)), loop (I/O until killed; with "handler"
 * the SIGTERM handler calls _exit(3)), handler (the same), opens (20 files
 * DIR/k.open<i> created, closed and stat'ed, no data, and 20 directories
 * DIR/k.stat<i> made (mkdir: not recorded) and stat'ed twice, names only
 * ever stat'ed; then as ready, without stdio), opens_exit (the same, then
 * exit(0)), rare / rare_exit (20 files DIR/k.rare<i> created and closed,
 * then each opened read-write and given one lseek, dup, fsync, fdatasync,
 * ftruncate and mmap, no data, closed, renamed to DIR/k.moved<i> and that
 * stat'ed: the counters a metadata-only entry does not carry; then as
 * opens / opens_exit),
 * exit_run / _exit_run (10 more writes to k.dat, a run of repeats still
 * pending at the end, then exit(0) / _exit(0)), sig_exit / sig_exit_run
 * (as _exit / _exit_run, but _exit(0) is called by a SIGUSR1 handler). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void on_term(int sig) {
  (void)sig;
  _exit(3);
}

static void on_usr1(int sig) {
  (void)sig;
  _exit(0);
}

/* _exit(0), from a signal handler when mode starts with "sig" */
static void end_exit(const char *mode) {
  if (!strncmp(mode, "sig", 3)) {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
  }
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  const char *dir = argv[1], *mode = argv[3];
  int n = atoi(argv[2]);
  char path[4096];
  snprintf(path, sizeof path, "%s/k.dat", dir);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  snprintf(path, sizeof path, "%s/k.txt", dir);
  FILE *f = fopen(path, "w");
  if (fd < 0 || !f) return 2;
  char buf[100];
  memset(buf, 'x', sizeof buf);
  for (int i = 0; i < n; i++)
    if (write(fd, buf, 100) != 100) return 2;
  for (int i = 0; i < n; i++) fwrite(buf, 1, 10, f);
  fflush(f);
  for (int i = 0; i < n / 2; i++)
    if (pread(fd, buf, 50, 100 * i) != 50) return 2;
  if (!strcmp(mode, "exit_run") || !strcmp(mode, "_exit_run") || !strcmp(mode, "sig_exit_run")) {
    for (int i = 0; i < 10; i++)
      if (write(fd, buf, 100) != 100) return 2;
    if (mode[0] != 'e') end_exit(mode);
    exit(0);
  }
  if (!strcmp(mode, "exit")) exit(0);
  if (!strcmp(mode, "_exit") || !strcmp(mode, "sig_exit")) end_exit(mode);
  if (!strcmp(mode, "rare") || !strcmp(mode, "rare_exit")) {
    char to[4096];
    for (int i = 0; i < 20; i++) {
      struct stat st;
      snprintf(path, sizeof path, "%s/k.rare%d", dir, i);
      snprintf(to, sizeof to, "%s/k.moved%d", dir, i);
      int g = open(path, O_WRONLY | O_CREAT, 0644);
      if (g < 0 || close(g)) return 2;
      g = open(path, O_RDWR);
      int h = g < 0 ? -1 : dup(g);
      if (h < 0 || close(h) || lseek(g, 0, SEEK_END) != 0 || fsync(g) || fdatasync(g) ||
          ftruncate(g, 4096))
        return 2;
      void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, g, 0);
      if (m == MAP_FAILED || munmap(m, 4096) || close(g) || rename(path, to) || stat(to, &st))
        return 2;
    }
    if (!strcmp(mode, "rare_exit")) exit(0);
    if (write(1, "ready\n", 6) != 6) return 2;
    for (;;) pause();
  }
  if (!strcmp(mode, "opens") || !strcmp(mode, "opens_exit")) {
    for (int i = 0; i < 20; i++) {
      struct stat st;
      snprintf(path, sizeof path, "%s/k.open%d", dir, i);
      int g = open(path, O_WRONLY | O_CREAT, 0644);
      if (g < 0 || close(g) || stat(path, &st)) return 2;
      snprintf(path, sizeof path, "%s/k.stat%d", dir, i);
      if (mkdir(path, 0755) || stat(path, &st) || stat(path, &st)) return 2;
    }
    if (!strcmp(mode, "opens_exit")) exit(0);
    /* as "ready", through a descriptor the tool does not follow: no record
     * that a kill right after the line could leave unfinished */
    if (write(1, "ready\n", 6) != 6) return 2;
    for (;;) pause();
  }
  if (!strcmp(mode, "ready")) {
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
  }
  if (!strcmp(mode, "exec") && argc > 4) {
    execv(argv[4], argv + 4);
    return 127;
  }
  if (!strcmp(mode, "execfail")) {
    char *args[] = {"/nonexistent/program", NULL};
    if (execv(args[0], args) == 0) return 2;
    for (int i = 0; i < n; i++)
      if (write(fd, buf, 100) != 100) return 2;
    exit(0);
  }
  if (!strcmp(mode, "loop") || !strcmp(mode, "handler")) {
    if (!strcmp(mode, "handler")) signal(SIGTERM, on_term);
    printf("ready\n");
    fflush(stdout);
    static char big[4096];
    for (long i = 0;; i++) {
      if (write(fd, big, sizeof big) != (ssize_t)sizeof big) return 2;
      fwrite(big, 1, 100, f);
      if (i % 64 == 63) lseek(fd, 0, SEEK_SET), fflush(f);
    }
  }
  return 2;
}
