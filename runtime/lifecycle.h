/* The process lifecycle (runtime/lifecycle.c): what the wrappers and the MPI
 * runtime call when the process starts, forks, execs, aborts or ends. */
#ifndef IOCHAR_LIFECYCLE_H
#define IOCHAR_LIFECYCLE_H

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

#pragma GCC visibility pop

#endif
