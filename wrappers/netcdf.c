/* NetCDF interception (netCDF-C API): files (NC_FILE) and variables (NC_VAR),
 * resolved at run time; the typed put/get families come from one table. */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/access.h"
#include "../runtime/interpose.h"
#include "dynlib.h"
#include "ncfamily.h"
#include "netcdf_counters.h"

static const iochar_counter_def f_ints[] = {NC_FILE_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def f_flts[] = {NC_FILE_F_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def v_ints[] = {NC_VAR_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def v_flts[] = {NC_VAR_F_COUNTERS(IOCHAR_DEF_ENTRY)};

static iochar_rw_layout f_layout, v_layout; /* from the counter lists (runtime/layout.c) */
IOCHAR_LAYOUTS {
  IOCHAR_LAYOUT_INIT(&f_layout, NC_FILE, f_ints, f_flts, NULL, NULL);
  IOCHAR_LAYOUT_INIT(&v_layout, NC_VAR, v_ints, v_flts, "GETS", "PUTS");
}

const iochar_module iochar_mod_nc_file =
    IOCHAR_MODULE_DEF(NC_FILE, f_ints, f_flts, iochar_rw_state, &f_layout);
const iochar_module iochar_mod_nc_var =
    IOCHAR_MODULE_DEF(NC_VAR, v_ints, v_flts, iochar_rw_state, &v_layout);

/* ---- the netCDF-C API we use, as in netcdf.h ------------------------------ */
typedef int nc_type;
typedef void *mpi_handle; /* MPI_Comm/MPI_Info: int (MPICH) or pointer (Open MPI);
                             either travels unchanged in one integer register */
#define NC_NOERR 0
#define NC_ENOTBUILT (-128)
#define NC_CHUNKED 0
#define NC_MAX_NAME 256
#define NC_MAX_VAR_DIMS 1024
#define NC_GROUP_MASK 0xFFFF

int nc_create(const char *path, int cmode, int *ncidp);
int nc__create(const char *path, int cmode, size_t initialsz, size_t *chunksizehintp, int *ncidp);
int nc_create_par(const char *path, int cmode, mpi_handle comm, mpi_handle info, int *ncidp);
int nc_open(const char *path, int mode, int *ncidp);
int nc__open(const char *path, int mode, size_t *chunksizehintp, int *ncidp);
int nc_open_par(const char *path, int mode, mpi_handle comm, mpi_handle info, int *ncidp);
int nc_redef(int ncid);
int nc_enddef(int ncid);
int nc__enddef(int ncid, size_t h_minfree, size_t v_align, size_t v_minfree, size_t r_align);
int nc_sync(int ncid);
int nc_close(int ncid);
int nc_abort(int ncid);
int nc_def_var(int ncid, const char *name, nc_type xtype, int ndims, const int *dimidsp,
               int *varidp);
int nc_def_var_chunking(int ncid, int varid, int storage, const size_t *chunksizesp);
int nc_def_var_deflate(int ncid, int varid, int shuffle, int deflate, int level);
/* helpers */
int nc_inq_path(int ncid, size_t *pathlen, char *path);
int nc_inq_format(int ncid, int *formatp);
int nc_inq_varname(int ncid, int varid, char *name);
int nc_inq_vartype(int ncid, int varid, nc_type *xtypep);
int nc_inq_varndims(int ncid, int varid, int *ndimsp);
int nc_inq_vardimid(int ncid, int varid, int *dimidsp);
int nc_inq_unlimdims(int ncid, int *nunlimdimsp, int *unlimdimidsp);
int nc_inq_dimlen(int ncid, int dimid, size_t *lenp);
int nc_inq_type(int ncid, nc_type xtype, char *name, size_t *size);
int nc_inq_var_chunking(int ncid, int varid, int *storagep, size_t *chunksizesp);
int nc_inq_var_deflate(int ncid, int varid, int *shufflep, int *deflatep, int *levelp);
int nc_inq_grpname_full(int ncid, size_t *lenp, char *full_name);

/* Parameters between (ncid, varid) and the buffer, per access form, and the
 * arguments they forward. */
#define NCP_var
#define NCP_var1 const size_t *start,
#define NCP_vara const size_t *start, const size_t *count,
#define NCP_vars const size_t *start, const size_t *count, const ptrdiff_t *stride,
#define NCP_varm \
  const size_t *start, const size_t *count, const ptrdiff_t *stride, const ptrdiff_t *imap,
#define NCA_var
#define NCA_var1 start,
#define NCA_vara start, count,
#define NCA_vars start, count, stride,
#define NCA_varm start, count, stride, imap,
/* The record steps read count and stride as 64-bit integers (ncfamily.h). */
_Static_assert(sizeof(size_t) == 8 && sizeof(ptrdiff_t) == 8, "64-bit index arrays");

/* THE table of data calls: every form x every element type, put and get.
 * M(form, put name, get name, element type); void is the untyped form. */
#define NC_TYPED(M, f)                                                     \
  M(f, nc_put_##f##_text, nc_get_##f##_text, char)                         \
  M(f, nc_put_##f##_schar, nc_get_##f##_schar, signed char)                \
  M(f, nc_put_##f##_uchar, nc_get_##f##_uchar, unsigned char)              \
  M(f, nc_put_##f##_ubyte, nc_get_##f##_ubyte, unsigned char)              \
  M(f, nc_put_##f##_short, nc_get_##f##_short, short)                      \
  M(f, nc_put_##f##_ushort, nc_get_##f##_ushort, unsigned short)           \
  M(f, nc_put_##f##_int, nc_get_##f##_int, int)                            \
  M(f, nc_put_##f##_uint, nc_get_##f##_uint, unsigned int)                 \
  M(f, nc_put_##f##_long, nc_get_##f##_long, long)                         \
  M(f, nc_put_##f##_float, nc_get_##f##_float, float)                      \
  M(f, nc_put_##f##_double, nc_get_##f##_double, double)                   \
  M(f, nc_put_##f##_longlong, nc_get_##f##_longlong, long long)            \
  M(f, nc_put_##f##_ulonglong, nc_get_##f##_ulonglong, unsigned long long) \
  M(f, nc_put_##f##_string, nc_get_##f##_string, char *)                   \
  M(f, nc_put_##f, nc_get_##f, void)
#define NC_DATA(M) \
  NC_TYPED(M, var) NC_TYPED(M, var1) NC_TYPED(M, vara) NC_TYPED(M, vars) NC_TYPED(M, varm)

#define NC_DATA_PROTO(f, put, get, T)                 \
  int put(int ncid, int varid, NCP_##f const T *buf); \
  int get(int ncid, int varid, NCP_##f T *buf);
NC_DATA(NC_DATA_PROTO)

// clang-format off
#define NC_FUNCS(X)                                                            \
  X(nc_create) X(nc__create) X(nc_create_par) X(nc_open) X(nc__open)           \
  X(nc_open_par) X(nc_redef) X(nc_enddef) X(nc__enddef) X(nc_sync) X(nc_close) \
  X(nc_abort) X(nc_def_var) X(nc_def_var_chunking) X(nc_def_var_deflate)       \
  X(nc_inq_path) X(nc_inq_format) X(nc_inq_varname) X(nc_inq_vartype)          \
  X(nc_inq_varndims) X(nc_inq_vardimid) X(nc_inq_unlimdims) X(nc_inq_dimlen)   \
  X(nc_inq_type) X(nc_inq_var_chunking) X(nc_inq_var_deflate)                  \
  X(nc_inq_grpname_full)
// clang-format on
#define NC_DATA_ENUM(f, put, get, T) FN_##put, FN_##get,
#define NC_DATA_NAME(f, put, get, T) #put, #get,

enum { NC_FUNCS(IOCHAR_DL_ENUM) NC_DATA(NC_DATA_ENUM) NC_NFUNCS };
static const char *const nc_names[] = {NC_FUNCS(IOCHAR_DL_NAME) NC_DATA(NC_DATA_NAME)};
static iochar_dlset ncl = {.what = "NetCDF", .names = nc_names, .n = NC_NFUNCS};

#define NC(I, name) ((__typeof__(&name))iochar_dl_fn(&ncl, I, FN_##name))

/* Nesting depth of wrapped netCDF calls on this thread (typed calls built on
 * untyped ones are counted once). */
static __thread int nc_depth __attribute__((tls_model("initial-exec")));

/* ---- what the shared steps ask netCDF (wrappers/ncfamily.c) -------------- */

static uint64_t file_key(iochar_dlinst *I, int ncid) {
  return iochar_dl_key(I, (uint32_t)(ncid & ~NC_GROUP_MASK));
}

static int path_of(iochar_dlinst *I, int ncid, char *buf, size_t size) {
  size_t n = 0;
  return NC(I, nc_inq_path)(ncid, &n, NULL) || n >= size || NC(I, nc_inq_path)(ncid, NULL, buf);
}

static int format_of(iochar_dlinst *I, int ncid) {
  int fmt = 0;
  return NC(I, nc_inq_format)(ncid, &fmt) == NC_NOERR ? fmt : 0;
}

/* <file>:<variable>, or <file>:/<group path>/<variable> in a group. */
static int var_name(iochar_dlinst *I, int ncid, int varid, const char *file, char *buf,
                    size_t size) {
  char vn[NC_MAX_NAME + 1], grp[1024] = "";
  if (NC(I, nc_inq_varname)(ncid, varid, vn)) return -1;
  size_t gl = 0;
  if ((ncid & NC_GROUP_MASK) && NC(I, nc_inq_grpname_full) &&
      NC(I, nc_inq_grpname_full)(ncid, &gl, NULL) == NC_NOERR && gl < sizeof grp - 1 &&
      NC(I, nc_inq_grpname_full)(ncid, NULL, grp) == NC_NOERR)
    strcat(grp, "/");
  snprintf(buf, size, "%s:%s%s", file, grp, vn);
  return 0;
}

/* Shape, type and record-ness; chunking and deflate into the record. */
static void settings(iochar_dlinst *I, int ncid, int varid, ncf_var *v) {
  int64_t s[NC_VAR_NUM_INDICES] = {0};
  int ndims = 0, dimids[NC_MAX_VAR_DIMS], unlim[NC_MAX_VAR_DIMS], nunlim = 0, isrec = 0;
  nc_type xt = 0;
  size_t tsize = 0, chunks[NC_MAX_VAR_DIMS];
  if (NC(I, nc_inq_varndims)(ncid, varid, &ndims) || ndims > NC_MAX_VAR_DIMS) ndims = 0;
  if (NC(I, nc_inq_vartype)(ncid, varid, &xt) == NC_NOERR)
    NC(I, nc_inq_type)(ncid, xt, NULL, &tsize);
  if (ndims && NC(I, nc_inq_vardimid)(ncid, varid, dimids) == NC_NOERR &&
      NC(I, nc_inq_unlimdims)(ncid, &nunlim, NULL) == NC_NOERR && nunlim > 0 &&
      nunlim <= NC_MAX_VAR_DIMS && NC(I, nc_inq_unlimdims)(ncid, &nunlim, unlim) == NC_NOERR)
    for (int i = 0; i < ndims; i++)
      for (int k = 0; k < nunlim; k++) isrec |= dimids[i] == unlim[k];
  int storage = -1, shuffle = 0, deflate = 0, level = 0;
  if (ndims && NC(I, nc_inq_var_chunking)(ncid, varid, &storage, chunks) == NC_NOERR &&
      storage == NC_CHUNKED)
    for (int i = 0; i < 5 && i < ndims; i++) s[NC_VAR_CHUNK_SIZE_D1 + i] = (int64_t)chunks[i];
  if (NC(I, nc_inq_var_deflate)(ncid, varid, &shuffle, &deflate, &level) == NC_NOERR && deflate)
    s[NC_VAR_DEFLATE_LEVEL] = level;
  v->ndims = ndims;
  v->type_size = (int64_t)tsize;
  v->is_record = isrec;
  iochar_record *r = v->rec;
  iochar_spin_lock(&r->lock);
  for (int i = NC_VAR_CHUNK_SIZE_D1; i <= NC_VAR_DEFLATE_LEVEL; i++) r->c[i] = s[i];
  iochar_spin_unlock(&r->lock);
}

/* Elements of the whole variable: the product of its dimensions' lengths. */
static int64_t whole(iochar_dlinst *I, int ncid, int varid, const ncf_var *v) {
  int dimids[NC_MAX_VAR_DIMS];
  if (NC(I, nc_inq_vardimid)(ncid, varid, dimids)) return 0;
  int64_t n = 1;
  for (int i = 0; i < v->ndims; i++) {
    size_t len = 0;
    NC(I, nc_inq_dimlen)(ncid, dimids[i], &len);
    n *= (int64_t)len;
  }
  return n;
}

static ncf_maps maps;
static const ncf_family fam = {
    .maps = &maps,
    .f_module = IOCHAR_MOD_NC_FILE,
    .v_module = IOCHAR_MOD_NC_VAR,
    .f_layout = &f_layout,
    .v_layout = &v_layout,
    .format = NC_FILE_FORMAT,
    .open_ts = {NC_FILE_F_OPEN_START_TIMESTAMP, NC_FILE_F_OPEN_END_TIMESTAMP},
    .close_ts = {NC_FILE_F_CLOSE_START_TIMESTAMP, NC_FILE_F_CLOSE_END_TIMESTAMP},
    .ndims = NC_VAR_NDIMS,
    .type_size = NC_VAR_DATATYPE_SIZE,
    .is_record = NC_VAR_IS_RECORD_VAR,
    .strided = NC_VAR_STRIDED_ACCESSES,
    .file_key = file_key,
    .path = path_of,
    .format_of = format_of,
    .var_name = var_name,
    .settings = settings,
    .whole = whole,
};

/* ---- wrappers ------------------------------------------------------------ */

#define NC_API __attribute__((visibility("default")))

/* The caller's copy of the library and its real function (NULL: none);
 * the clock runs unless not recording or nested (iochar_dlcall_begin). */
static inline void *nc_begin(iochar_dlcall *c, int fi, const void *ra) {
  return iochar_dlcall_begin(c, &ncl, fi, ra, &nc_depth);
}

NC_API int nc_create(const char *path, int cmode, int *ncidp) {
  iochar_dlcall c;
  __typeof__(&nc_create) real = nc_begin(&c, FN_nc_create, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(path, cmode, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, NC_FILE_CREATES, c.t0, c.t1));
  return ret;
}
NC_API int nc__create(const char *path, int cmode, size_t initialsz, size_t *hint, int *ncidp) {
  iochar_dlcall c;
  __typeof__(&nc__create) real = nc_begin(&c, FN_nc__create, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(path, cmode, initialsz, hint, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, NC_FILE_CREATES, c.t0, c.t1));
  return ret;
}
NC_API int nc_create_par(const char *path, int cmode, mpi_handle comm, mpi_handle info,
                         int *ncidp) {
  iochar_dlcall c;
  __typeof__(&nc_create_par) real = nc_begin(&c, FN_nc_create_par, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(path, cmode, comm, info, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, NC_FILE_CREATES, c.t0, c.t1));
  return ret;
}
NC_API int nc_open(const char *path, int mode, int *ncidp) {
  iochar_dlcall c;
  __typeof__(&nc_open) real = nc_begin(&c, FN_nc_open, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(path, mode, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, NC_FILE_OPENS, c.t0, c.t1));
  return ret;
}
NC_API int nc__open(const char *path, int mode, size_t *hint, int *ncidp) {
  iochar_dlcall c;
  __typeof__(&nc__open) real = nc_begin(&c, FN_nc__open, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(path, mode, hint, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, NC_FILE_OPENS, c.t0, c.t1));
  return ret;
}
NC_API int nc_open_par(const char *path, int mode, mpi_handle comm, mpi_handle info, int *ncidp) {
  iochar_dlcall c;
  __typeof__(&nc_open_par) real = nc_begin(&c, FN_nc_open_par, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(path, mode, comm, info, ncidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_open(&fam, c.I, ret, path, ncidp, NC_FILE_OPENS, c.t0, c.t1));
  return ret;
}
NC_API int nc_redef(int ncid) {
  iochar_dlcall c;
  __typeof__(&nc_redef) real = nc_begin(&c, FN_nc_redef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, NC_FILE_REDEFS, c.t0, c.t1));
  return ret;
}
NC_API int nc_enddef(int ncid) {
  iochar_dlcall c;
  __typeof__(&nc_enddef) real = nc_begin(&c, FN_nc_enddef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, -1, c.t0, c.t1));
  return ret;
}
NC_API int nc__enddef(int ncid, size_t h_minfree, size_t v_align, size_t v_minfree,
                      size_t r_align) {
  iochar_dlcall c;
  __typeof__(&nc__enddef) real = nc_begin(&c, FN_nc__enddef, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, h_minfree, v_align, v_minfree, r_align);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, -1, c.t0, c.t1));
  return ret;
}
NC_API int nc_sync(int ncid) {
  iochar_dlcall c;
  __typeof__(&nc_sync) real = nc_begin(&c, FN_nc_sync, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_file_meta(&fam, c.I, ncid, ret, NC_FILE_SYNCS, c.t0, c.t1));
  return ret;
}
NC_API int nc_close(int ncid) {
  iochar_dlcall c;
  __typeof__(&nc_close) real = nc_begin(&c, FN_nc_close, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(ncf_record_close(&fam, c.I, ncid, c.t0, c.t1));
  return ret;
}
NC_API int nc_abort(int ncid) {
  iochar_dlcall c;
  __typeof__(&nc_abort) real = nc_begin(&c, FN_nc_abort, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(ncf_record_close(&fam, c.I, ncid, c.t0, c.t1));
  return ret;
}
NC_API int nc_def_var(int ncid, const char *name, nc_type xtype, int ndims, const int *dimidsp,
                      int *varidp) {
  iochar_dlcall c;
  __typeof__(&nc_def_var) real = nc_begin(&c, FN_nc_def_var, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, name, xtype, ndims, dimidsp, varidp);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_def(&fam, c.I, ncid, varidp, ret, 0, c.t0, c.t1));
  return ret;
}
NC_API int nc_def_var_chunking(int ncid, int varid, int storage, const size_t *chunks) {
  iochar_dlcall c;
  __typeof__(&nc_def_var_chunking) real =
      nc_begin(&c, FN_nc_def_var_chunking, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, storage, chunks);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_def(&fam, c.I, ncid, &varid, ret, 1, c.t0, c.t1));
  return ret;
}
NC_API int nc_def_var_deflate(int ncid, int varid, int shuffle, int deflate, int level) {
  iochar_dlcall c;
  __typeof__(&nc_def_var_deflate) real =
      nc_begin(&c, FN_nc_def_var_deflate, __builtin_return_address(0));
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, shuffle, deflate, level);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(ncf_record_def(&fam, c.I, ncid, &varid, ret, 1, c.t0, c.t1));
  return ret;
}

/* ---- data calls: one body per access form, put (dir 1) and get (dir 0) ----
 *
 * Each typed name (nc_put_vara_int, nc_get_vara_double, the untyped
 * nc_put_vara...) forwards to its form's body with its FN_ index, its
 * caller's return address and its arguments.  The body calls the real
 * function through the form's type, whose buffer is const void *: the real
 * nc_put_vara_int takes const int *, nc_get_vara_int int *.  That differs
 * from the true type only in the buffer's pointee type; on the System V ABIs
 * the tool builds for, every data pointer travels the same way (one integer
 * register or stack slot), so the real function receives exactly the
 * caller's arguments. */
typedef int nc_var_fn(int ncid, int varid, const void *buf);
typedef int nc_var1_fn(int ncid, int varid, const size_t *start, const void *buf);
typedef int nc_vara_fn(int ncid, int varid, const size_t *start, const size_t *count,
                       const void *buf);
typedef int nc_vars_fn(int ncid, int varid, const size_t *start, const size_t *count,
                       const ptrdiff_t *stride, const void *buf);
typedef int nc_varm_fn(int ncid, int varid, const size_t *start, const size_t *count,
                       const ptrdiff_t *stride, const ptrdiff_t *imap, const void *buf);

static int nc_rw_var(int fi, const void *ra, int dir, int ncid, int varid, const void *buf) {
  iochar_dlcall c;
  nc_var_fn *real = nc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, buf);
  if (iochar_dlcall_end(&c)) {
    ncf_form a = {.kind = NCF_WHOLE};
    IOCHAR_RECORD(ncf_record_rw(&fam, c.I, ncid, varid, dir, -1, &a, ret, c.t0, c.t1));
  }
  return ret;
}

static int nc_rw_var1(int fi, const void *ra, int dir, int ncid, int varid, const size_t *start,
                      const void *buf) {
  iochar_dlcall c;
  nc_var1_fn *real = nc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, buf);
  if (iochar_dlcall_end(&c)) {
    ncf_form a = {.kind = NCF_ONE};
    IOCHAR_RECORD(ncf_record_rw(&fam, c.I, ncid, varid, dir, -1, &a, ret, c.t0, c.t1));
  }
  return ret;
}

static int nc_rw_vara(int fi, const void *ra, int dir, int ncid, int varid, const size_t *start,
                      const size_t *count, const void *buf) {
  iochar_dlcall c;
  nc_vara_fn *real = nc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, buf);
  if (iochar_dlcall_end(&c)) {
    ncf_form a = {.kind = NCF_BOX, .count = count};
    IOCHAR_RECORD(ncf_record_rw(&fam, c.I, ncid, varid, dir, -1, &a, ret, c.t0, c.t1));
  }
  return ret;
}

static int nc_rw_vars(int fi, const void *ra, int dir, int ncid, int varid, const size_t *start,
                      const size_t *count, const ptrdiff_t *stride, const void *buf) {
  iochar_dlcall c;
  nc_vars_fn *real = nc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, buf);
  if (iochar_dlcall_end(&c)) {
    ncf_form a = {.kind = NCF_BOX, .count = count, .stride = stride};
    IOCHAR_RECORD(ncf_record_rw(&fam, c.I, ncid, varid, dir, -1, &a, ret, c.t0, c.t1));
  }
  return ret;
}

/* varm: imap only rearranges the memory side; the file side is vars's. */
static int nc_rw_varm(int fi, const void *ra, int dir, int ncid, int varid, const size_t *start,
                      const size_t *count, const ptrdiff_t *stride, const ptrdiff_t *imap,
                      const void *buf) {
  iochar_dlcall c;
  nc_varm_fn *real = nc_begin(&c, fi, ra);
  if (!real) return NC_ENOTBUILT;
  int ret = real(ncid, varid, start, count, stride, imap, buf);
  if (iochar_dlcall_end(&c)) {
    ncf_form a = {.kind = NCF_BOX, .count = count, .stride = stride};
    IOCHAR_RECORD(ncf_record_rw(&fam, c.I, ncid, varid, dir, -1, &a, ret, c.t0, c.t1));
  }
  return ret;
}

/* The exported typed names: each one forwarding call (see above). */
#define NC_DATA_FWD(f, put, get, T)                                                       \
  NC_API int put(int ncid, int varid, NCP_##f const T *buf) {                             \
    return nc_rw_##f(FN_##put, __builtin_return_address(0), 1, ncid, varid, NCA_##f buf); \
  }                                                                                       \
  NC_API int get(int ncid, int varid, NCP_##f T *buf) {                                   \
    return nc_rw_##f(FN_##get, __builtin_return_address(0), 0, ncid, varid, NCA_##f buf); \
  }
NC_DATA(NC_DATA_FWD)
