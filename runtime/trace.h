/* The bounded trace (runtime/trace.c): one row per call, the log's TRACE
 * section. */
#ifndef IOCHAR_TRACE_H
#define IOCHAR_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

struct iochar_buf;

#define IOCHAR_TRACE_DEFAULT (8u << 20)

/* One TRACE row (56 bytes); see docs/log-format.md. */
typedef struct iochar_trace_row {
  uint64_t record_id;
  int64_t offset, length;
  double start, end;
  int32_t rank;
  uint32_t thread;
  uint16_t module;
  uint8_t op;
  uint8_t flags; /* in memory: 1 once the row is complete; 0 in the log */
  uint32_t reserved;
} iochar_trace_row;
_Static_assert(sizeof(iochar_trace_row) == 56, "TRACE row is 56 bytes");

int iochar_trace_init(uint64_t bytes);
void iochar_trace_note(iochar_record *r, int op, int64_t off, int64_t len, double t0, double t1);
void iochar_trace_reset(void); /* fork child */
/* This process's TRACE section (any rank; rank in the rows). */
int iochar_trace_sections(struct iochar_buf *out, int *nsections);

/* 1 once the trace is on (runtime/observe.c sets it). */
extern int iochar_trace_on;

#endif
