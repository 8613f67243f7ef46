"""Names in terminal output: control characters and invalid UTF-8 shown as escapes
(\\x1b, \\n, \\xff), so a crafted file name cannot move the cursor or forge lines."""

from __future__ import annotations

import re

_CTRL = re.compile(r"[\x00-\x1f\x7f-\x9f]|[\udc80-\udcff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def _one(m) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    o = ord(c)
    return f"\\x{o - 0xDC00:02x}" if o >= 0xDC80 else f"\\x{o:02x}"


def esc(s) -> str:
    """Printable text of a name: str (bytes undecodable as UTF-8 kept by
    surrogateescape, as os.fsdecode gives them) or bytes."""
    if isinstance(s, (bytes, bytearray)):
        s = bytes(s).decode("utf-8", "surrogateescape")
    return _CTRL.sub(_one, str(s))
