#!/usr/bin/env python3
"""Side by side: bare / iochar / Darshan, every figure of issue 20's table.

    IOCHAR_BENCH_DARSHAN=/work/baseline/darshan IOCHAR_BENCH_IOR=/work/baseline/ior \\
        python3 bench/vs_darshan.py [--quick] [--only micro,whole,callgrind,fixed,ior,mdtest,logs,shutdown,report]

IOCHAR_BENCH_DARSHAN is a Darshan install prefix (lib/libdarshan.so,
bin/darshan-parser), IOCHAR_BENCH_IOR an IOR install prefix (bin/ior,
bin/mdtest); docs/benchmarks.md says how to build both from their public
releases.  Without the first the Darshan column is left out; without the
second the IOR and mdtest rows are.  The tools alternate run by run (bare,
iochar, Darshan, bare, ...) so the machine's drift hits all alike; medians.
Darshan's record limits are raised (DARSHAN_CONFIG_PATH with MAX_RECORDS,
DARSHAN_MODMEM, DARSHAN_NAMEMEM) so it keeps every file, as iochar does.
No Darshan code is called: it is only preloaded into the same programs."""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build"))
DARSHAN = os.environ.get("IOCHAR_BENCH_DARSHAN")
IOR = os.environ.get("IOCHAR_BENCH_IOR")
LIB = os.environ.get("IOCHAR_BENCH_LIB", str(BUILD / "libiochar.so"))  # another build's
QUICK = "--quick" in sys.argv
ONLY = set()
for i, a in enumerate(sys.argv):
    if a == "--only" and i + 1 < len(sys.argv):
        ONLY = set(sys.argv[i + 1].split(","))
REPS = 3 if QUICK else 7
# A 2-rank IOR run lasts ~0.1 s and moves +-10% with the machine's other
# work: its rows take more alternating runs (median, and the quartiles of
# the per-rep differences beside it) to resolve a few percent.
IOR_REPS = 5 if QUICK else 25
TOOLS = ["bare", "iochar"] + (["darshan"] if DARSHAN else [])
MICRO_OPS = [("pwrite", 2_000_000), ("pread", 2_000_000), ("fwrite", 20_000_000),
             ("open_close", 300_000), ("stat", 1_000_000), ("stat_new", 20_000),
             ("open_close_new", 20_000)]
# *_new: at most 20,000 names, so that every record fits the default memory
# bound (32 MiB); past it files are folded, a cheaper path than a new record.


