/* The fast rule's set-up and fork (runtime/fastrule.c); its hot part, and
 * iochar_thread_enter, are core.h's. */
#ifndef IOCHAR_FASTRULE_H
#define IOCHAR_FASTRULE_H

/* The one-thread rule for the fast steps too (observers on).  From
 * iochar_init, while the process still has one thread and none entered. */
void iochar_fast_rule_off(void);
/* A fork child's one thread owns the mode again (or it locks for good). */
void iochar_fast_mode_child(void);

#endif
