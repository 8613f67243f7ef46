/* The wait calls (wait, waitpid, wait3, wait4, waitid): when one reaps a
 * child outside a signal handler, the live file the child left (_exit in a
 * handler, killed) becomes its log before the call returns
 * (runtime/reap.c).  The real call runs once; its result, status and errno
 * are the application's, untouched. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "../runtime/config.h"
#include "../runtime/handlers.h"
#include "../runtime/interpose.h"
#include "../runtime/lifecycle.h"
#include "../runtime/reap.h"

/* Completing here is safe: recording is on, no handler runs on this thread
 * (async-signal-safe work only there: the parent's end completes those),
 * and the thread is in no tool code (a vfork child never gets here: its
 * count keeps the bias).  A thread that never entered does not enter now:
 * this touches none of the process's records. */
static int may_complete(void) {
  if (!iochar_ready || iochar_in_handler()) return 0;
  int n = iochar_in_tool & (IOCHAR_NEW_THREAD - 1);
  if (n >= IOCHAR_VFORK_BIAS) {
    if (!iochar_vfork_back()) return 0;
    n = iochar_in_tool & (IOCHAR_NEW_THREAD - 1);
  }
  return n == 0;
}

/* After a call that returned r with status *sp: an exit or a kill reaped
 * (a stop or a continue did not).  *sp is read only when the call returned
 * a child: then the kernel wrote it (a bad pointer given fails the call with
 * EFAULT, and must not fault here). */
static void after(pid_t r, const int *sp) {
  if (r <= 0) return;
  int st = *sp;
  iochar_had_children = 1;
  if ((WIFEXITED(st) || WIFSIGNALED(st)) && may_complete()) {
    int e = errno;
    iochar_reap_child(r);
    errno = e;
  }
}

IOCHAR_WRAP(pid_t, waitpid, (pid_t pid, int *status, int options)) {
  int st = 0, *sp = status ? status : &st; /* the status tells a reap from a stop */
  pid_t r = IOCHAR_REAL(waitpid)(pid, sp, options);
  after(r, sp);
  return r;
}

IOCHAR_WRAP(pid_t, wait, (int *status)) {
  int st = 0, *sp = status ? status : &st;
  pid_t r = IOCHAR_REAL(wait)(sp);
  after(r, sp);
  return r;
}

IOCHAR_WRAP(pid_t, wait3, (int *status, int options, struct rusage *ru)) {
  int st = 0, *sp = status ? status : &st;
  pid_t r = IOCHAR_REAL(wait3)(sp, options, ru);
  after(r, sp);
  return r;
}

IOCHAR_WRAP(pid_t, wait4, (pid_t pid, int *status, int options, struct rusage *ru)) {
  int st = 0, *sp = status ? status : &st;
  pid_t r = IOCHAR_REAL(wait4)(pid, sp, options, ru);
  after(r, sp);
  return r;
}

/* waitid reaps unless WNOWAIT (the child stays waitable: a later call
 * reaps it) and says whom in the siginfo (si_pid 0: WNOHANG, none ready). */
IOCHAR_WRAP(int, waitid, (idtype_t idtype, id_t id, siginfo_t *info, int options)) {
  siginfo_t si, *ip = info ? info : &si;
  if (!info) memset(&si, 0, sizeof si);
  int r = IOCHAR_REAL(waitid)(idtype, id, ip, options);
  if (r != 0) return r;
  iochar_had_children = 1;
  int reaped =
      (options & WEXITED) && !(options & WNOWAIT) && ip->si_pid > 0 &&
      (ip->si_code == CLD_EXITED || ip->si_code == CLD_KILLED || ip->si_code == CLD_DUMPED);
  if (reaped && may_complete()) {
    int e = errno;
    iochar_reap_child(ip->si_pid);
    errno = e;
  }
  return r;
}
