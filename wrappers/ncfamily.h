/* Handle state shared by the NetCDF and PnetCDF wrappers: the record an open
 * file id stands for, and the record of each (file, variable) pair, kept from
 * first sight to close.  Each library fills in names and settings from its
 * own inquiry calls; the keeping is here, once. */
#ifndef IOCHAR_NCFAMILY_H
#define IOCHAR_NCFAMILY_H

#include "../runtime/access.h"
#include "../runtime/core.h"

typedef struct ncf_var {
  iochar_record *rec;
  uint64_t key;
  int64_t type_size; /* external type size, bytes */
  int ndims;
  struct ncf_var *next; /* the file's variables, dropped at close */
} ncf_var;

typedef struct ncf_file {
  iochar_record *rec;
  ncf_var *vars;
  char path[]; /* resolved */
} ncf_file;

/* One library's handles (keys come from iochar_dl_key: per library copy). */
typedef struct ncf_maps {
  iochar_hmap *files, *vars;
  iochar_spin lock; /* guards the files' variable lists */
} ncf_maps;

ncf_file *ncf_file_get(ncf_maps *m, uint64_t key);
/* A file seen for the first time under key: its record in `module` (NULL
 * when the path is excluded or cannot be resolved). */
ncf_file *ncf_file_add(ncf_maps *m, uint64_t key, int module, const char *path);
ncf_var *ncf_var_get(ncf_maps *m, uint64_t key);
/* A variable seen for the first time: record `name` in `module`.  The
 * caller fills in its shape, then publishes it under fs (which frees it and
 * returns NULL when it cannot be kept). */
ncf_var *ncf_var_new(uint64_t key, int module, const char *name);
ncf_var *ncf_var_publish(ncf_maps *m, ncf_file *fs, ncf_var *v);
/* A closed file: forget it and its variables; its record, NULL if unknown. */
iochar_record *ncf_file_close(ncf_maps *m, uint64_t key);

/* The record steps both libraries share, given what differs between their
 * modules: the file and variable layouts and counter indices. */
typedef struct ncf_family {
  ncf_maps *maps;
  const iochar_rw_layout *f_layout, *v_layout;
  int open_ts[2], close_ts[2]; /* the file module's F_OPEN/F_CLOSE START and END */
  int strided;                 /* the variable module's STRIDED_ACCESSES */
} ncf_family;
/* An open or create (fs NULL: not recorded): counter idx, open timestamps. */
void ncf_opened(const ncf_family *F, ncf_file *fs, int idx, double t0, double t1);
/* A file-level call counted in idx (-1: none), timed as metadata. */
void ncf_file_meta(const ncf_family *F, ncf_file *fs, int idx, double t0, double t1);
/* Close or abort of the file under key: forgotten with its variables. */
void ncf_closed(const ncf_family *F, uint64_t key, double t0, double t1);
/* A definition or setting call on a variable, timed as its metadata. */
void ncf_var_meta(const ncf_family *F, ncf_var *v, double t0, double t1);
/* One access of len bytes (-1: the call failed); `also` (>= 0) is one more
 * counter to bump (PnetCDF's mode counters). */
void ncf_access(const ncf_family *F, ncf_var *v, int dir, int64_t len, int strided, int also,
                double t0, double t1);

/* NC_FORMAT_* (1 classic, 2 64-bit offset, 3 netCDF-4, 4 netCDF-4 classic,
 * 5 CDF5; PnetCDF's are the same) to the FORMAT counter's code. */
int64_t ncf_format_code(int f);

#endif
