/* Process lifecycle: initialisation at load, the serial shutdown at exit, fork
 * and _exit handling, symbol resolution and the one-line warnings. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "config.h"
#include "core.h"
#include "internal.h"
#include "live.h"
#include "observe.h"

int iochar_ready;
/* The process whose log this is: a vfork child shares our memory but has its
 * own pid (and no atfork handlers run for it). */
static pid_t owner_pid;
/* Every thread's copy starts biased: its first wrapped call registers it
 * (iochar_thread_enter). */
__thread int iochar_in_tool __attribute__((tls_model("initial-exec"))) = IOCHAR_NEW_THREAD;
struct timespec iochar_mono0;
iochar_job iochar_job_info;
int (*iochar_extra_sections)(struct iochar_buf *out, int *nsections);

void *iochar_resolve(const char *name, const void *self) {
  void *p = dlsym(RTLD_NEXT, name);
  if (!p || p == self) p = dlsym(RTLD_DEFAULT, name);
  if (p == self) p = NULL;
  if (!p)
    iochar_warn_once(IOCHAR_WARN_SYMBOL, "cannot find the real %s; not intercepting it", name);
  return p;
}

static void read_small(const char *path, char *buf, size_t n) {
  buf[0] = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t r = read(fd, buf, n - 1);
  close(fd);
  if (r <= 0) return;
  /* /proc/self/cmdline separates arguments with NULs */
  for (ssize_t i = 0; i < r - 1; i++)
    if (buf[i] == 0) buf[i] = ' ';
  buf[r] = 0;
}

static void job_exe(iochar_job *j) {
  ssize_t n = readlink("/proc/self/exe", j->exe, sizeof j->exe - 1);
  j->exe[n > 0 ? n : 0] = 0;
}

static void job_identity(iochar_job *j) {
  read_small("/proc/self/cmdline", j->cmdline, sizeof j->cmdline);
  if (gethostname(j->hostname, sizeof j->hostname) != 0) strcpy(j->hostname, "unknown");
  j->hostname[sizeof j->hostname - 1] = 0;
  const char *id = iochar_cfg.batch_jobid;
  if (id && *id)
    snprintf(j->jobid, sizeof j->jobid, "%s", id);
  else
    snprintf(j->jobid, sizeof j->jobid, "%d", (int)getpid());
  const char *u = iochar_envs.user;
  struct passwd pw, *pwp = NULL;
  char pwbuf[1024];
  if ((!u || !*u) && getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &pwp) == 0 && pwp)
    u = pw.pw_name;
  if (u && *u)
    snprintf(j->user, sizeof j->user, "%s", u);
  else
    snprintf(j->user, sizeof j->user, "uid%d", (int)getuid());
  j->log_pid = (int)getpid();
  owner_pid = getpid();
  j->nprocs = 1;
  j->nnodes = 1;
}

static const char always_lock = 0;
const char *iochar_single_threaded_flag = &always_lock;
const char *iochar_fast_flag = &always_lock;
char iochar_fast_mode = 1;

/* The fast rule's bookkeeping (core.h), under enter_mutex, which a thread
 * takes once, at its first recorded call: the owner's in-tool count (NULL:
 * no thread has entered yet, or the owner exited), whether the mode ended
 * (later entrants skip the mutex) and the key whose destructor tells that
 * the owner exits (its count is freed with its thread).  Nothing under the
 * mutex is a cancellation point or takes another lock. */
#define MEMBARRIER_CMD_GLOBAL_ (1 << 0)
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED_ (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_ (1 << 4)
static int use_membarrier; /* 1: the fast rule is in force */
static int decided;        /* the first constructor ran */
static pthread_mutex_t enter_mutex = PTHREAD_MUTEX_INITIALIZER;
static int *owner_count;
static int fast_ended;
static pthread_key_t owner_key;
static __thread char thread_exiting __attribute__((tls_model("initial-exec")));

/* Not under a seccomp filter (prctl says 0): a filter inherited from the
 * launcher (a service manager's or a container's allow list) may answer a
 * system call it does not list by killing the process, and membarrier is
 * one the application itself would likely never make.  Under a filter the
 * fast rule stays off. */
static int membarrier_register(void) {
#ifdef SYS_membarrier
  int e = errno,
      ok = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0 &&
           syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_, 0, 0) == 0;
  errno = e;
  return ok;
#else
  return 0;
#endif
}

