/* The live file: record memory in a file-backed shared mapping that outlives a
 * killed process (live.h; the layout is in docs/log-format.md, "Live files"). */
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "jobkey.h"
#include "logdir.h"
#include "rw_state.h"
#include "safefile.h"
#include "warn.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define H iochar_live_header
_Static_assert(offsetof(H, state) == 24 && offsetof(H, pid) == 32 && offsetof(H, uid) == 56 &&
                   offsetof(H, start_wall) == 64 && offsetof(H, schema_off) == 88 &&
                   offsetof(H, agg_off) == 104 && offsetof(H, arena_off) == 120 &&
                   offsetof(H, arena_used) == 136 && offsetof(H, seq) == 144 &&
                   offsetof(H, rec_module_off) == 152 && offsetof(H, folded) == 184 &&
                   offsetof(H, partial) == 312 && offsetof(H, jobid) == 320 &&
                   offsetof(H, mpi_version) == 704 && offsetof(H, exe) == 960 &&
                   offsetof(H, cmdline) == 5056 && offsetof(H, map_addr) == 13248 &&
                   offsetof(H, tables_low) == 13256 && offsetof(H, tk_off) == 13264 &&
                   offsetof(H, rec_state_off) == 13266 && offsetof(H, tk_below) == 13268 &&
                   offsetof(H, rec_flags_off) == 13272 && offsetof(H, meta_c_off) == 13276 &&
                   offsetof(H, dest_len) == 13278 && offsetof(H, log_dest) == 13280 &&
                   offsetof(H, job_key) == 16384 && offsetof(H, task_rank) == 16816 &&
                   offsetof(H, proc_start) == 16832 && offsetof(H, program) == 17104 &&
                   sizeof(H) <= IOCHAR_LIVE_HEADER,
               "live header layout (docs/log-format.md, reports/iochar/live.py)");
#undef H

/* The arena (records from the bottom, their states and top-k tables from
 * the top) is backed on disk in steps that start at GROW_MIN and double up
 * to GROW: a small job's few records need a page or two, and each page
 * backed is a fault (2-3 us: a page-cache page zeroed, a block reserved) at
 * start and a page freed at the end; a job making many files soon takes
 * 256 KiB a time. */
#define GROW_MIN (16u << 10)
#define GROW (256u << 10)
#define READ_AHEAD_AT (1u << 20) /* records' bytes from which faults read ahead */

static uint8_t *base; /* the whole mapping: header, schema, aggregates, arena */
static size_t map_size, arena_off, schema_len;
static iochar_live_header *hdr;        /* == base while live, else NULL */
static size_t reserved;                /* arena bytes backed by disk blocks */
static size_t tables_backed;           /* arena offset from which the tables are backed */
static int live_failed;                /* the live file cannot be had: stay anonymous */
static size_t arena_step, tables_step; /* the next backing steps (GROW_MIN..GROW) */
static int read_ahead;                 /* the records' unbacked part is MADV_NORMAL */
static char live_path[IOCHAR_PATH_MAX + 64];
static char dest[sizeof(((iochar_live_header *)0)->log_dest)]; /* the header's log_dest */

int iochar_live_active(void) { return hdr != NULL; }

const iochar_live_header *iochar_live_self(void) { return (const iochar_live_header *)base; }

static size_t page_up(size_t n) { return (n + 4095) & ~(size_t)4095; }

static void put16(uint8_t **p, uint16_t v) { memcpy(*p, &v, 2), *p += 2; }
static void put32(uint8_t **p, uint32_t v) { memcpy(*p, &v, 4), *p += 4; }
static void putstr(uint8_t **p, const char *s) {
  size_t n = strlen(s);
  put16(p, (uint16_t)n);
  memcpy(*p, s, n);
  *p += n;
}

/* The schema: what a reader needs to walk and finish the records without
 * any compiled-in list.  Per module: u16 id, name, version, n_int, n_flt,
 * state_size, the access layout (30 x i16, or all -1), more-ops (u8 n, 8 x
 * i16), then every counter's name and reduction op, then (version 4) u16 n
 * and the n counter indices its metadata-only entries carry (core.h). */
