/* The MPI shutdown's steps and what they share (reducer/reduce.c runs them;
 * docs/reduction.md is the algorithm):
 *   vote.c    the vote protocol and the all-to-all exchange under it
 *   owners.c  this rank's rows, their classification by owner, the merge there
 *   facts.c   the job's facts in one Allreduce; the log's name
 *   wide.c    wide records and the I/O-over-time series, by MPI_Reduce
 *   write.c   this rank's sections, offsets, one collective write; the fallback;
 *             rank 0's temporary log file once facts.c created it
 * Its names are the steps' own: red_* (types, functions) and RED_* (constants);
 * reducer/reduce.h is reduce.c's interface to the rest of the library. */
#ifndef IOCHAR_RED_STEPS_H
#define IOCHAR_RED_STEPS_H

#include "../runtime/callsites.h"
#include "../runtime/config.h"
#include "../runtime/core.h"
#include "../runtime/live.h"
#include "../runtime/log_buf.h"
#include "../runtime/log_sections.h"
#include "../runtime/log_writer.h"
#include "../runtime/logdir.h"
#include "../runtime/records.h"
#include "../runtime/safefile.h"
#include "../runtime/series.h"
#include "../runtime/trace.h"
#include "../runtime/warn.h"
#include "merge.h"
#include "pmpi.h"

/* A record shared by more ranks than this (or by all) is reduced by tree. */
#define RED_WIDE_RANKS 64
/* Bytes of partials per MPI_Reduce: bounds the wide path's memory. */
#define RED_WIDE_CHUNK (8u << 20)
/* Wide keys carried inside the job-facts Allreduce (more: one more round). */
#define RED_WIDE_SLOTS 256
/* A job with at most this many rows in all (before reduction) is written by
 * rank 0 alone: every rank sends it its rows (reducer/write.c). */
#define RED_GATHER_ROWS 1024
/* A rank's MERGE rows' send buffer is taken before the owners' answers
 * arrive, for all its rows, up to this many bytes (owners.c): ~13,000
 * POSIX rows; tests/integration/test_mpi_reduce.py runs both sides. */
#define RED_MSEND_AHEAD (16u << 20)
/* Up to this many ranks write their parts with pwrite, beyond with MPI-IO. */
#define RED_COLLECTIVE_WRITE_RANKS 256
#define RED_HOST_MOD IOCHAR_MOD_COUNT /* pseudo-module of the hostname keys (node count) */
/* pseudo-modules RED_FOLD_MOD + m: files folded in module m, counted once each
 * by their owner (a file folded on several ranks is one file) */
#define RED_FOLD_MOD (IOCHAR_MOD_COUNT + 1)

enum { RED_LOCAL = 0, RED_MERGE = 1, RED_WIDE = 2, RED_NAME = 4 };

/* The shutdown's context, passed to every step: the communicator, this
 * rank, and per-nprocs scratch taken before any vote (counts and
 * displacements of the exchanges). */
typedef struct red_ctx {
  MPI_Comm comm;
  int rank, nprocs;
  int *xbuf, *zeros; /* 4 x nprocs, nprocs */
} red_ctx;

typedef struct red_key { /* 16 bytes on the wire */
  uint64_t id;
  uint32_t m, aux; /* aux: local row index at the sender, source rank at the owner */
} red_key;

/* What each rank contributes and ends up writing. */
typedef struct red_state {
  iochar_buf rows[IOCHAR_MOD_COUNT], names[IOCHAR_MOD_COUNT]; /* this rank's rows and their names */
  size_t nrows[IOCHAR_MOD_COUNT];
  size_t *name_off[IOCHAR_MOD_COUNT]; /* row i's entry in names[m] */
  iochar_buf out[IOCHAR_MOD_COUNT];   /* rows this rank writes (RECORDS) */
  size_t nout[IOCHAR_MOD_COUNT];
  iochar_buf outnames; /* NAMES entries this rank writes */
  uint32_t noutnames;
  red_key *sent; /* keys in the order sent (by owner) */
  size_t nsent;
  uint8_t *flags;         /* the owners' answers, same order */
  MPI_Request areq;       /* their exchange, pending until the job facts' Allreduce */
  void *akeep[4];         /* its buffers and counts, freed once it completed */
  int *merge_rc;          /* bytes of MERGE rows each rank will send us */
  int *mscount;           /* bytes of MERGE rows we send each owner */
  uint8_t *msend, *mrecv; /* MERGE rows sent ([module u64][row] each) and received */
  size_t msend_len, mrecv_len;
  MPI_Request mreq;     /* their exchange, pending until the wide step's first collective */
  uint8_t *wsnd, *wrcv; /* the first wide chunk's buffers (rank 0 receives it) */
  size_t wcap;
  iochar_buf gpack;    /* a small job: this rank's block for rank 0, packed early */
  int *gsizes;         /* rank 0: every rank's block size, from the first wide chunk */
  red_key *wide_owned; /* wide keys this rank owns */
  size_t nwide_owned;
  int64_t nodes_owned; /* distinct hostnames this rank owns */
  int64_t folded_owned[IOCHAR_MOD_COUNT],
      folded_extra[IOCHAR_MOD_COUNT]; /* distinct folded files owned; beyond the set */
  /* this rank's I/O-over-time bins, read once (recording has stopped) */
  double width[IOCHAR_MOD_COUNT];
  int64_t series[IOCHAR_MOD_COUNT][4 * IOCHAR_SERIES_BINS];
  red_key *wide_local; /* this rank's rows of wide records */
  size_t nwide_local;
} red_state;

