/* The exec family: the program's log is written before exec replaces it, so a
 * pipeline of programs (`prog1 && exec prog2`) keeps every program's I/O.  If
 * the exec fails, recording goes on as if nothing happened. */
#include <stdarg.h>
#include <unistd.h>

#include "../runtime/interpose.h"
#include "../runtime/lifecycle.h"

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

IOCHAR_WRAP(int, execve, (const char *path, char *const argv[], char *const envp[])) {
  int was = before();
  int ret = IOCHAR_REAL(execve)(path, argv, envp);
  after(was);
  return ret;
}

IOCHAR_WRAP(int, execv, (const char *path, char *const argv[])) {
  int was = before();
  int ret = IOCHAR_REAL(execv)(path, argv);
  after(was);
  return ret;
}

IOCHAR_WRAP(int, execvp, (const char *file, char *const argv[])) {
  int was = before();
  int ret = IOCHAR_REAL(execvp)(file, argv);
  after(was);
  return ret;
}

IOCHAR_WRAP(int, execvpe, (const char *file, char *const argv[], char *const envp[])) {
  int was = before();
  int ret = IOCHAR_REAL(execvpe)(file, argv, envp);
  after(was);
  return ret;
}

IOCHAR_WRAP(int, fexecve, (int fd, char *const argv[], char *const envp[])) {
  int was = before();
  int ret = IOCHAR_REAL(fexecve)(fd, argv, envp);
  after(was);
  return ret;
}

IOCHAR_WRAP(int, execveat,
            (int dirfd, const char *path, char *const argv[], char *const envp[], int flags)) {
  int was = before();
  int ret = IOCHAR_REAL(execveat)(dirfd, path, argv, envp, flags);
  after(was);
  return ret;
}

/* The list forms become their vector forms (as glibc's own do): arg0... up
 * to the NULL, then (execle) the environment.  The vector lives in the
 * exported function's frame (its length is known only at run time), so the
 * list is walked twice: once to count, once to fill.  The va_list goes by
 * pointer so the caller can read on after it (execle's envp). */
static size_t list_count(va_list *ap) {
  size_t n = 1;
  while (va_arg(*ap, const char *)) n++;
  return n;
}

static void list_fill(const char **argv, const char *first, size_t n, va_list *ap) {
  argv[0] = first;
  for (size_t i = 1; i <= n; i++) argv[i] = va_arg(*ap, const char *);
}

__attribute__((visibility("default"))) int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  size_t n = list_count(&ap);
  va_end(ap);
  const char *argv[n + 1];
  va_start(ap, arg);
  list_fill(argv, arg, n, &ap);
  va_end(ap);
  int was = before();
  int ret = IOCHAR_REAL(execv)(path, (char *const *)argv);
  after(was);
  return ret;
}

__attribute__((visibility("default"))) int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  size_t n = list_count(&ap);
  va_end(ap);
  const char *argv[n + 1];
  va_start(ap, arg);
  list_fill(argv, arg, n, &ap);
  va_end(ap);
  int was = before();
  int ret = IOCHAR_REAL(execvp)(file, (char *const *)argv);
  after(was);
  return ret;
}

__attribute__((visibility("default"))) int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  size_t n = list_count(&ap);
  va_end(ap);
  const char *argv[n + 1];
  va_start(ap, arg);
  list_fill(argv, arg, n, &ap);
  char *const *envp = va_arg(ap, char *const *);
  va_end(ap);
  int was = before();
  int ret = IOCHAR_REAL(execve)(path, (char *const *)argv, envp);
  after(was);
  return ret;
}
