/* Every MPI-IO data form the tool wraps, once each, with a byte count of its
 * own (form k moves k bytes of MPI_BYTE), so a wrapper recording the wrong
 * kind, direction or count shows in the totals; the nonblocking posts are
 * completed through each MPI_Wait and MPI_Test form.  Each rank writes its
 * own file on MPI_COMM_SELF (collectives on one rank stay cheap); with MPI-4
 * headers (MPICH 4) the large-count _c forms run too, 100 bytes further on.
 * tests/integration/test_mpi_forms.py asserts the counters. */
#include <mpi.h>
#include <stdio.h>

#define CHECK_FAIL() MPI_Abort(MPI_COMM_WORLD, 3)
#include "check.h"

static char buf[256];

/* Complete two requests, the way `how` names. */
static void complete(MPI_Request rq[2], int how) {
  int flag = 0, idx, out, ids[2];
  MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC warns on MPICH's (MPI_Status *)1 */
  int left = (rq[0] != MPI_REQUEST_NULL) + (rq[1] != MPI_REQUEST_NULL);
  switch (how) {
  case 0: /* one by Wait, one by Test */
    CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    while (!flag) CHECK(MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    break;
  case 1: CHECK(MPI_Waitall(2, rq, st) == MPI_SUCCESS); break;
  case 2:
    while (!flag) CHECK(MPI_Testall(2, rq, &flag, st) == MPI_SUCCESS);
    break;
  case 3:
    for (; left; left--) {
      CHECK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE) == MPI_SUCCESS && idx != MPI_UNDEFINED);
    }
    break;
  case 4:
    while (left) {
      CHECK(MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      if (flag && idx != MPI_UNDEFINED) left--;
    }
    break;
  case 5:
    while (left) {
      CHECK(MPI_Waitsome(2, rq, &out, ids, st) == MPI_SUCCESS);
      if (out != MPI_UNDEFINED) left -= out;
    }
    break;
  default:
    while (left) {
      CHECK(MPI_Testsome(2, rq, &out, ids, st) == MPI_SUCCESS);
      if (out != MPI_UNDEFINED) left -= out;
    }
  }
  CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL);
}

