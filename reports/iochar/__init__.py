"""iochar: read and report iochar I/O characterization logs."""

from .log import Log, LogError, open, open_job, to_epoch

__all__ = ["Log", "LogError", "open", "open_job", "to_epoch"]
__version__ = "0.1.0"
