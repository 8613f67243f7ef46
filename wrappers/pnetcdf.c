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

/* Parameters between (ncid, varid) and the buffer per access form, and the
 * arguments they forward. */
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
/* The record steps read the index arrays as 64-bit integers (ncfamily.h). */
_Static_assert(sizeof(MPI_Offset) == 8, "64-bit index arrays");
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

/* ---- what the shared steps ask PnetCDF (wrappers/ncfamily.c) ------------- */

static uint64_t file_key(iochar_dlinst *I, int ncid) { return iochar_dl_key(I, (uint32_t)ncid); }

static int path_of(iochar_dlinst *I, int ncid, char *buf, size_t size) {
  int n = 0;
  return PNC(I, ncmpi_inq_path)(ncid, &n, NULL) || n < 0 || (size_t)n >= size ||
         PNC(I, ncmpi_inq_path)(ncid, NULL, buf);
}

static int format_of(iochar_dlinst *I, int ncid) {
  int fmt = 0;
  return PNC(I, ncmpi_inq_format)(ncid, &fmt) == NC_NOERR ? fmt : 0;
}

static int var_name(iochar_dlinst *I, int ncid, int varid, const char *file, char *buf,
                    size_t size) {
  char vn[257];
  if (PNC(I, ncmpi_inq_varname)(ncid, varid, vn)) return -1;
  snprintf(buf, size, "%s:%s", file, vn);
  return 0;
}

