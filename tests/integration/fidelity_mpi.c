/* Shared-record cases of issue 15 with exactly known I/O, on 4 ranks:
 * `fidelity_mpi topk|fold` (asserted in tests/integration/test_fidelity_mpi.py). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_FAIL() MPI_Abort(MPI_COMM_WORLD, 3)
#include "check.h"

static char buf[4096];

/* One shared file: rank r writes sizes P[(2r+j) % 8] (j = 0..3) 10 times
 * each and 64 bytes 9 times.  On every rank 64 is 5th (9 < 10); in the job
 * it is 1st (36), each P[i] having 20 (two ranks).  A second shared file
 * gets 5 sizes per rank, all different: 20 values, more than a table holds. */
static void topk(int rank) {
  static const int P[8] = {1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700};
  int fd = open("topk_shared.dat", O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0);
  off_t off = (off_t)rank << 20;
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 10; i++) {
      int n = P[(2 * rank + j) % 8];
      CHECK(pwrite(fd, buf, n, off) == n);
      off += n;
    }
  for (int i = 0; i < 9; i++, off += 64) CHECK(pwrite(fd, buf, 64, off) == 64);
  CHECK(close(fd) == 0);
  fd = open("topk_many.dat", O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0);
  off = (off_t)rank << 20;
  for (int j = 0; j < 5; j++) {
    int n = 2000 + 10 * (5 * rank + j);
    CHECK(pwrite(fd, buf, n, off) == n);
    off += n;
  }
  CHECK(close(fd) == 0);
}

/* argv[2] files, the same on every rank, each opened, written once, closed;
 * run with a small IOCHAR_MEMORY, the same files fold on every rank. */
static void fold(int n) {
  char name[64];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "fold.%d", i);
    int fd = open(name, O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0 && write(fd, buf, 10) == 10 && close(fd) == 0);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1 && !strcmp(argv[1], "topk"))
    topk(rank);
  else if (argc > 2 && !strcmp(argv[1], "fold"))
    fold(atoi(argv[2]));
  else
    CHECK(!"mode");
  MPI_Finalize();
  return 0;
}
