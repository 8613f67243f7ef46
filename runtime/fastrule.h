/* The fast rule's set-up, fork, and a thread's entering (runtime/fastrule.c);
 * its hot part (the brackets, iochar_spin_lock_in) is core.h's. */
#ifndef IOCHAR_FASTRULE_H
#define IOCHAR_FASTRULE_H

#include "core.h"

#pragma GCC visibility push(hidden)

/* The one-thread rule for the fast steps too (observers on).  From
 * iochar_init, while the process still has one thread and none entered. */
void iochar_fast_rule_off(void);
/* A fork child's one thread owns the mode again (or it locks for good). */
void iochar_fast_mode_child(void);

/* Register this thread (the fast rule, core.h); iochar_enter for the
 * tool's own paths that read records without a wrapper's guard first (the
 * log at exit, exec, MPI_Finalize): callers hold no tool lock. */
void iochar_thread_enter(void);
static inline void iochar_enter(void) {
  if (__builtin_expect(iochar_in_tool & IOCHAR_NEW_THREAD, 0)) iochar_thread_enter();
}

#pragma GCC visibility pop

#endif
