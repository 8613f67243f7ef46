/* MPI jobs that end abnormally (tests/integration/test_abnormal.py):
 *   mpi_end MODE DIR N
 * Every rank writes N x 100 bytes to DIR/r<rank>.dat, then
 *   exit:  after a barrier, every rank calls exit(0) without MPI_Finalize (the launcher kills
 *          the ranks still running once the first has left);
 *   abort: after a barrier, rank 2 calls MPI_Abort(MPI_COMM_WORLD, 5), the
 *          others wait in a second barrier (the launcher kills them);
 *   ready: every rank prints "ready <rank>" and waits to be killed. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 4) return 2;
  int rank, n = atoi(argv[3]);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[4096], buf[100];
  memset(buf, 'm', sizeof buf);
  snprintf(path, sizeof path, "%s/r%d.dat", argv[2], rank);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (int i = 0; i < n + rank; i++)
    if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) return 2;
  close(fd);
  if (!strcmp(argv[1], "exit")) {
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's writes are done; then all leave */
    exit(0);
  }
  if (!strcmp(argv[1], "abort")) {
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's writes are done */
    if (rank == 2) MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (!strcmp(argv[1], "ready")) {
    printf("ready %d\n", rank);
    fflush(stdout);
    for (;;) pause();
  }
  MPI_Finalize();
  return 0;
}
