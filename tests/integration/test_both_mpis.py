"""One build/libiochar.so for MPICH and Open MPI programs (reducer/mpi_dispatch.c):
the same LD_PRELOAD line gives each program's exact MPI-IO counts in one reduced
log; an MPI the library was not built for, or does not know, has its calls passed
through untouched with one `iochar:` line, and POSIX is still recorded."""

import os
import shutil
import subprocess

import pytest

import iochar
from tool import BUILD_OPENMPI, LIB, logs_in, mpiexec, one, run, workload

N = 4
MPICH_EXE = workload("mpi_workload")
OMPI_EXE = workload("mpi_workload", BUILD_OPENMPI)
OMPI_ONLY_LIB = BUILD_OPENMPI / "libiochar.so"

needs_both = pytest.mark.skipif(
    not (LIB.exists() and os.path.exists(MPICH_EXE) and os.path.exists(OMPI_EXE))
    or shutil.which("mpiexec.mpich") is None or shutil.which("mpiexec.openmpi") is None,
    reason="needs build/ (-Dmpi=both), build-openmpi/ and both MPIs")


def check_mpi_workload(log, tmp_path):
    """tests/integration/mpi_workload.c's MPI-IO, exactly (N ranks)."""
    assert log.job["nprocs"] == N
    mp = log.records("MPIIO")
    sh = one(mp, "/shared.dat")
    assert sh["rank"] == -1
    assert (sh["MPIIO_COLL_OPENS"], sh["MPIIO_COLL_WRITES"], sh["MPIIO_COLL_READS"]) == (N, 2 * N, N)
    assert (sh["MPIIO_BYTES_WRITTEN"], sh["MPIIO_BYTES_READ"]) == (2 * 4096 * N, 4096 * N)
    assert (sh["MPIIO_VIEWS"], sh["MPIIO_SYNCS"]) == (N, N)
    for r in range(N):
        f = one(mp, f"/fpp.{r}.dat")
        assert (f["rank"], f["MPIIO_INDEP_OPENS"], f["MPIIO_INDEP_WRITES"]) == (r, 1, 1)
        assert f["MPIIO_BYTES_WRITTEN"] == (r + 1) * 1000
    posix = log.records("POSIX")
    assert one(posix, "/posix_shared.dat")["POSIX_WRITES"] > 0


@needs_both
@pytest.mark.parametrize("flavor,exe", [("mpich", MPICH_EXE), ("openmpi", OMPI_EXE)])
def test_one_library_for_both_mpis(tmp_path, flavor, exe):
    p = run(mpiexec(N, flavor) + [exe], tmp_path, lib=LIB)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert b"iochar:" not in p.stderr, p.stderr.decode(errors="replace")
    (log,) = logs_in(tmp_path)  # reduced at MPI_Finalize: one log for the job
    check_mpi_workload(iochar.open(str(log)), tmp_path)


@needs_both
def test_single_mpi_build_still_counts_its_mpi(tmp_path):
    p = run(mpiexec(N, "openmpi") + [OMPI_EXE], tmp_path, lib=OMPI_ONLY_LIB)
    assert p.returncode == 0 and b"iochar:" not in p.stderr, p.stderr.decode(errors="replace")
    (log,) = logs_in(tmp_path)
    check_mpi_workload(iochar.open(str(log)), tmp_path)


@needs_both
def test_wrong_single_mpi_build_passes_mpi_through(tmp_path):
    """The Open MPI-only library in an MPICH job: no crash, MPI untouched, one
    line (rank 0's: warnings are once per job) naming the build to use, POSIX
    still counted."""
    p = run(mpiexec(N, "mpich") + [MPICH_EXE], tmp_path, lib=OMPI_ONLY_LIB)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    lines = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("iochar:")]
    assert len(lines) == 1, p.stderr.decode()
    assert "uses MPICH and this libiochar was built for Open MPI only" in lines[0]
    assert "-Dmpi=both" in lines[0]
    logs = logs_in(tmp_path)  # no reduction: one serial log per process
    assert len(logs) == N
    for lg in logs:
        log = iochar.open(str(lg))
        assert "MPIIO" not in log.modules or log.records("MPIIO").empty
        posix = log.records("POSIX")
        (r,) = [r for r in range(N) if posix["path"].str.endswith(f"/posix.{r}.dat").any()]
        assert one(posix, f"/posix.{r}.dat")["POSIX_WRITES"] > 0
    assert len(list(tmp_path.glob("fpp.*.dat"))) == N  # the program did its I/O