/* External type sizes of NC_BYTE (1) ... NC_UINT64 (11). */
static int64_t type_size(nc_type t) {
  static const int64_t size[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
  return t >= 1 && t <= 11 ? size[t] : 0;
}

static void settings(iochar_dlinst *I, int ncid, int varid, ncf_var *v) {
  int ndims = 0, dimids[NC_MAX_VAR_DIMS], unlim = -1, isrec = 0;
  nc_type xt = 0;
  if (PNC(I, ncmpi_inq_varndims)(ncid, varid, &ndims) || ndims > NC_MAX_VAR_DIMS) ndims = 0;
  PNC(I, ncmpi_inq_vartype)(ncid, varid, &xt);
  if (ndims && PNC(I, ncmpi_inq_vardimid)(ncid, varid, dimids) == NC_NOERR &&
      PNC(I, ncmpi_inq_unlimdim)(ncid, &unlim) == NC_NOERR)
    isrec = unlim >= 0 && dimids[0] == unlim; /* classic: only the first may be */
  v->ndims = ndims;
  v->type_size = type_size(xt);
  v->is_record = isrec;
}

static int64_t whole(iochar_dlinst *I, int ncid, int varid, const ncf_var *v) {
  int dimids[NC_MAX_VAR_DIMS];
  if (PNC(I, ncmpi_inq_vardimid)(ncid, varid, dimids)) return 0;
  int64_t n = 1;
  for (int i = 0; i < v->ndims; i++) {
    MPI_Offset len = 0;
    PNC(I, ncmpi_inq_dimlen)(ncid, dimids[i], &len);
    n *= len;
  }
  return n;
}

static ncf_maps maps;
static const ncf_family fam = {
    .maps = &maps,
    .f_module = IOCHAR_MOD_PNETCDF_FILE,
    .v_module = IOCHAR_MOD_PNETCDF_VAR,
    .f_layout = &f_layout,
    .v_layout = &v_layout,
    .format = PNETCDF_FILE_FORMAT,
    .open_ts = {PNETCDF_FILE_F_OPEN_START_TIMESTAMP, PNETCDF_FILE_F_OPEN_END_TIMESTAMP},
    .close_ts = {PNETCDF_FILE_F_CLOSE_START_TIMESTAMP, PNETCDF_FILE_F_CLOSE_END_TIMESTAMP},
    .ndims = PNETCDF_VAR_NDIMS,
    .type_size = PNETCDF_VAR_DATATYPE_SIZE,
    .is_record = PNETCDF_VAR_IS_RECORD_VAR,
    .strided = PNETCDF_VAR_STRIDED_ACCESSES,
    .file_key = file_key,
    .path = path_of,
    .format_of = format_of,
    .var_name = var_name,
    .settings = settings,
    .whole = whole,
};

/* ---- record steps PnetCDF has alone (called with iochar_in_tool set) ----- */

/* The mode counter of an access in mode (INDEP, COLL, NB), direction dir. */
static const int by_mode[3][2] = {{PNETCDF_VAR_INDEP_GETS, PNETCDF_VAR_INDEP_PUTS},
                                  {PNETCDF_VAR_COLL_GETS, PNETCDF_VAR_COLL_PUTS},
                                  {PNETCDF_VAR_NB_GETS, PNETCDF_VAR_NB_PUTS}};

/* Waits complete nonblocking I/O: their time is wait time, not meta time. */
static void record_wait(iochar_dlinst *I, int ncid, int idx, double t0, double t1) {
  ncf_file *fs = ncf_file_track(&fam, I, ncid, NULL);
  if (!fs) return;
  iochar_record *r = fs->rec;
  iochar_spin_lock(&r->lock);
  r->c[idx]++;
  iochar_rec_f(r, &f_layout)[PNETCDF_FILE_F_WAIT_TIME] += t1 - t0;
  iochar_spin_unlock(&r->lock);
}

/* vard: the file layout is an MPI datatype (in bytes, from the variable's
 * start): its size is what the call moves; MPI_DATATYPE_NULL moves none. */
static void record_vard(iochar_dlinst *I, int ncid, int varid, int dir, int mode,
                        mpi_handle filetype, int ret, double t0, double t1) {
  ncf_var *v = ncf_var_track(&fam, I, ncid, varid);
  if (!v) return;
  int size = 0;
  if (ret == NC_NOERR && PNC(I, MPI_Type_size)(filetype, &size) != 0) size = 0;
  ncf_access(&fam, v, dir, ret == NC_NOERR ? size : -1, 0, by_mode[mode][dir], t0, t1);
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
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, PNETCDF_FILE_CREATES, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_open(mpi_handle comm, const char *path, int omode, mpi_handle info, int *ncidp) {
  iochar_dlcall c;
  __typeof__(&ncmpi_open) real = pnc_begin(&c, FN_ncmpi_open, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(comm, path, omode, info, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, PNETCDF_FILE_OPENS, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_close(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_close) real = pnc_begin(&c, FN_ncmpi_close, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(ncf_record_close(&fam, c.I, ncid, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_enddef(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_enddef) real = pnc_begin(&c, FN_ncmpi_enddef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, -1, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi__enddef(int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
                          MPI_Offset r_align) {
  iochar_dlcall c;
  __typeof__(&ncmpi__enddef) real = pnc_begin(&c, FN_ncmpi__enddef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, h_minfree, v_align, v_minfree, r_align);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, -1, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_redef(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_redef) real = pnc_begin(&c, FN_ncmpi_redef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, PNETCDF_FILE_REDEFS, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_sync(int ncid) {
  iochar_dlcall c;
  __typeof__(&ncmpi_sync) real = pnc_begin(&c, FN_ncmpi_sync, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, PNETCDF_FILE_SYNCS, c.t0, c.t1));
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
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_def(&fam, c.I, ncid, varidp, ret, 0, c.t0, c.t1));
  return ret;
}

/* ---- vard: the file layout as an MPI datatype ----------------------------
 * The real function is called through one type for the four, whose buffer
 * is const void * (the gets take void *): a type that differs only in the
 * buffer's pointee type, passed the same way on the System V ABIs the tool
 * builds for (see the data calls below). */
typedef int pnc_vard_fn(int ncid, int varid, mpi_handle filetype, const void *buf,
                        MPI_Offset bufcount, mpi_handle buftype);
static int pnc_vard(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                    mpi_handle filetype, const void *buf, MPI_Offset bufcount, mpi_handle buftype) {
  iochar_dlcall c;
  pnc_vard_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, filetype, buf, bufcount, buftype);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_vard(c.I, ncid, varid, dir, mode, filetype, ret, c.t0, c.t1));
  return ret;
}
PNC_API int ncmpi_put_vard(int ncid, int varid, mpi_handle filetype, const void *buf,
                           MPI_Offset bufcount, mpi_handle buftype) {
  return pnc_vard(FN_ncmpi_put_vard, __builtin_return_address(0), 1, INDEP, ncid, varid, filetype,
                  buf, bufcount, buftype);
}
PNC_API int ncmpi_put_vard_all(int ncid, int varid, mpi_handle filetype, const void *buf,
                               MPI_Offset bufcount, mpi_handle buftype) {
  return pnc_vard(FN_ncmpi_put_vard_all, __builtin_return_address(0), 1, COLL, ncid, varid,
                  filetype, buf, bufcount, buftype);
}
PNC_API int ncmpi_get_vard(int ncid, int varid, mpi_handle filetype, void *buf, MPI_Offset bufcount,
                           mpi_handle buftype) {
  return pnc_vard(FN_ncmpi_get_vard, __builtin_return_address(0), 0, INDEP, ncid, varid, filetype,
                  buf, bufcount, buftype);
}
PNC_API int ncmpi_get_vard_all(int ncid, int varid, mpi_handle filetype, void *buf,
                               MPI_Offset bufcount, mpi_handle buftype) {
  return pnc_vard(FN_ncmpi_get_vard_all, __builtin_return_address(0), 0, COLL, ncid, varid,
                  filetype, buf, bufcount, buftype);
}

/* ---- data calls: one body per access form and call shape -----------------
 *
 * Shapes: typed (buffer only) or flexible (bufcount, buftype after it),
 * blocking or nonblocking (a request at the end): pnc_<form>_<shape>.  Each
 * exported name (ncmpi_put_vara_int_all, ncmpi_iget_vars_double,
 * ncmpi_bput_varn...) forwards to its body with its FN_ index, its caller's
 * return address, direction (1 put), mode (INDEP, COLL, NB) and arguments.
 * The body calls the real function through the shape's type, whose buffer
 * is const void *: the real ncmpi_put_vara_int takes const int *,
 * ncmpi_get_vara_int int *.  That differs from the true type only in the
 * buffer's pointee type; on the System V ABIs the tool builds for, every data
 * pointer travels the same way (one integer register or stack slot), so the
 * real function receives exactly the caller's arguments. */

/* After the real call: stop the clock and record the access of form a. */
static inline void pnc_done(iochar_dlcall *c, int ncid, int varid, int dir, int mode,
                            const ncf_form *a, int ret) {
  if (iochar_dlcall_end(c))
    IOCHAR_RECORD(
        ncf_record_rw(&fam, c->I, ncid, varid, dir, by_mode[mode][dir], a, ret, c->t0, c->t1));
}

typedef int pnc_var_typed_bl_fn(int ncid, int varid, const void *buf);
static int pnc_var_typed_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const void *buf) {
  iochar_dlcall c;
  pnc_var_typed_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, buf);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_WHOLE}, ret);
  return ret;
}
typedef int pnc_var_typed_nb_fn(int ncid, int varid, const void *buf, int *req);
static int pnc_var_typed_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const void *buf, int *req) {
  iochar_dlcall c;
  pnc_var_typed_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, buf, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_WHOLE}, ret);
  return ret;
}
typedef int pnc_var_flex_bl_fn(int ncid, int varid, const void *buf, MPI_Offset bufcount,
                               mpi_handle buftype);
