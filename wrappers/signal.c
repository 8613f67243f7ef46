/* The ways a program installs a signal handler (sigaction, signal and its
 * BSD/System V forms, sigset): each handler runs through the trampoline of
 * runtime/handlers.c, which counts this thread's handler depth for _exit.
 * glibc's own entry points install through an internal sigaction our wrapper
 * never sees, so each is done here with its glibc semantics. */
#include <errno.h>
#include <signal.h>

#include "../runtime/handlers.h"
#include "../runtime/interpose.h"

/* Signals siginterrupt(sig, 1) took SA_RESTART from: signal() installs
 * theirs without it, as glibc does. */
static sigset_t interrupting;

IOCHAR_WRAP(int, sigaction, (int sig, const struct sigaction *act, struct sigaction *old)) {
  return iochar_handlers_sigaction(IOCHAR_REAL(sigaction), sig, act, old);
}

/* One handler installed with the given flags and mask, the old one returned
 * (SIG_ERR and errno as the real call left them). */
static __sighandler_t install(int sig, __sighandler_t h, int flags, int mask_self) {
  struct sigaction a, o;
  if (h == SIG_ERR || sig <= 0 || sig >= NSIG) {
    errno = EINVAL;
    return SIG_ERR;
  }
  a.sa_handler = h;
  sigemptyset(&a.sa_mask);
  if (mask_self) sigaddset(&a.sa_mask, sig);
  a.sa_flags = flags;
  if (iochar_handlers_sigaction(IOCHAR_REAL(sigaction), sig, &a, &o) < 0) return SIG_ERR;
  return o.sa_handler;
}

static __sighandler_t bsd(int sig, __sighandler_t h) {
  int restart = sig > 0 && sig < NSIG && sigismember(&interrupting, sig) != 1;
  return install(sig, h, restart ? SA_RESTART : 0, 1);
}

__attribute__((visibility("default"))) __sighandler_t signal(int sig, __sighandler_t h) {
  return bsd(sig, h);
}
__attribute__((visibility("default"))) __sighandler_t bsd_signal(int sig, __sighandler_t h) {
  return bsd(sig, h);
}
/* System V: reset to the default on delivery, not masked while it runs */
__attribute__((visibility("default"))) __sighandler_t sysv_signal(int sig, __sighandler_t h) {
  return install(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}
__attribute__((visibility("default"))) __sighandler_t __sysv_signal(int sig, __sighandler_t h) {
  return install(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

/* deprecated in glibc's headers, still used by older programs */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
IOCHAR_WRAP(int, siginterrupt, (int sig, int flag)) {
  int r = IOCHAR_REAL(siginterrupt)(sig, flag);
  if (r == 0) {
    if (flag)
      sigaddset(&interrupting, sig);
    else
      sigdelset(&interrupting, sig);
  }
  return r;
}
#pragma GCC diagnostic pop

/* System V's sigset: SIG_HOLD blocks the signal; a handler is installed
 * (empty mask, no flags) and the signal unblocked; SIG_HOLD is returned
 * when it was blocked before. */
__attribute__((visibility("default"))) __sighandler_t sigset(int sig, __sighandler_t h) {
  sigset_t one, was;
  if (sig <= 0 || sig >= NSIG || h == SIG_ERR) {
    errno = EINVAL;
    return SIG_ERR;
  }
  sigemptyset(&one);
  sigaddset(&one, sig);
  if (h == SIG_HOLD) {
    struct sigaction o;
    if (sigprocmask(SIG_BLOCK, &one, &was) < 0 ||
        iochar_handlers_sigaction(IOCHAR_REAL(sigaction), sig, NULL, &o) < 0)
      return SIG_ERR;
    return sigismember(&was, sig) ? SIG_HOLD : o.sa_handler;
  }
  __sighandler_t old = install(sig, h, 0, 0);
  if (old == SIG_ERR || sigprocmask(SIG_UNBLOCK, &one, &was) < 0) return SIG_ERR;
  return sigismember(&was, sig) ? SIG_HOLD : old;
}
