/* MPI-IO interception through PMPI: the MPI_File_* calls and the request
 * completions that end nonblocking MPI-IO.  The MPI runtime they stand on
 * (PMPI table, MPI_Init/Finalize/Abort, the shutdown) is reducer/'s.
 *
 * No libmpi is linked: every PMPI_* entry is resolved at run time, so the
 * library still loads in programs without MPI.  MPICH's Fortran bindings call
 * the C MPI_File_* symbols, so these wrappers serve Fortran programs too.
 * Offsets are not recorded for MPI-IO (no counter needs them; the byte
 * offsets the library really touches are in the POSIX records below it). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../reducer/mpi_wrap.h"
#include "../runtime/access.h"
#include "mpiio_counters.h"

static const iochar_counter_def ints[] = {MPIIO_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def flts[] = {MPIIO_F_COUNTERS(IOCHAR_DEF_ENTRY)};

/* One layout per call kind: they differ only in which op counter moves. */
enum { K_INDEP, K_COLL, K_SPLIT, K_NB };
static iochar_rw_layout layouts[4]; /* from the counter lists (runtime/layout.c) */
IOCHAR_LAYOUTS {
  static const char *const ops[4][2] = {[K_INDEP] = {"INDEP_READS", "INDEP_WRITES"},
                                        [K_COLL] = {"COLL_READS", "COLL_WRITES"},
                                        [K_SPLIT] = {"SPLIT_READS", "SPLIT_WRITES"},
                                        [K_NB] = {"NB_READS", "NB_WRITES"}};
  for (int k = 0; k < 4; k++)
    IOCHAR_LAYOUT_INIT(&layouts[k], MPIIO, ints, flts, ops[k][0], ops[k][1]);
}

typedef struct mpiio_state {
  iochar_rw_state rw; /* first: the shared accounting's part */
  double split_t0[2]; /* start of a pending split collective, per direction */
  int64_t split_len[2];
} mpiio_state;

const iochar_module iochar_mod_mpiio =
    IOCHAR_MODULE_DEF(MPIIO, ints, flts, mpiio_state, &layouts[K_INDEP], .n_more_ops = 3,
                      .more_ops = {{MPIIO_COLL_READS, MPIIO_SPLIT_READS, MPIIO_NB_READS},
                                   {MPIIO_COLL_WRITES, MPIIO_SPLIT_WRITES, MPIIO_NB_WRITES}});

static inline uint64_t hkey(const void *h, size_t n) {
  uint64_t k = 0;
  memcpy(&k, h, n < 8 ? n : 8);
  return k;
}
#define FILE_KEY(fh) hkey(&(fh), sizeof(MPI_File))
#define REQ_KEY(rq) hkey(&(rq), sizeof(MPI_Request))

/* ---- handles: MPI_File -> record, MPI_Request -> pending operation ------- */

#define NPENDING 4096
static iochar_hmap *files, *requests;

/* The maps come with the first MPI file opened after MPI_Init (a program
 * that opens none pays for none). */
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;
static void maps_create(void) {
  requests = iochar_hmap_create(NPENDING);
  files = iochar_hmap_create(1 << 15);
}

typedef struct pending {
  iochar_record *rec;
  double t0;
  int64_t len;
  int dir;
} pending;

static pending pending_items[NPENDING];
static iochar_pool pool = IOCHAR_POOL_OF(pending_items);
static atomic_int npending; /* 0: completion wrappers pass straight through */

/* Each thread remembers its last file handle (the same one, call after call,
 * in a loop); any open or close anywhere bumps the generation, forgetting all. */
static _Atomic unsigned files_gen;
static __thread struct {
  uint64_t key;
  iochar_record *rec;
  unsigned gen;
} last_file __attribute__((tls_model("initial-exec")));

static inline iochar_record *file_rec(MPI_File fh) {
  if (!files) return NULL;
  uint64_t k = FILE_KEY(fh);
  unsigned g = atomic_load_explicit(&files_gen, memory_order_acquire);
  if (last_file.rec && last_file.key == k && last_file.gen == g) return last_file.rec;
  iochar_record *r = iochar_hmap_get(files, k);
  last_file.key = k, last_file.rec = r, last_file.gen = g;
  return r;
}

