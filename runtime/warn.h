/* The tool's warnings: one named key each, printed once per job on the stderr
 * the process started with, and kept for the log's JOB `warnings` key. */
#ifndef IOCHAR_WARN_H
#define IOCHAR_WARN_H

#include <stdint.h>

/* Every warning the tool can give, once: X(NAME, what a report says when
 * another rank gave it).  A key is raised at most once per process. */
#define IOCHAR_WARNINGS(X)                                                      \
  X(CONFIG_VALUE, "a setting's value was not valid; ignored")                   \
  X(CONFIG, "a config file had lines that could not be used")                   \
  X(MEMORY_BOUND, "memory bound (IOCHAR_MEMORY) reached; files folded")         \
  X(NO_RECORD_MEMORY, "could not reserve record memory; nothing recorded")      \
  X(SYMBOL, "a real libc/MPI function was not found")                           \
  X(LIB_SYMBOL, "a real HDF5/NetCDF function was not found")                    \
  X(LOGDIR, "the log directory was not usable at start")                        \
  X(LIVEDIR, "the live directory was not usable; counters in memory only")      \
  X(LOG_PATH, "the log path was too long")                                      \
  X(LOG_WRITE, "a log could not be written")                                    \
  X(REDUCE_FALLBACK, "the reduction failed; per-rank logs written")             \
  X(TIMING, "shutdown timing")                                                  \
  X(CALLSITES_UNWIND, "libunwind not found; no call sites")                     \
  X(TRACE_MEMORY, "could not reserve trace memory; no trace")                   \
  X(SECURE, "a set-user-ID or set-group-ID program: the tool is off")           \
  X(LIVE_FULL, "the live file could not grow; files folded")                    \
  X(MPI_PASSTHROUGH, "MPI calls passed through: an MPI the tool cannot record") \
  X(EXCLUDE_PATTERN, "IOCHAR_EXCLUDE_PATTERN was not a regular expression")     \
  X(FAST_END, "a thread stayed in an unlocked step; counts may be inexact")     \
  X(LOG_TAKEN, "another user's file took the log's name; the log is lost")      \
  X(MAX_RECORDS, "record limit (IOCHAR_MAX_RECORDS) reached; files folded")

#define IOCHAR_WARN_ENUM_(name, text) IOCHAR_WARN_##name,
enum iochar_warning { IOCHAR_WARNINGS(IOCHAR_WARN_ENUM_) IOCHAR_WARN_COUNT };
#undef IOCHAR_WARN_ENUM_
_Static_assert(IOCHAR_WARN_COUNT <= 64, "warning keys are bits of one word");

/* One `iochar: ` line, at most once per key: on fd 2 when this process is
 * the job's first (not an MPI rank > 0) and fd 2 is still the stream it
 * started with; always kept for the log.  Never touches errno. */
void iochar_warn_once(enum iochar_warning key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Snapshot fd 2; launcher_rank (the launcher's environment: runtime/config.c
 * reads it, above this file) > 0 is an MPI rank > 0.  Called first thing at
 * initialisation. */
void iochar_warn_init(int launcher_rank);
/* Keys raised in this process (bit per enum iochar_warning). */
uint64_t iochar_warned(void);
/* This process's warnings, one per line, no prefix; "" when none. */
const char *iochar_warnings_text(void);
/* Keep a line for the log without printing it (another rank's warning). */
void iochar_warn_keep(const char *line);
/* What a report says for a key raised on another rank. */
const char *iochar_warn_describe(enum iochar_warning key);
/* Set once the MPI rank is known: rank > 0 prints nothing. */
void iochar_warn_set_rank(int rank);

#endif
