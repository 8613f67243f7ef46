"""Attaching to every job of a facility (docs/deploying.md): settings in layers (environment,
IOCHAR_CONFIG, site file, build default), the dated log tree under IOCHAR_LOGROOT, live files
in a node-local live directory, the log directory's operations per job, and the epilogue that
turns the live files of killed processes into logs in the tree."""

import datetime
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import iochar
from iochar import livedir, logtree
from iochar.flags import PARTIAL
from iochar.live import header_of
from tool import BUILD, LIB, mpiexec, one, workload

SITE_LIB = BUILD / "tests" / "libiochar_sitetest.so"
SITE_DIR = BUILD / "tests" / "site"  # its site file and build-default root (tests/meson.build)
K = workload("kill_workload")
MPI_END = workload("mpi_end")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to another uid)")


def launch(cmd, cwd, env, lib=LIB, popen=False):
    """cmd under the tool with exactly these IOCHAR_* settings (none from the caller)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    e.update(LD_PRELOAD=str(lib), OMPI_MCA_rmaps_base_oversubscribe="1", **env)
    if popen:
        return subprocess.Popen(cmd, env=e, cwd=str(cwd), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    return subprocess.run(cmd, env=e, cwd=str(cwd), capture_output=True, timeout=300)


def tree(root):
    """Every log under root, as paths relative to it."""
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*.iochar"))


def today(root, t=None):
    return str(logtree.day_dir(root, time.time() if t is None else t).relative_to(root))


def one_log(root):
    (rel,) = tree(root)
    return iochar.open(str(Path(root) / rel)), rel


def iochar_lines(p):
    return [x for x in p.stderr.decode().splitlines() if x.startswith("iochar:")]


@pytest.fixture
def site(tmp_path):
    """The test library's site file and build-default root, fresh; removed after."""
    shutil.rmtree(SITE_DIR, ignore_errors=True)
    (SITE_DIR / "build-root").mkdir(parents=True)
    yield SITE_DIR / "iochar.conf"
    shutil.rmtree(SITE_DIR, ignore_errors=True)


@pytest.mark.skipif(not SITE_LIB.exists(), reason="tests/libiochar_sitetest.so not built")
def test_settings_precedence(tmp_path, site):
    """Environment over IOCHAR_CONFIG over the site file over the build default, for the log
    root; IOCHAR_LOGDIR wins over any root; each layer's other settings still apply."""
    roots = {k: tmp_path / k for k in ("site", "named", "env")}
    for r in roots.values():
        r.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    cmd = [workload("posix_basic"), str(data / "b.dat")]

    def where(env):
        p = launch(cmd, tmp_path, env, lib=SITE_LIB)
        assert p.returncode == 0 and p.stderr == b"", p.stderr
        found = [(name, tree(r)) for name, r in list(roots.items()) +
                 [("build", SITE_DIR / "build-root"), ("dir", tmp_path / "flat")] if tree(r)]
        for r in list(roots.values()) + [SITE_DIR / "build-root"]:
            shutil.rmtree(r)
            r.mkdir()
        (name, (rel,)), = found
        return name, rel

    day = today(tmp_path)
    assert where({})[0] == "build"
    site.write_text(f"# the site's settings\nIOCHAR_LOGROOT={roots['site']}\n"
                    "IOCHAR_MEMORY=1m\n")
    name, rel = where({})
    assert name == "site" and rel.startswith(day + "/") and rel.count("/") == 3
    named = tmp_path / "mine.conf"
    named.write_text(f"IOCHAR_LOGROOT = '{roots['named']}'  # quoted, blanks\n")
    assert where({"IOCHAR_CONFIG": str(named)})[0] == "named"
    assert where({"IOCHAR_CONFIG": str(named), "IOCHAR_LOGROOT": str(roots["env"])})[0] == "env"
    (tmp_path / "flat").mkdir()
    name, rel = where({"IOCHAR_CONFIG": str(named), "IOCHAR_LOGDIR": str(tmp_path / "flat")})
    assert name == "dir" and "/" not in rel
    # the site file's memory bound applied, the named file's wins over it
    p = launch(cmd, tmp_path, {"IOCHAR_LOGFILE": str(tmp_path / "m.iochar")}, lib=SITE_LIB)
    assert p.returncode == 0 and iochar.open(str(tmp_path / "m.iochar")).job["memory_bound"] == 1 << 20
    named.write_text("IOCHAR_MEMORY=64k\n")
    p = launch(cmd, tmp_path, {"IOCHAR_LOGFILE": str(tmp_path / "n.iochar"),
                               "IOCHAR_CONFIG": str(named)}, lib=SITE_LIB)
    assert p.returncode == 0 and iochar.open(str(tmp_path / "n.iochar")).job["memory_bound"] == 65536


