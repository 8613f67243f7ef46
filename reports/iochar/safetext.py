"""Text from a log made safe to print: the one escaper every output uses.

Paths are bytes (docs/log-format.md): the reader decodes them with surrogateescape,
so a byte that is not UTF-8 becomes a lone surrogate U+DC80..U+DCFF. Printed raw, a
name could carry terminal control sequences or a newline that forges a report line;
escaped, it shows as `\\x1b`, `\\n`, `\\xff`, and a backslash as `\\\\`, so the
escaped form is unambiguous and a name never moves the cursor.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
import warnings

TRUNCATED_NOTE = "... [truncated]"  # after a name the runtime cut at its path limit
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def _char(ch: str) -> str:
    o = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= o <= 0xDCFF:  # a raw byte kept by surrogateescape
        return f"\\x{o - 0xDC00:02x}"
    if ch.isprintable():
        return ch
    if o < 0x100:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def escape(s) -> str:
    """Control characters, invalid UTF-8 and other unprintable characters as escapes;
    `\\` doubled. Bytes are decoded as UTF-8 first (invalid bytes escaped)."""
    if isinstance(s, (bytes, bytearray)):
        s = bytes(s).decode("utf-8", "surrogateescape")
    elif not isinstance(s, str):
        s = str(s)
    if s.isprintable() and "\\" not in s:  # the common case, at C speed
        return s
    return "".join(map(_char, s))


def show_path(path, truncated: bool = False) -> str:
    """A file name for text output: escaped, with a visible note when truncated."""
    return escape(path) + (TRUNCATED_NOTE if truncated else "")


def lines(text: str) -> str:
    """Escape each line of a multi-line text; the line breaks stay."""
    return "\n".join(escape(line) for line in text.split("\n"))


def sanitize(obj):
    """A JSON-ready copy: every string escaped (no lone surrogates, no control
    characters), non-finite floats as None (JSON has no NaN)."""
    if isinstance(obj, str):
        return escape(obj)
    if isinstance(obj, dict):
        return {escape(k) if isinstance(k, str) else k: sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sanitize(v) for v in obj]
    if hasattr(obj, "item") and hasattr(obj, "dtype"):  # a numpy scalar
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


@contextlib.contextmanager
def _object_strings():
    import pandas as pd  # here: the live view's commands start without pandas

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the option is deprecated (pandas 3.x)
        try:
            ctx = pd.option_context("future.infer_string", False)
        except (KeyError, ValueError, AttributeError):  # no such option any more
            ctx = contextlib.nullcontext()
        with ctx:
            yield


def object_strings(fn):
    """Run fn with pandas' inference of Arrow-backed str columns off (scoped, restored
    after): a file name that is not UTF-8 is a str with lone surrogates, which Arrow
    cannot hold, and reporters group, index and build frames by path in many places.
    With the option gone (pandas 4), the reader's own columns stay dtype object
    (log.text_column) but a new frame built from paths may fail: build those with
    log.text_column."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        with _object_strings():
            return fn(*args, **kw)
    return wrapper


def when(t) -> str:
    """Local date and time of epoch seconds, or '?' when t is absent or not a time."""
    try:
        f = float(t)
        if not t or not math.isfinite(f):
            return "?"
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(f))
    except (TypeError, ValueError, OverflowError, OSError):
        return "?"