def tool_env(tool, d, nonmpi=False):
    """The environment of one run: nothing preloaded, iochar, or Darshan with
    its limits raised; logs go to d."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("IOCHAR_", "DARSHAN_"))}
    e.pop("LD_PRELOAD", None)
    if tool == "iochar":
        e.update(LD_PRELOAD=LIB, IOCHAR_LOGDIR=d)
    elif tool == "darshan":
        cfg = Path(d) / "darshan.conf"
        if not cfg.exists():
            cfg.write_text("MAX_RECORDS 400000 POSIX,MPI-IO,STDIO\n")
        e.update(LD_PRELOAD=f"{DARSHAN}/lib/libdarshan.so", DARSHAN_LOGPATH=d,
                 DARSHAN_CONFIG_PATH=str(cfg), DARSHAN_MODMEM="1024", DARSHAN_NAMEMEM="256")
        if nonmpi:
            e["DARSHAN_ENABLE_NONMPI"] = "1"
    return e


def logs(d):
    return [p for p in Path(d).iterdir() if p.suffix in (".iochar", ".darshan")]


def clear_logs(d):
    for p in logs(d):
        p.unlink()


def rotation(fn, reps=REPS):
    """{tool: [fn(tool) for each rep]}, tools alternating within each rep."""
    out = {t: [] for t in TOOLS}
    for _ in range(reps):
        for t in TOOLS:
            out[t].append(fn(t))
    return out


def pct(tool_s, bare_s):
    return f"{(tool_s / bare_s - 1) * 100:+.1f}%"


def ratio(a, b):
    return f"{a / b:.2f}x" if b else "-"


def header(title, cols):
    print(f"\n{title}")
    print("".join(f"{c:>16}" if i else f"{c:<34}" for i, c in enumerate(cols)), flush=True)


def row(cells):
    print("".join(f"{c:>16}" if i else f"{c:<34}" for i, c in enumerate(cells)), flush=True)


def cols3(extra=()):
    return ["figure", "bare"] + [t for t in TOOLS if t != "bare"] + list(extra)


# -- per-call ns: bench/micro pairs libc and preloaded calls in one process --
def micro(d):
    header("per call, ns (bench/micro: bare and preloaded batches in one process, best "
           "batch; median of per-run differences; *_new: best of batch, whole loop below)",
           cols3(["iochar/darshan"] if DARSHAN else []))
    tools = [t for t in TOOLS if t != "bare"]
    for op, n in MICRO_OPS:
        n = n // 5 if QUICK else n
        res = {t: [] for t in tools}
        flt = {t: [] for t in tools}  # minor page faults per call: bare, preloaded
        for _ in range(REPS):
            for t in tools:
                out = subprocess.run([str(BUILD / "bench" / "micro"), op, str(n), d],
                                     env=tool_env(t, d, nonmpi=True), capture_output=True,
                                     text=True, check=True).stdout.split()
                res[t].append((float(out[0]), float(out[1])))
                if len(out) >= 4:
                    flt[t].append((float(out[2]), float(out[3])))
                clear_logs(d)
        bare = statistics.median(b for r in res.values() for b, _ in r)
        extra = {t: statistics.median(x - b for b, x in res[t]) for t in tools}
        label = f"{op} 8 B" if op in ("pwrite", "pread", "fwrite") else op
        cells = [label + (" (best batch)" if op.endswith("_new") else ""), f"{bare:.1f}"]
        cells += [f"{extra[t]:+.1f}" for t in tools]
        if DARSHAN:
            cells.append(ratio(extra["iochar"], extra["darshan"]))
        row(cells)
        if op.endswith("_new") and all(flt.values()):
            # a new file's cost on a virtual machine is mostly fresh pages
            # (1-4 us each): a figure the machine's load does not move
            fb = statistics.median(b for r in flt.values() for b, _ in r)
            cells = [f"{op} faults/call", f"{fb:.3f}"]
            cells += [f"{statistics.median(x - b for b, x in flt[t]):+.3f}" for t in tools]
            if DARSHAN:
                cells.append("-")
            row(cells)


# -- new names, whole loop: what an application sees --
WHOLE_NAMES = 10_000


def whole_loop(d):
    """One process makes WHOLE_NAMES first calls on names it has not seen, timed as
    one loop (bench/micro OP N DIR whole: every periodic cost inside, process start,
    name creation and exit outside); separate processes alternate bare / iochar /
    Darshan, medians.  Faults: minor page faults per name over the loop (getrusage:
    what the tool's memory costs, whatever the machine's load)."""
    n = WHOLE_NAMES // 5 if QUICK else WHOLE_NAMES
    header(f"new names, whole loop of {n:,} (bench/micro ... whole; median of {REPS} "
           "alternating processes)", cols3(["iochar/darshan"] if DARSHAN else []))
    for op in ("stat_new", "open_close_new"):
        def once(t, op=op):
            out = subprocess.run([str(BUILD / "bench" / "micro"), op, str(n), d, "whole"],
                                 env=tool_env(t, d, nonmpi=True), capture_output=True,
                                 text=True, check=True).stdout.split()
            clear_logs(d)
            return float(out[0]), float(out[1])
        r = rotation(once)
        ns = {t: statistics.median(x for x, _ in v) for t, v in r.items()}
        fl = {t: statistics.median(f for _, f in v) for t, v in r.items()}
        tools = [t for t in TOOLS if t != "bare"]
        cells = [f"{op} ns/name", f"{ns['bare']:.0f}"]
        cells += [f"{ns[t] - ns['bare']:+.0f} ({pct(ns[t], ns['bare'])})" for t in tools]
        if DARSHAN:
            cells.append(ratio(ns["iochar"] - ns["bare"], ns["darshan"] - ns["bare"]))
        row(cells)
        cells = [f"{op} faults/name", f"{fl['bare']:.3f}"]
        cells += [f"{fl[t] - fl['bare']:+.3f}" for t in tools]
        if DARSHAN:
            cells.append("-")
        row(cells)


# -- callgrind: instructions are load-independent --
def instructions(op, n, tool, d):
    """OP+idle: with an idle second thread in the process (as under MPICH)."""
    out = Path(d) / "cg.out"
    env = tool_env(tool, d, nonmpi=True)
    if op.endswith("+idle"):
        op, env = op[:-5], dict(env, MICRO_IDLE_THREAD="1")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--toggle-collect=batch",
           str(BUILD / "bench" / "micro"), op, str(n), d]
    subprocess.run(cmd, env=env, capture_output=True, check=True)
    m = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    out.unlink()
    clear_logs(d)
    return int(m.group(1))


def callgrind_extra(op, tool, d, n1=8_000, n2=48_000):
    """Marginal instructions of one preloaded call over one libc call.  micro
    makes half its calls through libc and half through the preload, so the
    preloaded run's slope over the bare run's is x/2 per call."""
    if tool == "bare":
        return 0.0
    slope = (instructions(op, n2, tool, d) - instructions(op, n1, tool, d)) / (n2 - n1)
    base = (instructions(op, n2, "bare", d) - instructions(op, n1, "bare", d)) / (n2 - n1)
    return 2 * (slope - base)


def callgrind(d):
    import shutil
    if not shutil.which("valgrind"):
        print("\ncallgrind: valgrind not installed (apt-get install valgrind); skipped")
        return
    header("extra instructions per call (callgrind, marginal: the slope between two N; "
           "*_new: first call on a name, existing files)",
           cols3(["iochar/darshan"] if DARSHAN else []))
    for op in ["pwrite", "pread", "seek_write", "seek_read", "fwrite", "open_close", "stat",
               "stat_new", "open_close_new", "pwrite+idle", "seek_write+idle", "seek_read+idle"]:
        n1, n2 = (4_000, 16_000) if op.endswith("_new") else (8_000, 48_000)
        x = {t: callgrind_extra(op, t, d, n1, n2) for t in TOOLS if t != "bare"}
        cells = [op, "-"] + [f"{v:+.0f}" for v in x.values()]
        if DARSHAN:
            cells.append(ratio(x["iochar"], x["darshan"]))
        row(cells)


# -- whole runs under mpiexec --
def wall(cmd, env, cwd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    t = time.perf_counter() - t0
    if p.returncode:
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {p.stderr[-1500:]}")
    return t, p.stdout


def ior_cmd(n, d, shared, block="16m"):
    return ["mpiexec.mpich", "-n", str(n), f"{IOR}/bin/ior", "-a", "POSIX", "-t", "1k",
            "-b", block, "-w", "-r", "-o", f"{d}/ior.dat"] + ([] if shared else ["-F"])


def ior(d):
    header("IOR 1 KiB, 2 ranks, write + read, whole run (wall of mpiexec), s",
           cols3(["iochar/darshan"] if DARSHAN else []))
    for label, shared in [("IOR 1 KiB file per process", False), ("IOR 1 KiB shared file", True)]:
        block = "4m" if QUICK else "16m"

        def once(t, shared=shared, block=block):
            s, _ = wall(ior_cmd(2, d, shared, block), tool_env(t, d), d)
            clear_logs(d)
            return s
        r = rotation(once, IOR_REPS)
        med = {t: statistics.median(v) for t, v in r.items()}
        cells = [label, f"{med['bare']:.3f}"]
        cells += [pct(med[t], med["bare"]) for t in TOOLS if t != "bare"]
        if DARSHAN:
            cells.append(ratio(med["iochar"] - med["bare"], med["darshan"] - med["bare"]))
        row(cells)
        for t in TOOLS:
            if t == "bare":
                continue
            # Paired: each rep's tool run against the bare run just before it.
            q = statistics.quantiles([(a / b - 1) * 100 for a, b in zip(r[t], r["bare"])], n=4)
            row([f"  {t}: per-rep quartiles", f"{q[0]:+.1f}%", f"{q[1]:+.1f}%", f"{q[2]:+.1f}%"])


def fixed(d):
    """The per-job fixed cost, load-independent: callgrind's instruction
    count of a whole 1-rank IOR (an MPI singleton: load, MPI_Init, 16 writes
    and 16 reads of 1 KiB, MPI_Finalize with the log write) minus the bare
    run's."""
    import shutil
    if not shutil.which("valgrind"):
        print("\nfixed cost: valgrind not installed; skipped")
        return
    header("fixed cost per job: instructions of a 1-rank IOR 1 KiB x 32 (callgrind, whole "
           "process)", cols3(["iochar/darshan"] if DARSHAN else []))
    out = Path(d) / "cg.fixed"
    n = {}
    for t in TOOLS:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"{IOR}/bin/ior",
               "-a", "POSIX", "-t", "1k", "-b", "16k", "-w", "-r", "-o", f"{d}/ior.dat", "-F"]
        subprocess.run(cmd, env=tool_env(t, d), cwd=d, capture_output=True, check=True)
        n[t] = int(re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M).group(1))
        out.unlink()
        clear_logs(d)
    cells = ["instructions", f"{n['bare']:,}"]
    cells += [f"+{n[t] - n['bare']:,}" for t in TOOLS if t != "bare"]
    if DARSHAN:
        cells.append(ratio(n["iochar"] - n["bare"], n["darshan"] - n["bare"]))
    row(cells)