static size_t schema_write(uint8_t *out) {
  uint8_t *p = out;
  uint32_t nmod = 0;
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) nmod += iochar_modules[mi] != NULL;
  put32(&p, nmod);
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) {
    const iochar_module *m = iochar_modules[mi];
    if (!m) continue;
    put16(&p, (uint16_t)mi);
    putstr(&p, m->name);
    put32(&p, m->version);
    put32(&p, m->n_int);
    put32(&p, m->n_flt);
    put32(&p, (uint32_t)m->state_size);
    iochar_rw_layout none;
    memset(&none, 0xff, sizeof none);
    /* the 30 counter indices; the module id after them is not written */
    _Static_assert(offsetof(iochar_rw_layout, module) == 60, "30 x int16");
    memcpy(p, m->rw ? m->rw : &none, 60);
    p += 60;
    *p++ = m->n_more_ops;
    memcpy(p, m->more_ops, 16);
    p += 16;
    for (uint32_t i = 0; i < m->n_int; i++) putstr(&p, m->ints[i].name), *p++ = m->ints[i].op;
    for (uint32_t i = 0; i < m->n_flt; i++) putstr(&p, m->flts[i].name), *p++ = m->flts[i].op;
    put16(&p, iochar_meta_count[mi]);
    for (uint16_t k = 0; k < iochar_meta_count[mi]; k++)
      put16(&p, (uint16_t)iochar_meta_index[mi][k]);
  }
  return (size_t)(p - out);
}

static size_t schema_bound(void) {
  size_t n = 4;
  for (int mi = 0; mi < IOCHAR_MOD_COUNT; mi++) {
    const iochar_module *m = iochar_modules[mi];
    if (!m) continue;
    n += 2 + 2 + strlen(m->name) + 16 + 60 + 17;
    for (uint32_t i = 0; i < m->n_int; i++) n += 3 + strlen(m->ints[i].name);
    for (uint32_t i = 0; i < m->n_flt; i++) n += 3 + strlen(m->flts[i].name);
    n += 2 + 2 * (size_t)iochar_meta_count[mi];
  }
  return n;
}

int iochar_live_setup(size_t agg_bytes, size_t arena_bytes, uint8_t **agg, uint8_t **arena) {
  schema_len = schema_bound();
  size_t agg_off = page_up(IOCHAR_LIVE_HEADER + schema_len);
  arena_off = page_up(agg_off + agg_bytes);
  map_size = arena_off + arena_bytes;
  void *p = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return -1;
  base = p;
  schema_len = schema_write(base + IOCHAR_LIVE_HEADER);
  iochar_live_header *h = (iochar_live_header *)base;
  memcpy(h->magic, "IOCHARLV", 8);
  h->version = IOCHAR_LIVE_VERSION;
  h->header_size = IOCHAR_LIVE_HEADER;
  h->map_size = map_size;
  h->rec_size = sizeof(iochar_record);
  h->rec_module_off = offsetof(iochar_record, module);
  const uint16_t rw[15] = {offsetof(iochar_rw_state, run_k),
                           offsetof(iochar_rw_state, run_len),
                           offsetof(iochar_rw_state, run_next),
                           offsetof(iochar_rw_state, run_dir),
                           offsetof(iochar_rw_state, run_timed),
                           offsetof(iochar_rw_state, run_t),
                           offsetof(iochar_rw_state, last_byte),
                           offsetof(iochar_rw_state, last_end),
                           offsetof(iochar_rw_topk, access),
                           offsetof(iochar_rw_topk, stride),
                           sizeof(iochar_topk),
                           offsetof(iochar_topk, val),
                           offsetof(iochar_topk, cnt),
                           offsetof(iochar_topk, n),
                           offsetof(iochar_topk, last)};
  memcpy(h->rw_off, rw, sizeof rw);
  h->tk_off = 0;
  h->rec_state_off = offsetof(iochar_record, state);
  h->tk_below = IOCHAR_RW_TK_BYTES;
  h->rec_flags_off = offsetof(iochar_record, flags);
  h->meta_full_off = offsetof(iochar_meta_entry, full);
  h->meta_c_off = offsetof(iochar_meta_entry, c);
  h->map_addr = (uint64_t)(uintptr_t)base;
  h->tables_low = arena_bytes;
  tables_backed = arena_bytes;
  h->schema_off = IOCHAR_LIVE_HEADER;
  h->schema_len = schema_len;
  h->agg_off = agg_off;
  h->agg_size = agg_bytes;
  h->arena_off = arena_off;
  h->arena_size = arena_bytes;
  *agg = base + agg_off;
  *arena = base + arena_off;
  return 0;
}

