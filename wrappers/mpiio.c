/* MPI-IO interception through PMPI: the module, its accounting, and the
 * MPI_File_* calls that open, close and describe a file (the read/write
 * families are in mpiio_data.c, the requests and split-collective ends in
 * mpiio_req.c).  The MPI runtime they stand on (PMPI table, MPI_Init/
 * Finalize/Abort, the shutdown) is reducer/'s.
 *
 * No libmpi is linked: every PMPI_* entry is resolved at run time, so the
 * library still loads in programs without MPI.  MPICH's Fortran bindings call
 * the C MPI_File_* symbols, so these wrappers serve Fortran programs too.
 * Offsets are not recorded for MPI-IO (no counter needs them; the byte
 * offsets the library really touches are in the POSIX records below it). */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpiio_internal.h"

static const iochar_counter_def ints[] = {MPIIO_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def flts[] = {MPIIO_F_COUNTERS(IOCHAR_DEF_ENTRY)};

iochar_rw_layout mpiio_layouts[K_COUNT];
IOCHAR_LAYOUTS {
  static const char *const ops[K_COUNT][2] = {[K_INDEP] = {"INDEP_READS", "INDEP_WRITES"},
                                              [K_COLL] = {"COLL_READS", "COLL_WRITES"},
                                              [K_SPLIT] = {"SPLIT_READS", "SPLIT_WRITES"},
                                              [K_NB] = {"NB_READS", "NB_WRITES"}};
  for (int k = 0; k < K_COUNT; k++)
    IOCHAR_LAYOUT_INIT(&mpiio_layouts[k], MPIIO, ints, flts, ops[k][0], ops[k][1]);
}

const iochar_module iochar_mod_mpiio =
    IOCHAR_MODULE_DEF(MPIIO, ints, flts, mpiio_state, &mpiio_layouts[K_INDEP], .n_more_ops = 3,
                      .more_ops = {{MPIIO_COLL_READS, MPIIO_SPLIT_READS, MPIIO_NB_READS},
                                   {MPIIO_COLL_WRITES, MPIIO_SPLIT_WRITES, MPIIO_NB_WRITES}});

/* ---- handles: MPI_File -> record ------------------------------------------ */

iochar_hmap *mpiio_files;
iochar_hmap *mpiio_requests;
_Atomic unsigned mpiio_files_gen;
__thread mpiio_last_file mpiio_last __attribute__((tls_model("initial-exec")));

/* The maps (open files, and the requests mpiio_req.c follows) come with the
 * first MPI file opened after MPI_Init (a program that opens none pays for
 * none; a request needs an open file first). */
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;
static void maps_create(void) {
  mpiio_requests = iochar_hmap_create(MPIIO_NPENDING);
  mpiio_files = iochar_hmap_create(1 << 15);
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

int64_t mpiio_record_rw(iochar_record *r, int kind, int dir, int ret, int64_t count,
                        MPI_Datatype dt, const void *buf, double t0, double t1) {
  int64_t len = ret == MPI_SUCCESS ? type_bytes(dt, count) : -1;
  iochar_spin_lock(&r->lock);
  mpiio_state *s = (mpiio_state *)iochar_rw_state_of(r);
  iochar_rw_account(r, &mpiio_layouts[kind], &s->rw, dir, -1, len, buf, t0, t1);
  if (kind == K_SPLIT) {
    s->split_t0[dir] = t0;
    s->split_len[dir] = len;
  }
  iochar_spin_unlock(&r->lock);
  return len;
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
  if (!mpiio_files) return;
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
  double *f = iochar_rec_f(r, &mpiio_layouts[K_INDEP]);
  iochar_ts(&f[MPIIO_F_OPEN_START_TIMESTAMP], &f[MPIIO_F_OPEN_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &mpiio_layouts[K_INDEP], t0, t1);
  iochar_spin_unlock(&r->lock);
  if (r->id != IOCHAR_AGG_ID) record_hints(r, fh);
  iochar_hmap_put(mpiio_files, mpiio_file_key(fh), r);
  atomic_fetch_add_explicit(&mpiio_files_gen, 1, memory_order_release);
}

/* Metadata call: bump counter idx (when >= 0, twice when `also` >= 0). */
static void record_meta(iochar_record *r, int idx, int also, double t0, double t1) {
  iochar_spin_lock(&r->lock);
  if (idx >= 0) r->c[idx]++;
  if (also >= 0) r->c[also]++;
  iochar_meta_account(r, &mpiio_layouts[K_INDEP], t0, t1);
  iochar_spin_unlock(&r->lock);
}

static void record_close(iochar_record *r, MPI_File fh, double t0, double t1) {
  iochar_spin_lock(&r->lock);
  double *f = iochar_rec_f(r, &mpiio_layouts[K_INDEP]);
  iochar_ts(&f[MPIIO_F_CLOSE_START_TIMESTAMP], &f[MPIIO_F_CLOSE_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &mpiio_layouts[K_INDEP], t0, t1);
  iochar_spin_unlock(&r->lock);
  iochar_hmap_del(mpiio_files, mpiio_file_key(fh));
  atomic_fetch_add_explicit(&mpiio_files_gen, 1, memory_order_release);
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
  iochar_record *r = mpiio_file(h);
  if (!r) return PREAL(MPI_File_close)(fh);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_close)(fh);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_close(r, h, t0, t1));
  return ret;
}

/* Metadata wrappers: guard, clock, real call, clock, record. */
MPI_WRAP(int, MPI_File_sync, (MPI_File fh)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_sync)(fh);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_sync)(fh);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(r, MPIIO_SYNCS, -1, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_set_info, (MPI_File fh, MPI_Info info)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_set_info)(fh, info);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_set_info)(fh, info);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(r, MPIIO_HINTS, -1, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_set_size, (MPI_File fh, MPI_Offset n)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_set_size)(fh, n);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_set_size)(fh, n);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(r, -1, -1, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_preallocate, (MPI_File fh, MPI_Offset n)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_preallocate)(fh, n);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_preallocate)(fh, n);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(r, -1, -1, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_seek, (MPI_File fh, MPI_Offset o, int whence)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_seek)(fh, o, whence);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_seek)(fh, o, whence);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(r, -1, -1, t0, t1));
  return ret;
}

MPI_WRAP(int, MPI_File_seek_shared, (MPI_File fh, MPI_Offset o, int whence)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_seek_shared)(fh, o, whence);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_seek_shared)(fh, o, whence);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(r, -1, -1, t0, t1));
  return ret;
}

/* A view set with hints counts as a hint setting too. */
MPI_WRAP(int, MPI_File_set_view,
         (MPI_File fh, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft, const char *rep,
          MPI_Info info)) {
  iochar_record *r = mpiio_file(fh);
  if (!r) return PREAL(MPI_File_set_view)(fh, disp, et, ft, rep, info);
  double t0 = iochar_now();
  int ret = PREAL(MPI_File_set_view)(fh, disp, et, ft, rep, info);
  double t1 = iochar_now();
  int hints = info != MPI_INFO_NULL ? MPIIO_HINTS : -1;
  IOCHAR_RECORD(record_meta(r, MPIIO_VIEWS, hints, t0, t1));
  return ret;
}

/* A freed datatype's handle may come back as another type: forget the sizes. */
MPI_WRAP(int, MPI_Type_free, (MPI_Datatype * dt)) {
  atomic_fetch_add_explicit(&types_gen, 1, memory_order_release);
  return PREAL(MPI_Type_free)(dt);
}
