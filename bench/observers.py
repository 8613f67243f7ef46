#!/usr/bin/env python3
"""Per-call cost of the optional observers: call sites (IOCHAR_CALLSITES, sampled and
walking every call) and the trace (IOCHAR_TRACE), against bare and plain iochar runs
of bench/micro.  Runs alternate and medians are compared (the machine is noisy)."""
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build"))
LIB, MICRO = BUILD / "libiochar.so", BUILD / "bench" / "micro"
QUICK = "--quick" in sys.argv
# The trace buffer holds every call (calls past it are only counted: cheaper).
N = {"pwrite": 400_000, "pread": 400_000, "fwrite": 2_000_000, "stat": 200_000,
     "open_close": 100_000}
CONFIGS = [
    ("bare", None),
    ("iochar", {}),
    ("+callsites", {"IOCHAR_CALLSITES": "1"}),
    ("+callsites/1", {"IOCHAR_CALLSITES": "1", "IOCHAR_CALLSITES_SAMPLE": "1"}),
    ("+trace", {"IOCHAR_TRACE": "1", "IOCHAR_TRACE_MEMORY": "256m"}),
]


def ns_per_call(op, n, extra, d):
    e = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    e.pop("LD_PRELOAD", None)
    if extra is not None:
        e.update(LD_PRELOAD=str(LIB), IOCHAR_LOGDIR=d, **extra)
    out = subprocess.run([str(MICRO), op, str(n), d], env=e, capture_output=True, text=True,
                         check=True)
    for f in Path(d).glob("*.iochar"):
        f.unlink()
    return float(out.stdout.strip())


def main():
    reps = 3 if QUICK else 7
    print("observer overhead, ns per call (medians of alternating runs; extra vs iochar)")
    print(f"{'call':<12}" + "".join(f"{name:>14}" for name, _ in CONFIGS))
    with tempfile.TemporaryDirectory() as d:
        for op, n in N.items():
            n = n // 4 if QUICK else n
            runs = {name: [] for name, _ in CONFIGS}
            for _ in range(reps):
                for name, extra in CONFIGS:
                    runs[name].append(ns_per_call(op, n, extra, d))
            med = {k: statistics.median(v) for k, v in runs.items()}
            cells = []
            for name, _ in CONFIGS:
                x = med[name] - med["iochar"]
                cells.append(f"{med[name]:>8.0f}" + (f" {x:+5.0f}" if name.startswith("+")
                                                     else "      "))
            print(f"{op:<12}" + "".join(f"{c:>14}" for c in cells))


if __name__ == "__main__":
    main()
