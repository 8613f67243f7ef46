"""Child processes (issue 38): fork children of a parent that recorded files keep every
record of their own; a process that ends with _exit outside a signal handler leaves its
log in the log directory before its parent can see it gone; multiprocessing and
concurrent.futures workers, whatever their start method, keep every file."""

import os
import re
import subprocess
import sys

import pandas as pd
import pytest

import iochar
from iochar import live, livedir
from iochar.flags import PARTIAL
from tool import ROOT, logs_in, run, workload

W = workload("fork_workload")
REPORTS = str(ROOT / "reports")  # this checkout's readers, in a process of their own


def report(d):
    """iochar-report DIR as a user runs it (a process of its own)."""
    return subprocess.run([sys.executable, "-m", "iochar.cli.report", str(d)],
                          capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=REPORTS))


def by_pid(d):
    """{pid: log} of the logs in d (the pid is the last number of the name)."""
    out = {}
    for lg in logs_in(d):
        pid = int(re.search(r"_(\d+)(?:\.pid\d+)?(?:\.recovered)?\.iochar$", lg.name).group(1))
        out[pid] = lg
    return out


def files_of(log, tag):
    """{k: (opens, writes, bytes)} of the files c<tag>_<k>.dat in a log's POSIX records."""
    df = log.records("POSIX")
    rows = df[df["path"].str.contains(f"/c{tag}_", regex=False)]
    out = {}
    for _, r in rows.iterrows():
        k = int(re.search(r"_(\d+)\.dat$", r["path"]).group(1))
        out[k] = (int(r["POSIX_OPENS"]), int(r["POSIX_WRITES"]), int(r["POSIX_BYTES_WRITTEN"]))
    return out


def expect(n):
    """What fork_workload.c's files(tag, n) leaves: one open, one write of 1 + k % 7."""
    return {k: (1, 1, 1 + k % 7) for k in range(n)}


def assert_exact(log, tag, n):
    assert files_of(log, tag) == expect(n)
    df = log.records("POSIX")
    assert not (df["path"] == "<AGGREGATE>").any()
    assert not log.job["partial"], log.job["partial"]


