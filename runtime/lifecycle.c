/* The process lifecycle, above the rest of the runtime: initialisation at
 * load, the serial shutdown at exit, fork, vfork, exec, MPI_Abort's log and
 * _exit. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lifecycle.h"

#include "access.h"
#include "config.h"
#include "core.h"
#include "exclude.h"
#include "fastrule.h"
#include "handlers.h"
#include "jobkey.h"
#include "live.h"
#include "log_writer.h"
#include "logdir.h"
#include "observe.h"
#include "paths.h"
#include "reap.h"
#include "records.h"
#include "series.h"
#include "warn.h"

/* The process whose log this is: a vfork child shares our memory but has its
 * own pid (and no atfork handlers run for it). */
static pid_t owner_pid;

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
  iochar_jobkey_init(j->exe, j->jobid, sizeof j->jobid); /* its job: runtime/jobkey.c */
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
  iochar_had_children = 1; /* its end looks for their live files (runtime/reap.c) */
  iochar_records_unlock();
  iochar_in_tool--;
}
/* The child reports its own I/O only, in its own log (pid in the name). */
static void at_fork_child(void) {
  iochar_fast_mode_child();
  iochar_job_info.forked = 1;
  iochar_jobkey_forked(); /* its parent's job */
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
  iochar_start_clocks();
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
  /* before anything can warn: what fd 2 is at start */
  iochar_warn_init(iochar_envs.launcher_rank);
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
  } else if (iochar_config_load() == 0 && !iochar_app_excluded(b)) { /* issue 41: APP_* */
    iochar_calibrate_begin();
    job_identity(&iochar_job_info);
    iochar_job_info.memory_bound = iochar_cfg.memory;
    if (iochar_records_init() == 0 && iochar_paths_init() == 0) {
      iochar_exclude_init(); /* after the cwd is known (runtime/exclude.c) */
      pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
      iochar_observe_init(); /* call sites, trace (runtime/observe.c) */
      /* they walk stacks (libunwind, the loader) inside the hot steps */
      if (iochar_observing) iochar_fast_rule_off();
      iochar_log_dir_check(); /* say now, while the user is watching */
      iochar_calibrate_end();
      iochar_start_clocks(); /* the job's start: the clock is known, nothing recorded yet */
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

/* Has this process anything to say: a record touched, or MPI started (a rank
 * that did no I/O still counts in its job)?  Async-signal-safe. */
static int said(void) { return iochar_records_any_touched() || iochar_job_info.mpi_initialized; }

/* Write this process's log once: the serial log, or a per-rank fallback log
 * for an MPI job that never reached MPI_Finalize. */
void iochar_shutdown(void) {
  if (!iochar_ready || __atomic_exchange_n(&iochar_job_info.written, 1, __ATOMIC_ACQ_REL)) return;
  iochar_enter(); /* the thread that exits may never have done I/O */
  iochar_in_tool++;
  /* the live files its ended children left become their logs first, so
   * that a reader who finds this log finds theirs */
  iochar_reap_at_end();
  __atomic_store_n(&iochar_ready, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&iochar_fds_max, 0, __ATOMIC_RELEASE); /* data wrappers: core.h */
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  iochar_job_info.end_wall = (double)wall.tv_sec + wall.tv_nsec * 1e-9;
  iochar_live_finishing(iochar_job_info.end_wall);
  if (iochar_job_info.mpi_initialized && !iochar_job_info.finalized)
    iochar_job_info.per_rank_log = 1;
  /* A process that did no I/O we record (hostname, date, a shell's helpers
   * in a job script) leaves no log: only jobs' I/O fills the log directory. */
  char path[IOCHAR_PATH_MAX];
  int e = errno, written = 0;
  if (!said())
    ; /* nothing to say */
  else if (iochar_log_path(path, sizeof path, iochar_job_info.per_rank_log) != 0)
    iochar_warn_once(IOCHAR_WARN_LOG_PATH, "log path too long; no log written");
  else if (iochar_log_write_local(path) != 0)
    iochar_log_failed(path);
  else
    written = 1;
  /* The live file goes once the log is there (or nothing needed saying);
   * else it stays, for the reader to recover. */
  if (written || !said())
    iochar_live_done();
  else
    iochar_live_end(IOCHAR_LIVE_RUNNING, -1, 1);
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
  iochar_live_end(IOCHAR_LIVE_ABORT, code, said());
  iochar_shutdown();
}

/* exec replaces the program: its log now, under a name of its own (".exec"
 * and the monotonic clock), so the next program's log does not take it. */
static char exec_log[IOCHAR_PATH_MAX];

void iochar_exec_prepare(void) {
  exec_log[0] = 0;
  if (!iochar_ready || getpid() != owner_pid || iochar_job_info.written) return;
  if (!said()) return;
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

/* _exit skips destructors.  Called by the program itself (multiprocessing's
 * workers, os._exit, a C program's _exit) it writes the log as the end of
 * main does, before the parent can see the process gone.  Called from a
 * signal handler (the trampoline counts them: runtime/handlers.c) or from
 * inside the tool, only async-signal-safe work: the counters are already in
 * the live file, its header gets the exit status, and the reader makes the
 * log.  Not in a vfork child: the live file is the parent's. */
__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  if (getpid() == owner_pid && iochar_ready && !iochar_job_info.written) {
    /* a vfork parent that ends before its next wrapped call: the bias off */
    if ((iochar_in_tool & (IOCHAR_NEW_THREAD - 1)) >= IOCHAR_VFORK_BIAS)
      iochar_in_tool -= IOCHAR_VFORK_BIAS;
    if (!iochar_in_handler() && !(iochar_in_tool & (IOCHAR_NEW_THREAD - 1)))
      iochar_shutdown();
    else
      iochar_live_end(IOCHAR_LIVE_EXIT, status, said());
  }
  void (*real)(int) = real_exit; /* resolved at start-up: dlsym is not AS-safe */
  if (real) real(status);
  syscall(231 /* exit_group */, status);
  __builtin_unreachable();
}
__attribute__((visibility("default"), noreturn)) void _Exit(int status) { _exit(status); }
