"""Jobs that are not MPI ranks (issue 38 items 3-5): a tooled process with its spawn
children, a torchrun-style launcher's workers, the tasks of one scheduler step are one
job in every reader and in the store; programs one after another stay apart; an
interpreter's program is its script; the data-pipeline remedy."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import iochar
from iochar import jobs as J
from iochar import program as P
from iochar.cli import report
from iochar.db import cli as dbcli
from report_frames import frame, job, write
from tool import logs_in, run

MiB = 1 << 20
T0 = 1700000000.0

LAUNCHER = """
import os, subprocess, sys
n = int(sys.argv[1])
procs = [subprocess.Popen([sys.executable, "worker.py"],
                          env=dict(os.environ, RANK=str(r), WORLD_SIZE=str(n),
                                   LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(n)))
         for r in range(n)]
sys.exit(max(p.wait() for p in procs))
"""
WORKER = """
with open("big.dat", "rb") as f:
    while f.read(1 << 20):
        pass
"""


def _script(d: Path, name: str, text: str) -> Path:
    (d / name).write_text(text)
    return d / name


def _report_json(args) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "reports"))
    r = subprocess.run([sys.executable, "-m", "iochar.cli.report", *map(str, args), "--json"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def torchrun(tmp_path_factory):
    """4 workers started like torchrun (RANK/WORLD_SIZE/LOCAL_RANK, one SLURM_JOB_ID) by
    a tooled launcher script, each reading the same 64 MiB file whole."""
    d = tmp_path_factory.mktemp("torchrun")
    (d / "big.dat").write_bytes(os.urandom(64 * MiB))
    _script(d, "launcher.py", LAUNCHER)
    _script(d, "worker.py", WORKER)
    p = run([sys.executable, "launcher.py", "4"], d, env={"SLURM_JOB_ID": "777001"})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stderr == b""
    return d


def test_torchrun_workers_are_one_job(torchrun):
    logs = logs_in(torchrun)
    heads = [J.read_job(f) for f in logs]
    assert len(logs) == 5  # the launcher read its script: it has a log too
    launcher = next(h for h in heads if "task_rank" not in h)
    workers = sorted((h for h in heads if "task_rank" in h), key=lambda h: h["task_rank"])
    assert [(h["task_rank"], h["task_rank_from"], h["world_size"], h["world_size_from"])
            for h in workers] == [(r, "RANK", 4, "WORLD_SIZE") for r in range(4)]
    assert {h["job_key"] for h in heads} == {launcher["job_key"]}
    assert launcher["job_key"].startswith("process:") and launcher["job_key_from"] == "process"
    assert {h["parent_pid"] for h in workers} == {launcher["pid"]}
    assert {h["jobid"] for h in heads} == {"777001"}
    assert launcher["program"] == str(torchrun / "launcher.py")
    assert {h["program"] for h in workers} == {str(torchrun / "worker.py")}

    rep = _report_json([torchrun, "--job", "777001"])  # one job: --job picks it
    jb = rep["job"]
    assert (jb["nprocs"], jb["merged_logs"], jb["program"]) == (5, 5, str(torchrun / "worker.py"))
    assert "missing_ranks" not in jb and not jb["partial"]
    # the 64 MiB file 4 times, and the interpreter reading its scripts
    assert 4 * 64 * MiB < rep["modules"]["POSIX"]["bytes_read"] < 4 * 64 * MiB + 4096
    (rr,) = [a for a in rep["advice"] if a["id"] == "redundant-reads"]
    assert rr["severity"] == "high"
    assert (rr["evidence"]["POSIX_BYTES_READ"], rr["evidence"]["POSIX_MAX_BYTE_READ"],
            rr["evidence"]["read_factor"], rr["evidence"]["excess_bytes"]) == \
        (4 * 64 * MiB, 64 * MiB - 1, 4.0, 3 * 64 * MiB)
    assert "MPI_Bcast" not in rr["recommendation"]  # not an MPI job: no MPI remedy
    # the workers keep the launcher's ranks, the launcher comes after them
    log = iochar.open(str(torchrun), job="777001")
    df = log.records("POSIX")
    big = df[df["path"] == str(torchrun / "big.dat")]
    assert big["rank"].tolist() == [-1] and int(big["POSIX_BYTES_READ"].iloc[0]) == 4 * 64 * MiB
    assert sorted(log.ranks("POSIX")["rank"].tolist()) == [0, 1, 2, 3, 4]
    lr = df[df["path"] == str(torchrun / "launcher.py")]
    assert lr["rank"].tolist() == [4]


def test_torchrun_job_in_the_store(torchrun, tmp_path, capsys, monkeypatch):
    # the ingest's worker processes import this checkout's iochar, not the installed one
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2] / "reports"))
    store = tmp_path / "store"
    assert dbcli.main(["--store", str(store), "ingest", str(torchrun)]) == 0
    capsys.readouterr()
    assert dbcli.main(["--store", str(store), "sql",
                       "SELECT jobid, exe, interpreter, nprocs, bytes_read FROM jobs"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 1  # one jobs row for the 5 logs
    jobid, exe, interp, nprocs, nread = rows[0].split("\t")
    assert (jobid, exe, nprocs) == ("777001", str(torchrun / "worker.py"), "5")
    assert Path(interp).name.startswith("python") and int(nread) > 4 * 64 * MiB
    assert dbcli.main(["--store", str(store), "sql", "SELECT rank, POSIX_BYTES_READ FROM POSIX "
                       "WHERE path LIKE '%/big.dat'"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [f"-1\t{4 * 64 * MiB}"]
    assert dbcli.main(["--store", str(store), "sql",
                       "SELECT id, severity FROM findings WHERE id = 'redundant-reads'"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["redundant-reads\thigh"]
    assert dbcli.main(["--store", str(store), "history", "--exe", "worker.py", "--json"]) == 0
    h = json.loads(capsys.readouterr().out)
    assert [r["nprocs"] for r in h["runs"]] == [5]


SPAWN = """
import multiprocessing as mp, sys
def work(i):
    with open(f"out{i}.dat", "wb") as f:
        f.write(b"x" * (1000 * (i + 1)))
