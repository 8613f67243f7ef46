/* The advice corpus: MPI programs with one planted I/O problem each (and good ones),
 * `advice_corpus MODE` in the current directory, run with 4 ranks.
 * tests/helpers/advice_corpus.py lists, for each mode, the findings the report must
 * give (id, rank, severity); test_advice_corpus.py runs them and scores the advice.
 *   strided    POSIX: every rank 512 x pwrite of 4 KiB into one shared file,
 *              interleaved with the other ranks (stride 3 x 4 KiB)
 *   indep      MPI-IO: the same pattern with MPI_File_write_at, no collective call
 *   nocb       romio_cb_write=disable, 40 x MPI_File_write_at_all of 4 KiB, interleaved
 *   sieve      MPI-IO: a strided file view (4 KiB pieces, 4 ranks apart) and 8
 *              independent MPI_File_write of 64 pieces: ROMIO data sieving
 *   twophase   MPI-IO: a file of 16 MiB (MPI_File_set_size), the sieve view with every
 *              other slot left empty, 8 collective MPI_File_write_all: two-phase reads
 *              each file domain back on the aggregators to fill its holes
 *   sievecoll  the sieve pattern with collective MPI_File_write_all calls and
 *              romio_cb_write=disable: every rank sieves on its own
 *   appends    file per process: a text log written 256 bytes per write(), 20000 times
 *   mixed      file per process: a 256 MiB sparse file read whole in 64 aligned 4 MiB
 *              reads, and 500 x (rank + 1) reads of 100 bytes at misaligned offsets
 *   misaligned file per process: 1280 x 200 KiB writes after a 100-byte header
 *   meta       file per process: 40 small files, then 30 x (stat, open, close) of each
 *   random     file per process: a 64 MiB sparse file, 3000 pread of 4 KiB at random
 *              offsets (a fixed pseudo-random sequence)
 *   imbalance  file per process: rank 0 writes 64 MiB, the others 256 KiB
 *   reread     rank 0 writes an 8 MiB input, then every rank reads it whole, 4 times
 *   fsync      file per process: 200 x (16 KiB write, fsync)
 *   stdio      file per process: 5,000,000 fprintf lines
 *   good       MPI_File_write_at_all / read_at_all of 4 MiB, 4 MiB-aligned, 2 each
 *   fpp        file per process: 8 x 1 MiB aligned sequential writes, one read back */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KiB 1024
#define MiB (1024 * 1024)

static char buf[4 * MiB] __attribute__((aligned(4096)));

#define CHECK_FAIL() MPI_Abort(MPI_COMM_WORLD, 3)
#include "check.h"

static int rank, size;

static int own_file(const char *stem, int flags) {
  char name[64];
  snprintf(name, sizeof name, "%s.%d", stem, rank);
  int fd = open(name, flags, 0644);
  CHECK(fd >= 0);
  return fd;
}

static void strided(void) {
  int fd = open("strided.dat", O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0);
  for (int i = 0; i < 4096; i++)
    CHECK(pwrite(fd, buf, 4 * KiB, ((off_t)i * size + rank) * 4 * KiB) == 4 * KiB);
  CHECK(close(fd) == 0);
}

static MPI_File mpi_open(const char *name, MPI_Info info) {
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) ==
        MPI_SUCCESS);
  return fh;
}

