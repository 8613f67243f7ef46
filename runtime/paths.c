/* Path normalisation, exclusion prefixes, record ids, and the mount table. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "internal.h"

#define MAX_MOUNTS 256

/* The working directory can be deeper than IOCHAR_PATH_MAX (chdir one
 * level at a time); names under it are recorded truncated, so keep it all. */
#define CWD_MAX (32u << 10)
static char cwd[CWD_MAX];
static size_t cwd_len;
static iochar_spin cwd_lock;
static iochar_mount mounts[MAX_MOUNTS];
static int nmounts;
static char log_path_excl[IOCHAR_PATH_MAX];
static size_t log_path_excl_len;

#define FNV_BASIS 0xcbf29ce484222325ULL
static inline uint64_t fnv(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
  return h;
}

uint64_t iochar_hash_path(const char *s) { return fnv(FNV_BASIS, s, strlen(s)); }

_Atomic unsigned iochar_cwd_gen;
__thread iochar_path_note iochar_path_last __attribute__((tls_model("initial-exec")));

/* The directory of the last name this thread resolved, as it was recorded
 * (clean), with the hash state after it and its '/', and whether it is byte
 * code's: the next name in the same directory (the common case: a job's
 * files) is hashed and checked over its last component only, and needs no
 * cleaning unless that component is "." or "..". */
#define DIR_CACHE 240
static __thread struct {
  char dir[DIR_CACHE];
  size_t len;
  uint64_t h;
  int byte_code, valid;
  uint64_t seq, next_seq; /* seq: dir's number (iochar_path_note.dir_seq) */
} last_dir __attribute__((tls_model("initial-exec")));

void iochar_cwd_changed(void) {
  char buf[IOCHAR_PATH_MAX];
  int ok = getcwd(buf, sizeof buf) != NULL;
  iochar_spin_lock(&cwd_lock);
  if (ok) {
    strcpy(cwd, buf);
  } else if (!getcwd(cwd, sizeof cwd)) { /* deeper than buf: rare, straight in */
    cwd[0] = 0;
  }
  cwd_len = strlen(cwd);
  iochar_spin_unlock(&cwd_lock);
  atomic_fetch_add_explicit(&iochar_cwd_gen, 1, memory_order_release);
}

/* Collapse "//", "/./" and "/../" in place (no symlink resolution: that would
 * cost syscalls per open, and the user named the file this way). */
static void clean(char *p) {
  char *out = p, *in = p;
  while (*in) {
    if (in[0] == '/' && in[1] == '/') {
      in++;
      continue;
    }
    if (in[0] == '/' && in[1] == '.' && (in[2] == '/' || !in[2])) {
      in += 2;
      continue;
    }
    if (in[0] == '/' && in[1] == '.' && in[2] == '.' && (in[3] == '/' || !in[3])) {
      while (out > p && *--out != '/')
        ;
      in += 3;
      continue;
    }
    *out++ = *in++;
  }
  if (out == p) *out++ = '/';
  *out = 0;
}

/* A name that does not fit out (n bytes): base (absolute, clean, "" or "/"
 * for the root) joined with rel, cleaned component by component; out keeps
 * the first n - 1 bytes and iochar_path_trunc the hash of all of them.  A
 * base that is itself a truncated record's name comes with its id (the hash
 * of its whole name, which continues over the rest); ".." cannot climb out
 * of it.  The caller holds whatever lock protects base. */
