#!/usr/bin/env python3
"""IOR-like wall-time overhead: bare vs preloaded runs of bench/ior, alternated,
medians compared.  2 ranks (the machine has 2 cores)."""
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build"))
IOR = BUILD / "bench" / "ior"
QUICK = "--quick" in sys.argv
CASES = [  # (label, args)
    ("posix fpp 1KiB", ["-a", "posix", "-F", "-t", "1024", "-b", str(32 << 20)]),
    ("posix fpp 64KiB", ["-a", "posix", "-F", "-t", "65536", "-b", str(512 << 20)]),
    ("posix shared 64KiB", ["-a", "posix", "-t", "65536", "-b", str(512 << 20)]),
    ("mpiio shared 1KiB", ["-a", "mpiio", "-t", "1024", "-b", str(16 << 20)]),
    ("mpiio fpp 64KiB", ["-a", "mpiio", "-F", "-t", "65536", "-b", str(512 << 20)]),
]


def once(args, preload, d):
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = str(BUILD / "libiochar.so")
        env["IOCHAR_LOGDIR"] = d
    out = subprocess.run(["mpiexec.mpich", "-n", "2", str(IOR), *args, "-o", f"{d}/ior.dat"],
                         env=env, capture_output=True, text=True, check=True, cwd=d)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    reps = 3 if QUICK else 7
    print("IOR-like, 2 ranks, write+read (medians of alternating runs)")
    print(f"{'case':<22}{'bare s':>10}{'iochar s':>11}{'overhead':>10}")
    for label, args in CASES:
        with tempfile.TemporaryDirectory() as d:
            bare, tool = [], []
            for _ in range(reps):
                bare.append(once(args, False, d))
                tool.append(once(args, True, d))
            b, t = statistics.median(bare), statistics.median(tool)
            print(f"{label:<22}{b:>10.3f}{t:>11.3f}{(t / b - 1) * 100:>9.1f}%")


if __name__ == "__main__":
    main()
