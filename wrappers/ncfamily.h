/* What the NetCDF and PnetCDF wrappers share: the record an open file id
 * stands for and the record of each (file, variable) pair, kept from first
 * sight to close; and the record steps, from a call's facts to the counters.
 * Each library supplies its inquiry calls and counter indices (ncf_family);
 * the keeping and the accounting are here, once. */
#ifndef IOCHAR_NCFAMILY_H
#define IOCHAR_NCFAMILY_H

#include "../runtime/access.h"
#include "../runtime/core.h"
#include "dynlib.h"

typedef struct ncf_var {
  iochar_record *rec;
  uint64_t key;
  int64_t type_size; /* external type size, bytes */
  int ndims;
  int is_record;        /* has an unlimited dimension */
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

/* One library: its handles, modules and counter indices, and the inquiry
 * calls the shared steps make on the caller's copy I of the library. */
typedef struct ncf_family {
  ncf_maps *maps;
  int f_module, v_module;
  const iochar_rw_layout *f_layout, *v_layout;
  int format;                               /* the file module's FORMAT */
  int open_ts[2], close_ts[2];              /* its F_OPEN/F_CLOSE START and END */
  int ndims, type_size, is_record, strided; /* the variable module's NDIMS,
                                               DATATYPE_SIZE, IS_RECORD_VAR,
                                               STRIDED_ACCESSES */
  uint64_t (*file_key)(iochar_dlinst *I, int ncid);
  /* The file's path into buf (0: done). */
  int (*path)(iochar_dlinst *I, int ncid, char *buf, size_t size);
  /* The file's NC_FORMAT_* (0: unknown). */
  int (*format_of)(iochar_dlinst *I, int ncid);
  /* The variable's record name (<file>:<name>) into buf (0: done). */
  int (*var_name)(iochar_dlinst *I, int ncid, int varid, const char *file, char *buf, size_t size);
  /* The variable's ndims, type_size and is_record (and any counters of the
   * library's own, under the record's lock). */
  void (*settings)(iochar_dlinst *I, int ncid, int varid, ncf_var *v);
  /* Elements of the whole variable now (its current shape; 0: unknown). */
  int64_t (*whole)(iochar_dlinst *I, int ncid, int varid, const ncf_var *v);
} ncf_family;

static inline uint64_t ncf_var_key(iochar_dlinst *I, int ncid, int varid) {
  return iochar_dl_key(I, (uint64_t)(uint32_t)ncid << 32 | (uint32_t)varid);
}

/* The state of ncid's file, created on first sight (path NULL: ask the
 * library); NULL when excluded or unresolvable. */
ncf_file *ncf_file_track(const ncf_family *F, iochar_dlinst *I, int ncid, const char *path);
/* The state of variable (ncid, varid), created on first sight. */
ncf_var *ncf_var_track(const ncf_family *F, iochar_dlinst *I, int ncid, int varid);
/* (Re)read the variable's settings into its record. */
void ncf_var_settings(const ncf_family *F, iochar_dlinst *I, int ncid, int varid, ncf_var *v);

/* What one data call accesses.  The index arrays are the library's own:
 * netCDF's size_t and ptrdiff_t, PnetCDF's MPI_Offset, all 64-bit integers
 * (each wrapper file checks that), read here by value. */
enum { NCF_WHOLE, NCF_ONE, NCF_BOX, NCF_BOXES };
typedef struct ncf_form {
  int kind;           /* the whole variable, one element, a box, boxes */
  const void *count;  /* NCF_BOX: elements per dimension */
  const void *stride; /* per dimension (NULL: contiguous) */
  int num;            /* NCF_BOXES: num boxes, counts[i] elements per dimension */
  const void *counts; /* (counts or counts[i] NULL: single elements) */
} ncf_form;

/* ---- record steps (called with iochar_in_tool set) ----------------------- */

/* An open or create returning ret (NC_NOERR: *ncidp is the file), counted in idx. */
void ncf_record_open(const ncf_family *F, iochar_dlinst *I, int ret, const char *path,
                     const int *ncidp, int idx, double t0, double t1);
/* A file-level call counted in idx (-1: none), timed as metadata. */
void ncf_record_file_meta(const ncf_family *F, iochar_dlinst *I, int ncid, int ret, int idx,
                          double t0, double t1);
/* Close or abort: the file and its variables are forgotten. */
void ncf_record_close(const ncf_family *F, iochar_dlinst *I, int ncid, double t0, double t1);
/* A definition or setting call on variable varid (varidp non-NULL: the
 * variable it defined), timed as its metadata; reread: its settings changed. */
void ncf_record_def(const ncf_family *F, iochar_dlinst *I, int ncid, const int *varidp, int ret,
                    int reread, double t0, double t1);
/* One data call of form a in direction dir (1 put); `also` (>= 0) is one
 * more counter to bump (PnetCDF's mode counters). */
void ncf_record_rw(const ncf_family *F, iochar_dlinst *I, int ncid, int varid, int dir, int also,
                   const ncf_form *a, int ret, double t0, double t1);
/* One access of len bytes (-1: the call failed). */
void ncf_access(const ncf_family *F, ncf_var *v, int dir, int64_t len, int strided, int also,
                double t0, double t1);

/* NC_FORMAT_* (1 classic, 2 64-bit offset, 3 netCDF-4, 4 netCDF-4 classic,
 * 5 CDF5; PnetCDF's are the same) to the FORMAT counter's code. */
int64_t ncf_format_code(int f);

#endif