def children_run(tmp_path, nthreads, end="exit", n=4, nfiles=2000):
    p = run([W, "children", str(tmp_path), str(n), str(nfiles), str(nthreads), end], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr == b""  # no warning: nothing folded, the live files grew
    kids = [int(x) for x in re.findall(rb"child (\d+) logs", p.stdout)]
    assert len(kids) == n
    return p, kids


def test_fork_children_keep_every_record(tmp_path):
    p, kids = children_run(tmp_path, 0)
    logs = by_pid(tmp_path)
    assert len(logs) == 5
    for c, pid in enumerate(kids):
        log = iochar.open(str(logs[pid]))
        assert_exact(log, str(c), 2000)
        df = log.records("POSIX")
        assert len(df) == 2000  # its own files only: not the parent's, not a sibling's
    parent = iochar.open(str(logs[min(set(logs) - set(kids))]))
    assert_exact(parent, "p", 5)
    assert len(parent.records("POSIX")) == 5


def test_fork_children_of_a_threaded_parent(tmp_path):
    p, kids = children_run(tmp_path, 2)
    logs = by_pid(tmp_path)
    for c, pid in enumerate(kids):
        log = iochar.open(str(logs[pid]))
        assert_exact(log, str(c), 2000)
        assert len(log.records("POSIX")) == 2000
    parent = iochar.open(str(logs[min(set(logs) - set(kids))]))
    assert_exact(parent, "p", 5)
    assert_exact(parent, "t0", 20)
    assert_exact(parent, "t1", 20)
    df = parent.records("POSIX")
    for t in (0, 1):
        (row,) = df[df["path"].str.endswith(f"/t{t}.dat")].itertuples()
        assert (row.POSIX_WRITES, row.POSIX_BYTES_WRITTEN) == (10, 80)
    assert len(df) == 5 + 2 * 21


def test_fork_children_while_the_parent_makes_files(tmp_path):
    """Two threads of the parent make their opened files' first writes while it forks
    (12 rounds of 2 x 100): the parent's stores into its live file after a fork (an entry
    made full, a first state) reach the child's copy of it, and pointed at memory the
    child uses again (read back as a record of another name in a child's log, seen in
    CI)."""
    p = run([W, "busy", str(tmp_path), "12", "50"], tmp_path)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    kids = [int(x) for x in re.findall(rb"child (\d+) logs", p.stdout)]
    assert len(kids) == 12
    logs = by_pid(tmp_path)
    for c, pid in enumerate(kids):
        log = iochar.open(str(logs[pid]))
        assert_exact(log, str(c), 50)
        assert len(log.records("POSIX")) == 50  # nothing of the parent's threads
    parent = iochar.open(str(logs[min(set(logs) - set(kids))]))
    assert_exact(parent, "b0", 1200)
    assert_exact(parent, "b1", 1200)


def test_fork_child_of_a_fork_child(tmp_path):
    p = run([W, "grandchild", str(tmp_path), "2000"], tmp_path)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    logs = {lg.name: iochar.open(str(lg)) for lg in logs_in(tmp_path)}
    assert len(logs) == 3
    tags = {}
    for log in logs.values():
        df = log.records("POSIX")
        (tag,) = {re.search(r"/c([a-z0-9]+)_", x).group(1) for x in df["path"]}
        tags[tag] = log
    assert set(tags) == {"p", "g1", "g2"}
    assert_exact(tags["p"], "p", 5)
    assert_exact(tags["g1"], "g1", 2000)
    assert_exact(tags["g2"], "g2", 2000)
    assert len(tags["g2"].records("POSIX")) == 2000


def test_vfork_then_exec(tmp_path):
    p = run([W, "vfork-exec", str(tmp_path), "2000"], tmp_path)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    logs = [iochar.open(str(lg)) for lg in logs_in(tmp_path)]
    assert len(logs) == 2
    (parent,) = [lg for lg in logs if files_of(lg, "p")]
    (child,) = [lg for lg in logs if files_of(lg, "ve")]
    assert_exact(parent, "p", 5)
    assert len(parent.records("POSIX")) == 5
    assert_exact(child, "ve", 2000)
    assert len(child.records("POSIX")) == 2000


def test_exit_outside_a_handler_leaves_the_log_before_the_parent_sees_it(tmp_path):
    p, kids = children_run(tmp_path, 0, end="_exit", nfiles=50)
    # the parent listed the log directory right after each waitpid
    assert p.stdout.count(b" logs 1\n") == 4, p.stdout
    logs = by_pid(tmp_path)
    for c, pid in enumerate(kids):
        assert_exact(iochar.open(str(logs[pid])), str(c), 50)
    assert livedir.files_for(tmp_path) == []


def assert_recovered(log, tag, n, ended):
    """A log its parent made from a child's live file: every file exact, as assert_exact,
    and the log says what it is (recovered, how the child ended)."""
    assert files_of(log, tag) == expect(n)
    df = log.records("POSIX")
    assert not (df["path"] == "<AGGREGATE>").any()
    assert log.job["partial"] == PARTIAL["RECOVERED"], log.job["partial"]
    assert log.job["recovered"] == 1 and log.job["ended_by"] == ended


def assert_settled(d):
    """No live file left, and nothing for the next reader to make or say."""
    assert livedir.files_for(d) == []
    r = report(d)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_exit_in_a_handler_child_made_its_log_at_the_reap(tmp_path):
    """_exit in a handler only marks the live file (async-signal-safe); the tooled parent
    makes it the child's log when waitpid reaps it, before waitpid returns."""
    p, kids = children_run(tmp_path, 0, end="handler", n=2, nfiles=50)
    assert p.stdout.count(b" logs 1\n") == 2, p.stdout  # listed right after each waitpid
    logs = by_pid(tmp_path)
    for c, pid in enumerate(kids):
        assert logs[pid].name.endswith(f".pid{pid}.recovered.iochar")  # settle's name
        log = iochar.open(str(logs[pid]))
        assert_recovered(log, str(c), 50, "_exit")
        assert log.job["exit_status"] == 0 and log.job["pid"] == pid
    assert_settled(tmp_path)


def test_killed_children_made_their_logs_at_the_reap(tmp_path):
    p, kids = children_run(tmp_path, 0, end="kill", n=2, nfiles=2000)
    assert p.stdout.count(b" logs 1\n") == 2, p.stdout
    logs = by_pid(tmp_path)
    for c, pid in enumerate(kids):
        log = iochar.open(str(logs[pid]))
        assert_recovered(log, str(c), 2000, "killed")
        assert len(log.records("POSIX")) == 2000
    assert_settled(tmp_path)


def test_reaped_in_a_sigchld_handler_made_at_the_parent_end(tmp_path):
    """A reap inside a signal handler only notes the child (no log made there), and one
    the kernel makes (SIGCHLD ignored) is not seen: the parent makes the logs at its own
    end, before its own log."""
    for how, end in (("sigchld", "handler"), ("sigchld", "kill"), ("ignchld", "kill")):
        d = tmp_path / f"{how}-{end}"
        d.mkdir()
        p, kids = children_run(d, 0, end=f"{how}-{end}", n=2, nfiles=50)
        assert p.stdout.count(b" logs 0\n") == 2, p.stdout  # after the handler's reaps
        logs = by_pid(d)
        assert len(logs) == 3
        for c, pid in enumerate(kids):
            assert_recovered(iochar.open(str(logs[pid])), str(c), 50,
                             "_exit" if end == "handler" else "killed")
        assert_settled(d)


def test_large_killed_child_made_at_the_parent_end(tmp_path):
    """A child with more than 4 MiB of records (5,000 files) is not made a log inside the
    waitpid that reaps it (a reap stays short): the parent makes it at its own end."""
    p, kids = children_run(tmp_path, 0, end="kill", n=1, nfiles=5000)
    assert p.stdout.count(b" logs 0\n") == 1, p.stdout
    (pid,) = kids
    log = iochar.open(str(by_pid(tmp_path)[pid]))
    assert_recovered(log, "0", 5000, "killed")
    assert_settled(tmp_path)


def test_killed_parent_leaves_its_children_to_the_reader(tmp_path):
    """A parent that saw its children end without reaping them (waitid WNOWAIT: the
    reap is not its) and was killed: the live files stay, the next reader makes them
    logs where they belong, saying so (the Python path, as without a tooled parent)."""
    p = run([W, "orphan", str(tmp_path), "2", "50"], tmp_path)
    assert p.returncode == -9 and p.stderr == b"", p.stderr
    kids = [int(x) for x in re.findall(rb"child (\d+) logs 0", p.stdout)]
    assert len(kids) == 2
    lives = livedir.files_for(tmp_path)
    states = sorted(live.header_of(lv)["state"] for lv in lives)
    assert states == [0, 1, 1]  # the parent killed, its children _exit in a handler
    r = report(tmp_path)
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stderr.splitlines() if ln.startswith("iochar:")]
    assert sorted(ln.split("(")[1].split(")")[0] for ln in said) == ["_exit", "_exit", "killed"]
    logs = by_pid(tmp_path)
    for c, pid in enumerate(kids):
        assert_recovered(iochar.open(str(logs[pid])), str(c), 50, "_exit")
    assert_settled(tmp_path)


