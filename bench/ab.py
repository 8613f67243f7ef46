#!/usr/bin/env python3
"""A/B: per-call overhead of two builds of the library, in alternating runs of
bench/micro (A, B, A, B...).  Each run measures bare and preloaded calls in one
process (see micro.c); the medians of the per-run differences are compared.

    python3 bench/ab.py BEFORE/libiochar.so AFTER/libiochar.so [--quick] [OP ...]
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
       ("stat", 1_000_000), ("seek_write", 1_000_000), ("seek_read", 1_000_000),
       ("seek_write_64k", 100_000),
       ("pwrite_8threads", 4_000_000)]


def once(op, n, lib, d, extra=None):
    """(bare ns, preloaded ns) per call from one run of bench/micro."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.pop("LD_PRELOAD", None)
    if lib:
        env.update(LD_PRELOAD=str(lib), IOCHAR_LOGDIR=d, **(extra or {}))
    out = subprocess.run([str(MICRO), op, str(n), d], env=env, capture_output=True,
                         text=True, check=True)
    for f in Path(d).glob("*.iochar"):
        f.unlink()
    bare, tool = out.stdout.split()[:2]  # then page faults per call (micro.c)
    return float(bare), float(tool)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    a, b, only = args[0], args[1], set(args[2:])
    quick = "--quick" in sys.argv
    reps = 3 if quick else 7
    print(f"{'call':<12}{'bare ns':>9}{'A extra':>9}{'B extra':>9}")
    with tempfile.TemporaryDirectory() as d:
        for op, n in OPS:
            if only and op not in only:
                continue
            n = n // 5 if quick else n
            runs = {a: [], b: []}
            for _ in range(reps):
                for lib in runs:
                    runs[lib].append(once(op, n, lib, d))
            bare = statistics.median(x for r in runs.values() for x, _ in r)
            ex = {lib: statistics.median(t - x for x, t in r) for lib, r in runs.items()}
            print(f"{op:<12}{bare:>9.1f}{ex[a]:>9.1f}{ex[b]:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
