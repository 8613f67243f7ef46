/* The observers behind iochar_observe (runtime/access.h): call sites and the
 * trace, turned on at start-up (runtime/observe.c). */
#ifndef IOCHAR_OBSERVE_H
#define IOCHAR_OBSERVE_H

#include "core.h"

/* Read IOCHAR_CALLSITES / IOCHAR_TRACE*, set iochar_observing and the extra
 * sections hook (from iochar_init, after the records). */
void iochar_observe_init(void);

#pragma GCC visibility push(hidden)
/* Optional observers (call sites, trace): off unless enabled at start-up.
 * op: 0 read, 1 write, 2 metadata; called with r->lock held. */
extern int iochar_observing;
void iochar_observe(iochar_record *r, int op, int64_t off, int64_t len, double t0, double t1);
#pragma GCC visibility pop

#endif
