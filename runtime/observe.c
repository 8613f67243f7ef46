/* The observers behind iochar_observe (runtime/access.h): call sites and the
 * bounded trace, both off unless IOCHAR_CALLSITES / IOCHAR_TRACE ask for them. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "callsites.h"
#include "config.h"
#include "core.h"
#include "log_buf.h"
#include "observe.h"
#include "trace.h"

/* Strong definition of the hook (access.c has the weak no-op).  Called with
 * r->lock held, so it only touches its own per-thread and atomic state. */
int iochar_observing;

void iochar_observe(iochar_record *r, int op, int64_t off, int64_t len, double t0, double t1) {
  int saved = errno; /* the data path leaves errno to its rare steps (wrappers/posix_rw.c) */
  if (iochar_callsites_on) iochar_callsites_note(r, op, len, t0, t1);
  if (iochar_trace_on) iochar_trace_note(r, op, off, len, t0, t1);
  errno = saved;
}

/* The serial (and per-rank fallback) log: local call sites, this trace.  The
 * MPI reducer calls iochar_callsites_mpi_sections + iochar_trace_sections. */
static int local_sections(iochar_buf *out, int *nsections) {
  if (iochar_callsites_on && iochar_callsites_sections(out, nsections)) return -1;
  if (iochar_trace_on && iochar_trace_sections(out, nsections)) return -1;
  return 0;
}

static void at_fork_child(void) {
  if (iochar_callsites_on) iochar_callsites_reset();
  if (iochar_trace_on) iochar_trace_reset();
}

void iochar_observe_init(void) {
  if (iochar_envs.callsites) {
    const char *v = iochar_envs.callsites_sample; /* 1..65535 (runtime/config.c) */
    int every = v ? atoi(v) : IOCHAR_CS_SAMPLE;
    iochar_callsites_on = iochar_callsites_init(every) == 0;
  }
  if (iochar_envs.trace) {
    const char *v = iochar_envs.trace_memory; /* a size (runtime/config.c) */
    uint64_t bytes = v ? iochar_parse_size(v) : IOCHAR_TRACE_DEFAULT;
    iochar_trace_on = iochar_trace_init(bytes) == 0;
  }
  if (!iochar_callsites_on && !iochar_trace_on) return;
  iochar_extra_sections = local_sections;
  pthread_atfork(NULL, NULL, at_fork_child);
  __atomic_store_n(&iochar_observing, 1, __ATOMIC_RELEASE);
}