static int pnc_var_flex_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                           const void *buf, MPI_Offset bufcount, mpi_handle buftype) {
  iochar_dlcall c;
  pnc_var_flex_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, buf, bufcount, buftype);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_WHOLE}, ret);
  return ret;
}
typedef int pnc_var_flex_nb_fn(int ncid, int varid, const void *buf, MPI_Offset bufcount,
                               mpi_handle buftype, int *req);
static int pnc_var_flex_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                           const void *buf, MPI_Offset bufcount, mpi_handle buftype, int *req) {
  iochar_dlcall c;
  pnc_var_flex_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, buf, bufcount, buftype, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_WHOLE}, ret);
  return ret;
}

typedef int pnc_var1_typed_bl_fn(int ncid, int varid, const MPI_Offset *start, const void *buf);
static int pnc_var1_typed_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const void *buf) {
  iochar_dlcall c;
  pnc_var1_typed_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, buf);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_ONE}, ret);
  return ret;
}
typedef int pnc_var1_typed_nb_fn(int ncid, int varid, const MPI_Offset *start, const void *buf,
                                 int *req);
static int pnc_var1_typed_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const void *buf, int *req) {
  iochar_dlcall c;
  pnc_var1_typed_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, buf, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_ONE}, ret);
  return ret;
}
typedef int pnc_var1_flex_bl_fn(int ncid, int varid, const MPI_Offset *start, const void *buf,
                                MPI_Offset bufcount, mpi_handle buftype);
static int pnc_var1_flex_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const void *buf, MPI_Offset bufcount,
                            mpi_handle buftype) {
  iochar_dlcall c;
  pnc_var1_flex_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, buf, bufcount, buftype);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_ONE}, ret);
  return ret;
}
typedef int pnc_var1_flex_nb_fn(int ncid, int varid, const MPI_Offset *start, const void *buf,
                                MPI_Offset bufcount, mpi_handle buftype, int *req);
static int pnc_var1_flex_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const void *buf, MPI_Offset bufcount,
                            mpi_handle buftype, int *req) {
  iochar_dlcall c;
  pnc_var1_flex_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, buf, bufcount, buftype, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_ONE}, ret);
  return ret;
}

