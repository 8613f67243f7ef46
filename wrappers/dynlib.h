/* Run-time resolution for libraries the tool does not link (HDF5, NetCDF,
 * PnetCDF), including private copies loaded RTLD_LOCAL by Python wheels. */
#ifndef IOCHAR_DYNLIB_H
#define IOCHAR_DYNLIB_H

#include <stdatomic.h>
#include <stdint.h>

#include "../runtime/core.h"
#include "../runtime/lifecycle.h"

/* One loaded copy of a library: h5py and netCDF4 each bundle their own
 * libhdf5, so a process may hold several.  Handles (hid_t, ncid) belong to one
 * copy; the helper calls the tool makes on a handle go to that same copy. */
typedef struct iochar_dlinst {
  void *handle;   /* dlopen(RTLD_NOLOAD) of the defining object */
  uintptr_t base; /* its load address: the copy's identity */
  uint64_t salt;  /* mixed into handle-map keys so copies' ids never collide */
  struct iochar_dlinst *next;
  void *_Atomic fn[]; /* resolved on first use; IOCHAR_DL_MISSING when absent */
} iochar_dlinst;

#define IOCHAR_DL_CACHE 256

/* Per wrapped library: its function names (one X-macro list) and the copies. */
typedef struct iochar_dlset {
  const char *what; /* "HDF5", for the warning */
  const char *const *names;
  int n;
  iochar_dlinst *_Atomic global; /* the copy in the global scope, if any */
  iochar_spin lock;
  iochar_dlinst *list;
  int ninst;
  struct {
    const void *ra;
    iochar_dlinst *inst;
  } cache[IOCHAR_DL_CACHE]; /* caller return address -> copy it binds to */
} iochar_dlset;

iochar_dlinst *iochar_dl_slow(iochar_dlset *S, int fi, const void *ra);

/* The copy that a call to function fi from return address ra would have
 * reached without the tool: the global one when there is one (the dynamic
 * linker searches the global scope first), else the one in the caller's own
 * dependency tree.  NULL when neither has the function. */
static inline iochar_dlinst *iochar_dl_instance(iochar_dlset *S, int fi, const void *ra) {
  iochar_dlinst *g = atomic_load_explicit(&S->global, memory_order_acquire);
  return g ? g : iochar_dl_slow(S, fi, ra);
}

/* Function fi of copy I, or NULL when that copy does not have it (a
 * version-specific call, e.g. H5Dread_async before HDF5 1.13). */
void *iochar_dl_fn_slow(iochar_dlset *S, iochar_dlinst *I, int fi);
static inline void *iochar_dl_fn(iochar_dlset *S, iochar_dlinst *I, int fi) {
  void *p = atomic_load_explicit(&I->fn[fi], memory_order_relaxed);
  if (__builtin_expect(p == 0, 0)) p = iochar_dl_fn_slow(S, I, fi);
  return p == (void *)1 ? 0 : p;
}

/* The copy whose real function this thread is inside (innermost).  A real
 * function that tail-calls another wrapped function leaves a return address
 * inside the tool; that call belongs to the tree of this copy. */
extern __thread iochar_dlinst *iochar_dl_current;
static inline iochar_dlinst *iochar_dl_enter(iochar_dlinst *I) {
  iochar_dlinst *outer = iochar_dl_current;
  iochar_dl_current = I;
  return outer;
}
static inline void iochar_dl_leave(iochar_dlinst *outer) { iochar_dl_current = outer; }

/* Handle-map key of id in copy I. */
static inline uint64_t iochar_dl_key(const iochar_dlinst *I, uint64_t id) { return id ^ I->salt; }

/* One wrapped call into such a library, around the real call:
 *
 *   iochar_dlcall c;
 *   __typeof__(&f) real = iochar_dlcall_begin(&c, &set, FN_f, __builtin_return_address(0),
 *                                             &depth);
 *   if (!real) return <the library's "not available" error>;
 *   int ret = real(args);
 *   if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_step(c.I, ret, ..., c.t0, c.t1));
 *   return ret;
 *
 * begin finds the copy the caller binds to and its real function (NULL: none),
 * and starts the clock unless the tool is not recording or the call is nested
 * in another of the library's wrapped calls (*depth, per thread); end stops
 * it and says whether to record. */
typedef struct iochar_dlcall {
  iochar_dlinst *I, *outer;
  int *depth; /* non-NULL: this call is recorded */
  double t0, t1;
} iochar_dlcall;
static inline void *iochar_dlcall_begin(iochar_dlcall *c, iochar_dlset *S, int fi, const void *ra,
                                        int *depth) {
  c->I = iochar_dl_instance(S, fi, ra);
  void *real = c->I ? iochar_dl_fn(S, c->I, fi) : NULL;
  if (!real) return NULL;
  c->outer = iochar_dl_enter(c->I);
  c->depth = iochar_active() && !*depth ? depth : NULL;
  if (c->depth) {
    (*depth)++;
    c->t0 = iochar_now();
  }
  return real;
}
static inline int iochar_dlcall_end(iochar_dlcall *c) {
  if (c->depth) {
    c->t1 = iochar_now();
    (*c->depth)--;
  }
  iochar_dl_leave(c->outer);
  return c->depth != NULL;
}

/* Declaration helpers for a module's function list. */
#define IOCHAR_DL_ENUM(name) FN_##name,
#define IOCHAR_DL_NAME(name) #name,

#endif
