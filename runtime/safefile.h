/* Files the tool creates: exclusive, never followed, unpredictable, 0600, published
 * by rename; writes that never raise SIGXFSZ (docs/security.md). */
#ifndef IOCHAR_SAFEFILE_H
#define IOCHAR_SAFEFILE_H

#include <stddef.h>

/* Create a fresh temporary file beside final_path (same directory, so the rename
 * stays on one file system): ".<base>.<16 random hex>.tmp", opened
 * O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0600.  Its name goes to
 * tmp (n bytes).  Returns the descriptor, or -1 with errno set. */
int iochar_safe_create(const char *final_path, char *tmp, size_t n);

/* A private directory beside final_path (".<base>.<random>.d", mode 0700), for a
 * file that other processes (MPI ranks) must open by name: no other user can
 * plant or swap a name inside it.  Returns 0, or -1 with errno set. */
int iochar_safe_mkdtemp(const char *final_path, char *dir, size_t n);

/* Write all n bytes; EINTR retried.  SIGXFSZ is held back in this thread and
 * discarded if our own write raised it (the caller sees EFBIG instead).
 * Async-signal-safe.  Returns 0, or -1 with errno set. */
int iochar_write_all(int fd, const void *p, size_t n);

/* Close fd and move tmp to final_path.  noreplace: fail with EEXIST rather
 * than replace an existing final file.  On any failure tmp is removed and
 * errno says why. */
int iochar_safe_publish(int fd, const char *tmp, const char *final_path, int noreplace);

/* Close fd (if >= 0) and remove tmp, keeping errno. */
void iochar_safe_discard(int fd, const char *tmp);

/* n random bytes from getrandom(2), falling back to a clock/pid mix (never
 * blocks). */
void iochar_random_bytes(void *out, size_t n);

#endif
