"""Child processes (issue 38): fork children of a parent that recorded files keep every
record of their own; a process that ends with _exit outside a signal handler leaves its
log in the log directory before its parent can see it gone; multiprocessing and
concurrent.futures workers, whatever their start method, keep every file."""

import os
import re
import subprocess
import sys

import iochar
from iochar import live, livedir
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


def test_exit_in_a_handler_only_marks_the_live_file(tmp_path):
    p, kids = children_run(tmp_path, 0, end="handler", n=2, nfiles=50)
    assert p.stdout.count(b" logs 0\n") == 2, p.stdout
    lives = livedir.files_for(tmp_path)
    assert len(lives) == 2
    for lv in lives:
        h = live.header_of(lv)
        assert h["pid"] in kids and h["state"] == 1 and h["status"] == 0
    # no epilogue: the next reader makes them logs where they belong, saying so
    r = report(tmp_path)
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stderr.splitlines() if ln.startswith("iochar:")]
    assert len(said) == 2 and all("ended (_exit)" in ln for ln in said), said
    assert livedir.files_for(tmp_path) == [] and not lives[0].parent.exists()
    logs = by_pid(tmp_path)
    for c, pid in enumerate(kids):
        assert logs[pid].name.endswith(f".pid{pid}.recovered.iochar")
        assert files_of(iochar.open(str(logs[pid])), str(c)) == expect(50)
    # read again: nothing more to make, nothing said
    r = report(tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr


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
    if kind == "with":
        # The pool's __exit__ sends SIGTERM to workers still running; a worker that had
        # already taken its end sentinel wrote its log itself (a race of the pool's,
        # not the tool's). Killed workers' live files: the next reader makes them logs,
        # one line each.
        r = report(tmp_path)
        said = [ln for ln in r.stderr.splitlines() if ln]
        assert r.returncode == 0 and all("ended (killed)" in ln for ln in said), r.stderr
    seen = {}
    workers = 0
    for lg in logs_in(tmp_path):
        df = iochar.open(str(lg)).records("POSIX")
        assert not (df["path"] == "<AGGREGATE>").any()
        mine = df[df["path"].str.match(r".*/out/f_\d+\.dat$")]
        workers += len(mine) > 0
        for _, r in mine.iterrows():
            i = int(re.search(r"f_(\d+)\.dat$", r["path"]).group(1))
            assert i not in seen, f"f_{i}.dat in two logs"
            seen[i] = (int(r["POSIX_OPENS"]), int(r["POSIX_WRITES"]),
                       int(r["POSIX_BYTES_WRITTEN"]))
    # every task's file, in the log of the worker that wrote it, exact
    assert seen == {i: (1, 1, i + 1) for i in range(200)}
    assert workers == int(p.stdout.split()[-1])
    assert livedir.files_for(tmp_path) == []


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
    """`with Pool() as pool` ends its workers with SIGTERM: no log of their own, but
    their live files, made logs in the directory by the next reader."""
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