static void copy_str(char *dst, size_t n, const char *src) {
  size_t l = strnlen(src, n - 1);
  memcpy(dst, src, l);
  memset(dst + l, 0, n - l);
}

void iochar_live_sync_job(void) {
  iochar_live_header *h = (iochar_live_header *)base;
  const iochar_job *j = &iochar_job_info;
  if (!h) return;
  h->pid = (int32_t)getpid();
  h->rank = j->rank;
  h->nprocs = j->nprocs;
  h->log_pid = j->log_pid;
  h->mpi_initialized = j->mpi_initialized;
  h->forked = j->forked;
  h->uid = (uint32_t)getuid();
  h->start_wall = j->start_wall;
  h->memory_bound = iochar_cfg.memory;
  for (int m = 0; m < IOCHAR_MOD_COUNT && m < 16; m++) h->folded[m] = j->folded_files[m];
  h->partial = j->partial;
  copy_str(h->jobid, sizeof h->jobid, j->jobid);
  copy_str(h->user, sizeof h->user, j->user);
  copy_str(h->hostname, sizeof h->hostname, j->hostname);
  copy_str(h->mpi_version, sizeof h->mpi_version, j->mpi_version);
  copy_str(h->exe, sizeof h->exe, j->exe);
  copy_str(h->cmdline, sizeof h->cmdline, j->cmdline);
  copy_str(h->log_dest, sizeof h->log_dest, dest);
  h->dest_len = (uint16_t)strlen(dest);
  const iochar_jobkey *k = &iochar_jobkey_info; /* its job (runtime/jobkey.c) */
  copy_str(h->job_key, sizeof h->job_key, j->mpi_initialized ? "" : k->key);
  copy_str(h->job_key_from, sizeof h->job_key_from, k->key_from);
  copy_str(h->rank_from, sizeof h->rank_from, k->rank_from);
  copy_str(h->world_from, sizeof h->world_from, k->world_from);
  h->task_rank = k->task_rank;
  h->world_size = k->world_size;
  h->parent_pid = k->parent_pid;
  h->proc_start = k->start;
  h->parent_start = k->parent_start;
  copy_str(h->interpreter, sizeof h->interpreter, k->interpreter);
  copy_str(h->program, sizeof h->program, k->program);
  __atomic_add_fetch(&h->seq, 1, __ATOMIC_RELEASE);
}

/* Where the live file goes (docs/deploying.md): node-local, off the shared
 * log directory.  In the live directory (IOCHAR_LIVEDIR, made 0700 if
 * missing), this user's private directory iochar-<uid> (0700, ours, made if
 * missing), then a directory named by the hash of the log's real directory
 * (16 hex: the reader on this node finds a log directory's live files
 * there, reports/iochar/livedir.py), then ".<log name>.<random>.live". */
static char final[IOCHAR_PATH_MAX];         /* the log name the live file is named after */
static char live_sub[IOCHAR_PATH_MAX + 64]; /* its directory, removed when empty */

static void hex16(char out[17], uint64_t v) {
  for (int i = 15; i >= 0; i--, v >>= 4) out[i] = "0123456789abcdef"[v & 15];
  out[16] = 0;
}

/* The user's private directory in the live directory: a descriptor, or -1
 * with *why set (errno's text, or what is wrong with what is there). */
