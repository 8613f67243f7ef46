"""iochar-db: ingest of known logs (exact tables), bad logs, incremental, summary, sql, history."""

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

from iochar.db import Store, ingest  # noqa: E402
from iochar.db import cli as dbcli  # noqa: E402
from report_frames import MiB, frame, write  # noqa: E402

DAY = 86400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC


def job(**kw):
    return {"nprocs": 2, "nnodes": 1, "uid": 1000, "version": "0.1.0", "cmdline": kw["exe"], **kw}


def posix(writes, size=4 * MiB, files=2, extra=None, bin_="1M_4M"):
    return frame([{"path": f"/scratch/out{i}", "rank": i, "POSIX_OPENS": 1, "POSIX_WRITES": writes,
                   "POSIX_BYTES_WRITTEN": writes * size, f"POSIX_SIZE_WRITE_{bin_}": writes,
                   "POSIX_ACCESS1_ACCESS": size, "POSIX_ACCESS1_COUNT": writes,
                   "POSIX_SEQ_WRITES": writes - 1, "POSIX_F_WRITE_TIME": 0.5, **(extra or {})}
                  for i in range(files)])


def make_site(d: Path) -> dict:
    """Five runs of /apps/sim (the fourth does 50% more writes), two of /apps/post with
    a counter the others lack, one corrupt log and one copy of a good log."""
    (d / "a" / "b").mkdir(parents=True)
    for i, w in enumerate((1000, 1000, 1010, 1500, 1500)):
        write(d / "a" / f"sim{i}.iochar",
              job(exe="/apps/sim", jobid=str(10 + i), user="ann", nprocs=2,
                  start_time=T0 + i * DAY, end_time=T0 + i * DAY + 100), {"POSIX": posix(w)})
    for i in range(2):
        write(d / "a" / "b" / f"post{i}.iochar",
              job(exe="/apps/post", jobid=str(20 + i), user="bob", nprocs=2,
                  start_time=T0 + 40 * DAY + i, end_time=T0 + 40 * DAY + i + 10),
              {"POSIX": posix(10, size=100, extra={"POSIX_RENAME_SOURCES": 3}, bin_="0_100")})
    good = (d / "a" / "sim0.iochar").read_bytes()
    (d / "a" / "b" / "copy.iochar").write_bytes(good)
    (d / "a" / "b" / "broken.iochar").write_bytes(good[:200])
    return {"good": 7}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp("site")
    make_site(d / "logs")
    store = Store(d / "store", create=True)
    st = ingest(store, [d / "logs"], jobs=1, progress=False)
    return d, store, st


def q(store, sql):
    return store.connect().execute(sql).fetchall()


def test_ingest_counts_and_errors(site):
    _, store, st = site
    assert (st.found, st.ingested, st.errors, st.duplicates, st.skipped) == (9, 7, 1, 1, 0)
    assert st.rows == 14  # 7 jobs x 2 records
    (path, reason), = q(store, "SELECT log_path, reason FROM errors")
    assert path.endswith("broken.iochar") and "truncated" in reason


def test_jobs_table_exact(site):
    _, store, _ = site
    rows = q(store, """SELECT jobid, exe, nprocs, "user", uid, start_time, end_time, bytes_read,
                       bytes_written, writes, io_time, date, month FROM jobs ORDER BY jobid""")
    assert [r[0] for r in rows] == ["10", "11", "12", "13", "14", "20", "21"]
    r = rows[3]
    assert r[1:5] == ("/apps/sim", 2, "ann", 1000)
    assert r[5:7] == (T0 + 3 * DAY, T0 + 3 * DAY + 100)
    assert r[7:10] == (0, 2 * 1500 * 4 * MiB, 3000)
    assert r[10] == pytest.approx(0.5)  # the slowest rank's write time
    assert str(r[11]) == "2026-01-04" and str(r[12]) == "2026-01"
    assert rows[5][8] == 2 * 10 * 100
    # job_id is the content hash: the copy was stored once
    assert q(store, "SELECT count(DISTINCT job_id), count(*) FROM jobs")[0] == (7, 7)


def test_module_table_union_of_columns(site):
    _, store, _ = site
    rows = q(store, """SELECT j.exe, p.rank, p.path, p.POSIX_WRITES, p.POSIX_RENAME_SOURCES
                       FROM posix p JOIN jobs j USING (job_id) WHERE j.jobid IN ('13', '20')
                       ORDER BY j.exe, p.rank""")
    assert rows == [("/apps/post", 0, "/scratch/out0", 10, 3), ("/apps/post", 1, "/scratch/out1", 10, 3),
                    ("/apps/sim", 0, "/scratch/out0", 1500, None),
                    ("/apps/sim", 1, "/scratch/out1", 1500, None)]


