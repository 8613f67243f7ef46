/* Call-site attribution: short stacks from libunwind's unw_backtrace (loaded
 * at run time), a bounded site table per module, and the load map that lets
 * the report symbolize the stacks offline. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "callsites.h"
#include "core.h"
#include "log_buf.h"
#include "warn.h"

int iochar_callsites_on;

#define WALK_DEPTH 24 /* raw frames walked: the tool's own (~4) + those kept */
#define TCACHE 32     /* per-thread (key -> site) entries, direct mapped */
#define OTHER IOCHAR_CS_SITES

typedef struct site {
  _Atomic uint64_t key; /* raw stack hash; 0: free slot */
  int nframes;
  uintptr_t ip[IOCHAR_CS_FRAMES];
  _Atomic int64_t ops[3], bytes[2], ns[3];
  _Atomic int64_t size[IOCHAR_CS_SIZES]; /* size + 1; 0: free */
  _Atomic int64_t size_count[IOCHAR_CS_SIZES], size_other;
} site;

/* Preallocated: no allocation ever happens on the I/O path. */
static site table[IOCHAR_MOD_COUNT][IOCHAR_CS_SITES + 1];
static int (*walk)(void **, int);
static int sample_every;
static unsigned cache_gen = 1; /* bumped in a fork child: drop thread caches */

/* Text ranges whose frames are never kept: libiochar itself and libunwind. */
static uintptr_t skip_lo[8], skip_hi[8];
static int nskip;

typedef struct tcache_ent {
  uint64_t key;
  uint32_t gen;
  uint16_t site, left;
} tcache_ent;
static __thread tcache_ent tcache[TCACHE] __attribute__((tls_model("initial-exec")));

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const uint8_t *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}
#define FNV0 0xcbf29ce484222325ull

static uint64_t mix(uint64_t x) { /* splitmix64 finalizer */
  x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27, x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* ---- start-up: libunwind and our own text ------------------------------- */

typedef struct find_ctx {
  uintptr_t addr;
} find_ctx;

static int add_exec_ranges(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  uintptr_t a = ((find_ctx *)arg)->addr;
  int hit = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_LOAD && a >= lo && a < lo + p->p_memsz) hit = 1;
  }
  if (!hit) return 0;
  for (int i = 0; i < info->dlpi_phnum && nskip < 8; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)) continue;
    skip_lo[nskip] = info->dlpi_addr + p->p_vaddr;
    skip_hi[nskip++] = info->dlpi_addr + p->p_vaddr + p->p_memsz;
  }
  return 1;
}

static void skip_object_of(const void *addr) {
  find_ctx x = {(uintptr_t)addr};
  dl_iterate_phdr(add_exec_ranges, &x);
}

int iochar_callsites_init(int every) {
  /* dlopen, not a link-time dependency: libunwind exports backtrace() and
   * _Unwind_*; loaded RTLD_LOCAL they can never replace the application's. */
  void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
  if (h) walk = (int (*)(void **, int))dlsym(h, "unw_backtrace");
  if (!walk) {
    iochar_warn_once(IOCHAR_WARN_CALLSITES_UNWIND,
                     "IOCHAR_CALLSITES: libunwind not found; no call sites");
    return -1;
  }
  sample_every = every;
  skip_object_of((const void *)iochar_callsites_init);
  skip_object_of((const void *)walk);
  return 0;
}

void iochar_callsites_reset(void) {
  memset(table, 0, sizeof table);
  cache_gen++;
}

/* ---- the I/O path --------------------------------------------------------- */

static int skipped(uintptr_t ip) {
  for (int i = 0; i < nskip; i++)
    if (ip >= skip_lo[i] && ip < skip_hi[i]) return 1;
  return 0;
}

/* Walk the stack and find (or claim) the site; OTHER when the table is full.
 * The walk touches only this thread's stack and libunwind's per-thread cache. */
