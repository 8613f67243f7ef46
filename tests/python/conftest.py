"""Test this checkout's Python package, whichever copy pip installed last."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reports"))