static void indep(void) {
  MPI_File fh = mpi_open("indep.dat", MPI_INFO_NULL);
  for (int i = 0; i < 512; i++)
    CHECK(MPI_File_write_at(fh, ((MPI_Offset)i * size + rank) * 4 * KiB, buf, 4 * KiB, MPI_BYTE,
                            MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
}

static void nocb(void) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "romio_cb_write", "disable");
  MPI_File fh = mpi_open("nocb.dat", info);
  MPI_Info_free(&info);
  for (int i = 0; i < 40; i++)
    CHECK(MPI_File_write_at_all(fh, ((MPI_Offset)i * size + rank) * 4 * KiB, buf, 4 * KiB, MPI_BYTE,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
}

static void sieve(void) {
  MPI_Datatype piece, view;
  MPI_Type_contiguous(4 * KiB, MPI_BYTE, &piece);
  MPI_Type_vector(64, 1, size, piece, &view);
  MPI_Type_commit(&view);
  MPI_File fh = mpi_open("sieve.dat", MPI_INFO_NULL);
  CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * 4 * KiB, MPI_BYTE, view, "native",
                          MPI_INFO_NULL) == MPI_SUCCESS);
  for (int i = 0; i < 8; i++)
    CHECK(MPI_File_write(fh, buf, 64 * 4 * KiB, MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
  MPI_Type_free(&view);
  MPI_Type_free(&piece);
}

static void twophase(void) {
  MPI_Datatype piece, view;
  MPI_Type_contiguous(4 * KiB, MPI_BYTE, &piece);
  MPI_Type_vector(64, 1, 2 * size, piece, &view); /* every other slot: holes */
  MPI_Type_commit(&view);
  MPI_File fh = mpi_open("twophase.dat", MPI_INFO_NULL);
  /* the extent exists (as a restart file would): two-phase reads what it does not cover */
  CHECK(MPI_File_set_size(fh, (MPI_Offset)8 * 64 * 2 * size * 4 * KiB) == MPI_SUCCESS);
  CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * 4 * KiB, MPI_BYTE, view, "native",
                          MPI_INFO_NULL) == MPI_SUCCESS);
  for (int i = 0; i < 8; i++)
    CHECK(MPI_File_write_all(fh, buf, 64 * 4 * KiB, MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
  MPI_Type_free(&view);
  MPI_Type_free(&piece);
}

static void sievecoll(void) {
  MPI_Datatype piece, view;
  MPI_Info info;
  MPI_Type_contiguous(4 * KiB, MPI_BYTE, &piece);
  MPI_Type_vector(64, 1, size, piece, &view);
  MPI_Type_commit(&view);
  MPI_Info_create(&info);
  MPI_Info_set(info, "romio_cb_write", "disable");
  MPI_File fh = mpi_open("sievecoll.dat", info);
  MPI_Info_free(&info);
  CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * 4 * KiB, MPI_BYTE, view, "native",
                          MPI_INFO_NULL) == MPI_SUCCESS);
  for (int i = 0; i < 8; i++)
    CHECK(MPI_File_write_all(fh, buf, 64 * 4 * KiB, MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
  MPI_Type_free(&view);
  MPI_Type_free(&piece);
}

static void appends(void) {
  int fd = own_file("appends.log", O_CREAT | O_WRONLY | O_TRUNC | O_APPEND);
  char line[256];
  memset(line, 'x', sizeof line);
  line[sizeof line - 1] = '\n';
  for (int i = 0; i < 20000; i++) CHECK(write(fd, line, sizeof line) == (ssize_t)sizeof line);
  CHECK(close(fd) == 0);
}

static void mixed(void) {
  int fd = own_file("mixed.dat", O_CREAT | O_RDWR | O_TRUNC);
  CHECK(ftruncate(fd, 256 * MiB) == 0);
  for (int i = 0; i < 64; i++) CHECK(pread(fd, buf, 4 * MiB, (off_t)i * 4 * MiB) == 4 * MiB);
  for (int i = 0; i < 500 * (rank + 1); i++)
    CHECK(pread(fd, buf, 100, (off_t)i * 4 * KiB + 7) == 100);
  CHECK(close(fd) == 0);
}

static void misaligned(void) {
  int fd = own_file("misaligned.dat", O_CREAT | O_WRONLY | O_TRUNC);
  CHECK(write(fd, buf, 100) == 100);
  for (int i = 0; i < 1280; i++) CHECK(write(fd, buf, 200 * KiB) == 200 * KiB);
  CHECK(close(fd) == 0);
}

static void meta(void) {
  char name[64];
  for (int i = 0; i < 40; i++) {
    snprintf(name, sizeof name, "meta.%d.%d", rank, i);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, buf, 64) == 64 && close(fd) == 0);
  }
  struct stat st;
  for (int round = 0; round < 200; round++)
    for (int i = 0; i < 40; i++) {
      snprintf(name, sizeof name, "meta.%d.%d", rank, i);
      CHECK(stat(name, &st) == 0);
      int fd = open(name, O_RDONLY);
      CHECK(fd >= 0 && close(fd) == 0);
    }
}

