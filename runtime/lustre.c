/* Lustre layouts from `lustre.lov` bytes (see lustre.h); iochar_fs_type is in
 * paths.c, next to the mount table. */
#include "lustre.h"

#include <string.h>

#include "internal.h"

#define LOV_MAGIC_V1 0x0BD10BD0u
#define LOV_MAGIC_V3 0x0BD30BD0u
/* lov_user_md_v1: u32 magic, u32 pattern, 16-byte object id, u32 stripe
 * size, u16 stripe count, u16 stripe offset / layout generation = 32 bytes;
 * v3 adds a 16-byte pool name (48).  Then one 24-byte entry per stripe:
 * 16-byte object id, u32 generation, u32 OST index. */
#define V1_HEAD 32
#define V3_HEAD 48
#define OST_ENTRY 24

static uint32_t u32_at(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint16_t u16_at(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}

int iochar_lustre_parse(const void *buf, size_t n, iochar_lustre_layout *out) {
  const uint8_t *p = buf;
  if (!p || n < V1_HEAD) return -1;
  uint32_t magic = u32_at(p);
  size_t head = magic == LOV_MAGIC_V1 ? V1_HEAD : magic == LOV_MAGIC_V3 ? V3_HEAD : 0;
  if (!head || n < head) return -1;
  out->version = magic == LOV_MAGIC_V1 ? 1 : 3;
  out->pattern = u32_at(p + 4);
  out->stripe_size = u32_at(p + 24);
  out->stripe_count = u16_at(p + 28);
  /* the entries are listed once objects exist (after the first write or a
   * layout set with objects); a count the bytes cannot hold is a bad layout */
  size_t listed = (n - head) / OST_ENTRY;
  if ((int64_t)listed > out->stripe_count) return -1;
  out->first_ost = listed ? (int64_t)u32_at(p + head + 20) : -1;
  return 0;
}
