/* Which mount holds a path: longest matching mount point, whole components
 * only, with a per-thread cache of the last directory; the table itself,
 * read at the first lookup and never changed after, and the block sizes it
 * tells. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "lustre.h"
#include "mounts.h"
#include "paths.h"

#define MAX_MOUNTS 256

static iochar_mount mounts[MAX_MOUNTS];
static int nmounts;

/* /proc/self/mounts escapes blanks as \040 etc. */
static void unescape(char *s) {
  char *o = s;
  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else {
      *o++ = *s;
    }
  }
  *o = 0;
}

/* The mount table, read at the first question about it (a process's first
 * file, or its log): a process that opens nothing never reads it.  Read
 * with plain system calls into one block (no stdio, one allocation); the
 * table never changes after. */
static void mounts_load(void) {
  iochar_in_tool++;
  int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/mounts", O_RDONLY | O_CLOEXEC);
  size_t cap = 16384, len = 0;
  char *buf = fd >= 0 ? malloc(cap) : NULL;
  for (ssize_t r = 1; buf && r > 0;) {
    if (len + 1 == cap) {
      char *b = realloc(buf, cap *= 2);
      if (!b) break;
      buf = b;
    }
    r = syscall(SYS_read, fd, buf + len, cap - 1 - len);
    if (r > 0) len += (size_t)r;
  }
  if (fd >= 0) syscall(SYS_close, fd);
  if (buf) buf[len] = 0;
  for (char *line = buf, *next; line && *line && nmounts < MAX_MOUNTS; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    char *save, *dev = strtok_r(line, " ", &save);
    char *point = strtok_r(NULL, " ", &save);
    char *type = strtok_r(NULL, " ", &save);
    if (!dev || !point || !type) continue;
    unescape(point);
    iochar_mount *m = &mounts[nmounts++];
    m->point = point; /* inside buf, kept for the process's life */
    m->type = type;
    m->len = strlen(point);
    m->blksize_uniform = !strcmp(type, "ext4") || !strcmp(type, "ext3") || !strcmp(type, "ext2");
  }
  iochar_in_tool--;
}

int iochar_mounts(const iochar_mount **out) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, mounts_load);
  *out = mounts;
  return nmounts;
}

/* The block size of mount best (statfs, once), or of abs on no mount. */
static inline int64_t mount_block_size(int best, const char *abs) {
  if (best < 0) {
    struct statfs sf;
    return statfs(abs, &sf) == 0 ? (int64_t)sf.f_bsize : 0;
  }
  iochar_mount *m = &mounts[best];
  int64_t bs = __atomic_load_n(&m->block_size, __ATOMIC_RELAXED);
  if (!bs) {
    struct statfs sf;
    if (statfs(m->point, &sf) == 0) bs = (int64_t)sf.f_bsize;
    __atomic_store_n(&m->block_size, bs, __ATOMIC_RELAXED);
  }
  return bs;
}

/* The block size of the last directory asked about, by its number in the
 * path notes: the next new name in it (a new name's FILE_ALIGNMENT, wrappers/
 * posix.c) costs one compare instead of the mount lookup.  Not kept for a
 * directory that holds a mount point (a name there may be on that mount). */
static __thread struct {
  uint64_t seq;
  int64_t bs;
} dir_bs __attribute__((tls_model("initial-exec")));

static int mount_point_in(const char *dir, size_t dlen) {
  for (int i = 0; i < nmounts; i++)
    if (mounts[i].len > dlen && mounts[i].point[dlen] == '/' &&
        memcmp(mounts[i].point, dir, dlen) == 0)
      return 1;
  return 0;
}

int64_t iochar_fs_block_size(const char *abs) {
  const iochar_path_note *no = iochar_path_note_of(abs);
  if (no && no->dir_seq && no->dir_seq == dir_bs.seq) return dir_bs.bs;
  int64_t bs = mount_block_size(iochar_mount_find(abs), abs); /* the table read */
  if (no && no->dir_seq && bs > 0 && !mount_point_in(abs, no->dlen))
    dir_bs.seq = no->dir_seq, dir_bs.bs = bs;
  return bs;
}

/* On ext2/3/4 every file's st_blksize is the superblock's block size, the
 * mount's statfs f_bsize (their getattr sets it from the inode's block bits,
 * those of the file system); elsewhere (xfs extent hints, tmpfs huge pages,
 * Lustre layouts, NFS) it may differ per file and only an fstat tells. */
int64_t iochar_fs_file_blksize(const char *abs, uint64_t id) {
  int best = iochar_mount_find_id(abs, id);
  return best >= 0 && mounts[best].blksize_uniform ? mount_block_size(best, abs) : 0;
}

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
