/* The record table's life (runtime/records.c): set-up, reset, the live file
 * behind it, and what the log and the reduction read from it.  The hot
 * lookups are core.h's. */
#ifndef IOCHAR_RECORDS_H
#define IOCHAR_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

int iochar_records_init(void);
void iochar_records_reset(void);
void iochar_records_lock(void);
void iochar_records_unlock(void);
int iochar_record_touched(const iochar_record *r);
int iochar_records_any_touched(void);
/* The record memory into a fresh live file (runtime/live.c): again, for a
 * fork child or after a failed exec; now, at MPI_Init. */
void iochar_records_live_again(void);
void iochar_records_live_now(void);
/* The distinct folded (id, module) pairs of this process (at most max), and
 * per module how many of its folded_files they are (the rest were counted
 * once the set was full, maybe twice). */
size_t iochar_folded_keys(uint64_t *ids, int *mods, size_t max, int64_t in_set[]);

#endif