/* Every running thread of the process executes a full barrier before this
 * returns.  Registered at start, the expedited command fails only for want
 * of memory (retried); should it be refused later on (a seccomp filter
 * installed since), the global one serves, and without either, a fence and
 * 10 ms: a running core's stores drain in far less, a descheduled thread's
 * drained when it was switched out.  No cancellation point in here. */
static void barrier_all_threads(void) {
#ifdef SYS_membarrier
  /* a filter installed since start: membarrier could be the call it kills */
  for (int i = 0; i < 100 && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0; i++) {
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_, 0, 0) == 0) return;
    if (errno != ENOMEM && errno != EINTR && errno != EAGAIN) break;
    sched_yield();
  }
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0 &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_, 0, 0) == 0)
    return;
#endif
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000ll + (t.tv_nsec - t0.tv_nsec) < 10000000);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The owner's thread exits: a later entrant may own.  An entrant reads the
 * owner's count under enter_mutex, so the count outlives every read (key
 * destructors run before a thread's memory goes).  I/O in a later
 * destructor enters again and ends the mode (thread_exiting), so nothing
 * points at a count about to be freed.  The count is up meanwhile: a signal
 * handler's I/O here passes through, not into the held mutex. */
static void owner_exit(void *p) {
  (void)p;
  iochar_in_tool++;
  pthread_mutex_lock(&enter_mutex);
  if (owner_count == &iochar_in_tool) {
    owner_count = NULL;
    thread_exiting = 1;
  }
  pthread_mutex_unlock(&enter_mutex);
  /* one store: a handler sees the count up, or its final value */
  iochar_in_tool = (iochar_in_tool - 1) | (thread_exiting ? IOCHAR_NEW_THREAD : 0);
}

/* Before any wrapper can run (the default-priority constructors come later).
 * The fast rule needs membarrier and a process with one thread now: no
 * other thread can have touched anything yet.  And a key within glibc's
 * per-thread first block (32): past it pthread_setspecific allocates, and a
 * thread may first record inside a signal handler that interrupted malloc. */
__attribute__((constructor(101))) static void single_threaded_flag(void) {
  if (&__libc_single_threaded) iochar_single_threaded_flag = &__libc_single_threaded;
  iochar_fast_flag = iochar_single_threaded_flag;
  if (!&__libc_single_threaded || !__libc_single_threaded || !membarrier_register() ||
      pthread_key_create(&owner_key, owner_exit) != 0) {
    __atomic_store_n(&decided, 1, __ATOMIC_RELEASE);
    return;
  }
  if (owner_key < 32) {
    use_membarrier = 1;
    iochar_fast_flag = &iochar_fast_mode;
  } else {
    pthread_key_delete(owner_key);
  }
  __atomic_store_n(&decided, 1, __ATOMIC_RELEASE);
}

/* The one-thread rule for the fast steps too (observers: core.h).  From
 * iochar_init, while the process still has one thread and none entered. */
static void fast_rule_off(void) {
  use_membarrier = 0;
  iochar_fast_flag = iochar_single_threaded_flag;
}

/* How long an entrant waits for the owner's bracket.  A bracket is a few
 * dozen instructions with no system call, so only an owner that left it by
 * a signal handler's longjmp (it never comes back to it: nothing to race
 * with) or that the scheduler kept off every core this long is still in it;
 * past this the entrant goes on rather than hang the application, and the
 * log says its counts may be inexact (the second case: one record's
 * unlocked update may race with a locked one). */
#define FAST_END_WAIT_NS 1000000000LL

static long long mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* End the fast mode, under enter_mutex: clear the flag, make every thread
 * run a full barrier, and wait until the owner is out of its bracket
 * (core.h says why the owner gets out). */