static int private_dir(char *path, size_t n, const char **why) {
  const char *top = iochar_cfg.livedir;
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  struct stat st;
  int fd = open(top, flags);
  if (fd < 0 && errno == ENOENT && (mkdir(top, 0700) == 0 || errno == EEXIST))
    fd = open(top, flags); /* made now, by us or by another rank */
  if (fd < 0 || fstat(fd, &st) != 0) goto fail;
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    close(fd);
    *why = "every user can write it and it has no sticky bit";
    return -1;
  }
  char name[32];
  snprintf(name, sizeof name, "iochar-%u", (unsigned)getuid());
  if (mkdirat(fd, name, 0700) != 0 && errno != EEXIST) goto fail;
  int u = openat(fd, name, flags | O_NOFOLLOW);
  close(fd);
  fd = u;
  if (fd < 0 || fstat(fd, &st) != 0) goto fail;
  if (st.st_uid != getuid() || (st.st_mode & 077)) {
    close(fd);
    *why = st.st_uid != getuid() ? "iochar-<uid> there belongs to another user"
                                 : "iochar-<uid> there is open to other users";
    return -1;
  }
  if (snprintf(path, n, "%s/%s", top, name) >= (int)n) {
    close(fd);
    *why = strerror(ENAMETOOLONG);
    return -1;
  }
  return fd;
fail:
  *why = strerror(errno);
  if (fd >= 0) close(fd);
  return -1;
}

static int create_file(const char **why) {
  char real[IOCHAR_PATH_MAX], user[IOCHAR_PATH_MAX], key[17], name[320];
  *why = strerror(ENAMETOOLONG);
  if (iochar_log_path(final, sizeof final, 0) != 0 || iochar_log_dir_real(real, sizeof real))
    return -1;
  int ufd = private_dir(user, sizeof user, why);
  if (ufd < 0) return -1;
  hex16(key, iochar_hash_path(real));
  const char *slash = strrchr(final, '/');
  const char *b = slash ? slash + 1 : final;
  int dl = snprintf(dest, sizeof dest, "%s/%s", real, b);
  if (dl < 0 || dl >= (int)sizeof dest) dest[0] = 0; /* too long for the header */
  int fd = -1;
  errno = ENAMETOOLONG;
  for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
    uint64_t r;
    char hex[17];
    iochar_random_bytes(&r, sizeof r);
    hex16(hex, r);
    snprintf(name, sizeof name, "%s/.%.200s.%s.live", key, b, hex);
    if (snprintf(live_path, sizeof live_path, "%s/%s", user, name) >= (int)sizeof live_path ||
        (mkdirat(ufd, key, 0700) != 0 && errno != EEXIST))
      break;
    /* ENOENT: the last live file of that directory went, and the directory
     * with it, between the two calls; EEXIST: a name taken: again. */
    fd = openat(ufd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != ENOENT && errno != EEXIST) break;
  }
  if (fd < 0) {
    *why = strerror(errno);
    live_path[0] = 0;
  } else {
    *why = NULL;
    snprintf(live_sub, sizeof live_sub, "%s/%s", user, key); /* a prefix of live_path */
  }
  close(ufd);
  return fd;
}

/* Back [from, to) of the mapping with disk blocks: MADV_POPULATE_WRITE faults
 * the pages in for writing and fails (instead of a later SIGBUS) when the file
 * system is full.  Kernels before 5.14 lack it: fd >= 0 then backs the whole
 * file up front. */
static int back(int fd, size_t from, size_t to) {
  if (to > map_size) to = map_size;
  from &= ~(size_t)4095; /* madvise wants a page start (EINVAL otherwise) */
  if (from >= to) return 0;
  if (madvise(base + from, to - from, MADV_POPULATE_WRITE) == 0) return 0;
  if (errno != EINVAL || fd < 0) return -1;
  return posix_fallocate(fd, 0, (off_t)map_size) == 0 ? 1 : -1;
}