static int capture(int m) {
  void *raw[WALK_DEPTH];
  uintptr_t ip[IOCHAR_CS_FRAMES];
  int n = walk(raw, WALK_DEPTH), k = 0;
  for (int i = 0; i < n && k < IOCHAR_CS_FRAMES; i++)
    if (!skipped((uintptr_t)raw[i])) ip[k++] = (uintptr_t)raw[i];
  uint64_t h = mix(fnv(FNV0 ^ (uint64_t)m, ip, sizeof(uintptr_t) * (size_t)k)) | 1;
  site *t = table[m];
  for (int j = 0; j < IOCHAR_CS_SITES; j++) {
    int idx = (int)((h + (uint64_t)j) % IOCHAR_CS_SITES);
    uint64_t cur = atomic_load_explicit(&t[idx].key, memory_order_acquire);
    if (cur == h) return idx;
    if (cur == 0) {
      /* Frames first, then the key: a reader that sees the key sees them. */
      if (atomic_compare_exchange_strong(&t[idx].key, &cur, h)) {
        t[idx].nframes = k;
        memcpy(t[idx].ip, ip, sizeof(uintptr_t) * (size_t)k);
        return idx;
      }
      if (cur == h) return idx;
    }
  }
  return OTHER;
}

static int size_class(int64_t len) { return len <= 0 ? 0 : 64 - __builtin_clzll((uint64_t)len); }

static void account(site *s, int op, int64_t len, double dt) {
  atomic_fetch_add_explicit(&s->ops[op], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->ns[op], (int64_t)(dt * 1e9), memory_order_relaxed);
  if (op > 1 || len < 0) return;
  atomic_fetch_add_explicit(&s->bytes[op], len, memory_order_relaxed);
  for (int i = 0; i < IOCHAR_CS_SIZES; i++) {
    int64_t v = atomic_load_explicit(&s->size[i], memory_order_relaxed);
    if (v == 0 && atomic_compare_exchange_strong(&s->size[i], &v, len + 1)) v = len + 1;
    if (v == len + 1) {
      atomic_fetch_add_explicit(&s->size_count[i], 1, memory_order_relaxed);
      return;
    }
  }
  atomic_fetch_add_explicit(&s->size_other, 1, memory_order_relaxed);
}

/* Sampling: the first read or write of each (module, file, direction, size
 * class) in a thread walks the stack; later ones reuse that site, and every
 * sample_every-th walks again so a file accessed from several places with
 * one size is attributed to each in proportion.  Metadata calls (open, close,
 * stat, seek...) have no size to tell their call sites apart, so they always
 * walk: a cached walk (~0.2 us) is small next to the syscall itself. */
void iochar_callsites_note(iochar_record *r, int op, int64_t len, double t0, double t1) {
  int m = r->module;
  uint64_t key =
      mix(r->id ^ ((uint64_t)m << 56) ^ ((uint64_t)op << 48) ^ (uint64_t)size_class(len)) | 1;
  tcache_ent *c = &tcache[key % TCACHE];
  int s;
  if (op < 2 && c->key == key && c->gen == cache_gen && --c->left > 0) {
    s = c->site;
  } else {
    s = capture(m);
    c->key = key;
    c->gen = cache_gen;
    c->site = (uint16_t)s;
    c->left = (uint16_t)sample_every;
  }
  account(&table[m][s], op, len, t1 - t0);
}

/* ---- shutdown: load map and normalized entries --------------------------- */

typedef struct object {
  uint64_t key, base;
  uintptr_t lo[8], hi[8];
  int nload;
  char *path;
  uint8_t build_id[64];
  int build_id_len;
} object;

typedef struct objects {
  object *v;
  size_t n, cap;
} objects;

static objects objs;

