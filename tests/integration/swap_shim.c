/* Preloaded before the tool by tests/integration/test_name_swap.py: another user
 * winning the race between the tool's linkat of a log and its check of the name.
 * Right after a linkat that made a name ending in $SWAP_SHIM_NAME, the file
 * $SWAP_SHIM_PLANT is renamed onto that name, once.  (Exported: the project's
 * -fvisibility=hidden would keep it from interposing.) */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) int linkat(int olddirfd, const char *oldpath, int newdirfd,
                                                  const char *newpath, int flags) {
  static int (*real)(int, const char *, int, const char *, int);
  static int done;
  if (!real) real = (int (*)(int, const char *, int, const char *, int))dlsym(RTLD_NEXT, "linkat");
  int rc = real(olddirfd, oldpath, newdirfd, newpath, flags);
  const char *want = getenv("SWAP_SHIM_NAME"), *plant = getenv("SWAP_SHIM_PLANT");
  size_t a = strlen(newpath), b = want ? strlen(want) : 0;
  if (rc == 0 && !done && want && plant && a >= b && strcmp(newpath + a - b, want) == 0) {
    int e = errno;
    done = 1;
    if (renameat2(AT_FDCWD, plant, newdirfd, newpath, 0) != 0) perror("swap_shim");
    errno = e;
  }
  return rc;
}
