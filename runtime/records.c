/* Record tables in a bounded arena, the fd table, and the generic handle map. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "config.h"
#include "core.h"
#include "live.h"
#include "paths.h"
#include "records.h"
#include "rw_state.h"
#include "warn.h"

#define NBUCKETS (1u << 14)

/* Record memory: one bump arena of IOCHAR_MEMORY bytes, mapped NORESERVE so
 * untouched pages cost nothing. Creation is under one lock (new names only).
 * A spin lock (core.h), not a pthread mutex: under MPI (a progress thread)
 * every new name takes it, and a mutex's lock and unlock were ~80
 * instructions of a first stat's ~950; it is held for a few hundred
 * instructions, rarely across a system call (a backing step), and a waiter
 * yields every 64 spins (iochar_spin_wait). */
static uint8_t *arena;
static size_t arena_used, arena_size;
static iochar_spin rec_mutex;
/* While the process has one thread it is not taken (iochar_spin_lock):
 * nothing under it creates a thread, and a signal handler is turned away by
 * the in-tool guard.  The fork handlers take it for real. */
static inline void rec_lock(void) { iochar_spin_lock(&rec_mutex); }
static inline void rec_unlock(void) { iochar_spin_unlock(&rec_mutex); }
static void rec_lock_always(void) {
  if (atomic_flag_test_and_set_explicit(&rec_mutex.f, memory_order_acquire))
    iochar_spin_wait(&rec_mutex);
}
static iochar_record *buckets[IOCHAR_MOD_COUNT][NBUCKETS];
static iochar_record *mod_list[IOCHAR_MOD_COUNT];
static size_t mod_count[IOCHAR_MOD_COUNT];
static iochar_record *aggregate[IOCHAR_MOD_COUNT];
/* Distinct folded (id, module) pairs, exact up to FOLD_SET entries per
 * process; the MPI reduction counts them once across ranks. */
#define FOLD_SET 65536
static uint64_t *fold_set;
static uint8_t fold_mod[FOLD_SET];
static int64_t fold_in_set[IOCHAR_MOD_COUNT];

iochar_fdesc *iochar_fdesc_home;
/* The pool: after the homes, as many again (live descriptions never
 * outnumber the table's slots), handed out from fdesc_next up. */
static iochar_fdesc *fdesc_pool, *fdesc_free;
static size_t fdesc_next;
static iochar_spin fdesc_lock;