def mdtest_rate(out, op):
    m = re.search(rf"File {op}\s+([0-9.]+)", out)
    return float(m.group(1))


def mdtest(d):
    ranks, n = 2, 2_000 if QUICK else 10_000
    md = f"{d}/md"
    os.mkdir(md)
    base = ["mpiexec.mpich", "-n", str(ranks), f"{IOR}/bin/mdtest", "-F", "-n", str(n),
            "-u", "-d", md]
    wall(base + ["-C"], tool_env("bare", d), d)
    header(f"mdtest, {ranks} ranks x {n:,} existing files, ops/s (overhead = "
           "bare rate / tool rate - 1)", cols3(["iochar/darshan"] if DARSHAN else []))
    for label, flag, op in [("mdtest stat only", "-T", "stat"),
                            ("mdtest open+close only", "-E", "read")]:
        def once(t, flag=flag, op=op):
            _, out = wall(base + [flag], tool_env(t, d), d)
            clear_logs(d)
            return mdtest_rate(out, op)
        r = rotation(once)
        med = {t: statistics.median(v) for t, v in r.items()}
        cells = [label, f"{med['bare']:,.0f}"]
        cells += [pct(med["bare"], med[t]) for t in TOOLS if t != "bare"]
        if DARSHAN:
            cells.append(ratio(med["bare"] / med["iochar"] - 1, med["bare"] / med["darshan"] - 1))
        row(cells)
    wall(base + ["-r"], tool_env("bare", d), d)