if __name__ == "__main__":
    mp.set_start_method(sys.argv[1])
    with open("parent.dat", "wb") as f:
        f.write(b"p" * 7)
    ps = [mp.Process(target=work, args=(i,)) for i in range(3)]
    [p.start() for p in ps]
    [p.join() for p in ps]
"""


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_multiprocessing_children_with_their_parent(tmp_path, method, monkeypatch):
    """spawn: each child a new program whose parent is the tooled script; forkserver:
    the fork server a spawn child, the workers its fork children (they end in os._exit:
    their live files, read like logs, carry the job too)."""
    live = tmp_path / "live"  # this test's own, for the writers and the reader
    monkeypatch.setenv("IOCHAR_LIVEDIR", str(live))
    _script(tmp_path, "pipeline.py", SPAWN)
    p = run([sys.executable, "pipeline.py", method], tmp_path, env={"IOCHAR_LIVEDIR": str(live)})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    jobs, bad = J.find([tmp_path])
    assert bad == [] and len(jobs) == 1
    log = iochar.open(str(tmp_path))
    df = log.records("POSIX")
    out = {Path(r.path).name: (r.rank, r.POSIX_BYTES_WRITTEN) for r in df.itertuples()
           if r.path.endswith(".dat")}
    assert out["parent.dat"] == (0, 7)  # the script, first to start: rank 0
    assert sorted(b for _, b in out.values()) == [7, 1000, 2000, 3000]
    assert len({r for r, _ in out.values()}) == 4  # each process its own rank
    assert log.job["nprocs"] == len(jobs[0].files) == log.job["merged_logs"]
    assert {str(J.read_job(f)["jobid"]) for f in jobs[0].files} == {str(log.job["pid"])}
    assert log.job["program"] == str(tmp_path / "pipeline.py")


def test_programs_one_after_another_are_two_jobs(tmp_path, capsys):
    """Two programs of one batch job (same SLURM_JOB_ID, no step, no rank) run one after
    the other: two jobs; --job with the batch id names both."""
    for name in ("first.py", "second.py"):
        _script(tmp_path, name, f"open('{name}.out', 'w').write('x' * {len(name)})\n")
        p = run([sys.executable, name], tmp_path, env={"SLURM_JOB_ID": "4242"})
        assert p.returncode == 0, p.stderr.decode(errors="replace")
    jobs, bad = J.find([tmp_path])
    assert bad == [] and [J.exe_name(j.job) for j in jobs] == ["first.py", "second.py"]
    assert [len(j.files) for j in jobs] == [1, 1]
    assert report.main([str(tmp_path), "--job", "4242"]) == 2
    assert "matches 2 jobs" in capsys.readouterr().err
    assert report.main([str(tmp_path), "--list"]) == 0
    listing = capsys.readouterr().out
    assert "first.py" in listing and "second.py" in listing


TASK = """
import sys, time
with open(f"task{sys.argv[1]}.out", "w") as f:
    f.write("t" * (10 + int(sys.argv[1])))
