"""Site scale: N logs (default 10,000) into iochar-db, embedded path and Dask; prints times.

    PYTHONPATH=reports python bench/site_scale.py [N] [--seeds DIR] [--dir WORK] [--no-dask]

Seeds are real logs of small runs of the test workloads under build/libiochar.so (made
here unless --seeds names a directory of logs). Each generated log is one seed with its
job id, program, user, start time and counters varied (ints scaled, times scaled),
written with iochar.writer: so the logs have real schemas and realistic shapes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import iochar
from iochar.db import Store, ingest
from iochar.db.queries import summary
from iochar.writer import write_log

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"


def make_seeds(out: Path) -> list:
    """Run a few test workloads under the tool; their logs are the seeds."""
    lib = BUILD / "libiochar.so"
    t = BUILD / "tests"
    runs = [[str(t / "posix_workload"), str(out / "p")], [str(t / "stdio_workload"), str(out / "s")],
            [str(t / "advice_posix"), "small"], [str(t / "advice_posix"), "random"],
            ["mpiexec.mpich", "-n", "4", str(t / "mpi_workload"), str(out / "m")]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.update(IOCHAR_LOGDIR=str(out), LD_PRELOAD=str(lib))
    for cmd in runs:
        if Path(cmd[0]).exists() or shutil.which(cmd[0]):
            subprocess.run(cmd, env=env, cwd=out, capture_output=True, timeout=300)
    return sorted(out.glob("*.iochar"))


def generate(seeds: list, out: Path, n: int, rng) -> int:
    """n varied logs from the seeds; returns their total size in bytes."""
    loaded = []
    for s in seeds:
        log = iochar.open(str(s))
        mods = {m: (log.schema(m), log.records(m)) for m in log.modules}
        loaded.append((dict(log.job), mods))
    programs = [f"/apps/{name}/bin/{name}" for name in
                ("lammps", "gromacs", "wrf", "nek5000", "vasp", "cp2k", "openfoam", "e3sm",
                 "hacc", "nyx", "amrex_app", "qmcpack", "milc", "namd", "ior", "h5bench")]
    t0 = 1_760_000_000.0
    total = 0
    for i in range(n):
        job, mods = loaded[i % len(loaded)]
        exe = programs[rng.integers(len(programs))]
        start = t0 + float(rng.uniform(0, 90 * 86400))
        run = float(rng.uniform(10, 7200))
        j = dict(job, jobid=str(100000 + i), exe=exe, cmdline=f"{exe} -i input{i % 7}.in",
                 user=f"user{rng.integers(40):02d}", uid=int(1000 + rng.integers(40)),
                 start_time=start, end_time=start + run)
        scale, tscale = float(rng.lognormal(0, 1)), float(rng.lognormal(0, 1))
        spec = {}
        for m, (schema, df) in mods.items():
            df = df.copy()
            for name, _ in schema:
                v = df[name].to_numpy()
                if "_F_" in name and "TIMESTAMP" not in name:
                    df[name] = v * tscale
                elif "_F_" not in name and ("BYTES" in name or name.endswith(("_READS", "_WRITES"))):
                    df[name] = (v * scale).astype(np.int64)
            spec[m] = {"schema": schema, "records": df}
        p = out / f"{j['user']}_{Path(exe).name}_id{j['jobid']}.iochar"
        write_log(p, j, spec)
        total += p.stat().st_size
    return total


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=10_000)
    ap.add_argument("--seeds", type=Path)
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="iochar-site-"))
    seeds_dir = args.seeds or work / "seeds"
    seeds_dir.mkdir(parents=True, exist_ok=True)
    seeds = sorted(seeds_dir.glob("*.iochar")) or make_seeds(seeds_dir)
    logs = work / "logs"
    if not logs.is_dir() or len(list(logs.rglob("*.iochar"))) != args.n:
        shutil.rmtree(logs, ignore_errors=True)
        for k in range(10):  # ten day-directories, as a site would keep them
            (logs / f"day{k}").mkdir(parents=True)
        rng = np.random.default_rng(1)
        per = -(-args.n // 10)
        _, t = timed(lambda: [generate(seeds, logs / f"day{k}", min(per, args.n - k * per), rng)
                              for k in range(10) if args.n - k * per > 0])
        print(f"generated {args.n} logs from {len(seeds)} seeds in {t:.1f} s")
    size = sum(p.stat().st_size for p in logs.rglob("*.iochar"))
    engines = [("embedded (process pool)", {})]
    if not args.no_dask:
        engines.append(("dask LocalCluster, 2 workers", {"dask_workers": 2}))
    for name, kw in engines:
        store = Store(work / ("store-" + ("dask" if kw else "embedded")), create=True)
        shutil.rmtree(store.root)
        store = Store(store.root, create=True)
        st = ingest(store, [logs], progress=False, **kw)
        print(f"{name}: {st.ingested} logs, {st.rows:,} record rows in {st.seconds:.1f} s: "
              f"{st.ingested / st.seconds:,.0f} logs/s, {st.rows / st.seconds:,.0f} rows/s; "
              f"{st.errors} errors")
        print(f"  store {store.size() / 2**20:.1f} MiB for {size / 2**20:.1f} MiB of logs "
              f"({store.size() / size:.2f}x)")
        again = ingest(store, [logs], progress=False, **kw)
        print(f"  re-ingest (all known): {again.skipped} skipped in {again.seconds:.1f} s")
        for _ in range(2):  # the second run is warm (file system cache)
            con, tc = timed(store.connect)
            s, tq = timed(lambda c=con: summary(c))
        print(f"  summary query: {tq:.2f} s (+{tc:.2f} s opening), {s['totals']['jobs']} jobs")
    print(f"work dir: {work}")


if __name__ == "__main__":
    main()
