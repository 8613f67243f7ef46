/* Unit tests of the Lustre layout decoder on hand-built lov_user_md bytes
 * (v1, v3 and composite, from the public struct layout), and of the mount
 * lookup. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "../runtime/lustre.h"
#include "../runtime/mounts.h"
#include "../runtime/paths.h"

#include "expect.h"

/* A fake mount table for iochar_fs_type: runtime/mounts.c reads
 * /proc/self/mounts with raw system calls, served here. */
static const char fake_mounts[] = "root / ext4 rw 0 0\n"
                                  "lus /lus lustre rw 0 0\n"
                                  "scratch /lus/scratch lustre rw 0 0\n"
                                  "srv:/x /lusx nfs rw 0 0\n"
                                  "ssd /data/ssd xfs rw 0 0\n";
static size_t fake_at;

long syscall(long n, ...) {
  va_list ap;
  va_start(ap, n);
  long fd = va_arg(ap, long), buf = va_arg(ap, long), len = va_arg(ap, long);
  va_end(ap);
  (void)fd;
  if (n == SYS_openat) return 99;
  if (n == SYS_close) return 0;
  if (n != SYS_read) {
    errno = ENOSYS;
    return -1;
  }
  size_t k = sizeof fake_mounts - 1 - fake_at;
  if (k > (size_t)len) k = (size_t)len;
  memcpy((char *)buf, fake_mounts + fake_at, k);
  fake_at += k;
  return (long)k;
}

/* runtime/core.c's guard and runtime/paths.c's note on the last resolved
 * name (none here). */
__thread int iochar_in_tool;
__thread iochar_path_note iochar_path_last;

