/* POSIX workloads with exactly known I/O: `posix_workload MODE DIR`.
 * Each mode's expected counters are asserted in tests/integration/test_posix.py. */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[1 << 20] __attribute__((aligned(4096)));
static const char *dir;

static char *path(const char *name) {
  static char p[8][4096];
  static int i;
  char *s = p[i++ & 7];
  snprintf(s, 4096, "%s/%s", dir, name);
  return s;
}

#include "check.h"

/* 100 x 4096-byte writes at consecutive offsets, then 100 reads back. */
static void consec(void) {
  int fd = open(path("consec.dat"), O_CREAT | O_TRUNC | O_RDWR, 0644);
  CHECK(fd >= 0);
  for (int i = 0; i < 100; i++) CHECK(write(fd, buf, 4096) == 4096);
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  for (int i = 0; i < 100; i++) CHECK(read(fd, buf, 4096) == 4096);
  CHECK(close(fd) == 0);
}

/* 10 pwrites of 1000 bytes every 3000 bytes from an odd address; then 5
 * preads walking backwards. */
static void strided(void) {
  int fd = open(path("strided.dat"), O_CREAT | O_TRUNC | O_RDWR, 0600);
  CHECK(fd >= 0);
  for (int i = 0; i < 10; i++) CHECK(pwrite(fd, buf + 1, 1000, i * 3000) == 1000);
  for (int i = 4; i >= 0; i--) CHECK(pread(fd, buf, 100, i * 4096) == 100);
  CHECK(close(fd) == 0);
}

/* One write per size-bin boundary, at consecutive offsets. */
static const long bin_sizes[] = {100,   101,    1024,   1025,    10240,
                                 10241, 102400, 102401, 1048576, 1048577};
static void bins(void) {
  int fd = open(path("bins.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  for (size_t i = 0; i < sizeof bin_sizes / sizeof *bin_sizes; i++) {
    long n = bin_sizes[i], done = 0;
    char *big = n > (long)sizeof buf ? calloc(1, (size_t)n) : buf;
    CHECK(big);
    done = write(fd, big, (size_t)n);
    CHECK(done == n);
    if (big != buf) free(big);
  }
  CHECK(close(fd) == 0);
}

/* Access sizes 10x512, 7x256, 5x128, 3x64, 1x32 (consecutive). */
static void topk(void) {
  int fd = open(path("topk.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  const int sizes[] = {512, 256, 128, 64, 32}, counts[] = {10, 7, 5, 3, 1};
  for (int k = 0; k < 5; k++)
    for (int i = 0; i < counts[k]; i++) CHECK(write(fd, buf, (size_t)sizes[k]) == sizes[k]);
  CHECK(close(fd) == 0);
}

/* Metadata: stats, seeks, syncs, dup family, vectors, truncate, mmap,
 * rename and unlink. */
static void meta(void) {
  struct stat st;
  char *a = path("meta.dat"), *b = path("meta2.dat");
  int fd = open(a, O_CREAT | O_TRUNC | O_RDWR, 0640);
  CHECK(fd >= 0);
  CHECK(write(fd, buf, 8192) == 8192);
  CHECK(fstat(fd, &st) == 0);
  CHECK(stat(a, &st) == 0);
  CHECK(lstat(a, &st) == 0);
  CHECK(fstatat(AT_FDCWD, a, &st, 0) == 0);
  struct statx sx; /* by path, and by descriptor (empty path) */
  CHECK(statx(AT_FDCWD, a, 0, STATX_SIZE, &sx) == 0 && sx.stx_size == 8192);
  CHECK(statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx) == 0);
  CHECK(fstatat(fd, "", &st, AT_EMPTY_PATH) == 0);
  CHECK(lseek(fd, 100, SEEK_SET) == 100);
  CHECK(lseek(fd, 0, SEEK_CUR) == 100);
  CHECK(fsync(fd) == 0);
  CHECK(fdatasync(fd) == 0);
  int d1 = dup(fd);
  int d2 = dup2(fd, 100);
  int d3 = fcntl(fd, F_DUPFD, 200);
  CHECK(d1 >= 0 && d2 == 100 && d3 >= 200);
  /* dup'd descriptors share the offset: this write lands at 100 */
  CHECK(write(d1, buf, 100) == 100);
  CHECK(lseek(fd, 0, SEEK_CUR) == 200);
  struct iovec iov[2] = {{buf, 300}, {buf, 200}};
  CHECK(writev(d2, iov, 2) == 500); /* at 200 */
  CHECK(preadv(d3, iov, 2, 0) == 500);
  CHECK(pwritev(fd, iov, 2, 8192) == 500);
  CHECK(ftruncate(fd, 4096) == 0);
  void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  CHECK(m != MAP_FAILED);
  munmap(m, 4096);
  close(d1);
  close(d2);
  close(d3);
  CHECK(close(fd) == 0);
  CHECK(rename(a, b) == 0);
  CHECK(unlink(b) == 0);
}

/* O_APPEND: a 1000-byte file, reopened for append, then 3 x 10-byte writes. */
static void append(void) {
  char *p = path("append.dat");
  int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 1000) == 1000 && close(fd) == 0);
  fd = open(p, O_WRONLY | O_APPEND);
  CHECK(fd >= 0);
  for (int i = 0; i < 3; i++) CHECK(write(fd, buf, 10) == 10);
  CHECK(close(fd) == 0);
}

