/* The live file: the record memory kept in a file-backed shared mapping, so a
 * process killed at any moment leaves its counters on disk (docs/log-format.md,
 * "Live files"; reports/iochar/live.py turns one into a log). */
#ifndef IOCHAR_LIVE_H
#define IOCHAR_LIVE_H

#include <stddef.h>
#include <stdint.h>

/* 2: top-k tables out of the records; 3: the access state too; 4: metadata-only entries */
#define IOCHAR_LIVE_VERSION 4
/* The fixed header; the schema follows.  16384 before the job fields (issue 38). */
#define IOCHAR_LIVE_HEADER 20480

/* How the process ended, as the header's `state` says. */
enum {
  IOCHAR_LIVE_RUNNING = 0, /* still running, or killed (no chance to say) */
  IOCHAR_LIVE_EXIT = 1,    /* _exit/_Exit(status) */
  IOCHAR_LIVE_ABORT = 2,   /* MPI_Abort(errorcode): its per-rank log may be there too */
  IOCHAR_LIVE_LOGGED = 3   /* its log is written: the file is about to go */
};

/* The header at offset 0 of a live file.  Every field sits at a fixed offset
 * (checked below; reports/iochar/live.py reads the same offsets). */
typedef struct iochar_live_header {
  char magic[8];        /* "IOCHARLV" */
  uint32_t version;     /* IOCHAR_LIVE_VERSION */
  uint32_t header_size; /* IOCHAR_LIVE_HEADER */
  uint64_t map_size;    /* the file's size */
  uint32_t state;       /* IOCHAR_LIVE_* */
  int32_t status;       /* _exit status, MPI_Abort error code */
  int32_t pid, rank, nprocs, log_pid;
  int32_t mpi_initialized, forked;
  uint32_t uid, rec_size; /* rec_size: sizeof(iochar_record) */
  double start_wall, end_wall;
  uint64_t memory_bound;
  uint64_t schema_off, schema_len;
  uint64_t agg_off, agg_size;
  uint64_t arena_off, arena_size;
  uint64_t arena_used;     /* records wholly made (release-stored) */
  uint64_t seq;            /* bumped with every state change */
  uint16_t rec_module_off; /* offsetof(iochar_record, module) */
  uint16_t rw_off[15];     /* offsets inside iochar_rw_state (see live.c) */
  int64_t folded[16];
  int64_t partial;
  char jobid[64], user[64], hostname[256], mpi_version[256];
  char exe[4096];
  char cmdline[8192];
  /* Version 2: a record's top-k tables (iochar_rw_topk) are where the
   * pointer at offset tk_off of its state says (0: none yet), an address in
   * this mapping, which starts at map_addr; they are made from the arena's
   * top down to arena offset tables_low.  rw_off[8] and [9] (access,
   * stride) are offsets inside iochar_rw_topk. */
  uint64_t map_addr;
  uint64_t tables_low;
  uint16_t tk_off;
  /* Version 3: a record is its header, counters and name; its access state
   * (with the top-k tables tk_below bytes below it) is where the pointer at
   * offset rec_state_off of the record header says (0: none yet), made like
   * the tables of version 2 (tk_off is 0: no tables pointer). */
  uint16_t rec_state_off;
  uint32_t tk_below;
  /* Version 4: the arena holds metadata-only entries (core.h,
   * iochar_meta_entry) among the records: a record header whose flags (u16
   * at rec_flags_off) have IOCHAR_REC_META (2), then at meta_full_off the
   * address of the record it became (0: none; else it is counted there),
   * then from meta_c_off its module's meta slots (the schema lists which
   * counter each holds) and its name. */
  uint16_t rec_flags_off, meta_full_off, meta_c_off;
  /* Since issue 38 (version 4 still; zeros in older files): the log's real
   * directory and name, NUL-ended ("" when longer than the field), so a
   * reader on the node makes the log where it belongs once the process is
   * gone (reports/iochar/livedir.py, settle). */
  uint16_t dest_len;
  char log_dest[3072];
  char reserved[32];
  /* From header size 20480 on (version 4 still): the job of a process that
   * is no MPI rank (runtime/jobkey.h), for the log made from this file.  A
   * file whose header is 16384 bytes has none. */
  char job_key[320], job_key_from[48], rank_from[32], world_from[32];
  int32_t task_rank, world_size, parent_pid, jobkey_pad;
  int64_t proc_start, parent_start;
  char interpreter[256], program[2048];
} iochar_live_header;

/* Record memory: the aggregates area and the arena, inside one mapping.  Until
 * the process records its first file the mapping is anonymous; iochar_live_on
 * moves it into a live file. Returns 0, or -1 (no memory at all). */
int iochar_live_setup(size_t agg_bytes, size_t arena_bytes, uint8_t **agg, uint8_t **arena);
/* Move the mapping into a fresh live file (first record, MPI_Init, a fork
 * child, a failed exec), copying its first `used` arena bytes and the
 * records' states from arena offset tables_low to the arena's end. */
void iochar_live_on(size_t used, size_t tables_low);
/* Records' states (with their top-k tables) are made down to arena offset
 * low: back them on disk (in steps, as records) and publish low; 0, or -1
 * when the file system is full (the caller keeps those out of the file). */
int iochar_live_tables(size_t low);
/* Make arena bytes [0, end) backed by disk blocks (a store never raises
 * SIGBUS); 0, or -1 when the file system is full. */
int iochar_live_reserve(size_t end);
/* Records are made up to arena offset used. */
void iochar_live_publish(size_t used);
/* Copy the job identity (after MPI_Init, at the end) into the header. */
void iochar_live_sync_job(void);
/* The process ends (state IOCHAR_LIVE_*): a store and an msync; a process
 * with nothing to say (said: records.c's iochar_records_any_touched or MPI
 * initialized, from the caller above) removes its file.  Async-signal-safe. */
void iochar_live_end(int state, int status, int said);
/* The application's I/O is over (its log is about to be made): end_wall set,
 * state unchanged.  Async-signal-safe. */
void iochar_live_finishing(double when);
/* The log is written: remove the live file.  Async-signal-safe. */
void iochar_live_done(void);
/* 1 while the record memory is a live file. */
int iochar_live_active(void);
/* This process's own header (in its record memory, live file or not; its
 * schema follows at schema_off): what a child's live file must match to be
 * read by this library (runtime/reap.c).  NULL before iochar_live_setup. */
const iochar_live_header *iochar_live_self(void);

#endif
