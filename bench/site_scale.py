"""Site scale: N logs (default 10,000) into iochar-db, per engine and process count.

    PYTHONPATH=reports python bench/site_scale.py [N] [--real M] [--seeds DIR] [--dir WORK]
                                                  [--no-dask] [--procs 1,2] [--rounds R]

Two sets of logs: N generated ones (below), and M (default N) real-run logs, the tree
bench/real_tree.py makes from about 70 runs of the test workloads (kept in WORK/real
once made). Each set is ingested by the process pool and by Dask at every process
count of --procs, alternated R times (default 1), each ingest in a fresh process as
`iochar-db ingest` runs (its own start-up; no forkserver, cluster or environment left
by an earlier run). Each line gives wall time, logs/s, the CPU per log of the parsing
and of all processes (the ingest's process tree: parent, workers, forkserver;
load-insensitive, so the overheads of a parallel engine show even on a busy machine),
the parsing processes' peak RSS and the load; then the ratios of the medians (n
processes vs 1, Dask vs the pool). Then, for the default engine: store size,
re-ingest, the summary query.

Seeds are real logs of small runs of the test workloads under build/libiochar.so (made
here unless --seeds names a directory of logs). Each generated log is one seed with its
job id, program, user, start time and counters varied (ints scaled, times scaled),
written with iochar.writer: so the logs have real schemas and realistic shapes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

import iochar
from iochar.db import Store, ingest
from iochar.db.queries import summary
from iochar.log import OPS
from iochar.writer import encode_log

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
sys.path.insert(0, str(ROOT / "bench"))

import real_tree  # noqa: E402

SEED_RUNS = [  # (program, arguments, ranks): small runs of the test workloads
    *[("posix_workload", [m, "{out}"], 1) for m in ("consec", "strided", "bins", "topk", "meta")],
    ("stdio_workload", ["{out}"], 1),
    *[("advice_posix", [m], 1) for m in ("small", "random", "misaligned", "stdio", "meta",
                                        "reread", "fsync", "rmw", "seeks")],
    *[("advice_mpi", [m], 4) for m in ("good", "indep", "imbalance", "nocb")],
    ("mpi_workload", ["{out}"], 4),
]


def make_seeds(out: Path) -> list:
    """Run small test workloads under the tool; their logs are the seeds."""
    lib = BUILD / "libiochar.so"
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.update(IOCHAR_LOGDIR=str(logs), LD_PRELOAD=str(lib))
    for prog, args, ranks in SEED_RUNS:
        exe = BUILD / "tests" / prog
        if not exe.exists():
            continue
        work = Path(tempfile.mkdtemp(dir=out))  # each run's data files, then removed
        cmd = [str(exe), *(a.format(out=work) for a in args)]
        if ranks > 1:
            cmd = ["mpiexec.mpich", "-n", str(ranks), *cmd]
        subprocess.run(cmd, env=env, cwd=work, capture_output=True, timeout=300)
        shutil.rmtree(work, ignore_errors=True)
    return sorted(logs.glob("*.iochar"))


def _plain(rows) -> np.ndarray:
    """A records DataFrame -> a structured array with one field per column (no path):
    what writer.records_array takes, copied and scaled here without pandas."""
    cols = [c for c in rows.columns if c != "path"]
    arr = np.zeros(len(rows), dtype=[(c, rows[c].to_numpy().dtype) for c in cols])
    for c in cols:
        arr[c] = rows[c].to_numpy()
    return arr


def load_seed(path) -> dict:
    """What one seed log gives every log made from it: job, names, per-module records
    (and which counters scale with the data and which with time), ranks, series, mounts."""
    log = iochar.open(str(path))
    mods = {}
    for m in log.modules:
        schema = log.schema(m)
        # additive counters (SUM, BYTES, top-k counts) scale with how often the job
        # did its I/O; times (not timestamps) scale with how fast the storage was
        # (by op, and by name for logs whose schema marks a size or setting as SUM)
        ints = [n for n, op in schema if OPS[op] in ("SUM", "BYTES", "TOPK_CNT")
                and not NOT_ADDITIVE.search(n)]
        times = [n for n, op in schema if OPS[op] == "TIME"]
        mods[m] = (schema, _plain(log.records(m)), ints, times)
    ranks = {m: log.ranks(m).to_records(index=False) for m in log.modules if len(log.ranks(m))}
    series = {m: s for m in log.modules if (s := log.series(m)) is not None}
    return {"job": dict(log.job), "names": log.names, "modules": mods, "ranks": ranks,
            "series": series, "mounts": list(log.mounts.itertuples(index=False))}


NOT_ADDITIVE = re.compile(r"_(ACCESS|STRIDE)\d_(ACCESS|STRIDE)$|ALIGNMENT|_MAX_|_RANK$")
PROGRAMS = [f"/apps/{name}/bin/{name}" for name in
            ("lammps", "gromacs", "wrf", "nek5000", "vasp", "cp2k", "openfoam", "e3sm",
             "hacc", "nyx", "amrex_app", "qmcpack", "milc", "namd", "ior", "h5bench")]
T0 = 1_760_000_000.0  # mid-October 2025: the logs span 90 days from here


def vary(seed: dict, i: int, rng) -> tuple:
    """Log number i from a seed: its own job id, program, user, start and run time; its
    additive counters times a small whole number (the same I/O done that many times
    over, so sizes, patterns and histograms stay consistent) and its I/O times scaled by
    a log-normal factor."""
    exe = PROGRAMS[rng.integers(len(PROGRAMS))]
    start = T0 + float(rng.uniform(0, 90 * 86400))
    run = float(rng.uniform(10, 7200))
    user = int(rng.integers(40))
    job = dict(seed["job"], jobid=str(100000 + i), exe=exe,
               cmdline=f"{exe} -i input{i % 7}.in", user=f"user{user:02d}", uid=1000 + user,
               start_time=start, end_time=start + run)
    scale, tscale = int(rng.choice([1, 1, 1, 2, 2, 3, 4, 8])), float(rng.lognormal(0, 1))
    mods = {}
    for m, (schema, arr, ints, times) in seed["modules"].items():
        a = arr.copy()
        for n in ints:
            a[n] *= scale
        for n in times:
            a[n] = a[n] * tscale
        mods[m] = {"schema": schema, "records": a}
    ranks = {}
    for m, r in seed["ranks"].items():
        r = r.copy()
        for k in ("reads", "writes", "bytes_read", "bytes_written"):
            r[k] *= scale
        for k in ("read_time", "write_time", "meta_time"):
            r[k] = r[k] * tscale
        ranks[m] = r
    return job, mods, ranks


_SEEDS: dict = {}  # per worker process: each seed is read once, not once per part


def _generate_part(args) -> int:
    seed_paths, out, first, count = args
    seeds = [_SEEDS.setdefault(p, load_seed(p)) if p not in _SEEDS else _SEEDS[p]
             for p in seed_paths]
    rng = np.random.default_rng(first)  # per part: the same logs however many workers
    total = 0
    for i in range(first, first + count):
        seed = seeds[i % len(seeds)]
        job, mods, ranks = vary(seed, i, rng)
        day = Path(out) / f"day{int((job['start_time'] - T0) // (9 * 86400))}"
        p = day / f"{job['user']}_{Path(job['exe']).name}_id{job['jobid']}.iochar"
        data = encode_log(job, mods, seed["names"], seed["series"], ranks, seed["mounts"])
        p.write_bytes(data)
        total += len(data)
    return total


def generate(seeds: list, out: Path, n: int, workers: int = 2, part: int = 500) -> int:
    """n varied logs from the seeds under out/day0..day9, made by `workers` processes;
    returns their total size in bytes."""
    for k in range(10):  # ten directories, as a site would keep them
        (out / f"day{k}").mkdir(parents=True, exist_ok=True)
    jobs = [([str(s) for s in seeds], str(out), i, min(part, n - i)) for i in range(0, n, part)]
    with get_context("forkserver").Pool(workers) as pool:
        return sum(pool.map(_generate_part, jobs))


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t


def _children(pid: int) -> dict:
    """The live children of a process: pid -> the fields of /proc/PID/stat after its name."""
    out = {}
    for c in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{c}/stat").read_text()
        except OSError:
            continue
        f = stat[stat.rindex(")") + 2:].split()
        if int(f[1]) == pid:
            out[int(c)] = f
    return out


def tree_cpu() -> float:
    """CPU seconds of this process and every process it started: the reaped ones
    (RUSAGE_CHILDREN), and the live children (a forkserver) with what they reaped
    (their imports, and the workers forked from them)."""
    ru = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    live = sum(int(x) for f in _children(os.getpid()).values() for x in f[11:15])
    return sum(r.ru_utime + r.ru_stime for r in ru) + live / os.sysconf("SC_CLK_TCK")


def _run_one(spec: str) -> None:
    """One ingest in this fresh process (as `iochar-db ingest` runs: its own start-up,
    pool or cluster), printed as JSON for the bench's parent."""
    logs, store_dir, kw = json.loads(spec)
    shutil.rmtree(store_dir, ignore_errors=True)
    cpu0 = tree_cpu()  # this process's start and imports: the same for every engine
    st = ingest(Store(store_dir, create=True), [logs], progress=False, **kw)
    for _ in range(100):  # until the forkserver has reaped the exited workers (their CPU)
        if not any(_children(c) for c in _children(os.getpid())):
            break
        time.sleep(0.02)
    print(json.dumps({"seconds": st.seconds, "ingested": st.ingested, "errors": st.errors,
                      "rows": st.rows, "cpu": st.cpu, "cpu_tree": tree_cpu() - cpu0,
                      "peak_rss": st.peak_rss}))


