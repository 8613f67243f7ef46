"""The rank x time heatmap: an MPI job's HEAT sections (no trace needed) hold each rank's
bytes, equal to its RANKS totals, whether rank 0 gathered the rows (a small job) or each
rank wrote its own; the job page draws it; a Darshan log's HEATMAP module and DXT
records reach the page too (DXT as the trace, and as the heatmap when there is no
HEATMAP module)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import iochar
from cdp import CHROMIUM, check_in_browser
from tool import LIB, logs_in, mpiexec, run, workload

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus" / "darshan-real"
NEEDS_MPI = pytest.mark.skipif(not LIB.exists() or shutil.which("mpiexec.mpich") is None,
                               reason="needs the MPICH build and mpiexec.mpich")


def page_of(log: Path, out: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "reports")}
    p = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(log), "--html", str(out)],
                       capture_output=True, env=env, text=True)
    assert p.returncode == 0, p.stderr
    return out.read_text()


def heat_sections(log) -> int:
    return sum(len(v) for p in log._parts for v in p.heat.values())


def check_heat_equals_ranks(log, modules):
    for m in modules:
        h, r = log.heatmap(m), log.ranks(m).sort_values("rank")
        assert h["bytes_read"].shape == h["bytes_written"].shape == (len(r), 32)
        assert h["ranks"].tolist() == r["rank"].tolist() == [0, 1, 2, 3]
        assert h["bytes_read"].sum(axis=1).tolist() == r["bytes_read"].tolist(), m
        assert h["bytes_written"].sum(axis=1).tolist() == r["bytes_written"].tolist(), m
        # 4 of the job series' bins a heat bin
        assert h["width"] == pytest.approx(4 * log.series(m)["width"])


@NEEDS_MPI
def test_small_job_heat_rows_gathered_and_drawn(tmp_path):
    p = run(mpiexec(4) + [workload("mpi_workload")], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (path,) = logs_in(tmp_path)
    log = iochar.open(str(path))
    assert heat_sections(log) == 2  # one section per module: rank 0 gathered the rows
    check_heat_equals_ranks(log, ("POSIX", "MPIIO"))
    # mpi_workload.c: every rank writes 1024 ints twice through the shared view
    assert log.heatmap("MPIIO")["bytes_written"].sum() >= 4 * 8192
    page = page_of(path, tmp_path / "job.html")
    assert 'alt="POSIX heatmap"' in page and 'alt="MPIIO heatmap"' in page
    assert "the per-rank time series the runtime keeps (no trace needed)" in page
    assert 'alt="offset vs time"' not in page  # no trace was asked for
    for part in ("Data access by file system", "Files by kind", "Access pattern"):
        assert f"<h2>{part}</h2>" in page
    if CHROMIUM and os.geteuid() == 0:
        check_in_browser(tmp_path / "job.html", tmp_path, page.count("<img"))


@NEEDS_MPI
def test_large_job_heat_rows_one_per_rank(tmp_path):
    """300 files a rank: past RED_GATHER_ROWS rows each rank writes its own sections."""
    p = run(mpiexec(4) + [workload("mpi_many"), "300"], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (path,) = logs_in(tmp_path)
    log = iochar.open(str(path))
    assert heat_sections(log) == 8  # 4 ranks x (POSIX, MPIIO)
    check_heat_equals_ranks(log, ("POSIX", "MPIIO"))
    # mpi_many.c: 300 private files of 100 bytes a rank, and its part of the shared ones
    assert (log.heatmap("POSIX")["bytes_written"].sum(axis=1) >= 300 * 100).all()


def test_darshan_heatmap_page(tmp_path):
    pytest.importorskip("darshan")
    from darshan.backend import cffi_backend as be
    path = CORPUS / "e3sm_io_heatmaps_and_dxt__e3sm_io_heatmap_only.darshan"
    log = iochar.open(str(path))
    raw = be.log_open(str(path))
    names = be.log_get_name_records(raw)
    want: dict = {}
    while (rec := be.log_get_record(raw, "HEATMAP")) is not None:
        m = names[rec["id"]].removeprefix("heatmap:")
        w = want.setdefault(m, {})
        w[int(rec["rank"])] = (int(rec["read_bins"].sum()), int(rec["write_bins"].sum()))
    be.log_close(raw)
    for m, iom in (("POSIX", "POSIX"), ("MPIIO", "MPIIO"), ("STDIO", "STDIO")):
        h = log.heatmap(iom)
        got = {int(r): (int(a), int(b)) for r, a, b in zip(
            h["ranks"], h["bytes_read"].sum(axis=1), h["bytes_written"].sum(axis=1))}
        assert got == {r: v for r, v in want[m].items() if v != (0, 0)}, m
        assert h["width"] == 6.4 and h["bytes_read"].shape[1] == 114
    page = page_of(path, tmp_path / "d.html")
    for m in ("POSIX", "MPIIO", "STDIO"):
        assert f'alt="{m} heatmap"' in page
    assert "from Darshan&#39;s HEATMAP module" in page


def test_darshan_dxt_page(tmp_path):
    darshan = pytest.importorskip("darshan")
    path = Path(darshan.__file__).parent / "examples" / "example_logs" / "dxt.darshan"
    if not path.exists():
        pytest.skip("the darshan package has no examples/example_logs/dxt.darshan")
    page = page_of(path, tmp_path / "dxt.html")
    from iochar.darshan import dxt_trace
    trace = dxt_trace(path)
    assert len(trace) > 0
    assert f"{len(trace):,} DXT segments" in page
    assert 'alt="offset vs time"' in page and 'alt="rank vs time"' in page
    # no HEATMAP module in this log: the heatmap from the DXT segments, every byte kept
    assert 'alt="POSIX heatmap"' in page and "from Darshan&#39;s DXT segments" in page
    from iochar import jobviews
    h = jobviews.heat_from_trace(trace, 0)["POSIX"]
    posix = trace[trace["module"] == "POSIX"]
    assert h["bytes_read"].sum() == posix.loc[posix["op"] == "read", "length"].sum()
    assert h["bytes_written"].sum() == posix.loc[posix["op"] == "write", "length"].sum()
    assert h["ranks"].tolist() == sorted(posix["rank"].unique())


def test_heatmap_matrix_sums_ranks_into_rows():
    from iochar import jobviews
    h = {"width": 1.0, "ranks": np.array([0, 5, 1023]),
         "bytes_read": np.array([[1, 0], [0, 2], [4, 0]]),
         "bytes_written": np.array([[0, 8], [16, 0], [0, 32]])}
    m = jobviews.heat_matrix(h, 1024)
    assert m["per_row"] == 2 and m["bytes"].shape == (512, 2)
    assert m["bytes"][0].tolist() == [1, 8] and m["bytes"][2].tolist() == [16, 2]
    assert m["bytes"][511].tolist() == [4, 32] and m["bytes"].sum() == 63
    assert (m["read"], m["written"]) == (7, 56)
