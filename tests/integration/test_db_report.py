"""iochar-db ingest stores what `iochar-report --json` says: on logs of real runs (POSIX,
STDIO, MPI-IO at 4 ranks, Python), every job's per-module numbers (summaries), its
findings (id, severity, module, message, in rank order) and its totals (jobs) equal
the report's JSON for the same log, whichever engine parsed it."""

import contextlib
import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
pq = pytest.importorskip("pyarrow.parquet")

from iochar.cli import report  # noqa: E402
from iochar.db import Store, ingest  # noqa: E402
from tool import logs_in, mpiexec, run, workload  # noqa: E402

PY_IO = """
for i in range(3):
    with open(f"part{i}.txt", "w") as f:
        for j in range(300):
            f.write(f"{i} {j} " + "x" * 60 + "\\n")
    with open(f"part{i}.txt") as f:
        sum(len(line) for line in f)
"""
RUNS = [  # (name, command); cheap runs with known, different advice
    ("posix", [workload("posix_workload"), "strided", "{d}"]),
    ("stdio", [workload("stdio_workload"), "{d}"]),
    ("small", [workload("advice_posix"), "small"]),
    ("meta", [workload("advice_posix"), "meta"]),
    ("python", [sys.executable, "-c", PY_IO]),
    ("mpi", mpiexec(4) + [workload("advice_mpi"), "imbalance"]),
]
CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SUMMARY_KEYS = ("files", "opens", "reads", "writes", "seeks", "stats", "syncs", "bytes_read",
                "bytes_written", "time_read", "time_write", "time_meta")


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    if shutil.which("mpiexec.mpich") is None or not os.path.exists(workload("advice_mpi")):
        pytest.skip("needs MPICH and the test workloads (meson build)")
    out = tmp_path_factory.mktemp("logs")
    for name, cmd in RUNS:
        d = tmp_path_factory.mktemp(name)
        p = run([c.replace("{d}", str(d)) for c in cmd], d)
        assert p.returncode == 0, (name, p.stderr.decode(errors="replace"))
        for i, lg in enumerate(logs_in(d)):
            shutil.move(lg, out / f"{name}.{i}.iochar")
    return sorted(out.glob("*.iochar"))


def report_json(path) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main([str(path), "--json"]) == 0
    return json.loads(out.getvalue())


def stored(store: Store, sql: str) -> dict:
    """log_path -> rows of the query (whose first column is log_path)."""
    out: dict = {}
    for r in store.connect().execute(sql).fetchall():
        out.setdefault(r[0], []).append(r[1:])
    return out


@pytest.mark.parametrize("jobs", [1, 2])
def test_store_equals_report_json(logs, tmp_path, jobs):
    store = Store(tmp_path / "store", create=True)
    st = ingest(store, [logs[0].parent], jobs=jobs, progress=False, chunk=2)
    assert (st.ingested, st.errors) == (len(logs), 0)
    cols = ", ".join(f"s.{k}" for k in SUMMARY_KEYS)
    sums = stored(store, f"""SELECT j.log_path, s.module, {cols}, s.slowest_time, s.top_size
                             FROM summaries s JOIN jobs j USING (job_id)
                             ORDER BY j.log_path, s.module""")
    # read in file order: a job's findings are stored in rank order, in one part file
    path_of = dict(store.connect().execute("SELECT job_id, log_path FROM jobs").fetchall())
    finds: dict = {}
    for r in pq.read_table(store.root / "findings").to_pylist():
        finds.setdefault(path_of[r["job_id"]], []).append(
            (r["id"], r["severity"], r["module"], r["message"]))
    totals = stored(store, "SELECT log_path, nprocs, bytes_read, bytes_written, reads, "
                           "writes FROM jobs")
    fired = set()
    for path in logs:
        rep = report_json(path)
        mods = rep["modules"]
        want = [(m, *(pytest.approx(s[k], abs=1e-6) for k in SUMMARY_KEYS),
                 pytest.approx(s["slowest_rank"]["time"], abs=1e-6),
                 s["top_sizes"][0]["size"] if s["top_sizes"] else 0)
                for m, s in sorted(mods.items())]
        assert sums[str(path)] == want, path.name
        advice = [(a["id"], a["severity"], a["module"], a["message"]) for a in rep["advice"]]
        assert finds.get(str(path), []) == advice, path.name
        fired |= {a[0] for a in advice}
        bottom = [m for m in ("POSIX", "STDIO") if m in mods]
        assert totals[str(path)] == [(rep["job"]["nprocs"],
                                      *(sum(mods[m][k] for m in bottom) for k in (
                                          "bytes_read", "bytes_written", "reads",
                                          "writes")))], path.name
    # the set of logs exercises the advice, not only empty lists
    assert {"small-io", "metadata-heavy", "rank-imbalance"} <= fired, fired


def test_dask_local_cluster_stores_the_pool_rows(logs, tmp_path):
    """`ingest --workers 2` (a local Dask cluster of worker processes, as the CLI starts
    it) and the 2-process pool store the same rows in every table, on real-run logs with
    the cases the engines must agree on: a copy under another name in another chunk (the
    first found is kept), an unreadable log, the per-rank logs of one job (grouped after
    the first pass) and a log already stored (skipped)."""
    pytest.importorskip("distributed")
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "z").mkdir()
    for p in logs:
        shutil.copy(p, tree / "a" / p.name)
    shutil.copy(logs[0], tree / "z" / "copy.iochar")
    (tree / "z" / "broken.iochar").write_bytes(logs[1].read_bytes()[:300])
    for i in range(4):
        shutil.copy(CORPUS / f"rank{i}.iochar", tree / "z" / f"rank{i}.iochar")
    stores, stats = {}, {}
    for name, kw in (("pool", {"jobs": 2}), ("dask", {"dask_workers": 2})):
        stores[name] = Store(tmp_path / name, create=True)
        ingest(stores[name], [tree / "a" / logs[2].name], jobs=1, progress=False)
        stats[name] = ingest(stores[name], [tree], progress=False, chunk=2, **kw)
    for st in stats.values():
        counts = (st.found, st.ingested, st.errors, st.duplicates, st.skipped)
        assert counts == (len(logs) + 6, len(logs), 1, 1, 1), counts
        assert st.peak_rss > 50 << 20  # the workers' own peak (imports alone pass 50 MiB)
    a, b = stores["pool"].connect(), stores["dask"].connect()
    tables = ["jobs", "summaries", "findings", "errors",
              *(m.lower() for m in stores["pool"].modules())]
    assert sorted(tables[4:]) == sorted(m.lower() for m in stores["dask"].modules())
    assert {"posix", "stdio", "mpiio"} <= set(tables)
    for t in tables:
        cols = "* EXCLUDE (ingested_at)" if t == "errors" else "*"
        sql = f"SELECT {cols} FROM {t} ORDER BY ALL"
        rows = a.execute(sql).fetchall()
        assert rows and rows == b.execute(sql).fetchall(), t
    nprocs = a.execute("SELECT nprocs FROM jobs WHERE log_path LIKE '%rank0.iochar'")
    assert nprocs.fetchall() == [(4,)]
