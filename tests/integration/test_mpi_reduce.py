"""MPI jobs under the tool: MPI-IO counters, the cross-rank reduction, one log per job,
per-rank fallback logs, and many files per rank (tests/integration/mpi_workload.c, tests/integration/mpi_many.c)."""

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import iochar
from iochar.flags import PARTIAL
from tool import BUILD_OPENMPI, logs_in, mpiexec, one, run, run_log, workload

pytestmark = pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="no MPICH")


def half_bytes(r):
    """MPI-IO bytes rank r writes to its half's file: write_at + iwrite_at + split."""
    return (r + 1) * 100 + 10 + 100


def check_workload(log, n):
    mp = log.records("MPIIO")
    assert log.job["nprocs"] == n
    assert log.job["nnodes"] == 1

    # All ranks share shared.dat: one reduced row.
    s = one(mp, "/shared.dat")
    assert s["rank"] == -1
    assert s["MPIIO_COLL_OPENS"] == n and s["MPIIO_INDEP_OPENS"] == 0
    assert s["MPIIO_COLL_WRITES"] == 2 * n and s["MPIIO_COLL_READS"] == n
    assert s["MPIIO_INDEP_WRITES"] == 0
    assert s["MPIIO_BYTES_WRITTEN"] == 8192 * n and s["MPIIO_BYTES_READ"] == 4096 * n
    assert s["MPIIO_VIEWS"] == n and s["MPIIO_HINTS"] == n and s["MPIIO_SYNCS"] == n
    assert s["MPIIO_SIZE_WRITE_1K_10K"] == 2 * n and s["MPIIO_SIZE_READ_1K_10K"] == n
    assert s["MPIIO_ACCESS1_ACCESS"] == 4096 and s["MPIIO_ACCESS1_COUNT"] == 3 * n
    assert s["MPIIO_HINT_CB_BUFFER_SIZE"] == 1048576  # the hint the app set
    assert s["MPIIO_RW_SWITCHES"] == n
    assert 0 <= s["MPIIO_FASTEST_RANK"] < n and 0 <= s["MPIIO_SLOWEST_RANK"] < n
    assert s["MPIIO_FASTEST_RANK_BYTES"] == 12288 == s["MPIIO_SLOWEST_RANK_BYTES"]
    assert s["MPIIO_F_FASTEST_RANK_TIME"] <= s["MPIIO_F_SLOWEST_RANK_TIME"]
    assert s["MPIIO_F_VARIANCE_RANK_BYTES"] == 0
    assert s["MPIIO_F_VARIANCE_RANK_TIME"] >= 0
    assert 0 < s["MPIIO_F_OPEN_START_TIMESTAMP"] <= s["MPIIO_F_WRITE_START_TIMESTAMP"]
    assert s["MPIIO_F_WRITE_END_TIMESTAMP"] <= s["MPIIO_F_CLOSE_END_TIMESTAMP"]
    assert s["MPIIO_F_CLOSE_END_TIMESTAMP"] <= log.job["end_time"] - log.job["start_time"]

    # File per process: each keeps its rank.
    for r in range(n):
        f = one(mp, f"/fpp.{r}.dat")
        assert f["rank"] == r
        assert f["MPIIO_INDEP_OPENS"] == 1 and f["MPIIO_INDEP_WRITES"] == 1
        assert f["MPIIO_BYTES_WRITTEN"] == (r + 1) * 1000
        assert f["MPIIO_FASTEST_RANK"] == r == f["MPIIO_SLOWEST_RANK"]

    # Files shared by half of the ranks (N-to-M): reduced too, exact variance.
    for color, ranks in ((1, range(n // 2)), (0, range(n // 2, n))):
        h = one(mp, f"/half{color}.dat")
        by = np.array([half_bytes(r) for r in ranks], dtype=np.float64)
        assert h["rank"] == -1
        assert h["MPIIO_COLL_OPENS"] == len(ranks)
        assert h["MPIIO_INDEP_WRITES"] == len(ranks)
        assert h["MPIIO_NB_WRITES"] == len(ranks) and h["MPIIO_SPLIT_WRITES"] == len(ranks)
        assert h["MPIIO_BYTES_WRITTEN"] == by.sum()
        assert h["MPIIO_F_VARIANCE_RANK_BYTES"] == pytest.approx(by.var())
        assert h["MPIIO_FASTEST_RANK"] in ranks and h["MPIIO_SLOWEST_RANK"] in ranks
        assert h["MPIIO_FASTEST_RANK_BYTES"] == half_bytes(h["MPIIO_FASTEST_RANK"])
        assert h["MPIIO_SLOWEST_RANK_BYTES"] == half_bytes(h["MPIIO_SLOWEST_RANK"])
        assert h["MPIIO_F_FASTEST_RANK_TIME"] <= h["MPIIO_F_SLOWEST_RANK_TIME"]
        # 10 and 100 bytes: once per rank each, plus the (r+1)*100 writes
        assert h["MPIIO_SIZE_WRITE_0_100"] == 2 * len(ranks) + (1 if 0 in ranks else 0)
    assert len(mp) == n + 3  # every record once

    px = log.records("POSIX")
    ps = one(px, "/posix_shared.dat")
    assert ps["rank"] == -1
    assert ps["POSIX_OPENS"] == n and ps["POSIX_WRITES"] == n
    assert ps["POSIX_BYTES_WRITTEN"] == 4096 * n
    assert ps["POSIX_F_VARIANCE_RANK_BYTES"] == 0
    for r in range(n):
        p = one(px, f"/posix.{r}.dat")
        assert p["rank"] == r and p["POSIX_BYTES_WRITTEN"] == 512
    # ROMIO's own file-system calls are real I/O: recorded in POSIX, reduced.
    assert one(px, "/shared.dat")["rank"] == -1
    assert not px["path"].str.startswith("/sys").any()  # MPI_Init's probing is not the app's

    rk = log.ranks("MPIIO")
    assert sorted(rk["rank"]) == list(range(n))
    want = [8192 + (r + 1) * 1000 + half_bytes(r) for r in range(n)]
    assert list(rk.sort_values("rank")["bytes_written"]) == want


@pytest.mark.parametrize("n,collective", [(4, "0"), (8, "0"), (4, "1")])
def test_mpich_workload_one_log(tmp_path, n, collective):
    # IOCHAR_COLLECTIVE_WRITE=1: the log goes out by MPI_File_write_at_all, as
    # it does by default past 256 ranks.
    p, log = run_log(mpiexec(n) + [workload("mpi_workload")], tmp_path,
                     env={"IOCHAR_COLLECTIVE_WRITE": collective})
    check_workload(log, n)
    (path,) = logs_in(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert not list(tmp_path.glob("*.tmp*"))
    assert log.job["finalized"] == 1 and log.job["partial"] == 0
    assert log.job["mpi"].startswith("MPICH")
    assert log.series("MPIIO")["bytes_written"].sum() == sum(
        8192 + (r + 1) * 1000 + half_bytes(r) for r in range(n))


def test_exit_without_finalize_per_rank_logs(tmp_path):
    n = 4
    p = run(mpiexec(n) + [workload("mpi_workload"), "exit"], tmp_path)
    # mpiexec.mpich may SIGKILL ranks still exiting once one has left without
    # MPI_Finalize (exit code 9 with or without the tool): the logs are written
    # before the workload's ranks leave together (tests/integration/mpi_workload.c).
    assert p.returncode in (0, 9), p.stderr.decode(errors="replace")
    logs = logs_in(tmp_path)
    assert len(logs) == n
    assert all(re.search(r"\.rank\d+\.iochar$", str(x)) for x in logs)
    assert len({re.sub(r"\.rank\d+\.iochar$", "", x.name) for x in logs}) == 1  # one job name
    log = iochar.open(str(tmp_path))
    check_workload(log, n)
    assert log.job["partial"] & PARTIAL["PER_RANK"] and log.job["finalized"] == 0


@pytest.mark.parametrize("phase", ["rows", "classify", "facts", "merge", "wide", "body", "write"])
def test_rank_failing_in_reduction_leaves_per_rank_logs(tmp_path, phase):
    # IOCHAR_TEST_FAULT makes rank 2 fail at that step, as a failed allocation
    # would: no rank may wait for it, and no record may be lost.
    n = 4
    p = run(mpiexec(n) + [workload("mpi_workload")], tmp_path,
            env={"IOCHAR_TEST_FAULT": f"{phase}:2"}, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert b"each rank wrote its own log" in p.stderr
    logs = logs_in(tmp_path)
    assert len(logs) == n and all(re.search(r"\.rank\d+\.iochar$", str(x)) for x in logs)
    assert not list(tmp_path.glob("*.tmp*"))
    log = iochar.open(str(tmp_path))
    check_workload(log, n)
    assert log.job["partial"] & PARTIAL["PER_RANK"] and log.job["finalized"] == 1
    rep = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "a rank could not take part in reducing the records" in rep


def check_many(log, n, files):
    """tests/integration/mpi_many.c's records, n ranks x files private files."""
    px = log.records("POSIX")
    mine = px[px["path"].str.contains("/many\\.")]
    assert len(mine) == n * files and (mine["rank"] >= 0).all()
    assert (mine["POSIX_BYTES_WRITTEN"] == 100).all()
    assert sorted(mine["rank"].value_counts()) == [files] * n
    sh = one(px, "/many_shared.dat")
    assert sh["rank"] == -1 and sh["POSIX_BYTES_WRITTEN"] == 4096 * n
    assert sh["POSIX_OPENS"] == n
    mp = one(log.records("MPIIO"), "/many_mpiio.dat")
    assert mp["rank"] == -1 and mp["MPIIO_COLL_WRITES"] == n
    assert mp["MPIIO_BYTES_WRITTEN"] == 4096 * n


@pytest.mark.parametrize("collective", ["0", "1"])
def test_large_job_into_a_long_directory_name(tmp_path, collective):
    # Past 1,024 rows every rank writes its part, by name, into rank 0's
    # private directory, whose name the ranks learn from the offsets' Scan
    # (reducer/write.c): a long one (~600 bytes) arrives whole.
    d = tmp_path
    for i in range(9):
        d = d / (f"d{i}" + "x" * 64)
    d.mkdir(parents=True)
    n, files = 4, 300
    p = run(mpiexec(n) + [workload("mpi_many"), str(files)], d,
            env={"IOCHAR_COLLECTIVE_WRITE": collective})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert b"iochar:" not in p.stderr
    (path,) = logs_in(d)
    assert [x.name for x in d.iterdir() if x.suffix != ".dat"] == [path.name]  # no directory left
    log = iochar.open(str(path))
    assert log.job["nprocs"] == n and log.job["partial"] == 0
    check_many(log, n, files)
    # the series of both modules (POSIX: the private files, the shared one
    # and ROMIO's writes under MPI-IO)
    assert sum(log.series("POSIX")["bytes_written"]) == n * files * 100 + 2 * 4096 * n
    assert sum(log.series("MPIIO")["bytes_written"]) == 4096 * n
    assert sum(log.series("MPIIO")["writes"]) == n


def check_pairs(log, n):
    """mpi_many's files shared by pairs of ranks: reduced at their owners."""
    px = log.records("POSIX")
    for k in range(n // 2):
        a, b = 10 * (2 * k + 1), 10 * (2 * k + 2)
        r = one(px, f"/many_pair.{k}.dat")
        assert r["rank"] == -1 and r["POSIX_OPENS"] == 2 and r["POSIX_WRITES"] == 2
        assert r["POSIX_BYTES_WRITTEN"] == a + b
        assert r["POSIX_MAX_BYTE_WRITTEN"] == 1000 * (2 * k + 1) + b - 1
        assert r["POSIX_FASTEST_RANK"] in (2 * k, 2 * k + 1)
        assert r["POSIX_SLOWEST_RANK"] in (2 * k, 2 * k + 1)
        assert r["POSIX_F_VARIANCE_RANK_BYTES"] == ((a - b) / 2) ** 2
        assert r["POSIX_SIZE_WRITE_0_100"] == 2


@pytest.mark.parametrize("files,collectives", [(300, 8), (17000, 9)])
def test_large_job_collectives(tmp_path, files, collectives):
    # Up to 65,536 keys in all, their receive buffers are taken before the
    # first vote and their exchange needs no other (reducer/vote.c); past
    # that, one vote more.  17,000 rows a rank are also past RED_MSEND_AHEAD
    # (reducer/steps.h): the owners' answers complete before the facts.
    # Exact either way, files shared by pairs of ranks (merged at their
    # owners) included.
    n = 4
    p = run(mpiexec(n) + [workload("mpi_many"), str(files), "pairs"], tmp_path,
            env={"IOCHAR_TIMING": "1"}, timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert re.search(rb"; (\d+) collectives", p.stderr).group(1) == str(collectives).encode()
    (path,) = logs_in(tmp_path)
    log = iochar.open(str(path))
    assert log.job["partial"] == 0
    check_many(log, n, files)
    check_pairs(log, n)


@pytest.mark.parametrize("shared", [300, 7000])
def test_many_wide_records(tmp_path, shared):
    # Files every rank shares are reduced by tree: past 256 of them their
    # list is built by Exscan and Allreduce (not in the facts), past 8 MiB of
    # partials (~4,000 POSIX records) in more than one Reduce, to rank 1 too
    # (reducer/wide.c); the MERGE rows' exchange, pending, completes first.
    n, files = 4, 300
    p = run(mpiexec(n) + [workload("mpi_many"), str(files), "pairs", str(shared)], tmp_path,
            timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (path,) = logs_in(tmp_path)
    log = iochar.open(str(path))
    assert log.job["partial"] == 0
    check_many(log, n, files)
    check_pairs(log, n)
    px = log.records("POSIX")
    every = px[px["path"].str.contains("/many_all\\.")]
    assert len(every) == shared and (every["rank"] == -1).all()
    assert (every["POSIX_OPENS"] == n).all() and (every["POSIX_BYTES_WRITTEN"] == 10 * n).all()
    assert (every["POSIX_MAX_BYTE_WRITTEN"] == 10 * n - 1).all()


@pytest.mark.parametrize("phase", ["rows", "classify", "facts", "merge", "wide", "body", "write"])
def test_rank_failing_in_large_reduction_leaves_per_rank_logs(tmp_path, phase):
    # As above, for a job past 1,024 rows (reduced by owners, written by
    # every rank): rank 2 fails at that step, every rank writes its own log.
    n, files = 4, 300
    p = run(mpiexec(n) + [workload("mpi_many"), str(files), "pairs"], tmp_path,
            env={"IOCHAR_TEST_FAULT": f"{phase}:2"}, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert b"each rank wrote its own log" in p.stderr
    logs = logs_in(tmp_path)
    assert len(logs) == n and all(re.search(r"\.rank\d+\.iochar$", str(x)) for x in logs)
    assert not list(tmp_path.glob("*.tmp*")) and not [x for x in tmp_path.iterdir() if x.is_dir()]
    log = iochar.open(str(tmp_path))
    assert log.job["partial"] & PARTIAL["PER_RANK"] and log.job["finalized"] == 1
    check_many(log, n, files)
    check_pairs(log, n)


@pytest.mark.parametrize("flavor", ["mpich", "openmpi"])
def test_bytes_follow_datatypes_freed_and_made_again(tmp_path, flavor):
    build = BUILD_OPENMPI if flavor == "openmpi" else None
    if flavor == "openmpi" and shutil.which("mpiexec.openmpi") is None:
        pytest.skip("no Open MPI")
    exe = workload("mpi_types", build) if build else workload("mpi_types")
    p, log = run_log(mpiexec(4, flavor) + [exe, str(tmp_path)], tmp_path)
    mp = log.records("MPIIO")
    for r in range(4):
        f = one(mp, f"/types.{r}.dat")
        # contiguous(4 ints), freed; contiguous(100 ints), freed; 8 MPI_BYTE
        assert (f["MPIIO_INDEP_WRITES"], f["MPIIO_BYTES_WRITTEN"]) == (3, 16 + 400 + 8)
        assert (f["MPIIO_SIZE_WRITE_0_100"], f["MPIIO_SIZE_WRITE_100_1K"]) == (2, 1)


def test_many_files_bounded(tmp_path):
    n, files = 16, 2000
    p = run(mpiexec(n) + [workload("mpi_many"), str(files)], tmp_path, timeout=600)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    rss = [int(x) for x in re.findall(r"maxrss_kb (\d+)", out)]
    assert len(rss) == n and max(rss) < 200 * 1024, rss
    (path,) = logs_in(tmp_path)
    log = iochar.open(str(path))
    px = log.records("POSIX")
    assert len(px[px["path"].str.contains("/many\\.")]) == n * files
    assert (px[px["path"].str.contains("/many\\.")]["rank"] >= 0).all()
    sh = one(px, "/many_shared.dat")
    assert sh["rank"] == -1 and sh["POSIX_BYTES_WRITTEN"] == 4096 * n
    mp = one(log.records("MPIIO"), "/many_mpiio.dat")
    assert mp["rank"] == -1 and mp["MPIIO_COLL_WRITES"] == n


def test_non_mpi_program_still_works(tmp_path):
    p, log = run_log([workload("posix_basic")], tmp_path)
    assert log.job["nprocs"] == 1 and "MPIIO" not in log.modules


FORTRAN = """
program fio
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, fh, buf(256)
  integer(kind=MPI_OFFSET_KIND) :: off
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  buf = rank
  call MPI_File_open(MPI_COMM_WORLD, 'fortran.dat', MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                     MPI_INFO_NULL, fh, ierr)
  off = rank * 1024
  call MPI_File_write_at_all(fh, off, buf, 256, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  off = nprocs * 1024 + rank * 512
  call MPI_File_write_at(fh, off, buf, 128, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Finalize(ierr)
end program fio
"""


@pytest.mark.skipif(shutil.which("mpifort.mpich") is None, reason="no mpifort.mpich")
def test_fortran_mpiio(tmp_path):
    src = tmp_path / "fio.f90"
    src.write_text(FORTRAN)
    exe = tmp_path / "fio"
    subprocess.run(["mpifort.mpich", "-o", str(exe), str(src)], check=True)
    src.unlink()
    n = 4
    p, log = run_log(mpiexec(n) + [str(exe)], tmp_path)
    f = one(log.records("MPIIO"), "/fortran.dat")
    assert f["rank"] == -1
    assert f["MPIIO_COLL_OPENS"] == n
    assert f["MPIIO_COLL_WRITES"] == n and f["MPIIO_INDEP_WRITES"] == n
    assert f["MPIIO_BYTES_WRITTEN"] == n * (1024 + 512)


@pytest.mark.skipif(not (BUILD_OPENMPI / "libiochar.so").exists()
                    or shutil.which("mpiexec.openmpi") is None,
                    reason="no Open MPI build (meson setup build-openmpi -Dmpi=openmpi)")
@pytest.mark.parametrize("io", ["romio321", "ompio"])
def test_openmpi_workload(tmp_path, io):
    n = 4
    cmd = mpiexec(n, "openmpi") + ["--mca", "io", io, workload("mpi_workload", BUILD_OPENMPI)]
    p, log = run_log(cmd, tmp_path)
    assert log.job["mpi"].startswith("Open MPI")
    mp = log.records("MPIIO")
    s = one(mp, "/shared.dat")
    assert s["rank"] == -1 and s["MPIIO_COLL_WRITES"] == 2 * n
    assert s["MPIIO_BYTES_WRITTEN"] == 8192 * n and s["MPIIO_BYTES_READ"] == 4096 * n
    for color, ranks in ((1, range(n // 2)), (0, range(n // 2, n))):
        h = one(mp, f"/half{color}.dat")
        by = np.array([half_bytes(r) for r in ranks], dtype=np.float64)
        assert h["rank"] == -1 and h["MPIIO_BYTES_WRITTEN"] == by.sum()
        assert h["MPIIO_NB_WRITES"] == len(ranks) and h["MPIIO_SPLIT_WRITES"] == len(ranks)
        assert h["MPIIO_F_VARIANCE_RANK_BYTES"] == pytest.approx(by.var())
    for r in range(n):
        assert one(mp, f"/fpp.{r}.dat")["MPIIO_BYTES_WRITTEN"] == (r + 1) * 1000
    assert one(log.records("POSIX"), "/posix_shared.dat")["POSIX_BYTES_WRITTEN"] == 4096 * n
