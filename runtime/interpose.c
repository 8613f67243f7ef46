/* Resolving the real functions behind the wrappers (interpose.h). */
#include <dlfcn.h>

#include "interpose.h"

#include "warn.h"

void *iochar_resolve(const char *name, const void *self) {
  void *p = dlsym(RTLD_NEXT, name);
  if (!p || p == self) p = dlsym(RTLD_DEFAULT, name);
  if (p == self) p = NULL;
  if (!p)
    iochar_warn_once(IOCHAR_WARN_SYMBOL, "cannot find the real %s; not intercepting it", name);
  return p;
}