/* ---- record steps (called with iochar_in_tool set) ----------------------- */

/* Each thread remembers the size of the last datatype it asked about (the
 * same one, call after call): a handle keeps its size until MPI_Type_free,
 * which bumps the generation (a freed handle may come back as another type). */
static _Atomic unsigned types_gen;
static __thread struct {
  MPI_Datatype dt;
  MPI_Count size;
  unsigned gen;
  int valid;
} last_type __attribute__((tls_model("initial-exec")));

static int64_t type_bytes(MPI_Datatype dt, int64_t count) {
  unsigned g = atomic_load_explicit(&types_gen, memory_order_acquire);
  if (last_type.valid && last_type.dt == dt && last_type.gen == g)
    return (int64_t)last_type.size * count;
  MPI_Count sz = 0;
  if (iochar_pmpi_load() || iochar_pmpi.Type_size_x(dt, &sz) != MPI_SUCCESS) return 0;
  last_type.dt = dt, last_type.size = sz, last_type.gen = g, last_type.valid = 1;
  return (int64_t)sz * count;
}

static void record_rw(iochar_record *r, int kind, int dir, int ret, int64_t count, MPI_Datatype dt,
                      const void *buf, MPI_Request *req, double t0, double t1) {
  int64_t len = ret == MPI_SUCCESS ? type_bytes(dt, count) : -1;
  mpiio_state *s = r->state;
  iochar_spin_lock(&r->lock);
  iochar_rw_account(r, &layouts[kind], &s->rw, dir, -1, len, buf, t0, t1);
  if (kind == K_SPLIT) {
    s->split_t0[dir] = t0;
    s->split_len[dir] = len;
  }
  iochar_spin_unlock(&r->lock);
  if (!req || ret != MPI_SUCCESS || !requests) return;
  pending *p = iochar_pool_get(&pool);
  if (!p) return; /* more in flight than we track: the post time stays */
  *p = (pending){r, t0, len, dir};
  if (iochar_hmap_put(requests, REQ_KEY(*req), p) == 0)
    atomic_fetch_add(&npending, 1);
  else
    iochar_pool_put(&pool, p);
}

/* An operation [t0, t1] (nonblocking post to completion, or a split
 * collective's begin to end) is over: extend its time, max time and end. */
static void record_done(iochar_record *r, int dir, double t0, int64_t len, double t1) {
  mpiio_state *s = r->state;
  const iochar_rw_layout *L = &layouts[K_NB];
  iochar_spin_lock(&r->lock);
  iochar_time_add(r, L, &s->rw, dir, t0, t1);
  if (t1 - t0 > r->f[L->f_max_time[dir]]) {
    r->f[L->f_max_time[dir]] = t1 - t0;
    r->c[L->max_time_size[dir]] = len < 0 ? 0 : len;
  }
  if (t1 > r->f[L->f_end[dir]]) r->f[L->f_end[dir]] = t1;
  iochar_spin_unlock(&r->lock);
}

static void request_done(MPI_Request h, double t1) {
  pending *p = iochar_hmap_del(requests, REQ_KEY(h));
  if (!p) return;
  atomic_fetch_sub(&npending, 1);
  record_done(p->rec, p->dir, p->t0, p->len, t1);
  iochar_pool_put(&pool, p);
}

/* ROMIO accepts "fs:path" (ufs:, nfs:, lustre:...); the record is the path. */
static const char *strip_fs_prefix(const char *name) {
  const char *c = strchr(name, ':');
  if (!c || c - name < 2) return name;
  for (const char *p = name; p < c; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))) return name;
  return c + 1;
}

static int64_t hint_switch(const char *v) {
  if (!strcmp(v, "enable")) return 1;
  if (!strcmp(v, "disable")) return 2;
  if (!strcmp(v, "automatic")) return 3;
  return 0;
}

