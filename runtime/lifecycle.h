/* The process lifecycle (runtime/lifecycle.c): what the wrappers and the MPI
 * runtime call when the process starts, forks, execs, aborts or ends, and the
 * guard every wrapper passes first (its way back from a vfork is here). */
#ifndef IOCHAR_LIFECYCLE_H
#define IOCHAR_LIFECYCLE_H

#include "core.h"

#pragma GCC visibility push(hidden)

/* Lazily initialise (safe from any wrapper, any thread). */
void iochar_init(void);
/* This process's log, once: the serial log, or a per-rank log for an MPI job
 * that never reached MPI_Finalize (at exit, or from the MPI runtime). */
void iochar_shutdown(void);
/* MPI_Abort(code): this rank's log first, the live file marked aborted. */
void iochar_abort_log(int code);
/* exec: the log now, under a name of its own; and back, if the exec failed. */
void iochar_exec_prepare(void);
void iochar_exec_failed(void);

/* ---- the guard (core.h: the in-tool count, IOCHAR_VFORK_BIAS) ------------ */
/* With a bias on (the count >= IOCHAR_VFORK_BIAS): 0 in the vfork child;
 * else 1, the vfork bias taken off and, when the count is then exactly
 * IOCHAR_NEW_THREAD (the thread's first call, from no tool code), the thread
 * entered (iochar_thread_enter). */
int iochar_vfork_back(void);

/* 1 when a wrapper records: recording is on, and this thread is in no tool
 * code (a thread's first call and a parent back from vfork pass the slow path
 * above first). */
static inline int iochar_active(void) {
  if (__builtin_expect(!iochar_in_tool, 1)) return iochar_ready;
  return iochar_in_tool >= IOCHAR_VFORK_BIAS && iochar_vfork_back() && !iochar_in_tool &&
         iochar_ready;
}

/* 1 in a vfork child, which must leave the parent's tables alone (what the
 * child closes or duplicates is its own copy of the descriptor). */
static inline int iochar_in_vfork_child(void) {
  return iochar_in_tool >= IOCHAR_VFORK_BIAS && !iochar_vfork_back();
}

#pragma GCC visibility pop

#endif
