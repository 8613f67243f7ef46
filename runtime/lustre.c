/* Lustre layouts from `lustre.lov` bytes (see lustre.h); iochar_fs_type is in
 * mounts.c, with the mount table. */
#include "lustre.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/xattr.h>

#include "bytes.h"

/* Facts from Lustre's public user header, lustre-release
 * lustre/include/uapi/linux/lustre/lustre_user.h (lov_user_md_v1/v3,
 * lov_user_ost_data_v1, lov_comp_md_v1, lov_comp_md_entry_v1, lu_extent);
 * the sizes below hold from 2.10, which brought composite layouts, to today's
 * master, where later fields only took over padding.
 *
 * lov_user_md_v1: u32 magic, u32 pattern, 16-byte object id, u32 stripe size
 * @24, u16 stripe count @28, u16 stripe offset / layout generation @30 = 32
 * bytes; v3 adds a 16-byte pool name (48).  Then one 24-byte entry per listed
 * stripe: 16-byte object id, u32 generation, u32 OST index @20.
 *
 * lov_comp_md_v1: u32 magic, u32 lcm_size @4 (the whole blob), u32 layout
 * generation, u16 flags, u16 lcm_entry_count @14, u16 lcm_mirror_count @16
 * (mirrors - 1), padding to 32 bytes; then lcm_entry_count 48-byte entries:
 * u32 lcme_id, u32 lcme_flags @4, lcme_extent as u64 start @8 and end @16
 * ([start, end), end ~0 for EOF), u32 lcme_offset @24 and u32 lcme_size @28
 * (the component's v1/v3 layout, from the start of the blob), then layout
 * generation, timestamp and erasure-coding/compression bytes up to 48.
 * Lustre packs the components' layouts after the table in entry order, each
 * listing all its stripes once instantiated and none before (lov_lsm_pack,
 * lov/lov_pack.c), so a blob whose layouts go backwards, overlap or list some
 * stripes is not one Lustre wrote. */
#define LOV_MAGIC_V1 0x0BD10BD0u
#define LOV_MAGIC_V3 0x0BD30BD0u
#define LOV_MAGIC_COMP_V1 0x0BD60BD0u
#define LOV_MAGIC_FOREIGN 0x0BD70BD0u
#define V1_HEAD 32
#define V3_HEAD 48
#define OST_ENTRY 24
#define COMP_HEAD 32
#define COMP_ENTRY 48
#define PATTERN_MDT 0x100u /* Data-on-MDT: the component's bytes live on the MDT */
#define FL_STALE 0x01u     /* FLR: a mirror's out-of-date copy, not read or written */
#define FL_INIT 0x10u      /* instantiated: its OST objects exist */
#define FL_EXTENSION 0x40u /* self-extending layouts: a placeholder, never instantiated */
#define FL_PARITY 0x80u    /* erasure coding: parity, not file data */
/* Stripe counts from 0xffe0 up are requests ("all OSTs", N per OST), resolved
 * when the component is instantiated (LOV_ALL_STRIPES_WIDE..LOV_ALL_STRIPES). */
#define COUNT_REQUEST 0xffe0u

/* A v1/v3 layout in exactly n bytes. */
static int plain(const uint8_t *p, size_t n, iochar_lustre_layout *out) {
  if (n < V1_HEAD) return -1;
  uint32_t magic = iochar_u32_at(p);
  size_t head = magic == LOV_MAGIC_V1 ? V1_HEAD : magic == LOV_MAGIC_V3 ? V3_HEAD : 0;
  if (!head || n < head) return -1;
  out->version = magic == LOV_MAGIC_V1 ? 1 : 3;
  out->pattern = iochar_u32_at(p + 4);
  out->stripe_size = iochar_u32_at(p + 24);
  out->stripe_count = iochar_u16_at(p + 28);
  /* the entries are listed once objects exist (after the first write or a
   * layout set with objects); a count the bytes cannot hold is a bad layout */
  size_t listed = (n - head) / OST_ENTRY;
  if ((int64_t)listed > out->stripe_count) return -1;
  out->first_ost = listed ? (int64_t)iochar_u32_at(p + head + 20) : -1;
  out->components = 1;
  return 0;
}