time.sleep(0.3)
"""


def _step(d: Path, step: str, n: int, procid_offset=0):
    """n tasks of one Slurm step started together, as srun starts them."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    e.update(LD_PRELOAD=str(Path(__file__).resolve().parents[2] / "build" / "libiochar.so"),
             IOCHAR_LOGDIR=str(d), SLURM_JOB_ID="5150", SLURM_STEP_ID=step,
             SLURM_NTASKS=str(n))
    procs = [subprocess.Popen([sys.executable, "task.py", f"{step}{r}"], cwd=d,
                              env=dict(e, SLURM_PROCID=str(r + procid_offset)))
             for r in range(n)]
    assert [p.wait(timeout=120) for p in procs] == [0] * n


def test_tasks_of_a_step_and_steps_one_after_another(tmp_path):
    _script(tmp_path, "task.py", TASK)
    _step(tmp_path, "0", 3)
    _step(tmp_path, "1", 2)
    jobs, bad = J.find([tmp_path])
    assert bad == [] and [len(j.files) for j in jobs] == [3, 2]
    assert [sorted(j.ranks) for j in jobs] == [[0, 1, 2], [0, 1]]
    for j, step in zip(jobs, "01"):
        heads = [J.read_job(f) for f in j.files]
        assert {h["job_key"] for h in heads} == {f"slurm:5150.{step}:task.py"}
        assert {(h["task_rank_from"], h["world_size"], h["world_size_from"]) for h in heads} \
            == {("SLURM_PROCID", len(j.files), "SLURM_NTASKS")}
        log = iochar.open_job(j)
        df = log.records("POSIX")
        got = {Path(r.path).name: (r.rank, r.POSIX_BYTES_WRITTEN) for r in df.itertuples()
               if r.path.endswith(".out")}
        assert got == {f"task{step}{r}.out": (r, 10 + int(f"{step}{r}"))
                       for r in range(len(j.files))}


def test_same_step_twice_is_two_jobs(tmp_path):
    """The same program run twice in one step key (a batch script without srun): the
    second run's ranks are taken already, and it starts after the first ended."""
    _script(tmp_path, "task.py", TASK)
    _step(tmp_path, "7", 2)
    _step(tmp_path, "7", 2)
    jobs, _ = J.find([tmp_path])
    assert [sorted(j.ranks) for j in jobs] == [[0, 1], [0, 1]]


def test_script_and_module_names(tmp_path):
    _script(tmp_path, "script.py", "open('s.out', 'w').write('abc')\n")
    (tmp_path / "pkg").mkdir()
    _script(tmp_path / "pkg", "__init__.py", "")
    _script(tmp_path / "pkg", "mod.py", "open('m.out', 'w').write('abcd')\n")
    for cmd in ([sys.executable, "script.py"], [sys.executable, "-X", "utf8", "-m", "pkg.mod"]):
        p = run(cmd, tmp_path, env={"PYTHONPATH": str(tmp_path)})
        assert p.returncode == 0, p.stderr.decode(errors="replace")
    heads = sorted((J.read_job(f) for f in logs_in(tmp_path)), key=lambda h: h["start_time"])
    assert [(h["program"], Path(h["interpreter"]).name.startswith("python")) for h in heads] \
        == [(str(tmp_path / "script.py"), True), ("pkg.mod", True)]
    text = subprocess.run(
        [sys.executable, "-m", "iochar.cli.report", str(logs_in(tmp_path)[0])],
        capture_output=True, text=True, check=True,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "reports")),
    ).stdout.splitlines()
    prog = [ln for ln in text if ln.startswith("  program ")]
    assert len(prog) == 1 and prog[0].split()[1] in ("script.py", "pkg.mod")


# ---- readers on hand-built logs (exact rules) ----------------------------------------