static void *map_anon(size_t n) {
  void *p =
      mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Pages of the arena are faulted in ahead, POPULATE bytes at a time, with
 * one madvise: on a virtual machine a page fault costs 1-4 us (measured here
 * under nested virtualisation), a populated page ~1.3-2.5 us, and a new
 * record (~0.8 KiB) is most of the cost of a process's first call on a file
 * name.  Kernels before 5.14 refuse the advice; their pages fault one by one. */
#define POPULATE (64u << 10)
static size_t arena_populated;

/* Records and the states of records (access.h: iochar_rw_state, with the
 * top-k tables below it) are 8-aligned: nothing in them needs more. */
#define ALIGN(n) (((n) + 7) & ~(size_t)7)

/* The states of records grow down from the arena's top, made at a record's
 * first read or write; a record of a module that has them is owed their
 * bytes from its creation on, so the bound (records and states together
 * never pass IOCHAR_MEMORY) is decided when a file is first seen, never
 * later. */
static size_t tables_low; /* arena offset of the lowest state made */
static size_t tables_owed;
/* States the live file could not back (its file system full) live here, at
 * the offset they would have in the arena: mapped at start (NORESERVE:
 * nothing until used), so a record always gets one. */
static uint8_t *spare_tables;

/* Why the last arena_alloc failed: the bound, or the live file that could not
 * grow (its own warning said so: the bound's must not be said for it). */
static int alloc_past_bound;

static void *arena_alloc(size_t n, size_t owe) {
  n = ALIGN(n);
  alloc_past_bound = arena_used + n + tables_owed + owe > tables_low;
  if (alloc_past_bound || iochar_live_reserve(arena_used + n)) return NULL;
  void *p = arena + arena_used;
  arena_used += n;
  tables_owed += owe;
  if (arena_used > arena_populated && arena_populated < tables_low) {
    size_t from = arena_populated, len = POPULATE;
    while (from + len < arena_used) len += POPULATE;
    if (from + len > tables_low) len = tables_low - from;
    /* a live file's backing steps (iochar_live_reserve) populated these
     * pages already: a second madvise would only walk them again */
    if (!iochar_live_active()) madvise(arena + from, len, MADV_POPULATE_WRITE);
    arena_populated = from + len;
  }
  return p;
}

/* The bytes of a module's state with its tables (0: it has none). */
static size_t state_bytes(const iochar_module *m) {
  return m->rw ? IOCHAR_RW_TK_BYTES + ALIGN(m->state_size) : 0;
}

iochar_rw_state *iochar_rw_state_make(iochar_record *r) {
  size_t n = state_bytes(iochar_modules[r->module]);
  /* Called under r->lock.  From a hot step's bracket (core.h), whose lock
   * the fast rule may have skipped, the lock is held for real from here on
   * and the bracket paused: backing the state in the live file and a
   * warning are system calls. */
  int bracket = (iochar_in_tool & IOCHAR_FAST_MASK) != 0;
  if (bracket) {
    iochar_spin_hold_in(&r->lock);
    iochar_fast_pause();
  }
  rec_lock();
  uint8_t *mem;
  tables_owed -= n; /* owed since the record was made: always there */
  tables_low -= n;
  if (iochar_live_tables(tables_low) == 0)
    mem = arena + tables_low; /* fresh memory: zeros */
  else                        /* kept out of the live file */
    mem = spare_tables + tables_low;
  rec_unlock();
  if (bracket) iochar_fast_resume();
  iochar_rw_state *s = (iochar_rw_state *)(mem + IOCHAR_RW_TK_BYTES);
  iochar_rw_state_init(s);
  /* whole before the record points at it: a live file read after a kill
   * finds either no state or this one */
  __atomic_store_n(&r->state, (void *)s, __ATOMIC_RELEASE);
  return s;
}

/* A record: header, counters, name (core.h); the name's NUL included. */
static size_t record_bytes(const iochar_module *m, size_t namelen) {
  return ALIGN(sizeof(iochar_record) + 8 * (m->n_int + m->n_flt) + namelen + 1);
}

/* ---- metadata-only entries (core.h, iochar_meta_entry) ------------------ */

/* A module's meta slots (core.h: iochar_meta_slot, iochar_meta_index the
 * way back), filled here. */
static uint8_t *scratch; /* one record's room (meta_expand) */

/* What an entry carries, from the module's lists and its access layout: the
 * integer counters that sum (SUM) or keep one value (ANY) and the floating
 * timestamps and times, less every one that read and write accounting
 * sets (its layout's counters, but for the two alignments, which a name
 * has from its creation, and the metadata time) and the module's rare ones
 * (meta_rare: their first call makes the entry full).  Any new SUM or ANY
 * counter of a list is carried without more. */
static void meta_slots_make(int mi) {
  const iochar_module *m = iochar_modules[mi];
  if (!m || !m->meta_entries || !m->rw || m->n_int + m->n_flt > IOCHAR_META_MAX) return;
  const iochar_rw_layout *L = m->rw;
  uint8_t data[IOCHAR_META_MAX] = {0};
  for (const int16_t *k = m->meta_rare; k && *k >= 0; k++)
    if (*k < IOCHAR_META_MAX) data[*k] = 1; /* the module's rare ones: not carried */
#define DATA(i, n)                                                                   \
  for (int i_ = (i), k_ = 0; i_ >= 0 && k_ < (n) && i_ + k_ < IOCHAR_META_MAX; k_++) \
  data[i_ + k_] = 1
  for (int d = 0; d < 2; d++) {
    const int16_t ints[] = {L->ops[d],      L->bytes[d],         L->max_byte[d],
                            L->consec[d],   L->seq[d],           L->max_time_size[d],
                            L->rw_switches, L->file_not_aligned, L->mem_not_aligned};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) DATA(ints[k], 1);
    DATA(L->size_bin0[d], 10); /* the ten bins */
    DATA(L->access1, 9);       /* four values, four counts, APPROX */
    DATA(L->stride1, 9);
    const int16_t flts[] = {L->f_time[d], L->f_max_time[d], L->f_start[d], L->f_end[d]};
    for (size_t k = 0; k < sizeof flts / sizeof flts[0]; k++)
      DATA(flts[k] < 0 ? -1 : (int)m->n_int + flts[k], 1);
  }
#undef DATA
  uint16_t n = 0;
  for (uint32_t i = 0; i < m->n_int + m->n_flt; i++) {
    uint8_t op = i < m->n_int ? m->ints[i].op : m->flts[i - m->n_int].op;
    int keep = i < m->n_int
                   ? op == IOCHAR_OP_SUM || op == IOCHAR_OP_ANY
                   : op == IOCHAR_OP_TS_START || op == IOCHAR_OP_TS_END || op == IOCHAR_OP_TIME;
    iochar_meta_slot[mi][i] = keep && !data[i] ? (int16_t)n : -1;
    if (iochar_meta_slot[mi][i] >= 0) iochar_meta_index[mi][n++] = (int16_t)i;
  }
  iochar_meta_count[mi] = n;
}