# -- log bytes --
def log_bytes(cmd, tool, d):
    clear_logs(d)
    wall(cmd, tool_env(tool, d), d)
    ls = logs(d)
    if len(ls) != 1:
        sys.exit(f"expected one log from {tool}, found {[p.name for p in ls]}")
    size = ls[0].stat().st_size
    clear_logs(d)
    return size


def log_sizes(d):
    tools = [t for t in TOOLS if t != "bare"]
    header("log bytes", ["case"] + tools + (["iochar/darshan"] if DARSHAN else []))
    cases = [(f"IOR 1 KiB fpp, {n} ranks", ior_cmd(n, d, False, "1m")) for n in (2, 4, 8, 16)]
    cases += [(f"IOR 1 KiB shared, {n} ranks", ior_cmd(n, d, True, "1m")) for n in (2, 16)]
    for ranks, n in [(4, 2000), (16, 1000)]:
        cases.append((f"mdtest {ranks} x {n}", [
            "mpiexec.mpich", "-n", str(ranks), f"{IOR}/bin/mdtest", "-F", "-n", str(n), "-u",
            "-d", f"{d}/mdl"]))
    for label, cmd in cases:
        if QUICK and "16" in label:
            continue
        size = {t: log_bytes(cmd, t, d) for t in tools}
        cells = [label] + [f"{size[t]:,}" for t in tools]
        if DARSHAN:
            cells.append(ratio(size["iochar"], size["darshan"]))
        row(cells)


