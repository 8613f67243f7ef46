/* Signal handlers counted: whether this thread runs inside one (the user's
 * handlers run through a trampoline: runtime/handlers.c). */
#ifndef IOCHAR_HANDLERS_H
#define IOCHAR_HANDLERS_H

#include <signal.h>

/* Handlers this thread is running now (nested ones each count).  A handler
 * left by siglongjmp never comes back down: that thread then stays "in a
 * handler", the safe side (docs/log-format.md, "Live files"). */
extern __thread int iochar_handler_depth __attribute__((tls_model("initial-exec")));

static inline int iochar_in_handler(void) { return iochar_handler_depth != 0; }

typedef int (*iochar_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* sigaction through `real`: a handler the application installs runs through
 * the trampoline (with SA_SIGINFO: the kernel passes the same arguments
 * either way), and what the application reads back (old) is its own handler
 * and flags, never the trampoline.  Async-signal-safe, as sigaction is. */
int iochar_handlers_sigaction(iochar_sigaction_fn real, int sig, const struct sigaction *act,
                              struct sigaction *old);

#endif