static size_t meta_bytes(int mi, size_t namelen) {
  return ALIGN(sizeof(iochar_meta_entry) + 8 * (size_t)iochar_meta_count[mi] + namelen + 1);
}

static iochar_record *meta_make(int mi, uint64_t id, const char *name, size_t n, int trunc,
                                void *mem) {
  iochar_meta_entry *e = mem;
  e->h.id = id;
  e->h.module = (uint16_t)mi;
  e->h.flags = IOCHAR_REC_META | (trunc ? IOCHAR_REC_TRUNCATED : 0);
  char *path = (char *)(e->c + iochar_meta_count[mi]);
  memcpy(path, name, n + 1);
  if (trunc) memcpy(path + n, IOCHAR_TRUNC_MARK, IOCHAR_TRUNC_MARK_LEN + 1);
  const iochar_rw_layout *L = iochar_modules[mi]->rw;
  if (L->mem_alignment >= 0 && iochar_meta_slot[mi][L->mem_alignment] >= 0)
    e->c[iochar_meta_slot[mi][L->mem_alignment]] = 8;
  return &e->h;
}

/* The lock of a record by the rule its caller took another by: the fast
 * rule inside a hot step's bracket (core.h), else the one-thread rule. */
static void lock_as_caller(iochar_spin *l, int bracket) {
  if (bracket)
    iochar_spin_lock_in(l);
  else
    iochar_spin_lock(l);
}

static iochar_record *meta_promote(iochar_meta_entry *e);

/* Entry e's full record, made now if it has none (the caller holds e's lock,
 * by the rule of its bracket if it is in one).  As iochar_rw_state_make: the
 * record's memory may need the live file backed (system calls), so a bracket
 * pauses, e's lock held for real meanwhile (the caller's unlock frees it). */
static iochar_record *entry_full(iochar_meta_entry *e, int bracket) {
  iochar_record *f = __atomic_load_n(&e->full, __ATOMIC_ACQUIRE);
  if (f) return f;
  if (bracket) {
    iochar_spin_hold_in(&e->h.lock);
    iochar_fast_pause();
  }
  rec_lock();
  f = e->full ? e->full : meta_promote(e);
  rec_unlock();
  if (bracket) iochar_fast_resume();
  return f;
}

void iochar_meta_entry_apply(iochar_record *r, int idx, int ts_start, int ts_end, double t0,
                             double t1) {
  /* a full record (made now for a counter the entry does not carry); the
   * caller holds the entry's lock, and this takes the record's too */
  int bracket = (iochar_in_tool & IOCHAR_FAST_MASK) != 0;
  iochar_record *f = entry_full((iochar_meta_entry *)r, bracket);
  lock_as_caller(&f->lock, bracket);
  iochar_meta_apply(f, iochar_modules[r->module]->rw, idx, ts_start, ts_end, t0, t1);
  iochar_spin_unlock(&f->lock);
}

/* Fold entry e's counters into the module's aggregate (SUM and TIME add,
 * ANY keeps the first value, timestamps the earliest start and latest end),
 * as if every call had been counted there. */
static void meta_fold(iochar_meta_entry *e, iochar_record *agg) {
  int mi = e->h.module;
  const iochar_module *m = iochar_modules[mi];
  iochar_spin_lock(&agg->lock);
  for (uint16_t s = 0; s < iochar_meta_count[mi]; s++) {
    int i = iochar_meta_index[mi][s];
    if (i < (int)m->n_int) {
      if (m->ints[i].op == IOCHAR_OP_SUM)
        agg->c[i] += e->c[s];
      else if (!agg->c[i])
        agg->c[i] = e->c[s];
      continue;
    }
    double v = *(double *)&e->c[s], *a = (double *)&agg->c[i];
    uint8_t op = m->flts[i - m->n_int].op;
    if (op == IOCHAR_OP_TIME)
      *a += v;
    else if (op == IOCHAR_OP_TS_START && v != 0 && (*a == 0 || v < *a))
      *a = v;
    else if (op == IOCHAR_OP_TS_END && v > *a)
      *a = v;
  }
  if (e->h.meta_end > agg->meta_end) agg->meta_end = e->h.meta_end;
  iochar_spin_unlock(&agg->lock);
}

