/* MPI I/O patterns for the advice tests: `advice_mpi MODE` in the current
 * directory (tests/integration/test_advice_real.py asserts the rules each fires).
 *   good       every rank 4 x MPI_File_write_at_all of 4 MiB at 4 MiB-aligned,
 *              rank-interleaved offsets, then 4 x MPI_File_read_at_all back:
 *              few, large, aligned, collective; must fire no warning.
 *   indep      every rank 300 x MPI_File_write_at of 4 KiB, interleaved with the
 *              other ranks in one shared file, no collective call.
 *   imbalance  a POSIX file all ranks write: rank 0 80 MiB, the others 4 KiB.
 *   nocb       romio_cb_write=disable, then every rank 30 x MPI_File_write_at_all
 *              of 4 KiB, interleaved: small collective writes left unmerged. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KiB 1024
#define MiB (1024 * 1024)

static char buf[4 * MiB] __attribute__((aligned(4096)));

#define CHECK_FAIL() MPI_Abort(MPI_COMM_WORLD, 3)
#include "check.h"

static void good(int rank, int size) {
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, "good.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                      &fh) == MPI_SUCCESS);
  for (int i = 0; i < 4; i++)
    CHECK(MPI_File_write_at_all(fh, (MPI_Offset)(i * size + rank) * 4 * MiB, buf, 4 * MiB, MPI_BYTE,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < 4; i++)
    CHECK(MPI_File_read_at_all(fh, (MPI_Offset)(i * size + rank) * 4 * MiB, buf, 4 * MiB, MPI_BYTE,
                               MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
}

static void indep(int rank, int size) {
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, "indep.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &fh) == MPI_SUCCESS);
  for (int i = 0; i < 300; i++)
    CHECK(MPI_File_write_at(fh, (MPI_Offset)(i * size + rank) * 4 * KiB, buf, 4 * KiB, MPI_BYTE,
                            MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
}

static void nocb(int rank, int size) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "romio_cb_write", "disable");
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, "nocb.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh) ==
        MPI_SUCCESS);
  MPI_Info_free(&info);
  for (int i = 0; i < 30; i++)
    CHECK(MPI_File_write_at_all(fh, (MPI_Offset)(i * size + rank) * 4 * KiB, buf, 4 * KiB, MPI_BYTE,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
}

static void imbalance(int rank, int size) {
  int fd = open("imbalance.dat", O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0);
  if (rank == 0)
    for (int i = 0; i < 20; i++) CHECK(pwrite(fd, buf, 4 * MiB, (off_t)i * 4 * MiB) == 4 * MiB);
  else
    CHECK(pwrite(fd, buf, 4 * KiB, (off_t)80 * MiB + (off_t)(rank - 1) * 4 * KiB) == 4 * KiB);
  CHECK(close(fd) == 0);
  (void)size;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  memset(buf, 'a' + rank % 26, sizeof buf);
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "good"))
    good(rank, size);
  else if (!strcmp(mode, "indep"))
    indep(rank, size);
  else if (!strcmp(mode, "imbalance"))
    imbalance(rank, size);
  else if (!strcmp(mode, "nocb"))
    nocb(rank, size);
  else {
    if (rank == 0) fprintf(stderr, "usage: advice_mpi good|indep|imbalance|nocb\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
