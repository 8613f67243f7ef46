"""iochar: read and report iochar I/O characterization logs."""

from .log import Log, LogError, open  # noqa: A004 - `iochar.open` is the public API

__all__ = ["Log", "LogError", "open"]
__version__ = "0.1.0"