static iochar_record *record_make(int mi, uint64_t id, const char *name, size_t n, int trunc,
                                  void *mem) {
  const iochar_module *m = iochar_modules[mi];
  iochar_record *r = mem;
  r->id = id;
  r->module = (uint16_t)mi;
  char *path = (char *)(r->c + m->n_int + m->n_flt);
  memcpy(path, name, n + 1);
  if (trunc) { /* the log's NAMES entry says so (docs/log-format.md) */
    memcpy(path + n, IOCHAR_TRUNC_MARK, IOCHAR_TRUNC_MARK_LEN + 1);
    r->flags |= IOCHAR_REC_TRUNCATED;
  }
  if (m->rw && m->rw->mem_alignment >= 0) r->c[m->rw->mem_alignment] = 8;
  return r;
}

int iochar_records_init(void) {
  arena_size = iochar_cfg.memory;
  size_t most = 0; /* the largest record: the end's copy of an entry (meta_expand) */
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++)
    if (iochar_modules[mi]) {
      meta_slots_make(mi);
      size_t b = record_bytes(iochar_modules[mi], IOCHAR_PATH_MAX + IOCHAR_TRUNC_MARK_LEN);
      if (b > most) most = b;
    }
  scratch = map_anon(most);
  /* Aggregates and arena share one mapping, which becomes a live file
   * (runtime/live.c) when the process records its first file. */
  size_t agg_bytes = 0;
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++)
    if (iochar_modules[mi])
      agg_bytes += record_bytes(iochar_modules[mi], 16) + state_bytes(iochar_modules[mi]);
  uint8_t *agg;
  if (iochar_live_setup(agg_bytes, arena_size, &agg, &arena)) return -1;
  tables_low = arena_size;
  spare_tables = map_anon(arena_size);
  fold_set = map_anon(FOLD_SET * sizeof(uint64_t));
  const int fds_max = IOCHAR_FDS_CAP;
  iochar_fds = map_anon(sizeof(*iochar_fds) * (size_t)fds_max);
  iochar_fdesc_home = map_anon(sizeof(iochar_fdesc) * 2 * (size_t)fds_max);
  if (!arena || !spare_tables || !fold_set || !iochar_fds || !iochar_fdesc_home || !scratch)
    return -1;
  fdesc_pool = iochar_fdesc_home + fds_max;
  /* last, published: iochar_fd_get checks this bound only (core.h) */
  __atomic_store_n(&iochar_fds_max, fds_max, __ATOMIC_RELEASE);
  /* Aggregates live outside the bound so totals always have a home. */
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) {
    const iochar_module *m = iochar_modules[mi];
    if (!m) continue;
    /* an aggregate's state (tables, then state) follows it from the start:
     * aggregates are few and all busy */
    aggregate[mi] = record_make(mi, IOCHAR_AGG_ID, "<AGGREGATE>", 11, 0, agg);
    agg += record_bytes(m, 16);
    if (m->rw) {
      aggregate[mi]->state = agg + IOCHAR_RW_TK_BYTES;
      iochar_rw_state_init(aggregate[mi]->state);
    }
    agg += state_bytes(m);
  }
  return 0;
}

/* A file folded because no record could be had: the bound's warning when it
 * was the bound. */
static void bound_reached(void) {
  if (alloc_past_bound)
    iochar_warn_once(IOCHAR_WARN_MEMORY_BOUND,
                     "memory bound of %llu bytes (IOCHAR_MEMORY) reached; further files "
                     "are folded into one aggregate record per module (totals stay exact); "
                     "raise IOCHAR_MEMORY to keep them apart",
                     (unsigned long long)arena_size);
}

/* Count a folded file once (exact until the set fills; then every lookup). */
static void note_folded(int mi, uint64_t id) {
  uint64_t key = id ? id : 1;
  for (size_t i = (key ^ (uint64_t)mi) & (FOLD_SET - 1), n = 0; n < FOLD_SET;
       i = (i + 1) & (FOLD_SET - 1), n++) {
    if (fold_set[i] == key && fold_mod[i] == mi) return;
    if (fold_set[i] == 0) {
      fold_set[i] = key;
      fold_mod[i] = (uint8_t)mi;
      fold_in_set[mi]++;
      break;
    }
  }
  iochar_job_info.folded_files[mi]++;
  iochar_job_info.partial |= IOCHAR_PARTIAL_FOLDED;
}

size_t iochar_folded_keys(uint64_t *ids, int *mods, size_t max, int64_t in_set[]) {
  size_t n = 0;
  for (size_t i = 0; fold_set && i < FOLD_SET && n < max; i++)
    if (fold_set[i]) ids[n] = fold_set[i], mods[n++] = fold_mod[i];
  for (int m = 0; m < IOCHAR_MOD_COUNT; m++) in_set[m] = fold_in_set[m];
  return n;
}

