/* The log's bytes (runtime/log_buf.c): a growable buffer, the header, one
 * compressed section. */
#ifndef IOCHAR_LOG_BUF_H
#define IOCHAR_LOG_BUF_H

#include <stddef.h>
#include <stdint.h>

/* Growable byte buffer used only at shutdown (malloc is fine there). */
typedef struct iochar_buf {
  uint8_t *p;
  size_t len, cap;
  int failed;
} iochar_buf;
void iochar_buf_put(iochar_buf *b, const void *p, size_t n);
/* Append n uninitialised bytes; their address, or NULL (b->failed set). */
void *iochar_buf_grow(iochar_buf *b, size_t n);
void iochar_buf_u8(iochar_buf *b, uint8_t v);
void iochar_buf_u16(iochar_buf *b, uint16_t v);
void iochar_buf_u32(iochar_buf *b, uint32_t v);
void iochar_buf_u64(iochar_buf *b, uint64_t v);
void iochar_buf_f64(iochar_buf *b, double v);
void iochar_buf_free(iochar_buf *b);

/* Log building blocks (runtime/log_buf.c); the MPI reducer uses them too. */
#define IOCHAR_HEADER_SIZE 32
/* a section header's most bytes: two names, three varints, two CRCs */
#define IOCHAR_SECTION_HEADER_MAX (1 + 8 + 1 + 16 + 3 * 10 + 4 + 4)
#define IOCHAR_FORMAT_VERSION 3 /* docs/log-format.md; readers still read 1 and 2 */
void iochar_log_header(uint8_t out[IOCHAR_HEADER_SIZE], uint64_t total, uint32_t nsections);
/* Compress raw into one section appended to out; returns 0 or -1. */
int iochar_section_add(iochar_buf *out, const char *kind, const char *module, uint32_t count,
                       const void *raw, size_t rawlen);

/* Timestamps are shifted by this much when written (MPI: local - global start). */
extern double iochar_ts_shift;

#endif