def ingest_line(name: str, logs: Path, store_dir: Path, **kw) -> dict:
    """One ingest in a fresh process (each engine pays its own start-up, as from the
    command line, and no run inherits another's forkserver or cluster); prints wall time,
    logs/s, CPU per log (parsing; all processes), the parsing processes' peak RSS."""
    load = os.getloadavg()[0]
    spec = json.dumps([str(logs), str(store_dir), kw])
    out = subprocess.run([sys.executable, __file__, "--run-one", spec], capture_output=True,
                         text=True, timeout=1800,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "reports")})
    if out.returncode != 0:
        sys.exit(f"{name}: {out.stderr.strip().splitlines()[-1:]}")
    st = json.loads(out.stdout.splitlines()[-1])
    n = max(st["ingested"], 1)
    print(f"  {name:<18} {st['seconds']:7.1f} s {st['ingested'] / st['seconds']:7.0f} logs/s  "
          f"CPU/log parse {1000 * st['cpu'] / n:5.1f} ms, all {1000 * st['cpu_tree'] / n:5.1f} ms"
          f"  peak RSS {st['peak_rss'] / 2**20:4.0f} MiB  ({st['ingested']} logs, "
          f"{st['errors']} errors, {st['rows']:,} rows; load {load:.1f})", flush=True)
    return st


