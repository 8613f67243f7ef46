/* Names to absolute paths (runtime/paths.c): the cwd, the resolve, and the
 * note on the last name resolved. */
#ifndef IOCHAR_PATHS_H
#define IOCHAR_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* The cwd, read at start-up (then iochar_exclude_init: runtime/exclude.c). */
int iochar_paths_init(void);
/* What iochar_path_resolve found out about the name it left in buf (the
 * caller's output), so that the steps after it (exclusion, record id,
 * mount) need not walk the name again: a new file's cost is per byte.
 * Every resolve resets it; a user checks buf (and len, which a later
 * string in the same buffer would not share) before trusting the rest. */
typedef struct iochar_path_note {
  const char *buf;
  size_t len;    /* strlen(buf) */
  size_t dlen;   /* offset of the last '/': the directory's length */
  uint64_t id;   /* the record id: FNV-1a of the whole name */
  int trunc;     /* buf holds only the first bytes of a longer name */
  int byte_code; /* the directory is, or is inside, a __pycache__ */
  /* The directory, as a number: two notes of one thread with the same
   * nonzero dir_seq name the same directory (0: not numbered), so a cache
   * keyed by directory (runtime/mounts.c) can hit without a compare. */
  uint64_t dir_seq;
} iochar_path_note;
extern __thread iochar_path_note iochar_path_last;
/* The note on abs, or NULL when it describes another name. */
static inline const iochar_path_note *iochar_path_note_of(const char *abs) {
  const iochar_path_note *n = &iochar_path_last;
  return n->buf == abs && abs[n->len] == 0 && abs[n->dlen] == '/' ? n : NULL;
}

/* A record's name (a truncated one: the first bytes, then IOCHAR_TRUNC_MARK). */
static inline const char *iochar_record_path(const iochar_record *r) {
  if (__builtin_expect(r->flags & IOCHAR_REC_META, 0))
    return (const char *)(((const iochar_meta_entry *)r)->c + iochar_meta_count[r->module]);
  const iochar_module *m = iochar_modules[r->module];
  return (const char *)(r->c + m->n_int + m->n_flt);
}

#endif
