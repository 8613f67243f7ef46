"""The ways the report tools write a file: whole or not at all (write_atomic), and a new
log that never replaces a file and never has a name another user could swap (write_new)."""

from __future__ import annotations

import errno
import os
import tempfile


def write_atomic(path: str, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to a temp file in a private directory (0700, an
    unpredictable name) made beside `path`, flush it to disk, then rename it into place:
    a reader (a browser, a CI system) never sees a half-written file, a failure removes
    the temp file and leaves any earlier file as it was, and in a directory other users
    can write nobody can swap the temp file (the rename goes through the directory's
    descriptor, wherever someone moves it). The file gets the mode open() would have
    given it (0666 less the umask). `path` is then checked to be that file; when another
    file took the name meanwhile, an OSError says so (their file is left alone)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    target = os.path.abspath(path)
    tmpdir = tempfile.mkdtemp(dir=os.path.dirname(target), prefix=".iochar-", suffix=".d")
    dfd = fd = -1
    try:
        dfd = os.open(tmpdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        st = os.fstat(dfd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise OSError(f"{tmpdir}: another user's directory took its name (left alone)")
        fd = os.open("f", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=dfd)
        _write_fd(fd, data)
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        os.fsync(fd)
        os.replace("f", target, src_dir_fd=dfd)
        if not _same_file(fd, target):
            raise OSError("another file took its name as it was written (left alone)")
    finally:
        if fd >= 0:
            os.close(fd)
        if dfd >= 0:
            try:
                os.unlink("f", dir_fd=dfd)
            except OSError:
                pass
            if _same_file(dfd, tmpdir):  # still ours at that name
                try:
                    os.rmdir(tmpdir)
                except OSError:
                    pass
            os.close(dfd)


def _same_file(fd: int, path) -> bool:
    """Is the name `path` (not followed) the file open as fd?"""
    try:
        a, b = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_new(path, data: bytes) -> None:
    """Write `data` as a new 0600 file at `path`, never replacing anything there
    (FileExistsError), with no name on the way that another user of a group-writable
    directory could swap (docs/security.md): an unnamed O_TMPFILE file in path's
    directory, filled, flushed to disk, then linked in through /proc/self/fd (link never
    replaces). Where the file system or /proc does not allow that, the file is created at
    `path` itself, O_EXCL|O_NOFOLLOW, and removed again if writing it fails. Either way
    `path` is then checked (device, inode) to be that file: when another file took the
    name meanwhile, an OSError (no errno) says so and that file is left alone."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd = -1
    try:
        fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            raise
    try:
        linked = False
        if fd >= 0:
            _write_fd(fd, data)
            os.fsync(fd)
            try:
                os.link(f"/proc/self/fd/{fd}", path, follow_symlinks=True)
                linked = True
            except OSError as e:
                if e.errno == errno.EEXIST:
                    raise
                os.close(fd)  # no /proc: the unnamed file goes
                fd = -1
        if not linked:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            try:
                _write_fd(fd, data)
                os.fsync(fd)
            except OSError:
                if _same_file(fd, path):
                    os.unlink(path)  # ours: no half-written log left behind
                raise
        if not _same_file(fd, path):
            raise OSError("another file took its name as it was written (left alone: not "
                          "this log)")
    finally:
        if fd >= 0:
            os.close(fd)
