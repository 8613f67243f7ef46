"""Another member of the group swaps names in a group-writable log directory (0775, no
sticky bit: a project's shared directory; docs/security.md, issue 37): a watcher on inotify
renames a symlink, or a file of another uid, onto every temporary name of the log that
appears (a directory of ours is moved away first: a file cannot replace one). The job's log
is never that symlink or file, is exact, and lands, or one warning says why not."""

import ctypes
import os
import select
import stat
import struct
import threading
from pathlib import Path

import pytest

import iochar
from tool import BUILD, BUILD_OPENMPI, LIB, mpiexec, one, run, workload

W = workload("security_workload")
MPI_END = workload("mpi_end")
VICTIM = b"victim's data, not the tool's\n"
PLANTED = b"the other user's numbers\n"
OTHER_UID = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to another uid)")

IN_CREATE, IN_MOVED_TO, IN_ISDIR = 0x100, 0x80, 0x40000000


def temporary(name):
    """A name the tool gives a log before its final one: `.<base>.<random>.tmp` or
    `.<base>.<random>.d` (nothing else here starts with a dot but the watcher's own)."""
    return name.startswith(".") and not name.startswith((".bait", ".stolen"))


class Swapper(threading.Thread):
    """For every temporary name created in d, another user's thing put at that name: a
    symlink to the victim (a victim directory holding a `log` for a directory's name), or
    a file of uid 65534, mode 0666 (a directory of that uid, 0777, holding one)."""

    def __init__(self, d, how, victim):
        super().__init__(daemon=True)
        self.d, self.how, self.victim = Path(d), how, victim
        self.seen, self.swapped, self.planted = [], [], []
        self.stop, self.ready = threading.Event(), threading.Event()
        self.n = 0

    def bait(self, isdir):
        self.n += 1
        b = self.d / f".bait{self.n}"
        if self.how == "symlink":
            os.symlink(self.victim / "dir" if isdir else self.victim / "file", b)
            return b
        if isdir:
            b.mkdir()
            os.chown(b, OTHER_UID, OTHER_UID)
            b.chmod(0o777)
            f = b / "log"
        else:
            f = b
        f.write_bytes(PLANTED)
        os.chown(f, OTHER_UID, OTHER_UID)
        f.chmod(0o666)
        return b

    def swap(self, name, isdir):
        p = self.d / name
        b = self.bait(isdir)
        try:
            if isdir:  # a directory can only be moved away, then its name taken
                os.rename(p, self.d / f".stolen{self.n}")
            os.rename(b, p)
        except FileNotFoundError:  # already gone: the tool was quicker
            return
        self.swapped.append(name)
        self.planted.append(p)

    def run(self):
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert fd >= 0 and libc.inotify_add_watch(fd, bytes(self.d), IN_CREATE | IN_MOVED_TO) >= 0
        self.ready.set()
        mine = set()
        try:
            while not self.stop.is_set():
                if not select.select([fd], [], [], 0.02)[0]:
                    continue
                data = os.read(fd, 1 << 16)
                at = 0
                while at < len(data):
                    _, mask, _, n = struct.unpack_from("iIII", data, at)
                    name = data[at + 16:at + 16 + n].rstrip(b"\0").decode()
                    at += 16 + n
                    if not temporary(name) or name in mine:
                        continue
                    mine.add(name)  # our own rename onto it shows as IN_MOVED_TO
                    self.seen.append(name)
                    self.swap(name, bool(mask & IN_ISDIR))
        finally:
            os.close(fd)

    def __enter__(self):
        self.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.join(10)


def setup_dirs(tmp_path):
    d, data, v = tmp_path / "proj", tmp_path / "data", tmp_path / "victim"
    for x in (d, data, v, v / "dir"):
        x.mkdir()
    d.chmod(0o775)  # group-writable, no sticky bit: another member may rename names in it
    (v / "file").write_bytes(VICTIM)
    (v / "dir" / "log").write_bytes(VICTIM)
    return d, data, v


def ours(p):
    st = p.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, p
    assert st.st_uid == os.geteuid() and st.st_nlink == 1, p
    return iochar.open(str(p))


