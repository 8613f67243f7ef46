/* Interceptor declaration: one macro defines the real-function pointer and the
 * wrapper together; the real symbol is resolved lazily, never to ourselves. */
#ifndef IOCHAR_INTERPOSE_H
#define IOCHAR_INTERPOSE_H

#include <errno.h>

#include "core.h"

/* Find `name` in the objects loaded after us (or, failing that, anywhere but
 * here); NULL and one `iochar:` line when it does not exist. */
void *iochar_resolve(const char *name, const void *self);

/* IOCHAR_WRAP(ret, name, (params)) { ... body using IOCHAR_REAL(name) ... } */
#define IOCHAR_WRAP(ret, name, params)  \
  static __typeof__(&name) real_##name; \
  __attribute__((visibility("default"))) ret name params

#define IOCHAR_REAL(name)                                                                \
  ({                                                                                     \
    if (__builtin_expect(real_##name == 0, 0))                                           \
      real_##name = (__typeof__(real_##name))iochar_resolve(#name, (const void *)&name); \
    real_##name;                                                                         \
  })

/* Run the record step with the caller's errno preserved and re-entry blocked. */
#define IOCHAR_RECORD(stmt)   \
  do {                        \
    int saved_errno_ = errno; \
    iochar_in_tool++;         \
    stmt;                     \
    iochar_in_tool--;         \
    errno = saved_errno_;     \
  } while (0)

#endif
