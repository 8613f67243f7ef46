/* Per-call micro-benchmark: `micro OP N DIR` prints "BARE TOOL", the ns per
 * call of OP made straight into libc (pointers taken from libc itself, so a
 * preloaded library never sees them) and made as the application makes it
 * (through the preload, when there is one).  The two alternate in batches in
 * one process and the fastest batch of each is printed: on a shared, noisy
 * machine the other tenants only ever add time, and comparing within one
 * process removes what differs between processes (page placement, the other
 * core's load at the time).  Without a preload both columns are libc.  Two
 * more columns follow: minor page faults per call, bare and preloaded.
 *
 * `micro OP N DIR whole` (stat_new, open_close_new): one loop of N calls on
 * N names this process has not seen, timed as a whole as the application
 * sees it (every periodic cost inside: arena and live-file backing, table
 * growth, every page crossed); the names are made before, by libc directly,
 * and removed after, outside the timing.  It prints "NS FAULTS": ns per call
 * and minor page faults per call (getrusage) over the loop.  Bare is the
 * same run without a preload. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct calls {
  ssize_t (*pwrite)(int, const void *, size_t, off_t);
  ssize_t (*pread)(int, void *, size_t, off_t);
  ssize_t (*write)(int, const void *, size_t);
  ssize_t (*read)(int, void *, size_t);
  off_t (*lseek)(int, off_t, int);
  size_t (*fwrite)(const void *, size_t, size_t, FILE *);
  size_t (*fread)(void *, size_t, size_t, FILE *);
  int (*fprintf)(FILE *, const char *, ...);
  void (*rewind)(FILE *);
  int (*open)(const char *, int, ...);
  int (*close)(int);
  int (*stat)(const char *, struct stat *);
} calls;

/* Minor page faults so far: a new file's cost on this VM is mostly pages
 * (3-4 us each), a figure load does not move. */
static long faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct bench {
  const char *op, *path;
  char **names; /* stat_new, open_close_new: a name no batch used before */
  long next;
  int fd, rfd; /* rfd: the 1 MiB file, for seek_read */
  FILE *in, *out;
  char buf[64];
} bench;

/* pwrite_8threads: 8 threads share one file (one record, so one lock). */
typedef struct thread_arg {
  const calls *c;
  int fd, t;
  long n;
} thread_arg;
static void *pwrite_thread(void *p) {
  thread_arg *a = p;
  char buf[8] = {0};
  for (long i = 0; i < a->n; i++) a->c->pwrite(a->fd, buf, 8, (a->t * 8 + (i & 7)) * 8);
  return NULL;
}

/* n calls of b->op through c; returns seconds, or -1 for an unknown op.  Not
 * inlined: callgrind counts only inside it (--toggle-collect=batch). */
double batch(bench *b, const calls *c, long n);
__attribute__((noinline)) double batch(bench *b, const calls *c, long n) {
  const char *op = b->op;
  int fd = b->fd;
  char *buf = b->buf;
  double t0 = now();
  if (!strcmp(op, "pwrite")) {
    for (long i = 0; i < n; i++) c->pwrite(fd, buf, 8, (i & 7) * 8);
  } else if (!strcmp(op, "pread")) {
    for (long i = 0; i < n; i++) c->pread(fd, buf, 8, (i & 7) * 8);
  } else if (!strcmp(op, "fwrite")) {
    for (long i = 0; i < n; i++) {
      c->fwrite(buf, 1, 8, b->out);
      if ((i & 65535) == 65535) c->rewind(b->out);
    }
  } else if (!strcmp(op, "fread")) {
    for (long i = 0; i < n; i++)
      if (c->fread(buf, 1, 8, b->in) != 8) c->rewind(b->in);
  } else if (!strcmp(op, "fprintf")) {
    for (long i = 0; i < n; i++) {
      c->fprintf(b->out, "%d", 7);
      if ((i & 65535) == 65535) c->rewind(b->out);
    }
  } else if (!strncmp(op, "seek_write", 10)) { /* IOR's pattern: lseek, then write */
    static char blk[64 << 10];                 /* seek_write: 1 KiB; seek_write_64k */
    size_t t = strcmp(op, "seek_write_64k") ? 1024 : sizeof blk;
    for (long i = 0; i < n; i++) {
      c->lseek(fd, (off_t)(i & 1023) * (off_t)t, SEEK_SET);
      if (c->write(fd, blk, t) != (ssize_t)t) exit(4);
    }
  } else if (!strcmp(op, "seek_read")) { /* IOR's read phase: lseek, then read 1 KiB */
    static char blk[1024];
    for (long i = 0; i < n; i++) {
      c->lseek(b->rfd, (off_t)(i & 1023) * (off_t)sizeof blk, SEEK_SET);
      if (c->read(b->rfd, blk, sizeof blk) != (ssize_t)sizeof blk) exit(4);
    }
  } else if (!strcmp(op, "pwrite_8threads")) {
    pthread_t th[8];
    thread_arg args[8];
    for (int t = 0; t < 8; t++) {
      args[t] = (thread_arg){c, fd, t, n / 8};
      pthread_create(&th[t], NULL, pwrite_thread, &args[t]);
    }
    for (int t = 0; t < 8; t++) pthread_join(th[t], NULL);
  } else if (!strcmp(op, "open_close")) {
    for (long i = 0; i < n; i++) c->close(c->open(b->path, O_RDONLY));
  } else if (!strcmp(op, "stat_new")) { /* first stat of a name: record creation */
    struct stat st;
    for (long i = 0; i < n; i++) c->stat(b->names[b->next++], &st);
  } else if (!strcmp(op, "open_close_new")) {
    for (long i = 0; i < n; i++) c->close(c->open(b->names[b->next++], O_RDONLY));
  } else if (!strcmp(op, "stat")) {
    struct stat st;
    for (long i = 0; i < n; i++) c->stat(b->path, &st);
  } else {
    return -1;
  }
  return now() - t0;
}