/* Effective hints of an open file, kept the first time they are seen. */
static void record_hints(iochar_record *r, MPI_File fh) {
  static const struct {
    const char *key;
    int idx;
    int sw;
  } H[] = {
      {"cb_nodes", MPIIO_HINT_CB_NODES, 0},
      {"cb_buffer_size", MPIIO_HINT_CB_BUFFER_SIZE, 0},
      {"cb_config_list", MPIIO_HINT_CB_CONFIG_NODES, 0},
      {"romio_cb_read", MPIIO_HINT_ROMIO_CB_READ, 1},
      {"romio_cb_write", MPIIO_HINT_ROMIO_CB_WRITE, 1},
      {"romio_ds_read", MPIIO_HINT_ROMIO_DS_READ, 1},
      {"romio_ds_write", MPIIO_HINT_ROMIO_DS_WRITE, 1},
      {"ind_rd_buffer_size", MPIIO_HINT_IND_RD_BUFFER_SIZE, 0},
      {"ind_wr_buffer_size", MPIIO_HINT_IND_WR_BUFFER_SIZE, 0},
      {"striping_factor", MPIIO_HINT_STRIPING_FACTOR, 0},
      {"striping_unit", MPIIO_HINT_STRIPING_UNIT, 0},
  };
  MPI_Info info = MPI_INFO_NULL;
  if (iochar_pmpi.File_get_info(fh, &info) != MPI_SUCCESS || info == MPI_INFO_NULL) return;
  int64_t v[sizeof H / sizeof H[0]] = {0};
  for (size_t i = 0; i < sizeof H / sizeof H[0]; i++) {
    char val[256];
    int flag = 0;
    if (iochar_pmpi.Info_get(info, H[i].key, sizeof val - 1, val, &flag) != MPI_SUCCESS || !flag)
      continue;
    val[sizeof val - 1] = 0;
    if (H[i].sw)
      v[i] = hint_switch(val);
    else if (H[i].idx == MPIIO_HINT_CB_CONFIG_NODES) { /* "*:N" or "*:*" */
      const char *c = strrchr(val, ':');
      v[i] = c ? (c[1] == '*' ? -1 : atoll(c + 1)) : 0;
    } else
      v[i] = atoll(val);
  }
  iochar_pmpi.Info_free(&info);
  iochar_spin_lock(&r->lock);
  for (size_t i = 0; i < sizeof H / sizeof H[0]; i++)
    if (!r->c[H[i].idx]) r->c[H[i].idx] = v[i];
  iochar_spin_unlock(&r->lock);
}