typedef int pnc_vara_typed_bl_fn(int ncid, int varid, const MPI_Offset *start,
                                 const MPI_Offset *count, const void *buf);
static int pnc_vara_typed_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const MPI_Offset *count, const void *buf) {
  iochar_dlcall c;
  pnc_vara_typed_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, buf);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOX, .count = count}, ret);
  return ret;
}
typedef int pnc_vara_typed_nb_fn(int ncid, int varid, const MPI_Offset *start,
                                 const MPI_Offset *count, const void *buf, int *req);
static int pnc_vara_typed_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                             int *req) {
  iochar_dlcall c;
  pnc_vara_typed_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, buf, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOX, .count = count}, ret);
  return ret;
}
typedef int pnc_vara_flex_bl_fn(int ncid, int varid, const MPI_Offset *start,
                                const MPI_Offset *count, const void *buf, MPI_Offset bufcount,
                                mpi_handle buftype);
static int pnc_vara_flex_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                            MPI_Offset bufcount, mpi_handle buftype) {
  iochar_dlcall c;
  pnc_vara_flex_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, buf, bufcount, buftype);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOX, .count = count}, ret);
  return ret;
}
typedef int pnc_vara_flex_nb_fn(int ncid, int varid, const MPI_Offset *start,
                                const MPI_Offset *count, const void *buf, MPI_Offset bufcount,
                                mpi_handle buftype, int *req);
static int pnc_vara_flex_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                            MPI_Offset bufcount, mpi_handle buftype, int *req) {
  iochar_dlcall c;
  pnc_vara_flex_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, buf, bufcount, buftype, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOX, .count = count}, ret);
  return ret;
}

typedef int pnc_vars_typed_bl_fn(int ncid, int varid, const MPI_Offset *start,
                                 const MPI_Offset *count, const MPI_Offset *stride,
                                 const void *buf);
static int pnc_vars_typed_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const MPI_Offset *count,
                             const MPI_Offset *stride, const void *buf) {
  iochar_dlcall c;
  pnc_vars_typed_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, buf);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}
typedef int pnc_vars_typed_nb_fn(int ncid, int varid, const MPI_Offset *start,
                                 const MPI_Offset *count, const MPI_Offset *stride, const void *buf,
                                 int *req);
static int pnc_vars_typed_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const MPI_Offset *count,
                             const MPI_Offset *stride, const void *buf, int *req) {
  iochar_dlcall c;
  pnc_vars_typed_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, buf, req);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}
typedef int pnc_vars_flex_bl_fn(int ncid, int varid, const MPI_Offset *start,
                                const MPI_Offset *count, const MPI_Offset *stride, const void *buf,
                                MPI_Offset bufcount, mpi_handle buftype);
static int pnc_vars_flex_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count,
                            const MPI_Offset *stride, const void *buf, MPI_Offset bufcount,
                            mpi_handle buftype) {
  iochar_dlcall c;
  pnc_vars_flex_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, buf, bufcount, buftype);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}
typedef int pnc_vars_flex_nb_fn(int ncid, int varid, const MPI_Offset *start,
                                const MPI_Offset *count, const MPI_Offset *stride, const void *buf,
                                MPI_Offset bufcount, mpi_handle buftype, int *req);
static int pnc_vars_flex_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count,
                            const MPI_Offset *stride, const void *buf, MPI_Offset bufcount,
                            mpi_handle buftype, int *req) {
  iochar_dlcall c;
  pnc_vars_flex_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, buf, bufcount, buftype, req);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}

/* varm: imap only rearranges the memory side; the file side is vars's. */
typedef int pnc_varm_typed_bl_fn(int ncid, int varid, const MPI_Offset *start,
                                 const MPI_Offset *count, const MPI_Offset *stride,
                                 const MPI_Offset *imap, const void *buf);
static int pnc_varm_typed_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const MPI_Offset *count,
                             const MPI_Offset *stride, const MPI_Offset *imap, const void *buf) {
  iochar_dlcall c;
  pnc_varm_typed_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, imap, buf);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}
typedef int pnc_varm_typed_nb_fn(int ncid, int varid, const MPI_Offset *start,
                                 const MPI_Offset *count, const MPI_Offset *stride,
                                 const MPI_Offset *imap, const void *buf, int *req);
static int pnc_varm_typed_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             const MPI_Offset *start, const MPI_Offset *count,
                             const MPI_Offset *stride, const MPI_Offset *imap, const void *buf,
                             int *req) {
  iochar_dlcall c;
  pnc_varm_typed_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, imap, buf, req);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}
