/* An IOR-like mini-app: each rank writes then reads `block` bytes in
 * `transfer`-sized pieces, through POSIX (lseek + write/read per piece, as IOR
 * does) or MPI-IO, to one shared file or a file per process.
 *   ior -a posix|mpiio -t BYTES -b BYTES [-F] [-i ITER] -o PATH
 * Prints the seconds spent in the I/O phases (max over ranks). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const char *api = "posix", *out = "ior.dat";
  long t = 1024, b = 1 << 20, iters = 1;
  int fpp = 0, opt;
  while ((opt = getopt(argc, argv, "a:t:b:Fi:o:")) != -1) {
    if (opt == 'a')
      api = optarg;
    else if (opt == 't')
      t = atol(optarg);
    else if (opt == 'b')
      b = atol(optarg);
    else if (opt == 'F')
      fpp = 1;
    else if (opt == 'i')
      iters = atol(optarg);
    else if (opt == 'o')
      out = optarg;
  }
  char path[4096];
  if (fpp)
    snprintf(path, sizeof path, "%s.%05d", out, rank);
  else
    snprintf(path, sizeof path, "%s", out);
  char *buf = malloc((size_t)t);
  memset(buf, rank + 1, (size_t)t);
  long n = b / t;
  MPI_Offset base = fpp ? 0 : (MPI_Offset)rank * b;
  int posix = strcmp(api, "posix") == 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long it = 0; it < iters; it++) {
    for (int phase = 0; phase < 2; phase++) { /* 0 write, 1 read */
      if (posix) {
        int fd = open(path, phase ? O_RDONLY : O_CREAT | O_WRONLY, 0644);
        for (long i = 0; i < n; i++) {
          lseek(fd, base + i * t, SEEK_SET);
          if ((phase ? read(fd, buf, (size_t)t) : write(fd, buf, (size_t)t)) != t) abort();
        }
        close(fd);
      } else {
        MPI_File fh;
        MPI_File_open(fpp ? MPI_COMM_SELF : MPI_COMM_WORLD, path,
                      phase ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &fh);
        for (long i = 0; i < n; i++) {
          if (phase)
            MPI_File_read_at(fh, base + i * t, buf, (int)t, MPI_BYTE, MPI_STATUS_IGNORE);
          else
            MPI_File_write_at(fh, base + i * t, buf, (int)t, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        MPI_File_close(&fh);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  double mine = MPI_Wtime() - t0, slowest;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%.6f\n", slowest);
  free(buf);
  MPI_Finalize();
  return 0;
}
