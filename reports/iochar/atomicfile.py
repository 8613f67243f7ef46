"""The one way the report tools write a file: whole or not at all."""

from __future__ import annotations

import os
import tempfile


def write_atomic(path: str, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to a temp file with an unpredictable name created
    O_EXCL in the target directory, flush it to disk, then rename it into place: a
    reader (a browser, a CI system) never sees a half-written file, and a failure
    removes the temp file and leaves any earlier file as it was. The file gets the
    mode open() would have given it (0666 less the umask)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    target = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".iochar-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(f.fileno(), 0o666 & ~mask)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
