/* PnetCDF interception: files (PNETCDF_FILE) and variables (PNETCDF_VAR),
 * resolved at run time; the put/get/iput/iget/bput families come from one table. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/access.h"
#include "../runtime/interpose.h"
#include "dynlib.h"
#include "ncfamily.h"
#include "pnetcdf_counters.h"

static const iochar_counter_def f_ints[] = {PNETCDF_FILE_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def f_flts[] = {PNETCDF_FILE_F_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def v_ints[] = {PNETCDF_VAR_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def v_flts[] = {PNETCDF_VAR_F_COUNTERS(IOCHAR_DEF_ENTRY)};

static iochar_rw_layout f_layout, v_layout; /* from the counter lists (runtime/layout.c) */
IOCHAR_LAYOUTS {
  IOCHAR_LAYOUT_INIT(&f_layout, PNETCDF_FILE, f_ints, f_flts, NULL, NULL);
  IOCHAR_LAYOUT_INIT(&v_layout, PNETCDF_VAR, v_ints, v_flts, "GETS", "PUTS");
}

const iochar_module iochar_mod_pnetcdf_file =
    IOCHAR_MODULE_DEF(PNETCDF_FILE, f_ints, f_flts, iochar_rw_state, &f_layout);
const iochar_module iochar_mod_pnetcdf_var =
    IOCHAR_MODULE_DEF(PNETCDF_VAR, v_ints, v_flts, iochar_rw_state, &v_layout);

/* ---- the PnetCDF API we use, as in pnetcdf.h ------------------------------ */
typedef long long MPI_Offset;
typedef int nc_type;
typedef void *mpi_handle; /* MPI_Comm/MPI_Info/MPI_Datatype: int or pointer,
                             either travels unchanged in one integer register */
#define NC_NOERR 0
#define NC_ENOTBUILT (-128)
#define NC_MAX_VAR_DIMS 1024

int ncmpi_create(mpi_handle comm, const char *path, int cmode, mpi_handle info, int *ncidp);
int ncmpi_open(mpi_handle comm, const char *path, int omode, mpi_handle info, int *ncidp);
int ncmpi_close(int ncid);
int ncmpi_enddef(int ncid);
int ncmpi__enddef(int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
                  MPI_Offset r_align);
int ncmpi_redef(int ncid);
int ncmpi_sync(int ncid);
int ncmpi_wait(int ncid, int count, int reqs[], int statuses[]);
int ncmpi_wait_all(int ncid, int count, int reqs[], int statuses[]);
int ncmpi_def_var(int ncid, const char *name, nc_type xtype, int ndims, const int *dimidsp,
                  int *varidp);
/* helpers */
int ncmpi_inq_path(int ncid, int *pathlen, char *path);
int ncmpi_inq_format(int ncid, int *formatp);
int ncmpi_inq_varname(int ncid, int varid, char *name);
int ncmpi_inq_vartype(int ncid, int varid, nc_type *xtypep);
int ncmpi_inq_varndims(int ncid, int varid, int *ndimsp);
int ncmpi_inq_vardimid(int ncid, int varid, int *dimidsp);
int ncmpi_inq_unlimdim(int ncid, int *unlimdimidp);
int ncmpi_inq_dimlen(int ncid, int dimid, MPI_Offset *lenp);
/* vard: the file layout as an MPI datatype (its size from the MPI library
 * PnetCDF itself uses) */
int ncmpi_put_vard(int ncid, int varid, mpi_handle filetype, const void *buf, MPI_Offset bufcount,
                   mpi_handle buftype);
int ncmpi_put_vard_all(int ncid, int varid, mpi_handle filetype, const void *buf,
                       MPI_Offset bufcount, mpi_handle buftype);
int ncmpi_get_vard(int ncid, int varid, mpi_handle filetype, void *buf, MPI_Offset bufcount,
                   mpi_handle buftype);
int ncmpi_get_vard_all(int ncid, int varid, mpi_handle filetype, void *buf, MPI_Offset bufcount,
                       mpi_handle buftype);
