/* stdout reopened onto a file: `stdio_freopen FILE`. 7 bytes go to <STDOUT>,
 * then 14 bytes to FILE through the same FILE pointer. */
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  printf("before\n");
  fflush(stdout);
  if (!freopen(argv[1], "w", stdout)) return 1;
  printf("into the file\n");
  fclose(stdout);
  return 0;
}
