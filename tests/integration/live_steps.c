/* An MPI job writing known bytes in steps, for the live view (tests/integration/test_live.py):
 *   live_steps DIR PROGRESS STEPS BYTES PERIOD_MS PAUSE_MS
 * After a barrier every rank pwrites BYTES to DIR/s<rank>.dat every PERIOD_MS
 * (on an absolute schedule, so the rate is steady whatever the load), STEPS
 * times, appending "<rank> <step> <epoch seconds>\n" to PROGRESS after each (the test keeps
 * PROGRESS out of the counters with IOCHAR_EXCLUDE); then it waits PAUSE_MS,
 * so samples see the final totals, and finalizes. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_FAIL() MPI_Abort(MPI_COMM_WORLD, 3)
#include "check.h"

static void sleep_until(const struct timespec *t0, long ms) {
  struct timespec t = *t0;
  t.tv_sec += ms / 1000;
  t.tv_nsec += (ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0)
    ;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 7) MPI_Abort(MPI_COMM_WORLD, 2);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long steps = atol(argv[3]), bytes = atol(argv[4]), period = atol(argv[5]), pause = atol(argv[6]);
  char path[4096], line[96];
  char *buf = malloc((size_t)bytes);
  CHECK(buf != NULL);
  memset(buf, 'l', (size_t)bytes);
  snprintf(path, sizeof path, "%s/s%d.dat", argv[1], rank);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int pfd = open(argv[2], O_WRONLY | O_APPEND);
  CHECK(fd >= 0 && pfd >= 0);
  MPI_Barrier(MPI_COMM_WORLD);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < steps; i++) {
    CHECK(pwrite(fd, buf, (size_t)bytes, (off_t)(i * bytes)) == (ssize_t)bytes);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int n = snprintf(line, sizeof line, "%d %ld %.6f\n", rank, i + 1,
                     (double)now.tv_sec + now.tv_nsec * 1e-9);
    CHECK(write(pfd, line, (size_t)n) == n); /* one append: lines never interleave */
    sleep_until(&t0, (i + 1) * period);
  }
  close(fd);
  close(pfd);
  sleep_until(&t0, steps * period + pause);
  MPI_Barrier(MPI_COMM_WORLD);
  free(buf);
  MPI_Finalize();
  return 0;
}
