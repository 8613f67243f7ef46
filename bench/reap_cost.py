#!/usr/bin/env python3
"""What a tooled parent's waitpid costs when the child it reaps left a live file
(runtime/reap.c: the log made from it, the file removed), against a child that wrote its
own log (the scan of the key directory only) and a bare run (no tool).  The children of
tests/integration/fork_workload.c each make N files (one open, write, close), then end
(exit, _exit in a signal handler, SIGKILL); the parent times its waitpid after the child
is known to have ended (waitid WNOWAIT), so the figure is the tool's work alone.  Also the
same with OTHERS stale live files of other processes in the key directory (each one's
header is read).  `bench/reap_cost.py [--quick]`; medians of 4 children x REPEAT runs."""
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
W = BUILD / "tests" / "fork_workload"
QUICK = "--quick" in sys.argv
REPEAT = 1 if QUICK else 5


def reaps_us(d, live, nfiles, end, preload):
    e = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    e.pop("LD_PRELOAD", None)
    if preload:
        e.update(LD_PRELOAD=str(LIB), IOCHAR_LOGDIR=d, IOCHAR_LIVEDIR=live)
    p = subprocess.run([str(W), "children", d, "4", str(nfiles), "0", end], env=e, cwd=d,
                       capture_output=True, text=True, timeout=600)
    if p.returncode:
        sys.exit(f"fork_workload failed: {p.stderr[-2000:]}")
    for x in Path(d).iterdir():
        if x.is_file():
            x.unlink()
    return [float(t) for t in re.findall(r"reap \d+ us ([0-9.]+)", p.stdout)]


def stale(live, d, n):
    """n live files of dead processes (another parent's children) in d's key directory."""
    sys.path.insert(0, str(ROOT / "reports"))
    from iochar import livedir
    key = Path(live) / f"iochar-{os.getuid()}" / livedir.key_of(d)
    for x in (Path(live), key.parent, key):  # private, as the runtime wants them
        x.mkdir(exist_ok=True, mode=0o700)
        x.chmod(0o700)
    head = bytearray(20480)
    head[0:8] = b"IOCHARLV"
    head[32:36] = (2 ** 22 - 1).to_bytes(4, "little")  # a pid no process has here
    for i in range(n):
        (key / f".other_{i}.iochar.{i:016x}.live").write_bytes(head)


def main():
    if not W.exists():
        sys.exit(f"{W} missing: build with `ninja -C {BUILD}`")
    print(f"{'files':>6} {'others':>6} {'end':>8} {'bare_us':>8} {'tool_us':>9}", flush=True)
    for nfiles in (50, 2000):
        for others in (0, 100):
            for end in ("exit", "handler", "kill"):
                bare, tool = [], []
                with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as lv:
                    if others:
                        stale(lv, d, others)
                    for _ in range(REPEAT):  # alternate: the machine is noisy
                        bare += reaps_us(d, lv, nfiles, end, False)
                        tool += reaps_us(d, lv, nfiles, end, True)
                print(f"{nfiles:>6} {others:>6} {end:>8} {statistics.median(bare):>8.1f} "
                      f"{statistics.median(tool):>9.1f}", flush=True)


if __name__ == "__main__":
    main()
