/* Derived datatypes freed and made again (MPICH hands a freed handle out
 * again): MPI-IO bytes follow each type's own size.  Each rank writes its own
 * file: one contiguous type of 4 ints (16 B), freed, then one of 100 ints
 * (400 B), freed, then 8 MPI_BYTE. */
#include <mpi.h>
#include <stdio.h>

#define CHECK_FAIL() MPI_Abort(MPI_COMM_WORLD, 3)
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[4096];
  snprintf(path, sizeof path, "%s/types.%d.dat", argc > 1 ? argv[1] : ".", rank);
  static int buf[100];
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) ==
        MPI_SUCCESS);
  MPI_Datatype t;
  MPI_Offset at = 0;
  for (int n = 4; n <= 100; n += 96) {
    CHECK(MPI_Type_contiguous(n, MPI_INT, &t) == MPI_SUCCESS && MPI_Type_commit(&t) == 0);
    CHECK(MPI_File_write_at(fh, at, buf, 1, t, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    at += n * (MPI_Offset)sizeof(int);
    CHECK(MPI_Type_free(&t) == MPI_SUCCESS);
  }
  CHECK(MPI_File_write_at(fh, at, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
  MPI_Finalize();
  return 0;
}
