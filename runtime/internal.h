/* Core-internal interfaces (not for wrappers): init, reset, log building. */
#ifndef IOCHAR_INTERNAL_H
#define IOCHAR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

int iochar_records_init(void);
void iochar_records_reset(void);
void iochar_records_lock(void);
void iochar_records_unlock(void);
int iochar_record_touched(const iochar_record *r);
/* Module mi's meta slots (core.h, iochar_meta_entry): the counter index
 * each carries, iochar_meta_count[mi] of them (integer ones first, floating
 * ones as n_int + j).  For the live file's schema. */
const int16_t *iochar_meta_slots(int mi);
int iochar_records_any_touched(void);
/* The record memory into a fresh live file (runtime/live.c): again, for a
 * fork child or after a failed exec; now, at MPI_Init. */
void iochar_records_live_again(void);
void iochar_records_live_now(void);
/* The distinct folded (id, module) pairs of this process (at most max), and
 * per module how many of its folded_files they are (the rest were counted
 * once the set was full, maybe twice). */
size_t iochar_folded_keys(uint64_t *ids, int *mods, size_t max, int64_t in_set[]);

int iochar_paths_init(void);
/* runtime/exclude.c: name patterns and interpreter trees, set up once (it
 * adds exclusion prefixes: before the prefix index is built). */
void iochar_exclude_init(void);
/* abs is byte-code or matches IOCHAR_EXCLUDE_PATTERN (cached per name); no:
 * iochar_path_note_of(abs), what resolve found out about it (or NULL). */
struct iochar_path_note;
int iochar_name_excluded(const char *abs, const struct iochar_path_note *no);
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
/* Mount table of this process: n entries. */
typedef struct iochar_mount {
  char *point, *type;
  size_t len;
  int64_t block_size; /* 0 until first asked */
  /* every file's st_blksize is the file system's block size (statfs f_bsize):
   * ext2/3/4, whose getattr reports the superblock's block size for every
   * inode (xfs, btrfs, tmpfs, NFS, Lustre may differ per file) */
  int blksize_uniform;
} iochar_mount;
int iochar_mounts(const iochar_mount **out);
/* Index of the mount holding abs (longest mount point), or -1. */
int iochar_mount_find(const char *abs);
/* The same for the name whose record id is id (the hash of abs): no
 * compare when it is the last name this thread resolved. */
int iochar_mount_find_id(const char *abs, uint64_t id);

void iochar_series_reset(void);
/* Copy module m's series: width, and 4 x nbins int64 (bytes r/w, ops r/w). */
int iochar_series_get(int m, double *width, int64_t *bins, int nbins_max);
#define IOCHAR_SERIES_BINS 128

/* Growable byte buffer used only at shutdown (malloc is fine there). */
typedef struct iochar_buf {
  uint8_t *p;
  size_t len, cap;
  int failed;
} iochar_buf;
void iochar_buf_put(iochar_buf *b, const void *p, size_t n);
/* Append n uninitialised bytes; their address, or NULL (b->failed set). */
void *iochar_buf_grow(iochar_buf *b, size_t n);
void iochar_buf_u8(iochar_buf *b, uint8_t v);
void iochar_buf_u16(iochar_buf *b, uint16_t v);
void iochar_buf_u32(iochar_buf *b, uint32_t v);
void iochar_buf_u64(iochar_buf *b, uint64_t v);
void iochar_buf_f64(iochar_buf *b, double v);
void iochar_buf_free(iochar_buf *b);

/* Log building blocks (runtime/log_writer.c); the MPI reducer uses them too. */
#define IOCHAR_HEADER_SIZE 32
/* a section header's most bytes: two names, three varints, two CRCs */
#define IOCHAR_SECTION_HEADER_MAX (1 + 8 + 1 + 16 + 3 * 10 + 4 + 4)
#define IOCHAR_FORMAT_VERSION 3 /* docs/log-format.md; readers still read 1 and 2 */
void iochar_log_header(uint8_t out[IOCHAR_HEADER_SIZE], uint64_t total, uint32_t nsections);
/* Compress raw into one section appended to out; returns 0 or -1. */
int iochar_section_add(iochar_buf *out, const char *kind, const char *module, uint32_t count,
                       const void *raw, size_t rawlen);
