/* STDIO workload with exactly known I/O: `stdio_workload DIR`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  char p[4096], line[256];
  snprintf(p, sizeof p, "%s/stdio.dat", argv[1]);
  FILE *f = fopen(p, "w+");
  if (!f) return 3;
  static char blk[1000];
  for (int i = 0; i < 10; i++) fwrite(blk, 100, 10, f); /* 10 x 1000 bytes */
  fprintf(f, "value=%d\n", 42);                         /* 9 bytes */
  fputs("hello\n", f);                                  /* 6 bytes */
  fputc('x', f);                                        /* 1 byte */
  fflush(f);
  rewind(f);
  size_t got = fread(blk, 1, 1000, f); /* 1000 bytes */
  fseek(f, 10000, SEEK_SET);
  char *s = fgets(line, sizeof line, f); /* "value=42\n": 9 bytes */
  int c = fgetc(f);                      /* 'h' */
  fclose(f);
  fprintf(stderr, "to stderr\n");                   /* 10 bytes on <STDERR> */
  printf("got=%zu s=%d c=%c\n", got, s != NULL, c); /* "got=1000 s=1 c=h\n": 17 */
  return 0;
}
