/* Unit tests of the Lustre layout decoder on hand-built lov_user_md bytes
 * (v1 and v3, from the public struct layout), and of the mount lookup. */
#include <stdio.h>
#include <string.h>

#include "../runtime/internal.h"
#include "../runtime/lustre.h"

#include "expect.h"

/* A fake mount table for iochar_fs_type. */
static iochar_mount mt[] = {{"/", "ext4", 1, 0},
                            {"/lus", "lustre", 4, 0},
                            {"/lus/scratch", "lustre", 12, 0},
                            {"/lusx", "nfs", 5, 0},
                            {"/data/ssd", "xfs", 9, 0}};
/* runtime/paths.c's note on the last resolved name: none here. */
__thread iochar_path_note iochar_path_last;

int iochar_mounts(const iochar_mount **out) {
  *out = mt;
  return 5;
}

static void put32(unsigned char *p, unsigned v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

/* lov_user_md: magic, pattern, 16-byte object id, stripe size, stripe count,
 * stripe offset; v3: a 16-byte pool name; then 24-byte OST entries (16-byte
 * object id, generation, OST index). */
static size_t build(unsigned char *b, int v3, unsigned size, unsigned count, int nost,
                    const unsigned *ost) {
  memset(b, 0, 4096);
  put32(b, v3 ? 0x0BD30BD0u : 0x0BD10BD0u);
  put32(b + 4, 1);         /* RAID0 */
  put32(b + 8, 0x1234567); /* object id: ignored */
  put32(b + 24, size);
  put16(b + 28, count);
  put16(b + 30, 0xffff); /* layout generation in a stored layout */
  size_t head = 32;
  if (v3) memcpy(b + 32, "fastpool", 8), head = 48;
  for (int i = 0; i < nost; i++) {
    put32(b + head + 24 * i + 16, 7);      /* generation */
    put32(b + head + 24 * i + 20, ost[i]); /* OST index */
  }
  return head + 24 * (size_t)nost;
}

int main(void) {
  unsigned char b[4096];
  iochar_lustre_layout lo;
  const unsigned osts[] = {5, 9, 2, 11};
  size_t n = build(b, 0, 1 << 20, 4, 4, osts);
  EXPECT(n, 32 + 96);
  EXPECT(iochar_lustre_parse(b, n, &lo), 0);
  EXPECT(lo.version, 1);
  EXPECT(lo.pattern, 1);
  EXPECT(lo.stripe_size, 1 << 20);
  EXPECT(lo.stripe_count, 4);
  EXPECT(lo.first_ost, 5);

  n = build(b, 1, 4 << 20, 2, 2, osts + 2);
  EXPECT(iochar_lustre_parse(b, n, &lo), 0);
  EXPECT(lo.version, 3);
  EXPECT(lo.stripe_size, 4 << 20);
  EXPECT(lo.stripe_count, 2);
  EXPECT(lo.first_ost, 2);

  /* no objects listed yet: layout known, first OST not */
  n = build(b, 0, 65536, 8, 0, osts);
  EXPECT(iochar_lustre_parse(b, n, &lo), 0);
  EXPECT(lo.stripe_count, 8);
  EXPECT(lo.first_ost, -1);

  /* bad input: wrong magic, truncated headers, more entries than stripes */
  n = build(b, 0, 65536, 1, 1, osts);
  EXPECT(iochar_lustre_parse(b, 31, &lo), -1);
  EXPECT(iochar_lustre_parse(NULL, 64, &lo), -1);
  n = build(b, 1, 65536, 1, 0, osts);
  EXPECT(iochar_lustre_parse(b, 47, &lo), -1);
  n = build(b, 0, 65536, 1, 2, osts);
  EXPECT(iochar_lustre_parse(b, n, &lo), -1);
  put32(b, 0x0BD60BD0u); /* a composite layout: not decoded */
  EXPECT(iochar_lustre_parse(b, n, &lo), -1);

  /* longest matching mount point, whole components only */
  EXPECT(strcmp(iochar_fs_type("/lus/scratch/a"), "lustre"), 0);
  EXPECT(strcmp(iochar_fs_type("/lusx/a"), "nfs"), 0);
  EXPECT(strcmp(iochar_fs_type("/lustre2/a"), "ext4"), 0);
  EXPECT(strcmp(iochar_fs_type("/lus"), "lustre"), 0);
  EXPECT(iochar_on_lustre("/lus/scratch/a"), 1); /* the table has Lustre mounts */
  EXPECT(iochar_on_lustre("/lusx/a"), 0);
  EXPECT(iochar_on_lustre("/data/ssd/f"), 0);
  /* the per-thread directory cache: a directory of the same length is not
   * taken for the cached one; a directory holding a mount point is never
   * cached (its files may be mount points) */
  EXPECT(strcmp(iochar_fs_type("/lusx/b"), "nfs"), 0);
  EXPECT(strcmp(iochar_fs_type("/lusx/c"), "nfs"), 0);
  EXPECT(strcmp(iochar_fs_type("/lusy/a"), "ext4"), 0);
  EXPECT(strcmp(iochar_fs_type("/lus/scratch/b"), "lustre"), 0);
  EXPECT(strcmp(iochar_fs_type("/lus/b"), "lustre"), 0);
  EXPECT(strcmp(iochar_fs_type("/data/f"), "ext4"), 0);
  EXPECT(strcmp(iochar_fs_type("/data/ssd"), "xfs"), 0);
  EXPECT(strcmp(iochar_fs_type("/data/ssd/f"), "xfs"), 0);
  EXPECT(strcmp(iochar_fs_type("/data/g"), "ext4"), 0);

  if (failures) return 1;
  printf("unit_lustre: all passed\n");
  return 0;
}
