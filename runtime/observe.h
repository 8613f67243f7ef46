/* The observers behind iochar_observe (runtime/access.h): call sites and the
 * trace, turned on at start-up (runtime/observe.c). */
#ifndef IOCHAR_OBSERVE_H
#define IOCHAR_OBSERVE_H

/* Read IOCHAR_CALLSITES / IOCHAR_TRACE*, set iochar_observing and the extra
 * sections hook (from iochar_init, after the records). */
void iochar_observe_init(void);

#endif
