/* 100 writes of 4096 bytes at consecutive offsets, then read them back. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "posix_basic.dat";
  char buf[4096] = {0};
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (fd < 0) return 1;
  for (int i = 0; i < 100; i++)
    if (write(fd, buf, sizeof buf) != sizeof buf) return 2;
  lseek(fd, 0, SEEK_SET);
  for (int i = 0; i < 100; i++)
    if (read(fd, buf, sizeof buf) != sizeof buf) return 3;
  close(fd);
  printf("done\n");
  return 0;
}