def _proc(d, name, key, start, pid, **kw):
    write(d / f"{name}.iochar", job(nprocs=1) | {"jobid": "9", "pid": pid, "uid": 1000, "job_key": key,
                                     "start_time": start, "end_time": start + 10} | kw,
          {"POSIX": frame([{"path": f"/d/{name}", "rank": 0, "POSIX_WRITES": 1,
                            "POSIX_BYTES_WRITTEN": pid}])})


def test_grouping_rules_on_written_logs(tmp_path):
    """Same key, overlapping: one job; the launcher's ranks where given (the rank variable
    most tasks have), every other process after them by start time; a rank given twice or
    a start after the group ended opens a new job."""
    k = "slurm:9.0:train.py"
    _proc(tmp_path, "a", k, T0, 10, task_rank=1, task_rank_from="RANK", world_size=3)
    _proc(tmp_path, "b", k, T0 + 1, 11, task_rank=0, task_rank_from="RANK", world_size=3)
    _proc(tmp_path, "c", k, T0 + 2, 12, task_rank=0, task_rank_from="SLURM_PROCID")
    _proc(tmp_path, "d", k, T0 + 3, 13, parent_pid=11)  # a data-loader child
    _proc(tmp_path, "e", k, T0 + 100, 14, task_rank=0, task_rank_from="RANK")  # later run
    _proc(tmp_path, "f", "process:h:1:2", T0 + 1, 15)  # a job of its own
    jobs, bad = J.find([tmp_path])
    assert bad == []
    got = [(sorted(Path(f).stem for f in j.files), dict(zip((Path(f).stem for f in j.files),
                                                             j.ranks))) for j in jobs]
    assert got == [(["a", "b", "c", "d"], {"a": 1, "b": 0, "c": 3, "d": 4}),
                   (["f"], {"f": None}), (["e"], {"e": None})]
    log = iochar.open_job(jobs[0])
    assert log.job["nprocs"] == 5 and log.job["merged_logs"] == 4
    assert "missing_ranks" not in log.job  # rank 2 did no I/O: no log, nothing missing
    df = log.records("POSIX")
    assert dict(zip(df["path"], df["rank"])) == {"/d/a": 1, "/d/b": 0, "/d/c": 3, "/d/d": 4}
    # the same files named as a list read as the one job too
    assert iochar.open([tmp_path / f"{n}.iochar" for n in "abcd"]).job["nprocs"] == 5
    assert iochar.open_job(tmp_path, "9:11").job["merged_logs"] == 4


def test_process_ranks_prefers_the_common_variable():
    js = [{"task_rank": 0, "task_rank_from": "SLURM_PROCID", "start_time": 1},
          {"task_rank": 0, "task_rank_from": "RANK", "world_size": 2, "start_time": 2},
          {"task_rank": 1, "task_rank_from": "RANK", "world_size": 2, "start_time": 3},
          {"start_time": 0, "pid": 5}]
    assert J.process_ranks(js) == [3, 0, 1, 2]


@pytest.mark.parametrize("exe,cmdline,want", [
    ("/usr/bin/python3.11", "python3 train.py --epochs 3", ("train.py", "/usr/bin/python3.11")),
    ("/usr/bin/python3.11", "python3 -u -W ignore /a/b.py x", ("/a/b.py", "/usr/bin/python3.11")),
    ("/usr/bin/python3.11", "python3 -m pkg.mod arg", ("pkg.mod", "/usr/bin/python3.11")),
    ("/usr/bin/python3.11", "python3 -mpkg.mod", ("pkg.mod", "/usr/bin/python3.11")),
    ("/usr/bin/python3.11", "python3 -c print(1)", ("/usr/bin/python3.11", "")),
    ("/usr/bin/python3.11", "python3", ("/usr/bin/python3.11", "")),
    ("/usr/bin/perl", "perl -w run.pl", ("run.pl", "/usr/bin/perl")),
    ("/home/u/sim", "/home/u/sim -n 4 in.dat", ("/home/u/sim", "")),
])
def test_program_derived_for_older_logs(exe, cmdline, want):
    assert P.program_of({"exe": exe, "cmdline": cmdline}) == want
    assert P.program_of({"exe": exe, "cmdline": cmdline, "program": "x.py",
                         "interpreter": exe}) == ("x.py", exe)
