"""Long fuzz run of the log readers (the CI test runs a short one): every case through
the report tier, HTML and console scripts more often; crashing logs kept.

    python bench/fuzz_readers.py [--cases N] [--seed S] [--keep DIR]

Prints the counts as JSON and exits 1 when any case crashed (anything but LogError,
or a console script breaking its exit-status / one-line contract). Keep a crash as a
regression: add the change that causes it to tests/helpers/crashcorpus.py.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "reports"), str(ROOT / "tests" / "helpers")]

import readerfuzz  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    defaults = {"--cases": "50000", "--report-every": "1", "--html-every": "50",
                "--cli-every": "25", "--keep": "fuzz-crashes"}
    for k, v in defaults.items():
        if k not in args:
            args += [k, v]
    raise SystemExit(readerfuzz.main(args))
