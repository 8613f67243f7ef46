/* Many files per rank: argv[1] private POSIX files each (100 bytes written),
 * plus one POSIX file and one MPI-IO file shared by all ranks; with argv[2]
 * "pairs", one file more per pair of ranks (many_pair.<rank/2>.dat: rank r
 * writes 10 x (r + 1) bytes at offset 1000 r), reduced by its owner; with
 * argv[3] K, K files more shared by all ranks (many_all.<i>.dat, 10 bytes
 * each at offset 10 x rank), reduced by tree.  Rank 0 prints
 * the time MPI_Finalize took ("finalize_s") and every rank its peak RSS
 * ("maxrss_kb"): the shutdown benchmark and the bounded-memory test. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, n = argc > 1 ? atoi(argv[1]) : 100;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char buf[4096] = {0}, name[256];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "many.%d.%d", rank, i);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, 100) != 100) return 2;
    close(fd);
    unlink(name); /* keep the directory small; the record stays */
  }
  if (argc > 2 && strcmp(argv[2], "pairs") == 0) {
    snprintf(name, sizeof name, "many_pair.%d.dat", rank / 2);
    int pfd = open(name, O_CREAT | O_WRONLY, 0644);
    if (pfd < 0 || pwrite(pfd, buf, 10 * (size_t)(rank + 1), 1000 * (off_t)rank) < 0) return 4;
    close(pfd);
  }
  for (int i = 0, k = argc > 3 ? atoi(argv[3]) : 0; i < k; i++) {
    snprintf(name, sizeof name, "many_all.%d.dat", i);
    int afd = open(name, O_CREAT | O_WRONLY, 0644);
    if (afd < 0 || pwrite(afd, buf, 10, 10 * (off_t)rank) != 10) return 5;
    close(afd);
  }
  int fd = open("many_shared.dat", O_CREAT | O_WRONLY, 0644);
  if (pwrite(fd, buf, 4096, (off_t)rank * 4096) != 4096) return 3;
  close(fd);
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, "many_mpiio.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                &fh);
  MPI_File_write_at_all(fh, (MPI_Offset)rank * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  MPI_Finalize();
  double t1 = now();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (rank == 0) printf("finalize_s %.6f\n", t1 - t0);
  printf("maxrss_kb %ld\n", ru.ru_maxrss);
  return 0;
}
