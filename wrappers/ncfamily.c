/* What the NetCDF and PnetCDF wrappers share (see ncfamily.h). */
#include "ncfamily.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#define NCF_NOERR 0 /* NC_NOERR in both libraries */

/* ---- handle state -------------------------------------------------------- */

static int maps_ready(ncf_maps *m) {
  if (!m->files) m->files = iochar_hmap_create(1 << 12);
  if (!m->vars) m->vars = iochar_hmap_create(1 << 16);
  return m->files && m->vars;
}

/* A file seen for the first time under key: its record (NULL when the path
 * is excluded or cannot be resolved). */
static ncf_file *file_add(ncf_maps *m, uint64_t key, int module, const char *path) {
  char abs[IOCHAR_PATH_MAX];
  if (iochar_path_resolve(AT_FDCWD, path, abs, sizeof abs) || iochar_path_excluded(abs))
    return NULL;
  iochar_record *r = iochar_record_get(module, abs);
  ncf_file *fs = r ? calloc(1, sizeof *fs + strlen(abs) + 1) : NULL;
  if (!fs) return NULL;
  fs->rec = r;
  strcpy(fs->path, abs);
  if (iochar_hmap_put(m->files, key, fs)) {
    free(fs);
    return NULL;
  }
  return fs;
}

ncf_file *ncf_file_track(const ncf_family *F, iochar_dlinst *I, int ncid, const char *path) {
  ncf_maps *m = F->maps;
  if (!maps_ready(m)) return NULL;
  uint64_t key = F->file_key(I, ncid);
  ncf_file *fs = iochar_hmap_get(m->files, key);
  if (fs) return fs;
  char given[IOCHAR_PATH_MAX];
  if (!path) {
    if (F->path(I, ncid, given, sizeof given)) return NULL;
    path = given;
  }
  fs = file_add(m, key, F->f_module, path);
  int fmt = fs ? F->format_of(I, ncid) : 0;
  if (fmt) {
    iochar_record *r = fs->rec;
    iochar_spin_lock(&r->lock);
    if (!r->c[F->format]) r->c[F->format] = ncf_format_code(fmt);
    iochar_spin_unlock(&r->lock);
  }
  return fs;
}

void ncf_var_settings(const ncf_family *F, iochar_dlinst *I, int ncid, int varid, ncf_var *v) {
  F->settings(I, ncid, varid, v);
  iochar_record *r = v->rec;
  iochar_spin_lock(&r->lock);
  r->c[F->ndims] = v->ndims;
  r->c[F->type_size] = v->type_size;
  r->c[F->is_record] = v->is_record;
  iochar_spin_unlock(&r->lock);
}

ncf_var *ncf_var_track(const ncf_family *F, iochar_dlinst *I, int ncid, int varid) {
  ncf_maps *m = F->maps;
  uint64_t key = ncf_var_key(I, ncid, varid);
  ncf_var *v = maps_ready(m) ? iochar_hmap_get(m->vars, key) : NULL;
  if (v) return v;
  ncf_file *fs = ncf_file_track(F, I, ncid, NULL);
  char name[IOCHAR_PATH_MAX + 1300]; /* <file>:[/<group path>/]<variable> */
  if (!fs || F->var_name(I, ncid, varid, fs->path, name, sizeof name)) return NULL;
  iochar_record *r = iochar_record_get(F->v_module, name);
  v = r ? calloc(1, sizeof *v) : NULL;
  if (!v) return NULL;
  v->rec = r;
  v->key = key;
  ncf_var_settings(F, I, ncid, varid, v);
  if (iochar_hmap_put(m->vars, key, v)) {
    free(v);
    return NULL;
  }
  iochar_spin_lock(&m->lock);
  v->next = fs->vars;
  fs->vars = v;
  iochar_spin_unlock(&m->lock);
  return v;
}

/* A closed file: forget it and its variables; its record, NULL if unknown. */
static iochar_record *file_close(ncf_maps *m, uint64_t key) {
  ncf_file *fs = m->files ? iochar_hmap_del(m->files, key) : NULL;
  if (!fs) return NULL;
  iochar_record *r = fs->rec;
  iochar_spin_lock(&m->lock);
  ncf_var *v = fs->vars;
  fs->vars = NULL;
  iochar_spin_unlock(&m->lock);
  while (v) {
    ncf_var *next = v->next;
    iochar_hmap_del(m->vars, v->key);
    free(v);
    v = next;
  }
  free(fs);
  return r;
}