iochar_record *iochar_record_find(int mi, uint64_t id) {
  iochar_record *r;
  rec_lock();
  for (r = buckets[mi][id & (NBUCKETS - 1)]; r && r->id != id; r = r->next)
    ;
  rec_unlock();
  return r ? iochar_record_now(r) : NULL;
}

/* Each thread's last record per module: reopening or re-stat'ing the same
 * file skips the table and its mutex.  Records live as long as the process
 * (a fork child keeps them), so a remembered pointer stays valid. */
static __thread struct {
  uint64_t id;
  iochar_record *rec;
} last_rec[IOCHAR_MOD_COUNT] __attribute__((tls_model("initial-exec")));

iochar_record *iochar_record_get(int mi, const char *name) {
  const iochar_module *m = iochar_modules[mi];
  if (!m || !arena) return NULL;
  /* The id iochar_path_resolve computed, when name is what it left; for a
   * name longer than the path limit, name is its first bytes and the id the
   * hash of all of it. */
  size_t n = strlen(name);
  const iochar_path_note *no = &iochar_path_last;
  int noted = no->buf == name && no->len == n;
  int trunc = noted && no->trunc;
  uint64_t id = noted ? no->id : iochar_hash_path(name);
  if (id == IOCHAR_AGG_ID) id--;
  if (last_rec[mi].rec && last_rec[mi].id == id) return iochar_record_now(last_rec[mi].rec);
  /* issue 41: a module turned off (IOCHAR_MODULES..., an excluded rank) makes
   * no record; tested past the cache, which such a module never fills */
  if (iochar_cfg.modules_off >> mi & 1) return NULL;
  rec_lock();
  iochar_record **b = &buckets[mi][id & (NBUCKETS - 1)], *r;
  for (r = *b; r && r->id != id; r = r->next)
    ;
  if (r) r = iochar_record_now(r);
  if (!r) {
    if (!iochar_live_active()) iochar_live_on(arena_used, tables_low); /* the first file */
    if (trunc) iochar_job_info.truncated_paths++;
    size_t nn = n + (trunc ? IOCHAR_TRUNC_MARK_LEN : 0);
    int meta = iochar_meta_count[mi] != 0; /* a name's first call: never a read or write */
    /* issue 41: IOCHAR_MAX_RECORDS folds as the memory bound does */
    int limited = iochar_cfg.max_records && mod_count[mi] >= iochar_cfg.max_records;
    void *mem = limited ? NULL
                : meta  ? arena_alloc(meta_bytes(mi, nn), 0)
                        : arena_alloc(record_bytes(m, nn), state_bytes(m));
    if (mem) {
      r = meta ? meta_make(mi, id, name, n, trunc, mem) : record_make(mi, id, name, n, trunc, mem);
      r->next = *b;
      *b = r;
      r->all_next = mod_list[mi];
      mod_list[mi] = r;
      mod_count[mi]++;
      iochar_live_publish(arena_used);
    } else {
      r = aggregate[mi];
      note_folded(mi, id);
      if (limited)
        iochar_warn_once(IOCHAR_WARN_MAX_RECORDS,
                         "record limit of %llu per module (IOCHAR_MAX_RECORDS) reached; further "
                         "files are folded into one aggregate record per module (totals stay "
                         "exact)",
                         (unsigned long long)iochar_cfg.max_records);
      else
        bound_reached();
    }
  }
  rec_unlock();
  if (r && r->id == id) last_rec[mi].id = id, last_rec[mi].rec = r;
  return r;
}

/* The record that has the same counters as entry e (not made full), in
 * scratch: what every reader of records at the end sees. */
static iochar_record *meta_expand(iochar_meta_entry *e) {
  int mi = e->h.module;
  const iochar_module *m = iochar_modules[mi];
  const char *name = (const char *)(e->c + iochar_meta_count[mi]);
  size_t n = strlen(name);
  memset(scratch, 0, sizeof(iochar_record) + 8 * (m->n_int + m->n_flt));
  iochar_record *r =
      record_make(mi, e->h.id, name, n, (e->h.flags & IOCHAR_REC_TRUNCATED) != 0, scratch);
  for (uint16_t s = 0; s < iochar_meta_count[mi]; s++) r->c[iochar_meta_index[mi][s]] = e->c[s];
  r->meta_end = e->h.meta_end;
  return r;
}

/* A list entry's record: itself, what it became, or (an entry never made
 * full) its counters as a record in scratch; NULL: folded into the aggregate. */
