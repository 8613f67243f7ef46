"""A shared, world-writable log directory and hostile neighbours (docs/security.md):
planted symlinks and foreign files, fd 2 reused, names past the path limit,
set-user-ID programs; and no lost log when processes share IOCHAR_LOGFILE."""

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

import iochar
from iochar.flags import PARTIAL
from tool import BUILD, logs_in, mpiexec, run, workload

W = workload("security_workload")
MPI_W = workload("mpi_workload")
VICTIM = b"victim's data, not the tool's\n"
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to another uid)")


def victim(tmp_path):
    v = tmp_path / "victim.txt"
    v.write_bytes(VICTIM)
    return v


def assert_only_ours(d, allowed):
    """Nothing left behind in d: no temporaries, no private directories."""
    left = sorted(p.name for p in Path(d).iterdir() if p.name not in allowed)
    assert left == [], left


def landed(d, stem="job"):
    """The one log that landed beside a name that was taken: stem.pid<pid>.iochar."""
    (lg,) = sorted(Path(d).glob(f"{stem}.pid*.iochar"))
    st = lg.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == os.geteuid()
    log = iochar.open(str(lg))
    assert lg.name == f"{stem}.pid{log.job['pid']}.iochar"
    return log


def test_symlink_at_log_name_is_not_followed(tmp_path):
    v = victim(tmp_path)
    d = tmp_path / "logs"
    d.mkdir()
    (d / "job.iochar").symlink_to(v)
    p = run([W, "many", str(tmp_path), "3"], tmp_path, env={"IOCHAR_LOGFILE": str(d / "job.iochar")})
    assert p.returncode == 0 and p.stderr == b""
    assert v.read_bytes() == VICTIM
    assert os.readlink(d / "job.iochar") == str(v)
    log = landed(d)
    df = log.records("POSIX")
    assert int(df["POSIX_BYTES_WRITTEN"].sum()) == 3
    assert_only_ours(d, {"job.iochar", f"job.pid{log.job['pid']}.iochar"})


def test_symlinks_at_every_predictable_name(tmp_path):
    """The names an attacker can predict (the final name in IOCHAR_LOGDIR, from
    the user, program, pid and second, and the old `<log>.tmp<pid>`) all hold
    symlinks to the victim: none is followed, the log lands beside them."""
    v = victim(tmp_path)
    d = tmp_path / "logs"
    d.mkdir()
    script = (
        'now=$(date +%s); for s in 0 1 2 3 4 5 6 7 8 9; do '
        'stamp=$(date -d @$((now + s)) +%Y%m%d-%H%M%S); '
        'name="$D/secuser_security_workload_id$$_${stamp}_$$.iochar"; '
        'ln -s "$V" "$name"; ln -s "$V" "$name.tmp$$"; done; '
        'exec "$W" many "$T" 2')
    p = run(["sh", "-c", script], tmp_path,
            env={"D": str(d), "V": str(v), "W": W, "T": str(tmp_path), "USER": "secuser",
                 "IOCHAR_LOGDIR": str(d)})
    assert p.returncode == 0, p.stderr
    assert v.read_bytes() == VICTIM
    links = [q for q in d.iterdir() if q.is_symlink()]
    assert len(links) == 20 and all(os.readlink(q) == str(v) for q in links)
    (lg,) = [q for q in d.iterdir() if not q.is_symlink()]
    assert stat.S_IMODE(lg.stat().st_mode) == 0o600 and ".pid" in lg.name
    assert int(iochar.open(str(lg)).records("POSIX")["POSIX_BYTES_WRITTEN"].sum()) == 2