/* The job's facts, reduced in one Allreduce (facts.c) up to RED_FACTS_WIRE:
 * 4.4 KB, under the eager limit of shared-memory transports (8 KB with UCX
 * here), where 17 KB with rank 0's names took a rendezvous per round. */
typedef struct red_facts {
  double start, end;                 /* MIN, MAX */
  double width[IOCHAR_MOD_COUNT];    /* series bin width: MAX */
  int64_t folded[IOCHAR_MOD_COUNT];  /* SUM */
  int64_t present[IOCHAR_MOD_COUNT]; /* module has rows somewhere: MAX */
  int64_t rows;                      /* rows of all modules before reduction: SUM */
  int64_t nodes, nwide;              /* SUM */
  int64_t partial;                   /* OR */
  int64_t overflow;                  /* wide keys past RED_WIDE_SLOTS: MAX */
  int64_t path_ok;                   /* rank 0's: MAX */
  int64_t callsites;                 /* some rank records call sites: MAX */
  int64_t trace;                     /* some rank keeps a trace: MAX */
  int64_t failed;                    /* some rank failed since the last vote: MAX */
  int64_t truncated;                 /* names past the path limit: SUM */
  uint64_t warned;                   /* warning keys raised: OR */
  uint64_t dev, ino;                 /* rank 0's temporary file: MAX */
  int64_t dir_len;                   /* strlen(dir) on rank 0: MAX */
  red_key wide[RED_WIDE_SLOTS];      /* set union (open addressing); aux 1 marks a used slot */
  /* Not reduced: rank 0's final name, its private directory and the file
   * in it.  The other ranks learn dir (and so tmp, dir/log), the
   * directory's dev/ino and whether another user could write the log's
   * directory from the offsets' Scan, the one step before they open the
   * file (write.c). */
  char path[IOCHAR_PATH_MAX], dir[IOCHAR_PATH_MAX + 64], tmp[IOCHAR_PATH_MAX + 80];
  uint64_t ddev, dino;
  int64_t shared;
} red_facts;
#define RED_FACTS_WIRE offsetof(red_facts, path)

/* A small job: rank 0 gathers every row and writes the log alone (g is the
 * reduced facts, so every rank agrees). */
static inline int red_gathered(const red_ctx *x, const red_facts *g) {
  return g->rows <= RED_GATHER_ROWS && x->nprocs > 1;
}

/* Every rank writes its part through one collective MPI-IO write (many
 * ranks, or IOCHAR_COLLECTIVE_WRITE=1), which opens the file by name. */
static inline int red_collective_write(const red_ctx *x) {
  return iochar_cfg.collective_write >= 0 ? iochar_cfg.collective_write
                                          : x->nprocs > RED_COLLECTIVE_WRITE_RANKS;
}

/* A small job on at most this many ranks: the sizes of the blocks rank 0
 * gathers travel in the first wide chunk (8 bytes a rank). */
#define RED_GATHER_SIZES_RANKS 4096
static inline int red_small_sizes(const red_ctx *x, const red_facts *g) {
  return red_gathered(x, g) && x->nprocs <= RED_GATHER_SIZES_RANKS;
}

/* The keys' receive buffer, taken by every rank before their counts'
 * Alltoall (the first vote): a job with at most this many bytes of keys in
 * all (65,536 keys) needs no vote before the keys' exchange (vote.c). */
#define RED_KEYS_RESERVE (1u << 20)
typedef struct red_pre {
  void *buf;   /* cap bytes */
  size_t cap;  /* the same on every rank */
  int *counts; /* nprocs ints */
} red_pre;

/* vote.c */
double red_wall_now(void);
int red_vote(red_ctx *x, int failed);
int red_fault(red_ctx *x, const char *phase);
int red_exchange(red_ctx *x, int failed, const void *sbuf, const int *scount,
                 const int *rcount_known, red_pre *pre, void **rbuf, int **rcount_out,
                 size_t *rtotal);
int red_exchange_post(red_ctx *x, const void *sbuf, const int *scount, void *rbuf,
                      const int *rcount, MPI_Request *req);
/* owners.c */
int red_mkey_cmp(const void *a, const void *b);
void red_state_free(red_state *s);
const uint8_t *red_row_at(red_state *s, int m, size_t i);
int red_collect_rows(red_state *s);
void red_shift_rows(red_state *s, double shift);
int red_classify(red_ctx *x, red_state *s, int failed_rows);
int red_answers_wait(red_state *s, MPI_Request *with);
int red_merge_prepare(red_ctx *x, red_state *s, int failed);
int red_merge_at_owners(red_ctx *x, red_state *s, int gathered);
int red_merge_wait(red_state *s, MPI_Request *with);
int red_fold_rows(const uint8_t *rbuf, size_t rtotal, iochar_buf *out, size_t *nout);
/* facts.c */
int red_job_facts(red_ctx *x, red_state *s, red_facts *g, double *shift, int failed);
/* wide.c */
int red_wide_prepare(red_ctx *x, red_state *s, int failed);
int red_wide_and_series(red_ctx *x, red_state *s, const red_facts *g, double shift,
                        iochar_series_part *series, int failed);
/* write.c */
void red_tmp_keep(const iochar_tmpfile *t); /* rank 0's file, from name_log */
void red_drop_tmp(void);
int red_small_pack(red_ctx *x, red_state *s, const red_facts *g);
int red_build_body(red_ctx *x, red_state *s, const red_facts *g, const iochar_series_part *series,
                   iochar_buf *body, int *nsec, int failed);
int red_write_log(red_ctx *x, red_facts *g, iochar_buf *body, int nsec, int bad);
void red_fall_back(red_ctx *x, const iochar_job *before);

#endif
