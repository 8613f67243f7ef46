"""iochar-parser --total/--file/--perf and --rank/--path on a real 4-rank MPI job with
known I/O (tests/integration/mpi_workload.c); test_parser_views.py has --total's combination by op
on a hand-built log."""

import re
import shutil

import pytest

import iochar
from iochar import parser_views as V
from iochar.cli import parser
from tool import LIB, mpiexec, run, workload

MiB = 1 << 20


@pytest.fixture(scope="module")
def mpi_log(tmp_path_factory):
    if not LIB.exists() or shutil.which("mpiexec.mpich") is None:
        pytest.skip("needs the MPICH build and mpiexec.mpich")
    d = tmp_path_factory.mktemp("views")
    p = run(mpiexec(4) + [workload("mpi_workload")], d)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (log,) = d.glob("*.iochar")
    return str(log)


def out_of(capsys, argv):
    assert parser.main(argv) == 0
    return capsys.readouterr().out


def test_total(mpi_log, capsys):
    out = out_of(capsys, [mpi_log, "--total", "--module", "MPIIO"])
    tot = dict(re.findall(r"^total_(\w+): (\S+)$", out, re.M))
    want = {"MPIIO_INDEP_OPENS": 4, "MPIIO_COLL_OPENS": 8, "MPIIO_INDEP_WRITES": 8,
            "MPIIO_COLL_READS": 4, "MPIIO_COLL_WRITES": 8, "MPIIO_SPLIT_WRITES": 4,
            "MPIIO_NB_WRITES": 4, "MPIIO_SYNCS": 4, "MPIIO_BYTES_READ": 16384,
            "MPIIO_BYTES_WRITTEN": 44208, "MPIIO_SIZE_READ_1K_10K": 4,
            "MPIIO_SIZE_WRITE_0_100": 9, "MPIIO_SIZE_WRITE_100_1K": 4,
            "MPIIO_SIZE_WRITE_1K_10K": 11, "MPIIO_ACCESS1_ACCESS": 4096,
            "MPIIO_ACCESS1_COUNT": 12, "MPIIO_SLOWEST_RANK_BYTES": 12288}
    assert {k: int(tot[k]) for k in want} == want
    df = iochar.open(mpi_log).records("MPIIO")
    # max/min counters are combined by their op, not summed
    assert float(tot["MPIIO_F_MAX_WRITE_TIME"]) == df["MPIIO_F_MAX_WRITE_TIME"].max()
    ts = df["MPIIO_F_OPEN_START_TIMESTAMP"]
    assert float(tot["MPIIO_F_OPEN_START_TIMESTAMP"]) == ts[ts > 0].min()
    assert float(tot["MPIIO_F_WRITE_TIME"]) == pytest.approx(df["MPIIO_F_WRITE_TIME"].sum())
    assert "MPIIO_F_VARIANCE_RANK_TIME" not in tot
    assert "# module MPIIO: totals over 7 records" in out and "total_POSIX" not in out


def test_file(mpi_log, capsys):
    out = out_of(capsys, [mpi_log, "--file"])
    mp = out.split("# module MPIIO: per-file summary")[1]
    lines = [ln.split(" ", 7) for ln in mp.splitlines() if ln.startswith("MPIIO ")]
    got = {ln[7].rsplit("/", 1)[1]: ln[2:7] for ln in lines}
    assert got == {
        "shared.dat": ["-1", "16384", "32768", "read-write", "shared"],
        "half0.dat": ["-1", "0", "920", "write-only", "shared"],
        "half1.dat": ["-1", "0", "520", "write-only", "shared"],
        **{f"fpp.{r}.dat": [str(r), "0", str(1000 * (r + 1)), "write-only", "unique"]
           for r in range(4)}}
    assert "# total: 7 60592 0\n# read_only: 0 0 0\n# write_only: 6 11440 0\n" \
           "# read_write: 1 49152 0\n# unique: 4 10000 0\n# shared: 3 50592 0" in mp
    px = out.split("# module POSIX: per-file summary")[1].split("# module")[0]
    # max byte offset from POSIX_MAX_BYTE_*: the split collective write at 100000 + 3*100
    assert "# total: 12 79024 100399\n" in px and "# unique: 8 12048 3999\n" in px


def test_perf(mpi_log, capsys):
    out = out_of(capsys, [mpi_log, "--perf", "--module", "MPIIO"])
    log = iochar.open(mpi_log)
    df, rk = log.records("MPIIO"), log.ranks("MPIIO")
    p = V.perf(df, "MPIIO", log.job, rk)
    t = rk["read_time"] + rk["write_time"] + rk["meta_time"]
    assert p["total_bytes"] == 60592 and p["slowest_rank_exact"]
    assert p["slowest_rank"] == int(rk["rank"][t.idxmax()])
    assert p["slowest_rank_io_time"] == pytest.approx(t.max())
    cumul = df[["MPIIO_F_READ_TIME", "MPIIO_F_WRITE_TIME", "MPIIO_F_META_TIME"]].to_numpy().sum()
    assert p["cumul_io_time"] == pytest.approx(cumul)
    assert p["agg_perf_by_slowest"] == pytest.approx(60592 / MiB / t.max())
    assert p["agg_perf_by_cumul"] == pytest.approx(60592 / MiB / (cumul / 4))
    shared = df[df["rank"] == -1]["MPIIO_F_SLOWEST_RANK_TIME"].sum()
    assert p["shared_files_time_by_slowest"] == pytest.approx(shared)
    assert "# total_bytes: 60592\n" in out
    assert f"# slowest_rank: {p['slowest_rank']} (from per-rank totals (RANKS))" in out
    assert f"# agg_perf_by_slowest: {p['agg_perf_by_slowest']:.6f}" in out


def test_filters(mpi_log, capsys):
    body = [ln.split(" ", 5) for ln in out_of(capsys, [mpi_log, "--rank", "2"]).splitlines()
            if ln and ln[0] != "#"]
    assert {(b[0], b[5].rsplit("/", 1)[1]) for b in body} == {
        ("POSIX", "fpp.2.dat"), ("POSIX", "posix.2.dat"), ("MPIIO", "fpp.2.dat")}
    assert {b[1] for b in body} == {"2"}
    out = out_of(capsys, [mpi_log, "--path", "fpp.", "--module", "MPIIO", "--total"])
    assert "totals over 4 records" in out and "total_MPIIO_BYTES_WRITTEN: 10000\n" in out
    out = out_of(capsys, [mpi_log, "--path", "*/half?.dat", "--module", "MPIIO", "--total"])
    assert "totals over 2 records" in out and "total_MPIIO_BYTES_WRITTEN: 1440\n" in out
    out = out_of(capsys, [mpi_log, "--rank", "-1", "--module", "MPIIO", "--file"])
    assert "# total: 3 50592 0" in out
    out = out_of(capsys, [mpi_log, "--path", "nothing-like-this", "--total", "--module", "MPIIO"])
    assert "totals over 0 records" in out and "total_MPIIO_BYTES_WRITTEN: 0\n" in out