static void note_build_id(object *o, const struct dl_phdr_info *info) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_NOTE) continue;
    const uint8_t *q = (const uint8_t *)(info->dlpi_addr + p->p_vaddr);
    const uint8_t *end = q + p->p_memsz;
    while (q + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)q;
      const uint8_t *name = q + sizeof *nh;
      const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
      if (desc + nh->n_descsz > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
          nh->n_descsz <= sizeof o->build_id) {
        memcpy(o->build_id, desc, nh->n_descsz);
        o->build_id_len = (int)nh->n_descsz;
        return;
      }
      q = desc + ((nh->n_descsz + 3) & ~3u);
    }
  }
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size, (void)arg;
  if (objs.n == objs.cap) {
    size_t cap = objs.cap ? 2 * objs.cap : 64;
    object *v = realloc(objs.v, cap * sizeof *v);
    if (!v) return 1;
    objs.v = v, objs.cap = cap;
  }
  object *o = &objs.v[objs.n];
  memset(o, 0, sizeof *o);
  /* The main program has an empty name: use its path. */
  const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : iochar_job_info.exe;
  o->path = strdup(path);
  if (!o->path) return 1;
  o->base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum && o->nload < 8; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD) continue;
    o->lo[o->nload] = info->dlpi_addr + p->p_vaddr;
    o->hi[o->nload++] = info->dlpi_addr + p->p_vaddr + p->p_memsz;
  }
  note_build_id(o, info);
  o->key = fnv(fnv(FNV0, o->path, strlen(o->path)), o->build_id, (size_t)o->build_id_len) | 1;
  objs.n++;
  return 0;
}

/* The objects loaded now (once per process; shutdown only). */
static void load_objects(void) {
  if (objs.n) return;
  dl_iterate_phdr(add_object, NULL);
}

static const object *object_of(uintptr_t ip) {
  for (size_t i = 0; i < objs.n; i++)
    for (int j = 0; j < objs.v[i].nload; j++)
      if (ip >= objs.v[i].lo[j] && ip < objs.v[i].hi[j]) return &objs.v[i];
  return NULL;
}

uint64_t iochar_cs_hash(int m, const iochar_cs_entry *e) {
  uint32_t mm = (uint32_t)m;
  uint64_t h = fnv(FNV0, &mm, 4);
  h = fnv(h, e->frame, sizeof e->frame[0] * e->nframes);
  return h ? h : 1; /* 0 is the 'other' bucket */
}

/* Size tables: by count descending, then value ascending. */
static void sizes_sorted(int64_t *val, int64_t *cnt, int n, iochar_cs_entry *e) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (cnt[j] > cnt[i] || (cnt[j] == cnt[i] && val[j] < val[i])) {
        int64_t t = val[i];
        val[i] = val[j], val[j] = t;
        t = cnt[i], cnt[i] = cnt[j], cnt[j] = t;
      }
  for (int i = 0; i < IOCHAR_CS_SIZES; i++) {
    e->size[i] = i < n ? val[i] : 0;
    e->size_count[i] = i < n ? cnt[i] : 0;
  }
  for (int i = IOCHAR_CS_SIZES; i < n; i++) e->size_other += cnt[i];
}

void iochar_cs_merge(iochar_cs_entry *d, const iochar_cs_entry *s) {
  d->nranks += s->nranks;
  for (int k = 0; k < 3; k++) d->ops[k] += s->ops[k], d->time[k] += s->time[k];
  for (int k = 0; k < 2; k++) d->bytes[k] += s->bytes[k];
  int64_t val[2 * IOCHAR_CS_SIZES], cnt[2 * IOCHAR_CS_SIZES];
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    const iochar_cs_entry *e = pass ? s : d;
    for (int i = 0; i < IOCHAR_CS_SIZES; i++) {
      if (!e->size_count[i]) continue;
      int j = 0;
      while (j < n && val[j] != e->size[i]) j++;
      if (j == n) val[n] = e->size[i], cnt[n++] = 0;
      cnt[j] += e->size_count[i];
    }
  }
  d->size_other += s->size_other;
  sizes_sorted(val, cnt, n, d);
}

static void entry_of(int m, site *s, int other, iochar_cs_entry *e) {
  memset(e, 0, sizeof *e);
  e->nranks = 1;
  for (int k = 0; k < 3; k++) {
    e->ops[k] = atomic_load(&s->ops[k]);
    e->time[k] = (double)atomic_load(&s->ns[k]) * 1e-9;
  }
  for (int k = 0; k < 2; k++) e->bytes[k] = atomic_load(&s->bytes[k]);
  int64_t val[IOCHAR_CS_SIZES], cnt[IOCHAR_CS_SIZES];
  int n = 0;
  for (int i = 0; i < IOCHAR_CS_SIZES; i++) {
    int64_t v = atomic_load(&s->size[i]);
    if (v) val[n] = v - 1, cnt[n++] = atomic_load(&s->size_count[i]);
  }
  e->size_other = atomic_load(&s->size_other);
  sizes_sorted(val, cnt, n, e);
  if (other) return; /* hash 0, no frames */
  e->nframes = (uint32_t)s->nframes;
  for (int i = 0; i < s->nframes; i++) {
    const object *o = object_of(s->ip[i]);
    e->frame[i].object = o ? o->key : 0; /* unloaded since: raw address */
    e->frame[i].vaddr = o ? s->ip[i] - o->base : s->ip[i];
  }
  e->hash = iochar_cs_hash(m, e);
}