def test_untooled_parent_leaves_the_live_file_to_the_reader(tmp_path):
    """The process's parent (this test) is not tooled: nobody reaps it but the reader."""
    p = run([W, "write", str(tmp_path), "u", "50", "handler"], tmp_path)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    (lv,) = livedir.files_for(tmp_path)
    assert live.header_of(lv)["state"] == 1
    r = report(tmp_path)
    said = [ln for ln in r.stderr.splitlines() if ln.startswith("iochar:")]
    assert r.returncode == 0 and len(said) == 1 and "ended (_exit)" in said[0], r.stderr
    (log,) = logs_in(tmp_path)
    assert_recovered(iochar.open(str(log)), "u", 50, "_exit")
    assert_settled(tmp_path)


def frames(log):
    return {m: log.records(m).sort_values(["record_id", "path"]).reset_index(drop=True)
            for m in log.modules}


def test_parent_made_log_reads_as_the_reader_made_one(tmp_path):
    """The same live file (copied while the child was stopped), made a log by the parent
    at the reap (C, runtime/reap.c) and by the reader (live.py): the same frames, every
    counter, and the same JOB. Every kind of state: a pending run of repeats, reads,
    entries only stat'ed, an entry made full, STDIO."""
    p = run([W, "mixed", str(tmp_path), "stop"], tmp_path)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    (pid,) = [int(x) for x in re.findall(rb"child (\d+) logs 1", p.stdout)]
    made = iochar.open(str(by_pid(tmp_path)[pid]))
    copy = tmp_path / f"copy_{pid}.live"
    data, _ = live.recovered_log(copy)
    ref = tmp_path / "reference.bin"
    ref.write_bytes(data)
    want = iochar.open(str(ref))
    assert made.modules == want.modules == ["POSIX", "STDIO"]
    got, exp = frames(made), frames(want)
    for m in exp:
        pd.testing.assert_frame_equal(got[m], exp[m])
    assert len(exp["POSIX"]) == 22 and len(exp["STDIO"]) == 1
    (run_dat,) = exp["POSIX"][exp["POSIX"]["path"].str.endswith("/run.dat")].itertuples()
    assert run_dat.POSIX_WRITES == 108  # the pending run of 7 repeats counted
    assert made.job == want.job
    assert_settled(tmp_path)