int64_t ncf_format_code(int f) {
  static const int64_t code[] = {0, 1, 2, 4, 3, 5};
  return f >= 1 && f <= 5 ? code[f] : 0;
}

/* ---- access forms -------------------------------------------------------- */

/* Element i of a library's array of 64-bit integers (or of pointers). */
static int64_t at(const void *a, int i) {
  int64_t x;
  memcpy(&x, (const char *)a + (size_t)i * sizeof x, sizeof x);
  return x;
}
static const void *ptr_at(const void *a, int i) {
  const void *p;
  memcpy(&p, (const char *)a + (size_t)i * sizeof p, sizeof p);
  return p;
}

/* Elements a call accesses: the whole variable (its current shape), one,
 * the product of count, or the sum over boxes (counts or counts[i] NULL:
 * single elements, as PnetCDF reads them). */
static int64_t elements(const ncf_family *F, iochar_dlinst *I, int ncid, int varid,
                        const ncf_var *v, const ncf_form *a) {
  if (a->kind == NCF_BOXES) {
    int64_t total = 0;
    for (int i = 0; i < a->num; i++) {
      const void *c = a->counts ? ptr_at(a->counts, i) : NULL;
      int64_t n = 1;
      for (int d = 0; c && d < v->ndims; d++) n *= at(c, d);
      total += n;
    }
    return total;
  }
  if (a->kind == NCF_ONE || v->ndims == 0) return 1;
  if (a->kind == NCF_WHOLE || !a->count) return F->whole(I, ncid, varid, v);
  int64_t n = 1;
  for (int d = 0; d < v->ndims; d++) n *= at(a->count, d);
  return n;
}

/* ---- record steps (called with iochar_in_tool set) ----------------------- */

void ncf_record_open(const ncf_family *F, iochar_dlinst *I, int ret, const char *path,
                     const int *ncidp, int idx, double t0, double t1) {
  ncf_file *fs = ret == NCF_NOERR && ncidp ? ncf_file_track(F, I, *ncidp, path) : NULL;
  if (fs) iochar_meta_event(fs->rec, F->f_layout, idx, F->open_ts[0], F->open_ts[1], t0, t1);
}

void ncf_record_file_meta(const ncf_family *F, iochar_dlinst *I, int ncid, int ret, int idx,
                          double t0, double t1) {
  ncf_file *fs = ret == NCF_NOERR ? ncf_file_track(F, I, ncid, NULL) : NULL;
  if (fs) iochar_meta_event(fs->rec, F->f_layout, idx, -1, -1, t0, t1);
}

void ncf_record_close(const ncf_family *F, iochar_dlinst *I, int ncid, double t0, double t1) {
  iochar_record *r = file_close(F->maps, F->file_key(I, ncid));
  if (r) iochar_meta_event(r, F->f_layout, -1, F->close_ts[0], F->close_ts[1], t0, t1);
}

void ncf_record_def(const ncf_family *F, iochar_dlinst *I, int ncid, const int *varidp, int ret,
                    int reread, double t0, double t1) {
  if (ret != NCF_NOERR || !varidp) return;
  ncf_var *v = ncf_var_track(F, I, ncid, *varidp);
  if (!v) return;
  if (reread) ncf_var_settings(F, I, ncid, *varidp, v);
  iochar_meta_event(v->rec, F->v_layout, -1, -1, -1, t0, t1);
}

void ncf_record_rw(const ncf_family *F, iochar_dlinst *I, int ncid, int varid, int dir, int also,
                   const ncf_form *a, int ret, double t0, double t1) {
  ncf_var *v = ncf_var_track(F, I, ncid, varid);
  if (!v) return;
  int64_t len = ret == NCF_NOERR ? elements(F, I, ncid, varid, v, a) * v->type_size : -1;
  int strided = 0;
  for (int d = 0; a->stride && d < v->ndims; d++) strided |= at(a->stride, d) != 1;
  ncf_access(F, v, dir, len, strided, also, t0, t1);
}

void ncf_access(const ncf_family *F, ncf_var *v, int dir, int64_t len, int strided, int also,
                double t0, double t1) {
  iochar_record *r = v->rec;
  iochar_spin_lock(&r->lock);
  iochar_rw_account(r, F->v_layout, iochar_rw_state_of(r), dir, -1, len, NULL, t0, t1);
  if (also >= 0) r->c[also]++;
  r->c[F->strided] += strided;
  iochar_spin_unlock(&r->lock);
}
