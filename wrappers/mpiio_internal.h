/* The MPI-IO module's private interface: its record state and the record
 * steps its three wrapper files share (mpiio.c: the module, its maps of
 * files and requests, the accounting, open, close, metadata, hints;
 * mpiio_data.c: the read/write families; mpiio_req.c: nonblocking requests,
 * split-collective ends, request completion).  mpiio_data.c and mpiio_req.c
 * stand on mpiio.c and not on each other; mpiio.c calls neither.
 * Compiled once per MPI with that MPI's headers (meson.build, -Dmpi=both). */
#ifndef IOCHAR_MPIIO_INTERNAL_H
#define IOCHAR_MPIIO_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "../reducer/mpi_wrap.h"
#include "../runtime/access.h"
#include "../runtime/lifecycle.h"
#include "mpiio_counters.h"

/* The call's kind picks its layout: the layouts differ only in which op
 * counter moves.  The direction is the shared accounting's (0 read, 1 write). */
enum { K_INDEP, K_COLL, K_SPLIT, K_NB, K_COUNT };
enum { DIR_READ = 0, DIR_WRITE = 1 };
/* Nonblocking operations followed at once (mpiio_req.c's pool and map). */
#define MPIIO_NPENDING 4096

typedef struct mpiio_state {
  iochar_rw_state rw; /* first: the shared accounting's part */
  double split_t0[2]; /* start of a pending split collective, per direction */
  int64_t split_len[2];
} mpiio_state;

/* The last file handle a thread looked up (mpiio_file). */
typedef struct mpiio_last_file {
  uint64_t key;
  iochar_record *rec;
  unsigned gen;
} mpiio_last_file;

/* Hidden, and local to this MPI's copy in a dual build: declared so here that
 * the wrappers reach them without a GOT load. */
#pragma GCC visibility push(hidden)
extern iochar_rw_layout mpiio_layouts[K_COUNT]; /* from the counter lists */
extern iochar_hmap *mpiio_files;                /* MPI_File -> record */
extern iochar_hmap *mpiio_requests;             /* MPI_Request -> pending op (mpiio_req.c) */
extern _Atomic unsigned mpiio_files_gen;        /* bumped by every open and close */
extern __thread mpiio_last_file mpiio_last __attribute__((tls_model("initial-exec")));

/* Account a data call of `count` elements of `dt` (a split begin also keeps
 * its start); returns its bytes, -1 when the call failed. */
int64_t mpiio_record_rw(iochar_record *r, int kind, int dir, int ret, int64_t count,
                        MPI_Datatype dt, const void *buf, double t0, double t1);
#pragma GCC visibility pop

/* A handle as a map key (MPICH's are ints, Open MPI's pointers). */
static inline uint64_t mpiio_key(const void *h, size_t n) {
  uint64_t k = 0;
  memcpy(&k, h, n < 8 ? n : 8);
  return k;
}
static inline uint64_t mpiio_file_key(MPI_File fh) { return mpiio_key(&fh, sizeof fh); }

/* The record of an open file, NULL when the tool is off or the file not ours.
 * A thread asks about the same handle call after call, in a loop: its last
 * answer holds until any open or close anywhere bumps the generation. */
static inline iochar_record *mpiio_file(MPI_File fh) {
  if (!iochar_active() || !mpiio_files) return NULL;
  uint64_t k = mpiio_file_key(fh);
  unsigned g = atomic_load_explicit(&mpiio_files_gen, memory_order_acquire);
  if (mpiio_last.rec && mpiio_last.key == k && mpiio_last.gen == g) return mpiio_last.rec;
  iochar_record *r = iochar_hmap_get(mpiio_files, k);
  mpiio_last.key = k, mpiio_last.rec = r, mpiio_last.gen = g;
  return r;
}

#endif
