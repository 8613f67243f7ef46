/* Child processes with exactly known I/O (issue 38): a parent that has
 * recorded files forks children that each make many files; a fork child of a
 * fork child; vfork then exec; children ending by exit, _exit, or _exit in a
 * signal handler.  File k of a child `c` is DIR/c<tag>_<k>.dat: one open, one
 * write of 1 + k % 7 bytes, one close. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static const char *dir;

static void one_file(const char *tag, int k) {
  char p[4096];
  snprintf(p, sizeof p, "%s/c%s_%d.dat", dir, tag, k);
  int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  CHECK(fd >= 0);
  CHECK(write(fd, "abcdefg", 1 + k % 7) == 1 + k % 7);
  CHECK(close(fd) == 0);
}

static void files(const char *tag, int n) {
  for (int k = 0; k < n; k++) one_file(tag, k);
}

/* How a child ends: "exit", "_exit", or "handler" (_exit(0) from a SIGUSR1
 * handler installed with sigaction). */
static void handler_exit(int sig) {
  (void)sig;
  _exit(0);
}
static void end_as(const char *how) {
  if (!strcmp(how, "_exit")) _exit(0);
  if (!strcmp(how, "handler")) {
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = handler_exit;
    CHECK(sigaction(SIGUSR1, &a, NULL) == 0);
    raise(SIGUSR1);
  }
  exit(0);
}

/* The number of logs of pid in dir (named *.pid<pid>.iochar): what a parent
 * that reads the log directory right after waitpid finds. */
static int logs_of(pid_t pid) {
  char want[32];
  snprintf(want, sizeof want, ".pid%d.iochar", (int)pid);
  size_t w = strlen(want);
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    n += e->d_name[0] != '.' && l > w && !strcmp(e->d_name + l - w, want);
  }
  closedir(d);
  return n;
}

static void reap(pid_t pid) {
  int st;
  CHECK(waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  printf("child %d logs %d\n", (int)pid, logs_of(pid));
}

/* Threads of the parent alive across the forks, each writing its file. */
static atomic_int forked;
static void *writer(void *arg) {
  char tag[16];
  snprintf(tag, sizeof tag, "t%d", (int)(long)arg);
  files(tag, 20);
  while (!atomic_load(&forked)) usleep(1000);
  char p[4096];
  snprintf(p, sizeof p, "%s/%s.dat", dir, tag);
  int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  CHECK(fd >= 0);
  for (int i = 0; i < 10; i++) CHECK(write(fd, "12345678", 8) == 8);
  CHECK(close(fd) == 0);
  return NULL;
}

/* children DIR N NFILES THREADS END: the parent writes parent.dat and 20
 * files per thread, forks N children (each: NFILES files tagged by its
 * index, then END), reaps them in order. */
static void children(int n, int nfiles, int nthreads, const char *end) {
  files("p", 5);
  pthread_t th[8];
  for (int t = 0; t < nthreads && t < 8; t++)
    CHECK(pthread_create(&th[t], NULL, writer, (void *)(long)t) == 0);
  pid_t pids[64];
  for (int c = 0; c < n && c < 64; c++) {
    pids[c] = fork();
    CHECK(pids[c] >= 0);
    if (pids[c] == 0) {
      char tag[16];
      snprintf(tag, sizeof tag, "%d", c);
      files(tag, nfiles);
      end_as(end);
    }
  }
  atomic_store(&forked, 1);
  for (int t = 0; t < nthreads && t < 8; t++) pthread_join(th[t], NULL);
  for (int c = 0; c < n && c < 64; c++) reap(pids[c]);
}

/* grandchild DIR NFILES: the parent writes 5 files, its child NFILES (tag
 * g1) and forks one that writes NFILES (tag g2); each reaps its own. */
static void grandchild(int nfiles) {
  files("p", 5);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    files("g1", nfiles);
    pid_t g = fork();
    CHECK(g >= 0);
    if (g == 0) {
      files("g2", nfiles);
      exit(0);
    }
    reap(g);
    exit(0);
  }
  reap(pid);
}

/* vfork-exec DIR NFILES: the parent writes 5 files, vforks, and the child
 * execs this program as `write DIR ve NFILES`. */
