/* Child processes with exactly known I/O (issue 38): a parent that has
 * recorded files forks children that each make many files; a fork child of a
 * fork child; vfork then exec; children ending by exit, _exit, _exit in a
 * signal handler, or killed; a parent reaping in a SIGCHLD handler.  File k of a child `c` is
 * DIR/c<tag>_<k>.dat: one open, one write of 1 + k % 7 bytes, one close. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
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

/* How a child ends: "exit", "_exit", "handler" (_exit(0) from a SIGUSR1
 * handler installed with sigaction), "kill" (SIGKILL), or "stop" (stops
 * itself; the parent copies its live file, then kills it). */
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
  if (!strcmp(how, "kill")) raise(SIGKILL);
  if (!strcmp(how, "stop")) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a parent that fails leaves no stopped child */
    raise(SIGSTOP);
    pause(); /* until killed */
  }
  exit(0);
}

/* Fork child c: it writes NFILES files tagged by its index, then ends as
 * `end` (end_as).  The parent's pending output is flushed first, so that the
 * child does not print it again. */
static pid_t fork_tagged(int c, int nfiles, const char *end) {
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char tag[16];
    snprintf(tag, sizeof tag, "%d", c);
    files(tag, nfiles);
    end_as(end);
  }
  return pid;
}

/* The number of logs of pid in dir (named *.pid<pid>.iochar, or made from
 * its live file: *.pid<pid>.recovered.iochar): what a parent that reads the
 * log directory right after waitpid finds. */
static int logs_of(pid_t pid) {
  char want[32], made[48];
  snprintf(want, sizeof want, ".pid%d.iochar", (int)pid);
  snprintf(made, sizeof made, ".pid%d.recovered.iochar", (int)pid);
  size_t w = strlen(want), m = strlen(made);
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    n += e->d_name[0] != '.' && ((l > w && !strcmp(e->d_name + l - w, want)) ||
                                 (l > m && !strcmp(e->d_name + l - m, made)));
  }
  closedir(d);
  return n;
}

/* Copy the live file of process pid (found in the live directory: the
 * header's pid at byte 32) to DIR/copy_<pid>.live, before it is made a log. */
static void copy_live(pid_t pid) {
  char top[4096];
  const char *live = getenv("IOCHAR_LIVEDIR");
  snprintf(top, sizeof top, "%s/iochar-%u", live && *live ? live : "/dev/shm", (unsigned)getuid());
  DIR *u = opendir(top);
  CHECK(u != NULL);
  int copied = 0;
  for (struct dirent *k; (k = readdir(u));) {
    if (k->d_name[0] == '.') continue;
    char sub[8192];
    snprintf(sub, sizeof sub, "%s/%s", top, k->d_name);
    DIR *d = opendir(sub);
    if (!d) continue;
    for (struct dirent *e; (e = readdir(d));) {
      char p[12288], out[4096], buf[1 << 16];
      snprintf(p, sizeof p, "%s/%s", sub, e->d_name);
      int fd = open(p, O_RDONLY);
      int32_t who = 0;
      if (fd < 0) continue;
      if (pread(fd, &who, 4, 32) == 4 && who == pid) {
        snprintf(out, sizeof out, "%s/copy_%d.live", dir, (int)pid);
        int o = open(out, O_CREAT | O_EXCL | O_WRONLY, 0600);
        CHECK(o >= 0);
        for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) CHECK(write(o, buf, (size_t)n) == n);
        CHECK(close(o) == 0);
        copied++;
      }
      close(fd);
    }
    closedir(d);
  }
  closedir(u);
  CHECK(copied == 1);
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void reap(pid_t pid, const char *end) {
  int st;
  if (!strcmp(end, "stop")) {
    CHECK(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st));
    printf("child %d stopped logs %d\n", (int)pid, logs_of(pid));
    copy_live(pid);
    CHECK(kill(pid, SIGKILL) == 0);
  }
  /* the child has ended: what the call takes is the tool's work (bench/reap_cost.py) */
  CHECK(waitid(P_PID, (id_t)pid, &(siginfo_t){0}, WEXITED | WNOWAIT) == 0);
  double t0 = now_us();
  CHECK(waitpid(pid, &st, 0) == pid);
  double t1 = now_us();
  if (!strcmp(end, "kill") || !strcmp(end, "stop"))
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  else
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  printf("child %d logs %d\n", (int)pid, logs_of(pid));
  printf("reap %d us %.1f\n", (int)pid, t1 - t0);
}

