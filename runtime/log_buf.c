/* The log's bytes: the growable buffer every writer of a log fills, the
 * header, and one compressed section (docs/log-format.md is the byte
 * layout; reports/iochar/log.py is the mirror).  Below everything that
 * writes a log: the serial writer, the sections, call sites, the trace and
 * the MPI reducer. */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "log_buf.h"

#include "log_codec.h"
#include "log_dict.h"

double iochar_ts_shift;

/* ---- buffers ------------------------------------------------------------ */

void *iochar_buf_grow(iochar_buf *b, size_t n) {
  if (b->failed) return NULL;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    if (!q) {
      b->failed = 1;
      return NULL;
    }
    b->p = q;
    b->cap = cap;
  }
  void *at = b->p + b->len;
  b->len += n;
  return at;
}

void iochar_buf_put(iochar_buf *b, const void *p, size_t n) {
  void *at = iochar_buf_grow(b, n);
  if (at && n) memcpy(at, p, n);
}
/* Little-endian on every platform iochar targets (x86-64, aarch64). */
void iochar_buf_u8(iochar_buf *b, uint8_t v) { iochar_buf_put(b, &v, 1); }
void iochar_buf_u16(iochar_buf *b, uint16_t v) { iochar_buf_put(b, &v, 2); }
void iochar_buf_u32(iochar_buf *b, uint32_t v) { iochar_buf_put(b, &v, 4); }
void iochar_buf_u64(iochar_buf *b, uint64_t v) { iochar_buf_put(b, &v, 8); }
void iochar_buf_f64(iochar_buf *b, double v) { iochar_buf_put(b, &v, 8); }
void iochar_buf_free(iochar_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* ---- header and sections ------------------------------------------------ */

void iochar_log_header(uint8_t out[IOCHAR_HEADER_SIZE], uint64_t total, uint32_t nsections) {
  uint32_t version = IOCHAR_FORMAT_VERSION, hsize = IOCHAR_HEADER_SIZE;
  memcpy(out, "IOCHARLG", 8);
  memcpy(out + 8, &version, 4);
  memcpy(out + 12, &hsize, 4);
  memcpy(out + 16, &total, 8);
  memcpy(out + 24, &nsections, 4);
  uint32_t crc = (uint32_t)crc32(0, out, 28);
  memcpy(out + 28, &crc, 4);
}

/* Small payloads (JOB, MOUNTS, SCHEMA, RANKS, a small job's NAMES and
 * RECORDS: a dozen sections in most logs) are compressed from a copy of one
 * stream taken right after the dictionary was loaded: loading it (hashing its
 * 12 KB) and clearing a full-size hash table cost more than compressing such
 * a payload.  That stream has a 16 KB window (the dictionary and a small
 * payload fit) and a smaller hash, so the copy is cheap too: 15 us a section
 * where a fresh level-9 stream took 53.  The copies' buffers are kept for the
 * next section (small_alloc): freed, they went back to the kernel and came
 * back as fresh zeroed pages, a dozen times a log.  Built at the first log
 * write; the lock covers the template, the copies and their buffers. */
#define SMALL_PAYLOAD 8192
static z_stream small_tpl;
static int small_tpl_ok;
static pthread_mutex_t small_tpl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *p;
  size_t n;
} small_kept[8]; /* a copy takes 5 buffers: state, window, prev, head, pending */

/* The smallest kept buffer that fits, else a new one. */
static voidpf small_alloc(voidpf opaque, uInt items, uInt size) {
  (void)opaque;
  size_t n = (size_t)items * size, best = SIZE_MAX, at = 0;
  for (size_t i = 0; i < sizeof small_kept / sizeof *small_kept; i++)
    if (small_kept[i].p && small_kept[i].n >= n && small_kept[i].n < best)
      best = small_kept[i].n, at = i;
  if (best == SIZE_MAX) return malloc(n ? n : 1);
  void *p = small_kept[at].p;
  small_kept[at].p = NULL;
  return p;
}

static void small_free(voidpf opaque, voidpf p) {
  (void)opaque;
  for (size_t i = 0; i < sizeof small_kept / sizeof *small_kept; i++)
    if (!small_kept[i].p) {
      small_kept[i].p = p;
      small_kept[i].n = malloc_usable_size(p);
      return;
    }
  free(p);
}

