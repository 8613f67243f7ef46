/* The runtime's ground: its globals, the in-tool count, record locks, clocks,
 * and the types every file shares (modules, records, descriptions).  Nothing
 * inline here calls above core.c: the guard is lifecycle.h's, a thread's
 * entering fastrule.h's, the descriptor opens and closes records.h's. */
#ifndef IOCHAR_CORE_H
#define IOCHAR_CORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "counters.h"
#include "flags.h"

/* Everything declared below lives in this library: hidden, so the code
 * reaches its globals directly instead of through the GOT (an instruction
 * and a load saved per access on the hot paths).  System headers stay
 * outside the region. */
#pragma GCC visibility push(hidden)

#define IOCHAR_VERSION "0.1.0"
#define IOCHAR_PATH_MAX 4096
#define IOCHAR_AGG_ID UINT64_MAX

/* Module ids: fixed, one per intercepted interface (index into iochar_modules). */
enum iochar_module_id {
  IOCHAR_MOD_POSIX,
  IOCHAR_MOD_STDIO,
  IOCHAR_MOD_MPIIO,
  IOCHAR_MOD_H5F,
  IOCHAR_MOD_H5D,
  IOCHAR_MOD_NC_FILE,
  IOCHAR_MOD_NC_VAR,
  IOCHAR_MOD_PNETCDF_FILE,
  IOCHAR_MOD_PNETCDF_VAR,
  IOCHAR_MOD_LUSTRE, /* no interface: a composite layout's components (wrappers/posix.c) */
  IOCHAR_MOD_COUNT
};

/* Where a module keeps the counters that the shared access accounting updates;
 * -1 marks a counter the module does not have. */
typedef struct iochar_rw_layout {
  int16_t ops[2];       /* READS, WRITES (direction 0 = read, 1 = write) */
  int16_t bytes[2];     /* BYTES_READ, BYTES_WRITTEN */
  int16_t max_byte[2];  /* MAX_BYTE_READ, MAX_BYTE_WRITTEN */
  int16_t consec[2];    /* CONSEC_READS, CONSEC_WRITES */
  int16_t seq[2];       /* SEQ_READS, SEQ_WRITES */
  int16_t size_bin0[2]; /* SIZE_READ_0_100, SIZE_WRITE_0_100 */
  int16_t max_time_size[2];
  int16_t rw_switches;
  int16_t access1; /* ACCESS1_ACCESS (top-4 block start) */
  int16_t stride1; /* STRIDE1_STRIDE */
  int16_t file_not_aligned, file_alignment, mem_not_aligned, mem_alignment;
  int16_t f_time[3];     /* F_READ_TIME, F_WRITE_TIME, F_META_TIME */
  int16_t f_max_time[2]; /* F_MAX_READ_TIME, F_MAX_WRITE_TIME */
  int16_t f_start[2];    /* F_READ_START_TIMESTAMP, F_WRITE_START_TIMESTAMP */
  int16_t f_end[2];      /* F_READ_END_TIMESTAMP, F_WRITE_END_TIMESTAMP */
  /* IOCHAR_MOD_<P>, the module whose records use it (their time series):
   * IOCHAR_LAYOUT_INIT and IOCHAR_RW_LAYOUT_CONST set it; a layout built any
   * other way must too (0 is POSIX) */
  int16_t module;
  /* <P>_NUM_INDICES: a record's floating counters follow its n_int integer
   * ones (iochar_rec_f).  iochar_layout_from_names and IOCHAR_RW_LAYOUT_CONST
   * set it; not written to the live file (its schema has the module's n_int) */
  int16_t n_int;
} iochar_rw_layout;
/* Fill L from module prefix P's counter lists by the names above (each field
 * the counter <P>_<name>, -1 when the list has none; ops <P>_<reads> and
 * <P>_<writes>, NULL: none).  runtime/layout.c */
void iochar_layout_from_names(iochar_rw_layout *L, const char *P, const iochar_counter_def *ints,
                              uint32_t n_int, const iochar_counter_def *flts, uint32_t n_flt,
                              const char *reads, const char *writes);
/* A wrapper file's layouts, built before the runtime starts (its constructor
 * runs at the default priority, after this one): IOCHAR_LAYOUTS { ... } */