static void put32(unsigned char *p, unsigned v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

static void put64(unsigned char *p, unsigned long long v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* lov_user_md: magic, pattern, 16-byte object id, stripe size, stripe count,
 * stripe offset; v3: a 16-byte pool name; then 24-byte OST entries (16-byte
 * object id, generation, OST index). Returns its length. */
static size_t layout(unsigned char *b, int v3, unsigned pattern, unsigned size, unsigned count,
                     int nost, const unsigned *ost) {
  put32(b, v3 ? 0x0BD30BD0u : 0x0BD10BD0u);
  put32(b + 4, pattern);
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

static size_t build(unsigned char *b, int v3, unsigned size, unsigned count, int nost,
                    const unsigned *ost) {
  memset(b, 0, 4096);
  return layout(b, v3, 1 /* RAID0 */, size, count, nost, ost);
}

/* lov_comp_md_v1 as Lustre packs it: a 32-byte header (magic, lcm_size,
 * layout generation, flags, entry count @14, mirror count - 1 @16), 48-byte
 * entries (id, flags @4, extent start @8 and end @16, offset @24 and size @28
 * of the component's layout), then the layouts in entry order. */
typedef struct comp {
  unsigned id, flags;
  unsigned long long start, end;
  int v3;
  unsigned pattern, size, count;
  int nost;
  const unsigned *ost;
} comp;
#define INIT 0x10u
#define STALE 0x01u
#define MDT 0x100u
#define EOF_ ~0ULL
#define MiB (1u << 20)

static size_t build_comp(unsigned char *b, const comp *c, int nc, unsigned mirrors) {
  memset(b, 0, 4096);
  put32(b, 0x0BD60BD0u);
  put32(b + 8, 9); /* layout generation: ignored */
  put16(b + 14, (unsigned)nc);
  put16(b + 16, mirrors - 1);
  size_t off = 32 + 48 * (size_t)nc;
  for (int i = 0; i < nc; i++) {
    unsigned char *e = b + 32 + 48 * i;
    put32(e, c[i].id);
    put32(e + 4, c[i].flags);
    put64(e + 8, c[i].start);
    put64(e + 16, c[i].end);
    size_t len = layout(b + off, c[i].v3, c[i].pattern, c[i].size, c[i].count, c[i].nost, c[i].ost);
    put32(e + 24, (unsigned)off);
    put32(e + 28, (unsigned)len);
    off += len;
  }
  put32(b + 4, (unsigned)off);
  return off;
}

/* Parse a copy of exactly n bytes, so that a read past them is caught by
 * ASan or valgrind (meson test --wrap='valgrind --error-exitcode=1'). */
static int parse_exact(const unsigned char *b, size_t n, iochar_lustre_layout *lo) {
  unsigned char *t = malloc(n ? n : 1);
  memcpy(t, b, n);
  int rc = iochar_lustre_parse(t, n, lo);
  free(t);
  return rc;
}

#define LAYOUT(lo, ver, size, count, first, ncomp) \
  do {                                             \
    EXPECT((lo).version, ver);                     \
    EXPECT((lo).stripe_size, size);                \
    EXPECT((lo).stripe_count, count);              \
    EXPECT((lo).first_ost, first);                 \
    EXPECT((lo).components, ncomp);                \
  } while (0)

/* Composite layouts: which component describes the file, and blobs that lie. */
static void composite_tests(void) {
  unsigned char b[4096];
  iochar_lustre_layout lo;
  const unsigned o1[] = {3}, o4[] = {5, 9, 2, 11}, o2[] = {0, 1}, o4b[] = {6, 7, 8, 9};
  /* the usual PFL: [0, 1M) 1 stripe, [1M, 1G) 4 stripes of 4 MiB, [1G, EOF)
   * 8 stripes of 16 MiB not instantiated yet */
  comp pfl[] = {{1, INIT, 0, MiB, 0, 1, MiB, 1, 1, o1},
                {2, INIT, MiB, 1024ull * MiB, 0, 1, 4 * MiB, 4, 4, o4},
                {3, 0, 1024ull * MiB, EOF_, 0, 1, 16 * MiB, 8, 0, NULL}};
  size_t n = build_comp(b, pfl, 3, 1);
  EXPECT(n, 32 + 3 * 48 + (32 + 24) + (32 + 96) + 32);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 1, 4 * MiB, 4, 5, 3);
  EXPECT(lo.pattern, 1);
  /* the attribute buffer may hold more than the layout (lcm_size) */
  EXPECT(iochar_lustre_parse(b, sizeof b, &lo), 0);
  LAYOUT(lo, 1, 4 * MiB, 4, 5, 3);
  /* a new file: only the first component instantiated */
  pfl[1].flags = 0, pfl[1].nost = 0;
  n = build_comp(b, pfl, 3, 1);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 1, MiB, 1, 3, 3);
  /* nothing instantiated (created with delayed layout): the first component */
  pfl[0].flags = 0, pfl[0].nost = 0;
  n = build_comp(b, pfl, 3, 1);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 1, MiB, 1, -1, 3);
  /* the whole file instantiated: the last component */
  pfl[0].flags = pfl[1].flags = pfl[2].flags = INIT, pfl[0].nost = 1, pfl[1].nost = 4;
  pfl[2].count = 4, pfl[2].nost = 4, pfl[2].ost = o4b;
  n = build_comp(b, pfl, 3, 1);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 1, 16 * MiB, 4, 6, 3);

  /* Data-on-MDT first: 64 KiB on the MDT, then a v3 component over "all"
   * OSTs (0xffff, resolved when instantiated) */
  comp dom[] = {{1, INIT, 0, 65536, 0, MDT, 65536, 0, 0, NULL},
                {2, 0, 65536, EOF_, 1, 1, MiB, 0xffff, 0, NULL}};
  n = build_comp(b, dom, 2, 1);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 3, MiB, -1, -1, 2);
  dom[1].flags = INIT, dom[1].count = 4, dom[1].nost = 4, dom[1].ost = o4;
  n = build_comp(b, dom, 2, 1);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 3, MiB, 4, 5, 2);
  /* a file wholly on the MDT: no OST striping */
  n = build_comp(b, dom, 1, 1);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 0, 0, 0, -1, 1);

  /* FLR: two mirrors of [0, EOF) (ids carry the mirror in bits 16-30); in
   * sync, the first listed; with it stale, the other */
  comp flr[] = {{0x10001, INIT, 0, EOF_, 0, 1, MiB, 2, 2, o2},
                {0x20002, INIT, 0, EOF_, 1, 1, 2 * MiB, 4, 4, o4b}};
  n = build_comp(b, flr, 2, 2);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 1, MiB, 2, 0, 2);
  flr[0].flags = INIT | STALE;
  n = build_comp(b, flr, 2, 2);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 3, 2 * MiB, 4, 6, 2);
  /* a mirrored PFL: mirror 1 [0, 1M) + [1M, EOF), mirror 2 [0, EOF) */
  comp mpfl[] = {{0x10001, INIT, 0, MiB, 0, 1, MiB, 1, 1, o1},
                 {0x10002, INIT, MiB, EOF_, 0, 1, 4 * MiB, 4, 4, o4},
                 {0x20003, INIT, 0, EOF_, 0, 1, 2 * MiB, 2, 2, o2}};
  n = build_comp(b, mpfl, 3, 2);
  EXPECT(parse_exact(b, n, &lo), 0);
  LAYOUT(lo, 1, 4 * MiB, 4, 5, 3);

  /* malformed: every truncation, with lcm_size as written (claims more than
   * the bytes) and rewritten to the truncated length (the table or the
   * layouts run past it) */
  comp good[] = {{1, INIT, 0, MiB, 0, 1, MiB, 1, 1, o1},
                 {2, INIT, MiB, 1024ull * MiB, 0, 1, 4 * MiB, 4, 4, o4},
                 {3, 0, 1024ull * MiB, EOF_, 0, 1, 16 * MiB, 8, 0, NULL}};
  size_t full = build_comp(b, good, 3, 1);
  int accepted = 0;
  for (size_t k = 0; k < full; k++) {
    accepted += parse_exact(b, k, &lo) == 0;
    unsigned char t[4096];
    memcpy(t, b, full);
    put32(t + 4, (unsigned)k);
    accepted += parse_exact(t, k, &lo) == 0;
  }
  EXPECT(accepted, 0);
  unsigned char t[4096];