/* Failing calls: print every return value and errno, so the output with and
 * without the tool can be compared byte for byte. */
static void errors(void) {
  int r;
  errno = 0;
  r = open(path("no/such/file"), O_RDONLY);
  printf("open %d %d\n", r, errno);
  errno = 0;
  r = (int)read(-1, buf, 10);
  printf("read %d %d\n", r, errno);
  int fd = open(path("ro.dat"), O_CREAT | O_RDONLY, 0600);
  errno = 0;
  r = (int)write(fd, buf, 10);
  printf("write %d %d\n", r, errno);
  errno = 0;
  r = (int)lseek(fd, -5, SEEK_SET);
  printf("lseek %d %d\n", r, errno);
  errno = 0;
  r = (int)pread(fd, buf, 10, -1);
  printf("pread %d %d\n", r, errno);
  struct stat st;
  errno = 0;
  r = stat(path("missing"), &st);
  printf("stat %d %d\n", r, errno);
  errno = 0;
  r = close(fd);
  printf("close %d %d\n", r, errno);
  errno = 0;
  r = close(fd);
  printf("close-again %d %d\n", r, errno);
  errno = 0;
  r = rename(path("missing"), path("x"));
  printf("rename %d %d\n", r, errno);
  errno = 0;
  FILE *f = fopen(path("no/such"), "r");
  printf("fopen %p %d\n", (void *)f, errno);
  errno = 0;
  r = unlink(path("missing"));
  printf("unlink %d %d\n", r, errno);
  errno = 0;
  r = fsync(12345);
  printf("fsync %d %d\n", r, errno);
  errno = 0;
  r = dup(12345);
  printf("dup %d %d\n", r, errno);
}