static void fast_end(void) {
  __atomic_store_n(&iochar_fast_mode, 0, __ATOMIC_SEQ_CST);
  if (owner_count && owner_count != &iochar_in_tool) {
    barrier_all_threads();
    long long t0 = mono_ns();
    for (unsigned k = 0; __atomic_load_n(owner_count, __ATOMIC_ACQUIRE) & IOCHAR_FAST_MASK; k++) {
      sched_yield();
      if ((k & 63) == 63 && mono_ns() - t0 > FAST_END_WAIT_NS) {
        iochar_warn_once(IOCHAR_WARN_FAST_END,
                         "a thread stayed inside the tool's unlocked step for over a second "
                         "(a signal handler's longjmp?); counts of that moment may be inexact");
        break;
      }
    }
  }
  __atomic_store_n(&fast_ended, 1, __ATOMIC_RELEASE);
}

/* The count is up meanwhile (no longer IOCHAR_NEW_THREAD, not 0): a signal
 * handler's I/O on this thread passes straight through, so it can neither
 * record before the thread is registered nor enter a second time into the
 * held mutex. */
void iochar_thread_enter(void) {
  if (!__atomic_load_n(&decided, __ATOMIC_ACQUIRE)) return; /* passes through until then */
  iochar_in_tool += 1 - IOCHAR_NEW_THREAD;
  if (use_membarrier && !__atomic_load_n(&fast_ended, __ATOMIC_ACQUIRE)) {
    int e = errno;
    pthread_mutex_lock(&enter_mutex);
    if (!fast_ended) {
      if (owner_count == &iochar_in_tool) {
        /* the owner already: a fork child's thread (fast_mode_child) */
      } else if (!owner_count && !thread_exiting &&
                 pthread_setspecific(owner_key, &owner_count) == 0) {
        owner_count = &iochar_in_tool;
      } else {
        fast_end();
      }
    }
    pthread_mutex_unlock(&enter_mutex);
    errno = e;
  }
  iochar_in_tool--;
}

/* The fork child has one thread, the one that forked: it owns the mode
 * again, whatever the parent's threads did (what they were doing at the
 * fork, locked or in a bracket, is half done in the child either way).  A
 * child that cannot register membarrier locks for good. */
static void fast_mode_child(void) {
  if (!use_membarrier) return;
  pthread_mutex_init(&enter_mutex, NULL);
  if (thread_exiting || !membarrier_register() ||
      pthread_setspecific(owner_key, &owner_count) != 0) {
    iochar_fast_mode = 0;
    fast_ended = 1;
    owner_count = NULL;
    return;
  }
  owner_count = &iochar_in_tool;
  fast_ended = 0;
  iochar_fast_mode = 1;
}

int iochar_use_tsc;
uint64_t iochar_tsc0;
uint64_t iochar_mono0_ns;
double iochar_tsc_scale;

static double mono_diff(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

/* Use the TSC only when the kernel says it is constant and non-stop; its rate
 * comes from two readings of CLOCK_MONOTONIC, each bracketed by TSC readings
 * (the tightest of a few tries, the reading placed at the bracket's middle,
 * so each end is known to half a bracket, ~5-15 ns here).  The interval
 * lasts until both ends' uncertainty is within CAL_ERROR of it (~90 us
 * here; at most CAL_MAX), instead of a fixed 200 us with unbracketed ends.
 * It starts before the rest of the start-up (calibrate_begin) and only what
 * remains of it is spent waiting (calibrate_end): no clock reading is
 * converted before the end, as no wrapper records before iochar_ready. */
#define CAL_ERROR 5e-4 /* relative: 0.05%, a bound (measured: within 0.002%) */
#define CAL_MAX 2e-3   /* seconds: a preempted reading cannot stall start-up */
static struct timespec cal_mono;
static uint64_t cal_tsc, cal_half; /* the begin's TSC reading and half its bracket */
static int cal_on;

#if defined(__x86_64__)
/* CLOCK_MONOTONIC at the middle of the tightest of 4 TSC brackets. */
static void clock_pair(struct timespec *mono, uint64_t *tsc, uint64_t *half) {
  uint64_t best = UINT64_MAX - 2; /* no bracket: an unusable half (callers check) */
  *tsc = 0;
  for (int i = 0; i < 4; i++) {
    struct timespec t;
    __builtin_ia32_lfence();
    uint64_t a = __builtin_ia32_rdtsc();
    __builtin_ia32_lfence();
    clock_gettime(CLOCK_MONOTONIC, &t);
    __builtin_ia32_lfence();
    uint64_t b = __builtin_ia32_rdtsc();
    if (b >= a && b - a < best) best = b - a, *mono = t, *tsc = a + (b - a) / 2;
  }
  *half = best / 2 + 1;
}
#endif

static void calibrate_begin(void) {
#if defined(__x86_64__)
  char flags[8192];
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, flags, sizeof flags - 1);
  close(fd);
  if (n <= 0) return;
  flags[n] = 0;
  if (!strstr(flags, " constant_tsc") || !strstr(flags, " nonstop_tsc")) return;
  clock_pair(&cal_mono, &cal_tsc, &cal_half);
  cal_on = cal_half < UINT64_MAX / 4;
#endif
}

