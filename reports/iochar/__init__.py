"""iochar: read and report iochar I/O characterization logs."""

from .log import Log, LogError, open

__all__ = ["Log", "LogError", "open"]
__version__ = "0.1.0"
