/* HDF5 interception: files (H5F) and datasets (H5D), resolved at run time. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../runtime/access.h"
#include "../runtime/interpose.h"
#include "dynlib.h"
#include "hdf5_counters.h"

static const iochar_counter_def f_ints[] = {H5F_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def f_flts[] = {H5F_F_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def d_ints[] = {H5D_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def d_flts[] = {H5D_F_COUNTERS(IOCHAR_DEF_ENTRY)};

static iochar_rw_layout f_layout, d_layout; /* from the counter lists (runtime/layout.c) */
IOCHAR_LAYOUTS {
  IOCHAR_LAYOUT_INIT(&f_layout, H5F, f_ints, f_flts, NULL, NULL);
  IOCHAR_LAYOUT_INIT(&d_layout, H5D, d_ints, d_flts, "READS", "WRITES");
}

const iochar_module iochar_mod_h5f =
    IOCHAR_MODULE_DEF(H5F, f_ints, f_flts, iochar_rw_state, &f_layout);
const iochar_module iochar_mod_h5d =
    IOCHAR_MODULE_DEF(H5D, d_ints, d_flts, iochar_rw_state, &d_layout);

/* ---- the HDF5 API we use, as in H5*public.h (same in 1.10, 1.14, 2.0) ---- */
typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;
typedef long long hssize_t;
#define H5P_DEFAULT 0
#define H5S_ALL 0
#define H5E_DEFAULT 0
#define H5I_DATASET 5
#define ASYNC_SRC const char *app_file, const char *app_func, unsigned app_line

hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl);
hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl);
herr_t H5Fclose(hid_t f);
herr_t H5Fflush(hid_t obj, int scope);
hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl,
                 hid_t dapl);
hid_t H5Dcreate_anon(hid_t loc, hid_t type, hid_t space, hid_t dcpl, hid_t dapl);
hid_t H5Dopen2(hid_t loc, const char *name, hid_t dapl);
/* The 1.6 API (H5_USE_16_API, IOR's HDF5 backend): same counters. */
hid_t H5Dcreate1(hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl);
hid_t H5Dopen1(hid_t loc, const char *name);
herr_t H5Dextend(hid_t d, const hsize_t size[]);
herr_t H5Dread(hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, void *buf);
herr_t H5Dwrite(hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, const void *buf);
herr_t H5Dflush(hid_t d);
herr_t H5Dclose(hid_t d);
herr_t H5Dset_extent(hid_t d, const hsize_t size[]);
/* direct chunk I/O (1.10.3+): the chunk as stored, past the filters; 2.0
 * renamed the read to H5Dread_chunk1 and added H5Dread_chunk2 */
herr_t H5Dwrite_chunk(hid_t d, hid_t dxpl, uint32_t filters, const hsize_t *offset, size_t size,
                      const void *buf);
herr_t H5Dread_chunk(hid_t d, hid_t dxpl, const hsize_t *offset, uint32_t *filters, void *buf);
herr_t H5Dread_chunk1(hid_t d, hid_t dxpl, const hsize_t *offset, uint32_t *filters, void *buf);
herr_t H5Dread_chunk2(hid_t d, hid_t dxpl, const hsize_t *offset, uint32_t *filters, void *buf,
                      size_t *buf_size);
hid_t H5Oopen(hid_t loc, const char *name, hid_t lapl);
herr_t H5Oclose(hid_t obj);
int H5Idec_ref(hid_t id);
/* 1.13+ only: the _async forms take the caller's file, function and line. */
hid_t H5Fcreate_async(ASYNC_SRC, const char *name, unsigned flags, hid_t fcpl, hid_t fapl,
                      hid_t es);
hid_t H5Fopen_async(ASYNC_SRC, const char *name, unsigned flags, hid_t fapl, hid_t es);
herr_t H5Fclose_async(ASYNC_SRC, hid_t f, hid_t es);
herr_t H5Fflush_async(ASYNC_SRC, hid_t obj, int scope, hid_t es);
hid_t H5Dcreate_async(ASYNC_SRC, hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl,
                      hid_t dcpl, hid_t dapl, hid_t es);
hid_t H5Dopen_async(ASYNC_SRC, hid_t loc, const char *name, hid_t dapl, hid_t es);
herr_t H5Dread_async(ASYNC_SRC, hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, void *buf,
                     hid_t es);