#define OK(call) CHECK((call) == MPI_SUCCESS)
#define ST MPI_STATUS_IGNORE

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[4096];
  snprintf(path, sizeof path, "%s/forms.%d.dat", argc > 1 ? argv[1] : ".", rank);
  MPI_File fh;
  OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  OK(MPI_File_set_size(fh, 4096));
  OK(MPI_File_preallocate(fh, 4096));
  OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  MPI_Request rq[2];

  /* independent: 1..6; collective: 7..12 */
  OK(MPI_File_read(fh, buf, 1, MPI_BYTE, ST));
  OK(MPI_File_write(fh, buf, 2, MPI_BYTE, ST));
  OK(MPI_File_read_at(fh, 0, buf, 3, MPI_BYTE, ST));
  OK(MPI_File_write_at(fh, 0, buf, 4, MPI_BYTE, ST));
  OK(MPI_File_read_shared(fh, buf, 5, MPI_BYTE, ST));
  OK(MPI_File_write_shared(fh, buf, 6, MPI_BYTE, ST));
  OK(MPI_File_read_all(fh, buf, 7, MPI_BYTE, ST));
  OK(MPI_File_write_all(fh, buf, 8, MPI_BYTE, ST));
  OK(MPI_File_read_at_all(fh, 0, buf, 9, MPI_BYTE, ST));
  OK(MPI_File_write_at_all(fh, 0, buf, 10, MPI_BYTE, ST));
  OK(MPI_File_read_ordered(fh, buf, 11, MPI_BYTE, ST));
  OK(MPI_File_write_ordered(fh, buf, 12, MPI_BYTE, ST));
  /* nonblocking: 13..22, then 29 and 30 again through the last two completions */
  OK(MPI_File_iread(fh, buf, 13, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite(fh, buf + 128, 14, MPI_BYTE, &rq[1]));
  complete(rq, 0);
  OK(MPI_File_iread_at(fh, 0, buf, 15, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite_at(fh, 128, buf + 128, 16, MPI_BYTE, &rq[1]));
  complete(rq, 1);
  OK(MPI_File_iread_shared(fh, buf, 17, MPI_BYTE, &rq[0]));
  complete((MPI_Request[2]){rq[0], MPI_REQUEST_NULL}, 2);
  OK(MPI_File_iwrite_shared(fh, buf + 128, 18, MPI_BYTE, &rq[1]));
  complete((MPI_Request[2]){MPI_REQUEST_NULL, rq[1]}, 2);
  OK(MPI_File_iread_all(fh, buf, 19, MPI_BYTE, &rq[0]));
  complete((MPI_Request[2]){rq[0], MPI_REQUEST_NULL}, 3);
  OK(MPI_File_iwrite_all(fh, buf + 128, 20, MPI_BYTE, &rq[1]));
  complete((MPI_Request[2]){MPI_REQUEST_NULL, rq[1]}, 3);
  OK(MPI_File_iread_at_all(fh, 0, buf, 21, MPI_BYTE, &rq[0]));
  complete((MPI_Request[2]){rq[0], MPI_REQUEST_NULL}, 4);
  OK(MPI_File_iwrite_at_all(fh, 128, buf + 128, 22, MPI_BYTE, &rq[1]));
  complete((MPI_Request[2]){MPI_REQUEST_NULL, rq[1]}, 4);
  OK(MPI_File_iread_at(fh, 0, buf, 29, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite_at(fh, 128, buf + 128, 30, MPI_BYTE, &rq[1]));
  complete(rq, 5);
  OK(MPI_File_iread_at(fh, 0, buf, 29, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite_at(fh, 128, buf + 128, 30, MPI_BYTE, &rq[1]));
  complete(rq, 6);
  /* split collectives: 23..28 */
  OK(MPI_File_read_all_begin(fh, buf, 23, MPI_BYTE));
  OK(MPI_File_read_all_end(fh, buf, ST));
  OK(MPI_File_write_all_begin(fh, buf, 24, MPI_BYTE));
  OK(MPI_File_write_all_end(fh, buf, ST));
  OK(MPI_File_read_at_all_begin(fh, 0, buf, 25, MPI_BYTE));
  OK(MPI_File_read_at_all_end(fh, buf, ST));
  OK(MPI_File_write_at_all_begin(fh, 0, buf, 26, MPI_BYTE));
  OK(MPI_File_write_at_all_end(fh, buf, ST));
  OK(MPI_File_read_ordered_begin(fh, buf, 27, MPI_BYTE));
  OK(MPI_File_read_ordered_end(fh, buf, ST));
  OK(MPI_File_write_ordered_begin(fh, buf, 28, MPI_BYTE));
  OK(MPI_File_write_ordered_end(fh, buf, ST));

#if MPI_VERSION >= 4 /* the same, large-count, each 100 bytes more */
  OK(MPI_File_read_c(fh, buf, 101, MPI_BYTE, ST));
  OK(MPI_File_write_c(fh, buf, 102, MPI_BYTE, ST));
  OK(MPI_File_read_at_c(fh, 0, buf, 103, MPI_BYTE, ST));
  OK(MPI_File_write_at_c(fh, 0, buf, 104, MPI_BYTE, ST));
  OK(MPI_File_read_shared_c(fh, buf, 105, MPI_BYTE, ST));
  OK(MPI_File_write_shared_c(fh, buf, 106, MPI_BYTE, ST));
  OK(MPI_File_read_all_c(fh, buf, 107, MPI_BYTE, ST));
  OK(MPI_File_write_all_c(fh, buf, 108, MPI_BYTE, ST));
  OK(MPI_File_read_at_all_c(fh, 0, buf, 109, MPI_BYTE, ST));
  OK(MPI_File_write_at_all_c(fh, 0, buf, 110, MPI_BYTE, ST));
  OK(MPI_File_read_ordered_c(fh, buf, 111, MPI_BYTE, ST));
  OK(MPI_File_write_ordered_c(fh, buf, 112, MPI_BYTE, ST));
  OK(MPI_File_iread_c(fh, buf, 113, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite_c(fh, buf + 128, 114, MPI_BYTE, &rq[1]));
  complete(rq, 0);
  OK(MPI_File_iread_at_c(fh, 0, buf, 115, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite_at_c(fh, 128, buf + 128, 116, MPI_BYTE, &rq[1]));
  complete(rq, 1);
  OK(MPI_File_iread_shared_c(fh, buf, 117, MPI_BYTE, &rq[0]));
  complete((MPI_Request[2]){rq[0], MPI_REQUEST_NULL}, 5);
  OK(MPI_File_iwrite_shared_c(fh, buf + 128, 118, MPI_BYTE, &rq[1]));
  complete((MPI_Request[2]){MPI_REQUEST_NULL, rq[1]}, 6);
  OK(MPI_File_iread_all_c(fh, buf, 119, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite_all_c(fh, buf + 128, 120, MPI_BYTE, &rq[1]));
  complete(rq, 3);
  OK(MPI_File_iread_at_all_c(fh, 0, buf, 121, MPI_BYTE, &rq[0]));
  OK(MPI_File_iwrite_at_all_c(fh, 128, buf + 128, 122, MPI_BYTE, &rq[1]));
  complete(rq, 4);
  OK(MPI_File_read_all_begin_c(fh, buf, 123, MPI_BYTE));
  OK(MPI_File_read_all_end(fh, buf, ST));
  OK(MPI_File_write_all_begin_c(fh, buf, 124, MPI_BYTE));
  OK(MPI_File_write_all_end(fh, buf, ST));
  OK(MPI_File_read_at_all_begin_c(fh, 0, buf, 125, MPI_BYTE));
  OK(MPI_File_read_at_all_end(fh, buf, ST));
  OK(MPI_File_write_at_all_begin_c(fh, 0, buf, 126, MPI_BYTE));
  OK(MPI_File_write_at_all_end(fh, buf, ST));
  OK(MPI_File_read_ordered_begin_c(fh, buf, 127, MPI_BYTE));
  OK(MPI_File_read_ordered_end(fh, buf, ST));
  OK(MPI_File_write_ordered_begin_c(fh, buf, 128, MPI_BYTE));
  OK(MPI_File_write_ordered_end(fh, buf, ST));
#endif
  OK(MPI_File_sync(fh));
  OK(MPI_File_close(&fh));
  MPI_Finalize();
  return 0;
}
