/* Call sites (runtime/callsites.c): where in the program each module's I/O
 * comes from, per stack, and the log's CALLSITE and LOADMAP sections. */
#ifndef IOCHAR_CALLSITES_H
#define IOCHAR_CALLSITES_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

struct iochar_buf;

#define IOCHAR_CS_FRAMES 6  /* frames kept per site, above the tool's own */
#define IOCHAR_CS_SITES 64  /* sites per module per process (+ 'other') */
#define IOCHAR_CS_SIZES 4   /* distinct access sizes kept per site */
#define IOCHAR_CS_SAMPLE 64 /* default: re-walk every N-th call of a cached key */

/* One CALLSITE entry exactly as the log carries it (docs/log-format.md):
 * 248 bytes, all fields naturally aligned, little-endian. */
typedef struct iochar_cs_entry {
  uint64_t hash;    /* stack hash (module + normalized frames); 0: 'other' */
  uint32_t nframes; /* frames used (0..IOCHAR_CS_FRAMES) */
  uint32_t nranks;  /* ranks that reported this stack */
  int64_t ops[3];   /* reads, writes, metadata calls */
  int64_t bytes[2]; /* read, written */
  double time[3];   /* seconds in read, write, metadata calls */
  int64_t size[IOCHAR_CS_SIZES], size_count[IOCHAR_CS_SIZES]; /* count desc */
  int64_t size_other; /* data ops whose size is not among the four */
  struct {
    uint64_t object; /* LOADMAP object key; 0: outside any loaded object */
    uint64_t vaddr;  /* return address - load base of the object */
  } frame[IOCHAR_CS_FRAMES];
} iochar_cs_entry;
_Static_assert(sizeof(iochar_cs_entry) == 248, "CALLSITE entry is 248 bytes");

int iochar_callsites_init(int sample_every);
void iochar_callsites_note(iochar_record *r, int op, int64_t len, double t0, double t1);
void iochar_callsites_reset(void); /* fork child */
/* This process's sites of module m, normalized (frames as object + vaddr),
 * the 'other' bucket last when not empty; malloc'd array, *n entries. */
iochar_cs_entry *iochar_callsites_export(int m, size_t *n);
/* LOADMAP entries (one per object key in keys[0..n)) of this process's
 * objects; *count gets the number written. */
int iochar_loadmap_put(struct iochar_buf *b, const uint64_t *keys, size_t n, uint32_t *count);
/* Stack hash of an entry's module and frames (so ranks agree). */
uint64_t iochar_cs_hash(int m, const iochar_cs_entry *e);
/* Add src into dst (same stack): sums, and the size tables merged by value. */
void iochar_cs_merge(iochar_cs_entry *dst, const iochar_cs_entry *src);
/* CALLSITE per module + LOADMAP of this process (serial log). */
int iochar_callsites_sections(struct iochar_buf *out, int *nsections);

/* 1 once call sites are being recorded (runtime/observe.c sets it). */
extern int iochar_callsites_on;

#endif
