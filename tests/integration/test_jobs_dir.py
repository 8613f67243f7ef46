"""Logs of many jobs in one directory: grouped by their JOB identity (not names), listed,
reported one by one or picked with --job; per-rank sets still merged; --version."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import iochar
from iochar import jobs as J
from iochar.cli import diff, parser, report
from iochar.flags import PARTIAL
from iochar.log import open_job
from report_frames import frame, job, write
from tool import LIB, logs_in, mpiexec, run, workload

ROOT = Path(__file__).resolve().parents[2]
T0 = 1700000000.0


def posix(path, rank, nbytes, t):
    return frame([{"path": path, "rank": rank, "POSIX_WRITES": 2, "POSIX_BYTES_WRITTEN": nbytes,
                   "POSIX_F_WRITE_TIME": t}])


def many_jobs(d: Path) -> Path:
    """app (reduced log, jobid 100) and its fork child (jobid 100), then two steps of
    sim under one batch jobid 200, each a set of 4 per-rank logs: the names say nothing
    (all logs are named by number, in an order unrelated to the jobs)."""
    d.mkdir(exist_ok=True)
    names = iter(f"{i:02d}.iochar" for i in (7, 3, 9, 1, 5, 0, 8, 2, 6, 4))
    write(d / next(names), job() | {"jobid": "100", "pid": 100},
          {"POSIX": frame([{"path": "/d/a", "rank": -1, "POSIX_READS": 4,
                            "POSIX_BYTES_READ": 4096, "POSIX_F_READ_TIME": 0.5}])})
    write(d / next(names), job(nprocs=1) | {"jobid": "100", "pid": 101, "start_time": T0 + 1},
          {"POSIX": posix("/d/child", 0, 10, 0.25)})
    for step, start in ((1, T0 + 500), (2, T0 + 700)):
        for r in range(4):
            write(d / next(names),
                  job() | {"jobid": "200", "pid": 200 + 10 * step + r, "rank": r,
                           "exe": "/home/u/sim", "cmdline": "/home/u/sim",
                           "start_time": start + 0.1 * r, "end_time": start + 100,
                           "partial": PARTIAL["PER_RANK"], "finalized": 0},
                  {"POSIX": posix(f"/d/s{step}.{r}", r, 1000 * step * (r + 1), 0.125 * (r + 1))})
    return d


def test_grouping_by_job_identity(tmp_path):
    jobs, bad = J.group(J.expand([many_jobs(tmp_path / "logs")]))
    assert bad == []
    assert [(j.id, J.exe_name(j.job), len(j.files), sorted(j.ranks, key=str)) for j in jobs] == [
        ("100:100", "app", 1, [None]), ("100:101", "app", 1, [None]),
        ("200:210", "sim", 4, [0, 1, 2, 3]), ("200:220", "sim", 4, [0, 1, 2, 3])]
    log = open_job(jobs[2])  # a per-rank set merges as before
    assert log.job["nprocs"] == 4 and log.job["merged_logs"] == 4
    assert log.records("POSIX")["POSIX_BYTES_WRITTEN"].sum() == 1000 * (1 + 2 + 3 + 4)


def test_python_open_of_a_directory_of_many_jobs(tmp_path):
    d = many_jobs(tmp_path / "logs")
    with pytest.raises(iochar.LogError, match=r"^4 jobs in .*pick one with job= "
                       r"\(ids: 100:100, 100:101, 200:210, 200:220\)$"):
        iochar.open(d)
    log = iochar.open(d, job="200:220")
    assert log.job["nprocs"] == 4 and log.job["merged_logs"] == 4
    assert log.records("POSIX")["POSIX_BYTES_WRITTEN"].sum() == 2000 * (1 + 2 + 3 + 4)
    one = tmp_path / "one"
    one.mkdir()
    for f in sorted(d.iterdir()):
        if iochar.jobs.read_job(f).get("pid", 0) in (220, 221, 222, 223):
            shutil.copy(f, one / f.name)
    assert iochar.open(one).job["merged_logs"] == 4  # one job: no job= needed
    (one / "zz.iochar").write_bytes(b"junk")  # a bad file beside one job's rank logs:
    log = iochar.open(one)  # named with its error, no rank missing (issue 31)
    assert log.job["merged_logs"] == 4 and "missing_ranks" not in log.job
    assert log.job["unreadable_logs"] == f"{one / 'zz.iochar'}: truncated file or not an " \
        "iochar log"
    with pytest.raises(iochar.LogError, match="zz.iochar"):  # named alone: its error
        iochar.open(one / "zz.iochar")


def test_report_lists_and_reports_each_job(tmp_path, capsys):
    d = many_jobs(tmp_path / "logs")
    assert report.main([str(d)]) == 0
    out = capsys.readouterr().out
    table = out.split("\n\n")[0].splitlines()
    assert table[0].split() == ["job", "exe", "nprocs", "start", "read", "written", "I/O",
                                "time", "logs"]
    rows = [re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "T", ln).split() for ln in table[1:]]
    assert rows == [["100:100", "app", "4", "T", "4", "KiB", "0", "B", "125.0", "ms", "1"],
                    ["100:101", "app", "1", "T", "0", "B", "10", "B", "250.0", "ms", "1"],
                    ["200:210", "sim", "4", "T", "0", "B", "9.8", "KiB", "500.0", "ms", "4"],
                    ["200:220", "sim", "4", "T", "0", "B", "19.5", "KiB", "500.0", "ms", "4"]]
    assert out.count("==== job ") == 4 and out.count("\niochar: /home/u/sim\n") == 2
    assert "==== job 200:220: /home/u/sim, 4 processes, 4 log(s) ====" in out


def test_report_json_list_and_pick(tmp_path, capsys):
    d = many_jobs(tmp_path / "logs")
    assert report.main([str(d), "--list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(j["id"], j["jobid"], j["nprocs"], j["bytes_read"], j["bytes_written"],
             j["io_time"], len(j["logs"])) for j in doc["jobs"]] == [
        ("100:100", "100", 4, 4096, 0, 0.125, 1), ("100:101", "100", 1, 0, 10, 0.25, 1),
        ("200:210", "200", 4, 0, 10000, 0.5, 4), ("200:220", "200", 4, 0, 20000, 0.5, 4)]
    assert doc["jobs"][2]["start_time"] == T0 + 500 and "report" not in doc["jobs"][0]
    assert report.main([str(d), "--json"]) == 0
    full = json.loads(capsys.readouterr().out)["jobs"]
    assert full[3]["report"]["modules"]["POSIX"]["bytes_written"] == 20000
    # --job: the id, or a jobid that is unique; the usual single report
    assert report.main([str(d), "--job", "200:220", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["modules"]["POSIX"]["bytes_written"] == 20000 and rep["job"]["pid"] == 220
    assert report.main([str(d), "--job", "200"]) == 2
    assert capsys.readouterr().err == ("iochar-report: error: job 200 matches 2 jobs: pick one "
                                       "of 200:210, 200:220\n")
    assert report.main([str(d), "--job", "999"]) == 2
    assert "no job 999 (jobs: 100:100, 100:101, 200:210, 200:220)" in capsys.readouterr().err


def test_html_needs_one_job(tmp_path, capsys):
    d = many_jobs(tmp_path / "logs")
    assert report.main([str(d), "--html", str(tmp_path / "r.html")]) == 2
    assert "4 jobs: pick one with --job to write HTML" in capsys.readouterr().err
    assert report.main([str(d), "--job", "100:101", "--html", str(tmp_path / "r.html")]) == 0
    assert "/d/child" in (tmp_path / "r.html").read_text()


def test_bad_log_among_many_is_skipped_with_a_warning(tmp_path, capsys):
    d = many_jobs(tmp_path / "logs")
    (d / os.fsdecode(b"x\x1bname\xff.iochar")).write_bytes(b"IOCHARLG truncated")
    assert report.main([str(d), "--list"]) == 2
    cap = capsys.readouterr()
    assert len(cap.out.splitlines()) == 5  # the 4 jobs are still listed
    (line,) = cap.err.splitlines()
    assert line.startswith("iochar-report: warning: skipped ")
    assert "x\\x1bname\\xff.iochar" in line and "\x1b" not in line


def test_parser_and_diff_on_many_jobs(tmp_path, capsys):
    d = many_jobs(tmp_path / "logs")
    assert parser.main([str(d), "--total"]) == 0
    out = capsys.readouterr().out
    assert re.findall(r"^# job: (.*)$", out, re.M) == ["100:100", "100:101", "200:210", "200:220"]
    # (the first job's log has no POSIX_BYTES_WRITTEN counter: it wrote nothing)
    assert re.findall(r"^total_POSIX_BYTES_WRITTEN: (\d+)$", out, re.M) == [
        "10", "10000", "20000"]
    assert parser.main([str(d), "--job", "100:101"]) == 0
    out = capsys.readouterr().out
    assert "# job:" not in out and "POSIX 0 " in out and out.count("/d/child") == 3
    # step 2 writes twice the bytes in as many writes: larger accesses, then smaller
    assert diff.main([str(d), str(d), "--base-job", "200:210", "--new-job", "200:220"]) == 0
    assert "mean access size" in capsys.readouterr().out
    assert diff.main([str(d), str(d), "--base-job", "200:220", "--new-job", "200:210"]) == 1


@pytest.mark.parametrize("cli", ["report", "parser", "diff", "db"])
def test_version(cli, capsys):
    from iochar.db import cli as db
    with pytest.raises(SystemExit) as e:
        {"report": report, "parser": parser, "diff": diff, "db": db}[cli].main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"iochar-{cli} {iochar.__version__}\n"


@pytest.mark.skipif(not LIB.exists() or shutil.which("mpiexec.mpich") is None,
                    reason="needs the MPICH build and mpiexec.mpich")
def test_real_jobs_in_one_directory(tmp_path):
    """A reduced 4-rank job, a 4-rank job that exits without MPI_Finalize (per-rank logs)
    and a serial program that forks: 3 jobs, the per-rank set merged, the fork child
    one job with its parent (its JOB's job key is the parent's)."""
    data = tmp_path / "data"
    data.mkdir()
    for cmd in (mpiexec(4) + [workload("mpi_workload")],
                mpiexec(4) + [workload("mpi_workload"), "exit"],
                [workload("posix_workload"), "fork", str(data)]):
        p = run(cmd, tmp_path)
        assert p.returncode in (0, 9), p.stderr.decode(errors="replace")  # 9: see test_mpi_reduce
    assert len(logs_in(tmp_path)) == 1 + 4 + 2
    env = {"PYTHONPATH": str(ROOT / "reports")}
    r = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(tmp_path), "--list",
                        "--json"], capture_output=True, text=True, env=env, check=True)
    jobs = json.loads(r.stdout)["jobs"]
    assert [(Path(j["exe"]).name, j["nprocs"], len(j["logs"])) for j in jobs] == [
        ("mpi_workload", 4, 1), ("mpi_workload", 4, 4), ("posix_workload", 2, 2)]
    assert jobs[2]["bytes_written"] == 20 + 60  # the parent's and the child's
    for j in jobs[:2]:  # the MPI-IO bytes of tests/integration/mpi_workload.c, reduced or merged
        r = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(tmp_path), "--job",
                            j["id"], "--json"], capture_output=True, text=True, env=env,
                           check=True)
        m = json.loads(r.stdout)["modules"]["MPIIO"]
        assert (m["bytes_read"], m["bytes_written"]) == (16384, 44208)


def test_job_picked_despite_unreadable_neighbours(tmp_path, capsys):
    d = many_jobs(tmp_path / "logs")
    (d / "zz.iochar").write_bytes(b"not a log")
    assert report.main([str(d), "--job", "100:101", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["modules"]["POSIX"]["bytes_written"] == 10
    assert report.main([str(d), "--job", "7"]) == 2
    err = capsys.readouterr().err
    assert "no job 7" in err and "1 unreadable file(s) skipped" in err and "zz.iochar" in err