static iochar_record *listed(iochar_record *r) {
  if (!(r->flags & IOCHAR_REC_META)) return r;
  iochar_record *f = ((iochar_meta_entry *)r)->full;
  if (f == aggregate[r->module]) return NULL;
  return f ? f : meta_expand((iochar_meta_entry *)r);
}

/* Entry e's full record, made now (rec_mutex held): everything counted
 * so far copied in; past the memory bound, the module's aggregate, which
 * takes e's counts (meta_fold).  The record is whole and published before
 * e points at it: a live file read after a kill finds e alone, or the
 * record (e, then, is skipped by its id: reports/iochar/live.py). */
static iochar_record *meta_promote(iochar_meta_entry *e) {
  int mi = e->h.module;
  const iochar_module *m = iochar_modules[mi];
  const char *name = (const char *)(e->c + iochar_meta_count[mi]);
  size_t n = strlen(name);
  int trunc = (e->h.flags & IOCHAR_REC_TRUNCATED) != 0;
  void *mem = arena_alloc(record_bytes(m, n + (trunc ? IOCHAR_TRUNC_MARK_LEN : 0)), state_bytes(m));
  iochar_record *f;
  if (mem) {
    f = record_make(mi, e->h.id, name, n, trunc, mem);
    for (uint16_t s = 0; s < iochar_meta_count[mi]; s++) f->c[iochar_meta_index[mi][s]] = e->c[s];
    f->meta_end = e->h.meta_end;
    iochar_live_publish(arena_used);
  } else {
    f = aggregate[mi];
    meta_fold(e, f);
    mod_count[mi]--;
    note_folded(mi, e->h.id);
    bound_reached();
  }
  __atomic_store_n(&e->full, f, __ATOMIC_RELEASE);
  return f;
}

iochar_record *iochar_record_for_data(iochar_fdesc *d, iochar_record *r) {
  if (!(r->flags & IOCHAR_REC_META)) return r;
  int bracket = (iochar_in_tool & IOCHAR_FAST_MASK) != 0;
  iochar_record *f = entry_full((iochar_meta_entry *)r, bracket);
  if (d) __atomic_store_n(&d->rec, f, __ATOMIC_RELAXED);
  /* the caller's lock moves to the record: the entry's first, then freed */
  lock_as_caller(&f->lock, bracket);
  iochar_spin_unlock(&r->lock);
  return f;
}

void iochar_record_foreach(int mi, void (*fn)(iochar_record *, void *), void *arg) {
  for (iochar_record *r = mod_list[mi]; r; r = r->all_next) {
    iochar_record *x = listed(r);
    if (x) fn(x, arg);
  }
  if (aggregate[mi] && iochar_record_touched(aggregate[mi])) fn(aggregate[mi], arg);
}

size_t iochar_record_count(int mi) {
  return mod_count[mi] + (aggregate[mi] && iochar_record_touched(aggregate[mi]));
}

int iochar_record_touched(const iochar_record *r) {
  const iochar_module *m = iochar_modules[r->module];
  if (r->flags & IOCHAR_REC_META) {
    const iochar_meta_entry *e = (const iochar_meta_entry *)r;
    if (e->full) return iochar_record_touched(e->full);
    for (uint16_t s = 0; s < iochar_meta_count[r->module]; s++) {
      int i = iochar_meta_index[r->module][s];
      if (e->c[s] && i != m->rw->mem_alignment && i != m->rw->file_alignment) return 1;
    }
    return 0;
  }
  for (uint32_t i = 0; i < m->n_int; i++)
    if (r->c[i] && !(m->rw && i == (uint32_t)m->rw->mem_alignment) &&
        !(m->rw && i == (uint32_t)m->rw->file_alignment))
      return 1;
  const double *f = (const double *)(r->c + m->n_int);
  for (uint32_t i = 0; i < m->n_flt; i++)
    if (f[i] != 0) return 1;
  return 0;
}

/* A record's counters zeroed, but for the two alignments (facts of the
 * file, not counts); its state and tables stay its own, emptied. */
static void reset_record(const iochar_module *m, iochar_record *r) {
  int64_t keep_fa = m->rw && m->rw->file_alignment >= 0 ? r->c[m->rw->file_alignment] : 0;
  memset(r->c, 0, 8 * (m->n_int + m->n_flt));
  r->meta_end = 0;
  atomic_flag_clear(&r->lock.f);
  if (r->state) {
    memset(iochar_rw_tk(r->state), 0, IOCHAR_RW_TK_BYTES + m->state_size);
    iochar_rw_state_init(r->state);
  }
  if (m->rw) {
    if (m->rw->mem_alignment >= 0) r->c[m->rw->mem_alignment] = 8;
    if (m->rw->file_alignment >= 0) r->c[m->rw->file_alignment] = keep_fa;
  }
}

