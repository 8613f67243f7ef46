"""What every CLI shares: the guard that turns any failure on bad input into one
`<prog>: error: ...` line on stderr and exit status 2, the argument parser that
does the same for bad arguments, and the text escaper for everything printed."""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

from ..atomicfile import write_atomic
from ..logformat import LogError
from ..safetext import escape, lines, sanitize, show_path, when

__all__ = ["ArgParser", "CliError", "escape", "lines", "run_cli", "sanitize", "show_path",
           "when", "write_atomic"]


class CliError(Exception):
    """Bad input found by a command itself (not the reader): exit 2 with this message."""


class ArgParser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {escape(message)}\n")


def _message(e: BaseException) -> str:
    from ..advice import ConfigError  # here: the live view's commands start without pandas

    if isinstance(e, OSError) and e.filename is not None:
        return f"{os.fsdecode(e.filename)}: {e.strerror or e}"
    if isinstance(e, (LogError, CliError, ConfigError)):
        return str(e)
    if isinstance(e, OSError):
        return str(e)
    if isinstance(e, MemoryError):
        return "out of memory reading the log"
    # anything else is a reader bug exposed by a log: still one line, never a traceback
    return f"cannot read the log ({type(e).__name__}: {e})"


def run_cli(prog: str, fn, argv=None) -> int:
    """fn(argv) -> exit status; any exception becomes one escaped line and status 2."""
    try:
        # numpy's RuntimeWarnings (overflow on absurd counters) are not for the user:
        # stderr carries at most the one error line
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                return fn(argv)
    except SystemExit:
        raise  # argparse: --help, --version, usage errors (ArgParser: status 2)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of stdout went away (| head): silence the flush at exit
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except Exception as e:  # noqa: BLE001 -- the guard's whole point
        msg = " ".join(escape(_message(e)).split())  # one line, whatever the message held
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return 2
