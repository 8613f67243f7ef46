/* The site knobs' workload (tests/integration/test_knobs.py): `knobs_workload DIR N`
 * writes 100 bytes to each of N files DIR/f<i>.dat (open, write, close), then 3 x 10
 * bytes to DIR/s.dat through STDIO. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  static char buf[100];
  char p[4096];
  for (int i = 0, n = atoi(argv[2]); i < n; i++) {
    snprintf(p, sizeof p, "%s/f%d.dat", argv[1], i);
    int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf || close(fd) != 0) return 3;
  }
  snprintf(p, sizeof p, "%s/s.dat", argv[1]);
  FILE *f = fopen(p, "w");
  if (!f) return 4;
  for (int i = 0; i < 3; i++)
    if (fwrite(buf, 1, 10, f) != 10) return 5;
  return fclose(f) == 0 ? 0 : 6;
}
