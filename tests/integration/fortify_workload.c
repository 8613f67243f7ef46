/* Calls that -D_FORTIFY_SOURCE=2 routes to glibc's checked entry points
 * (__open_2, __read_chk, __pread_chk, __fprintf_chk, __vfprintf_chk,
 * __printf_chk, __fgets_chk, __fread_chk): `fortify_workload DIR 100`.
 * Built with -O2 -D_FORTIFY_SOURCE=2 (tests/meson.build); the expected
 * counters are in tests/integration/test_runtime.py.  Flags and sizes come from
 * the command line so the compiler cannot prove them safe (it then calls the
 * plain functions). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int vfp(FILE *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfprintf(f, fmt, ap);
  va_end(ap);
  return r;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int big = argc > 100; /* always 0, unknown to the compiler */
  char p[4096], q[4096], blk[1000] = {0}, small[256], line[64];
  snprintf(p, sizeof p, "%s/fort.dat", argv[1]);
  snprintf(q, sizeof q, "%s/fort.txt", argv[1]);

  int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644); /* plain open */
  if (fd < 0 || write(fd, blk, sizeof blk) != (ssize_t)sizeof blk) return 3;
  close(fd);
  fd = open(p, big ? O_RDWR : O_RDONLY);             /* __open_2 */
  size_t n = strtoul(argv[2], NULL, 10);             /* 100 */
  if (fd < 0 || read(fd, small, n) != 100) return 4; /* __read_chk */
  if (pread(fd, small, n, 500) != 100) return 5;     /* __pread_chk */
  close(fd);

  FILE *f = fopen(q, "w");
  if (!f) return 6;
  fprintf(f, "abc %d\n", big ? 1 : 42); /* __fprintf_chk: 7 bytes */
  vfp(f, "xyz %s\n", big ? "r" : "q");  /* __vfprintf_chk: 6 bytes */
  fclose(f);
  f = fopen(q, "r");
  if (!f) return 7;
  if (!fgets(line, (int)n / 2, f)) return 8; /* __fgets_chk: 7 bytes */
  if (fread(small, 1, n, f) != 6) return 9;  /* __fread_chk: 6 bytes */
  fclose(f);
  printf("done %d\n", big ? 0 : 1); /* __printf_chk: 7 bytes */
  return 0;
}