/* SIGCHLD handler: reaps whatever ended (the reap is inside a handler). */
static volatile sig_atomic_t reaped;
static void on_child(int sig) {
  (void)sig;
  int e = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) reaped++;
  errno = e;
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
 * index, then END), reaps them in order; END "sigchld-X": the children end
 * as X and the parent reaps them in a SIGCHLD handler; "ignchld-X": SIGCHLD
 * is ignored, the kernel reaps them. */
static void children(int n, int nfiles, int nthreads, const char *end) {
  files("p", 5);
  int in_handler = !strncmp(end, "sigchld-", 8), ignored = !strncmp(end, "ignchld-", 8);
  if (in_handler || ignored) {
    end += 8;
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = ignored ? SIG_IGN : on_child; /* SIG_IGN: the kernel reaps them */
    CHECK(sigaction(SIGCHLD, &a, NULL) == 0);
  }
  pthread_t th[8];
  for (int t = 0; t < nthreads && t < 8; t++)
    CHECK(pthread_create(&th[t], NULL, writer, (void *)(long)t) == 0);
  pid_t pids[64];
  for (int c = 0; c < n && c < 64; c++) pids[c] = fork_tagged(c, nfiles, end);
  atomic_store(&forked, 1);
  for (int t = 0; t < nthreads && t < 8; t++) pthread_join(th[t], NULL);
  if (in_handler || ignored) {
    while (in_handler && reaped < n) usleep(1000);
    for (int c = 0; c < n && c < 64 && ignored; c++)
      while (kill(pids[c], 0) == 0) usleep(1000); /* until the kernel reaped it */
    for (int c = 0; c < n && c < 64; c++)
      printf("child %d logs %d\n", (int)pids[c], logs_of(pids[c]));
    return;
  }
  for (int c = 0; c < n && c < 64; c++) reap(pids[c], end);
}

/* Every kind of record state a live file holds: a pending run of repeats
 * (sequential same-size writes, never flushed), reads with seeks and
 * strides, directories only stat'ed (metadata-only entries), a name stat'ed then
 * written (an entry made full), STDIO streams. */
static void mixed_io(void) {
  char p[4096], buf[4096];
  memset(buf, 'x', sizeof buf);
  snprintf(p, sizeof p, "%s/run.dat", dir);
  int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0600);
  CHECK(fd >= 0);
  for (int i = 0; i < 100; i++) CHECK(write(fd, buf, 4096) == 4096);
  for (int i = 0; i < 10; i++) CHECK(pread(fd, buf, 1000, (off_t)i * 8192) == 1000);
  CHECK(write(fd, buf, 3) == 3);
  for (int i = 0; i < 7; i++) CHECK(write(fd, buf, 512) == 512); /* a run left pending */
  CHECK(close(fd) == 0);
  struct stat st;
  for (int k = 0; k < 20; k++) {
    snprintf(p, sizeof p, "%s/d_%d", dir, k);
    CHECK(mkdir(p, 0700) == 0 && stat(p, &st) == 0);
  }
  snprintf(p, sizeof p, "%s/later.dat", dir);
  CHECK(stat(p, &st) != 0);
  fd = open(p, O_CREAT | O_WRONLY, 0600);
  CHECK(fd >= 0 && fstat(fd, &st) == 0 && close(fd) == 0 && stat(p, &st) == 0);
  fd = open(p, O_WRONLY, 0600);
  CHECK(fd >= 0 && write(fd, buf, 10) == 10 && close(fd) == 0);
  snprintf(p, sizeof p, "%s/stream.txt", dir);
  FILE *f = fopen(p, "w+");
  CHECK(f != NULL);
  for (int i = 0; i < 1000; i++) fprintf(f, "line %d\n", i);
  rewind(f);
  while (fgets(buf, sizeof buf, f)) {
  }
  CHECK(fclose(f) == 0);
}

/* mixed DIR END: the parent writes 5 files, forks one child that does
 * mixed_io and ends as END, and reaps it. */
static void mixed(const char *end) {
  files("p", 5);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    mixed_io();
    end_as(end);
  }
  reap(pid, end);
}

/* orphan DIR N NFILES: N children each write NFILES files then _exit in a
 * handler; the parent sees them end without reaping them (waitid WNOWAIT)
 * and is killed: their live files are left for the reader. */
static void orphan(int n, int nfiles) {
  files("p", 5);
  pid_t pids[64];
  for (int c = 0; c < n && c < 64; c++) pids[c] = fork_tagged(c, nfiles, "handler");
  for (int c = 0; c < n && c < 64; c++) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_PID, (id_t)pids[c], &si, WEXITED | WNOWAIT) == 0 && si.si_pid == pids[c]);
    printf("child %d logs %d\n", (int)pids[c], logs_of(pids[c]));
  }
  fflush(stdout);
  raise(SIGKILL);
}