#define BAD(what, at, v)                   \
  do {                                     \
    memcpy(t, b, full);                    \
    what(t + (at), v);                     \
    EXPECT(parse_exact(t, full, &lo), -1); \
  } while (0)
  EXPECT(parse_exact(b, full, &lo), 0);
  BAD(put16, 14, 0xffff);                /* entry count: far more than the bytes */
  BAD(put16, 14, 0);                     /* no entries */
  BAD(put16, 16, 3);                     /* 4 mirrors of 3 components */
  BAD(put32, 32 + 24, 0);                /* a layout inside the header */
  BAD(put32, 32 + 48 + 24, 32 + 3 * 48); /* overlapping the first one's */
  BAD(put32, 32 + 96 + 24, (unsigned)full);
  BAD(put32, 32 + 96 + 24, 0xffffffffu);
  BAD(put32, 32 + 96 + 28, 0xffffffe0u); /* a size that wraps the offset */
  BAD(put32, 32 + 28, 56 + 24);          /* size lies: into the next layout */
  BAD(put32, 32 + 28, 16);               /* size lies: shorter than a header */
  BAD(put32, 32 + 48 + 28, 128 - 24);    /* size lies: 3 of its 4 objects */
  BAD(put32, 32 + 48 + 28, 128 - 20);    /* size lies: not whole objects */
  BAD(put64, 32 + 8, 2ull * MiB);        /* extent starts after its end */
  BAD(put32, 32 + 3 * 48, 0x0BD90BD0u);  /* an unknown layout in a component */
  BAD(put32, 32 + 3 * 48, 0x0BD60BD0u);  /* a composite inside a composite */
  /* a component's size lies within the blob: the last layout claims 9
   * objects of 8 stripes */
  memcpy(t, b, full);
  put32(t + 32 + 96 + 28, 32 + 9 * 24);
  put32(t + 4, (unsigned)full + 9 * 24);
  EXPECT(parse_exact(t, full + 9 * 24, &lo), -1);
  put32(t + 32 + 96 + 28, 32 + 8 * 24); /* 8 objects of 8: consistent */
  put32(t + 4, (unsigned)full + 8 * 24);
  EXPECT(parse_exact(t, full + 8 * 24, &lo), 0);
  LAYOUT(lo, 1, 4 * MiB, 4, 5, 3);
