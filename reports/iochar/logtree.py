"""The dated log tree under a log root (IOCHAR_LOGROOT): ROOT/YYYY/M/D/ of a job's start, in
local time, unpadded (Darshan's layout). Directories are made as the runtime makes them
(runtime/logdir.c, docs/security.md): a symlink or a file in the way is refused, an existing
level every user can write without the sticky bit is refused, a new level gets the root's
mode."""

from __future__ import annotations

import calendar
import os
import stat
import time
from pathlib import Path

from .logformat import LogError

_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def day_parts(t: float) -> tuple:
    tm = time.localtime(t)
    return str(tm.tm_year), str(tm.tm_mon), str(tm.tm_mday)


def day_dir(root, t: float) -> Path:
    """ROOT/YYYY/M/D of time t (seconds since the epoch)."""
    return Path(root).joinpath(*day_parts(t))


def _level(fd: int, name: str, mode: int) -> tuple:
    """(descriptor of name under fd, made now): opened, or made with mode."""
    made = False
    try:
        d = os.open(name, _OPEN, dir_fd=fd)
    except FileNotFoundError:
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
            made = True
        except FileExistsError:  # another job made it meanwhile
            pass
        d = os.open(name, _OPEN, dir_fd=fd)
    try:
        st = os.fstat(d)
        if made:
            os.fchmod(d, mode)
        elif st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
            raise PermissionError(f"{name}: every user can write it and it has no sticky bit")
    except BaseException:
        os.close(d)
        raise
    return d, made


def make(root, parts) -> int:
    """Make ROOT/parts... level by level; returns how many levels were made."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise LogError(f"log root {root}: {e.strerror or e}") from None
    made = 0
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        for name in parts:
            d, new = _level(fd, name, mode)
            os.close(fd)
            fd, made = d, made + new
    except OSError as e:
        raise LogError(f"log root {root}: {'/'.join(parts)}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    return made


def make_day(root, t: float) -> Path:
    """The day directory of time t under root, made if missing."""
    make(root, day_parts(t))
    return day_dir(root, t)


def make_year(root, year: int) -> int:
    """Every day directory of a year (iochar-mk-logdirs); how many directories were made."""
    made = 0
    for month in range(1, 13):
        for day in range(1, calendar.monthrange(year, month)[1] + 1):
            made += make(root, (str(year), str(month), str(day)))
    return made