herr_t H5Dwrite_async(ASYNC_SRC, hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, const void *buf,
                      hid_t es);
herr_t H5Dclose_async(ASYNC_SRC, hid_t d, hid_t es);
/* helpers the tool calls on the application's handles */
ssize_t H5Iget_name(hid_t id, char *name, size_t size);
int H5Iget_type(hid_t id);
ssize_t H5Fget_name(hid_t obj, char *name, size_t size);
hid_t H5Fget_access_plist(hid_t f);
hid_t H5Pget_driver(hid_t fapl);
hid_t H5FD_mpio_init(void);
herr_t H5Pget_alignment(hid_t fapl, hsize_t *threshold, hsize_t *alignment);
herr_t H5Pget_all_coll_metadata_ops(hid_t p, unsigned char *on); /* hbool_t */
herr_t H5Pget_coll_metadata_write(hid_t p, unsigned char *on);
herr_t H5Pget_dxpl_mpio(hid_t dxpl, int *mode);
herr_t H5Pclose(hid_t p);
hid_t H5Dget_space(hid_t d);
hid_t H5Dget_type(hid_t d);
hid_t H5Dget_create_plist(hid_t d);
int H5Sget_simple_extent_ndims(hid_t s);
hssize_t H5Sget_simple_extent_npoints(hid_t s);
hssize_t H5Sget_select_npoints(hid_t s);
int H5Sget_select_type(hid_t s);
htri_t H5Sis_regular_hyperslab(hid_t s);
herr_t H5Sclose(hid_t s);
size_t H5Tget_size(hid_t t);
herr_t H5Tclose(hid_t t);
int H5Pget_layout(hid_t dcpl);
int H5Pget_chunk(hid_t dcpl, int max_ndims, hsize_t dims[]);
int H5Pget_nfilters(hid_t dcpl);
int H5Pget_filter2(hid_t dcpl, unsigned idx, unsigned *flags, size_t *cd_nelmts,
                   unsigned cd_values[], size_t namelen, char name[], unsigned *config);
herr_t H5Dget_chunk_storage_size(hid_t d, const hsize_t *offset, hsize_t *bytes);
herr_t H5Eget_auto2(hid_t stack, void **func, void **data);
herr_t H5Eset_auto2(hid_t stack, void *func, void *data);

// clang-format off
#define H5_FUNCS(X)                                                            \
  X(H5Fcreate) X(H5Fopen) X(H5Fclose) X(H5Fflush)                              \
  X(H5Dcreate2) X(H5Dcreate_anon) X(H5Dopen2) X(H5Dread) X(H5Dwrite)           \
  X(H5Dcreate1) X(H5Dopen1) X(H5Dextend)                                       \
  X(H5Dflush) X(H5Dclose) X(H5Dset_extent) X(H5Oopen) X(H5Oclose) X(H5Idec_ref) \
  X(H5Dwrite_chunk) X(H5Dread_chunk) X(H5Dread_chunk1) X(H5Dread_chunk2)       \
  X(H5Fcreate_async) X(H5Fopen_async) X(H5Fclose_async) X(H5Fflush_async)     \
  X(H5Dcreate_async) X(H5Dopen_async) X(H5Dread_async) X(H5Dwrite_async)      \
  X(H5Dclose_async)                                                            \
  X(H5Iget_name) X(H5Iget_type) X(H5Fget_name) X(H5Fget_access_plist)          \
  X(H5Pget_driver) X(H5FD_mpio_init) X(H5Pget_alignment)                       \
  X(H5Pget_all_coll_metadata_ops) X(H5Pget_coll_metadata_write)                \
  X(H5Pget_dxpl_mpio) X(H5Pclose) X(H5Dget_space) X(H5Dget_type)               \
  X(H5Dget_create_plist) X(H5Sget_simple_extent_ndims)                         \
  X(H5Sget_simple_extent_npoints) X(H5Sget_select_npoints)                     \
  X(H5Sget_select_type) X(H5Sis_regular_hyperslab) X(H5Sclose) X(H5Tget_size)  \
  X(H5Tclose) X(H5Pget_layout) X(H5Pget_chunk) X(H5Pget_nfilters)              \
  X(H5Pget_filter2) X(H5Eget_auto2) X(H5Eset_auto2) X(H5Dget_chunk_storage_size)
// clang-format on