CONVERT = r"""
import ctypes, sys
f = ctypes.CDLL(None).iochar_reap_convert
f.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
for src, out in zip(sys.argv[1::2], sys.argv[2::2]):
    print(f(src.encode(), out.encode()))
"""


def test_parent_refuses_bad_live_files(tmp_path):
    """The C maker (the same code the reap runs, called by name through its exported
    entry point) takes a live file as untrusted: truncated, a size its header does not
    say, a record of no module, a state pointer out of the file: no log, no crash (the
    reader is left to say what is wrong)."""
    p = run([W, "mixed", str(tmp_path), "stop"], tmp_path)
    assert p.returncode == 0, p.stderr
    (copy,) = tmp_path.glob("copy_*.live")
    good = copy.read_bytes()
    h = live.read_header(good, "x")
    bad = {"truncated": good[:h["arena_off"] + h["arena_used"] // 2],
           "header": good[:20480]}
    b = bytearray(good)
    b[16:24] = (len(good) + 4096).to_bytes(8, "little")  # map_size
    bad["size"] = bytes(b)
    b = bytearray(good)
    at = h["arena_off"] + h["rec_module_off"]
    b[at:at + 2] = (999).to_bytes(2, "little")  # the first record's module
    bad["module"] = bytes(b)
    b = bytearray(good)
    at = h["arena_off"] + h["arena_used"]  # the last name's end, its NUL, its padding
    b[at - 16:at] = b"x" * 16
    bad["name"] = bytes(b)
    args = [str(copy), str(tmp_path / "good.out")]
    for k, data in bad.items():
        (tmp_path / f"{k}.live").write_bytes(data)
        args += [str(tmp_path / f"{k}.live"), str(tmp_path / f"{k}.out")]
        with pytest.raises(iochar.LogError):  # the reader refuses it too
            live.recovered_log(tmp_path / f"{k}.live")
    sub = tmp_path / "sub"
    sub.mkdir()
    r = run([sys.executable, "-c", CONVERT, *args], sub)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert r.stdout.split() == [b"0"] + [b"-1"] * len(bad)
    assert sorted(x.name for x in tmp_path.glob("*.out")) == ["good.out"]
    assert frames(iochar.open(str(tmp_path / "good.out")))["POSIX"].shape[0] == 22


def test_wait_calls_are_the_programs_own(tmp_path):
    """What wait, waitpid, wait3, wait4 and waitid return, set in errno and write in the
    status or siginfo is as without the tool: ECHILD, WNOHANG with none ready, EINTR, a
    stop and a continue (no reap), WNOWAIT then the reap, a status pointer not written."""
    bare = run([W, "waits", str(tmp_path)], tmp_path, preload=False)
    tooled = run([W, "waits", str(tmp_path)], tmp_path)
    assert bare.returncode == tooled.returncode == 0
    assert tooled.stdout == bare.stdout and tooled.stderr == b"", tooled.stderr
    assert b"eintr -1 errno 4\n" in bare.stdout and b"nohang 0 errno 9\n" in bare.stdout
    assert b"nohang bad status 0 errno 9\n" in bare.stdout
    assert_settled(tmp_path)


POOL = r"""
import concurrent.futures, multiprocessing, os, sys

def task(i):
    fd = os.open(os.path.join(sys.argv[3], f"f_{i}.dat"), os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"x" * (i + 1))
    os.close(fd)
    return os.getpid()

if __name__ == "__main__":
    ctx = multiprocessing.get_context(sys.argv[2])
    if sys.argv[1] == "pool":
        pool = ctx.Pool(4)
        pids = pool.map(task, range(200), chunksize=5)
        pool.close()
        pool.join()
    elif sys.argv[1] == "with":  # the pool's __exit__ terminates: SIGTERM to the workers
        with ctx.Pool(4) as pool:
            pids = pool.map(task, range(200), chunksize=5)
    else:
        with concurrent.futures.ProcessPoolExecutor(4, mp_context=ctx) as ex:
            pids = list(ex.map(task, range(200), chunksize=5))
    print(len(set(pids)))
"""


def pool_run(tmp_path, kind, method):
    script = tmp_path / "pool.py"
    script.write_text(POOL)
    out = tmp_path / "out"
    out.mkdir()
    p = run([sys.executable, str(script), kind, method, str(out)], tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr
    assert b"iochar:" not in p.stderr, p.stderr
    # the pool's parent reaped its workers itself: a killed worker's log is made, none is
    # left for a reader but one killed in its own end (while writing its log: the reader
    # tells by the logs' identities whether it is there), which terminate may race with
    r = report(tmp_path)
    assert r.returncode == 0, r.stderr
    assert livedir.files_for(tmp_path) == []
    seen = {}
    workers = recovered = 0
    for lg in logs_in(tmp_path):
        log = iochar.open(str(lg))
        df = log.records("POSIX")
        assert not (df["path"] == "<AGGREGATE>").any()
        mine = df[df["path"].str.match(r".*/out/f_\d+\.dat$")]
        workers += len(mine) > 0
        if log.job.get("recovered"):
            # a worker killed by the pool's terminate (with: SIGTERM), its log made by
            # the pool's parent when it reaped it; none in the other ways to end
            assert kind == "with" and log.job["ended_by"] == "killed", (lg.name, log.job)
            assert lg.name.endswith(".recovered.iochar")
            recovered += 1
        for _, r in mine.iterrows():
            i = int(re.search(r"f_(\d+)\.dat$", r["path"]).group(1))
            assert i not in seen, f"f_{i}.dat in two logs"
            seen[i] = (int(r["POSIX_OPENS"]), int(r["POSIX_WRITES"]),
                       int(r["POSIX_BYTES_WRITTEN"]))
    # every task's file, in the log of the worker that wrote it, exact
    assert seen == {i: (1, 1, i + 1) for i in range(200)}
    assert workers == int(p.stdout.split()[-1])
    # (a worker the pool's terminate raced with may have ended by itself: its own log,
    # not a recovered one; which of the two is a race, that each has one log is not)
    return recovered


def test_multiprocessing_pool_fork(tmp_path):
    pool_run(tmp_path, "pool", "fork")


def test_multiprocessing_pool_forkserver(tmp_path):
    pool_run(tmp_path, "pool", "forkserver")


def test_multiprocessing_pool_spawn(tmp_path):
    pool_run(tmp_path, "pool", "spawn")


def test_process_pool_executor_fork(tmp_path):
    pool_run(tmp_path, "futures", "fork")


def test_process_pool_executor_spawn(tmp_path):
    pool_run(tmp_path, "futures", "spawn")


def test_multiprocessing_pool_terminated_workers(tmp_path):
    """`with Pool() as pool` ends its workers with SIGTERM (a worker may have ended by
    itself first): a killed worker writes no log of its own, and the pool's parent, which
    reaps it, makes its live file its log; no reader needed, nothing left."""
    pool_run(tmp_path, "with", "fork")


def test_the_program_sees_its_own_handlers(tmp_path):
    """Handlers run through the tool's trampoline (it counts them for _exit), but what the
    program reads back and receives is as without the tool: sigaction's old action and
    flags, siginfo, signal/sigset's previous handler, SIG_IGN, SIG_HOLD, EINVAL."""
    bare = run([W, "signals", str(tmp_path)], tmp_path, preload=False)
    tooled = run([W, "signals", str(tmp_path)], tmp_path)
    assert bare.returncode == tooled.returncode == 0
    assert tooled.stdout == bare.stdout and tooled.stderr == b""
    assert b"info got 10 code -6\n" in bare.stdout and b"released got 12\n" in bare.stdout