# -- shutdown --
def shutdown(d):
    many = BUILD / "tests" / "mpi_many"
    ranks, files = 16, (100 if QUICK else 1000)
    tools = [t for t in TOOLS if t != "bare"]
    header(f"shutdown: MPI_Finalize with the tool minus without, {ranks} ranks x {files} "
           "files (tests/mpi_many), s", ["figure", "bare finalize"] + tools)

    def once(t):
        _, out = wall(["mpiexec.mpich", "-n", str(ranks), str(many), str(files)],
                      tool_env(t, d), d)
        clear_logs(d)
        return float(re.search(r"finalize_s ([0-9.]+)", out).group(1))
    r = rotation(once, 1 if QUICK else 3)
    med = {t: statistics.median(v) for t, v in r.items()}
    row(["shutdown", f"{med['bare']:.3f}"] + [f"{med[t] - med['bare']:.3f}" for t in tools])
    # Where ranks outnumber cores each wait for collectives costs a scheduling
    # round: how many the tool's shutdown issues, in how many waits
    # (IOCHAR_TIMING=1 prints them).
    env = dict(tool_env("iochar", d), IOCHAR_TIMING="1")
    for f in (10, files):
        p = subprocess.run(["mpiexec.mpich", "-n", str(ranks), str(many), str(f)], env=env,
                           cwd=d, capture_output=True, text=True)
        clear_logs(d)
        m = re.search(r"(\d+) collectives(?: in (\d+) waits)?", p.stderr)
        n = "?" if not m else m.group(1) + (f" in {m.group(2)} waits" if m.group(2) else "")
        row([f"iochar collectives, {ranks} x {f} files", n])


def report_speed(d):
    header("report speed (bench/report_speed.py)", ["figure"])
    env = dict(os.environ, PYTHONPATH=str(ROOT / "reports"))  # this tree's reader
    subprocess.run([sys.executable, str(ROOT / "bench" / "report_speed.py")]
                   + (["--quick"] if QUICK else []), check=False, env=env)


SECTIONS = [("micro", micro), ("whole", whole_loop), ("callgrind", callgrind), ("fixed", fixed),
            ("ior", ior), ("mdtest", mdtest), ("logs", log_sizes), ("shutdown", shutdown),
            ("report", report_speed)]


def main():
    print(f"tools: {', '.join(TOOLS)}; iochar {LIB}"
          + (f"; Darshan {DARSHAN}" if DARSHAN else " (IOCHAR_BENCH_DARSHAN unset)")
          + ("" if IOR else "; IOCHAR_BENCH_IOR unset: no IOR/mdtest rows"))
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, fn in SECTIONS:
        if ONLY and name not in ONLY:
            continue
        if name in ("fixed", "ior", "mdtest", "logs") and not IOR:
            continue
        with tempfile.TemporaryDirectory() as d:
            fn(d)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