static int deflate_start(z_stream *zs, int level, int wbits, int memlevel) {
  if (deflateInit2(zs, level, Z_DEFLATED, wbits, memlevel, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
  if (deflateSetDictionary(zs, iochar_log_dictionary, (uInt)iochar_log_dictionary_len) != Z_OK) {
    deflateEnd(zs);
    return -1;
  }
  return 0;
}

static int deflate_run(z_stream *zs, const void *raw, size_t rawlen, uint8_t *z, uLongf *clen) {
  zs->next_in = (Bytef *)(uintptr_t)(raw ? raw : (const void *)"");
  zs->avail_in = (uInt)rawlen;
  zs->next_out = z;
  zs->avail_out = (uInt)*clen;
  int rc = deflate(zs, Z_FINISH);
  *clen = zs->total_out;
  deflateEnd(zs);
  return rc == Z_STREAM_END ? 0 : -1;
}

/* One raw deflate stream (the section CRC covers it) against the preset
 * dictionary.  The level by size, measured on IOR and 16 x 1,000-file logs:
 * small payloads at 8 (the dictionary pays most there; 9 searched its hash
 * chains 3x longer for at most a byte a log), up to 64 KB at 6 (NAMES and a
 * rank's RECORDS: 9 took 4x the time for +-0.01% of bytes), 1 beyond.
 * runs: a SERIES payload (4 KB, mostly zero bins), where run-length matching
 * takes 3.5 us instead of 55 for 3-4 bytes more. */
static int deflate_all(const void *raw, size_t rawlen, uint8_t *z, uLongf *clen, int runs) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (rawlen > SMALL_PAYLOAD)
    return deflate_start(&zs, rawlen < (64u << 10) ? 6 : 1, -15, 9)
               ? -1
               : deflate_run(&zs, raw, rawlen, z, clen);
  /* Busy (another thread writes a log now, or a fork child inherited the
   * lock held): a stream of its own, same bytes. */
  if (pthread_mutex_trylock(&small_tpl_lock) != 0) {
    if (deflate_start(&zs, 8, -14, 7)) return -1;
    if (runs && deflateParams(&zs, 8, Z_RLE) != Z_OK) return deflateEnd(&zs), -1;
    return deflate_run(&zs, raw, rawlen, z, clen);
  }
  if (!small_tpl_ok) {
    small_tpl.zalloc = small_alloc;
    small_tpl.zfree = small_free;
    small_tpl_ok = deflate_start(&small_tpl, 8, -14, 7) == 0;
  }
  int rc = -1;
  if (small_tpl_ok && deflateCopy(&zs, &small_tpl) == Z_OK) { /* takes small_alloc along */
    if (runs && deflateParams(&zs, 8, Z_RLE) != Z_OK)         /* before any input: no flush */
      deflateEnd(&zs);
    else
      rc = deflate_run(&zs, raw, rawlen, z, clen);
  }
  pthread_mutex_unlock(&small_tpl_lock);
  return rc;
}

static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  for (; v >= 0x80; v >>= 7) p[n++] = (uint8_t)(v | 0x80);
  p[n++] = (uint8_t)v;
  return n;
}

int iochar_section_add(iochar_buf *out, const char *kind, const char *module, uint32_t count,
                       const void *raw, size_t rawlen) {
  uint8_t *names = NULL; /* NAMES entries are built as format 1, encoded here */
  if (strcmp(kind, "NAMES") == 0) {
    names = malloc(iochar_names_bound(rawlen, count));
    if (!names) return -1;
    rawlen = iochar_names_encode(raw, rawlen, count, names);
    raw = names;
  }
  uLongf clen = compressBound(rawlen) + 16;
  uint8_t *z = malloc(clen);
  if (!z || rawlen > UINT32_MAX || deflate_all(raw, rawlen, z, &clen, !strcmp(kind, "SERIES")) ||
      clen > UINT32_MAX) {
    free(z), free(names);
    return -1;
  }
  free(names);
  /* Format 3's section header (docs/log-format.md): kind and module as
   * length-prefixed names, count, raw and compressed lengths as LEB128
   * varints, then the payload's and the header's CRC-32: ~24 bytes where
   * format 2 spent a fixed 48, a sixth of a small job's log. */
  uint8_t h[IOCHAR_SECTION_HEADER_MAX];
  size_t hn = 0, kn = strnlen(kind, 8), mn = module ? strnlen(module, 16) : 0;
  h[hn++] = (uint8_t)kn;
  memcpy(h + hn, kind, kn), hn += kn;
  h[hn++] = (uint8_t)mn;
  if (mn) memcpy(h + hn, module, mn), hn += mn;
  hn += put_varint(h + hn, count);
  hn += put_varint(h + hn, rawlen);
  hn += put_varint(h + hn, clen);
  uint32_t pcrc = (uint32_t)crc32(0, z, clen);
  memcpy(h + hn, &pcrc, 4), hn += 4;
  uint32_t hcrc = (uint32_t)crc32(0, h, (uInt)hn);
  memcpy(h + hn, &hcrc, 4), hn += 4;
  iochar_buf_put(out, h, hn);
  iochar_buf_put(out, z, clen);
  free(z);
  return out->failed ? -1 : 0;
}
