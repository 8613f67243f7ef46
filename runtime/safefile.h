/* Files the tool creates: exclusive, never followed, unpredictable, 0600, published
 * by a link or rename that never replaces; writes that never raise SIGXFSZ
 * (docs/security.md). */
#ifndef IOCHAR_SAFEFILE_H
#define IOCHAR_SAFEFILE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Another user could replace names in dir (docs/security.md, "another
 * user could write here"): it is owned by another user but root, or every
 * user may write it, or, without the sticky bit, its group class may: the
 * mode's group write bit, or where dir has a POSIX access ACL with a mask
 * (system.posix_acl_access), the mask and the owning group, a named group
 * or a named user other than us.  1 or 0 (0 when it cannot be examined:
 * creating in it fails then). */
int iochar_dir_shared(const char *dir);

/* A file on its way to its final name (docs/security.md):
 *   UNNAMED  O_TMPFILE in the final name's directory: it has no name until
 *            linkat gives it the final one (nobody can swap what has no name);
 *   PRIVATE  "log" inside a private directory beside the final name
 *            (".<base>.<random>.d", 0700, ours): for a file other processes
 *            open by name, and where O_TMPFILE is missing in a directory
 *            another user could write;
 *   FLAT     ".<base>.<16 random hex>.tmp" beside the final name: only where
 *            O_TMPFILE is missing and no other user can write the directory.
 * Every creation is O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC (or O_TMPFILE), 0600. */
enum { IOCHAR_TMP_NONE, IOCHAR_TMP_UNNAMED, IOCHAR_TMP_PRIVATE, IOCHAR_TMP_FLAT };
#define IOCHAR_TMP_PATH (4096 + 64)
typedef struct iochar_tmpfile {
  int fd, kind;
  int dfd;                         /* PRIVATE: the directory, open since made (-1: none) */
  int dir_made;                    /* PRIVATE: the directory exists (ours to remove) */
  int shared;                      /* iochar_dir_shared of the final name's directory */
  uint64_t dev, ino;               /* the file, from its descriptor */
  uint64_t ddev, dino;             /* the private directory's, once made */
  char dir[IOCHAR_TMP_PATH];       /* the private directory's path ("": none) */
  char name[IOCHAR_TMP_PATH + 16]; /* FLAT: its path; PRIVATE: dir/log; UNNAMED: "" */
} iochar_tmpfile;

/* Tests (IOCHAR_TEST_FAULT=no_tmpfile): behave as on a file system without
 * O_TMPFILE. */
extern int iochar_tmp_unnamed_off;

/* Create t's file for final_path: UNNAMED where the file system has
 * O_TMPFILE (and the file can be linked later), else PRIVATE when
 * iochar_dir_shared or by_name (other processes open it by name), else
 * FLAT.  by_name: always PRIVATE.  0, or -1 with errno set (nothing left);
 * EPERM when every user can write the directory and it has no sticky bit:
 * the tool creates nothing there; EXDEV when another directory took the
 * private directory's name between its mkdir and its open, at each of 8
 * tries. */
int iochar_tmp_create(const char *final_path, iochar_tmpfile *t, int by_name);

/* Choose (not make) the private directory's name for final_path, for a file
 * that may have to be opened by name later (iochar_tmp_private). */
int iochar_tmp_dir_name(const char *final_path, iochar_tmpfile *t);

/* Give an UNNAMED or FLAT file the name dir/log in its private directory,
 * made now (0700; mkdir fails if the name exists), so that other processes
 * can open it.  0, or -1 with errno set (t unchanged but for dir_made). */
int iochar_tmp_private(iochar_tmpfile *t);

/* Open t's private directory (O_DIRECTORY|O_NOFOLLOW) and make sure it is
 * the one made (device and inode: ddev, dino): the descriptor, or -1
 * (errno EXDEV on a mismatch: someone put another directory at its name). */
int iochar_tmp_open_dir(const char *dir, uint64_t ddev, uint64_t dino);

/* Give t's file the name path, never replacing whatever is there (EEXIST
 * then: the caller may try another name).  UNNAMED: linkat of the
 * descriptor; FLAT: a no-replace rename; PRIVATE: a no-replace rename out
 * of the directory through the descriptor kept since it was made (wherever
 * someone moved it).  0, or -1 with errno set. */
int iochar_tmp_place(iochar_tmpfile *t, const char *path);

/* After iochar_tmp_place: is the file at path (not followed) still t's?
 * 0 yes; 1 no: another file took the name since (it is left alone). */
int iochar_tmp_check(const iochar_tmpfile *t, const char *path);

/* An UNNAMED file whose name another file took after iochar_tmp_place: the
 * kernel links a file that had a name and lost it no more, so its bytes are
 * copied into a fresh unnamed file, which t then is (to be placed again).
 * 0, or -1 with errno set (t unchanged). */
int iochar_tmp_renew(iochar_tmpfile *t, const char *final_path);

/* Close t's descriptors (if still open) and remove its private directory
 * (when its name still holds it).
 * Close errors (EIO, EDQUOT at close on NFS): -1 with errno. */
int iochar_tmp_close(iochar_tmpfile *t);

/* Give up: close, remove the names t made (never one that is not its own:
 * a private directory is checked first), keeping errno. */
void iochar_tmp_discard(iochar_tmpfile *t);

/* Write all n bytes; EINTR retried.  SIGXFSZ is held back in this thread and
 * discarded if our own write raised it (the caller sees EFBIG instead).
 * Async-signal-safe.  Returns 0, or -1 with errno set. */
int iochar_write_all(int fd, const void *p, size_t n);

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
