/* Lustre file layout from the `lustre.lov` extended attribute, read without
 * Lustre headers or libraries: the byte layout of lov_user_md v1/v3 is
 * Lustre's public on-disk/user ABI, decoded here field by field. */
#ifndef IOCHAR_LUSTRE_H
#define IOCHAR_LUSTRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct iochar_lustre_layout {
  int version;          /* 1 or 3 */
  int64_t pattern;      /* lmm_pattern (1: RAID0) */
  int64_t stripe_size;  /* bytes */
  int64_t stripe_count; /* OSTs the file is striped over */
  int64_t first_ost;    /* OST index of the first stripe, -1 when not listed */
} iochar_lustre_layout;

/* Decode the attribute's n bytes: 0 and *out filled, or -1 (not a v1/v3
 * layout, or too short for what it claims). Little-endian (x86-64, aarch64). */
int iochar_lustre_parse(const void *buf, size_t n, iochar_lustre_layout *out);

/* The fs type of the mount holding abs (longest matching mount point). */
const char *iochar_fs_type(const char *abs);
/* 1 when that mount is Lustre. */
int iochar_on_lustre(const char *abs);

#endif