/* A composite layout is described by one component that stores file data
 * on OSTs (not DOM, stale, parity or an extension placeholder).  When the
 * bytes the job accessed are known ([0, hi), hi > 0: at a close), the
 * instantiated one holding most of them: where the accesses fell.  Else the
 * instantiated one covering the highest extent, which holds the end of the
 * file's data, where appends and the large offsets of a big file land, and
 * in a progressive layout the widest striping the file has reached; else,
 * when none is instantiated yet, the lowest-starting one, where the first
 * bytes past any DOM part will go. Ties (mirrors) go to the first listed. */
/* a before b in the order of iochar_lustre_parse_comps (i, j: places in the layout) */
static int comp_before(const iochar_lustre_comp *a, size_t i, const iochar_lustre_comp *b,
                       size_t j) {
  if (a->start != b->start) return a->start < b->start;
  return a->mirror != b->mirror ? a->mirror < b->mirror : i < j;
}

/* comps: when not NULL, the data components covering [0, hi), the `max`
 * lowest, sorted (kept by insertion: a layout lists a few), count in *ncomp. */
static int composite(const uint8_t *p, size_t n, uint64_t hi, iochar_lustre_layout *out,
                     iochar_lustre_comp *comps, int max, int *ncomp) {
  size_t at[IOCHAR_LUSTRE_MAX_COMPS]; /* the kept ones' places in the layout */
  int kept = 0;
  if (max > IOCHAR_LUSTRE_MAX_COMPS) max = IOCHAR_LUSTRE_MAX_COMPS;
  if (n < COMP_HEAD) return -1;
  size_t size = iochar_u32_at(p + 4), count = iochar_u16_at(p + 14),
         mirrors = (size_t)iochar_u16_at(p + 16) + 1;
  if (size > n || count == 0 || mirrors > count || size < COMP_HEAD + count * COMP_ENTRY) return -1;
  size_t end = COMP_HEAD + count * COMP_ENTRY; /* where the next layout may start */
  iochar_lustre_layout best = {0, 0, 0, 0, -1, 0}, lo, held = best;
  int found = 0, best_init = 0;
  uint64_t best_start = 0, most = 0; /* bytes of [0, hi) the `held` one holds */
  for (size_t i = 0; i < count; i++) {
    const uint8_t *e = p + COMP_HEAD + i * COMP_ENTRY;
    uint32_t flags = iochar_u32_at(e + 4);
    uint64_t start = iochar_u64_at(e + 8), stop = iochar_u64_at(e + 16);
    size_t off = iochar_u32_at(e + 24), len = iochar_u32_at(e + 28);
    if (start > stop || off < end || off > size || len > size - off || len < 4) return -1;
    end = off + len;
    if (iochar_u32_at(p + off) == LOV_MAGIC_FOREIGN) continue; /* e.g. an HSM copy: no OSTs */
    if (plain(p + off, len, &lo)) return -1;
    /* exactly a header and none or all of its stripes, as Lustre packs it */
    size_t objs = len - (lo.version == 1 ? V1_HEAD : V3_HEAD);
    if (objs % OST_ENTRY || (objs && (int64_t)(objs / OST_ENTRY) != lo.stripe_count)) return -1;
    if (flags & (FL_STALE | FL_EXTENSION | FL_PARITY)) continue; /* no current data */
    int init = (flags & FL_INIT) != 0;
    if (comps && init && hi > start && max > 0) { /* Data-on-MDT too: the file's bytes */
      iochar_lustre_comp c = {.start = (int64_t)start,
                              .end = stop == UINT64_MAX ? -1 : (int64_t)stop,
                              .stripe_size = lo.stripe_size,
                              .stripe_count = lo.stripe_count,
                              .pattern = lo.pattern,
                              .flags = flags,
                              .mirror =
                                  (int64_t)(iochar_u32_at(e) >> 16)}; /* mirror_id_of(lcme_id) */
      int k = kept < max ? kept++ : max; /* where it goes, from the end */
      while (k > 0 && comp_before(&c, i, &comps[k - 1], at[k - 1])) {
        if (k < max) comps[k] = comps[k - 1], at[k] = at[k - 1];
        k--;
      }
      if (k < max) comps[k] = c, at[k] = i;
    }
    if (lo.pattern & PATTERN_MDT) continue; /* the one component described is on OSTs */
    uint64_t got = init && hi > start ? (hi < stop ? hi : stop) - start : 0;
    if (got > most) held = lo, most = got; /* strictly more: mirrors tie to the first */
    if (!found || init > best_init ||
        (init == best_init && (init ? start > best_start : start < best_start))) {
      if (!init && (lo.stripe_count == 0 || lo.stripe_count >= COUNT_REQUEST))
        lo.stripe_count = -1; /* the file system's default or "all": not known yet */
      best = lo, best_init = init, best_start = start, found = 1;
    }
  }
  if (most) best = held;
  best.components = (int64_t)count;
  *out = best;
  if (ncomp) *ncomp = kept;
  return 0;
}