#undef BAD
}

/* The component the accesses fell in: of the instantiated OST components, the
 * one holding most of the accessed bytes [0, hi); hi 0 (not known), or no such
 * component holding any of them, keeps the choice at open. */
static void extent_tests(void) {
  unsigned char b[4096];
  iochar_lustre_layout lo;
  const unsigned o1[] = {3}, o4[] = {5, 9, 2, 11}, o2[] = {0, 1}, o8[] = {20, 21, 22, 23};
  comp pfl[] = {{1, INIT, 0, MiB, 0, 1, MiB, 1, 1, o1},
                {2, INIT, MiB, 1024ull * MiB, 0, 1, 4 * MiB, 4, 4, o4},
                {3, INIT, 1024ull * MiB, EOF_, 0, 1, 16 * MiB, 4, 4, o8}};
  size_t n = build_comp(b, pfl, 3, 1);
  EXPECT(iochar_lustre_parse_for(b, n, 512 << 10, &lo), 0); /* within the first MiB */
  LAYOUT(lo, 1, MiB, 1, 3, 3);
  EXPECT(iochar_lustre_parse_for(b, n, MiB, &lo), 0); /* exactly the first component */
  LAYOUT(lo, 1, MiB, 1, 3, 3);
  EXPECT(iochar_lustre_parse_for(b, n, 2 * MiB, &lo), 0); /* 1 MiB each: the first listed */
  LAYOUT(lo, 1, MiB, 1, 3, 3);
  EXPECT(iochar_lustre_parse_for(b, n, 512ull * MiB, &lo), 0);
  LAYOUT(lo, 1, 4 * MiB, 4, 5, 3);
  EXPECT(iochar_lustre_parse_for(b, n, 8192ull * MiB, &lo), 0); /* 7 of 8 GiB in the last */
  LAYOUT(lo, 1, 16 * MiB, 4, 20, 3);
  EXPECT(iochar_lustre_parse_for(b, n, 0, &lo), 0); /* unknown: the highest instantiated */
  LAYOUT(lo, 1, 16 * MiB, 4, 20, 3);
  /* the last not instantiated: of the bytes the others hold, the second has most */
  pfl[2].flags = 0, pfl[2].nost = 0;
  n = build_comp(b, pfl, 3, 1);
  EXPECT(iochar_lustre_parse_for(b, n, 8192ull * MiB, &lo), 0);
  LAYOUT(lo, 1, 4 * MiB, 4, 5, 3);
  /* Data-on-MDT: bytes within the MDT part are on no OST component: the open's
   * choice stands */
  comp dom[] = {{1, INIT, 0, 65536, 0, MDT, 65536, 0, 0, NULL},
                {2, INIT, 65536, EOF_, 0, 1, MiB, 4, 4, o4}};
  n = build_comp(b, dom, 2, 1);
  EXPECT(iochar_lustre_parse_for(b, n, 32768, &lo), 0);
  LAYOUT(lo, 1, MiB, 4, 5, 2);
  /* mirrors of the same bytes: the first listed, unless stale */
  comp flr[] = {{0x10001, INIT, 0, EOF_, 0, 1, MiB, 2, 2, o2},
                {0x20002, INIT, 0, EOF_, 0, 1, 2 * MiB, 4, 4, o8}};
  n = build_comp(b, flr, 2, 2);
  EXPECT(iochar_lustre_parse_for(b, n, 64ull * MiB, &lo), 0);
  LAYOUT(lo, 1, MiB, 2, 0, 2);
  flr[0].flags = INIT | STALE;
  n = build_comp(b, flr, 2, 2);
  EXPECT(iochar_lustre_parse_for(b, n, 64ull * MiB, &lo), 0);
  LAYOUT(lo, 1, 2 * MiB, 4, 20, 2);
  /* a plain layout is itself whatever the extent */
  n = build(b, 0, 4 * MiB, 2, 2, o2);
  EXPECT(iochar_lustre_parse_for(b, n, 8192ull * MiB, &lo), 0);
  LAYOUT(lo, 1, 4 * MiB, 2, 0, 1);
}

