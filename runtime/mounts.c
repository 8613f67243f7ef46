/* Which mount holds a path: longest matching mount point, whole components
 * only, with a per-thread cache of the last directory (the table itself is
 * read by paths.c at the first lookup and never changes after). */
#include <string.h>

#include "internal.h"
#include "lustre.h"

static int mount_scan(const iochar_mount *mounts, int nmounts, const char *abs) {
  int best = -1;
  size_t best_len = 0;
  for (int i = 0; i < nmounts; i++) {
    size_t l = mounts[i].len;
    if (l < best_len || strncmp(abs, mounts[i].point, l) != 0) continue;
    if (l > 1 && abs[l] != '/' && abs[l] != 0) continue;
    best = i;
    best_len = l;
  }
  return best;
}

/* The last directory this thread looked up and its mount: files of one
 * directory (the common case: a job's outputs) then cost one compare instead
 * of a scan of every mount point (~20 strncmp, 500-1000 instructions per new
 * file).  Only a directory no mount point sits directly in is cached, so any
 * file in it is on the directory's mount; the table never changes once
 * read. */
#define DIR_CACHE 240
static __thread struct {
  char dir[DIR_CACHE];
  size_t len;
  int mount;
  uint64_t seq; /* the directory's number in the path notes (paths.c), 0: none */
} last_dir __attribute__((tls_model("initial-exec")));

int iochar_mount_find(const char *abs) {
  const iochar_path_note *no = iochar_path_note_of(abs); /* resolve found the '/' */
  /* the directory resolve numbered is the one cached: no compare (the
   * table was read before anything was cached) */
  if (no && no->dir_seq && no->dir_seq == last_dir.seq) return last_dir.mount;
  const iochar_mount *mounts;
  int nmounts = iochar_mounts(&mounts);
  const char *slash = no ? abs + no->dlen : strrchr(abs, '/');
  size_t dlen = slash ? (size_t)(slash - abs) : 0;
  if (dlen && dlen < DIR_CACHE && last_dir.len == dlen && memcmp(last_dir.dir, abs, dlen) == 0) {
    if (no) last_dir.seq = no->dir_seq; /* without a note the number still names it */
    return last_dir.mount;
  }
  int best = mount_scan(mounts, nmounts, abs);
  if (!dlen || dlen >= DIR_CACHE) return best;
  for (int i = 0; i < nmounts; i++) /* a mount point dir/NAME: do not cache dir */
    if (mounts[i].len > dlen && memcmp(mounts[i].point, abs, dlen) == 0 &&
        mounts[i].point[dlen] == '/' && !strchr(mounts[i].point + dlen + 1, '/'))
      return best;
  memcpy(last_dir.dir, abs, dlen);
  last_dir.len = dlen, last_dir.mount = best, last_dir.seq = no ? no->dir_seq : 0;
  return best;
}

int iochar_mount_find_id(const char *abs, uint64_t id) {
  /* the last name resolved on this thread, still in the cache: a file's
   * first open, right after its lookup, skips the directory compare */
  const iochar_path_note *no = &iochar_path_last;
  if (no->id == id && no->dir_seq && no->dir_seq == last_dir.seq) return last_dir.mount;
  return iochar_mount_find(abs);
}

const char *iochar_fs_type(const char *abs) {
  const iochar_mount *m;
  iochar_mounts(&m);
  int i = iochar_mount_find(abs);
  return i < 0 ? "" : m[i].type;
}

/* Most machines have no Lustre mount: then no file is on one, and a file's
 * first open need not look its mount up (the table never changes). */
int iochar_any_lustre = -1; /* racing first callers store the same value */

int iochar_on_lustre_lookup(const char *abs) {
  if (__atomic_load_n(&iochar_any_lustre, __ATOMIC_RELAXED) < 0) {
    const iochar_mount *m;
    int n = iochar_mounts(&m), a = 0;
    for (int i = 0; i < n; i++) a |= strcmp(m[i].type, "lustre") == 0;
    __atomic_store_n(&iochar_any_lustre, a, __ATOMIC_RELAXED);
    if (!a) return 0;
  }
  return strcmp(iochar_fs_type(abs), "lustre") == 0;
}
