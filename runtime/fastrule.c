/* The fast rule (core.h): which thread owns the unlocked steps, and ending
 * the mode when a second thread enters.  Set up by the first constructor,
 * before any wrapper can run. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fastrule.h"

#include "core.h"
#include "warn.h"

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
void iochar_fast_rule_off(void) {
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
        /* the owner already: a fork child's thread (iochar_fast_mode_child) */
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
void iochar_fast_mode_child(void) {
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
