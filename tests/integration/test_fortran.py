"""MPI-IO from Fortran (tests/integration/mpiio_fortran.f90): one job log, exact MPIIO
counters.  Open MPI's Fortran bindings call PMPI_* directly, MPICH's call the C
MPI_* symbols; both must be seen."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import iochar
from iolib import bins, expect, totals
from tool import BUILD, BUILD_OPENMPI, LIB, logs_in, mpiexec, run, workload

N = 4
WORKLOAD = workload("mpiio_fortran", build=BUILD_OPENMPI)


SOURCE = Path(__file__).resolve().parent / "mpiio_fortran.f90"


def check(tmp_path, cmd, lib):
    p = run(cmd + [str(tmp_path / "f.dat")], tmp_path, lib=lib)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stdout.decode().strip() == "done"
    (path,) = logs_in(tmp_path)  # reduced at MPI_Finalize: one log, not one per rank
    log = iochar.open(str(path))
    assert log.job["nprocs"] == N
    t = totals(log.records("MPIIO"), "/f.dat")
    expect(t, MPIIO_COLL_OPENS=N, MPIIO_INDEP_WRITES=10 * N, MPIIO_COLL_WRITES=N,
           MPIIO_NB_WRITES=N, MPIIO_INDEP_READS=5 * N, MPIIO_SYNCS=N,
           MPIIO_BYTES_WRITTEN=(10 * 1024 + 1024 + 512) * N, MPIIO_BYTES_READ=5 * 1024 * N)
    bins(t, "MPIIO", "WRITE", {"100_1K": 12 * N})  # 101-1024 bytes (as Darshan)
    bins(t, "MPIIO", "READ", {"100_1K": 5 * N})
    assert t["MPIIO_F_WRITE_TIME"] > 0 and t["MPIIO_F_READ_TIME"] > 0


@pytest.mark.skipif(shutil.which("mpiexec.openmpi") is None or not os.path.exists(WORKLOAD),
                    reason="needs Open MPI and gfortran (build-openmpi/tests/mpiio_fortran)")
def test_openmpi_fortran_mpiio(tmp_path):
    check(tmp_path, mpiexec(N, "openmpi") + [WORKLOAD], LIB)


@pytest.mark.skipif(shutil.which("mpif90.mpich") is None, reason="needs MPICH's mpif90")
def test_mpich_fortran_mpiio(tmp_path):
    exe = tmp_path / "mpiio_fortran"
    subprocess.run(["mpif90.mpich", "-O2", str(SOURCE), "-o", str(exe)], check=True,
                   cwd=tmp_path)
    check(tmp_path, mpiexec(N, "mpich") + [str(exe)], BUILD / "libiochar.so")
