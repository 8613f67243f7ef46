"""Where the live files are (runtime/live.c, docs/deploying.md): on each node, in the live
directory (IOCHAR_LIVEDIR, default /dev/shm), one private directory per user (iochar-<uid>,
0700), in it one directory per log directory, named by the FNV-1a hash of the log directory's
real path, holding `.<log name>.<random>.live` files.

`files_for(DIR)` finds the live files of logs destined for DIR on this node, and
`live_files(DIR, logs)` those of them and of DIR itself still worth reading (the readers
read them beside DIR's logs: jobs.expand); `settle(DIR)` makes the live files of DIR's
processes that are gone (no epilogue ran: a workstation, a CI runner) into logs in DIR;
`recover_node` is the job epilogue: every live file left on the node becomes a log in the
dated tree, and goes."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import os
import pwd
import re
import socket
import stat
import struct
import sys
import zlib
from pathlib import Path

from . import live, logtree
from .logformat import HEADER, LogError, SectionHeaderError, inflater_for, parse_job, section_at
from .safetext import escape

DEFAULT = "/dev/shm"
USER_DIR = re.compile(r"^iochar-(\d+)$")
KEY = re.compile(r"^[0-9a-f]{16}$")


def _file_setting(path: str, name: str) -> str | None:
    """The last NAME=VALUE line of a config file for name (runtime/config.c's rules)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return None
    value = None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        key, eq, v = line.partition("=")
        v = v.strip()
        if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
            v = v[1:-1]
        if eq and key.strip() == name and v:
            value = v
    return value


def setting(name: str) -> str | None:
    """A runtime setting as the runtime sees it: asked of the preloaded library when this
    process has it (every layer: the site file too), else the environment, then the file
    IOCHAR_CONFIG names."""
    try:
        ask = ctypes.CDLL(None).iochar_setting
    except (AttributeError, OSError):
        ask = None
    if ask is not None:
        ask.restype, ask.argtypes = ctypes.c_char_p, [ctypes.c_char_p]
        v = ask(name.encode())
        return os.fsdecode(v) if v else None
    if os.environ.get(name):
        return os.environ[name]
    conf = os.environ.get("IOCHAR_CONFIG")
    return _file_setting(conf, name) if conf else None


def live_dir() -> Path:
    v = setting("IOCHAR_LIVEDIR")
    return Path(v if v and v.startswith("/") else DEFAULT)


def key_of(d) -> str:
    """The name of the directory that holds the live files of log directory d."""
    h = 0xcbf29ce484222325
    for c in os.fsencode(os.path.realpath(d)):
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def files_for(d, top=None) -> list:
    """Live files of this user's processes whose log goes to directory d, on this node."""
    sub = Path(top or live_dir()) / f"iochar-{os.getuid()}" / key_of(d)
    try:
        return sorted(sub / e.name for e in os.scandir(sub) if live.is_live(e.name))
    except OSError:
        return []


def live_files(d: Path, logs: list) -> list:
    """The live files of logs destined for directory d (in d, and in this node's live
    directory: files_for) still worth reading: not marked logged, and not of a
    process whose log (among `logs`) was written after all (killed between its log's
    rename and the live file's removal)."""
    lives = sorted(x for x in d.glob(".*.live") if live.is_live(x)) + files_for(d)
    if not lives:
        return []
    done = _identities(logs)
    out = []
    for x in lives:
        h = live.header_of(x)
        # pid 0: killed while its live file was being made (before any record)
        if h is not None and (h["state"] == live.LOGGED or h["pid"] == 0 or
                              (h["pid"], round(h["start_wall"], 3)) in done):
            continue
        out.append(x)
    return out


def _identities(logs) -> set:
    done = set()
    for lg in logs:
        try:
            with open(lg, "rb") as fh:
                head = fh.read(1 << 16)
            done |= _log_identities(head)
        except OSError:
            continue
    return done


@contextlib.contextmanager
def _claimed(f: Path):
    """Hold live file f while its log is made and it is removed: an exclusive flock (a
    tooled parent making its child's log, runtime/reap.c, holds the same), then f's name
    still the file locked (not made a log and removed meanwhile). Yields whether it is
    ours to make (one that cannot be opened is: the caller's own reads fail and say so)."""
    try:
        fd = os.open(f, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            a, b = os.fstat(fd), os.stat(f, follow_symlinks=False)
            ours = (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
        except OSError:
            ours = False
        yield ours
    finally:
        os.close(fd)


def settle(d, logs=(), say=None) -> list:
    """The live files on this node of logs bound for d (their header names d as the log's
    directory) whose process is gone, its pid ended or reused (`alive`), become logs in d
    (named as `recover` names them) and go, each said in one `iochar:` line: a process
    ended by _exit in a signal handler, or killed, with no epilogue to recover it (a
    workstation, a CI runner), is neither left in the node's memory nor read as another
    job by a later run in d. One whose log (among `logs`) was written after all only goes.
    A live file that cannot be made a log here (d not writable, a bad file) stays, read as
    before. Returns the logs written."""
    say = say or (lambda line: print(line, file=sys.stderr))
    try:
        real = os.path.realpath(d)
    except OSError:
        return []
    written, done, host = [], None, socket.gethostname()
    for f in files_for(d):
        h = live.header_of(f)
        # a live directory shared between nodes: pids are another node's there
        if (h is None or not h["log_dest"] or h["pid"] == 0 or h["hostname"] != host
                or alive(h)):
            continue
        dest = Path(os.fsdecode(h["log_dest"]))
        if os.path.realpath(dest.parent) != real:
            continue  # another directory with the same key: never written into
        if done is None:
            done = _identities(logs)
        with _claimed(f) as ours:
            if ours:
                out = _settle_one(f, h, dest, done, say)
                if out:
                    written.append(out)
    return written


def _settle_one(f: Path, h: dict, dest: Path, done: set, say):
    """settle's work on one live file it holds: the log made (returned) and the file gone,
    or (a problem) left."""
    ended = live.STATES.get(h["state"], "killed")
    out = None
    if h["state"] != live.LOGGED and (h["pid"], round(h["start_wall"], 3)) not in done:
        try:
            out = live.recover(f, dest.parent / live.default_output(f).name)
        except LogError:
            return None  # not writable here, or taken by another reader meanwhile
        say(f"iochar: process {h['pid']} ended ({ended}) without its log; made "
            f"{escape(str(out))} from its live file")
    try:
        f.unlink()
        f.parent.rmdir()  # the last live file of that directory: it goes too
    except OSError:
        pass
    return out


def _log_identities(head: bytes) -> set:
    """(pid, start time) of a log's JOB section, when its first section is JOB."""
    try:
        version = HEADER.unpack_from(head)[1]
        kind, _, count, _, ulen, clen, start = section_at(head, HEADER.size, version)
        if kind.rstrip(b"\0") != b"JOB" or start + clen > len(head):
            return set()
        d = inflater_for(version)()
        job = parse_job(d.decompress(head[start:start + clen]), count, "JOB")
        return {(job.get("pid"), round(float(job.get("start_time", 0)), 3))}
    except (struct.error, zlib.error, LogError, SectionHeaderError, ValueError, TypeError):
        return set()


@functools.cache
def _boot_time() -> float:
    """When this node booted (a constant: read once)."""
    with open("/proc/stat") as f:
        return float(next(ln.split()[1] for ln in f if ln.startswith("btime ")))


def alive(h: dict) -> bool:
    """The process a live file's header names still runs on this node: its pid exists, not
    a zombie, as the same user, started no later than the header says (else the pid was
    reused)."""
    pid = h["pid"]
    try:
        st = os.stat(f"/proc/{pid}")
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started = _boot_time() + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return False
    return fields[0] not in "ZX" and st.st_uid == h["uid"] and started <= h["start_wall"] + 2.0


def _private(path: Path, uid: int) -> bool:
    """A directory (not a symlink) of uid's, closed to others: nobody else planted it."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077


def _become(uid: int):
    """Root acts as the live files' owner while it reads them and writes their logs (its
    effective uid, gid and groups): it reads nothing the user could not, and the logs and
    any day directory are the user's. Returns the function that comes back."""
    if os.geteuid() != 0 or uid == 0:
        return lambda: None
    pw = pwd.getpwuid(uid)  # KeyError: no such user on this node
    groups = os.getgroups()

    def back():
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)

    try:
        os.setgroups(os.getgrouplist(pw.pw_name, pw.pw_gid))
        os.setegid(pw.pw_gid)
        os.seteuid(uid)
    except OSError:
        back()
        raise
    return back


def _recover_one(f: Path, into, jobid, written: list, problems: list):
    """One live file: recovered into the tree and removed; removed when there is nothing to
    recover (its log was written, or it was killed before its first record); left when its
    process still runs, belongs to another job, or cannot be read (a problem, said)."""
    h = live.header_of(f)
    if h is None:
        problems.append(f"{f}: not a readable live file; left in place")
        return
    if jobid is not None and h["jobid"] != jobid:
        return
    if h["state"] != live.LOGGED and h["pid"] != 0:
        if alive(h):
            return
        try:
            out = logtree.make_day(into, h["start_wall"]) / live.default_output(f).name
            written.append(live.recover(f, out))
        except LogError as e:
            problems.append(f"{e}; {f} left in place")
            return
    f.unlink()
    try:
        f.parent.rmdir()  # the last live file of that directory: it goes too
    except OSError:
        pass


def recover_node(top, into=None, jobid=None) -> tuple:
    """The job epilogue: every live file in live directory `top` of a process no longer
    running (of batch job `jobid` only, when given) becomes a log in the tree under `into`
    (default: the configured IOCHAR_LOGROOT), then goes. Run as root it visits every user's
    directory, acting as that user; run as a user, that user's. Returns (logs written,
    problems: one line each, those files left in place)."""
    into = into or setting("IOCHAR_LOGROOT")
    if not into:
        raise LogError("--into ROOT is needed (no IOCHAR_LOGROOT is configured)")
    try:
        users = sorted(e.name for e in os.scandir(top))
    except OSError as e:
        raise LogError(f"live directory {top}: {e.strerror or e}") from None
    written, problems = [], []
    for name in users:
        m = USER_DIR.match(name)
        if not m or (os.geteuid() != 0 and int(m.group(1)) != os.geteuid()):
            continue
        uid, udir = int(m.group(1)), Path(top) / name
        if not _private(udir, uid):
            problems.append(f"{udir}: not a private directory of uid {uid}; skipped")
            continue
        try:
            back = _become(uid)
        except (KeyError, OSError) as e:  # no such user here, or the switch refused
            problems.append(f"{udir}: cannot act as uid {uid} ({e}); skipped")
            continue
        try:
            for sub in sorted(udir.iterdir()):
                if not KEY.match(sub.name) or not _private(sub, uid):
                    continue
                for f in sorted(sub.iterdir()):
                    if not live.is_live(f):
                        continue
                    with _claimed(f) as ours:
                        if ours:  # else its parent or a reader is making its log now
                            _recover_one(f, into, jobid, written, problems)
        finally:
            back()
    return written, problems
