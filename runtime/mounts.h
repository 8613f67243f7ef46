/* The mount table and what it tells about a file (runtime/mounts.c). */
#ifndef IOCHAR_MOUNTS_H
#define IOCHAR_MOUNTS_H

#include <stddef.h>
#include <stdint.h>

/* Mount table of this process: n entries. */
typedef struct iochar_mount {
  char *point, *type;
  size_t len;
  int64_t block_size; /* 0 until first asked */
  /* every file's st_blksize is the file system's block size (statfs f_bsize):
   * ext2/3/4, whose getattr reports the superblock's block size for every
   * inode (xfs, btrfs, tmpfs, NFS, Lustre may differ per file) */
  int blksize_uniform;
} iochar_mount;
int iochar_mounts(const iochar_mount **out);
/* Index of the mount holding abs (longest mount point), or -1. */
int iochar_mount_find(const char *abs);
/* The same for the name whose record id is id (the hash of abs): no
 * compare when it is the last name this thread resolved. */
int iochar_mount_find_id(const char *abs, uint64_t id);

/* The fs type of the mount holding abs (longest matching mount point). */
const char *iochar_fs_type(const char *abs);
/* Whether any mount is Lustre: -1 until first asked (mounts.c). */
extern int iochar_any_lustre __attribute__((visibility("hidden")));
int iochar_on_lustre_lookup(const char *abs) __attribute__((visibility("hidden")));
/* 1 when that mount is Lustre.  Most machines have no Lustre mount: then
 * no file is on one, known without a call. */
static inline int iochar_on_lustre(const char *abs) {
  return __atomic_load_n(&iochar_any_lustre, __ATOMIC_RELAXED) && iochar_on_lustre_lookup(abs);
}

#endif
