/* Lustre file layout from the `lustre.lov` extended attribute, read without
 * Lustre headers or libraries: the byte layouts of lov_user_md v1/v3 and of
 * the composite lov_comp_md_v1 (PFL, FLR, DOM) are Lustre's public user ABI,
 * decoded here field by field. */
#ifndef IOCHAR_LUSTRE_H
#define IOCHAR_LUSTRE_H

#include <stddef.h>
#include <stdint.h>

/* A plain layout describes itself; a composite one is described by the one
 * component iochar_lustre_parse chooses (lustre.c says which and why). */
typedef struct iochar_lustre_layout {
  int version;          /* 1 or 3: the (chosen component's) lov_user_md; 0: none */
  int64_t pattern;      /* lmm_pattern (1: RAID0) */
  int64_t stripe_size;  /* bytes */
  int64_t stripe_count; /* OSTs the file is striped over; -1: not yet chosen */
  int64_t first_ost;    /* OST index of the first stripe, -1 when not listed */
  int64_t components;   /* 1 for a plain layout; the entry count of a composite */
} iochar_lustre_layout;

/* One component of a composite layout as the log carries it
 * (the LUSTRE module's LUSTRE_COMP<N>_*: docs/log-format.md). */
typedef struct iochar_lustre_comp {
  int64_t start, end;   /* lcme_extent [start, end); end -1: to the end of the file */
  int64_t stripe_size;  /* its lov_user_md's, as iochar_lustre_layout */
  int64_t stripe_count; /* OSTs it is striped over (0 for Data-on-MDT) */
  int64_t pattern;      /* lmm_pattern (0x100: Data-on-MDT) */
  int64_t flags;        /* lcme_flags (0x10: instantiated) */
  int64_t mirror;       /* FLR mirror id (lcme_id >> 16); 0 without mirrors */
} iochar_lustre_comp;
/* The log's bound on components per file: a PFL layout of three or four
 * extents, or two mirrors of two, fits (the LUSTRE_COMP slots of the X-macro
 * list, wrappers/lustre_counters.h). */
#define IOCHAR_LUSTRE_MAX_COMPS 4

/* Decode the attribute's n bytes: 0 and *out filled, or -1 (not a v1/v3 or
 * composite layout, or bytes that contradict themselves or n). Reads nothing
 * past buf + n. Little-endian (x86-64, aarch64). */
int iochar_lustre_parse(const void *buf, size_t n, iochar_lustre_layout *out);
/* The same, a composite described by the instantiated component holding most
 * of the bytes [0, hi) when hi > 0 and one holds any (the accessed extent). */
int iochar_lustre_parse_for(const void *buf, size_t n, uint64_t hi, iochar_lustre_layout *out);

/* The components of a composite layout that hold the file's current data
 * and cover some of [0, hi) (the accessed extent): instantiated, not stale,
 * parity, an extension placeholder or foreign; Data-on-MDT included.  The
 * `max` lowest (by extent start, then mirror id, then place in the layout)
 * into out[]: the number written, 0 for a plain layout or hi 0, or -1 (bytes
 * that do not decode).  Why the lowest: then the components one rank saw
 * (a smaller hi) are the first of those another saw (a larger one) and the
 * ranks' records combine slot by slot (docs/log-format.md). */
int iochar_lustre_parse_comps(const void *buf, size_t n, uint64_t hi, iochar_lustre_comp *out,
                              int max);
/* iochar_lustre_parse_for and _parse_comps on the `lustre.lov` attribute of
 * path (at the end of the job, the descriptors closed): 0, or -1 (no such
 * file or attribute, or bytes that do not decode).  *ncomp the count. */
int iochar_lustre_read_path(const char *path, uint64_t hi, iochar_lustre_layout *out,
                            iochar_lustre_comp *comps, int max, int *ncomp);

/* The layout of the open file fd (its `lustre.lov` attribute): 0 and *out
 * filled, or -1.  Layouts past 4 KiB (~150 stripes or more, or many PFL
 * components) are read into a mapping of their size: no malloc, for the open
 * wrappers may run in an application's signal handler. */
int iochar_lustre_read(int fd, iochar_lustre_layout *out);

#endif