@root_only
def test_foreign_file_at_logfile_is_not_adopted(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # a site's world-writable log directory
    planted = shared / "job.iochar"
    planted.write_bytes(b"ATTACKER")
    os.chown(planted, 65534, 65534)
    planted.chmod(0o666)
    p = run([W, "many", str(tmp_path), "2"], tmp_path, env={"IOCHAR_LOGFILE": str(planted)})
    assert p.returncode == 0 and p.stderr == b""
    st = planted.stat()
    assert planted.read_bytes() == b"ATTACKER" and st.st_uid == 65534
    log = landed(shared)
    assert int(log.records("POSIX")["POSIX_BYTES_WRITTEN"].sum()) == 2
    assert_only_ours(shared, {"job.iochar", f"job.pid{log.job['pid']}.iochar"})


def test_world_writable_directory_without_sticky_bit_refused(tmp_path):
    """Anyone may rename or replace names in such a directory: nothing is
    created there, and the user hears why at start, once."""
    d = tmp_path / "open"
    d.mkdir()
    d.chmod(0o777)
    p = run([W, "many", str(tmp_path), "2"], tmp_path, env={"IOCHAR_LOGFILE": str(d / "job.iochar")})
    assert p.returncode == 0
    assert p.stderr.decode().splitlines() == [
        f"iochar: log directory {d}: every user can write it and it has no sticky bit "
        "(others could replace the log's names); the log will not be written"]
    assert list(d.iterdir()) == []


@pytest.mark.parametrize("collective", ["0", "1"])
def test_mpi_log_name_symlink_and_private_directory(tmp_path, collective):
    """4 ranks: the log is written inside rank 0's private 0700 directory (by
    pwrite, or by MPI_File_open and one collective write) and renamed beside
    the symlink planted at its name."""
    v = victim(tmp_path)
    d = tmp_path / "logs"
    d.mkdir()
    d.chmod(0o1777)
    (d / "job.iochar").symlink_to(v)
    p = run(mpiexec(4) + [MPI_W, str(tmp_path)], tmp_path,
            env={"IOCHAR_LOGFILE": str(d / "job.iochar"), "IOCHAR_COLLECTIVE_WRITE": collective})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert b"iochar:" not in p.stderr
    assert v.read_bytes() == VICTIM
    log = landed(d)
    assert log.job["nprocs"] == 4 and log.job["partial"] == 0
    assert_only_ours(d, {"job.iochar", f"job.pid{log.job['pid']}.iochar"})


def test_fd2_reused_by_a_data_file(tmp_path):
    """The application closes fd 2 and opens a data file (fd 2): the memory
    bound's warning goes into the log, not into the application's data."""
    data = tmp_path / "data"
    data.mkdir()
    p = run([W, "fd2", str(data), "40"], tmp_path, env={"IOCHAR_MEMORY": "16k"})
    assert p.returncode == 0
    assert (data / "data.bin").read_bytes() == b"DATA\nMORE\n"
    (lg,) = logs_in(tmp_path)
    job = iochar.open(str(lg)).job
    (line,) = job["warnings"].splitlines()
    assert line.startswith("memory bound of 16384 bytes (IOCHAR_MEMORY) reached")
    assert job["partial"] & PARTIAL["FOLDED"]


def test_warning_on_own_stderr_once_and_kept(tmp_path):
    p = run([W, "many", str(tmp_path), "40"], tmp_path, env={"IOCHAR_MEMORY": "16k"})
    assert p.returncode == 0
    lines = p.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iochar: memory bound of 16384 bytes")
    (lg,) = logs_in(tmp_path)
    assert iochar.open(str(lg)).job["warnings"] == lines[0][len("iochar: "):]


def fnv1a(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


@pytest.mark.parametrize("end", ["", "_exit"])
def test_names_past_the_path_limit_recorded_truncated(tmp_path, end):
    """5,000-byte names reached by a deep cwd plus a relative name, by a cwd
    deeper than 4096 bytes, and by openat on a directory that deep: each is
    recorded (exact bytes), its id the hash of the whole name, its NAMES
    entry the first 4095 bytes, a NUL and TRUNCATED (the reader keeps the 4095 bytes
    as the path and lists the id in Log.truncated_ids).  _exit: the same from the
    live file (its records and metadata-only entries carry the mark too)."""
    base = tmp_path / "long"
    base.mkdir()
    p = run([W, "longpath" + end, str(base)], tmp_path)
    assert p.returncode == 0, p.stderr
    deep = str(base) + ("/" + "d" * 200) * 25
    assert len(deep) > 5000
    (lg,) = logs_in(tmp_path) if not end else [tmp_path]
    log = iochar.open(str(lg))
    df = log.records("POSIX")
    got = {}
    for name in ("near", "deep", "at"):
        full = (deep + "/" + name).encode()
        row = df[df["record_id"] == fnv1a(full)]
        assert len(row) == 1, name
        got[name] = int(row.iloc[0]["POSIX_BYTES_WRITTEN"])
        path = row.iloc[0]["path"]
        path = path.encode("utf-8", "surrogateescape") if isinstance(path, str) else path
        assert path == full[:4095]
        assert int(row.iloc[0]["record_id"]) in log.truncated_ids
    assert got == {"near": 100, "deep": 50, "at": 30}
    # names over 4095 bytes: the 5 deepest directories and the 3 files
    assert log.job["truncated_paths"] == 8
    assert log.job["partial"] & PARTIAL["TRUNCATED_PATHS"]


def test_ulimit_fsize_changes_nothing(tmp_path):
    """`ulimit -f 8` and a log larger than 8 KiB (1,000 records: ~20 KiB in
    format 2): same exit status and stdout as without the tool, no SIGXFSZ, no
    temporary left, one warning."""
    out = {}
    for mode in ("bare", "tool"):
        d = tmp_path / mode
        d.mkdir()
        p = run(["bash", "-c", 'ulimit -f 8; exec "$0" status-many "$1" 1000', W, str(d)], d,
                env={"IOCHAR_LOGFILE": str(d / "job.iochar")}, preload=mode == "tool")
        out[mode] = p
        assert p.returncode == 7, p.stderr
        assert sorted(q.name for q in d.iterdir()) == [f"f{i:05d}" for i in range(1000)]
    assert out["bare"].stdout == out["tool"].stdout == b"wrote 1000 files\n"
    assert out["tool"].stderr.decode().splitlines() == [
        f"iochar: cannot write log {tmp_path}/tool/job.iochar: File too large"]


def test_programs_sharing_logfile_each_keep_their_log(tmp_path):
    """sh -c 'a && b' with one IOCHAR_LOGFILE, then the same again: four logs,
    none overwritten (the first keeps the name, the others get .pid<pid>)."""
    d = tmp_path / "logs"
    d.mkdir()
    env = {"IOCHAR_LOGFILE": str(d / "job.iochar")}
    cmd = ["sh", "-c", '"$0" many "$1/a" 3 && "$0" many "$1/b" 5', W, str(tmp_path)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert run(cmd, tmp_path, env=env).returncode == 0
    first = (d / "job.iochar").read_bytes()
    assert run(cmd, tmp_path, env=env).returncode == 0
    assert (d / "job.iochar").read_bytes() == first
    logs = sorted(d.iterdir())
    assert len(logs) == 4 and all(q.name.startswith("job.pid") for q in logs[:-1] if q.name != "job.iochar")
    per_dir = {"a": 0, "b": 0}
    for q in logs:
        df = iochar.open(str(q)).records("POSIX")
        for sub in per_dir:
            per_dir[sub] += int(df[df["path"].str.contains(f"/{sub}/f")]["POSIX_BYTES_WRITTEN"].sum())
    assert per_dir == {"a": 6, "b": 10}


def test_python_multiprocessing_spawn_shares_logfile(tmp_path):
    """A spawn pool: every worker is a fresh program with the same
    IOCHAR_LOGFILE; no worker's log replaces another's."""
    script = tmp_path / "pool.py"
    script.write_text(
        "import multiprocessing as mp, os, sys\n"
        "def init():\n"
        "    with open(os.path.join(sys.argv[1], f'init{os.getpid()}.dat'), 'wb') as f:\n"
        "        f.write(b'y' * 10)\n"
        "def work(i):\n"
        "    with open(os.path.join(sys.argv[1], f'out{i}.dat'), 'wb') as f:\n"
        "        f.write(b'x' * (100 + i))\n"
        "if __name__ == '__main__':\n"
        "    p = mp.get_context('spawn').Pool(2, initializer=init)\n"
        "    p.map(work, range(6), chunksize=1)\n"
        "    p.close()\n"  # workers end normally (terminate() would kill them)
        "    p.join()\n")
    d = tmp_path / "logs"
    d.mkdir()
    p = run([shutil.which("python3"), str(script), str(tmp_path)], tmp_path,
            env={"IOCHAR_LOGFILE": str(d / "job.iochar")})
    assert p.returncode == 0, p.stderr
    logs = list(d.iterdir())
    assert len(logs) >= 3  # the parent's and both workers'
    total = 0
    for q in logs:
        df = iochar.open(str(q)).records("POSIX")
        total += int(df[df["path"].str.contains("/(?:out|init)", regex=True)]
                     ["POSIX_BYTES_WRITTEN"].sum())
    assert total == sum(100 + i for i in range(6)) + 2 * 10


def test_logdir_checked_at_start_once_per_mpi_job(tmp_path):
    p = run(mpiexec(4) + [MPI_W, str(tmp_path)], tmp_path,
            env={"IOCHAR_LOGDIR": str(tmp_path / "missing")})
    assert p.returncode == 0, p.stderr
    lines = [x for x in p.stderr.decode().splitlines() if x.startswith("iochar:")]
    assert lines == [f"iochar: log directory {tmp_path}/missing: No such file or directory; "
                     "the log will not be written"]


@root_only
def test_setuid_program_tool_stays_off(tmp_path):
    """A set-user-ID program (AT_SECURE) linked to the tool ignores every
    IOCHAR_* variable: it writes no log, not even where its caller asks."""
    # the set-user-ID program (uid 65534) must reach it: not under pytest's 0700 tmp
    shared = Path(tempfile.mkdtemp(prefix="iochar-suid-", dir="/tmp"))
    try:
        suid_run(shared, tmp_path)
    finally:
        shutil.rmtree(shared)


def suid_run(shared, tmp_path):
    shared.chmod(0o1777)
    prog = shared / "prog"
    shutil.copy(BUILD / "tests" / "security_linked", prog)
    env = {"IOCHAR_LOGFILE": str(shared / "job.iochar")}
    p = run([str(prog), "many", str(shared), "1"], tmp_path, env=env, preload=False)
    assert p.returncode == 0 and (shared / "job.iochar").exists()  # control: tool on
    (shared / "job.iochar").unlink()
    (shared / "f00000").unlink()
    os.chown(prog, 65534, 65534)
    prog.chmod(0o4755)
    p = run([str(prog), "many", str(shared), "1"], tmp_path, env=env, preload=False)
    assert p.returncode == 0 and p.stderr == b""
    assert (shared / "f00000").stat().st_uid == 65534  # it did run set-user-ID
    assert not (shared / "job.iochar").exists()
    assert sorted(q.name for q in shared.iterdir()) == ["f00000", "prog"]



def dirs_made_in(d, cmd, cwd, env):
    """Run cmd; the names of the directories created directly in d meanwhile
    (inotify: a directory made and removed again still shows)."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    in_create, in_isdir, in_nonblock = 0x100, 0x40000000, 0o4000
    fd = libc.inotify_init1(in_nonblock)
    assert fd >= 0 and libc.inotify_add_watch(fd, str(d).encode(), in_create) >= 0
    try:
        p = run(cmd, cwd, env=env)
        assert p.returncode == 0, p.stderr.decode(errors="replace")
        made, data = [], b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            data += chunk
        at = 0
        while at < len(data):
            _, mask, _, n = struct.unpack_from("iIII", data, at)
            name = data[at + 16:at + 16 + n].rstrip(b"\0")
            if mask & in_isdir:
                made.append(name)
            at += 16 + n
        return made
    finally:
        os.close(fd)


def test_private_directory_only_when_other_ranks_write(tmp_path):
    """The log's private directory costs a mkdir, a rename and an rmdir on the
    shutdown's path: made when other ranks write the log by name (4 ranks
    with call sites, which every rank adds), never for a 1-rank job."""
    d = tmp_path / "logs"
    d.mkdir()
    env = {"IOCHAR_CALLSITES": "1"}
    four = dirs_made_in(d, mpiexec(4) + [MPI_W, str(tmp_path)], d, env)
    assert len(four) == 1 and four[0].endswith(b".d"), four
    one = dirs_made_in(d, mpiexec(1) + [MPI_W, str(tmp_path)], d, env)
    assert one == []
    logs = sorted(d.glob("*.iochar"))
    assert len(logs) == 2 and [iochar.open(str(p)).job["nprocs"] for p in logs] in ([4, 1], [1, 4])
    assert [p.name for p in d.iterdir() if p.name.startswith(".")] == []  # no temporaries