enum { H5_FUNCS(IOCHAR_DL_ENUM) H5_NFUNCS };
static const char *const h5_names[] = {H5_FUNCS(IOCHAR_DL_NAME)};
static iochar_dlset h5 = {.what = "HDF5", .names = h5_names, .n = H5_NFUNCS};

/* Function `name` of copy I (NULL when that copy lacks it). */
#define H5(I, name) ((__typeof__(&name))iochar_dl_fn(&h5, I, FN_##name))

/* Nesting depth of wrapped HDF5 calls on this thread: an HDF5 call made from
 * inside another (H5Oopen of a dataset...) is not counted twice. */
static __thread int h5_depth __attribute__((tls_model("initial-exec")));

/* Handle state: which record an open hid_t belongs to (keys salted per copy). */
typedef struct h5f_handle {
  iochar_record *rec;
} h5f_handle;
typedef struct h5d_handle {
  iochar_record *rec;
  int64_t npoints; /* extent's elements; -1: ask again (after H5Dset_extent) */
} h5d_handle;
static iochar_hmap *files, *dsets;

static int maps_ready(void) {
  if (!files) files = iochar_hmap_create(1 << 12);
  if (!dsets) dsets = iochar_hmap_create(1 << 16);
  return files && dsets;
}

/* Helper calls on valid handles should not fail, but an HDF5 error stack
 * printed by the tool would change the application's output: silence it. */
typedef struct quiet {
  void *func, *data;
  int on;
} quiet;
static void quiet_begin(iochar_dlinst *I, quiet *q) {
  __typeof__(&H5Eget_auto2) get = H5(I, H5Eget_auto2);
  q->on = get && H5(I, H5Eset_auto2) && get(H5E_DEFAULT, &q->func, &q->data) >= 0;
  if (q->on) H5(I, H5Eset_auto2)(H5E_DEFAULT, NULL, NULL);
}
static void quiet_end(iochar_dlinst *I, quiet *q) {
  if (q->on) H5(I, H5Eset_auto2)(H5E_DEFAULT, q->func, q->data);
}

/* Absolute path of the file holding obj, or -1. */
static int obj_file_path(iochar_dlinst *I, hid_t obj, char *abs, size_t n) {
  char name[IOCHAR_PATH_MAX];
  __typeof__(&H5Fget_name) get = H5(I, H5Fget_name);
  ssize_t k = get ? get(obj, name, sizeof name) : -1;
  if (k <= 0 || (size_t)k >= sizeof name) return -1;
  if (iochar_path_resolve(AT_FDCWD, name, abs, n) || iochar_path_excluded(abs)) return -1;
  return 0;
}

/* ---- H5F record steps (called with iochar_in_tool set) ------------------- */

static void file_settings(iochar_dlinst *I, hid_t f, int64_t *set) {
  quiet q;
  quiet_begin(I, &q);
  hid_t fa = H5(I, H5Fget_access_plist) ? H5(I, H5Fget_access_plist)(f) : -1;
  if (fa >= 0) {
    hid_t drv = H5(I, H5Pget_driver) ? H5(I, H5Pget_driver)(fa) : -1;
    if (drv >= 0 && H5(I, H5FD_mpio_init)) set[0] = drv == H5(I, H5FD_mpio_init)();
    hsize_t thr = 0, al = 0;
    if (H5(I, H5Pget_alignment) && H5(I, H5Pget_alignment)(fa, &thr, &al) >= 0) {
      set[1] = (int64_t)al;
      set[2] = (int64_t)thr;
    }
    unsigned char on[8] = {0};
    if (H5(I, H5Pget_all_coll_metadata_ops) && H5(I, H5Pget_all_coll_metadata_ops)(fa, on) >= 0)
      set[3] = on[0] != 0;
    memset(on, 0, sizeof on);
    if (H5(I, H5Pget_coll_metadata_write) && H5(I, H5Pget_coll_metadata_write)(fa, on) >= 0)
      set[4] = on[0] != 0;
    H5(I, H5Pclose)(fa);
  }
  quiet_end(I, &q);
}

