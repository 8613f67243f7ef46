"""iochar: read and report iochar I/O characterization logs."""

import importlib

__all__ = ["Log", "LogError", "open", "open_job", "to_epoch"]
__version__ = "0.1.0"


def __getattr__(name):
    """iochar.open and the rest come from log.py, imported at first use (and a submodule
    by its name, as `import iochar` used to make iochar.log one): a command that needs no
    log reader (iochar-top, iochar-exporter) starts without pandas."""
    if name in __all__:
        return getattr(importlib.import_module(".log", __name__), name)
    if name.isidentifier() and not name.startswith("__"):
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            pass
    raise AttributeError(f"module 'iochar' has no attribute {name!r}")
