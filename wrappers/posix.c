/* POSIX interception: the module, and the descriptors' life (open, creat,
 * openat, close, dup, fcntl) and the working directory.  The data calls are
 * in posix_rw.c, offsets and metadata in posix_meta.c, asynchronous I/O in
 * posix_aio.c; what they share in posix_internal.h. */
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/lustre.h"
#include "../runtime/mounts.h"
#include "../runtime/paths.h"
#include "../runtime/records.h"
#include "lustre_counters.h"
#include "posix_internal.h"

static const iochar_counter_def ints[] = {POSIX_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def flts[] = {POSIX_F_COUNTERS(IOCHAR_DEF_ENTRY)};

/* Counters a name seldom has before its first read or write: a metadata-
 * only entry does not carry them (56 of its 280 bytes for a 20-byte name),
 * and the first call that sets one makes it a full record (records.c).  A
 * name's first call (stat, open, creat, unlink, a rename's target) and the
 * file-system facts of its first open are carried: never one of these. */
static const int16_t meta_rare[] = {
    POSIX_DUPS,    POSIX_SEEKS,     POSIX_MMAPS,          POSIX_FSYNCS,
    POSIX_FDSYNCS, POSIX_TRUNCATES, POSIX_RENAME_SOURCES, -1};

static void lustre_finish(iochar_record *r);
const iochar_module iochar_mod_posix =
    IOCHAR_MODULE_DEF(POSIX, ints, flts, iochar_rw_state, &layout, .meta_entries = 1,
                      .meta_rare = meta_rare, .finish = lustre_finish);

/* The LUSTRE module: records only lustre_finish makes, at the end, so the
 * files of a job on Lustre cost no more record memory while it runs. */
static const iochar_counter_def lustre_ints[] = {LUSTRE_COUNTERS(IOCHAR_DEF_ENTRY)};
const iochar_module iochar_mod_lustre = IOCHAR_MODULE_DEF(LUSTRE, lustre_ints, NULL, char, NULL);
/* the X-macro list's component slots: 7 counters each, as many as the decoder keeps */
#define COMP_SLOT (LUSTRE_COMP2_EXT_START - LUSTRE_COMP1_EXT_START)
_Static_assert(COMP_SLOT == 7 && LUSTRE_NUM_INDICES - LUSTRE_COMP1_EXT_START ==
                                     IOCHAR_LUSTRE_MAX_COMPS * COMP_SLOT,
               "LUSTRE_COMP<N> slots: one per IOCHAR_LUSTRE_MAX_COMPS");
const iochar_rw_layout *const iochar_posix_layout = &layout; /* wrappers/posix_xfer.c */

/* ---- record steps (called with iochar_in_tool set) ---------------------- */

/* The last path a thread named (posix_internal.h). */
__thread posix_last_path last_path __attribute__((tls_model("initial-exec")));

/* A name other than the last: resolve, check, find or make its record.  Out
 * of line, so that its 4 KiB buffer (stack probes) and saved registers cost
 * nothing to the repeat below. */
__attribute__((noinline)) iochar_record *path_record_lookup(int dirfd, const char *path,
                                                            int cacheable, unsigned gen) {
  char abs[IOCHAR_PATH_MAX];
  if (iochar_path_resolve(dirfd, path, abs, sizeof abs)) return NULL;
  iochar_record *r = iochar_path_excluded(abs) ? NULL : iochar_record_get(IOCHAR_MOD_POSIX, abs);
  size_t n = strlen(path);
  if (cacheable && n < sizeof last_path.path) {
    memcpy(last_path.path, path, n + 1);
    last_path.rec = r, last_path.cwd_gen = gen, last_path.valid = 1;
  }
  if (!r) return NULL;
  int64_t *fa = iochar_record_slot(r, POSIX_FILE_ALIGNMENT); /* a name's new record or entry */
  if (*fa == 0 && r->id != IOCHAR_AGG_ID) {
    int64_t bs = iochar_fs_block_size(abs);
    iochar_spin_lock(&r->lock);
    *(int64_t *)iochar_record_slot(r, POSIX_FILE_ALIGNMENT) = bs;
    iochar_spin_unlock(&r->lock);
  }
  return r;
}

/* The real fstat, for the file-system facts below (posix_meta.c's fstat
 * wrapper would only pass the call through, at a cost). */
static __typeof__(&fstat) real_fstat;

/* File-system facts of a record, once (its first open): the preferred I/O
 * size, the file's kind, and on Lustre the layout from the `lustre.lov`
 * attribute.  Where the mount gives every file one st_blksize (ext2/3/4,
 * paths.c) that is the number, so a new file's open pays no fstat (a system
 * call, ~400 ns on this VM: half the cost of a new name's open+close); the
 * kind is then known without one only for O_DIRECTORY, and an open that
 * waited (a FIFO waits for its other end: the case the advice must see) pays
 * the fstat, noise beside its wait, and records the kind only when it is
 * not a regular file.  0: kind not known. */
#define FS_FACTS_SLOW_OPEN 1e-3 /* seconds */
static void record_fs_facts(int fd, iochar_record *r, int flags, double open_s) {
  iochar_lustre_layout lo = {0};
  const char *path = iochar_record_path(r);
  int64_t bs = iochar_fs_file_blksize(path, r->id); /* such a mount is not Lustre */
  /* 8 regular, 1 FIFO, 2 char device, 4 directory, 6 block device, 12 socket:
   * the advice keeps pipes and devices out of file rules */
  int64_t kind = (flags & O_DIRECTORY) ? (int64_t)(S_IFDIR >> 12) : 0;
  if (!bs || (!kind && open_s >= FS_FACTS_SLOW_OPEN)) {
    struct stat st;
    int ok = IOCHAR_REAL(fstat)(fd, &st) == 0;
    /* where the mount gave the size, a regular file stays 0 as it does after
     * a quick open: the counter must not depend on how long the open took */
    if (ok && (!bs || !S_ISREG(st.st_mode))) kind = (int64_t)((st.st_mode & S_IFMT) >> 12);
    if (!bs) bs = ok && st.st_blksize > 0 ? (int64_t)st.st_blksize : -1;
    if (iochar_on_lustre(path) && iochar_lustre_read(fd, &lo) != 0) lo = (iochar_lustre_layout){0};
  }
  iochar_spin_lock(&r->lock);
  iochar_record *w = iochar_record_now(r);
  /* a record's counters, or a metadata-only entry's slots (core.h) */
  int64_t *c = w->c;
  const int16_t *slot = iochar_meta_slot[IOCHAR_MOD_POSIX];
  int entry = (w->flags & IOCHAR_REC_META) != 0;
  if (entry) c = ((iochar_meta_entry *)w)->c;
#define AT(i) c[entry ? slot[i] : (i)]
  AT(POSIX_FILE_BLKSIZE) = bs;
  AT(POSIX_FILE_TYPE) = kind;
  AT(POSIX_LUSTRE_STRIPE_SIZE) = lo.stripe_size;
  AT(POSIX_LUSTRE_STRIPE_COUNT) = lo.stripe_count;
  AT(POSIX_LUSTRE_STRIPE_OFFSET) = lo.stripe_count ? lo.first_ost : 0;
  AT(POSIX_LUSTRE_COMPONENTS) = lo.components;
#undef AT
  iochar_spin_unlock(&r->lock);
}

/* As the log takes a record's row, for a file with a composite Lustre layout
 * (POSIX_LUSTRE_COMPONENTS > 1 at its first open, carried from the name's
 * metadata entry into its record by the first read or write): the layout again, by name
 * (the descriptors may be closed), now that the accessed extent is known
 * ([0, MAX_BYTE + 1)): the one-component counters describe the component
 * holding most of it (iochar_lustre_parse_for), where the stripe advice must
 * look, and a LUSTRE record of the same id every data component covering it
 * (the 4 lowest, iochar_lustre_parse_comps), written after the POSIX rows
 * (the module list's order).  Here rather than at each close, so the close
 * pays no test for it (issue 40: open+close was +299 instructions with it,
 * +296 without).  A file removed or renamed away by then keeps the open's
 * description and no LUSTRE record; one renamed onto is the file the name
 * holds at the end; past the memory bound, no LUSTRE record (it would only
 * fold into the aggregate).  errno is the application's again after. */
static void lustre_finish(iochar_record *r) {
  if (r->id == IOCHAR_AGG_ID || (r->flags & (IOCHAR_REC_META | IOCHAR_REC_TRUNCATED)) ||
      r->c[POSIX_LUSTRE_COMPONENTS] <= 1)
    return; /* an entry has read and written nothing; a truncated name is not the file's */
  int saved = errno;
  iochar_spin_lock(&r->lock);
  int64_t hi = r->c[POSIX_MAX_BYTE_READ] > r->c[POSIX_MAX_BYTE_WRITTEN]
                   ? r->c[POSIX_MAX_BYTE_READ]
                   : r->c[POSIX_MAX_BYTE_WRITTEN];
  hi = hi >= 0 ? hi + 1 : 0;
  iochar_spin_unlock(&r->lock);
  iochar_lustre_layout lo;
  iochar_lustre_comp comp[IOCHAR_LUSTRE_MAX_COMPS];
  int n = 0;
  const char *path = iochar_record_path(r);
  if (hi > 0 &&
      iochar_lustre_read_path(path, (uint64_t)hi, &lo, comp, IOCHAR_LUSTRE_MAX_COMPS, &n) == 0 &&
      lo.version) {
    iochar_spin_lock(&r->lock);
    r->c[POSIX_LUSTRE_STRIPE_SIZE] = lo.stripe_size;
    r->c[POSIX_LUSTRE_STRIPE_COUNT] = lo.stripe_count;
    r->c[POSIX_LUSTRE_STRIPE_OFFSET] = lo.stripe_count ? lo.first_ost : 0;
    r->c[POSIX_LUSTRE_COMPONENTS] = lo.components;
    iochar_spin_unlock(&r->lock);
    iochar_record *l = n > 0 ? iochar_record_get(IOCHAR_MOD_LUSTRE, path) : NULL;
    if (l && l->id == r->id) { /* not the aggregate: a record of this file */
      iochar_spin_lock(&l->lock);
      l->c[LUSTRE_COMPONENTS] = lo.components;
      l->c[LUSTRE_COMPS_LISTED] = n;
      for (int k = 0; k < n; k++) { /* the slots' order: the X-macro's */
        int64_t *c = l->c + LUSTRE_COMP1_EXT_START + k * COMP_SLOT;
        c[0] = comp[k].start, c[1] = comp[k].end, c[2] = comp[k].stripe_size;
        c[3] = comp[k].stripe_count, c[4] = comp[k].pattern, c[5] = comp[k].flags;
        c[6] = comp[k].mirror;
      }
      iochar_spin_unlock(&l->lock);
    }
  }
  errno = saved;
}

/* record_open on a metadata-only entry (core.h): the same counts in its
 * slots, or in what it became. */
static __attribute__((noinline)) void record_open_entry(iochar_record *r, int flags, mode_t mode,
                                                        double t0, double t1) {
  iochar_spin_lock(&r->lock);
  iochar_record *f = iochar_record_now(r);
  if (f != r) { /* made full meanwhile: the pattern starts again there too */
    iochar_spin_lock(&f->lock);
    iochar_rw_open(f, &layout);
    iochar_spin_unlock(&f->lock);
  }
  int64_t *mo = iochar_record_slot(r, POSIX_MODE);
  if ((flags & O_CREAT) && !*mo) *mo = mode & 07777;
  iochar_meta_apply(r, &layout, POSIX_OPENS, POSIX_F_OPEN_START_TIMESTAMP,
                    POSIX_F_OPEN_END_TIMESTAMP, t0, t1);
  iochar_spin_unlock(&r->lock);
}

static inline __attribute__((always_inline)) void
record_open(int fd, int dirfd, const char *path, int flags, mode_t mode, double t0, double t1) {
  iochar_record *r = path_record(dirfd, path);
  if (!r) return;
  if (__builtin_expect(r->flags & IOCHAR_REC_META, 0)) { /* a name not read or written yet */
    r = iochar_record_now(r);
    if (r->flags & IOCHAR_REC_META) {
      if (!*(int64_t *)iochar_record_slot(r, POSIX_FILE_BLKSIZE))
        record_fs_facts(fd, r, flags, t1 - t0);
      iochar_fd_open(fd, r, flags & O_APPEND);
      record_open_entry(r, flags, mode, t0, t1);
      return;
    }
  }
  if (!r->c[POSIX_FILE_BLKSIZE] && r->id != IOCHAR_AGG_ID) record_fs_facts(fd, r, flags, t1 - t0);
  /* The kernel starts every description at offset 0, O_APPEND included (a
   * read there reads from 0); an appending write finds its own offset. */
  iochar_fd_open(fd, r, flags & O_APPEND);
  iochar_spin_lock(&r->lock);
  r->c[POSIX_OPENS]++;
  iochar_rw_open(r, &layout);
  if ((flags & O_CREAT) && !r->c[POSIX_MODE]) r->c[POSIX_MODE] = mode & 07777;
  double *f = iochar_rec_f(r, &layout);
  iochar_ts(&f[POSIX_F_OPEN_START_TIMESTAMP], &f[POSIX_F_OPEN_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &layout, t0, t1);
  iochar_spin_unlock(&r->lock);
}

static void record_close(int fd, iochar_fdesc *d, double t0, double t1) {
  iochar_record *r = d->rec;
  iochar_meta_event(r, &layout, -1, POSIX_F_CLOSE_START_TIMESTAMP, POSIX_F_CLOSE_END_TIMESTAMP, t0,
                    t1);
  iochar_fd_close(fd, d);
}

static void record_dup(int newfd, iochar_fdesc *d, double t0, double t1) {
  iochar_fd_set(newfd, d);
  record_meta(d->rec, POSIX_DUPS, t0, t1);
}

/* ---- open family -------------------------------------------------------- */

/* Whether open/openat read a third argument, the new file's mode.  O_TMPFILE
 * holds O_DIRECTORY, which alone takes none: then a value that is not there
 * is read and passed on, and ignored (the kernel reads the mode only to
 * create), which costs less here than telling the two apart. */
static inline int open_needs_mode(int flags) { return (flags & (O_CREAT | O_TMPFILE)) != 0; }

/* The shape of every open wrapper: guard, clock, real call, clock, record. */
IOCHAR_WRAP(int, open, (const char *path, int flags, ...)) {
  mode_t mode = 0;
  if (open_needs_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (!iochar_active()) return IOCHAR_REAL(open)(path, flags, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(open)(path, flags, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, mode, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, open64, (const char *path, int flags, ...)) {
  mode_t mode = 0;
  if (open_needs_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (!iochar_active()) return IOCHAR_REAL(open64)(path, flags, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(open64)(path, flags, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, mode, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, openat, (int dirfd, const char *path, int flags, ...)) {
  mode_t mode = 0;
  if (open_needs_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (!iochar_active()) return IOCHAR_REAL(openat)(dirfd, path, flags, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(openat)(dirfd, path, flags, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, dirfd, path, flags, mode, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, openat64, (int dirfd, const char *path, int flags, ...)) {
  mode_t mode = 0;
  if (open_needs_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (!iochar_active()) return IOCHAR_REAL(openat64)(dirfd, path, flags, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(openat64)(dirfd, path, flags, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, dirfd, path, flags, mode, t0, t1));
  return fd;
}

/* creat is open with these flags. */
#define CREAT_FLAGS (O_CREAT | O_WRONLY | O_TRUNC)

IOCHAR_WRAP(int, creat, (const char *path, mode_t mode)) {
  if (!iochar_active()) return IOCHAR_REAL(creat)(path, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(creat)(path, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, CREAT_FLAGS, mode, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, creat64, (const char *path, mode_t mode)) {
  if (!iochar_active()) return IOCHAR_REAL(creat64)(path, mode);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(creat64)(path, mode);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, CREAT_FLAGS, mode, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, close, (int fd)) {
  iochar_fdesc *d = iochar_fd_get(fd); /* NULL whenever not recording (core.h) */
  if (!d || (__builtin_expect(iochar_in_tool, 0) && !iochar_active())) {
    if (d && !iochar_in_vfork_child()) iochar_fd_clear(fd);
    return IOCHAR_REAL(close)(fd);
  }
  double t0 = iochar_now();
  int ret = IOCHAR_REAL(close)(fd);
  double t1 = iochar_now();
  /* IOCHAR_RECORD without the errno save: nothing in record_close sets it
   * (the contended lock and the observers keep it themselves) */
  iochar_in_tool++;
  record_close(fd, d, t0, t1);
  iochar_in_tool--;
  return ret;
}

/* ---- descriptor duplication --------------------------------------------- */

IOCHAR_WRAP(int, dup, (int fd)) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (!d || !iochar_active()) return IOCHAR_REAL(dup)(fd);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(dup)(fd);
  double t1 = iochar_now();
  if (r >= 0) IOCHAR_RECORD(record_dup(r, d, t0, t1));
  return r;
}

/* dup2/dup3 onto a tracked fd close it implicitly: the new descriptor takes
 * the old one's state, or none (forgotten) when the old one had none.  Not
 * recording: the table still follows (a vfork child's calls never touch it). */
static inline void dup2_passed(int fd, int r, iochar_fdesc *d) {
  if (r >= 0 && r != fd && !iochar_in_vfork_child()) iochar_fd_set(r, d);
}
static inline void dup2_record(int fd, int r, iochar_fdesc *d, double t0, double t1) {
  if (r < 0 || r == fd) return;
  if (d)
    IOCHAR_RECORD(record_dup(r, d, t0, t1));
  else
    iochar_fd_clear(r);
}

IOCHAR_WRAP(int, dup2, (int fd, int nfd)) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (!iochar_active()) {
    int r = IOCHAR_REAL(dup2)(fd, nfd);
    dup2_passed(fd, r, d);
    return r;
  }
  double t0 = iochar_now();
  int r = IOCHAR_REAL(dup2)(fd, nfd);
  double t1 = iochar_now();
  dup2_record(fd, r, d, t0, t1);
  return r;
}
IOCHAR_WRAP(int, dup3, (int fd, int nfd, int fl)) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (!iochar_active()) {
    int r = IOCHAR_REAL(dup3)(fd, nfd, fl);
    dup2_passed(fd, r, d);
    return r;
  }
  double t0 = iochar_now();
  int r = IOCHAR_REAL(dup3)(fd, nfd, fl);
  double t1 = iochar_now();
  dup2_record(fd, r, d, t0, t1);
  return r;
}

/* F_SETFL can turn O_APPEND on or off for the whole description. */
static int set_flags(iochar_fdesc *d, int ret, void *arg) {
  if (ret == 0) d->append = ((int)(intptr_t)arg & O_APPEND) != 0;
  return ret;
}

IOCHAR_WRAP(int, fcntl, (int fd, int cmd, ...)) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *); /* every fcntl argument fits a pointer */
  va_end(ap);
  iochar_fdesc *d = iochar_fd_get(fd);
  int dupcmd = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
  if (d && cmd == F_SETFL) return set_flags(d, IOCHAR_REAL(fcntl)(fd, cmd, arg), arg);
  if (!d || !dupcmd || !iochar_active()) return IOCHAR_REAL(fcntl)(fd, cmd, arg);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fcntl)(fd, cmd, arg);
  double t1 = iochar_now();
  if (r >= 0) IOCHAR_RECORD(record_dup(r, d, t0, t1));
  return r;
}
IOCHAR_WRAP(int, fcntl64, (int fd, int cmd, ...)) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  iochar_fdesc *d = iochar_fd_get(fd);
  int dupcmd = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
  if (d && cmd == F_SETFL) return set_flags(d, IOCHAR_REAL(fcntl64)(fd, cmd, arg), arg);
  if (!d || !dupcmd || !iochar_active()) return IOCHAR_REAL(fcntl64)(fd, cmd, arg);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fcntl64)(fd, cmd, arg);
  double t1 = iochar_now();
  if (r >= 0) IOCHAR_RECORD(record_dup(r, d, t0, t1));
  return r;
}

/* ---- working directory (relative paths are resolved against a cache) ---- */

IOCHAR_WRAP(int, chdir, (const char *p)) {
  int r = IOCHAR_REAL(chdir)(p);
  if (r == 0 && iochar_ready) IOCHAR_RECORD(iochar_cwd_changed());
  return r;
}
IOCHAR_WRAP(int, fchdir, (int fd)) {
  int r = IOCHAR_REAL(fchdir)(fd);
  if (r == 0 && iochar_ready) IOCHAR_RECORD(iochar_cwd_changed());
  return r;
}

/* ---- fortified entry points --------------------------------------------- */
/* -D_FORTIFY_SOURCE builds call glibc's checked variants instead of the plain
 * names; the real checked function still does the check. */
int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);

IOCHAR_WRAP(int, __open_2, (const char *path, int flags)) {
  if (!iochar_active()) return IOCHAR_REAL(__open_2)(path, flags);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(__open_2)(path, flags);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, 0, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, __open64_2, (const char *path, int flags)) {
  if (!iochar_active()) return IOCHAR_REAL(__open64_2)(path, flags);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(__open64_2)(path, flags);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, AT_FDCWD, path, flags, 0, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, __openat_2, (int dirfd, const char *path, int flags)) {
  if (!iochar_active()) return IOCHAR_REAL(__openat_2)(dirfd, path, flags);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(__openat_2)(dirfd, path, flags);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, dirfd, path, flags, 0, t0, t1));
  return fd;
}

IOCHAR_WRAP(int, __openat64_2, (int dirfd, const char *path, int flags)) {
  if (!iochar_active()) return IOCHAR_REAL(__openat64_2)(dirfd, path, flags);
  double t0 = iochar_now();
  int fd = IOCHAR_REAL(__openat64_2)(dirfd, path, flags);
  double t1 = iochar_now();
  if (fd >= 0) IOCHAR_RECORD(record_open(fd, dirfd, path, flags, 0, t0, t1));
  return fd;
}