def matrix(title: str, logs: Path, work: Path, procs: list, dask: bool, rounds: int) -> None:
    """Every engine at every process count, alternated, `rounds` times; then the ratios
    of the median rates (wall) and of the median CPU per log of all processes."""
    size = sum(p.stat().st_size for p in logs.rglob("*.iochar"))
    print(f"{title}: {logs} ({size / 2**20:.1f} MiB; {os.cpu_count()} CPUs)")
    rate, cpu = {}, {}
    runs = [(f"{e} --{'workers' if e == 'dask' else 'jobs'} {n}", (e, n),
             {"dask_workers": n} if e == "dask" else {"jobs": n})
            for n in procs for e in (("pool", "dask") if dask else ("pool",))]
    for _ in range(rounds):
        for name, key, kw in runs:
            st = ingest_line(name, logs, work / "store-matrix", **kw)
            rate.setdefault(key, []).append(st["ingested"] / st["seconds"])
            cpu.setdefault(key, []).append(st["cpu_tree"] / max(st["ingested"], 1))
    rate = {k: float(np.median(v)) for k, v in rate.items()}
    cpu = {k: float(np.median(v)) for k, v in cpu.items()}
    for n in procs[1:]:
        print(f"  pool {n} vs {procs[0]} processes: {rate['pool', n] / rate['pool', procs[0]]:.2f}x")
    for n in procs if dask else ():
        print(f"  dask vs pool at {n}: {rate['dask', n] / rate['pool', n]:.2f}x wall "
              f"(target >= 0.8); CPU/log of all processes {1000 * cpu['dask', n]:.1f} vs "
              f"{1000 * cpu['pool', n]:.1f} ms ({cpu['dask', n] / cpu['pool', n] - 1:+.0%})")
    shutil.rmtree(work / "store-matrix", ignore_errors=True)


