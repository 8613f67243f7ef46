"""Test this checkout's Python package, whichever copy pip installed last, and let every
test import the shared helpers of tests/helpers/ (tool, report_frames, logdata...)."""

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "helpers"))
sys.path.insert(0, str(TESTS.parent / "reports"))
# and child processes too (iochar-db's forkserver pool, CLIs run as subprocesses): the
# forkserver would otherwise import the editable install's copy (main's checkout)
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(TESTS.parent / "reports"), *filter(None, [os.environ.get("PYTHONPATH")])])


@pytest.fixture(autouse=True, scope="session")
def no_live_files_left(tmp_path_factory):
    """Processes killed by tests, or whose log could not be written (by design: the
    epilogue's to recover), leave live files in the node's live directory
    (/dev/shm/iochar-<uid>/, docs/deploying.md), which outlives the tests' directories:
    at the end, those of programs this session ran on its directories go (their command
    lines name them; another session's never do)."""
    yield
    from iochar import live, livedir
    mine = str(tmp_path_factory.getbasetemp().resolve()) + "/"
    for f in (livedir.live_dir() / f"iochar-{os.getuid()}").glob("*/.*.live"):
        h = live.header_of(f)
        if h is not None and mine in h["cmdline"] and not livedir.alive(h):
            f.unlink(missing_ok=True)
            try:
                f.parent.rmdir()
            except OSError:
                pass