@pytest.mark.skipif(not SITE_LIB.exists(), reason="tests/libiochar_sitetest.so not built")
def test_bad_config_lines_and_values(tmp_path, site):
    """An unknown key and a line without '=': one warning, the rest applies; a memory
    bound of "lots": that key ignored (the next layer's applies), with a warning naming it."""
    site.write_text("IOCHAR_MEMORY=2m\n")
    named = tmp_path / "bad.conf"
    named.write_text("IOCHAR_TYPO=1\njust words\nIOCHAR_MEMORY=lots\n"
                     f"IOCHAR_LOGFILE={tmp_path}/job.iochar\n")
    p = launch([workload("posix_basic"), str(tmp_path / "b.dat")], tmp_path,
               {"IOCHAR_CONFIG": str(named)}, lib=SITE_LIB)
    assert p.returncode == 0
    assert iochar_lines(p) == [
        f"iochar: config file {named} line 1: unknown setting IOCHAR_TYPO (and 1 more); "
        "the rest applies",
        f"iochar: IOCHAR_MEMORY=lots (config file {named} line 3) is not valid; ignored"]
    job = iochar.open(str(tmp_path / "job.iochar")).job
    assert job["memory_bound"] == 2 << 20
    # IOCHAR_CONFIG naming no file: said, the rest applies
    p = launch([workload("posix_basic"), str(tmp_path / "c.dat")], tmp_path,
               {"IOCHAR_CONFIG": str(tmp_path / "none.conf"),
                "IOCHAR_LOGFILE": str(tmp_path / "c.iochar")}, lib=SITE_LIB)
    assert iochar_lines(p) == [f"iochar: config file {tmp_path}/none.conf: No such file or "
                               "directory; the rest applies"]
    assert (tmp_path / "c.iochar").exists()


def midnight_tz(seconds_before):
    """A POSIX TZ in which it is now `seconds_before` seconds before midnight."""
    now = time.time()
    off = int((now % 86400) - (86400 - seconds_before)) % 86400  # local = UTC - off
    return f"XXX{off // 3600}:{off // 60 % 60:02d}:{off % 60:02d}", off


def test_job_across_midnight_lands_under_its_start_day(tmp_path):
    """A process that starts 2 s before midnight (local time, TZ) and ends 2 s after it:
    its log is in ROOT/YYYY/M/D/ of its start, unpadded."""
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o1777)
    tz, off = midnight_tz(2.0)
    code = ("import time, sys; open(sys.argv[1], 'w').write('x' * 10); time.sleep(4); "
            "open(sys.argv[1], 'a').write('y' * 5)")
    p = launch([sys.executable, "-c", code, str(tmp_path / "m.dat")], tmp_path,
               {"IOCHAR_LOGROOT": str(root), "TZ": tz})
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    log, rel = one_log(root)
    zone = datetime.timezone(datetime.timedelta(seconds=-off))
    start = datetime.datetime.fromtimestamp(log.job["start_time"], zone)
    end = datetime.datetime.fromtimestamp(log.job["end_time"], zone)
    assert start.date() != end.date()
    assert rel.split("/")[:3] == [str(start.year), str(start.month), str(start.day)]
    assert rel.split("/")[3].endswith(f"_{start:%Y%m%d-%H%M%S}_{log.job['pid']}.iochar")
    assert int(one(log.records("POSIX"), "/m.dat")["POSIX_BYTES_WRITTEN"]) == 15
    for d in (root / start.strftime("%Y"), root / rel.rsplit("/", 2)[0], root / rel.rsplit("/", 1)[0]):
        assert d.stat().st_mode & 0o7777 == 0o1777  # the root's mode, whatever the umask


IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_ISDIR = 0x40, 0x80, 0x100, 0x200, 0x40000000
EVENTS = {IN_MOVED_FROM: "rename", IN_MOVED_TO: "rename", IN_CREATE: "create",
          IN_DELETE: "unlink"}