void iochar_live_on(size_t used, size_t tables_low) {
  if (!base || live_failed) return;
  /* Off when asked, and when the file size limit (ulimit -f) is below the
   * file's size: growing past it would raise SIGXFSZ in the application.  A
   * log directory refused at start leaves it on: the epilogue makes the log
   * from it. */
  struct rlimit fs;
  if (iochar_envs.live_off || (getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != RLIM_INFINITY &&
                               fs.rlim_cur < map_size)) {
    live_failed = 1;
    return;
  }
  int e = errno;
  iochar_in_tool++;
  int was_shared = hdr != NULL; /* a fork child still shares its parent's pages */
  hdr = NULL;
  live_path[0] = 0;
  size_t keep = arena_off + used, tables = arena_off + tables_low;
  /* The header is whole before the file exists (a rank may be killed at any
   * moment from here on), except in a fork child: its base is still the
   * parent's until remapped. */
  if (!was_shared) iochar_live_sync_job();
  const char *why = NULL;
  int fd = create_file(&why);
  int ok = fd >= 0 && ftruncate(fd, (off_t)map_size) == 0;
  /* The current contents go into the file first, then the file is mapped
   * over the same addresses: every record pointer stays valid. */
  for (size_t at = 0; ok && at < map_size;) {
    if (at == keep) at = tables; /* the part between is not used yet */
    if (at >= map_size) break;
    size_t end = at < keep ? keep : map_size;
    ssize_t w = pwrite(fd, base + at, end - at, (off_t)at);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      ok = 0;
    } else {
      at += (size_t)w;
    }
  }
  void *p =
      ok ? mmap(base, map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) : MAP_FAILED;
  int r = -1;
  if (p != MAP_FAILED) {
    hdr = (iochar_live_header *)base;
    /* No read-ahead on faults while the records are few: the file is sparse
     * past what was just written, and the first write fault on a hole reads
     * ahead a growing window of holes (page cache zeroed, freed at the end):
     * backing 64 KiB took 1.3-2.7 ms with it on ext4, 0.03-0.08 ms without.
     * Past READ_AHEAD_AT of records (iochar_live_reserve) read-ahead is on
     * again for the records' part: for a job making thousands of files it
     * allocates the pages in bulk (1.9 us a page backed, 2.5 without). */
    madvise(base, map_size, MADV_RANDOM);
    read_ahead = 0;
    reserved = 0;
    arena_step = tables_step = GROW_MIN;
    r = back(fd, 0, keep + arena_step);
    if (r < 0) why = "its file system is full";
    /* Backed to a page end: the next step starts on a page.  A fork child
     * moves here with its parent's records (used not a page multiple), and
     * its next step started mid-page: madvise said EINVAL, taken for a full
     * file system, and every further file was folded (issue 38). */
    reserved = r == 1 ? map_size - arena_off : page_up(used + arena_step);
    tables_backed = r == 1 ? 0 : tables_low; /* written above: backed */
  }
  if (fd >= 0) close(fd);
  if (r < 0) {
    /* Back to private memory with the same contents (the file is shared with
     * nobody): a private copy-on-write view of what is mapped now. */
    if (p != MAP_FAILED || was_shared) {
      size_t nt = map_size - tables;
      void *q = mmap(NULL, keep + nt, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (q != MAP_FAILED) {
        memcpy(q, base, keep);
        memcpy((uint8_t *)q + keep, base + tables, nt);
        mmap(base, map_size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        memcpy(base, q, keep);
        memcpy(base + tables, (uint8_t *)q + keep, nt);
        munmap(q, keep + nt);
      }
    }
    if (!why) why = strerror(errno);
    if (fd >= 0) unlink(live_path), rmdir(live_sub);
    live_path[0] = live_sub[0] = 0;
    hdr = NULL;
    live_failed = 1;
    iochar_warn_once(IOCHAR_WARN_LIVEDIR,
                     "live directory %s: %s; counters kept in memory only (as IOCHAR_LIVE=0: "
                     "a killed process leaves none), the log is still written at the end",
                     iochar_cfg.livedir, why);
  } else {
    hdr->state = IOCHAR_LIVE_RUNNING;
    hdr->status = 0;
    hdr->arena_used = used;
    hdr->tables_low = tables_low;
    iochar_live_sync_job();
  }
  iochar_in_tool--;
  errno = e;
}

/* A backing step failed: say why, as it is.  MADV_POPULATE_WRITE fails with
 * EFAULT where a store would raise SIGBUS (no block: the file system or its
 * quota full, ENOMEM for tmpfs past its size or the memory cgroup). */
static void back_failed(void) {
  int e = errno;
  if (e == EFAULT || e == ENOSPC || e == EDQUOT || e == ENOMEM)
    iochar_warn_once(IOCHAR_WARN_LIVE_FULL,
                     "live directory %s: no room for the live file's next pages (%s); further "
                     "files are folded into one aggregate record per module (totals stay "
                     "exact)",
                     iochar_cfg.livedir, e == EFAULT ? "its file system is full" : strerror(e));
  else
    iochar_warn_once(IOCHAR_WARN_LIVE_FULL,
                     "live directory %s: cannot back the live file's next pages (madvise: %s); "
                     "further files are folded into one aggregate record per module (totals "
                     "stay exact)",
                     iochar_cfg.livedir, strerror(e));
  errno = e;
}

int iochar_live_reserve(size_t end) {
  if (!hdr || end <= reserved) return 0;
  size_t step = arena_step, to = (end + step - 1) / step * step + step;
  if (back(-1, arena_off + reserved, arena_off + to) != 0) {
    back_failed();
    return -1;
  }
  reserved = to;
  if (arena_step < GROW) arena_step *= 2;
  if (!read_ahead && reserved >= READ_AHEAD_AT && reserved < tables_backed) {
    size_t from = (arena_off + reserved) & ~(size_t)4095;
    madvise(base + from, arena_off + tables_backed - from, MADV_NORMAL);
    read_ahead = 1;
  }
  return 0;
}

int iochar_live_tables(size_t low) {
  if (!hdr) return 0;
  if (low < tables_backed) {
    size_t to = low / tables_step * tables_step; /* down to a step: one madvise per step */
    /* not far into the records' backed part; madvise wants a page start */
    if (to < reserved) to = low & ~(size_t)4095;
    if (back(-1, arena_off + to, arena_off + tables_backed) != 0) {
      back_failed();
      return -1;
    }
    tables_backed = to;
    if (tables_step < GROW) tables_step *= 2;
  }
  __atomic_store_n(&hdr->tables_low, low, __ATOMIC_RELEASE);
  return 0;
}

void iochar_live_publish(size_t used) {
  if (hdr) __atomic_store_n(&hdr->arena_used, used, __ATOMIC_RELEASE);
}

void iochar_live_end(int state, int status, int said) {
  if (!hdr) return;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  hdr->end_wall = (double)t.tv_sec + t.tv_nsec * 1e-9;
  hdr->status = status;
  hdr->partial = iochar_job_info.partial;
  for (int m = 0; m < IOCHAR_MOD_COUNT && m < 16; m++)
    hdr->folded[m] = iochar_job_info.folded_files[m];
  __atomic_store_n(&hdr->state, (uint32_t)state, __ATOMIC_RELEASE);
  __atomic_add_fetch(&hdr->seq, 1, __ATOMIC_RELEASE);
  if (!said) {
    iochar_live_done(); /* nothing to say, as a log would not be written */
    return;
  }
  /* Dirty pages reach the file whatever happens to the process; only a
   * crash of the node would need this on disk now.  MS_ASYNC just starts it. */
  msync(base, arena_off + hdr->arena_used, MS_ASYNC);
}

/* The application's I/O is over (MPI_Finalize, the serial shutdown): end_wall
 * says since when, while state stays RUNNING until the log is written, so a
 * live reader (iochar-top) knows the process has nothing more to count and
 * that its file may go any moment.  Async-signal-safe. */
void iochar_live_finishing(double when) {
  if (!hdr) return;
  hdr->end_wall = when;
  __atomic_add_fetch(&hdr->seq, 1, __ATOMIC_RELEASE);
}

void iochar_live_done(void) {
  if (!hdr) return;
  __atomic_store_n(&hdr->state, IOCHAR_LIVE_LOGGED, __ATOMIC_RELEASE);
  int e = errno;
  if (live_path[0]) unlink(live_path);
  if (live_sub[0]) rmdir(live_sub); /* the last of that directory's: it goes too */
  live_path[0] = live_sub[0] = 0;
  errno = e;
}
