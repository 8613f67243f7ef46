"""A job's program by its name: an interpreter's program is its script or module
(`python3 train.py` is train.py, `python -m pkg.mod` is pkg.mod), the interpreter kept
beside it; any other program is its executable.

Logs with the JOB keys `program`/`interpreter` say it (runtime/jobkey.c, from the
exact argv); for older logs it is derived here from `exe` and `cmdline` (arguments
joined by spaces, so a script path holding a space is cut there)."""

from __future__ import annotations

import os

_OTHERS = ("perl", "ruby", "Rscript", "julia", "node", "lua", "php", "tclsh", "wish")


def _is_python(base: str) -> bool:
    return base.startswith(("python", "pypy"))


def is_interpreter(exe: str) -> bool:
    base = os.path.basename(exe)
    return _is_python(base) or base.startswith(_OTHERS)


def script_of(interp: str, argv: list) -> tuple[str | None, bool]:
    """(the script or module an interpreter's argv runs, whether it is a module);
    None for a -c command, standard input or an interactive session. The rules of
    runtime/jobkey.c script_of."""
    python = _is_python(os.path.basename(interp))
    i = 1
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):
            return a, False
        if a == "-":
            return None, False
        if not python:
            i += 1
            continue
        if a.startswith("--"):
            if a == "--":
                return (argv[i + 1], False) if i + 1 < len(argv) else (None, False)
            i += 2 if a == "--check-hash-based-pycs" else 1
            continue
        for k, o in enumerate(a[1:], 1):
            if o == "c":
                return None, False
            if o == "m":
                if a[k + 1:]:
                    return a[k + 1:], True
                return (argv[i + 1], True) if i + 1 < len(argv) else (None, False)
            if o in "WX":
                if not a[k + 1:]:
                    i += 1
                break
        i += 1
    return None, False


def program_of(job: dict) -> tuple[str, str]:
    """(program, interpreter) of a JOB dict: the log's keys, else derived; interpreter
    "" when the program is no interpreter's script or module."""
    prog = job.get("program")
    if isinstance(prog, str) and prog:
        interp = job.get("interpreter")
        return prog, interp if isinstance(interp, str) else ""
    exe = str(job.get("exe") or "")
    cmd = job.get("cmdline")
    if exe and is_interpreter(exe) and isinstance(cmd, str) and cmd:
        script, _ = script_of(exe, cmd.split(" "))
        if script:
            return script, exe
    return exe or "?", ""


def name(job: dict) -> str:
    """The program's short name: a script's or executable's file name, a module's name."""
    return os.path.basename(program_of(job)[0])