/* The same for a metadata-only entry, and for what it became. */
static void reset_entry(const iochar_module *m, iochar_meta_entry *e) {
  int mi = e->h.module, fa = m->rw->file_alignment, ma = m->rw->mem_alignment;
  for (uint16_t s = 0; s < iochar_meta_count[mi]; s++) {
    int i = iochar_meta_index[mi][s];
    e->c[s] = i == ma ? 8 : i == fa ? e->c[s] : 0;
  }
  e->h.meta_end = 0;
  atomic_flag_clear(&e->h.lock.f);
  if (e->full && e->full != aggregate[mi]) reset_record(m, e->full);
}

/* In a fork child, the pointers the parent's other threads stored into the
 * shared live file between the fork and the child's copy of it (live.c,
 * iochar_live_on): an entry made full (`full`) or a record's first state,
 * made past what this process's copy holds.  They point at memory the child
 * hands out again (its arena past arena_used, its states below tables_low),
 * and were read back there as a record of another name (issue 38, seen in
 * CI).  For the child those calls never happened. */
static int in_states(const void *s) {
  const uint8_t *t = (const uint8_t *)s - IOCHAR_RW_TK_BYTES;
  return (t >= arena + tables_low && t < arena + arena_size) ||
         (t >= spare_tables + tables_low && t < spare_tables + arena_size);
}
static void state_check(iochar_record *r) {
  if (r->state && !in_states(r->state)) r->state = NULL;
}
static void forked_pointers_check(int mi, iochar_record *r) {
  if (!(r->flags & IOCHAR_REC_META)) {
    state_check(r);
    return;
  }
  iochar_meta_entry *e = (iochar_meta_entry *)r;
  iochar_record *f = e->full;
  if (!f || f == aggregate[mi]) return;
  if ((uint8_t *)f < arena || (uint8_t *)f >= arena + arena_used)
    e->full = NULL;
  else
    state_check(f);
}

/* fork child: keep records (inherited fds still point at them) but zero what
 * they counted, so the child reports only its own I/O. */
void iochar_records_reset(void) {
  atomic_flag_clear(&rec_mutex.f);
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) {
    const iochar_module *m = iochar_modules[mi];
    if (!m) continue;
    for (iochar_record *r = mod_list[mi]; r; r = r->all_next) {
      forked_pointers_check(mi, r); /* before the reset follows them */
      if (r->flags & IOCHAR_REC_META)
        reset_entry(m, (iochar_meta_entry *)r);
      else
        reset_record(m, r);
    }
    if (aggregate[mi]) reset_record(m, aggregate[mi]);
    iochar_job_info.folded_files[mi] = 0;
  }
  iochar_job_info.partial = 0;
  iochar_job_info.truncated_paths = 0;
  memset(fold_set, 0, FOLD_SET * sizeof(uint64_t));
  memset(fold_in_set, 0, sizeof fold_in_set);
  atomic_flag_clear(&fdesc_lock.f);
}

/* Did this process record anything?  (A fork child holds its parent's
 * records, zeroed: those do not count.) */
int iochar_records_any_touched(void) {
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) {
    for (iochar_record *r = mod_list[mi]; r; r = r->all_next)
      if (iochar_record_touched(r)) return 1;
    if (aggregate[mi] && iochar_record_touched(aggregate[mi])) return 1;
  }
  return 0;
}

/* Move the record memory into a fresh live file (a fork child, a failed
 * exec): nothing may be creating a record meanwhile. */
void iochar_records_live_again(void) {
  if (iochar_live_active()) iochar_live_on(arena_used, tables_low);
}

/* An MPI rank keeps a live file from MPI_Init on, records or not, so that a
 * killed rank is named (and not silently absent) when its job is read. */
void iochar_records_live_now(void) {
  rec_lock_always();
  if (!iochar_live_active()) iochar_live_on(arena_used, tables_low);
  iochar_live_sync_job();
  iochar_spin_unlock(&rec_mutex);
}

void iochar_records_lock(void) { rec_lock_always(); }
void iochar_records_unlock(void) { iochar_spin_unlock(&rec_mutex); }

/* ---- fd table ----------------------------------------------------------- */

/* (iochar_fds_max is 0 until the table is mapped: the bound checks cover it) */