static int resolve_long(const char *base, size_t blen, const uint64_t *base_id, const char *rel,
                        char *out, size_t n) {
  enum { MAXC = IOCHAR_PATH_MAX / 2 + 1 };
  uint16_t cs[MAXC], cl[MAXC]; /* kept components of rel: start, length */
  size_t nc = 0, up = 0, rlen = strlen(rel);
  if (rlen >= IOCHAR_PATH_MAX || n < 2) return -1; /* no such name reaches the kernel */
  for (size_t i = 0; i < rlen;) {
    while (i < rlen && rel[i] == '/') i++;
    size_t j = i;
    while (j < rlen && rel[j] != '/') j++;
    size_t len = j - i;
    if (len == 0 || (len == 1 && rel[i] == '.')) {
    } else if (len == 2 && rel[i] == '.' && rel[i + 1] == '.') {
      if (nc)
        nc--;
      else
        up++;
    } else {
      cs[nc] = (uint16_t)i, cl[nc++] = (uint16_t)len;
    }
    i = j;
  }
  size_t bl = blen == 1 && base[0] == '/' ? 0 : blen;
  if (base_id && up) return -1;
  for (; up && bl; up--) { /* ".." of the root is the root */
    while (bl > 0 && base[bl - 1] != '/') bl--;
    if (bl > 0) bl--;
  }
  size_t k = n - 1, len = 0;
  uint64_t h = base_id ? *base_id : fnv(FNV_BASIS, base, bl);
  memcpy(out, base, bl < k ? bl : k);
  len = bl;
#define EMIT(p, m)                                                    \
  do {                                                                \
    if (len < k) memcpy(out + len, p, (m) < k - len ? (m) : k - len); \
    len += (m);                                                       \
  } while (0)
  for (size_t c = 0; c < nc; c++) {
    h = fnv(h, "/", 1);
    h = fnv(h, rel + cs[c], cl[c]);
    EMIT("/", 1);
    EMIT(rel + cs[c], cl[c]);
  }
#undef EMIT
  if (len == 0) out[len++] = '/', h = fnv(h, "/", 1);
  if (len <= k && !base_id) { /* cleaning made it fit after all */
    out[len] = 0;
    return 0;
  }
  out[k] = 0;
  const char *slash = strrchr(out, '/');
  iochar_path_last = (iochar_path_note){.buf = out,
                                        .len = k,
                                        .dlen = (size_t)(slash - out),
                                        .id = h,
                                        .trunc = 1,
                                        .byte_code = strstr(out, "/__pycache__/") != NULL};
  return 0;
}

/* out (len bytes, absolute) is the name: clean it, then leave the note. */
static void note_name(char *out, size_t len) {
  const char *slash = memrchr(out, '/', len);
  size_t dlen = slash ? (size_t)(slash - out) : 0;
  const char *name = out + dlen + 1;
  size_t nlen = len - dlen - 1;
  iochar_path_note *no = &iochar_path_last;
  if (last_dir.valid && last_dir.len == dlen && memcmp(last_dir.dir, out, dlen) == 0 && nlen &&
      !(name[0] == '.' && (nlen == 1 || (nlen == 2 && name[1] == '.')))) {
    *no = (iochar_path_note){.buf = out,
                             .len = len,
                             .dlen = dlen,
                             .id = fnv(last_dir.h, name, nlen),
                             .byte_code = last_dir.byte_code,
                             .dir_seq = last_dir.seq};
    return;
  }
  /* most paths need no cleaning: look for "//" or "/." one component at a time */
  for (const char *s = out; (s = strchr(s, '/')) != NULL; s++)
    if (s[1] == '/' || s[1] == '.') {
      clean(out);
      len = strlen(out);
      slash = memrchr(out, '/', len);
      dlen = slash ? (size_t)(slash - out) : 0;
      break;
    }
  uint64_t h = fnv(FNV_BASIS, out, dlen + 1);
  int bc = memmem(out, dlen + 1, "/__pycache__/", 13) != NULL;
  *no = (iochar_path_note){.buf = out,
                           .len = len,
                           .dlen = dlen,
                           .id = fnv(h, out + dlen + 1, len - dlen - 1),
                           .byte_code = bc};
  if (dlen < DIR_CACHE) {
    memcpy(last_dir.dir, out, dlen);
    last_dir.len = dlen, last_dir.h = h, last_dir.byte_code = bc, last_dir.valid = 1;
    no->dir_seq = last_dir.seq = ++last_dir.next_seq; /* a new number for every new content */
  }
}

