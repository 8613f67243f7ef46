/* Serial netCDF with exactly known variable I/O, in two files:
 * argv[1] (classic): record variable temp(time, x=100) double, fixed grid(x)
 *   float.  Writes: grid whole (400 B), temp 3 records with vara (800 B each),
 *   one element of record 3 with var1 (8 B); redef+enddef once; sync once.
 *   Reopened: temp whole (4 records, 3200 B), temp strided 2x50 (800 B),
 *   grid vara 20 (80 B), grid untyped var1 (4 B).
 *   Also fixed m(y=4, z=5) int: written transposed by varm (80 B) and by vars
 *   2x3 at stride 2 (24 B); reopened: varm 2x5 (40 B), var1 (4 B).
 * argv[2] (netCDF-4): record variable pr(time, lat=10, lon=20) float, chunks
 *   1x10x20, deflate 4; group g with h(lat) int.  Writes: pr 2 records with
 *   vara (800 B each), h whole (40 B).  Reopened: pr vara 2 records (1600 B). */
#include <netcdf.h>
#include <stdio.h>

#define CHECK(x)                                        \
  do {                                                  \
    int e_ = (x);                                       \
    if (e_ != NC_NOERR) {                               \
      fprintf(stderr, "%s: %s\n", #x, nc_strerror(e_)); \
      return 1;                                         \
    }                                                   \
  } while (0)

static int classic(const char *path) {
  int nc, dt, dx, dy, dz, temp, grid, m;
  static double d[400];
  static float g[100];
  static int mi[20];
  CHECK(nc_create(path, NC_CLOBBER, &nc));
  CHECK(nc_def_dim(nc, "time", NC_UNLIMITED, &dt));
  CHECK(nc_def_dim(nc, "x", 100, &dx));
  int dims[2] = {dt, dx};
  CHECK(nc_def_var(nc, "temp", NC_DOUBLE, 2, dims, &temp));
  CHECK(nc_def_var(nc, "grid", NC_FLOAT, 1, &dx, &grid));
  CHECK(nc_def_dim(nc, "y", 4, &dy));
  CHECK(nc_def_dim(nc, "z", 5, &dz));
  int mdims[2] = {dy, dz};
  CHECK(nc_def_var(nc, "m", NC_INT, 2, mdims, &m));
  CHECK(nc_enddef(nc));
  CHECK(nc_put_var_float(nc, grid, g));
  size_t m0[2] = {0, 0}, m45[2] = {4, 5}, m23[2] = {2, 3}, m25[2] = {2, 5}, m34[2] = {3, 4};
  ptrdiff_t one1[2] = {1, 1}, two2[2] = {2, 2}, tr45[2] = {1, 4}, tr25[2] = {1, 2};
  CHECK(nc_put_varm_int(nc, m, m0, m45, one1, tr45, mi)); /* memory transposed */
  CHECK(nc_put_vars_int(nc, m, m0, m23, two2, mi));
  for (size_t t = 0; t < 3; t++) {
    size_t start[2] = {t, 0}, count[2] = {1, 100};
    CHECK(nc_put_vara_double(nc, temp, start, count, d));
  }
  size_t one[2] = {3, 5};
  CHECK(nc_put_var1_double(nc, temp, one, d));
  CHECK(nc_redef(nc));
  CHECK(nc_put_att_text(nc, temp, "units", 1, "K"));
  CHECK(nc_enddef(nc));
  CHECK(nc_sync(nc));
  CHECK(nc_close(nc));

  CHECK(nc_open(path, NC_NOWRITE, &nc));
  CHECK(nc_inq_varid(nc, "temp", &temp));
  CHECK(nc_inq_varid(nc, "grid", &grid));
  CHECK(nc_get_var_double(nc, temp, d));
  size_t s0[2] = {0, 0}, c2[2] = {2, 50};
  ptrdiff_t st[2] = {2, 2};
  CHECK(nc_get_vars_double(nc, temp, s0, c2, st, d));
  size_t gs = 10, gc = 20, g0 = 0;
  CHECK(nc_get_vara_float(nc, grid, &gs, &gc, g));
  CHECK(nc_get_var1(nc, grid, &g0, g));
  CHECK(nc_inq_varid(nc, "m", &m));
  CHECK(nc_get_varm_int(nc, m, m0, m25, NULL, tr25, mi));
  CHECK(nc_get_var1_int(nc, m, m34, mi));
  CHECK(nc_close(nc));
  return 0;
}

static int nc4(const char *path) {
  int nc, grp, dt, dla, dlo, pr, h;
  static float p[400];
  static int hv[10];
  CHECK(nc_create(path, NC_NETCDF4 | NC_CLOBBER, &nc));
  CHECK(nc_def_dim(nc, "time", NC_UNLIMITED, &dt));
  CHECK(nc_def_dim(nc, "lat", 10, &dla));
  CHECK(nc_def_dim(nc, "lon", 20, &dlo));
  int dims[3] = {dt, dla, dlo};
  CHECK(nc_def_var(nc, "pr", NC_FLOAT, 3, dims, &pr));
  size_t chunks[3] = {1, 10, 20};
  CHECK(nc_def_var_chunking(nc, pr, NC_CHUNKED, chunks));
  CHECK(nc_def_var_deflate(nc, pr, 1, 1, 4));
  CHECK(nc_def_grp(nc, "g", &grp));
  CHECK(nc_def_var(grp, "h", NC_INT, 1, &dla, &h));
  CHECK(nc_enddef(nc));
  for (size_t t = 0; t < 2; t++) {
    size_t start[3] = {t, 0, 0}, count[3] = {1, 10, 20};
    CHECK(nc_put_vara_float(nc, pr, start, count, p));
  }
  CHECK(nc_put_var_int(grp, h, hv));
  CHECK(nc_close(nc));

  CHECK(nc_open(path, NC_NOWRITE, &nc));
  CHECK(nc_inq_varid(nc, "pr", &pr));
  size_t start[3] = {0, 0, 0}, count[3] = {2, 10, 20};
  CHECK(nc_get_vara_float(nc, pr, start, count, p));
  CHECK(nc_close(nc));
  return 0;
}

int main(int argc, char **argv) {
  if (classic(argc > 1 ? argv[1] : "nc_classic.nc")) return 1;
  if (nc4(argc > 2 ? argv[2] : "nc_nc4.nc")) return 2;
  printf("done\n");
  return 0;
}
