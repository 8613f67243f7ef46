/* Finds, per caller, the copy of a library the caller would have bound to. */
#include "dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "../runtime/warn.h"

__thread iochar_dlinst *iochar_dl_current __attribute__((tls_model("initial-exec")));

static uintptr_t own_base(void) {
  static uintptr_t base;
  if (!base) {
    Dl_info di;
    if (dladdr((void *)&own_base, &di)) base = (uintptr_t)di.dli_fbase;
  }
  return base;
}

/* p is usable when it exists and is not one of our own wrappers. */
static int foreign(const void *p) {
  Dl_info di;
  if (!p) return 0;
  if (!dladdr(p, &di)) return 1;
  return (uintptr_t)di.dli_fbase != own_base();
}

/* The copy that defines p, registered on first sight (caller holds S->lock). */
static iochar_dlinst *inst_for(iochar_dlset *S, const void *p) {
  Dl_info di;
  if (!dladdr(p, &di)) return NULL;
  for (iochar_dlinst *I = S->list; I; I = I->next)
    if (I->base == (uintptr_t)di.dli_fbase) return I;
  iochar_dlinst *I = calloc(1, sizeof *I + sizeof(void *) * (size_t)S->n);
  if (!I) return NULL;
  I->base = (uintptr_t)di.dli_fbase;
  /* A library linked into the executable has no name to open: search
   * everything after us instead. */
  I->handle =
      di.dli_fname && di.dli_fname[0] ? dlopen(di.dli_fname, RTLD_NOLOAD | RTLD_LAZY) : NULL;
  if (!I->handle) I->handle = RTLD_NEXT;
  I->salt = S->ninst ? 0x9E3779B97F4A7C15ULL * (uint64_t)S->ninst : 0;
  S->ninst++;
  I->next = S->list;
  S->list = I;
  return I;
}

iochar_dlinst *iochar_dl_slow(iochar_dlset *S, int fi, const void *ra) {
  size_t slot = ((uintptr_t)ra >> 2) % IOCHAR_DL_CACHE;
  iochar_spin_lock(&S->lock);
  if (S->cache[slot].ra == ra && S->cache[slot].inst) {
    iochar_dlinst *I = S->cache[slot].inst;
    iochar_spin_unlock(&S->lock);
    return I;
  }
  iochar_spin_unlock(&S->lock);

  int e = errno;
  iochar_in_tool++;
  const char *name = S->names[fi];
  iochar_dlinst *I = NULL;
  int global = 0;
  void *p = dlsym(RTLD_NEXT, name);
  if (foreign(p)) {
    global = 1;
  } else { /* a private copy: search the caller's own dependency tree */
    Dl_info di;
    p = NULL;
    int ours = dladdr(ra, &di) && (uintptr_t)di.dli_fbase == own_base();
    if (ours) { /* tail call out of a real function: that copy's tree */
      if (iochar_dl_current) p = dlsym(iochar_dl_current->handle, name);
      ra = NULL; /* depends on the context, not the site: do not cache */
    } else if (di.dli_fname) {
      void *h = dlopen(di.dli_fname[0] ? di.dli_fname : NULL, RTLD_NOLOAD | RTLD_LAZY);
      if (h) {
        p = dlsym(h, name);
        dlclose(h);
      }
    }
    if (!foreign(p)) p = NULL;
  }
  iochar_spin_lock(&S->lock);
  if (p) I = inst_for(S, p);
  if (I && global) atomic_store_explicit(&S->global, I, memory_order_release);
  if (I && ra) {
    S->cache[slot].ra = ra;
    S->cache[slot].inst = I;
  }
  iochar_spin_unlock(&S->lock);
  if (!I)
    iochar_warn_once(IOCHAR_WARN_LIB_SYMBOL, "cannot find the real %s library function %s", S->what,
                     name);
  iochar_in_tool--;
  errno = e;
  return I;
}

void *iochar_dl_fn_slow(iochar_dlset *S, iochar_dlinst *I, int fi) {
  int e = errno;
  iochar_in_tool++;
  void *p = dlsym(I->handle, S->names[fi]);
  if (!foreign(p)) p = (void *)1;
  atomic_store_explicit(&I->fn[fi], p, memory_order_relaxed);
  iochar_in_tool--;
  errno = e;
  return p;
}
