/* The *_unlocked STDIO calls with exactly known I/O: `stdio_unlocked DIR`.
 * The character calls go through volatile pointers, so <stdio.h>'s inline
 * versions cannot stand in for the library functions the tool wraps. */
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  char p[4096], line[64], blk[40] = {0};
  snprintf(p, sizeof p, "%s/unlocked.dat", argv[1]);
  FILE *f = fopen(p, "w+");
  CHECK(f != NULL);
  size_t (*wr)(const void *, size_t, size_t, FILE *) = fwrite_unlocked;
  size_t (*rd)(void *, size_t, size_t, FILE *) = fread_unlocked;
  int (*volatile putc_u)(int, FILE *) = putc_unlocked;
  int (*volatile fputc_u)(int, FILE *) = fputc_unlocked;
  int (*volatile getc_u)(FILE *) = getc_unlocked;
  int (*volatile fgetc_u)(FILE *) = fgetc_unlocked;
  flockfile(f);
  for (int i = 0; i < 100; i++) CHECK(wr(blk, 4, 10, f) == 10); /* 100 x 40 bytes at 0.. */
  CHECK(fputs_unlocked("line\n", f) >= 0);                      /* 5 bytes at 4000 */
  CHECK(fputc_u('a', f) == 'a');                                /* 4005 */
  CHECK(putc_u('b', f) == 'b');                                 /* 4006 */
  funlockfile(f);
  rewind(f);
  for (int i = 0; i < 50; i++) CHECK(rd(blk, 1, 40, f) == 40); /* 50 x 40 bytes */
  fseek(f, 4000, SEEK_SET);
  CHECK(fgets_unlocked(line, sizeof line, f) && !strcmp(line, "line\n")); /* 5 bytes */
  CHECK(fgetc_u(f) == 'a');
  CHECK(getc_u(f) == 'b');
  CHECK(fclose(f) == 0);
  return 0;
}