/* The attribute iochar_lustre_read sees (this fgetxattr, defined in the
 * test program, is the one lustre.c's call binds to): a layout of `wide`
 * bytes, which grows once by 24 bytes (a stripe) after the size query when
 * `grows` is set, as a layout may between two calls. */
static unsigned char wide[400 * 24 + 64];
static size_t wide_len;
static int grows, queries;
ssize_t fgetxattr(int fd, const char *name, void *value, size_t size) {
  (void)fd;
  if (strcmp(name, "lustre.lov")) return errno = ENODATA, -1;
  if (size == 0) {
    queries++;
    return (ssize_t)wide_len;
  }
  if (grows && queries == 1) {
    grows = 0;
    unsigned char ost[4] = {0};
    put32(ost, 77);
    memcpy(wide + wide_len + 20, ost, 4);
    wide_len += 24;
    put16(wide + 28, (unsigned)(wide_len - 32) / 24);
  }
  if (size < wide_len) return errno = ERANGE, -1;
  memcpy(value, wide, wide_len);
  return (ssize_t)wide_len;
}

/* The same by name, for iochar_lustre_read_path (the end of the job): the
 * layout in `named` for "/lus/f", none for any other name. */
static unsigned char named[4096];
static size_t named_len;
ssize_t getxattr(const char *path, const char *name, void *value, size_t size) {
  if (strcmp(name, "lustre.lov") || strcmp(path, "/lus/f")) return errno = ENODATA, -1;
  if (size == 0) return (ssize_t)named_len;
  if (size < named_len) return errno = ERANGE, -1;
  memcpy(value, named, named_len);
  return (ssize_t)named_len;
}

#define COMP(c, s, e, size, count, pat, fl, mir) \
  do {                                           \
    EXPECT((c).start, s);                        \
    EXPECT((c).end, e);                          \
    EXPECT((c).stripe_size, size);               \
    EXPECT((c).stripe_count, count);             \
    EXPECT((c).pattern, pat);                    \
    EXPECT((c).flags, fl);                       \
    EXPECT((c).mirror, mir);                     \
  } while (0)

/* Every data component covering the accessed extent [0, hi) (what the log's
 * LUSTRE module's LUSTRE_COMP<N>_* carry): multi-component, mirrored, partly
 * instantiated, Data-on-MDT, more than the bound, and the order that lets
 * ranks' records combine slot by slot. */
