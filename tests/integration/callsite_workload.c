/* Two distinct call sites with exactly known I/O, for call-site attribution:
 * write_checkpoint() does 100 writes of 28,800 bytes, read_input() 10 reads
 * of 1 MiB.  Built with -g -O0 so the report can name functions and lines. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CKPT_WRITES 100
#define CKPT_SIZE 28800
#define INPUT_READS 10
#define INPUT_SIZE (1 << 20)

static char buf[INPUT_SIZE];

__attribute__((noinline)) static void write_checkpoint(const char *path) {
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) exit(1);
  for (int i = 0; i < CKPT_WRITES; i++)
    if (write(fd, buf, CKPT_SIZE) != CKPT_SIZE) exit(2);
  close(fd);
}

__attribute__((noinline)) static void make_input(const char *path) {
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) exit(3);
  for (int i = 0; i < INPUT_READS; i++)
    if (write(fd, buf, INPUT_SIZE) != INPUT_SIZE) exit(4);
  close(fd);
}

__attribute__((noinline)) static void read_input(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) exit(5);
  for (int i = 0; i < INPUT_READS; i++)
    if (read(fd, buf, INPUT_SIZE) != INPUT_SIZE) exit(6);
  close(fd);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char ckpt[4096], input[4096];
  snprintf(ckpt, sizeof ckpt, "%s/ckpt.dat", dir);
  snprintf(input, sizeof input, "%s/input.dat", dir);
  memset(buf, 'x', sizeof buf);
  make_input(input);
  write_checkpoint(ckpt);
  read_input(input);
  return 0;
}
