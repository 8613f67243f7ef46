/* PnetCDF with exactly known variable I/O per rank (CDF5 file, any rank count):
 *   rec(time, x=100*nprocs) int, record variable; fix(x) double.
 * Writes: fix collective vara (800 B); rec 2 records by iput_vara (400 B each)
 * completed by one wait_all; rec one element by independent put_var1 (4 B);
 * redef+enddef once; sync once.  Reopened: rec collective strided 2x50 (400 B),
 * fix iget_vara (800 B) completed by one independent wait, fix flexible get_vara_all 10
 * doubles (80 B).  Reopened for writing: rec put_varn_int_all of 3 boxes (10 + 20 + 5
 * ints, 140 B) read back by get_varn_int_all; fix flexible iput_varn of 2 single
 * doubles (16 B) completed by one wait_all; fix put_vard_all and get_vard_all of 10
 * doubles (80 B) through a subarray file type.  aux(p=nprocs, y=8) int, row
 * rank each rank's, in that last phase: put_varm_int_all of the row (32 B),
 * get_var_int_all of the whole variable (32 B x nprocs), independent
 * get_var1_int (4 B) and flexible get_varm (32 B), bput_vara_int of 4 (16 B)
 * and flexible iget_vars of 4 at stride 2 (16 B), both completed by the same
 * wait_all as the iput_varn. */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>

#define CHECK(x)                                           \
  do {                                                     \
    int e_ = (x);                                          \
    if (e_ != NC_NOERR) {                                  \
      fprintf(stderr, "%s: %s\n", #x, ncmpi_strerror(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                        \
    }                                                      \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, nc, dt, dx, dp, dy, rec, fix, aux, req[3], st[3];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *path = argc > 1 ? argv[1] : "pnc_basic.nc";
  static int ib[200];
  static double db[100];
  MPI_Offset me = (MPI_Offset)rank * 100;

  CHECK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
  CHECK(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dt));
  CHECK(ncmpi_def_dim(nc, "x", (MPI_Offset)size * 100, &dx));
  int dims[2] = {dt, dx};
  CHECK(ncmpi_def_var(nc, "rec", NC_INT, 2, dims, &rec));
  CHECK(ncmpi_def_var(nc, "fix", NC_DOUBLE, 1, &dx, &fix));
  CHECK(ncmpi_def_dim(nc, "p", size, &dp));
  CHECK(ncmpi_def_dim(nc, "y", 8, &dy));
  int adims[2] = {dp, dy};
  CHECK(ncmpi_def_var(nc, "aux", NC_INT, 2, adims, &aux));
  CHECK(ncmpi_enddef(nc));
  MPI_Offset n100 = 100;
  CHECK(ncmpi_put_vara_double_all(nc, fix, &me, &n100, db));
  for (int t = 0; t < 2; t++) {
    MPI_Offset start[2] = {t, me}, count[2] = {1, 100};
    CHECK(ncmpi_iput_vara_int(nc, rec, start, count, ib, &req[t]));
  }
  CHECK(ncmpi_wait_all(nc, 2, req, st));
  CHECK(ncmpi_begin_indep_data(nc));
  MPI_Offset one[2] = {2, me};
  CHECK(ncmpi_put_var1_int(nc, rec, one, ib));
  CHECK(ncmpi_end_indep_data(nc));
  CHECK(ncmpi_redef(nc));
  CHECK(ncmpi_put_att_text(nc, rec, "units", 1, "K"));
  CHECK(ncmpi_enddef(nc));
  CHECK(ncmpi_sync(nc));
  CHECK(ncmpi_close(nc));

  CHECK(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
  CHECK(ncmpi_inq_varid(nc, "rec", &rec));
  CHECK(ncmpi_inq_varid(nc, "fix", &fix));
  MPI_Offset s0[2] = {0, me}, c2[2] = {2, 50}, str[2] = {1, 2};
  CHECK(ncmpi_get_vars_int_all(nc, rec, s0, c2, str, ib));
  CHECK(ncmpi_iget_vara_double(nc, fix, &me, &n100, db, &req[0]));
  CHECK(ncmpi_begin_indep_data(nc));
  CHECK(ncmpi_wait(nc, 1, req, st));
  CHECK(ncmpi_end_indep_data(nc));
  MPI_Offset n10 = 10;
  CHECK(ncmpi_get_vara_all(nc, fix, &me, &n10, db, 10, MPI_DOUBLE));
  CHECK(ncmpi_close(nc));

  CHECK(ncmpi_open(MPI_COMM_WORLD, path, NC_WRITE, MPI_INFO_NULL, &nc));
  CHECK(ncmpi_inq_varid(nc, "rec", &rec));
  CHECK(ncmpi_inq_varid(nc, "fix", &fix));
  MPI_Offset b0[2] = {3, me}, b1[2] = {4, me}, b2[2] = {5, me + 10};
  MPI_Offset n0[2] = {1, 10}, n1[2] = {1, 20}, n2[2] = {1, 5};
  MPI_Offset *starts[3] = {b0, b1, b2}, *counts[3] = {n0, n1, n2};
  CHECK(ncmpi_put_varn_int_all(nc, rec, 3, starts, counts, ib));
  CHECK(ncmpi_get_varn_int_all(nc, rec, 3, starts, counts, ib));
  MPI_Offset f0 = me, f1 = me + 1, one1 = 1;
  MPI_Offset *fstarts[2] = {&f0, &f1}, *fcounts[2] = {&one1, &one1};
  CHECK(ncmpi_iput_varn(nc, fix, 2, fstarts, fcounts, db, 2, MPI_DOUBLE, &req[0]));
  CHECK(ncmpi_inq_varid(nc, "aux", &aux));
  MPI_Offset row[2] = {rank, 0}, c8[2] = {1, 8}, c4[2] = {1, 4}, s2[2] = {1, 2}, im[2] = {8, 1};
  CHECK(ncmpi_put_varm_int_all(nc, aux, row, c8, NULL, im, ib));
  CHECK(ncmpi_get_var_int_all(nc, aux, ib));
  CHECK(ncmpi_begin_indep_data(nc));
  CHECK(ncmpi_get_var1_int(nc, aux, row, ib));
  CHECK(ncmpi_get_varm(nc, aux, row, c8, NULL, im, ib, 8, MPI_INT));
  CHECK(ncmpi_end_indep_data(nc));
  CHECK(ncmpi_buffer_attach(nc, 16));
  CHECK(ncmpi_bput_vara_int(nc, aux, row, c4, ib, &req[1]));
  CHECK(ncmpi_iget_vars(nc, aux, row, c4, s2, ib + 100, 4, MPI_INT, &req[2]));
  CHECK(ncmpi_wait_all(nc, 3, req, st));
  CHECK(ncmpi_buffer_detach(nc));
  MPI_Datatype ft; /* vard: 10 doubles of fix at this rank's start, in the file */
  int gsize = size * 100, sub = 10, at = (int)me;
  MPI_Type_create_subarray(1, &gsize, &sub, &at, MPI_ORDER_C, MPI_DOUBLE, &ft);
  MPI_Type_commit(&ft);
  CHECK(ncmpi_put_vard_all(nc, fix, ft, db, 10, MPI_DOUBLE));
  CHECK(ncmpi_get_vard_all(nc, fix, ft, db, 10, MPI_DOUBLE));
  MPI_Type_free(&ft);
  CHECK(ncmpi_close(nc));
  MPI_Finalize();
  if (rank == 0) printf("done\n");
  return 0;
}
