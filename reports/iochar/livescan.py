"""The live directory's walk (iochar-top, iochar-exporter): the live files a reader may
read, each opened read-only by descriptor, and one line for each thing skipped.

The walk opens each level relative to the one above (openat), with O_NOFOLLOW, and
checks owner and mode on the opened descriptor: a symlink, a FIFO, a file or directory
of the wrong owner, or one open to others is skipped with one line naming it. A user
walks their own directory (iochar-<uid>); root walks every user's. The files' bytes are
liveview.py's to read and check."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from . import live, livedir

MAX_FILES = 4096  # live files read per scan: beyond, one line says how many were left
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass
class Scan:
    """The live files found under a live directory, opened, and one line per thing
    skipped."""
    files: list = field(default_factory=list)  # [(fd, path, uid)]
    problems: list = field(default_factory=list)


def _check_dir(fd: int, uid: int) -> str | None:
    st = os.fstat(fd)
    if st.st_uid != uid:
        return f"owned by uid {st.st_uid}, not {uid}"
    if st.st_mode & 0o077:
        return f"open to others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def scan(top, uids=None) -> Scan:
    """Open (read-only, no symlink followed) the live files under live directory `top`:
    for a user, their own directory (iochar-<uid>); for root, every user's (`uids` limits
    it). Each directory is opened relative to its parent's descriptor."""
    out = Scan()
    me = os.geteuid()
    try:
        tfd = os.open(os.fsencode(top), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return out  # no job made it yet
    except OSError as e:
        out.problems.append(f"{top}: {e.strerror or e}; nothing read")
        return out
    try:
        if me == 0:
            names = sorted(os.listdir(tfd))
        else:
            names = [f"iochar-{me}"]
        for uname in names:
            m = livedir.USER_DIR.match(uname)
            if not m:
                continue
            uid = int(m.group(1))
            if uids is not None and uid not in uids:
                continue
            _scan_user(tfd, os.path.join(str(top), uname), uname, uid, out)
    finally:
        os.close(tfd)
    if len(out.files) > MAX_FILES:
        for fd, _, _ in out.files[MAX_FILES:]:
            os.close(fd)
        out.problems.append(f"{top}: {len(out.files) - MAX_FILES} live files past the first "
                            f"{MAX_FILES} left unread")
        del out.files[MAX_FILES:]
    return out


def _open_at(dfd: int, name: str, flags: int, shown: str, problems: list) -> int | None:
    try:
        return os.open(name, flags, dir_fd=dfd)
    except FileNotFoundError:
        return None  # gone between the listing and the open: it ended
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and flags & os.O_NOFOLLOW:
            problems.append(f"{shown}: a symlink or not a {'directory' if flags & os.O_DIRECTORY else 'file'}; skipped")
        else:
            problems.append(f"{shown}: {e.strerror or e}; skipped")
        return None


def _entries(dfd: int, uid: int, shown: str, problems: list) -> list:
    """The sorted names in the open directory dfd, or [] with one line in problems when it
    is not one we may read (wrong owner or mode) or cannot be listed."""
    why = _check_dir(dfd, uid)
    if why:
        problems.append(f"{shown}: {why}; skipped")
        return []
    try:
        return sorted(os.listdir(dfd))
    except OSError as e:
        problems.append(f"{shown}: {e.strerror or e}; skipped")
        return []


def _scan_user(tfd: int, shown: str, uname: str, uid: int, out: Scan):
    """The live files of one user's directory (tfd/uname): LIVEDIR/iochar-<uid>/<key>/."""
    ufd = _open_at(tfd, uname, _OPEN_DIR, shown, out.problems)
    if ufd is None:
        return
    try:
        for sub in _entries(ufd, uid, shown, out.problems):
            if livedir.KEY.match(sub):
                _scan_key(ufd, sub, f"{shown}/{sub}", uid, out)
    finally:
        os.close(ufd)


def _scan_key(ufd: int, sub: str, shown: str, uid: int, out: Scan):
    """The live files of one log directory's key directory (ufd/sub), each opened and
    checked: a regular file of the directory's owner."""
    sfd = _open_at(ufd, sub, _OPEN_DIR, shown, out.problems)
    if sfd is None:
        return
    try:
        for f in _entries(sfd, uid, shown, out.problems):
            if not live.is_live(f):
                continue
            fshown = f"{shown}/{f}"
            fd = _open_at(sfd, f, _OPEN_FILE, fshown, out.problems)
            if fd is None:
                continue
            st = os.fstat(fd)
            why = None if stat.S_ISREG(st.st_mode) else "not a regular file"
            why = why or (f"owned by uid {st.st_uid}, not {uid}" if st.st_uid != uid else None)
            if why:
                os.close(fd)
                out.problems.append(f"{fshown}: {why}; skipped")
                continue
            out.files.append((fd, fshown, uid))
    finally:
        os.close(sfd)