def check_untouched(v, sw):
    """The victim and every planted file as the other user left them."""
    assert (v / "file").read_bytes() == VICTIM and (v / "dir" / "log").read_bytes() == VICTIM
    for p in sw.planted:
        if p.is_symlink():
            continue
        f = p / "log" if p.is_dir() else p
        st = f.lstat()
        assert f.read_bytes() == PLANTED and st.st_uid == OTHER_UID
        assert stat.S_IMODE(st.st_mode) == 0o666


def iochar_lines(p):
    return [x for x in p.stderr.decode(errors="replace").splitlines() if x.startswith("iochar:")]


def job_logs(d):
    """The logs in d that are files of ours (a planted name is never one)."""
    return sorted(p for p in d.glob("*.iochar") if not p.is_symlink()
                  and p.lstat().st_uid == os.geteuid())


@root_only
@pytest.mark.parametrize("how", ["symlink", "foreign"])
@pytest.mark.parametrize("tmpfile", ["unnamed", "no_tmpfile"])
def test_serial_log_names_swapped(tmp_path, how, tmpfile):
    """A serial job: unnamed (O_TMPFILE) the log has no name before its own, so nothing
    appears to swap; without O_TMPFILE, its private directory does, and whatever is done
    to that name the log lands, exact."""
    d, data, v = setup_dirs(tmp_path)
    env = {"IOCHAR_LOGFILE": str(d / "job.iochar")}
    if tmpfile == "no_tmpfile":
        env["IOCHAR_TEST_FAULT"] = "no_tmpfile"
    with Swapper(d, how, v) as sw:
        p = run([W, "many", str(data), "40"], tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    check_untouched(v, sw)
    if tmpfile == "unnamed":
        assert sw.seen == []
    else:  # a directory taken between its mkdir and its open is left; another one made
        assert 1 <= len(sw.seen) <= 8 and all(
            n.startswith(".job.iochar.") and n.endswith(".d") for n in sw.seen), sw.seen
    left = {q.name for q in d.iterdir()} - {"job.iochar"}
    assert all(n.startswith((".bait", ".stolen")) or n in sw.swapped for n in left), left
    if len(sw.swapped) == 8:  # every try's directory taken: one line says the log is lost
        assert iochar_lines(p) == [
            f"iochar: cannot write log {d}/job.iochar: another user's directory took the name "
            "of its private directory (left alone)"]
        assert not (d / "job.iochar").exists()
        return
    assert iochar_lines(p) == [], p.stderr
    log = ours(d / "job.iochar")
    assert len(log.records("POSIX")) == 40
    assert int(log.records("POSIX")["POSIX_BYTES_WRITTEN"].sum()) == 40


def mpi_exact(logs, nprocs, n=3):
    """Every rank's file, once, with its exact counts, over the job's log or its per-rank
    logs."""
    rows = {}
    for lg in logs:
        df = lg.records("POSIX")
        for r in range(nprocs):
            sel = df[df["path"].str.endswith(f"/r{r}.dat")]
            if len(sel):
                assert r not in rows
                rows[r] = one(df, f"/r{r}.dat")
    assert sorted(rows) == list(range(nprocs))
    for r, row in rows.items():
        assert (row["POSIX_WRITES"], row["POSIX_BYTES_WRITTEN"]) == (n + r, 100 * (n + r))


@root_only
@pytest.mark.parametrize("how", ["symlink", "foreign"])
@pytest.mark.parametrize("path", ["small", "small-no_tmpfile", "pwrite-all", "collective",
                                  "collective-openmpi"])
def test_mpi_log_names_swapped(tmp_path, how, path):
    """4 ranks: a small job written by rank 0 alone (unnamed; or its private directory
    without O_TMPFILE), every rank writing its part by pwrite (call sites: the file is
    linked into a private directory every rank opens), and one collective MPI-IO write
    (IOCHAR_COLLECTIVE_WRITE=1: the private directory from the start; with MPICH's ROMIO,
    and with Open MPI's OMPIO on the same library). The ranks reach the
    private directory only through a descriptor checked to be rank 0's, MPI-IO by
    /proc/self/fd: when its name was taken before they opened it (or at each of rank 0's
    tries to make it), the job falls back to per-rank logs, unnamed, with one warning."""
    launch, exe = mpiexec(4), MPI_END
    if path == "collective-openmpi":
        exe = workload("mpi_end", BUILD_OPENMPI)
        if not os.path.exists(exe):
            pytest.skip(f"{exe} not built (meson setup build-openmpi -Dmpi=openmpi)")
        launch = mpiexec(4, "openmpi")
    d, data, v = setup_dirs(tmp_path)
    env = {"IOCHAR_LOGFILE": str(d / "job.iochar")}
    if path == "small-no_tmpfile":
        env["IOCHAR_TEST_FAULT"] = "no_tmpfile"
    if path == "pwrite-all":
        env["IOCHAR_CALLSITES"] = "1"
    if path.startswith("collective"):
        env["IOCHAR_COLLECTIVE_WRITE"] = "1"
    with Swapper(d, how, v) as sw:
        p = run(launch + [exe, "end", str(data), "3"], tmp_path, env=env)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    check_untouched(v, sw)
    if path == "small":
        assert sw.seen == []
    else:  # one private directory (more: one taken between its mkdir and its open)
        assert sw.seen and all(n.endswith(".d") for n in sw.seen), sw.seen
        assert len(sw.seen) == 1 or path.startswith(("small-no_tmpfile", "collective")), sw.seen
    logs = job_logs(d)
    lines = iochar_lines(p)
    if [q.name for q in logs] == ["job.iochar"]:
        assert lines == [], lines
        log = ours(logs[0])
        assert log.job["nprocs"] == 4
        mpi_exact([log], 4)
    else:  # the private directory was taken before the ranks opened it, or at every try
        assert path != "small" and sw.swapped, (logs, sw.seen, lines)
        assert [q.name for q in logs] == [f"job.rank{r}.iochar" for r in range(4)], lines
        assert lines == ["iochar: a rank could not take part in reducing the job's records; "
                         "each rank wrote its own log"], lines
        mpi_exact([ours(q) for q in logs], 4)
    for q in d.iterdir():  # nothing of the job's is left under a temporary name
        if q.name.startswith(".stolen"):
            assert list(q.iterdir()) == [], list(q.iterdir())


@root_only
@pytest.mark.parametrize("how", ["symlink", "foreign"])
def test_final_name_taken_right_after_the_link(tmp_path, how):
    """Another user renames their file onto the log's name right after the tool's linkat
    made it (a shim preloaded before the tool does, deterministically): the check of the
    name against the descriptor sees it, their file is left as it is, and the unnamed log,
    still ours through its descriptor, is linked again beside it: it lands, exact."""
    d, data, v = setup_dirs(tmp_path)
    plant = tmp_path / "plant"
    if how == "symlink":
        plant.symlink_to(v / "file")
    else:
        plant.write_bytes(PLANTED)
        os.chown(plant, OTHER_UID, OTHER_UID)
        plant.chmod(0o666)
    shim = BUILD / "tests" / "libswap_shim.so"
    env = {"IOCHAR_LOGFILE": str(d / "job.iochar"), "SWAP_SHIM_NAME": "/job.iochar",
           "SWAP_SHIM_PLANT": str(plant), "LD_PRELOAD": f"{shim}:{LIB}"}
    p = run([W, "many", str(data), "40"], tmp_path, env=env)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    assert not plant.exists() and not plant.is_symlink()  # it was moved onto the log's name
    taken = d / "job.iochar"
    if how == "symlink":
        assert os.readlink(taken) == str(v / "file")
    else:
        st = taken.lstat()
        assert taken.read_bytes() == PLANTED and st.st_uid == OTHER_UID
        assert stat.S_IMODE(st.st_mode) == 0o666
    assert (v / "file").read_bytes() == VICTIM
    (lg,) = job_logs(d)
    log = ours(lg)
    assert lg.name == f"job.pid{log.job['pid']}.iochar"
    assert int(log.records("POSIX")["POSIX_BYTES_WRITTEN"].sum()) == 40
    assert sorted(q.name for q in d.iterdir()) == sorted(["job.iochar", lg.name])
