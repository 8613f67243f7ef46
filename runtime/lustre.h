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

/* Decode the attribute's n bytes: 0 and *out filled, or -1 (not a v1/v3 or
 * composite layout, or bytes that contradict themselves or n). Reads nothing
 * past buf + n. Little-endian (x86-64, aarch64). */
int iochar_lustre_parse(const void *buf, size_t n, iochar_lustre_layout *out);
/* The same, a composite described by the instantiated component holding most
 * of the bytes [0, hi) when hi > 0 and one holds any (the accessed extent). */
int iochar_lustre_parse_for(const void *buf, size_t n, uint64_t hi, iochar_lustre_layout *out);

/* The layout of the open file fd (its `lustre.lov` attribute): 0 and *out
 * filled, or -1.  Layouts past 4 KiB (~150 stripes or more, or many PFL
 * components) are read into a mapping of their size: no malloc, for the open
 * wrappers may run in an application's signal handler. */
int iochar_lustre_read(int fd, iochar_lustre_layout *out);
/* iochar_lustre_read choosing by the accessed extent [0, hi) (parse_for). */
int iochar_lustre_read_for(int fd, uint64_t hi, iochar_lustre_layout *out);

#endif
