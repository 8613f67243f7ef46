/* HDF5 through the 1.6 API names (H5Dcreate1, H5Dopen1, H5Dextend), as IOR's
 * HDF5 backend calls them: `h5_v16 FILE`.  Two datasets created, written
 * (1024 doubles, then 512 ints after an extend), closed, reopened, read. */
#include <hdf5.h>
#include <stdio.h>

#include "check.h"

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  static double d[1024];
  static int v[512];
  hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(f >= 0);
  hsize_t n = 1024, one = 256, max = H5S_UNLIMITED;
  hid_t s = H5Screate_simple(1, &n, NULL);
  hid_t a = H5Dcreate1(f, "a", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT);
  CHECK(a >= 0 && H5Dwrite(a, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d) >= 0);
  CHECK(H5Dclose(a) >= 0 && H5Sclose(s) >= 0);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  CHECK(H5Pset_chunk(dcpl, 1, &one) >= 0);
  s = H5Screate_simple(1, &one, &max);
  hid_t b = H5Dcreate1(f, "b", H5T_NATIVE_INT, s, dcpl);
  hsize_t ext = 512;
  CHECK(b >= 0 && H5Dextend(b, &ext) >= 0);
  CHECK(H5Dwrite(b, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  CHECK(H5Dclose(b) >= 0 && H5Sclose(s) >= 0 && H5Pclose(dcpl) >= 0);
  a = H5Dopen1(f, "a");
  b = H5Dopen1(f, "b");
  CHECK(a >= 0 && b >= 0);
  CHECK(H5Dread(a, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d) >= 0);
  CHECK(H5Dread(b, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  CHECK(H5Dclose(a) >= 0 && H5Dclose(b) >= 0 && H5Fclose(f) >= 0);
  printf("done\n");
  return 0;
}