def default_engine(logs: Path, work: Path) -> None:
    """The default engine once more: store size, re-ingest, summary query."""
    size = sum(p.stat().st_size for p in logs.rglob("*.iochar"))
    st = ingest_line("default engine", logs, work / "store")
    store = Store(work / "store")
    print(f"  store {store.size() / 2**20:.1f} MiB for {size / 2**20:.1f} MiB of logs "
          f"({store.size() / size:.2f}x); 10,000 logs at this rate: "
          f"{10_000 * st['seconds'] / max(st['ingested'], 1):.0f} s")
    again = ingest(store, [logs], progress=False)
    print(f"  re-ingest (all known): {again.skipped} skipped in {again.seconds:.1f} s")
    for _ in range(2):  # the second run is warm (file system cache)
        con, tc = timed(store.connect)
        s, tq = timed(lambda c=con: summary(c))
    print(f"  summary query: {tq:.2f} s (+{tc:.2f} s opening), {s['totals']['jobs']} jobs "
          f"(target < 2 s on 10,000)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=10_000)
    ap.add_argument("--real", type=int, help="real-run logs (default: n)")
    ap.add_argument("--seeds", type=Path)
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--procs", default="1,2", help="process counts (default 1,2)")
    ap.add_argument("--rounds", type=int, default=1, help="alternations of the matrix")
    ap.add_argument("--run-one", help=argparse.SUPPRESS)  # internal: one timed ingest
    args = ap.parse_args()
    if args.run_one:
        return _run_one(args.run_one)
    procs = [int(x) for x in args.procs.split(",")]
    work = args.dir or Path(tempfile.mkdtemp(prefix="iochar-site-"))
    seeds_dir = args.seeds or work / "seeds"
    seeds_dir.mkdir(parents=True, exist_ok=True)
    seeds = sorted(seeds_dir.rglob("*.iochar")) or make_seeds(seeds_dir)
    logs = work / "logs"
    if not logs.is_dir() or len(list(logs.rglob("*.iochar"))) != args.n:
        shutil.rmtree(logs, ignore_errors=True)
        _, t = timed(lambda: generate(seeds, logs, args.n))
        print(f"generated {args.n} logs from {len(seeds)} seeds in {t:.1f} s")
    m = args.real or args.n
    runs = real_tree.make_runs(work / "real" / "runs")
    tree = work / "real" / "tree"
    if sum(1 for _ in tree.rglob("*.iochar")) != m:
        real_tree.make_tree(runs, tree, m)
    print(f"real-run tree: {m} logs made from {len(runs)} runs of the test workloads")
    for title, where in (("generated logs", logs), ("real-run logs", tree)):
        matrix(title, where, work, procs, not args.no_dask, args.rounds)
        default_engine(where, work)
    print(f"work dir: {work}")


if __name__ == "__main__":
    main()
