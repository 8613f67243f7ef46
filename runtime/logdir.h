/* Where the log goes (runtime/logdir.c): the dated tree under a log root,
 * IOCHAR_LOGDIR, IOCHAR_LOGFILE. */
#ifndef IOCHAR_LOGDIR_H
#define IOCHAR_LOGDIR_H

#include <stddef.h>

/* Final path of this process's log. */
int iochar_log_path(char *out, size_t n, int per_rank);
/* Check at start that the log's directory (or the log root) exists and is
 * writable (one warning now rather than a lost log at exit). */
void iochar_log_dir_check(void);
/* Under a log root, make the day directory of the job's start (and its year
 * and month) if missing, safely (docs/security.md); 0, or -1 with errno. */
int iochar_log_dir_make(void);
/* The absolute directory this process's log goes to (symlinks resolved where
 * it exists): what the live file's location is keyed by.  0 or -1. */
int iochar_log_dir_real(char *out, size_t n);

#endif