static void record_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File fh,
                        double t0, double t1) {
  char abs[IOCHAR_PATH_MAX];
  if (!iochar_job_info.mpi_initialized || iochar_pmpi_load()) return;
  pthread_once(&maps_once, maps_create);
  if (!files) return;
  if (iochar_path_resolve(AT_FDCWD, strip_fs_prefix(name), abs, sizeof abs) ||
      iochar_path_excluded(abs))
    return;
  iochar_record *r = iochar_record_get(IOCHAR_MOD_MPIIO, abs);
  if (!r) return;
  int size = 1;
  iochar_pmpi.Comm_size(comm, &size);
  iochar_spin_lock(&r->lock);
  r->c[size > 1 ? MPIIO_COLL_OPENS : MPIIO_INDEP_OPENS]++;
  if (info != MPI_INFO_NULL) r->c[MPIIO_HINTS]++;
  if (!r->c[MPIIO_MODE]) r->c[MPIIO_MODE] = amode;
  iochar_ts(&r->f[MPIIO_F_OPEN_START_TIMESTAMP], &r->f[MPIIO_F_OPEN_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &layouts[0], r->state, t0, t1);
  iochar_spin_unlock(&r->lock);
  if (r->id != IOCHAR_AGG_ID) record_hints(r, fh);
  iochar_hmap_put(files, FILE_KEY(fh), r);
  atomic_fetch_add_explicit(&files_gen, 1, memory_order_release);
}

/* Metadata call: bump counter idx (when >= 0, twice when `also` >= 0). */
static void record_meta(iochar_record *r, int idx, int also, double t0, double t1) {
  iochar_spin_lock(&r->lock);
  if (idx >= 0) r->c[idx]++;
  if (also >= 0) r->c[also]++;
  iochar_meta_account(r, &layouts[0], r->state, t0, t1);
  iochar_spin_unlock(&r->lock);
}

static void record_close(iochar_record *r, double t0, double t1) {
  iochar_spin_lock(&r->lock);
  iochar_ts(&r->f[MPIIO_F_CLOSE_START_TIMESTAMP], &r->f[MPIIO_F_CLOSE_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &layouts[0], r->state, t0, t1);
  iochar_spin_unlock(&r->lock);
}

static void record_split_end(iochar_record *r, int dir, double t1) {
  mpiio_state *s = r->state;
  iochar_spin_lock(&r->lock);
  double t0 = s->split_t0[dir];
  int64_t len = s->split_len[dir];
  iochar_spin_unlock(&r->lock);
  if (t0 > 0) record_done(r, dir, t0, len, t1);
}

/* ---- open, close, metadata ---------------------------------------------- */

MPI_WRAP(int, MPI_File_open,
         (MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh)) {
  if (!iochar_active()) return PREAL(MPI_File_open)(comm, name, amode, info, fh);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_open)(comm, name, amode, info, fh);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(record_open(comm, name, amode, info, *fh, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_close, (MPI_File * fh)) {
  MPI_File h = *fh;
  iochar_record *r = iochar_active() ? file_rec(h) : NULL;
  if (!r) return PREAL(MPI_File_close)(fh);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_close)(fh);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_close(r, t0, t1); iochar_hmap_del(files, FILE_KEY(h));
                atomic_fetch_add_explicit(&files_gen, 1, memory_order_release));
  return ret;
}

/* The shape of every metadata wrapper: guard, clock, real call, clock, record. */
#define META(name, idx, params, call, also)                   \
  MPI_WRAP(int, name, params) {                               \
    iochar_record *r = iochar_active() ? file_rec(fh) : NULL; \
    if (!r) return PREAL(name) call;                          \
    double t0 = iochar_now();                                 \
    int ret = PREAL(name) call;                               \
    double t1 = iochar_now();                                 \
    IOCHAR_RECORD(record_meta(r, idx, also, t0, t1));         \
    return ret;                                               \
  }
META(MPI_File_sync, MPIIO_SYNCS, (MPI_File fh), (fh), -1)
META(MPI_File_set_info, MPIIO_HINTS, (MPI_File fh, MPI_Info info), (fh, info), -1)
META(MPI_File_set_size, -1, (MPI_File fh, MPI_Offset n), (fh, n), -1)
META(MPI_File_preallocate, -1, (MPI_File fh, MPI_Offset n), (fh, n), -1)
META(MPI_File_seek, -1, (MPI_File fh, MPI_Offset o, int w), (fh, o, w), -1)
META(MPI_File_seek_shared, -1, (MPI_File fh, MPI_Offset o, int w), (fh, o, w), -1)
META(MPI_File_set_view, MPIIO_VIEWS,
     (MPI_File fh, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft, const char *rep,
      MPI_Info info),
     (fh, disp, et, ft, rep, info), info != MPI_INFO_NULL ? MPIIO_HINTS : -1)

/* ---- data ------------------------------------------------------------------ */

/* The shape of every data wrapper; req is NULL for the blocking forms. */
#define DATA(name, kind, dir, params, call, count, dt, req)                   \
  MPI_WRAP(int, name, params) {                                               \
    iochar_record *r = iochar_active() ? file_rec(fh) : NULL;                 \
    if (!r) return PREAL(name) call;                                          \
    double t0 = iochar_now();                                                 \
    int ret = PREAL(name) call;                                               \
    double t1 = iochar_now();                                                 \
    IOCHAR_RECORD(record_rw(r, kind, dir, ret, count, dt, buf, req, t0, t1)); \
    return ret;                                                               \
  }

/* Each read/write family in its four addressing forms; CNT is int or MPI_Count. */
#define RW_FORMS(SFX, CNT, BUF)                                                                    \
  /* individual file pointer, explicit offset, shared pointer, blocking */                         \
  DATA(MPI_File_read##SFX, K_INDEP, 0,                                                             \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt, MPI_Status *st), (fh, buf, n, dt, st), n,  \
       dt, NULL)                                                                                   \
  DATA(MPI_File_write##SFX, K_INDEP, 1,                                                            \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt, MPI_Status * st), (fh, buf, n, dt, st), n, \
       dt, NULL)                                                                                   \
  DATA(MPI_File_read_at##SFX, K_INDEP, 0,                                                          \
       (MPI_File fh, MPI_Offset o, void *buf, CNT n, MPI_Datatype dt, MPI_Status *st),             \
       (fh, o, buf, n, dt, st), n, dt, NULL)                                                       \
  DATA(MPI_File_write_at##SFX, K_INDEP, 1,                                                         \
       (MPI_File fh, MPI_Offset o, BUF * buf, CNT n, MPI_Datatype dt, MPI_Status * st),            \
       (fh, o, buf, n, dt, st), n, dt, NULL)                                                       \
  DATA(MPI_File_read_shared##SFX, K_INDEP, 0,                                                      \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt, MPI_Status *st), (fh, buf, n, dt, st), n,  \
       dt, NULL)                                                                                   \
  DATA(MPI_File_write_shared##SFX, K_INDEP, 1,                                                     \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt, MPI_Status * st), (fh, buf, n, dt, st), n, \
       dt, NULL)                                                                                   \
  /* collective */                                                                                 \
  DATA(MPI_File_read_all##SFX, K_COLL, 0,                                                          \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt, MPI_Status *st), (fh, buf, n, dt, st), n,  \
       dt, NULL)                                                                                   \
  DATA(MPI_File_write_all##SFX, K_COLL, 1,                                                         \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt, MPI_Status * st), (fh, buf, n, dt, st), n, \
       dt, NULL)                                                                                   \
  DATA(MPI_File_read_at_all##SFX, K_COLL, 0,                                                       \
       (MPI_File fh, MPI_Offset o, void *buf, CNT n, MPI_Datatype dt, MPI_Status *st),             \
       (fh, o, buf, n, dt, st), n, dt, NULL)                                                       \
  DATA(MPI_File_write_at_all##SFX, K_COLL, 1,                                                      \
       (MPI_File fh, MPI_Offset o, BUF * buf, CNT n, MPI_Datatype dt, MPI_Status * st),            \
       (fh, o, buf, n, dt, st), n, dt, NULL)                                                       \
  DATA(MPI_File_read_ordered##SFX, K_COLL, 0,                                                      \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt, MPI_Status *st), (fh, buf, n, dt, st), n,  \
       dt, NULL)                                                                                   \
  DATA(MPI_File_write_ordered##SFX, K_COLL, 1,                                                     \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt, MPI_Status * st), (fh, buf, n, dt, st), n, \
       dt, NULL)                                                                                   \
  /* nonblocking: counted at post, timed until the completion is seen */                           \
  DATA(MPI_File_iread##SFX, K_NB, 0,                                                               \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt, MPI_Request *rq), (fh, buf, n, dt, rq), n, \
       dt, rq)                                                                                     \
  DATA(MPI_File_iwrite##SFX, K_NB, 1,                                                              \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt, MPI_Request * rq), (fh, buf, n, dt, rq),   \
       n, dt, rq)                                                                                  \
  DATA(MPI_File_iread_at##SFX, K_NB, 0,                                                            \
       (MPI_File fh, MPI_Offset o, void *buf, CNT n, MPI_Datatype dt, MPI_Request *rq),            \
       (fh, o, buf, n, dt, rq), n, dt, rq)                                                         \
  DATA(MPI_File_iwrite_at##SFX, K_NB, 1,                                                           \
       (MPI_File fh, MPI_Offset o, BUF * buf, CNT n, MPI_Datatype dt, MPI_Request * rq),           \
       (fh, o, buf, n, dt, rq), n, dt, rq)                                                         \
  DATA(MPI_File_iread_shared##SFX, K_NB, 0,                                                        \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt, MPI_Request *rq), (fh, buf, n, dt, rq), n, \
       dt, rq)                                                                                     \
  DATA(MPI_File_iwrite_shared##SFX, K_NB, 1,                                                       \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt, MPI_Request * rq), (fh, buf, n, dt, rq),   \
       n, dt, rq)                                                                                  \
  DATA(MPI_File_iread_all##SFX, K_NB, 0,                                                           \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt, MPI_Request *rq), (fh, buf, n, dt, rq), n, \
       dt, rq)                                                                                     \
  DATA(MPI_File_iwrite_all##SFX, K_NB, 1,                                                          \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt, MPI_Request * rq), (fh, buf, n, dt, rq),   \
       n, dt, rq)                                                                                  \
  DATA(MPI_File_iread_at_all##SFX, K_NB, 0,                                                        \
       (MPI_File fh, MPI_Offset o, void *buf, CNT n, MPI_Datatype dt, MPI_Request *rq),            \
       (fh, o, buf, n, dt, rq), n, dt, rq)                                                         \
  DATA(MPI_File_iwrite_at_all##SFX, K_NB, 1,                                                       \
       (MPI_File fh, MPI_Offset o, BUF * buf, CNT n, MPI_Datatype dt, MPI_Request * rq),           \
       (fh, o, buf, n, dt, rq), n, dt, rq)                                                         \
  /* split collectives: counted at begin, timed from begin to end */                               \
  DATA(MPI_File_read_all_begin##SFX, K_SPLIT, 0, (MPI_File fh, void *buf, CNT n, MPI_Datatype dt), \
       (fh, buf, n, dt), n, dt, NULL)                                                              \
  DATA(MPI_File_write_all_begin##SFX, K_SPLIT, 1,                                                  \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt), (fh, buf, n, dt), n, dt, NULL)            \
  DATA(MPI_File_read_at_all_begin##SFX, K_SPLIT, 0,                                                \
       (MPI_File fh, MPI_Offset o, void *buf, CNT n, MPI_Datatype dt), (fh, o, buf, n, dt), n, dt, \
       NULL)                                                                                       \
  DATA(MPI_File_write_at_all_begin##SFX, K_SPLIT, 1,                                               \
       (MPI_File fh, MPI_Offset o, BUF * buf, CNT n, MPI_Datatype dt), (fh, o, buf, n, dt), n, dt, \
       NULL)                                                                                       \
  DATA(MPI_File_read_ordered_begin##SFX, K_SPLIT, 0,                                               \
       (MPI_File fh, void *buf, CNT n, MPI_Datatype dt), (fh, buf, n, dt), n, dt, NULL)            \
  DATA(MPI_File_write_ordered_begin##SFX, K_SPLIT, 1,                                              \
       (MPI_File fh, BUF * buf, CNT n, MPI_Datatype dt), (fh, buf, n, dt), n, dt, NULL)

RW_FORMS(, int, const void)
#if MPI_VERSION >= 4 /* large-count forms */
RW_FORMS(_c, MPI_Count, const void)
#endif

#define SPLIT_END(name, dir, BUF)                                  \
  MPI_WRAP(int, name, (MPI_File fh, BUF * buf, MPI_Status * st)) { \
    iochar_record *r = iochar_active() ? file_rec(fh) : NULL;      \
    if (!r) return PREAL(name)(fh, buf, st);                       \
    int ret = PREAL(name)(fh, buf, st);                            \
    double t1 = iochar_now();                                      \
    IOCHAR_RECORD(record_split_end(r, dir, t1));                   \
    return ret;                                                    \
  }
SPLIT_END(MPI_File_read_all_end, 0, void)
SPLIT_END(MPI_File_write_all_end, 1, const void)
SPLIT_END(MPI_File_read_at_all_end, 0, void)
SPLIT_END(MPI_File_write_at_all_end, 1, const void)
SPLIT_END(MPI_File_read_ordered_end, 0, void)
SPLIT_END(MPI_File_write_ordered_end, 1, const void)

MPI_WRAP(int, MPI_Type_free, (MPI_Datatype * dt)) {
  atomic_fetch_add_explicit(&types_gen, 1, memory_order_release);
  return PREAL(MPI_Type_free)(dt);
}

/* ---- request completion: only requests we posted are looked at ---------- */

static inline int tracking(void) {
  return atomic_load_explicit(&npending, memory_order_relaxed) > 0 && !iochar_in_tool;
}

/* Handles are copied before the call (completion overwrites them); only
 * the requests found in the pending map are ours. */
MPI_WRAP(int, MPI_Wait, (MPI_Request * rq, MPI_Status *st)) {
  if (!tracking()) return PREAL(MPI_Wait)(rq, st);
  MPI_Request h = *rq;
  int ret = PREAL(MPI_Wait)(rq, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(request_done(h, t1));
  return ret;
}

/* A request freed before its completion is seen: forget it (its handle may
 * be reused), keeping the time up to the post.  A cancelled one still
 * completes through Wait/Test. */
static void request_forget(MPI_Request h) {
  pending *p = iochar_hmap_del(requests, REQ_KEY(h));
  if (!p) return;
  atomic_fetch_sub(&npending, 1);
  iochar_pool_put(&pool, p);
}
MPI_WRAP(int, MPI_Request_free, (MPI_Request * rq)) {
  if (!tracking()) return PREAL(MPI_Request_free)(rq);
  MPI_Request h = *rq;
  int ret = PREAL(MPI_Request_free)(rq);
  if (ret == MPI_SUCCESS) IOCHAR_RECORD(request_forget(h));
  return ret;
}

MPI_WRAP(int, MPI_Test, (MPI_Request * rq, int *flag, MPI_Status *st)) {
  if (!tracking()) return PREAL(MPI_Test)(rq, flag, st);
  MPI_Request h = *rq;
  int ret = PREAL(MPI_Test)(rq, flag, st);
  double t1 = iochar_now();
  if (ret == MPI_SUCCESS && *flag) IOCHAR_RECORD(request_done(h, t1));
  return ret;
}

#define MULTI(name, params, call, done)                                          \
  MPI_WRAP(int, name, params) {                                                  \
    if (!tracking() || n <= 0) return PREAL(name) call;                          \
    MPI_Request small_[64];                                                      \
    MPI_Request *h = n <= 64 ? small_ : malloc(sizeof(MPI_Request) * (size_t)n); \
    if (!h) return PREAL(name) call;                                             \
    memcpy(h, rq, sizeof(MPI_Request) * (size_t)n);                              \
    int ret = PREAL(name) call;                                                  \
    double t1 = iochar_now();                                                    \
    IOCHAR_RECORD(done);                                                         \
    if (h != small_) free(h);                                                    \
    return ret;                                                                  \
  }

static void done_all(const MPI_Request *h, int n, double t1) {
  for (int i = 0; i < n; i++) request_done(h[i], t1);
}
static void done_some(const MPI_Request *h, int out, const int *idx, double t1) {
  for (int i = 0; i < out && out != MPI_UNDEFINED; i++) request_done(h[idx[i]], t1);
}

MULTI(MPI_Waitall, (int n, MPI_Request rq[], MPI_Status st[]), (n, rq, st),
      if (ret == MPI_SUCCESS) done_all(h, n, t1))
MULTI(MPI_Testall, (int n, MPI_Request rq[], int *flag, MPI_Status st[]), (n, rq, flag, st),
      if (ret == MPI_SUCCESS && *flag) done_all(h, n, t1))
MULTI(MPI_Waitany, (int n, MPI_Request rq[], int *idx, MPI_Status *st), (n, rq, idx, st),
      if (ret == MPI_SUCCESS && *idx != MPI_UNDEFINED) request_done(h[*idx], t1))
MULTI(MPI_Testany, (int n, MPI_Request rq[], int *idx, int *flag, MPI_Status *st),
      (n, rq, idx, flag, st),
      if (ret == MPI_SUCCESS && *flag && *idx != MPI_UNDEFINED) request_done(h[*idx], t1))
MULTI(MPI_Waitsome, (int n, MPI_Request rq[], int *out, int idx[], MPI_Status st[]),
      (n, rq, out, idx, st), if (ret == MPI_SUCCESS) done_some(h, *out, idx, t1))
MULTI(MPI_Testsome, (int n, MPI_Request rq[], int *out, int idx[], MPI_Status st[]),
      (n, rq, out, idx, st), if (ret == MPI_SUCCESS) done_some(h, *out, idx, t1))
