/* Integers read from a byte buffer at any alignment (a file's bytes read
 * into memory: the live file, a Lustre layout xattr), in the host's order,
 * which is the files' (little-endian: the live file is this host's memory,
 * lov_*_md is little-endian on the wire). */
#ifndef IOCHAR_BYTES_H
#define IOCHAR_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t iochar_u16_at(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static inline uint32_t iochar_u32_at(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t iochar_u64_at(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

#endif