#define TAKE(c, from, name) (c).name = (__typeof__((c).name))dlsym(from, #name)

static int resolve(calls *c, void *from) {
  TAKE(*c, from, pwrite), TAKE(*c, from, pread), TAKE(*c, from, write);
  TAKE(*c, from, read), TAKE(*c, from, lseek), TAKE(*c, from, fwrite), TAKE(*c, from, fread);
  TAKE(*c, from, fprintf), TAKE(*c, from, rewind), TAKE(*c, from, open);
  TAKE(*c, from, close), TAKE(*c, from, stat);
  return c->pwrite && c->pread && c->write && c->read && c->lseek && c->fwrite && c->fread &&
                 c->fprintf && c->rewind && c->open && c->close && c->stat
             ? 0
             : -1;
}

/* MICRO_IDLE_THREAD=1: a second thread that does no I/O, as under MPICH
 * (each rank has one, which never calls I/O). */
static void *idle_main(void *p) {
  (void)p;
  for (;;) pause();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: micro OP N DIR [whole]\n");
    return 2;
  }
  const char *idle = getenv("MICRO_IDLE_THREAD");
  pthread_t idle_th;
  if (idle && *idle == '1' && pthread_create(&idle_th, NULL, idle_main, NULL) != 0) return 3;
  enum { BATCHES = 20 };
  bench b = {.op = argv[1]};
  long n = atol(argv[2]) / (2 * BATCHES);
  if (n < 1) n = 1;
  calls bare, tool;
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (!libc || resolve(&bare, libc) || resolve(&tool, RTLD_DEFAULT)) {
    fprintf(stderr, "micro: cannot find the libc calls\n");
    return 3;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/micro.dat", argv[3]);
  b.path = path;
  b.fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (b.fd < 0 || pwrite(b.fd, b.buf, 64, 0) != 64) return 3;
  char rpath[4096]; /* 1 MiB to read through a stream */
  snprintf(rpath, sizeof rpath, "%s/micro_read.dat", argv[3]);
  FILE *w = fopen(rpath, "w");
  static char mib[1 << 20];
  if (!w || fwrite(mib, 1, sizeof mib, w) != sizeof mib || fclose(w)) return 3;
  b.in = fopen(rpath, "r");
  b.rfd = open(rpath, O_RDONLY);
  char wpath[4096];
  snprintf(wpath, sizeof wpath, "%s/micro_write.dat", argv[3]);
  b.out = fopen(wpath, "w");
  if (!b.in || !b.out || b.rfd < 0) return 3;
  int whole = argc > 4 && !strcmp(argv[4], "whole");
  if (whole) n = atol(argv[2]) / (2 * BATCHES); /* the loop makes every call: total below */
  if (!strcmp(b.op, "stat_new") || !strcmp(b.op, "open_close_new")) {
    long total = n * 2 * BATCHES; /* existing files, each touched once */
    b.names = malloc(total * sizeof *b.names);
    for (long i = 0; b.names && i < total; i++) {
      b.names[i] = malloc(64 + strlen(argv[3]));
      sprintf(b.names[i], "%s/new.%ld", argv[3], i);
      int fd = bare.open(b.names[i], O_CREAT | O_WRONLY, 0644); /* unseen by a preload */
      if (fd < 0) return 3;
      bare.close(fd);
    }
  }
  double best[2] = {1e30, 1e30};
  long flt[2] = {0, 0};
  if (whole) {
    long total = n * 2 * BATCHES;
    long f0 = faults();
    double s = batch(&b, &tool, total);
    long f1 = faults();
    if (s < 0) return 2;
    printf("%.2f %.4f\n", s * 1e9 / total, (double)(f1 - f0) / total);
  }
  for (int i = 0; !whole && i < BATCHES; i++) {
    for (int k = 0; k < 2; k++) { /* alternate which goes first */
      int which = (i + k) & 1;
      long f0 = faults();
      double s = batch(&b, which ? &tool : &bare, n);
      flt[which] += faults() - f0;
      if (s < 0) return 2;
      if (s < best[which]) best[which] = s;
    }
  }
  /* Then the page faults per call of each, over all batches. */
  if (!whole)
    printf("%.2f %.2f %.4f %.4f\n", best[0] * 1e9 / n, best[1] * 1e9 / n,
           (double)flt[0] / (n * BATCHES), (double)flt[1] / (n * BATCHES));
  for (long i = 0; b.names && i < n * 2 * BATCHES; i++) {
    unlink(b.names[i]); /* after the batches: costs nothing measured */
    free(b.names[i]);
  }
  free(b.names);
  fclose(b.in);
  fclose(b.out);
  close(b.fd);
  return 0;
}
