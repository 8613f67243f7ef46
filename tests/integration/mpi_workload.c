/* MPI-IO and POSIX I/O with exactly known counts (tests/python/test_mpi_*.py).
 * Every rank: a shared file (collective, vector view, hints), a file of its
 * own, a file shared by its half of the ranks (independent, nonblocking,
 * split collective), and POSIX writes to one shared and one private file.
 * argv[1] == "exit": leave with exit(0) before MPI_Finalize. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Registered before MPI_Init, so it runs after the tool's exit hook: the
 * ranks leave together once every per-rank log is written (mpiexec kills
 * the ranks still running when one exits without MPI_Finalize). */
static void leave_together(void) { MPI_Barrier(MPI_COMM_WORLD); }

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "exit")) atexit(leave_together);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static int ibuf[2048];
  static char cbuf[1 << 16];
  for (int i = 0; i < 2048; i++) ibuf[i] = rank * 10000 + i;

  /* 1. shared.dat: all ranks; view = 4 blocks of 256 ints, interleaved. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", "1048576");
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
  MPI_Info_free(&info);
  MPI_Datatype vec;
  MPI_Type_vector(4, 256, 256 * size, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_File_set_view(fh, (MPI_Offset)rank * 256 * 4, MPI_INT, vec, "native", MPI_INFO_NULL);
  MPI_File_write_all(fh, ibuf, 1024, MPI_INT, MPI_STATUS_IGNORE); /* 4096 B */
  MPI_File_write_all(fh, ibuf + 1024, 1024, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_sync(fh);
  MPI_File_read_at_all(fh, 0, ibuf, 1024, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Type_free(&vec);

  /* 2. fpp.<rank>.dat: (rank + 1) * 1000 bytes, one independent write. */
  char name[64];
  snprintf(name, sizeof name, "fpp.%d.dat", rank);
  MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  MPI_File_write(fh, cbuf, (rank + 1) * 1000, MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);

  /* 3. half<c>.dat: ranks of one half; (rank+1)*100 + 10 + 100 bytes each. */
  MPI_Comm half;
  int color = rank < size / 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  snprintf(name, sizeof name, "half%d.dat", color);
  MPI_File_open(half, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  MPI_File_write_at(fh, rank * 1000, cbuf, (rank + 1) * 100, MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_Request rq;
  MPI_File_iwrite_at(fh, rank * 1000 + 900, cbuf, 10, MPI_BYTE, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_File_write_at_all_begin(fh, 100000 + rank * 100, cbuf, 100, MPI_BYTE);
  MPI_File_write_at_all_end(fh, cbuf, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Comm_free(&half);

  /* 4. POSIX: 4096 bytes at rank * 4096 of one file; 512 bytes of a private one. */
  int fd = open("posix_shared.dat", O_CREAT | O_WRONLY, 0644);
  if (pwrite(fd, cbuf, 4096, (off_t)rank * 4096) != 4096) return 2;
  close(fd);
  snprintf(name, sizeof name, "posix.%d.dat", rank);
  fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (write(fd, cbuf, 512) != 512) return 3;
  close(fd);

  if (argc > 1 && !strcmp(argv[1], "exit")) exit(0);
  MPI_Finalize();
  return 0;
}
