/* Parallel HDF5 for the advice corpus (run with 4 ranks): `advice_h5 MODE`.
 *   indep  a contiguous dataset of 1024 rows of 4 KiB; every rank writes the rows
 *          i*nranks+rank (256 each) with independent H5Dwrite calls: small
 *          interleaved pieces that collective transfers would merge
 *   coll   alignment 1 MiB; a contiguous dataset, every rank writes its 4 MiB slab
 *          with one collective H5Dwrite (H5FD_MPIO_COLLECTIVE) and reads it back
 *   fill   a chunked dataset (1 MiB chunks) created with the default fill value
 *          (parallel HDF5 allocates early and writes the fill at creation), then
 *          every rank writes its 4 MiB slab collectively: the data written twice
 *   meta   rank 0 writes a file of 400 small datasets (one attribute each); then every
 *          rank opens it through the MPI-IO driver with default (independent) metadata
 *          and opens each dataset and reads its attribute: each rank reads the object
 *          headers itself, hundreds of reads of a few hundred bytes */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define ROW 512           /* doubles: 4 KiB */
#define SLAB (512 * 1024) /* doubles: 4 MiB */
#define CHECK(x)                         \
  if ((x) < 0) {                         \
    fprintf(stderr, "failed: %s\n", #x); \
    MPI_Abort(MPI_COMM_WORLD, 1);        \
  }

static double data[SLAB];

#define NSETS 400

static void meta(int rank) {
  char name[32];
  if (rank == 0) {
    hid_t f = H5Fcreate("meta.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f);
    hsize_t one = 4;
    hid_t sp = H5Screate_simple(1, &one, NULL);
    hid_t scalar = H5Screate(H5S_SCALAR);
    for (int i = 0; i < NSETS; i++) {
      snprintf(name, sizeof name, "set%03d", i);
      hid_t d = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      CHECK(d);
      CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
      hid_t a = H5Acreate2(d, "units", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
      CHECK(a);
      CHECK(H5Awrite(a, H5T_NATIVE_INT, &i));
      CHECK(H5Aclose(a));
      CHECK(H5Dclose(d));
    }
    CHECK(H5Sclose(scalar));
    CHECK(H5Sclose(sp));
    CHECK(H5Fclose(f));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  hid_t f = H5Fopen("meta.h5", H5F_ACC_RDONLY, fapl);
  CHECK(f);
  for (int i = 0; i < NSETS; i++) {
    snprintf(name, sizeof name, "set%03d", i);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    CHECK(d);
    hid_t a = H5Aopen(d, "units", H5P_DEFAULT);
    int v;
    CHECK(a);
    CHECK(H5Aread(a, H5T_NATIVE_INT, &v));
    CHECK(H5Aclose(a));
    CHECK(H5Dclose(d));
  }
  CHECK(H5Fclose(f));
  CHECK(H5Pclose(fapl));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int fill = argc > 1 && !strcmp(argv[1], "fill");
  int coll = fill || (argc > 1 && !strcmp(argv[1], "coll"));
  for (int i = 0; i < SLAB; i++) data[i] = rank + i;
  if (argc > 1 && !strcmp(argv[1], "meta")) {
    meta(rank);
    MPI_Finalize();
    return 0;
  }

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  if (coll) CHECK(H5Pset_alignment(fapl, 65536, 1 << 20));
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(dxpl, coll ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
  hid_t f = H5Fcreate(fill   ? "fill.h5"
                      : coll ? "coll.h5"
                             : "indep.h5",
                      H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(f);
  hsize_t dims[2] = {coll ? (hsize_t)size : 256 * (hsize_t)size, coll ? SLAB : ROW};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk[2] = {1, SLAB / 4};
  if (fill) CHECK(H5Pset_chunk(dcpl, 2, chunk));
  hid_t d = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(d);
  hsize_t count[2] = {1, dims[1]};
  hid_t mem = H5Screate_simple(2, count, NULL);
  for (int i = 0; i < (coll ? 1 : 256); i++) {
    hsize_t start[2] = {coll ? (hsize_t)rank : (hsize_t)i * size + rank, 0};
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, dxpl, data));
  }
  if (coll && !fill) CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, dxpl, data));
  CHECK(H5Pclose(dcpl));
  CHECK(H5Sclose(mem));
  CHECK(H5Dclose(d));
  CHECK(H5Sclose(space));
  CHECK(H5Fclose(f));
  CHECK(H5Pclose(dxpl));
  CHECK(H5Pclose(fapl));
  MPI_Finalize();
  return 0;
}