static void calibrate_end(void) {
#if defined(__x86_64__)
  if (!cal_on) return;
  struct timespec b = cal_mono;
  uint64_t t1 = 0, half = 0;
  double dt;
  for (;;) {
    clock_pair(&b, &t1, &half);
    dt = mono_diff(&cal_mono, &b);
    if (t1 <= cal_tsc) return;
    /* the ends' uncertainty in seconds, at the rate measured so far */
    double err = (double)(cal_half + half) * dt / (double)(t1 - cal_tsc);
    if (dt > 0 && (err <= CAL_ERROR * dt || dt >= CAL_MAX)) break;
  }
  iochar_tsc_scale = dt / (double)(t1 - cal_tsc);
  iochar_use_tsc = 1;
#endif
}

static void start_clocks(void) {
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_MONOTONIC, &iochar_mono0);
  iochar_mono0_ns = (uint64_t)iochar_mono0.tv_sec * 1000000000u + (uint64_t)iochar_mono0.tv_nsec;
  /* Readings are converted as (k - tsc0) * scale whichever clock gave them
   * (core.h): without a TSC they are monotonic ns. */
  iochar_tsc0 = iochar_mono0_ns;
  if (!iochar_use_tsc) iochar_tsc_scale = 1e-9;
#if defined(__x86_64__)
  if (iochar_use_tsc) iochar_tsc0 = __builtin_ia32_rdtsc();
#endif
  iochar_job_info.start_wall = (double)wall.tv_sec + wall.tv_nsec * 1e-9;
}

/* The count is up from prepare to parent or child: a signal handler's I/O
 * on the forking thread meanwhile passes through instead of waiting on the
 * held rec_mutex (or entering while holding it: core.h).  Forking is not
 * entering: a thread that only forks leaves the fast mode alone. */
static void at_fork_prepare(void) {
  iochar_in_tool++;
  iochar_records_lock();
}
static void at_fork_parent(void) {
  iochar_records_unlock();
  iochar_in_tool--;
}
/* The child reports its own I/O only, in its own log (pid in the name). */
static void at_fork_child(void) {
  fast_mode_child();
  iochar_job_info.forked = 1;
  iochar_job_info.log_pid = (int)getpid();
  /* The parent's live file is shared memory: the child moves to its own
   * before it touches a counter. */
  iochar_records_live_again();
  iochar_records_reset();
  iochar_series_reset();
  iochar_job_info.written = 0;
  iochar_job_info.mpi_initialized = 0;
  iochar_job_info.finalized = 0;
  iochar_job_info.per_rank_log = 0;
  iochar_job_info.rank = 0;
  iochar_job_info.nprocs = 1;
  iochar_job_info.log_pid = (int)getpid();
  owner_pid = getpid();
  start_clocks();
  iochar_live_sync_job();
  iochar_in_tool--;
}

/* The count is at least IOCHAR_VFORK_BIAS: a vfork bias, or a thread not yet
 * registered.  It registers only from no tool code (the count exactly
 * IOCHAR_NEW_THREAD): registering may wait for the owner's bracket, and tool
 * code run by such a thread (MPI_Init's, a fork's handlers) may hold locks. */
int iochar_vfork_back(void) {
  if ((iochar_in_tool & (IOCHAR_NEW_THREAD - 1)) >= IOCHAR_VFORK_BIAS) {
    if (getpid() != owner_pid) return 0;
    iochar_in_tool -= IOCHAR_VFORK_BIAS;
  }
  if (iochar_in_tool == IOCHAR_NEW_THREAD) iochar_thread_enter();
  return 1;
}

