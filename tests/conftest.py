"""Test this checkout's Python package, whichever copy pip installed last, and let every
test import the shared helpers of tests/helpers/ (tool, report_frames, logdata...)."""

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "helpers"))
sys.path.insert(0, str(TESTS.parent / "reports"))


@pytest.fixture(autouse=True, scope="session")
def no_live_files_left(tmp_path_factory, request):
    """The suite leaves no live file in the node's live directory (/dev/shm/iochar-<uid>/,
    docs/deploying.md), which outlives the tests' directories. Processes killed by tests,
    or ended by _exit in a signal handler, leave theirs by design (the epilogue's, or the
    next reader's, to recover): at the end, those of this session's directories (their log
    destination or command line names one; another session's never do) go, and the run
    says how many there were; one whose process still runs is a test that left a process
    behind, and fails the session."""
    yield
    from iochar import live, livedir
    mine = str(tmp_path_factory.getbasetemp().resolve()) + "/"
    removed, running = [], []
    for f in (livedir.live_dir() / f"iochar-{os.getuid()}").glob("*/.*.live"):
        h = live.header_of(f)
        if h is None or not (mine in h["cmdline"] or os.fsdecode(h["log_dest"]).startswith(mine)):
            continue
        if livedir.alive(h):
            running.append(f"{f} (pid {h['pid']})")
            continue
        f.unlink(missing_ok=True)
        removed.append(f)
        try:
            f.parent.rmdir()
        except OSError:
            pass
    out = request.config.pluginmanager.get_plugin("terminalreporter")
    if removed and out:
        out.write_line(f"iochar: removed {len(removed)} live file(s) of this session's ended "
                       "processes from the node's live directory")
    assert not running, f"processes of this session still running: {running}"
