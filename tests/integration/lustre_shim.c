/* Test shim, preloaded before the tool: the `lustre.lov` attribute a Lustre
 * client would give for the files under LUSTRE_SHIM_DIR (with a mount table
 * that says that directory is Lustre: tests/integration/test_lustre_layouts.py).
 * The layout is a mirrored progressive one (lov_comp_md_v1): mirror 1 is
 * [0, 1 MiB) on 1 stripe of 1 MiB, [1, 16 MiB) on 4 of 4 MiB, [16 MiB, EOF) on
 * 8 of 16 MiB; mirror 2, [0, EOF) on 2 of 8 MiB, is a stale copy.  By
 * descriptor (the tool's first open of a new file) only the first component
 * is instantiated; by name (the tool's look at the end) all of mirror 1 is.
 * (Exported by name: the build's -fvisibility=hidden would keep them from
 * interposing.) */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MiB (1u << 20)
#define INIT 0x10u
#define STALE 0x01u

static void put32(unsigned char *p, unsigned v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, unsigned long long v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

typedef struct comp {
  unsigned id, flags;
  unsigned long long start, end;
  unsigned size, count;
} comp;

/* The blob as Lustre packs it (runtime/lustre.c says the layout): header,
 * entries, then each component's lov_user_md_v1 with its stripes once
 * instantiated. */
static size_t build(unsigned char *b, int all) {
  const comp c[] = {{0x10001, INIT, 0, MiB, MiB, 1},
                    {0x10002, all ? INIT : 0, MiB, 16ull * MiB, 4 * MiB, 4},
                    {0x10003, all ? INIT : 0, 16ull * MiB, ~0ull, 16 * MiB, 8},
                    {0x20004, INIT | STALE, 0, ~0ull, 8 * MiB, 2}};
  const int nc = 4;
  memset(b, 0, 4096);
  put32(b, 0x0BD60BD0u);
  b[14] = (unsigned char)nc;
  b[16] = 1; /* mirrors - 1 */
  size_t off = 32 + 48 * (size_t)nc;
  for (int i = 0; i < nc; i++) {
    unsigned char *e = b + 32 + 48 * i, *l = b + off;
    put32(e, c[i].id);
    put32(e + 4, c[i].flags);
    put64(e + 8, c[i].start);
    put64(e + 16, c[i].end);
    put32(l, 0x0BD10BD0u);
    put32(l + 4, 1); /* RAID0 */
    put32(l + 24, c[i].size);
    l[28] = (unsigned char)c[i].count;
    unsigned nost = c[i].flags & INIT ? c[i].count : 0;
    for (unsigned k = 0; k < nost; k++) put32(l + 32 + 24 * k + 20, 10 * (unsigned)i + k);
    size_t len = 32 + 24 * (size_t)nost;
    put32(e + 24, (unsigned)off);
    put32(e + 28, (unsigned)len);
    off += len;
  }
  put32(b + 4, (unsigned)off);
  return off;
}

static int ours(const char *path) {
  const char *dir = getenv("LUSTRE_SHIM_DIR");
  return dir && *dir && path && strncmp(path, dir, strlen(dir)) == 0;
}

static ssize_t serve(int all, void *value, size_t size) {
  unsigned char b[4096];
  size_t n = build(b, all);
  if (size == 0) return (ssize_t)n;
  if (size < n) return errno = ERANGE, -1;
  memcpy(value, b, n);
  return (ssize_t)n;
}

__attribute__((visibility("default"))) ssize_t fgetxattr(int fd, const char *name, void *value,
                                                         size_t size) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t k = readlink(link, path, sizeof path - 1);
  if (k > 0 && strcmp(name, "lustre.lov") == 0) {
    path[k] = 0;
    if (ours(path)) return serve(0, value, size);
  }
  ssize_t (*real)(int, const char *, void *, size_t) = dlsym(RTLD_NEXT, "fgetxattr");
  return real(fd, name, value, size);
}

__attribute__((visibility("default"))) ssize_t getxattr(const char *path, const char *name,
                                                        void *value, size_t size) {
  if (strcmp(name, "lustre.lov") == 0 && ours(path)) return serve(1, value, size);
  ssize_t (*real)(const char *, const char *, void *, size_t) = dlsym(RTLD_NEXT, "getxattr");
  return real(path, name, value, size);
}