static void components_tests(void) {
  unsigned char b[4096];
  iochar_lustre_comp c[IOCHAR_LUSTRE_MAX_COMPS + 2];
  const unsigned o1[] = {3}, o4[] = {5, 9, 2, 11}, o8[] = {20, 21, 22, 23}, o2[] = {0, 1};
  comp pfl[] = {{1, INIT, 0, MiB, 0, 1, MiB, 1, 1, o1},
                {2, INIT, MiB, 1024ull * MiB, 0, 1, 4 * MiB, 4, 4, o4},
                {3, INIT, 1024ull * MiB, EOF_, 0, 1, 16 * MiB, 4, 4, o8}};
  size_t n = build_comp(b, pfl, 3, 1);
  EXPECT(iochar_lustre_parse_comps(b, n, 0, c, 4), 0); /* nothing accessed */
  EXPECT(iochar_lustre_parse_comps(b, n, 512 << 10, c, 4), 1);
  COMP(c[0], 0, MiB, MiB, 1, 1, INIT, 0);
  EXPECT(iochar_lustre_parse_comps(b, n, MiB, c, 4), 1); /* [0, 1 MiB): the first only */
  EXPECT(iochar_lustre_parse_comps(b, n, MiB + 1, c, 4), 2);
  EXPECT(iochar_lustre_parse_comps(b, n, 8192ull * MiB, c, 4), 3);
  COMP(c[0], 0, MiB, MiB, 1, 1, INIT, 0);
  COMP(c[1], MiB, 1024ll * MiB, 4 * MiB, 4, 1, INIT, 0);
  COMP(c[2], 1024ll * MiB, -1, 16 * MiB, 4, 1, INIT, 0);           /* to the end of the file: -1 */
  EXPECT(iochar_lustre_parse_comps(b, n, 8192ull * MiB, c, 2), 2); /* a smaller bound */
  COMP(c[1], MiB, 1024ll * MiB, 4 * MiB, 4, 1, INIT, 0);
  /* partly instantiated: the last has no objects yet, the file never reached it */
  pfl[2].flags = 0, pfl[2].nost = 0;
  n = build_comp(b, pfl, 3, 1);
  EXPECT(iochar_lustre_parse_comps(b, n, 8192ull * MiB, c, 4), 2);
  COMP(c[1], MiB, 1024ll * MiB, 4 * MiB, 4, 1, INIT, 0);
  pfl[1].flags = 0, pfl[1].nost = 0; /* and a hole: only the first has objects */
  n = build_comp(b, pfl, 3, 1);
  EXPECT(iochar_lustre_parse_comps(b, n, 8192ull * MiB, c, 4), 1);

  /* Data-on-MDT then OSTs: the DOM part is a component (count 0, pattern MDT) */
  comp dom[] = {{1, INIT, 0, 65536, 0, MDT, 65536, 0, 0, NULL},
                {2, INIT, 65536, EOF_, 0, 1, MiB, 4, 4, o4}};
  n = build_comp(b, dom, 2, 1);
  EXPECT(iochar_lustre_parse_comps(b, n, 32768, c, 4), 1);
  COMP(c[0], 0, 65536, 65536, 0, MDT, INIT, 0);
  EXPECT(iochar_lustre_parse_comps(b, n, 2 * MiB, c, 4), 2);
  COMP(c[1], 65536, -1, MiB, 4, 1, INIT, 0);

  /* two mirrors (lcme_id: mirror id << 16 | component id), each a PFL of two:
   * sorted by extent, then mirror, so [0, 1 GiB) of both come first */
  comp flr[] = {{0x10001, INIT, 0, 1024ull * MiB, 0, 1, MiB, 2, 2, o2},
                {0x10002, INIT, 1024ull * MiB, EOF_, 0, 1, 4 * MiB, 4, 4, o4},
                {0x20003, INIT, 0, 1024ull * MiB, 1, 1, 2 * MiB, 1, 1, o1},
                {0x20004, INIT, 1024ull * MiB, EOF_, 1, 1, 8 * MiB, 4, 4, o8}};
  n = build_comp(b, flr, 4, 2);
  EXPECT(iochar_lustre_parse_comps(b, n, 64ull * MiB, c, 4), 2);
  COMP(c[0], 0, 1024ll * MiB, MiB, 2, 1, INIT, 1);
  COMP(c[1], 0, 1024ll * MiB, 2 * MiB, 1, 1, INIT, 2);
  iochar_lustre_comp big[IOCHAR_LUSTRE_MAX_COMPS];
  EXPECT(iochar_lustre_parse_comps(b, n, 4096ull * MiB, big, 4), 4);
  COMP(big[2], 1024ll * MiB, -1, 4 * MiB, 4, 1, INIT, 1);
  COMP(big[3], 1024ll * MiB, -1, 8 * MiB, 4, 1, INIT, 2);
  /* a rank that saw less holds the first of what another saw: slot by slot equal */
  EXPECT(memcmp(c, big, 2 * sizeof c[0]), 0);
  /* a stale mirror copy holds no current data */
  flr[2].flags = INIT | STALE, flr[3].flags = INIT | STALE;
  n = build_comp(b, flr, 4, 2);
  EXPECT(iochar_lustre_parse_comps(b, n, 4096ull * MiB, c, 4), 2);
  COMP(c[1], 1024ll * MiB, -1, 4 * MiB, 4, 1, INIT, 1);

  /* more covering components than the bound: the lowest four, in extent order
   * whatever the layout's order (here listed backwards) */
  comp six[6];
  for (int i = 0; i < 6; i++)
    six[i] = (comp){(unsigned)(i + 1),
                    INIT,
                    (5ull - (unsigned)i) * MiB,
                    i == 0 ? EOF_ : (6ull - (unsigned)i) * MiB,
                    0,
                    1,
                    (unsigned)(6 - i) * 65536u,
                    1,
                    1,
                    o1};
  n = build_comp(b, six, 6, 1);
  EXPECT(iochar_lustre_parse_comps(b, n, 64ull * MiB, c, 4), 4);
  for (int k = 0; k < 4; k++)
    COMP(c[k], k * (long long)MiB, (k + 1) * (long long)MiB, (k + 1) * 65536, 1, 1, INIT, 0);
  /* a plain layout has no components to list; bytes that lie: -1 */
  n = build(b, 0, 4 * MiB, 2, 2, o2);
  EXPECT(iochar_lustre_parse_comps(b, n, 64ull * MiB, c, 4), 0);
  n = build_comp(b, pfl, 3, 1);
  put32(b + 32 + 24, 8); /* the first layout inside the table */
  EXPECT(iochar_lustre_parse_comps(b, n, 64ull * MiB, c, 4), -1);

  /* by name, as lustre_finish reads it at the end (wrappers/posix.c) */
  iochar_lustre_layout lo;
  int k = -1;
  pfl[1].flags = INIT, pfl[1].nost = 4, pfl[2].flags = INIT, pfl[2].nost = 4;
  named_len = build_comp(named, pfl, 3, 1);
  EXPECT(iochar_lustre_read_path("/lus/f", 512ull * MiB, &lo, c, 4, &k), 0);
  EXPECT(k, 2);
  LAYOUT(lo, 1, 4 * MiB, 4, 5, 3); /* the one holding most of the extent */
  COMP(c[1], MiB, 1024ll * MiB, 4 * MiB, 4, 1, INIT, 0);
  EXPECT(iochar_lustre_read_path("/lus/gone", 512ull * MiB, &lo, c, 4, &k), -1);
  EXPECT(iochar_lustre_read_path(NULL, 512ull * MiB, &lo, c, 4, &k), -1);
}

