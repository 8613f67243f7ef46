/* Files the tool creates: exclusive, never followed, unpredictable, 0600, published
 * by rename; writes that never raise SIGXFSZ (docs/security.md). */
#ifndef IOCHAR_SAFEFILE_H
#define IOCHAR_SAFEFILE_H

#include <signal.h>
#include <stddef.h>

/* Create a fresh temporary file beside final_path (same directory, so the rename
 * stays on one file system): ".<base>.<16 random hex>.tmp", opened
 * O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0600.  Its name goes to
 * tmp (n bytes).  Returns the descriptor, or -1 with errno set; EPERM when
 * the directory is writable by every user without the sticky bit: anyone
 * could rename or replace names there, so the tool creates nothing in it. */
int iochar_safe_create(const char *final_path, char *tmp, size_t n);

/* A private directory beside final_path (".<base>.<random>.d", mode 0700), for a
 * file that other processes (MPI ranks) must open by name: no other user can
 * plant or swap a name inside it.  Returns 0, or -1 with errno set. */
int iochar_safe_mkdtemp(const char *final_path, char *dir, size_t n);

/* The name such a directory would have, not created: for a file that other
 * processes may have to open by name later (mkdir it then, 0700; mkdir
 * fails if the name exists).  0, or -1 with errno set. */
int iochar_safe_dir_name(const char *final_path, char *dir, size_t n);

/* Write all n bytes; EINTR retried.  SIGXFSZ is held back in this thread and
 * discarded if our own write raised it (the caller sees EFBIG instead).
 * Async-signal-safe.  Returns 0, or -1 with errno set. */
int iochar_write_all(int fd, const void *p, size_t n);

/* Close fd (if >= 0); on failure (EIO, EDQUOT at close on NFS) remove tmp.
 * 0, or -1 with errno set. */
int iochar_safe_close(int fd, const char *tmp);

/* Move tmp to final_path unless something (a file, a symlink, anyone's) is
 * there already: EEXIST then.  tmp stays in place on failure. */
int iochar_safe_rename_noreplace(const char *tmp, const char *final_path);

/* Close fd and move tmp to final_path.  noreplace: fail with EEXIST rather
 * than replace an existing final file.  On any failure tmp is removed and
 * errno says why. */
int iochar_safe_publish(int fd, const char *tmp, const char *final_path, int noreplace);

/* Close fd (if >= 0) and remove tmp, keeping errno. */
void iochar_safe_discard(int fd, const char *tmp);

/* SIGXFSZ held back around the tool's own writes that do not go through
 * iochar_write_all (pwrite, MPI-IO): hold, write, release.  release
 * discards a SIGXFSZ raised in between unless one was pending before. */
typedef struct iochar_xfsz {
  sigset_t old;
  int was_pending;
} iochar_xfsz;
void iochar_xfsz_hold(iochar_xfsz *h);
void iochar_xfsz_release(iochar_xfsz *h);

/* n random bytes from getrandom(2), falling back to a clock/pid mix (never
 * blocks). */
void iochar_random_bytes(void *out, size_t n);

#endif
