/* The application's signal handlers run through one trampoline that counts
 * this thread's handler depth, so _exit can tell a handler's call (only the
 * live file's mark is async-signal-safe) from a program's own (its log is
 * written): runtime/handlers.h. */
#include "handlers.h"

#include <stddef.h>
#include <stdint.h>

__thread int iochar_handler_depth __attribute__((tls_model("initial-exec")));

/* Per signal, the handler the application installed and its sa_flags (for
 * SA_SIGINFO: how to call it, and what sigaction reports back).  Written
 * before the trampoline is installed, so a delivery always finds one. */
static struct {
  void *fn;
  int flags;
} user[NSIG];

static void trampoline(int sig, siginfo_t *info, void *ctx) {
  __atomic_add_fetch(&iochar_handler_depth, 1, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  void *fn = __atomic_load_n(&user[sig].fn, __ATOMIC_ACQUIRE);
  int flags = __atomic_load_n(&user[sig].flags, __ATOMIC_RELAXED);
  if ((uintptr_t)fn > 1) {
    if (flags & SA_SIGINFO)
      ((void (*)(int, siginfo_t *, void *))fn)(sig, info, ctx);
    else
      ((void (*)(int))fn)(sig);
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_sub_fetch(&iochar_handler_depth, 1, __ATOMIC_RELAXED);
}

/* The trampoline in old, as the application sees it: the handler it put
 * there (fn, flags as it gave them). */
static void translate(struct sigaction *old, void *fn, int flags) {
  if (!old || !(old->sa_flags & SA_SIGINFO) || old->sa_sigaction != trampoline) return;
  old->sa_flags = (old->sa_flags & ~SA_SIGINFO) | (flags & SA_SIGINFO);
  if (flags & SA_SIGINFO)
    old->sa_sigaction = (void (*)(int, siginfo_t *, void *))fn;
  else
    old->sa_handler = (void (*)(int))fn;
}

int iochar_handlers_sigaction(iochar_sigaction_fn real, int sig, const struct sigaction *act,
                              struct sigaction *old) {
  if (sig <= 0 || sig >= NSIG) return real(sig, act, old);
  void *was_fn = __atomic_load_n(&user[sig].fn, __ATOMIC_ACQUIRE);
  int was_flags = __atomic_load_n(&user[sig].flags, __ATOMIC_RELAXED);
  void *fn = !act                           ? NULL
             : (act->sa_flags & SA_SIGINFO) ? (void *)act->sa_sigaction
                                            : (void *)act->sa_handler;
  /* SIG_DFL, SIG_IGN (and the trampoline itself, handed back by a caller
   * that read it some other way) go as they are */
  if (!act || (uintptr_t)fn <= 1 || fn == (void *)trampoline) {
    int r = real(sig, act, old);
    if (r == 0) translate(old, was_fn, was_flags);
    return r;
  }
  struct sigaction a = *act;
  a.sa_sigaction = trampoline;
  a.sa_flags |= SA_SIGINFO;
  __atomic_store_n(&user[sig].flags, act->sa_flags, __ATOMIC_RELAXED);
  __atomic_store_n(&user[sig].fn, fn, __ATOMIC_RELEASE);
  int r = real(sig, &a, old);
  if (r != 0) { /* refused: the table as it was (errno is the refusal's) */
    __atomic_store_n(&user[sig].flags, was_flags, __ATOMIC_RELAXED);
    __atomic_store_n(&user[sig].fn, was_fn, __ATOMIC_RELEASE);
    return r;
  }
  translate(old, was_fn, was_flags);
  return 0;
}