/* Layouts past the 4 KiB first read: 300 stripes (7,232 bytes), and one
 * that grows between the size query and the read. */
static void wide_layout_tests(void) {
  static unsigned osts[400];
  iochar_lustre_layout lo;
  for (unsigned i = 0; i < 400; i++) osts[i] = 1000 + i;
  memset(wide, 0, sizeof wide);
  wide_len = layout(wide, 0, 1, 4 << 20, 300, 300, osts);
  EXPECT(wide_len, 32 + 300 * 24);
  EXPECT(iochar_lustre_read(3, &lo), 0);
  EXPECT(lo.stripe_count, 300);
  EXPECT(lo.stripe_size, 4 << 20);
  EXPECT(lo.first_ost, 1000);
  memset(wide, 0, sizeof wide);
  wide_len = layout(wide, 0, 1, 1 << 20, 200, 200, osts);
  grows = 1, queries = 0;
  EXPECT(iochar_lustre_read(3, &lo), 0);
  EXPECT(queries, 2);
  EXPECT(lo.stripe_count, 201);
  EXPECT(lo.first_ost, 1000);
}

int main(void) {
  wide_layout_tests();
  components_tests();
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
  EXPECT(lo.components, 1);

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
  EXPECT(iochar_lustre_parse(b, 3, &lo), -1);
  composite_tests();
  extent_tests();

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
