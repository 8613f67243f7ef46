/* The JOB `partial` bits (docs/log-format.md), declared once: C uses the
 * enum below; reports/iochar/flags.py holds the same table for Python and
 * tests/unit/test_flags.py checks the two agree. */
#ifndef IOCHAR_FLAGS_H
#define IOCHAR_FLAGS_H

// clang-format off
#define IOCHAR_PARTIAL_FLAGS(X)                                                               \
  X(FOLDED, 1)            /* memory bound reached: files folded into aggregate records */     \
  X(PER_RANK, 2)          /* a per-rank log: no MPI_Finalize, or a rank left the reduction */ \
  X(TRACE_TRUNCATED, 4)   /* the trace kept its first rows only */                            \
  X(RECOVERED, 8)         /* recovered from a live file: the process wrote no log */          \
  X(MISSING_RANKS, 16)    /* merged per-rank logs lack some ranks (missing_ranks) */          \
  X(IO_URING, 32)         /* an io_uring was set up: its I/O is in no counter */              \
  X(SHARED_MMAP, 64)      /* a file mapped shared and writable: stores are in no counter */   \
  X(TRUNCATED_PATHS, 128) /* names longer than the path limit, recorded truncated */    \
  X(RANKS_LEFT_OUT, 512)  /* IOCHAR_RANKS(_EXCLUDE): some ranks' records not kept */
// clang-format on

#define IOCHAR_PARTIAL_ENUM_(name, bit) IOCHAR_PARTIAL_##name = bit,
enum iochar_partial { IOCHAR_PARTIAL_FLAGS(IOCHAR_PARTIAL_ENUM_) };
#undef IOCHAR_PARTIAL_ENUM_

#endif
