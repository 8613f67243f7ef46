"""Abnormal ends: SIGKILL, SIGTERM, _exit, MPI_Abort, exit without MPI_Finalize, exec.
The counters live in a file-backed mapping (runtime/live.c) that the reader recovers
(reports/iochar/live.py). IOCHAR_SOAK=1 runs the long loops (scripts/soak_kill too)."""

import gzip
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import iochar
from iochar import live, livedir
from iochar.flags import PARTIAL
from iochar.log import OP
from tool import BUILD_OPENMPI, LIB, logs_in, mpiexec, one, run, workload

K = workload("kill_workload")
SOAK = os.environ.get("IOCHAR_SOAK") == "1"


def lives(d):
    """The live files of logs bound for d: in this node's live directory (the default,
    /dev/shm), and any in d itself."""
    return sorted(Path(d).glob(".*.live")) + livedir.files_for(d)


def env_for(d, lib=LIB, extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    e.update(IOCHAR_LOGDIR=str(d), LD_PRELOAD=str(lib), OMPI_MCA_rmaps_base_oversubscribe="1")
    e.update(extra or {})
    return e


def start_ready(cmd, d, lines=1, lib=LIB):
    """Start cmd under the tool; return it once it printed `lines` ready lines."""
    p = subprocess.Popen(cmd, env=env_for(d, lib), cwd=str(d), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    for _ in range(lines):
        assert p.stdout.readline().startswith(b"ready"), p.stderr.read()
    return p


def check_k(log, n, d):
    """kill_workload's known I/O (tests/integration/kill_workload.c)."""
    df = log.records("POSIX")
    r = one(df, "/k.dat")
    assert (r["POSIX_WRITES"], r["POSIX_BYTES_WRITTEN"]) == (n, 100 * n)
    assert (r["POSIX_READS"], r["POSIX_BYTES_READ"]) == (n // 2, 50 * (n // 2))
    assert r["POSIX_SIZE_WRITE_0_100"] == n and r["POSIX_CONSEC_WRITES"] == n - 1
    assert (r["POSIX_ACCESS1_ACCESS"], r["POSIX_ACCESS1_COUNT"]) == (100, n)
    assert r["POSIX_MAX_BYTE_WRITTEN"] == 100 * n - 1
    t = one(log.records("STDIO"), "/k.txt")
    assert (t["STDIO_WRITES"], t["STDIO_BYTES_WRITTEN"]) == (n, 10 * n)


def test_sigkill_leaves_counts_up_to_last_call(tmp_path):
    n = 777
    p = start_ready([K, str(tmp_path), str(n), "ready"], tmp_path)
    os.killpg(p.pid, signal.SIGKILL)
    assert p.wait(timeout=60) == -signal.SIGKILL
    (lv,) = lives(tmp_path)
    assert lv.stat().st_mode & 0o777 == 0o600
    assert logs_in(tmp_path) == []
    log = iochar.open(str(tmp_path))
    check_k(log, n, tmp_path)
    assert log.job["partial"] & PARTIAL["RECOVERED"] and log.job["recovered"] == 1
    assert log.job["ended_by"] == "killed"
    # the process is gone: the read made its live file a log in the directory
    # (livedir.settle), and the live file went
    assert not lv.exists() and lives(tmp_path) == []
    (rec,) = logs_in(tmp_path)
    assert rec.name.endswith(".recovered.iochar") and not rec.name.startswith(".")
    check_k(iochar.open(str(rec)), n, tmp_path)
    # the same through the parser CLI
    out = subprocess.run([sys.executable, "-m", "iochar.cli.parser", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert f"POSIX_WRITES {n} " in out


def test_state_only_for_files_with_data(tmp_path):
    """A name only ever stat'ed, opened or closed is a metadata-only entry (live file
    version 4): the 20 files only opened and stat'ed and the 20 names only stat'ed are
    entries (header, `full`, their module's meta slots, name: no state, no full
    counters); a file with data is a record with its access state, made at its first
    read or write from its entry (which stays, pointing at it); the recovered counters
    stay exact."""
    n = 300
    p = start_ready([K, str(tmp_path), str(n), "opens"], tmp_path)
    os.killpg(p.pid, signal.SIGKILL)
    assert p.wait(timeout=60) == -signal.SIGKILL
    (lv,) = lives(tmp_path)
    h, data = live._read_used(lv)
    assert h["version"] == 4
    log = iochar.open(str(tmp_path))
    check_k(log, n, tmp_path)
    df = log.records("POSIX")
    for i in range(20):
        r = one(df, f"/k.open{i}")
        assert (r["POSIX_OPENS"], r["POSIX_STATS"], r["POSIX_WRITES"], r["POSIX_READS"],
                r["POSIX_ACCESS1_ACCESS"], r["POSIX_MODE"]) == (1, 1, 0, 0, 0, 0o644)
        assert 0 < r["POSIX_F_OPEN_START_TIMESTAMP"] <= r["POSIX_F_CLOSE_END_TIMESTAMP"]
        r = one(df, f"/k.stat{i}")
        assert (r["POSIX_OPENS"], r["POSIX_STATS"], r["POSIX_WRITES"]) == (0, 2, 0)
        assert r["POSIX_F_META_TIME"] > 0 and r["POSIX_MEM_ALIGNMENT"] == 8
        assert r["POSIX_FILE_ALIGNMENT"] > 0
    mods = live.parse_schema(data[h["schema_off"]:h["schema_off"] + h["schema_len"]], "x",
                              1 << 20, h["version"])
    ro = h["rw_off"]
    recs = live._walk(data, h["arena_off"], h["arena_off"] + h["arena_used"], h, mods, ro, "x",
                      False)
    busy = [(m, p) for m, _, p, c, f, st in recs if st is not None]
    assert {p.rsplit("/", 1)[-1] for m, p in busy} == {"k.dat", "k.txt"}
    posix = next(m for m in mods.values() if m.name == "POSIX")
    meta = {posix.schema[i][0] for i in posix.meta}
    assert {"POSIX_OPENS", "POSIX_STATS", "POSIX_MODE", "POSIX_F_META_TIME",
            "POSIX_F_CLOSE_END_TIMESTAMP", "POSIX_LUSTRE_COMPONENTS"} <= meta
    assert not meta & {"POSIX_READS", "POSIX_BYTES_WRITTEN", "POSIX_SIZE_READ_0_100",
                       "POSIX_ACCESS1_ACCESS", "POSIX_F_WRITE_TIME"}

    def entry(m, p):
        return (h["meta_c_off"] + 8 * len(m.meta) + len(p.encode()) + 1 + 7) & ~7

    def record(m, p):
        return (h["rec_size"] + 8 * (m.n_int + m.n_flt) + len(p.encode()) + 1 + 7) & ~7
    entries = [(m, p) for m, _, p, c, f, st in recs if st is None]
    assert len(entries) == 40 and all(m is posix for m, _ in entries)
    # the arena: those entries, the records with data, and k.dat's entry made full
    sizes = sum(entry(m, p) for m, p in entries) + sum(record(m, p) for m, p in busy)
    assert sizes + sum(entry(m, p) for m, p in busy if m is posix) == h["arena_used"]
    per_state = sum(h["tk_below"] + ((m.state_size + 7) & ~7) for m, _ in busy)
    assert h["arena_size"] - h["tables_low"] == per_state


def killed_and_exited(tmp_path, n, mode):
    """kill_workload's `mode` run twice, SIGKILLed in a/ and to its normal exit
    (`mode`_exit) in b/: (the log recovered from a's live file, b's log, a, b)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    p = start_ready([K, str(a), n, mode], a)
    os.killpg(p.pid, signal.SIGKILL)
    assert p.wait(timeout=60) == -signal.SIGKILL
    assert run([K, str(b), n, f"{mode}_exit"], b).returncode == 0
    assert len(lives(a)) == 1 and len(logs_in(b)) == 1
    la, lb = iochar.open(str(a)), iochar.open(str(b))
    assert la.job["ended_by"] == "killed"
    return la, lb, a, b


def test_killed_counters_equal_the_logged_ones(tmp_path):
    """SIGKILL after files only stat'ed, files opened and stat'ed, and files with data:
    every integer counter the live file gives back equals the one a normal exit logs."""
    la, lb, a, b = killed_and_exited(tmp_path, "500", "opens")
    assert len(la.records("POSIX")) == len(lb.records("POSIX")) == 41
    same_counters(la, lb, a, b)


def test_rare_counters_make_entries_full(tmp_path):
    """The counters a metadata-only entry does not carry (seeks, dups, syncs,
    truncates, mmaps, a rename's source: wrappers/posix.c, meta_rare) make it a full
    record at their first call, with everything counted before: exact in the log
    and, after SIGKILL, in the live file."""
    la, lb, a, b = killed_and_exited(tmp_path, "100", "rare")
    same_counters(la, lb, a, b)
    for log, d in ((la, a), (lb, b)):
        df = log.records("POSIX")
        assert len(df) == 41  # k.dat and 40 names
        for i in range(20):
            r = one(df, f"{d}/k.rare{i}")
            assert (r["POSIX_OPENS"], r["POSIX_SEEKS"], r["POSIX_DUPS"], r["POSIX_FSYNCS"],
                    r["POSIX_FDSYNCS"], r["POSIX_TRUNCATES"], r["POSIX_MMAPS"],
                    r["POSIX_RENAME_SOURCES"], r["POSIX_WRITES"], r["POSIX_MODE"],
                    r["POSIX_MEM_ALIGNMENT"]) == (2, 1, 1, 1, 1, 1, 1, 1, 0, 0o644, 8)
            assert r["POSIX_FILE_ALIGNMENT"] > 0 and r["POSIX_FILE_BLKSIZE"] > 0
            assert 0 < r["POSIX_F_OPEN_START_TIMESTAMP"] < r["POSIX_F_CLOSE_END_TIMESTAMP"]
            r = one(df, f"{d}/k.moved{i}")
            assert (r["POSIX_RENAME_TARGETS"], r["POSIX_STATS"], r["POSIX_OPENS"]) == (1, 1, 0)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_older_live_files_still_read(tmp_path, version):
    """Live files of versions 1 (state and top-k tables inside each record), 2
    (tables apart) and 3 (state apart, every name a full record), made by those
    versions' libraries under kill_workload DIR 300 opens
    (IOCHAR_MEMORY=128k) and killed: tests/corpus/live/."""
    src = Path(__file__).resolve().parents[1] / "corpus" / "live" / f"version{version}.live.gz"
    lv = tmp_path / ".x.iochar.0123456789abcdef.live"
    lv.write_bytes(gzip.decompress(src.read_bytes()))
    assert live.header_of(lv)["version"] == version
    log = iochar.open(str(tmp_path))
    assert log.job["recovered"] == 1 and log.job["ended_by"] == "killed"
    check_k(log, 300, tmp_path)
    df = log.records("POSIX")
    assert len(df) == 41
    for i in range(20):
        r = one(df, f"/k.open{i}")
        assert (r["POSIX_OPENS"], r["POSIX_STATS"], r["POSIX_WRITES"]) == (1, 1, 0)
        r = one(df, f"/k.stat{i}")
        assert (r["POSIX_OPENS"], r["POSIX_STATS"], r["POSIX_WRITES"]) == (0, 2, 0)


@pytest.mark.parametrize("end", ["", "_run"])
def test_recovered_counters_equal_the_logged_ones(tmp_path, end):
    """_exit in a signal handler leaves the live file; exit writes the log: every
    integer counter agrees (times differ from run to run). _run: a run of repeated
    writes is still pending when the process ends, so the reader applies it (a repeat
    is consecutive: it adds no stride)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pa = run([K, str(a), "1000", "sig_exit" + end], a)
    pb = run([K, str(b), "1000", "exit" + end], b)
    assert pa.returncode == pb.returncode == 0
    assert len(lives(a)) == 1 and logs_in(a) == []
    assert len(logs_in(b)) == 1 and lives(b) == []
    la, lb = iochar.open(str(a)), iochar.open(str(b))
    assert la.job["ended_by"] == "_exit" and la.job["exit_status"] == 0
    same_counters(la, lb, a, b)


@pytest.mark.parametrize("end", ["", "_run"])
def test_exit_outside_a_handler_writes_the_log(tmp_path, end):
    """_exit called by the program (not a handler) writes the log as exit does, with the
    same counters, and removes the live file."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pa = run([K, str(a), "1000", "_exit" + end], a)
    pb = run([K, str(b), "1000", "exit" + end], b)
    assert pa.returncode == pb.returncode == 0 and pa.stderr == b""
    assert len(logs_in(a)) == 1 and lives(a) == []
    la, lb = iochar.open(str(a)), iochar.open(str(b))
    assert not la.job["partial"] & PARTIAL["RECOVERED"]
    same_counters(la, lb, a, b)


def same_counters(la, lb, a, b):
    """Every integer counter of every record (paths under a and b) and every rank's
    totals agree between logs la and lb (times differ from run to run)."""
    assert set(la.modules) == set(lb.modules)
    for m in lb.modules:
        ints = [c for c, op in lb.schema(m) if "_F_" not in c and op != OP["MAXT_SIZE"]]
        ra = la.records(m).assign(path=lambda d: d["path"].str.replace(str(a), ""))
        rb = lb.records(m).assign(path=lambda d: d["path"].str.replace(str(b), ""))
        ra, rb = ra.set_index("path").sort_index(), rb.set_index("path").sort_index()
        assert list(ra.index) == list(rb.index)
        assert (ra[ints] == rb[ints]).all().all(), m
        assert (la.ranks(m)[["reads", "writes", "bytes_read", "bytes_written"]].values ==
                lb.ranks(m)[["reads", "writes", "bytes_read", "bytes_written"]].values).all()


def _sigterm_runs(tmp_path, runs, sig, seed):
    rng = random.Random(seed)
    stats = {"runs": 0, "bad_status": 0, "stderr": 0, "hangs": 0, "unrecoverable": 0}
    for i in range(runs):
        d = tmp_path / f"r{i}"
        d.mkdir()
        mode = "handler" if sig == signal.SIGTERM and i % 2 else "loop"
        p = start_ready([K, str(d), "10", mode], d)
        time.sleep(rng.uniform(0.0, 0.05))
        os.killpg(p.pid, sig)
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stats["hangs"] += 1
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            continue
        err = p.stderr.read()
        stats["runs"] += 1
        stats["bad_status"] += rc != (3 if mode == "handler" else -sig)
        stats["stderr"] += err != b""
        try:
            log = iochar.open(str(d))
            r = one(log.records("POSIX"), "/k.dat")
            w, by = int(r["POSIX_WRITES"]), int(r["POSIX_BYTES_WRITTEN"])
            # the call in flight when the signal landed may be counted in part
            ok = w >= 10 and 1000 + 4096 * (w - 11) <= by <= 1000 + 4096 * (w - 10) and \
                log.job["partial"] & PARTIAL["RECOVERED"]
            stats["unrecoverable"] += not ok
        except (iochar.LogError, AssertionError):
            stats["unrecoverable"] += 1
        shutil.rmtree(d)
    return stats


@pytest.mark.parametrize("sig,runs", [(signal.SIGTERM, 200 if SOAK else 20),
                                      (signal.SIGKILL, 50 if SOAK else 10)])
def test_killed_during_io(tmp_path, sig, runs):
    s = _sigterm_runs(tmp_path, runs, sig, seed=runs)
    assert s == {"runs": runs, "bad_status": 0, "stderr": 0, "hangs": 0, "unrecoverable": 0}


def test_exec_keeps_both_programs(tmp_path):
    py = f"open({str(tmp_path / 'after.dat')!r}, 'w').write('y' * 321)"
    p = run([K, str(tmp_path), "40", "exec", sys.executable, "-c", py], tmp_path)
    assert p.returncode == 0, p.stderr
    logs = logs_in(tmp_path)
    assert len(logs) == 2 and lives(tmp_path) == []
    before = [x for x in logs if ".exec" in x.name]
    (after,) = [x for x in logs if ".exec" not in x.name]
    (before,) = before
    lb, la = iochar.open(str(before)), iochar.open(str(after))
    check_k(lb, 40, tmp_path)
    assert lb.job["ended_by"] == "exec"
    assert one(la.records("POSIX"), "/after.dat")["POSIX_BYTES_WRITTEN"] == 321
    assert lb.job["jobid"] == la.job["jobid"] and lb.job["pid"] == la.job["pid"]


def test_shell_and_exec_keep_both_programs(tmp_path):
    py = f"open({str(tmp_path / 'p2.dat')!r}, 'w').write('z' * 55)"
    script = f"{K} {tmp_path} 30 exit && exec {sys.executable} -c \"{py}\""
    p = run(["sh", "-c", script], tmp_path)
    assert p.returncode == 0, p.stderr
    logs = logs_in(tmp_path)
    assert len(logs) == 2
    by_exe = {iochar.open(str(x)).job["exe"].rsplit("/", 1)[-1]: x for x in logs}
    check_k(iochar.open(str(by_exe["kill_workload"])), 30, tmp_path)
    py_log = iochar.open(str(next(v for k, v in by_exe.items() if k.startswith("python"))))
    assert one(py_log.records("POSIX"), "/p2.dat")["POSIX_BYTES_WRITTEN"] == 55


def test_failed_exec_keeps_recording(tmp_path):
    p = run([K, str(tmp_path), "20", "execfail"], tmp_path)
    assert p.returncode == 0, p.stderr
    (lg,) = logs_in(tmp_path)
    assert ".exec" not in lg.name and lives(tmp_path) == []
    r = one(iochar.open(str(lg)).records("POSIX"), "/k.dat")
    assert (r["POSIX_WRITES"], r["POSIX_BYTES_WRITTEN"]) == (40, 4000)


def test_system_and_spawn_children_log(tmp_path):
    code = (f"import os, subprocess; os.system('{K} {tmp_path}/s 12 exit');"
            f"subprocess.run(['{K}', '{tmp_path}/p', '14', 'exit'])")
    (tmp_path / "s").mkdir()
    (tmp_path / "p").mkdir()
    p = run([sys.executable, "-c", code], tmp_path)
    assert p.returncode == 0, p.stderr
    kl = [x for x in logs_in(tmp_path) if "kill_workload" in x.name]
    assert len(kl) == 2
    ns = sorted(int(one(iochar.open(str(x)).records("POSIX"), "/k.dat")["POSIX_WRITES"])
                for x in kl)
    assert ns == [12, 14]


def mpi_counts(log, n, nprocs):
    df = log.records("POSIX")
    for r in range(nprocs):
        row = one(df, f"/r{r}.dat")
        assert (row["POSIX_WRITES"], row["POSIX_BYTES_WRITTEN"]) == (n + r, 100 * (n + r))


def test_mpi_abort_rank2(tmp_path):
    n = 50
    p = run(mpiexec(4) + [workload("mpi_end"), "abort", str(tmp_path), str(n)], tmp_path,
            timeout=120)
    assert p.returncode != 0
    logs, lv = logs_in(tmp_path), lives(tmp_path)
    assert [x.name.rsplit(".", 2)[-2] for x in logs] == ["rank2"]
    assert len(lv) == 3
    log = iochar.open(str(tmp_path))
    mpi_counts(log, n, 4)
    assert log.job["nprocs"] == 4 and log.job["partial"] & PARTIAL["RECOVERED"] and "missing_ranks" not in log.job
    two = iochar.open(str(logs[0]))
    assert two.job["ended_by"] == "MPI_Abort" and two.job["abort_code"] == 5
    rep = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "recovered" in rep


def test_missing_rank_is_named(tmp_path):
    n = 10
    p = start_ready(mpiexec(4) + [workload("mpi_end"), "ready", str(tmp_path), str(n)],
                    tmp_path, lines=4)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)
    lv = lives(tmp_path)
    assert len(lv) == 4
    hs = {live.header_of(x)["rank"]: x for x in lv}
    hs[3].unlink()
    log = iochar.open(str(tmp_path))
    assert log.job["missing_ranks"] == "3" and log.job["partial"] & PARTIAL["MISSING_RANKS"]
    rep = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "rank 3" in rep or "ranks 3" in rep


def _busy(ncpu):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(ncpu)]


@pytest.mark.parametrize("flavor", ["mpich", "openmpi"])
def test_exit_without_finalize_loaded(tmp_path, flavor):
    """Every rank exits without MPI_Finalize while each core is busy: the launcher
    kills ranks still writing their logs; the live files keep their counts."""
    if flavor == "openmpi" and shutil.which("mpiexec.openmpi") is None:
        pytest.skip("no Open MPI")
    build = BUILD_OPENMPI if flavor == "openmpi" else None
    lib = (BUILD_OPENMPI / "libiochar.so") if build else LIB
    exe = workload("mpi_end", build) if build else workload("mpi_end")
    runs, n = (20 if SOAK else 3), 25
    hogs = _busy(os.cpu_count() or 2)
    try:
        for i in range(runs):
            d = tmp_path / f"r{i}"
            d.mkdir()
            p = run(mpiexec(4, flavor) + [exe, "exit", str(d), str(n)], d, lib=lib,
                    timeout=180)
            assert p.returncode in (0, 9, 137, 1, 255), p.stderr
            log = iochar.open(str(d))
            mpi_counts(log, n, 4)
            assert log.job["nprocs"] == 4 and "missing_ranks" not in log.job, log.files
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def test_parser_recover_cli_and_bad_live_files(tmp_path):
    p = start_ready([K, str(tmp_path), "33", "ready"], tmp_path)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)
    (lv,) = lives(tmp_path)
    out = tmp_path / "x.iochar"
    r = subprocess.run([sys.executable, "-m", "iochar.cli.parser", "--recover", str(lv),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == str(out)
    check_k(iochar.open(str(out)), 33, tmp_path)
    # a second recovery never replaces a file
    r = subprocess.run([sys.executable, "-m", "iochar.cli.parser", "--recover", str(lv),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    # damaged live files: one line, exit 2, never a crash
    data = bytearray(lv.read_bytes()[:1 << 20])
    bad = tmp_path / "bad"
    bad.mkdir()
    cases = {"trunc": data[:100], "version": data[:8] + b"\x09" + data[9:]}
    h = live.read_header(bytes(data), "x")
    used = bytearray(data)
    used[136:144] = (h["arena_size"] + 1).to_bytes(8, "little")
    cases["used"] = used
    rnd = random.Random(7)
    for i in range(40):
        d = bytearray(data)
        for _ in range(8):
            at = rnd.randrange(0, h["arena_off"] + h["arena_used"])
            d[at] = rnd.randrange(256)
        cases[f"fuzz{i}"] = d
    for k, v in cases.items():
        f = bad / f".x_{k}.0123456789abcdef.live"
        f.write_bytes(bytes(v))
        if len(v) > 100:
            os.truncate(f, h["map_size"])  # sparse, as the live file was
        try:
            iochar.open(str(f)).records("POSIX")
        except (iochar.LogError, KeyError):
            pass
        if k == "used":  # and through the CLI: one line, exit 2
            r = subprocess.run([sys.executable, "-m", "iochar.cli.parser", str(f)],
                               capture_output=True, text=True)
            assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        f.unlink()


def test_killed_names_keep_their_bytes(tmp_path):
    """Paths are bytes: names that are not UTF-8, a metadata-only one (stat'ed) and
    a record (written), come back from the live file as a log gives them
    (surrogateescape: os.fsencode(path) is the name), not as U+FFFD."""
    d = tmp_path / "d"
    d.mkdir()
    code = ("import os, signal\n"
            "d = os.fsencode(os.getcwd())\n"
            "open(d + b'/only\\xffstat', 'wb').close()\n"
            "os.stat(d + b'/only\\xffstat')\n"
            "fd = os.open(d + b'/data\\xfe\\x01', os.O_CREAT | os.O_WRONLY, 0o600)\n"
            "os.write(fd, b'x' * 10)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    p = subprocess.run([sys.executable, "-c", code], env=env_for(d), cwd=str(d),
                       capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    log = iochar.open(str(d))
    assert log.job["ended_by"] == "killed"
    names = {os.fsencode(p): p for p in log.records("POSIX")["path"]}
    base = os.fsencode(str(d))
    assert base + b"/only\xffstat" in names and base + b"/data\xfe\x01" in names
    r = one(log.records("POSIX"), names[base + b"/data\xfe\x01"])
    assert (r["POSIX_WRITES"], r["POSIX_BYTES_WRITTEN"]) == (1, 10)