static void random_(void) {
  int fd = own_file("random.dat", O_CREAT | O_RDWR | O_TRUNC);
  CHECK(ftruncate(fd, 64 * MiB) == 0);
  unsigned x = 12345u + (unsigned)rank;
  for (int i = 0; i < 12000; i++) {
    x = x * 1103515245u + 12345u; /* a fixed LCG: the same offsets every run */
    off_t block = (off_t)((x >> 8) % (64 * MiB / (4 * KiB)));
    CHECK(pread(fd, buf, 4 * KiB, block * 4 * KiB) == 4 * KiB);
  }
  CHECK(close(fd) == 0);
}

static void imbalance(void) {
  int fd = own_file("imbalance.dat", O_CREAT | O_WRONLY | O_TRUNC);
  if (rank == 0)
    for (int i = 0; i < 16; i++) CHECK(write(fd, buf, 4 * MiB) == 4 * MiB);
  else
    CHECK(write(fd, buf, 256 * KiB) == 256 * KiB);
  CHECK(close(fd) == 0);
}

static void reread(void) {
  if (rank == 0) {
    int fd = open("input.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0);
    for (int i = 0; i < 2; i++) CHECK(write(fd, buf, 4 * MiB) == 4 * MiB);
    CHECK(close(fd) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int pass = 0; pass < 4; pass++) {
    int fd = open("input.dat", O_RDONLY);
    CHECK(fd >= 0);
    for (int i = 0; i < 2; i++) CHECK(read(fd, buf, 4 * MiB) == 4 * MiB);
    CHECK(close(fd) == 0);
  }
}

static void fsync_(void) {
  int fd = own_file("fsync.dat", O_CREAT | O_WRONLY | O_TRUNC);
  for (int i = 0; i < 200; i++) CHECK(write(fd, buf, 16 * KiB) == 16 * KiB && fsync(fd) == 0);
  CHECK(close(fd) == 0);
}

static void stdio_(void) {
  char name[64];
  snprintf(name, sizeof name, "stdio.%d.txt", rank);
  FILE *f = fopen(name, "w");
  CHECK(f != NULL);
  for (int i = 0; i < 5000000; i++) CHECK(fprintf(f, "%d %g\n", i, i * 0.5) > 0);
  CHECK(fclose(f) == 0);
}

static void good(void) {
  MPI_File fh = mpi_open("good.dat", MPI_INFO_NULL);
  for (int i = 0; i < 2; i++)
    CHECK(MPI_File_write_at_all(fh, ((MPI_Offset)i * size + rank) * 4 * MiB, buf, 4 * MiB, MPI_BYTE,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < 2; i++)
    CHECK(MPI_File_read_at_all(fh, ((MPI_Offset)i * size + rank) * 4 * MiB, buf, 4 * MiB, MPI_BYTE,
                               MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
}

static void fpp(void) {
  int fd = own_file("fpp.dat", O_CREAT | O_RDWR | O_TRUNC);
  for (int i = 0; i < 8; i++) CHECK(write(fd, buf, MiB) == MiB);
  CHECK(pread(fd, buf, 4 * MiB, 0) == 4 * MiB && pread(fd, buf, 4 * MiB, 4 * MiB) == 4 * MiB);
  CHECK(close(fd) == 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  memset(buf, 'a' + rank % 26, sizeof buf);
  static const struct {
    const char *name;
    void (*fn)(void);
  } modes[] = {{"strided", strided}, {"indep", indep},           {"nocb", nocb},
               {"sieve", sieve},     {"misaligned", misaligned}, {"meta", meta},
               {"random", random_},  {"imbalance", imbalance},   {"reread", reread},
               {"fsync", fsync_},    {"stdio", stdio_},          {"good", good},
               {"fpp", fpp},         {"twophase", twophase},     {"appends", appends},
               {"mixed", mixed},     {"sievecoll", sievecoll}};
  const char *mode = argc > 1 ? argv[1] : "";
  size_t i = 0, n = sizeof modes / sizeof modes[0];
  while (i < n && strcmp(mode, modes[i].name)) i++;
  if (i == n) {
    if (rank == 0) fprintf(stderr, "usage: advice_corpus MODE (see the source)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  modes[i].fn();
  MPI_Finalize();
  return 0;
}