def ops_in(d, run):
    """run(); the names created, renamed or removed directly in d meanwhile (inotify: every
    operation shows, a temporary made and renamed away too), as (operation, name); a
    rename within d counts once."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    assert fd >= 0 and libc.inotify_add_watch(fd, str(d).encode(), sum(EVENTS)) >= 0
    try:
        run()
        data = b""
        while True:
            try:
                data += os.read(fd, 1 << 16)
            except BlockingIOError:
                break
    finally:
        os.close(fd)
    ops, at, cookies = [], 0, set()
    while at < len(data):
        _, mask, cookie, n = struct.unpack_from("iIII", data, at)
        name = data[at + 16:at + 16 + n].rstrip(b"\0").decode()
        at += 16 + n
        kind = EVENTS[mask & ~IN_ISDIR] + ("dir" if mask & IN_ISDIR else "")
        if mask & (IN_MOVED_FROM | IN_MOVED_TO):
            if cookie in cookies:
                continue
            cookies.add(cookie)
        ops.append((kind.replace("createdir", "mkdir").replace("unlinkdir", "rmdir"), name))
    return ops


@pytest.mark.parametrize("collective", ["0", "1"])
def test_log_directory_operations_constant_at_64_ranks(tmp_path, collective):
    """64 ranks each write a file: in the log's (day) directory the job makes its log (an
    unnamed O_TMPFILE file linked at its name: one creation; with MPI-IO, a private
    directory, the rename out of it, its removal), nothing per rank: the live files are
    node-local.  At most 4 (docs/security.md, what each path costs)."""
    root, data, live = tmp_path / "root", tmp_path / "data", tmp_path / "live"
    for d in (root, data):
        d.mkdir()
    root.chmod(0o1777)
    day = logtree.make_day(root, time.time())  # iochar-mk-logdirs, or an earlier job, made it
    env = {"IOCHAR_LOGROOT": str(root), "IOCHAR_LIVEDIR": str(live),
           "IOCHAR_COLLECTIVE_WRITE": collective}
    procs = []
    ops = ops_in(day, lambda: procs.append(
        launch(mpiexec(64) + [MPI_END, "end", str(data), "3"], tmp_path, env)))
    assert procs[0].returncode == 0, procs[0].stderr.decode(errors="replace")[-2000:]
    log, rel = one_log(root)
    assert log.job["nprocs"] == 64 and len(log.records("POSIX")) == 64
    mpi_counts(log, 3, 64)
    kinds = [k for k, _ in ops]
    assert kinds == (["create"] if collective == "0" else ["mkdir", "rename", "rmdir"]), ops
    assert ops[0 if collective == "0" else 1][1] == Path(rel).name
    assert len(ops) <= 4
    assert [p for p in live.rglob("*") if p.is_file()] == []  # every live file went


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_fresh_tree_made_once_by_rank_0(tmp_path):
    """An empty log root: the year, month and day are made once, by one process (rank 0),
    with the root's mode; no rank creates anything else in the tree but the log."""
    root, data, live = tmp_path / "root", tmp_path / "data", tmp_path / "live"
    for d in (root, data):
        d.mkdir()
    root.chmod(0o1777)
    out = tmp_path / "trace"
    calls = "mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,rmdir,open,openat,creat"
    p = launch(["strace", "-f", "-qq", "-o", str(out), "-e", "trace=" + calls, "-e",
                "signal=none"] + mpiexec(4) + [MPI_END, "end", str(data), "3"], tmp_path,
               {"IOCHAR_LOGROOT": str(root), "IOCHAR_LIVEDIR": str(live)})
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    made = [ln for ln in out.read_text(errors="replace").splitlines()
            if re.search(r'\bmkdirat\(\d+, "\d+", ', ln) and ln.endswith("= 0")]
    assert len(made) == 3 and len({ln.split()[0] for ln in made}) == 1, made
    log, rel = one_log(root)
    assert log.job["nprocs"] == 4
    for k in range(1, 4):
        assert (root / "/".join(rel.split("/")[:k])).stat().st_mode & 0o7777 == 0o1777


def mpi_counts(log, n, nprocs):
    df = log.records("POSIX")
    for r in range(nprocs):
        row = one(df, f"/r{r}.dat")
        assert (row["POSIX_WRITES"], row["POSIX_BYTES_WRITTEN"]) == (n + r, 100 * (n + r))


def wait_gone(files):
    """Until the processes of these live files are gone (the batch system's kill is over
    before its epilogue runs)."""
    for _ in range(200):
        if not any(livedir.alive(header_of(f)) for f in files):
            return
        time.sleep(0.05)
    raise AssertionError("processes still running")


