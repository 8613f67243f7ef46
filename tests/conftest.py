"""Test this checkout's Python package, whichever copy pip installed last, and let every
test import the shared helpers of tests/helpers/ (tool, report_frames, logdata...)."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "helpers"))
sys.path.insert(0, str(TESTS.parent / "reports"))