/* waits DIR: what the wait calls give the program, printed (the same with
 * the tool and without): ECHILD, WNOHANG with none ready, EINTR, errno
 * left alone on success, NULL status, stops and continues, WNOWAIT then
 * the reap, wait3/wait4 with rusage, waitid's siginfo. */
static void on_alarm(int sig) { (void)sig; }
static pid_t child_then(const char *how) {
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    files("w", 3);
    if (!strcmp(how, "sleep")) usleep(300000);
    if (!strcmp(how, "stop")) raise(SIGSTOP);
    end_as(!strcmp(how, "sleep") || !strcmp(how, "stop") ? "exit" : how);
  }
  return pid;
}
static void waits(void) {
  int st = 0, r, e;
  siginfo_t si;
  errno = 0;
  r = (int)waitpid(-1, &st, WNOHANG), e = errno;
  printf("echild %d errno %d\n", r, e);
  pid_t pid = child_then("sleep");
  errno = EBADF;
  r = (int)waitpid(pid, &st, WNOHANG), e = errno;
  printf("nohang %d errno %d\n", r, e);
  /* a status pointer the kernel does not write (nothing to report yet): never read */
  errno = EBADF;
  r = (int)waitpid(pid, (int *)8, WNOHANG), e = errno;
  printf("nohang bad status %d errno %d\n", r, e);
  memset(&si, 0xff, sizeof si);
  r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG);
  printf("waitid nohang %d pid %d\n", r, (int)si.si_pid);
  struct sigaction a;
  memset(&a, 0, sizeof a);
  a.sa_handler = on_alarm; /* no SA_RESTART: the wait is interrupted */
  CHECK(sigaction(SIGALRM, &a, NULL) == 0);
  struct itimerval it = {{0, 0}, {0, 50000}};
  CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
  errno = 0;
  r = (int)waitpid(pid, &st, 0), e = errno;
  printf("eintr %d errno %d\n", r, e);
  memset(&si, 0, sizeof si);
  errno = EBADF;
  r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), e = errno;
  printf("nowait %d same %d code %d status %d errno %d\n", r, si.si_pid == pid, si.si_code,
         si.si_status, e);
  errno = EBADF;
  r = waitpid(pid, NULL, 0) == pid, e = errno;
  printf("reap same %d errno %d\n", r, e);
  pid = child_then("handler");
  errno = EBADF;
  r = wait(&st) == pid, e = errno;
  printf("wait same %d status %#x errno %d\n", r, st, e);
  pid = child_then("kill");
  struct rusage ru;
  r = wait4(pid, &st, 0, &ru) == pid;
  printf("wait4 same %d status %#x\n", r, st);
  pid = child_then("_exit");
  r = wait3(&st, 0, NULL) == pid;
  printf("wait3 same %d status %#x\n", r, st);
  pid = child_then("stop");
  r = waitpid(pid, &st, WUNTRACED) == pid;
  printf("stopped same %d status %#x\n", r, st);
  CHECK(kill(pid, SIGCONT) == 0);
  r = waitpid(pid, &st, WCONTINUED) == pid;
  printf("continued same %d status %#x\n", r, st);
  memset(&si, 0, sizeof si);
  r = waitid(P_PID, (id_t)pid, &si, WEXITED);
  printf("waitid %d same %d code %d status %d\n", r, si.si_pid == pid, si.si_code, si.si_status);
  errno = 0;
  r = (int)wait(NULL), e = errno;
  printf("echild again %d errno %d\n", r, e);
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
    reap(g, "exit");
    exit(0);
  }
  reap(pid, "exit");
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
    pthread_barrier_wait(&opened);
    pid_t pid = fork_tagged(c, nfiles, "exit");
    reap(pid, "exit");
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
  else if (!strcmp(m, "orphan") && argc == 5)
    orphan(atoi(argv[3]), atoi(argv[4]));
  else if (!strcmp(m, "waits"))
    waits();
  else if (!strcmp(m, "mixed") && argc == 4)
    mixed(argv[3]);
  else if (!strcmp(m, "busy") && argc == 5)
    busy(atoi(argv[3]), atoi(argv[4]));
  else if (!strcmp(m, "grandchild") && argc == 4)
    grandchild(atoi(argv[3]));
  else if (!strcmp(m, "vfork-exec") && argc == 4)
    vfork_exec("/proc/self/exe", argv[3]);
  else if (!strcmp(m, "signals"))
    signals();
  else if (!strcmp(m, "write") && (argc == 5 || argc == 6)) {
    files(argv[3], atoi(argv[4]));
    if (argc == 6) end_as(argv[5]); /* write DIR TAG N END */
  } else
    return 2;
  return 0;
}