void iochar_fdesc_put(iochar_fdesc *d) {
  iochar_spin_lock(&fdesc_lock);
  d->free_next = fdesc_free;
  fdesc_free = d;
  iochar_spin_unlock(&fdesc_lock);
}

void iochar_fd_open_pooled(int fd, iochar_record *rec, int append) {
  iochar_spin_lock(&fdesc_lock);
  iochar_fdesc *d = fdesc_free;
  if (d)
    fdesc_free = d->free_next;
  else if (fdesc_next < IOCHAR_FDS_CAP)
    d = &fdesc_pool[fdesc_next++];
  iochar_spin_unlock(&fdesc_lock);
  if (d) { /* plain stores: the exchange below publishes them */
    iochar_fdesc_fill(d, rec, append);
    d->free_next = NULL;
    atomic_store_explicit(&d->refs, 1, memory_order_relaxed); /* the table's */
  }
  iochar_fdesc *old = atomic_exchange(&iochar_fds[fd], d);
  if (old) iochar_fdesc_release(old);
}

void iochar_fd_set(int fd, iochar_fdesc *d) {
  if ((unsigned)fd >= (unsigned)iochar_fds_max) return;
  if (d) atomic_fetch_add(&d->refs, 1);
  iochar_fdesc *old = atomic_exchange(&iochar_fds[fd], d);
  if (old) iochar_fdesc_release(old);
}

/* ---- handle map: open addressing, linear probing, backward-shift delete -- */

struct iochar_hmap {
  iochar_spin lock;
  size_t mask;
  uint64_t *keys;
  void **vals;
};

void *iochar_pool_get(iochar_pool *p) {
  iochar_spin_lock(&p->lock);
  void *item = p->free;
  if (item)
    memcpy(&p->free, item, sizeof(void *));
  else if (p->next < p->n)
    item = p->items + p->size * p->next++;
  iochar_spin_unlock(&p->lock);
  return item;
}

void iochar_pool_put(iochar_pool *p, void *item) {
  iochar_spin_lock(&p->lock);
  memcpy(item, &p->free, sizeof(void *));
  p->free = item;
  iochar_spin_unlock(&p->lock);
}

iochar_hmap *iochar_hmap_create(size_t cap) {
  size_t n = 16;
  while (n < cap * 2) n <<= 1;
  iochar_hmap *h = map_anon(sizeof *h + n * 16);
  if (!h) return NULL;
  h->mask = n - 1;
  h->keys = (uint64_t *)(h + 1);
  h->vals = (void **)(h->keys + n);
  return h;
}

static size_t hslot(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  return (size_t)(k ^ (k >> 33));
}

int iochar_hmap_put(iochar_hmap *h, uint64_t key, void *val) {
  if (!h || !val) return -1;
  iochar_spin_lock(&h->lock);
  size_t i = hslot(key) & h->mask, n = 0;
  while (h->vals[i] && h->keys[i] != key && n++ <= h->mask) i = (i + 1) & h->mask;
  int ok = n <= h->mask;
  if (ok) {
    h->keys[i] = key;
    h->vals[i] = val;
  }
  iochar_spin_unlock(&h->lock);
  return ok ? 0 : -1;
}

void *iochar_hmap_get(iochar_hmap *h, uint64_t key) {
  if (!h) return NULL;
  iochar_spin_lock(&h->lock);
  void *v = NULL;
  for (size_t i = hslot(key) & h->mask, n = 0; h->vals[i] && n <= h->mask;
       i = (i + 1) & h->mask, n++)
    if (h->keys[i] == key) {
      v = h->vals[i];
      break;
    }
  iochar_spin_unlock(&h->lock);
  return v;
}

void *iochar_hmap_del(iochar_hmap *h, uint64_t key) {
  if (!h) return NULL;
  iochar_spin_lock(&h->lock);
  void *v = NULL;
  size_t i = hslot(key) & h->mask, n = 0;
  while (h->vals[i] && h->keys[i] != key && n++ <= h->mask) i = (i + 1) & h->mask;
  if (h->vals[i] && h->keys[i] == key) {
    v = h->vals[i];
    h->vals[i] = NULL;
    /* Shift back later entries of the probe run so lookups stay correct. */
    for (size_t j = (i + 1) & h->mask; h->vals[j]; j = (j + 1) & h->mask) {
      size_t home = hslot(h->keys[j]) & h->mask;
      if (((j - home) & h->mask) >= ((j - i) & h->mask)) {
        h->keys[i] = h->keys[j];
        h->vals[i] = h->vals[j];
        h->vals[j] = NULL;
        i = j;
      }
    }
  }
  iochar_spin_unlock(&h->lock);
  return v;
}
