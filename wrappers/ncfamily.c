/* Handle state shared by the NetCDF and PnetCDF wrappers (see ncfamily.h). */
#include "ncfamily.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

static int maps_ready(ncf_maps *m) {
  if (!m->files) m->files = iochar_hmap_create(1 << 12);
  if (!m->vars) m->vars = iochar_hmap_create(1 << 16);
  return m->files && m->vars;
}

ncf_file *ncf_file_get(ncf_maps *m, uint64_t key) {
  return maps_ready(m) ? iochar_hmap_get(m->files, key) : NULL;
}

ncf_file *ncf_file_add(ncf_maps *m, uint64_t key, int module, const char *path) {
  char abs[IOCHAR_PATH_MAX];
  if (!maps_ready(m) || iochar_path_resolve(AT_FDCWD, path, abs, sizeof abs) ||
      iochar_path_excluded(abs))
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

ncf_var *ncf_var_get(ncf_maps *m, uint64_t key) {
  return maps_ready(m) ? iochar_hmap_get(m->vars, key) : NULL;
}

ncf_var *ncf_var_new(uint64_t key, int module, const char *name) {
  iochar_record *r = iochar_record_get(module, name);
  ncf_var *v = r ? calloc(1, sizeof *v) : NULL;
  if (!v) return NULL;
  v->rec = r;
  v->key = key;
  return v;
}

ncf_var *ncf_var_publish(ncf_maps *m, ncf_file *fs, ncf_var *v) {
  if (iochar_hmap_put(m->vars, v->key, v)) {
    free(v);
    return NULL;
  }
  iochar_spin_lock(&m->lock);
  v->next = fs->vars;
  fs->vars = v;
  iochar_spin_unlock(&m->lock);
  return v;
}

iochar_record *ncf_file_close(ncf_maps *m, uint64_t key) {
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

/* ---- record steps (called with iochar_in_tool set) ----------------------- */

void ncf_opened(const ncf_family *F, ncf_file *fs, int idx, double t0, double t1) {
  if (fs) iochar_meta_event(fs->rec, F->f_layout, idx, F->open_ts[0], F->open_ts[1], t0, t1);
}

void ncf_file_meta(const ncf_family *F, ncf_file *fs, int idx, double t0, double t1) {
  if (fs) iochar_meta_event(fs->rec, F->f_layout, idx, -1, -1, t0, t1);
}

void ncf_closed(const ncf_family *F, uint64_t key, double t0, double t1) {
  iochar_record *r = ncf_file_close(F->maps, key);
  if (r) iochar_meta_event(r, F->f_layout, -1, F->close_ts[0], F->close_ts[1], t0, t1);
}

void ncf_var_meta(const ncf_family *F, ncf_var *v, double t0, double t1) {
  if (v) iochar_meta_event(v->rec, F->v_layout, -1, -1, -1, t0, t1);
}

void ncf_access(const ncf_family *F, ncf_var *v, int dir, int64_t len, int strided, int also,
                double t0, double t1) {
  iochar_record *r = v->rec;
  iochar_spin_lock(&r->lock);
  iochar_rw_account(r, F->v_layout, r->state, dir, -1, len, NULL, t0, t1);
  if (also >= 0) r->c[also]++;
  r->c[F->strided] += strided;
  iochar_spin_unlock(&r->lock);
}
