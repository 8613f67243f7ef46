"""The live view's reader (reports/iochar/liveview.py) on real live files of running
processes: exact numbers, and a hostile live directory (each case skipped with one line
naming the file: no crash, no hang, no symlink followed)."""

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iochar import live, livemonitor, livescan, liveview
from tool import LIB, ROOT, workload

K = workload("kill_workload")
N = 777
PYENV = dict(os.environ, PYTHONPATH=str(ROOT / "reports"))  # this checkout's iochar


def top(livedir, *args, timeout=60):
    return subprocess.run([sys.executable, "-m", "iochar.cli.top", "--livedir", str(livedir),
                           *args], capture_output=True, text=True, timeout=timeout, env=PYENV)


@pytest.fixture
def running(tmp_path):
    """kill_workload DIR 777 ready under the tool, its live directory tmp/live: (live dir,
    its live file, the data dir, the process); killed at the end."""
    data, ld = tmp_path / "data", tmp_path / "live"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.update(IOCHAR_LOGDIR=str(data), IOCHAR_LIVEDIR=str(ld), LD_PRELOAD=str(LIB),
               SLURM_JOB_ID="31337")
    p = subprocess.Popen([K, str(data), str(N), "ready"], env=env, cwd=str(data),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert p.stdout.readline().startswith(b"ready"), p.stderr.read()
        time.sleep(0.5)  # its fflush(stdout) is counted after the line went out
        (lv,) = list(ld.rglob(".*.live"))
        yield ld, lv, data, p
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def rows(sample):
    return {(m, Path(p).name): dict(zip(liveview.INTS, sample.ints[r]))
            for r, (m, p) in enumerate(zip(sample.modules, sample.paths))}


def test_exact_numbers_of_a_running_process(running):
    ld, lv, data, p = running
    sc = livescan.scan(ld)
    assert sc.problems == [] and len(sc.files) == 1
    fd, shown, uid = sc.files[0]
    lf = liveview.LiveFile(fd, shown, uid)
    try:
        s = lf.read()
        r = rows(s)
        k = r[("POSIX", "k.dat")]
        assert (k["bytes_written"], k["writes"]) == (100 * N, N)
        assert (k["bytes_read"], k["reads"]) == (50 * (N // 2), N // 2)
        assert k["opens"] == 1
        t = r[("STDIO", "k.txt")]
        assert (t["bytes_written"], t["writes"], t["opens"]) == (10 * N, N, 1)
        assert s.header["jobid"] == "31337" and s.header["pid"] == p.pid
        # a second read gives the same, from the walk already made
        s2 = lf.read()
        assert (s2.ints == s.ints).all() and len(s2.paths) == len(s.paths)
    finally:
        lf.close()
    out = top(ld, "--once", "--json")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    (doc,) = [json.loads(x) for x in out.stdout.splitlines()]
    (j,) = doc["jobs"]
    assert (j["job"], j["program"], j["processes"], j["state"]) == \
        ("31337", "kill_workload", 1, "running")
    # the job's totals: the modules whose calls reach the system (POSIX and STDIO),
    # the "ready" line on stdout included
    assert j["bytes_written"] == 100 * N + 10 * N + len("ready\n")
    assert j["bytes_read"] == 50 * (N // 2) and j["writes"] == 2 * N + 1
    meta = ("opens", "stats", "seeks", "syncs")  # each kind's total and rate, and their sums
    assert j["meta_ops"] == sum(j[k] for k in meta) and j["opens"] >= 2
    assert j["meta_ops_per_s"] == pytest.approx(sum(j[f"{k}_per_s"] for k in meta))
    assert j["opens_per_s"] > 0
    # the plain text of a pipe: a header line and the job's line
    txt = top(ld, "--once", "--files", "2")
    assert txt.returncode == 0 and "\x1b" not in txt.stdout
    assert "31337" in txt.stdout and "kill_workload" in txt.stdout and "k.dat" in txt.stdout


def test_killed_process_is_shown_as_such(running):
    ld, lv, data, p = running
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    out = top(ld, "--once", "--json")
    (j,) = json.loads(out.stdout)["jobs"]
    assert (j["state"], j["killed"], j["processes"]) == ("killed", 1, 0)
    assert j["bytes_written"] == 100 * N + 10 * N + len("ready\n")


def test_filters_and_bad_arguments(running):
    ld = running[0]
    assert json.loads(top(ld, "--once", "--json", "--job", "1").stdout)["jobs"] == []
    assert len(json.loads(top(ld, "--once", "--json", "--job", "31337").stdout)["jobs"]) == 1
    assert len(json.loads(top(ld, "--once", "--json", "--user", "0").stdout)["jobs"]) == 1
    for bad in (["--interval", "x"], ["--sort", "nope"], ["--user", "no-such-user-x"],
                ["--files", "-1"]):
        r = top(ld, "--once", *bad)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, bad
    r = subprocess.run([sys.executable, "-m", "iochar.cli.top", "--version"],
                       capture_output=True, text=True, env=PYENV)
    assert r.returncode == 0 and r.stdout.startswith("iochar-top ")
    # a --livedir that is not there is a mistake; the default one not made yet, no jobs
    r = top(ld / "nope", "--once")
    assert r.returncode == 2 and r.stdout == "" and "no such directory" in r.stderr
    r = subprocess.run([sys.executable, "-m", "iochar.cli.top", "--once", "--json"],
                       capture_output=True, text=True,
                       env=dict(PYENV, IOCHAR_LIVEDIR=str(ld / "not-made-yet")))
    assert (r.returncode, r.stderr, json.loads(r.stdout)["jobs"]) == (0, "", [])


def skipped(ld, name):
    """iochar-top's run over ld: its JSON and the stderr lines naming `name`, after
    checking there is exactly one of those and nothing else went wrong."""
    out = top(ld, "--once", "--json", timeout=30)
    assert out.returncode == 0, out.stderr
    lines = [x for x in out.stderr.splitlines() if name in x]
    assert len(lines) == 1 and lines[0].startswith("iochar-top: skipped: "), out.stderr
    return json.loads(out.stdout), lines[0]


def good_job(doc):
    (j,) = doc["jobs"]
    assert j["bytes_written"] == 100 * N + 10 * N + len("ready\n")


def test_hostile_symlinked_file(running, tmp_path):
    ld, lv, _, _ = running
    bait = lv.parent / (".x.iochar." + "a" * 16 + ".live")
    bait.symlink_to(lv)  # counted twice if followed
    doc, line = skipped(ld, bait.name)
    assert "symlink" in line
    good_job(doc)


def test_hostile_symlinked_directories(running, tmp_path):
    ld, lv, _, _ = running
    other = tmp_path / "elsewhere"
    shutil.copytree(lv.parent, other / "1234567890abcdef")
    (lv.parent.parent / "fedcba0987654321").symlink_to(other / "1234567890abcdef")
    doc, line = skipped(ld, "fedcba0987654321")
    good_job(doc)
    # the user's directory itself a symlink: nothing under it read, one line
    ld2 = tmp_path / "live2"
    ld2.mkdir(mode=0o700)
    (ld2 / f"iochar-{os.getuid()}").symlink_to(lv.parent.parent)
    doc, line = skipped(ld2, f"iochar-{os.getuid()}")
    assert doc["jobs"] == [] and "symlink" in line


def test_hostile_fifo_does_not_hang(running):
    ld, lv, _, _ = running
    fifo = lv.parent / (".f.iochar." + "b" * 16 + ".live")
    os.mkfifo(fifo, 0o600)
    doc, line = skipped(ld, fifo.name)
    assert "not a regular file" in line
    good_job(doc)


def test_hostile_wrong_owner_and_open_modes(running, tmp_path):
    ld, lv, _, _ = running
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file another owner")
    planted = lv.parent / (".p.iochar." + "c" * 16 + ".live")
    shutil.copyfile(lv, planted)
    os.chown(planted, 4242, 4242)
    doc, line = skipped(ld, planted.name)
    assert "owned by uid 4242" in line
    good_job(doc)
    planted.unlink()
    # a key directory open to others: planted by someone else, skipped whole
    key = lv.parent.parent / "0123456789abcdef"
    key.mkdir(mode=0o777)
    os.chmod(key, 0o777)
    shutil.copyfile(lv, key / lv.name)
    doc, line = skipped(ld, "0123456789abcdef")
    assert "open to others" in line
    good_job(doc)


def copy_as(lv, tag):
    out = lv.parent / (f".{tag}.iochar." + "d" * 16 + ".live")
    shutil.copyfile(lv, out)
    return out


def test_hostile_shrunk_grown_and_garbage_files(running):
    ld, lv, _, _ = running
    shrunk = copy_as(lv, "s")
    os.truncate(shrunk, 20000)
    doc, line = skipped(ld, shrunk.name)
    assert "header says" in line
    good_job(doc)
    shrunk.unlink()
    garbage = copy_as(lv, "g")
    garbage.write_bytes(os.urandom(50000))
    doc, line = skipped(ld, garbage.name)
    good_job(doc)


def test_hostile_million_records_declared(running):
    """A header whose arena claims 10^6 records (1 GB) in a small sparse file: refused by
    the real size, before anything is read."""
    ld, lv, _, _ = running
    big = copy_as(lv, "m")
    data = bytearray(big.read_bytes()[:live.HEADER_SIZE])
    h = live.read_header(bytes(data), "x")
    used = 1_000_000 * 1024
    import struct
    struct.pack_into("<Q", data, 16, h["arena_off"] + used + (1 << 20))  # map size
    struct.pack_into("<Q", data, 128, used + (1 << 20))  # arena size
    struct.pack_into("<Q", data, 136, used)  # arena used
    struct.pack_into("<Q", data, 13256, used + 4096)  # tables low
    with open(big, "r+b") as f:
        f.write(data)
        f.truncate(h["arena_off"] + used + (1 << 20))
    doc, line = skipped(ld, big.name)
    assert "declares" in line
    good_job(doc)


def test_file_changing_under_the_read(running, monkeypatch):
    """A file that shrinks between the header's read and the records' (the reader's own
    pread patched to truncate first): read again, then skipped with one line; one that
    grows: the same; the real one beside it still read."""
    ld, lv, _, _ = running
    victim = copy_as(lv, "v")
    real = liveview.LiveFile._pread_into  # the records' and tables' reads (the header's: _pread)
    calls = {"n": 0}

    def shrinking(self, buf, off):
        if self.name.endswith(victim.name) and off > 0:
            calls["n"] += 1
            os.truncate(victim, os.path.getsize(victim) // 2)
        return real(self, buf, off)

    monkeypatch.setattr(liveview.LiveFile, "_pread_into", shrinking)
    r = livemonitor.Reader(ld)
    procs = r.sample()
    r.close()
    assert calls["n"] >= 1
    bad = [x for x in r.problems if victim.name in x]
    assert len(bad) == 1 and len(procs) == 1
    victim.unlink()
    victim = copy_as(lv, "w")

    def growing(self, buf, off):
        if self.name.endswith(victim.name) and off > 0:
            with open(victim, "r+b") as f:
                f.truncate(os.path.getsize(victim) + 4096)
        return real(self, buf, off)

    monkeypatch.setattr(liveview.LiveFile, "_pread_into", growing)
    r = livemonitor.Reader(ld)
    procs = r.sample()
    r.close()
    assert len([x for x in r.problems if victim.name in x]) == 1 and len(procs) == 1


def exporter(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "iochar.cli.exporter", *args],
                          capture_output=True, text=True, timeout=timeout, env=PYENV)


def test_exporter_textfile_exact_and_bad_arguments(running, tmp_path):
    """--textfile DIR --once: DIR/iochar.prom (no temp file left) with the process's
    exact numbers, parsed by prometheus_client's parser; bad arguments: one line, exit 2."""
    from prometheus_client.parser import text_string_to_metric_families

    ld, _, data, _ = running
    out = tmp_path / "textfile"
    out.mkdir()
    r = exporter("--textfile", str(out), "--once", "--livedir", str(ld), "--files", "1")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert [p.name for p in out.iterdir()] == ["iochar.prom"]
    got = {}
    for fam in text_string_to_metric_families((out / "iochar.prom").read_text()):
        for s in fam.samples:
            lab = s.labels
            if lab.get("job") == "31337":
                assert (lab["user"], lab["program"]) == \
                    (pwd.getpwuid(os.getuid()).pw_name, "kill_workload")
                key = (s.name, lab.get("module"), lab.get("direction") or lab.get("op")
                       or lab.get("kind"), lab.get("path"))
                got[key] = got.get(key, 0) + s.value
    assert got[("iochar_bytes_total", "POSIX", "write", None)] == 100 * N
    assert got[("iochar_bytes_total", "POSIX", "read", None)] == 50 * (N // 2)
    assert got[("iochar_operations_total", "POSIX", "write", None)] == N
    assert got[("iochar_operations_total", "POSIX", "open", None)] == 1
    assert got[("iochar_bytes_total", "STDIO", "write", None)] == 10 * N + len("ready\n")
    assert got[("iochar_processes", None, None, None)] == 1
    assert got[("iochar_file_bytes_total", "POSIX", "write", str(data / "k.dat"))] == 100 * N
    for bad in (["--listen", "nowhere"], ["--listen", "127.0.0.1:99999"], ["--files", "1000"],
                ["--once"], ["--textfile", str(tmp_path / "missing"), "--once"],
                ["--interval", "0"]):
        r = exporter("--livedir", str(ld), *bad)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, bad
    r = exporter("--version")
    assert r.returncode == 0 and r.stdout.startswith("iochar-exporter ")


def test_exporter_keeps_ended_processes_until_the_job_ends(tmp_path):
    """Two processes of one job: the first ends normally (its log written, its live file
    gone) while the second runs: the job's counters keep its bytes and `iochar_processes`
    drops to 1; once the second ends too, the job's series go within 3 collections."""
    from prometheus_client.parser import text_string_to_metric_families

    ld, data = tmp_path / "live", tmp_path / "data"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.update(IOCHAR_LOGDIR=str(data), IOCHAR_LIVEDIR=str(ld), LD_PRELOAD=str(LIB),
               SLURM_JOB_ID="5150")
    code = ("import sys\nwith open(sys.argv[1], 'wb') as f:\n    f.write(b'w' * int(sys.argv[2]))\n"
            "print('ready', flush=True)\nsys.stdin.read()\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(data / f"p{i}.dat"), str(n)],
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=str(data))
             for i, n in ((0, 1000), (1, 3000))]
    exp = subprocess.Popen([sys.executable, "-m", "iochar.cli.exporter", "--listen",
                            "127.0.0.1:0", "--livedir", str(ld), "--files", "4"], env=PYENV,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for p in procs:
            assert p.stdout.readline().startswith(b"ready"), p.stderr.read()
        url = exp.stdout.readline().split("serving ", 1)[1].strip()

        def scrape():
            import urllib.request
            with urllib.request.urlopen(url, timeout=30) as r:
                text = r.read().decode()
            files, nproc = {}, None
            for fam in text_string_to_metric_families(text):
                for s in fam.samples:
                    if s.labels.get("job") != "5150":
                        continue
                    if s.name == "iochar_file_bytes_total" and s.labels["direction"] == "write":
                        files[Path(s.labels["path"]).name] = s.value
                    if s.name == "iochar_processes":
                        nproc = s.value
            return files, nproc

        files, nproc = scrape()
        assert (files.get("p0.dat"), files.get("p1.dat"), nproc) == (1000, 3000, 2)
        procs[0].stdin.close()
        assert procs[0].wait(timeout=60) == 0
        assert not any(ld.rglob(f"*{procs[0].pid}*.live"))  # its log written, its file gone
        files, nproc = scrape()
        assert (files.get("p0.dat"), files.get("p1.dat"), nproc) == (1000, 3000, 1)
        procs[1].stdin.close()
        assert procs[1].wait(timeout=60) == 0
        seen = [scrape() for _ in range(5)]
        assert seen[-1] == ({}, None) and seen[-2] == ({}, None), seen
    finally:
        for p in procs + [exp]:
            if p.poll() is None:
                p.kill()
                p.wait()