int iochar_path_resolve(int dirfd, const char *path, char *out, size_t n) {
  iochar_path_last.buf = NULL;
  if (!path || !*path) return -1;
  size_t plen = strlen(path), len = plen;
  if (path[0] == '/') {
    if (plen >= n) return resolve_long("", 0, NULL, path, out, n);
    memcpy(out, path, plen + 1);
  } else {
    size_t blen;
    if (dirfd == AT_FDCWD) {
      iochar_spin_lock(&cwd_lock);
      blen = cwd_len;
      if (blen + plen + 2 <= n) {
        memcpy(out, cwd, blen);
      } else if (blen) {
        int rc = resolve_long(cwd, blen, NULL, path, out, n);
        iochar_spin_unlock(&cwd_lock);
        return rc;
      }
      iochar_spin_unlock(&cwd_lock);
    } else {
      iochar_fdesc *d = iochar_fd_get(dirfd);
      const char *rp = d && d->rec ? iochar_record_path(d->rec) : NULL;
      if (rp && rp[0] == '/') {
        const iochar_record *r = d->rec;
        blen = strlen(rp);
        if (r->flags & IOCHAR_REC_TRUNCATED) return resolve_long(rp, blen, &r->id, path, out, n);
        if (blen + plen + 2 > n) return resolve_long(rp, blen, NULL, path, out, n);
        memcpy(out, rp, blen);
      } else {
        char link[64], dir[IOCHAR_PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t r = readlink(link, dir, sizeof dir - 1);
        if (r <= 0 || (size_t)r >= sizeof dir - 1) return -1;
        dir[r] = 0;
        blen = (size_t)r;
        if (blen + plen + 2 > n) return resolve_long(dir, blen, NULL, path, out, n);
        memcpy(out, dir, blen);
      }
    }
    if (blen == 0) return -1;
    out[blen] = '/';
    memcpy(out + blen + 1, path, plen + 1);
    len = blen + 1 + plen;
  }
  note_name(out, len);
  return 0;
}

static int has_prefix(const char *s, const char *const *tab, const size_t *lens, int n) {
  for (int i = 0; i < n; i++)
    if (strncmp(s, tab[i], lens[i]) == 0) return 1;
  return 0;
}

/* Second characters of every prefix: most paths (/home, /scratch, /tmp) are
 * cleared by one table lookup instead of a dozen string compares. */
static uint8_t second_char[256];
static int second_any;

static void index_prefixes(void) {
  const char *const *tabs[2] = {iochar_cfg.exclude, iochar_cfg.include};
  const size_t *lens[2] = {iochar_cfg.exclude_len, iochar_cfg.include_len};
  int ns[2] = {iochar_cfg.nexclude, iochar_cfg.ninclude};
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < ns[t]; i++) {
      if (lens[t][i] < 2)
        second_any = 1;
      else
        second_char[(uint8_t)tabs[t][i][1]] = 1;
    }
}

/* IOCHAR_INCLUDE wins over every exclusion; prefixes before patterns. */
int iochar_path_excluded(const char *abs) {
  const iochar_path_note *no = iochar_path_note_of(abs);
  if (log_path_excl[0] && (!no || no->len == log_path_excl_len) && strcmp(abs, log_path_excl) == 0)
    return 1;
  if (second_any || !abs[0] || second_char[(uint8_t)abs[1]]) {
    if (has_prefix(abs, iochar_cfg.include, iochar_cfg.include_len, iochar_cfg.ninclude)) return 0;
    if (has_prefix(abs, iochar_cfg.exclude, iochar_cfg.exclude_len, iochar_cfg.nexclude)) return 1;
  }
  return iochar_name_excluded(abs, no);
}

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

int iochar_paths_init(void) {
  iochar_cwd_changed();
  iochar_exclude_init();
  index_prefixes();
  if (iochar_cfg.logfile)
    iochar_path_resolve(AT_FDCWD, iochar_cfg.logfile, log_path_excl, sizeof log_path_excl);
  log_path_excl_len = strlen(log_path_excl);
  return 0;
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