int MPI_Type_size(mpi_handle datatype, int *size);

/* Parameters between (ncid, varid) and the buffer per access form, the
 * arguments they forward, and what the form accesses (kind, count, stride). */
#define PNCP_var
#define PNCP_var1 const MPI_Offset *start,
#define PNCP_vara const MPI_Offset *start, const MPI_Offset *count,
#define PNCP_vars const MPI_Offset *start, const MPI_Offset *count, const MPI_Offset *stride,
#define PNCP_varm                                                             \
  const MPI_Offset *start, const MPI_Offset *count, const MPI_Offset *stride, \
      const MPI_Offset *imap,
#define PNCP_varn int num, MPI_Offset *const *starts, MPI_Offset *const *counts,
#define PNCA_var
#define PNCA_var1 start,
#define PNCA_vara start, count,
#define PNCA_vars start, count, stride,
#define PNCA_varm start, count, stride, imap,
#define PNCA_varn num, starts, counts,
enum { WHOLE, ONE, BOX, BOXES };
#define PNCK_var WHOLE, NULL, NULL, 0, NULL
#define PNCK_var1 ONE, NULL, NULL, 0, NULL
#define PNCK_vara BOX, count, NULL, 0, NULL
#define PNCK_vars BOX, count, stride, 0, NULL
#define PNCK_varm BOX, count, stride, 0, NULL
#define PNCK_varn BOXES, NULL, NULL, num, counts
/* after the buffer: the flexible API's (bufcount, buftype); requests of the
 * nonblocking calls */
#define PNC_TAILP_typed
#define PNC_TAILA_typed
#define PNC_TAILP_flex , MPI_Offset bufcount, mpi_handle buftype
#define PNC_TAILA_flex , bufcount, buftype
#define PNC_REQP_bl
#define PNC_REQA_bl
#define PNC_REQP_nb , int *req
#define PNC_REQA_nb , req
enum { INDEP, COLL, NB };

/* THE table of data calls.  W(name, form, buffer type, tail, blocking, dir,
 * mode) for every form x element type x {put, get, put_all, get_all, iput,
 * iget, bput}; void with the flex tail is the flexible (untyped) API. */