FAKE_MPI = r"""
/* An MPI neither MPICH nor Open MPI: values come back, arguments go in. */
int PMPI_Comm_rank(void *c, int *r) { (void)c; *r = 0; return 0; }
int MPI_Init(int *argc, char ***argv) { return argc && argv ? 17 : 18; }
int MPI_File_open(void *comm, const char *name, int amode, void *info, void **fh) {
  *fh = (void *)0x5eed; return (int)(long)comm + name[0] + amode + (info ? 1 : 0); }
int PMPI_File_open(void *comm, const char *name, int amode, void *info, void **fh) {
  return MPI_File_open(comm, name, amode, info, fh) + 1000; }
int MPI_Finalize(void) { return 23; }
"""
FAKE_PROG = r"""
#include <stdio.h>
int MPI_Init(int *, char ***);
int MPI_File_open(void *, const char *, int, void *, void **);
int PMPI_File_open(void *, const char *, int, void *, void **);
int MPI_Finalize(void);
int main(int argc, char **argv) {
  void *fh = 0;
  int a = MPI_Init(&argc, &argv);
  int b = MPI_File_open((void *)0x7fffffff12345678, "x", 3, (void *)1, &fh);
  int c = PMPI_File_open((void *)0x10, "y", 5, 0, &fh);
  printf("%d %d %d %p %d\n", a, b, c, fh, MPI_Finalize());
  return 0;
}
"""


@pytest.mark.skipif(not LIB.exists() or shutil.which("cc") is None, reason="needs cc")
def test_unknown_mpi_passes_through_with_one_line(tmp_path):
    (tmp_path / "fake.c").write_text(FAKE_MPI)
    (tmp_path / "prog.c").write_text(FAKE_PROG)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "libfakempi.so"),
                    str(tmp_path / "fake.c")], check=True)
    subprocess.run(["cc", "-o", str(tmp_path / "prog"), str(tmp_path / "prog.c"),
                    f"-L{tmp_path}", "-lfakempi", f"-Wl,-rpath,{tmp_path}"], check=True)
    bare = run([str(tmp_path / "prog")], tmp_path, preload=False)
    p = run([str(tmp_path / "prog")], tmp_path, lib=LIB)
    assert p.returncode == bare.returncode == 0
    assert p.stdout == bare.stdout
    # same output as without the tool: a 64-bit handle went through whole
    a, b, c, fh, d = bare.stdout.decode().split()
    assert b == str(0x12345678 + ord("x") + 3 + 1)
    assert (a, c, fh, d) == ("17", str(1000 + 0x10 + ord("y") + 5), "0x5eed", "23")
    lines = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("iochar:")]
    assert lines == ["iochar: this process's MPI is neither MPICH nor Open MPI; MPI calls "
                     "pass straight through, MPI-IO is not recorded"], p.stderr


APPIO = r"""
#include <mpi.h>
#include <stddef.h>
int app_run(const char *path) {
  MPI_Init(NULL, NULL);
  MPI_File fh;
  int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh);
  int w = MPI_File_write(fh, "hello", 5, MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Finalize();
  return rc * 10 + w;
}
"""
LOADER = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], argv[2][0] == 'G' ? RTLD_NOW | RTLD_GLOBAL : RTLD_NOW | RTLD_LOCAL);
  if (!h) return 1;
  int (*run)(const char *) = (int (*)(const char *))dlsym(h, "app_run");
  printf("rc=%d\n", run(argv[3]));
  return 0;
}
"""


@needs_both
@pytest.mark.parametrize("flavor", ["mpich", "openmpi"])
def test_mpi_loaded_by_dlopen(tmp_path, flavor):
    """MPI loaded after the tool, as Python's mpi4py does: RTLD_GLOBAL is
    recorded (Open MPI's handles are looked up, not linked); RTLD_LOCAL passes
    through with one line (the wrappers need the MPI in the global scope)."""
    if shutil.which(f"mpicc.{flavor}") is None:
        pytest.skip(f"no mpicc.{flavor}")
    (tmp_path / "appio.c").write_text(APPIO)
    (tmp_path / "loader.c").write_text(LOADER)
    lib = tmp_path / "libappio.so"
    subprocess.run([f"mpicc.{flavor}", "-shared", "-fPIC", "-o", str(lib),
                    str(tmp_path / "appio.c")], check=True)
    subprocess.run(["cc", "-o", str(tmp_path / "loader"), str(tmp_path / "loader.c"), "-ldl"],
                   check=True)
    for mode in ("GLOBAL", "LOCAL"):
        d = tmp_path / mode
        d.mkdir()
        p = run([str(tmp_path / "loader"), str(lib), mode, str(d / "out.dat")], d, lib=LIB)
        assert p.returncode == 0 and p.stdout == b"rc=0\n", p.stderr.decode(errors="replace")
        lines = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("iochar:")]
        (log,) = logs_in(d)
        log = iochar.open(str(log))
        if mode == "GLOBAL":
            assert lines == []
            f = one(log.records("MPIIO"), "/out.dat")
            assert (f["MPIIO_INDEP_OPENS"], f["MPIIO_INDEP_WRITES"], f["MPIIO_BYTES_WRITTEN"]) \
                == (1, 1, 5)
        else:
            assert lines == ["iochar: its MPI was loaded RTLD_LOCAL; MPI calls pass straight "
                             "through, MPI-IO is not recorded"]
            assert "MPIIO" not in log.modules or log.records("MPIIO").empty
            assert one(log.records("POSIX"), "/out.dat")["POSIX_WRITES"] == 1