/* Sections describing this process: JOB (when job != 0), MOUNTS, SCHEMA. */
int iochar_job_sections(iochar_buf *out, int *nsections);
int iochar_schema_sections(iochar_buf *out, int *nsections, const int present[IOCHAR_MOD_COUNT]);
/* Flattened records of one module: rows in the in-memory row layout
 * (u64 id, i64 rank, i64 c[n_int], f64 f[n_flt]), top-k tables emitted. */
size_t iochar_module_rows(int m, iochar_buf *rows, iochar_buf *names);
size_t iochar_row_size(int m);
/* Bytes of whole top-k tables at the end of a row (not logged as counters). */
size_t iochar_row_tail(int m);
/* Columnar RECORDS payload from rows, format 2 (runtime/log_codec.c); returns
 * its length, at most iochar_columns_bound(m, n); 0 when out of memory. */
size_t iochar_rows_to_columns(int m, const uint8_t *rows, size_t n, uint8_t *out);
size_t iochar_columns_bound(int m, size_t n);
/* NAMES format 2 from format-1 entries (u64 id, u32 len, path) in in[len];
 * returns its length, at most iochar_names_bound(len, count). */
size_t iochar_names_encode(const uint8_t *in, size_t len, uint32_t count, uint8_t *out);
size_t iochar_names_bound(size_t len, uint32_t count);
/* A rank's load on one record: the sum of its TIME counters and of its BYTES
 * counters (what FASTEST/SLOWEST and the variances compare). */
void iochar_rank_load(const iochar_module *m, const int64_t *c, const double *f, double *time,
                      int64_t *bytes);
/* Per-rank totals (one RANKS row) of module m from rows. */
int iochar_rank_totals(int m, const uint8_t *rows, size_t n, int rank, uint8_t out[64]);
/* One module's I/O-over-time bins for the SERIES section (nbins 0: none). */
typedef struct iochar_series_part {
  double width;
  uint32_t nbins;
  int64_t bins[4 * IOCHAR_SERIES_BINS];
} iochar_series_part;
/* What a log, or one MPI rank's part of it, holds (runtime/log_sections.c). */
typedef struct iochar_log_parts {
  int head;                         /* JOB, MOUNTS, SCHEMA: serial log, rank 0 */
  const int *present;               /* [IOCHAR_MOD_COUNT]: modules with rows in the log */
  const iochar_buf *names;          /* NAMES entries ... */
  uint32_t nnames;                  /* ... and their count (0: no section) */
  const iochar_buf *records;        /* [IOCHAR_MOD_COUNT]: RECORDS rows ... */
  const size_t *nrecords;           /* ... and their counts */
  const iochar_buf *rank_rows;      /* [IOCHAR_MOD_COUNT]: this rank's own rows ... */
  const size_t *nrank_rows;         /* ... their counts (RANKS: their totals) */
  int rank;                         /* whose RANKS row */
  const iochar_buf *rank_totals;    /* or, when not NULL: RANKS rows made already ... */
  const size_t *nrank_totals;       /* ... and their counts */
  int topk;                         /* TOPK of the RECORDS rows (per-rank logs) */
  const iochar_series_part *series; /* [IOCHAR_MOD_COUNT] or NULL */
} iochar_log_parts;
/* Append the sections of p to body (*nsec counts them); 0 or -1. */
int iochar_log_sections(iochar_buf *body, int *nsec, const iochar_log_parts *p);
/* Write the whole log of this process (serial or per-rank fallback). */
int iochar_log_write_local(const char *path);
/* Final path of this process's log (runtime/logdir.c). */
int iochar_log_path(char *out, size_t n, int per_rank);
/* Check at start that the log's directory (or the log root) exists and is
 * writable (one warning now rather than a lost log at exit). */
void iochar_log_dir_check(void);
/* Under a log root, make the day directory of the job's start (and its year
 * and month) if missing, safely (docs/security.md); 0, or -1 with errno. */
int iochar_log_dir_make(void);
/* The absolute directory this process's log goes to (symlinks resolved where
 * it exists): what the live file's location is keyed by.  0 or -1. */
int iochar_log_dir_real(char *out, size_t n);
/* One warning that the log at path (errno: why) could not be written,
 * unless the start-up check already said the directory is unusable. */
void iochar_log_failed(const char *path);
/* Publish a finished temporary (safefile.h) at path, or beside it when path
 * exists: never replaces a file (docs/security.md, README).  On failure tmp
 * is removed.  0, or -1 with errno set. */
int iochar_log_publish(int fd, const char *tmp, const char *path);

/* Timestamps are shifted by this much when written (MPI: local - global start). */
extern double iochar_ts_shift;

#endif