static int site_used(site *s) {
  return atomic_load(&s->ops[0]) + atomic_load(&s->ops[1]) + atomic_load(&s->ops[2]) > 0;
}

iochar_cs_entry *iochar_callsites_export(int m, size_t *n) {
  *n = 0;
  if (!iochar_callsites_on || m < 0 || m >= IOCHAR_MOD_COUNT) return NULL;
  load_objects();
  iochar_cs_entry *v = malloc(sizeof *v * (IOCHAR_CS_SITES + 1));
  if (!v) return NULL;
  for (int i = 0; i < IOCHAR_CS_SITES; i++)
    if (atomic_load(&table[m][i].key) && site_used(&table[m][i]))
      entry_of(m, &table[m][i], 0, &v[(*n)++]);
  if (site_used(&table[m][OTHER])) entry_of(m, &table[m][OTHER], 1, &v[(*n)++]);
  return v;
}

int iochar_loadmap_put(iochar_buf *b, const uint64_t *keys, size_t n, uint32_t *count) {
  load_objects();
  for (size_t i = 0; i < objs.n; i++) {
    const object *o = &objs.v[i];
    size_t j = 0;
    while (j < n && keys[j] != o->key) j++;
    if (j == n) continue;
    size_t pl = strlen(o->path);
    iochar_buf_u64(b, o->key);
    iochar_buf_u64(b, o->base);
    iochar_buf_u16(b, (uint16_t)o->build_id_len);
    iochar_buf_put(b, o->build_id, (size_t)o->build_id_len);
    iochar_buf_u16(b, (uint16_t)(pl > 65535 ? 65535 : pl));
    iochar_buf_put(b, o->path, pl > 65535 ? 65535 : pl);
    (*count)++;
  }
  return b->failed ? -1 : 0;
}

/* Keys of the objects an entry's frames refer to, added to a set. */
static int keys_add(uint64_t **keys, size_t *n, size_t *cap, const iochar_cs_entry *e) {
  for (uint32_t f = 0; f < e->nframes; f++) {
    uint64_t k = e->frame[f].object;
    size_t j = 0;
    while (j < *n && (*keys)[j] != k) j++;
    if (!k || j < *n) continue;
    if (*n == *cap) {
      size_t c = *cap ? 2 * *cap : 32;
      uint64_t *p = realloc(*keys, c * sizeof *p);
      if (!p) return -1;
      *keys = p, *cap = c;
    }
    (*keys)[(*n)++] = k;
  }
  return 0;
}

int iochar_callsites_sections(iochar_buf *out, int *nsections) {
  uint64_t *keys = NULL;
  size_t nk = 0, ck = 0;
  int rc = 0;
  for (int m = 0; m < IOCHAR_MOD_COUNT && !rc; m++) {
    size_t n;
    iochar_cs_entry *v = iochar_callsites_export(m, &n);
    if (n && iochar_modules[m]) {
      for (size_t i = 0; i < n && !rc; i++) rc = keys_add(&keys, &nk, &ck, &v[i]);
      if (!rc)
        rc = iochar_section_add(out, "CALLSITE", iochar_modules[m]->name, (uint32_t)n, v,
                                n * sizeof *v);
      if (!rc) (*nsections)++;
    }
    free(v);
  }
  if (!rc && nk) {
    iochar_buf b = {0};
    uint32_t count = 0;
    rc = iochar_loadmap_put(&b, keys, nk, &count) ||
         iochar_section_add(out, "LOADMAP", NULL, count, b.p, b.len);
    if (!rc) (*nsections)++;
    iochar_buf_free(&b);
  }
  free(keys);
  return rc ? -1 : 0;
}
