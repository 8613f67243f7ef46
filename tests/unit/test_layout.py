"""Tests stay in their two trees: nothing is left in the old layout (a branch that
still adds tests/python/* or tests/*.c is re-homed by scripts/rehome_tests)."""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
RUNS = re.compile(r"^from (tool|iolib) import|^import (tool|iolib)\b", re.M)


def test_nothing_in_the_old_layout():
    left = [p.name for p in TESTS.glob("python/*")] + \
        [p.name for p in TESTS.glob("*") if p.suffix in (".c", ".h", ".f90", ".py")
         and p.name != "conftest.py"]
    assert not left, f"run scripts/rehome_tests: {left}"


def test_unit_tests_run_no_program_under_the_tool():
    runs = [p.name for p in (TESTS / "unit").glob("test_*.py") if RUNS.search(p.read_text())]
    assert not runs, f"these run workloads: move them to tests/integration/: {runs}"
