#!/usr/bin/env python3
"""A/B: per-call overhead of two builds of the library, against the same bare
runs, in one alternating loop (bare, A, B, bare, A, B...), medians compared.

    python3 bench/ab.py BEFORE/libiochar.so AFTER/libiochar.so [--quick]
"""
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build"))
MICRO = BUILD / "bench" / "micro"
OPS = [("pwrite", 2_000_000), ("pread", 2_000_000), ("fwrite", 20_000_000),
       ("fread", 20_000_000), ("fprintf", 5_000_000), ("open_close", 300_000),
       ("stat", 1_000_000)]


def once(op, n, lib, d):
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.pop("LD_PRELOAD", None)
    if lib:
        env.update(LD_PRELOAD=str(lib), IOCHAR_LOGDIR=d)
    out = subprocess.run([str(MICRO), op, str(n), d], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip())


def main():
    a, b = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    reps = 3 if quick else 7
    print(f"{'call':<12}{'bare ns':>9}{'A extra':>9}{'B extra':>9}")
    with tempfile.TemporaryDirectory() as d:
        for op, n in OPS:
            n = n // 5 if quick else n
            runs = {None: [], a: [], b: []}
            for _ in range(reps):
                for lib in runs:
                    runs[lib].append(once(op, n, lib, d))
            bare = statistics.median(runs[None])
            print(f"{op:<12}{bare:>9.1f}{statistics.median(runs[a]) - bare:>9.1f}"
                  f"{statistics.median(runs[b]) - bare:>9.1f}", flush=True)
            for f in Path(d).glob("*.iochar"):
                f.unlink()


if __name__ == "__main__":
    main()
