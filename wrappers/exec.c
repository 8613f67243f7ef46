/* The exec family: the program's log is written before exec replaces it, so a
 * pipeline of programs (`prog1 && exec prog2`) keeps every program's I/O.  If
 * the exec fails, recording goes on as if nothing happened. */
#include <stdarg.h>
#include <unistd.h>

#include "../runtime/interpose.h"

void iochar_exec_prepare(void); /* runtime/core.c */
void iochar_exec_failed(void);

/* The log is written only where the tool is recording this process (not in a
 * vfork child, which shares its parent's memory, nor inside the tool). */
static int before(void) {
  if (!iochar_active()) return 0;
  IOCHAR_RECORD(iochar_exec_prepare());
  return 1;
}

static void after(int was) {
  if (was) IOCHAR_RECORD(iochar_exec_failed());
}

#define EXEC_BODY(call) \
  int was_ = before();  \
  int ret_ = call;      \
  after(was_);          \
  return ret_

IOCHAR_WRAP(int, execve, (const char *path, char *const argv[], char *const envp[])) {
  EXEC_BODY(IOCHAR_REAL(execve)(path, argv, envp));
}

IOCHAR_WRAP(int, execv, (const char *path, char *const argv[])) {
  EXEC_BODY(IOCHAR_REAL(execv)(path, argv));
}

IOCHAR_WRAP(int, execvp, (const char *file, char *const argv[])) {
  EXEC_BODY(IOCHAR_REAL(execvp)(file, argv));
}

IOCHAR_WRAP(int, execvpe, (const char *file, char *const argv[], char *const envp[])) {
  EXEC_BODY(IOCHAR_REAL(execvpe)(file, argv, envp));
}

IOCHAR_WRAP(int, fexecve, (int fd, char *const argv[], char *const envp[])) {
  EXEC_BODY(IOCHAR_REAL(fexecve)(fd, argv, envp));
}

IOCHAR_WRAP(int, execveat,
            (int dirfd, const char *path, char *const argv[], char *const envp[], int flags)) {
  EXEC_BODY(IOCHAR_REAL(execveat)(dirfd, path, argv, envp, flags));
}

/* The list forms become their vector forms (as glibc's own do): arg0... up
 * to the NULL, then (execle) the environment. */
#define ARGV_FROM_LIST(first, ap, argv, n) \
  va_start(ap, first);                     \
  size_t n = 1;                            \
  while (va_arg(ap, const char *)) n++;    \
  va_end(ap);                              \
  const char *argv[n + 1];                 \
  va_start(ap, first);                     \
  argv[0] = first;                         \
  for (size_t i_ = 1; i_ <= n; i_++) argv[i_] = va_arg(ap, const char *)

__attribute__((visibility("default"))) int execl(const char *path, const char *arg, ...) {
  va_list ap;
  ARGV_FROM_LIST(arg, ap, argv, n);
  va_end(ap);
  EXEC_BODY(IOCHAR_REAL(execv)(path, (char *const *)argv));
}

__attribute__((visibility("default"))) int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  ARGV_FROM_LIST(arg, ap, argv, n);
  va_end(ap);
  EXEC_BODY(IOCHAR_REAL(execvp)(file, (char *const *)argv));
}

__attribute__((visibility("default"))) int execle(const char *path, const char *arg, ...) {
  va_list ap;
  ARGV_FROM_LIST(arg, ap, argv, n);
  char *const *envp = va_arg(ap, char *const *);
  va_end(ap);
  EXEC_BODY(IOCHAR_REAL(execve)(path, (char *const *)argv, envp));
}
