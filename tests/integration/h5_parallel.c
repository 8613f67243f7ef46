/* Parallel HDF5 with exactly known dataset I/O per rank (run with 4 ranks):
 *   /contig        double[4*1024], contiguous: one collective write of this
 *                  rank's 1024 elements, later one collective read of them;
 *   /grp/chunked   int[8][256], chunks 2x256: independent writes of rows 2r and
 *                  2r+1 (regular), 4 points of row 2r, an irregular union of
 *                  4 + 2 elements; later one independent read of everything.
 * The file access list asks for MPI-IO, alignment 65536 above 1024 bytes and
 * collective metadata; the file is flushed once, closed, reopened read-only. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

#define N 1024
#define CHECK(x)                         \
  if ((x) < 0) {                         \
    fprintf(stderr, "failed: %s\n", #x); \
    MPI_Abort(MPI_COMM_WORLD, 1);        \
  }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *path = argc > 1 ? argv[1] : "h5_parallel.h5";

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  CHECK(H5Pset_alignment(fapl, 1024, 65536));
  CHECK(H5Pset_all_coll_metadata_ops(fapl, 1));
  CHECK(H5Pset_coll_metadata_write(fapl, 1));
  hid_t coll = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE));
  hid_t indep = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(indep, H5FD_MPIO_INDEPENDENT));

  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(f);
  hsize_t cdim = (hsize_t)size * N;
  hid_t cspace = H5Screate_simple(1, &cdim, NULL);
  hid_t contig =
      H5Dcreate2(f, "contig", H5T_NATIVE_DOUBLE, cspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(contig);
  hid_t g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t kdim[2] = {2 * (hsize_t)size, 256}, chunk[2] = {2, 256};
  hid_t kspace = H5Screate_simple(2, kdim, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  CHECK(H5Pset_chunk(dcpl, 2, chunk));
  hid_t chunked = H5Dcreate2(g, "chunked", H5T_NATIVE_INT, kspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(chunked);

  static double dbuf[N];
  static int ibuf[8 * 256 * 4];
  for (int i = 0; i < N; i++) dbuf[i] = rank * N + i;

  /* contig: one collective write of 8192 bytes */
  hsize_t start = (hsize_t)rank * N, count = N;
  hid_t mspace = H5Screate_simple(1, &count, NULL);
  CHECK(H5Sselect_hyperslab(cspace, H5S_SELECT_SET, &start, NULL, &count, NULL));
  CHECK(H5Dwrite(contig, H5T_NATIVE_DOUBLE, mspace, cspace, coll, dbuf));

  /* chunked: two row writes (1024 bytes each), 4 points, 6 irregular elements */
  hsize_t row = 256, one[2] = {1, 256};
  hid_t rspace = H5Screate_simple(1, &row, NULL);
  for (int k = 0; k < 2; k++) {
    hsize_t s2[2] = {2 * (hsize_t)rank + (hsize_t)k, 0};
    CHECK(H5Sselect_hyperslab(kspace, H5S_SELECT_SET, s2, NULL, one, NULL));
    CHECK(H5Dwrite(chunked, H5T_NATIVE_INT, rspace, kspace, H5P_DEFAULT, ibuf));
  }
  hsize_t pts[4][2] = {{2 * (hsize_t)rank, 0},
                       {2 * (hsize_t)rank, 5},
                       {2 * (hsize_t)rank, 10},
                       {2 * (hsize_t)rank, 100}};
  hsize_t four = 4, six = 6;
  hid_t p4 = H5Screate_simple(1, &four, NULL);
  CHECK(H5Sselect_elements(kspace, H5S_SELECT_SET, 4, &pts[0][0]));
  CHECK(H5Dwrite(chunked, H5T_NATIVE_INT, p4, kspace, indep, ibuf));
  hsize_t a[2] = {2 * (hsize_t)rank, 0}, ac[2] = {1, 4};
  hsize_t b[2] = {2 * (hsize_t)rank, 8}, bc[2] = {1, 2};
  hid_t p6 = H5Screate_simple(1, &six, NULL);
  CHECK(H5Sselect_hyperslab(kspace, H5S_SELECT_SET, a, NULL, ac, NULL));
  CHECK(H5Sselect_hyperslab(kspace, H5S_SELECT_OR, b, NULL, bc, NULL));
  CHECK(H5Dwrite(chunked, H5T_NATIVE_INT, p6, kspace, indep, ibuf));

  CHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
  H5Dclose(contig);
  H5Dclose(chunked);
  H5Gclose(g);
  CHECK(H5Fclose(f));

  /* reopen: one collective read of this rank's slice, one independent read
   * of the whole chunked dataset (H5S_ALL: 8192 bytes) */
  f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  CHECK(f);
  contig = H5Dopen2(f, "contig", H5P_DEFAULT);
  chunked = H5Dopen2(f, "/grp/chunked", H5P_DEFAULT);
  CHECK(contig);
  CHECK(chunked);
  hid_t fs = H5Dget_space(contig);
  CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
  CHECK(H5Dread(contig, H5T_NATIVE_DOUBLE, mspace, fs, coll, dbuf));
  CHECK(H5Dread(chunked, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, indep, ibuf));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += dbuf[i] != rank * N + i;
  H5Dclose(contig);
  H5Dclose(chunked);
  CHECK(H5Fclose(f));

  H5Sclose(fs);
  H5Sclose(mspace);
  H5Sclose(rspace);
  H5Sclose(p4);
  H5Sclose(p6);
  H5Sclose(cspace);
  H5Sclose(kspace);
  H5Pclose(dcpl);
  H5Pclose(fapl);
  H5Pclose(coll);
  H5Pclose(indep);
  MPI_Finalize();
  if (rank == 0) printf("done\n");
  return bad != 0;
}