def test_epilogue_recovers_killed_ranks_exactly(tmp_path):
    """4 ranks SIGKILLed mid-job: their live files are in the live directory, none in the
    log tree; the epilogue command turns them into logs in the tree, exact, and removes
    them. A second job still running is left alone."""
    root, live, data = tmp_path / "root", tmp_path / "live", tmp_path / "data"
    for d in (root, data):
        d.mkdir()
    env = {"IOCHAR_LOGROOT": str(root), "IOCHAR_LIVEDIR": str(live), "SLURM_JOB_ID": "4242"}
    n = 20
    p = launch(mpiexec(4) + [MPI_END, "ready", str(data), str(n)], tmp_path, env, popen=True)
    for _ in range(4):
        assert p.stdout.readline().startswith(b"ready"), p.stderr.read()
    other = launch([K, str(data), "5", "ready"], tmp_path, dict(env, SLURM_JOB_ID="77"),
                   popen=True)
    try:
        epilogue_around(p, other, root, live, n, tmp_path)
    finally:
        for q in (p, other):
            if q.poll() is None:
                os.killpg(q.pid, signal.SIGKILL)
                q.wait()


def epilogue_around(p, other, root, live, n, tmp_path):
    """test_epilogue_recovers_killed_ranks_exactly, once both jobs run."""
    assert other.stdout.readline().startswith(b"ready")
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)
    assert tree(root) == []
    udir = live / f"iochar-{os.getuid()}"
    assert udir.stat().st_mode & 0o777 == 0o700 and live.stat().st_mode & 0o777 == 0o700
    lives = list(udir.rglob(".*.live"))
    assert len(lives) == 5
    wait_gone([f for f in lives if header_of(f)["jobid"] == "4242"])
    r = subprocess.run([sys.executable, "-m", "iochar.cli.parser", "--recover", "--livedir",
                        str(live), "--into", str(root)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    written = r.stdout.splitlines()
    assert len(written) == 4 and all(".recovered.iochar" in w for w in written)
    day = root / today(root, iochar.open(written[0]).job["start_time"])
    assert sorted(str(day / Path(w).name) for w in written) == sorted(written)
    log = iochar.open(str(day))
    mpi_counts(log, n, 4)
    assert log.job["nprocs"] == 4 and "missing_ranks" not in log.job
    assert log.job["partial"] & PARTIAL["RECOVERED"]
    rep = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(day), "--json"],
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    import json
    posix = json.loads(rep.stdout)["modules"]["POSIX"]
    assert posix["bytes_written"] == sum(100 * (n + r) for r in range(4))
    # the site's nightly ingest of the whole tree: every rank's bytes (POSIX, and the
    # 8 bytes of each rank's "ready N" line through STDIO), whether the store keeps the
    # per-rank logs as one job or as one each
    store = tmp_path / "store"
    db = [sys.executable, "-m", "iochar.db.cli", "--store", str(store)]
    r = subprocess.run(db + ["ingest", str(root)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(db + ["sql", "select min(nprocs) as lo, max(nprocs) as hi, "
                             "sum(bytes_written) as b from jobs", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout) == [
        {"lo": 4, "hi": 4, "b": sum(100 * (n + k) + 8 for k in range(4))}], r.stdout
    # the running process's live file stays; gone once it is killed and swept
    (left,) = udir.rglob(".*.live")
    os.killpg(other.pid, signal.SIGKILL)
    other.wait(timeout=60)
    wait_gone([left])
    r = subprocess.run([sys.executable, "-m", "iochar.cli.parser", "--recover", "--livedir",
                        str(live), "--into", str(root), "--jobid", "77"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1, r.stderr
    assert not left.exists() and list(udir.iterdir()) == []


def test_log_root_missing_counters_kept_for_the_epilogue(tmp_path):
    """The log root does not exist: one warning for the 4-rank job, no log, the
    application unaffected; the epilogue recovers every rank exactly."""
    root, live, data = tmp_path / "missing", tmp_path / "live", tmp_path / "data"
    data.mkdir()
    env = {"IOCHAR_LOGROOT": str(root), "IOCHAR_LIVEDIR": str(live)}
    p = launch(mpiexec(4) + [MPI_END, "end", str(data), "7"], tmp_path, env)
    assert p.returncode == 0
    assert iochar_lines(p) == [
        f"iochar: log root {root}: No such file or directory; the log will not be written "
        "(its counters stay in the live file for the epilogue: iochar-parser --recover)"]
    good = tmp_path / "root"
    good.mkdir()
    lives = list(live.rglob(".*.live"))
    assert len(lives) == 4
    wait_gone(lives)  # mpiexec may return before the last rank is reaped
    r = subprocess.run([sys.executable, "-m", "iochar.cli.parser", "--recover", "--livedir",
                        str(live), "--into", str(good)], capture_output=True, text=True)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 4, r.stderr
    (day,) = {Path(w).parent for w in r.stdout.splitlines()}
    mpi_counts(iochar.open(str(day)), 7, 4)


def kill_counts(log, n):
    r = one(log.records("POSIX"), "/k.dat")
    assert (r["POSIX_WRITES"], r["POSIX_BYTES_WRITTEN"]) == (n, 100 * n)


def small_tmpfs(d, opts):
    d.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(d)],
                      capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")


@pytest.mark.parametrize("fault", ["file", "missing", "foreign", "full", "readonly"])
def test_live_directory_faults(tmp_path, fault):
    """A file where the live directory should be: one warning, counters in memory, the log
    still written. A missing one: made 0700, used. A user directory of another owner, a
    full or read-only file system (root only: a tmpfs mounted for it): as a file."""
    live = tmp_path / "live"
    if fault in ("foreign", "full", "readonly") and os.geteuid() != 0:
        pytest.skip("needs root")
    try:
        live_fault(tmp_path, live, fault)
    finally:
        if fault in ("full", "readonly"):
            subprocess.run(["umount", str(live)], capture_output=True)


def live_fault(tmp_path, live, fault):
    if fault == "full":
        small_tmpfs(live, "size=8k")  # the live file's 16 KiB header does not fit
    elif fault == "readonly":
        small_tmpfs(live, "ro,size=64k")
    elif fault == "file":
        live.write_text("in the way")
    elif fault == "foreign":
        live.mkdir()
        live.chmod(0o1777)
        (live / f"iochar-{os.getuid()}").mkdir(mode=0o700)
        os.chown(live / f"iochar-{os.getuid()}", 65534, 65534)
    logs = tmp_path / "logs"
    logs.mkdir()
    p = launch([K, str(tmp_path), "30", "exit"], tmp_path,
               {"IOCHAR_LOGDIR": str(logs), "IOCHAR_LIVEDIR": str(live)})
    assert p.returncode == 0
    why = {"file": "Not a directory", "foreign": "iochar-<uid> there belongs to another user",
           "full": "No space left on device", "readonly": "Read-only file system"}.get(fault)
    if why:
        assert iochar_lines(p) == [
            f"iochar: live directory {live}: {why}; counters kept in memory only (as "
            "IOCHAR_LIVE=0: a killed process leaves none), the log is still written at the end"]
    else:
        assert p.stderr == b"" and live.stat().st_mode & 0o777 == 0o700
        assert (live / f"iochar-{os.getuid()}").is_dir()
    (lg,) = logs.glob("*.iochar")
    kill_counts(iochar.open(str(lg)), 30)


def test_same_node_reader_finds_live_files_with_the_default(tmp_path):
    """No IOCHAR_LIVEDIR: the live file is in /dev/shm/iochar-<uid>/<key>/, not in the log
    directory, and iochar.open(DIR) and iochar-report DIR find it; gone after a normal end."""
    p = launch([K, str(tmp_path), "40", "ready"], tmp_path, {"IOCHAR_LOGDIR": str(tmp_path)},
               popen=True)
    assert p.stdout.readline().startswith(b"ready")
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)
    (lv,) = livedir.files_for(tmp_path)
    assert lv.parent.parent == Path("/dev/shm") / f"iochar-{os.getuid()}"
    assert lv.parent.name == livedir.key_of(tmp_path)
    assert [q for q in tmp_path.iterdir() if q.name.startswith(".")] == []
    kill_counts(iochar.open(str(tmp_path)), 40)
    rep = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(tmp_path)],
                         capture_output=True, text=True)
    assert rep.returncode == 0 and "recovered" in rep.stdout


def test_day_directory_symlink_refused(tmp_path):
    """A symlink planted where the year should be is never followed: one warning at start,
    nothing made through it; the live file keeps the counters."""
    root, victim, live = tmp_path / "root", tmp_path / "victim", tmp_path / "live"
    root.mkdir()
    victim.mkdir()
    root.chmod(0o1777)
    (root / logtree.day_parts(time.time())[0]).symlink_to(victim)
    p = launch([K, str(tmp_path), "10", "exit"], tmp_path,
               {"IOCHAR_LOGROOT": str(root), "IOCHAR_LIVEDIR": str(live)})
    assert p.returncode == 0
    (line,) = iochar_lines(p)
    assert "a symbolic link (refused)" in line
    assert list(victim.iterdir()) == []
    assert len(list(live.rglob(".*.live"))) == 1


def test_mk_logdirs(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o1777)
    r = subprocess.run([sys.executable, "-m", "iochar.cli.mk_logdirs", str(root), "2024"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == f"{root}/2024: {1 + 12 + 366} directories made\n"
    assert (root / "2024" / "2" / "29").is_dir() and not (root / "2024" / "02").exists()
    assert (root / "2024" / "12" / "31").stat().st_mode & 0o7777 == 0o1777
    r = subprocess.run([sys.executable, "-m", "iochar.cli.mk_logdirs", str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1


def test_epilogue_arguments_and_foreign_user_directory(tmp_path, monkeypatch):
    """--livedir goes with --recover alone; no LOG and no --livedir is a usage error (one
    line, exit 2). A per-user directory of the wrong owner is named and skipped."""
    parser = [sys.executable, "-m", "iochar.cli.parser"]
    for args in ([], ["--livedir", str(tmp_path)], ["--recover", "--livedir", str(tmp_path), "x"]):
        r = subprocess.run(parser + args, capture_output=True, text=True)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, (args, r.stderr)
    # the live directory from IOCHAR_CONFIG when the library is not loaded here
    conf = tmp_path / "c.conf"
    conf.write_text(f"IOCHAR_LIVEDIR = {tmp_path}/elsewhere  # comment\n")
    monkeypatch.delenv("IOCHAR_LIVEDIR", raising=False)
    monkeypatch.setenv("IOCHAR_CONFIG", str(conf))
    assert livedir.live_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv("IOCHAR_LIVEDIR", "/x")
    assert livedir.live_dir() == Path("/x")
    if os.geteuid() != 0:
        return
    planted = tmp_path / "live" / "iochar-1000" / ("0" * 16)
    planted.mkdir(parents=True)
    (planted / ".a.iochar.0123456789abcdef.live").write_bytes(b"IOCHARLV")
    os.chown(planted.parent, 65534, 65534)
    r = subprocess.run(parser + ["--recover", "--livedir", str(tmp_path / "live"), "--into",
                                 str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"iochar-parser: {planted.parent}: not a private directory of uid " \
                       "1000; skipped\n"


@root_only
def test_epilogue_as_root_acts_as_each_user(tmp_path):
    """A process of uid 65534 killed: root's epilogue writes its log as that user (the
    log, 0600, and the day directory it made are 65534's), in a 1777 tree."""
    import tempfile
    base = Path(tempfile.mkdtemp(prefix="iochar-epi-", dir="/tmp"))  # reachable by 65534
    try:
        base.chmod(0o755)
        root, live, data = base / "root", base / "live", base / "data"
        for d in (root, live, data):
            d.mkdir()
            d.chmod(0o1777)
        e = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
        e.update(LD_PRELOAD=str(LIB), IOCHAR_LOGROOT=str(root), IOCHAR_LIVEDIR=str(live),
                 USER="nobody")
        p = subprocess.Popen([K, str(data), "25", "ready"], env=e, cwd=str(data), user=65534,
                             group=65534, extra_groups=[], stdout=subprocess.PIPE,
                             start_new_session=True)
        assert p.stdout.readline().startswith(b"ready")
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
        lives = list(live.rglob(".*.live"))
        assert len(lives) == 1 and lives[0].stat().st_uid == 65534
        wait_gone(lives)
        r = subprocess.run([sys.executable, "-m", "iochar.cli.parser", "--recover",
                            "--livedir", str(live), "--into", str(root)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        (out,) = map(Path, r.stdout.splitlines())
        st = out.stat()
        assert (st.st_uid, st.st_mode & 0o777) == (65534, 0o600)
        assert out.parent.stat().st_uid == 65534  # the day, made on demand as the user
        kill_counts(iochar.open(str(out)), 25)
        assert list(live.rglob(".*.live")) == []
    finally:
        shutil.rmtree(base)
