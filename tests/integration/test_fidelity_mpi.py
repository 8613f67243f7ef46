"""Issue 15 on shared records, 4 ranks under mpiexec.mpich (tests/integration/fidelity_mpi.c):
top-4 tables merged whole across ranks, and folded files counted once."""

import pytest

import iochar
from iochar.flags import PARTIAL
from tool import logs_in, mpiexec, one, run, workload

W = workload("fidelity_mpi")
NP = 4


def run_mpi(tmp_path, *args, env=None):
    p = run(mpiexec(NP) + [W, *args], tmp_path, env=env, timeout=600)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return iochar.open([str(x) for x in logs_in(tmp_path)])


def check_topk(df):
    r = one(df, "/topk_shared.dat")
    assert r["rank"] == -1
    # 64 B is 5th on every rank (9 writes against 4 sizes x 10) but 1st in the job
    assert [r[f"POSIX_ACCESS{i}_ACCESS"] for i in range(1, 5)] == [64, 1000, 1100, 1200]
    assert [r[f"POSIX_ACCESS{i}_COUNT"] for i in range(1, 5)] == [36, 20, 20, 20]
    assert r["POSIX_WRITES"] == NP * 49 and r["POSIX_ACCESS_APPROX"] == 0
    many = one(df, "/topk_many.dat")
    assert [many[f"POSIX_ACCESS{i}_ACCESS"] for i in range(1, 5)] == [2000, 2010, 2020, 2030]
    assert [many[f"POSIX_ACCESS{i}_COUNT"] for i in range(1, 5)] == [1, 1, 1, 1]
    return many


def test_topk_merged_whole_in_the_reduction(tmp_path):
    log = run_mpi(tmp_path, "topk")
    assert len(log.files) == 1
    many = check_topk(log.records("POSIX"))
    # 20 distinct sizes across ranks: more than a table's 16 slots
    assert many["POSIX_ACCESS_APPROX"] == 1


def test_topk_merged_whole_from_per_rank_logs(tmp_path):
    # a rank failing in the reduction makes every rank write its own log
    log = run_mpi(tmp_path, "topk", env={"IOCHAR_TEST_FAULT": "merge:1"})
    assert len(log.files) == NP and log.job["partial"] & PARTIAL["PER_RANK"]
    many = check_topk(log.records("POSIX"))
    # the reader merges whole tables with no bound: exact, not approximate
    assert many["POSIX_ACCESS_APPROX"] == 0


@pytest.mark.parametrize("nfiles", [300])
def test_folded_files_counted_once_across_ranks(tmp_path, nfiles):
    log = run_mpi(tmp_path, "fold", str(nfiles), env={"IOCHAR_MEMORY": "64k"})
    df = log.records("POSIX")
    kept = df["path"].str.contains("/fold.").sum()
    assert 0 < kept < nfiles
    # every rank folds the same files: each is one file, not one per rank
    assert log.job["folded_files"] == log.job["folded.POSIX"] == nfiles - kept
    assert log.job["partial"] & PARTIAL["FOLDED"]
