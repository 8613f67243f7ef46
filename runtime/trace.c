/* The opt-in trace: one row per observed call in a fixed buffer; the first
 * rows are kept, later ones are counted as dropped (job partial bit 4). */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "log_buf.h"
#include "trace.h"
#include "warn.h"

int iochar_trace_on;

static iochar_trace_row *rows;
static uint64_t cap;              /* rows that fit in IOCHAR_TRACE_MEMORY */
static _Atomic uint64_t next_row; /* rows claimed (may pass cap) */
static _Atomic uint64_t dropped;
static unsigned thread_gen = 1; /* bumped in a fork child: re-read tids */
static __thread uint32_t my_tid __attribute__((tls_model("initial-exec")));
static __thread unsigned my_gen __attribute__((tls_model("initial-exec")));

int iochar_trace_init(uint64_t bytes) {
  cap = bytes / sizeof(iochar_trace_row);
  if (!cap) return 0; /* a zero-row trace: everything is dropped, honestly */
  /* NORESERVE: pages are committed as rows are written, never before. */
  void *p = mmap(NULL, cap * sizeof(iochar_trace_row), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    iochar_warn_once(IOCHAR_WARN_TRACE_MEMORY,
                     "cannot reserve %llu bytes of trace memory; no trace",
                     (unsigned long long)bytes);
    return -1;
  }
  rows = p;
  return 0;
}

void iochar_trace_reset(void) {
  if (rows) memset(rows, 0, (size_t)(cap < next_row ? cap : next_row) * sizeof *rows);
  atomic_store(&next_row, 0);
  atomic_store(&dropped, 0);
  thread_gen++;
}

/* The OS thread id, one gettid per thread (and per fork). */
static uint32_t thread_id(void) {
  if (__builtin_expect(my_gen != thread_gen, 0)) {
    my_tid = (uint32_t)syscall(SYS_gettid);
    my_gen = thread_gen;
  }
  return my_tid;
}

/* Lock-free: a row is claimed by one fetch_add, filled, then published. */
void iochar_trace_note(iochar_record *r, int op, int64_t off, int64_t len, double t0, double t1) {
  uint64_t i = atomic_fetch_add_explicit(&next_row, 1, memory_order_relaxed);
  if (i >= cap) {
    if (atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed) == 0)
      __atomic_fetch_or(&iochar_job_info.partial, IOCHAR_PARTIAL_TRACE_TRUNCATED, __ATOMIC_RELAXED);
    return;
  }
  iochar_trace_row *w = &rows[i];
  w->record_id = r->id;
  w->offset = off;
  w->length = len;
  w->start = t0;
  w->end = t1;
  w->thread = thread_id();
  w->module = r->module;
  w->op = (uint8_t)op;
  __atomic_store_n(&w->flags, 1, __ATOMIC_RELEASE);
}

/* Layout in docs/log-format.md (TRACE): header, module names, rows. */
int iochar_trace_sections(iochar_buf *out, int *nsections) {
  uint64_t n = atomic_load(&next_row), kept = 0;
  if (n > cap) n = cap;
  iochar_buf b = {0};
  uint64_t lost = atomic_load(&dropped);
  for (uint64_t i = 0; i < n; i++) /* rows still being filled count as dropped */
    if (!__atomic_load_n(&rows[i].flags, __ATOMIC_ACQUIRE)) lost++;
  iochar_buf_u64(&b, lost);
  iochar_buf_u32(&b, sizeof(iochar_trace_row));
  iochar_buf_u32(&b, IOCHAR_MOD_COUNT);
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) {
    const char *name = iochar_modules[m] ? iochar_modules[m]->name : "";
    iochar_buf_u16(&b, (uint16_t)strlen(name));
    iochar_buf_put(&b, name, strlen(name));
  }
  for (uint64_t i = 0; i < n; i++) {
    if (!__atomic_load_n(&rows[i].flags, __ATOMIC_ACQUIRE)) continue;
    iochar_trace_row w = rows[i];
    w.start += iochar_ts_shift;
    w.end += iochar_ts_shift;
    w.rank = iochar_job_info.rank;
    w.flags = 0;
    w.reserved = 0;
    iochar_buf_put(&b, &w, sizeof w);
    kept++;
  }
  if (lost)
    __atomic_fetch_or(&iochar_job_info.partial, IOCHAR_PARTIAL_TRACE_TRUNCATED, __ATOMIC_RELAXED);
  int rc = b.failed || kept > UINT32_MAX
               ? -1
               : iochar_section_add(out, "TRACE", NULL, (uint32_t)kept, b.p, b.len);
  iochar_buf_free(&b);
  if (rc) return -1;
  (*nsections)++;
  return 0;
}
