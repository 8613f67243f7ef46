"""Report speed: load + summarize + advise real-format logs of 10^4, 10^5 and
10^6 POSIX records (written by the exact Python writer), then render the HTML page
(every figure and table, the rank x time heatmap of 1024 ranks among them), each in
a fresh process so its peak memory (max RSS) is its own.

    python bench/report_speed.py [--quick]      (--quick stops at 10^5)
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("IOCHAR_BUILD", HERE.parent / "build"))


def real_schema(d):
    """The POSIX schema exactly as the C library writes it (from a real run)."""
    import iochar

    env = dict(os.environ, LD_PRELOAD=str(BUILD / "libiochar.so"),
               IOCHAR_LOGFILE=f"{d}/schema.iochar")
    subprocess.run([str(BUILD / "tests" / "posix_basic"), f"{d}/x.dat"], env=env,
                   check=True, capture_output=True)
    return iochar.open(f"{d}/schema.iochar").schema("POSIX")


def synthetic(n, path, schema):
    """n file-per-process records of a 1024-rank job: writes of a few sizes."""
    import numpy as np
    import pandas as pd

    from iochar.writer import fnv1a64, write_log

    rng = np.random.default_rng(1)
    paths = [f"/scratch/run/out.{i:07d}.dat" for i in range(n)]
    ids = np.array([fnv1a64(p) for p in paths], dtype=np.uint64)
    df = pd.DataFrame({"record_id": ids, "rank": np.arange(n) % 1024})
    writes = rng.integers(1, 2000, n)
    cols = {"POSIX_OPENS": np.ones(n, np.int64), "POSIX_WRITES": writes,
            "POSIX_BYTES_WRITTEN": writes * 4096, "POSIX_CONSEC_WRITES": writes - 1,
            "POSIX_SEQ_WRITES": writes - 1, "POSIX_SIZE_WRITE_1K_10K": writes,
            "POSIX_ACCESS1_ACCESS": np.full(n, 4096), "POSIX_ACCESS1_COUNT": writes,
            "POSIX_FILE_ALIGNMENT": np.full(n, 4096), "POSIX_MEM_ALIGNMENT": np.full(n, 8),
            "POSIX_F_WRITE_TIME": rng.random(n), "POSIX_F_META_TIME": rng.random(n) / 100,
            "POSIX_F_OPEN_START_TIMESTAMP": rng.random(n),
            "POSIX_F_CLOSE_END_TIMESTAMP": 10 + rng.random(n)}
    for name, v in cols.items():
        df[name] = v
    # the HEAT section an MPI job's ranks write (docs/log-format.md): 32 bins of 0.5 s
    heat = {"width": 0.5, "ranks": np.arange(1024), "bytes_read": np.zeros((1024, 32), int),
            "bytes_written": rng.integers(0, 1 << 30, (1024, 32))}
    write_log(path, {"nprocs": 1024, "nnodes": 32, "start_time": 1.7e9, "end_time": 1.7e9 + 12,
                     "exe": "/scratch/app", "version": "bench"},
              {"POSIX": {"schema": schema, "records": df}}, dict(zip(ids.tolist(), paths)),
              chunk=max(n // 64, 1), mounts=[("/", "ext4", 4096), ("/scratch", "lustre", 1 << 20)],
              heat={"POSIX": heat})


def measure(path):
    """In this process: time iochar.open -> report data -> summary + advice -> the page."""
    from iochar import html
    from iochar.cli import report

    c0 = time.process_time()
    t0 = time.perf_counter()
    data = report.load([path])
    t1 = time.perf_counter()
    rep = report.build(data)
    t2 = time.perf_counter()
    page = html.render(rep, data["series"], data["ranks"], data.get("observed"),
                       data.get("heatmaps"), data["records"], data.get("mounts"), data.get("dxt"))
    t3 = time.perf_counter()
    assert 'alt="POSIX heatmap"' in page
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu = time.process_time() - c0
    print(f"{t1 - t0:.2f} {t2 - t1:.2f} {t3 - t2:.2f} {rss:.0f} {cpu:.2f} {len(rep['advice'])}")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--measure":
        measure(sys.argv[2])
        return
    sizes = [10_000, 100_000] + ([] if "--quick" in sys.argv else [1_000_000])
    print("report speed (load, then summary + advice, then the HTML page; fresh process each)")
    print("(wall seconds per phase; CPU s: the process's CPU time for all three, which the")
    print(" machine's load does not inflate)")
    print(f"{'records':>10}{'load s':>9}{'report s':>10}{'page s':>8}{'total s':>9}"
          f"{'CPU s':>8}{'peak MiB':>10}")
    with tempfile.TemporaryDirectory() as d:
        schema = real_schema(d)
        for n in sizes:
            path = f"{d}/synthetic_{n}.iochar"
            synthetic(n, path, schema)
            out = subprocess.run([sys.executable, __file__, "--measure", path],
                                 capture_output=True, text=True, check=True).stdout.split()
            load, rep, page, rss, cpu = (float(x) for x in out[:5])
            print(f"{n:>10,}{load:>9.2f}{rep:>10.2f}{page:>8.2f}{load + rep + page:>9.2f}"
                  f"{cpu:>8.2f}{rss:>10.0f}")
            Path(path).unlink()


if __name__ == "__main__":
    main()
