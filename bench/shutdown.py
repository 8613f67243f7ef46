#!/usr/bin/env python3
"""MPI shutdown benchmark: time MPI_Finalize takes with the tool (reduction,
compression, collective write) minus without it, against ranks (2..16) and
files per rank (10..10,000), and the log's bytes per record.  Uses
tests/integration/mpi_many.c (each rank: N private files, plus one POSIX and one MPI-IO file
shared by all).  `bench/shutdown.py [--quick]`; MPICH by default."""
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build"))
LIB = BUILD / "libiochar.so"
MANY = BUILD / "tests" / "mpi_many"
QUICK = "--quick" in sys.argv
RANKS = [2, 4, 8, 16]
FILES = [10, 100, 1000, 10000]
REPEAT = 1 if QUICK else 3


def finalize_s(n, files, preload, d):
    e = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    e.pop("LD_PRELOAD", None)
    if preload:
        e["LD_PRELOAD"] = str(LIB)
        e["IOCHAR_LOGDIR"] = d
    p = subprocess.run(["mpiexec.mpich", "-n", str(n), str(MANY), str(files)], env=e,
                       cwd=d, capture_output=True, text=True, timeout=900)
    if p.returncode:
        sys.exit(f"mpi_many failed: {p.stderr[-2000:]}")
    return float(re.search(r"finalize_s ([0-9.]+)", p.stdout).group(1))


def main():
    if not MANY.exists():
        sys.exit(f"{MANY} missing: build with `ninja -C {BUILD}`")
    rows = []
    print(f"{'ranks':>5} {'files/rank':>10} {'records':>8} {'shutdown_s':>10} "
          f"{'bare_s':>8} {'log_bytes':>10} {'bytes/rec':>9}", flush=True)
    for n in RANKS[:2] if QUICK else RANKS:
        for f in FILES[:3] if QUICK else FILES:
            with tempfile.TemporaryDirectory() as d:
                tool, bare = [], []
                for _ in range(REPEAT):  # alternate: the machine is noisy
                    bare.append(finalize_s(n, f, False, d))
                    for x in Path(d).glob("*.iochar"):
                        x.unlink()
                    tool.append(finalize_s(n, f, True, d))
                    logs = list(Path(d).glob("*.iochar"))
                    size = logs[0].stat().st_size
                    for x in logs:
                        x.unlink()
            t, b = statistics.median(tool), statistics.median(bare)
            recs = n * (f + 2) + 2  # private POSIX + shared POSIX, MPIIO, (rank -1 rows)
            rows.append((n, f, recs, t - b, b, size))
            print(f"{n:>5} {f:>10} {recs:>8} {t - b:>10.3f} {b:>8.3f} {size:>10} "
                  f"{size / recs:>9.1f}", flush=True)
    return rows


if __name__ == "__main__":
    main()