/* vfork: bias this thread's in-tool count (see core.h) and jump on to the
 * real vfork, which returns to our caller in both processes.  A C wrapper
 * cannot do this: the child would return through the parent's stack frame.
 * Before the real one is known, fork stands in (a valid vfork). */
void *iochar_real_vfork;
static void (*real_exit)(int);
#if defined(__x86_64__)
#define IOCHAR_STR_(x) #x
#define IOCHAR_STR(x) IOCHAR_STR_(x)
// clang-format off
__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        "vfork:\n"
        "  endbr64\n"
        "  movq iochar_in_tool@gottpoff(%rip), %rax\n"
        "  addl $" IOCHAR_STR(IOCHAR_VFORK_BIAS) ", %fs:(%rax)\n"
        "  movq iochar_real_vfork(%rip), %rax\n"
        "  testq %rax, %rax\n"
        "  jz 1f\n"
        "  jmp *%rax\n"
        "1:\n"
        "  jmp fork@PLT\n"
        ".size vfork, .-vfork\n");
// clang-format on
#endif /* elsewhere vfork is not intercepted: a child's close reaches our tables */

__attribute__((constructor)) void iochar_init(void) {
  static int done;
  if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) return;
  /* Not an entry: the first thread to record owns the fast mode (the main
   * thread may leave all I/O to another).  No other thread exists yet (the
   * first constructor checked), so what this touches needs no lock. */
  iochar_in_tool++;
  iochar_config_env(); /* the environment, read once (runtime/config.c) */
  iochar_warn_init();  /* before anything can warn: what fd 2 is at start */
  iochar_real_vfork = dlsym(RTLD_NEXT, "vfork");
  real_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
  /* A set-user-ID (or capability-raising) program runs with its caller's
   * environment: IOCHAR_LOGFILE would let that caller create files with the
   * program's privileges.  The tool stays off there, silently (the program's
   * output must not change). docs/security.md */
  const char *b = NULL;
  if (!getauxval(AT_SECURE)) {
    job_exe(&iochar_job_info);
    b = strrchr(iochar_job_info.exe, '/');
    b = b ? b + 1 : iochar_job_info.exe;
  }
  if (!b) {
    iochar_cfg.disabled = 1;
  } else if (iochar_is_launcher(b) || iochar_is_launcher(program_invocation_short_name)) {
    /* Before the settings and the rest of the identity: a launcher (mpiexec
     * and its proxies, a job script's shells) reads no config file and
     * looks up no user, and a config file's warning is not said by each. */
    iochar_cfg.disabled = 1;
  } else if (iochar_config_load() == 0) {
    calibrate_begin();
    job_identity(&iochar_job_info);
    iochar_job_info.memory_bound = iochar_cfg.memory;
    if (iochar_records_init() == 0 && iochar_paths_init() == 0) {
      pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
      iochar_observe_init(); /* call sites, trace (runtime/observe.c) */
      /* they walk stacks (libunwind, the loader) inside the hot steps */
      if (iochar_observing) fast_rule_off();
      iochar_log_dir_check(); /* say now, while the user is watching */
      calibrate_end();
      start_clocks(); /* the job's start: the clock is known, nothing recorded yet */
      __atomic_store_n(&iochar_ready, 1, __ATOMIC_RELEASE);
    } else {
      iochar_warn_once(IOCHAR_WARN_NO_RECORD_MEMORY,
                       "cannot reserve %llu bytes of record memory (IOCHAR_MEMORY); "
                       "not recording",
                       (unsigned long long)iochar_cfg.memory);
    }
  }
  iochar_in_tool--;
}

/* Write this process's log once: the serial log, or a per-rank fallback log
 * for an MPI job that never reached MPI_Finalize. */