int iochar_lustre_parse_for(const void *buf, size_t n, uint64_t hi, iochar_lustre_layout *out) {
  const uint8_t *p = buf;
  iochar_lustre_layout lo = {0};
  if (!p || n < 4) return -1;
  if (iochar_u32_at(p) == LOV_MAGIC_COMP_V1 ? composite(p, n, hi, &lo, NULL, 0, NULL)
                                            : plain(p, n, &lo))
    return -1;
  *out = lo;
  return 0;
}

int iochar_lustre_parse(const void *buf, size_t n, iochar_lustre_layout *out) {
  return iochar_lustre_parse_for(buf, n, 0, out);
}

/* Both decodings at once (iochar_lustre_read_path). */
static int parse_all(const uint8_t *p, size_t n, uint64_t hi, iochar_lustre_layout *out,
                     iochar_lustre_comp *comps, int max, int *ncomp) {
  iochar_lustre_layout lo = {0};
  int k = 0;
  if (!p || n < 4) return -1;
  if (iochar_u32_at(p) == LOV_MAGIC_COMP_V1 ? composite(p, n, hi, &lo, comps, max, &k)
                                            : plain(p, n, &lo))
    return -1;
  *out = lo;
  *ncomp = k;
  return 0;
}

int iochar_lustre_parse_comps(const void *buf, size_t n, uint64_t hi, iochar_lustre_comp *out,
                              int max) {
  iochar_lustre_layout lo;
  int k = 0;
  return parse_all(buf, n, hi, &lo, out, max, &k) ? -1 : k;
}

/* The attribute's largest size worth a mapping (a 2,000-stripe layout is
 * ~48 KiB; the kernel caps an xattr value at 64 KiB). */
#define LOV_MAX (1 << 20)

/* The attribute of fd (path NULL) or of path, decoded: parse_all's answer. */
static ssize_t get_lov(int fd, const char *path, void *buf, size_t len) {
  return path ? getxattr(path, "lustre.lov", buf, len) : fgetxattr(fd, "lustre.lov", buf, len);
}

static int read_lov(int fd, const char *path, uint64_t hi, iochar_lustre_layout *out,
                    iochar_lustre_comp *comps, int max, int *ncomp) {
  uint8_t lov[4096];
  ssize_t n = get_lov(fd, path, lov, sizeof lov);
  if (n > 0) return parse_all(lov, (size_t)n, hi, out, comps, max, ncomp);
  if (n == 0 || errno != ERANGE) return -1;
  /* Larger than the stack buffer: ask its size, then read it whole (it
   * may grow meanwhile: one more try). */
  for (int tries = 0; tries < 2; tries++) {
    ssize_t want = get_lov(fd, path, NULL, 0);
    if (want <= 0 || want > LOV_MAX) return -1;
    size_t len = (size_t)want;
    void *big = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (big == MAP_FAILED) return -1;
    n = get_lov(fd, path, big, len);
    int rc = n > 0 ? parse_all(big, (size_t)n, hi, out, comps, max, ncomp) : -1;
    int again = n < 0 && errno == ERANGE;
    munmap(big, len);
    if (!again) return rc;
  }
  return -1;
}

int iochar_lustre_read(int fd, iochar_lustre_layout *out) {
  int k;
  return read_lov(fd, NULL, 0, out, NULL, 0, &k);
}

int iochar_lustre_read_path(const char *path, uint64_t hi, iochar_lustre_layout *out,
                            iochar_lustre_comp *comps, int max, int *ncomp) {
  return path ? read_lov(-1, path, hi, out, comps, max, ncomp) : -1;
}