#define PNC_SEVEN(W, f, sfx, T, tag)                        \
  W(ncmpi_put_##f##sfx, f, const T, tag, bl, 1, INDEP)      \
  W(ncmpi_get_##f##sfx, f, T, tag, bl, 0, INDEP)            \
  W(ncmpi_put_##f##sfx##_all, f, const T, tag, bl, 1, COLL) \
  W(ncmpi_get_##f##sfx##_all, f, T, tag, bl, 0, COLL)       \
  W(ncmpi_iput_##f##sfx, f, const T, tag, nb, 1, NB)        \
  W(ncmpi_iget_##f##sfx, f, T, tag, nb, 0, NB)              \
  W(ncmpi_bput_##f##sfx, f, const T, tag, nb, 1, NB)
#define PNC_TYPES(W, f)                                  \
  PNC_SEVEN(W, f, _text, char, typed)                    \
  PNC_SEVEN(W, f, _schar, signed char, typed)            \
  PNC_SEVEN(W, f, _uchar, unsigned char, typed)          \
  PNC_SEVEN(W, f, _short, short, typed)                  \
  PNC_SEVEN(W, f, _ushort, unsigned short, typed)        \
  PNC_SEVEN(W, f, _int, int, typed)                      \
  PNC_SEVEN(W, f, _uint, unsigned int, typed)            \
  PNC_SEVEN(W, f, _long, long, typed)                    \
  PNC_SEVEN(W, f, _float, float, typed)                  \
  PNC_SEVEN(W, f, _double, double, typed)                \
  PNC_SEVEN(W, f, _longlong, long long, typed)           \
  PNC_SEVEN(W, f, _ulonglong, unsigned long long, typed) \
  PNC_SEVEN(W, f, , void, flex)
#define PNC_DATA(W) \
  PNC_TYPES(W, var) \
  PNC_TYPES(W, var1) PNC_TYPES(W, vara) PNC_TYPES(W, vars) PNC_TYPES(W, varm) PNC_TYPES(W, varn)

#define PNC_PROTO(name, f, BT, tag, nb, dir, mode) \
  int name(int ncid, int varid, PNCP_##f BT *buf PNC_TAILP_##tag PNC_REQP_##nb);
PNC_DATA(PNC_PROTO)

// clang-format off
#define PNC_FUNCS(X)                                                           \
  X(ncmpi_create) X(ncmpi_open) X(ncmpi_close) X(ncmpi_enddef) X(ncmpi__enddef) \
  X(ncmpi_redef) X(ncmpi_sync) X(ncmpi_wait) X(ncmpi_wait_all) X(ncmpi_def_var) \
  X(ncmpi_inq_path) X(ncmpi_inq_format) X(ncmpi_inq_varname)                   \
  X(ncmpi_inq_vartype) X(ncmpi_inq_varndims) X(ncmpi_inq_vardimid)             \
  X(ncmpi_inq_unlimdim) X(ncmpi_inq_dimlen) X(ncmpi_put_vard)                  \
  X(ncmpi_put_vard_all) X(ncmpi_get_vard) X(ncmpi_get_vard_all) X(MPI_Type_size)
// clang-format on
#define PNC_ENUM(name, f, BT, tag, nb, dir, mode) FN_##name,
#define PNC_NAME(name, f, BT, tag, nb, dir, mode) #name,

enum { PNC_FUNCS(IOCHAR_DL_ENUM) PNC_DATA(PNC_ENUM) PNC_NFUNCS };
static const char *const pnc_names[] = {PNC_FUNCS(IOCHAR_DL_NAME) PNC_DATA(PNC_NAME)};
static iochar_dlset pncl = {.what = "PnetCDF", .names = pnc_names, .n = PNC_NFUNCS};

#define PNC(I, name) ((__typeof__(&name))iochar_dl_fn(&pncl, I, FN_##name))

/* Nesting depth of wrapped PnetCDF calls on this thread (typed calls built on
 * flexible ones are counted once). */
static __thread int pnc_depth __attribute__((tls_model("initial-exec")));

/* ---- handle state -------------------------------------------------------- */
static ncf_maps maps;
static const ncf_family fam = {
    &maps,
    &f_layout,
    &v_layout,
    {PNETCDF_FILE_F_OPEN_START_TIMESTAMP, PNETCDF_FILE_F_OPEN_END_TIMESTAMP},
    {PNETCDF_FILE_F_CLOSE_START_TIMESTAMP, PNETCDF_FILE_F_CLOSE_END_TIMESTAMP},
    PNETCDF_VAR_STRIDED_ACCESSES};

static uint64_t file_key(iochar_dlinst *I, int ncid) { return iochar_dl_key(I, (uint32_t)ncid); }
static uint64_t var_key(iochar_dlinst *I, int ncid, int varid) {
  return iochar_dl_key(I, (uint64_t)(uint32_t)ncid << 32 | (uint32_t)varid);
}

/* External type sizes of NC_BYTE (1) ... NC_UINT64 (11). */
static int64_t type_size(nc_type t) {
  static const int64_t size[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
  return t >= 1 && t <= 11 ? size[t] : 0;
}

/* The state of ncid's file, created on first sight (path NULL: ask PnetCDF). */
static ncf_file *file_track(iochar_dlinst *I, int ncid, const char *path) {
  ncf_file *fs = ncf_file_get(&maps, file_key(I, ncid));
  if (fs) return fs;
  char given[IOCHAR_PATH_MAX];
  if (!path) {
    int n = 0;
    if (PNC(I, ncmpi_inq_path)(ncid, &n, NULL) || n >= (int)sizeof given ||
        PNC(I, ncmpi_inq_path)(ncid, NULL, given))
      return NULL;
    path = given;
  }
  fs = ncf_file_add(&maps, file_key(I, ncid), IOCHAR_MOD_PNETCDF_FILE, path);
  int fmt = 0;
  if (fs && PNC(I, ncmpi_inq_format)(ncid, &fmt) == NC_NOERR) {
    iochar_record *r = fs->rec;
    iochar_spin_lock(&r->lock);
    if (!r->c[PNETCDF_FILE_FORMAT]) r->c[PNETCDF_FILE_FORMAT] = ncf_format_code(fmt);
    iochar_spin_unlock(&r->lock);
  }
  return fs;
}

/* The state of variable (ncid, varid), created on first sight. */
static ncf_var *var_track(iochar_dlinst *I, int ncid, int varid) {
  uint64_t key = var_key(I, ncid, varid);
  ncf_var *v = ncf_var_get(&maps, key);
  if (v) return v;
  ncf_file *fs = file_track(I, ncid, NULL);
  char vn[257], name[IOCHAR_PATH_MAX + 300];
  if (!fs || PNC(I, ncmpi_inq_varname)(ncid, varid, vn)) return NULL;
  snprintf(name, sizeof name, "%s:%s", fs->path, vn);
  v = ncf_var_new(key, IOCHAR_MOD_PNETCDF_VAR, name);
  if (!v) return NULL;
  int ndims = 0, dimids[NC_MAX_VAR_DIMS], unlim = -1, isrec = 0;
  nc_type xt = 0;
  if (PNC(I, ncmpi_inq_varndims)(ncid, varid, &ndims) || ndims > NC_MAX_VAR_DIMS) ndims = 0;
  PNC(I, ncmpi_inq_vartype)(ncid, varid, &xt);
  if (ndims && PNC(I, ncmpi_inq_vardimid)(ncid, varid, dimids) == NC_NOERR &&
      PNC(I, ncmpi_inq_unlimdim)(ncid, &unlim) == NC_NOERR)
    isrec = unlim >= 0 && dimids[0] == unlim; /* classic: only the first may be */
  v->ndims = ndims;
  v->type_size = type_size(xt);
  iochar_record *r = v->rec;
  iochar_spin_lock(&r->lock);
  r->c[PNETCDF_VAR_NDIMS] = ndims;
  r->c[PNETCDF_VAR_DATATYPE_SIZE] = v->type_size;
  r->c[PNETCDF_VAR_IS_RECORD_VAR] = isrec;
  iochar_spin_unlock(&r->lock);
  return ncf_var_publish(&maps, fs, v);
}

/* ---- record steps (called with iochar_in_tool set) ----------------------- */

static void record_open(iochar_dlinst *I, int ret, const char *path, const int *ncidp, int idx,
                        double t0, double t1) {
  ncf_opened(&fam, ret == NC_NOERR && ncidp ? file_track(I, *ncidp, path) : NULL, idx, t0, t1);
}

static void record_file_meta(iochar_dlinst *I, int ncid, int ret, int idx, double t0, double t1) {
  ncf_file_meta(&fam, ret == NC_NOERR ? file_track(I, ncid, NULL) : NULL, idx, t0, t1);
}

/* Waits complete nonblocking I/O: their time is wait time, not meta time. */
static void record_wait(iochar_dlinst *I, int ncid, int idx, double t0, double t1) {
  ncf_file *fs = file_track(I, ncid, NULL);
  if (!fs) return;
  iochar_record *r = fs->rec;
  iochar_spin_lock(&r->lock);
  r->c[idx]++;
  r->f[PNETCDF_FILE_F_WAIT_TIME] += t1 - t0;
  iochar_spin_unlock(&r->lock);
}

static void record_close(iochar_dlinst *I, int ncid, double t0, double t1) {
  ncf_closed(&fam, file_key(I, ncid), t0, t1);
}

static void record_def_var(iochar_dlinst *I, int ncid, const int *varidp, int ret, double t0,
                           double t1) {
  ncf_var_meta(&fam, ret == NC_NOERR && varidp ? var_track(I, ncid, *varidp) : NULL, t0, t1);
}

/* Elements a call accesses.  varn: num boxes (counts NULL, or a NULL
 * counts[i]: single elements, as PnetCDF reads them). */
static int64_t elements(iochar_dlinst *I, int ncid, int varid, const ncf_var *v, int kind,
                        const MPI_Offset *count, int num, MPI_Offset *const *counts) {
  if (kind == BOXES) {
    int64_t total = 0;
    for (int i = 0; i < num; i++) {
      int64_t n = 1;
      for (int d = 0; counts && counts[i] && d < v->ndims; d++) n *= counts[i][d];
      total += n;
    }
    return total;
  }
  if (kind == ONE || v->ndims == 0) return 1;
  int64_t n = 1;
  if (kind == BOX && count) {
    for (int i = 0; i < v->ndims; i++) n *= count[i];
    return n;
  }
  int dimids[NC_MAX_VAR_DIMS];
  if (PNC(I, ncmpi_inq_vardimid)(ncid, varid, dimids)) return 0;
  for (int i = 0; i < v->ndims; i++) {
    MPI_Offset len = 0;
    PNC(I, ncmpi_inq_dimlen)(ncid, dimids[i], &len);
    n *= len;
  }
  return n;
}

/* One access of len bytes (-1: the call failed) in mode (INDEP, COLL, NB). */
static void account(ncf_var *v, int dir, int mode, int64_t len, int strided, double t0, double t1) {
  static const int by_mode[3][2] = {{PNETCDF_VAR_INDEP_GETS, PNETCDF_VAR_INDEP_PUTS},
                                    {PNETCDF_VAR_COLL_GETS, PNETCDF_VAR_COLL_PUTS},
                                    {PNETCDF_VAR_NB_GETS, PNETCDF_VAR_NB_PUTS}};
  ncf_access(&fam, v, dir, len, strided, by_mode[mode][dir], t0, t1);
}

static void record_rw(iochar_dlinst *I, int ncid, int varid, int dir, int mode, int kind,
                      const MPI_Offset *count, const MPI_Offset *stride, int num,
                      MPI_Offset *const *counts, int ret, double t0, double t1) {
  ncf_var *v = var_track(I, ncid, varid);
  if (!v) return;
  int64_t len =
      ret == NC_NOERR ? elements(I, ncid, varid, v, kind, count, num, counts) * v->type_size : -1;
  int strided = 0;
  for (int i = 0; stride && i < v->ndims; i++) strided |= stride[i] != 1;
  account(v, dir, mode, len, strided, t0, t1);
}

/* vard: the file layout is an MPI datatype (in bytes, from the variable's
 * start): its size is what the call moves; MPI_DATATYPE_NULL moves none. */
static void record_vard(iochar_dlinst *I, int ncid, int varid, int dir, int mode,
                        mpi_handle filetype, int ret, double t0, double t1) {
  ncf_var *v = var_track(I, ncid, varid);
  if (!v) return;
  int size = 0;
  if (ret == NC_NOERR && PNC(I, MPI_Type_size)(filetype, &size) != 0) size = 0;
  account(v, dir, mode, ret == NC_NOERR ? size : -1, 0, t0, t1);
}

/* ---- wrappers ------------------------------------------------------------ */

#define PNC_API __attribute__((visibility("default")))

/* The caller's copy of the library and its real function (NULL: none);
 * the clock runs unless not recording or nested (iochar_dlcall_begin). */
static inline void *pnc_begin(iochar_dlcall *c, int fi, const void *ra) {
  return iochar_dlcall_begin(c, &pncl, fi, ra, &pnc_depth);
}

PNC_API int ncmpi_create(mpi_handle comm, const char *path, int cmode, mpi_handle info,
                         int *ncidp) {
  iochar_dlcall c;
  __typeof__(&ncmpi_create) real = pnc_begin(&c, FN_ncmpi_create, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(comm, path, cmode, info, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_open(c.I, ret, path, ncidp, PNETCDF_FILE_CREATES, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_open(mpi_handle comm, const char *path, int omode, mpi_handle info, int *ncidp) {
  iochar_dlcall c;
  __typeof__(&ncmpi_open) real = pnc_begin(&c, FN_ncmpi_open, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(comm, path, omode, info, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_open(c.I, ret, path, ncidp, PNETCDF_FILE_OPENS, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_close(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_close) real = pnc_begin(&c, FN_ncmpi_close, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_close(c.I, ncid, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_enddef(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_enddef) real = pnc_begin(&c, FN_ncmpi_enddef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_meta(c.I, ncid, ret, -1, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi__enddef(int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
                          MPI_Offset r_align) {
  iochar_dlcall c;
  __typeof__(&ncmpi__enddef) real = pnc_begin(&c, FN_ncmpi__enddef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, h_minfree, v_align, v_minfree, r_align);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_meta(c.I, ncid, ret, -1, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_redef(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_redef) real = pnc_begin(&c, FN_ncmpi_redef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_file_meta(c.I, ncid, ret, PNETCDF_FILE_REDEFS, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_sync(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_sync) real = pnc_begin(&c, FN_ncmpi_sync, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_file_meta(c.I, ncid, ret, PNETCDF_FILE_SYNCS, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_wait(int ncid, int count, int reqs[], int statuses[]) {
  iochar_dlcall c;
  __typeof__(&ncmpi_wait) real = pnc_begin(&c, FN_ncmpi_wait, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, count, reqs, statuses);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_wait(c.I, ncid, PNETCDF_FILE_INDEP_WAITS, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_wait_all(int ncid, int count, int reqs[], int statuses[]) {
  iochar_dlcall c;
  __typeof__(&ncmpi_wait_all) real = pnc_begin(&c, FN_ncmpi_wait_all, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, count, reqs, statuses);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_wait(c.I, ncid, PNETCDF_FILE_COLL_WAITS, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_def_var(int ncid, const char *name, nc_type xtype, int ndims, const int *dimidsp,
                          int *varidp) {
  iochar_dlcall c;
  __typeof__(&ncmpi_def_var) real = pnc_begin(&c, FN_ncmpi_def_var, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, name, xtype, ndims, dimidsp, varidp);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_def_var(c.I, ncid, varidp, ret, c.t0, c.t1));
  return ret;
}

#define PNC_VARD(name, BT, dir, mode)                                                      \
  PNC_API int name(int ncid, int varid, mpi_handle filetype, BT *buf, MPI_Offset bufcount, \
                   mpi_handle buftype) {                                                   \
    iochar_dlcall c;                                                                       \
    __typeof__(&name) real = pnc_begin(&c, FN_##name, __builtin_return_address(0));        \
    if (!real) return NC_ENOTBUILT;                                                        \
    int ret = real(ncid, varid, filetype, buf, bufcount, buftype);                         \
    if (iochar_dlcall_end(&c))                                                             \
      IOCHAR_RECORD(record_vard(c.I, ncid, varid, dir, mode, filetype, ret, c.t0, c.t1));  \
    return ret;                                                                            \
  }
// clang-format off
PNC_VARD(ncmpi_put_vard, const void, 1, INDEP)
PNC_VARD(ncmpi_put_vard_all, const void, 1, COLL)
PNC_VARD(ncmpi_get_vard, void, 0, INDEP)
PNC_VARD(ncmpi_get_vard_all, void, 0, COLL)
// clang-format on

#define PNC_WRAP(name, f, BT, tag, nb, dir, mode)                                         \
  PNC_API int name(int ncid, int varid, PNCP_##f BT *buf PNC_TAILP_##tag PNC_REQP_##nb) { \
    iochar_dlcall c;                                                                      \
    __typeof__(&name) real = pnc_begin(&c, FN_##name, __builtin_return_address(0));       \
    if (!real) return NC_ENOTBUILT;                                                       \
    int ret = real(ncid, varid, PNCA_##f buf PNC_TAILA_##tag PNC_REQA_##nb);              \
    if (iochar_dlcall_end(&c))                                                            \
      IOCHAR_RECORD(record_rw(c.I, ncid, varid, dir, mode, PNCK_##f, ret, c.t0, c.t1));   \
    return ret;                                                                           \
  }
PNC_DATA(PNC_WRAP)
