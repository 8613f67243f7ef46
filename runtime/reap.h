/* A tooled parent completes the live files of its ended children
 * (runtime/reap.c; docs/log-format.md, "Who completes a live file"). */
#ifndef IOCHAR_REAP_H
#define IOCHAR_REAP_H

#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* A wait call reaped child pid (it exited or was killed: not a stop or a
 * continue), outside any signal handler and any tool code: its live file,
 * when one is left (_exit in a handler, killed), becomes its log where it
 * belongs and goes.  errno kept. */
void iochar_reap_child(pid_t pid);
/* Set (async-signal-safe) when this process forked, or a wait call of its
 * returned: only then has it children to look for at its end. */
extern int iochar_had_children;
/* This process ends normally (before its own log): the live files left by
 * its ended children (reaped in a handler, reaped unseen, not reaped) become
 * their logs.  errno kept. */
void iochar_reap_at_end(void);
#pragma GCC visibility pop

/* The log a live file holds, made by this library (tests, bench; exported):
 * the live file at live (left in place) to a new file out (never replacing
 * one).  0, or -1 (not a live file this library can read, or out not made). */
int iochar_reap_convert(const char *live, const char *out);

#endif
