/* The POSIX module's private interface: its layout, the path-to-record step
 * and the metadata record step its four wrapper files share (posix.c: the
 * module, open/creat/openat, close, dup, fcntl, the working directory;
 * posix_rw.c: read/write and their positioned, vector and fortified forms;
 * posix_meta.c: offsets, sync, truncate, mmap, the stat family and path
 * calls; posix_aio.c: POSIX asynchronous I/O).  posix_xfer.c stands apart
 * (it reaches the layout through iochar_posix_layout). */
#ifndef IOCHAR_POSIX_INTERNAL_H
#define IOCHAR_POSIX_INTERNAL_H

#include <fcntl.h>
#include <string.h>

#include "../runtime/access.h"
#include "../runtime/interpose.h"
#include "../runtime/lifecycle.h"
#include "posix_counters.h"

/* A constant in each file, so the inlined accounting folds its lookups
 * (runtime/core.h); the module definition (posix.c) points at its copy. */
static const iochar_rw_layout layout = POSIX_RW_LAYOUT;

/* ---- record steps (called with iochar_in_tool set) ---------------------- */

/* Each thread remembers the last path it named (from the working directory)
 * and its record, NULL when excluded: a loop that opens or stats one file
 * again and again skips resolving, checking and hashing the path.  Records
 * live as long as the process, so the pointer stays good. */
typedef struct posix_last_path {
  iochar_record *rec;
  unsigned cwd_gen; /* for a relative path: the working directory it meant */
  int valid;
  char path[240];
} posix_last_path;

#pragma GCC visibility push(hidden)
extern __thread posix_last_path last_path __attribute__((tls_model("initial-exec")));
/* A name other than the last (posix.c). */
iochar_record *path_record_lookup(int dirfd, const char *path, int cacheable, unsigned gen);
#pragma GCC visibility pop

static inline iochar_record *path_record(int dirfd, const char *path) {
  unsigned gen = atomic_load_explicit(&iochar_cwd_gen, memory_order_acquire);
  int cacheable = dirfd == AT_FDCWD || path[0] == '/';
  if (cacheable && last_path.valid && (path[0] == '/' || last_path.cwd_gen == gen) &&
      strcmp(path, last_path.path) == 0)
    return last_path.rec;
  return path_record_lookup(dirfd, path, cacheable, gen);
}

/* Metadata call on a tracked record: bump counter idx and meta time. */
static inline void record_meta(iochar_record *r, int idx, double t0, double t1) {
  iochar_meta_event(r, &layout, idx, -1, -1, t0, t1);
}
/* The same inside the caller's bracket (core.h): the seek step. */
static inline void record_meta_in(iochar_record *r, int idx, double t0, double t1) {
  iochar_meta_event_in(r, &layout, idx, -1, -1, t0, t1);
}

#endif
