"""Every command escapes a name the same way (iochar.safetext, the one escaper):
control characters, invisible and bidirectional marks, a backslash and bytes that
are not UTF-8 come out as the same escapes from iochar-report, -parser, -diff and
-db, each through a real process."""

import os
import subprocess
import sys

from iochar.db import cli as dbcli
from iochar.safetext import escape

# ESC sequence, newline, tab, DEL, a C1 control, right-to-left override, a line
# separator, a backslash, and (for the reader's commands) two bytes that are not UTF-8
CONTROL = "x\x1b[31m\nev\til\x7f\x85\u202e\u2028a\\b"
SHOWN = "x\\x1b[31m\\nev\\til\\x7f\\x85\\u202e\\u2028a\\\\b"


def _cli(mod, *args, cwd):
    p = subprocess.run([sys.executable, "-m", mod, *args], cwd=cwd, capture_output=True,
                       env=os.environ.copy())
    assert p.returncode == 2 or (mod == "iochar.db.cli" and p.returncode == 0), p.stderr
    return p.stderr.decode("utf-8")


def test_db_escapes_as_safetext():
    for s in (CONTROL, "ok", "caf\u00e9", "bad\udcff\udcfe", 12, 1.5):
        assert dbcli.escape(s) == escape(s)
    assert escape(CONTROL) == SHOWN
    assert dbcli.escape(None) == "-"  # a NULL in the store


def test_commands_show_a_bad_name_alike(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    name = CONTROL.encode() + b"\xff\xfe.iochar"
    (logs / os.fsdecode(name)).write_bytes(b"not a log")
    rel = "logs/" + os.fsdecode(name)
    want = "logs/" + SHOWN + "\\xff\\xfe.iochar: bad magic: not an iochar log\n"
    for prog, mod, args in (("iochar-report", "iochar.cli.report", [rel]),
                            ("iochar-parser", "iochar.cli.parser", [rel]),
                            ("iochar-diff", "iochar.cli.diff", [rel, rel])):
        assert _cli(mod, *args, cwd=tmp_path) == f"{prog}: error: {want}"
    # iochar-db stores a byte that is not UTF-8 as the text \xNN (extract.text_path):
    # every other character is shown as the other commands show it
    err = _cli("iochar.db.cli", "--store", "s", "ingest", "--jobs", "1", "logs", cwd=tmp_path)
    assert f"iochar-db: skipped bad log: logs/{SHOWN}\\\\xff\\\\xfe.iochar: bad magic" in err
    assert "\x1b" not in err and "\u202e" not in err