void iochar_shutdown(void) {
  if (!iochar_ready || __atomic_exchange_n(&iochar_job_info.written, 1, __ATOMIC_ACQ_REL)) return;
  iochar_enter(); /* the thread that exits may never have done I/O */
  iochar_in_tool++;
  __atomic_store_n(&iochar_ready, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&iochar_fds_max, 0, __ATOMIC_RELEASE); /* data wrappers: core.h */
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  iochar_job_info.end_wall = (double)wall.tv_sec + wall.tv_nsec * 1e-9;
  if (iochar_job_info.mpi_initialized && !iochar_job_info.finalized)
    iochar_job_info.per_rank_log = 1;
  /* A process that did no I/O we record (hostname, date, a shell's helpers
   * in a job script) leaves no log: only jobs' I/O fills the log directory. */
  char path[IOCHAR_PATH_MAX];
  int e = errno, written = 0;
  if (!iochar_records_any_touched() && !iochar_job_info.mpi_initialized)
    ; /* nothing to say */
  else if (iochar_log_path(path, sizeof path, iochar_job_info.per_rank_log) != 0)
    iochar_warn_once(IOCHAR_WARN_LOG_PATH, "log path too long; no log written");
  else if (iochar_log_write_local(path) != 0)
    iochar_log_failed(path);
  else
    written = 1;
  /* The live file goes once the log is there (or nothing needed saying);
   * else it stays, for the reader to recover. */
  if (written || (!iochar_records_any_touched() && !iochar_job_info.mpi_initialized))
    iochar_live_done();
  else
    iochar_live_end(IOCHAR_LIVE_RUNNING, -1);
  errno = e;
  iochar_in_tool--;
}

/* MPI_Abort: this rank's log first (the launcher kills the others; their live
 * files keep their counters).  The live file says so before the write
 * starts, in case the launcher is quicker. */
void iochar_abort_log(int code) {
  if (!iochar_ready || getpid() != owner_pid) return;
  iochar_job_info.ended_by = "MPI_Abort";
  iochar_job_info.abort_code = code;
  iochar_live_end(IOCHAR_LIVE_ABORT, code);
  iochar_shutdown();
}

/* exec replaces the program: its log now, under a name of its own (".exec"
 * and the monotonic clock), so the next program's log does not take it. */
static char exec_log[IOCHAR_PATH_MAX];

void iochar_exec_prepare(void) {
  exec_log[0] = 0;
  if (!iochar_ready || getpid() != owner_pid || iochar_job_info.written) return;
  if (!iochar_records_any_touched() && !iochar_job_info.mpi_initialized) return;
  iochar_enter();
  iochar_in_tool++;
  int e = errno;
  iochar_job *j = &iochar_job_info;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  j->end_wall = (double)t.tv_sec + t.tv_nsec * 1e-9;
  clock_gettime(CLOCK_MONOTONIC, &t);
  snprintf(j->log_tag, sizeof j->log_tag, ".exec%lld",
           (long long)t.tv_sec * 1000000000ll + t.tv_nsec);
  j->ended_by = "exec";
  j->per_rank_log = j->mpi_initialized && !j->finalized;
  if (iochar_log_path(exec_log, sizeof exec_log, j->per_rank_log) != 0 ||
      iochar_log_write_local(exec_log) != 0) {
    iochar_log_failed(exec_log);
    exec_log[0] = 0; /* the live file keeps the counters */
  } else {
    iochar_live_done();
  }
  j->log_tag[0] = 0;
  j->ended_by = NULL;
  errno = e;
  iochar_in_tool--;
}

/* The exec failed: the program goes on, and so does its recording; the log
 * written for it goes, and a new live file holds the counters again. */
void iochar_exec_failed(void) {
  if (!exec_log[0]) return;
  iochar_enter();
  iochar_in_tool++;
  int e = errno;
  unlink(exec_log);
  exec_log[0] = 0;
  iochar_job_info.per_rank_log = 0;
  iochar_records_live_again();
  errno = e;
  iochar_in_tool--;
}

__attribute__((destructor)) static void iochar_fini(void) { iochar_shutdown(); }

/* _exit skips destructors, and it is what signal handlers call: nothing but
 * async-signal-safe work here.  The counters are already in the live file;
 * its header gets the exit status and the reader makes the log.  Not in a
 * vfork child: the live file is the parent's. */
__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  if (getpid() == owner_pid && iochar_ready && !iochar_job_info.written)
    iochar_live_end(IOCHAR_LIVE_EXIT, status);
  void (*real)(int) = real_exit; /* resolved at start-up: dlsym is not AS-safe */
  if (real) real(status);
  syscall(231 /* exit_group */, status);
  __builtin_unreachable();
}
__attribute__((visibility("default"), noreturn)) void _Exit(int status) { _exit(status); }