static void record_file_open(iochar_dlinst *I, hid_t f, const char *name, double t0, double t1) {
  char abs[IOCHAR_PATH_MAX];
  if (f < 0 || !maps_ready()) return;
  if (iochar_path_resolve(AT_FDCWD, name, abs, sizeof abs) || iochar_path_excluded(abs)) return;
  iochar_record *r = iochar_record_get(IOCHAR_MOD_H5F, abs);
  h5f_handle *h = r ? calloc(1, sizeof *h) : NULL;
  if (!h) return;
  h->rec = r;
  if (iochar_hmap_put(files, iochar_dl_key(I, (uint64_t)f), h)) free(h);
  int64_t set[5] = {0, 0, 0, 0, 0};
  file_settings(I, f, set);
  iochar_spin_lock(&r->lock);
  r->c[H5F_OPENS]++;
  r->c[H5F_USE_MPIIO] |= set[0];
  r->c[H5F_ALIGNMENT] = set[1];
  r->c[H5F_ALIGNMENT_THRESHOLD] = set[2];
  r->c[H5F_COLL_METADATA_OPS] |= set[3];
  r->c[H5F_COLL_METADATA_WRITE] |= set[4];
  double *ff = iochar_rec_f(r, &f_layout);
  iochar_ts(&ff[H5F_F_OPEN_START_TIMESTAMP], &ff[H5F_F_OPEN_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &f_layout, t0, t1);
  iochar_spin_unlock(&r->lock);
}

/* The file's record for a flush on any object of it. */
static iochar_record *file_of(iochar_dlinst *I, hid_t obj) {
  h5f_handle *h = files ? iochar_hmap_get(files, iochar_dl_key(I, (uint64_t)obj)) : NULL;
  if (h) return h->rec;
  char abs[IOCHAR_PATH_MAX];
  return obj_file_path(I, obj, abs, sizeof abs) ? NULL : iochar_record_get(IOCHAR_MOD_H5F, abs);
}

static void record_file_flush(iochar_dlinst *I, hid_t obj, herr_t ret, double t0, double t1) {
  iochar_record *r = ret >= 0 ? file_of(I, obj) : NULL;
  if (!r) return;
  iochar_meta_event(r, &f_layout, H5F_FLUSHES, -1, -1, t0, t1);
}

/* Forget f (closed); record the close when it was one of ours. */
static int record_file_close(iochar_dlinst *I, hid_t f, double t0, double t1) {
  h5f_handle *h = files ? iochar_hmap_del(files, iochar_dl_key(I, (uint64_t)f)) : NULL;
  if (!h) return 0;
  iochar_record *r = h->rec;
  free(h);
  iochar_meta_event(r, &f_layout, -1, H5F_F_CLOSE_START_TIMESTAMP, H5F_F_CLOSE_END_TIMESTAMP, t0,
                    t1);
  return 1;
}

/* ---- H5D record steps ---------------------------------------------------- */

static int64_t dset_npoints(iochar_dlinst *I, hid_t d) {
  hid_t s = H5(I, H5Dget_space)(d);
  if (s < 0) return -1;
  int64_t n = H5(I, H5Sget_simple_extent_npoints)(s);
  H5(I, H5Sclose)(s);
  return n;
}

static int layout_code(int l) { /* H5D_layout_t: compact 0, contiguous 1, chunked 2, virtual 3 */
  return l >= 0 && l <= 3 ? l + 1 : 0;
}

/* Shape, type, layout, chunking and filters: the dataset's settings. */
static void dset_settings(iochar_dlinst *I, hid_t d, iochar_record *r, h5d_handle *h) {
  int64_t v[H5D_NUM_INDICES] = {0};
  quiet q;
  quiet_begin(I, &q);
  hid_t s = H5(I, H5Dget_space)(d);
  if (s >= 0) {
    v[H5D_DATASPACE_NDIMS] = H5(I, H5Sget_simple_extent_ndims)(s);
    h->npoints = v[H5D_DATASPACE_NPOINTS] = H5(I, H5Sget_simple_extent_npoints)(s);
    H5(I, H5Sclose)(s);
  }
  hid_t t = H5(I, H5Dget_type)(d);
  if (t >= 0) {
    v[H5D_DATATYPE_SIZE] = (int64_t)H5(I, H5Tget_size)(t);
    H5(I, H5Tclose)(t);
  }
  hid_t p = H5(I, H5Dget_create_plist)(d);
  if (p >= 0) {
    int l = H5(I, H5Pget_layout)(p);
    v[H5D_LAYOUT] = layout_code(l);
    hsize_t dims[32] = {0};
    if (l == 2 && H5(I, H5Pget_chunk)(p, 32, dims) > 0)
      for (int i = 0; i < 5; i++) v[H5D_CHUNK_SIZE_D1 + i] = (int64_t)dims[i];
    int nf = H5(I, H5Pget_nfilters)(p);
    for (int i = 0; i < nf; i++) {
      unsigned flags = 0, cfg = 0;
      size_t nelm = 0;
      int id = H5(I, H5Pget_filter2)(p, (unsigned)i, &flags, &nelm, NULL, 0, NULL, &cfg);
      v[H5D_FILTERS] |= id == 1 ? 1 : id == 4 ? 2 : 4; /* deflate, szip, other */
    }
    H5(I, H5Pclose)(p);
  }
  quiet_end(I, &q);
  iochar_spin_lock(&r->lock);
  for (int i = H5D_DATASPACE_NDIMS; i < H5D_FILTERS; i++)
    if (v[i] > r->c[i] || (d_ints[i].op == IOCHAR_OP_ANY && !r->c[i])) r->c[i] = v[i];
  r->c[H5D_FILTERS] |= v[H5D_FILTERS];
  iochar_spin_unlock(&r->lock);
}

/* State of dataset d, created on first sight (open, or a read of a handle
 * opened some way the tool does not wrap). */
static h5d_handle *dset_track(iochar_dlinst *I, hid_t d) {
  uint64_t key = iochar_dl_key(I, (uint64_t)d);
  if (d < 0 || !maps_ready()) return NULL;
  h5d_handle *h = iochar_hmap_get(dsets, key);
  if (h) return h;
  char abs[IOCHAR_PATH_MAX], dname[1024], full[IOCHAR_PATH_MAX + 1024 + 2];
  if (obj_file_path(I, d, abs, sizeof abs)) return NULL;
  ssize_t k = H5(I, H5Iget_name)(d, dname, sizeof dname);
  if (k <= 0 || (size_t)k >= sizeof dname) strcpy(dname, "<anonymous>");
  snprintf(full, sizeof full, "%s:%s", abs, dname);
  iochar_record *r = iochar_record_get(IOCHAR_MOD_H5D, full);
  h = r ? calloc(1, sizeof *h) : NULL;
  if (!h) return NULL;
  h->rec = r;
  dset_settings(I, d, r, h);
  if (iochar_hmap_put(dsets, key, h)) {
    free(h);
    return NULL;
  }
  return h;
}

static void record_dset_open(iochar_dlinst *I, hid_t d, double t0, double t1) {
  h5d_handle *h = dset_track(I, d);
  if (!h) return;
  iochar_record *r = h->rec;
  iochar_meta_event(r, &d_layout, H5D_OPENS, H5D_F_OPEN_START_TIMESTAMP, H5D_F_OPEN_END_TIMESTAMP,
                    t0, t1);
}

/* H5Oopen opens any object: only datasets count. */
static void record_obj_open(iochar_dlinst *I, hid_t o, double t0, double t1) {
  if (o >= 0 && H5(I, H5Iget_type)(o) == H5I_DATASET) record_dset_open(I, o, t0, t1);
}

static int record_dset_close(iochar_dlinst *I, hid_t d, double t0, double t1) {
  h5d_handle *h = dsets ? iochar_hmap_del(dsets, iochar_dl_key(I, (uint64_t)d)) : NULL;
  if (!h) return 0;
  iochar_record *r = h->rec;
  free(h);
  iochar_meta_event(r, &d_layout, -1, H5D_F_CLOSE_START_TIMESTAMP, H5D_F_CLOSE_END_TIMESTAMP, t0,
                    t1);
  return 1;
}

static void record_obj_close(iochar_dlinst *I, hid_t o, double t0, double t1) {
  if (!record_dset_close(I, o, t0, t1)) record_file_close(I, o, t0, t1);
}

static void record_dset_flush(iochar_dlinst *I, hid_t d, herr_t ret, double t0, double t1) {
  h5d_handle *h = ret >= 0 ? dset_track(I, d) : NULL;
  if (!h) return;
  iochar_record *r = h->rec;
  iochar_meta_event(r, &d_layout, H5D_FLUSHES, -1, -1, t0, t1);
}

static void record_dset_extent(iochar_dlinst *I, hid_t d, herr_t ret, double t0, double t1) {
  (void)ret, (void)t0, (void)t1; /* not timed: only refreshes the extent */
  h5d_handle *h = dsets ? iochar_hmap_get(dsets, iochar_dl_key(I, (uint64_t)d)) : NULL;
  if (h) h->npoints = -1;
}

/* One H5Dread (dir 0) or H5Dwrite (dir 1).  Bytes are the selected points of
 * the file selection times the memory type's size; H5S_ALL selects the whole
 * extent and counts as a regular hyperslab (as Darshan). */
static void record_dset_rw(iochar_dlinst *I, hid_t d, hid_t mt, hid_t fs, hid_t dxpl, int dir,
                           herr_t ret, double t0, double t1) {
  h5d_handle *h = dset_track(I, d);
  if (!h) return;
  iochar_record *r = h->rec;
  int64_t len = -1, npts = 0;
  int sel = -1, coll = 0;
  if (ret >= 0) {
    if (fs == H5S_ALL) {
      if (h->npoints < 0) h->npoints = dset_npoints(I, d);
      npts = h->npoints;
      sel = H5D_REGULAR_HYPERSLAB_SELECTS;
    } else {
      npts = H5(I, H5Sget_select_npoints)(fs);
      int t = H5(I, H5Sget_select_type)(fs); /* 1 points, 2 hyperslabs, 3 all */
      if (t == 1)
        sel = H5D_POINT_SELECTS;
      else if (t == 3)
        sel = H5D_REGULAR_HYPERSLAB_SELECTS;
      else if (t == 2)
        sel = H5(I, H5Sis_regular_hyperslab) && H5(I, H5Sis_regular_hyperslab)(fs) > 0
                  ? H5D_REGULAR_HYPERSLAB_SELECTS
                  : H5D_IRREGULAR_HYPERSLAB_SELECTS;
    }
    len = npts < 0 ? 0 : npts * (int64_t)H5(I, H5Tget_size)(mt);
    int mode = 0; /* H5FD_MPIO_COLLECTIVE is 1; only parallel builds have it */
    if (dxpl != H5P_DEFAULT && H5(I, H5Pget_dxpl_mpio) && H5(I, H5Pget_dxpl_mpio)(dxpl, &mode) >= 0)
      coll = mode == 1;
  }
  iochar_spin_lock(&r->lock);
  iochar_rw_account(r, &d_layout, iochar_rw_state_of(r), dir, -1, len, NULL, t0, t1);
  if (sel >= 0) r->c[sel]++;
  if (coll) r->c[H5D_USE_MPIIO_COLLECTIVE] = 1;
  if (npts > r->c[H5D_DATASPACE_NPOINTS] && fs == H5S_ALL) r->c[H5D_DATASPACE_NPOINTS] = npts;
  iochar_spin_unlock(&r->lock);
}

/* A direct chunk write or read moves the chunk as stored (filtered): its
 * bytes are the stored size, the write's size argument or, for a read, what
 * the dataset reports for that chunk.  No selection is involved. */
static void record_chunk_rw(iochar_dlinst *I, hid_t d, const hsize_t *offset, int dir, int64_t size,
                            herr_t ret, double t0, double t1) {
  h5d_handle *h = dset_track(I, d);
  if (!h) return;
  int64_t len = -1;
  if (ret >= 0) {
    hsize_t stored = 0;
    len = size >= 0 ? size
          : H5(I, H5Dget_chunk_storage_size) &&
                  H5(I, H5Dget_chunk_storage_size)(d, offset, &stored) >= 0
              ? (int64_t)stored
              : 0;
  }
  iochar_record *r = h->rec;
  iochar_spin_lock(&r->lock);
  iochar_rw_account(r, &d_layout, iochar_rw_state_of(r), dir, -1, len, NULL, t0, t1);
  iochar_spin_unlock(&r->lock);
}

/* ---- wrappers ------------------------------------------------------------ */

#define H5_API __attribute__((visibility("default")))

/* The caller's copy of the library and its real function (NULL: none);
 * the clock runs unless not recording or nested (iochar_dlcall_begin). */
static inline void *h5_begin(iochar_dlcall *c, int fi, const void *ra) {
  return iochar_dlcall_begin(c, &h5, fi, ra, &h5_depth);
}

H5_API hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl) {
  iochar_dlcall c;
  __typeof__(&H5Fcreate) real = h5_begin(&c, FN_H5Fcreate, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(name, flags, fcpl, fapl);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_open(c.I, ret, name, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl) {
  iochar_dlcall c;
  __typeof__(&H5Fopen) real = h5_begin(&c, FN_H5Fopen, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(name, flags, fapl);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_open(c.I, ret, name, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Fclose(hid_t f) {
  iochar_dlcall c;
  __typeof__(&H5Fclose) real = h5_begin(&c, FN_H5Fclose, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(f);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(if (ret >= 0) record_file_close(c.I, f, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Fflush(hid_t obj, int scope) {
  iochar_dlcall c;
  __typeof__(&H5Fflush) real = h5_begin(&c, FN_H5Fflush, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(obj, scope);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_flush(c.I, obj, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl,
                        hid_t dcpl, hid_t dapl) {
  iochar_dlcall c;
  __typeof__(&H5Dcreate2) real = h5_begin(&c, FN_H5Dcreate2, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(loc, name, type, space, lcpl, dcpl, dapl);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Dcreate_anon(hid_t loc, hid_t type, hid_t space, hid_t dcpl, hid_t dapl) {
  iochar_dlcall c;
  __typeof__(&H5Dcreate_anon) real = h5_begin(&c, FN_H5Dcreate_anon, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(loc, type, space, dcpl, dapl);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Dopen2(hid_t loc, const char *name, hid_t dapl) {
  iochar_dlcall c;
  __typeof__(&H5Dopen2) real = h5_begin(&c, FN_H5Dopen2, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(loc, name, dapl);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Dcreate1(hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl) {
  iochar_dlcall c;
  __typeof__(&H5Dcreate1) real = h5_begin(&c, FN_H5Dcreate1, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(loc, name, type, space, dcpl);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Dopen1(hid_t loc, const char *name) {
  iochar_dlcall c;
  __typeof__(&H5Dopen1) real = h5_begin(&c, FN_H5Dopen1, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(loc, name);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Oopen(hid_t loc, const char *name, hid_t lapl) {
  iochar_dlcall c;
  __typeof__(&H5Oopen) real = h5_begin(&c, FN_H5Oopen, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(loc, name, lapl);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_obj_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dread(hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, void *buf) {
  iochar_dlcall c;
  __typeof__(&H5Dread) real = h5_begin(&c, FN_H5Dread, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, mt, ms, fs, dxpl, buf);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_dset_rw(c.I, d, mt, fs, dxpl, 0, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dwrite(hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, const void *buf) {
  iochar_dlcall c;
  __typeof__(&H5Dwrite) real = h5_begin(&c, FN_H5Dwrite, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, mt, ms, fs, dxpl, buf);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_dset_rw(c.I, d, mt, fs, dxpl, 1, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dwrite_chunk(hid_t d, hid_t dxpl, uint32_t filters, const hsize_t *offset,
                             size_t size, const void *buf) {
  iochar_dlcall c;
  __typeof__(&H5Dwrite_chunk) real = h5_begin(&c, FN_H5Dwrite_chunk, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, dxpl, filters, offset, size, buf);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_chunk_rw(c.I, d, offset, 1, (int64_t)size, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dread_chunk(hid_t d, hid_t dxpl, const hsize_t *offset, uint32_t *filters,
                            void *buf) {
  iochar_dlcall c;
  __typeof__(&H5Dread_chunk) real = h5_begin(&c, FN_H5Dread_chunk, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, dxpl, offset, filters, buf);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_chunk_rw(c.I, d, offset, 0, -1, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dread_chunk1(hid_t d, hid_t dxpl, const hsize_t *offset, uint32_t *filters,
                             void *buf) {
  iochar_dlcall c;
  __typeof__(&H5Dread_chunk1) real = h5_begin(&c, FN_H5Dread_chunk1, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, dxpl, offset, filters, buf);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_chunk_rw(c.I, d, offset, 0, -1, ret, c.t0, c.t1));
  return ret;
}
/* With buf NULL it only reports the size a read needs: no data moves. */
H5_API herr_t H5Dread_chunk2(hid_t d, hid_t dxpl, const hsize_t *offset, uint32_t *filters,
                             void *buf, size_t *buf_size) {
  iochar_dlcall c;
  __typeof__(&H5Dread_chunk2) real = h5_begin(&c, FN_H5Dread_chunk2, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, dxpl, offset, filters, buf, buf_size);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(if (buf) record_chunk_rw(c.I, d, offset, 0, -1, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dflush(hid_t d) {
  iochar_dlcall c;
  __typeof__(&H5Dflush) real = h5_begin(&c, FN_H5Dflush, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_flush(c.I, d, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dclose(hid_t d) {
  iochar_dlcall c;
  __typeof__(&H5Dclose) real = h5_begin(&c, FN_H5Dclose, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(if (ret >= 0) record_dset_close(c.I, d, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Oclose(hid_t o) {
  iochar_dlcall c;
  __typeof__(&H5Oclose) real = h5_begin(&c, FN_H5Oclose, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(o);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(if (ret >= 0) record_obj_close(c.I, o, c.t0, c.t1));
  return ret;
}
/* h5py closes every object by dropping its last reference. */
H5_API int H5Idec_ref(hid_t id) {
  iochar_dlcall c;
  __typeof__(&H5Idec_ref) real = h5_begin(&c, FN_H5Idec_ref, __builtin_return_address(0));
  if (!real) return (int)-1;
  int ret = real(id);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(if (ret == 0) record_obj_close(c.I, id, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dset_extent(hid_t d, const hsize_t size[]) {
  iochar_dlcall c;
  __typeof__(&H5Dset_extent) real = h5_begin(&c, FN_H5Dset_extent, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, size);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_extent(c.I, d, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dextend(hid_t d, const hsize_t size[]) {
  iochar_dlcall c;
  __typeof__(&H5Dextend) real = h5_begin(&c, FN_H5Dextend, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(d, size);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_extent(c.I, d, ret, c.t0, c.t1));
  return ret;
}

#define SRC app_file, app_func, app_line
H5_API hid_t H5Fcreate_async(ASYNC_SRC, const char *name, unsigned flags, hid_t fcpl, hid_t fapl,
                             hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Fcreate_async) real = h5_begin(&c, FN_H5Fcreate_async, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(SRC, name, flags, fcpl, fapl, es);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_open(c.I, ret, name, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Fopen_async(ASYNC_SRC, const char *name, unsigned flags, hid_t fapl, hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Fopen_async) real = h5_begin(&c, FN_H5Fopen_async, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(SRC, name, flags, fapl, es);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_open(c.I, ret, name, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Fclose_async(ASYNC_SRC, hid_t f, hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Fclose_async) real = h5_begin(&c, FN_H5Fclose_async, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(SRC, f, es);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(if (ret >= 0) record_file_close(c.I, f, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Fflush_async(ASYNC_SRC, hid_t obj, int scope, hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Fflush_async) real = h5_begin(&c, FN_H5Fflush_async, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(SRC, obj, scope, es);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_file_flush(c.I, obj, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Dcreate_async(ASYNC_SRC, hid_t loc, const char *name, hid_t type, hid_t space,
                             hid_t lcpl, hid_t dcpl, hid_t dapl, hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Dcreate_async) real = h5_begin(&c, FN_H5Dcreate_async, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(SRC, loc, name, type, space, lcpl, dcpl, dapl, es);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API hid_t H5Dopen_async(ASYNC_SRC, hid_t loc, const char *name, hid_t dapl, hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Dopen_async) real = h5_begin(&c, FN_H5Dopen_async, __builtin_return_address(0));
  if (!real) return (hid_t)-1;
  hid_t ret = real(SRC, loc, name, dapl, es);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(record_dset_open(c.I, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dread_async(ASYNC_SRC, hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, void *buf,
                            hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Dread_async) real = h5_begin(&c, FN_H5Dread_async, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(SRC, d, mt, ms, fs, dxpl, buf, es);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_dset_rw(c.I, d, mt, fs, dxpl, 0, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dwrite_async(ASYNC_SRC, hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl,
                             const void *buf, hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Dwrite_async) real = h5_begin(&c, FN_H5Dwrite_async, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(SRC, d, mt, ms, fs, dxpl, buf, es);
  if (iochar_dlcall_end(&c))
    IOCHAR_RECORD(record_dset_rw(c.I, d, mt, fs, dxpl, 1, ret, c.t0, c.t1));
  return ret;
}
H5_API herr_t H5Dclose_async(ASYNC_SRC, hid_t d, hid_t es) {
  iochar_dlcall c;
  __typeof__(&H5Dclose_async) real = h5_begin(&c, FN_H5Dclose_async, __builtin_return_address(0));
  if (!real) return (herr_t)-1;
  herr_t ret = real(SRC, d, es);
  if (iochar_dlcall_end(&c)) IOCHAR_RECORD(if (ret >= 0) record_dset_close(c.I, d, c.t0, c.t1));
  return ret;
}