static void vfork_exec(const char *self, const char *nfiles) {
  files("p", 5);
  char *argv[] = {(char *)self, "write", (char *)dir, "ve", (char *)nfiles, NULL};
  pid_t pid = vfork();
  CHECK(pid >= 0);
  if (pid == 0) {
    execv(self, argv);
    _exit(127);
  }
  int st;
  CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* busy DIR N NFILES: two threads of the parent each open 100 new files, then
 * write them all (a name's first write makes its metadata-only entry a full
 * record) and close them, while the main thread forks a child right as the
 * writes begin: round after round, N children (each: NFILES files tagged by
 * its index, then exit), each reaped.  The child's copy of the live file
 * races with those first writes (tags b0, b1: file k of round r is r * 100
 * + k). */
static pthread_barrier_t opened, round_done;
static int busy_rounds;
static void *busy_writer(void *arg) {
  int t = (int)(long)arg;
  for (int r = 0; r < busy_rounds; r++) {
    int fds[100];
    char p[4096];
    for (int k = 0; k < 100; k++) {
      snprintf(p, sizeof p, "%s/cb%d_%d.dat", dir, t, r * 100 + k);
      CHECK((fds[k] = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600)) >= 0);
    }
    pthread_barrier_wait(&opened);
    for (int k = 0; k < 100; k++) {
      int n = 1 + (r * 100 + k) % 7;
      CHECK(write(fds[k], "abcdefg", n) == n);
    }
    for (int k = 0; k < 100; k++) CHECK(close(fds[k]) == 0);
    pthread_barrier_wait(&round_done);
  }
  return NULL;
}
static void busy(int n, int nfiles) {
  busy_rounds = n;
  CHECK(pthread_barrier_init(&opened, NULL, 3) == 0);
  CHECK(pthread_barrier_init(&round_done, NULL, 3) == 0);
  pthread_t th[2];
  for (int t = 0; t < 2; t++)
    CHECK(pthread_create(&th[t], NULL, busy_writer, (void *)(long)t) == 0);
  for (int c = 0; c < n; c++) {
    fflush(stdout); /* a child must not print the parent's lines again */
    pthread_barrier_wait(&opened);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      char tag[16];
      snprintf(tag, sizeof tag, "%d", c);
      files(tag, nfiles);
      exit(0);
    }
    reap(pid);
    pthread_barrier_wait(&round_done);
  }
  for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
}

/* signals DIR: what a program sees of its own handlers, printed (the same
 * with the tool and without: its handlers run through a trampoline). */
static volatile sig_atomic_t got_sig, got_code;
static void plain(int sig) { got_sig = sig; }
static void with_info(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  got_sig = sig;
  got_code = si->si_code;
}
static void signals(void) {
  struct sigaction a, o;
  memset(&a, 0, sizeof a);
  a.sa_handler = plain;
  a.sa_flags = SA_RESTART;
  sigemptyset(&a.sa_mask);
  sigaddset(&a.sa_mask, SIGUSR2);
  CHECK(sigaction(SIGUSR1, &a, &o) == 0);
  printf("old dfl %d\n", o.sa_handler == SIG_DFL);
  CHECK(sigaction(SIGUSR1, NULL, &o) == 0);
  printf("read back %d restart %d siginfo %d mask %d\n", o.sa_handler == plain,
         !!(o.sa_flags & SA_RESTART), !!(o.sa_flags & SA_SIGINFO),
         sigismember(&o.sa_mask, SIGUSR2));
  raise(SIGUSR1);
  printf("plain got %d\n", (int)got_sig);
  a.sa_sigaction = with_info;
  a.sa_flags = SA_SIGINFO;
  CHECK(sigaction(SIGUSR1, &a, &o) == 0);
  printf("old plain %d siginfo %d\n", o.sa_handler == plain, !!(o.sa_flags & SA_SIGINFO));
  raise(SIGUSR1);
  printf("info got %d code %d\n", (int)got_sig, (int)got_code);
  CHECK(sigaction(SIGUSR1, NULL, &o) == 0);
  printf("read back %d siginfo %d\n", o.sa_sigaction == with_info, !!(o.sa_flags & SA_SIGINFO));
  printf("signal old %d\n", (void *)signal(SIGUSR1, plain) == (void *)with_info);
  printf("signal ign old %d\n", signal(SIGUSR1, SIG_IGN) == plain);
  raise(SIGUSR1); /* ignored */
  printf("signal dfl old %d\n", signal(SIGUSR1, SIG_DFL) == SIG_IGN);
  errno = 0;
  int bad = signal(0, plain) == SIG_ERR;
  printf("bad %d errno %d\n", bad, errno);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* System V's, still used */
  printf("sigset old %d\n", sigset(SIGUSR2, plain) == SIG_DFL);
  printf("sigset hold old %d\n", sigset(SIGUSR2, SIG_HOLD) == plain);
  got_sig = 0;
  raise(SIGUSR2); /* held */
  printf("held got %d\n", (int)got_sig);
  printf("sigset release %d\n", sigset(SIGUSR2, plain) == SIG_HOLD);
  printf("released got %d\n", (int)got_sig);
#pragma GCC diagnostic pop
}

int main(int argc, char **argv) {
  CHECK(argc >= 3);
  dir = argv[2];
  const char *m = argv[1];
  if (!strcmp(m, "children") && argc == 7)
    children(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argv[6]);
  else if (!strcmp(m, "busy") && argc == 5)
    busy(atoi(argv[3]), atoi(argv[4]));
  else if (!strcmp(m, "grandchild") && argc == 4)
    grandchild(atoi(argv[3]));
  else if (!strcmp(m, "vfork-exec") && argc == 4)
    vfork_exec("/proc/self/exe", argv[3]);
  else if (!strcmp(m, "signals"))
    signals();
  else if (!strcmp(m, "write") && argc == 5)
    files(argv[3], atoi(argv[4]));
  else
    return 2;
  return 0;
}