#define IOCHAR_LAYOUTS __attribute__((constructor(101))) static void iochar_layouts_init(void)
#define IOCHAR_LAYOUT_INIT(L, P, ints_, flts_, reads, writes)                               \
  (iochar_layout_from_names(L, #P, ints_, P##_NUM_INDICES, flts_, P##_F_NUM_INDICES, reads, \
                            writes),                                                        \
   (L)->module = IOCHAR_MOD_##P)
/* The same layout as a compile-time constant, for the modules on the hottest
 * paths (POSIX, STDIO): the accounting, inlined with a constant layout, folds
 * every lookup and every "has this counter" test away.  P's list must name
 * every counter below (a missing one does not compile); the fields it does not
 * cover (alignment, stride, access tables) follow as designated initializers,
 * -1 for "none".  tests/unit/unit_layout.c checks each such constant against
 * iochar_layout_from_names on the module's own lists. */
#define IOCHAR_RW_LAYOUT_CONST(P, ...)                                                        \
  {                                                                                           \
    .ops = {P##_READS, P##_WRITES}, .bytes = {P##_BYTES_READ, P##_BYTES_WRITTEN},             \
    .max_byte = {P##_MAX_BYTE_READ, P##_MAX_BYTE_WRITTEN},                                    \
    .consec = {P##_CONSEC_READS, P##_CONSEC_WRITES}, .seq = {P##_SEQ_READS, P##_SEQ_WRITES},  \
    .size_bin0 = {P##_SIZE_READ_0_100, P##_SIZE_WRITE_0_100},                                 \
    .max_time_size = {P##_MAX_READ_TIME_SIZE, P##_MAX_WRITE_TIME_SIZE},                       \
    .rw_switches = P##_RW_SWITCHES,                                                           \
    .f_time = {P##_F_READ_TIME, P##_F_WRITE_TIME, P##_F_META_TIME},                           \
    .f_max_time = {P##_F_MAX_READ_TIME, P##_F_MAX_WRITE_TIME},                                \
    .f_start = {P##_F_READ_START_TIMESTAMP, P##_F_WRITE_START_TIMESTAMP},                     \
    .f_end = {P##_F_READ_END_TIMESTAMP, P##_F_WRITE_END_TIMESTAMP}, .module = IOCHAR_MOD_##P, \
    .n_int = P##_NUM_INDICES, __VA_ARGS__                                                     \
  }

struct iochar_record; /* below */
typedef struct iochar_module {
  const char *name;
  uint32_t version; /* bumped when the module's counter list changes */
  uint32_t n_int, n_flt;
  const iochar_counter_def *ints, *flts;
  size_t state_size;          /* per-record state kept in memory only (not logged) */
  const iochar_rw_layout *rw; /* NULL: the module has no reads/writes */
  /* Further counters that also count reads / writes (MPI-IO's collective,
   * split and nonblocking kinds), for per-rank totals. */
  uint8_t n_more_ops;
  int16_t more_ops[2][4];
  /* 1: a name first seen by a metadata call (stat, open, close...) gets a
   * metadata-only entry (iochar_meta_entry), made a full record at its
   * first read or write.  Only modules whose every use of a record handles
   * such entries set it (POSIX). */
  uint8_t meta_entries;
  /* Metadata counters a name seldom has before its first read or write
   * (-1 ends the list): an entry does not carry them, and the first call
   * that sets one makes it a full record (records.c), so that every new
   * name's entry is smaller (its pages are most of a new name's cost). */
  const int16_t *meta_rare;
  /* NULL, or called on each record as the log takes its row (serial
   * shutdown, MPI_Finalize, exec), without its lock: facts best known at the
   * end, read off the hot path (POSIX: a composite Lustre layout's
   * components, wrappers/posix.c lustre_finish). */
  void (*finish)(struct iochar_record *r);
} iochar_module;

/* A module's descriptor from its X-macro prefix P (P_NUM_INDICES...); extra
 * designated initializers may follow. */
#define IOCHAR_MODULE_DEF(P, ints_, flts_, state_t, layout_, ...)                                  \
  {                                                                                                \
    .name = #P, .version = 1, .n_int = P##_NUM_INDICES, .n_flt = P##_F_NUM_INDICES, .ints = ints_, \
    .flts = flts_, .state_size = sizeof(state_t), .rw = layout_, __VA_ARGS__                       \
  }

extern const iochar_module *const iochar_modules[IOCHAR_MOD_COUNT];

/* glibc (2.32+) keeps this true until the process first creates a thread
 * and never sets it back; its own stdio skips locking on it.  Weak, so an
 * older glibc (no such symbol) just always locks. */
extern char __libc_single_threaded __attribute__((weak, visibility("default")));
/* Where that flag is read: &__libc_single_threaded once fastrule.c's first
 * constructor ran and glibc has one, else a 0 byte (always lock).  One load
 * and a compare per lock, not a test of the weak symbol's address too. */
extern const char *iochar_single_threaded_flag;

/* Record locks.  While the process has one thread, nothing can contend, so
 * the lock is not taken: the locked exchange is the largest single cost of a
 * buffered fwrite.  The only other code that runs on this thread meanwhile
 * is a signal handler, and the tool's in-tool guard turns it away.  No thread
 * can appear between lock and unlock (nothing under a lock creates one), and
 * unlocking is a plain store, harmless on a flag that was not set. */
typedef struct iochar_spin {
  atomic_flag f;
} iochar_spin;
static inline int iochar_single_threaded(void) { return *iochar_single_threaded_flag; }
void iochar_spin_wait(iochar_spin *s); /* core.c: the contended path */
static inline void iochar_spin_lock(iochar_spin *s) {
  if (__builtin_expect(iochar_single_threaded(), 1)) return;
  if (__builtin_expect(atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire), 0))
    iochar_spin_wait(s);
}
static inline void iochar_spin_unlock(iochar_spin *s) {
  atomic_flag_clear_explicit(&s->f, memory_order_release);
}

/* The fast rule (issue 20): MPICH starts an idle progress thread in every
 * rank, which ends the one-thread rule above for good.  The hot record steps
 * alone (posix_rw.c record_rw, posix_meta.c seek_record, stdio.c stream_rw
 * and record_untimed) skip r->lock while at most one thread, the owner, has
 * entered the tool, whatever other threads exist.
 *
 * Entering: every thread's in-tool count starts at IOCHAR_NEW_THREAD, so its
 * first recorded call leaves the inline guard for iochar_vfork_back, which
 * registers it (fastrule.c, iochar_thread_enter): the first becomes the owner; a
 * second ends the mode for good.  A thread that has not entered touches no
 * record's counters or state: every recorded path passes iochar_active
 * first, and the paths that read records for the log enter (shutdown, exec,
 * MPI_Finalize).
 *
 * Brackets: the owner's unlocked work sits between iochar_fast_enter and
 * iochar_fast_leave, which add and take IOCHAR_FAST_UNIT to its in-tool
 * count (a plain add, no fence; it is also the step's re-entry guard).  The
 * thread that ends the mode clears iochar_fast_mode, runs membarrier
 * (PRIVATE_EXPEDITED: every running thread of the process executes a full
 * barrier, which turns the owner's compiler barrier into a fence), then
 * waits until the owner's count has no IOCHAR_FAST_UNIT bits.  The owner
 * opens its bracket before it tests the flag: either the test comes after
 * the barrier and sees 0 (it locks), or the open came before it, and the
 * waiter sees the bracket and waits for its close (a release), after which
 * the unlocked writes are visible.  The wait ends because:
 * - nothing in a bracket calls out of the tool or waits for another thread
 *   (no system call, no dlsym: the entrant may hold the loader's lock, in a
 *   dlopen'd constructor).  The steps that must (append_offset's lseek, a
 *   record's first state and tables: records.c) pause the bracket, the latter
 *   holding r->lock for real meanwhile (iochar_spin_hold_in).  The only
 *   lock taken inside, series.c's, is held over plain arithmetic, and an
 *   entrant holds none: a thread enters implicitly only from no tool code
 *   (its count exactly IOCHAR_NEW_THREAD), explicitly (iochar_enter) only
 *   where it holds no tool lock;
 * - a signal handler on the owner passes straight through while the count
 *   is not 0, so brackets never nest: 12 bits are plenty.
 * A handler that longjmps out of a bracket leaves it open: a later entrant
 * waits a second for it, then goes on and warns (fastrule.c, fast_end).
 * Every other lock (iochar_spin_lock, rec_mutex, the fd table's atomics)
 * keeps the one-thread rule, so it is taken for real whenever a second
 * thread exists and needs no bracket.  A record may see both: the side that
 * skips is the owner alone, and in fast mode no other thread touches it. */
#define IOCHAR_FAST_UNIT (1 << 12)
#define IOCHAR_FAST_MASK (0xfff << 12)
#define IOCHAR_NEW_THREAD (1 << 30)
/* 1 while the mode holds (fastrule.c: 0 for good once a second thread enters; a
 * fork child starts again at 1). */
extern char iochar_fast_mode;
/* What the fast rule reads: &iochar_fast_mode with membarrier (Linux 4.14+)
 * and a process that started with one thread, else the one-thread rule's
 * flag (observers on, too: they walk stacks under the lock). */
extern const char *iochar_fast_flag;
static inline __attribute__((always_inline)) void iochar_fast_enter(void);
static inline __attribute__((always_inline)) void iochar_fast_leave(void);
/* r->lock by the fast rule, inside a bracket the caller opened. */
static inline __attribute__((always_inline)) void iochar_spin_lock_in(iochar_spin *s) {
  if (__builtin_expect(*iochar_fast_flag, 1)) return;
  if (__builtin_expect(atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire), 0))
    iochar_spin_wait(s);
}
static inline __attribute__((always_inline)) void iochar_spin_unlock_in(iochar_spin *s) {
  atomic_flag_clear_explicit(&s->f, memory_order_release);
}
/* Inside a bracket, holding s by the fast rule: hold it for real from now
 * on, so that the bracket may pause (iochar_fast_pause) without an entrant
 * getting at the record meanwhile.  A lock the fast rule skipped is free
 * (in fast mode the owner alone touches records), one it took is this
 * thread's: either way the exchange leaves it held, and unlock_in frees it. */
static inline void iochar_spin_hold_in(iochar_spin *s) {
  (void)atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire);
}

/* iochar_record.flags */
/* path holds the first bytes of a name longer than the path limit, followed
 * by IOCHAR_TRUNC_MARK; the id is the hash of the whole name (paths.c). */
#define IOCHAR_REC_TRUNCATED 1
/* a metadata-only entry (iochar_meta_entry), not a record */
#define IOCHAR_REC_META 2
#define IOCHAR_TRUNC_MARK "\0TRUNCATED"
#define IOCHAR_TRUNC_MARK_LEN 10

/* A record: this header, then its module's n_int integer counters (c), its
 * n_flt floating ones (iochar_rec_f) and its NUL-ended name
 * (iochar_record_path), nothing between them: the floating counters and the
 * name are found from the record's address and its module's sizes, not
 * through pointers of their own (docs/log-format.md, "Live files"). */
typedef struct iochar_record {
  uint64_t id;
  struct iochar_record *next; /* hash chain, and the module's list */
  struct iochar_record *all_next;
  iochar_spin lock; /* guards the counters and the state; never held across a real call */
  uint16_t module;
  uint16_t flags;
  /* The module's state (access.h's iochar_rw_state first): NULL until the
   * record's first read or write makes it (iochar_rw_state_of), so that a
   * file only stat'ed or opened never has one. */
  void *state;
  double meta_end; /* end of the latest metadata call: overlapping ones count once */
  int64_t c[];
} iochar_record;

/* A record's floating counters: after the n_int integer ones.  With a
 * constant layout (IOCHAR_RW_LAYOUT_CONST) this is a constant offset. */
static inline __attribute__((always_inline)) double *iochar_rec_f(iochar_record *r,
                                                                  const iochar_rw_layout *L) {
  return (double *)(r->c + L->n_int);
}
/* A name seen only by metadata calls so far (issue 29): a full record is
 * ~800 bytes of counters that such a name never uses, so it gets this
 * instead: a record header (same offsets: the lock, the module, the flags
 * with IOCHAR_REC_META, state always NULL), then the counters a metadata
 * call can set (the module's meta slots, records.c: its SUM and ANY
 * integer counters and TS/TIME floating ones that no read or write
 * accounting touches, from the X-macro lists and the access layout), then
 * its NUL-ended name.  Its first read or write makes a full record with
 * everything counted so far (iochar_record_for_data) and `full` points at
 * it (or at the module's aggregate, past the memory bound): from then on
 * every use of the entry goes to `full`. */
typedef struct iochar_meta_entry {
  iochar_record h;
  iochar_record *full;
  int64_t c[]; /* the meta slots (floating ones stored as doubles), then the name */
} iochar_meta_entry;
/* The number of meta slots of module m (0: no metadata-only entries). */
extern uint16_t iochar_meta_count[IOCHAR_MOD_COUNT];

/* Open file description: shared by dup'd fds, so offsets move together. */
typedef struct iochar_fdesc {
  iochar_record *rec;
  _Atomic int64_t offset;
  atomic_int refs;
  int append; /* nonzero: O_APPEND (the flag's bit as the open gave it) */
  struct iochar_fdesc *free_next;
} iochar_fdesc;

/* ---- state and guard --------------------------------------------------- */
extern int iochar_ready;                        /* 1 while recording */
extern __thread int iochar_in_tool              /* >0 inside the tool's own code */
    __attribute__((tls_model("initial-exec"))); /* as defined: no __tls_get_addr */
extern struct timespec iochar_mono0;            /* monotonic clock at job start */

/* A vfork child runs on its parent's thread and memory until it execs or
 * exits.  The vfork entry point (lifecycle.c) adds this bias to the thread's
 * in-tool count, so in the child every wrapper passes straight through; the
 * parent, back from vfork, takes it off at its first wrapped call. */
#define IOCHAR_VFORK_BIAS (1 << 24)

/* A bracket (the fast rule, above): its increment is also the step's guard,
 * so a step opens with iochar_fast_enter instead of iochar_in_tool++.  The
 * compiler barriers keep the unlocked accesses inside; x86 makes stores
 * visible in order, so the close is a plain subtraction; elsewhere it is a
 * release. */
static inline __attribute__((always_inline)) void iochar_fast_enter(void) {
  iochar_in_tool += IOCHAR_FAST_UNIT;
  atomic_signal_fence(memory_order_seq_cst);
}
static inline __attribute__((always_inline)) void iochar_fast_add_release(int n) {
#if defined(__x86_64__) || defined(__i386__)
  atomic_signal_fence(memory_order_seq_cst);
  iochar_in_tool += n;
#else
  __atomic_store_n(&iochar_in_tool, iochar_in_tool + n, __ATOMIC_RELEASE);
#endif
}
static inline __attribute__((always_inline)) void iochar_fast_leave(void) {
  iochar_fast_add_release(-IOCHAR_FAST_UNIT);
}
/* A step that must call out of the tool (a system call) inside its bracket
 * closes it meanwhile and keeps the guard: one add each way. */
static inline __attribute__((always_inline)) void iochar_fast_pause(void) {
  iochar_fast_add_release(1 - IOCHAR_FAST_UNIT);
}
static inline __attribute__((always_inline)) void iochar_fast_resume(void) {
  iochar_in_tool += IOCHAR_FAST_UNIT - 1;
  atomic_signal_fence(memory_order_seq_cst);
}

/* The clock: the invariant TSC where the CPU has one (two reads cost ~40 ns
 * against ~100 ns for clock_gettime here), calibrated at start-up against
 * CLOCK_MONOTONIC; clock_gettime elsewhere. */
extern int iochar_use_tsc;
extern uint64_t iochar_tsc0;    /* the reading at job start (TSC ticks or monotonic ns) */
extern double iochar_tsc_scale; /* seconds per tick (1e-9 without a TSC) */

extern uint64_t iochar_mono0_ns; /* CLOCK_MONOTONIC at job start, in ns */
/* Called at start-up (runtime/lifecycle.c): the TSC's calibration, begun early and
 * ended once the rest is set up; then the job's start on the clock in use
 * (again in a fork child). */
void iochar_calibrate_begin(void);
void iochar_calibrate_end(void);
void iochar_start_clocks(void);

/* A raw clock reading: TSC ticks, or monotonic ns without a TSC.  Hot paths
 * keep readings raw and convert later, so nothing waits on the (slow)
 * rdtsc result before the real call starts. */
static inline __attribute__((always_inline)) uint64_t iochar_ticks(void) {
#if defined(__x86_64__)
  if (__builtin_expect(iochar_use_tsc, 1)) return __builtin_ia32_rdtsc();
#endif
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The fastest hot paths test once, with their pass-through conditions,
 * that the clock is the TSC, read it with iochar_tsc (no test per reading)
 * and leave the other clock to an out-of-line path: a wrapper whose
 * recorded path makes no call but the real one keeps fewer registers. */
static inline __attribute__((always_inline)) int iochar_clock_is_tsc(void) {
#if defined(__x86_64__)
  return iochar_use_tsc;
#else
  return 0;
#endif
}
static inline __attribute__((always_inline)) uint64_t iochar_tsc(void) {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return iochar_ticks(); /* never reached: iochar_clock_is_tsc is 0 */
#endif
}

/* A raw reading as seconds since the job start: one formula for both clocks
 * (iochar_start_clocks in core.c sets tsc0 and scale for the one in use). */
static inline __attribute__((always_inline)) double iochar_ticks_s(uint64_t k) {
  return (double)(int64_t)(k - iochar_tsc0) * iochar_tsc_scale;
}

/* Seconds since the job start. */
static inline __attribute__((always_inline)) double iochar_now(void) {
  return iochar_ticks_s(iochar_ticks());
}

/* ---- paths -------------------------------------------------------------- */
/* Absolute, cleaned path of `path` relative to `dirfd` (AT_FDCWD or a dir fd)
 * into out; returns 0, or -1 when it cannot be resolved.  A name longer than
 * outlen - 1 bytes leaves its first outlen - 1 bytes in out and is recorded
 * truncated by the iochar_record_get(m, out) that follows on this thread. */
int iochar_path_resolve(int dirfd, const char *path, char *out, size_t outlen);
/* 1 when the cleaned absolute path must not be recorded. */
int iochar_path_excluded(const char *abs);
uint64_t iochar_hash_path(const char *s);
/* Block size of the file system holding abs (cached per mount). */
int64_t iochar_fs_block_size(const char *abs);
/* The st_blksize of every file on abs's mount (id: its record id) when the
 * file system gives all its files the same one (mounts.c), else 0: then
 * only an fstat tells. */
int64_t iochar_fs_file_blksize(const char *abs, uint64_t id);
/* Re-read the cached working directory (after chdir/fchdir). */
void iochar_cwd_changed(void);
/* Bumped by every iochar_cwd_changed: what a relative path means changed. */
extern _Atomic unsigned iochar_cwd_gen;

/* ---- records ------------------------------------------------------------ */
/* The record of `name` in module m, created on first use; past the memory
 * bound, the module's aggregate record. NULL only if the module is disabled. */
iochar_record *iochar_record_get(int m, const char *name);
/* Lookup without creating. */
iochar_record *iochar_record_find(int m, uint64_t id);
/* The record that stands for r now: r itself, or what a metadata-only
 * entry became (its full record, or the aggregate). */
static inline iochar_record *iochar_record_now(iochar_record *r) {
  if (__builtin_expect(r->flags & IOCHAR_REC_META, 0)) {
    iochar_record *f = __atomic_load_n(&((iochar_meta_entry *)r)->full, __ATOMIC_ACQUIRE);
    if (f) return f;
  }
  return r;
}
/* A module's meta slots (records.c): [m][idx] the slot of counter idx
 * (integer ones first, floating ones at n_int + j) in an entry, -1 none. */
#define IOCHAR_META_MAX 512
extern int16_t iochar_meta_slot[IOCHAR_MOD_COUNT][IOCHAR_META_MAX];
/* The way back: [m][k] the counter index slot k of an entry carries,
 * iochar_meta_count[m] of them (the live file's schema lists them). */
extern int16_t iochar_meta_index[IOCHAR_MOD_COUNT][IOCHAR_META_MAX];
/* Where integer counter idx (0 <= idx < n_int) or floating counter idx
 * (n_int <= idx: the (idx - n_int)th) of r lives, r a record or a
 * metadata-only entry; NULL: an entry does not carry it. */
static inline void *iochar_record_slot(iochar_record *r, int idx) {
  r = iochar_record_now(r);
  if (!(r->flags & IOCHAR_REC_META)) return &r->c[idx]; /* floating: after the n_int */
  int s = iochar_meta_slot[r->module][idx];
  return s < 0 ? NULL : &((iochar_meta_entry *)r)->c[s];
}
/* The first read or write of r (d->rec, r->lock held by the caller as the
 * data path takes it): a metadata-only entry becomes a full record, which
 * d now points at, and whose lock the caller holds instead (the entry's
 * released); a record is returned as it is.  d may be NULL. */
iochar_record *iochar_record_for_data(iochar_fdesc *d, iochar_record *r);
/* Visit every record of module m (at shutdown; no concurrent creation). */
void iochar_record_foreach(int m, void (*fn)(iochar_record *, void *), void *arg);
size_t iochar_record_count(int m);

/* ---- fd table (POSIX descriptors; opens and closes: records.h) ---------- */
/* Slots in the fd table (descriptors at or above it are not followed). */
#define IOCHAR_FDS_CAP (1 << 20)
extern _Atomic(iochar_fdesc *) *iochar_fds;
extern int iochar_fds_max;
/* iochar_fds_max stays 0 until iochar_fds is mapped (records.c), and is 0
 * again once recording stops (iochar_ready 0, at the log): one bound check
 * covers the three, so data wrappers need not read iochar_ready. */
static inline iochar_fdesc *iochar_fd_get(int fd) {
  if ((unsigned)fd >= (unsigned)__atomic_load_n(&iochar_fds_max, __ATOMIC_ACQUIRE)) return NULL;
  return atomic_load_explicit(&iochar_fds[fd], memory_order_acquire);
}
/* The description's offset after a seek (relaxed: threads racing on one
 * description's offset race in the kernel too). */
static inline void iochar_fd_seek(iochar_fdesc *d, int64_t off) {
  atomic_store_explicit(&d->offset, off, memory_order_relaxed);
}

/* ---- fixed pools (in-flight MPI requests, AIO operations) ---------------- */
/* A static array of items handed out and taken back, so tracking what is in
 * flight allocates nothing.  A free item's first word links the free list. */
typedef struct iochar_pool {
  iochar_spin lock;
  void *free;
  size_t next, n, size;
  char *items;
} iochar_pool;
#define IOCHAR_POOL_OF(array) \
  { .n = sizeof(array) / sizeof((array)[0]), .size = sizeof((array)[0]), .items = (char *)(array) }
/* An item, or NULL when all are in use. */
void *iochar_pool_get(iochar_pool *p);
void iochar_pool_put(iochar_pool *p, void *item);

/* ---- generic handle map (MPI_File, FILE*, hid_t, ncid -> record/state) -- */
typedef struct iochar_hmap iochar_hmap;
iochar_hmap *iochar_hmap_create(size_t capacity);
int iochar_hmap_put(iochar_hmap *h, uint64_t key, void *val);
void *iochar_hmap_get(iochar_hmap *h, uint64_t key);
void *iochar_hmap_del(iochar_hmap *h, uint64_t key);

/* ---- shared time series ------------------------------------------------- */
/* Data ops reach the series through iochar_rw_account (access.h); this adds
 * directly, for modules without per-record access state. */
void iochar_series_add(int m, int dir, double t, int64_t bytes, int64_t ops);

/* ---- job ---------------------------------------------------------------- */
typedef struct iochar_job {
  double start_wall, end_wall; /* epoch seconds */
  int rank, nprocs, nnodes;    /* 0/1/1 outside MPI */
  int mpi_initialized, finalized, written;
  int per_rank_log; /* MPI job ending without MPI_Finalize */
  int forked;       /* this process is a fork child */
  int log_pid;      /* pid in the log name (rank 0's in MPI jobs) */
  char exe[IOCHAR_PATH_MAX];
  char cmdline[8192];
  char hostname[256];
  char jobid[64];
  char user[64];
  char mpi_version[256];
  uint64_t memory_bound;
  int64_t folded_files[IOCHAR_MOD_COUNT];
  int64_t truncated_paths; /* distinct names longer than the path limit */
  int partial;             /* JOB `partial` bits (docs/log-format.md) */
  char log_tag[40];        /* appended to the log name (".exec<ns>": a log written before exec) */
  const char *ended_by;    /* "exec", "MPI_Abort": the JOB key ended_by */
  int abort_code;          /* MPI_Abort's error code */
} iochar_job;
extern iochar_job iochar_job_info;

/* Optional extra sections (call sites, trace) appended to a local log. */
struct iochar_buf;
extern int (*iochar_extra_sections)(struct iochar_buf *out, int *nsections);

#pragma GCC visibility pop

#endif
