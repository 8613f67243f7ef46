/* Format 2's payload encodings (runtime/log_codec.c): RECORDS columns and
 * NAMES. */
#ifndef IOCHAR_LOG_CODEC_H
#define IOCHAR_LOG_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* Columnar RECORDS payload from n rows of rs bytes (log_sections.h: the
 * row layout), format 2; returns its length, at most
 * iochar_columns_bound(m, n); 0 when out of memory. */
size_t iochar_rows_to_columns(int m, const uint8_t *rows, size_t n, size_t rs, uint8_t *out);
size_t iochar_columns_bound(int m, size_t n);
/* NAMES format 2 from format-1 entries (u64 id, u32 len, path) in in[len];
 * returns its length, at most iochar_names_bound(len, count). */
size_t iochar_names_encode(const uint8_t *in, size_t len, uint32_t count, uint8_t *out);
size_t iochar_names_bound(size_t len, uint32_t count);

#endif