def test_findings_are_the_advice(site):
    _, store, _ = site
    # /apps/post writes 100-byte pieces: only 20 ops, below small-io's 1000: no finding;
    # every sim run is one good pattern: nothing either
    assert q(store, "SELECT count(*) FROM findings")[0][0] == 0


def test_reingest_skips_everything(site, tmp_path):
    d, store, _ = site
    st = ingest(store, [d / "logs"], jobs=1, progress=False)
    assert (st.ingested, st.errors, st.skipped) == (0, 0, 9)  # the copy too
    assert q(store, "SELECT count(*) FROM jobs")[0][0] == 7


def test_pool_gives_same_tables(site, tmp_path):
    d, store, _ = site
    other = Store(tmp_path / "s2", create=True)
    st = ingest(other, [d / "logs"], jobs=2, progress=False, chunk=2)
    assert (st.ingested, st.errors) == (7, 1)
    sql = "SELECT * FROM posix ORDER BY job_id, rank"
    assert q(other, sql) == q(store, sql)


def run(capsys, *args):
    """iochar-db in this process (imports are the slow part of a new one): (rc, out, err)."""
    try:
        rc = dbcli.main(list(args))
    except SystemExit as e:  # argparse: --version, usage errors
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_summary_json_and_text(site, capsys):
    d, store, _ = site
    assert dbcli.main(["--store", str(store.root), "summary", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["totals"]["jobs"] == 7 and s["totals"]["errors"] == 1 and s["totals"]["users"] == 2
    assert s["totals"]["bytes_written"] == 2 * 4 * MiB * (1000 + 1000 + 1010 + 1500 + 1500) + 2 * 2000
    assert [p["name"] for p in s["top_programs_by_bytes"]] == ["/apps/sim", "/apps/post"]
    assert s["shares"]["small"] == pytest.approx(40 / (2 * 6010 + 40))
    assert dbcli.main(["--store", str(store.root), "summary"]) == 0
    out = capsys.readouterr().out
    assert "7 jobs, 2 users, 2 programs" in out and "broken.iochar" in out


def test_sql(site, capsys):
    _, store, _ = site
    assert dbcli.main(["--store", str(store.root), "sql",
                       "SELECT exe, count(*) AS n FROM jobs GROUP BY exe ORDER BY exe"]) == 0
    assert capsys.readouterr().out == "exe\tn\n/apps/post\t2\n/apps/sim\t5\n"


def test_history_flags_the_regressed_run(site, tmp_path, capsys):
    _, store, _ = site
    png = tmp_path / "trend.png"
    assert dbcli.main(["--store", str(store.root), "history", "--exe", "sim", "--json",
                       "--plot", str(png)]) == 0
    h = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in h["runs"]] == ["first", "ok", "ok", "REGRESSION", "ok"]
    # against the run before (1,010 writes per file): +49% ops and bytes, over 10%
    assert h["runs"][3]["regressions"] == ["POSIX read+write ops +49%", "POSIX bytes moved +49%"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert dbcli.main(["--store", str(store.root), "history", "--exe", "/apps/sim",
                       "--fail-on-regression"]) == 1


def test_bad_input_one_line_exit_2(tmp_path, capsys):
    rc, _, err = run(capsys, "--store", str(tmp_path / "none"), "summary")
    assert rc == 2 and err.count("\n") == 1 and "no store" in err
    rc, _, err = run(capsys, "--store", str(tmp_path / "s"), "ingest", str(tmp_path / "missing"))
    assert rc == 2 and err.count("\n") == 1 and "missing: no such file" in err
    rc, _, err = run(capsys, "--store", str(tmp_path / "s"), "sql", "SELEC nonsense")
    assert rc == 2 and err.startswith("iochar-db: error: query failed") and err.count("\n") == 1
    rc, _, err = run(capsys, "--store", str(tmp_path / "s"), "history")
    assert rc == 2 and err.count("\n") == 1
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out.startswith("iochar-db ")


def test_names_escaped_in_text(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    evil = os.fsencode(logs) + b"/x\x1b[31m\nevil\xff.iochar"
    with open(evil, "wb") as f:
        f.write(b"not a log")
    rc, _, err = run(capsys, "--store", str(tmp_path / "s"), "ingest", "--jobs", "1", str(logs))
    assert rc == 0, err
    # the store keeps a byte that is not UTF-8 as the text \xff (extract.text_path),
    # which prints escaped as any backslash is
    assert "x\\x1b[31m\\nevil\\\\xff.iochar" in err and "\x1b" not in err
    rc, out, _ = run(capsys, "--store", str(tmp_path / "s"), "summary")
    assert "x\\x1b[31m\\nevil\\\\xff.iochar: bad magic" in out and "\x1b" not in out


def test_bench_generator_scales_seeds_consistently(site, tmp_path):
    """bench/site_scale.py's logs: one seed's additive counters times a whole number k,
    its times scaled, job identity varied; the same logs for the same N; all ingestible."""
    import sys
    bench = str(Path(__file__).resolve().parents[2] / "bench")
    if bench not in sys.path:  # kept: the generator's worker processes import it too
        sys.path.append(bench)
    import iochar
    import site_scale
    seed = site[0] / "logs" / "a" / "sim0.iochar"
    total = site_scale.generate([seed], tmp_path / "g", 12, workers=1, part=5)
    logs = sorted((tmp_path / "g").rglob("*.iochar"))
    assert len(logs) == 12 and total == sum(p.stat().st_size for p in logs)
    base = iochar.open(str(seed)).records("POSIX")
    jobids = set()
    for p in logs:
        log = iochar.open(str(p))
        jobids.add(log.job["jobid"])
        r = log.records("POSIX")
        k = r["POSIX_WRITES"].sum() / base["POSIX_WRITES"].sum()
        assert k in (1, 2, 3, 4, 8), p
        for c in ("POSIX_BYTES_WRITTEN", "POSIX_SIZE_WRITE_1M_4M", "POSIX_ACCESS1_COUNT",
                  "POSIX_OPENS"):
            assert r[c].sum() == k * base[c].sum(), (p, c)
        assert (r["POSIX_ACCESS1_ACCESS"] == base["POSIX_ACCESS1_ACCESS"]).all()  # sizes kept
        assert log.job["exe"] in site_scale.PROGRAMS and log.job["nprocs"] == 2
    assert jobids == {str(100000 + i) for i in range(12)}
    site_scale.generate([seed], tmp_path / "again", 12, workers=1, part=5)
    again = sorted((tmp_path / "again").rglob("*.iochar"))
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in logs]
    store = Store(tmp_path / "s", create=True)
    st = ingest(store, [tmp_path / "g"], jobs=1, progress=False)
    assert (st.ingested, st.errors) == (12, 0)


CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_names_not_utf8_stored_and_escaped(tmp_path, capsys):
    """tests/corpus/names.iochar (control characters, bytes that are not UTF-8): stored,
    every name as extract.text_path gives it (\\xNN for a bad byte), printed escaped."""
    from iochar import log as L
    from iochar.db.extract import text_path
    store = Store(tmp_path / "s", create=True)
    st = ingest(store, [CORPUS / "names.iochar"], jobs=1, progress=False)
    assert (st.ingested, st.errors) == (1, 0)
    want = sorted(text_path(p) for p in L.open(CORPUS / "names.iochar").records("POSIX")["path"])
    assert sorted(r[0] for r in q(store, "SELECT path FROM posix")) == want
    assert "/tmp/bad\\xff\\xfe.dat" in want
    rc, out, _ = run(capsys, "--store", str(store.root), "sql", "SELECT path FROM posix")
    assert rc == 0 and "\x1b" not in out and "/tmp/bad\\\\xff\\\\xfe.dat" in out
    assert "/tmp/two\\nlines.dat" in out.splitlines()


def test_per_rank_logs_are_one_job(tmp_path):
    """The per-rank logs of one 4-rank job (tests/corpus/rank0..3) are one job, as
    iochar-report groups them: its numbers are the report's on the set; ingested
    again, the set is known."""
    import contextlib
    import io
    import shutil

    from iochar.cli import report
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(4):
        shutil.copy(CORPUS / f"rank{i}.iochar", logs / f"rank{i}.iochar")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main([str(logs), "--json"]) == 0
    rep = json.loads(out.getvalue())
    store = Store(tmp_path / "s", create=True)
    for jobs in (1, 2):
        st = ingest(store, [logs], jobs=jobs, progress=False, chunk=1)
        assert (st.found, st.ingested, st.errors) == (4, 1, 0) if jobs == 1 else \
            (st.ingested, st.skipped) == (0, 1)
    (path, nprocs, nbytes), = q(store, "SELECT log_path, nprocs, log_bytes FROM jobs")
    assert (path, nprocs) == (str(logs / "rank0.iochar"), 4)
    assert nbytes == sum((logs / f"rank{i}.iochar").stat().st_size for i in range(4))
    sums = q(store, "SELECT module, reads, writes, bytes_written FROM summaries ORDER BY 1")
    assert sums == [(m, s["reads"], s["writes"], s["bytes_written"])
                    for m, s in sorted(rep["modules"].items())]
    assert q(store, "SELECT count(DISTINCT rank) FROM posix WHERE rank >= 0") == [(4,)]
    finds = q(store, "SELECT id, severity, module, message FROM findings")
    assert finds == [(a["id"], a["severity"], a["module"], a["message"]) for a in rep["advice"]]
