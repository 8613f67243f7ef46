#!/usr/bin/env python3
"""Per-call cost of the optional observers: call sites (IOCHAR_CALLSITES, sampled and
walking every call) and the trace (IOCHAR_TRACE), against bare and plain iochar runs
of bench/micro (bare and preloaded calls paired in each run); medians of the runs."""
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build"))
LIB = BUILD / "libiochar.so"
QUICK = "--quick" in sys.argv
# The trace buffer holds every call (calls past it are only counted: cheaper).
N = {"pwrite": 400_000, "pread": 400_000, "fwrite": 2_000_000, "stat": 200_000,
     "open_close": 100_000}
CONFIGS = [
    ("iochar", {}),
    ("+callsites", {"IOCHAR_CALLSITES": "1"}),
    ("+callsites/1", {"IOCHAR_CALLSITES": "1", "IOCHAR_CALLSITES_SAMPLE": "1"}),
    ("+trace", {"IOCHAR_TRACE": "1", "IOCHAR_TRACE_MEMORY": "256m"}),
]


def main():
    reps = 3 if QUICK else 7
    print("observer overhead, ns per call over bare (medians of runs; +x: extra vs iochar)")
    print(f"{'call':<12}{'bare':>10}" + "".join(f"{name:>14}" for name, _ in CONFIGS))
    with tempfile.TemporaryDirectory() as d:
        for op, n in N.items():
            n = n // 4 if QUICK else n
            runs = {name: [] for name, _ in CONFIGS}
            for _ in range(reps):
                for name, extra in CONFIGS:
                    runs[name].append(ab.once(op, n, LIB, d, extra))
            bare = statistics.median(b for r in runs.values() for b, _ in r)
            over = {k: statistics.median(t - b for b, t in r) for k, r in runs.items()}
            cells = []
            for name, _ in CONFIGS:
                x = over[name] - over["iochar"]
                cells.append(f"{over[name]:>+8.0f}" + (f" {x:+5.0f}" if name.startswith("+")
                                                      else "      "))
            print(f"{op:<12}{bare:>10.0f}" + "".join(f"{c:>14}" for c in cells))


if __name__ == "__main__":
    main()
