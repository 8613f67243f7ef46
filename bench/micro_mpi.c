/* Per-call micro-benchmark of MPI-IO: `micro_mpi N DIR` prints ns per
 * 8-byte MPI_File_write_at on one rank (bench/run compares bare and preloaded). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 100000;
  char path[4096], buf[8] = {0};
  snprintf(path, sizeof path, "%s/micro_mpi.dat", argc > 2 ? argv[2] : ".");
  MPI_File fh;
  MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  double t0 = MPI_Wtime();
  for (long i = 0; i < n; i++)
    MPI_File_write_at(fh, (i & 7) * 8, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE);
  double t1 = MPI_Wtime();
  MPI_File_close(&fh);
  printf("%.2f\n", (t1 - t0) * 1e9 / n);
  MPI_Finalize();
  return 0;
}