typedef int pnc_varm_flex_bl_fn(int ncid, int varid, const MPI_Offset *start,
                                const MPI_Offset *count, const MPI_Offset *stride,
                                const MPI_Offset *imap, const void *buf, MPI_Offset bufcount,
                                mpi_handle buftype);
static int pnc_varm_flex_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count,
                            const MPI_Offset *stride, const MPI_Offset *imap, const void *buf,
                            MPI_Offset bufcount, mpi_handle buftype) {
  iochar_dlcall c;
  pnc_varm_flex_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, imap, buf, bufcount, buftype);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}
typedef int pnc_varm_flex_nb_fn(int ncid, int varid, const MPI_Offset *start,
                                const MPI_Offset *count, const MPI_Offset *stride,
                                const MPI_Offset *imap, const void *buf, MPI_Offset bufcount,
                                mpi_handle buftype, int *req);
static int pnc_varm_flex_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count,
                            const MPI_Offset *stride, const MPI_Offset *imap, const void *buf,
                            MPI_Offset bufcount, mpi_handle buftype, int *req) {
  iochar_dlcall c;
  pnc_varm_flex_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, imap, buf, bufcount, buftype, req);
  pnc_done(&c, ncid, varid, dir, mode,
           &(ncf_form){.kind = NCF_BOX, .count = count, .stride = stride}, ret);
  return ret;
}

/* varn: num boxes, one access of their total. */
typedef int pnc_varn_typed_bl_fn(int ncid, int varid, int num, MPI_Offset *const *starts,
                                 MPI_Offset *const *counts, const void *buf);
static int pnc_varn_typed_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             int num, MPI_Offset *const *starts, MPI_Offset *const *counts,
                             const void *buf) {
  iochar_dlcall c;
  pnc_varn_typed_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, num, starts, counts, buf);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOXES, .num = num, .counts = counts},
           ret);
  return ret;
}
typedef int pnc_varn_typed_nb_fn(int ncid, int varid, int num, MPI_Offset *const *starts,
                                 MPI_Offset *const *counts, const void *buf, int *req);
static int pnc_varn_typed_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid,
                             int num, MPI_Offset *const *starts, MPI_Offset *const *counts,
                             const void *buf, int *req) {
  iochar_dlcall c;
  pnc_varn_typed_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, num, starts, counts, buf, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOXES, .num = num, .counts = counts},
           ret);
  return ret;
}
typedef int pnc_varn_flex_bl_fn(int ncid, int varid, int num, MPI_Offset *const *starts,
                                MPI_Offset *const *counts, const void *buf, MPI_Offset bufcount,
                                mpi_handle buftype);
static int pnc_varn_flex_bl(int fi, const void *ra, int dir, int mode, int ncid, int varid, int num,
                            MPI_Offset *const *starts, MPI_Offset *const *counts, const void *buf,
                            MPI_Offset bufcount, mpi_handle buftype) {
  iochar_dlcall c;
  pnc_varn_flex_bl_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, num, starts, counts, buf, bufcount, buftype);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOXES, .num = num, .counts = counts},
           ret);
  return ret;
}
typedef int pnc_varn_flex_nb_fn(int ncid, int varid, int num, MPI_Offset *const *starts,
                                MPI_Offset *const *counts, const void *buf, MPI_Offset bufcount,
                                mpi_handle buftype, int *req);
static int pnc_varn_flex_nb(int fi, const void *ra, int dir, int mode, int ncid, int varid, int num,
                            MPI_Offset *const *starts, MPI_Offset *const *counts, const void *buf,
                            MPI_Offset bufcount, mpi_handle buftype, int *req) {
  iochar_dlcall c;
  pnc_varn_flex_nb_fn *real = pnc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, num, starts, counts, buf, bufcount, buftype, req);
  pnc_done(&c, ncid, varid, dir, mode, &(ncf_form){.kind = NCF_BOXES, .num = num, .counts = counts},
           ret);
  return ret;
}

/* The exported names: each one forwarding call (see above). */
#define PNC_FWD(name, f, BT, tag, nb, dir, mode)                                                  \
  PNC_API int name(int ncid, int varid, PNCP_##f BT *buf PNC_TAILP_##tag PNC_REQP_##nb) {         \
    return pnc_##f##_##tag##_##nb(FN_##name, __builtin_return_address(0), dir, mode, ncid, varid, \
                                  PNCA_##f buf PNC_TAILA_##tag PNC_REQA_##nb);                    \
  }
PNC_DATA(PNC_FWD)