/* 8 threads: each 1000 pwrites of 512 bytes into its own slice of one file. */
static int shared_fd;
static void *thread_main(void *arg) {
  long t = (long)arg;
  for (int i = 0; i < 1000; i++) CHECK(pwrite(shared_fd, buf, 512, (t * 1000 + i) * 512) == 512);
  char name[4096]; /* path() is not thread-safe: build the name here */
  snprintf(name, sizeof name, "%s/thread%ld.dat", dir, t);
  int fd = open(name, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  for (int i = 0; i < 100; i++) CHECK(write(fd, buf, 64) == 64);
  close(fd);
  return NULL;
}
static void threads(void) {
  shared_fd = open(path("threads.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(shared_fd >= 0);
  pthread_t th[8];
  for (long i = 0; i < 8; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  close(shared_fd);
}

/* IOR's POSIX pattern under threads: 4 threads, each with its own open of
 * seekshared.dat (one record, a description each): 250 x (lseek to its own
 * slice, write 64), then 250 x (lseek, read 64).  And a file of its own,
 * seekthread<t>.dat, through a descriptor and its dup, which share the
 * offset: 100 x (lseek the dup to 64 x (99 - i), write 64 through the
 * first), so the writes walk backwards; then 100 x (lseek the first to
 * 64 x i, read 64 through the dup), forwards; a failed lseek on each. */
static void *seek_thread_main(void *arg) {
  long t = (long)arg;
  char b[64] = {0}, name[4096]; /* path() is not thread-safe */
  snprintf(name, sizeof name, "%s/seekshared.dat", dir);
  int fd = open(name, O_RDWR);
  CHECK(fd >= 0);
  for (int i = 0; i < 250; i++) {
    off_t at = (t * 250 + i) * 64;
    CHECK(lseek(fd, at, SEEK_SET) == at && write(fd, b, 64) == 64);
  }
  for (int i = 0; i < 250; i++) {
    off_t at = (t * 250 + i) * 64;
    CHECK(lseek(fd, at, SEEK_SET) == at && read(fd, b, 64) == 64);
  }
  CHECK(close(fd) == 0);
  snprintf(name, sizeof name, "%s/seekthread%ld.dat", dir, t);
  fd = open(name, O_CREAT | O_TRUNC | O_RDWR, 0644);
  int d = dup(fd);
  CHECK(fd >= 0 && d >= 0);
  for (int i = 0; i < 100; i++) {
    off_t at = (99 - i) * 64;
    CHECK(lseek(d, at, SEEK_SET) == at && write(fd, b, 64) == 64);
  }
  CHECK(lseek(d, -1, SEEK_SET) == -1); /* failed: not counted */
  for (int i = 0; i < 100; i++) {
    off_t at = i * 64;
    CHECK(lseek64(fd, at, SEEK_SET) == at && read(d, b, 64) == 64);
  }
  CHECK(close(d) == 0 && close(fd) == 0);
  return NULL;
}
static void seek_threads(void) {
  int fd = open(path("seekshared.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0 && close(fd) == 0);
  pthread_t th[4];
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, seek_thread_main, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
}

/* A second thread that does no I/O at first (as MPICH's), then starts
 * while the first is in the middle of its own: the tool's unlocked mode
 * (one thread in the tool) ends under the first.  The main thread: 2000 x
 * (lseek, write 64) on its descriptor of late.dat, slice [0, 128000); at
 * its 1000th, the waiting thread goes: its own descriptor, 2000 x (lseek,
 * write 64) at [128000, 256000), and 1000 pwrites of 64 through the main
 * thread's descriptor at [256000, 320000). */
static int late_fd;
static atomic_int late_go;
static void *late_main(void *arg) {
  (void)arg;
  while (!atomic_load(&late_go)) sched_yield();
  char b[64] = {0}, name[4096]; /* path() is not thread-safe */
  snprintf(name, sizeof name, "%s/late.dat", dir);
  int fd = open(name, O_WRONLY);
  CHECK(fd >= 0);
  for (int i = 0; i < 2000; i++) {
    off_t at = 128000 + i * 64;
    CHECK(lseek(fd, at, SEEK_SET) == at && write(fd, b, 64) == 64);
    if (i < 1000) CHECK(pwrite(late_fd, b, 64, 256000 + i * 64) == 64);
  }
  CHECK(close(fd) == 0);
  return NULL;
}
static void late_thread(void) {
  pthread_t th;
  pthread_create(&th, NULL, late_main, NULL);
  late_fd = open(path("late.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(late_fd >= 0);
  char b[64] = {0};
  for (int i = 0; i < 2000; i++) {
    if (i == 1000) atomic_store(&late_go, 1);
    off_t at = i * 64;
    CHECK(lseek(late_fd, at, SEEK_SET) == at && write(late_fd, b, 64) == 64);
  }
  pthread_join(th, NULL);
  CHECK(close(late_fd) == 0);
}

/* The thread doing I/O changes: three threads in turn (each exits before
 * the next starts; the main thread does none until they are done), each
 * 500 x (lseek, write 64) at its own slice of turns.dat, opened and closed
 * by each, then the main thread 500 x (lseek, read 64) of it. */
static void *turn_main(void *arg) {
  long t = (long)arg;
  char b[64] = {0}, name[4096]; /* path() is not thread-safe */
  snprintf(name, sizeof name, "%s/turns.dat", dir);
  int fd = open(name, O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0);
  for (int i = 0; i < 500; i++) {
    off_t at = (t * 500 + i) * 64;
    CHECK(lseek(fd, at, SEEK_SET) == at && write(fd, b, 64) == 64);
  }
  CHECK(close(fd) == 0);
  return NULL;
}
static void turns(void) {
  for (long t = 0; t < 3; t++) {
    pthread_t th;
    pthread_create(&th, NULL, turn_main, (void *)t);
    pthread_join(th, NULL);
  }
  int fd = open(path("turns.dat"), O_RDONLY);
  CHECK(fd >= 0);
  char b[64];
  for (int i = 0; i < 500; i++) {
    off_t at = i * 64;
    CHECK(lseek(fd, at, SEEK_SET) == at && read(fd, b, 64) == 64);
  }
  CHECK(close(fd) == 0);
}

/* Two threads on one record at once, the second starting while the first
 * is busy: while one thread alone has entered the tool it skips the record
 * lock (runtime/core.h, the fast rule), and that must end under the first
 * without a count lost.  pwrite_pair(tag, go_at): this thread writes
 * LATE_N x 8 bytes to <tag>0.dat and LATE_N to <tag>.dat at [0, 8 LATE_N);
 * at its go_at-th it lets a waiting thread (made earlier, no I/O until then)
 * do LATE_N to <tag>1.dat and LATE_N to <tag>.dat at [8 LATE_N, 16 LATE_N)
 * through a descriptor of its own, the two at once. */
#define LATE_N 40000
typedef struct pair_arg {
  char shared[4096], own[4096];
  atomic_int go;
} pair_arg;
static void *pair_second(void *p) {
  pair_arg *a = p;
  while (!atomic_load(&a->go)) sched_yield();
  int s = open(a->shared, O_WRONLY), o = open(a->own, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(s >= 0 && o >= 0);
  for (int i = 0; i < LATE_N; i++)
    CHECK(pwrite(s, buf, 8, (off_t)(LATE_N + i) * 8) == 8 && pwrite(o, buf, 8, (off_t)i * 8) == 8);
  CHECK(close(s) == 0 && close(o) == 0);
  return NULL;
}
static void pwrite_pair(const char *tag, int go_at) {
  static pair_arg a; /* one pair per process */
  char name[64];
  snprintf(a.shared, sizeof a.shared, "%s/%s.dat", dir, tag);
  snprintf(a.own, sizeof a.own, "%s/%s1.dat", dir, tag);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, pair_second, &a) == 0);
  snprintf(name, sizeof name, "%s0.dat", tag);
  int s = open(a.shared, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  int o = open(path(name), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(s >= 0 && o >= 0);
  for (int i = 0; i < LATE_N; i++) {
    if (i == go_at) atomic_store(&a.go, 1);
    CHECK(pwrite(s, buf, 8, (off_t)i * 8) == 8 && pwrite(o, buf, 8, (off_t)i * 8) == 8);
  }
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(close(s) == 0 && close(o) == 0);
}
static void late_pwrites(void) { pwrite_pair("pair", LATE_N / 4); }

/* The same through stdio, where most calls make no system call, so the
 * two threads' record steps overlap far more often: this thread writes
 * FPAIR_N x 8 bytes to fpair0.dat and FPAIR_N to fpair.dat from 0, and at
 * its FPAIR_N/4-th the second thread (no I/O until then) writes FPAIR_N to
 * fpair1.dat and FPAIR_N to fpair.dat from 8 FPAIR_N (after one fseek),
 * each through streams of its own. */
#define FPAIR_N 400000
static void *fpair_second(void *p) {
  pair_arg *a = p;
  while (!atomic_load(&a->go)) sched_yield();
  FILE *s = fopen(a->shared, "r+"), *o = fopen(a->own, "w");
  CHECK(s && o && fseek(s, (long)FPAIR_N * 8, SEEK_SET) == 0);
  for (int i = 0; i < FPAIR_N; i++) CHECK(fwrite(buf, 8, 1, s) == 1 && fwrite(buf, 8, 1, o) == 1);
  CHECK(fclose(s) == 0 && fclose(o) == 0);
  return NULL;
}
static void late_fwrites(void) {
  static pair_arg a;
  snprintf(a.shared, sizeof a.shared, "%s/fpair.dat", dir);
  snprintf(a.own, sizeof a.own, "%s/fpair1.dat", dir);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, fpair_second, &a) == 0);
  FILE *s = fopen(a.shared, "w"), *o = fopen(path("fpair0.dat"), "w");
  CHECK(s && o);
  for (int i = 0; i < FPAIR_N; i++) {
    if (i == FPAIR_N / 4) atomic_store(&a.go, 1);
    CHECK(fwrite(buf, 8, 1, s) == 1 && fwrite(buf, 8, 1, o) == 1);
  }
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(fclose(s) == 0 && fclose(o) == 0);
}

/* fork from a thread that never did I/O, while the main thread (the fast
 * mode's owner) writes: forking is not entering, and the child, one thread,
 * owns its own fast mode, which a second child thread then ends.  Parent:
 * the main thread LATE_N x 8 bytes to pmain.dat at [0, 8 LATE_N); at its
 * LATE_N/4-th the other thread forks, waits for the child, then writes
 * LATE_N to pmain.dat at [8 LATE_N, 16 LATE_N) (the main thread may still
 * be writing).  Child: pwrite_pair("cpair", LATE_N / 4), then exit. */
static atomic_int fork_go;
static void *forker(void *p) {
  int fd = *(int *)p;
  while (!atomic_load(&fork_go)) sched_yield();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    pwrite_pair("cpair", LATE_N / 4);
    exit(0);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int i = 0; i < LATE_N; i++) CHECK(pwrite(fd, buf, 8, (off_t)(LATE_N + i) * 8) == 8);
  return NULL;
}
static void fork_thread(void) {
  int fd = open(path("pmain.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, forker, &fd) == 0);
  for (int i = 0; i < LATE_N; i++) {
    if (i == LATE_N / 4) atomic_store(&fork_go, 1);
    CHECK(pwrite(fd, buf, 8, (off_t)i * 8) == 8);
  }
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(close(fd) == 0);
}

/* A thread's first I/O from a signal handler: the main thread writes
 * LATE_N x 8 bytes to sig.dat at [0, 8 LATE_N) and, every 100th write,
 * sends SIGUSR1 to a thread that never did I/O (it waits in sigsuspend),
 * whose handler writes 8 bytes at 8 LATE_N + 8 k (k: the signal's number,
 * 0..399), so that thread enters the tool inside a handler, while the
 * owner is busy. */
static int sig_fd;
static atomic_int sig_count;
static void on_usr1(int s) {
  (void)s;
  int e = errno;
  int k = atomic_fetch_add(&sig_count, 1);
  CHECK(pwrite(sig_fd, buf, 8, (off_t)(LATE_N + k) * 8) == 8);
  errno = e;
}
static void *sig_waiter(void *p) {
  (void)p;
  sigset_t none; /* SIGUSR1 is blocked here but inside sigsuspend: no wake-up lost */
  sigemptyset(&none);
  while (atomic_load(&sig_count) < LATE_N / 100) sigsuspend(&none);
  return NULL;
}
static void signal_io(void) {
  struct sigaction sa = {.sa_handler = on_usr1};
  sigemptyset(&sa.sa_mask);
  CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
  sig_fd = open(path("sig.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(sig_fd >= 0);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* the waiter inherits it */
  pthread_t th;
  CHECK(pthread_create(&th, NULL, sig_waiter, NULL) == 0);
  for (int i = 0; i < LATE_N; i++) {
    CHECK(pwrite(sig_fd, buf, 8, (off_t)i * 8) == 8);
    if (i % 100 == 99) {
      int want = i / 100 + 1;
      CHECK(pthread_kill(th, SIGUSR1) == 0);
      while (atomic_load(&sig_count) < want) sched_yield(); /* one at a time */
    }
  }
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(close(sig_fd) == 0);
}

/* fork: parent writes parent.dat (2 writes), child writes child.dat (3). */
static void forking(void) {
  int fd = open(path("parent.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(write(fd, buf, 10) == 10);
  pid_t pid = fork();
  if (pid == 0) {
    int c = open(path("child.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    for (int i = 0; i < 3; i++) CHECK(write(c, buf, 20) == 20);
    close(c);
    exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  CHECK(write(fd, buf, 10) == 10);
  close(fd);
}

/* A forked worker that does no I/O and leaves through _exit: no log of its own
 * (it inherited the parent's records, zeroed). */
static void fork_idle(void) {
  int fd = open(path("parent.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 10) == 10);
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status;
  waitpid(pid, &status, 0);
  close(fd);
}

/* vfork whose exec fails (as Python's subprocess does for a missing program):
 * the child's _exit must leave the parent's log alone.  The child shares the
 * parent's memory: its close and dup2 of kept.dat (its own copies of the
 * descriptors) and its write to child.dat are not the parent's, which goes
 * on writing kept.dat (3 bytes before, 4 after). */
static void vforking(void) {
  int fd = open(path("before.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 5) == 5 && close(fd) == 0);
  int keep = open(path("kept.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(keep >= 0 && write(keep, buf, 3) == 3);
  char child_path[4096];
  snprintf(child_path, sizeof child_path, "%s", path("child.dat"));
  pid_t pid = vfork();
  if (pid == 0) {
    int c = open(child_path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (c < 0 || write(c, buf, 7) != 7 || dup2(c, keep) != keep || close(c) != 0) _exit(3);
    execl("/nonexistent/program", "program", (char *)NULL);
    _exit(127);
  }
  int status;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 127);
  CHECK(write(keep, buf, 4) == 4 && close(keep) == 0);
  fd = open(path("after.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 6) == 6 && close(fd) == 0);
}

/* Many files, one 10-byte write each (for the memory bound). */
static void many(void) {
  for (int i = 0; i < 500; i++) {
    char name[64];
    snprintf(name, sizeof name, "many%03d.dat", i);
    int fd = open(path(name), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CHECK(fd >= 0 && write(fd, buf, 10) == 10 && close(fd) == 0);
  }
}

/* 300 names first only created, closed and stat'ed twice (metadata-only
 * entries), then each opened again and written 10 bytes (made records). */
static void names(void) {
  struct stat st;
  char name[64];
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "name%03d.dat", i);
    int fd = open(path(name), O_CREAT | O_WRONLY, 0640);
    CHECK(fd >= 0 && close(fd) == 0 && stat(path(name), &st) == 0 && stat(path(name), &st) == 0);
  }
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "name%03d.dat", i);
    int fd = open(path(name), O_WRONLY);
    CHECK(fd >= 0 && write(fd, buf, 10) == 10 && close(fd) == 0);
  }
}

/* Excluded and special paths are never recorded. */
static void excluded(void) {
  int fd = open("/dev/null", O_WRONLY);
  CHECK(fd >= 0 && write(fd, buf, 10) == 10 && close(fd) == 0);
  fd = open("/proc/self/status", O_RDONLY);
  CHECK(fd >= 0 && read(fd, buf, 100) > 0 && close(fd) == 0);
  fd = open(path("skip_me.dat"), O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 10) == 10 && close(fd) == 0);
  fd = open(path("keep.dat"), O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 10) == 10 && close(fd) == 0);
}

/* One relative name in two working directories, stat'ed again and again
 * (the tool remembers the last name it resolved): d1/same.dat is opened,
 * written 1 byte and stat'ed twice; d2/same.dat written 2 bytes, stat'ed 3 times. */
static void cwd_paths(void) {
  struct stat st;
  CHECK(mkdir(path("d1"), 0755) == 0 && mkdir(path("d2"), 0755) == 0);
  CHECK(chdir(path("d1")) == 0);
  int fd = open("same.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 1) == 1 && close(fd) == 0);
  CHECK(stat("same.dat", &st) == 0);
  CHECK(chdir(path("d2")) == 0);
  fd = open("same.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 2) == 2 && close(fd) == 0);
  for (int i = 0; i < 3; i++) CHECK(stat("same.dat", &st) == 0);
  CHECK(chdir(dir) == 0);
  CHECK(stat("d1/same.dat", &st) == 0);
}

/* POSIX AIO: 4 aio_write of 4096 B at 0..12288, waited and collected in
 * order; lio_listio(LIO_WAIT) of reads of 4096 B at 0 and 4096, a 100 B
 * write at 16384 and a no-op, collected; one aio_read of 10 B waited for but
 * never collected (not counted). */
static void aio(void) {
  int fd = open(path("aio.dat"), O_CREAT | O_TRUNC | O_RDWR, 0644);
  CHECK(fd >= 0);
  struct aiocb w[4], r0, r1, w2, nop, lost;
  for (int i = 0; i < 4; i++) {
    w[i] = (struct aiocb){
        .aio_fildes = fd, .aio_buf = buf + i * 4096, .aio_nbytes = 4096, .aio_offset = i * 4096};
    CHECK(aio_write(&w[i]) == 0);
  }
  for (int i = 0; i < 4; i++) {
    const struct aiocb *l[1] = {&w[i]};
    while (aio_error(&w[i]) == EINPROGRESS) aio_suspend(l, 1, NULL);
    CHECK(aio_return(&w[i]) == 4096);
  }
  r0 = (struct aiocb){
      .aio_fildes = fd, .aio_buf = buf, .aio_nbytes = 4096, .aio_lio_opcode = LIO_READ};
  r1 = r0;
  r1.aio_offset = 4096;
  w2 = (struct aiocb){.aio_fildes = fd,
                      .aio_buf = buf,
                      .aio_nbytes = 100,
                      .aio_offset = 16384,
                      .aio_lio_opcode = LIO_WRITE};
  nop = (struct aiocb){.aio_fildes = fd, .aio_lio_opcode = LIO_NOP};
  struct aiocb *list[4] = {&r0, &r1, &w2, &nop};
  CHECK(lio_listio(LIO_WAIT, list, 4, NULL) == 0);
  CHECK(aio_return(&r0) == 4096 && aio_return(&r1) == 4096 && aio_return(&w2) == 100);
  lost = (struct aiocb){.aio_fildes = fd, .aio_buf = buf, .aio_nbytes = 10};
  CHECK(aio_read(&lost) == 0);
  const struct aiocb *l[1] = {&lost};
  while (aio_error(&lost) == EINPROGRESS) aio_suspend(l, 1, NULL);
  CHECK(close(fd) == 0);
}

/* Ends through _exit: the log is still written. */
static void quick_exit_mode(void) {
  int fd = open(path("quick.dat"), O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0 && write(fd, buf, 7) == 7);
  _exit(0);
}

/* A dup outliving its descriptor: the number, reopened on another file,
 * gets a description of its own while the dup still writes through the
 * first (whose offset it keeps); then the same again once both are closed.
 * reuse_a.dat: 100 + 100 bytes at 0 and 100 (a dup shares the offset), then
 * reopened: 50 at 0.  reuse_b.dat: 30 + 30 at 0 and 30. */
static void fd_reuse(void) {
  int a = open(path("reuse_a.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(a >= 0 && write(a, buf, 100) == 100);
  int d = dup(a);
  CHECK(d >= 0 && close(a) == 0);
  int b = open(path("reuse_b.dat"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(b == a); /* the lowest free number: a's */
  CHECK(write(b, buf, 30) == 30 && write(d, buf, 100) == 100 && write(b, buf, 30) == 30);
  CHECK(close(d) == 0 && close(b) == 0);
  a = open(path("reuse_a.dat"), O_WRONLY);
  CHECK(a >= 0 && write(a, buf, 50) == 50 && close(a) == 0);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODE DIR\n", argv[0]);
    return 2;
  }
  dir = argv[2];
  const char *m = argv[1];
  if (!strcmp(m, "consec"))
    consec();
  else if (!strcmp(m, "strided"))
    strided();
  else if (!strcmp(m, "bins"))
    bins();
  else if (!strcmp(m, "topk"))
    topk();
  else if (!strcmp(m, "meta"))
    meta();
  else if (!strcmp(m, "append"))
    append();
  else if (!strcmp(m, "errors"))
    errors();
  else if (!strcmp(m, "threads"))
    threads();
  else if (!strcmp(m, "seek-threads"))
    seek_threads();
  else if (!strcmp(m, "late-thread"))
    late_thread();
  else if (!strcmp(m, "turns"))
    turns();
  else if (!strcmp(m, "late-pwrites"))
    late_pwrites();
  else if (!strcmp(m, "late-fwrites"))
    late_fwrites();
  else if (!strcmp(m, "fork-thread"))
    fork_thread();
  else if (!strcmp(m, "signal-io"))
    signal_io();
  else if (!strcmp(m, "fork"))
    forking();
  else if (!strcmp(m, "vfork"))
    vforking();
  else if (!strcmp(m, "fork-idle"))
    fork_idle();
  else if (!strcmp(m, "many"))
    many();
  else if (!strcmp(m, "names"))
    names();
  else if (!strcmp(m, "fd-reuse"))
    fd_reuse();
  else if (!strcmp(m, "aio"))
    aio();
  else if (!strcmp(m, "cwd"))
    cwd_paths();
  else if (!strcmp(m, "excluded"))
    excluded();
  else if (!strcmp(m, "exit"))
    quick_exit_mode();
  else if (!strcmp(m, "status"))
    return 7; /* no I/O at all */
  else if (!strcmp(m, "status-io")) {
    consec();
    return 7;
  } else
    return 2;
  return 0;
}
